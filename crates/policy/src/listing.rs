//! The effective rules of an engine, as a policy editor lists them: every
//! tier and this session's rules, in the order the engine weighs them.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::edit::{RuleSpec, render_spec, rule_text};
use crate::engine::PolicyEngine;
use crate::loader::line_starts;
use crate::rule::Rule;

/// One rule of the listing.
#[derive(Debug, Clone)]
pub struct ListedRule {
    pub rule: Rule,
    /// Added during this session ("always allow"), not read from a file
    /// when the engine was loaded.
    pub session: bool,
    /// `tier base * 1000 + priority` (see [`Rule::effective_priority`]).
    pub effective_priority: u32,
    /// The rule's TOML: its lines in its file when it has one on disk,
    /// else the table it would be written as.
    pub text: String,
}

/// The engine's rules (loaded, then the session's) from the one that wins
/// first to the one that wins last: by effective priority, then (on equal
/// priority) `deny` before `ask_user` before `allow`, then in load order,
/// which is how the engine breaks ties. A session rule that
/// "always allow and save" also wrote to a file already loaded is listed
/// once, as the file's rule.
pub fn effective_rules(engine: &PolicyEngine) -> Vec<ListedRule> {
    let loaded = engine.rules();
    let mut files: HashMap<PathBuf, Option<FileText>> = HashMap::new();
    let mut listed: Vec<ListedRule> = Vec::new();
    let in_loaded = |rule: &Rule| {
        rule.source.as_ref().is_some_and(|s| {
            loaded
                .iter()
                .any(|l| l.source.as_ref() == Some(s) && l.decision == rule.decision)
        })
    };
    let session = engine.session_rules();
    let all = loaded.iter().map(|r| (r.clone(), false)).chain(
        session
            .into_iter()
            .filter(|r| !in_loaded(r))
            .map(|r| (r, true)),
    );
    for (rule, session) in all {
        let text = text_of(&rule, &mut files);
        listed.push(ListedRule {
            effective_priority: rule.effective_priority(),
            rule,
            session,
            text,
        });
    }
    // Stable: equal keys keep load order, as the engine's first-wins tie.
    listed.sort_by_key(|l| Reverse((l.effective_priority, l.rule.decision)));
    listed
}

/// A policy file's text (without its BOM) and where its lines start, read
/// once per listing: finding each rule's lines by skipping lines from the
/// file's start made listing a 10,000-rule file take seconds (issue 33).
struct FileText {
    text: String,
    starts: Vec<usize>,
}

fn text_of(rule: &Rule, files: &mut HashMap<PathBuf, Option<FileText>>) -> String {
    let on_disk = rule.source.as_ref().and_then(|source| {
        if is_pseudo_path(&source.path) || source.line == 0 {
            return None;
        }
        let file = files.entry(source.path.clone()).or_insert_with(|| {
            let text = std::fs::read_to_string(&source.path).ok()?;
            let text = text.trim_start_matches('\u{feff}').to_owned();
            let starts = line_starts(&text);
            Some(FileText { text, starts })
        });
        let file = file.as_ref()?;
        let start = *file.starts.get(source.line - 1)?;
        let lines = rule_text(file.text.get(start..)?, 1);
        lines.trim_start().starts_with("[[rule]]").then_some(lines)
    });
    on_disk.unwrap_or_else(|| render_spec(&RuleSpec::from_rule(rule)))
}

/// `<built-in>/…`, `<settings>/…`: rules that are not in a file.
pub fn is_pseudo_path(path: &Path) -> bool {
    path.to_string_lossy().starts_with('<')
}
