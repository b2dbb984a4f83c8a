//! `@`-references in user prompts (Gemini CLI's `@` command): `@path/to/file`,
//! `@dir/` and paths with escaped spaces (`@my\ file.txt`) are read with the
//! `read_many_files` tool's logic (ignore-aware; images, audio and PDFs
//! attached as inline data because they are named explicitly) and appended
//! to the prompt the way Gemini CLI does:
//!
//! ```text
//! <the prompt as typed>
//! --- Content from referenced files ---
//! Content from @<path>:
//! <content>
//! …
//! --- End of content ---
//! ```
//!
//! References that do not exist or lie outside the workspace are reported
//! to the user ([`Expanded::problems`]) instead of being sent silently.
//! [`read_references`] is the entry point for a file picker that already
//! knows the paths.

use std::path::{Path, PathBuf};

use gd_gemini::Part;
use serde_json::json;

use crate::tools::files::{is_within, resolve};
use crate::tools::read_many_files::ReadManyFiles;
use crate::tools::{LlmContent, Tool, ToolContext};

/// One `@` reference found in a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtReference {
    /// Byte range of `@…` in the prompt.
    pub start: usize,
    pub end: usize,
    /// The path with escapes removed.
    pub path: String,
}

/// Finds `@path` references, with Gemini CLI's path syntax: the path runs
/// up to whitespace or one of `,;!?()[]{}`; a backslash makes the next
/// character part of the path whatever it is (`@my\ file\(1\).txt`); a
/// final `.`, `:` or quote is punctuation unless escaped. The `@` must
/// start the prompt or follow whitespace or an opening `(`, `[`, `{` or
/// quote, so e-mail addresses are not references; a lone `@` is not one
/// either. The UI's `mention()` (ui/src/lib/picker.ts) writes paths this
/// way; `tests/fixtures/at-mentions.json` holds the pairs both are tested
/// against.
pub fn parse_references(prompt: &str) -> Vec<AtReference> {
    let mut found = Vec::new();
    let chars: Vec<(usize, char)> = prompt.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        let opens = i == 0 || {
            let before = chars[i - 1].1;
            before.is_whitespace() || matches!(before, '(' | '[' | '{' | '"' | '\'' | '`')
        };
        if c != '@' || !opens {
            i += 1;
            continue;
        }
        // The path's characters, whether each was escaped, and the byte
        // offset just after each.
        let mut path: Vec<(char, bool, usize)> = Vec::new();
        let mut j = i + 1;
        while j < chars.len() {
            let (at, ch) = chars[j];
            let after = |k: usize| chars.get(k).map_or(prompt.len(), |&(pos, _)| pos);
            if ch == '\\' && j + 1 < chars.len() {
                path.push((chars[j + 1].1, true, after(j + 2)));
                j += 2;
            } else if ch.is_whitespace() || TERMINATORS.contains(&ch) {
                break;
            } else {
                path.push((ch, false, at + ch.len_utf8()));
                j += 1;
            }
        }
        while let Some(&(last, escaped, _)) = path.last()
            && !escaped
            && matches!(last, '.' | ':' | '"' | '\'' | '`')
            && !(last == '.' && is_dot_component(&path))
        {
            path.pop();
        }
        if let Some(&(_, _, end)) = path.last() {
            found.push(AtReference {
                start,
                end,
                path: path.iter().map(|(c, _, _)| c).collect(),
            });
        }
        i = j.max(i + 1);
    }
    found
}

/// Characters that end a path unless escaped (Gemini CLI's set).
const TERMINATORS: &[char] = &[',', ';', '!', '?', '(', ')', '[', ']', '{', '}'];

/// The path ends in a `.` or `..` component (`@.`, `@../..`), whose final
/// dot is part of it.
fn is_dot_component(path: &[(char, bool, usize)]) -> bool {
    let text: String = path.iter().map(|(c, _, _)| c).collect();
    let last = text.rsplit('/').next().unwrap_or_default();
    last == "." || last == ".."
}

/// Content read for a set of references.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReferencedContent {
    /// `Content from @path:` headers, contents and inline data, between the
    /// start and end markers; empty when nothing was read.
    pub parts: Vec<Part>,
    /// What could not be used, one line each, for the user.
    pub problems: Vec<String>,
    /// The read tool's summary (files read, files skipped and why).
    pub summary: String,
}

/// Reads `paths` (absolute, or relative to the first workspace directory;
/// directories read recursively) with `read_many_files`' rules.
pub async fn read_references(paths: &[String], ctx: &ToolContext) -> ReferencedContent {
    let mut content = ReferencedContent::default();
    let base = ctx.workspace_dirs[0].clone();
    let mut specs = Vec::new();
    for raw in paths {
        let path = resolve(&base, raw);
        if !is_within(&path, &ctx.workspace_dirs) {
            content.problems.push(format!(
                "@{raw}: outside the workspace directories; not sent."
            ));
        } else if !path.exists() {
            content
                .problems
                .push(format!("@{raw}: no such file or directory; not sent."));
        } else {
            specs.push(path.display().to_string());
        }
    }
    if specs.is_empty() {
        return content;
    }
    let tool = ReadManyFiles::new();
    let result = tool.execute(json!({ "paths": specs }), ctx).await;
    content.summary = result.display.clone();
    if let Some(error) = result.error {
        content.problems.push(error.message);
        return content;
    }
    let parts = match result.llm_content {
        LlmContent::Parts(parts) => parts,
        LlmContent::Text(text) => {
            // Nothing was read (everything ignored or skipped).
            content.problems.push(text);
            return content;
        }
    };
    // Files the read skipped (ignored, binary, too large…) were named by
    // the user: say so.
    content.problems.extend(
        content
            .summary
            .lines()
            .filter(|line| line.starts_with("Skipped "))
            .map(|line| format!("Not sent: {line}")),
    );
    content
        .parts
        .push(Part::text("\n--- Content from referenced files ---"));
    for part in parts {
        match part.text.as_deref() {
            Some("--- End of content ---") => {}
            Some(text) => match split_file_part(text) {
                Some((path, body)) => {
                    let shown = display(&path, &ctx.workspace_dirs);
                    content
                        .parts
                        .push(Part::text(format!("\nContent from @{shown}:\n")));
                    if !body.starts_with("[Attached: ") {
                        content.parts.push(Part::text(body));
                    }
                }
                None => content.parts.push(part),
            },
            None => content.parts.push(part),
        }
    }
    content.parts.push(Part::text("\n--- End of content ---"));
    content
}

/// `--- <path> ---\n\n<body>\n\n` → (path, body).
fn split_file_part(text: &str) -> Option<(PathBuf, String)> {
    let rest = text.strip_prefix("--- ")?;
    let (path, body) = rest.split_once(" ---\n\n")?;
    let body = body.strip_suffix("\n\n").unwrap_or(body);
    Some((PathBuf::from(path), body.to_owned()))
}

/// A path relative to the workspace directory it is in.
fn display(path: &Path, roots: &[PathBuf]) -> String {
    roots
        .iter()
        .find_map(|root| path.strip_prefix(root).ok())
        .map_or_else(|| path.display().to_string(), |p| p.display().to_string())
}

/// A prompt with its references expanded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expanded {
    /// The prompt text followed by the referenced content.
    pub parts: Vec<Part>,
    /// References that could not be used, for the user.
    pub problems: Vec<String>,
}

/// Expands the `@` references in `prompt`; `None` when it has none.
/// `agents` are the `@name` mentions of subagents: as in Gemini CLI 0.61
/// they are not file references, even when a file of that name exists.
pub async fn expand_prompt(prompt: &str, ctx: &ToolContext, agents: &[String]) -> Option<Expanded> {
    let references = parse_references(prompt);
    let mut paths: Vec<String> = Vec::new();
    for reference in references {
        if !paths.contains(&reference.path) && !agents.contains(&reference.path) {
            paths.push(reference.path);
        }
    }
    if paths.is_empty() {
        return None;
    }
    let content = read_references(&paths, ctx).await;
    let mut parts = vec![Part::text(prompt)];
    parts.extend(content.parts);
    Some(Expanded {
        parts,
        problems: content.problems,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(prompt: &str) -> Vec<String> {
        parse_references(prompt)
            .into_iter()
            .map(|r| r.path)
            .collect()
    }

    #[test]
    fn references_escapes_and_punctuation() {
        assert_eq!(
            paths(r"see @src/main.rs, @docs/ and @my\ notes.txt. Mail a@b.c or @ alone"),
            ["src/main.rs", "docs/", "my notes.txt"]
        );
        assert_eq!(
            paths("@../up and @./ and @.. and @."),
            ["../up", "./", "..", "."]
        );
        assert_eq!(
            paths(r"(@a.rs) [@b.rs] @c.rs: @d\:, @e.rs? @f\(1\).txt"),
            ["a.rs", "b.rs", "c.rs", "d:", "e.rs", "f(1).txt"]
        );
        assert_eq!(paths(r"@notes\. is a file, @x\\y too"), ["notes.", r"x\y"]);
        assert_eq!(
            paths(r#"'@a.rs' "@b.rs". `@c.rs` @d\'"#),
            ["a.rs", "b.rs", "c.rs", "d'"]
        );
        let prompt = "x @a.md!";
        let r = &parse_references(prompt)[0];
        assert_eq!(&prompt[r.start..r.end], "@a.md");
        let prompt = r"x @ü\ b\. y";
        let r = &parse_references(prompt)[0];
        assert_eq!(
            (&prompt[r.start..r.end], r.path.as_str()),
            (r"@ü\ b\.", "ü b.")
        );
    }

    /// What the picker writes (`mention()` in ui/src/lib/picker.ts, tested
    /// against the same file) is read back as the same path, alone or in
    /// a sentence.
    #[test]
    fn picker_mentions_round_trip() {
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/fixtures/at-mentions.json")).unwrap();
        let cases = fixture["cases"].as_array().unwrap();
        assert!(cases.len() >= 10);
        for case in cases {
            let (path, mention) = (
                case["path"].as_str().unwrap(),
                case["mention"].as_str().unwrap(),
            );
            assert_eq!(paths(mention), [path], "{mention}");
            assert_eq!(
                paths(&format!("{mention} and ({mention}), then {mention}.")),
                [path, path, path],
                "{mention} in a sentence"
            );
            let prompt = format!("{mention}\nexplain");
            let r = &parse_references(&prompt)[0];
            assert_eq!(&prompt[r.start..r.end], mention);
        }
    }
}
