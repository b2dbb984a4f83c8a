//! Differential test of the shell analysis against bash itself: every case
//! of `tests/corpus/` runs with real bash (`bash -c`, as the shell tool runs
//! it) in a throwaway directory with recording shims as the only `PATH` and
//! `xtrace` on; then the analysis must list every command bash ran (or say
//! it cannot prove what runs), and a policy that allows only `echo` and
//! `cat` must never allow a case that ran anything else or wrote a file.
//! See `tests/README.md`.

use crate::common;

use std::sync::OnceLock;

use common::check::{self, Finding};
use common::corpus::{self, Case};
use common::sandbox::{Run, Sandbox};
use common::trace::Source;

fn names(run: &Run) -> Vec<&str> {
    run.commands.iter().map(|c| c.name.as_str()).collect()
}

#[test]
fn recorder_sees_builtins_functions_subshells_substitutions() {
    let sb = Sandbox::new();
    let run = sb.run(
        "f() { pwd; }; f; (umask); { true; }; echo $(id) `whoami` <(ls); \
         trap 'date' EXIT; eval 'hostname'; bash -c 'uname'; sh -c 'git x'; \
         x=$(printf a); . /dev/null; let y=1",
    );
    let got = names(&run);
    for want in [
        "f", "pwd", "umask", "true", "echo", "id", "whoami", "ls", "trap", "date", "eval",
        "hostname", "bash", "uname", "sh", "git", "printf", ".", "let",
    ] {
        assert!(
            got.contains(&want),
            "{want} not recorded in {got:?}\n{}",
            run.output
        );
    }
}

#[test]
fn recorder_sees_commands_that_wrappers_start() {
    let sb = Sandbox::new();
    let run = sb.run(
        "xargs rm </dev/null; env A=1 touch a; sudo -u root curl x; nohup id; \
         find . -exec chmod 600 {} \\;; command printf x; builtin cd .; timeout 5 wget y",
    );
    let got = names(&run);
    for want in [
        "xargs", "rm", "env", "touch", "sudo", "curl", "nohup", "id", "find", "chmod", "command",
        "printf", "builtin", "cd", "timeout", "wget",
    ] {
        assert!(
            got.contains(&want),
            "{want} not recorded in {got:?}\n{}",
            run.output
        );
    }
    let wrapped: Vec<&str> = run
        .commands
        .iter()
        .filter(|c| c.from == Source::Wrapped)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(wrapped, ["printf", "cd"]);
}

#[test]
fn recorder_keeps_its_own_noise_out() {
    let sb = Sandbox::new();
    let run = sb.run("true");
    assert_eq!(names(&run), ["true"]);
    assert!(run.written.is_empty(), "{:?}", run.written);
    // Assignments alone, keywords and `command -v` run no command.
    let run = sb.run("a=1; b[2]=x; for i in 1; do :; done; [[ a ]]; (( 1 )); command -v ls");
    assert_eq!(names(&run), [":", "command"]);
}

#[test]
fn recorder_sees_files_written_and_multiline_words() {
    let sb = Sandbox::new();
    let run = sb
        .run("echo x > f; echo y >> ~/g; echo z > ../h; echo n >/dev/null; echo $'a\\nb' \"c'd\"");
    assert_eq!(
        run.written,
        ["a/b/f", "a/b/work/f", "home/g"]
            .iter()
            .filter(|p| **p != "a/b/f")
            .copied()
            .chain(["a/b/h"])
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
    );
    let last = run.commands.last().expect("recorded");
    assert_eq!(last.name, "echo");
    assert!(
        last.text.contains("'a\nb'") || last.text.contains("$'a\\nb'"),
        "{:?}",
        last.text
    );
}

#[test]
fn batch_worker_records_like_bash_c() {
    let sb = Sandbox::new();
    let cases: Vec<String> = [
        "echo a; rm b",
        "f() { id; }; f & wait",
        "xargs touch </dev/null; echo x > out",
        "cat <<E\n$(curl x)\nE",
        "exit 3; rm x",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let batch = sb.run_batch(&cases);
    for (case, b) in cases.iter().zip(&batch) {
        let single = sb.run(case);
        // Background jobs may record in another order.
        let (mut x, mut y) = (names(b), names(&single));
        x.sort();
        y.sort();
        assert_eq!(x, y, "case {case:?}");
        assert_eq!(b.written, single.written, "case {case:?}");
    }
}

#[test]
fn corpus_is_large_and_safe_to_run() {
    let cases = corpus::load();
    assert!(cases.len() >= 300, "only {} corpus cases", cases.len());
    for c in &cases {
        if let Some(why) = corpus::unsafe_reason(&c.text) {
            panic!("{}:{}: {why}: {:?}", c.file, c.line, c.text);
        }
    }
}

/// Every corpus case, run once (two at a time) and shared by the tests.
fn corpus_runs() -> &'static [(Case, Run)] {
    static RUNS: OnceLock<Vec<(Case, Run)>> = OnceLock::new();
    RUNS.get_or_init(|| {
        let cases: Vec<Case> = corpus::load()
            .into_iter()
            .filter(|c| corpus::unsafe_reason(&c.text).is_none())
            .collect();
        let sb = Sandbox::new();
        let half = cases.len().div_ceil(2);
        std::thread::scope(|s| {
            let parts: Vec<_> = cases
                .chunks(half.max(1))
                .map(|chunk| {
                    let sb = &sb;
                    s.spawn(move || {
                        chunk
                            .iter()
                            .map(|c| (c.clone(), sb.run(&c.text)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|h| h.join().expect("runner"))
                .collect()
        })
    })
}

fn report(findings: &[(&Case, Finding)]) -> String {
    let mut s = format!("{} corpus case(s) break the promise:\n", findings.len());
    for (c, f) in findings {
        s.push_str(&format!("{}:{}\n{f}\n", c.file, c.line));
    }
    s
}

#[test]
fn corpus_analysis_lists_every_command_bash_ran() {
    let engine = check::echo_cat_engine();
    let findings: Vec<(&Case, Finding)> = corpus_runs()
        .iter()
        .filter_map(|(c, run)| check::check(&c.text, run, &engine).map(|f| (c, f)))
        .filter(|(_, f)| !f.missed.is_empty())
        .collect();
    assert!(findings.is_empty(), "{}", report(&findings));
}

#[test]
fn corpus_echo_cat_allow_means_only_echo_and_cat_ran() {
    let engine = check::echo_cat_engine();
    let findings: Vec<(&Case, Finding)> = corpus_runs()
        .iter()
        .filter_map(|(c, run)| check::check(&c.text, run, &engine).map(|f| (c, f)))
        .filter(|(_, f)| f.policy.is_some())
        .collect();
    assert!(findings.is_empty(), "{}", report(&findings));
}

#[test]
fn corpus_cases_finish_in_time() {
    let slow: Vec<&str> = corpus_runs()
        .iter()
        .filter(|(_, r)| r.timed_out)
        .map(|(c, _)| c.text.as_str())
        .collect();
    assert!(slow.is_empty(), "cases hit the timeout: {slow:?}");
}
