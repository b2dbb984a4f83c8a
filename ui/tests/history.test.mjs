// The history browser (mocked IPC with an in-page fake of the history commands): sessions
// grouped by workspace and day, search with highlighted words (never HTML), a transcript read
// page by page, resume, rename, delete with confirmation, export; the app reopening the last
// session; and restoring an edit's checkpoint (code, conversation or both) from a transcript.
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
const OTHER = "/home/dev/elsewhere";
const DAY = 86_400_000;

/** The fake history: sessions and their messages (seq 1..n). */
function fakeHistory(now) {
  const summary = (id, workspace, title, updated_ms, message_count, source = "gemini-desktop") => ({
    id,
    workspace,
    title,
    created_ms: updated_ms - 60_000,
    updated_ms,
    model: "gemini-2.5-pro",
    message_count,
    tokens: { prompt: 0, output: 0, cached: 0, thoughts: 0, tool: 0, total: 0 },
    source,
    origin: null,
  });
  const sessions = [
    summary("a1", WS, "Fix the okapi build", now - 60_000, 200),
    summary("b2", OTHER, "Elsewhere today", now - 120_000, 2),
    summary("c3", WS, "Yesterday's chat", now - DAY - 1000, 2),
    summary("d4", WS, "Imported from the CLI", now - 3 * DAY, 2, "gemini-cli"),
  ];
  const message = (session, seq) => {
    const prompt = seq % 2 === 1;
    return {
      id: `${session}-m${seq}`,
      seq,
      role: prompt ? "user" : "model",
      kind: prompt ? "prompt" : "model",
      created_ms: now - 100_000 + seq,
      in_context: true,
      parts: null,
      text: prompt ? `question ${seq} about the okapi` : `answer ${seq}`,
      truncated: false,
      size: 10,
      tool_calls: [],
      thoughts: [],
      usage: null,
      model: null,
    };
  };
  const messages = {};
  for (const s of sessions) messages[s.id] = Array.from({ length: s.message_count }, (_, i) => message(s.id, i + 1));
  // Sessions with edits: a chat, then a turn with a `replace` (checkpointed) and a `read_file`.
  const withEdits = (id, workspace) => {
    sessions.push(summary(id, workspace, `Edits in ${id}`, now - 90_000, 6));
    const m = (seq, kind, text, tool_calls = []) => ({
      ...message(id, seq),
      role: kind === "model" ? "model" : "user",
      kind,
      text,
      tool_calls,
    });
    messages[id] = [
      m(1, "prompt", "remember the okapi"),
      m(2, "model", "Noted."),
      m(3, "prompt", "change a.txt"),
      m(4, "model", "", [
        { call_id: `${id}-edit`, name: "replace", args: { file_path: `${workspace}/a.txt` } },
        { call_id: `${id}-read`, name: "read_file", args: { absolute_path: `${workspace}/a.txt` } },
      ]),
      m(5, "tool_result", "Edited a.txt", [
        { call_id: `${id}-edit`, name: "replace", status: "success", summary: "Edited a.txt" },
        { call_id: `${id}-read`, name: "read_file", status: "success", summary: "Read 1 line" },
      ]),
      m(6, "model", "Done."),
    ];
  };
  withEdits("e5", WS);
  withEdits("f6", OTHER);
  sessions.sort((a, b) => b.updated_ms - a.updated_ms);
  return { sessions, messages };
}

/** Installs `window.__gdExtraIPC` answering the history commands from the fake history. */
function installHistory({ data, last }) {
  const state = {
    sessions: data.sessions,
    messages: data.messages,
    cli: [
      {
        id: "cli-1",
        title: "A Gemini CLI chat",
        updated_ms: Date.now() - 5000,
        file: "/home/dev/.gemini/tmp/abc/chats/session-1.jsonl",
        messages: 2,
        skipped_lines: 0,
        imported: false,
      },
    ],
  };
  window.__gdHistory = state;
  window.__gdExtraIPC = (cmd, args) => {
    const page = (id, from, limit) => {
      const all = state.messages[id] ?? [];
      let start = 0;
      let end = all.length;
      if (from.from === "start") end = Math.min(limit, all.length);
      else if (from.from === "end") start = Math.max(0, all.length - limit);
      else if (from.from === "after") {
        start = all.findIndex((m) => m.seq > from.seq);
        if (start < 0) start = all.length;
        end = Math.min(all.length, start + limit);
      } else if (from.from === "before") {
        end = all.findIndex((m) => m.seq >= from.seq);
        if (end < 0) end = all.length;
        start = Math.max(0, end - limit);
      } else if (from.from === "around") {
        const at = Math.max(0, all.findIndex((m) => m.seq >= from.seq));
        start = Math.max(0, at - 5);
        end = Math.min(all.length, start + limit);
      }
      return { messages: all.slice(start, end), has_before: start > 0, has_after: end < all.length };
    };
    switch (cmd) {
      case "history_last_session":
        return last ? (state.sessions.find((s) => s.id === last) ?? null) : null;
      case "history_list":
        return state.sessions;
      case "history_gemini_cli_sessions":
        return state.cli.filter((c) => !state.sessions.some((x) => x.id === c.id));
      case "history_import_gemini_cli": {
        const cli = state.cli.find((c) => c.file === args.file);
        if (!cli) throw { kind: "input", message: "no such file" };
        state.sessions = [
          {
            id: cli.id,
            workspace: args.workspace,
            title: cli.title,
            created_ms: cli.updated_ms,
            updated_ms: cli.updated_ms,
            model: null,
            message_count: 2,
            tokens: { prompt: 0, output: 0, cached: 0, thoughts: 0, tool: 0, total: 0 },
            source: "gemini-cli",
            origin: cli.file,
          },
          ...state.sessions,
        ];
        state.messages[cli.id] = state.messages.c3.map((m) => ({ ...m, id: `${cli.id}-${m.id}` }));
        return cli.id;
      }
      case "history_search": {
        const word = String(args.text).trim().toLowerCase();
        const hits = [];
        for (const s of state.sessions) {
          for (const m of state.messages[s.id] ?? []) {
            if (!m.text.toLowerCase().includes(word) || hits.length >= 5) continue;
            hits.push({
              session_id: s.id,
              session_title: s.title,
              workspace: s.workspace,
              message_id: m.id,
              seq: m.seq,
              role: m.role,
              kind: m.kind,
              created_ms: m.created_ms,
              snippet: m.text.replace(new RegExp(word, "gi"), (w) => `\u0002${w}\u0003`) + " <b>not bold</b>",
              score: -1,
            });
          }
        }
        return hits;
      }
      case "history_page":
        return page(args.sessionId, args.from, args.limit ?? 50);
      case "history_rename": {
        const s = state.sessions.find((x) => x.id === args.sessionId);
        if (s) s.title = args.title;
        return null;
      }
      case "history_delete":
        state.sessions = state.sessions.filter((s) => s.id !== args.sessionId);
        return true;
      case "history_export":
        return `/home/dev/Downloads/gemini-session-${args.sessionId}.${args.format === "json" ? "json" : "md"}`;
      case "history_checkpoints":
        return state.messages[args.sessionId]?.some((m) => m.seq === 4 && m.tool_calls.length > 0)
          ? [
              {
                checkpoint_id: `cp-${args.sessionId}`,
                scope: "full",
                created_at: "2026-05-01T10:00:00Z",
                session_id: args.sessionId,
                message_id: `${args.sessionId}-m3`,
                call_id: `${args.sessionId}-edit`,
                tool: "replace",
                files: ["a.txt"],
                label: null,
              },
            ]
          : [];
      case "submit":
        // What a restore does to the stored conversation (the event comes from the test).
        if (args.op.type === "restore_checkpoint" && args.op.conversation) {
          state.messages[args.sessionId] = state.messages[args.sessionId].filter((m) => m.seq < 3);
        }
        return undefined;
      default:
        return undefined;
    }
  };
}

/** Noon today: the sessions' times (a minute before "now", a day before, three days before) fall
 * in the day groups the tests expect at any time of day; with the real clock, a run in the first
 * minutes after midnight put "a minute ago" into Yesterday (fresh-clone CI at 00:03). */
function noonToday() {
  const noon = new Date();
  noon.setHours(12, 0, 0, 0);
  return noon.getTime();
}

async function openWithHistory({ last = null, colorScheme = "light" } = {}) {
  const data = fakeHistory(noonToday());
  return env.open({ init: [installHistory, { data, last }], colorScheme });
}

async function openBrowser(app) {
  await app.tid("history-open").click();
  await app.tid("history-panel").waitFor();
  await app.page.waitForSelector(sel("history-session"));
}

describe("history browser", () => {
  test("groups sessions by workspace (this one first) and day, newest first", async () => {
    const app = await openWithHistory();
    await openBrowser(app);
    const groups = await app.page.$$eval(sel("history-group"), (els) => els.map((e) => e.getAttribute("data-workspace")));
    assert.deepEqual(groups, [WS, OTHER]);
    const days = await app.page.$$eval(`${sel("history-group")}[data-workspace="${WS}"] ${sel("history-day")}`, (els) =>
      els.map((e) => e.textContent),
    );
    assert.equal(days.length, 3);
    assert.deepEqual(days.slice(0, 2), ["Today", "Yesterday"]);
    const ids = await app.page.$$eval(sel("history-session"), (els) => els.map((e) => e.getAttribute("data-session-id")));
    assert.deepEqual(ids, ["a1", "e5", "c3", "d4", "f6", "b2"]);
    assert.match(await app.page.locator(`${sel("history-session")}[data-session-id="d4"]`).innerText(), /Gemini CLI/);
    await app.page.screenshot({ path: screenshotPath("history-list-light.png") });
    await app.close();
  });

  test("search highlights the matched words as text and a hit opens the transcript at its message", async () => {
    const app = await openWithHistory();
    await openBrowser(app);
    await app.tid("history-search").fill("okapi");
    await app.page.waitForSelector(sel("history-hit"));
    const marks = await app.page.$$eval(`${sel("history-hit")} mark`, (els) => els.map((e) => e.textContent));
    assert.ok(marks.length >= 1 && marks.every((m) => m === "okapi"), JSON.stringify(marks));
    // Markup in a snippet stays text.
    assert.equal(await app.page.locator(`${sel("history-hit")} b`).count(), 0);
    assert.match(await app.tid("history-hit").first().innerText(), /<b>not bold<\/b>/);
    await app.page.screenshot({ path: screenshotPath("history-search-light.png") });

    const hit = app.tid("history-hit").nth(2);
    const seq = Number(await hit.getAttribute("data-seq"));
    const from = app.calls.length;
    await hit.click();
    const call = await app.waitForCall("history_page", () => true, { from });
    assert.deepEqual(call.args.from, { from: "around", seq });
    await app.tid("history-transcript").waitFor();
    const focused = app.page.locator(`${sel("history-message")}[data-seq="${seq}"]`);
    await focused.waitFor();
    assert.match((await focused.getAttribute("class")) ?? "", /focus/);
    await app.until((s) => {
      const el = document.querySelector(`[data-testid="history-message"][data-seq="${s}"]`);
      const box = document.querySelector('[data-testid="history-messages"]');
      if (!el || !box) return false;
      const a = el.getBoundingClientRect();
      const b = box.getBoundingClientRect();
      return a.top >= b.top && a.bottom <= b.bottom;
    }, seq);
    // Clearing the search goes back to the list.
    await app.tid("history-search").fill("");
    await app.page.waitForSelector(sel("history-session"));
    await app.close();
  });

  test("the transcript is read page by page as it scrolls and keeps a bounded window", async () => {
    const app = await openWithHistory();
    await openBrowser(app);
    await app.page.locator(`${sel("history-session")}[data-session-id="a1"]`).click();
    await app.tid("history-transcript").waitFor();
    await app.until(() => document.querySelectorAll('[data-testid="history-message"]').length === 40);
    const pages = () => app.callsOf("history_page").length;
    const before = pages();
    for (let i = 0; i < 4; i++) {
      const from = app.calls.length;
      await app.tid("history-messages").evaluate((el) => el.scrollTo(0, el.scrollHeight));
      await app.waitForCall("history_page", (a) => a.from.from === "after", { from });
      await app.page.waitForSelector(sel("history-loading"), { state: "detached" });
      await app.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(null))));
    }
    assert.equal(pages(), before + 4, "one page per scroll to the end");
    const seqs = await app.page.$$eval(sel("history-message"), (els) => els.map((e) => Number(e.getAttribute("data-seq"))));
    assert.ok(seqs.length <= 150, `at most 150 messages in the page, not ${seqs.length}`);
    assert.equal(seqs[seqs.length - 1], 200, "read to the last message");
    assert.ok(seqs[0] > 1, "the first messages left the page");
    // Scrolling back up reads the earlier messages again.
    const from = app.calls.length;
    await app.tid("history-messages").evaluate((el) => el.scrollTo(0, 0));
    await app.waitForCall("history_page", (a) => a.from.from === "before" && a.from.seq === seqs[0], { from });
    for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], seqs[i - 1] + 1, "consecutive messages");
    await app.close();
  });

  test("resume continues the session in the chat", async () => {
    const app = await openWithHistory();
    await openBrowser(app);
    await app.page.locator(`${sel("history-session")}[data-session-id="c3"]`).click();
    await app.tid("history-resume").waitFor();
    const from = app.calls.length;
    await app.tid("history-resume").click();
    const start = await app.waitForCall("start_session", () => true, { from });
    assert.equal(start.args.resume, "c3");
    await app.page.waitForSelector(sel("history-panel"), { state: "detached" });
    await waitForText(app.page, sel("message-user"), "question 1 about the okapi");
    await waitForText(app.page, sel("message-model"), "answer 2");
    await app.close();
  });

  test("rename, delete (after confirming) and export", async () => {
    const app = await openWithHistory();
    await openBrowser(app);
    await app.page.locator(`${sel("history-session")}[data-session-id="c3"]`).click();
    await app.tid("history-rename").click();
    await app.tid("history-rename-input").fill("Renamed chat");
    await app.tid("history-rename-save").click();
    const rename = await app.waitForCall("history_rename");
    assert.deepEqual(rename.args, { sessionId: "c3", title: "Renamed chat" });
    await waitForText(app.page, sel("history-title"), "Renamed chat");
    await waitForText(app.page, `${sel("history-session")}[data-session-id="c3"] .title`, "Renamed chat");

    await app.tid("history-export-md").click();
    const md = await app.waitForCall("history_export");
    assert.deepEqual(md.args, { sessionId: "c3", format: "markdown", path: null });
    await waitForText(app.page, sel("history-status"), "Exported to /home/dev/Downloads/gemini-session-c3.md");
    await app.tid("history-export-json").click();
    await app.waitForCall("history_export", (a) => a.format === "json");
    await waitForText(app.page, sel("history-status"), "Exported to /home/dev/Downloads/gemini-session-c3.json");

    await app.tid("history-delete").click();
    await app.tid("history-delete-confirmation").waitFor();
    assert.equal(app.callsOf("history_delete").length, 0, "nothing deleted before confirming");
    await app.tid("history-delete-cancel").click();
    assert.equal(await app.tid("history-delete-confirmation").count(), 0);
    await app.tid("history-delete").click();
    await app.page.screenshot({ path: screenshotPath("history-transcript-light.png") });
    await app.tid("history-delete-confirm").click();
    const del = await app.waitForCall("history_delete");
    assert.deepEqual(del.args, { sessionId: "c3" });
    await app.page.waitForSelector(`${sel("history-session")}[data-session-id="c3"]`, { state: "detached" });
    assert.equal(await app.tid("history-transcript").count(), 0);
    await app.close();
  });

  test("Gemini CLI sessions are listed read-only, imported when opened, and resumable", async () => {
    const app = await openWithHistory();
    await openBrowser(app);
    const cli = app.page.locator(`${sel("history-cli-session")}[data-session-id="cli-1"]`);
    await cli.waitFor();
    assert.match(await cli.innerText(), /read-only/);
    await cli.click();
    const imported = await app.waitForCall("history_import_gemini_cli");
    assert.deepEqual(imported.args, { file: "/home/dev/.gemini/tmp/abc/chats/session-1.jsonl", workspace: WS });
    await app.page.waitForSelector(`${sel("history-transcript")}[data-session-id="cli-1"]`);
    await app.tid("history-cli-badge").waitFor();
    // Now listed with our sessions (marked Gemini CLI), no longer as a file to import.
    await app.page.waitForSelector(`${sel("history-session")}[data-session-id="cli-1"][data-source="gemini-cli"]`);
    assert.equal(await app.tid("history-cli-session").count(), 0);
    const from = app.calls.length;
    await app.tid("history-resume").click();
    const start = await app.waitForCall("start_session", () => true, { from });
    assert.equal(start.args.resume, "cli-1");
    await app.close();
  });

  test("dark theme", async () => {
    const app = await openWithHistory({ colorScheme: "dark" });
    await openBrowser(app);
    await app.page.locator(`${sel("history-session")}[data-session-id="a1"]`).click();
    await app.tid("history-transcript").waitFor();
    await app.tid("history-search").fill("okapi");
    await app.page.waitForSelector(sel("history-hit"));
    await app.page.screenshot({ path: screenshotPath("history-dark.png") });
    const bg = await app.tid("history-panel").evaluate((el) => getComputedStyle(el).backgroundColor);
    assert.notEqual(bg, "rgb(255, 255, 255)");
    await app.close();
  });
});

/**
 * A session recorded as the model saw it: markdown answers, function calls in the searchable
 * text, shell output in `<untrusted_context>` with its PGID line, a note for the model.
 */
function plumbingSession(now) {
  const id = "g7";
  const base = { role: "user", in_context: true, truncated: false, size: 10, thoughts: [], usage: null, model: null, parts: null };
  const m = (seq, kind, fields) => ({ ...base, id: `${id}-m${seq}`, seq, kind, role: kind === "model" ? "model" : "user", created_ms: now - 50_000 + seq * 1000, text: "", tool_calls: [], ...fields });
  const messages = [
    m(1, "prompt", { text: "describe the okapi and save it" }),
    m(2, "model", {
      parts: [{ text: "The **okapi** is `striped`:\n\n- legs\n- ears" }, { functionCall: { id: "w1", name: "write_file", args: { file_path: "/home/dev/project/okapi.md", content: "striped" } } }, { functionCall: { id: "s1", name: "run_shell_command", args: { command: "wc -l okapi.md" } } }],
      text: 'The **okapi** is `striped`:\n\n- legs\n- ears\nwrite_file {"file_path":"/home/dev/project/okapi.md","content":"striped"}\nrun_shell_command {"command":"wc -l okapi.md"}',
      tool_calls: [
        { call_id: "w1", name: "write_file", args: { file_path: "/home/dev/project/okapi.md", content: "striped" } },
        { call_id: "s1", name: "run_shell_command", args: { command: "wc -l okapi.md" } },
      ],
      usage: { prompt: 10, output: 5, cached: 0, thoughts: 0, tool: 0, total: 15 },
    }),
    m(3, "tool_result", {
      tool_calls: [
        { call_id: "w1", name: "write_file", status: "success", summary: "Successfully created and wrote to new file: /home/dev/project/okapi.md.\n\nThe user modified the proposed change before it was applied; the result reflects the user's version." },
        { call_id: "s1", name: "run_shell_command", status: "success", summary: "<untrusted_context>\nOutput: 1 okapi.md\nProcess Group PGID: 4242\n</untrusted_context>" },
      ],
    }),
    m(4, "model", { parts: [{ text: "Saved." }], text: "Saved." }),
  ];
  const summary = {
    id,
    workspace: WS,
    title: "The okapi file",
    created_ms: now - 60_000,
    updated_ms: now - 30_000,
    model: "gemini-2.5-pro",
    message_count: messages.length,
    tokens: { prompt: 0, output: 0, cached: 0, thoughts: 0, tool: 0, total: 0 },
    source: "gemini-desktop",
    origin: null,
  };
  return { summary, messages };
}

async function openPlumbing({ last = null, resultText = "", shellExit = undefined, writeResult = undefined, ...options } = {}) {
  const data = fakeHistory(Date.now());
  const g7 = plumbingSession(Date.now());
  if (shellExit !== undefined) {
    const call = g7.messages.find((m) => m.kind === "tool_result").tool_calls.find((c) => c.call_id === "s1");
    call.exit_code = shellExit;
  }
  if (writeResult !== undefined) {
    const call = g7.messages.find((m) => m.kind === "tool_result").tool_calls.find((c) => c.call_id === "w1");
    Object.assign(call, writeResult);
  }
  // The tool-result message's searchable text (core stores what the cards showed).
  g7.messages.find((m) => m.kind === "tool_result").text = resultText;
  data.sessions.unshift(g7.summary);
  data.messages.g7 = g7.messages;
  return env.open({ init: [installHistory, { data, last }], ...options });
}

/** The text of `selector` anywhere in the page (not only what is visible). */
const allText = (app, selector) => app.page.locator(selector).evaluateAll((els) => els.map((e) => e.textContent ?? "").join("\n"));

describe("transcript rendering", () => {
  // Issue 34, item 10b: a write plan mode refused is "Refused by plan mode" live
  // (tool-cards.test.mjs), and the same reopened and in the browser, from the stored decided_by.
  test("a stored write refused by plan mode is a refused card, reopened and in the browser", async () => {
    const rule = { tier: "default", priority: 65, effective_priority: 1065, decision: "deny", modes: ["plan"], path: "<built-in>/plan.toml", line: 90, text: "[[rule]]", origin: "default policy (plan.toml)" };
    const writeResult = {
      status: "error",
      summary: "Tool execution denied by policy. You are in Plan Mode and cannot modify source code.",
      error: "Tool execution denied by policy. You are in Plan Mode and cannot modify source code.",
      display: null,
      duration_ms: 1,
      decided_by: { kind: "approval_mode", outcome: "deny", mode: "plan", rule },
    };
    const app = await openPlumbing({ last: "g7", writeResult });
    const writeIn = (scope) => app.page.locator(`${scope} ${sel("tool-card")}[data-tool="write_file"]`);
    const check = async (scope) => {
      await app.page.waitForSelector(`${scope} ${sel("tool-card")}[data-tool="write_file"]`);
      assert.equal(await writeIn(scope).getAttribute("data-state"), "refused");
      assert.match(await writeIn(scope).getByTestId("tool-state").innerText(), /^Refused by plan mode/);
      assert.match(await writeIn(scope).getByTestId("tool-result").innerText(), /^Plan mode only reads and researches/);
    };
    await check(sel("message-list"));
    await openBrowser(app);
    await app.page.locator(`${sel("history-session")}[data-session-id="g7"]`).click();
    await check(`${sel("history-transcript")}[data-session-id="g7"]`);
    await app.close();
  });

  for (const [scheme, width] of [
    ["light", 1440],
    ["dark", 800],
  ]) {
    test(`the transcript shows the chat's messages and tool cards, no plumbing (${scheme}, ${width} px)`, async () => {
      const app = await openPlumbing({ colorScheme: scheme });
      await app.page.setViewportSize({ width, height: 900 });
      await openBrowser(app);
      await app.page.locator(`${sel("history-session")}[data-session-id="g7"]`).click();
      const transcript = `${sel("history-transcript")}[data-session-id="g7"]`;
      await app.page.waitForSelector(`${transcript} ${sel("tool-card")}`);
      // Markdown rendered by the chat's component.
      const model = app.page.locator(`${transcript} ${sel("message-model")}`).first();
      assert.equal(await model.locator("strong").innerText(), "okapi");
      assert.equal(await model.locator("code").innerText(), "striped");
      assert.equal(await model.locator("li").count(), 2);
      // Tool cards, not function-call JSON; the results as people see them.
      const cards = await app.page.locator(`${transcript} ${sel("tool-card")}`).evaluateAll((els) => els.map((e) => [e.dataset.tool, e.dataset.state]));
      assert.deepEqual(cards, [
        ["write_file", "success"],
        ["run_shell_command", "success"],
      ]);
      const shell = app.page.locator(`${transcript} ${sel("tool-card")}[data-tool="run_shell_command"] ${sel("tool-result")}`);
      assert.equal(await shell.innerText(), "1 okapi.md");
      const text = await allText(app, transcript);
      for (const bad of ["untrusted_context", "PGID", '{"file_path"', "write_file {", "**okapi**", "The user modified the proposed change"]) {
        assert.ok(!text.includes(bad), `${bad} shown in the transcript: ${text}`);
      }
      // Each stored message keeps its row (paging and search hits address them by seq).
      assert.deepEqual(await app.tid("history-message").evaluateAll((els) => els.map((e) => e.dataset.kind)), ["prompt", "model", "tool_result", "model"]);
      await app.page.screenshot({ path: screenshotPath(`history-transcript-rendered-${scheme}-${width}.png`) });
      await app.close();
    });
  }

  // Issue 34: a command that exited non-zero is a failed card live (tool-cards.test.mjs), and the
  // same in a reopened conversation and in the history browser, from the stored exit code.
  test("a stored command that exited non-zero is a failed card, reopened and in the browser", async () => {
    const app = await openPlumbing({ last: "g7", shellExit: 1 });
    const shellIn = (scope) => app.page.locator(`${scope} ${sel("tool-card")}[data-tool="run_shell_command"]`);
    const chat = sel("message-list");
    await app.page.waitForSelector(`${chat} ${sel("tool-card")}[data-tool="run_shell_command"]`);
    assert.equal(await shellIn(chat).getAttribute("data-state"), "error");
    assert.match(await shellIn(chat).getByTestId("tool-state").innerText(), /^Failed/);
    assert.equal(await shellIn(chat).getByTestId("tool-exit-code").innerText(), "exit 1");
    await openBrowser(app);
    await app.page.locator(`${sel("history-session")}[data-session-id="g7"]`).click();
    const transcript = `${sel("history-transcript")}[data-session-id="g7"]`;
    await app.page.waitForSelector(`${transcript} ${sel("tool-card")}[data-tool="run_shell_command"]`);
    assert.equal(await shellIn(transcript).getAttribute("data-state"), "error");
    await app.close();
  });

  for (const [scheme, width] of [
    ["light", 1440],
    ["dark", 800],
  ]) {
    test(`a reopened session shows the live chat's items, no plumbing (${scheme}, ${width} px)`, async () => {
      const app = await openPlumbing({ last: "g7", colorScheme: scheme, viewport: { width, height: 820 } });
      assert.equal(app.callsOf("start_session")[0].args.resume, "g7");
      const chat = sel("message-list");
      await app.page.waitForSelector(`${chat} ${sel("tool-card")}[data-tool="run_shell_command"]`);
      const cards = await app.page.locator(`${chat} ${sel("tool-card")}`).evaluateAll((els) => els.map((e) => [e.dataset.tool, e.dataset.state]));
      assert.deepEqual(cards, [
        ["write_file", "success"],
        ["run_shell_command", "success"],
      ]);
      assert.equal(await app.page.locator(`${chat} ${sel("tool-card")}[data-tool="run_shell_command"] ${sel("tool-result")}`).innerText(), "1 okapi.md");
      assert.deepEqual(await app.page.locator(`${chat} ${sel("message-model")}`).allInnerTexts(), ["The okapi is striped:\n\nlegs\nears", "Saved."]);
      assert.equal(await app.page.locator(`${chat} ${sel("turn-footer")}`).count(), 1);
      const text = await allText(app, chat);
      for (const bad of ["untrusted_context", "PGID", '{"file_path"', "write_file {", "**okapi**", "The user modified the proposed change"]) {
        assert.ok(!text.includes(bad), `${bad} shown in the chat: ${text}`);
      }
      await app.page.screenshot({ path: screenshotPath(`resumed-chat-${scheme}-${width}.png`) });
      await app.close();
    });
  }

  test("a hit on a tool result is marked on its call's card, not on the empty result row", async () => {
    const app = await openPlumbing({ resultText: "1 okapi.md" });
    await openBrowser(app);
    await app.tid("history-search").fill("1 okapi");
    const hit = app.page.locator(`${sel("history-hit")}[data-session-id="g7"][data-seq="3"]`);
    await hit.waitFor();
    await hit.click();
    const card = app.page.locator(`${sel("history-call")}[data-call-id="s1"]`);
    await card.locator(sel("transcript-hit")).first().waitFor();
    assert.equal((await card.locator(sel("transcript-hit")).first().innerText()).toLowerCase(), "1 okapi");
    assert.ok(await card.evaluate((el) => el.classList.contains("focus")), "the card carries the hit's outline");
    const other = app.page.locator(`${sel("history-call")}[data-call-id="w1"]`);
    assert.equal(await other.evaluate((el) => el.classList.contains("focus")), false, "not the other call's card");
    const row = app.page.locator(`${sel("history-message")}[data-seq="3"]`);
    assert.equal(await row.evaluate((el) => el.classList.contains("focus")), false, "the empty result row has no outline");
    await app.page.screenshot({ path: screenshotPath("history-transcript-hit-on-card.png") });
    await app.close();
  });

  test("a search hit is marked inside its message and scrolled into view", async () => {
    const app = await openPlumbing();
    await openBrowser(app);
    await app.tid("history-search").fill("okapi");
    const hit = app.page.locator(`${sel("history-hit")}[data-session-id="g7"][data-seq="2"]`);
    await hit.waitFor();
    await hit.click();
    const mark = app.page.locator(`${sel("history-message")}[data-seq="2"] ${sel("transcript-hit")}`);
    await mark.first().waitFor();
    assert.equal((await mark.first().innerText()).toLowerCase(), "okapi");
    // Inside the rendered answer (in its <strong>), not around the message.
    assert.equal(await mark.first().evaluate((el) => el.parentElement?.tagName), "STRONG");
    // Only in the hit's message.
    assert.equal(await app.page.locator(`${sel("history-message")}[data-seq="1"] ${sel("transcript-hit")}`).count(), 0);
    await app.until(() => {
      const el = document.querySelector('[data-testid="transcript-hit"]');
      const box = document.querySelector('[data-testid="history-messages"]');
      if (!el || !box) return false;
      const a = el.getBoundingClientRect();
      const b = box.getBoundingClientRect();
      return a.top >= b.top && a.bottom <= b.bottom;
    });
    await app.page.screenshot({ path: screenshotPath("history-transcript-hit.png") });
    // A long transcript: the hit deep inside is scrolled to.
    await app.tid("history-search").fill("question 121");
    const deep = app.page.locator(`${sel("history-hit")}[data-session-id="a1"][data-seq="121"]`);
    await deep.waitFor();
    await deep.click();
    await app.page.locator(`${sel("history-message")}[data-seq="121"] ${sel("transcript-hit")}`).first().waitFor();
    await app.until(() => {
      const el = document.querySelector('[data-testid="history-message"][data-seq="121"] [data-testid="transcript-hit"]');
      const box = document.querySelector('[data-testid="history-messages"]');
      if (!el || !box) return false;
      const a = el.getBoundingClientRect();
      const b = box.getBoundingClientRect();
      return a.top >= b.top && a.bottom <= b.bottom;
    });
    await app.close();
  });
});

describe("reopening the last session", () => {
  test("the app resumes the workspace's last session and shows its last messages", async () => {
    const app = await openWithHistory({ last: "c3" });
    const last = app.callsOf("history_last_session")[0];
    assert.deepEqual(last.args, { workspace: WS });
    const start = app.callsOf("start_session")[0];
    assert.equal(start.args.resume, "c3");
    await waitForText(app.page, sel("message-user"), "question 1 about the okapi");
    await waitForText(app.page, sel("message-model"), "answer 2");
    await app.close();
  });

  test("a long reopened session renders its last messages first, without the view jumping", async () => {
    // Records the order in which the chat's messages enter the page, and each frame's distance
    // of the view from the bottom, from before the app starts.
    function observe() {
      window.__gdInserted = [];
      window.__gdGaps = [];
      const pick = '[data-testid="message-user"], [data-testid="message-model"]';
      new MutationObserver((records) => {
        for (const r of records) {
          for (const n of r.addedNodes) {
            if (!(n instanceof Element)) continue;
            for (const el of [n, ...n.querySelectorAll(pick)]) {
              if (el.matches(pick) && !el.closest('[data-testid="history-panel"]')) window.__gdInserted.push(el.textContent?.trim());
            }
          }
        }
      }).observe(document, { childList: true, subtree: true });
      const frame = () => {
        const s = document.querySelector('[data-testid="scroller"]');
        const count = Number(document.querySelector('[data-testid="message-list"]')?.getAttribute("data-count") ?? 0);
        if (s && count > 0) window.__gdGaps.push([count, Math.round(s.scrollHeight - s.scrollTop - s.clientHeight)]);
        if (window.__gdGaps.length < 120) requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    }
    const init = new Function("arg", `(${installHistory.toString()})(arg); (${observe.toString()})();`);
    const app = await env.open({ init: [init, { data: fakeHistory(Date.now()), last: "a1" }] });
    assert.equal(app.callsOf("start_session")[0].args.resume, "a1");
    // The last page of the session: messages 151..200.
    await waitForText(app.page, `${sel("message-list")} ${sel("message-model")}`, "answer 200");
    const total = await app.until(() => {
      const list = document.querySelector('[data-testid="message-list"]');
      const n = Number(list?.getAttribute("data-count"));
      return window.__gdGaps.length >= 60 ? n : false;
    });
    const inserted = await app.page.evaluate(() => window.__gdInserted);
    const last = inserted.indexOf("answer 200");
    const first = inserted.indexOf("question 151 about the okapi");
    assert.ok(last >= 0, "the last answer was rendered");
    assert.ok(first === -1 || first > last, `the first message came before the last: ${JSON.stringify(inserted.slice(0, 12))}`);
    // Older items were added above over several frames, the view staying at the bottom.
    const gaps = await app.page.evaluate(() => window.__gdGaps);
    const counts = [...new Set(gaps.map(([n]) => n))];
    assert.ok(counts.length >= 2 && counts[0] < total, `rendered progressively: ${JSON.stringify(counts)} of ${total}`);
    for (const [n, gap] of gaps) assert.ok(gap <= 40, `the view left the bottom (${gap} px) with ${n} items`);
    // All of it is there: scrolling to the top (Home, as a user does) shows the first message
    // of the page.
    await app.tid("scroller").focus();
    await app.page.keyboard.press("Home");
    await waitForText(app.page, `${sel("message-list")} ${sel("message-user")}`, "question 151 about the okapi", { index: 0 });
    await app.close();
  });

  test("without a previous session a new one starts", async () => {
    const app = await openWithHistory();
    assert.equal(app.callsOf("start_session")[0].args.resume, null);
    assert.equal(await app.tid("message-user").count(), 0);
    await app.close();
  });
});

describe("restore from a transcript", () => {
  const call = (app, id) => app.page.locator(`${sel("history-call")}[data-call-id="${id}"]`);

  async function openEdits(app, id) {
    await openBrowser(app);
    await app.page.locator(`${sel("history-session")}[data-session-id="${id}"]`).click();
    await call(app, `${id}-edit`).getByTestId("history-restore-checkpoint").waitFor();
  }

  test("an edit with a checkpoint offers Restore; code only goes through the current session", async () => {
    const app = await openWithHistory();
    await openEdits(app, "e5");
    assert.equal(await app.tid("history-restore-checkpoint").count(), 1, "only the checkpointed edit");
    assert.equal(await call(app, "e5-read").getByTestId("history-restore-checkpoint").count(), 0);
    await call(app, "e5-edit").getByTestId("history-restore-checkpoint").click();
    await app.tid("history-restore-confirm").waitFor();
    assert.deepEqual(await app.tid("history-restore-file").allInnerTexts(), ["a.txt"]);
    for (const id of ["history-restore-code", "history-restore-conversation", "history-restore-both"]) {
      assert.equal(await app.tid(id).isEnabled(), true, `${id} is enabled`);
    }
    // The chat's own controls are not these.
    assert.equal(await app.tid("restore-confirm").count(), 0);
    await app.tid("history-transcript").screenshot({ path: screenshotPath("history-restore-confirm.png") });
    const from = app.calls.length;
    await app.tid("history-restore-code").click();
    const restore = await app.waitForOp("restore_checkpoint", () => true, { from });
    assert.deepEqual(restore.args, { sessionId: "s1", checkpoint_id: "cp-e5", code: true, conversation: false });
    assert.equal(app.callsOf("start_session").length, 1, "same folder, code only: nothing is resumed");
    await waitForText(app.page, sel("history-restore-result"), "Restoring…");
    await app.emit(E.checkpointRestored("cp-e5", [["a.txt", "reverted"]]));
    await waitForText(app.page, sel("history-restore-result-text"), "Restored 1 file to before this edit");
    assert.equal(await app.tid("history-restore-files").innerText(), "a.txt reverted");
    await app.close();
  });

  test("code and conversation resume the edit's session first; the transcript drops the undone turn", async () => {
    const app = await openWithHistory();
    await openEdits(app, "e5");
    await call(app, "e5-edit").getByTestId("history-restore-checkpoint").click();
    const from = app.calls.length;
    await app.tid("history-restore-both").click();
    const start = await app.waitForCall("start_session", () => true, { from });
    assert.equal(start.args.resume, "e5");
    const restore = await app.waitForOp("restore_checkpoint", () => true, { from });
    assert.deepEqual(restore.args, { sessionId: "e5", checkpoint_id: "cp-e5", code: true, conversation: true });
    // The chat behind shows the resumed session (the transcript shows messages with the chat's
    // components too: look in the chat's list).
    await waitForText(app.page, `${sel("message-list")} ${sel("message-user")}`, "change a.txt");
    await app.emit(E.checkpointRestored("cp-e5", [["a.txt", "reverted"]], { conversation: { message_id: "e5-m3", removed: 4 } }));
    await waitForText(app.page, sel("history-status"), "Restored 1 file and the conversation to before this edit");
    await app.until(() => document.querySelectorAll('[data-testid="history-message"]').length === 2);
    assert.deepEqual(await app.tid("history-message").evaluateAll((els) => els.map((e) => e.dataset.seq)), ["1", "2"]);
    // The chat dropped the turn too.
    await app.until(
      () =>
        [...document.querySelectorAll('[data-testid="message-list"] [data-testid="message-user"]')].map((e) => e.textContent?.trim()).join("|") ===
        "remember the okapi",
    );
    await app.tid("history-panel").screenshot({ path: screenshotPath("history-restored.png") });
    await app.close();
  });

  test("an edit of another folder's session opens that folder and resumes the session", async () => {
    const app = await openWithHistory();
    await openEdits(app, "f6");
    await call(app, "f6-edit").getByTestId("history-restore-checkpoint").click();
    const from = app.calls.length;
    await app.tid("history-restore-code").click();
    const open = await app.waitForCall("open_workspace", () => true, { from });
    assert.deepEqual(open.args, { path: OTHER });
    const start = await app.waitForCall("start_session", () => true, { from });
    assert.equal(start.args.resume, "f6");
    const restore = await app.waitForOp("restore_checkpoint", () => true, { from });
    assert.deepEqual(restore.args, { sessionId: "f6", checkpoint_id: "cp-f6", code: true, conversation: false });
    await waitForText(app.page, sel("workspace-path"), OTHER);
    await app.emit(E.checkpointError("cp-f6", "Cannot restore checkpoint cp-f6: no checkpoint cp-f6"));
    await waitForText(app.page, sel("history-restore-result-text"), "Could not restore: Cannot restore checkpoint cp-f6: no checkpoint cp-f6");
    await app.close();
  });

  test("Resume of another folder's session opens that folder first", async () => {
    const app = await openWithHistory();
    await openBrowser(app);
    await app.page.locator(`${sel("history-session")}[data-session-id="b2"]`).click();
    const from = app.calls.length;
    await app.tid("history-resume").click();
    const open = await app.waitForCall("open_workspace", () => true, { from });
    assert.deepEqual(open.args, { path: OTHER });
    const start = await app.waitForCall("start_session", () => true, { from });
    assert.equal(start.args.resume, "b2");
    await waitForText(app.page, sel("workspace-path"), OTHER);
    await app.close();
  });
});
