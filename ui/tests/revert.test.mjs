// Reverting an applied edit from its card (issue 17, item 3): "Revert this edit" and, with the
// diff open, "Revert this hunk" per hunk, each behind a confirmation; the op sent; "Reverted"
// after core's answer; the three-way view when the file changed since (its result is edited,
// written only once the conflict markers are gone); a failure is shown as core words it.
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

const card = (page, id) => page.locator(`${sel("tool-card")}[data-call-id="${id}"]`);

/** A finished edit `call_id` with `details` as its applied diff. */
async function appliedEdit(app, call_id, details) {
  await app.sendPrompt("edit it");
  await app.emitAll([
    E.turnStarted(),
    E.toolRequest(call_id, "replace", { file_path: details.file_path, old_string: "a", new_string: "b" }),
    { ...E.toolResponse(call_id, "replace", "success", `Edited ${details.file_name}`, null, 80), declined: false, diff: details },
    E.turnComplete(),
  ]);
  await app.page.waitForSelector(`${sel("tool-card")}[data-call-id="${call_id}"][data-state="success"]`);
  return card(app.page, call_id);
}

const reverted = (call_id, file_path, fields = {}) => ({ type: "edit_reverted", call_id, file_path, deleted: false, resolved: false, ...fields });

test("Revert this edit asks first, sends the op and the card reads Reverted", async () => {
  const app = await env.open();
  const details = E.editDetails(diffs.two_hunks);
  const c = await appliedEdit(app, "e1", details);

  // A confirmation step; Cancel (or Escape) sends nothing.
  await c.getByTestId("revert-edit").click();
  assert.match(await c.getByTestId("revert-confirm").innerText(), /Revert this edit of main\.rs\?/);
  await c.getByTestId("revert-confirm-no").click();
  assert.equal(await c.getByTestId("revert-confirm").count(), 0);
  await c.getByTestId("revert-edit").click();
  await c.getByTestId("revert-confirm").press("Escape");
  assert.equal(await c.getByTestId("revert-confirm").count(), 0);
  assert.equal(app.opsOf("revert_edit").length, 0, "nothing sent before the confirmation");

  await c.getByTestId("revert-edit").click();
  await c.getByTestId("revert-confirm-yes").click();
  const op = await app.waitForOp("revert_edit");
  assert.equal(op.args.call_id, "e1");
  assert.equal(op.args.hunks, undefined, "the whole edit");
  assert.equal(op.args.resolved, undefined);
  assert.equal(await c.getByTestId("revert-edit").isDisabled(), true, "one revert at a time");

  await app.emit(reverted("e1", details.file_path));
  const status = c.getByTestId("revert-status");
  await status.waitFor();
  assert.match(await status.innerText(), /^Reverted/);
  assert.match(await status.innerText(), /back to what it was before this edit/);
  assert.equal(await c.getByTestId("revert-edit").count(), 0, "nothing left to revert");
  assert.equal(await c.getAttribute("data-state"), "success", "the call itself still succeeded");
  await c.screenshot({ path: screenshotPath("revert-done.png") });
  await app.close();
});

/** The accessible name and description Chromium computes for the element matching `selector`. */
async function accessible(page, selector) {
  const cdp = await page.context().newCDPSession(page);
  const { root } = await cdp.send("DOM.getDocument");
  const { nodeId } = await cdp.send("DOM.querySelector", { nodeId: root.nodeId, selector });
  const { nodes } = await cdp.send("Accessibility.getPartialAXTree", { nodeId, fetchRelatives: false });
  await cdp.detach();
  return { name: nodes[0]?.name?.value, description: nodes[0]?.description?.value };
}

// Issue 34 (item 9a): "Restore" and "Revert this edit" sat side by side on every edit card with
// nothing saying how they differ. The labels and their descriptions (tooltips) say it: the
// checkpoint goes back to before the edit, undoing everything since, and can take the
// conversation back too; the revert undoes this edit alone and keeps later changes.
test("an edit card's Restore checkpoint and Revert this edit only say how they differ", async () => {
  const app = await env.open();
  const details = E.editDetails(diffs.two_hunks);
  await app.sendPrompt("edit it");
  await app.emitAll([
    E.turnStarted(),
    E.toolRequest("e9", "replace", { file_path: details.file_path, old_string: "a", new_string: "b" }),
    E.checkpointCreated("e9", "cp-9", [details.file_path]),
    { ...E.toolResponse("e9", "replace", "success", `Edited ${details.file_name}`, null, 80), declined: false, diff: details },
    E.turnComplete(),
  ]);
  const c = card(app.page, "e9");
  await c.getByTestId("restore-checkpoint").waitFor();
  const restore = await accessible(app.page, `${sel("tool-card")}[data-call-id="e9"] ${sel("restore-checkpoint")}`);
  assert.equal(restore.name, "Restore checkpoint");
  assert.equal(
    restore.description,
    "Go back to the checkpoint taken before this edit: every file as it was then (this edit and every change after it undone), and if you choose, the conversation from this turn on. You choose and confirm next.",
  );
  const revert = await accessible(app.page, `${sel("tool-card")}[data-call-id="e9"] ${sel("revert-edit")}`);
  assert.equal(revert.name, "Revert this edit only");
  assert.equal(
    revert.description,
    "Undo just this edit's change to main.rs, keeping every later change; if the file changed since, you merge in a three-way view. The conversation stays; the model is told with your next message.",
  );
  assert.equal((await c.getByTestId("revert-edit").innerText()).trim(), "Revert this edit only");
  assert.equal((await c.getByTestId("restore-checkpoint").innerText()).trim(), "Restore checkpoint");
  await c.screenshot({ path: screenshotPath("edit-card-restore-revert.png") });
  await app.close();
});

test("each hunk of the open diff reverts on its own; the card then shows what is left", async () => {
  const app = await env.open();
  const details = E.editDetails(diffs.two_hunks);
  const c = await appliedEdit(app, "e2", details);
  assert.equal(await c.getByTestId("revert-hunk").count(), 0, "hunks are listed with the diff");
  await c.getByTestId("tool-view-diff").click();
  const rows = c.getByTestId("revert-hunk-row");
  assert.equal(await rows.count(), details.side_by_side.hunks.length);
  assert.match(await rows.nth(1).innerText(), /^Hunk 2/);
  await c.screenshot({ path: screenshotPath("revert-hunks.png") });

  await c.locator(`${sel("revert-hunk")}[data-hunk="1"]`).click();
  assert.match(await c.getByTestId("revert-confirm").innerText(), /Revert hunk 2 of this edit\?/);
  await c.getByTestId("revert-confirm-yes").click();
  const op = await app.waitForOp("revert_edit");
  assert.deepEqual(op.args.hunks, [1]);

  // What is still applied: core's remaining diff (here a one-hunk change).
  const remaining = { ...E.editDetails(diffs.long_line), file_path: details.file_path, file_name: details.file_name };
  await app.emit(reverted("e2", details.file_path, { hunks: [1], remaining }));
  await app.until(() => document.querySelectorAll('[data-testid="revert-hunk-row"]').length === 0);
  assert.match(await c.getByTestId("revert-message").innerText(), /Reverted 1 hunk; the rest stays applied\./);
  assert.equal(await c.getByTestId("revert-status").count(), 0, "not wholly reverted");
  assert.equal(await c.getByTestId("revert-edit").isEnabled(), true, "the rest can be reverted too");
  await app.close();
});

test("a file changed since opens the three-way view; its result is written once resolved", async () => {
  const app = await env.open({ colorScheme: "dark" });
  const details = E.editDetails(diffs.two_hunks);
  const c = await appliedEdit(app, "e3", details);
  await c.getByTestId("revert-edit").click();
  await c.getByTestId("revert-confirm-yes").click();
  await app.waitForOp("revert_edit");
  const merged = "a\n<<<<<<< on disk\nmine\n=======\nold\n>>>>>>> reverted\nc\n";
  await app.emit({
    type: "revert_conflict",
    call_id: "e3",
    file_path: details.file_path,
    base: "a\nedit\nc\n",
    current: "a\nmine\nc\n",
    reverted: "a\nold\nc\n",
    merged,
    conflicts: 1,
  });
  const view = c.getByTestId("three-way");
  await view.waitFor();
  const paneLines = (id) => view.getByTestId(id).locator(".line .text").allInnerTexts();
  assert.deepEqual(await paneLines("three-way-base"), ["a", "edit", "c"]);
  assert.deepEqual(await paneLines("three-way-current"), ["a", "mine", "c"]);
  assert.deepEqual(await paneLines("three-way-reverted"), ["a", "old", "c"]);
  assert.match(await view.getByTestId("three-way-current").innerText(), /^On disk now/);
  // The line the disk changed is marked.
  assert.equal(await view.getByTestId("three-way-current").locator(".line.new .text").innerText(), "mine");
  const result = view.getByTestId("three-way-result");
  assert.equal(await result.inputValue(), merged);
  assert.match(await view.innerText(), /1 region changed on both sides/);
  const apply = view.getByTestId("three-way-apply");
  assert.equal(await apply.isDisabled(), true, "conflict markers must go first");
  await c.screenshot({ path: screenshotPath("revert-three-way-dark.png") });

  await result.fill("a\nmine, old\nc\n");
  assert.equal(await apply.isEnabled(), true);
  await apply.click();
  const op = await app.waitForOp("revert_edit", (a) => a.resolved !== undefined);
  assert.equal(op.args.call_id, "e3");
  assert.equal(op.args.resolved, "a\nmine, old\nc\n");

  // The disk moved again: core refuses, the view stays with the reason.
  await app.emit({ type: "revert_failed", call_id: "e3", message: "main.rs changed again while the revert was being resolved; nothing was written." });
  const message = c.getByTestId("revert-message");
  await message.waitFor();
  assert.match(await message.innerText(), /changed again/);
  assert.equal(await message.getAttribute("role"), "alert");
  assert.equal(await view.count(), 1, "the view stays open");

  await apply.click();
  await app.emit(reverted("e3", details.file_path, { resolved: true }));
  await c.getByTestId("revert-status").waitFor();
  assert.match(await c.getByTestId("revert-status").innerText(), /Your merge was written/);
  assert.equal(await view.count(), 0);
  await app.close();
});

test("a created file's revert says it deletes the file; a refusal is shown as core says it", async () => {
  const app = await env.open();
  const details = E.editDetails(diffs.new_file);
  const c = await appliedEdit(app, "e4", details);
  await c.getByTestId("revert-edit").click();
  assert.match(await c.getByTestId("revert-confirm").innerText(), /was created by it and will be deleted/);
  await c.getByTestId("revert-confirm-yes").click();
  await app.waitForOp("revert_edit");
  await app.emit({ type: "revert_failed", call_id: "e4", message: `${details.file_name} no longer exists, so there is nothing to revert; nothing was written.` });
  const message = c.getByTestId("revert-message");
  await message.waitFor();
  assert.match(await message.innerText(), /no longer exists/);
  assert.equal(await c.getByTestId("revert-edit").isEnabled(), true, "it can be tried again");
  await c.getByTestId("revert-edit").click();
  await c.getByTestId("revert-confirm-yes").click();
  await app.emit(reverted("e4", details.file_path, { deleted: true }));
  await c.getByTestId("revert-status").waitFor();
  assert.match(await c.getByTestId("revert-status").innerText(), /file this edit created was deleted/);
  await app.close();
});

test("a card of a resumed conversation reverts its stored edit in that session", async () => {
  const details = E.editDetails(diffs.two_hunks, "/home/dev/project/src/main.rs");
  const message = (fields) => ({ in_context: true, parts: null, text: "", truncated: false, size: 1, tool_calls: [], thoughts: [], usage: null, model: null, ...fields });
  const transcript = {
    messages: [
      message({ id: "p1", seq: 1, role: "user", kind: "prompt", created_ms: 1, text: "change main.rs" }),
      message({ id: "m2", seq: 2, role: "model", kind: "model", created_ms: 2, tool_calls: [{ call_id: "old-1", name: "replace", args: { file_path: details.file_path } }] }),
      message({
        id: "r3",
        seq: 3,
        role: "user",
        kind: "tool_result",
        created_ms: 3,
        tool_calls: [{ call_id: "old-1", name: "replace", status: "success", summary: "Edited main.rs", display: "Edited main.rs", diff: details }],
      }),
    ],
    has_before: false,
    has_after: false,
  };
  const app = await env.open({
    init: [
      (page) => {
        window.__gdExtraIPC = (cmd) => {
          if (cmd === "history_last_session") return { id: "stored-1", message_count: 3 };
          if (cmd === "history_page") return page;
          return undefined;
        };
      },
      transcript,
    ],
  });
  const c = card(app.page, "old-1");
  await c.getByTestId("revert-edit").waitFor();
  await c.getByTestId("tool-view-diff").click();
  assert.equal(await c.getByTestId("revert-hunk").count(), details.side_by_side.hunks.length);
  await c.getByTestId("revert-edit").click();
  await c.getByTestId("revert-confirm-yes").click();
  const op = await app.waitForOp("revert_edit");
  assert.deepEqual(op.args, { sessionId: "stored-1", call_id: "old-1" });
  await app.emit(reverted("old-1", details.file_path));
  await c.getByTestId("revert-status").waitFor();
  await app.close();
});
