// Stored messages → chat entries (src/lib/transcript.ts), the one conversion behind a resumed
// chat and the history transcript: a reopened conversation shows what the live chat showed
// (answers, thoughts, tool cards with their display text, duration and diff, turn footers) and
// none of the plumbing the records also hold for the model (function calls as text,
// `<untrusted_context>` wrappers, `Process Group PGID` lines, notes for the model), for new
// records, records from before the card's fields were stored, and Gemini CLI imports.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { before, describe, test } from "node:test";
import vm from "node:vm";
import { bundle, UI_DIR } from "./support/harness.mjs";

let T;
before(async () => {
  const script = readFileSync(await bundle(path.join(UI_DIR, "src", "lib", "transcript.ts"), "GdTranscript"), "utf8");
  const context = vm.createContext({});
  vm.runInContext(script, context);
  T = context.GdTranscript;
});

/** Entries as plain data of this realm (the bundle runs in its own VM context). */
const entriesOf = (...args) => JSON.parse(JSON.stringify(T.transcriptEntries(...args)));

const WRAPPED = "<untrusted_context>\nOutput: pangolin\nProcess Group PGID: 4242\n</untrusted_context>";

function msg(seq, kind, fields = {}) {
  return {
    id: `m${seq}`,
    seq,
    role: kind === "model" ? "model" : "user",
    kind,
    created_ms: 1_000_000 + seq * 1000,
    in_context: true,
    parts: null,
    text: "",
    truncated: false,
    size: 10,
    tool_calls: [],
    thoughts: [],
    usage: null,
    model: null,
    ...fields,
  };
}

/** Everything an entry shows (not the call's arguments, which the card describes). */
function shown(entries) {
  return entries
    .map((e) => [e.text, e.subject, e.description, e.display, e.error].filter((x) => typeof x === "string").join("\n"))
    .join("\n");
}

function assertNoPlumbing(entries) {
  const text = shown(entries);
  for (const bad of ["untrusted_context", "PGID", '{"file_path"', "write_file {", "The user modified the proposed change"]) {
    assert.ok(!text.includes(bad), `${JSON.stringify(bad)} shown in:\n${text}`);
  }
}

/** An edit's details as the live card got them (the protocol's ConfirmationDetails). */
const EDIT = { type: "edit", title: "Create okapi.txt", file_path: "/w/okapi.txt", file_name: "okapi.txt", original: null, proposed: "striped\n", unified_diff: "+striped\n", is_new_file: true };

const usage = { prompt: 100, output: 20, cached: 0, thoughts: 5, tool: 0, total: 125 };

describe("transcript entries", () => {
  test("a recorded turn with an edit and a shell command becomes the live chat's items", () => {
    const messages = [
      msg(1, "prompt", { text: "write okapi.txt and run echo" }),
      msg(2, "model", {
        parts: [
          { text: "**Planning**", thought: true },
          { text: "I'll write it." },
          { functionCall: { id: "c1", name: "write_file", args: { file_path: "/w/okapi.txt", content: "striped\n" } } },
          { functionCall: { id: "c2", name: "run_shell_command", args: { command: "echo pangolin" } } },
        ],
        text: 'I\'ll write it.\nwrite_file {"file_path":"/w/okapi.txt","content":"striped\\n"}\nrun_shell_command {"command":"echo pangolin"}',
        thoughts: [{ subject: "Planning", description: "first the file" }],
        tool_calls: [
          { call_id: "c1", name: "write_file", args: { file_path: "/w/okapi.txt", content: "striped\n" } },
          { call_id: "c2", name: "run_shell_command", args: { command: "echo pangolin" } },
        ],
        usage,
        model: "gemini-2.5-pro",
      }),
      msg(3, "tool_result", {
        tool_calls: [
          { call_id: "c1", name: "write_file", status: "success", summary: "Successfully created and wrote to new file: /w/okapi.txt.", display: "Created okapi.txt", duration_ms: 12, diff: EDIT },
          { call_id: "c2", name: "run_shell_command", status: "success", summary: WRAPPED, display: "pangolin\n", duration_ms: 30, output: "pangolin\n", exit_code: 0 },
        ],
      }),
      msg(5, "model", { parts: [{ text: "Done." }], text: "Done.", usage, model: "gemini-2.5-pro" }),
    ];
    const entries = entriesOf(messages);
    assert.deepEqual(
      entries.map((e) => e.kind),
      ["user", "thought", "model", "tool", "tool", "model", "footer"],
    );
    assert.equal(entries[0].text, "write okapi.txt and run echo");
    assert.equal(entries[0].messageId, "m1");
    assert.equal(entries[1].subject, "Planning");
    assert.equal(entries[2].text, "I'll write it.");
    const [write, shell] = [entries[3], entries[4]];
    assert.equal(write.name, "write_file");
    assert.equal(write.state, "success");
    assert.equal(write.display, "Created okapi.txt");
    assert.equal(write.durationMs, 12);
    assert.deepEqual(write.diff, EDIT);
    assert.equal(write.declined, false);
    assert.deepEqual(write.args, { file_path: "/w/okapi.txt", content: "striped\n" });
    assert.equal(shell.display, "pangolin", "the card's text, not the model's");
    assert.equal(shell.durationMs, 30);
    assert.equal(shell.output, "pangolin\n");
    assert.equal(shell.exitCode, 0);
    assert.equal(entries[5].text, "Done.");
    assert.equal(entries[6].usage.requests, 2);
    assert.equal(entries[6].usage.total_tokens, 250);
    assert.equal(entries[6].usage.duration_ms, 4000);
    assert.equal(entries[6].seq, 5, "the footer goes with the turn's last message");
    assertNoPlumbing(entries);
  });

  test("an MCP call keeps its server and tool name, for the card's title", () => {
    const messages = [
      msg(1, "prompt", { text: "add 2 and 3" }),
      msg(2, "model", {
        parts: [{ functionCall: { id: "c1", name: "mcp_tiny_add", args: { a: 2, b: 3 } } }],
        tool_calls: [{ call_id: "c1", name: "mcp_tiny_add", args: { a: 2, b: 3 } }],
      }),
      msg(3, "tool_result", {
        tool_calls: [
          { call_id: "c1", name: "mcp_tiny_add", status: "success", summary: "5", display: "5", duration_ms: 4, mcp: { server: "tiny", tool: "add" } },
        ],
      }),
    ];
    const tool = entriesOf(messages).find((e) => e.kind === "tool");
    assert.deepEqual(tool.mcp, { server: "tiny", tool: "add" });
    // Older records name no server: the card falls back to the registered name.
    messages[2].tool_calls[0].mcp = undefined;
    assert.equal(entriesOf(messages).find((e) => e.kind === "tool").mcp, null);
  });

  test("an invoke_agent call keeps its recorded subagent run, for the nested card", () => {
    const run = { agent_name: "generalist", model: "gemini-2.5-flash", prompt: "look", status: "completed", usage: {}, events: [{ type: "content_delta", text: "found" }] };
    const messages = [
      msg(1, "prompt", { text: "delegate" }),
      msg(2, "model", { tool_calls: [{ call_id: "p1", name: "invoke_agent", args: { agent_name: "generalist", prompt: "look" } }] }),
      msg(3, "tool_result", { tool_calls: [{ call_id: "p1", name: "invoke_agent", status: "success", display: "found", subagent: run }] }),
    ];
    const tool = entriesOf(messages).find((e) => e.kind === "tool");
    assert.deepEqual(tool.subagent, run);
    // Other calls (and records from before subagents) have none.
    messages[2].tool_calls[0].subagent = undefined;
    assert.equal(entriesOf(messages).find((e) => e.kind === "tool").subagent, null);
  });

  test("older records (only the model's text) and cut messages are cleaned", () => {
    const messages = [
      msg(1, "prompt", { text: "run it" }),
      // Cut (no parts): the searchable text names the calls.
      msg(2, "model", {
        truncated: true,
        text: 'Running now.\nrun_shell_command {"command":"echo pangolin"}\nwrite_file {"file_path":"/w/a.txt","content":"x"}\nrun_shell_command false',
        tool_calls: [
          { call_id: "c1", name: "run_shell_command", args: { command: "echo pangolin" } },
          { call_id: "c2", name: "write_file", args: { file_path: "/w/a.txt", content: "x" } },
          { call_id: "c3", name: "run_shell_command", args: { command: "false" } },
        ],
      }),
      msg(3, "tool_result", {
        tool_calls: [
          { call_id: "c1", name: "run_shell_command", status: "success", summary: WRAPPED },
          {
            call_id: "c2",
            name: "write_file",
            status: "success",
            summary: "Successfully overwrote file: /w/a.txt.\n\nThe user modified the proposed change before it was applied; the result reflects the user's version.",
          },
          {
            call_id: "c3",
            name: "run_shell_command",
            status: "success",
            summary: "<untrusted_context>\nOutput: (empty)\nExit Code: 2\nProcess Group PGID: 7\n</untrusted_context>",
          },
        ],
      }),
    ];
    const entries = entriesOf(messages);
    assert.deepEqual(
      entries.map((e) => e.kind),
      ["user", "model", "tool", "tool", "tool"],
    );
    assert.equal(entries[1].text, "Running now.");
    assert.equal(entries[2].display, "pangolin");
    assert.equal(entries[3].display, "Successfully overwrote file: /w/a.txt.");
    assert.equal(entries[4].display, "Command exited with code 2.");
    assertNoPlumbing(entries);
  });

  test("cleanToolText keeps people's text and drops the wrappers", () => {
    assert.equal(T.cleanToolText(WRAPPED), "pangolin");
    assert.equal(T.cleanToolText("plain"), "plain");
    assert.equal(T.cleanToolText("Output: a\nb\nProcess Group PGID: 1"), "a\nb");
    assert.equal(
      T.cleanToolText("<untrusted_context>\nOutput: (empty)\nError: boom\nProcess Group PGID: 4\n</untrusted_context>"),
      "Command failed: boom",
    );
    assert.equal(
      T.cleanToolText("<untrusted_context>\nCommand was cancelled by the user before it finished. Output until then:\nhalf\n</untrusted_context>"),
      "Command cancelled.\n\nOutput before cancellation:\nhalf",
    );
    assert.equal(
      T.cleanToolText("Started in the background with PID 9.\nOutput so far:\n<untrusted_context>\nready\n</untrusted_context>"),
      "Started in the background with PID 9.\nOutput so far:\nready",
    );
    // Older Gemini CLI recordings.
    assert.equal(
      T.cleanToolText("Command: ls\nDirectory: (root)\nOutput: a.txt\nb.txt\nError: (none)\nExit Code: 0\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 77"),
      "a.txt\nb.txt",
    );
    assert.equal(
      T.cleanToolText("Command: false\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 1\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: (none)"),
      "Command exited with code 1.",
    );
    // The truncation note's instructions are for the model.
    assert.equal(
      T.cleanToolText("head\n\n[... output truncated: showing the first 4 and the last 4 of 900 characters. The full output (900 characters) was saved to /tmp/x.txt; read parts of it with read_file (start_line/end_line) or search it with grep_search. ...]\n\ntail"),
      "head\n\n[… output truncated …]\n\ntail",
    );
    // A summary cut inside the wrapper.
    assert.equal(T.cleanToolText("<untrusted_context>\nOutput: long…"), "long…");
  });

  test("Gemini CLI imports: context prompts are hidden, calls keep their status and display", () => {
    const messages = [
      msg(1, "prompt", { text: "" }),
      msg(2, "prompt", { text: "list it" }),
      msg(3, "model", {
        parts: [{ text: "Listing." }, { functionCall: { id: "k1", name: "list_directory", args: { dir_path: "." } } }],
        text: "Listing.\nlist_directory",
        usage,
        tool_calls: [{ call_id: "k1", name: "list_directory", args: { dir_path: "." }, status: "success", display: "Listed 3 item(s)." }],
      }),
      msg(4, "tool_result", {
        tool_calls: [{ call_id: "k1", name: "list_directory", status: "success", summary: "Directory listing for /w:\na\nb\nc" }],
      }),
      msg(5, "model", { truncated: true, text: "Three.\nread_file", tool_calls: [{ call_id: "k2", name: "read_file", args: { absolute_path: "/w/a" } }] }),
    ];
    const entries = entriesOf(messages);
    assert.deepEqual(
      entries.map((e) => e.kind),
      ["user", "model", "tool", "model", "tool", "footer"],
    );
    assert.equal(entries[0].text, "list it");
    assert.equal(entries[2].display, "Listed 3 item(s).", "the CLI's own display wins over the model's text");
    assert.equal(entries[3].text, "Three.");
    // Never answered, and nothing follows: it did not run.
    assert.equal(entries[4].state, "cancelled");
    // With later messages still to read, it may be answered there.
    const paged = entriesOf(messages, { hasAfter: true });
    assert.equal(paged.find((e) => e.callId === "k2").state, "success");
    assert.equal(paged[paged.length - 1].kind, "tool", "no footer for a turn that may go on");
  });

  test("results without their call, failures, interrupted calls and summaries", () => {
    const messages = [
      msg(7, "tool_result", {
        tool_calls: [{ call_id: "x", name: "replace", status: "error", summary: "Failed to edit", error: "Failed to edit: no match", duration_ms: 3 }],
      }),
      msg(7.5, "tool_result", {
        tool_calls: [{ call_id: "z", name: "write_file", status: "cancelled", error: "[Operation Cancelled] Reason: User did not allow tool call", declined: true }],
      }),
      msg(8, "summary", { text: "summary 1" }),
      msg(9, "summary", { text: "summary 2" }),
      msg(10, "prompt", { text: "again" }),
      msg(11, "model", { parts: [{ functionCall: { id: "y", name: "run_shell_command", args: { command: "sleep 9" } } }], tool_calls: [{ call_id: "y", name: "run_shell_command", args: { command: "sleep 9" } }] }),
      msg(12, "tool_result", {
        tool_calls: [{ call_id: "y", name: "run_shell_command", status: "cancelled", summary: "Not executed: the session ended before this tool call ran.", error: "Not executed: the session ended before this tool call ran." }],
      }),
    ];
    const entries = entriesOf(messages);
    assert.deepEqual(
      entries.map((e) => e.kind),
      ["tool", "tool", "notice", "user", "tool"],
    );
    assert.equal(entries[1].state, "cancelled");
    assert.equal(entries[1].declined, true);
    entries.splice(1, 1);
    assert.equal(entries[0].state, "error");
    assert.equal(entries[0].error, "Failed to edit: no match");
    assert.equal(entries[0].seq, 7);
    assert.equal(entries[1].text, "Older messages were summarised to save context.");
    assert.equal(entries[3].state, "cancelled");
    assert.equal(entries[3].error, "Not executed: the session ended before this tool call ran.");
  });

  test("a turn's stored end brings back its stopped answer, notices and footer as shown live", () => {
    const turnUsage = (requests, total) => ({ model: "gemini-2.5-flash", requests, prompt_tokens: total, cached_tokens: 0, output_tokens: 0, thoughts_tokens: 0, total_tokens: total, duration_ms: 4200, tool_tokens: 0 });
    const end = (status, notices, u, seq) => msg(seq, "turn_end", { role: "model", in_context: false, parts: { status, usage: u, notices, routed: seq === 3 } });
    const messages = [
      msg(1, "prompt", { text: "first" }),
      msg(2, "model", { parts: [{ text: "Done." }], usage, model: "gemini-2.5-flash" }),
      end("completed", [], turnUsage(1, 125), 3),
      msg(4, "prompt", { text: "tell me everything", in_context: false }),
      msg(5, "model", { parts: [{ text: "Part of a long ans" }], in_context: false }),
      end("cancelled", [], turnUsage(0, 0), 6),
      msg(7, "prompt", { text: "loop" }),
      end("loop_detected", [{ after_seq: 7, event: { type: "loop_detected", kind: "repeated_content", detail: "the same text" } }], turnUsage(1, 10), 8),
      msg(9, "prompt", { text: "fails" }),
      // A retry notice that showed after the prompt, before the first answer; a warning after that answer.
      msg(10, "model", { parts: [{ text: "Trying." }], usage, model: "gemini-2.5-flash" }),
      msg(11, "model", { parts: [{ text: "Still trying." }], usage, model: "gemini-2.5-flash" }),
      end(
        "failed",
        [
          { after_seq: 9, event: { type: "retrying", attempt: 2, max_attempts: 3, delay_ms: 2000, reason: "503" } },
          { after_seq: 10, event: { type: "warning", message: "slow" } },
          { event: { type: "error", kind: "internal", message: "boom", status: 500, fatal: true } },
        ],
        turnUsage(0, 0),
        12,
      ),
    ];
    const entries = entriesOf(messages);
    assert.deepEqual(
      entries.map((e) => [e.kind, e.text ?? e.status]),
      [
        ["user", "first"],
        ["model", "Done."],
        ["footer", "completed"],
        ["user", "tell me everything"],
        ["model", "Part of a long ans"],
        ["notice", "Cancelled."],
        ["footer", "cancelled"],
        ["user", "loop"],
        ["notice", "Loop detected, the turn was stopped: the same text"],
        ["footer", "loop_detected"],
        ["user", "fails"],
        ["notice", "Retrying (attempt 2 of 3) in 2 s: 503"],
        ["model", "Trying."],
        ["notice", "slow"],
        ["model", "Still trying."],
        ["notice", "The turn failed: boom (HTTP 500)"],
        ["footer", "failed"],
      ],
    );
    assert.equal(entries[2].usage.duration_ms, 4200, "the footer's recorded usage, not a sum of the records");
    assert.equal(entries[2].routed, true);
    assert.equal(entries[15].retryPrompt, "fails", "a failed turn's Retry sends its prompt again");
    assert.equal(entries[15].level, "error");
    assert.equal(entries[5].retryPrompt, undefined);
  });
});
