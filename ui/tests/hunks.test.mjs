// Per-hunk review of an edit confirmation: each hunk accepted or rejected, single lines picked,
// the user's own version reviewed as hunks, and the keys (J/K, A/R, Shift+A/R, E). The diffs are
// the real core's (fixtures/diffs.json); the answer checked is the `confirm_tool` op the core gets.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import * as E from "./support/events.mjs";
import { fixture, screenshotPath, sel, setup, waitForText } from "./support/harness.mjs";

const diffs = fixture("diffs.json");
let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

/** The app with an edit of `name` pending, the prompt box empty. */
async function withEdit(name = "two_hunks", options = {}) {
  const app = await env.open(options);
  await app.sendPrompt("change it");
  await app.emitAll([
    E.turnStarted(),
    E.toolRequest("e1", "replace", { file_path: `/home/dev/project/src/${diffs[name].file_name}` }),
    E.confirmation("e1", "replace", E.editDetails(diffs[name])),
  ]);
  await app.page.waitForSelector(`${sel("hunk")}[data-hunk="0"]`);
  return app;
}

const hunk = (app, i) => app.page.locator(`${sel("hunk")}[data-hunk="${i}"]`);
const statuses = (app) => app.page.locator(sel("hunk")).evaluateAll((els) => els.map((e) => e.getAttribute("data-status")));
const approveText = (app) => app.tid("approve").innerText();

test("every hunk has Accept / Reject; untouched, Approve is the plain approval", async () => {
  const app = await withEdit();
  assert.deepEqual(await statuses(app), ["accepted", "accepted", "accepted"]);
  assert.equal(await hunk(app, 1).locator(sel("hunk-accept")).getAttribute("aria-pressed"), "true");
  assert.match(await app.page.locator('[data-hunk-head="0"]').innerText(), /Hunk 1 of 3/);
  // Rows of the diff name their hunk; changed lines carry the core's line index.
  const changes = await app.page
    .locator(`${sel("diff-left")} .row[data-hunk="0"][data-change], ${sel("diff-right")} .row[data-hunk="0"][data-change]`)
    .evaluateAll((els) => els.map((e) => [e.closest("[data-testid]")?.getAttribute("data-testid"), e.querySelector(".ln")?.textContent, e.getAttribute("data-change")]));
  assert.deepEqual(changes, [
    ["diff-left", "10", "0"],
    ["diff-left", "11", "1"],
    ["diff-right", "10", "2"],
  ]);
  assert.match(await approveText(app), /^Approve/);
  await app.tid("approve").click();
  const call = await app.waitForOp("confirm_tool");
  assert.deepEqual(call.args, { sessionId: "s1", call_id: "e1", outcome: "proceed_once", content: null });
  await app.close();
});

test("rejecting one hunk sends a decision per hunk and shows what is left out", async () => {
  const app = await withEdit();
  await hunk(app, 1).locator(sel("hunk-reject")).click();
  assert.deepEqual(await statuses(app), ["accepted", "rejected", "accepted"]);
  assert.equal(await approveText(app).then((t) => t.split("\n")[0].trim()), "Apply 2 of 3 hunks");
  // The rejected hunk's added lines are struck through; the others are not.
  const dropped = await app.page
    .locator(`${sel("diff-right")} .row.dropped`)
    .evaluateAll((els) => els.map((e) => e.querySelector(".ln")?.textContent));
  assert.deepEqual(dropped, ["29", "30"]);
  // Always-allow makes no sense for part of an edit.
  assert.equal(await app.tid("always-allow").isDisabled(), true);
  await app.page.locator(sel("confirmation")).screenshot({ path: screenshotPath("hunks-rejected-light.png") });
  await app.tid("approve").click();
  const call = await app.waitForOp("confirm_tool");
  assert.deepEqual(call.args.hunks, [
    { hunk: 0, choice: { type: "accept" } },
    { hunk: 1, choice: { type: "reject" } },
    { hunk: 2, choice: { type: "accept" } },
  ]);
  assert.equal(call.args.outcome, "proceed_once");
  await app.close();
});

test("a line's number picks it alone: the hunk goes partly, the op names the lines", async () => {
  const app = await withEdit();
  // Keep line 11 (do not remove it): change index 1 of hunk 0.
  await app.page.locator(`${sel("diff-left")} .row[data-hunk="0"][data-change="1"] ${sel("hunk-line")}`).click();
  assert.deepEqual(await statuses(app), ["partly", "accepted", "accepted"]);
  assert.equal(
    await app.page.locator(`${sel("diff-left")} .row[data-change="1"][data-hunk="0"] ${sel("hunk-line")}`).getAttribute("aria-pressed"),
    "false",
  );
  await app.tid("approve").click();
  const call = await app.waitForOp("confirm_tool");
  assert.deepEqual(call.args.hunks[0], { hunk: 0, choice: { type: "lines", lines: [0, 2] } });
  await app.close();
});

test("keys: J/K move, A/R decide the focused hunk, Shift+A/R the file, E edits; the keys are shown", async () => {
  const app = await withEdit();
  const { page } = app;
  assert.match(await app.tid("review-keys").innerText(), /J.*K.*hunk.*A.*R.*accept\/reject/s);
  const focused = () => page.locator(`${sel("hunk")}.focused`).getAttribute("data-hunk");
  assert.equal(await focused(), "0");
  await page.keyboard.press("j");
  await page.keyboard.press("j");
  assert.equal(await focused(), "2");
  await page.keyboard.press("r");
  await page.keyboard.press("k");
  assert.equal(await focused(), "1");
  await page.keyboard.press("r");
  assert.deepEqual(await statuses(app), ["accepted", "rejected", "rejected"]);
  await page.keyboard.press("a");
  assert.deepEqual(await statuses(app), ["accepted", "accepted", "rejected"]);
  await page.keyboard.press("Shift+R");
  assert.deepEqual(await statuses(app), ["rejected", "rejected", "rejected"]);
  assert.equal((await approveText(app)).split("\n")[0].trim(), "Apply no hunk");
  await page.keyboard.press("Shift+A");
  assert.deepEqual(await statuses(app), ["accepted", "accepted", "accepted"]);
  await page.keyboard.press("r");
  await page.keyboard.press("Control+Enter");
  const call = await app.waitForOp("confirm_tool");
  assert.equal(call.args.hunks[1].choice.type, "reject");
  await app.close();
});

test("keys typed into the prompt box stay there", async () => {
  const app = await withEdit();
  await app.tid("prompt-input").click();
  await app.page.keyboard.type("ra");
  assert.deepEqual(await statuses(app), ["accepted", "accepted", "accepted"]);
  assert.equal(await app.tid("prompt-input").inputValue(), "ra");
  await app.close();
});

test("the user's own version is reviewed as hunks and sent with its decisions", async () => {
  const app = await withEdit();
  const { page } = app;
  const mine = diffs.two_hunks_edited;
  await page.evaluate((d) => {
    window.__gdExtraIPC = (cmd, args) => (cmd === "diff_texts" && args.proposed === d.proposed ? d.side_by_side : undefined);
  }, mine);
  await page.keyboard.press("e");
  const editor = app.tid("diff-editor");
  await editor.waitFor();
  await editor.fill(mine.proposed);
  await app.tid("review-edits").click();
  await waitForText(page, sel("your-version"), "Your version");
  await page.waitForSelector(`${sel("hunk")}[data-hunk="2"]`);
  assert.equal(await app.tid("diff-editor").count(), 0);
  assert.match(await app.tid("diff-right").innerText(), /checked by hand/);
  await hunk(app, 0).locator(sel("hunk-reject")).click();
  await app.tid("approve").click();
  const call = await app.waitForOp("confirm_tool");
  assert.equal(call.args.outcome, "modify_with_editor");
  assert.equal(call.args.content, mine.proposed);
  assert.deepEqual(
    call.args.hunks.map((h) => h.choice.type),
    ["reject", "accept", "accept"],
  );
  await app.close();
});

// Issue 34 (item 6): typing "# edited by hand" and pressing "Review as hunks" while the app
// lagged wrote "# ed by hand". Under load WebKit hands the page its queued key events one at a
// time and a click can overtake them, so keys typed before the click arrive after it: they must
// still go into the text, and the diff shown and the content sent must be of all of it.
test("keys typed before Review as hunks are all in the version reviewed and sent, even when they land after the click", async () => {
  const app = await withEdit();
  const { page } = app;
  const proposed = diffs.two_hunks.proposed;
  // The comparison is held until the test lets it go; every text compared is recorded.
  await page.evaluate((diff) => {
    Object.assign(window, { __compared: [], __held: [], __hold: true });
    window.__gdExtraIPC = (cmd, args) => {
      if (cmd !== "diff_texts") return undefined;
      window.__compared.push(args.proposed);
      return window.__hold ? new Promise((resolve) => window.__held.push(() => resolve(diff))) : diff;
    };
  }, diffs.two_hunks.side_by_side);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Emulation.setCPUThrottlingRate", { rate: 6 });
  await app.tid("edit-proposal").click();
  await app.tid("diff-editor").press("Control+End");
  await page.keyboard.type("# ed");
  await app.tid("review-edits").click();
  // The rest of the keys, delivered after the click as a busy WebKit delivers them.
  await page.keyboard.type("ited by hand");
  await page.evaluate(() => {
    window.__hold = false;
    for (const release of window.__held.splice(0)) release();
  });
  await app.tid("your-version").waitFor();
  await cdp.send("Emulation.setCPUThrottlingRate", { rate: 1 });
  const mine = proposed + "# edited by hand";
  assert.equal(await page.evaluate(() => window.__compared.at(-1)), mine, "the diff shown is of every key typed");
  await app.tid("approve").click();
  const call = await app.waitForOp("confirm_tool");
  assert.equal(call.args.outcome, "modify_with_editor");
  assert.equal(call.args.content, mine);
  await app.close();
});

test("Discard edits goes back to the proposal and its hunks", async () => {
  const app = await withEdit();
  const mine = diffs.two_hunks_edited;
  await app.page.evaluate((d) => {
    window.__gdExtraIPC = (cmd) => (cmd === "diff_texts" ? d.side_by_side : undefined);
  }, mine);
  await app.tid("edit-proposal").click();
  await app.tid("diff-editor").fill(mine.proposed);
  await app.tid("review-edits").click();
  await app.tid("your-version").waitFor();
  await app.tid("edit-proposal").click();
  await app.page.waitForSelector(sel("your-version"), { state: "detached" });
  assert.match(await app.tid("diff-right").innerText(), /compute_fast/);
  await app.tid("approve").click();
  const call = await app.waitForOp("confirm_tool");
  assert.deepEqual(call.args, { sessionId: "s1", call_id: "e1", outcome: "proceed_once", content: null });
  await app.close();
});

for (const [colorScheme, width] of [
  ["dark", 800],
  ["light", 800],
  ["dark", 1440],
]) {
  test(`${colorScheme} at ${width} px: the hunk heads fit, nothing overflows`, async () => {
    const app = await withEdit("two_hunks", { colorScheme, viewport: { width, height: 800 } });
    const { page } = app;
    await hunk(app, 1).locator(sel("hunk-reject")).click();
    // Every hunk head's buttons are inside the card.
    const overflow = await page.evaluate(() => {
      const card = document.querySelector('[data-testid="confirmation"]').getBoundingClientRect();
      return [...document.querySelectorAll('[data-testid="hunk-reject"], [data-testid="approve"]')]
        .map((b) => b.getBoundingClientRect())
        .filter((r) => r.right > card.right + 1 || r.left < card.left - 1).length;
    });
    assert.equal(overflow, 0);
    await page.screenshot({ path: screenshotPath(`hunks-${colorScheme}-${width}.png`) });
    await app.close();
  });
}

// Issue 34: at 800 px, J selected the next hunk but scrolled only its head to the bottom edge, so
// A/R decided a hunk whose lines were out of sight.
test("at 800 px, J and K bring the whole focused hunk into view, below the sticky pane heads", async () => {
  const app = await withEdit("two_hunks", { viewport: { width: 800, height: 600 } });
  const { page } = app;
  /** Whether hunk `i`'s head and its rows lie inside the part of their scroll container not
   *  covered by the sticky "Original / Proposed" heads. */
  const inView = (i) =>
    page.evaluate((i) => {
      const head = document.querySelector(`[data-testid="hunk"][data-hunk="${i}"]`);
      const rows = [...document.querySelectorAll(`[data-testid="diff-right"] .row[data-hunk="${i}"]`)];
      let box = head?.parentElement;
      while (box && !/(auto|scroll)/.test(getComputedStyle(box).overflowY)) box = box.parentElement;
      if (!head || rows.length === 0 || !box) return { ok: false, why: "not found" };
      const view = box.getBoundingClientRect();
      const sticky = document.querySelector('[data-testid="diff-right"] .pane-head')?.getBoundingClientRect().height ?? 0;
      const top = head.getBoundingClientRect().top;
      const bottom = rows[rows.length - 1].getBoundingClientRect().bottom;
      // All of it when it fits; else its head at the top, its lines filling the view.
      const fits = bottom - top <= view.bottom - view.top - sticky;
      const ok = top >= view.top + sticky - 1 && (fits ? bottom <= view.bottom + 1 : top <= view.top + sticky + 1);
      return { ok, top, bottom, view: [view.top, view.bottom], sticky };
    }, i);
  for (const [key, want] of [["j", 1], ["j", 2], ["k", 1], ["k", 0]]) {
    await page.keyboard.press(key);
    await page.waitForFunction((w) => document.querySelector(`[data-testid="hunk"].focused`)?.getAttribute("data-hunk") === String(w), want);
    const seen = await inView(want);
    assert.ok(seen.ok, `after ${key}, hunk ${want} is in view: ${JSON.stringify(seen)}`);
  }
  await app.close();
});
