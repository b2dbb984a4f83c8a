// Builders of session events (the protocol's `Event`, see src/protocol/Event.ts).
export const turnStarted = (turn_id = "t1") => ({ type: "turn_started", turn_id });
export const delta = (text) => ({ type: "content_delta", text });
export const thought = (subject, description = "") => ({ type: "thought", subject, description });
/** A turn's usage as core sums it (`TurnUsage`); one request when any token was used. */
export const turnUsage = (prompt = 0, output = 0, { model = "gemini-2.5-pro", requests = prompt + output > 0 ? 1 : 0, duration_ms = 0 } = {}) => ({
  model,
  requests,
  prompt_tokens: prompt,
  cached_tokens: 0,
  output_tokens: output,
  thoughts_tokens: 0,
  total_tokens: prompt + output,
  duration_ms,
});
export const turnComplete = (status = "completed", turn_id = "t1", usage = turnUsage()) => ({ type: "turn_complete", turn_id, status, usage });
/** One model request's usage (core sums these into the turn's `turn_complete`). */
export const usage = (prompt = 1200, output = 300, model = "gemini-2.5-pro") => ({
  type: "usage",
  model,
  latency_ms: 800,
  prompt_tokens: prompt,
  cached_tokens: 0,
  output_tokens: output,
  thoughts_tokens: 0,
  tool_tokens: 0,
  total_tokens: prompt + output,
});
export const toolRequest = (call_id, name, args) => ({ type: "tool_call_request", call_id, name, args });
export const toolState = (call_id, state) => ({ type: "tool_call_state", call_id, state });
export const toolOutput = (call_id, output) => ({ type: "tool_call_output", call_id, output });
export const toolResponse = (call_id, name, status = "success", display = null, error = null, duration_ms = 42) => ({
  type: "tool_call_response",
  call_id,
  name,
  status,
  display,
  error,
  duration_ms,
});
export const confirmation = (call_id, name, details) => ({ type: "tool_confirmation_request", call_id, name, details });

/** Edit confirmation details from a diffs.json case. */
export function editDetails(c, filePath = `/home/dev/project/src/${c.file_name}`) {
  return {
    type: "edit",
    title: `Edit ${c.file_name}`,
    file_path: filePath,
    file_name: c.file_name,
    original: c.original,
    proposed: c.proposed,
    unified_diff: c.unified_diff,
    side_by_side: c.side_by_side,
    is_new_file: c.original === null,
  };
}

export const executeDetails = (command, root_commands, directory = "/home/dev/project") => ({
  type: "execute",
  title: "Confirm Shell Command",
  command,
  root_commands,
  directory,
});

export const mcpDetails = (server_name, tool_name, tool_display_name, args) => ({
  type: "mcp",
  title: "Confirm MCP Tool Execution",
  server_name,
  tool_name,
  tool_display_name,
  args,
});

export const infoDetails = (prompt, urls) => ({ type: "info", title: "Confirm Web Fetch", prompt, urls });

/** An MCP server's status (protocol `McpServerStatus`), connected with `tools` by default. */
export const mcpStatus = (name, overrides = {}) => ({
  name,
  state: "connected",
  transport: "stdio",
  trust: false,
  description: null,
  tools: 2,
  tool_list: [
    { name: "add", declared_name: `mcp_${name}_add`, description: "Add two integers." },
    { name: "echo", declared_name: `mcp_${name}_echo`, description: "Return the text unchanged." },
  ],
  prompts: 0,
  resources: 0,
  error: null,
  latency_ms: 12,
  restarts: 0,
  ...overrides,
});
export const mcpServerStatus = (status) => ({ type: "mcp_server_status", ...status });
export const mcpLog = (name, lines) => ({ type: "mcp_server_log", name, lines });

/** The first event of a session (the mock's `start_session` answers session `s1` first). */
export const sessionConfigured = (session_id = "s1", model = "gemini-2.5-pro") => ({
  type: "session_configured",
  session_id,
  model,
  auth: "gemini-api-key",
  workspace_dirs: ["/home/dev/project"],
  tools: ["read_file", "write_file", "replace"],
});
export const checkpointCreated = (call_id, checkpoint_id, files, scope = "full") => ({
  type: "checkpoint_created",
  call_id,
  checkpoint_id,
  scope,
  files,
});
/**
 * `files`: `[path, action]` pairs, action `reverted`, `removed` or `recreated`; `conversation`:
 * `{ message_id, removed }` when the conversation was restored too.
 */
export const checkpointRestored = (checkpoint_id, files, { undo = "undo-1", conversation = null } = {}) => ({
  type: "checkpoint_restored",
  checkpoint_id,
  files: files.map(([path, action]) => ({ path, action })),
  undo_checkpoint_id: undo,
  conversation,
});
/** A `CheckpointInfo` of `list_checkpoints` / `history_checkpoints`. */
export const checkpointInfo = (checkpoint_id, { call_id = null, session_id = "s1", files = [], tool = "replace", label = null, scope = "full", message_id = null, created_at = "2026-05-01T10:00:00Z" } = {}) => ({
  checkpoint_id,
  scope,
  created_at,
  session_id,
  message_id,
  call_id,
  tool: label ? null : tool,
  files,
  label,
});
export const checkpoints = (list) => ({ type: "checkpoints", checkpoints: list });
export const checkpointError = (checkpoint_id, message) => ({ type: "checkpoint_error", checkpoint_id, message });

// Subagents (issue 19): a run nested under the parent's `invoke_agent` call.
export const subagentStarted = (parent_call_id, agent_name, prompt, { display_name, model = "gemini-2.5-flash" } = {}) => ({
  type: "subagent_started",
  parent_call_id,
  agent_name,
  ...(display_name ? { display_name } : {}),
  model,
  prompt,
});
/** One of the subagent's own events, wrapped. */
export const subagent = (parent_call_id, agent_name, event) => ({ type: "subagent", parent_call_id, agent_name, event });
export const subagentFinished = (parent_call_id, agent_name, status = "completed", usage = turnUsage(), { result, error } = {}) => ({
  type: "subagent_finished",
  parent_call_id,
  agent_name,
  status,
  usage,
  ...(result !== undefined ? { result } : {}),
  ...(error !== undefined ? { error } : {}),
});
export const skillDetails = (name, description, location) => ({ type: "activate_skill", title: `Activate skill ${name}`, name, description, location });

// The command sandbox (issue 36).
/** `turn_context` with the sandbox's state (protocol `SandboxState`). */
export const turnContext = (approval_mode = "default", sandbox = undefined, { model = "gemini-2.5-pro", review_mode = false } = {}) => ({
  type: "turn_context",
  approval_mode,
  model,
  review_mode,
  ...(sandbox ? { sandbox } : {}),
});
export const sandboxState = ({ enabled = true, unavailable = undefined, network = false, summary = "Commands run in the sandbox." } = {}) => ({
  enabled,
  ...(unavailable ? { unavailable } : {}),
  network,
  summary,
});
/** How a command ran (protocol `SandboxUse`, on its `tool_call_response`). */
export const sandboxUse = (sandboxed = true, { network = false, granted_paths = [] } = {}) => ({ sandboxed, network, granted_paths });
/** A sandbox confirmation: the command failed, the sandbox refused it the network or `paths`. */
export const sandboxDetails = (command, { network = false, paths = [], evidence = "", directory = "/home/dev/project", title } = {}) => ({
  type: "sandbox",
  title: title ?? (network ? "This command needs network access" : `This command needs to write to ${paths[0] ?? ""}`),
  command,
  directory,
  network,
  paths,
  evidence,
});
