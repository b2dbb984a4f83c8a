//! Fuzzing the shell analysis against bash: command lines generated from a
//! grammar of the constructs that fool splitters (quotes of every kind,
//! `$'`, `$(`, backticks, `#`, heredocs, arithmetic, parameter expansions,
//! separators, redirections, wrappers), each embedding "payload" commands
//! (recording shims and harmless builtins). Each case is analysed; the
//! cases where a promise can fail (the analysis proves what runs, or the
//! echo/cat policy allows it) then run in real bash and the same two
//! promises as the corpus test must hold (see `common/check.rs`). An
//! unproven case that is not allowed passes whatever bash runs (the policy
//! asks), so it is only counted.
//!
//! Environment: `GD_SHELL_FUZZ_CASES` (default 1,000), `GD_SHELL_FUZZ_SEED`
//! (default 1), `GD_SHELL_FUZZ_WORKERS` (default twice the cores, at most
//! 8: the workers mostly wait on bash), `GD_SHELL_FUZZ_BATCH` (cases per
//! bash worker run, default 1,000), `GD_SHELL_FUZZ_DUMP_UNPROVEN` (a
//! directory: one file per unproven case, with the reason). A failing case
//! is shrunk (delta debugging against `bash -c`) before it is reported.
//! See `tests/README.md` for the figures of the big run.

use crate::common;

use std::time::Instant;

use common::check::{self, Finding};
use common::sandbox::Sandbox;

/// SplitMix64: small, seedable, good enough to pick grammar productions;
/// keeps the test free of a random-number dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
    fn pick2<'a>(&mut self, items: &[(&'a str, &'a str)]) -> (&'a str, &'a str) {
        items[self.below(items.len())]
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// Shims (recorded by themselves and by xtrace) and harmless builtins.
const PAYLOADS: &[&str] = &[
    "touch ../x",
    "rm -rf y",
    "curl x",
    "id",
    "git push",
    "x",
    "true",
    "pwd",
    "umask",
    "hash -r",
    "times",
    "dirs",
    "type id",
    "echo hi",
    "cat f",
    "printf z",
    // Keywords in front of a command (issue 33: the second reading skipped
    // every part whose first word was `time` or `coproc`).
    "time touch ../x",
    "time -p id",
    "! curl x",
];
const SEPARATORS: &[&str] = &[" ; ", " && ", " || ", " | ", " |& ", " & ", "\n", ";", "&&"];
const RAW: &[&str] = &[
    "#", "'", "\"", "\\", "$'", "$\"", ")", "(", "`", "\\\n", "}", "{", "$", ";", "&", "|", "\n",
    " # ", "\\'", "\\\"", "$((", "))", "<<", "${", "]]", "[[",
];
/// `$'..'` bodies: escapes that decode to quotes, backslashes, newlines,
/// separators (all inside one well-formed word).
const ANSI_C: &[&str] = &[
    "\\'",
    "\\\\",
    "\\x27; id",
    "a\\nb; touch ../x",
    "\\047$(id)\\047",
    "\"",
    "\\u0027 && rm y",
    "\\x60id\\x60",
    "$(touch ../x)",
    "\\c",
    "#",
];
/// Commands that run a string argument as shell code.
const STRING_WRAPPERS: &[&str] = &[
    "bash -c",
    "sh -c",
    "eval",
    "sudo bash -c",
    "env bash -c",
    "nohup sh -c",
    "timeout 5 bash -c",
    "env A=1 sh -c",
    "bash -x -c",
    "command bash -c",
    "builtin eval",
];
const REDIRECTS: &[&str] = &[
    "> ../x",
    ">> ~/f",
    "2>&1",
    "&> out",
    "< f",
    ">/dev/null",
    "2>/dev/null",
    ">| o",
    "<> f",
    "3>&1",
    ">&2",
];

struct Gen {
    rng: Rng,
}

impl Gen {
    fn payload(&mut self) -> String {
        let p = self.rng.pick(PAYLOADS).to_string();
        if self.rng.chance(20) {
            format!("{p} {}", self.word(1))
        } else {
            p
        }
    }

    /// One case: nesting depth 1 to 3 (a deep case is long, and one
    /// construct the analysis cannot prove makes all of it unproven); one
    /// in six a here-document built to be misread, one in twenty a deep
    /// nest of mixed constructs (issue 33).
    fn case(&mut self) -> String {
        let depth = match self.rng.below(100) {
            0..=39 => 1,
            40..=74 => 2,
            _ => 3,
        };
        match self.rng.below(60) {
            0..=9 => self.tricky_heredoc(depth - 1),
            10..=12 => self.deep_nest(),
            _ => self.script(depth),
        }
    }

    fn script(&mut self, depth: usize) -> String {
        let n = 1 + self.rng.below(if depth == 0 { 1 } else { 3 });
        let mut s = self.command(depth);
        for _ in 1..n {
            s.push_str(self.rng.pick(SEPARATORS));
            s.push_str(&self.command(depth));
        }
        s
    }

    fn command(&mut self, depth: usize) -> String {
        if depth == 0 {
            return self.payload();
        }
        let d = depth - 1;
        let mut c = match self.rng.below(44) {
            0..=5 => {
                let mut c = self.payload();
                for _ in 0..self.rng.below(3) {
                    c.push(' ');
                    c.push_str(&self.word(d));
                }
                c
            }
            6 => format!("echo {}", self.word(d)),
            7 => format!("eval {}", self.quoted_script(d)),
            8 => format!("bash -c {}", self.quoted_script(d)),
            9 => format!("sh -c {}", self.quoted_script(d)),
            // Not `command -p`: it searches the system's default PATH and
            // would run the real programs instead of the shims.
            10 => format!(
                "{} {}",
                self.rng.pick(&[
                    "xargs",
                    "env",
                    "command",
                    "nohup",
                    "sudo",
                    "time",
                    "!",
                    "exec",
                    "env A=1",
                    "timeout 5",
                    "nice",
                    "sudo -u root",
                    "env -i",
                    "nohup nice",
                    "xargs -0",
                ]),
                self.payload()
            ),
            11 => format!(
                "builtin {}",
                self.rng
                    .pick(&["pwd", "true", "umask", "echo a", "eval id"])
            ),
            12 => format!("find . -exec {} {{}} \\;", self.payload()),
            13 => format!("trap {} EXIT", self.quoted_script(d)),
            14 => format!("( {} )", self.script(d)),
            15 => format!("{{ {}; }}", self.script(d)),
            16 => format!("if {}; then {}; fi", self.script(d), self.script(d)),
            17 => format!("for i in {}; do {}; done", self.word(d), self.script(d)),
            18 => format!(
                "case {} in {}) {};; *) {};; esac",
                self.word(d),
                self.rng.pick(&["a", "(a", "a|b", "'a)'", "\\)", "*"]),
                self.script(d),
                self.script(d)
            ),
            // One name per depth: an inner definition that bash runs in a
            // pipeline's subshell must not make the outer call recurse.
            19 => format!("f{d}() {{ {}; }}; f{d}", self.script(d)),
            20 => format!(
                "while false; do {}; done; {}",
                self.script(d),
                self.payload()
            ),
            21 => format!("(( {} ))", self.arith(d)),
            22 => format!("[[ {} == {} ]]", self.word(d), self.word(d)),
            23 => format!("let {}", self.arith(d)),
            24..=26 => self.heredoc(d),
            27 => format!("x={} {}", self.word(d), self.payload()),
            28 => format!("x={}", self.word(d)),
            // A fixed payload: a generated word could name `x` again (`${!x}`)
            // and make bash recurse without end.
            29 => format!(
                "x='a[$({})]'; echo $((x))",
                self.rng.pick(&["touch ../x", "rm y", "id", "true"])
            ),
            30 => format!("coproc {}", self.payload()),
            31 => format!("{} <<< {}", self.payload(), self.word(d)),
            // Raw fragments (unbalanced quotes, brackets): the analysis
            // must not be fooled by them, but they are rarely proven, so
            // they get one production of 44 each.
            32 => format!("{} {}", self.payload(), self.rng.pick(RAW)),
            33 => format!("{}{}", self.rng.pick(RAW), self.command(d)),
            // `#` after a word or an operator: a comment or not.
            34 => format!(
                "echo {}{} {}{}",
                self.word(d),
                self.rng.pick(&["#", " #", "#'", "#\"", "\\#"]),
                self.rng.pick(&["; ", "\n", " && "]),
                self.payload()
            ),
            35 => format!(
                "({}){}{}{}",
                self.script(d),
                self.rng.pick(&["#", "# ", "#;", " #"]),
                self.rng.pick(&["; ", "\n", " "]),
                self.payload()
            ),
            // ANSI-C quoting with escapes that spell quotes and separators.
            36 => format!(
                "{} $'{}' {}{}",
                self.payload(),
                self.rng.pick(ANSI_C),
                self.rng.pick(&["; ", "\n", " ", " && "]),
                self.payload()
            ),
            // Wrappers that run a static string.
            37 | 38 => format!(
                "{} {}",
                self.rng.pick(STRING_WRAPPERS),
                self.quoted_script(d)
            ),
            39 => format!("echo \"$(echo \"$({})\")\"", self.script(d)),
            40 => format!("echo {}", self.param(d)),
            41 => format!("x={}; echo {}", self.param(d), self.param(d)),
            42 => format!("echo {}", self.heredoc_word(d)),
            _ => format!("{} {}", self.payload(), self.word(d)),
        };
        if self.rng.chance(15) {
            c.push(' ');
            c.push_str(self.rng.pick(REDIRECTS));
        }
        if self.rng.chance(8) {
            c.push_str(&format!(" > >({})", self.script(d)));
        }
        c
    }

    /// A script as one shell word: quoted in one of several ways, mostly
    /// well-formed (the script's own quotes escaped), sometimes raw.
    fn quoted_script(&mut self, d: usize) -> String {
        let s = self.script(d);
        match self.rng.below(10) {
            0 | 1 => format!("'{}'", s.replace('\'', "'\\''")),
            2 => format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"")),
            3 => format!(
                "\"{}\"",
                s.replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('$', "\\$")
                    .replace('`', "\\`")
            ),
            4 | 5 => format!("$'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
            6 => format!("'{s}'"),
            7 => format!("\"{s}\""),
            _ => s.replace(' ', "\\ "),
        }
    }

    /// A parameter expansion with code in it.
    fn param(&mut self, d: usize) -> String {
        let s = self.script(d);
        match self.rng.below(12) {
            0 => format!("${{x:-$({s})}}"),
            1 => format!("${{x:=$({s})}}"),
            2 => format!("${{x/a/$({s})}}"),
            3 => format!("${{x#$({s})}}"),
            4 => format!("\"${{x:+$({s})}}\""),
            5 => format!("${{x[$({s})]}}"),
            6 => format!("\"${{x:-'$({s})'}}\""),
            7 => format!("${{x-`{s}`}}"),
            8 => format!("${{#x}}$({s})"),
            9 => format!("$(( $({s}) + 1 ))"),
            10 => format!("${{x:-\"$({s})\"}}"),
            _ => format!("${{x%%$({s})}}"),
        }
    }

    /// A here-document inside a command substitution.
    fn heredoc_word(&mut self, d: usize) -> String {
        let (delim, end) = self
            .rng
            .pick2(&[("EOF", "EOF"), ("'EOF'", "EOF"), ("\"E\"", "E")]);
        let body = match self.rng.below(3) {
            0 => format!("$({})", self.script(d)),
            1 => format!("a $({}) b", self.script(d)),
            _ => self.word(d),
        };
        format!("\"$(cat <<{delim}\n{body}\n{end}\n)\"")
    }

    fn word(&mut self, depth: usize) -> String {
        let d = depth.saturating_sub(1);
        match self.rng.below(if depth == 0 { 8 } else { 26 }) {
            0 => "a".into(),
            1 => "../x".into(),
            2 => format!(
                "'{}'",
                self.rng
                    .pick(&["a b", "\"", "$(id)", "#", "`", "\\", "a'\\''b"])
            ),
            3 => format!(
                "\"{}\"",
                self.rng
                    .pick(&["a b", "'", "\\\"", "#", "\\$(id)", "$x", "\\\\"])
            ),
            4 => format!(
                "$'{}'",
                self.rng.pick(&["\\'", "\\\\", "\\x27", "'", "\\047", "\""])
            ),
            5 => format!("$\"{}\"", self.rng.pick(&["a", "'"])),
            6 => self
                .rng
                .pick(&["#", "a#b", "\\#", "{a,b}", "*", "~", "$x", "${x}"])
                .into(),
            // A raw fragment makes most cases invalid syntax (unproven):
            // one time in four only.
            7 if self.rng.chance(25) => self.rng.pick(RAW).into(),
            7 => self.rng.pick(&["a b", "'a b'", "x=1", "--", "-c"]).into(),
            8 | 9 => format!("$({})", self.script(d)),
            10 => format!("`{}`", self.script(d)),
            11 => format!("\"$({})\"", self.script(d)),
            12 => format!("\"a `{}` b\"", self.script(d)),
            13 => format!("<({})", self.script(d)),
            14 => format!("$(( {} ))", self.arith(d)),
            15 => format!(
                "${{x{}{}}}",
                self.rng
                    .pick(&[":-", ":=", "-", "+", ":+", "/", "//", "#", "%", ":?"]),
                self.word(d)
            ),
            16 => format!("\"${{x:-{}}}\"", self.word(d)),
            17 => format!("${{!{}}}", self.rng.pick(&["x", "x*", "x[@]"])),
            18 => format!("${{x:{}:1}}", self.arith(d)),
            19 => format!("{}{}", self.word(d), self.word(d)),
            20 => format!("\"{}{}\"", self.rng.pick(&["'", "#", "a"]), self.word(d)),
            21 => format!("$( ({}) )", self.script(d)),
            22 => format!("$(# c\n{})", self.script(d)),
            23 => format!("{{a,$({})}}", self.script(d)),
            24 => format!("a[$({})]", self.script(d)),
            _ => format!("${{x@{}}}", self.rng.pick(&["P", "Q", "E", "A"])),
        }
    }

    fn arith(&mut self, d: usize) -> String {
        match self.rng.below(6) {
            0 => "1 + 2".into(),
            1 => "x".into(),
            2 => format!("a[$({})]", self.script(d)),
            3 => format!("$({})", self.script(d)),
            4 => format!("x = {}", self.word(d)),
            _ => format!("`{}` + 1", self.script(d)),
        }
    }

    /// A here-document whose delimiter word touches an operator, whose
    /// body has lines that start with the delimiter, end in a
    /// backslash or hold a quoted substitution, and whose delimiter line
    /// may carry a blank, a tab or an operator: where a grammar and bash
    /// disagree on its end, what follows runs unseen.
    fn tricky_heredoc(&mut self, d: usize) -> String {
        let delim = self.rng.pick(&["cat", "EOF", "E", "time", "x1"]);
        let word = match self.rng.below(6) {
            0 => format!("'{delim}'"),
            1 => format!("\\{delim}"),
            2 => format!("\"{delim}\""),
            _ => delim.to_owned(),
        };
        let op = self.rng.pick(&["<<", "<<", "<<-", "<< "]);
        let after = self.rng.pick(&[
            "",
            "",
            ";",
            "&",
            "|cat",
            ")",
            ">/dev/null",
            " > f",
            "; ",
            "&&echo",
            "||true",
            ";true",
            " # c",
            "<<E2",
        ]);
        let cmd = self
            .rng
            .pick(&["cat", "cat | cat", "echo", "time cat", "x", "! cat"]);
        let mut text = format!("{cmd} {op}{word}{after}\n");
        for _ in 0..1 + self.rng.below(4) {
            let line = match self.rng.below(12) {
                0 | 1 => format!(
                    "{delim}{}{}",
                    self.rng
                        .pick(&[";", "&", "|", " ", "\t", ")", "x", "#", "&&", ";;"]),
                    self.payload()
                ),
                2 => format!("{delim};echo '$({})'", self.payload()),
                3 => format!("{delim} '${{x:-$({})}}'", self.payload()),
                4 => format!("\t{delim}"),
                5 => {
                    let cut = 1 + self.rng.below(delim.len());
                    format!(
                        "{}\\\n{}",
                        &delim[..cut.min(delim.len())],
                        &delim[cut.min(delim.len())..]
                    )
                }
                6 => format!("a\\\n{delim}"),
                7 => format!("'$({})'", self.payload()),
                8 => format!("`{}`", self.payload()),
                9 => self.payload(),
                10 => self.word(d),
                _ => "text".to_owned(),
            };
            text.push_str(&line);
            text.push('\n');
        }
        let end = match self.rng.below(10) {
            0 => format!("{delim} "),
            1 => format!("{delim};"),
            2 => format!("\t{delim}"),
            3 => format!("{delim}\\\n"),
            _ => delim.to_owned(),
        };
        text.push_str(&end);
        text.push('\n');
        if after == "<<E2" {
            text.push_str("e2 body\nE2\n");
        }
        for _ in 0..self.rng.below(3) {
            text.push_str(&self.payload());
            text.push('\n');
            if self.rng.chance(40) {
                text.push_str(delim);
                text.push('\n');
            }
        }
        match self.rng.below(8) {
            0 => format!("echo \"$({text})\""),
            1 => format!("echo $({text}\n)"),
            2 => format!("bash -c '{}'", text.replace('\'', "'\\''")),
            _ => text,
        }
    }

    /// Commands nested 2 to 150 levels deep, each level one of several
    /// constructs around the one inside: within the analysis's bounds the
    /// payload must be found, past them the case must be unproven.
    fn deep_nest(&mut self) -> String {
        let levels = match self.rng.below(10) {
            0..=5 => 2 + self.rng.below(20),
            6..=8 => 20 + self.rng.below(60),
            _ => 80 + self.rng.below(70),
        };
        let mut c = self.payload();
        for _ in 0..levels {
            c = match self.rng.below(14) {
                0 => format!("( {c} )"),
                1 => format!("{{ {c}; }}"),
                2 => format!("if true; then {c}; fi"),
                3 => format!("echo $({c})"),
                4 => format!("echo \"$({c})\""),
                5 => format!("echo ${{x:-$({c})}}"),
                6 => format!("echo ${{x:-\"$({c})\"}}"),
                7 => format!(": $(( $({c} >/dev/null; echo 1) + 1 ))"),
                8 => format!("cat <<EOF\n$({c})\nEOF\n"),
                9 => format!("true && {c}"),
                10 => format!("time {c}"),
                11 => format!("! {c}"),
                12 => format!("echo <({c})"),
                _ => format!("while false; do :; done; {c}"),
            };
        }
        c
    }

    fn heredoc(&mut self, d: usize) -> String {
        let (op, delim, end) = match self.rng.below(6) {
            0 => ("<<", "EOF", "EOF"),
            1 => ("<<", "'EOF'", "EOF"),
            2 => ("<<", "\"EOF\"", "EOF"),
            3 => ("<<-", "EOF", "\tEOF"),
            4 => ("<<", "\\EOF", "EOF"),
            _ => ("<<", "E'O'F", "EOF"),
        };
        let mut body = String::new();
        for _ in 0..1 + self.rng.below(3) {
            match self.rng.below(5) {
                0 => body.push_str(&format!("$({})", self.script(d))),
                1 => body.push_str(&format!("`{}`", self.script(d))),
                2 => body.push_str(self.rng.pick(&["'", "\"", "#", "\\", "EOF2", " EOF"])),
                3 => body.push_str(&self.word(d)),
                _ => body.push_str("text"),
            }
            body.push('\n');
        }
        let cmd = self.rng.pick(&["cat", "bash", "sh", "xargs touch", "x"]);
        format!("{cmd} {op}{delim}\n{body}{end}\n{}", self.script(d))
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .replace('_', "")
            .parse()
            .unwrap_or_else(|e| panic!("{name}={v:?}: {e}")),
        Err(_) => default,
    }
}

/// Delta debugging on characters: the smallest text (within a budget of
/// bash runs) that still breaks a promise.
fn shrink(sb: &Sandbox, engine: &gd_policy::PolicyEngine, case: &str) -> (String, Option<Finding>) {
    let fails = |text: &str| check::check(text, &sb.run(text), engine);
    let Some(mut finding) = fails(case) else {
        // Flaky between the worker and `bash -c`: report it unshrunk.
        return (case.to_string(), None);
    };
    let mut chars: Vec<char> = case.chars().collect();
    let mut budget = 400;
    let mut chunk = chars.len() / 2;
    while chunk > 0 && budget > 0 {
        let mut i = 0;
        let mut progressed = false;
        while i < chars.len() && budget > 0 {
            let end = (i + chunk).min(chars.len());
            let candidate: String = chars[..i].iter().chain(&chars[end..]).collect();
            budget -= 1;
            match fails(&candidate) {
                Some(f) => {
                    chars = candidate.chars().collect();
                    finding = f;
                    progressed = true;
                }
                None => i += chunk,
            }
        }
        if !progressed {
            chunk /= 2;
        }
    }
    (chars.into_iter().collect(), Some(finding))
}

/// Per-worker counts of a run.
#[derive(Default)]
struct Tally {
    /// Cases generated.
    cases: usize,
    /// Cases the analysis proves (the only ones the invariant can fail).
    proven: usize,
    /// Cases the echo/cat policy allows (promise 2 needs bash for them).
    allowed: usize,
    /// Cases that went through bash.
    bash_runs: usize,
    /// Why cases are unproven (the first reason, names blanked): shows
    /// what the grammar spends its cases on.
    why: std::collections::HashMap<String, usize>,
    found: Vec<Finding>,
}

/// Whether bash must run a case: only when one of the promises can fail.
/// An unproven case that the policy does not allow passes whatever bash
/// runs (the policy asks), so running it would test nothing.
fn needs_bash(case: &str, engine: &gd_policy::PolicyEngine) -> (bool, bool, Option<String>) {
    let facts = common::analysis::facts(case);
    let allowed = check::decide(engine, case).is_allow();
    let why = facts.unproven.first().map(|w| blank_names(w));
    (facts.proven, allowed, why)
}

/// `assigns `x`, which ...` -> `assigns `_`, which ...`: one bucket per kind.
fn blank_names(why: &str) -> String {
    let mut out = String::new();
    for (i, part) in why.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        out.push_str(if i % 2 == 1 { "_" } else { part });
    }
    out
}

#[test]
fn fuzz_analysis_against_bash() {
    let total = env_number("GD_SHELL_FUZZ_CASES", 1_000) as usize;
    let seed = env_number("GD_SHELL_FUZZ_SEED", 1);
    // Cases that go to bash per worker batch.
    let batch = env_number("GD_SHELL_FUZZ_BATCH", 1_000) as usize;
    // Bash workers spend much of their time waiting on their children:
    // twice the cores keeps the machine busy.
    let workers = env_number(
        "GD_SHELL_FUZZ_WORKERS",
        std::thread::available_parallelism().map_or(2, |n| 2 * n.get().min(4)) as u64,
    )
    .max(1) as usize;
    // A directory to write the unproven cases into (one file each), to
    // study what the grammar generates that the analysis cannot prove.
    let dump = std::env::var_os("GD_SHELL_FUZZ_DUMP_UNPROVEN").map(std::path::PathBuf::from);
    let started = Instant::now();
    let engine = check::echo_cat_engine();

    let results: Vec<Tally> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let engine = &engine;
                let dump = &dump;
                s.spawn(move || {
                    let sb = Sandbox::new();
                    // Each worker has its own stream of cases.
                    let mut generator = Gen {
                        rng: Rng(seed.wrapping_mul(0x1000_0000_01B3) ^ w as u64),
                    };
                    let mine = total / workers + usize::from(w < total % workers);
                    let mut t = Tally::default();
                    let mut next_report = 0;
                    while t.cases < mine {
                        let mut cases = Vec::with_capacity(batch);
                        while t.cases < mine && cases.len() < batch {
                            let case = generator.case();
                            t.cases += 1;
                            let (proven, allowed, why) = needs_bash(&case, engine);
                            if let Some(why) = why {
                                if let Some(dir) = &dump {
                                    let _ = std::fs::write(
                                        dir.join(format!("{w}-{}", t.cases)),
                                        format!("{why}\n\0{case}"),
                                    );
                                }
                                *t.why.entry(why).or_default() += 1;
                            }
                            t.proven += usize::from(proven);
                            t.allowed += usize::from(allowed);
                            if proven || allowed {
                                cases.push(case);
                            }
                        }
                        let runs = sb.run_batch(&cases);
                        t.bash_runs += cases.len();
                        for (case, run) in cases.iter().zip(&runs) {
                            if run.timed_out {
                                eprintln!("shell fuzz: case hit the 20 s watchdog: {case:?}");
                            }
                            if let Some(f) = check::check(case, run, engine)
                                && t.found.len() < 50
                            {
                                t.found.push(f);
                            }
                        }
                        if w == 0 && t.cases >= next_report {
                            next_report = t.cases + 20 * batch;
                            eprintln!(
                                "shell fuzz: worker 0 at {}/{mine} ({} through bash, {} finding(s)) after {:.0?}",
                                t.cases,
                                t.bash_runs,
                                t.found.len(),
                                started.elapsed()
                            );
                        }
                    }
                    t
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("fuzz worker"))
            .collect()
    });
    let generated: usize = results.iter().map(|t| t.cases).sum();
    assert_eq!(generated, total, "every case is counted once");
    let proven: usize = results.iter().map(|t| t.proven).sum();
    let allowed: usize = results.iter().map(|t| t.allowed).sum();
    let bash_runs: usize = results.iter().map(|t| t.bash_runs).sum();
    let mut why: std::collections::HashMap<String, usize> = Default::default();
    for t in &results {
        for (k, v) in &t.why {
            *why.entry(k.clone()).or_default() += v;
        }
    }
    let mut why: Vec<(String, usize)> = why.into_iter().collect();
    why.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (reason, n) in why.iter().take(12) {
        eprintln!("shell fuzz: unproven {n:>8}: {reason}");
    }
    let findings: Vec<Finding> = results.into_iter().flat_map(|t| t.found).collect();
    let elapsed = started.elapsed();
    eprintln!(
        "shell fuzz: {total} cases, seed {seed}, {workers} workers, {elapsed:.1?} ({:.0} cases/s); {proven} proven, {} unproven (pass: the policy asks), {allowed} allowed by the echo/cat rule; {bash_runs} run in bash ({:.0}/s); {} finding(s)",
        total as f64 / elapsed.as_secs_f64(),
        total - proven,
        bash_runs as f64 / elapsed.as_secs_f64(),
        findings.len()
    );
    if findings.is_empty() {
        return;
    }
    let sb = Sandbox::new();
    let mut report = format!(
        "{} case(s) break the promise (seed {seed}); shrunk:\n",
        findings.len()
    );
    // Every finding is shrunk and shown (the same shrunk case once).
    let mut seen = std::collections::HashSet::new();
    for f in &findings {
        let (small, finding) = shrink(&sb, &engine, &f.case);
        if !seen.insert(small.clone()) {
            continue;
        }
        match finding {
            Some(sf) => report.push_str(&format!("{sf}\n")),
            None => report.push_str(&format!(
                "(did not reproduce under bash -c) {small:?}\n{f}\n"
            )),
        }
    }
    panic!("{report}");
}
