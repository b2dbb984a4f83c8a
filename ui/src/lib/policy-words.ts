// A policy rule in words, for the policy editor: what it decides, which calls it matches, where
// it comes from and how much it weighs. The editor showed raw TOML and "effective priorities"
// such as 1.998 that nothing explained (issue 34); the TOML stays behind "Show TOML".
//
// How rules are weighed (crates/policy/src/rule.rs, Gemini CLI's tiers): a rule's effective
// priority is `tier + priority / 1000`, so any rule of a higher tier beats every rule of a lower
// one, and within a tier the higher `priority` (0-999) wins; the first match decides.
import type { EffectiveRule } from "../protocol/EffectiveRule";
import type { PolicyRuleFields } from "../protocol/PolicyRuleFields";
import type { PolicyTier } from "../protocol/PolicyTier";

/** The tiers, strongest first: their names and bases. */
export const TIERS: readonly { tier: PolicyTier; name: string; base: number; from: string }[] = [
  { tier: "admin", name: "Admin", base: 5, from: "the system's policy folder" },
  { tier: "user", name: "User", base: 4, from: "~/.gemini/policies" },
  { tier: "workspace", name: "Workspace", base: 3, from: "the folder's .gemini/policies (and this session's Always allow)" },
  { tier: "extension", name: "Extension", base: 2, from: "an enabled extension (ask or deny only)" },
  { tier: "default", name: "Built-in", base: 1, from: "the app's defaults" },
];

const tierOf = (tier: PolicyTier) => TIERS.find((t) => t.tier === tier) ?? { tier, name: tier, base: 0, from: "" };

/** The order the engine weighs rules in, for a tooltip and the panel's legend. */
export const WEIGHING =
  "The first rule that matches decides. Tiers come first: " +
  TIERS.map((t) => t.name).join(" › ") +
  " (any rule of a higher tier beats every rule of a lower one). Within a tier the higher priority (0 to 999) goes first; on a tie, Deny before Ask before Allow.";

const DECISIONS: Record<string, string> = { allow: "Allow", ask_user: "Ask first", deny: "Deny" };

/** The decision in words ("Allow", "Ask first", "Deny"). */
export function decisionWords(decision: string): string {
  return DECISIONS[decision] ?? decision;
}

const MODES: Record<string, string> = { default: "Ask first", autoEdit: "Auto-edit", yolo: "YOLO", plan: "plan" };

const quoted = (items: string[]) => items.map((i) => `“${i}”`).join(" or ");

/** Which calls the rule matches, as a sentence: tool, command, arguments, server, modes. */
export function matchWords(f: PolicyRuleFields): string {
  const shell = f.command_prefixes.length > 0 || f.command_regex !== null;
  let what: string;
  if (shell) {
    what = "Shell commands";
    if (f.command_prefixes.length > 0) what += ` starting with ${quoted(f.command_prefixes)}`;
    if (f.command_regex) what += `${f.command_prefixes.length > 0 ? " or" : ""} matching /${f.command_regex}/`;
  } else if (f.tool_names.length > 0) {
    what = f.tool_names.join(", ");
  } else {
    what = "Any tool";
  }
  if (f.mcp_name) what += ` of the MCP server ${f.mcp_name}`;
  if (f.args_pattern) what += ` whose arguments match /${f.args_pattern}/`;
  if (f.modes.length > 0) what += `, only in ${f.modes.map((m) => MODES[m] ?? m).join(" or ")} mode`;
  return what;
}

/** Where the rule comes from: "User rule", "Session rule (Always allow)", "Built-in rule". */
export function originWords(rule: EffectiveRule): string {
  if (rule.session) return "Session rule (Always allow)";
  return `${tierOf(rule.tier).name} rule`;
}

/** The tier's name as a badge shows it. */
export function tierName(rule: EffectiveRule): string {
  return rule.session ? "Session" : tierOf(rule.tier).name;
}

/** Its weight in words: "priority 998 in the built-in tier". */
export function priorityWords(rule: EffectiveRule): string {
  return `priority ${rule.fields.priority} in the ${tierOf(rule.tier).name.toLowerCase()} tier`;
}

/** The weight explained, for the tooltip: the tier's rank, the priority, how they combine. */
export function priorityTitle(rule: EffectiveRule): string {
  const t = tierOf(rule.tier);
  const effective = (rule.effective_priority / 1000).toFixed(3);
  return `${t.name} tier (rank ${t.base} of 5, from ${t.from}), priority ${rule.fields.priority} within it: weighed as ${effective} (tier + priority/1000).\n${WEIGHING}`;
}
