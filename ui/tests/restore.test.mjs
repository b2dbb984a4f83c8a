// Restoring a checkpoint from an edit's tool card: the button only for edits with a checkpoint,
// the confirmation (files, code only for now), the invoke it sends, and the result / error.
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
    assert.equal(app.callsOf("restore_checkpoint").length, 0);
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
    const call = await app.waitForCall("restore_checkpoint");
    assert.deepEqual(call.args, { sessionId: "s1", checkpointId: "cp-1", code: true, conversation: false });
    await app.page.waitForSelector(sel("restore-confirm"), { state: "detached" });
    // Until the answer arrives the card says it is restoring, and the button is disabled.
    await waitForText(app.page, sel("restore-result"), "Restoring…");
    assert.equal(await card(app, "e1").getByTestId("restore-checkpoint").isDisabled(), true);
    assert.equal(app.callsOf("restore_checkpoint").length, 1);
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
    assert.equal(app.callsOf("restore_checkpoint").length, 0);
    await app.close();
  });
});

describe("result", () => {
  test("checkpoint_restored shows how many files went back, and what happened to each", async () => {
    const app = await conversation([...edit("e1", "a.txt", "cp-1"), ...edit("e2", "new.txt", "cp-2", { tool: "write_file" })]);
    await card(app, "e1").getByTestId("restore-checkpoint").click();
    await app.tid("restore-code").click();
    await app.waitForCall("restore_checkpoint");
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
    await app.waitForCall("restore_checkpoint");
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
    await app.waitForCall("restore_checkpoint");
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
