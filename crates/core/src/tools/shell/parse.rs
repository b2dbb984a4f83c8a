//! Finding the commands a shell command line runs, for confirmations and
//! "always allow" rules.
//!
//! This is a small, conservative lexer for the subset of POSIX shell syntax
//! that matters here: quotes, escapes, the list and pipeline operators
//! (`&&`, `||`, `;`, `&`, `|`, `|&`, newlines), subshells, command
//! substitutions (`$(...)`, backticks, `<(...)`, `>(...)`), redirections,
//! here-documents and comments. It is replaced by the policy engine's
//! splitter once that exists; until then it errs on the side of reporting
//! more commands, never fewer.

/// The first word of every simple command in `command`, in order of
/// appearance and without duplicates. Leading variable assignments
/// (`FOO=1 make`), redirections and reserved words (`if`, `then`, `!`,
/// `{`...) are skipped; commands inside substitutions are included. Words
/// are unquoted but otherwise kept as written (`/usr/bin/git` stays so).
pub fn root_commands(command: &str) -> Vec<String> {
    let mut roots = Vec::new();
    collect(command, &mut roots, 0);
    let mut seen = std::collections::HashSet::new();
    roots.retain(|r| seen.insert(r.clone()));
    roots
}

/// Nested substitutions deeper than this are not examined.
const MAX_DEPTH: usize = 16;

fn collect(source: &str, roots: &mut Vec<String>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let mut lexer = Lexer::new(source);
    let mut expect_command = true;
    let mut skip_target = false;
    // Open subshell parentheses; a `)` without one closes a `case` pattern.
    let mut open_parens = 0usize;
    // Where the root found by the previous token starts in `roots`.
    let mut last_root: Option<usize> = None;
    while let Some(token) = lexer.next_token() {
        let mut root_at = None;
        match token {
            Token::Separator => {
                expect_command = true;
                skip_target = false;
            }
            Token::Open => {
                open_parens += 1;
                expect_command = true;
            }
            Token::Close => {
                if open_parens > 0 {
                    open_parens -= 1;
                } else if let Some(at) = last_root {
                    // `pattern)` in a `case`: the word was not a command.
                    roots.truncate(at);
                }
                expect_command = true;
                skip_target = false;
            }
            Token::Redirect => skip_target = true,
            Token::Word(word) => {
                if skip_target {
                    skip_target = false;
                } else if expect_command && !is_assignment(&word) && !is_prefix_keyword(&word) {
                    expect_command = false;
                    if !is_compound_keyword(&word) && !word.is_empty() {
                        root_at = Some(roots.len());
                        roots.push(word);
                    }
                }
            }
        }
        last_root = root_at;
        for inner in lexer.substitutions.drain(..) {
            collect(&inner, roots, depth + 1);
        }
    }
    for inner in lexer.substitutions.drain(..) {
        collect(&inner, roots, depth + 1);
    }
}

/// `NAME=value` (a variable assignment before the command).
fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Reserved words after which a command name is still expected.
fn is_prefix_keyword(word: &str) -> bool {
    matches!(
        word,
        "if" | "then"
            | "else"
            | "elif"
            | "fi"
            | "do"
            | "done"
            | "while"
            | "until"
            | "esac"
            | "!"
            | "{"
            | "}"
            | "time"
            | "in"
    )
}

/// Reserved words that start a construct whose next words are not a
/// command (`for x in ...`, `case $x in`, `function name`).
fn is_compound_keyword(word: &str) -> bool {
    matches!(word, "for" | "case" | "select" | "function" | "[[" | "]]")
}

#[derive(Debug, PartialEq)]
enum Token {
    /// An unquoted word (quotes removed, substitutions left as written).
    Word(String),
    /// `;`, `&`, `&&`, `|`, `||`, `|&`, `;;`, a newline.
    Separator,
    /// A redirection operator; the next word is its target.
    Redirect,
    /// `(` of a subshell (or of a `case` pattern list).
    Open,
    /// `)`.
    Close,
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    /// Bodies of command substitutions found so far, to be parsed as
    /// commands of their own.
    substitutions: Vec<String>,
    /// Here-document delimiters waiting for the end of the current line:
    /// (delimiter, strip leading tabs).
    heredocs: Vec<(String, bool)>,
    /// The next word is a here-document delimiter.
    heredoc_pending: Option<bool>,
}

impl Lexer {
    fn new(source: &str) -> Self {
        Self {
            chars: source.chars().collect(),
            pos: 0,
            substitutions: Vec::new(),
            heredocs: Vec::new(),
            heredoc_pending: None,
        }
    }

    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn next_token(&mut self) -> Option<Token> {
        loop {
            let c = self.peek(0)?;
            match c {
                ' ' | '\t' | '\r' => self.pos += 1,
                '\\' if self.peek(1) == Some('\n') => self.pos += 2,
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\n' => {
                    self.pos += 1;
                    self.skip_heredoc_bodies();
                    return Some(Token::Separator);
                }
                _ => break,
            }
        }
        let c = self.peek(0)?;
        let next = self.peek(1);
        match c {
            ';' => {
                self.pos += if next == Some(';') { 2 } else { 1 };
                Some(Token::Separator)
            }
            '|' => {
                self.pos += if matches!(next, Some('|' | '&')) {
                    2
                } else {
                    1
                };
                Some(Token::Separator)
            }
            '&' => match next {
                Some('&') => {
                    self.pos += 2;
                    Some(Token::Separator)
                }
                Some('>') => {
                    self.pos += 2;
                    if self.peek(0) == Some('>') {
                        self.pos += 1;
                    }
                    Some(Token::Redirect)
                }
                _ => {
                    self.pos += 1;
                    Some(Token::Separator)
                }
            },
            '(' => {
                self.pos += 1;
                Some(Token::Open)
            }
            ')' => {
                self.pos += 1;
                Some(Token::Close)
            }
            '<' | '>' if next == Some('(') => {
                // Process substitution: an argument that runs a command.
                self.pos += 2;
                let body = self.read_balanced_parens();
                let word = format!("{c}({body})");
                self.substitutions.push(body);
                Some(Token::Word(word))
            }
            '<' | '>' => {
                self.read_redirect_operator();
                Some(Token::Redirect)
            }
            _ => {
                let word = self.read_word();
                // An io-number directly before a redirection (`2>`).
                if word.chars().all(|c| c.is_ascii_digit())
                    && !word.is_empty()
                    && matches!(self.peek(0), Some('<' | '>'))
                {
                    self.read_redirect_operator();
                    return Some(Token::Redirect);
                }
                if let Some(strip_tabs) = self.heredoc_pending.take() {
                    self.heredocs.push((word.clone(), strip_tabs));
                }
                Some(Token::Word(word))
            }
        }
    }

    fn read_redirect_operator(&mut self) {
        let first = self.peek(0);
        self.pos += 1;
        match (first, self.peek(0)) {
            (Some('<'), Some('<')) => {
                self.pos += 1;
                if self.peek(0) == Some('<') {
                    // Here-string: the next word is its content.
                    self.pos += 1;
                } else {
                    let strip_tabs = self.peek(0) == Some('-');
                    if strip_tabs {
                        self.pos += 1;
                    }
                    self.heredoc_pending = Some(strip_tabs);
                }
            }
            (Some('>'), Some('>' | '|' | '&')) | (Some('<'), Some('>' | '&')) => self.pos += 1,
            _ => {}
        }
    }

    /// Reads one word up to unquoted whitespace or an operator, removing
    /// quotes and recording command substitutions.
    fn read_word(&mut self) -> String {
        let mut word = String::new();
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\\' => {
                    self.pos += 1;
                    match self.peek(0) {
                        Some('\n') => self.pos += 1,
                        Some(escaped) => {
                            word.push(escaped);
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    self.pos += 1;
                    while let Some(c) = self.peek(0) {
                        self.pos += 1;
                        if c == '\'' {
                            break;
                        }
                        word.push(c);
                    }
                }
                '"' => {
                    self.pos += 1;
                    self.read_double_quoted(&mut word);
                }
                '`' => {
                    self.pos += 1;
                    let body = self.read_backticks();
                    word.push('`');
                    word.push_str(&body);
                    word.push('`');
                    self.substitutions.push(body);
                }
                '$' => self.read_dollar(&mut word),
                _ => {
                    word.push(c);
                    self.pos += 1;
                }
            }
        }
        word
    }

    fn read_double_quoted(&mut self, word: &mut String) {
        while let Some(c) = self.peek(0) {
            match c {
                '"' => {
                    self.pos += 1;
                    return;
                }
                '\\' => {
                    self.pos += 1;
                    if let Some(escaped) = self.peek(0) {
                        if !matches!(escaped, '"' | '\\' | '$' | '`' | '\n') {
                            word.push('\\');
                        }
                        if escaped != '\n' {
                            word.push(escaped);
                        }
                        self.pos += 1;
                    }
                }
                '`' => {
                    self.pos += 1;
                    let body = self.read_backticks();
                    word.push('`');
                    word.push_str(&body);
                    word.push('`');
                    self.substitutions.push(body);
                }
                '$' => self.read_dollar(word),
                _ => {
                    word.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// `$(...)` (a command), `$((...))` (arithmetic), `${...}`, or a plain `$`.
    fn read_dollar(&mut self, word: &mut String) {
        self.pos += 1;
        match (self.peek(0), self.peek(1)) {
            (Some('('), Some('(')) => {
                self.pos += 2;
                let body = self.read_balanced_parens();
                // Arithmetic: skip the second closing parenthesis.
                if self.peek(0) == Some(')') {
                    self.pos += 1;
                }
                word.push_str("$((");
                word.push_str(&body);
                word.push_str("))");
            }
            (Some('('), _) => {
                self.pos += 1;
                let body = self.read_balanced_parens();
                word.push_str("$(");
                word.push_str(&body);
                word.push(')');
                self.substitutions.push(body);
            }
            (Some('{'), _) => {
                self.pos += 1;
                word.push_str("${");
                let mut depth = 1;
                while let Some(c) = self.peek(0) {
                    self.pos += 1;
                    word.push(c);
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => word.push('$'),
        }
    }

    /// Reads up to the parenthesis closing one already consumed, minding
    /// quotes and nested parentheses; returns the text between them.
    fn read_balanced_parens(&mut self) -> String {
        let start = self.pos;
        let mut depth = 1usize;
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => self.pos += 1,
                '\'' => {
                    self.pos += 1;
                    while self.peek(0).is_some_and(|c| c != '\'') {
                        self.pos += 1;
                    }
                }
                '"' => {
                    self.pos += 1;
                    while let Some(c) = self.peek(0) {
                        if c == '\\' {
                            self.pos += 1;
                        } else if c == '"' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        let body: String = self.chars[start..self.pos].iter().collect();
                        self.pos += 1;
                        return body;
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
        self.chars[start.min(self.chars.len())..].iter().collect()
    }

    /// Reads up to the closing backtick; `\`` inside stands for a backtick.
    fn read_backticks(&mut self) -> String {
        let mut body = String::new();
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '`' => break,
                '\\' => {
                    if let Some(escaped) = self.peek(0) {
                        if !matches!(escaped, '`' | '\\' | '$') {
                            body.push('\\');
                        }
                        body.push(escaped);
                        self.pos += 1;
                    }
                }
                _ => body.push(c),
            }
        }
        body
    }

    /// After a newline: skips the bodies of pending here-documents.
    fn skip_heredoc_bodies(&mut self) {
        for (delimiter, strip_tabs) in std::mem::take(&mut self.heredocs) {
            loop {
                if self.pos >= self.chars.len() {
                    return;
                }
                let start = self.pos;
                while self.peek(0).is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                if self.peek(0) == Some('\n') {
                    self.pos += 1;
                }
                let line = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if line == delimiter {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(command: &str) -> Vec<String> {
        root_commands(command)
    }

    #[test]
    fn simple_commands_and_lists() {
        assert_eq!(roots("ls -la"), ["ls"]);
        assert_eq!(roots("  git status  "), ["git"]);
        assert_eq!(roots("git add . && git commit -m x"), ["git"]);
        assert_eq!(
            roots("make || echo failed; npm test | grep ok & wait"),
            ["make", "echo", "npm", "grep", "wait"]
        );
        assert_eq!(roots("cargo build |& tee log"), ["cargo", "tee"]);
        assert_eq!(roots("cd src\nls\n\npwd"), ["cd", "ls", "pwd"]);
        assert_eq!(roots(""), Vec::<String>::new());
    }

    #[test]
    fn quotes_hide_separators() {
        assert_eq!(roots("echo 'a; rm -rf /' \"b && c\""), ["echo"]);
        assert_eq!(roots(r#"echo a\;rm b"#), ["echo"]);
        assert_eq!(roots(r#""git" status; 'ls' -l"#), ["git", "ls"]);
        assert_eq!(roots(r#"echo "it's | fine""#), ["echo"]);
    }

    #[test]
    fn substitutions_are_commands_too() {
        assert_eq!(roots("echo $(rm -rf x)"), ["echo", "rm"]);
        assert_eq!(roots("echo \"today: $(date +%F)\""), ["echo", "date"]);
        assert_eq!(roots("echo `whoami`"), ["echo", "whoami"]);
        assert_eq!(roots("x=$(curl -s u | sh) true"), ["curl", "sh", "true"]);
        assert_eq!(roots("echo $(cat $(ls))"), ["echo", "cat", "ls"]);
        assert_eq!(roots("diff <(sort a) <(sort b)"), ["diff", "sort"]);
        assert_eq!(roots("echo $((1 + 2)) ${HOME}"), ["echo"]);
        assert_eq!(
            roots("echo \"$(printf ')')\"; id"),
            ["echo", "printf", "id"]
        );
    }

    #[test]
    fn assignments_redirections_and_keywords_are_skipped() {
        assert_eq!(roots("FOO=1 BAR=\"a b\" make -j4"), ["make"]);
        assert_eq!(roots("2>/dev/null rm x"), ["rm"]);
        assert_eq!(roots("ls > out.txt 2>&1 && cat < in"), ["ls", "cat"]);
        assert_eq!(roots("cmd &> log; other >> log"), ["cmd", "other"]);
        assert_eq!(
            roots("if grep -q x f; then rm f; else touch f; fi"),
            ["grep", "rm", "touch"]
        );
        assert_eq!(roots("for f in *.rs; do wc -l $f; done"), ["wc"]);
        assert_eq!(roots("while true; do sleep 1; done"), ["true", "sleep"]);
        assert_eq!(roots("! false"), ["false"]);
        assert_eq!(roots("{ echo a; echo b; } > out"), ["echo"]);
        assert_eq!(roots("(cd sub && make) | tee log"), ["cd", "make", "tee"]);
        assert_eq!(roots("time cargo test"), ["cargo"]);
        assert_eq!(roots("case $x in a) echo a;; *) ls;; esac"), ["echo", "ls"]);
    }

    #[test]
    fn comments_continuations_and_heredocs() {
        assert_eq!(roots("ls # ; rm -rf /"), ["ls"]);
        assert_eq!(roots("echo a \\\n && pwd"), ["echo", "pwd"]);
        assert_eq!(
            roots("cat <<EOF > f.txt\nrm -rf /; x | y\nEOF\nls"),
            ["cat", "ls"]
        );
        assert_eq!(roots("cat <<-'END'\n\tdanger\n\tEND\npwd"), ["cat", "pwd"]);
        assert_eq!(roots("grep x <<< 'a;b'"), ["grep"]);
    }

    #[test]
    fn unbalanced_input_does_not_panic() {
        for input in [
            "echo 'open",
            "echo \"open",
            "echo $(open",
            "echo `open",
            "((",
            "))",
            "<<",
        ] {
            let _ = roots(input);
        }
        assert_eq!(roots("echo $(ls"), ["echo", "ls"]);
    }
}
