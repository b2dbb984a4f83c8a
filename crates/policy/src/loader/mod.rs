//! Reading policy files: TOML `[[rule]]` tables, checked field by field,
//! with every problem reported as `path:line:column: message`.
//!
//! This module reads files and directories; `rule` checks one `[[rule]]`
//! table, `values` one field's value.

mod rule;
#[cfg(test)]
mod tests;
mod values;

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use thiserror::Error;
use toml::Spanned;
use toml::de::{DeTable, DeValue};
use tracing::debug;

use crate::rule::{Rule, RuleSource, Tier};
use rule::parse_rule;

/// A policy file (or directory) that could not be used, or one problem in
/// it. `line` and `column` are 1-based; both are 0 when the problem is not
/// at a place in the file (it cannot be read), and then the Display form is
/// `path: message`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub struct PolicyError {
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path.display(), self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.path.display(),
                self.line,
                self.column,
                self.message
            )
        }
    }
}

/// Where each line of a file starts, found in one pass, so that the line
/// of every rule (and of every error) is a binary search. Counting line
/// breaks from the file's start for each rule made loading quadratic: a
/// 10,000-rule file took seconds (issue 33).
pub(crate) struct Lines<'a> {
    text: &'a str,
    /// Byte offsets of the line starts: 0, then each one after a `\n`.
    starts: Vec<usize>,
}

#[cfg(test)]
thread_local! {
    /// How many times a file's text was scanned for line breaks (tests).
    pub(crate) static SCANS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The byte offsets where the lines of `text` start (as `str::lines`
/// counts them): 0, then each one after a `\n`.
pub(crate) fn line_starts(text: &str) -> Vec<usize> {
    #[cfg(test)]
    SCANS.with(|n| n.set(n.get() + 1));
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Self {
            text,
            starts: line_starts(text),
        }
    }

    /// Byte offset → 1-based line and column (in characters).
    pub(crate) fn line_column(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        // `starts[0]` is 0, so at least one start is at or before `offset`.
        let line = self.starts.partition_point(|&start| start <= offset);
        let line_start = self.starts[line - 1];
        // Offsets come from the TOML parser's spans, on character
        // boundaries; were one not, count bytes rather than panic.
        let column = self
            .text
            .get(line_start..offset)
            .map_or(offset - line_start, |s| s.chars().count());
        (line, column + 1)
    }
}

struct FileCtx<'a> {
    path: &'a Path,
    lines: Lines<'a>,
    errors: Vec<PolicyError>,
}

impl FileCtx<'_> {
    fn error(&mut self, span: Range<usize>, message: impl Into<String>) {
        let (line, column) = self.lines.line_column(span.start);
        self.errors.push(PolicyError {
            path: self.path.to_owned(),
            line,
            column,
            message: message.into(),
        });
    }
}

/// Parses one policy file's text. Either every rule in it is valid and all
/// are returned, or the errors are (all of them, in file order) and the file
/// should be skipped: half a policy file could be more permissive than the
/// whole one.
pub fn parse_policy_file(
    text: &str,
    path: &Path,
    tier: Tier,
) -> Result<Vec<Rule>, Vec<PolicyError>> {
    let bom = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let mut ctx = FileCtx {
        path,
        lines: Lines::new(text),
        errors: Vec::new(),
    };
    let doc = match DeTable::parse(&text[bom..]) {
        Ok(doc) => doc,
        Err(e) => {
            let start = e.span().map_or(0, |s| s.start) + bom;
            ctx.error(
                start..start,
                format!("invalid TOML: {}", e.message().trim_end()),
            );
            return Err(ctx.errors);
        }
    };
    let shift = |s: Range<usize>| s.start + bom..s.end + bom;
    let mut rules = Vec::new();
    for (key, value) in doc.get_ref().iter() {
        let name: &str = key.get_ref();
        if name != "rule" {
            let message = if name == "safety_checker" {
                "`[[safety_checker]]` tables are not supported by Gemini Desktop".to_owned()
            } else {
                format!("unknown top-level key `{name}`: a policy file holds `[[rule]]` tables")
            };
            ctx.error(shift(key.span()), message);
            continue;
        }
        let DeValue::Array(items) = value.get_ref() else {
            ctx.error(
                shift(value.span()),
                format!(
                    "`rule` must be an array of tables (`[[rule]]`), found {}",
                    value.get_ref().type_str()
                ),
            );
            continue;
        };
        for item in items.iter() {
            let DeValue::Table(table) = item.get_ref() else {
                ctx.error(
                    shift(item.span()),
                    format!(
                        "each `rule` must be a table, found {}",
                        item.get_ref().type_str()
                    ),
                );
                continue;
            };
            let header = shift(item.span());
            if let Some(rule) = parse_rule(&mut ctx, table, header.clone(), bom, tier) {
                let (line, _) = ctx.lines.line_column(header.start);
                rules.push(Rule {
                    source: Some(RuleSource {
                        path: path.to_owned(),
                        line,
                    }),
                    ..rule
                });
            }
        }
    }
    if ctx.errors.is_empty() {
        Ok(rules)
    } else {
        ctx.errors.sort_by_key(|e| (e.line, e.column));
        Err(ctx.errors)
    }
}

type Value<'a> = Spanned<DeValue<'a>>;

/// Loads extra policy files or directories (Gemini CLI's `policyPaths` /
/// `adminPolicyPaths` settings) into `tier`, the way the standard
/// directories are read: a missing path is skipped, a broken file is an
/// error and its rules are left out.
pub fn load_paths(paths: &[PathBuf], tier: Tier) -> (Vec<Rule>, Vec<PolicyError>) {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        load_dir(path, tier, &mut rules, &mut errors);
    }
    (rules, errors)
}

/// Reads every `*.toml` file of `dir` (sorted by name), or `dir` itself
/// when it is a `.toml` file. A missing directory is not an error. For the
/// workspace tier, files that resolve outside the directory (symbolic links)
/// are refused: a repository must not point its policy at other files.
pub(crate) fn load_dir(
    dir: &Path,
    tier: Tier,
    rules: &mut Vec<Rule>,
    errors: &mut Vec<PolicyError>,
) {
    let io_error = |path: &Path, message: String| PolicyError {
        path: path.to_owned(),
        line: 0,
        column: 0,
        message,
    };
    let files: Vec<PathBuf> = if dir.is_file() {
        if dir.extension().is_some_and(|e| e == "toml") {
            vec![dir.to_owned()]
        } else {
            errors.push(io_error(
                dir,
                "a policy path must be a directory or a .toml file".into(),
            ));
            return;
        }
    } else {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                errors.push(io_error(dir, format!("cannot read policy directory: {e}")));
                return;
            }
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        files
    };
    for path in files {
        if tier == Tier::Workspace
            && let (Ok(real), Ok(real_dir)) = (path.canonicalize(), dir.canonicalize())
            && !real.starts_with(&real_dir)
        {
            errors.push(io_error(
                &path,
                "refused: it links to a file outside the workspace policy directory".into(),
            ));
            continue;
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if path.is_dir() => {
                debug!(path = %path.display(), %e, "skipping a directory named *.toml");
                continue;
            }
            Err(e) => {
                errors.push(io_error(&path, format!("cannot read policy file: {e}")));
                continue;
            }
        };
        debug!(path = %path.display(), %tier, "loading policy file");
        match parse_policy_file(&text, &path, tier) {
            Ok(file_rules) => rules.extend(file_rules),
            Err(file_errors) => errors.extend(file_errors),
        }
    }
}
