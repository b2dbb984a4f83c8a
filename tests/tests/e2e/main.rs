//! All of this crate's integration tests in one test binary (one module a file), so the
//! workspace links one executable here instead of one per file: linking dozens of copies of
//! the dependency tree was most of the build's time (issue 32). Run one file's tests with
//! `cargo test -p gd-e2e --test e2e <file>::`.

mod app_shell;
mod approvals;
mod chat;
mod chat_scroll;
mod checkpoints;
mod commands;
mod conversations;
mod docs_review;
mod docs_screenshots;
mod docs_truth;
mod extensions;
mod header;
mod history;
mod hooks;
mod hunk_review;
mod installed;
mod mcp;
mod native_theme;
mod overlays;
mod picker;
mod plan_mode;
mod policy_editor;
mod restart;
mod resume;
mod revert;
mod sandbox;
mod settings;
mod signin;
mod skills;
mod subagents;
mod tool_cards;
mod topics;
mod turn_review;
mod updater;
mod usage_meter;
mod webkit_input;
mod worktrees;
