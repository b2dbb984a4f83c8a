//! Fuzzing the shell analysis against bash: command lines generated from a
//! grammar of the constructs that fool splitters (quotes of every kind,
//! `$'`, `$(`, backticks, `#`, heredocs, arithmetic, parameter expansions,
//! separators, redirections, wrappers), each embedding "payload" commands
//! (recording shims and harmless builtins). Every case runs in real bash;
//! the same two promises as the corpus test must hold (see
//! `common/check.rs`).
//!
//! `GD_SHELL_FUZZ_CASES` (default 2,000) and `GD_SHELL_FUZZ_SEED`
//! (default 1) choose the run; cases run in batches in one bash worker per
//! core. A failing case is shrunk (delta debugging against `bash -c`)
//! before it is reported. See `tests/README.md` for the figures of the big run.

mod common;

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
];
const SEPARATORS: &[&str] = &[" ; ", " && ", " || ", " | ", " |& ", " & ", "\n", ";", "&&"];
const RAW: &[&str] = &[
    "#", "'", "\"", "\\", "$'", "$\"", ")", "(", "`", "\\\n", "}", "{", "$", ";", "&", "|", "\n",
    " # ", "\\'", "\\\"", "$((", "))", "<<", "${", "]]", "[[",
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
        let mut c = match self.rng.below(34) {
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
                    "nice"
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
            32 => format!("{} {}", self.payload(), self.rng.pick(RAW)),
            _ => format!("{}{}", self.rng.pick(RAW), self.command(d)),
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

    /// A script as one shell word: quoted in one of several ways.
    fn quoted_script(&mut self, d: usize) -> String {
        let s = self.script(d);
        match self.rng.below(4) {
            0 => format!("'{s}'"),
            1 => format!("\"{s}\""),
            2 => format!("$'{s}'"),
            _ => s.replace(' ', "\\ "),
        }
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
            7 => self.rng.pick(RAW).into(),
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

#[test]
fn fuzz_analysis_against_bash() {
    let total = env_number("GD_SHELL_FUZZ_CASES", 2_000) as usize;
    let seed = env_number("GD_SHELL_FUZZ_SEED", 1);
    let batch = 1_000;
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    let started = Instant::now();
    let engine = check::echo_cat_engine();

    let results: Vec<(Vec<Finding>, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let engine = &engine;
                s.spawn(move || {
                    let sb = Sandbox::new();
                    // Each worker has its own stream of cases.
                    let mut generator = Gen {
                        rng: Rng(seed.wrapping_mul(0x1000_0000_01B3) ^ w as u64),
                    };
                    let mine = total / workers + usize::from(w < total % workers);
                    let mut found = Vec::new();
                    let mut proven = 0usize;
                    let mut done = 0;
                    while done < mine {
                        let n = batch.min(mine - done);
                        let cases: Vec<String> = (0..n).map(|_| generator.script(3)).collect();
                        let runs = sb.run_batch(&cases);
                        for (case, run) in cases.iter().zip(&runs) {
                            // How many cases the invariant really tests
                            // (an unproven case passes whatever bash ran).
                            proven += usize::from(common::analysis::facts(case).proven);
                            if run.timed_out {
                                eprintln!("shell fuzz: case hit the 20 s watchdog: {case:?}");
                            }
                            if let Some(f) = check::check(case, run, engine)
                                && found.len() < 50
                            {
                                found.push(f);
                            }
                        }
                        done += n;
                        if w == 0 && (done / batch) % 50 == 0 {
                            eprintln!(
                                "shell fuzz: worker 0 at {done}/{mine} after {:.0?}",
                                started.elapsed()
                            );
                        }
                    }
                    (found, proven)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("fuzz worker"))
            .collect()
    });
    let proven: usize = results.iter().map(|r| r.1).sum();
    let findings: Vec<Finding> = results.into_iter().flat_map(|r| r.0).collect();
    let elapsed = started.elapsed();
    eprintln!(
        "shell fuzz: {total} cases, seed {seed}, {workers} workers, {elapsed:.1?} ({:.0} cases/s), {proven} proven by the analysis, {} finding(s)",
        total as f64 / elapsed.as_secs_f64(),
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
    for f in findings.iter().take(8) {
        let (small, finding) = shrink(&sb, &engine, &f.case);
        match finding {
            Some(sf) => report.push_str(&format!("{sf}\n")),
            None => report.push_str(&format!(
                "(did not reproduce under bash -c) {small:?}\n{f}\n"
            )),
        }
    }
    panic!("{report}");
}
