//! All of this crate's integration tests in one test binary (one module a file), so the
//! workspace links one executable here instead of one per file: linking dozens of copies of
//! the dependency tree was most of the build's time (issue 32). Run one file's tests with
//! `cargo test -p gd-policy --test it <file>::`.

mod bash_differential;
mod common;
mod declare;
mod edit;
mod extension_tier;
mod loading;
mod matched_rule;
mod precedence;
mod shell_commands;
mod shell_fuzz;
