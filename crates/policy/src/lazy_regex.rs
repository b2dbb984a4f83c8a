//! Rule regexes (`argsPattern`, `commandRegex`) checked when a policy file
//! loads but compiled only when a rule is first evaluated.
//!
//! Every launch loads the built-in policies and the user's files, while most
//! rules with a regex are only ever evaluated in some modes (plan mode's
//! rules) or for some tools. Compiling them at load cost more than a whole
//! headless turn's other work (bench/budget.toml); parsing them is enough to
//! report a bad pattern at load with its file and line.

use std::fmt;
use std::sync::OnceLock;

use regex::Regex;

/// A regular expression known to parse, compiled on first use.
#[derive(Clone)]
pub struct LazyRegex {
    pattern: String,
    compiled: OnceLock<Option<Regex>>,
}

impl LazyRegex {
    /// Checks `pattern` with the regex crate's own parser (the syntax
    /// `Regex::new` accepts) without compiling it. The error is the
    /// parser's reason.
    pub fn new(pattern: &str) -> Result<Self, String> {
        regex_syntax::Parser::new()
            .parse(pattern)
            .map_err(|e| e.to_string())?;
        Ok(Self {
            pattern: pattern.to_owned(),
            compiled: OnceLock::new(),
        })
    }

    /// An already compiled regex (tests, rules built in code).
    pub fn from_regex(regex: Regex) -> Self {
        Self {
            pattern: regex.as_str().to_owned(),
            compiled: OnceLock::from(Some(regex)),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Whether `text` matches; `None` when the pattern, although it
    /// parses, cannot be compiled (it exceeds the regex crate's size
    /// limit). The caller decides what an unknown answer means (a rule that
    /// allows must then not match; one that denies or asks must).
    pub fn is_match(&self, text: &str) -> Option<bool> {
        self.compiled
            .get_or_init(|| match Regex::new(&self.pattern) {
                Ok(re) => Some(re),
                Err(error) => {
                    tracing::error!(pattern = %self.pattern, %error, "a policy regex cannot be compiled");
                    None
                }
            })
            .as_ref()
            .map(|re| re.is_match(text))
    }
}

impl fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("LazyRegex").field(&self.pattern).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_pattern_is_refused_at_load() {
        let e = LazyRegex::new("a(").unwrap_err();
        assert!(e.contains("unclosed"), "{e}");
    }

    #[test]
    fn matches_after_compiling_on_first_use() {
        let re = LazyRegex::new(r#""path":"[^"]*\.md""#).unwrap();
        assert!(re.compiled.get().is_none());
        assert_eq!(re.is_match(r#"{"path":"a.md"}"#), Some(true));
        assert_eq!(re.is_match(r#"{"path":"a.rs"}"#), Some(false));
        assert_eq!(re.as_str(), r#""path":"[^"]*\.md""#);
    }

    #[test]
    fn a_pattern_too_big_to_compile_answers_unknown() {
        // Parses, but its compiled size is far beyond the default limit.
        let re = LazyRegex::new(r"\w{1000}\w{1000}\w{1000}").unwrap();
        assert_eq!(re.is_match("x"), None);
    }

    #[test]
    fn an_uncompilable_regex_never_allows_and_never_escapes_a_deny() {
        use crate::{Rule, RuleDecision};
        let huge = || Some(LazyRegex::new(r"\w{1000}\w{1000}\w{1000}").unwrap());
        let json = || "{}";
        let mut allow = Rule::for_tool("read_file", RuleDecision::Allow);
        allow.args_pattern = huge();
        assert!(!allow.matches_args(&json, None));
        let mut deny = Rule::for_tool("read_file", RuleDecision::Deny);
        deny.args_pattern = huge();
        assert!(deny.matches_args(&json, None));
        let mut ask = Rule::for_tool("run_shell_command", RuleDecision::AskUser);
        ask.command_regex = huge();
        assert!(ask.matches_args(&json, Some("ls")));
    }
}
