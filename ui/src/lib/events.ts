// The one event router: every event of the session's channel is dispatched here, by type, to
// the store that owns what it changes. When an event matters to several owners, the order in
// which they see it is written out below; no store forwards events to another. The switch is
// exhaustive, so a new protocol event does not build until it is routed (or ignored here).
import type { ConfirmationDetails } from "../protocol/ConfirmationDetails";
import type { Event } from "../protocol/Event";
import type { TurnStatus } from "../protocol/TurnStatus";
import type { ChatStore } from "./chat.svelte";
import type { ConfirmationQueue } from "./confirmations.svelte";
import type { McpStore } from "./mcp.svelte";
import type { PlanStore } from "./plan.svelte";
import type { TodoStore } from "./todos.svelte";
import type { MemoryStore } from "./memory.svelte";
import type { PolicyStore } from "./policies.svelte";
import type { TurnReviewStore } from "./review.svelte";
import type { FallbackStore } from "./fallback.svelte";
import type { SessionStore } from "./session.svelte";
import type { SlashCommands } from "./slash-commands.svelte";
import type { UsageStore } from "./usage.svelte";
import type { SubagentStore } from "./subagents.svelte";
import type { AgentsStore, SkillsStore } from "./agents.svelte";
import type { ExtensionsStore } from "./extensions.svelte";
import type { HooksStore } from "./hooks.svelte";

/** The owners of the session's events. */
export interface EventOwners {
  session: SessionStore;
  chat: ChatStore;
  confirmations: ConfirmationQueue;
  mcp: McpStore;
  memory: MemoryStore;
  slash: SlashCommands;
  review: TurnReviewStore;
  /** A turn failed authentication: the app checks the sign-in. */
  authFailed: (message: string) => void;
  /** A tool call now waits for the user's approval (the window may call them back). */
  approvalRequested: (name: string, details: ConfirmationDetails) => void;
  /** `/clear` was carried out: the app empties the screen for the new conversation. */
  conversationCleared: (conversationId: string) => void;
  /** A turn ended (how): the conversation notes a failure and runs what waited (a reload). */
  turnEnded: (status: TurnStatus) => void;
  /** The policy editor's rules, dry runs and "always allow and save" previews. */
  policies: PolicyStore;
  /** The usage meter and panel: per-turn rows, core's statistics, the quota. */
  usage: UsageStore;
  /** The plan presented for approval (plan mode's side pane). */
  plan: PlanStore;
  /** The model's todo list (`write_todos`), as a checklist. */
  todos: TodoStore;
  /** The quota-fallback prompt ("Switch to <model> for this conversation?"). */
  fallback: FallbackStore;
  /** The turn waits for the user's answer to the fallback prompt (the window may call them). */
  fallbackRequested: (detail: string) => void;
  /** The subagents' runs, nested under their `invoke_agent` calls. */
  subagents: SubagentStore;
  /** `/agents` and `/skills`: the lists core sends. */
  agents: AgentsStore;
  skills: SkillsStore;
  /** `/hooks`: the configured hooks with their last runs. */
  hooks: HooksStore;
  /** `/extensions`: the installed extensions and the install flow. */
  extensions: ExtensionsStore;
}

export function routeEvent(o: EventOwners, event: Event): void {
  switch (event.type) {
    case "session_configured":
      o.session.model = event.model;
      o.chat.handle(event);
      return;
    case "turn_context":
      o.session.turnContext(event);
      o.review.mode = event.review_mode ?? false;
      return;
    case "models":
      o.session.models = event.models;
      return;
    case "turn_started":
      o.session.busy = true;
      o.chat.handle(event);
      return;
    case "tool_confirmation_request":
      o.confirmations.add(event.call_id, event.name, event.details);
      if (event.details.type === "exit_plan_mode") o.plan.show(event.call_id, event.details.plan_path, event.details.plan);
      o.approvalRequested(event.name, event.details);
      return;
    case "tool_call_response":
      o.confirmations.remove(event.call_id);
      o.todos.responded(event.call_id, event.status);
      o.chat.handle(event);
      return;
    case "tool_call_request": {
      o.todos.requested(event.call_id, event.name, event.args);
      o.chat.handle(event);
      // A run announced before its call's card (the order core does not promise otherwise).
      const run = o.subagents.run(event.call_id);
      const tool = run && o.chat.tool(event.call_id);
      if (tool) tool.subagent = run;
      return;
    }
    case "turn_complete":
      o.confirmations.clear();
      o.subagents.turnEnded();
      o.plan.turnEnded();
      o.fallback.clear();
      o.turnEnded(event.status);
      o.chat.handle(event);
      o.session.busy = false;
      o.usage.turnComplete(event.status, event.usage);
      return;
    case "error":
      if (event.kind === "auth") o.authFailed(event.message);
      o.chat.handle(event);
      return;
    case "chat_compressed":
    case "compression_skipped":
      o.slash.handleCompression();
      o.chat.handle(event);
      return;
    case "checkpoints":
      // The chat keeps the list (the checkpoint panel shows it); a `/restore <id>` waits for it.
      o.chat.handle(event);
      o.slash.handleCheckpoints();
      return;
    case "thought":
    case "content_delta":
    case "tool_call_state":
    case "tool_call_output":
    case "retrying":
    case "loop_detected":
    case "warning":
    case "finished":
    case "checkpoint_created":
    case "checkpoint_restored":
    case "checkpoint_error":
    case "message_recorded":
    case "tool_call_decided":
    case "edit_reverted":
    case "revert_conflict":
    case "revert_failed":
      o.chat.handle(event);
      return;
    case "session_stats":
      // The usage panel keeps the latest figures; a `/stats` waiting for them gets its card.
      o.usage.handleStats(event.stats);
      o.slash.handleStats(event);
      return;
    case "quota":
      o.usage.handleQuota(event);
      return;
    case "commands":
      o.slash.handleCommands(event);
      return;
    case "conversation_cleared":
      o.conversationCleared(event.session_id);
      return;
    case "memory_loaded":
      o.memory.handle(event);
      return;
    case "policies":
    case "policy_dry_run":
    case "saved_rule_preview":
      o.policies.handle(event);
      return;
    case "mcp_server_status":
    case "mcp_discovery":
    case "mcp_server_log":
    case "mcp_server_log_changed":
      o.mcp.handle(event);
      return;
    // Nobody shows these: a request's usage is summed by core into the turn's footer
    // (`turn_complete`), the tool list goes to the model, and a resumed transcript is loaded by
    // the app when the session starts.
    case "usage":
    case "tools_changed":
    case "session_resumed":
      return;
    case "turn_review":
      o.review.show(event.files, event.restored);
      return;
    case "turn_review_applied":
      o.review.applied(event.written, event.not_applied);
      return;
    case "model_routed":
      // `auto` chose this prompt's model: the turn's footer notes it.
      o.chat.handle(event);
      return;
    case "fallback_requested":
      o.fallback.show(event);
      o.fallbackRequested(`switch to ${event.fallback_model}?`);
      return;
    // The chat derives chapters from the `update_topic` calls themselves (the same for a
    // resumed conversation, which has no such events): see lib/topics.svelte.ts.
    case "topic_changed":
      return;
    // Subagents: the card under the parent's `invoke_agent` call shows the run; the run's own
    // confirmations join the conversation's one queue (dock, inbox, attention), labelled with
    // the agent that asked, and leave it when answered there or in the card.
    case "subagent_started": {
      const run = o.subagents.started(event);
      const tool = o.chat.tool(event.parent_call_id);
      if (tool) tool.subagent = run;
      return;
    }
    case "subagent": {
      const run = o.subagents.nested(event);
      const tool = o.chat.tool(event.parent_call_id);
      if (tool && tool.subagent !== run) tool.subagent = run;
      const inner = event.event;
      if (inner.type === "tool_confirmation_request") {
        o.confirmations.add(inner.call_id, inner.name, inner.details, run.label);
        o.approvalRequested(inner.name, inner.details);
      } else if (inner.type === "tool_call_response") {
        o.confirmations.remove(inner.call_id);
      }
      return;
    }
    case "subagent_finished": {
      const run = o.subagents.finished(event);
      // Whatever it still asked is moot now.
      for (const item of run?.chat.items ?? []) if (item.kind === "tool") o.confirmations.remove(item.callId);
      return;
    }
    case "agents":
      o.agents.handle(event);
      return;
    case "skills":
      o.skills.handle(event);
      return;
    // A hook's run: the hooks view's last result, then a marker on its call's card (or the
    // turn's line) and its system message in the chat.
    case "hook_ran":
      o.hooks.ran(event.run);
      o.chat.hookRan(event.run);
      return;
    case "hooks":
      o.hooks.handle(event);
      return;
    case "extensions":
      o.extensions.handle(event);
      // A change (install, enable, uninstall) may add or remove commands: `/` completion asks again.
      if (event.notice) void o.slash.load();
      return;
    case "extension_preview":
    case "extension_error":
      o.extensions.handle(event);
      return;
    default:
      unrouted(event);
  }
}

/** Compile-time check that every event type has a case above. */
function unrouted(event: never): void {
  void event;
}
