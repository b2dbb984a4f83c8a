//! The rule behind a verdict, described fully enough for people to answer
//! "why was this allowed?": its tier, priorities, modes, where it is written
//! and its text as written there.

use std::path::Path;

use crate::rule::{Mode, Rule, RuleDecision, RuleSource, Tier};

/// The rule that decided a call, as people need to see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchedRule {
    pub tier: Tier,
    /// The `priority` written in the rule (0..=999).
    pub priority: u16,
    /// `tier base * 1000 + priority`, what the engine compares.
    pub effective_priority: u32,
    /// The rule's own decision (the verdict may differ, see [`Downgrade`]).
    pub decision: RuleDecision,
    /// The modes the rule applies in; empty means all.
    pub modes: Vec<Mode>,
    /// File and line for rules read from a policy file (built-in rules have
    /// `<built-in>/…` paths, settings-derived ones `<settings>/…`).
    pub source: Option<RuleSource>,
    /// The `[[rule]]` table as written in its file, or a canonical TOML
    /// rendering for rules that have no file (or whose file changed since).
    pub text: String,
    /// Where the rule comes from in plain words: a file path, "default
    /// policy (yolo.toml)", "settings.json mcp.allowed", "this session's
    /// Always allow".
    pub origin: String,
    /// Added during this session ("Always allow", possibly also saved).
    pub session: bool,
    /// For a shell command decided command by command: the command whose
    /// rule decided the outcome.
    pub command: Option<String>,
}

/// Why the verdict is not the matched rule's own decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Downgrade {
    /// An allow does not cover a command writing to or reading from a file
    /// unless the rule has `allowRedirection`.
    Redirection { command: String },
    /// The analysis could not prove which commands the text runs.
    Unproven { reasons: Vec<String> },
    /// `ask_user` in a session that cannot ask becomes `deny`.
    NonInteractive,
}

impl Downgrade {
    /// One sentence for people.
    pub fn reason(&self) -> String {
        match self {
            Downgrade::Redirection { command } => format!(
                "`{command}` redirects to or from a file, which the allowing rule does not cover (no allowRedirection)"
            ),
            Downgrade::Unproven { reasons } if reasons.is_empty() => {
                "the command could not be proven to run only what the rules allow".to_owned()
            }
            Downgrade::Unproven { reasons } => format!(
                "the command could not be proven to run only what the rules allow ({})",
                reasons.join("; ")
            ),
            Downgrade::NonInteractive => {
                "this session is non-interactive, so a question becomes a denial".to_owned()
            }
        }
    }
}

impl MatchedRule {
    /// Describes `rule`. `builtin_text` finds the text of a built-in file by
    /// its name (the engine embeds them).
    pub(crate) fn describe(
        rule: &Rule,
        session: bool,
        command: Option<String>,
        builtin_text: &dyn Fn(&str) -> Option<&'static str>,
    ) -> MatchedRule {
        // This session's own rules are numbered `<session>:N` (so the policy
        // editor's dry run can name them); they have no file.
        let source = rule
            .source
            .clone()
            .filter(|s| !s.path.starts_with("<session>"));
        let text = source
            .as_ref()
            .and_then(|source| written_text(source, builtin_text))
            .unwrap_or_else(|| crate::engine::render_rule(rule));
        MatchedRule {
            tier: rule.tier,
            priority: rule.priority,
            effective_priority: rule.effective_priority(),
            decision: rule.decision,
            modes: rule.modes.clone(),
            origin: origin(source.as_ref(), session),
            source,
            text,
            session,
            command,
        }
    }

    /// A rule of the built-in defaults that only applies in some modes (the
    /// yolo, autoEdit and plan defaults): the approval mode decided.
    pub fn is_mode_default(&self) -> bool {
        self.tier == Tier::Default && !self.modes.is_empty() && !self.modes.contains(&Mode::Default)
    }
}

fn origin(source: Option<&RuleSource>, session: bool) -> String {
    let Some(source) = source else {
        return if session {
            "this session's Always allow".to_owned()
        } else {
            "added by the app".to_owned()
        };
    };
    if let Ok(name) = source.path.strip_prefix("<built-in>") {
        return format!("default policy ({})", name.display());
    }
    if let Ok(key) = source.path.strip_prefix("<settings>") {
        return format!("settings.json {}", key.display());
    }
    let path = source.path.display().to_string();
    if session {
        format!("Always allow and save → {path}")
    } else {
        path
    }
}

/// The `[[rule]]` table starting at the source's line, from the file (or
/// the embedded built-in text): the header and every line up to the next
/// table header, trailing blank and comment lines dropped. `None` when the
/// file cannot be read or its line is no longer a `[[rule]]` header.
fn written_text(
    source: &RuleSource,
    builtin_text: &dyn Fn(&str) -> Option<&'static str>,
) -> Option<String> {
    let owned;
    let text: &str = if let Ok(name) = source.path.strip_prefix("<built-in>") {
        builtin_text(name.to_str()?)?
    } else if source.path.starts_with("<settings>") || source.path.starts_with("<session>") {
        return None;
    } else {
        owned = read_small(&source.path)?;
        &owned
    };
    table_at(text, source.line)
}

/// Policy files are small; a huge one is not shown (its rendering is).
fn read_small(path: &Path) -> Option<String> {
    const MAX: u64 = 1 << 20;
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > MAX {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

pub(crate) fn table_at(text: &str, line: usize) -> Option<String> {
    let mut lines = text.lines().skip(line.checked_sub(1)?);
    let header = lines.next()?;
    if header.trim() != "[[rule]]" && !header.trim_start().starts_with("[[rule]]") {
        return None;
    }
    let mut out = vec![header];
    for l in lines {
        if l.trim_start().starts_with('[') && !l.trim_start().starts_with("[ ") {
            // The next table (`[[rule]]`, `[x]`); an array continuation line
            // starting with `[` inside a value is rare enough to ignore.
            break;
        }
        out.push(l);
    }
    while out
        .last()
        .is_some_and(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        out.pop();
    }
    let mut s = out.join("\n");
    s.push('\n');
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_at_stops_at_the_next_table_and_drops_trailing_comments() {
        let text = "# top\n[[rule]]\ntoolName = \"a\"\n# note\ndecision = \"allow\"\n\n# next\n[[rule]]\ntoolName = \"b\"\n";
        assert_eq!(
            table_at(text, 2).unwrap(),
            "[[rule]]\ntoolName = \"a\"\n# note\ndecision = \"allow\"\n"
        );
        assert_eq!(table_at(text, 8).unwrap(), "[[rule]]\ntoolName = \"b\"\n");
        assert_eq!(table_at(text, 3), None, "not a header");
        assert_eq!(table_at(text, 0), None);
        assert_eq!(table_at(text, 99), None);
    }
}
