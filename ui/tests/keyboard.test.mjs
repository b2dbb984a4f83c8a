// Keyboard: the shortcut list (Ctrl+/ or ? outside text fields), Ctrl+K focuses the prompt box,
// Ctrl+L clears the conversation (as /clear, after asking), Ctrl+Shift+H opens the history, ↑ in an empty
// prompt box brings the last prompt back, and every control is reachable with Tab and shows
// a focus ring.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as E from "./support/events.mjs";
import { emptyHistory, screenshotPath, setup } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

/** A whole answered turn. */
const turn = (text) => [E.turnStarted(), E.delta(text), E.turnComplete()];

const open = (options = {}) => env.open({ init: [emptyHistory], ...options });
const focused = (app) => app.page.evaluate(() => document.activeElement?.getAttribute("data-testid") ?? document.activeElement?.tagName ?? null);

describe("keyboard", () => {
  test("Ctrl+/ toggles the shortcut list; ? opens it outside text fields only", async () => {
    for (const colorScheme of ["light", "dark"]) {
      const app = await open({ colorScheme });
      await app.tid("prompt-input").focus();
      await app.page.keyboard.press("Control+/");
      await app.tid("shortcuts").waitFor();
      const rows = await app.tid("shortcut").allInnerTexts();
      for (const key of ["Ctrl+K", "Ctrl+L", "Ctrl+Shift+H", "Ctrl+/", "↑", "J", "Shift+A"]) {
        assert.ok(rows.some((r) => r.replace(/\s/g, "").startsWith(key)), `lists ${key}: ${rows.join(" | ")}`);
      }
      await app.page.screenshot({ path: screenshotPath(`shortcuts-${colorScheme}.png`) });
      await app.page.keyboard.press("Control+/");
      await app.tid("shortcuts").waitFor({ state: "detached" });
      assert.equal(await focused(app), "prompt-input");
      // In the prompt box ? is typed.
      await app.page.keyboard.type("why?");
      assert.equal(await app.tid("prompt-input").inputValue(), "why?");
      assert.equal(await app.tid("shortcuts").count(), 0);
      // Elsewhere it opens the list; Esc closes it.
      await app.tid("settings-open").focus();
      await app.page.keyboard.press("?");
      await app.tid("shortcuts").waitFor();
      await app.page.keyboard.press("Escape");
      await app.tid("shortcuts").waitFor({ state: "detached" });
      assert.equal(await focused(app), "settings-open");
      await app.close();
    }
  });

  test("Ctrl+K puts the focus in the prompt box, closing an open panel", async () => {
    const app = await open();
    await app.tid("history-open").click();
    await app.tid("history-panel").waitFor();
    assert.equal(await focused(app), "history-search");
    await app.page.keyboard.press("Control+K");
    await app.tid("history-panel").waitFor({ state: "detached" });
    assert.equal(await focused(app), "prompt-input");
    await app.close();
  });

  // Issue 34 (item 9b): Ctrl+L cleared the conversation at once, with no question and no undo.
  test("Ctrl+L asks first: Escape keeps the conversation, sends nothing and gives the focus back", async () => {
    const app = await open();
    await app.sendPrompt("hello");
    await app.emitAll(turn("hi there"));
    await app.tid("history-open").focus();
    const count = await app.tid("message-list").getAttribute("data-count");
    await app.page.keyboard.press("Control+L");
    const dialog = app.tid("clear-confirm");
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /Clear this conversation\?/);
    assert.equal(await focused(app), "clear-confirm-yes", "the answer is one key away");
    await app.page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    assert.equal(app.opsOf("clear").length, 0, "no clear op");
    assert.equal(await app.tid("message-list").getAttribute("data-count"), count, "the messages stay");
    assert.equal(await focused(app), "history-open", "the focus is back where it was");
    // Cancel does the same.
    await app.page.keyboard.press("Control+L");
    await dialog.waitFor();
    await app.tid("clear-cancel").click();
    await dialog.waitFor({ state: "detached" });
    assert.equal(app.opsOf("clear").length, 0, "no clear op");
    await app.close();
  });

  test("Ctrl+L then Enter (or the button) clears through /clear", async () => {
    const app = await open();
    await app.sendPrompt("hello");
    await app.emitAll(turn("hi there"));
    await app.tid("prompt-input").focus();
    let from = app.calls.length;
    await app.page.keyboard.press("Control+L");
    await app.tid("clear-confirm").waitFor();
    await app.page.keyboard.press("Enter");
    await app.waitForOp("clear", () => true, { from });
    await app.tid("clear-confirm").waitFor({ state: "detached" });
    assert.equal(app.opsOf("clear").length, 1);
    from = app.calls.length;
    await app.page.keyboard.press("Control+L");
    await app.tid("clear-confirm-yes").click();
    await app.waitForOp("clear", () => true, { from });
    await app.close();
  });

  test("Ctrl+L in an empty conversation clears without asking", async () => {
    const app = await open();
    const from = app.calls.length;
    await app.page.keyboard.press("Control+L");
    await app.waitForOp("clear", () => true, { from });
    assert.equal(await app.tid("clear-confirm").count(), 0, "nothing to lose, nothing asked");
    await app.close();
  });

  test("Ctrl+Shift+H opens the history from anywhere", async () => {
    const app = await open();
    await app.tid("prompt-input").focus();
    await app.page.keyboard.press("Control+Shift+H");
    await app.tid("history-panel").waitFor();
    await app.close();
  });

  test("↑ in an empty prompt box brings the last prompt back for editing", async () => {
    const app = await open();
    await app.sendPrompt("first question");
    await app.emitAll(turn("answer one"));
    await app.sendPrompt("second question");
    await app.emitAll(turn("answer two"));
    const input = app.tid("prompt-input");
    await input.focus();
    await app.page.keyboard.press("ArrowUp");
    assert.equal(await input.inputValue(), "second question");
    // The caret is at the end: typing edits it.
    await app.page.keyboard.type(" again");
    assert.equal(await input.inputValue(), "second question again");
    // Not empty: ↑ moves the caret as usual.
    await app.page.keyboard.press("ArrowUp");
    assert.equal(await input.inputValue(), "second question again");
    await app.close();
  });

  for (const [button, panel] of [
    ["settings-open", "settings-panel"],
    ["mcp-open", "mcp-panel"],
    ["account-open", "auth-status"],
  ]) {
    test(`${panel}: every control Tab reaches in it shows a focus ring`, async () => {
      const app = await open();
      await app.tid(button).click();
      await app.tid(panel).waitFor();
      await app.tid(panel).focus();
      const missing = [];
      for (let i = 0; i < 30; i++) {
        await app.page.keyboard.press("Tab");
        const info = await app.page.evaluate(() => {
          const el = /** @type {HTMLElement} */ (document.activeElement);
          if (!el || el === document.body || !el.closest("[data-overlay]")) return null;
          const style = getComputedStyle(el);
          const ring = style.outlineStyle === "solid" && parseFloat(style.outlineWidth) >= 2;
          return { id: el.getAttribute("data-testid") ?? `${el.tagName}.${el.className}`, ring };
        });
        if (info && !info.ring && !missing.includes(info.id)) missing.push(info.id);
      }
      assert.deepEqual(missing, [], "every focused control shows a ring");
      await app.close();
    });
  }

  for (const width of [800, 1440]) {
    test(`${width} px: Tab reaches every header and composer control, each with a visible focus ring`, async () => {
      const app = await open({ viewport: { width, height: 800 } });
      await app.page.evaluate(() => /** @type {HTMLElement} */ (document.activeElement)?.blur());
      const seen = [];
      for (let i = 0; i < 40; i++) {
        await app.page.keyboard.press("Tab");
        const info = await app.page.evaluate(() => {
          const el = /** @type {HTMLElement} */ (document.activeElement);
          if (!el || el === document.body) return null;
          const style = getComputedStyle(el);
          // The app's own ring (2 px solid accent), not the browser's default "auto" one that
          // WebKitGTK hardly shows.
          const ring = style.outlineStyle === "solid" && parseFloat(style.outlineWidth) >= 2;
          // The prompt box draws its ring on the form around it (:focus-within).
          const form = el.closest("form");
          const within = form ? getComputedStyle(form).boxShadow !== "none" : false;
          const label = el.closest("label");
          const labelRing = label ? getComputedStyle(label).outlineStyle === "solid" : false;
          return { id: el.getAttribute("data-testid") ?? el.tagName, ring: ring || within || labelRing };
        });
        if (!info) continue;
        if (seen.some((s) => s.id === info.id)) break;
        seen.push(info);
      }
      const ids = seen.map((s) => s.id);
      // Below 860 px the MCP button folds into the Panels menu (reached by Tab, and its items by the arrows).
      const header = ["open-workspace", "usage-meter", "history-open", "checkpoints-open", "policies-open", "settings-open", "panels-open", "account-open", "approval-mode"];
      if (width > 860) header.push("mcp-open");
      for (const id of [...header, "prompt-input", "picker-open", "send"]) {
        assert.ok(ids.includes(id), `${id} is reachable by Tab: ${ids.join(", ")}`);
      }
      const noRing = seen.filter((s) => !s.ring).map((s) => s.id);
      assert.deepEqual(noRing, [], "every focused control shows a ring");
      await app.close();
    });
  }
});
