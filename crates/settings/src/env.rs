//! `$VAR` / `${VAR}` expansion in settings values.

use serde_json::Value;

/// Expands environment variables in every string of `value`, recursively.
/// Unknown variables are left as written, so a literal `$` survives.
pub fn expand_env(value: &mut Value, get: &dyn Fn(&str) -> Option<String>) {
    match value {
        Value::String(s) if s.contains('$') => *s = expand_str(s, get),
        Value::Array(items) => items.iter_mut().for_each(|v| expand_env(v, get)),
        Value::Object(map) => map.values_mut().for_each(|v| expand_env(v, get)),
        _ => {}
    }
}

/// Expands `$NAME` and `${NAME}` in one string.
pub fn expand_str(input: &str, get: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let (name, consumed) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) => (&braced[..end], end + 2),
                None => ("", 0),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        let valid = !name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit());
        match valid.then(|| get(name)).flatten() {
            Some(value) => out.push_str(&value),
            None => out.push_str(&rest[pos..pos + 1 + consumed]),
        }
        rest = &rest[pos + 1 + consumed..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/u".into()),
            "TOKEN" => Some("t0k".into()),
            _ => None,
        }
    }

    #[test]
    fn expands_both_forms_and_keeps_unknowns() {
        assert_eq!(expand_str("$HOME/x ${TOKEN}!", &get), "/home/u/x t0k!");
        assert_eq!(
            expand_str("$NOPE ${NOPE} $ 5$ ${", &get),
            "$NOPE ${NOPE} $ 5$ ${"
        );
        assert_eq!(expand_str("$1", &get), "$1");
    }

    #[test]
    fn expands_nested_values() {
        let mut v = serde_json::json!({"a": ["$HOME"], "b": {"c": "${TOKEN}"}, "n": 1});
        expand_env(&mut v, &get);
        assert_eq!(
            v,
            serde_json::json!({"a": ["/home/u"], "b": {"c": "t0k"}, "n": 1})
        );
    }
}
