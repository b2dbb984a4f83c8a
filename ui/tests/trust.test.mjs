// The trust prompt: an undecided folder shows it above a chat that still works (restricted
// mode); each choice calls trust_folder with Gemini CLI's level and reloads the session; a
// distrusted folder shows the restricted-mode banner, which reopens the prompt; privileged
// approval modes are off while restricted.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as E from "./support/events.mjs";
import { screenshotPath, sel, setup } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const undecided = {
  workspace: "/home/dev/projects/webapp",
  folder_name: "webapp",
  parent: "/home/dev/projects",
  parent_name: "projects",
  enabled: true,
  trusted: null,
  source: null,
  rule_path: null,
  rule_level: null,
  file: "/home/dev/.gemini/trustedFolders.json",
  error: null,
  discovered: {
    commands: ["/deploy", "/review"],
    mcp_servers: ["github"],
    settings: ["model"],
    context_files: ["GEMINI.md"],
    env_file: true,
  },
};

describe("trust prompt", () => {
  test("an undecided folder shows the prompt with what stays off, and chat still works", async () => {
    const app = await env.open({ config: { trust: undecided } });
    await app.tid("trust-prompt").waitFor();
    assert.equal(await app.tid("trust-prompt").getAttribute("data-state"), "undecided");
    assert.equal(await app.tid("trust-title").innerText(), "Do you trust the files in this folder?");
    // One compact line; the explanation is behind "Details".
    assert.equal(await app.tid("trust-restricted").count(), 0);
    await app.tid("trust-details").click();
    assert.equal(await app.tid("trust-details").getAttribute("aria-expanded"), "true");
    const restricted = await app.tid("trust-restricted").innerText();
    for (const word of ["restricted mode", ".gemini/settings.json", "custom commands", "MCP servers", "GEMINI.md"]) {
      assert.ok(restricted.includes(word), `mentions ${word}: ${restricted}`);
    }
    assert.deepEqual(
      await app.tid("trust-found").evaluateAll((els) => els.map((e) => [e.dataset.kind, e.innerText])),
      [
        ["settings", "Settings: model"],
        ["commands", "Custom commands: /deploy, /review"],
        ["mcp", "MCP servers: github"],
        ["context", "Context files: GEMINI.md"],
        ["env", "Environment file: .gemini/.env"],
      ],
    );
    assert.equal(await app.tid("trust-folder").innerText(), "Trust folder (webapp)");
    assert.equal(await app.tid("trust-parent").innerText(), "Trust parent folder (projects)");
    assert.equal(await app.tid("trust-deny").innerText(), "Don't trust");
    // Undecided cannot be dismissed without a choice.
    assert.equal(await app.tid("trust-close").count(), 0);
    // Restricted: the header says so and YOLO / auto-edit cannot be chosen (plan can).
    assert.equal(await app.tid("settings-open").getAttribute("data-restricted"), "true");
    const disabled = await app.page.$$eval(`${sel("approval-mode")} option`, (os) => os.filter((o) => o.disabled).map((o) => o.value));
    assert.deepEqual(disabled, ["auto_edit", "yolo"]);
    // The chat still works meanwhile.
    await app.sendPrompt("hello while restricted");
    await app.page.screenshot({ path: screenshotPath("trust-prompt.png") });
    await app.close();
  });

  for (const width of [800, 1100, 1440]) {
    test(`${width} px: the prompt is compact and nothing in it is cut; Details unfolds and folds the explanation`, async () => {
      for (const colorScheme of ["light", "dark"]) {
        const app = await env.open({ config: { trust: undecided }, viewport: { width, height: 800 }, colorScheme });
        await app.tid("trust-prompt").waitFor();
        const collapsed = await app.tid("trust-prompt").evaluate((el) => el.getBoundingClientRect().height);
        // One line where it fits (the default 1,100 px and up), two at the narrowest (issue 34:
        // at 1,100 px the question ended in "…").
        const most = width >= 1100 ? 56 : 90;
        assert.ok(collapsed < most, `${width}px: collapsed it is ${collapsed}px high`);
        // The question and the three choices and the toggle: whole (no text cut) and inside the prompt.
        const line = await app.page.evaluate(() => {
          const box = document.querySelector('[data-testid="trust-prompt"]').getBoundingClientRect();
          const ids = ["trust-title", "trust-folder", "trust-parent", "trust-deny", "trust-details"];
          return ids.map((id) => {
            const el = /** @type {HTMLElement} */ (document.querySelector(`[data-testid="${id}"]`));
            const r = el.getBoundingClientRect();
            return { id, top: Math.round(r.top + r.height / 2), clipped: el.scrollWidth > el.clientWidth, inside: r.left >= box.left && r.right <= box.right + 0.5 };
          });
        });
        const mid = line[0].top;
        for (const c of line) {
          if (width >= 1100) assert.ok(Math.abs(c.top - mid) <= 2, `${width}px: ${c.id} is on the line`);
          assert.equal(c.clipped, false, `${width}px: ${c.id} is not cut`);
          assert.equal(c.inside, true, `${width}px: ${c.id} is inside the prompt`);
        }
        if (colorScheme === "light") await app.page.screenshot({ path: screenshotPath(`trust-compact-${width}.png`) });
        await app.tid("trust-details").click();
        await app.tid("trust-restricted").waitFor();
        const expanded = await app.tid("trust-prompt").evaluate((el) => el.getBoundingClientRect().height);
        assert.ok(expanded > collapsed + 60, `${width}px: expanded it is ${expanded}px high`);
        if (width === 1100) await app.page.screenshot({ path: screenshotPath(`trust-details-${colorScheme}.png`) });
        await app.tid("trust-details").click();
        await app.tid("trust-restricted").waitFor({ state: "detached" });
        assert.equal(await app.tid("trust-details").getAttribute("aria-expanded"), "false");
        await app.close();
      }
    });
  }

  test("trusting the folder writes the choice and reloads the session", async () => {
    const app = await env.open({ config: { trust: undecided } });
    await app.tid("trust-prompt").waitFor();
    const starts = app.callsOf("start_session").length;
    await app.tid("trust-folder").click();
    const call = await app.waitForCall("trust_folder");
    assert.deepEqual(call.args, { level: "TRUST_FOLDER" });
    // The session is replaced by one that reads the workspace (no model forced).
    const stop = await app.waitForCall("stop_session");
    assert.equal(stop.args.sessionId, "s1");
    const start = await app.waitForCall("start_session", () => true, { from: app.calls.indexOf(stop) });
    assert.equal(start.args.model ?? null, null);
    assert.ok(app.callsOf("start_session").length > starts);
    await app.tid("trust-prompt").waitFor({ state: "detached" });
    assert.equal(await app.tid("trust-banner").count(), 0);
    assert.equal(await app.tid("settings-open").getAttribute("data-restricted"), "false");
    await app.close();
  });

  test("a started conversation continues after the reload", async () => {
    const app = await env.open({ config: { trust: undecided } });
    await app.sendPrompt("first question");
    await app.emitAll([E.turnStarted(), E.turnComplete()]);
    await app.tid("trust-parent").click();
    const call = await app.waitForCall("trust_folder");
    assert.deepEqual(call.args, { level: "TRUST_PARENT" });
    const start = await app.waitForCall("start_session", (a) => a.resume === "s1");
    assert.equal(start.args.resume, "s1", "the session is resumed, not replaced by an empty one");
    await app.close();
  });

  test("don't trust: restricted mode stays, with a banner that reopens the prompt", async () => {
    const app = await env.open({ config: { trust: undecided } });
    await app.tid("trust-deny").click();
    assert.deepEqual((await app.waitForCall("trust_folder")).args, { level: "DO_NOT_TRUST" });
    await app.tid("trust-banner").waitFor();
    assert.match(await app.tid("trust-banner").innerText(), /Restricted mode/);
    assert.equal(await app.tid("trust-prompt").count(), 0);
    await app.tid("trust-change").click();
    await app.tid("trust-prompt").waitFor();
    assert.equal(await app.tid("trust-prompt").getAttribute("data-state"), "untrusted");
    await app.tid("trust-close").click();
    await app.tid("trust-banner").waitFor();
    await app.close();
  });

  test("a folder distrusted by the environment offers no change, and a failed save is shown", async () => {
    const app = await env.open({
      config: { trust: { ...undecided, trusted: false, source: "env" } },
    });
    await app.tid("trust-banner").waitFor();
    assert.equal(await app.tid("trust-banner").getAttribute("data-source"), "env");
    assert.match(await app.tid("trust-banner").innerText(), /GEMINI_CLI_TRUST_WORKSPACE/);
    assert.equal(await app.tid("trust-change").count(), 0);
    await app.close();

    const failing = await env.open({
      config: { trust: undecided },
      init: [
        () => {
          window.__gdExtraIPC = (cmd) => {
            if (cmd === "trust_folder") {
              throw { kind: "config", message: "/home/dev/.gemini/trustedFolders.json:3:1: expected `,` or `}`; fix the file first, it was not changed" };
            }
            return undefined;
          };
        },
        null,
      ],
    });
    await failing.tid("trust-folder").click();
    await failing.tid("trust-error").waitFor();
    assert.match(await failing.tid("trust-error").innerText(), /trustedFolders\.json:3:1/);
    assert.equal(await failing.tid("trust-prompt").count(), 1);
    await failing.close();
  });

  test("a trusted folder shows neither prompt nor banner", async () => {
    const app = await env.open();
    await app.waitForCall("trust_status");
    assert.equal(await app.tid("trust-prompt").count(), 0);
    assert.equal(await app.tid("trust-banner").count(), 0);
    await app.close();
  });
});
