// Subagents (`invoke_agent`): each run is nested under the parent's call card. Core wraps the
// subagent's own stream in `subagent` events between `subagent_started` and
// `subagent_finished`, keyed by the parent's call id; this store keeps one run per call.
//
// A run's stream is a ChatStore of its own: the nested thoughts, answer and tool cards are the
// same item objects the main chat builds, so the card renders them with the main chat's
// components (nothing re-implemented). Its confirmations go to the conversation's one queue
// (events.ts), labelled with the agent, so they are as prominent as the parent's.
import * as api from "../api";
import type { Event } from "../protocol/Event";
import type { SubagentStatus } from "../protocol/SubagentStatus";
import type { SubagentTranscript } from "../protocol/SubagentTranscript";
import type { TurnUsage } from "../protocol/TurnUsage";
import { type ChatEvent, ChatStore } from "./chat.svelte";
import type { SessionStore } from "./session.svelte";

export type RunStatus = SubagentStatus | "running";

/** The nested events a run's chat shows (the others are routed elsewhere or not shown). */
const CHAT_EVENTS = new Set<string>([
  "thought",
  "content_delta",
  "tool_call_request",
  "tool_call_state",
  "tool_call_output",
  "tool_call_response",
  "tool_call_decided",
  "retrying",
  "loop_detected",
  "warning",
  "error",
  "finished",
]);

export class SubagentRun {
  /** The nested stream, as chat items. */
  readonly chat = new ChatStore();
  status = $state<RunStatus>("running");
  /** Tokens so far: summed from the nested `usage` events, then the final figure. */
  tokens = $state(0);
  /** Set once finished (from the final usage); while running the card counts from `startedAt`. */
  durationMs = $state<number | null>(null);
  result = $state<string | null>(null);
  error = $state<string | null>(null);
  /** The user's choice of showing the stream (null: automatic, open while it asks). */
  open = $state<boolean | null>(null);
  /** The user pressed Stop and the answer has not come yet. */
  stopping = $state(false);
  readonly startedAt: number;

  constructor(
    readonly parentCallId: string,
    readonly agentName: string,
    readonly displayName: string | null,
    readonly model: string,
    readonly prompt: string,
    startedAt = Date.now(),
  ) {
    this.startedAt = startedAt;
  }

  /** What the card calls it: the display name, else the name. */
  get label(): string {
    return this.displayName || this.agentName;
  }

  get running(): boolean {
    return this.status === "running";
  }

  /** Applies one of the subagent's own events. */
  apply(event: Event): void {
    if (event.type === "usage") {
      this.tokens += event.total_tokens;
      return;
    }
    if (CHAT_EVENTS.has(event.type)) this.chat.handle(event as ChatEvent);
  }

  /** Asks core to stop the run (its `subagent_finished` says how it ended); the error, if any. */
  async stop(session: SessionStore): Promise<string | null> {
    if (!this.running || this.stopping || !session.info) return null;
    this.stopping = true;
    try {
      await session.submit({ type: "cancel_subagent", parent_call_id: this.parentCallId });
      return null;
    } catch (error) {
      this.stopping = false;
      return `Could not stop the agent: ${api.errorMessage(error)}`;
    }
  }

  finish(status: SubagentStatus, usage: TurnUsage, result: string | null, error: string | null): void {
    this.chat.flush();
    this.chat.handle({ type: "turn_started", turn_id: "" });
    // Calls still waiting when it ended will not run now.
    for (const item of this.chat.items) {
      if (item.kind === "tool" && (item.state === "awaiting_approval" || item.state === "scheduled" || item.state === "validating" || item.state === "executing")) {
        if (status !== "completed") item.state = "cancelled";
      }
      if (item.kind === "model") item.streaming = false;
    }
    this.status = status;
    this.tokens = usage.total_tokens || this.tokens;
    this.durationMs = usage.duration_ms || (this.startedAt ? Date.now() - this.startedAt : 0);
    this.result = result;
    this.error = error;
    this.stopping = false;
  }
}

/** The status as words. */
export function statusLabel(status: RunStatus): string {
  switch (status) {
    case "running":
      return "Running";
    case "completed":
      return "Completed";
    case "cancelled":
      return "Cancelled";
    case "turn_limit":
      return "Turn limit reached";
    case "timeout":
      return "Timed out";
    case "failed":
      return "Failed";
  }
}

/** `1m 05s`, `12s`. */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return `${m}m ${String(s % 60).padStart(2, "0")}s`;
}

export class SubagentStore {
  /** Runs by the parent's call id (a plain map: each run's fields are reactive on their own). */
  private readonly runs = new Map<string, SubagentRun>();

  constructor(
    /** The workspace, to show the nested tools' paths relative to it. */
    private readonly workspace: () => string | null = () => null,
  ) {}

  run(parentCallId: string): SubagentRun | undefined {
    return this.runs.get(parentCallId);
  }

  started(event: Extract<Event, { type: "subagent_started" }>): SubagentRun {
    const run = new SubagentRun(event.parent_call_id, event.agent_name, event.display_name ?? null, event.model, event.prompt);
    run.chat.workspace = this.workspace();
    this.runs.set(event.parent_call_id, run);
    return run;
  }

  /** A nested event; a run not announced (joined mid-way) is created on the fly. */
  nested(event: Extract<Event, { type: "subagent" }>): SubagentRun {
    let run = this.runs.get(event.parent_call_id);
    if (!run) {
      run = new SubagentRun(event.parent_call_id, event.agent_name, null, "", "");
      run.chat.workspace = this.workspace();
      this.runs.set(event.parent_call_id, run);
    }
    run.apply(event.event);
    return run;
  }

  finished(event: Extract<Event, { type: "subagent_finished" }>): SubagentRun | undefined {
    const run = this.runs.get(event.parent_call_id);
    run?.finish(event.status, event.usage, event.result ?? null, event.error ?? null);
    return run;
  }

  /** The parent's turn ended: a run still shown as running did not get its end (cancelled). */
  turnEnded(): void {
    for (const run of this.runs.values()) {
      if (run.running) run.finish("cancelled", emptyUsage(run.model), null, null);
    }
  }

  clear(): void {
    this.runs.clear();
  }
}

/**
 * The clock of every running card: one timer for the whole window, ticking once a second while
 * at least one running card is shown (`watch` returns the release), so elapsed times move
 * without any event re-rendering the cards.
 */
class Clock {
  now = $state(Date.now());
  private users = 0;
  private timer: ReturnType<typeof setInterval> | null = null;

  watch(): () => void {
    this.users++;
    this.now = Date.now();
    this.timer ??= setInterval(() => (this.now = Date.now()), 1000);
    return () => {
      this.users--;
      if (this.users === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = null;
      }
    };
  }
}

export const clock = new Clock();

function emptyUsage(model: string): TurnUsage {
  return { model, requests: 0, prompt_tokens: 0, cached_tokens: 0, output_tokens: 0, thoughts_tokens: 0, total_tokens: 0, duration_ms: 0, tool_tokens: 0 };
}

/**
 * A recorded run (a resumed conversation's `invoke_agent` call with `subagent`), rebuilt from its
 * events; null when the record is not a transcript.
 */
export function recordedRun(parentCallId: string, value: unknown, workspace: string | null): SubagentRun | null {
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  if (!value || typeof value !== "object") return null;
  const t = value as Partial<SubagentTranscript>;
  if (typeof t.agent_name !== "string" || !Array.isArray(t.events) || !t.status || !t.usage) return null;
  const run = new SubagentRun(parentCallId, t.agent_name, t.display_name ?? null, t.model ?? "", t.prompt ?? "", 0);
  run.chat.workspace = workspace;
  for (const event of t.events) {
    if (event && typeof event === "object" && typeof (event as Event).type === "string") run.apply(event as Event);
  }
  run.finish(t.status, t.usage, t.result ?? null, t.error ?? null);
  return run;
}
