// Scrolling the conversation (issue 13, item 1): the mouse wheel scrolls up from the bottom,
// auto-follow stops on any upward scroll and resumes only at the bottom, "Jump to latest" shows
// while detached, and new content does not move a detached view.
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

function turns(from, count) {
  const events = [];
  for (let i = from; i < from + count; i++) {
    events.push(E.turnStarted(`t${i}`), E.delta(`Answer ${i}: ${"some words ".repeat(30)}`), E.turnComplete("completed", `t${i}`));
  }
  return events;
}

const position = (page) =>
  page.evaluate(() => {
    const s = /** @type {HTMLElement} */ (document.querySelector('[data-testid="scroller"]'));
    return { top: Math.round(s.scrollTop), fromBottom: Math.round(s.scrollHeight - s.scrollTop - s.clientHeight) };
  });

/** Two animation frames: whatever the list does after an event has been done. */
const settle = (page) =>
  page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(null)))));

async function atBottom(page) {
  await page.waitForFunction(() => {
    const s = /** @type {HTMLElement} */ (document.querySelector('[data-testid="scroller"]'));
    return s.scrollHeight - s.scrollTop - s.clientHeight <= 2;
  });
}

test("small wheel steps up from the bottom scroll, detach, and streaming leaves the view alone", async () => {
  const app = await env.open();
  const { page } = app;
  await app.emitAll(turns(0, 30));
  await waitForText(page, sel("message-model"), /Answer 29:/);
  await atBottom(page);
  const box = await app.tid("scroller").boundingBox();
  assert.ok(box);
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  // Ten small wheel steps, as a smooth-scrolling engine delivers them (each within the list's
  // "near the bottom" margin).
  for (let k = 0; k < 10; k++) {
    await page.mouse.wheel(0, -15);
    await settle(page);
  }
  const up = await position(page);
  assert.ok(up.fromBottom >= 100, `the wheel scrolled up (${up.fromBottom} px from the bottom)`);
  await app.tid("jump-to-latest").waitFor();
  assert.match(await app.tid("jump-to-latest").innerText(), /Jump to latest/);

  // New content streams in: the view stays where the user left it.
  await app.emit(E.turnStarted("t-new"));
  for (let k = 0; k < 5; k++) {
    await app.emit(E.delta(`More text ${k}. ${"streaming words ".repeat(20)}\n\n`));
    await settle(page);
  }
  const count = Number(await app.tid("message-list").getAttribute("data-count"));
  await app.emitAll(turns(30, 3));
  // Three answers and their footers, plus the streamed answer's end.
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid="message-list"]')?.getAttribute("data-count")) >= n, count + 6);
  await settle(page);
  const after = await position(page);
  assert.equal(after.top, up.top, "new content did not move the view");
  assert.ok(await app.tid("jump-to-latest").isVisible());

  // Jump to latest: back at the bottom and following again.
  await app.tid("jump-to-latest").click();
  await atBottom(page);
  assert.equal(await app.tid("jump-to-latest").count(), 0, "the button goes once attached");
  await app.emitAll(turns(40, 2));
  await settle(page);
  await atBottom(page);
  await app.close();
});

test("keys and the scrollbar detach too; scrolling back to the bottom re-attaches", async () => {
  const app = await env.open();
  const { page } = app;
  await app.emitAll(turns(0, 30));
  await waitForText(page, sel("message-model"), /Answer 29:/);
  await atBottom(page);
  // Let the browser report the list's own scroll to the end first: a user's scroll in the same
  // frame arrives as one event with it (see the note in MessageList's onScroll).
  await settle(page);
  // A scrollbar drag (or any script-free scroll): a plain scrollTop change upwards.
  await page.evaluate(() => {
    const s = /** @type {HTMLElement} */ (document.querySelector('[data-testid="scroller"]'));
    s.scrollTop -= 25;
  });
  await settle(page);
  await app.tid("jump-to-latest").waitFor();
  const up = await position(page);
  await app.emitAll(turns(30, 2));
  await settle(page);
  assert.equal((await position(page)).top, up.top, "a small upward scroll already detaches");

  // Back to the bottom with the wheel: following again, the button goes.
  const box = await app.tid("scroller").boundingBox();
  assert.ok(box);
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  for (let k = 0; k < 5 && (await app.tid("jump-to-latest").count()) > 0; k++) {
    await page.mouse.wheel(0, 5000);
    await settle(page);
  }
  await atBottom(page);
  assert.equal(await app.tid("jump-to-latest").count(), 0);
  await app.emitAll(turns(40, 2));
  await waitForText(page, sel("message-model"), /Answer 41:/);
  await settle(page);
  await atBottom(page);

  // PageUp (keyboard) detaches as well.
  await app.tid("scroller").focus();
  await page.keyboard.press("PageUp");
  await app.tid("jump-to-latest").waitFor();
  await page.screenshot({ path: screenshotPath("chat-scroll-detached.png") });
  await app.close();
});

