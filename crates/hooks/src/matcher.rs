//! Which hooks an event reaches. For tool events the group's `matcher` is a
//! regular expression over the tool's name (anchored as 0.61 does not: a
//! search, so `write` matches `write_file`); for the others it is compared
//! exactly with the event's trigger (`startup`, `auto`, ...). Absent, `""`
//! and `"*"` match everything.

use gd_protocol::HookEventName;
use regex::Regex;

/// Whether a group with `matcher` runs for `target` (the tool name, or the
/// lifecycle trigger; `None` when the event has none).
pub fn matches(event: HookEventName, matcher: Option<&str>, target: Option<&str>) -> bool {
    let Some(matcher) = matcher
        .map(str::trim)
        .filter(|m| !m.is_empty() && *m != "*")
    else {
        return true;
    };
    let Some(target) = target else {
        return true;
    };
    match event {
        HookEventName::BeforeTool | HookEventName::AfterTool => match Regex::new(matcher) {
            Ok(re) => re.is_match(target),
            // 0.61 falls back to an exact comparison for a pattern that is
            // not a valid expression.
            Err(_) => matcher == target,
        },
        _ => matcher == target,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_matchers_are_regexes_and_lifecycle_ones_exact() {
        let tool = HookEventName::BeforeTool;
        assert!(matches(tool, Some("write_file|replace"), Some("replace")));
        assert!(matches(tool, Some("read_.*"), Some("read_many_files")));
        assert!(!matches(tool, Some("^write_file$"), Some("read_file")));
        assert!(matches(tool, Some("*"), Some("anything")));
        assert!(matches(tool, None, Some("anything")));
        assert!(matches(tool, Some("(("), Some("((")));
        let start = HookEventName::SessionStart;
        assert!(matches(start, Some("startup"), Some("startup")));
        assert!(!matches(start, Some("start"), Some("startup")));
        assert!(matches(start, Some(""), Some("resume")));
    }
}
