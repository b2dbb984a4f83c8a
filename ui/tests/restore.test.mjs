// Restoring a checkpoint from an edit's tool card: the button only for edits with a checkpoint,
// the confirmation (files; code, conversation or both), the one invoke it sends, the result or
// error, the chat dropping a restored conversation; the cards of a resumed session getting their
// checkpoints back; and the list of the folder's checkpoints.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as E from "./support/events.mjs";
import { screenshotPath, sel, setup, waitForText } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const WS = "/home/dev/project";

/** A finished edit `id` (`replace` of `file`), with a checkpoint `cp` unless null. */
function edit(id, file, cp, { files = [file], scope = "full", tool = "replace" } = {}) {
  return [
    E.toolRequest(id, tool, { file_path: `${WS}/${file}`, old_string: "a", new_string: "b" }),
    E.toolState(id, "scheduled"),
    ...(cp ? [E.checkpointCreated(id, cp, files, scope)] : []),
    E.toolState(id, "executing"),
    E.toolResponse(id, tool, "success", `Edited ${file}`),
  ];
}

/** Opens the app and plays a turn with `events` (after `session_configured`). */
async function conversation(events, options) {
  const app = await env.open(options);
  await app.emit(E.sessionConfigured("s1"));
  await app.sendPrompt("edit things");
  await app.emitAll([E.turnStarted(), ...events, E.turnComplete()]);
  await app.tid("turn-footer").waitFor();
  return app;
}

const card = (app, callId) => app.page.locator(`${sel("tool-card")}[data-call-id="${callId}"]`);

describe("restore button", () => {
  test("appears only on the cards of edits that have a checkpoint", async () => {
    const app = await conversation([
      ...edit("e1", "src/a.txt", "cp-1"),
      ...edit("e2", "src/b.txt", null),
      E.toolRequest("r1", "read_file", { absolute_path: `${WS}/src/a.txt` }),
      E.toolResponse("r1", "read_file", "success", "Read 3 lines"),
      ...edit("e3", "notes.md", "cp-3", { tool: "write_file" }),
    ]);
    assert.equal(await app.tid("tool-card").count(), 4);
    assert.equal(await app.tid("restore-checkpoint").count(), 2);
    assert.equal(await card(app, "e1").getByTestId("restore-checkpoint").getAttribute("data-checkpoint-id"), "cp-1");
    assert.equal(await card(app, "e2").getByTestId("restore-checkpoint").count(), 0);
    assert.equal(await card(app, "r1").getByTestId("restore-checkpoint").count(), 0);
    assert.equal(await card(app, "e3").getByTestId("restore-checkpoint").getAttribute("data-checkpoint-id"), "cp-3");
    // Nothing was restored or even confirmed by just showing the cards.
    assert.equal(await app.tid("restore-confirm").count(), 0);
    assert.equal(app.opsOf("restore_checkpoint").length, 0);
    await app.close();
  });

  test("is not offered while the edit is still running", async () => {
    const app = await env.open();
    await app.emit(E.sessionConfigured("s1"));
    await app.sendPrompt("edit");
    await app.emitAll([
      E.turnStarted(),
      E.toolRequest("e1", "replace", { file_path: `${WS}/a.txt` }),
      E.checkpointCreated("e1", "cp-1", ["a.txt"]),
      E.toolState("e1", "executing"),
    ]);
    await app.until(() => document.querySelector('[data-call-id="e1"]')?.getAttribute("data-state") === "executing");
    assert.equal(await app.tid("restore-checkpoint").count(), 0);
    await app.emit(E.toolResponse("e1", "replace", "success", "Edited a.txt"));
    await card(app, "e1").getByTestId("restore-checkpoint").waitFor();
    await app.close();
  });
});

describe("confirmation", () => {
  test("lists the files; code only is enabled; Restore code invokes restore_checkpoint", async () => {
    const app = await conversation([
      ...edit("e1", "src/a.txt", "cp-1", { files: ["src/a.txt", "src/b.txt"] }),
      ...edit("e2", "notes.md", "cp-2", { tool: "write_file" }),
    ]);
    await card(app, "e1").getByTestId("restore-checkpoint").click();
    const confirm = app.tid("restore-confirm");
    await confirm.waitFor();
    assert.equal(await confirm.count(), 1, "only the clicked card's confirmation opens");
    assert.deepEqual(await app.tid("restore-file").allInnerTexts(), ["src/a.txt", "src/b.txt"]);
    assert.match(await confirm.innerText(), /files created later are removed/);
    // All three choices are offered (the conversation ones are tested in history.test.mjs).
    for (const id of ["restore-code", "restore-conversation", "restore-both"]) {
      assert.equal(await app.tid(id).isEnabled(), true, `${id} is enabled`);
    }
    // The code button has the focus: Enter would confirm.
    assert.ok(await app.tid("restore-code").evaluate((el) => el === document.activeElement));
    await card(app, "e1").screenshot({ path: screenshotPath("restore-confirm-light.png") });

    await app.tid("restore-code").click();
    const call = await app.waitForOp("restore_checkpoint");
    assert.deepEqual(call.args, { sessionId: "s1", checkpoint_id: "cp-1", code: true, conversation: false });
    await app.page.waitForSelector(sel("restore-confirm"), { state: "detached" });
    // Until the answer arrives the card says it is restoring, and the button is disabled.
    await waitForText(app.page, sel("restore-result"), "Restoring…");
    assert.equal(await card(app, "e1").getByTestId("restore-checkpoint").isDisabled(), true);
    assert.equal(app.opsOf("restore_checkpoint").length, 1);
    await app.close();
  });

  test("a partial checkpoint says only its files are put back; Cancel and Esc close it without restoring", async () => {
    const app = await conversation(edit("e1", "big/one.txt", "cp-p", { scope: "partial" }));
    const button = card(app, "e1").getByTestId("restore-checkpoint");
    await button.click();
    await app.tid("restore-confirm").waitFor();
    assert.match(await app.tid("restore-confirm").innerText(), /Only this file is put back/);
    await app.tid("restore-cancel").click();
    await app.page.waitForSelector(sel("restore-confirm"), { state: "detached" });
    await button.click();
    await app.tid("restore-confirm").waitFor();
    await app.page.keyboard.press("Escape");
    await app.page.waitForSelector(sel("restore-confirm"), { state: "detached" });
    assert.equal(app.opsOf("restore_checkpoint").length, 0);
    await app.close();
  });
});

describe("result", () => {
  test("checkpoint_restored shows how many files went back, and what happened to each", async () => {
    const app = await conversation([...edit("e1", "a.txt", "cp-1"), ...edit("e2", "new.txt", "cp-2", { tool: "write_file" })]);
    await card(app, "e1").getByTestId("restore-checkpoint").click();
    await app.tid("restore-code").click();
    await app.waitForOp("restore_checkpoint");
    await app.emit(E.checkpointRestored("cp-1", [["a.txt", "reverted"], ["new.txt", "removed"]]));
    const result = card(app, "e1").getByTestId("restore-result");
    await waitForText(app.page, `[data-call-id="e1"] ${sel("restore-result-text")}`, "Restored 2 files to before this edit");
    assert.equal(await result.getAttribute("data-phase"), "restored");
    assert.equal(await app.tid("restore-files").innerText(), "a.txt reverted · new.txt removed");
    // Only the restored card shows it; the button is usable again.
    assert.equal(await app.tid("restore-result").count(), 1);
    assert.equal(await card(app, "e1").getByTestId("restore-checkpoint").isEnabled(), true);
    await card(app, "e1").screenshot({ path: screenshotPath("restore-result-light.png") });
    await app.close();
  });

  test("a restore that changed nothing says so; an error of no restore becomes a chat notice", async () => {
    const app = await conversation(edit("e1", "a.txt", "cp-1"));
    await card(app, "e1").getByTestId("restore-checkpoint").click();
    await app.tid("restore-code").click();
    await app.waitForOp("restore_checkpoint");
    await app.emit(E.checkpointRestored("cp-1", []));
    await waitForText(app.page, sel("restore-result-text"), "Nothing to restore: the files are as they were before this edit");
    assert.equal(await app.tid("restore-files").count(), 0);
    // Answered already: an error without a checkpoint id (e.g. listing failed) is not this card's.
    await app.emit(E.checkpointError(null, "the checkpoint store is locked"));
    await waitForText(app.page, sel("notice"), "Checkpoint: the checkpoint store is locked");
    assert.equal(await app.tid("restore-result").getAttribute("data-phase"), "restored");
    await app.close();
  });

  test("checkpoint_error shows the error on the card", async () => {
    const app = await conversation(edit("e1", "a.txt", "cp-1"));
    await card(app, "e1").getByTestId("restore-checkpoint").click();
    await app.tid("restore-code").click();
    await app.waitForOp("restore_checkpoint");
    await app.emit(E.checkpointError("cp-1", "checkpoint cp-1 not found"));
    await waitForText(app.page, sel("restore-result-text"), "Could not restore: checkpoint cp-1 not found");
    assert.equal(await app.tid("restore-result").getAttribute("data-phase"), "failed");
    assert.equal(await app.tid("restore-result").getAttribute("role"), "alert");
    await app.close();
  });

  test("a rejected invoke shows its message on the card", async () => {
    const app = await conversation(edit("e1", "a.txt", "cp-1"), {
      config: { restoreError: { kind: "no_session", message: "The session has ended." } },
    });
    await card(app, "e1").getByTestId("restore-checkpoint").click();
    await app.tid("restore-code").click();
    await waitForText(app.page, sel("restore-result-text"), "Could not restore: The session has ended.");
    assert.equal(await app.tid("restore-result").getAttribute("data-phase"), "failed");
    await app.close();
  });

  test("dark theme: confirmation and result", async () => {
    const app = await conversation(edit("e1", "src/lib/a.ts", "cp-1", { files: ["src/lib/a.ts", "src/lib/b.ts"] }), {
      colorScheme: "dark",
    });
    await card(app, "e1").getByTestId("restore-checkpoint").click();
    await app.tid("restore-confirm").waitFor();
    await card(app, "e1").screenshot({ path: screenshotPath("restore-confirm-dark.png") });
    await app.tid("restore-code").click();
    await app.emit(E.checkpointRestored("cp-1", [["src/lib/a.ts", "reverted"]]));
    await waitForText(app.page, sel("restore-result-text"), "Restored 1 file to before this edit");
    await card(app, "e1").screenshot({ path: screenshotPath("restore-result-dark.png") });
    await app.close();
  });
});

/** The app after a first turn (prompt p1) and a turn with an edit (prompt p2, call e1, cp-1). */
async function twoTurns() {
  const app = await env.open();
  await app.emit(E.sessionConfigured("s1"));
  await app.sendPrompt("first question");
  await app.emitAll([
    { type: "message_recorded", message_id: "p1", seq: 1, kind: "prompt", call_ids: [] },
    E.turnStarted("t1"),
    E.delta("first answer"),
    E.turnComplete("completed", "t1"),
  ]);
  await app.sendPrompt("edit things");
  await app.emitAll([
    { type: "message_recorded", message_id: "p2", seq: 3, kind: "prompt", call_ids: [] },
    E.turnStarted("t2"),
    ...edit("e1", "a.txt", "cp-1"),
    E.turnComplete("completed", "t2"),
  ]);
  await card(app, "e1").getByTestId("restore-checkpoint").waitFor();
  return app;
}

describe("code and conversation", () => {
  test("Restore code and conversation is one restore_checkpoint; the chat drops the edit's turn", async () => {
    const app = await twoTurns();
    assert.equal(await app.tid("message-user").count(), 2);
    await card(app, "e1").getByTestId("restore-checkpoint").click();
    await app.tid("restore-both").click();
    const call = await app.waitForOp("restore_checkpoint");
    assert.deepEqual(call.args, { sessionId: "s1", checkpoint_id: "cp-1", code: true, conversation: true });
    await waitForText(app.page, sel("restore-result"), "Restoring…");
    // The session restores the code, then rewinds to the prompt of the edit's turn.
    await app.emit(E.checkpointRestored("cp-1", [["a.txt", "reverted"]], { conversation: { message_id: "p2", removed: 3 } }));
    await app.until(() => document.querySelectorAll('[data-testid="message-user"]').length === 1);
    await waitForText(app.page, sel("message-user"), "first question");
    await waitForText(app.page, sel("notice"), "Restored 1 file and the conversation to before this edit");
    assert.equal(await card(app, "e1").count(), 0, "the edit's card went with its turn");
    assert.equal(app.opsOf("restore_checkpoint").length, 1);
    await app.close();
  });

  test("conversation only: code false, conversation true", async () => {
    const app = await twoTurns();
    await card(app, "e1").getByTestId("restore-checkpoint").click();
    await app.tid("restore-conversation").click();
    const call = await app.waitForOp("restore_checkpoint");
    assert.deepEqual(call.args, { sessionId: "s1", checkpoint_id: "cp-1", code: false, conversation: true });
    await app.emit(E.checkpointRestored("cp-1", [], { undo: null, conversation: { message_id: "p2", removed: 3 } }));
    await waitForText(app.page, sel("notice"), "Restored the conversation to before this edit");
    assert.equal(await app.tid("message-user").count(), 1);
    // The undone prompt is back in the composer, to be edited and sent again.
    assert.equal(await app.tid("prompt-input").inputValue(), "edit things");
    await app.close();
  });

  test("a rewind does not overwrite what the user is typing", async () => {
    const app = await twoTurns();
    await app.tid("prompt-input").fill("something new");
    await card(app, "e1").getByTestId("restore-checkpoint").click();
    await app.tid("restore-conversation").click();
    await app.waitForOp("restore_checkpoint");
    await app.emit(E.checkpointRestored("cp-1", [], { undo: null, conversation: { message_id: "p2", removed: 3 } }));
    await waitForText(app.page, sel("notice"), "Restored the conversation to before this edit");
    assert.equal(await app.tid("prompt-input").inputValue(), "something new");
    // Clearing the box afterwards does not bring the rewound prompt back either.
    await app.tid("prompt-input").fill("");
    await app.page.evaluate(() => new Promise((done) => requestAnimationFrame(() => done(null))));
    assert.equal(await app.tid("prompt-input").inputValue(), "");
    await app.close();
  });

  test("a refused conversation restore shows the session's reason on the card and keeps the chat", async () => {
    const app = await twoTurns();
    await card(app, "e1").getByTestId("restore-checkpoint").click();
    await app.tid("restore-both").click();
    await app.waitForOp("restore_checkpoint");
    await app.emit(E.checkpointError("cp-1", "The conversation of checkpoint cp-1 is no longer in the history (it was rewound or deleted); restore the code only."));
    await waitForText(app.page, sel("restore-result-text"), /^Could not restore: The conversation of checkpoint cp-1 is no longer in the history/);
    assert.equal(await app.tid("message-user").count(), 2);
    await app.close();
  });
});

describe("a resumed session", () => {
  test("its cards rebuilt from the stored transcript get their checkpoints from list_checkpoints", async () => {
    const transcript = {
      messages: [
        { id: "p1", seq: 1, role: "user", kind: "prompt", created_ms: 1, in_context: true, parts: null, text: "change a", truncated: false, size: 1, tool_calls: [], thoughts: [], usage: null, model: null },
        {
          id: "m2", seq: 2, role: "model", kind: "model", created_ms: 2, in_context: true, parts: null, text: "", truncated: false, size: 1,
          tool_calls: [{ call_id: "old-1", name: "replace", args: { file_path: `${WS}/a.txt` } }], thoughts: [], usage: null, model: null,
        },
        {
          id: "r3", seq: 3, role: "user", kind: "tool_result", created_ms: 3, in_context: true, parts: null, text: "", truncated: false, size: 1,
          tool_calls: [{ call_id: "old-1", name: "replace", status: "success", summary: "Edited a.txt" }], thoughts: [], usage: null, model: null,
        },
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
    assert.equal(app.callsOf("start_session")[0].args.resume, "stored-1");
    await card(app, "old-1").waitFor();
    assert.equal(await card(app, "old-1").getByTestId("restore-checkpoint").count(), 0, "not known yet");
    await app.waitForOp("list_checkpoints");
    await app.emit(
      E.checkpoints([
        E.checkpointInfo("cp-old", { call_id: "old-1", session_id: "stored-1", files: ["a.txt"], message_id: "p1" }),
        E.checkpointInfo("cp-x", { call_id: "other-call", session_id: "another", files: ["b.txt"] }),
      ]),
    );
    const button = card(app, "old-1").getByTestId("restore-checkpoint");
    await button.waitFor();
    assert.equal(await button.getAttribute("data-checkpoint-id"), "cp-old");
    await button.click();
    assert.equal(await app.tid("restore-both").isEnabled(), true, "its own session: the conversation too");
    await app.tid("restore-both").click();
    const call = await app.waitForOp("restore_checkpoint");
    assert.deepEqual(call.args, { sessionId: "stored-1", checkpoint_id: "cp-old", code: true, conversation: true });
    await app.emit(E.checkpointRestored("cp-old", [["a.txt", "reverted"]], { conversation: { message_id: "p1", removed: 3 } }));
    await waitForText(app.page, sel("notice"), "Restored 1 file and the conversation to before this edit");
    assert.equal(await app.tid("tool-card").count(), 0);
    assert.equal(await app.tid("message-user").count(), 0);
    await app.close();
  });
});

describe("checkpoint list", () => {
  test("lists this session's checkpoints and other sessions'; restores from a row", async () => {
    const app = await twoTurns();
    await app.waitForOp("list_checkpoints");
    assert.equal(await app.tid("checkpoints-open").getAttribute("data-count"), "1", "the new edit's checkpoint counts at once");
    await app.emit(
      E.checkpoints([
        E.checkpointInfo("cp-undo", { session_id: "s1", label: "before restoring cp-0", files: [], created_at: "2026-05-01T10:02:00Z" }),
        E.checkpointInfo("cp-1", { call_id: "e1", session_id: "s1", files: ["a.txt"], created_at: "2026-05-01T10:01:00Z" }),
        E.checkpointInfo("cp-other", { call_id: "x9", session_id: "s-old", files: ["notes.md"], tool: "write_file", scope: "partial" }),
      ]),
    );
    await app.until(() => document.querySelector('[data-testid="checkpoints-open"]')?.getAttribute("data-count") === "3");
    await app.tid("checkpoints-open").click();
    await app.tid("checkpoints-panel").waitFor();
    const rows = app.tid("checkpoint-row");
    assert.equal(await rows.count(), 3);
    assert.deepEqual(
      await rows.evaluateAll((els) => els.map((e) => [e.dataset.checkpointId, e.dataset.kind, e.dataset.own])),
      [
        ["cp-undo", "snapshot", "true"],
        ["cp-1", "edit", "true"],
        ["cp-other", "edit", "false"],
      ],
    );
    assert.deepEqual(await app.tid("checkpoint-what").allInnerTexts(), ["Before a restore (undoes it)", "replace a.txt", "write_file notes.md"]);
    await app.tid("checkpoints-others").waitFor();
    await app.page.screenshot({ path: screenshotPath("checkpoints-panel-light.png") });

    // Another session's edit: its code only from here.
    const other = app.page.locator(`${sel("checkpoint-row")}[data-checkpoint-id="cp-other"]`);
    await other.getByTestId("checkpoints-restore-checkpoint").click();
    assert.equal(await other.getByTestId("checkpoints-restore-code").isEnabled(), true);
    assert.equal(await other.getByTestId("checkpoints-restore-both").isDisabled(), true);
    assert.match((await other.getByTestId("checkpoints-restore-both").getAttribute("title")) ?? "", /another session/);
    await other.getByTestId("checkpoints-restore-cancel").click();
    // A snapshot before a restore has no conversation either.
    const undo = app.page.locator(`${sel("checkpoint-row")}[data-checkpoint-id="cp-undo"]`);
    await undo.getByTestId("checkpoints-restore-checkpoint").click();
    assert.equal(await undo.getByTestId("checkpoints-restore-conversation").isDisabled(), true);
    await undo.getByTestId("checkpoints-restore-code").click();
    const call = await app.waitForOp("restore_checkpoint");
    assert.deepEqual(call.args, { sessionId: "s1", checkpoint_id: "cp-undo", code: true, conversation: false });
    const from = app.calls.length;
    await app.emit(E.checkpointRestored("cp-undo", [["a.txt", "reverted"]], { undo: "cp-undo-2" }));
    await waitForText(app.page, `${sel("checkpoint-row")}[data-checkpoint-id="cp-undo"] ${sel("checkpoints-restore-result-text")}`, /^Restored 1 file/);
    // The list is asked for again (the restore made a new snapshot).
    await app.waitForOp("list_checkpoints", () => true, { from });
    await app.tid("checkpoints-close").click();
    await app.page.waitForSelector(sel("checkpoints-panel"), { state: "detached" });
    // The edit's row and its card share one checkpoint: restoring from the card shows in both.
    await card(app, "e1").getByTestId("restore-checkpoint").click();
    await app.tid("restore-code").click();
    await app.waitForOp("restore_checkpoint", (a) => a.checkpoint_id === "cp-1");
    await app.emit(E.checkpointRestored("cp-1", [["a.txt", "reverted"]]));
    await waitForText(app.page, `[data-call-id="e1"] ${sel("restore-result-text")}`, "Restored 1 file to before this edit");
    await app.tid("checkpoints-open").click();
    await waitForText(app.page, `${sel("checkpoint-row")}[data-checkpoint-id="cp-1"] ${sel("checkpoints-restore-result-text")}`, "Restored 1 file to before this edit");
    await app.close();
  });

  test("says so when there are none", async () => {
    const app = await env.open();
    await app.emit(E.sessionConfigured("s1"));
    await app.tid("checkpoints-open").click();
    await waitForText(app.page, sel("checkpoints-empty"), /^No checkpoints yet\./);
    // Esc closes it.
    await app.page.keyboard.press("Escape");
    await app.page.waitForSelector(sel("checkpoints-panel"), { state: "detached" });
    await app.close();
  });
});
