// A long session stays virtualised and the scroll position behaves: anchored to the bottom
// while streaming, left alone once the user scrolled up.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import * as E from "./support/events.mjs";
import { sel, setup, waitForText } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const MESSAGES = 2000;
/** Rows the virtual list may render for a 820 px window (viewport + overscan, small rows). */
const MAX_ROWS = 80;

function turns(from, count) {
  const events = [];
  for (let i = from; i < from + count; i++) {
    const body =
      i % 7 === 0
        ? `Message ${i}: a longer one.\n\n- first point\n- second point\n\n\`\`\`js\nconsole.log(${i});\n\`\`\``
        : `Message ${i}: **done**.`;
    events.push(E.turnStarted(`t${i}`), E.delta(body), E.usage(100, 20), E.turnComplete("completed", `t${i}`, E.turnUsage(100, 20)));
  }
  return events;
}

const domStats = (page) =>
  page.evaluate(() => {
    const s = /** @type {HTMLElement} */ (document.querySelector('[data-testid="scroller"]'));
    return {
      rows: document.querySelectorAll('[data-testid="message-list"] > li').length,
      models: document.querySelectorAll('[data-testid="message-model"]').length,
      count: Number(document.querySelector('[data-testid="message-list"]')?.getAttribute("data-count")),
      fromBottom: Math.round(s.scrollHeight - s.scrollTop - s.clientHeight),
      scrollTop: Math.round(s.scrollTop),
      scrollHeight: s.scrollHeight,
    };
  });

test(`${MESSAGES} messages stay virtualised and scroll smoothly to both ends`, async () => {
  const app = await env.open();
  const { page } = app;
  const started = Date.now();
  for (let i = 0; i < MESSAGES; i += 500) await app.emitAll(turns(i, 500));
  await waitForText(page, sel("message-model"), `Message ${MESSAGES - 1}: done.`);
  const elapsed = Date.now() - started;
  let stats = await domStats(page);
  assert.equal(stats.count, MESSAGES * 2, "2000 answers and 2000 turn footers");
  assert.ok(stats.rows <= MAX_ROWS, `only ${stats.rows} rows in the DOM`);
  assert.ok(stats.models < 50, `only ${stats.models} answers in the DOM`);
  assert.ok(stats.fromBottom <= 2, `at the bottom (${stats.fromBottom} px away)`);
  assert.ok(stats.scrollHeight > 100_000, `the list keeps its full height (${stats.scrollHeight} px)`);
  console.log(`  rendered ${MESSAGES} messages in ${elapsed} ms; DOM rows: ${stats.rows}`);

  // Jump to the top (Home, as a user does): the first messages render, still a bounded number
  // of rows.
  await app.tid("scroller").focus();
  await page.keyboard.press("Home");
  await waitForText(page, sel("message-model"), "Message 0: a longer one.\n\nfirst point\nsecond point\nconsole.log(0);", { index: 0 });
  stats = await domStats(page);
  assert.ok(stats.rows <= MAX_ROWS, `only ${stats.rows} rows in the DOM at the top`);
  await app.tid("jump-to-latest").waitFor();

  // Scroll through the middle with the wheel: rows follow the viewport.
  await page.locator(sel("scroller")).hover();
  for (let k = 0; k < 10; k++) await page.mouse.wheel(0, 4000);
  await page.waitForFunction(() => {
    const first = document.querySelector('[data-testid="message-model"]');
    return first && !/^Message [0-9]:/.test(first.textContent ?? "");
  });
  stats = await domStats(page);
  assert.ok(stats.rows <= MAX_ROWS, `only ${stats.rows} rows in the DOM mid-way`);

  // Back to the latest.
  await app.tid("jump-to-latest").click();
  await page.waitForFunction(() => {
    const s = /** @type {HTMLElement} */ (document.querySelector('[data-testid="scroller"]'));
    return s.scrollHeight - s.scrollTop - s.clientHeight <= 2;
  });
  await waitForText(page, sel("message-model"), `Message ${MESSAGES - 1}: done.`);
  await app.close();
});

test("streaming keeps the view at the bottom unless the user scrolled up", async () => {
  const app = await env.open({ viewport: { width: 1100, height: 700 } });
  const { page } = app;
  await app.emitAll(turns(0, 40));
  await waitForText(page, sel("message-model"), "Message 39: done.");
  await app.sendPrompt("write a lot");
  await app.emit(E.turnStarted("long"));
  for (let i = 0; i < 30; i++) {
    await app.emit(E.delta(`Paragraph ${i} of a long answer that keeps growing.\n\n`));
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const { fromBottom } = await domStats(page);
    assert.ok(fromBottom <= 2, `following the stream (${fromBottom} px from the bottom at paragraph ${i})`);
  }
  // The user scrolls up: new text must not move the view.
  await page.locator(sel("scroller")).hover();
  await page.mouse.wheel(0, -600);
  await page.waitForFunction(() => {
    const s = /** @type {HTMLElement} */ (document.querySelector('[data-testid="scroller"]'));
    return s.scrollHeight - s.scrollTop - s.clientHeight > 300;
  });
  await app.tid("jump-to-latest").waitFor();
  const before = await domStats(page);
  for (let i = 30; i < 50; i++) {
    await app.emit(E.delta(`Paragraph ${i} of a long answer that keeps growing.\n\n`));
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  }
  await waitForText(page, sel("message-model"), /Paragraph 49 of a long answer/);
  const afterStats = await domStats(page);
  assert.equal(afterStats.scrollTop, before.scrollTop, "the view stayed where the user left it");
  assert.ok(afterStats.scrollHeight > before.scrollHeight, "while the answer grew below");
  await app.tid("jump-to-latest").click();
  await page.waitForFunction(() => {
    const s = /** @type {HTMLElement} */ (document.querySelector('[data-testid="scroller"]'));
    return s.scrollHeight - s.scrollTop - s.clientHeight <= 2;
  });
  await app.emitAll([E.delta("The end."), E.turnComplete("completed", "long")]);
  await waitForText(page, sel("message-model"), /The end\.$/);
  await page.waitForFunction(() => {
    const s = /** @type {HTMLElement} */ (document.querySelector('[data-testid="scroller"]'));
    return s.scrollHeight - s.scrollTop - s.clientHeight <= 2;
  });
  await app.close();
});

test("a fast stream is followed to its end without the user doing anything", async () => {
  // Several paragraphs a frame, delivered without waiting for frames: the page grows between
  // the list's own scrolls and the scroll events they cause, which must not count as the user
  // leaving the bottom.
  const app = await env.open({ viewport: { width: 1100, height: 700 } });
  const { page } = app;
  await app.sendPrompt("write fast");
  await app.emit(E.turnStarted("fast"));
  const paragraph = (i) => `Paragraph ${i}: ${"words that wrap across the line ".repeat(6)}\n\n`;
  for (let i = 0; i < 120; i += 4) {
    await app.emitAll([0, 1, 2, 3].map((k) => E.delta(paragraph(i + k))));
    await new Promise((r) => setTimeout(r, 5));
  }
  await page.waitForFunction(() =>
    [...document.querySelectorAll('[data-testid="message-model"]')].at(-1)?.textContent?.includes("Paragraph 119:"),
  );
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  assert.equal(await app.tid("jump-to-latest").count(), 0, "the view never left the bottom");
  const { fromBottom } = await domStats(page);
  assert.ok(fromBottom <= 2, `at the bottom (${fromBottom} px away)`);
  await app.close();
});
