// Slash commands in the composer, as text: parsing what was typed, matching the session's listed
// commands (core lists the built-in ones, MCP prompts and custom commands) for autocomplete and
// the hint under the prompt box, and the help of an MCP prompt's arguments. What a built-in
// command does is in slash-commands.svelte.ts. Anything else that starts with `/` (a path, an
// unknown name) goes to the model as text, as in Gemini CLI.
import type { SlashCommandInfo } from "../protocol/SlashCommandInfo";

export interface Invocation {
  /** The name as typed, without the slash. */
  name: string;
  /** The rest of the text, trimmed. */
  args: string;
}

/** `/name args`; null when the text is not a slash command (no name, `//…`, `/*…`). */
export function parseSlash(text: string): Invocation | null {
  const trimmed = text.trim();
  if (trimmed.startsWith("//") || trimmed.startsWith("/*")) return null;
  const match = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(trimmed);
  if (!match) return null;
  return { name: match[1]!, args: (match[2] ?? "").trim() };
}

/** The listed command `name` runs: by its name, else by another name of it. */
export function findCommand(commands: SlashCommandInfo[], name: string): SlashCommandInfo | undefined {
  return commands.find((c) => c.name === name) ?? commands.find((c) => c.alt_names.includes(name));
}

/** Commands whose name (or another name) starts with `typed`, in the listed order. */
export function suggest(commands: SlashCommandInfo[], typed: string): SlashCommandInfo[] {
  const t = typed.toLowerCase();
  return commands.filter((c) => c.name.toLowerCase().startsWith(t) || c.alt_names.some((a) => a.toLowerCase().startsWith(t)));
}

/** How an MCP prompt is invoked: `/review --file="…" --focus="…" [--tone="…"]`. */
export function promptUsage(command: SlashCommandInfo): string {
  const args = command.arguments.map((a) => (a.required ? `--${a.name}="…"` : `[--${a.name}="…"]`));
  return [`/${command.name}`, ...args].join(" ");
}

/** `/prompt help`: the prompt's arguments, as Gemini CLI lists them. */
export function promptHelp(command: SlashCommandInfo): string {
  if (command.arguments.length === 0) return `Prompt "${command.name}" has no arguments.`;
  const lines = [
    `Arguments for "${command.name}" (MCP server ${command.server ?? "?"}):`,
    "",
    'Give them by name (--name="value") or by position, in the order of the required ones.',
    "",
  ];
  for (const arg of command.arguments) {
    lines.push(`  --${arg.name}${arg.required ? " (required)" : ""}${arg.description ? `: ${arg.description}` : ""}`);
  }
  return lines.join("\n");
}

/** What the hint under the prompt box says about a typed `/name args`, if anything. */
export function slashHint(commands: SlashCommandInfo[], invocation: Invocation): string | null {
  const command = findCommand(commands, invocation.name);
  if (command?.source === "mcp_prompt") {
    const help = command.arguments.length > 0 ? ` · "/${command.name} help" lists the arguments` : "";
    return `${promptUsage(command)} · MCP prompt of ${command.server ?? "a server"}${help}`;
  }
  if (command) return `/${command.name}: ${command.description}`;
  if (commands.length === 0) return null;
  return `/${invocation.name} is not a command: Enter sends it to Gemini as a message.`;
}

/** "850ms", "12.3s", "1h 2m 3s", as Gemini CLI formats durations. */
export function formatDuration(ms: number): string {
  if (ms <= 0) return "0s";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.floor(seconds % 60);
  return [h ? `${h}h` : "", m ? `${m}m` : "", s ? `${s}s` : ""].filter(Boolean).join(" ") || "0s";
}
