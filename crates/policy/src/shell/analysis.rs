//! The walk over the bash syntax tree: every command that may run, and
//! every reason why that list may be incomplete.

use tree_sitter::Node;

use super::coverage::{
    ansi_c_string_ends_like_bash, opens_a_test, skips_text, spans_a_blank, starts_a_comment,
};
use super::lexer::HeredocSpan;
use super::words::{
    arithmetic_is_literal, assignment_name, is_risky_variable, static_value, variable_target_risk,
};
use super::wrappers::{Arg, Effect, effects};
use super::{Command, parse};

/// Words bash reads as syntax where a command name can be: the grammar
/// taking one for a command name means it misread the text.
const RESERVED: &[&str] = &[
    "!", "{", "}", "[[", "]]", "((", "then", "else", "elif", "fi", "do", "done", "esac", "in",
    "case", "if", "while", "until", "for", "select", "function",
];

/// How deep `eval`/`bash -c` code may nest before the analysis stops.
const MAX_CODE_DEPTH: usize = 4;
/// How deep the syntax tree may nest before the analysis stops (the walk is
/// recursive and the input untrusted). Counted across `eval`/`bash -c`
/// code too, so the whole walk's stack is bounded: a debug build's frames
/// fit in a 2 MiB thread stack (a tokio worker's) with room to spare.
const MAX_TREE_DEPTH: usize = 200;

/// A command found, and whether it is only assignments (`X=1`) or a bare
/// redirection (`> f`): such a part runs no program, so no rule has to
/// allow it (its risks are checked on their own).
#[derive(Debug, Clone)]
pub(crate) struct Found {
    pub command: Command,
    pub assignment_only: bool,
}

pub(crate) struct Walker<'s> {
    src: &'s str,
    code_depth: usize,
    pub found: Vec<Found>,
    pub unproven: Vec<String>,
    /// Where the grammar reads each here-document, for the second reading
    /// to compare with (see [`super::heredoc`]).
    pub heredocs: Vec<HeredocSpan>,
}

impl<'s> Walker<'s> {
    /// Analyses `src` (at `code_depth` levels of `eval`/`-c` nesting,
    /// starting at tree level `base_level`: code run by `eval` continues
    /// the level of the command that runs it).
    pub(crate) fn run(src: &'s str, code_depth: usize, base_level: usize) -> Walker<'s> {
        let mut walker = Walker {
            src,
            code_depth,
            found: Vec::new(),
            unproven: Vec::new(),
            heredocs: Vec::new(),
        };
        match parse::tree(src) {
            None => walker.unproven("the parser gave no syntax tree"),
            Some(tree) => {
                let root = tree.root_node();
                if root.has_error() {
                    walker.unproven("the command is not valid bash syntax");
                }
                if root.end_byte() < src.trim_end().len() {
                    walker.unproven("the parser did not read the whole command");
                }
                walker.visit(root, &[], base_level);
            }
        }
        walker
    }

    pub(super) fn unproven(&mut self, why: impl Into<String>) {
        super::add_reason(&mut self.unproven, why.into());
    }

    fn text(&self, node: Node<'_>) -> &'s str {
        &self.src[node.byte_range()]
    }

    pub(super) fn node_text(&self, node: Node<'_>) -> &'s str {
        self.text(node)
    }

    pub(super) fn src_between(&self, from: usize, to: usize) -> &'s str {
        self.src.get(from..to.max(from)).unwrap_or("")
    }

    pub(super) fn src(&self) -> &'s str {
        self.src
    }

    /// The first byte of the line `at` is on.
    pub(super) fn line_start(&self, at: usize) -> usize {
        self.src_between(0, at).rfind('\n').map_or(0, |p| p + 1)
    }

    fn children(&mut self, node: Node<'_>, redirections: &[String], level: usize) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for child in children {
            self.visit(child, redirections, level + 1);
        }
    }

    /// `redirections`: file targets of an enclosing redirected statement,
    /// which apply to every command inside it.
    fn visit(&mut self, node: Node<'_>, redirections: &[String], level: usize) {
        if level > MAX_TREE_DEPTH {
            self.unproven("the command nests too deeply to analyse");
            return;
        }
        if node.is_error() || node.is_missing() {
            self.unproven("the command is not valid bash syntax");
        }
        self.skipped_text(node);
        match node.kind() {
            "comment" => {
                if !starts_a_comment(self.src, node.start_byte()) {
                    self.unproven("a `#` the grammar read as a comment is part of a word");
                }
                // Where a comment inside `$(...)`, `<(...)` or `>(...)` ends
                // is read differently by the grammar and by bash (fuzz seed 8).
                if has_ancestor(node, &["command_substitution", "process_substitution"]) {
                    self.unproven("a comment inside a substitution");
                }
            }
            "file_redirect" => {
                let mut cursor = node.walk();
                let targets = node
                    .children_by_field_name("destination", &mut cursor)
                    .count();
                if targets > 1 {
                    // `trap o >f EXIT`: bash passes `EXIT` to the command.
                    self.unproven("words after a redirection's target");
                }
                self.children(node, redirections, level);
            }
            // `x=$ r` is read as `x=$r`; bash assigns `$` and runs `r`.
            "word" | "simple_expansion" | "variable_name" if spans_a_blank(self.text(node)) => {
                self.unproven("the grammar read a word across a blank");
                self.children(node, redirections, level);
            }
            "ansi_c_string" if !ansi_c_string_ends_like_bash(self.text(node)) => {
                self.unproven(
                    "the grammar reads where a `$'...'` string ends differently from bash",
                );
            }
            "heredoc_redirect" => {
                self.heredoc(node);
                self.children(node, redirections, level);
            }
            "command" => self.command(node, node, redirections, level),
            "redirected_statement" => self.redirected(node, redirections, level),
            "variable_assignment" | "variable_assignments" => {
                if let Some(name) = node.child_by_field_name("name") {
                    let name = self.text(name);
                    if is_risky_variable(name) {
                        self.unproven(format!("assigns `{name}`, which changes what commands run"));
                    }
                }
                // Prefix assignments belong to their command, a loop's
                // initializer to its loop.
                let parent = node.parent().map(|p| p.kind());
                if matches!(
                    parent,
                    Some(
                        "command"
                            | "declaration_command"
                            | "c_style_for_statement"
                            | "variable_assignments"
                    )
                ) {
                    self.children(node, redirections, level);
                    return;
                }
                self.found.push(Found {
                    command: Command {
                        text: self.text(node).trim().to_owned(),
                        name: None,
                        file_redirections: redirections.to_vec(),
                    },
                    assignment_only: true,
                });
                self.children(node, redirections, level);
            }
            "declaration_command" | "unset_command" => self.declaration(node, redirections, level),
            "test_command" => self.test(node, redirections, level),
            "arithmetic_expansion" | "c_style_for_statement" => {
                self.arithmetic(node);
                self.children(node, redirections, level);
            }
            "compound_statement" if self.text(node).starts_with("((") => {
                self.arithmetic(node);
                self.children(node, redirections, level);
            }
            "subscript" => {
                if let Some(index) = node.child_by_field_name("index") {
                    let index = self.text(index);
                    if !(index == "@" || index == "*" || arithmetic_is_literal(index)) {
                        self.unproven(format!(
                            "the array subscript `{index}` is evaluated as arithmetic"
                        ));
                    }
                }
                self.children(node, redirections, level);
            }
            "expansion" => {
                self.expansion(node);
                self.substitutions_seen(node);
                self.children(node, redirections, level);
            }
            "command_substitution" if self.text(node).starts_with('`') => {
                // In backticks `\``, `\$` and `\\` are unescaped before the
                // inside is parsed: the grammar sees other text than bash.
                let inner = self.text(node);
                if inner[1..].contains('\\') {
                    self.unproven("a backslash inside a backtick substitution");
                }
                // ``x=`s "` f`"`p``: where a backtick substitution with a
                // double quote in it ends, the grammar and bash disagree.
                if inner.contains('"') {
                    self.unproven("a double quote inside a backtick substitution");
                }
                self.children(node, redirections, level);
            }
            "array" => {
                let mut cursor = node.walk();
                let elements: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for element in elements {
                    let text = self.text(element);
                    if let Some(rest) = text.strip_prefix('[') {
                        let index = rest.split(']').next().unwrap_or(rest);
                        if !arithmetic_is_literal(index) {
                            self.unproven("an array index in a compound assignment is evaluated as arithmetic");
                        }
                    }
                }
                self.substitutions_seen(node);
                self.children(node, redirections, level);
            }
            "for_statement" | "select_statement" => {
                if let Some(var) = node.child_by_field_name("variable")
                    && is_risky_variable(self.text(var))
                {
                    let name = self.text(var).to_owned();
                    self.unproven(format!("the loop assigns `{name}`"));
                }
                self.children(node, redirections, level);
            }
            _ => self.children(node, redirections, level),
        }
    }

    /// `body > file 2>&1 <<EOF ...`: the file targets apply to the body's
    /// commands; a simple command's text includes its redirections (rules
    /// match the command as written).
    fn redirected(&mut self, node: Node<'_>, inherited: &[String], level: usize) {
        let mut targets = inherited.to_vec();
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for (i, child) in children.iter().enumerate() {
            if node.field_name_for_child(i as u32) == Some("redirect") {
                targets.extend(self.redirect_targets(*child));
            }
        }
        match node.child_by_field_name("body") {
            Some(body) if body.kind() == "command" => {
                self.command(body, node, &targets, level + 1);
            }
            Some(body) => self.visit(body, &targets, level + 1),
            None => {
                // `> file` alone creates the file.
                self.found.push(Found {
                    command: Command {
                        text: self.text(node).trim().to_owned(),
                        name: None,
                        file_redirections: targets.clone(),
                    },
                    assignment_only: true,
                });
            }
        }
        // Substitutions in targets and here-document bodies.
        for (i, child) in children.iter().enumerate() {
            if node.field_name_for_child(i as u32) == Some("redirect") {
                self.visit(*child, &targets, level + 1);
            }
        }
    }

    /// The files a redirection opens: its own target, or those of the
    /// redirections the grammar puts inside a here-document's node
    /// (`cat <<EOF >notes` writes `notes`; the fuzzer found it missed).
    fn redirect_targets(&self, node: Node<'_>) -> Vec<String> {
        if node.kind() != "heredoc_redirect" {
            return self.redirect_target(node).into_iter().collect();
        }
        let mut cursor = node.walk();
        node.children(&mut cursor)
            .filter_map(|c| self.redirect_target(c))
            .collect()
    }

    /// The file a redirection opens, if it opens one (not `/dev/null`,
    /// `/dev/stdout`, `/dev/stderr`, fd duplications or closes, here-documents
    /// or here-strings).
    fn redirect_target(&self, node: Node<'_>) -> Option<String> {
        if node.kind() != "file_redirect" {
            return None;
        }
        let destination = node.child_by_field_name("destination");
        let target = destination
            .map(|d| self.text(d).to_owned())
            .unwrap_or_default();
        let mut cursor = node.walk();
        let operator = node
            .children(&mut cursor)
            .find(|c| !c.is_named())
            .map(|c| self.text(c))
            .unwrap_or("");
        let value = destination.and_then(|d| static_value(d, self.src));
        let dup = matches!(operator, ">&" | "<&" | ">&-" | "<&-")
            && value.as_deref().is_some_and(|v| {
                v == "-" || (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
            });
        let harmless = matches!(
            value.as_deref(),
            Some("/dev/null" | "/dev/stdout" | "/dev/stderr")
        );
        if dup || harmless || (operator.ends_with('-') && destination.is_none()) {
            None
        } else {
            Some(target)
        }
    }

    /// A simple command. `whole` is the node whose text is the command's
    /// text (the redirected statement around it, when there is one).
    fn command(&mut self, node: Node<'_>, whole: Node<'_>, redirections: &[String], level: usize) {
        self.skipped_text(node);
        let mut targets = redirections.to_vec();
        // The name and the arguments as bash splits them: the grammar
        // sometimes gives one shell word as two nodes that touch
        // (`''0'>(T)'` read as `''` and `0>(T)`); they are one word to bash.
        let mut words: Vec<Arg> = Vec::new();
        let mut name_node = None;
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for (i, child) in children.iter().enumerate() {
            match (node.field_name_for_child(i as u32), child.kind()) {
                (Some(field @ ("name" | "argument")), _) => {
                    let value = if field == "name" {
                        name_node = Some(*child);
                        command_name_value(*child, self.src)
                    } else {
                        static_value(*child, self.src)
                    };
                    match words.last_mut() {
                        Some(last) if last.end == child.start_byte() => {
                            last.value = last.value.take().zip(value).map(|(a, b)| a + &b);
                            last.end = child.end_byte();
                        }
                        _ => words.push(Arg {
                            value,
                            start: child.start_byte(),
                            end: child.end_byte(),
                        }),
                    }
                }
                (_, "variable_assignment") => {
                    // `x=''\# c`, `x=()b c`: bash reads the touching text as
                    // part of the value; the grammar as the command name.
                    if children
                        .get(i + 1)
                        .is_some_and(|next| next.start_byte() == child.end_byte())
                    {
                        self.unproven("a word touching an assignment's value");
                    }
                    if let Some(name) = child.child_by_field_name("name") {
                        let name = self.text(name);
                        if is_risky_variable(name) {
                            self.unproven(format!(
                                "`{name}=` before a command changes what it runs"
                            ));
                        }
                    }
                }
                (_, "file_redirect" | "heredoc_redirect") => {
                    targets.extend(self.redirect_targets(*child));
                }
                // `c ((s))`, `c (s)`: the grammar accepts what bash
                // rejects as a syntax error (after running earlier lines).
                (_, "subshell" | "compound_statement") => {
                    self.unproven("a parenthesis inside a simple command");
                }
                _ => {}
            }
        }
        // Without a name, every word is an argument of nothing (not expected
        // from the grammar; the name-less branch below handles it).
        let (name, args) = match name_node {
            Some(_) if !words.is_empty() => (words[0].value.clone(), &words[1..]),
            _ => (None, &words[..]),
        };
        let text = self.text(whole).trim().to_owned();
        if let Some(n) = name_node {
            let raw = &self.src[n.start_byte()..words.first().map_or(n.end_byte(), |w| w.end)];
            match name.as_deref() {
                None => self.unproven(format!("the command name `{raw}` is not a static word")),
                Some(word) if RESERVED.contains(&word) && !raw.contains(['\'', '"', '\\']) => {
                    self.unproven(format!(
                        "the reserved word `{word}` where a command name should be"
                    ));
                }
                // `\x= t` runs a command named `x=`; no tool is named so,
                // and a reader (or a trace) takes it for an assignment.
                Some(word) if word.contains('=') => {
                    self.unproven(format!("the command name `{raw}` contains `=`"));
                }
                _ if first_word_continues(&self.src[n.start_byte()..]) => {
                    self.unproven("a line continuation inside a command name");
                }
                _ => {}
            }
        }
        if name_node.is_none() {
            // Only assignments and redirections (`A=1 > f`).
            self.found.push(Found {
                command: Command {
                    text,
                    name: None,
                    file_redirections: targets.clone(),
                },
                assignment_only: true,
            });
        } else {
            self.simple(name, text, args, &targets, (0, level));
        }
        for child in children {
            self.visit(child, &targets, level + 1);
        }
    }

    /// Lists a command and what it runs in turn (wrappers, code strings).
    /// `(nesting, level)`: how many wrappers and how many tree levels are
    /// around it.
    fn simple(
        &mut self,
        name: Option<String>,
        text: String,
        args: &[Arg],
        targets: &[String],
        (nesting, level): (usize, usize),
    ) {
        self.found.push(Found {
            command: Command {
                text,
                name: name.clone(),
                file_redirections: targets.to_vec(),
            },
            assignment_only: false,
        });
        let Some(name) = name else { return };
        if nesting > 8 {
            self.unproven("wrappers nest too deeply to analyse");
            return;
        }
        self.builtin(&name, args);
        for effect in effects(&name, args) {
            match effect {
                Effect::Inner { start, end } => {
                    let inner = &args[start..end];
                    // `time ! x`: bash reads `!` as a keyword there, the
                    // grammar (which knows no `time` keyword) as a name.
                    if let Some(word) = inner[0].value.as_deref()
                        && RESERVED.contains(&word)
                    {
                        self.unproven(format!("the reserved word `{word}` after `{name}`"));
                    }
                    let text = self.src[inner[0].start..inner[end - start - 1].end].to_owned();
                    self.simple(
                        inner[0].value.clone(),
                        text,
                        &inner[1..],
                        targets,
                        (nesting + 1, level),
                    );
                }
                Effect::Implicit(program) => self.found.push(Found {
                    command: Command {
                        text: program.to_owned(),
                        name: Some(program.to_owned()),
                        file_redirections: targets.to_vec(),
                    },
                    assignment_only: false,
                }),
                Effect::Code(indexes) => {
                    let parts: Option<Vec<String>> =
                        indexes.iter().map(|&i| args[i].value.clone()).collect();
                    match parts {
                        Some(parts) => self.code(&parts.join(" "), &name, targets, level),
                        None => {
                            self.unproven(format!("`{name}` runs code that is not a static string"))
                        }
                    }
                }
                Effect::Unproven(why) => self.unproven(why),
            }
        }
    }

    /// Shell code given as a string (`eval`, `bash -c`, `trap`): analysed
    /// like a command of its own.
    fn code(&mut self, code: &str, by: &str, targets: &[String], level: usize) {
        if self.code_depth >= MAX_CODE_DEPTH {
            self.unproven(format!("code run by `{by}` nests too deeply to analyse"));
            return;
        }
        let mut inner = Walker::run(code, self.code_depth + 1, level + 1);
        // The code is a command line of its own: the hand lexer reads it too
        // (the outer reading saw only a quoted string).
        super::second_opinion(code, &inner.found, &inner.heredocs, &mut inner.unproven);
        for mut found in inner.found {
            for target in targets {
                if !found.command.file_redirections.contains(target) {
                    found.command.file_redirections.push(target.clone());
                }
            }
            self.found.push(found);
        }
        for why in inner.unproven {
            self.unproven(format!("in the code run by `{by}`: {why}"));
        }
    }

    /// `declare`/`local`/`export`/`typeset`/`readonly`/`unset`.
    fn declaration(&mut self, node: Node<'_>, redirections: &[String], level: usize) {
        let name = node.child(0).map(|c| self.text(c).to_owned());
        let mut integer = false;
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).skip(1).collect();
        for child in &children {
            match child.kind() {
                "variable_assignment" => {
                    if let Some(var) = child.child_by_field_name("name") {
                        let var = self.text(var).to_owned();
                        if is_risky_variable(&var) {
                            self.unproven(format!(
                                "assigns `{var}`, which changes what commands run"
                            ));
                        }
                    }
                    if let Some(value) = child.child_by_field_name("value") {
                        let value = self.text(value).to_owned();
                        if integer && !arithmetic_is_literal(&value) {
                            self.unproven("an integer variable's value is evaluated as arithmetic");
                        }
                    }
                }
                "file_redirect" | "comment" => {}
                _ => match static_value(*child, self.src) {
                    Some(v) if v.starts_with('-') || v.starts_with('+') => {
                        if v.contains('i') {
                            integer = true;
                        }
                        if v.contains('n') || (v.contains('f') && name.as_deref() == Some("export"))
                        {
                            self.unproven(format!(
                                "`{} {v}` is not analysed",
                                name.as_deref().unwrap_or("")
                            ));
                        }
                    }
                    Some(v) => {
                        let target = assignment_name(&v).unwrap_or(&v).to_owned();
                        if let Some(why) = variable_target_risk(&target) {
                            self.unproven(why);
                        }
                        if integer && v.contains('=') {
                            self.unproven("an integer variable's value is evaluated as arithmetic");
                        }
                    }
                    None => self.unproven(
                        "a declaration argument is not a static word (it may be an assignment)",
                    ),
                },
            }
        }
        self.found.push(Found {
            command: Command {
                text: self.text(node).trim().to_owned(),
                name,
                file_redirections: redirections.to_vec(),
            },
            assignment_only: false,
        });
        self.children(node, redirections, level);
    }

    /// Unproven when the grammar's node skips text bash reads (see
    /// [`skips_text`]).
    fn skipped_text(&mut self, node: Node<'_>) {
        if skips_text(node, self.src) {
            self.unproven("the grammar skipped part of a command");
        }
    }

    /// `[ ... ]` and `[[ ... ]]`: commands of their own; `[[` evaluates the
    /// operands of arithmetic comparisons as expressions.
    fn test(&mut self, node: Node<'_>, redirections: &[String], level: usize) {
        let first = node.child(0);
        let opener = first.map(|c| self.text(c).to_owned());
        if let (Some(first), Some(open @ ("[" | "[["))) = (first, opener.as_deref())
            && !opens_a_test(self.src, first.start_byte(), open)
        {
            self.unproven(format!("`{open}` is not a word of its own"));
        }
        self.found.push(Found {
            command: Command {
                text: self.text(node).trim().to_owned(),
                name: opener.clone(),
                file_redirections: redirections.to_vec(),
            },
            assignment_only: false,
        });
        let text = self.text(node);
        if text.contains("-v") || text.contains("-R") {
            self.unproven("`-v` in a test evaluates array subscripts");
        }
        if opener.as_deref() == Some("[[") {
            self.double_bracket_arithmetic(node);
        }
        self.children(node, redirections, level);
    }

    fn double_bracket_arithmetic(&mut self, node: Node<'_>) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if n.kind() == "binary_expression"
                && let Some(op) = n.child_by_field_name("operator")
                && matches!(self.text(op), "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge")
            {
                for side in ["left", "right"] {
                    if let Some(s) = n.child_by_field_name(side)
                        && !arithmetic_is_literal(self.text(s))
                    {
                        self.unproven("an arithmetic comparison in `[[` reads a variable");
                    }
                }
            }
            let mut cursor = n.walk();
            stack.extend(n.children(&mut cursor));
        }
    }

    /// `$((...))`, `((...))`, `for ((...))`: pure literal arithmetic only.
    fn arithmetic(&mut self, node: Node<'_>) {
        let text = self.text(node);
        let inner = text
            .trim_start_matches("for")
            .trim_start()
            .trim_start_matches("$((")
            .trim_start_matches("((")
            .trim_start_matches("$[");
        let inner = match node.kind() {
            "c_style_for_statement" => inner.split("))").next().unwrap_or(inner),
            _ => inner.trim_end_matches("))").trim_end_matches(']'),
        };
        if !arithmetic_is_literal(&inner.replace(';', " ")) {
            self.unproven("arithmetic that reads variables (their values are evaluated again)");
        }
    }

    /// Where the grammar reads a construct as plain text that bash
    /// expands (quotes inside `${x:-...}` within double quotes), text that
    /// looks like a substitution without a substitution node below it is
    /// not trusted.
    fn substitutions_seen(&mut self, node: Node<'_>) {
        let text = self.text(node);
        let marks = ["$(", "<(", ">("]
            .iter()
            .map(|m| text.matches(m).count())
            .sum::<usize>()
            + text.matches('`').count().div_ceil(2);
        if marks == 0 {
            return;
        }
        let mut nodes = 0;
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if matches!(
                n.kind(),
                "command_substitution" | "process_substitution" | "arithmetic_expansion"
            ) {
                nodes += 1;
            }
            let mut cursor = n.walk();
            stack.extend(n.children(&mut cursor));
        }
        if nodes < marks {
            self.unproven("a substitution the grammar read as text");
        }
    }

    /// `${...}`: indirection (`${!x}`), substring offsets (`${x:i:j}`) and
    /// prompt expansion (`${x@P}`) evaluate what a variable holds.
    fn expansion(&mut self, node: Node<'_>) {
        let text = self.text(node);
        if let Some(rest) = text.strip_prefix("${!")
            && !rest.ends_with("*}")
            && !rest.ends_with("@}")
        {
            self.unproven("indirect expansion `${!...}` evaluates a variable's value");
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for (i, child) in children.iter().enumerate() {
            if node.field_name_for_child(i as u32) != Some("operator") {
                continue;
            }
            match self.text(*child) {
                "P" => self.unproven("`${x@P}` expands a variable's value as a prompt"),
                ":" => {
                    let from = child.end_byte();
                    let to = node.end_byte().saturating_sub(1).max(from);
                    let offsets = &self.src[from..to];
                    if !arithmetic_is_literal(offsets) {
                        self.unproven("a substring offset is evaluated as arithmetic");
                    }
                    break;
                }
                _ => {}
            }
        }
    }
}

/// The static value of a `command_name` node: all of its parts, which the
/// grammar may give as several children (`0>(T)` is a number and a process
/// substitution, one word to bash).
fn command_name_value(node: Node<'_>, src: &str) -> Option<String> {
    let mut cursor = node.walk();
    let parts: Vec<Node<'_>> = node.children(&mut cursor).collect();
    if parts.is_empty() {
        return static_value(node, src);
    }
    let mut out = String::new();
    let mut end = node.start_byte();
    for part in parts {
        if part.start_byte() != end {
            return None;
        }
        out.push_str(&static_value(part, src)?);
        end = part.end_byte();
    }
    (end == node.end_byte()).then_some(out)
}

/// Whether the word at the start of `rest` goes on after a line
/// continuation (`ec\<newline>ho` is `echo` to bash).
fn first_word_continues(rest: &str) -> bool {
    let end = rest.find([' ', '\t', ';', '&', '|']).unwrap_or(rest.len());
    rest[..end].contains("\\\n")
}

/// Whether a node of one of `kinds` encloses `node`.
fn has_ancestor(node: Node<'_>, kinds: &[&str]) -> bool {
    let mut parent = node.parent();
    while let Some(p) = parent {
        if kinds.contains(&p.kind()) {
            return true;
        }
        parent = p.parent();
    }
    false
}
