//! Unit tests of the analysis; the engine-level and real-bash tests are in
//! `crates/policy/tests/`.

use super::*;

fn names(cmd: &str) -> Vec<Option<String>> {
    analyze(cmd).commands.into_iter().map(|c| c.name).collect()
}

fn texts(cmd: &str) -> Vec<String> {
    split_commands(cmd)
}

fn proven(cmd: &str) -> bool {
    analyze(cmd).is_proven()
}

fn n(v: &[&str]) -> Vec<Option<String>> {
    v.iter().map(|s| Some((*s).to_owned())).collect()
}
