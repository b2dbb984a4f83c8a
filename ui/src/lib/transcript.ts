// Stored messages (gd-store's transcript records) → the entries the chat shows, in order: the
// same user messages, answers, thoughts, tool cards, notices and turn footers the live event
// stream produces (lib/chat.svelte.ts). One conversion for the resumed chat and the history
// browser's transcript, so a reopened conversation looks as it did live.
//
// What the records hold for people and what for the model differ: a model message's searchable
// `text` also names its function calls (`write_file {"file_path": …}`), and a tool result's
// `summary` is the text the model was sent (shell output in `<untrusted_context>` with its
// `Process Group PGID` line, notes for the model). Sessions recorded since the records keep
// the card's own `display`/`error`/`duration_ms` (and `output`/`exit_code`/`declined`/`diff`/
// `sandbox`) show exactly those; older sessions and
// Gemini CLI imports fall back to the summary, cleaned of that plumbing (`cleanToolText`).
//
// Plain data only (no Svelte state), so it is unit-tested on its own (tests/transcript.test.mjs);
// lib/transcript-items.svelte.ts turns the entries into chat items.
import type { StoredMessage } from "../protocol/StoredMessage";
import type { ToolCallRecord } from "../protocol/ToolCallRecord";
import type { McpToolName } from "../protocol/McpToolName";
import type { TurnUsage } from "../protocol/TurnUsage";
import type { TurnEndRecord } from "../protocol/TurnEndRecord";
import type { TurnStatus } from "../protocol/TurnStatus";
import { turnEndNotices } from "./turn-notices";

export type EntryLevel = "error" | "warning" | "info";

/** The final state of a stored tool call (the live card's `data-state` once it finished). */
export type FinalToolState = "success" | "error" | "cancelled";

export interface ToolEntry {
  kind: "tool";
  /** The stored message the call was made in (or answered in, when the call is not loaded). */
  seq: number;
  callId: string;
  name: string;
  args: unknown;
  state: FinalToolState;
  /** `true` once a result record was seen (else the state is a guess). */
  answered: boolean;
  display: string | null;
  error: string | null;
  durationMs: number | null;
  /** The full result people see when it differs from `display` (a command's output). */
  output: string | null;
  /** A shell command's exit code. */
  exitCode: number | null;
  /** Cancelled because the user rejected the call. */
  declined: boolean;
  /** The change an applied edit made (the edit's `ConfirmationDetails`, as the live card got it). */
  diff: unknown;
  /** What decided the call (the protocol's `DecidedBy`, as the live card got it). */
  decidedBy: unknown;
  /** An MCP tool's server and its own name (the card's title). */
  mcp: McpToolName | null;
  /** An `invoke_agent` call's recorded run (the protocol's `SubagentTranscript`, as JSON). */
  subagent: unknown;
  /** A command's sandbox (the protocol's `SandboxUse`, as JSON), as the live card got it. */
  sandbox: unknown;
}

/** A stored turn's usage, summed from its model messages as core sums a live turn's. */
export type UsageTotals = TurnUsage;

export type Entry =
  | { kind: "user"; seq: number; messageId: string; text: string }
  | { kind: "model"; seq: number; text: string }
  | { kind: "thought"; seq: number; subject: string; description: string }
  | ToolEntry
  | { kind: "notice"; seq: number; level: EntryLevel; text: string; retryPrompt?: string }
  | { kind: "footer"; seq: number; usage: UsageTotals; status: TurnStatus; routed: boolean };

/** What a resumed session answers for a call its model made just before the app stopped. */
const NOT_EXECUTED = /^Not executed\b/;

/** Lines of the shell tool's text for the model (crates/core/src/tools/shell/format.rs). */
const SHELL_FIELDS = ["Error", "Exit Code", "Signal", "Background PIDs", "Process Group PGID"] as const;

/** Notes the core appends to a result for the model only. */
const MODEL_NOTES = [
  "The user modified the proposed change before it was applied; the result reflects the user's version.",
];

/**
 * A tool result's text as a person should see it: without the `<untrusted_context>` wrapper,
 * the shell's `Output:`/`Process Group PGID:` fields (the output itself is kept; an empty one
 * says what happened instead, as the live card does) and notes meant for the model.
 */
export function cleanToolText(text: string): string {
  let t = text;
  const open = t.indexOf("<untrusted_context>");
  if (open >= 0) {
    const before = t.slice(0, open).trim();
    const close = t.indexOf("</untrusted_context>", open);
    const inner = t.slice(open + "<untrusted_context>".length, close >= 0 ? close : undefined).replace(/^\n/, "").replace(/\n$/, "");
    const after = close >= 0 ? t.slice(close + "</untrusted_context>".length).trim() : "";
    t = [before, shellText(inner), after].filter((s) => s !== "").join("\n");
  } else if (/^Output: /.test(t) && /\nProcess Group PGID: \d+\s*$/.test(t)) {
    t = shellText(t);
  } else if (/^Command: .*\n(Directory: .*\n)?Output: /.test(t)) {
    // Older Gemini CLI recordings: `Command:`, `Directory:`, `Output:`, then the other fields.
    t = shellText(t.slice(t.indexOf("Output: ")));
  }
  // The truncation note tells the model where the full output is and how to read it.
  t = t.replace(/\[\.\.\. output truncated:[^\]]*\]/g, "[… output truncated …]");
  for (const note of MODEL_NOTES) t = t.split(note).join("");
  // Any stray wrapper tag or process-group line (e.g. a summary cut inside the wrapper).
  t = t.replace(/<\/?untrusted_context>/g, "").replace(/^Process Group PGID: \d+$/gm, "");
  return t.replace(/\n{3,}/g, "\n\n").trim();
}

/** The shell's `Name: value` lines for the model → the live card's text (format.rs `display_text`). */
function shellText(inner: string): string {
  if (inner.startsWith("Command was cancelled by the user before it finished.")) {
    const at = inner.indexOf("Output until then:\n");
    return at >= 0 ? `Command cancelled.\n\nOutput before cancellation:\n${inner.slice(at + 19)}` : "Command cancelled.";
  }
  if (!inner.startsWith("Output: ")) return inner;
  const fields: Record<string, string> = {};
  let body = inner.slice("Output: ".length);
  // Fields follow the output, one line each, in a fixed order: peel them off the end.
  for (;;) {
    const nl = body.lastIndexOf("\n");
    if (nl < 0) break;
    const line = body.slice(nl + 1);
    const field = SHELL_FIELDS.find((f) => line.startsWith(`${f}: `));
    if (!field) break;
    const value = line.slice(field.length + 2);
    if (value !== "(none)") fields[field] = value;
    body = body.slice(0, nl);
  }
  const output = body === "(empty)" ? "" : body;
  if (output) return output;
  if (fields.Signal) return `Command terminated by signal ${fields.Signal}.`;
  if (fields.Error) return `Command failed: ${fields.Error}`;
  if (fields["Exit Code"] && fields["Exit Code"] !== "0") return `Command exited with code ${fields["Exit Code"]}.`;
  return "";
}

interface Part {
  text?: unknown;
  thought?: unknown;
  functionCall?: unknown;
}

/**
 * A model message's answer text: its text parts (not thoughts) when the parts were read, else
 * the searchable text without the lines naming its function calls.
 */
export function modelText(m: StoredMessage): string {
  if (Array.isArray(m.parts)) {
    return (m.parts as Part[])
      .filter((p) => p && typeof p === "object" && p.thought !== true && typeof p.text === "string")
      .map((p) => p.text as string)
      .join("");
  }
  if (m.tool_calls.length === 0) return m.text;
  const lines = m.text.split("\n");
  const names = new Set(m.tool_calls.map((c) => c.name));
  const joined = m.tool_calls.map((c) => c.name).join(" ");
  // Gemini Desktop: one `name <argument values>` line per call (older records: `name {json}`);
  // Gemini CLI imports: the names on one line.
  let calls = m.tool_calls.length;
  while (lines.length > 0 && calls > 0) {
    const last = lines[lines.length - 1]!;
    const space = last.indexOf(" ");
    const head = space < 0 ? last : last.slice(0, space);
    if (last === joined) {
      lines.pop();
      break;
    }
    if (!names.has(head)) break;
    lines.pop();
    calls--;
  }
  return lines.join("\n");
}

/** The last entry shown for a message at or before `seq` (-1: none). */
function lastIndexAtOrBefore(entries: Entry[], seq: number): number {
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.seq <= seq) return i;
  return -1;
}

/** A turn end's record, when its parts were read and are one. */
function turnEnd(parts: unknown): TurnEndRecord | null {
  if (!parts || typeof parts !== "object" || Array.isArray(parts)) return null;
  const end = parts as Partial<TurnEndRecord>;
  if (typeof end.status !== "string" || !end.usage) return null;
  return { ...end, notices: Array.isArray(end.notices) ? end.notices : [] } as TurnEndRecord;
}

function finalState(status: string | null | undefined): FinalToolState {
  return status === "error" || status === "cancelled" ? status : "success";
}

function text(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const t = cleanToolText(value);
  return t === "" ? null : t;
}

/** Applies a result record (or the extra fields of a call record) to a tool entry. */
function applyResult(entry: ToolEntry, record: ToolCallRecord): void {
  if (record.status) {
    entry.state = finalState(record.status);
    entry.answered = true;
  }
  const recorded = record.display !== undefined || record.error !== undefined || record.duration_ms !== undefined;
  if (recorded) {
    // Recorded as the card showed it.
    if (record.display !== undefined) entry.display = text(record.display);
    if (record.error !== undefined) entry.error = text(record.error);
  } else if (record.status && record.summary && entry.display === null && entry.error === null) {
    // An older record: only the model's text, cleaned.
    if (entry.state === "success") entry.display = text(record.summary);
    else entry.error = text(record.summary);
  }
  if (record.duration_ms !== undefined && record.duration_ms !== null) entry.durationMs = record.duration_ms;
  if (record.output !== undefined && record.output !== null) entry.output = record.output;
  if (record.exit_code !== undefined && record.exit_code !== null) entry.exitCode = record.exit_code;
  if (record.declined) entry.declined = true;
  if (record.diff !== undefined && record.diff !== null) entry.diff = record.diff;
  if (record.mcp) entry.mcp = record.mcp;
  if (record.decided_by !== undefined && record.decided_by !== null) entry.decidedBy = record.decided_by;
  if (record.subagent !== undefined && record.subagent !== null) entry.subagent = record.subagent;
  if (record.sandbox !== undefined && record.sandbox !== null) entry.sandbox = record.sandbox;
  if (entry.error && NOT_EXECUTED.test(entry.error) && entry.state === "cancelled") entry.display = null;
}

/** A call's card before its result is applied: finished, nothing shown yet. */
function toolEntry(seq: number, call: ToolCallRecord, args: unknown): ToolEntry {
  return {
    kind: "tool",
    seq,
    callId: call.call_id,
    name: call.name,
    args,
    state: "success",
    answered: false,
    display: null,
    error: null,
    durationMs: null,
    output: null,
    exitCode: null,
    declined: false,
    diff: null,
    decidedBy: null,
    mcp: null,
    subagent: null,
    sandbox: null,
  };
}

export interface EntryOptions {
  /** Later messages exist that are not given (a page): unanswered calls may be answered there. */
  hasAfter?: boolean;
}

/** Stored messages (consecutive, oldest first) → chat entries, in order. */
export function transcriptEntries(messages: StoredMessage[], options: EntryOptions = {}): Entry[] {
  const out: Entry[] = [];
  const tools = new Map<string, ToolEntry>();
  /** The turn being read: its start, its last message (where its footer goes) and usage. */
  let turn: { seq: number; start: number; last: number; usage: UsageTotals } | null = null;
  /** The prompt of the turn being read (a failed turn's Retry sends it again). */
  let prompt = "";
  let summarised = false;

  const endTurn = () => {
    // Only with the turn's usage known (a footer of zeros would say nothing).
    if (turn && turn.usage.requests > 0) {
      out.push({ kind: "footer", seq: turn.seq, usage: { ...turn.usage, duration_ms: turn.last - turn.start }, status: "completed", routed: false });
    }
    turn = null;
  };

  for (const m of messages) {
    if (m.kind !== "summary") summarised = false;
    switch (m.kind) {
      case "prompt": {
        // A prompt that is only session context (Gemini CLI imports) is not the user's.
        const typed = m.text.trim() === "" ? "" : m.text;
        if (!typed) break;
        endTurn();
        prompt = typed;
        out.push({ kind: "user", seq: m.seq, messageId: m.id, text: typed });
        turn = {
          seq: m.seq,
          start: m.created_ms,
          last: m.created_ms,
          usage: { model: "", requests: 0, prompt_tokens: 0, cached_tokens: 0, output_tokens: 0, thoughts_tokens: 0, total_tokens: 0, duration_ms: 0, tool_tokens: 0 },
        };
        break;
      }
      case "model": {
        for (const t of m.thoughts) out.push({ kind: "thought", seq: m.seq, subject: t.subject || "Thinking", description: t.description });
        const answer = modelText(m);
        if (answer.trim()) out.push({ kind: "model", seq: m.seq, text: answer });
        for (const call of m.tool_calls) {
          const entry = toolEntry(m.seq, call, call.args ?? null);
          // Gemini CLI imports keep the call's status and display on the call itself.
          applyResult(entry, call);
          tools.set(call.call_id, entry);
          out.push(entry);
        }
        if (turn) {
          turn.last = m.created_ms;
          turn.seq = m.seq;
          if (m.usage) {
            turn.usage.model = m.model ?? turn.usage.model;
            turn.usage.prompt_tokens += m.usage.prompt;
            turn.usage.output_tokens += m.usage.output;
            turn.usage.cached_tokens += m.usage.cached;
            turn.usage.thoughts_tokens += m.usage.thoughts;
            turn.usage.total_tokens += m.usage.total;
            turn.usage.requests += 1;
          }
        }
        break;
      }
      case "tool_result":
        for (const call of m.tool_calls) {
          let entry = tools.get(call.call_id);
          if (!entry) {
            // Its call is on an earlier page (or was not recorded): a card from the result alone,
            // as the live chat shows a response without a request.
            entry = toolEntry(m.seq, call, null);
            tools.set(call.call_id, entry);
            out.push(entry);
          }
          applyResult(entry, call);
        }
        if (turn) {
          turn.last = m.created_ms;
          turn.seq = m.seq;
        }
        break;
      case "turn_end": {
        // Recorded since turn ends are: the turn's notices and footer exactly as they were shown.
        const end = turnEnd(m.parts);
        if (!end) break;
        for (const n of turnEndNotices(end.status, end.notices)) {
          const entry: Entry = { kind: "notice", seq: n.afterSeq ?? m.seq, level: n.level, text: n.text, ...(n.failed && prompt ? { retryPrompt: prompt } : {}) };
          // Where it showed live: after the message it followed (and any notice before it there).
          const after = n.afterSeq === null ? -1 : lastIndexAtOrBefore(out, n.afterSeq);
          if (after < 0 || after === out.length - 1) out.push(entry);
          else out.splice(after + 1, 0, entry);
        }
        out.push({ kind: "footer", seq: m.seq, usage: end.usage, status: end.status, routed: end.routed ?? false });
        turn = null;
        break;
      }
      case "summary":
        if (!summarised) out.push({ kind: "notice", seq: m.seq, level: "info", text: "Older messages were summarised to save context." });
        summarised = true;
        break;
    }
  }
  // The last turn's footer only once it is known to be over.
  if (!options.hasAfter) endTurn();
  // A call never answered in a complete transcript did not run.
  if (!options.hasAfter) {
    for (const entry of tools.values()) {
      if (!entry.answered) entry.state = "cancelled";
    }
  }
  return out;
}
