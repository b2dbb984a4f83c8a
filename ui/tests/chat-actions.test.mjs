// Message actions (issue 13, item 10): a Copy button on every finished message (visible without
// hovering, copies the Markdown source, says "Copied"), and Retry on a failed turn, which sends
// the same prompt again the way the composer does.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import * as E from "./support/events.mjs";
import { screenshotPath, sel, setup, waitForText } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

/** Replaces the clipboard with a recorder (what was copied, in order). */
const recordClipboard = (page) =>
  page.evaluate(() => {
    /** @type {string[]} */
    const copied = [];
    Object.defineProperty(window, "__copied", { value: copied });
    Object.defineProperty(navigator, "clipboard", {
      configurable: true,
      value: { writeText: async (/** @type {string} */ text) => void copied.push(text) },
    });
  });

test("every finished message has a visible Copy button that copies its Markdown and says Copied", async () => {
  for (const colorScheme of ["light", "dark"]) {
    const app = await env.open({ colorScheme, viewport: { width: colorScheme === "light" ? 1440 : 800, height: 700 } });
    const { page } = app;
    await recordClipboard(page);
    await app.sendPrompt("Explain **this**");
    const answer = "# Title\n\nSome *emphasis* and `code`.\n\n```js\nlet a = 1;\n```\n";
    await app.emitAll([E.turnStarted(), E.delta(answer)]);
    await waitForText(page, sel("message-model"), /Title/);
    // Still streaming: only the prompt's button.
    assert.equal(await app.tid("copy-message").count(), 1, "no Copy on an answer still being written");
    await app.emit(E.turnComplete());
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="copy-message"]').length === 2);
    const buttons = app.tid("copy-message");
    // Visible without hovering: the mouse is nowhere near.
    await page.mouse.move(0, 0);
    for (const i of [0, 1]) {
      assert.ok(await buttons.nth(i).isVisible());
      const opacity = await buttons.nth(i).evaluate((el) => Number(getComputedStyle(el).opacity));
      assert.equal(opacity, 1, "not hidden until hover");
    }
    await buttons.nth(1).click();
    await waitForText(page, sel("copy-message"), /Copied/, { index: 1 });
    await buttons.nth(0).click();
    await waitForText(page, sel("copy-message"), /Copied/, { index: 0 });
    assert.deepEqual(await page.evaluate(() => /** @type {any} */ (window).__copied), [answer, "Explain **this**"]);
    // The message texts themselves are unchanged by the buttons.
    assert.equal(await app.tid("message-user").innerText(), "Explain **this**");
    await page.screenshot({ path: screenshotPath(`chat-copy-${colorScheme}.png`) });
    await waitForText(page, sel("copy-message"), /^Copy$/, { index: 1, timeout: 4000 });
    await app.close();
  }
});

test("Retry on a failed turn sends the same prompt again through the composer's path", async () => {
  const app = await env.open();
  const { page } = app;
  await app.sendPrompt("summarise the repo");
  await app.emitAll([
    E.turnStarted(),
    { type: "error", kind: "api", message: "The model is overloaded", status: 503, fatal: true },
    E.turnComplete("failed"),
  ]);
  await waitForText(page, sel("notice"), "The turn failed: The model is overloaded (HTTP 503)");
  const retry = app.tid("retry-turn");
  await retry.waitFor();
  assert.ok(await retry.isEnabled());
  await page.screenshot({ path: screenshotPath("chat-retry.png") });
  const from = app.opsOf("user_turn").length;
  await retry.click();
  const call = await app.waitForOp("user_turn", () => true, { from });
  assert.deepEqual([call.args.sessionId, call.args.items], ["s1", [{ type: "text", text: "summarise the repo" }]]);
  // Shown as a new prompt, and a turn runs: no second Retry while it does.
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="message-user"]').length === 2);
  assert.ok(await retry.isDisabled(), "Retry waits while a turn runs");
  await app.emitAll([E.turnStarted("t2"), E.delta("Done."), E.turnComplete("completed", "t2")]);
  await waitForText(page, sel("message-model"), "Done.");
  assert.ok(await retry.isEnabled());
  // Turns that did not fail offer no Retry.
  assert.equal(await app.tid("retry-turn").count(), 1);
  await app.close();
});
