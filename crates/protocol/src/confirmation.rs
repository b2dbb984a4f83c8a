//! Confirmations: what the user is asked to approve before a tool call runs,
//! and how they answered.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// What a confirmation shows. Sent in [`crate::Event::ToolConfirmationRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(export)]
pub enum ConfirmationDetails {
    /// A file edit (write_file, replace): the whole before and after, a
    /// unified diff and an aligned side-by-side model of it.
    Edit {
        title: String,
        file_path: String,
        file_name: String,
        /// The current content; `None` when the file does not exist yet.
        original: Option<String>,
        /// The content after the edit.
        proposed: String,
        unified_diff: String,
        side_by_side: SideBySideDiff,
        is_new_file: bool,
    },
    /// A shell command.
    Execute {
        title: String,
        command: String,
        /// The first word of each command in a pipeline or list (`git`, `rm`...):
        /// what "always allow" would allow.
        root_commands: Vec<String>,
        directory: String,
    },
    /// A tool of an MCP server.
    Mcp {
        title: String,
        server_name: String,
        tool_name: String,
        tool_display_name: String,
        #[ts(type = "unknown")]
        args: Value,
    },
    /// Anything else that needs a yes/no, such as fetching URLs.
    Info {
        title: String,
        prompt: String,
        urls: Vec<String>,
    },
    /// `exit_plan_mode`: the plan the model wrote, for the user to approve
    /// (answered with `Op::AnswerPlan`, or `Op::ConfirmTool` with `cancel`).
    ExitPlanMode {
        title: String,
        /// The plan file, absolute (in the session's plans directory).
        plan_path: String,
        /// The plan's markdown as it is on disk now.
        plan: String,
    },
    /// A command failed because the sandbox refused it something (issue 36): the user may
    /// grant it and run it again. `ProceedOnce`: this run only; `ProceedAlways`: this exact
    /// command for the rest of the session; `Cancel`: no (the model hears what was refused).
    Sandbox {
        /// "This command needs network access" / "… to write to <path>".
        title: String,
        command: String,
        directory: String,
        /// It needs the network.
        network: bool,
        /// Folders outside the workspace it needs to write in, absolute.
        paths: Vec<String>,
        /// The lines of its output that show the refusal.
        evidence: String,
    },
    /// `activate_skill` for a skill that is not built in: the user consents
    /// to its instructions entering the context and its folder becoming
    /// readable (Gemini CLI 0.61 asks the same).
    ActivateSkill {
        /// `Activate skill "<name>"`.
        title: String,
        name: String,
        description: String,
        /// The skill's folder, absolute.
        location: String,
    },
}

/// The user's answer to a plan ([`ConfirmationDetails::ExitPlanMode`]),
/// sent in [`crate::Op::AnswerPlan`]. Gemini CLI 0.61's plan approval
/// payload: approve with the mode to run in, or send feedback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PlanApproval {
    /// `true`: the plan is approved and the session switches to
    /// `approval_mode`; `false`: the model hears `feedback` and keeps
    /// planning.
    pub approved: bool,
    /// The mode to execute in (`default` or `auto_edit`; `plan` is refused).
    /// Absent means `default`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub approval_mode: Option<crate::ApprovalMode>,
    /// What the user wants changed (comments, edits), when not approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub feedback: Option<String>,
}

/// How the user answered a confirmation. Sent in [`crate::Op::ConfirmTool`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ConfirmationOutcome {
    /// Run this call.
    ProceedOnce,
    /// Run it, and similar calls for the rest of the session without asking
    /// (same tool; same root commands for shell; the same tool of the same
    /// server for MCP).
    ProceedAlways,
    /// Like `ProceedAlways`, and write an allow rule to the user's policy file.
    ProceedAlwaysAndSave,
    /// MCP tools: run it, and every tool of the same MCP server for the rest
    /// of the session without asking.
    ProceedAlwaysServer,
    /// Run it with the content the user edited (edits only).
    ModifyWithEditor,
    /// Do not run it; the turn stops so the user can say what to do instead.
    Cancel,
}

/// The user's decision on one hunk of an edit confirmation, sent with an
/// approval in [`crate::Op::ConfirmTool`] so that only part of a proposed
/// edit is written (and the model is told exactly which part).
///
/// Hunks are numbered from 0 in file order and are the hunks of the
/// confirmation's `side_by_side` diff (same grouping, same order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct HunkDecision {
    /// Index of the hunk, from 0.
    pub hunk: u32,
    pub choice: HunkChoice,
}

/// What to do with one hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(export)]
pub enum HunkChoice {
    /// Apply the whole hunk.
    Accept,
    /// Leave this part of the file as it is.
    Reject,
    /// Apply only some of the hunk's changed lines. `lines` indexes the
    /// hunk's `-` and `+` lines from 0, region by region: a region is a
    /// maximal run of non-`equal` rows of the hunk in `side_by_side` (as
    /// the confirmation's `unified_diff` lists it: its removed lines, then
    /// its added ones); context lines are not counted. A picked
    /// removed line is removed, a picked added line is inserted (after the
    /// region's kept lines); everything else stays as it was. Picking all
    /// is `Accept`, picking none is `Reject`.
    Lines { lines: Vec<u32> },
}

/// A diff as aligned rows for a two-pane view. Only changed regions are
/// included, each with a few lines of context; the UI can show the gaps
/// between hunks as collapsed regions (it has the full texts).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SideBySideDiff {
    pub hunks: Vec<DiffHunk>,
    /// Lines added and removed in total.
    pub added: u32,
    pub removed: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct DiffHunk {
    /// 1-based first line of the hunk on each side.
    pub old_start: u32,
    pub old_lines: u32,
    pub new_start: u32,
    pub new_lines: u32,
    pub rows: Vec<DiffRow>,
}

/// One aligned row: a line on the left, the right or both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct DiffRow {
    pub kind: DiffRowKind,
    pub left: Option<DiffLine>,
    pub right: Option<DiffLine>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum DiffRowKind {
    /// The same line on both sides.
    Equal,
    /// A line only on the left.
    Removed,
    /// A line only on the right.
    Added,
    /// A line changed in place: both sides, with word-level spans.
    Changed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct DiffLine {
    /// 1-based line number on its side.
    pub number: u32,
    /// The line without its line ending.
    pub text: String,
    /// For changed rows: which parts of `text` differ (byte offsets).
    pub spans: Vec<DiffSpan>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct DiffSpan {
    pub start: u32,
    pub end: u32,
    pub changed: bool,
}
