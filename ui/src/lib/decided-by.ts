// "Why was this allowed?": what decided a tool call, in words for its card's one line.
import type { DecidedBy } from "../protocol/DecidedBy";
import type { PolicyOutcome } from "../protocol/PolicyOutcome";
import type { PolicyRuleInfo } from "../protocol/PolicyRuleInfo";

const OUTCOME: Record<PolicyOutcome, string> = { allow: "Allowed", ask: "Asked", deny: "Denied" };

const MODES: Record<string, string> = { yolo: "YOLO mode", autoEdit: "Auto-edit mode", plan: "Plan mode", default: "Default mode" };

const USER: Record<Extract<DecidedBy, { kind: "user" }>["outcome"], string> = {
  proceed_once: "You approved",
  always: "You approved: Always allow",
  always_and_save: "You approved: Always allow and save",
  modified: "You approved your edit",
  partial_hunks: "You approved some hunks",
  rejected: "You rejected",
};

/** A home directory at the start of a path reads `~` (the card is narrow). */
export function shortPath(path: string): string {
  return path.replace(/^(\/home\/[^/]+|\/Users\/[^/]+|[A-Za-z]:\\Users\\[^\\]+)(?=[/\\])/, "~");
}

/** Where a rule is: `file:line` for a policy file, else its origin in words. */
export function ruleLocation(rule: PolicyRuleInfo): string {
  if (rule.path && !rule.path.startsWith("<")) {
    return rule.line ? `${shortPath(rule.path)}:${rule.line}` : shortPath(rule.path);
  }
  return rule.origin;
}

/** The rule behind a decision, if one decided (or was overruled). */
export function decidedRule(d: DecidedBy): PolicyRuleInfo | null {
  return "rule" in d ? d.rule : null;
}

/** The card's one line. */
export function decidedLabel(d: DecidedBy): string {
  switch (d.kind) {
    case "policy": {
      if (d.downgrade) return `${OUTCOME[d.outcome]}: ${d.downgrade}`;
      const r = d.rule;
      return `${OUTCOME[d.outcome]} by rule · ${ruleLocation(r)} · ${r.tier} tier · priority ${r.priority}`;
    }
    case "approval_mode":
      return `${OUTCOME[d.outcome]}: ${MODES[d.mode] ?? d.mode}`;
    case "session_allow":
      return "Allowed: Always allow (this session)";
    case "user":
      return USER[d.outcome];
    case "default":
      if (d.reason) return `${OUTCOME[d.outcome]}: ${d.reason}`;
      return d.outcome === "deny" ? "Denied: no rule matched" : `${OUTCOME[d.outcome]}: no rule matched`;
    case "review_mode":
      return "Staged: Review at end of turn";
  }
}

/** What a refusing mode is called in a card's state ("Refused by plan mode"). */
const REFUSING_MODE: Record<string, string> = { plan: "plan mode", default: "the default mode", autoEdit: "auto-edit mode", yolo: "YOLO mode" };

/**
 * Why a mode refuses calls, for the person reading the card. Core's message is written for the
 * model ("You are in Plan Mode and cannot modify source code…", or a path outside the plans
 * directory); it stays in the card's tooltip.
 */
const MODE_REASON: Record<string, string> = {
  plan: "Plan mode only reads and researches: nothing is changed until you approve a plan (or switch the approval mode).",
};

/** Core's prefix on the model's message for a refused call (scheduler.rs). */
const DENIED_PREFIX = /^Tool execution denied by policy\.\s*/;

/** A call the policy or the approval mode refused: what its card says instead of "Failed". */
export interface Refusal {
  /** The state label, e.g. "Refused by plan mode". */
  label: string;
  /** Why, in words for the user. */
  reason: string;
}

/**
 * The refusal behind a call, or null when nothing refused it. Only a `deny` of the policy, the
 * approval mode or the default counts: the user's own "reject" is "Rejected", and a call that
 * failed while running (or that nothing decided) stays "Failed". `error` is core's message for
 * the model; a rule's own `deny_message` in it is the reason its author gave.
 */
export function refusal(d: DecidedBy | null, error: string | null): Refusal | null {
  if (!d || d.kind === "user" || !("outcome" in d) || d.outcome !== "deny") return null;
  const told = (error ?? "").replace(DENIED_PREFIX, "").trim();
  switch (d.kind) {
    case "approval_mode":
      return {
        label: `Refused by ${REFUSING_MODE[d.mode] ?? `${d.mode} mode`}`,
        reason: MODE_REASON[d.mode] ?? (told || `The ${REFUSING_MODE[d.mode] ?? d.mode} does not allow this call.`),
      };
    case "policy":
      return { label: "Refused by a policy rule", reason: told || `A ${d.rule.tier} rule (${ruleLocation(d.rule)}) denies this call.` };
    case "default":
      return { label: "Refused by policy", reason: d.reason ?? (told || "No policy rule allows this call.") };
  }
}
