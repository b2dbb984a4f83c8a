// Scrolling the conversation (issue 13, item 1): the mouse wheel scrolls up from the bottom,
// auto-follow stops on any upward scroll and resumes only at the bottom, "Jump to latest" shows
// while detached, and new content does not move a detached view.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import * as E from "./support/events.mjs";
import { screenshotPath, sel, setup, waitForText } from "./support/harness.mjs";

let env;
before(async () => {
  // Real scrollbars: a test clicks one.
  env = await setup({ scrollbars: true });
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

/** Resolves once the list's scrollTop has not changed for ten frames (a smooth scroll is over). */
const scrollSettled = (page) =>
  page.evaluate(
    () =>
      new Promise((resolve) => {
        const s = /** @type {HTMLElement} */ (document.querySelector('[data-testid="scroller"]'));
        let last = s.scrollTop;
        let still = 0;
        const step = () => {
          if (s.scrollTop === last) still++;
          else [still, last] = [0, s.scrollTop];
          if (still >= 10) resolve(null);
          else requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
      }),
  );

/** Waits until the list holds `n` items at least (rows of a detached view may not be rendered). */
async function itemsAtLeast(page, n) {
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid="message-list"]')?.getAttribute("data-count")) >= n, n);
}

const itemCount = async (app) => Number(await app.tid("message-list").getAttribute("data-count"));

async function atBottom(page) {
  await page.waitForFunction(() => {
    const s = /** @type {HTMLElement} */ (document.querySelector('[data-testid="scroller"]'));
    return s.scrollHeight - s.scrollTop - s.clientHeight <= 2;
  });
}

/** The app with thirty answers shown and the list following them at the bottom. */
async function openFollowing() {
  const app = await env.open();
  await app.emitAll(turns(0, 30));
  await waitForText(app.page, sel("message-model"), /Answer 29:/);
  await atBottom(app.page);
  return app;
}

/** Ten wheel steps of `delta` px up over the middle of the list, each followed by its frames. */
async function wheelUp(app, delta) {
  const { page } = app;
  const box = await app.tid("scroller").boundingBox();
  assert.ok(box);
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  for (let k = 0; k < 10; k++) {
    await page.mouse.wheel(0, -delta);
    await settle(page);
  }
}

test("small wheel steps up from the bottom scroll, detach, and streaming leaves the view alone", async () => {
  const app = await openFollowing();
  const { page } = app;
  // Ten small wheel steps, as a smooth-scrolling engine delivers them (each within the list's
  // "near the bottom" margin).
  await wheelUp(app, 15);
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
  const app = await openFollowing();
  const { page } = app;
  await settle(page);
  // A real click on the scrollbar's track above its thumb (the thumb is at the bottom): the
  // browser pages the list up.
  const bar = await app.tid("scroller").boundingBox();
  assert.ok(bar);
  const before = await position(page);
  await page.mouse.move(bar.x + bar.width - 4, bar.y + bar.height / 3);
  await page.mouse.down();
  await page.mouse.up();
  await app.tid("jump-to-latest").waitFor();
  await scrollSettled(page);
  const up = await position(page);
  assert.ok(up.top < before.top, `the scrollbar paged the list up (${before.top} -> ${up.top})`);
  const count = await itemCount(app);
  await app.emitAll(turns(30, 2));
  await itemsAtLeast(page, count + 4);
  await settle(page);
  assert.equal((await position(page)).top, up.top, "the scrollbar detached: new content leaves the view");

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


/**
 * In one task of the page: new turns arrive, the list scrolls itself to its new end (Svelte's
 * update and the list's scroll run as microtasks, so no frame and no `scroll` event comes in
 * between), then the user's `input` happens before the frame that reports any of it: the
 * situation of a busy machine, where the frame comes late. Returns where the list had put the
 * view and where the user then put it.
 */
function userScrollBeforeTheFrame(page, events, input) {
  return page.evaluate(
    async ({ events, input }) => {
      const s = /** @type {HTMLElement} */ (document.querySelector('[data-testid="scroller"]'));
      const before = s.scrollTop;
      window.__gd.emitAll(events);
      for (let i = 0; i < 50; i++) await new Promise((r) => queueMicrotask(() => r(null)));
      const listPut = s.scrollTop;
      if (listPut <= before) throw new Error(`the list did not scroll itself to its new end first (${before} -> ${listPut})`);
      if (input === "scrollbar") {
        // A quick drag of the scrollbar: pressed, moved 25 px up and let go within the frame.
        s.dispatchEvent(new PointerEvent("pointerdown", { bubbles: true, pointerType: "mouse" }));
        s.scrollTop -= 25;
        window.dispatchEvent(new PointerEvent("pointerup", { bubbles: true, pointerType: "mouse" }));
      } else if (input === "wheel") {
        s.dispatchEvent(new WheelEvent("wheel", { bubbles: true, deltaY: -25 }));
        s.scrollTop -= 25;
      } else if (input === "key") {
        s.focus();
        s.dispatchEvent(new KeyboardEvent("keydown", { bubbles: true, key: "ArrowUp" }));
        s.scrollTop -= 40;
      } else if (input === "held") {
        // The scrollbar is pressed and dragged up 25 px; the frame comes before it is let go.
        s.dispatchEvent(new PointerEvent("pointerdown", { bubbles: true, pointerType: "mouse" }));
        s.scrollTop -= 25;
      }
      return { listPut, userPut: s.scrollTop };
    },
    { events, input },
  );
}

for (const input of ["scrollbar", "wheel", "key", "held"]) {
  test(`a scroll input (${input}) arriving while the list's scroll to the end is pending leaves the view where the user put it`, async () => {
    const app = await openFollowing();
    const { page } = app;
    await settle(page);
    const { userPut } = await userScrollBeforeTheFrame(page, turns(30, 2), input);
    await settle(page);
    if (input === "held") {
      await page.evaluate(() => window.dispatchEvent(new PointerEvent("pointerup", { bubbles: true, pointerType: "mouse" })));
      await settle(page);
    }
    assert.equal((await position(page)).top, Math.round(userPut), "the view stayed where the user put it");
    assert.ok(await app.tid("jump-to-latest").isVisible(), 'detached: "Jump to latest" shows');
    // More content: still where the user put it.
    const count = await itemCount(app);
    await app.emitAll(turns(32, 2));
    await itemsAtLeast(page, count + 4);
    await settle(page);
    assert.equal((await position(page)).top, Math.round(userPut), "new content did not pull the view down");
    await app.close();
  });
}

test("a real wheel step while text streams in every frame detaches and stays detached", async () => {
  const app = await openFollowing();
  const { page } = app;
  await settle(page);
  const box = await app.tid("scroller").boundingBox();
  assert.ok(box);
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  // An answer streams a line into the list in every frame: the list scrolls itself to the end
  // in each, and the browser reports that scroll a frame later, after the input it dispatches
  // at the frame's start. A small wheel step up lands in that gap.
  await app.emit(E.turnStarted("t-stream"));
  await page.evaluate((delta) => {
    let n = 0;
    const step = () => {
      if (window.__stopStream) return;
      window.__gd.emit({ ...delta, text: `Line ${n++} of the streamed answer, and more words to fill it.\n\n` });
      requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  }, E.delta(""));
  await settle(page);
  await page.mouse.wheel(0, -30);
  await app.tid("jump-to-latest").waitFor();
  await scrollSettled(page);
  const up = await position(page);
  assert.ok(up.fromBottom >= 20, `the wheel moved the view up from the end (${up.fromBottom} px from the bottom)`);
  // Thirty more frames of streaming: the view stays where the wheel put it.
  await page.evaluate(
    () =>
      new Promise((resolve) => {
        let frames = 0;
        const step = () => (++frames >= 30 ? resolve(null) : requestAnimationFrame(step));
        requestAnimationFrame(step);
      }),
  );
  await page.evaluate(() => (window.__stopStream = true));
  assert.equal((await position(page)).top, up.top, "streaming did not pull the view back down");
  await app.close();
});

test("without the user's input the list keeps following: window resizes and rows changing height", async () => {
  const app = await openFollowing();
  const { page } = app;
  for (const [width, height] of [[800, 600], [1440, 900], [1000, 500]]) {
    await page.setViewportSize({ width, height });
    const count = await itemCount(app);
    await app.emitAll(turns(100 + width, 2));
    await itemsAtLeast(page, count + 4);
    await settle(page);
    await atBottom(page);
    assert.equal(await app.tid("jump-to-latest").count(), 0, `still following at ${width}x${height}`);
  }
  // Every rendered row changes height at once (as when the fonts change).
  const rowHeight = () => page.evaluate(() => /** @type {HTMLElement} */ (document.querySelector(".row-model")).offsetHeight);
  const before = await rowHeight();
  await page.evaluate(() => {
    /** @type {HTMLElement} */ (document.querySelector(".message-list")).style.fontSize = "150%";
  });
  await settle(page);
  assert.notEqual(await rowHeight(), before, "the rows changed height");
  await settle(page);
  await app.emitAll(turns(200, 2));
  await waitForText(page, sel("message-model"), /Answer 201:/);
  await settle(page);
  await atBottom(page);
  assert.equal(await app.tid("jump-to-latest").count(), 0, "still following after rows changed height");
  await app.close();
});

// Issue 34: sending a prompt while scrolled up left the view where it was, the user's own message
// and the answer off-screen. Sending is the user going to the end: the list follows again.
test("sending a prompt from a detached view goes to the end and follows the answer", async () => {
  const app = await openFollowing();
  const { page } = app;
  await wheelUp(app, 60);
  await scrollSettled(page);
  assert.ok((await position(page)).fromBottom >= 300, "scrolled up");
  await app.tid("jump-to-latest").waitFor();

  await app.sendPrompt("What changed since then?");
  await atBottom(page);
  await waitForText(page, sel("message-user"), /What changed since then\?/);
  const own = await page.evaluate(() => {
    const s = /** @type {HTMLElement} */ (document.querySelector('[data-testid="scroller"]')).getBoundingClientRect();
    const users = [...document.querySelectorAll('[data-testid="message-user"]')];
    const r = users[users.length - 1]?.getBoundingClientRect();
    return r ? r.top >= s.top && r.bottom <= s.bottom : false;
  });
  assert.ok(own, "the user's own message is on screen");
  assert.equal(await app.tid("jump-to-latest").count(), 0, "following again");
  // The answer streams in below it and the view follows.
  await app.emitAll(turns(30, 2));
  await waitForText(page, sel("message-model"), /Answer 31:/);
  await atBottom(page);
  await app.close();
});

// Issue 34 (item 5b): the view stopped following once after a tool card was expanded, with no
// scroll by the user. A press on the list counted as the user holding it, so the scroll of the
// frames after it — the browser clamping the position as the card changed height, text then
// streaming in before that scroll was reported — read as the user's scrolling up and detached.
// Only the user's own scrolling (wheel, keys, the scrollbar, a drag) detaches now.
test("clicking a card to collapse and expand it while text streams in does not stop following", async () => {
  const app = await openFollowing();
  const { page } = app;
  await app.emitAll([
    E.turnStarted("t-card"),
    E.toolRequest("sh1", "run_shell_command", { command: "cargo test" }),
    E.toolState("sh1", "executing"),
    E.toolOutput("sh1", Array.from({ length: 30 }, (_, i) => `test case_${i} ... ok`).join("\n")),
    E.toolResponse("sh1", "run_shell_command", "success", null),
    E.delta("Running the tests. "),
  ]);
  const toggle = page.locator(`${sel("tool-card")}[data-call-id="sh1"] ${sel("tool-output-toggle")}`);
  await toggle.waitFor();
  await atBottom(page);
  for (const expanded of ["false", "true"]) {
    // Text arrives right after the layout that gives the card its new height (and clamps the
    // position), before the browser reports that scroll, as a stream's text can.
    await page.evaluate(() => {
      const card = document.querySelector('[data-call-id="sh1"]');
      const watch = new ResizeObserver(() => {
        if (!card.dataset.clicked) return;
        delete card.dataset.clicked;
        watch.disconnect();
        window.__gd.emit({ type: "content_delta", text: "More words. ".repeat(40) });
      });
      document.addEventListener("click", () => ((card.dataset.clicked = "1"), watch.observe(card)), { capture: true, once: true });
    });
    await toggle.click();
    await page.waitForFunction((e) => document.querySelector('[data-call-id="sh1"] [data-testid="tool-output-toggle"]')?.getAttribute("aria-expanded") === e, expanded);
    for (let k = 0; k < 3; k++) {
      await settle(page);
      await app.emit(E.delta(`Still streaming ${k}. ${"words ".repeat(30)}\n\n`));
    }
    await settle(page);
    await atBottom(page);
    assert.equal(await app.tid("jump-to-latest").count(), 0, `still following after the card went ${expanded === "true" ? "open" : "shut"}`);
  }
  await app.close();
});
