// Whole-turn review ("Review at end of turn"): the per-conversation switch, the end-of-turn
// review core sends (`turn_review`), per-file and per-change decisions, Edit, and what Apply /
// Discard submit (`apply_turn_review`).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { after, before, describe, test } from "node:test";
import * as E from "./support/events.mjs";
import { fixture, screenshotPath, sel, setup, waitForText } from "./support/harness.mjs";

const diffs = fixture("diffs.json");
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** axe on the review: colour contrast and serious or critical violations, as readable lines. */
async function audit(app) {
  await app.page.evaluate(AXE);
  const results = await app.page.evaluate(async () => {
    // @ts-ignore axe is the injected global
    const r = await window.axe.run('[data-testid="turn-review"]', { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 6).map((n) => n.target.join(" ")) }));
  });
  return results
    .filter((v) => v.id === "color-contrast" || v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.join(", ")}`);
}
let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const MAIN = "/home/dev/project/src/main.rs";
const NEW = "/home/dev/project/src/new.rs";

function reviewFile(c, path, shown) {
  return {
    path,
    shown_path: shown,
    original: c.original,
    staged: c.proposed,
    added: c.side_by_side.added,
    removed: c.side_by_side.removed,
    new_file: c.original === null,
    changed_on_disk: false,
    side_by_side: c.side_by_side,
  };
}

const FILES = [reviewFile(diffs.two_hunks, MAIN, "src/main.rs"), reviewFile(diffs.new_file, NEW, "src/new.rs")];
const turnReview = (files = FILES, restored = false) => ({ type: "turn_review", turn_id: "t1", files, restored });
const turnContext = (review_mode) => ({ type: "turn_context", approval_mode: "default", model: "gemini-2.5-pro", review_mode });

/** Opens the app and ends a turn with the review. */
async function reviewing(options) {
  const app = await env.open(options);
  await app.sendPrompt("do it");
  await app.emitAll([E.turnStarted(), turnReview(), E.turnComplete()]);
  await app.tid("turn-review").waitFor();
  return app;
}

describe("review mode switch", () => {
  test("sends override_turn_context with review_mode and follows the session's turn_context", async () => {
    const app = await env.open();
    const box = app.tid("review-mode");
    assert.equal(await box.isChecked(), false);
    await box.check();
    const op = await app.waitForOp("override_turn_context");
    assert.deepEqual(op.args, { sessionId: "s1", review_mode: true });
    // A reattached window learns the mode from the echo.
    await app.emit(turnContext(false));
    await app.until(() => !document.querySelector('[data-testid="review-mode"]').checked);
    await app.emit(turnContext(true));
    await app.until(() => document.querySelector('[data-testid="review-mode"]').checked);
    await app.close();
  });
});

describe("end-of-turn review", () => {
  for (const colorScheme of ["light", "dark"]) {
    test(`${colorScheme}: no contrast or serious accessibility problem, a change and a file rejected`, async () => {
      const app = await reviewing({ colorScheme });
      await app.page.locator(`${sel("review-file-block")}[data-path="${MAIN}"] ${sel("hunk")}[data-hunk="0"] ${sel("hunk-reject")}`).click();
      await app.page.locator(`${sel("review-file-block")}[data-path="${NEW}"] ${sel("review-file-reject")}`).click();
      assert.deepEqual(await audit(app), []);
      await app.close();
    });
  }

  test("lists every staged file with its counts and says shell commands ran for real", async () => {
    const app = await reviewing();
    const files = app.tid("review-file");
    assert.equal(await files.count(), 2);
    assert.match(await files.nth(0).innerText(), /src\/main\.rs\s*\+4\s*−3/);
    assert.match(await files.nth(1).innerText(), /src\/new\.rs\s*\+\d+\s*−0/);
    assert.match(await app.tid("turn-review-shell-note").innerText(), /Shell commands .* confirmed as usual and ran on the real files/);
    // A diff per file, through the confirmation's DiffView.
    assert.equal(await app.tid("turn-review").locator(sel("diff-view")).count(), 2);
    assert.equal(await app.tid("review-apply").innerText(), "Apply all");
    await app.page.locator(sel("turn-review")).screenshot({ path: screenshotPath("turn-review-light.png") });
    await app.close();
  });

  test("reject a file and one change of another: Apply sends exactly those decisions", async () => {
    const app = await reviewing();
    const newFile = app.page.locator(`${sel("review-file-block")}[data-path="${NEW}"]`);
    await newFile.getByTestId("review-file-reject").click();
    assert.equal(await app.tid("review-file").nth(1).getAttribute("data-accepted"), "false");
    const main = app.page.locator(`${sel("review-file-block")}[data-path="${MAIN}"]`);
    await main.locator(`${sel("hunk")}[data-hunk="1"]`).getByTestId("hunk-reject").click();
    assert.equal(await main.getAttribute("data-state"), "partial");
    await waitForText(app.page, sel("review-apply"), "Apply 1 of 2");
    await app.tid("review-apply").click();
    const op = await app.waitForOp("apply_turn_review");
    assert.deepEqual(op.args, {
      sessionId: "s1",
      decisions: [
        {
          path: MAIN,
          accept: {
            type: "hunks",
            hunks: [
              { hunk: 0, choice: { type: "accept" } },
              { hunk: 1, choice: { type: "reject" } },
              { hunk: 2, choice: { type: "accept" } },
            ],
          },
        },
        { path: NEW, accept: { type: "none" } },
      ],
    });
    // Buttons wait for the outcome; then the review goes and a notice says what happened.
    assert.equal(await app.tid("review-apply").isDisabled(), true);
    await app.emit({
      type: "turn_review_applied",
      written: [MAIN],
      not_applied: [
        { path: MAIN, reason: "partly_applied", message: "src/main.rs: written as the user decided, not all as staged" },
        { path: NEW, reason: "rejected", message: "src/new.rs: rejected, not written" },
      ],
    });
    await app.page.waitForSelector(sel("turn-review"), { state: "detached" });
    await waitForText(app.page, sel("notice"), /Review applied: 1 file written\. .*src\/new\.rs: rejected, not written/);
    await app.close();
  });

  test("Edit sends the user's version; rejecting every change rejects the file", async () => {
    const app = await reviewing({ colorScheme: "dark" });
    const main = app.page.locator(`${sel("review-file-block")}[data-path="${MAIN}"]`);
    for (const i of [0, 1, 2]) await main.locator(`${sel("hunk")}[data-hunk="${i}"]`).getByTestId("hunk-reject").click();
    assert.equal(await main.getAttribute("data-state"), "rejected");
    const newFile = app.page.locator(`${sel("review-file-block")}[data-path="${NEW}"]`);
    await newFile.getByTestId("review-edit").click();
    await newFile.getByTestId("diff-editor").fill("fn mine() {}\n");
    await app.page.locator(sel("turn-review")).screenshot({ path: screenshotPath("turn-review-dark.png") });
    await app.tid("review-apply").click();
    const op = await app.waitForOp("apply_turn_review");
    assert.deepEqual(op.args.decisions, [
      { path: MAIN, accept: { type: "none" } },
      { path: NEW, accept: { type: "all" }, edited: "fn mine() {}\n" },
    ]);
    await app.close();
  });

  test("keys: R rejects the selected file's focused change, J moves on, Shift+R rejects a file, Ctrl+Enter applies", async () => {
    const app = await reviewing();
    const { page } = app;
    // The first file is selected at first; the keys work once the focus left the prompt box.
    assert.equal(await app.tid("review-file").nth(0).getAttribute("data-selected"), "true");
    await app.tid("review-file").nth(0).click();
    await page.keyboard.press("j");
    await page.keyboard.press("r");
    const main = page.locator(`${sel("review-file-block")}[data-path="${MAIN}"]`);
    assert.equal(await main.locator(`${sel("hunk")}[data-hunk="1"]`).getAttribute("data-status"), "rejected");
    // Selecting the other file (its chip) moves the keys there.
    await app.tid("review-file").nth(1).click();
    await page.keyboard.press("Shift+R");
    await waitForText(page, sel("review-apply"), "Apply 1 of 2");
    await page.keyboard.press("Control+Enter");
    const op = await app.waitForOp("apply_turn_review");
    assert.deepEqual(
      op.args.decisions.map((d) => [d.path, d.accept.type]),
      [
        [MAIN, "hunks"],
        [NEW, "none"],
      ],
    );
    await app.close();
  });

  test("a staged edit's card says review mode decided it and offers no revert (nothing was written)", async () => {
    const app = await env.open();
    await app.sendPrompt("do it");
    const details = E.editDetails(diffs.two_hunks, MAIN);
    const applied = (id) => ({ ...E.toolResponse(id, "replace", "success", "Updated src/main.rs (+4 \u22123)"), diff: details });
    await app.emitAll([
      E.turnStarted(),
      E.toolRequest("s1", "replace", { file_path: MAIN }),
      { type: "tool_call_decided", call_id: "s1", decided_by: { kind: "review_mode" } },
      { ...applied("s1"), display: "Staged for review: Updated src/main.rs (+4 \u22123)", decided_by: { kind: "review_mode" } },
      // An ordinary applied edit next to it still offers its revert.
      E.toolRequest("a1", "replace", { file_path: MAIN }),
      applied("a1"),
      E.turnComplete(),
    ]);
    await waitForText(app.page, `${sel("tool-card")}[data-call-id="s1"] ${sel("decided-by")}`, /Staged: Review at end of turn/);
    assert.equal(await app.page.locator(`${sel("tool-card")}[data-call-id="s1"] ${sel("revert")}`).count(), 0);
    assert.equal(await app.page.locator(`${sel("tool-card")}[data-call-id="a1"] ${sel("revert")}`).count(), 1);
    await app.close();
  });

  test("Discard sends no decisions; a restored review says it is still pending", async () => {
    const app = await env.open();
    await app.emit(turnReview([{ ...FILES[0], changed_on_disk: true }], true));
    await app.tid("turn-review-restored").waitFor();
    await app.tid("review-changed-on-disk").waitFor();
    await app.tid("review-discard").click();
    const op = await app.waitForOp("apply_turn_review");
    assert.deepEqual(op.args, { sessionId: "s1", decisions: [] });
    await app.close();
  });
});
