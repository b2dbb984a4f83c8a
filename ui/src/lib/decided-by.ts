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
