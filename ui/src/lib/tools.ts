// Human-readable names, descriptions and state labels for tool calls.
import type { DecidedBy } from "../protocol/DecidedBy";
import type { McpToolRef } from "../protocol/McpToolRef";
import type { ToolCallState } from "../protocol/ToolCallState";
import { refusal } from "./decided-by";

const TITLES: Record<string, string> = {
  read_file: "Read file",
  read_many_files: "Read files",
  write_file: "Write file",
  replace: "Edit file",
  edit: "Edit file",
  list_directory: "List folder",
  glob: "Find files",
  grep_search: "Search",
  search_file_content: "Search",
  run_shell_command: "Shell",
  web_fetch: "Fetch",
  google_web_search: "Web search",
  save_memory: "Save memory",
  write_todos: "Update plan",
  update_topic: "Topic",
  enter_plan_mode: "Enter plan mode",
  exit_plan_mode: "Present plan",
};

/**
 * A friendly title for a tool: "server › tool" for an MCP tool (the names core reports with the
 * call), else a known tool's title, else its name.
 */
export function toolTitle(name: string, mcp: McpToolRef | null = null): string {
  if (mcp) return `${mcp.server} › ${mcp.tool}`;
  return TITLES[name] ?? name;
}

function str(value: unknown): string | null {
  if (typeof value === "string" && value.trim() !== "") return value;
  if (typeof value === "number") return String(value);
  return null;
}

function list(value: unknown): string | null {
  if (Array.isArray(value)) {
    const items = value.map(str).filter((v): v is string => v !== null);
    return items.length > 0 ? items.join(", ") : null;
  }
  return str(value);
}

/** Shows `path` relative to the workspace when it lies inside it. */
export function relativePath(path: string, workspace: string | null): string {
  if (!workspace) return path;
  const root = workspace.endsWith("/") || workspace.endsWith("\\") ? workspace : `${workspace}/`;
  if (path === workspace) return ".";
  if (path.startsWith(root)) return path.slice(root.length);
  return path;
}

/**
 * A one-line description of what a call does, from its arguments: the command, path, pattern,
 * query, URL, prompt or (activate_skill) the name. Empty when none of them is present.
 */
export function describeCall(args: unknown, workspace: string | null = null): string {
  if (!args || typeof args !== "object") return "";
  const a = args as Record<string, unknown>;
  const path = str(a.file_path) ?? str(a.absolute_path) ?? str(a.dir_path) ?? str(a.path) ?? str(a.directory);
  const where = path ? relativePath(path, workspace) : null;
  const command = str(a.command);
  if (command) return command;
  const pattern = str(a.pattern);
  if (pattern) return where ? `${pattern} in ${where}` : pattern;
  const query = str(a.query);
  if (query) return query;
  const url = str(a.url) ?? list(a.urls);
  if (url) return url;
  if (where) return where;
  const paths = list(a.paths) ?? list(a.file_paths);
  if (paths) return paths;
  const plan = str(a.plan_filename);
  if (plan) return plan;
  const prompt =
    str(a.prompt) ?? str(a.fact) ?? str(a.description) ?? str(a.strategic_intent) ?? str(a.reason);
  if (prompt) return prompt.length > 160 ? `${prompt.slice(0, 157)}…` : prompt;
  // activate_skill's only argument: without it the card would not say which skill it loads.
  const name = str(a.name);
  if (name) return name;
  return "";
}

/** Core's states, and `refused`: a call the policy or the approval mode did not let run. */
export type CardState = ToolCallState | "refused";

export const STATE_LABELS: Record<CardState, string> = {
  validating: "Validating",
  scheduled: "Queued",
  awaiting_approval: "Awaiting approval",
  executing: "Running",
  success: "Done",
  error: "Failed",
  cancelled: "Cancelled",
  refused: "Refused",
};

/** The state label of a card; a call the user rejected reads "Rejected", not "Cancelled". */
export function stateLabel(state: CardState, declined: boolean): string {
  return state === "cancelled" && declined ? "Rejected" : STATE_LABELS[state];
}

/** What the toggle over a finished call's output says, e.g. "Output · 8 lines". */
export function outputLabel(name: string, output: string): string {
  const lines = output.replace(/\n$/, "").split("\n").length;
  if (name === "list_directory") return `Entries · ${lines}`;
  const what = name === "run_shell_command" ? "Output" : "Full output";
  return `${what} · ${lines} line${lines === 1 ? "" : "s"}`;
}

/**
 * The state a card shows: core's, except that
 * - a command which ran to the end but exited non-zero is a failure to the person reading the
 *   card (`exit 1` under a green "Done" read as success; issue 34);
 * - a call the policy or the approval mode refused (its `decided_by` is a `deny`) is "refused",
 *   not a red "Failed": nothing went wrong, the app did what its rules say (issue 34).
 * The model's result is unchanged: it gets the output and the exit code, or the refusal's
 * message, as in Gemini CLI. The live card and a reopened one go through here alike.
 */
export function cardState(state: ToolCallState, exitCode: number | null, decidedBy: DecidedBy | null = null, error: string | null = null): CardState {
  if (state === "error" && refusal(decidedBy, error)) return "refused";
  return state === "success" && exitCode !== null && exitCode !== 0 ? "error" : state;
}

export function isFinal(state: CardState): boolean {
  return state === "success" || state === "error" || state === "cancelled" || state === "refused";
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${m} min ${s} s`;
}
