// Subagents in the app (issue 19): the card nested under the parent's `invoke_agent` call, its
// live stream (rendered with the chat's own components), its confirmations (in the card and in
// the dock, labelled with the agent), Stop, how runs end, two runs at once, and a resumed
// conversation's recorded run.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as E from "./support/events.mjs";
import { screenshotPath, sel, setup, waitForText } from "./support/harness.mjs";

const WS = "/home/dev/project";
let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

/** The parent calls invoke_agent (`id`) and the run starts. */
const invoke = (id, agent = "generalist", prompt = "Find where the okapi is parsed", display_name = "Generalist") => [
  E.toolRequest(id, "invoke_agent", { agent_name: agent, prompt }),
  E.toolState(id, "executing"),
  E.subagentStarted(id, agent, prompt, { display_name }),
];
const sub = (id, event, agent = "generalist") => E.subagent(id, agent, event);
const writeDetails = (file = "notes.txt") => ({
  type: "edit",
  title: `Create ${file}`,
  file_name: file,
  file_path: `${WS}/${file}`,
  original: null,
  proposed: "hello\n",
  is_new_file: true,
  side_by_side: { hunks: [], added: 1, removed: 0, rows: [] },
});

async function started(events, options) {
  const app = await env.open(options);
  await app.sendPrompt("investigate");
  await app.emitAll([E.turnStarted(), ...events]);
  await app.tid("subagent-card").first().waitFor();
  return app;
}

const card = (app, id) => app.page.locator(`${sel("subagent-card")}[data-call-id="${id}"]`);

describe("live card", () => {
  test("header, task, stream with the chat's own cards, tokens, elapsed time, then completed", async () => {
    const app = await started([
      ...invoke("p1"),
      sub("p1", E.thought("Looking around", "grep first")),
      sub("p1", E.toolRequest("s1", "read_file", { absolute_path: `${WS}/src/okapi.rs` })),
      sub("p1", E.toolResponse("s1", "read_file", "success", "Read 12 lines")),
      sub("p1", E.usage(1000, 200)),
      sub("p1", E.delta("It is parsed in **okapi.rs**.")),
    ]);
    const c = card(app, "p1");
    // Under the parent's own tool card.
    assert.equal(await app.page.locator(`${sel("tool-card")}[data-call-id="p1"] ${sel("subagent-card")}`).count(), 1);
    assert.match(await c.innerText(), /Generalist/);
    await waitForText(app.page, sel("subagent-prompt"), "Find where the okapi is parsed");
    assert.equal(await c.getByTestId("subagent-status").getAttribute("data-status"), "running");
    await waitForText(app.page, sel("subagent-tokens"), "1,200 tokens");
    assert.ok(await c.getByTestId("subagent-stop").isVisible());
    // Collapsed until asked; then the nested items are the chat's components.
    assert.equal(await c.getByTestId("subagent-stream").count(), 0);
    await c.getByTestId("subagent-toggle").click();
    const stream = c.getByTestId("subagent-stream");
    await stream.waitFor();
    await stream.locator(`${sel("tool-card")}[data-call-id="s1"]`).waitFor();
    assert.equal(await stream.locator(`${sel("tool-card")}[data-call-id="s1"]`).getAttribute("data-state"), "success");
    await waitForText(app.page, `${sel("subagent-stream")} ${sel("message-model")}`, "It is parsed in okapi.rs.");
    assert.equal(await stream.locator("strong").innerText(), "okapi.rs", "markdown rendered");
    assert.ok((await stream.innerText()).includes("Looking around"));
    // The elapsed time moves on its own while it runs.
    const before = await c.getByTestId("subagent-elapsed").innerText();
    await app.until(
      ([id, was]) => document.querySelector(`[data-testid="subagent-card"][data-call-id="${id}"] [data-testid="subagent-elapsed"]`)?.textContent !== was,
      ["p1", before],
    );
    // Finished: the final usage wins; Stop is gone.
    await app.emitAll([
      E.subagentFinished("p1", "generalist", "completed", E.turnUsage(3000, 500, { duration_ms: 65_000 }), { result: "okapi.rs" }),
      E.toolResponse("p1", "invoke_agent", "success", "okapi.rs"),
    ]);
    await waitForText(app.page, sel("subagent-status"), "Completed");
    await waitForText(app.page, sel("subagent-tokens"), "3,500 tokens");
    await waitForText(app.page, sel("subagent-elapsed"), "1m 05s");
    assert.equal(await c.getByTestId("subagent-stop").count(), 0);
    await app.close();
  });
});

describe("nested confirmations", () => {
  test("open the card, join the dock labelled with the agent, and are approved from the card", async () => {
    const app = await started([
      ...invoke("p1"),
      sub("p1", E.toolRequest("w1", "write_file", { file_path: `${WS}/notes.txt`, content: "hello\n" })),
      sub("p1", E.confirmation("w1", "write_file", writeDetails())),
    ]);
    const c = card(app, "p1");
    // Opened by itself, with the confirmation inside.
    const inCard = c.getByTestId("confirmation");
    await inCard.waitFor();
    assert.equal(await c.getAttribute("data-awaiting"), "true");
    await waitForText(app.page, `${sel("subagent-card")} ${sel("confirmation-agent")}`, "asked by Generalist");
    // The dock has it too, with the same label; the inbox badge counts it.
    const dock = app.tid("confirmation-dock");
    await dock.getByTestId("confirmation").waitFor();
    assert.equal(await dock.getByTestId("confirmation-agent").innerText(), "asked by Generalist");
    assert.equal(await dock.getByTestId("confirmation").getAttribute("data-call-id"), "w1");
    await app.page.screenshot({ path: screenshotPath("subagent-confirmation-light.png") });

    await inCard.getByTestId("approve").click();
    const call = await app.waitForOp("confirm_tool");
    assert.deepEqual(call.args, { sessionId: "s1", call_id: "w1", outcome: "proceed_once", content: null });
    await app.emitAll([sub("p1", E.toolResponse("w1", "write_file", "success", "Created notes.txt"))]);
    await app.page.waitForSelector(sel("confirmation"), { state: "detached" });
    assert.equal(await c.getAttribute("data-awaiting"), "false");
    await app.close();
  });

  test("approved from the dock, the card's confirmation goes too", async () => {
    const app = await started([
      ...invoke("p1"),
      sub("p1", E.toolRequest("w2", "write_file", { file_path: `${WS}/b.txt` })),
      sub("p1", E.confirmation("w2", "write_file", writeDetails("b.txt"))),
    ]);
    await card(app, "p1").getByTestId("confirmation").waitFor();
    await app.tid("confirmation-dock").getByTestId("reject").click();
    const call = await app.waitForOp("confirm_tool");
    assert.equal(call.args.call_id, "w2");
    assert.equal(call.args.outcome, "cancel");
    // Left the queue once answered: neither place shows it.
    await app.page.waitForSelector(sel("confirmation"), { state: "detached" });
    await app.close();
  });

  test("queued behind another, the dock's waiting list names the agent too", async () => {
    const app = await started([
      ...invoke("p1"),
      sub("p1", E.toolRequest("w4", "write_file", { file_path: `${WS}/a.txt` })),
      sub("p1", E.confirmation("w4", "write_file", writeDetails("a.txt"))),
      sub("p1", E.toolRequest("w5", "write_file", { file_path: `${WS}/b.txt` })),
      sub("p1", E.confirmation("w5", "write_file", writeDetails("b.txt"))),
    ]);
    const queued = app.page.locator(`${sel("confirmation-queued")}[data-call-id="w5"]`);
    await queued.waitFor();
    assert.match((await queued.innerText()).replace(/\s+/g, " "), /Create b\.txt · Generalist/);
    await app.close();
  });

  test("dark theme at 800 px: the nested confirmation fits", async () => {
    const app = await started(
      [
        ...invoke("p1"),
        sub("p1", E.thought("Planning", "write the notes")),
        sub("p1", E.toolRequest("w3", "write_file", { file_path: `${WS}/notes.txt` })),
        sub("p1", E.confirmation("w3", "write_file", writeDetails())),
      ],
      { colorScheme: "dark", viewport: { width: 800, height: 900 } },
    );
    await card(app, "p1").getByTestId("confirmation").waitFor();
    const box = await card(app, "p1").boundingBox();
    assert.ok(box && box.x + box.width <= 800, "the card fits the window");
    await app.page.screenshot({ path: screenshotPath("subagent-confirmation-dark-800.png") });
    await app.close();
  });
});

describe("stop and endings", () => {
  test("Stop sends cancel_subagent; the run ends cancelled", async () => {
    const app = await started(invoke("p1"));
    const c = card(app, "p1");
    await c.getByTestId("subagent-stop").click();
    const op = await app.waitForOp("cancel_subagent");
    assert.deepEqual(op.args, { sessionId: "s1", parent_call_id: "p1" });
    await app.emit(E.subagentFinished("p1", "generalist", "cancelled", E.turnUsage(10, 2)));
    await waitForText(app.page, sel("subagent-status"), "Cancelled");
    assert.equal(await c.getByTestId("subagent-stop").count(), 0);
    await app.close();
  });

  for (const [status, label] of [
    ["turn_limit", "Turn limit reached"],
    ["timeout", "Timed out"],
    ["failed", "Failed"],
  ]) {
    test(`${status} shows "${label}" and the error`, async () => {
      const app = await started(invoke("p1"));
      await app.emit(E.subagentFinished("p1", "generalist", status, E.turnUsage(5, 5), { error: `ended: ${status}` }));
      await waitForText(app.page, sel("subagent-status"), label);
      assert.equal(await card(app, "p1").getAttribute("data-status"), status);
      await waitForText(app.page, sel("subagent-error"), `ended: ${status}`);
      await app.close();
    });
  }

  test("a run the turn ended without its end shows cancelled", async () => {
    const app = await started(invoke("p1"));
    await app.emit(E.turnComplete("cancelled"));
    await waitForText(app.page, sel("subagent-status"), "Cancelled");
    await app.close();
  });
});

test("two concurrent runs each in their own card", async () => {
  const app = await started([
    ...invoke("p1", "codebase_investigator", "Map the parser", "Codebase Investigator"),
    ...invoke("p2", "generalist", "Write the notes", "Generalist"),
    sub("p2", E.toolRequest("b1", "glob", { pattern: "*.md" }), "generalist"),
    sub("p1", E.toolRequest("a1", "grep_search", { pattern: "okapi" }), "codebase_investigator"),
    sub("p1", E.usage(100, 10), "codebase_investigator"),
    sub("p2", E.usage(400, 40), "generalist"),
  ]);
  await card(app, "p2").waitFor();
  assert.equal(await app.tid("subagent-card").count(), 2);
  await card(app, "p1").getByTestId("subagent-toggle").click();
  await card(app, "p2").getByTestId("subagent-toggle").click();
  await card(app, "p1").locator(`${sel("tool-card")}[data-call-id="a1"]`).waitFor();
  await card(app, "p2").locator(`${sel("tool-card")}[data-call-id="b1"]`).waitFor();
  assert.equal(await card(app, "p1").locator(`${sel("tool-card")}[data-call-id="b1"]`).count(), 0);
  assert.equal(await card(app, "p1").getByTestId("subagent-tokens").innerText(), "110 tokens");
  assert.equal(await card(app, "p2").getByTestId("subagent-tokens").innerText(), "440 tokens");
  await app.emit(E.subagentFinished("p2", "generalist", "completed", E.turnUsage(400, 40)));
  await app.until((id) => document.querySelector(`[data-testid="subagent-card"][data-call-id="${id}"]`)?.getAttribute("data-status") === "completed", "p2");
  assert.equal(await card(app, "p1").getAttribute("data-status"), "running");
  await app.close();
});

/** A resumed session whose last turn invoked a subagent (the history's records). */
function installResumed(transcript) {
  const msg = (seq, kind, text, tool_calls = []) => ({
    id: `r-m${seq}`,
    seq,
    role: kind === "model" ? "model" : "user",
    kind,
    created_ms: 1_000_000 + seq,
    in_context: true,
    parts: null,
    text,
    truncated: false,
    size: 10,
    tool_calls,
    thoughts: [],
    usage: null,
    model: null,
  });
  const messages = [
    msg(1, "prompt", "investigate the okapi"),
    msg(2, "model", "", [{ call_id: "p9", name: "invoke_agent", args: { agent_name: "generalist", prompt: transcript.prompt } }]),
    msg(3, "tool_result", "okapi.rs", [{ call_id: "p9", name: "invoke_agent", status: "success", display: "okapi.rs", duration_ms: 65000, subagent: transcript }]),
    msg(4, "model", "Done: see okapi.rs."),
  ];
  const summary = { id: "r1", workspace: "/home/dev/project", title: "okapi", created_ms: 1, updated_ms: 2, model: null, message_count: 4, tokens: { prompt: 0, output: 0, cached: 0, thoughts: 0, tool: 0, total: 0 }, source: "gemini-desktop", origin: null };
  window.__gdExtraIPC = (cmd) => {
    if (cmd === "history_last_session") return summary;
    if (cmd === "history_page") return { messages, has_before: false, has_after: false };
    return undefined;
  };
}

test("a resumed conversation shows the recorded run: collapsed, final status, expandable", async () => {
  const transcript = {
    agent_name: "generalist",
    display_name: "Generalist",
    model: "gemini-2.5-flash",
    prompt: "Find where the okapi is parsed",
    status: "completed",
    usage: E.turnUsage(2000, 345, { duration_ms: 12_000 }),
    result: "okapi.rs",
    events: [
      E.thought("Searching", ""),
      E.toolRequest("s7", "read_file", { absolute_path: `${WS}/src/okapi.rs` }),
      E.toolResponse("s7", "read_file", "success", "Read 12 lines"),
      E.delta("Found it in okapi.rs"),
    ],
  };
  const app = await env.open({ init: [installResumed, transcript] });
  const c = card(app, "p9");
  await c.waitFor();
  assert.equal(await c.getAttribute("data-status"), "completed");
  assert.equal(await c.getByTestId("subagent-tokens").innerText(), "2,345 tokens");
  assert.equal(await c.getByTestId("subagent-elapsed").innerText(), "12s");
  assert.equal(await c.getByTestId("subagent-stop").count(), 0);
  assert.equal(await c.getByTestId("subagent-stream").count(), 0, "collapsed");
  await c.getByTestId("subagent-toggle").click();
  await c.locator(`${sel("tool-card")}[data-call-id="s7"]`).waitFor();
  await waitForText(app.page, `${sel("subagent-stream")} ${sel("message-model")}`, "Found it in okapi.rs");
  await app.close();
});
