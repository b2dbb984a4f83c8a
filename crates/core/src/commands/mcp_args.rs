//! The arguments of an MCP prompt run as a slash command, parsed as Gemini
//! CLI parses them: `--name="value"` (or `--name=value`) by name, the rest
//! by position, in the order of the required arguments not named. A single
//! missing required argument takes all the positional words; with several,
//! each takes one word (`"quoted words"` count as one) and any left without
//! a value are reported as missing.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use gd_protocol::McpPromptArgument;
use regex::Regex;

static NAMED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"--([^=]+)=(?:"((?:\\.|[^"\\])*)"|([^ ]+))"#).expect("valid regex")
});
static POSITIONAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""((?:\\.|[^"\\])*)"|([^ ]+)"#).expect("valid regex"));
static ESCAPED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\\(.)").expect("valid regex"));

/// The prompt's arguments from what was typed after the command's name; an
/// error names the required arguments that got no value.
pub fn parse_args(
    typed: &str,
    arguments: &[McpPromptArgument],
) -> Result<BTreeMap<String, String>, String> {
    let mut named = BTreeMap::new();
    let mut positional_text = String::new();
    let mut last = 0;
    for captures in NAMED.captures_iter(typed) {
        let whole = captures.get(0).expect("a match has group 0");
        let value = captures
            .get(2)
            .or_else(|| captures.get(3))
            .map_or("", |m| m.as_str());
        named.insert(captures[1].to_owned(), unescape(value));
        positional_text.push_str(&typed[last..whole.start()]);
        last = whole.end();
    }
    positional_text.push_str(&typed[last..]);
    let positional: Vec<String> = POSITIONAL
        .captures_iter(positional_text.trim())
        .map(|c| unescape(c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str())))
        .collect();

    let mut values = BTreeMap::new();
    for argument in arguments {
        if let Some(value) = named.get(&argument.name).filter(|v| !v.is_empty()) {
            values.insert(argument.name.clone(), value.clone());
        }
    }
    let unfilled: Vec<&McpPromptArgument> = arguments
        .iter()
        .filter(|a| a.required && !values.contains_key(&a.name))
        .collect();
    if let [only] = unfilled.as_slice() {
        values.insert(only.name.clone(), positional.join(" "));
        return Ok(values);
    }
    let mut missing = Vec::new();
    for (i, argument) in unfilled.iter().enumerate() {
        match positional.get(i) {
            Some(value) => {
                values.insert(argument.name.clone(), value.clone());
            }
            None => missing.push(format!("--{}", argument.name)),
        }
    }
    if missing.is_empty() {
        Ok(values)
    } else {
        Err(format!(
            "Missing required argument(s): {}",
            missing.join(", ")
        ))
    }
}

fn unescape(value: &str) -> String {
    ESCAPED.replace_all(value, "$1").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(name: &str, required: bool) -> McpPromptArgument {
        McpPromptArgument {
            name: name.into(),
            description: None,
            required,
        }
    }

    fn parsed(typed: &str, args: &[McpPromptArgument]) -> Result<Vec<(String, String)>, String> {
        parse_args(typed, args).map(|m| m.into_iter().collect())
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn named_and_positional_arguments() {
        let one = [arg("name", true)];
        assert_eq!(
            parsed("Ada Lovelace", &one),
            Ok(pairs(&[("name", "Ada Lovelace")]))
        );
        assert_eq!(
            parsed(r#"--name="Ada \"the\" Countess""#, &one),
            Ok(pairs(&[("name", r#"Ada "the" Countess"#)]))
        );
        assert_eq!(
            parsed("", &one),
            Ok(pairs(&[("name", "")])),
            "one required takes all, even nothing"
        );

        let two = [arg("file", true), arg("focus", true), arg("tone", false)];
        assert_eq!(
            parsed(r#"src/main.rs "error handling" --tone=dry"#, &two),
            Ok(pairs(&[
                ("file", "src/main.rs"),
                ("focus", "error handling"),
                ("tone", "dry")
            ]))
        );
        assert_eq!(
            parsed(r#"--focus=speed a.rs"#, &two),
            Ok(pairs(&[("file", "a.rs"), ("focus", "speed")]))
        );
        assert_eq!(
            parsed("", &two),
            Err("Missing required argument(s): --file, --focus".into())
        );
        assert_eq!(
            parsed("a.rs", &two),
            Err("Missing required argument(s): --focus".into())
        );
        assert_eq!(parsed("ignored words", &[]), Ok(vec![]));
    }
}
