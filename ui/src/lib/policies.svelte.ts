// The policy editor's state for one conversation: the effective rules its session reports
// (`policies`, answering `list_policies` and `reload_policies`), the last dry run
// (`policy_dry_run`), and the rule "always allow and save" would write for each pending
// confirmation (`saved_rule_preview`, sent just before the confirmation). Rules are written by
// the backend's `policy_save_rule` / `policy_delete_rule` commands; the app then asks every
// open conversation's session to reload its policy (app.svelte.ts `reloadPolicies`).
import * as api from "../api";
import type { ApprovalMode } from "../protocol/ApprovalMode";
import type { DryRunDecision } from "../protocol/DryRunDecision";
import type { Event } from "../protocol/Event";
import type { PolicyRuleFields } from "../protocol/PolicyRuleFields";
import type { EffectiveRule } from "../protocol/EffectiveRule";
import type { PolicyTier } from "../protocol/PolicyTier";
import type { SavedPolicyRule } from "../protocol/SavedPolicyRule";
import type { SavedRulePreview } from "../protocol/SavedRulePreview";
import type { SessionStore } from "./session.svelte";

export interface DryRunResult {
  decision: DryRunDecision;
  message: string | null;
  rule: EffectiveRule | null;
  reason: string;
  mode: ApprovalMode;
}

/** What the dry run form sends: a tool call (name + JSON arguments) or a shell command. */
export type DryRunInput =
  | { kind: "tool"; tool: string; args: string; mcpServer: string }
  | { kind: "shell"; command: string };

/** The key a rule is found by across lists (its file and header line). */
export function ruleKey(rule: { path: string; line: number }): string {
  return `${rule.path}:${rule.line}`;
}

export class PolicyStore {
  /** The panel is open (header button or `/policies`). */
  open = $state(false);
  /** The effective rules, the first wins first; null until the session listed them. */
  rules = $state.raw<EffectiveRule[] | null>(null);
  userFile = $state<string | null>(null);
  workspaceFile = $state<string | null>(null);
  /** Policy files that did not load. */
  loadErrors = $state.raw<string[]>([]);
  dryRun = $state.raw<DryRunResult | null>(null);
  /** Previews of "always allow and save", by call id. */
  private previews = new Map<string, SavedRulePreview>();

  constructor(
    private readonly session: SessionStore,
    private readonly workspace: () => string | null,
  ) {}

  clear(): void {
    this.rules = null;
    this.dryRun = null;
    this.previews.clear();
  }

  /** Opens the panel and asks for the rules. */
  show(): void {
    this.open = true;
    void this.list();
  }

  handle(event: Extract<Event, { type: "policies" | "policy_dry_run" | "saved_rule_preview" }>): void {
    switch (event.type) {
      case "policies":
        this.rules = event.rules;
        this.userFile = event.user_file ?? null;
        this.workspaceFile = event.workspace_file ?? null;
        this.loadErrors = event.errors;
        return;
      case "policy_dry_run":
        this.dryRun = {
          decision: event.decision,
          message: event.message ?? null,
          rule: event.rule ?? null,
          reason: event.reason,
          mode: event.approval_mode,
        };
        return;
      case "saved_rule_preview":
        this.previews.set(event.call_id, { path: event.path, text: event.text });
        return;
    }
  }

  /** The rule "always allow and save" would write for this call, if the session said. */
  preview(callId: string): SavedRulePreview | null {
    return this.previews.get(callId) ?? null;
  }

  async list(): Promise<void> {
    if (!this.session.info) return;
    await this.session.submit({ type: "list_policies" });
  }

  /** The session reads its policy files again (answered by `policies`). */
  async reload(): Promise<void> {
    if (!this.session.info) return;
    await this.session.submit({ type: "reload_policies" });
  }

  /** Asks the session's engine what it would decide; throws on arguments that are not JSON. */
  async runDry(input: DryRunInput, mode: ApprovalMode | null): Promise<void> {
    if (!this.session.info) throw new Error("The session is not running.");
    this.dryRun = null;
    const approval_mode = mode ?? undefined;
    if (input.kind === "shell") {
      await this.session.submit({ type: "policy_dry_run", tool: "run_shell_command", args: { command: input.command }, approval_mode });
      return;
    }
    let args: unknown;
    try {
      args = input.args.trim() === "" ? {} : JSON.parse(input.args);
    } catch (error) {
      throw new Error(`The arguments are not JSON: ${(error as Error).message}`);
    }
    const mcp_server = input.mcpServer.trim() || undefined;
    await this.session.submit({ type: "policy_dry_run", tool: input.tool.trim(), args, mcp_server, approval_mode });
  }

  /** Writes a rule (a new one when `line` is null); throws with the loader's message. */
  save(tier: PolicyTier, path: string | null, line: number | null, rule: PolicyRuleFields): Promise<SavedPolicyRule> {
    const workspace = this.workspace();
    if (!workspace) return Promise.reject(new Error("No folder is open."));
    return api.commands.policySaveRule({ workspace, tier, path, line, rule });
  }

  remove(rule: EffectiveRule): Promise<void> {
    const workspace = this.workspace();
    if (!workspace) return Promise.reject(new Error("No folder is open."));
    return api.commands.policyDeleteRule({ workspace, tier: rule.tier, path: rule.path, line: rule.line });
  }
}
