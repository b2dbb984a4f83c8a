// The About view and the update notice (issue 35): off by default and saying so; an offer with
// its notes and the right button for the build; the saved package's path, checksum and link; a
// refusal in the backend's words with which step failed. The backend (src-tauri/src/updates)
// decides everything; tests/tests/e2e/updater.rs runs it against signed manifests for real.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { screenshotPath, setup } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const offer = (install = { kind: "download" }) => ({
  kind: "available",
  offer: {
    version: "0.2.0",
    currentVersion: "0.1.0",
    notes: "Faster startup.\nImages in the prompt box.",
    date: "2026-12-01T10:00:00Z",
    url: "https://example.org/gd_0.2.0_amd64.deb",
    install,
  },
});

async function openAbout(app) {
  await app.tid("panels-open").click();
  await app.page.locator('[data-testid="panels-item"][data-panel="about"]').click();
  await app.tid("about-panel").waitFor();
}

describe("updates", () => {
  test("off by default: the About view says nothing is asked, and no check is made", async () => {
    const app = await env.open({ viewport: { width: 1100, height: 760 } });
    await openAbout(app);
    await app.tid("about-updates-off").waitFor();
    assert.match(await app.tid("about-updates-off").innerText(), /never asks anyone/);
    assert.equal(await app.tid("about-commit").innerText(), "0123456789ab");
    assert.equal(await app.tid("about-version").innerText(), "0.1.0");
    assert.ok(!app.calls.some((c) => c.cmd === "update_check"), "no check without a URL");
    assert.equal(await app.tid("update-notice").count(), 0);
    await app.close();
  });

  test("the URL a release suggests is used only once accepted, into the user's settings", async () => {
    const url = "https://example.org/gemini-desktop/latest.json";
    const app = await env.open({ viewport: { width: 1100, height: 760 }, config: { updates: { suggestedUrl: url } } });
    await openAbout(app);
    await app.tid("about-accept-url").waitFor();
    assert.ok(!app.calls.some((c) => c.cmd === "update_check"), "nothing asked before accepting");
    await app.tid("about-accept-url").click();
    const set = await app.waitForCall("settings_set");
    assert.deepEqual(set.args, { scope: "user", key: "update.manifestUrl", value: url });
    await app.close();
  });

  test("with a URL, the start checks and the notice offers the version with its notes", async () => {
    for (const [install, label] of [
      [{ kind: "download" }, "Download 0.2.0"],
      [{ kind: "package", format: "deb" }, "Install 0.2.0"],
    ]) {
      const app = await env.open({
        viewport: { width: 800, height: 700 },
        config: { updates: { manifestUrl: "https://example.org/latest.json", check: offer(install) } },
      });
      await app.tid("update-available").waitFor();
      assert.equal(await app.tid("update-available").innerText(), "Version 0.2.0 is available");
      assert.equal(await app.tid("update-notes").innerText(), "Faster startup.\nImages in the prompt box.");
      assert.equal((await app.tid("update-install").innerText()).trim(), label);
      const fits = await app.tid("update-notice").evaluate((el) => el.scrollWidth <= el.clientWidth);
      assert.ok(fits, "the notice fits 800 px");
      // Later hides it for this run.
      await app.tid("update-dismiss").click();
      await app.tid("update-notice").waitFor({ state: "detached" });
      await app.close();
    }
  });

  test("a saved update shows its path, SHA-256 and link; a refusal says which step failed", async () => {
    const sha = "ab".repeat(32);
    const app = await env.open({
      viewport: { width: 1100, height: 760 },
      config: {
        updates: {
          manifestUrl: "https://example.org/latest.json",
          check: offer(),
          done: { kind: "saved", version: "0.2.0", path: "/home/u/Downloads/gd_0.2.0_amd64.deb", sha256: sha, url: "https://example.org/gd_0.2.0_amd64.deb" },
        },
      },
    });
    await app.tid("update-install").click();
    await app.tid("update-saved").waitFor();
    assert.equal(await app.tid("update-sha256").innerText(), sha);
    assert.equal(await app.tid("update-saved-path").innerText(), "/home/u/Downloads/gd_0.2.0_amd64.deb");
    assert.equal(await app.tid("update-link").getAttribute("href"), "https://example.org/gd_0.2.0_amd64.deb");
    await app.tid("update-notice").screenshot({ path: screenshotPath("update-saved.png") });
    await app.close();

    const refused = await env.open({
      viewport: { width: 1100, height: 760 },
      config: {
        updates: {
          manifestUrl: "https://example.org/latest.json",
          check: offer(),
          installError: "The downloaded update's signature does not match. Nothing was changed.",
        },
      },
    });
    await refused.tid("update-install").click();
    await refused.tid("update-error").waitFor();
    assert.equal(await refused.tid("update-error-title").innerText(), "Update not installed");
    assert.match(await refused.tid("update-error").innerText(), /Nothing was changed\.$/);
    await refused.close();

    const unreachable = await env.open({
      viewport: { width: 1100, height: 760 },
      config: { updates: { manifestUrl: "https://example.org/latest.json", checkError: "Could not reach the update server. Nothing was changed." } },
    });
    await unreachable.tid("update-error").waitFor();
    assert.equal(await unreachable.tid("update-error-title").innerText(), "Update check failed");
    await unreachable.close();
  });
});
