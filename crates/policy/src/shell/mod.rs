//! Which commands a shell command line runs, so that each one is checked
//! against the policy on its own (see [`analyze`]).
//!
//! Commands run as `bash -c <command>` (crates/core's shell tool): not
//! interactive, so history expansion (`!`) and aliases are off, which this
//! analysis assumes. The text is parsed with the bash grammar Gemini CLI
//! uses (tree-sitter-bash); everything that may run is listed, and anything
//! the analysis cannot see through makes it *unproven*, which the policy
//! engine turns into a question to the user. The analysis may list more than
//! runs; it must never list less.

mod analysis;
mod builtins;
mod coverage;
mod heredoc;
mod lexer;
mod parse;
mod part_names;
mod words;
mod wrappers;

pub(crate) use analysis::Found;

/// The commands of a command line and whether that list is known to be
/// complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    /// Every simple command that may run, in source order (wrappers' inner commands too).
    pub commands: Vec<Command>,
    /// Why the analysis cannot prove which commands run; empty means proven.
    pub unproven: Vec<String>,
}

impl Analysis {
    pub fn is_proven(&self) -> bool {
        self.unproven.is_empty()
    }
}

/// One simple command that may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The command's source text as written (what policy rules match, as today).
    pub text: String,
    /// The command name after quote removal, when it is a static word (else None).
    pub name: Option<String>,
    /// Redirections that open a file (their target as written); not /dev/null or fd dups.
    pub file_redirections: Vec<String>,
}

/// Every command `cmd` may run and why that list may be incomplete.
///
/// ```
/// use gd_policy::shell::analyze;
/// let a = analyze("git status && xargs rm < list");
/// let names: Vec<_> = a.commands.iter().map(|c| c.name.as_deref()).collect();
/// assert_eq!(names, [Some("git"), Some("xargs"), Some("rm")]);
/// assert!(a.is_proven());
/// assert!(!analyze("eval \"$code\"").is_proven());
/// ```
pub fn analyze(cmd: &str) -> Analysis {
    let (found, unproven) = analyze_found(cmd);
    Analysis {
        commands: found.into_iter().map(|f| f.command).collect(),
        unproven,
    }
}

/// [`analyze`], keeping which commands are only assignments (for the
/// engine, which does not ask a rule about `X=1`).
pub(crate) fn analyze_found(cmd: &str) -> (Vec<Found>, Vec<String>) {
    let walker = analysis::Walker::run(cmd, 0, 0);
    let mut unproven = walker.unproven;
    second_opinion(cmd, &walker.found, &walker.heredocs, &mut unproven);
    (walker.found, unproven)
}

/// Defence in depth: the old hand lexer reads the text too. A command name it
/// finds that the grammar did not, text it cannot read to the end, or a
/// here-document it reads as ending elsewhere (`heredocs`: the grammar's
/// reading) means the two readings disagree, and the analysis is not
/// trusted. Every part the lexer finds is compared, keywords included:
/// `time touch x` and `coproc touch x` run `touch`.
pub(super) fn second_opinion(
    cmd: &str,
    found: &[Found],
    heredocs: &[lexer::HeredocSpan],
    unproven: &mut Vec<String>,
) {
    let parsed = lexer::parse(cmd);
    if !parsed.complete {
        add_reason(
            unproven,
            "a second reading of the command did not reach its end".to_owned(),
        );
    }
    let mut ours = heredocs.to_vec();
    ours.sort_by_key(|h| h.body_start);
    if ours != parsed.heredocs {
        add_reason(
            unproven,
            "the two readings disagree on where a here-document ends".to_owned(),
        );
    }
    let names: Vec<&str> = found
        .iter()
        .filter_map(|f| f.command.name.as_deref())
        .collect();
    // How the lexer names each found command, computed only when a name is
    // missing from the grammar's (rarely): lexing every command's text again
    // is quadratic in the nesting of a hostile command line.
    let mut lexed: Option<Vec<String>> = None;
    for part in &parsed.commands {
        for name in part_names::command_names(part) {
            if names.contains(&name.as_str()) {
                continue;
            }
            let lexed = lexed.get_or_insert_with(|| {
                // Only a command the grammar could not name may vouch for
                // the lexer's name of it (`$x a`). One the grammar named
                // otherwise, or read as assignments only, is the grammar's
                // misreading: `x=$'\\' touch f #'` was one assignment to
                // it, `[""\ =]]` the test `[` (fuzz seed 33).
                found
                    .iter()
                    .filter(|f| f.command.name.is_none() && !f.assignment_only)
                    .filter(|f| f.command.text.len() <= MAX_RELEXED)
                    .filter_map(|f| {
                        let parsed = lexer::parse(&f.command.text);
                        // Its first word as written: skipping keywords here
                        // would let `time ! x` (listed as `time` and `!`)
                        // vouch for the `x` it hides.
                        parsed
                            .commands
                            .first()
                            .and_then(|p| part_names::first_word(p))
                    })
                    .collect()
            });
            if !lexed.contains(&name) {
                add_reason(
                    unproven,
                    format!("a second reading found a command `{name}` the grammar did not"),
                );
            }
        }
    }
}

/// The longest command text the lexer reads again to name it: longer ones
/// count by the grammar's name only (which can only leave more unproven).
const MAX_RELEXED: usize = 4096;

/// How many reasons an analysis keeps, and how long each may be: they are
/// shown to the user, and a hostile command line could otherwise make
/// thousands of them, each quoting kilobytes of itself.
const MAX_REASONS: usize = 16;
const MAX_REASON_CHARS: usize = 160;

/// Adds `why` to `reasons` unless it is there already (or the list is full),
/// shortened to [`MAX_REASON_CHARS`].
pub(super) fn add_reason(reasons: &mut Vec<String>, why: String) {
    let why = match why.char_indices().nth(MAX_REASON_CHARS) {
        Some((cut, _)) => format!("{}…", &why[..cut]),
        None => why,
    };
    if reasons.len() < MAX_REASONS && !reasons.contains(&why) {
        reasons.push(why);
    }
}

/// The texts of the commands `cmd` may run, in order (see [`analyze`]).
///
/// ```
/// use gd_policy::shell::split_commands;
/// assert_eq!(split_commands("git status && rm -rf x"), ["git status", "rm -rf x"]);
/// assert_eq!(split_commands("echo \"a && b\""), ["echo \"a && b\""]);
/// assert_eq!(split_commands("echo $(rm -rf /)"), ["echo $(rm -rf /)", "rm -rf /"]);
/// ```
pub fn split_commands(cmd: &str) -> Vec<String> {
    analyze(cmd).commands.into_iter().map(|c| c.text).collect()
}

/// The name of the first command `cmd` runs that has a static name
/// (assignments skipped).
///
/// ```
/// use gd_policy::shell::root_command;
/// assert_eq!(root_command("git commit -m x").as_deref(), Some("git"));
/// assert_eq!(root_command("FOO=1 BAR='a b' npm test").as_deref(), Some("npm"));
/// assert_eq!(root_command("   ").as_deref(), None);
/// ```
pub fn root_command(cmd: &str) -> Option<String> {
    analyze(cmd).commands.into_iter().find_map(|c| c.name)
}

#[cfg(test)]
mod tests;
