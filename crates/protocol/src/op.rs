//! Operations: what a frontend asks a session to do.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{ApprovalMode, ConfirmationOutcome};

/// A command sent to a running session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(export)]
pub enum Op {
    /// Start a turn with the user's input.
    UserTurn {
        items: Vec<InputItem>,
    },
    /// Abort the running turn: the in-flight request is dropped, running
    /// tools are cancelled and history is left valid.
    Interrupt,
    /// End the session after the current turn has been interrupted.
    Shutdown,
    /// Answer a [`crate::Event::ToolConfirmationRequest`]. Takes effect
    /// immediately, while the turn waits for it.
    ConfirmTool {
        call_id: String,
        outcome: ConfirmationOutcome,
        /// The user's edited content, with `ModifyWithEditor`.
        content: Option<String>,
        /// Per-hunk decisions on an edit (with an approving outcome): only
        /// the accepted hunks (and picked lines) are written, and the model
        /// hears which were not. One decision per hunk of the diff between
        /// the confirmation's `original` and its `proposed` (or `content`,
        /// with `ModifyWithEditor`). Absent: the whole change, as before.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        hunks: Option<Vec<crate::HunkDecision>>,
    },
    /// Report every MCP server's status (`Event::McpServerStatus` each, then
    /// `Event::McpDiscovery`). Takes effect immediately.
    McpStatus,
    /// Stop an MCP server and start it again. Takes effect immediately.
    McpRestartServer {
        name: String,
    },
    /// Turn an MCP server off or on. Persisted in
    /// `~/.gemini/mcp-server-enablement.json`, the file Gemini CLI's
    /// `gemini mcp enable/disable` uses. Takes effect immediately.
    McpSetServerEnabled {
        name: String,
        enabled: bool,
    },
    /// Sign in to an HTTP MCP server with OAuth (it goes `authenticating`,
    /// the browser opens, then `connected`, or back to `needs_auth` with the
    /// reason). A second request while one runs joins it. Takes effect
    /// immediately.
    McpAuthenticate {
        name: String,
    },
    /// Send the latest stderr lines of an MCP server (`Event::McpServerLog`).
    McpServerLog {
        name: String,
    },
    /// Fetch an MCP prompt with these arguments and run its text as the
    /// user's next turn (Gemini CLI's MCP slash commands).
    McpRunPrompt {
        server: String,
        name: String,
        arguments: BTreeMap<String, String>,
    },
    /// Send the workspace's checkpoints (`Event::Checkpoints`). Queued
    /// behind a running turn.
    ListCheckpoints,
    /// Go back to a checkpoint: `code` puts the workspace's files back as
    /// they were before that edit; `conversation` truncates the session
    /// history at the prompt whose turn made the edit (this session's
    /// checkpoints only), so the model forgets that turn; both: the code
    /// first, then the conversation, everything checked before anything
    /// changes. Answered by `Event::CheckpointRestored` or
    /// `Event::CheckpointError`. Queued behind a running turn.
    RestoreCheckpoint {
        checkpoint_id: String,
        code: bool,
        conversation: bool,
    },
    /// Read the context files (`GEMINI.md`…) again and use them from the
    /// next request on; answered by `Event::MemoryLoaded`. Queued behind a
    /// running turn.
    RefreshMemory,
    /// Remember a fact in the global `~/.gemini/GEMINI.md` (what
    /// `save_memory` does), then refresh the memory. Queued behind a running
    /// turn.
    AddMemory {
        text: String,
    },
    /// List the slash commands for autocomplete (`Event::Commands`): the
    /// built-in ones, the MCP servers' prompts and the custom commands (read
    /// from disk each time). A user turn whose text starts with `/name` of a
    /// custom command or an MCP prompt runs it. Takes effect immediately.
    ListCommands,
    /// `/clear`: start a fresh conversation in the same session. The model
    /// forgets everything said so far, the statistics start again and the
    /// next messages are recorded as a new session in the history (the old
    /// one stays there). MCP servers, approvals given for the session and
    /// the memory are kept. Answered by `Event::ConversationCleared`.
    /// Queued behind a running turn.
    Clear,
    /// `/compress`: summarise the conversation now, whatever its size.
    /// Answered by `Event::ChatCompressed`, or `Event::CompressionSkipped`
    /// saying why nothing changed. `Op::Interrupt` cancels it. Queued behind
    /// a running turn.
    Compress,
    /// `/stats`: the session's statistics so far (`Event::SessionStats`).
    /// Takes effect immediately, even during a turn.
    Stats,
    /// Change how the session runs from now on; absent fields stay as they
    /// are. Takes effect immediately, even while a turn runs: the approval
    /// mode from the next tool call's decision, the model from the next
    /// model request. Answered by `Event::TurnContext` (also when nothing
    /// changed, or a change was refused: an approval mode other than
    /// `default` in an untrusted folder is, with an `Event::Warning`).
    OverrideTurnContext {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        approval_mode: Option<ApprovalMode>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        model: Option<String>,
        /// "Review at end of turn" on or off, from the next turn on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        review_mode: Option<bool>,
    },
    /// The models the session's credentials can use (`Event::Models`).
    /// Takes effect immediately.
    ListModels,
    /// Undo an applied edit after the fact (its card's "Revert"): `hunks`
    /// (indexes of the hunks of the edit's diff, as its card shows them)
    /// reverts only those, absent the whole edit. Written only if the file
    /// is still what the edit wrote (a checkpoint first); otherwise nothing
    /// is written and `Event::RevertConflict` offers a three-way view,
    /// whose result the user sends back as `resolved` (written only if the
    /// disk did not move again). A file the edit created is deleted. The
    /// model hears about it with the next user message. Answered by
    /// `Event::EditReverted`, `Event::RevertConflict` or
    /// `Event::RevertFailed`. Queued behind a running turn.
    RevertEdit {
        call_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        hunks: Option<Vec<u32>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        resolved: Option<String>,
    },
    /// List the effective policy rules of every tier, with this session's
    /// "always allow" rules (`Event::Policies`). Takes effect immediately.
    ListPolicies,
    /// Read the policy files again (after the editor changed one): the
    /// following decisions use them; this session's "always allow" rules
    /// are kept. Answered by `Event::Policies` (with the files that did not
    /// load). Takes effect immediately, even while a turn runs.
    ReloadPolicies,
    /// Ask the session's policy what it would decide for this call, without
    /// running anything (`Event::PolicyDryRun`). A shell command is
    /// `tool: "run_shell_command"`, `args: {"command": …}`. Absent
    /// `approval_mode`: the session's. Takes effect immediately.
    PolicyDryRun {
        tool: String,
        #[ts(type = "unknown")]
        args: serde_json::Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        mcp_server: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        approval_mode: Option<ApprovalMode>,
    },
    /// Decide on the pending turn review (`Event::TurnReview`): a
    /// checkpoint, then each accepted file written (atomic per file; one
    /// changed on disk since it was staged is refused), then
    /// `Event::TurnReviewApplied`; the model hears what was not applied with
    /// the next message. A staged file without a decision is not applied:
    /// an empty list discards the review. Queued behind a running turn.
    ApplyTurnReview {
        decisions: Vec<crate::ReviewDecision>,
    },
    /// Answer a plan approval (`Event::ToolConfirmationRequest` whose
    /// details are `exit_plan_mode`): approve it with the mode to execute
    /// in, or ask for changes with feedback the model hears before it keeps
    /// planning. Taken at once, like `ConfirmTool` (which, with `cancel`,
    /// also dismisses the plan).
    AnswerPlan {
        call_id: String,
        approval: crate::PlanApproval,
    },
    /// The answer to `Event::FallbackRequested`. Takes effect immediately.
    AnswerFallback {
        choice: FallbackChoice,
    },
    /// Send the agents `invoke_agent` can run (`Event::Agents`). Takes
    /// effect immediately.
    ListAgents,
    /// Send the agent skills found (`Event::Skills`). Takes effect
    /// immediately.
    ListSkills,
    /// Enable or disable a skill (`skills.disabled` in the settings of
    /// `scope`), then send `Event::Skills`. A disabled skill is no longer
    /// declared to the model from the next request on.
    SetSkillEnabled {
        name: String,
        enabled: bool,
        scope: crate::SettingsScope,
    },
    /// Stop one running subagent (the `invoke_agent` call `parent_call_id`):
    /// its calls are cancelled, its history stays valid, and the parent's
    /// call answers that the user stopped it. The parent's turn goes on.
    /// Takes effect immediately.
    CancelSubagent {
        parent_call_id: String,
    },
    /// Send the configured hooks with their last run (`Event::Hooks`).
    /// Takes effect immediately.
    ListHooks,
    /// Turn one hook on or off by its name (or command, when it has no
    /// name): `hooksConfig.disabled` in the settings of `scope`, as 0.61's
    /// `/hooks enable|disable <name>`. Then `Event::Hooks`. Applies from
    /// the next event on.
    SetHookEnabled {
        name: String,
        enabled: bool,
        scope: crate::SettingsScope,
    },
    /// Send the installed extensions (`Event::Extensions`). Takes effect
    /// immediately.
    ListExtensions,
    /// Stage an extension for installing (copy the folder, or clone the
    /// URL with the user's git, into a private staging folder) and send
    /// what it would add (`Event::ExtensionPreview`) for the consent
    /// screen. Nothing of it runs.
    PreviewExtension {
        spec: crate::ExtensionSourceSpec,
    },
    /// Install exactly the staged copy `preview_id` (the user consented to
    /// what `Event::ExtensionPreview` listed), with the values of its
    /// `settings` (env var → value; sensitive ones go to the keyring).
    /// Then `Event::Extensions`.
    InstallExtension {
        preview_id: String,
        #[serde(default)]
        settings: std::collections::BTreeMap<String, String>,
    },
    /// Drop a staged preview without installing it.
    DiscardExtensionPreview {
        preview_id: String,
    },
    UninstallExtension {
        name: String,
    },
    /// Enable or disable an extension for the user (every workspace) or
    /// for this workspace only. Then `Event::Extensions`.
    SetExtensionEnabled {
        name: String,
        enabled: bool,
        scope: crate::SettingsScope,
    },
    /// Update an installed extension from its source (`extensions update`).
    UpdateExtension {
        name: String,
    },
    /// Set one of an installed extension's settings (by env var) for the
    /// user or this workspace, as `extensions config` does: a plain value
    /// in the scope's `.env`, a sensitive one in the keyring; an empty
    /// value removes it. Then `Event::Extensions`; the value is never sent
    /// back. Servers and hooks get it with the next conversation.
    SetExtensionSetting {
        name: String,
        env_var: String,
        value: String,
        scope: crate::SettingsScope,
    },
}

/// What the user chose when the model ran out of quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum FallbackChoice {
    /// Use the fallback model for the rest of the conversation (and retry).
    Switch,
    /// Retry once on the same model.
    KeepTrying,
    /// End the turn with the error.
    Stop,
}

/// One piece of user input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(export)]
pub enum InputItem {
    Text { text: String },
}

impl Op {
    /// A user turn made of one text item.
    pub fn user_text(text: impl Into<String>) -> Self {
        Op::UserTurn {
            items: vec![InputItem::Text { text: text.into() }],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HunkChoice, HunkDecision};
    use serde_json::json;

    /// A frontend that knows nothing of hunks still confirms as before.
    #[test]
    fn confirm_tool_without_hunks_still_parses() {
        let op: Op = serde_json::from_value(json!({
            "type": "confirm_tool", "call_id": "c1", "outcome": "proceed_once", "content": null
        }))
        .unwrap();
        assert_eq!(
            op,
            Op::ConfirmTool {
                call_id: "c1".into(),
                outcome: ConfirmationOutcome::ProceedOnce,
                content: None,
                hunks: None,
            }
        );
        // And it is written without the field.
        let back = serde_json::to_value(&op).unwrap();
        assert_eq!(back.get("hunks"), None);
    }

    #[test]
    fn confirm_tool_carries_hunk_decisions() {
        let op: Op = serde_json::from_value(json!({
            "type": "confirm_tool", "call_id": "c1", "outcome": "proceed_once", "content": null,
            "hunks": [
                {"hunk": 0, "choice": {"type": "accept"}},
                {"hunk": 1, "choice": {"type": "reject"}},
                {"hunk": 2, "choice": {"type": "lines", "lines": [0, 3]}}
            ]
        }))
        .unwrap();
        let Op::ConfirmTool { hunks, .. } = op else {
            panic!("not a confirmation: {op:?}");
        };
        assert_eq!(
            hunks,
            Some(vec![
                HunkDecision {
                    hunk: 0,
                    choice: HunkChoice::Accept
                },
                HunkDecision {
                    hunk: 1,
                    choice: HunkChoice::Reject
                },
                HunkDecision {
                    hunk: 2,
                    choice: HunkChoice::Lines { lines: vec![0, 3] }
                },
            ])
        );
        let bad = serde_json::from_value::<Op>(json!({
            "type": "confirm_tool", "call_id": "c1", "outcome": "proceed_once", "content": null,
            "hunks": [{"hunk": 0, "choice": {"type": "maybe"}}]
        }));
        assert!(bad.is_err());
    }
}
