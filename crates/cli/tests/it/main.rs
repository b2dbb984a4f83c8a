//! All of this crate's integration tests in one test binary (one module a file), so the
//! workspace links one executable here instead of one per file: linking dozens of copies of
//! the dependency tree was most of the build's time (issue 32). Run one file's tests with
//! `cargo test -p gd-cli --test it <file>::`.

mod agents_list;
mod auth;
mod checkpoints_headless;
mod common;
mod context_links;
mod extensions_cli;
mod extensions_compat;
mod extensions_git_args;
mod extensions_new;
mod extensions_only;
mod extensions_security;
mod extensions_settings;
mod headless;
mod history;
mod hooks_headless;
mod mcp_auth;
mod mcp_headless;
mod memory_commands;
mod models_headless;
mod plan_headless;
mod sandbox_headless;
mod settings_headless;
mod shell_attacks;
mod skills_cli;
mod slash_commands;
mod subagents_headless;
mod terminal_output;
mod tools_headless;
mod trust_headless;
