// The side-by-side diff of edit confirmations, with diffs computed by the real core
// (tests/fixtures/diffs.json, see tests/fixtures/gen/README.md).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import * as E from "./support/events.mjs";
import { fixture, screenshotPath, sel, setup } from "./support/harness.mjs";

const diffs = fixture("diffs.json");
let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

/** Opens the app with one edit confirmation pending. */
async function withEdit(name, options = {}) {
  const app = await env.open(options);
  await app.sendPrompt("change it");
  await app.emitAll([
    E.turnStarted(),
    E.toolRequest("e1", "replace", { file_path: `/home/dev/project/src/${diffs[name].file_name}` }),
    E.confirmation("e1", "replace", E.editDetails(diffs[name])),
  ]);
  await app.page.waitForSelector(`${sel("diff-view")}[data-call-id="e1"]`);
  return app;
}

/** Every row of both panes: line number, text, highlighted words, kind, geometry. */
function readRows(page) {
  return page.evaluate(() => {
    const pane = (id) =>
      [...document.querySelectorAll(`[data-testid="${id}"] > :not(.hunk-head)`)].slice(1).map((el) => {
        const r = el.getBoundingClientRect();
        const isGap = el.classList.contains("gap");
        return {
          gap: isGap,
          kind: el.getAttribute("data-kind"),
          number: isGap ? null : el.querySelector(".ln")?.textContent || null,
          text: isGap ? el.textContent?.trim() : el.querySelector(".code")?.textContent,
          words: [...el.querySelectorAll("mark.word")].map((m) => m.textContent),
          sign: isGap ? null : (el.querySelector('[data-testid="diff-sign"]')?.textContent ?? null),
          // Whether the marker ends before the code starts (a column of its own).
          signBeforeCode: isGap
            ? null
            : (el.querySelector('[data-testid="diff-sign"]')?.getBoundingClientRect().right ?? Infinity) <=
              (el.querySelector(".code")?.getBoundingClientRect().left ?? -Infinity),
          codeMarker: isGap ? null : getComputedStyle(el.querySelector(".code"), "::before").content,
          top: Math.round(r.top),
          height: Math.round(r.height),
        };
      });
    return { left: pane("diff-left"), right: pane("diff-right") };
  });
}

test("rows are aligned, numbered and coloured; changed words are highlighted (UTF-8 spans)", async () => {
  const app = await withEdit("two_hunks");
  const { page } = app;
  const { left, right } = await readRows(page);
  assert.equal(left.length, right.length);
  // Every row sits at the same height on both sides.
  for (let i = 0; i < left.length; i++) {
    assert.equal(left[i].top, right[i].top, `row ${i} top`);
    assert.equal(left[i].height, right[i].height, `row ${i} height`);
  }
  // Gaps: before the first hunk, between the hunks, after the last.
  assert.deepEqual(
    left.filter((r) => r.gap).map((r) => r.text),
    ["Show 6 unchanged lines above", "Show 12 unchanged lines", "Show 16 unchanged lines", "Show 5 unchanged lines below"],
  );
  // The hunk ranges are in the hunks' heads (with their Accept / Reject), not beside the gaps.
  assert.deepEqual(
    right.filter((r) => r.gap).map((r) => r.text),
    ["", "", "", ""],
  );
  assert.deepEqual(
    await page.locator("[data-hunk-head]").evaluateAll((els) => els.map((e) => e.querySelector(".hunk-range")?.textContent)),
    ["@@ -7,8 +7,7 @@", "@@ -27,6 +26,8 @@", "@@ -49,7 +50,7 @@"],
  );
  // First hunk: line 10 changed, line 11 removed (no line on the right).
  const hunk1 = left.slice(1, 9).map((r, i) => [r.number, right[i + 1].number, r.kind]);
  assert.deepEqual(hunk1, [
    ["7", "7", "equal"],
    ["8", "8", "equal"],
    ["9", "9", "equal"],
    ["10", "10", "changed"],
    ["11", null, "removed"],
    ["12", "11", "equal"],
    ["13", "12", "equal"],
    ["14", "13", "equal"],
  ]);
  const row10 = left.findIndex((r) => r.number === "10");
  assert.deepEqual(left[row10].words, ["compute"]);
  assert.deepEqual(right[row10].words, ["compute_fast"]);
  assert.equal(right[row10].text, "    let value_10 = compute_fast(10); // line 10");
  // Added lines have no left line.
  const added = right.filter((r) => r.kind === "added");
  assert.deepEqual(
    added.map((r) => [r.number, r.text]),
    [
      ["29", '    log::info!("checkpoint");'],
      ["30", "    flush();"],
    ],
  );
  assert.ok(left.filter((r) => r.kind === "added").every((r) => r.number === null && r.text === ""));
  // Byte offsets of multi-byte text map to the right characters.
  const row52 = left.findIndex((r) => r.number === "52");
  assert.equal(right[row52].number, "53");
  assert.deepEqual(left[row52].words, ["wörld"]);
  assert.deepEqual(right[row52].words, ["wōrld 😀"]);
  assert.equal(right[row52].text, '    let greeting = "héllo wōrld 😀"; // line 52');

  // The +/− markers are a gutter column of their own, never part of the code's text (issue 34).
  const rows = [...left, ...right].filter((r) => !r.gap);
  assert.ok(rows.every((r) => r.signBeforeCode), "every marker ends where the code begins");
  assert.ok(rows.every((r) => r.codeMarker === "none" || r.codeMarker === "normal"), "no marker drawn inside the code");
  assert.deepEqual(
    [left[row10].sign, right[row10].sign, left[row10 + 1].sign, right[row10 + 1].sign, left[1].sign, right[1].sign],
    ["−", "+", "−", "", "", ""],
  );
  assert.ok(added.length > 0 && right.filter((r) => r.kind === "added").every((r) => r.sign === "+"));
  assert.ok(!right[row10].text.startsWith("+") && !left[row10].text.startsWith("−"));

  // Colours: removed/changed red on the left, added/changed green on the right.
  const colours = await page.evaluate(() => {
    const bg = (q) => getComputedStyle(/** @type {Element} */ (document.querySelector(q))).backgroundColor;
    return {
      removed: bg('[data-testid="diff-left"] .row.removed'),
      changedLeft: bg('[data-testid="diff-left"] .row.changed'),
      changedRight: bg('[data-testid="diff-right"] .row.changed'),
      added: bg('[data-testid="diff-right"] .row.added'),
      equal: bg('[data-testid="diff-left"] .row.equal'),
      word: bg('[data-testid="diff-right"] mark.word'),
    };
  });
  const rgb = (c) => c.match(/\d+/g).slice(0, 3).map(Number);
  const [rr, rg] = rgb(colours.removed);
  const [ar, ag] = rgb(colours.added);
  assert.ok(rr > rg, `removed is reddish: ${colours.removed}`);
  assert.ok(ag > ar, `added is greenish: ${colours.added}`);
  assert.equal(colours.changedLeft, colours.removed);
  assert.equal(colours.changedRight, colours.added);
  assert.notEqual(colours.word, colours.added, "changed words stand out");
  assert.equal(colours.equal, "rgba(0, 0, 0, 0)");

  await page.locator(sel("confirmation")).screenshot({ path: screenshotPath("diff-light.png") });
  await app.close();
});

test("collapsed regions expand from the full texts", async () => {
  const app = await withEdit("two_hunks");
  const { page } = app;
  const expanders = page.locator(sel("diff-expand"));
  assert.equal(await expanders.count(), 4);
  // The gap between the first two hunks: original lines 15..26, proposed lines 14..25.
  await expanders.nth(1).click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="diff-expand"]').length === 3);
  const { left, right } = await readRows(page);
  const start = left.findIndex((r) => r.number === "15");
  assert.ok(start > 0);
  for (let k = 0; k < 12; k++) {
    const l = left[start + k];
    const r = right[start + k];
    assert.equal(l.number, String(15 + k));
    assert.equal(r.number, String(14 + k));
    assert.equal(l.kind, "equal");
    assert.equal(l.text, `    let value_${15 + k} = compute(${15 + k}); // line ${15 + k}`);
    assert.equal(r.text, l.text);
    assert.equal(l.top, r.top);
  }
  // The rows before and after the expanded region are the hunks' own context lines.
  assert.equal(left[start - 1].number, "14");
  assert.equal(left[start + 12].number, "27");
  // Expanding the region above the first hunk shows lines 1..6 (an empty line 2 included).
  await expanders.first().click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="diff-expand"]').length === 2);
  const after = await readRows(page);
  assert.deepEqual(
    after.left.slice(0, 7).map((r) => [r.number, r.text]),
    [
      ["1", "use std::collections::HashMap;"],
      ["2", ""],
      ["3", "fn main() {"],
      ["4", "    let value_4 = compute(4); // line 4"],
      ["5", "    let value_5 = compute(5); // line 5"],
      ["6", "    let value_6 = compute(6); // line 6"],
      ["7", "    let value_7 = compute(7); // line 7"],
    ],
  );
  assert.equal(after.left[1].height, after.left[0].height, "an empty line keeps its height");
  // The trailing region.
  await expanders.last().click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="diff-expand"]').length === 1);
  const end = await readRows(page);
  assert.deepEqual(end.left.at(-1), { ...end.left.at(-1), number: "60", text: "}" });
  assert.deepEqual(end.right.at(-1), { ...end.right.at(-1), number: "61", text: "}" });
  await app.close();
});

test("a new file has no left side; an emptied file no right side", async () => {
  let app = await withEdit("new_file");
  let { page } = app;
  let rows = await readRows(page);
  assert.match(await page.locator(`${sel("diff-left")} .pane-head`).innerText(), /New file/);
  assert.equal(await page.locator(sel("diff-expand")).count(), 0);
  assert.deepEqual(
    rows.right.map((r) => [r.number, r.kind]),
    ["1", "2", "3", "4", "5", "6"].map((n) => [n, "added"]),
  );
  assert.equal(rows.right[2].text, '    return f"Hello, {name}!"');
  assert.ok(rows.left.every((r) => r.number === null && r.text === ""), "no original lines");
  assert.equal(await page.locator(`${sel("confirmation")} .confirm-kind`).innerText(), "NEW FILE");
  assert.deepEqual(await page.locator(`${sel("diff-stats")} > span`).allInnerTexts(), ["+6", "−0"]);
  await app.close();

  app = await withEdit("emptied");
  page = app.page;
  rows = await readRows(page);
  assert.match(await page.locator(`${sel("diff-right")} .pane-head`).innerText(), /all content removed/);
  assert.deepEqual(
    rows.left.map((r) => [r.number, r.text, r.kind]),
    [
      ["1", "alpha", "removed"],
      ["2", "beta", "removed"],
      ["3", "gamma", "removed"],
      ["4", "delta", "removed"],
    ],
  );
  assert.ok(rows.right.every((r) => r.number === null));
  assert.match(await page.locator(sel("confirmation")).innerText(), /Removes all content/);
  await app.close();
});

test("long lines wrap and both sides keep the same row height", async () => {
  const app = await withEdit("long_line", { viewport: { width: 1000, height: 800 } });
  const { left, right } = await readRows(app.page);
  const changed = left.findIndex((r) => r.kind === "changed");
  assert.ok(left[changed].height > 3 * left[0].height, `the long line wraps (${left[changed].height}px)`);
  for (let i = 0; i < left.length; i++) {
    assert.equal(left[i].top, right[i].top, `row ${i} top`);
    assert.equal(left[i].height, right[i].height, `row ${i} height`);
  }
  assert.deepEqual(right[changed].words, ["DOLOR"]);
  await app.close();
});

test("dark theme screenshot of the diff", async () => {
  const app = await withEdit("two_hunks", { colorScheme: "dark" });
  const { page } = app;
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, "rgb(16, 18, 24)", "the dark palette applies");
  await page.locator(sel("diff-expand")).nth(1).click();
  await page.locator(sel("confirmation")).screenshot({ path: screenshotPath("diff-dark.png") });
  await page.screenshot({ path: screenshotPath("window-dark.png") });
  await app.close();
});
