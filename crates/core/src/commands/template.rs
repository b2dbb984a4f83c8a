//! A custom command's prompt, split into the pieces that are expanded
//! differently: plain text, `!{shell command}` and `@{path}`. Braces nest,
//! so `!{echo {a,b}}` is one shell piece. `{{args}}` is replaced by the
//! arguments as typed in text, and shell-quoted inside `!{…}` so arguments
//! cannot inject commands. Without `{{args}}` anywhere, typed arguments are
//! appended after a blank line as the whole invocation (`/name args`), as
//! Gemini CLI does.

pub const ARGS: &str = "{{args}}";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Shell(String),
    File(String),
}

/// Why a prompt cannot be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("unclosed '{0}{{' in the prompt (missing '}}')")]
    Unclosed(char),
}

/// The prompt of `/name args`, as pieces with `{{args}}` substituted.
pub fn expand(prompt: &str, name: &str, args: &str) -> Result<Vec<Piece>, TemplateError> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut rest = prompt;
    while let Some(i) = rest.find(['!', '@']) {
        let marker = rest[i..].chars().next().unwrap_or('!');
        if !rest[i + 1..].starts_with('{') {
            text.push_str(&rest[..i + 1]);
            rest = &rest[i + 1..];
            continue;
        }
        text.push_str(&rest[..i]);
        let body_start = i + 2;
        let mut depth = 1;
        let mut end = None;
        for (offset, c) in rest[body_start..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(body_start + offset);
                        break;
                    }
                }
                _ => {}
            }
        }
        let end = end.ok_or(TemplateError::Unclosed(marker))?;
        let body = &rest[body_start..end];
        if !text.is_empty() {
            pieces.push(Piece::Text(std::mem::take(&mut text).replace(ARGS, args)));
        }
        pieces.push(if marker == '!' {
            Piece::Shell(body.replace(ARGS, &shell_quote(args)))
        } else {
            Piece::File(body.trim().replace(ARGS, args))
        });
        rest = &rest[end + 1..];
    }
    text.push_str(rest);
    if !prompt.contains(ARGS) && !args.is_empty() {
        text.push_str(&format!("\n\n/{name} {args}"));
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text.replace(ARGS, args)));
    }
    Ok(pieces)
}

/// `value` as one POSIX shell word.
pub fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Piece::*;

    #[test]
    fn pieces_args_and_quoting() {
        assert_eq!(
            expand(
                "Fix {{args}}: !{grep -r {{args}} .} in @{src/{{args}}.rs} ok",
                "fix",
                "it's"
            )
            .unwrap(),
            [
                Text("Fix it's: ".into()),
                Shell(r"grep -r 'it'\''s' .".into()),
                Text(" in ".into()),
                File("src/it's.rs".into()),
                Text(" ok".into())
            ]
        );
        assert_eq!(
            expand("!{echo {a,b}}", "x", "").unwrap(),
            [Shell("echo {a,b}".into())]
        );
        assert_eq!(
            expand("Review the code.", "review", "carefully").unwrap(),
            [Text("Review the code.\n\n/review carefully".into())]
        );
        assert_eq!(
            expand("Hi! me@x", "x", "").unwrap(),
            [Text("Hi! me@x".into())]
        );
        assert_eq!(expand("!{oops", "x", ""), Err(TemplateError::Unclosed('!')));
    }
}
