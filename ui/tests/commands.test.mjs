// The built-in slash commands in the composer and what they show: /clear (a fresh conversation;
// later edits are its own), /compress (pending, then tokens before/after or why not), /stats
// (session, model and tool views), /mcp (the MCP panel, server actions), /restore (the checkpoint
// list; /restore <id> restores one); MCP prompts offered with their arguments, `/prompt help`, and
// an unknown `/word` hinted and sent as a message.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import * as E from "./support/events.mjs";
import { screenshotPath, sel, waitForText } from "./support/harness.mjs";
import { setup } from "./support/harness.mjs";

let env;
before(async () => {
  env = await setup();
});
after(async () => {
  await env?.close();
});

const info = (name, description, source = "built_in", extra = {}) => ({
  name,
  description,
  source,
  alt_names: [],
  server: null,
  arguments: [],
  ...extra,
});

const commands = {
  type: "commands",
  commands: [
    info("clear", "Clear the screen and start a new conversation", "built_in", { alt_names: ["new"] }),
    info("compress", "Replace the conversation so far with a summary", "built_in", { alt_names: ["summarize", "compact"] }),
    info("memory", "Show, refresh or add to the memory"),
    info("mcp", "MCP servers, their state and tools"),
    info("stats", "Session statistics", "built_in", { alt_names: ["usage"] }),
    info("restore", "List the checkpoints or restore one"),
    info("greet", "Greet someone.", "mcp_prompt", {
      server: "fixture",
      arguments: [{ name: "name", description: "Who to greet", required: true }],
    }),
    info("review", "Review a file.", "mcp_prompt", {
      server: "fixture",
      arguments: [
        { name: "file", description: null, required: true },
        { name: "focus", description: "What to look at", required: true },
        { name: "tone", description: null, required: false },
      ],
    }),
    info("git:commit", "Writes a commit message", "user"),
  ],
};

/** The app with a session and its command list. */
async function open(options = {}) {
  const app = await env.open(options);
  await app.waitForOp("list_commands");
  await app.emit(E.sessionConfigured("s1"));
  await app.emit(commands);
  return app;
}

/** Types `text` and presses Enter. */
async function enter(app, text) {
  await app.tid("prompt-input").fill(text);
  await app.tid("prompt-input").press("Enter");
}

const stats = (overrides = {}) => ({
  session_id: "conv-1",
  started_ms: Date.now() - 75_000,
  duration_ms: 75_300,
  turns: 3,
  api_time_ms: 4_200,
  tool_time_ms: 800,
  models: [
    {
      model: "gemini-2.5-pro",
      requests: 5,
      errors: 1,
      latency_ms: 4_200,
      prompt_tokens: 12_500,
      cached_tokens: 2_500,
      output_tokens: 640,
      thoughts_tokens: 90,
      tool_tokens: 0,
      total_tokens: 13_230,
    },
  ],
  tools: {
    calls: 4,
    success: 3,
    failed: 1,
    duration_ms: 800,
    decisions: { accept: 1, reject: 1, modify: 0, auto_accept: 2 },
    by_name: [
      { name: "read_file", calls: 3, success: 3, failed: 0, duration_ms: 300 },
      { name: "replace", calls: 1, success: 0, failed: 1, duration_ms: 500 },
    ],
  },
  ...overrides,
});

describe("built-in commands", () => {
  test("/clear asks the session for a new conversation and empties the chat when it answers", async () => {
    const app = await open();
    await app.sendPrompt("remember tulip");
    await app.emitAll([E.turnStarted(), E.delta("Noted."), E.turnComplete()]);
    await waitForText(app.page, sel("message-model"), "Noted.");

    await enter(app, "/clear");
    await app.waitForOp("clear", (a) => a.sessionId === "s1");
    assert.equal(app.opsOf("user_turn").length, 1, "/clear is not sent to the model");
    assert.equal(await app.tid("prompt-input").inputValue(), "");
    await app.emit({ type: "conversation_cleared", session_id: "conv-2" });
    await app.page.waitForSelector(`${sel("message-list")}[data-count="0"]`, { state: "attached" });
    // The same session goes on.
    await app.sendPrompt("what was the word?");
    await app.waitForOp("user_turn", (a) => a.sessionId === "s1" && a.text === "what was the word?");
    await app.emitAll([E.turnStarted(), E.turnComplete()]);
    // `/new` is Gemini CLI's other name for it.
    const from = app.calls.length;
    await enter(app, "/new");
    await app.waitForOp("clear", () => true, { from });
    await app.close();
  });

  test("/compress shows a pending line, then the tokens before and after, or why nothing changed", async () => {
    const app = await open();
    await enter(app, "/compress");
    await app.waitForOp("compress", (a) => a.sessionId === "s1");
    await app.page.waitForSelector(`${sel("compression")}[data-state="pending"]`);
    assert.equal(await app.tid("compression-text").innerText(), "Compressing chat history…");
    // Busy meanwhile: Stop is offered and interrupts it.
    await app.tid("cancel").waitFor();
    await app.tid("cancel").click();
    await app.waitForOp("interrupt");
    await app.emit({ type: "chat_compressed", original_tokens: 12000, new_tokens: 800 });
    await app.page.waitForSelector(`${sel("compression")}[data-state="compressed"]`);
    assert.equal(await app.tid("compression-text").innerText(), "Chat history compressed from 12,000 to 800 tokens.");
    await app.tid("cancel").waitFor({ state: "hidden" });

    let from = app.calls.length;
    await enter(app, "/compact");
    await app.waitForOp("compress", () => true, { from });
    await app.emit({ type: "compression_skipped", reason: "nothing_to_compress", original_tokens: 0, message: "Nothing to compress." });
    await waitForText(app.page, sel("compression-text"), "Nothing to compress.");
    assert.equal(await app.tid("compression").last().getAttribute("data-state"), "skipped");
    await app.tid("message-list").screenshot({ path: screenshotPath("compress-light.png") });
    await app.close();
  });

  test("/stats shows the session, model and tool views in the chat", async () => {
    const app = await open();
    await enter(app, "/stats");
    await app.waitForOp("stats", (a) => a.sessionId === "s1");
    await app.emit({ type: "session_stats", stats: stats() });
    const card = app.page.locator(`${sel("stats-card")}[data-view="session"]`);
    await card.waitFor();
    assert.equal(await card.getByTestId("stats-turns").innerText(), "3");
    assert.equal(await card.getByTestId("stats-duration").innerText(), "1m 15s");
    assert.match(await card.getByTestId("stats-tool-calls").innerText(), /^4 ✓ 3 ✗ 1$/);
    assert.equal(await card.getByTestId("stats-success-rate").innerText(), "75.0%");
    assert.match(await card.getByTestId("stats-agreement").innerText(), /^50\.0%/);
    const row = card.locator(`${sel("stats-model-row")}[data-model="gemini-2.5-pro"]`);
    assert.equal(await row.getByTestId("stats-requests").innerText(), "5");
    assert.equal(await row.getByTestId("stats-input").innerText(), "10,000");
    assert.equal(await row.getByTestId("stats-cached").innerText(), "2,500");
    assert.equal(await row.getByTestId("stats-output").innerText(), "640");
    assert.equal(await row.getByTestId("stats-thoughts").innerText(), "90");
    await card.screenshot({ path: screenshotPath("stats-light.png") });

    let from = app.calls.length;
    await enter(app, "/stats tools");
    await app.waitForOp("stats", () => true, { from });
    await app.emit({ type: "session_stats", stats: stats() });
    const tools = app.page.locator(`${sel("stats-card")}[data-view="tools"]`);
    await tools.waitFor();
    assert.deepEqual(await tools.getByTestId("stats-tool-row").evaluateAll((els) => els.map((e) => e.dataset.tool)), ["read_file", "replace"]);

    from = app.calls.length;
    await enter(app, "/usage model");
    await app.waitForOp("stats", () => true, { from });
    await app.emit({ type: "session_stats", stats: stats({ models: [] }) });
    await app.page.locator(`${sel("stats-card")}[data-view="model"]`).getByTestId("stats-no-models").waitFor();

    await enter(app, "/stats nope");
    await waitForText(app.page, sel("notice"), 'Unknown /stats view "nope": use session, model or tools.');
    // The three commands', and the meter's at session start.
    assert.equal(app.opsOf("stats").length, 4);
    assert.equal(app.opsOf("user_turn").length, 0);
    await app.close();
  });

  test("/mcp opens the MCP panel; /mcp auth, enable and disable act on a server", async () => {
    const app = await open({ config: { mcpServers: [E.mcpStatus("fixture", { state: "needs_auth", tools: 0, tool_list: [] })] } });
    await enter(app, "/mcp");
    await app.tid("mcp-panel").waitFor();
    await app.tid("mcp-close").click();
    await app.tid("mcp-panel").waitFor({ state: "detached" });
    await enter(app, "/mcp auth fixture");
    await app.waitForOp("mcp_authenticate", (a) => a.name === "fixture");
    await app.tid("mcp-panel").waitFor();
    await enter(app, "/mcp disable fixture");
    await app.waitForOp("mcp_set_server_enabled", (a) => a.name === "fixture" && a.enabled === false);
    await enter(app, "/mcp auth");
    await waitForText(app.page, sel("notice"), "Usage: /mcp auth <server name>");
    assert.equal(app.opsOf("user_turn").length, 0);
    await app.close();
  });

  test("/restore opens the checkpoint list; /restore <id> restores that checkpoint", async () => {
    const app = await open();
    const checkpoint = (id, tool, files, call_id, session_id) => ({
      checkpoint_id: id,
      scope: "full",
      created_at: "2026-05-01T10:00:00Z",
      session_id,
      message_id: null,
      call_id,
      tool,
      files,
      label: null,
    });
    const list = {
      type: "checkpoints",
      checkpoints: [
        checkpoint("20260501T100000000Z-aaaa1111", "replace", ["src/a.rs"], "c2", "s1"),
        checkpoint("20260501T090000000Z-bbbb2222", "write_file", ["notes.md"], "c1", "old"),
      ],
    };
    let from = app.calls.length;
    await enter(app, "/restore");
    await app.tid("checkpoints-panel").waitFor();
    await app.waitForOp("list_checkpoints", (a) => a.sessionId === "s1", { from });
    await app.emit(list);
    assert.deepEqual(
      await app.tid("checkpoint-row").evaluateAll((els) => els.map((e) => e.dataset.checkpointId)),
      ["20260501T100000000Z-aaaa1111", "20260501T090000000Z-bbbb2222"],
    );
    await app.tid("checkpoints-close").click();
    await app.tid("checkpoints-panel").waitFor({ state: "detached" });

    // By id (a unique prefix is enough): restored at once, code and conversation when the edit is
    // this conversation's…
    from = app.calls.length;
    await enter(app, "/restore 20260501T10");
    await app.waitForOp("list_checkpoints", () => true, { from });
    await app.emit(list);
    await app.waitForOp("restore_checkpoint", (a) => a.checkpoint_id === "20260501T100000000Z-aaaa1111" && a.code && a.conversation, { from });
    await app.tid("checkpoints-panel").waitFor();
    await waitForText(app.page, sel("checkpoints-restore-result"), "Restoring…");
    // …its code only when it belongs to another session.
    from = app.calls.length;
    await enter(app, "/restore 20260501T090000000Z-bbbb2222");
    await app.waitForOp("list_checkpoints", () => true, { from });
    await app.emit(list);
    await app.waitForOp("restore_checkpoint", (a) => a.checkpoint_id === "20260501T090000000Z-bbbb2222" && a.code && !a.conversation, { from });
    // An unknown or ambiguous id says so.
    from = app.calls.length;
    await enter(app, "/restore nope");
    await app.waitForOp("list_checkpoints", () => true, { from });
    await app.emit(list);
    await waitForText(app.page, sel("notice"), 'No checkpoint "nope": /restore lists them.');
    from = app.calls.length;
    await enter(app, "/restore 2026");
    await app.waitForOp("list_checkpoints", () => true, { from });
    await app.emit(list);
    await waitForText(app.page, sel("notice"), 'Checkpoint "2026" is ambiguous: 2 checkpoints start with it.');
    assert.equal(app.opsOf("restore_checkpoint").length, 2);
    assert.equal(app.opsOf("user_turn").length, 0);
    await app.close();
  });

  test("after /clear, new edits belong to the new conversation; the old ones are another session's", async () => {
    const app = await open();
    await app.sendPrompt("edit a");
    await app.emitAll([
      E.turnStarted(),
      E.toolRequest("e1", "replace", { file_path: "/home/dev/project/a.txt" }),
      E.checkpointCreated("e1", "cp-1", ["a.txt"]),
      E.toolResponse("e1", "replace", "success", "Edited a.txt"),
      E.turnComplete(),
    ]);
    await enter(app, "/clear");
    await app.waitForOp("clear");
    let from = app.calls.length;
    await app.emit({ type: "conversation_cleared", session_id: "conv-2" });
    // The folder's checkpoints are listed again for the panel.
    await app.waitForOp("list_checkpoints", (a) => a.sessionId === "s1", { from });
    await app.sendPrompt("edit b");
    await app.emitAll([
      E.turnStarted(),
      E.toolRequest("e2", "replace", { file_path: "/home/dev/project/b.txt" }),
      E.checkpointCreated("e2", "cp-2", ["b.txt"]),
      E.toolResponse("e2", "replace", "success", "Edited b.txt"),
      E.turnComplete(),
    ]);
    // The new edit's card offers its conversation (the new conversation's own)…
    await app.tid("restore-checkpoint").click();
    assert.equal(await app.tid("restore-both").isEnabled(), true);
    await app.tid("restore-cancel").click();
    // …and the list puts the edit from before /clear under the other sessions.
    from = app.calls.length;
    await enter(app, "/restore");
    await app.waitForOp("list_checkpoints", () => true, { from });
    await app.emit({
      type: "checkpoints",
      checkpoints: [
        { checkpoint_id: "cp-2", scope: "full", created_at: "2026-05-01T10:01:00Z", session_id: "conv-2", message_id: null, call_id: "e2", tool: "replace", files: ["b.txt"], label: null },
        { checkpoint_id: "cp-1", scope: "full", created_at: "2026-05-01T10:00:00Z", session_id: "s1", message_id: null, call_id: "e1", tool: "replace", files: ["a.txt"], label: null },
      ],
    });
    await app.tid("checkpoints-panel").waitFor();
    const own = await app.tid("checkpoint-row").evaluateAll((els) => els.map((e) => [e.dataset.checkpointId, e.dataset.own]));
    assert.deepEqual(own, [
      ["cp-2", "true"],
      ["cp-1", "false"],
    ]);
    await app.close();
  });
});

describe("MCP prompts and other slash text", () => {
  test("MCP prompts are offered with their server and arguments and sent as typed", async () => {
    const app = await open();
    const input = app.tid("prompt-input");
    await input.fill("");
    await input.pressSequentially("/");
    await app.tid("slash-suggestions").waitFor();
    const names = () => app.tid("slash-suggestion").evaluateAll((els) => els.map((e) => `${e.dataset.name}:${e.dataset.source}`));
    assert.deepEqual(await names(), [
      "clear:built_in",
      "compress:built_in",
      "memory:built_in",
      "mcp:built_in",
      "stats:built_in",
      "restore:built_in",
      "greet:mcp_prompt",
      "review:mcp_prompt",
      "git:commit:user",
    ]);
    await input.pressSequentially("rev");
    await app.page.waitForFunction(() => document.querySelectorAll('[data-testid="slash-suggestion"]').length === 1);
    assert.equal(await app.tid("slash-suggestion-args").innerText(), '--file="…" --focus="…" [--tone="…"]');
    await app.tid("composer").screenshot({ path: screenshotPath("composer-mcp-prompt-light.png") });
    await input.press("Tab");
    assert.equal(await input.inputValue(), "/review ");
    await waitForText(app.page, sel("slash-hint"), /^\/review --file="…" --focus="…" \[--tone="…"\] · MCP prompt of fixture/);
    await input.pressSequentially('a.rs --focus="speed"');
    await input.press("Enter");
    await app.waitForOp("user_turn", (a) => a.text === '/review a.rs --focus="speed"');

    // Other names match too: "/ne" offers /clear (Gemini CLI's /new).
    await app.emitAll([E.turnStarted(), E.turnComplete()]);
    await input.fill("");
    await input.pressSequentially("/ne");
    await app.page.waitForFunction(() => document.querySelectorAll('[data-testid="slash-suggestion"]').length === 1);
    assert.equal(await app.tid("slash-suggestion").getAttribute("data-name"), "clear");
    await app.close();
  });

  test("/prompt help lists the arguments without sending", async () => {
    const app = await open();
    await enter(app, "/review help");
    const text = await waitForText(app.page, sel("notice"), /^Arguments for "review"/);
    assert.match(text, /--file \(required\)/);
    assert.match(text, /--focus \(required\): What to look at/);
    assert.match(text, /--tone$/m);
    assert.equal(app.opsOf("user_turn").length, 0);
    await app.close();
  });

  test("an unknown /word is hinted as not a command and sent to Gemini as a message", async () => {
    const app = await open();
    const input = app.tid("prompt-input");
    await input.fill("/usr/bin/env is missing");
    await waitForText(app.page, sel("slash-hint"), "/usr/bin/env is not a command: Enter sends it to Gemini as a message.");
    await input.press("Enter");
    await app.waitForOp("user_turn", (a) => a.text === "/usr/bin/env is missing");
    await waitForText(app.page, sel("message-user"), "/usr/bin/env is missing");
    await app.close();
  });

  test("the built-in commands are the ones core lists: without /restore (checkpoints off) it is a message", async () => {
    const app = await open();
    await app.emit({ ...commands, commands: commands.commands.filter((c) => c.name !== "restore") });
    const input = app.tid("prompt-input");
    await input.fill("/restore");
    await waitForText(app.page, sel("slash-hint"), "/restore is not a command: Enter sends it to Gemini as a message.");
    const listed = app.opsOf("list_checkpoints").length;
    await input.press("Enter");
    await app.waitForOp("user_turn", (a) => a.text === "/restore");
    assert.equal(app.opsOf("list_checkpoints").length, listed, "no checkpoint list is asked for");
    assert.equal(await app.tid("checkpoints-panel").count(), 0);
    await app.close();
  });

  test("the command list is asked for again when MCP servers finish discovery or their prompts change", async () => {
    const app = await open();
    let from = app.calls.length;
    await app.emit(E.mcpServerStatus(E.mcpStatus("fixture", { prompts: 2 })));
    await app.waitForOp("list_commands", () => true, { from });
    // The end of the discovery lists them again too.
    from = app.calls.length;
    await app.emit(E.mcpServerStatus(E.mcpStatus("fixture", { prompts: 2, latency_ms: 5 })));
    await app.emit({ type: "mcp_discovery", state: "completed" });
    await app.waitForOp("list_commands", () => true, { from });
    await app.close();
  });
});
