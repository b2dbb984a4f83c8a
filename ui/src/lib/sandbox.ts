// The command sandbox (issue 36) in the user's words: what a shell card's badge says about how
// its command ran, what a sandbox confirmation asks for, and what the approval switch says next
// to YOLO. Plain functions over the protocol's types, so the live chat, a reopened conversation
// and the history transcript word it alike.
import type { ConfirmationDetails } from "../protocol/ConfirmationDetails";
import type { SandboxState } from "../protocol/SandboxState";
import type { SandboxUse } from "../protocol/SandboxUse";

export type SandboxDetails = Extract<ConfirmationDetails, { type: "sandbox" }>;

/**
 * A stored `SandboxUse` (a tool-result record keeps it as JSON, like `decided_by`), or null
 * when the record has none or it is not one: an older record must not show a wrong badge.
 */
export function sandboxUse(value: unknown): SandboxUse | null {
  if (!value || typeof value !== "object") return null;
  const v = value as Partial<SandboxUse>;
  if (typeof v.sandboxed !== "boolean") return null;
  const paths = Array.isArray(v.granted_paths) ? v.granted_paths.filter((p): p is string => typeof p === "string") : [];
  return { sandboxed: v.sandboxed, network: v.network === true, granted_paths: paths };
}

/** The badge's label. */
export function badgeLabel(use: SandboxUse): string {
  return use.sandboxed ? "Sandboxed" : "Not sandboxed";
}

/**
 * The badge's tooltip: what the sandbox kept the command from doing, and what it was granted on
 * top (the network, folders outside the workspace), one per line.
 */
export function badgeTooltip(use: SandboxUse): string {
  if (!use.sandboxed) return "Ran without the sandbox: it could write anywhere you can and use the network";
  const granted = [...(use.network ? ["network allowed for this command"] : []), ...use.granted_paths.map((p) => `may write in ${p}`)];
  return ["Ran in the sandbox: writes only in the workspace, no network", ...granted].join("\n");
}

/** One thing a refused command needs granted, as the confirmation lists it. */
export interface SandboxNeed {
  kind: "network" | "write";
  /** The folder to write in (`write` only). */
  path: string | null;
}

export function sandboxNeeds(d: SandboxDetails): SandboxNeed[] {
  return [...(d.network ? [{ kind: "network" as const, path: null }] : []), ...d.paths.map((path) => ({ kind: "write" as const, path }))];
}

/** What is asked, in a few words: "network access", "writing in /x", "writing in 3 folders". */
function askedFor(d: SandboxDetails): string {
  const parts: string[] = [];
  if (d.network) parts.push("network access");
  if (d.paths.length === 1) parts.push(`writing in ${d.paths[0]}`);
  else if (d.paths.length > 1) parts.push(`writing in ${d.paths.length} folders`);
  return parts.length > 0 ? parts.join(" and ") : "more than the sandbox allows";
}

/** The one-line summary of a sandbox confirmation (the dock's queue, the inbox, a notification). */
export function sandboxSummary(d: SandboxDetails): string {
  return `Allow ${askedFor(d)}: ${d.command}`;
}

/**
 * What the approval switch says about the sandbox while YOLO is the mode: YOLO runs every
 * command without asking, so whether those commands are confined matters most then. The text
 * is core's `summary` (what the sandbox's state means, and with it off what YOLO then allows);
 * `kind` sets the tone: `off` warns, `unavailable` too (commands are refused meanwhile; the
 * chat's banner says why and how to fix it), `on` reassures.
 */
export function yoloSandboxNote(s: SandboxState): { kind: "off" | "unavailable" | "on"; text: string } {
  return { kind: !s.enabled ? "off" : s.unavailable ? "unavailable" : "on", text: s.summary };
}
