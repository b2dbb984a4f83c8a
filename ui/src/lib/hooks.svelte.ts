// Hooks (Gemini CLI 0.61's `hooks` settings): the `/hooks` view's data and the markers a run
// leaves in the conversation.
//
// Core runs the hooks and tells each run as it ends (`hook_ran`); it lists the configured hooks
// with their last run (`hooks`, answering `list_hooks` / `set_hook_enabled`). This store keeps
// that list, updates a row's last run as runs come in (so the view stays current without asking
// again), and sends the switches. Where a run is shown in the chat (on its tool card, or as a
// line in the turn) is the router's business (events.ts): see `HookRunsItem` and
// `ToolItem.hookRuns`.
import * as api from "../api";
import type { Event } from "../protocol/Event";
import type { HookEventName } from "../protocol/HookEventName";
import type { HookInfo } from "../protocol/HookInfo";
import type { HookOutcome } from "../protocol/HookOutcome";
import type { HookRun } from "../protocol/HookRun";
import type { HookSource } from "../protocol/HookSource";
import type { SettingsScope } from "../protocol/SettingsScope";
import { DefinitionListStore } from "./agents.svelte";
import type { SessionStore } from "./session.svelte";

/** The events in the order the view groups them (0.61's lifecycle order). */
export const HOOK_EVENTS: HookEventName[] = [
  "SessionStart",
  "BeforeAgent",
  "BeforeModel",
  "AfterModel",
  "BeforeToolSelection",
  "BeforeTool",
  "AfterTool",
  "AfterAgent",
  "Notification",
  "PreCompress",
  "SessionEnd",
];

/** What a run's marker says, short enough for a tool card's header. */
export function markerLabel(run: HookRun): string {
  switch (run.outcome) {
    case "blocked":
      return "hook: blocked";
    case "warning":
      return "hook: warning";
    case "timed_out":
      return "hook: timed out";
    case "failed":
      return "hook: failed";
    case "success":
      return run.additional_context ? "hook: +context" : "hook: ran";
  }
}

/** Consecutive runs of one hook with the same marker, as one group with its latest run. */
export function groupRuns(runs: readonly HookRun[]): { run: HookRun; count: number }[] {
  const groups: { run: HookRun; count: number }[] = [];
  for (const run of runs) {
    const last = groups.at(-1);
    if (last && last.run.hook_id === run.hook_id && last.run.event === run.event && markerLabel(last.run) === markerLabel(run)) {
      last.run = run;
      last.count += 1;
    } else {
      groups.push({ run, count: 1 });
    }
  }
  return groups;
}

/** A run's outcome in words (the view's last result, the details' heading). */
export function outcomeLabel(outcome: HookOutcome): string {
  switch (outcome) {
    case "success":
      return "Succeeded";
    case "blocked":
      return "Blocked";
    case "warning":
      return "Warning";
    case "timed_out":
      return "Timed out";
    case "failed":
      return "Could not start";
  }
}

/** Where a hook was configured, as a badge (an extension's hook names the extension). */
export function hookSourceLabel(source: HookSource, extension?: string): string {
  switch (source) {
    case "workspace":
      return "Workspace";
    case "user":
      return "User";
    case "system":
      return "System";
    case "extension":
      return extension ? `Extension ${extension}` : "Extension";
  }
}

/** The name `set_hook_enabled` takes: the hook's name, or its command when it has none. */
export function hookKey(hook: HookInfo): string {
  return hook.name ?? hook.command;
}

/** "exit 2 · 31 ms" */
export function runSummary(run: HookRun): string {
  const parts: string[] = [];
  if (run.exit_code !== undefined) parts.push(`exit ${run.exit_code}`);
  parts.push(run.duration_ms >= 1000 ? `${(run.duration_ms / 1000).toFixed(1)} s` : `${run.duration_ms} ms`);
  return parts.join(" · ");
}

/**
 * The runs of hooks that ran for the turn rather than for a tool call (BeforeAgent, BeforeModel,
 * AfterModel…): one small line in the turn, grown while runs come in one after another.
 */
export class HookRunsItem {
  readonly kind = "hooks";
  readonly id: number;
  runs = $state.raw<HookRun[]>([]);
  constructor(id: number, run: HookRun) {
    this.id = id;
    this.runs = [run];
  }
}

export class HooksStore extends DefinitionListStore {
  /** The last list; null until core answered. */
  hooks = $state.raw<HookInfo[] | null>(null);
  /** `hooksConfig.enabled` (false: none runs). */
  enabled = $state(true);
  /** Where the switches write (`hooksConfig.disabled` of the user's settings by default). */
  scope = $state<SettingsScope>("user");
  /** Hooks whose switch was sent and not answered by a new list yet (by `hookKey`). */
  pending = $state.raw<ReadonlySet<string>>(new Set());
  /** Runs by hook id that came after the last list (the list's own `last_run` is older). */
  private latest = $state.raw<ReadonlyMap<string, HookRun>>(new Map());

  constructor(session: SessionStore, failed: (text: string) => void) {
    super(session, failed, "list_hooks", "hooks");
  }

  handle(event: Extract<Event, { type: "hooks" }>): void {
    this.hooks = event.hooks;
    this.enabled = event.enabled;
    this.errors = event.errors;
    this.pending = new Set();
    this.latest = new Map();
  }

  /** A hook ran: its row's last result is this run now. */
  ran(run: HookRun): void {
    this.latest = new Map([...this.latest, [run.hook_id, run]]);
  }

  /** The most recent run of `hook` in this session. */
  lastRun(hook: HookInfo): HookRun | undefined {
    return this.latest.get(hook.id) ?? hook.last_run;
  }

  /** The configured hooks by event, in lifecycle order (events without hooks left out). */
  get groups(): { event: HookEventName; hooks: HookInfo[] }[] {
    const hooks = this.hooks ?? [];
    return HOOK_EVENTS.map((event) => ({ event, hooks: hooks.filter((h) => h.event === event) })).filter((g) => g.hooks.length > 0);
  }

  /** Turns a hook on or off in the chosen scope; core answers with the new list. */
  async setEnabled(hook: HookInfo, enabled: boolean): Promise<void> {
    if (!this.session.info) return;
    const name = hookKey(hook);
    this.pending = new Set([...this.pending, name]);
    try {
      await this.session.submit({ type: "set_hook_enabled", name, enabled, scope: this.scope });
    } catch (error) {
      const rest = new Set(this.pending);
      rest.delete(name);
      this.pending = rest;
      this.failed(`Could not ${enabled ? "enable" : "disable"} the hook ${name}: ${api.errorMessage(error)}`);
    }
  }

  clear(): void {
    this.hooks = null;
    this.enabled = true;
    this.errors = [];
    this.pending = new Set();
    this.latest = new Map();
  }
}
