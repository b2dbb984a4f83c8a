//! All of this crate's integration tests in one test binary (one module a file), so the
//! workspace links one executable here instead of one per file: linking dozens of copies of
//! the dependency tree was most of the build's time (issue 32). Run one file's tests with
//! `cargo test -p gd-core --test it <file>::`.

mod agents_catalog;
mod at_refs;
mod checkpoints;
mod commands;
mod common;
mod confirmations;
mod custom_commands;
mod decided_by;
mod deferred_history;
mod extension_ops;
mod extensions_keyring;
mod faults;
mod file_tools;
mod history;
mod hooks;
mod hooks_model;
mod hunk_decisions;
mod ignored_paths;
mod limits;
mod mcp_confirmations;
mod memory;
mod memory_edits;
mod memory_limits;
mod memory_links;
mod op_loop;
mod plan_mode;
mod policy_editor;
mod quota;
mod restore;
mod revert_edit;
mod routing;
mod sandbox_expansion;
mod scheduler;
mod settings_screen;
mod shell_settings;
mod shell_tool;
mod skills;
mod subagent_policy;
mod subagent_wire;
mod subagents;
mod subagents_history;
mod subagents_mcp;
mod topics;
mod turn_context;
mod turn_loop;
mod turn_review;
mod usage_stats;
mod wait_for_previous;
mod web_fetch;
mod web_tools;
mod wire_shape;
mod write_race;
