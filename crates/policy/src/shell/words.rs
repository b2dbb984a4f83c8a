//! What a word of the syntax tree means when bash cannot change it: static
//! values after quote removal, literal arithmetic, and the variables whose
//! value changes what a later command runs.

use tree_sitter::Node;

/// The value of a word after quote removal, when no expansion can change it
/// (no parameter, command or arithmetic expansion, no glob, brace or tilde
/// expansion); `None` otherwise.
pub(super) fn static_value(node: Node<'_>, src: &str) -> Option<String> {
    let text = &src[node.byte_range()];
    match node.kind() {
        "word" | "number" => unquoted_word(text),
        "raw_string" => text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .map(str::to_owned),
        "string" => {
            let mut cursor = node.walk();
            let plain = node
                .children(&mut cursor)
                .all(|c| matches!(c.kind(), "\"" | "string_content"));
            let inner = text.strip_prefix('"')?.strip_suffix('"')?;
            plain.then(|| double_quoted(inner))?
        }
        // `$'...'` without escapes means what it says; with escapes, decoding
        // them is not worth the risk of decoding them differently.
        "ansi_c_string" => text
            .strip_prefix("$'")
            .and_then(|t| t.strip_suffix('\''))
            .filter(|t| !t.contains('\\'))
            .map(str::to_owned),
        "concatenation" => {
            let mut cursor = node.walk();
            let mut out = String::new();
            for child in node.children(&mut cursor) {
                out.push_str(&static_value(child, src)?);
            }
            Some(out)
        }
        _ => None,
    }
}

/// An unquoted word: backslashes quote the next character; anything bash
/// would expand makes it non-static.
fn unquoted_word(text: &str) -> Option<String> {
    if text.starts_with('~') {
        return None;
    }
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => out.push(next),
            },
            '$' | '`' | '*' | '?' | '[' | '{' | '\'' | '"' | '(' | ')' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// The inside of `"..."` without expansions: `\` quotes only `$`, `` ` ``,
/// `"`, `\` and newline.
fn double_quoted(inner: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.peek() {
                Some('$' | '`' | '"' | '\\') => out.extend(chars.next()),
                Some('\n') => {
                    chars.next();
                }
                _ => out.push('\\'),
            },
            '$' | '`' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// Whether an arithmetic expression reads no variable: bash evaluates a
/// variable's value as an expression again, and `a[$(cmd)]` in that value
/// runs `cmd`. Numbers (`10`, `0x1f`, `2#101`), operators and the special
/// parameters that are always numbers (`$#`, `$?`, `$$`, `$!`) are literal.
pub(super) fn arithmetic_is_literal(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'0'..=b'9' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'#' | b'_')) {
                    i += 1;
                }
                continue;
            }
            b'$' if matches!(b.get(i + 1), Some(b'#' | b'?' | b'$' | b'!'))
                && !matches!(b.get(i + 2), Some(b'{' | b'(' | b'[')) =>
            {
                i += 2;
                continue;
            }
            b' ' | b'\t' | b'\n' | b'+' | b'-' | b'*' | b'/' | b'%' | b'(' | b')' | b'<' | b'>'
            | b'=' | b'!' | b'&' | b'|' | b'^' | b'~' | b'?' | b':' | b',' => {}
            _ => return false,
        }
        i += 1;
    }
    true
}

/// Variables whose value changes which program runs or what bash executes
/// (the search path, start-up files, word splitting, trace prompts, the
/// dynamic loader, exported functions) or what common programs run as a
/// helper (pagers, editors, git's and ssh's hooks, interpreter options).
const RISKY_VARIABLES: &[&str] = &[
    "PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "PS4",
    "PS1",
    "PS0",
    "PS3",
    "SHELLOPTS",
    "BASHOPTS",
    "CDPATH",
    "GLOBIGNORE",
    "EXECIGNORE",
    "PROMPT_COMMAND",
    "HOME",
    "BASH_XTRACEFD",
    "BASH_LOADABLES_PATH",
    "BASH_COMPAT",
    "POSIXLY_CORRECT",
    "INPUTRC",
    "PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "BROWSER",
    "LESSOPEN",
    "LESSCLOSE",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "NODE_OPTIONS",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "RUSTC_WRAPPER",
];

/// Prefixes of variable families with the same effect (`LD_PRELOAD`,
/// `BASH_FUNC_f%%`, `GIT_SSH_COMMAND`, `GIT_CONFIG_*`, ...).
const RISKY_PREFIXES: &[&str] = &["LD_", "DYLD_", "BASH_FUNC_", "GIT_", "CARGO_"];

/// Whether assigning `name` may change what a later command runs.
pub(super) fn is_risky_variable(name: &str) -> bool {
    // `a[i]` assigns an element of `a`.
    let base = name.split('[').next().unwrap_or(name);
    RISKY_VARIABLES.contains(&base) || RISKY_PREFIXES.iter().any(|p| base.starts_with(p))
}

/// `NAME=value` or `NAME[i]=value` / `NAME+=value` as a static word: the
/// name, when it is one.
pub(super) fn assignment_name(word: &str) -> Option<&str> {
    let (name, _) = word.split_once('=')?;
    let name = name.strip_suffix('+').unwrap_or(name);
    let base = name.split('[').next().unwrap_or(name);
    let mut chars = base.chars();
    let valid = matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric());
    valid.then_some(name)
}

/// For a name that a builtin assigns to (`read x`, `printf -v x`, `unset
/// x`): why it may run something, if it may (an array subscript is
/// evaluated as arithmetic; a risky variable changes later commands).
pub(super) fn variable_target_risk(name: &str) -> Option<String> {
    if is_risky_variable(name) {
        return Some(format!("assigns `{name}`, which changes what commands run"));
    }
    if let Some((_, rest)) = name.split_once('[') {
        let index = rest.strip_suffix(']').unwrap_or(rest);
        if !(index == "@" || index == "*" || arithmetic_is_literal(index)) {
            return Some(format!(
                "the array subscript in `{name}` is evaluated as arithmetic"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_arithmetic() {
        for literal in [
            "1 + 2",
            "(3*4) % 5",
            "0x1f",
            "2#101",
            "$# > 0",
            "$? == 1",
            "",
        ] {
            assert!(arithmetic_is_literal(literal), "{literal}");
        }
        for reads in [
            "x", "x + 1", "$x", "${x}", "a[1]", "$(cmd)", "`cmd`", "$#x", "'1'",
        ] {
            assert!(!arithmetic_is_literal(reads), "{reads}");
        }
    }

    #[test]
    fn risky_variables() {
        for name in [
            "PATH",
            "IFS",
            "LD_PRELOAD",
            "BASH_FUNC_ls%%",
            "GIT_SSH_COMMAND",
            "PATH[0]",
        ] {
            assert!(is_risky_variable(name), "{name}");
        }
        for name in ["FOO", "path", "RUST_LOG", "PATHS"] {
            assert!(!is_risky_variable(name), "{name}");
        }
    }

    #[test]
    fn assignment_names() {
        assert_eq!(assignment_name("A=1"), Some("A"));
        assert_eq!(assignment_name("A+=1"), Some("A"));
        assert_eq!(assignment_name("a[$i]=1"), Some("a[$i]"));
        assert_eq!(assignment_name("-u=1"), None);
        assert_eq!(assignment_name("x"), None);
    }

    #[test]
    fn variable_targets() {
        assert!(variable_target_risk("x").is_none());
        assert!(variable_target_risk("a[1]").is_none());
        assert!(variable_target_risk("a[@]").is_none());
        assert!(variable_target_risk("a[$(touch x)]").is_some());
        assert!(variable_target_risk("a[i]").is_some());
        assert!(variable_target_risk("PATH").is_some());
    }
}
