//! Events: what a session reports, in order, over one stream.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::{
    ApprovalMode, CheckpointInfo, CheckpointScope, ConfirmationDetails, DecidedBy,
    McpDiscoveryState, McpServerStatus, MemoryFileNode, ModelChoice, RestoredConversation,
    RestoredFile, SandboxState, SandboxUse, SessionStats, SlashCommandInfo,
};

/// An MCP tool as its server names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct McpToolRef {
    pub server: String,
    pub tool: String,
}

/// Everything a session reports. Events of one turn arrive in order between
/// [`Event::TurnStarted`] and [`Event::TurnComplete`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(export)]
pub enum Event {
    /// The session is ready; sent once, first.
    SessionConfigured {
        session_id: String,
        model: String,
        /// `gemini-api-key`, `vertex-ai` or `code-assist`.
        auth: String,
        workspace_dirs: Vec<String>,
        /// Names of the tools declared to the model.
        tools: Vec<String>,
    },
    TurnStarted {
        turn_id: String,
    },
    /// A thought summary from the model (never recorded in history).
    Thought {
        subject: String,
        description: String,
    },
    /// A piece of the model's answer text.
    ContentDelta {
        text: String,
    },
    /// The model asked for a tool call.
    ToolCallRequest {
        call_id: String,
        name: String,
        #[ts(type = "unknown")]
        args: Value,
        /// For an MCP tool (`name` is its declared `mcp_<server>_<tool>`): the
        /// server and the server's own name of the tool, for titles such as
        /// "tiny › add" (the declared name cannot be split back reliably).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        mcp: Option<McpToolRef>,
        /// A hook's tail call (AfterTool `tailToolCallRequest`): the id of the
        /// model's call it runs in place of; the model receives this call's
        /// result as that call's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        in_place_of: Option<String>,
    },
    /// A tool call moved to another state (validating, scheduled,
    /// awaiting_approval, executing, success, error, cancelled).
    ToolCallState {
        call_id: String,
        state: ToolCallState,
    },
    /// The user must approve a tool call; answer with `Op::ConfirmTool`.
    ToolConfirmationRequest {
        call_id: String,
        name: String,
        details: ConfirmationDetails,
    },
    /// Live output of a running tool (e.g. shell output so far).
    ToolCallOutput {
        call_id: String,
        output: String,
    },
    /// A tool call finished (successfully or not).
    ToolCallResponse {
        call_id: String,
        name: String,
        status: ToolCallStatus,
        /// A short human-readable result for display.
        display: Option<String>,
        error: Option<String>,
        #[ts(type = "number")]
        duration_ms: u64,
        /// The full result for people, untruncated and without the wrappers
        /// the model gets (a command's plain output, a folder's entries one a
        /// line, a file's text); absent when there is none or it is just
        /// `display`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        output: Option<String>,
        /// A shell command's exit code (absent for other tools, and when a
        /// signal ended the command).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        exit_code: Option<i32>,
        /// `cancelled` because the user rejected the call (not because the
        /// turn was stopped).
        #[serde(default)]
        declined: bool,
        /// The user approved the call with their own edit of its proposal
        /// (`ModifyWithEditor`).
        #[serde(default)]
        modified: bool,
        /// The change an edit applied (the proposal as approved), so its card
        /// can show the diff again after the fact.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        diff: Option<ConfirmationDetails>,
        /// What decided the call (a policy rule, the approval mode, an
        /// "always allow", the user's click), so a reopened card says it too.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        decided_by: Option<Box<DecidedBy>>,
        /// A command's sandbox: whether it ran in it, and what it was granted (absent for
        /// other tools).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        sandbox: Option<SandboxUse>,
    },
    /// Token usage and latency of one model request.
    Usage {
        model: String,
        #[ts(type = "number")]
        latency_ms: u64,
        #[serde(flatten)]
        usage: Usage,
        /// What the request was for (the agent's own turn, or a utility
        /// call such as routing), as Gemini CLI's `roles` count it.
        #[serde(default)]
        role: crate::RequestRole,
    },
    /// A model request failed and will be retried after `delay_ms`.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        #[ts(type = "number")]
        delay_ms: u64,
        reason: String,
    },
    /// Older history was summarised: near the context window's limit, or
    /// because `Op::Compress` asked for it.
    ChatCompressed {
        #[ts(type = "number")]
        original_tokens: u64,
        #[ts(type = "number")]
        new_tokens: u64,
    },
    /// The agent was stopped because it was repeating itself.
    LoopDetected {
        kind: LoopKind,
        detail: String,
    },
    /// Something the user should know that does not end the turn.
    Warning {
        message: String,
    },
    /// A failure; `fatal` ones end the turn.
    Error {
        kind: ErrorKind,
        message: String,
        status: Option<u16>,
        fatal: bool,
    },
    /// One model response ended, with the API's finish reason.
    Finished {
        reason: String,
        /// An explanation when the reason is not a normal stop.
        message: Option<String>,
    },
    /// The turn is over; nothing more will be emitted for it.
    TurnComplete {
        turn_id: String,
        status: TurnStatus,
        /// What the turn's model requests used, summed.
        usage: TurnUsage,
    },
    /// How the session runs now: sent once right after
    /// `SessionConfigured`, and to answer every `Op::OverrideTurnContext`.
    TurnContext {
        approval_mode: ApprovalMode,
        model: String,
        /// "Review at end of turn": the turn's edits are staged and
        /// reviewed together when it ends (see `Event::TurnReview`).
        #[serde(default)]
        review_mode: bool,
        /// Whether commands run in the sandbox.
        #[serde(default)]
        sandbox: SandboxState,
    },
    /// The models the session's credentials can use (answers
    /// `Op::ListModels`).
    Models {
        models: Vec<ModelChoice>,
    },
    /// The tools declared to the model changed (MCP servers connected,
    /// crashed or changed their tool lists); the next request uses these.
    ToolsChanged {
        tools: Vec<String>,
    },
    /// An MCP server changed state (also sent for every server on
    /// `Op::McpStatus`).
    McpServerStatus {
        #[serde(flatten)]
        status: McpServerStatus,
    },
    /// The MCP servers' discovery started or completed.
    McpDiscovery {
        state: McpDiscoveryState,
    },
    /// The latest lines an MCP server wrote to stderr (answers `Op::McpServerLog`).
    McpServerLog {
        name: String,
        lines: Vec<String>,
    },
    /// An MCP server wrote to stderr (or the client noted something in its
    /// log): fetch the lines with `Op::McpServerLog` if they are shown. At
    /// most a few per second per server.
    McpServerLogChanged {
        name: String,
    },
    /// The workspace was snapshotted before an approved edit ran; restore
    /// it with `Op::RestoreCheckpoint`.
    CheckpointCreated {
        call_id: String,
        checkpoint_id: String,
        scope: CheckpointScope,
        /// Workspace-relative paths the edit is about to change.
        files: Vec<String>,
    },
    /// The workspace's checkpoints, newest first (answers `Op::ListCheckpoints`).
    Checkpoints {
        checkpoints: Vec<CheckpointInfo>,
    },
    /// A checkpoint was restored (answers `Op::RestoreCheckpoint`).
    CheckpointRestored {
        checkpoint_id: String,
        /// The files the restore changed (none when only the conversation
        /// was asked for).
        files: Vec<RestoredFile>,
        /// A checkpoint of the state just before the restore, to undo it.
        undo_checkpoint_id: Option<String>,
        /// What happened to the conversation, when it was restored too: the
        /// history now ends before the prompt of the edit's turn.
        conversation: Option<RestoredConversation>,
    },
    /// A checkpoint operation failed (answers `Op::ListCheckpoints` or
    /// `Op::RestoreCheckpoint`); nothing was changed.
    CheckpointError {
        checkpoint_id: Option<String>,
        message: String,
    },
    /// A message was committed to the session history (before the next
    /// model request is sent). `kind` is `prompt`, `model`, `tool_result` or
    /// `summary`; `call_ids` are the tool calls the message made or answered.
    MessageRecorded {
        message_id: String,
        #[ts(type = "number")]
        seq: i64,
        kind: String,
        call_ids: Vec<String>,
    },
    /// The session continues a stored one; `messages` is how many messages
    /// of its history the model sees. Sent right after `SessionConfigured`.
    SessionResumed {
        session_id: String,
        messages: u32,
    },
    /// The context files now in the system instruction (sent at session
    /// start and after `Op::RefreshMemory` / `Op::AddMemory`): the top-level
    /// files in load order, each with its import tree.
    MemoryLoaded {
        files: Vec<MemoryFileNode>,
        /// Characters of memory text in the system instruction.
        #[ts(type = "number")]
        chars: u64,
    },
    /// The slash commands available (answers `Op::ListCommands`): built-in
    /// ones first, then the MCP servers' prompts, then custom ones by name.
    Commands {
        commands: Vec<SlashCommandInfo>,
    },
    /// The conversation was cleared (answers `Op::Clear`). `session_id` is
    /// the id the new conversation is recorded under in the history; the
    /// session itself keeps the id it was started with, for every `Op`.
    ConversationCleared {
        session_id: String,
    },
    /// `Op::Compress` left the history as it was; `message` says why in
    /// words for the user.
    CompressionSkipped {
        reason: CompressionSkipReason,
        /// The history's size in tokens (estimated when no request told).
        #[ts(type = "number")]
        original_tokens: u64,
        message: String,
    },
    /// The session's statistics (answers `Op::Stats`).
    SessionStats {
        stats: SessionStats,
    },
    /// What decided a tool call: sent when the policy decides it (before
    /// it runs or is asked about) and again when the user's answer decides.
    ToolCallDecided {
        call_id: String,
        /// Boxed: a rule's text is large next to most events.
        decided_by: Box<DecidedBy>,
    },
    /// `Op::RevertEdit` wrote the inverse of an applied edit (all of it or
    /// the chosen hunks), or the user's resolution of a three-way view.
    EditReverted {
        #[serde(flatten)]
        reverted: crate::EditRevert,
    },
    /// `Op::RevertEdit` found the file changed since the edit: nothing was
    /// written; the user resolves the three-way view and confirms with
    /// `Op::RevertEdit { resolved }`.
    RevertConflict {
        #[serde(flatten)]
        conflict: crate::RevertConflict,
    },
    /// `Op::RevertEdit` could not be done; nothing was written.
    RevertFailed {
        call_id: String,
        message: String,
    },
    /// The effective policy rules, the one that wins first first (answers
    /// `Op::ListPolicies` and `Op::ReloadPolicies`).
    Policies {
        rules: Vec<crate::EffectiveRule>,
        /// Where the editor adds a user rule (the file "always allow and
        /// save" writes to); absent without a home directory.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        user_file: Option<String>,
        /// Where the editor adds a workspace rule; absent when the
        /// workspace is not trusted (its rules do not count).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        workspace_file: Option<String>,
        /// Policy files that did not load (`path:line:column: message`).
        errors: Vec<String>,
    },
    /// What the policy would decide for the call of an `Op::PolicyDryRun`.
    PolicyDryRun {
        decision: crate::DryRunDecision,
        /// A deny's message (the rule's `deny_message`, or why).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        message: Option<String>,
        /// The rule that decided, when one did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        rule: Option<crate::EffectiveRule>,
        /// Why, in words.
        reason: String,
        /// The mode it was decided in.
        approval_mode: ApprovalMode,
    },
    /// The rule "always allow and save" would write for a confirmation
    /// just requested (sent right before its
    /// `Event::ToolConfirmationRequest`), for the preview before saving.
    SavedRulePreview {
        call_id: String,
        #[serde(flatten)]
        preview: crate::SavedRulePreview,
    },
    /// A turn in review mode ended with staged edits (or a resumed session
    /// had a review pending, `restored`): every staged file, for the user
    /// to accept, reject or edit with `Op::ApplyTurnReview`. Until then the
    /// files on disk are unchanged and later turns keep seeing the staged
    /// content.
    TurnReview {
        turn_id: String,
        files: Vec<crate::ReviewFile>,
        #[serde(default)]
        restored: bool,
    },
    /// `Op::ApplyTurnReview` is done: the files written, and those not
    /// (fully) written with the reason. The model hears about the latter
    /// with the next message.
    TurnReviewApplied {
        written: Vec<String>,
        not_applied: Vec<crate::ReviewNotApplied>,
    },
    /// An `update_topic` call succeeded (Gemini CLI 0.61's topics): the
    /// conversation's current topic and intent. `new_chapter` is true when
    /// the call started a new topic (a title different from the current
    /// one), which frontends show as a chapter; otherwise only the intent
    /// changed.
    TopicChanged {
        /// The `update_topic` call, so a chapter sits where the call is.
        call_id: String,
        /// The current topic's title (none before the first titled call).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        title: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        summary: Option<String>,
        strategic_intent: String,
        new_chapter: bool,
    },
    /// What is left of the account's quota, as the backend reports it (sent
    /// when the session starts and after turns, at most once a minute).
    Quota {
        #[serde(flatten)]
        quota: crate::QuotaReport,
    },
    /// The session's model is `auto` and routing chose the model of this
    /// prompt's requests (Gemini CLI's model router): `source` names the
    /// strategy (`agent-router/NumericalClassifier (Default)`,
    /// `agent-router/default` when the classifier failed), `reason` its
    /// explanation.
    ModelRouted {
        /// The configured model (`auto`, `auto-gemini-3`, …).
        requested: String,
        /// The model the prompt's requests go to.
        model: String,
        source: String,
        reason: String,
        #[ts(type = "number")]
        latency_ms: u64,
    },
    /// The model ran out of quota (or capacity) and another model could
    /// take over: the turn waits for `Op::AnswerFallback`. Nothing switches
    /// without the user's answer.
    FallbackRequested {
        failed_model: String,
        fallback_model: String,
        /// What happened, for the prompt ("Usage limit reached for …").
        message: String,
        /// Whether "Keep trying" (one more attempt on the same model) is
        /// offered: not for a quota that will not reset soon.
        keep_trying: bool,
    },
    /// An `invoke_agent` call started its subagent (see [`crate::AgentInfo`]).
    /// Its stream follows as [`Event::Subagent`], then
    /// [`Event::SubagentFinished`].
    SubagentStarted {
        /// The parent's `invoke_agent` call.
        parent_call_id: String,
        agent_name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        display_name: Option<String>,
        /// The model its requests go to.
        model: String,
        /// The task the parent gave it.
        prompt: String,
    },
    /// One event of a running subagent's own stream (thoughts, text, tool
    /// calls and their confirmations, usage), nested under the parent's
    /// call. Its tool calls are answered with `Op::ConfirmTool` as usual.
    Subagent {
        parent_call_id: String,
        agent_name: String,
        event: Box<Event>,
    },
    /// A subagent's run ended; its result went to the parent as the
    /// `invoke_agent` call's response.
    SubagentFinished {
        parent_call_id: String,
        agent_name: String,
        status: crate::SubagentStatus,
        /// The subagent's requests, tokens and elapsed time.
        usage: TurnUsage,
        /// What it returned to the parent (absent when it returned nothing).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        result: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        error: Option<String>,
    },
    /// The agents `invoke_agent` can run (answer to `Op::ListAgents`, and
    /// sent at start when a definition file is wrong).
    Agents {
        agents: Vec<crate::AgentInfo>,
        /// Definition files that could not be read.
        errors: Vec<crate::DefinitionError>,
    },
    /// The agent skills found (answer to `Op::ListSkills` and to
    /// `Op::SetSkillEnabled`).
    Skills {
        skills: Vec<crate::SkillInfo>,
        errors: Vec<crate::DefinitionError>,
    },
    /// A hook ran (sent when its run ended, before the action it guarded
    /// goes on).
    HookRan {
        run: crate::HookRun,
    },
    /// The configured hooks (answer to `Op::ListHooks` and
    /// `Op::SetHookEnabled`, and sent at start when a definition is wrong).
    Hooks {
        hooks: Vec<crate::HookInfo>,
        /// `hooksConfig.enabled` (false: none runs).
        enabled: bool,
        /// Hook definitions that could not be read.
        errors: Vec<crate::DefinitionError>,
    },
    /// The installed extensions (answer to the extension ops).
    Extensions {
        extensions: Vec<crate::ExtensionInfo>,
        /// Extension folders that could not be read.
        errors: Vec<crate::DefinitionError>,
        /// What the last change did, in words (`Installed foo 1.2.0; its
        /// server starts now.`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        notice: Option<String>,
    },
    /// A staged extension, for the consent screen (answer to
    /// `Op::PreviewExtension`).
    ExtensionPreview {
        preview_id: String,
        extension: crate::ExtensionInfo,
    },
    /// An extension op failed; nothing was changed.
    ExtensionError {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        name: Option<String>,
        message: String,
    },
}

/// Why a requested compression changed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum CompressionSkipReason {
    /// The history is empty or has no complete exchange to summarise.
    NothingToCompress,
    /// The summary would not have been smaller than the history.
    NotBeneficial,
    /// The summary request failed or came back empty.
    Failed,
    /// `Op::Interrupt` stopped it.
    Cancelled,
}

/// Token counts of one model request, as `usageMetadata` reports them
/// (the same names as in [`crate::ModelStats`] and [`TurnUsage`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Usage {
    /// Prompt tokens, cached ones included (`promptTokenCount`).
    #[ts(type = "number")]
    pub prompt_tokens: u64,
    /// Prompt tokens that were read from the cache.
    #[ts(type = "number")]
    pub cached_tokens: u64,
    /// Answer tokens (`candidatesTokenCount`).
    #[ts(type = "number")]
    pub output_tokens: u64,
    #[ts(type = "number")]
    pub thoughts_tokens: u64,
    /// Prompt tokens of tool-use (`toolUsePromptTokenCount`).
    #[ts(type = "number")]
    pub tool_tokens: u64,
    #[ts(type = "number")]
    pub total_tokens: u64,
}

/// What one turn's model requests used, summed by the core so every
/// frontend shows the same numbers (the turn's footer).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TurnUsage {
    /// The model of the turn's last request (the session's model when the
    /// turn made none).
    pub model: String,
    /// Model requests that reported usage.
    pub requests: u32,
    #[ts(type = "number")]
    pub prompt_tokens: u64,
    #[ts(type = "number")]
    pub cached_tokens: u64,
    #[ts(type = "number")]
    pub output_tokens: u64,
    #[ts(type = "number")]
    pub thoughts_tokens: u64,
    #[ts(type = "number")]
    pub total_tokens: u64,
    /// From `TurnStarted` to `TurnComplete`.
    #[ts(type = "number")]
    pub duration_ms: u64,
    /// Prompt tokens of tool-use (`toolUsePromptTokenCount`).
    #[serde(default)]
    #[ts(type = "number")]
    pub tool_tokens: u64,
}

impl TurnUsage {
    /// Adds one request's usage.
    pub fn add(&mut self, model: &str, usage: &Usage) {
        model.clone_into(&mut self.model);
        self.requests += 1;
        self.prompt_tokens += usage.prompt_tokens;
        self.cached_tokens += usage.cached_tokens;
        self.output_tokens += usage.output_tokens;
        self.thoughts_tokens += usage.thoughts_tokens;
        self.total_tokens += usage.total_tokens;
        self.tool_tokens += usage.tool_tokens;
    }
}

/// The life cycle of a tool call, as the scheduler moves it along.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ToolCallState {
    Validating,
    Scheduled,
    AwaitingApproval,
    Executing,
    Success,
    Error,
    Cancelled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ToolCallStatus {
    Success,
    Error,
    Cancelled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum LoopKind {
    /// The same tool call with the same arguments, again and again.
    RepeatedToolCall,
    /// The same passage of text, again and again.
    RepeatedContent,
}

/// What kind of failure an [`Event::Error`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ErrorKind {
    /// The credentials were missing or rejected.
    Auth,
    /// The API answered with an error.
    Api,
    /// The network failed.
    Network,
    /// The stream broke after partial output.
    StreamInterrupted,
    /// The prompt was blocked by the API's safety filters.
    Blocked,
    /// The model returned nothing usable.
    InvalidResponse,
    /// The session reached its configured maximum number of turns.
    TurnLimit,
    /// What the user typed cannot be used (e.g. an MCP prompt's required
    /// argument is missing); nothing was sent.
    Input,
    /// Anything else.
    Internal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum TurnStatus {
    #[default]
    Completed,
    Cancelled,
    /// The user declined a tool call; its result is recorded and the model
    /// waits for the user's next message.
    Declined,
    Failed,
    TurnLimitReached,
    LoopDetected,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Op;
    use serde_json::json;

    #[test]
    fn events_are_tagged_json() {
        let e = Event::ToolCallRequest {
            call_id: "c1".into(),
            name: "list_directory".into(),
            args: json!({"dir_path": "/"}),
            mcp: None,
            in_place_of: None,
        };
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"type": "tool_call_request", "call_id": "c1", "name": "list_directory", "args": {"dir_path": "/"}})
        );
        let u = Event::Usage {
            model: "m".into(),
            latency_ms: 5,
            usage: Usage {
                prompt_tokens: 3,
                ..Usage::default()
            },
            role: crate::RequestRole::Main,
        };
        assert_eq!(serde_json::to_value(&u).unwrap()["type"], "usage");
        assert_eq!(serde_json::to_value(&u).unwrap()["prompt_tokens"], 3);
    }

    #[test]
    fn ops_round_trip() {
        let op = Op::user_text("hi");
        let v = serde_json::to_value(&op).unwrap();
        assert_eq!(
            v,
            json!({"type": "user_turn", "items": [{"type": "text", "text": "hi"}]})
        );
        assert_eq!(serde_json::from_value::<Op>(v).unwrap(), op);
    }
}
