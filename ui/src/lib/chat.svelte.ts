// The conversation as a list of items, built from a session's events.
//
// Items are class instances whose changing fields are `$state`, held in a `$state.raw` array:
// appending an item only adds a row, and a streaming answer only updates its own `text`, so
// nothing else in the history re-renders. Text deltas are buffered and applied at most once per
// animation frame.
import type { ConfirmationDetails } from "../protocol/ConfirmationDetails";
import type { DecidedBy } from "../protocol/DecidedBy";
import type { Event } from "../protocol/Event";
import type { McpToolRef } from "../protocol/McpToolRef";
import type { SandboxUse } from "../protocol/SandboxUse";
import type { SessionStats } from "../protocol/SessionStats";
import type { StoredMessage } from "../protocol/StoredMessage";
import type { HookRun } from "../protocol/HookRun";
import type { ToolCallState } from "../protocol/ToolCallState";
import type { ToolCallStatus } from "../protocol/ToolCallStatus";
import type { TurnStatus } from "../protocol/TurnStatus";
import type { TurnUsage } from "../protocol/TurnUsage";
import { type Checkpoint, CheckpointStore } from "./checkpoints.svelte";
import { HookRunsItem } from "./hooks.svelte";
import type { Block, MarkdownStream } from "./markdown";
import { markdown } from "./markdown-loader.svelte";
import { describeCall } from "./tools";
import { transcriptEntries } from "./transcript";
import { type RevertState, RevertStore } from "./revert.svelte";
import type { SubagentRun } from "./subagents.svelte";
import { transcriptItems } from "./transcript-items";
import { eventNotice, failedText, type NoticeLevel, statusNotice } from "./turn-notices";

let nextId = 1;

/** An edit's diff (the proposal as applied). */
export type EditDetails = Extract<ConfirmationDetails, { type: "edit" }>;

export class UserItem {
  readonly kind = "user";
  readonly id = nextId++;
  constructor(readonly text: string) {}
}

export class ModelItem {
  readonly kind = "model";
  readonly id = nextId++;
  text = $state("");
  streaming = $state(true);
  /** Renders the answer as it streams, see markdown.ts (created once the renderer is loaded). */
  private stream: MarkdownStream | null = null;

  /**
   * The answer's blocks, or null while the Markdown renderer is still loading (it is asked for
   * here if nobody did yet; see markdown-loader.svelte.ts). Reactive on the text, the renderer
   * and the highlighting languages that come in.
   */
  render(): Block[] | null {
    const module = markdown.module;
    void markdown.languages;
    if (!module) {
      void markdown.load();
      return null;
    }
    this.stream ??= new module.MarkdownStream();
    return this.stream.render(this.text, !this.streaming);
  }
}

export class ThoughtItem {
  readonly kind = "thought";
  readonly id = nextId++;
  constructor(
    readonly subject: string,
    readonly description: string,
  ) {}
}

export class ToolItem {
  readonly kind = "tool";
  readonly id = nextId++;
  state = $state<ToolCallState>("validating");
  /**
   * Live output of a running shell command (the full output so far); once finished, the full
   * result core reports for people (a command's output, a folder's entries, a file's text).
   */
  output = $state<string | null>(null);
  /** A shell command's exit code, as core reports it. */
  exitCode = $state<number | null>(null);
  /** The user rejected the call (core says so; not the same as a stopped turn). */
  declined = $state(false);
  /** The change an edit applied, to show its diff again from the card. */
  diff = $state.raw<EditDetails | null>(null);
  /** What decided the call: a policy rule, the approval mode, an "always allow", the user. */
  decidedBy = $state.raw<DecidedBy | null>(null);
  /** A command's sandbox: whether it ran in it and what it was granted (null: not said). */
  sandbox = $state.raw<SandboxUse | null>(null);
  status = $state<ToolCallStatus | null>(null);
  display = $state<string | null>(null);
  error = $state<string | null>(null);
  durationMs = $state<number | null>(null);
  /** An applied edit's revert from the card (set by the chat store that shows the card). */
  revert = $state.raw<RevertState | null>(null);
  /** The snapshot taken before this edit ran, which the card offers to restore. */
  checkpoint = $state<Checkpoint | null>(null);
  /** An `invoke_agent` call: the subagent's run, nested under it (lib/subagents.svelte.ts). */
  subagent = $state.raw<SubagentRun | null>(null);
  /** The hooks that ran for this call (BeforeTool, AfterTool…), as markers on the card. */
  hookRuns = $state.raw<HookRun[]>([]);
  /** A hook's tail call: the name of the model's call it ran in place of (core's `in_place_of`). */
  inPlaceOf = $state<string | null>(null);
  readonly description: string;
  constructor(
    readonly callId: string,
    readonly name: string,
    readonly args: unknown,
    workspace: string | null,
    /** For an MCP tool: its server and the server's name of it (the card's title). */
    readonly mcp: McpToolRef | null = null,
  ) {
    this.description = describeCall(args, workspace);
  }
}

export type { NoticeLevel };

export class NoticeItem {
  readonly kind = "notice";
  readonly id = nextId++;
  level = $state<NoticeLevel>("info");
  text = $state("");
  /** The prompt of the turn this notice says failed: its Retry sends it again. */
  retryPrompt = $state<string | null>(null);
  /** A prominent notice is a large card (e.g. the session could not start). */
  readonly prominent: boolean;
  readonly title: string | null;
  constructor(level: NoticeLevel, text: string, options: { prominent?: boolean; title?: string } = {}) {
    this.level = level;
    this.text = text;
    this.prominent = options.prominent ?? false;
    this.title = options.title ?? null;
  }
}

/** A turn's footer: what its model requests used, as core summed it (`TurnComplete.usage`). */
export class FooterItem {
  readonly kind = "footer";
  readonly id = nextId++;
  constructor(
    readonly status: TurnStatus,
    readonly usage: TurnUsage,
    /** The session's model was `auto` and routing chose `usage.model`. */
    readonly routed = false,
  ) {}

  get seconds(): number {
    return this.usage.duration_ms / 1000;
  }
}

/** `/compress`: pending until the session answers. */
export type CompressionState = "pending" | "compressed" | "skipped" | "failed";

export class CompressionItem {
  readonly kind = "compression";
  readonly id = nextId++;
  state = $state<CompressionState>("pending");
  text = $state("Compressing chat history…");
}

/** Which part of the statistics `/stats` shows (`/stats session|model|tools`). */
export type StatsView = "session" | "model" | "tools";

export class StatsItem {
  readonly kind = "stats";
  readonly id = nextId++;
  constructor(
    readonly stats: SessionStats,
    readonly view: StatsView,
  ) {}
}

/** The events that change the conversation (the others have their own owners, see events.ts). */
export type ChatEvent = Extract<
  Event,
  {
    type:
      | "session_configured"
      | "turn_started"
      | "thought"
      | "content_delta"
      | "tool_call_request"
      | "tool_call_state"
      | "tool_call_output"
      | "tool_call_response"
      | "retrying"
      | "chat_compressed"
      | "compression_skipped"
      | "loop_detected"
      | "warning"
      | "error"
      | "finished"
      | "turn_complete"
      | "checkpoint_created"
      | "checkpoint_restored"
      | "checkpoint_error"
      | "checkpoints"
      | "message_recorded"
      | "tool_call_decided"
      | "edit_reverted"
      | "revert_conflict"
      | "revert_failed"
      | "model_routed";
  }
>;

export type Item =
  | UserItem
  | ModelItem
  | ThoughtItem
  | ToolItem
  | NoticeItem
  | FooterItem
  | CompressionItem
  | StatsItem
  | HookRunsItem;

/** Restored items shown at once (more than a window's height of rows), then per frame. */
const RESTORE_FIRST = 24;
const RESTORE_CHUNK = 60;

function onFrame(f: () => void): number {
  return typeof requestAnimationFrame === "function" ? requestAnimationFrame(f) : (setTimeout(f, 16) as unknown as number);
}

function cancelFrame(id: number): void {
  if (typeof cancelAnimationFrame === "function") cancelAnimationFrame(id);
  else clearTimeout(id);
}

export class ChatStore {
  items = $state.raw<Item[]>([]);
  /** The workspace root, to show tool paths relative to it. */
  workspace: string | null = null;
  /** The edits' checkpoints and their restores. */
  readonly checkpoints = new CheckpointStore();
  /** Reverting applied edits from their cards. */
  readonly reverts = new RevertStore(() => this.checkpoints.sessionId);

  private answer: ModelItem | null = null;
  private pending = "";
  private frame = 0;
  private readonly tools = new Map<string, ToolItem>();
  private errorNotice: NoticeItem | null = null;
  private retryNotice: NoticeItem | null = null;
  private loopReported = false;
  /** This turn's prompt was routed by `auto` (its footer says so). */
  private routed = false;
  /** The prompt of the turn under way (what a failed turn's Retry sends again). */
  private turnPrompt: string | null = null;
  /** Recorded prompts (message id) and their chat items: a rewind removes from there on. */
  private readonly promptItems = new Map<string, UserItem>();
  /** The prompt the user sent whose `message_recorded` has not arrived yet. */
  private unrecordedUser: UserItem | null = null;
  /** The `/compress` waiting for its answer. */
  private compression: CompressionItem | null = null;
  /**
   * The prompt a rewind took out of the conversation, for the composer to offer again (as
   * Gemini CLI's /rewind does): a new object per rewind, so the same text twice still counts.
   */
  returnedPrompt = $state.raw<{ text: string } | null>(null);

  /** A tool call of the turn under way is executing (a conversation's "running a tool"). */
  get toolRunning(): boolean {
    for (let i = this.items.length - 1; i >= 0; i--) {
      const item = this.items[i];
      if (item instanceof UserItem) return false;
      if (item instanceof ToolItem && item.state === "executing") return true;
    }
    return false;
  }

  private push(item: Item): void {
    if (!(item instanceof ModelItem) && !(item instanceof HookRunsItem)) this.requestHooks = null;
    this.items = [...this.items, item];
  }

  /** Appends several items at once (one update of the list). */
  pushAll(items: Item[]): void {
    this.items = [...this.items, ...items];
  }

  addUser(text: string): UserItem {
    this.flush();
    this.endAnswer();
    const item = new UserItem(text);
    this.push(item);
    this.unrecordedUser = item;
    this.turnPrompt = text;
    return item;
  }

  /**
   * Shows a resumed session's last messages (a transcript page, oldest first) before anything
   * else in the chat, as the live chat showed them (lib/transcript.ts). `hasBefore`: older
   * messages exist (the history browser shows them).
   *
   * Rendered last messages first: the newest items (the visible bottom of the conversation) go
   * in at once, older ones are added above them a chunk per animation frame, so a long restored
   * conversation paints its end without waiting for the rest.
   */
  loadTranscript(messages: StoredMessage[], hasBefore: boolean): void {
    const restored = transcriptItems(transcriptEntries(messages), this.workspace);
    for (const [id, item] of restored.prompts) this.promptItems.set(id, item);
    for (const [callId, tool] of restored.tools) {
      // Its checkpoint, if it has one, comes with the session's `checkpoints`.
      tool.checkpoint = this.checkpoints.list.find((c) => c.callId === callId) ?? null;
      // A resumed edit can be reverted too (core finds its diff in the history).
      if (tool.diff) tool.revert = this.reverts.state(callId);
      this.tools.set(callId, tool);
    }
    const items = restored.items;
    if (hasBefore) items.unshift(new NoticeItem("info", "Earlier messages of this session are in the history (History button)."));
    this.finishRestore();
    const first = items.splice(Math.max(0, items.length - RESTORE_FIRST));
    this.items = [...first, ...this.items];
    if (items.length > 0) {
      this.restoring = items;
      this.restoreFrame = onFrame(() => this.restoreStep());
    }
  }

  /** Older restored items not shown yet (see `loadTranscript`). */
  private restoring: Item[] = [];
  private restoreFrame = 0;

  private restoreStep(): void {
    this.restoreFrame = 0;
    const chunk = this.restoring.splice(Math.max(0, this.restoring.length - RESTORE_CHUNK));
    if (chunk.length > 0) this.items = [...chunk, ...this.items];
    if (this.restoring.length > 0) this.restoreFrame = onFrame(() => this.restoreStep());
  }

  /** Shows what is left of a progressive restore now (before the list changes otherwise). */
  private finishRestore(): void {
    if (this.restoreFrame) cancelFrame(this.restoreFrame);
    this.restoreFrame = 0;
    if (this.restoring.length > 0) this.items = [...this.restoring, ...this.items];
    this.restoring = [];
  }

  /**
   * The conversation was rewound to `messageId` (a checkpoint's conversation
   * restore): the chat drops that prompt and everything after it, and says so with `text`.
   */
  private rewound(messageId: string, removed: number, text: string | null): void {
    this.finishRestore();
    const item = this.promptItems.get(messageId);
    const at = item ? this.items.indexOf(item) : removed > 0 ? 0 : -1;
    if (item) this.returnedPrompt = { text: item.text };
    if (at >= 0) {
      // An unknown prompt is older than everything shown (a resumed session shows its last
      // page): all of it went.
      const kept = new Set(this.items.slice(0, at));
      this.items = this.items.slice(0, at);
      for (const [callId, tool] of this.tools) if (!kept.has(tool)) this.tools.delete(callId);
      if (!item) this.addNotice("info", "Earlier messages of this session are in the history (History button).");
    }
    for (const [id, prompt] of this.promptItems) if (!this.items.includes(prompt)) this.promptItems.delete(id);
    const n = `${removed} message${removed === 1 ? "" : "s"}`;
    this.addNotice("info", text ?? `Rewound the conversation: removed ${n}; the model no longer sees them.`);
  }

  /** `/compress` was sent: a pending line until `chat_compressed` or `compression_skipped`. */
  startCompression(): CompressionItem {
    this.flush();
    const item = new CompressionItem();
    this.compression = item;
    this.push(item);
    return item;
  }

  /** `/stats`: the statistics card. */
  addStats(stats: SessionStats, view: StatsView): void {
    this.flush();
    this.push(new StatsItem(stats, view));
  }

  addNotice(level: NoticeLevel, text: string, options?: { prominent?: boolean; title?: string }): NoticeItem {
    this.flush();
    const item = new NoticeItem(level, text, options);
    this.push(item);
    return item;
  }

  clear(): void {
    if (this.restoreFrame) cancelFrame(this.restoreFrame);
    this.restoreFrame = 0;
    this.restoring = [];
    this.cancelFrame();
    this.pending = "";
    this.answer = null;
    this.tools.clear();
    this.earlyHookRuns.clear();
    this.checkpoints.clear();
    this.items = [];
    this.promptItems.clear();
    this.unrecordedUser = null;
    this.compression = null;
    this.turnPrompt = null;
    this.resetTurn();
  }

  tool(callId: string): ToolItem | undefined {
    return this.tools.get(callId);
  }

  /** The hook line of the model request now answering (see `hookRan`); null once anything but
   * its answer follows it. */
  private requestHooks: HookRunsItem | null = null;

  /** Hook runs for calls whose card is not shown yet (core does not promise the order). */
  private readonly earlyHookRuns = new Map<string, HookRun[]>();

  /**
   * A hook ran: a marker on the card of the call it ran for, else a line in the turn (runs in a
   * row share one line). Its `systemMessage` is for the user: a notice, as 0.61 prints it.
   */
  hookRan(run: HookRun): void {
    this.flush();
    if (run.call_id) {
      const tool = this.tools.get(run.call_id);
      if (tool) tool.hookRuns = [...tool.hookRuns, run];
      else this.earlyHookRuns.set(run.call_id, [...(this.earlyHookRuns.get(run.call_id) ?? []), run]);
    } else if (run.event === "AfterModel" && this.answer && this.requestHooks) {
      // AfterModel runs once per streamed chunk: its runs join the line above the answer
      // instead of cutting the answer into pieces.
      this.requestHooks.runs = [...this.requestHooks.runs, run];
    } else {
      this.endAnswer();
      const last = this.items.at(-1);
      if (last instanceof HookRunsItem) last.runs = [...last.runs, run];
      else this.push(new HookRunsItem(nextId++, run));
      this.requestHooks = this.items.at(-1) as HookRunsItem;
    }
    // 0.61 adds it as an info line, the text as the hook wrote it.
    if (run.system_message) this.addNotice("info", run.system_message);
  }

  /** Applies one event of the conversation (lib/events.ts routes them here). */
  handle(event: ChatEvent): void {
    if (event.type !== "content_delta") this.flush();
    switch (event.type) {
      case "session_configured":
        this.checkpoints.sessionId = event.session_id;
        return;
      case "turn_started":
        this.endAnswer();
        this.resetTurn();
        return;
      case "thought":
        this.endAnswer();
        this.push(new ThoughtItem(event.subject || "Thinking", event.description));
        return;
      case "content_delta":
        this.appendText(event.text);
        return;
      case "tool_call_request": {
        this.endAnswer();
        const item = new ToolItem(event.call_id, event.name, event.args, this.workspace, event.mcp ?? null);
        if (event.in_place_of) item.inPlaceOf = this.tools.get(event.in_place_of)?.name ?? event.in_place_of;
        item.hookRuns = this.earlyHookRuns.get(event.call_id) ?? [];
        this.earlyHookRuns.delete(event.call_id);
        this.tools.set(event.call_id, item);
        this.push(item);
        return;
      }
      case "tool_call_state": {
        const item = this.tools.get(event.call_id);
        if (item) item.state = event.state;
        return;
      }
      case "tool_call_output": {
        const item = this.tools.get(event.call_id);
        if (item) item.output = event.output;
        return;
      }
      case "tool_call_response": {
        let item = this.tools.get(event.call_id);
        if (!item) {
          item = new ToolItem(event.call_id, event.name, null, this.workspace);
          this.tools.set(event.call_id, item);
          this.push(item);
        }
        item.status = event.status;
        item.state = event.status;
        item.display = event.display;
        item.error = event.error;
        item.durationMs = event.duration_ms;
        if (event.output !== undefined) item.output = event.output;
        item.exitCode = event.exit_code ?? null;
        item.declined = event.declined ?? false;
        item.diff = event.diff?.type === "edit" ? event.diff : null;
        // A staged edit (Review at end of turn) wrote nothing: there is nothing to revert.
        const staged = (event.decided_by ?? item.decidedBy)?.kind === "review_mode";
        if (item.diff && !staged) item.revert = this.reverts.state(item.callId);
        if (event.decided_by) item.decidedBy = event.decided_by;
        item.sandbox = event.sandbox ?? null;
        return;
      }
      case "tool_call_decided": {
        const item = this.tools.get(event.call_id);
        if (item) item.decidedBy = event.decided_by;
        return;
      }
      case "retrying": {
        // One notice per turn, updated by each retry (worded in turn-notices.ts).
        const shown = eventNotice(event);
        if (!shown) return;
        if (this.retryNotice) this.retryNotice.text = shown.text;
        else this.retryNotice = this.addNotice(shown.level, shown.text);
        return;
      }
      case "chat_compressed":
        if (this.compression) {
          this.compression.state = "compressed";
          this.compression.text = `Chat history compressed from ${event.original_tokens.toLocaleString("en-US")} to ${event.new_tokens.toLocaleString("en-US")} tokens.`;
          this.compression = null;
        } else {
          this.addNotice(
            "info",
            `Older messages were summarised to save context (${event.original_tokens.toLocaleString()} → ${event.new_tokens.toLocaleString()} tokens).`,
          );
        }
        return;
      case "compression_skipped": {
        const item = this.compression ?? this.startCompression();
        item.state = event.reason === "failed" ? "failed" : "skipped";
        item.text = event.message;
        this.compression = null;
        return;
      }
      case "loop_detected":
      case "warning":
      case "error":
      case "finished": {
        // Worded once, for this and for a reopened conversation (turn-notices.ts).
        const shown = eventNotice(event);
        if (event.type === "loop_detected") this.loopReported = true;
        if (!shown) return;
        const notice = this.addNotice(shown.level, shown.text);
        if (event.type === "error") this.errorNotice = notice;
        return;
      }
      case "turn_complete":
        this.completeTurn(event.status, event.usage);
        return;
      case "checkpoint_created": {
        const item = this.tools.get(event.call_id);
        const checkpoint = this.checkpoints.created(event, item?.name ?? null);
        if (item) item.checkpoint = checkpoint;
        return;
      }
      case "checkpoint_restored": {
        const checkpoint = this.checkpoints.answered(event);
        if (event.conversation) {
          // The turn of the edit went: its card (and result) with it, so the result is a notice.
          this.rewound(event.conversation.message_id, event.conversation.removed, checkpoint?.result ?? null);
        } else if (!checkpoint) {
          const n = event.files.length;
          this.addNotice("info", `Restored ${n} file${n === 1 ? "" : "s"} from checkpoint ${event.checkpoint_id}.`);
        }
        return;
      }
      case "checkpoint_error":
        if (!this.checkpoints.answered(event)) this.addNotice("error", `Checkpoint: ${event.message}`);
        return;
      // The folder's checkpoints (the list panel shows them): cards rebuilt from a stored
      // transcript get theirs back.
      case "checkpoints":
        for (const checkpoint of this.checkpoints.listed(event.checkpoints)) {
          const tool = checkpoint.callId ? this.tools.get(checkpoint.callId) : undefined;
          if (tool && !tool.checkpoint) tool.checkpoint = checkpoint;
        }
        return;
      // Which chat item each recorded prompt is, so a rewind drops it and what follows.
      case "edit_reverted":
      case "revert_conflict":
      case "revert_failed": {
        const remaining = this.reverts.handle(event);
        const item = this.tools.get(event.call_id);
        if (item && remaining) item.diff = remaining;
        return;
      }
      case "model_routed":
        this.routed = true;
        return;
      case "message_recorded":
        if (event.kind === "prompt") {
          if (this.unrecordedUser) this.promptItems.set(event.message_id, this.unrecordedUser);
          this.unrecordedUser = null;
        }
        return;
    }
  }

  private completeTurn(status: TurnStatus, usage: TurnUsage): void {
    this.endAnswer();
    for (const tool of this.tools.values()) {
      if (tool.state === "awaiting_approval" || tool.state === "scheduled" || tool.state === "validating") {
        if (status !== "completed") tool.state = "cancelled";
      }
    }
    if (status === "failed" && this.errorNotice) {
      this.errorNotice.text = failedText(this.errorNotice.text);
      this.errorNotice.retryPrompt = this.turnPrompt;
    } else {
      const end = statusNotice(status, this.loopReported);
      const notice = end ? this.addNotice(end.level, end.text) : null;
      if (notice && status === "failed") notice.retryPrompt = this.turnPrompt;
    }
    this.push(new FooterItem(status, usage, this.routed));
    this.resetTurn();
  }

  private resetTurn(): void {
    this.routed = false;
    this.errorNotice = null;
    this.retryNotice = null;
    this.loopReported = false;
  }

  private appendText(text: string): void {
    if (!text) return;
    if (!this.answer) {
      this.answer = new ModelItem();
      this.push(this.answer);
    }
    this.pending += text;
    if (!this.frame) {
      this.frame =
        typeof requestAnimationFrame === "function"
          ? requestAnimationFrame(() => {
              this.frame = 0;
              this.flush();
            })
          : (setTimeout(() => {
              this.frame = 0;
              this.flush();
            }, 16) as unknown as number);
    }
  }

  /** Applies buffered text now (before any other event, to keep the order). */
  flush(): void {
    if (this.pending && this.answer) {
      this.answer.text += this.pending;
    }
    this.pending = "";
  }

  private cancelFrame(): void {
    if (this.frame) {
      if (typeof cancelAnimationFrame === "function") cancelAnimationFrame(this.frame);
      this.frame = 0;
    }
  }

  private endAnswer(): void {
    this.flush();
    if (this.answer) this.answer.streaming = false;
    this.answer = null;
  }
}
