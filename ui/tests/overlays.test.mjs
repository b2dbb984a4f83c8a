// One rule for every panel, popover and dialog (lib/overlays.svelte.ts): one open at a time,
// Esc closes the top one wherever the focus is, and the focus goes back to where it was.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { emptyHistory, setup } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const open = (options = {}) => env.open({ init: [emptyHistory], ...options });

/** The data-testid of the focused element (or its tag). */
const focused = (app) => app.page.evaluate(() => document.activeElement?.getAttribute("data-testid") ?? document.activeElement?.tagName ?? null);

/** Which overlays are in the DOM, once the one closing has gone (it goes in the next update). */
async function openOverlays(app) {
  await app.until(() => document.querySelectorAll("[data-overlay]").length <= 1);
  return app.page.evaluate(() => [...document.querySelectorAll("[data-overlay]")].map((e) => e.getAttribute("data-overlay")));
}

describe("overlays", () => {
  test("only one is open at a time: opening one closes the other", async () => {
    const app = await open();
    await app.tid("settings-open").click();
    await app.tid("settings-panel").waitFor();
    await app.tid("history-open").click();
    await app.tid("history-panel").waitFor();
    assert.deepEqual(await openOverlays(app), ["history"]);
    await app.tid("history-close").click();
    await app.tid("mcp-open").click();
    await app.tid("mcp-panel").waitFor();
    await app.tid("checkpoints-open").click();
    await app.tid("checkpoints-panel").waitFor();
    assert.deepEqual(await openOverlays(app), ["checkpoints"]);
    // A slash command opens one over another too.
    await app.tid("prompt-input").fill("/memory show");
    await app.tid("prompt-input").press("Enter");
    await app.tid("memory-panel").waitFor();
    assert.deepEqual(await openOverlays(app), ["memory"]);
    // The shortcut list is one of them.
    await app.page.keyboard.press("Control+/");
    await app.tid("shortcuts").waitFor();
    assert.deepEqual(await openOverlays(app), ["shortcuts"]);
    await app.close();
  });

  for (const [button, panel] of [
    ["settings-open", "settings-panel"],
    ["mcp-open", "mcp-panel"],
    ["checkpoints-open", "checkpoints-panel"],
    ["history-open", "history-panel"],
    ["account-open", "auth-status"],
  ]) {
    test(`${panel}: Esc closes it with the focus outside it; the focus goes back to its button`, async () => {
      const app = await open();
      await app.tid(button).focus();
      await app.page.keyboard.press("Enter");
      await app.tid(panel).waitFor();
      // The focus goes elsewhere (the prompt box, then nowhere): Esc still closes the panel.
      await app.tid("prompt-input").focus();
      await app.page.keyboard.press("Escape");
      await app.tid(panel).waitFor({ state: "detached" });
      assert.equal(await focused(app), "prompt-input", "the focus stays where the user put it");
      await app.tid(button).click();
      await app.tid(panel).waitFor();
      await app.page.evaluate(() => /** @type {HTMLElement} */ (document.activeElement)?.blur());
      await app.page.keyboard.press("Escape");
      await app.tid(panel).waitFor({ state: "detached" });
      // Reopened from the keyboard and closed with the focus inside: back on its button.
      await app.tid(button).focus();
      await app.page.keyboard.press("Enter");
      await app.tid(panel).waitFor();
      await app.page.keyboard.press("Escape");
      await app.tid(panel).waitFor({ state: "detached" });
      await app.until(() => document.activeElement !== document.body);
      assert.equal(await focused(app), button);
      await app.close();
    });
  }

  test("a panel opened from the composer gives the focus back to it", async () => {
    const app = await open();
    await app.tid("prompt-input").focus();
    await app.page.keyboard.press("Control+Shift+H");
    await app.tid("history-panel").waitFor();
    assert.equal(await focused(app), "history-search");
    await app.page.keyboard.press("Escape");
    await app.tid("history-panel").waitFor({ state: "detached" });
    await app.until(() => document.activeElement?.getAttribute("data-testid") === "prompt-input");
    // Enter sends again.
    await app.page.keyboard.type("after the panel");
    await app.page.keyboard.press("Enter");
    await app.waitForOp("user_turn", (a) => a.text === "after the panel");
    await app.close();
  });

  test("switching panels keeps the way back to where the first one was opened from", async () => {
    const app = await open();
    await app.tid("prompt-input").focus();
    await app.page.keyboard.press("Control+/");
    await app.tid("shortcuts").waitFor();
    // From inside the shortcut list, open the history: closing it returns to the composer.
    await app.page.keyboard.press("Control+Shift+H");
    await app.tid("history-panel").waitFor();
    assert.deepEqual(await openOverlays(app), ["history"]);
    await app.page.keyboard.press("Escape");
    await app.tid("history-panel").waitFor({ state: "detached" });
    await app.until(() => document.activeElement?.getAttribute("data-testid") === "prompt-input");
    await app.close();
  });
});
