//! The attacks of issue 12, end to end: the headless CLI in default mode,
//! a user policy that allows only `echo` and `cat`, and a model that tries
//! to run something else through the gaps of a shell parser. None of them
//! may run; the plain `echo`/`cat` commands still do.
//!
//! Each attack is also run with real bash first, so the test proves that
//! the command would have touched its file had the policy allowed it.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{Run, stderr};
use serde_json::{Value, json};

/// The user's policy: `echo` and `cat` run without asking, nothing else.
const ECHO_CAT_POLICY: &str = "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = [\"echo\", \"cat\"]\ndecision = \"allow\"\npriority = 100\n";

/// Commands that each create `../x` (the workspace's parent) or
/// `~/somefile` in bash, while looking like `echo`/`cat` to a naive splitter.
fn attacks() -> Vec<&'static str> {
    vec![
        "echo \"$'\" ; touch ../x ; echo \"'\"",
        "echo $(echo)#; touch ../x",
        "echo <(echo)#; touch ../x",
        // The body's `'` pairs with the last line's for a naive splitter.
        "cat <<EOF\necho '\nEOF\ntouch ../x\necho '",
        "echo ${x:='a[$(touch ../x)]'} $((x))",
        "echo pwned > ~/somefile",
        // Issue 33: the grammar read `cat;` as the delimiter, and ended a
        // body at a line that only starts with it; bash ran the `touch`.
        "cat <<cat;\ncat\ntime touch ../x\ncat;",
        "cat <<cat&\ncat\ntime touch ../x\ncat;",
        "cat <<cat|cat\ncat\ntime touch ../x\ncat;",
        "cat <<cat\ncat;echo '$(time touch ../x)'\ncat",
        "cat <<cat\ncat | cat '${x:-$(time touch ../x)}'\ncat",
        "cat <<cat\ncat;echo '$(coproc touch ../x)'\ncat",
        // Bash joins `EO\<newline>F` into the delimiter line.
        "cat <<EOF\nEO\\\nF\ntouch ../x\nEOF",
        // The grammar's `$'...'` went on past `\\'`: after the allowed
        // `echo`, an assignment to it (which needs no rule), `touch` to bash
        // (found by the fuzzer).
        "echo hi; x=$'\\\\' touch ../x #'",
        "echo hi && A=1 x=$'a\\\\' touch ../x #'",
        // Bash 5.2 runs `$(...)` from a printed copy of its parse that
        // joins the commands after a here-document: the case pattern
        // becomes a command, brace-expanded to `touch ../x` (fuzz seed 35).
        "echo hi $(cat <<EOF\nEOF\necho;case x in({touch,../x})esac)",
    ]
}

/// A headless run whose model asks, in one step, to run each of
/// `commands` and then the plain command `last`.
fn scripted_run<S: AsRef<str>>(commands: &[S], last: &str) -> Run {
    let calls: Vec<Value> = commands
        .iter()
        .map(AsRef::as_ref)
        .chain([last])
        .map(|c| json!({"name": "run_shell_command", "args": {"command": c}}))
        .collect();
    Run::new(json!({"steps": [
        {"functionCalls": calls},
        {"text": "done"}
    ]}))
}

/// [`scripted_run`] under [`ECHO_CAT_POLICY`].
fn echo_cat_run<S: AsRef<str>>(commands: &[S], last: &str) -> Run {
    let run = scripted_run(commands, last);
    run.write_settings(
        &run.home.join(".gemini/policies/echo-cat.toml"),
        ECHO_CAT_POLICY,
    );
    run
}

/// Runs the CLI with `args` and checks that every one of `cases` was
/// refused and nothing created `../x`; the plain last command's output.
fn refused_then_plain(run: &Run, cases: &[&str], args: &[&str]) -> String {
    let out = run.run(args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answers = common::responses(run, 1);
    assert_eq!(answers.len(), cases.len() + 1, "{answers:?}");
    for (case, answer) in cases.iter().zip(&answers) {
        assert!(answer["error"].is_string(), "{case:?} ran: {answer}");
    }
    assert!(
        !run.ws.parent().unwrap().join("x").exists(),
        "an attack created ../x"
    );
    answers.last().unwrap()["output"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Runs `command` with bash in `ws` (HOME = `home`) and reports whether it
/// created `../x` or `~/somefile`, removing them again.
fn bash_touches(command: &str, ws: &Path, home: &Path) -> bool {
    let outside = [ws.parent().unwrap().join("x"), home.join("somefile")];
    // Its exit status does not matter: some cases end in a syntax error
    // after the payload ran.
    Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(ws)
        .env("HOME", home)
        .output()
        .expect("bash runs");
    let mut touched = false;
    for path in &outside {
        if path.exists() {
            touched = true;
            std::fs::remove_file(path).unwrap();
        }
    }
    touched
}

#[test]
fn attacks_on_an_echo_cat_rule_run_nothing() {
    let run = echo_cat_run(&attacks(), "echo hi | cat");
    for attack in attacks() {
        assert!(
            bash_touches(attack, &run.ws, &run.home),
            "bash itself does not run the payload of {attack:?}: the case proves nothing"
        );
    }

    let out = run.run(&["-p", "try", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let answers = common::responses(&run, 1);
    assert_eq!(answers.len(), attacks().len() + 1);
    for (attack, answer) in attacks().iter().zip(&answers) {
        let error = answer["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("needs the user's approval") || error.contains("denied"),
            "{attack:?} was not refused: {answer}"
        );
    }
    let plain = answers.last().unwrap()["output"]
        .as_str()
        .unwrap_or_default();
    assert!(plain.contains("hi"), "echo hi | cat did not run: {plain}");
    assert!(
        !run.ws.parent().unwrap().join("x").exists(),
        "an attack created ../x"
    );
    assert!(
        !run.home.join("somefile").exists(),
        "an attack wrote ~/somefile"
    );
}

#[test]
fn a_redirection_runs_when_the_rule_allows_redirection() {
    let run = Run::new(json!({"steps": [
        {"functionCalls": [{"name": "run_shell_command", "args": {"command": "echo kept > out.txt"}}]},
        {"text": "done"}
    ]}));
    run.write_settings(
        &run.home.join(".gemini/policies/echo.toml"),
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"echo\"\ndecision = \"allow\"\npriority = 100\nallow_redirection = true\n",
    );
    let out = run.run(&["-p", "try", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(run.ws.join("out.txt")).unwrap(),
        "kept\n",
        "{:?}",
        common::responses(&run, 1)
    );
}

/// Issue 33: 6,000 to 10,000 levels of `${x:-...}` or `$((...))` aborted
/// the whole process (stack overflow, exit 134) and 10,000 of `$(...)` took
/// ~49 s to analyse. Past the analysis's bounds a command is unproven:
/// asked, which headless means refused, and the session goes on.
#[test]
fn deep_nesting_is_refused_not_a_crash() {
    let deep = [
        format!("echo {}a{}", "${x:-".repeat(8_000), "}".repeat(8_000)),
        format!("echo {}1{}", "$((".repeat(8_000), "))".repeat(8_000)),
        format!("echo {}a{}", "$(".repeat(10_000), ")".repeat(10_000)),
    ];
    let run = echo_cat_run(&deep, "echo still here");
    let out = run.run(&["-p", "try", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answers = common::responses(&run, 1);
    assert_eq!(answers.len(), deep.len() + 1);
    for answer in &answers[..deep.len()] {
        let error = answer["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("needs the user's approval") || error.contains("denied"),
            "a deeply nested command was not refused: {}",
            error.chars().take(300).collect::<String>()
        );
        // The reasons shown quote the command only in part.
        assert!(
            error.len() < 4_000,
            "the refusal quotes {} bytes",
            error.len()
        );
    }
    let plain = answers.last().unwrap()["output"]
        .as_str()
        .unwrap_or_default();
    assert!(plain.contains("still here"), "{plain}");
}

/// Issue 33: the here-document attacks worked in plan mode too, where the
/// user's echo/cat rule still lets `cat` run.
#[test]
fn here_document_attacks_are_refused_in_plan_mode() {
    let cases = [
        "cat <<cat;\ncat\ntime touch ../x\ncat;",
        "cat <<cat\ncat;echo '$(time touch ../x)'\ncat",
    ];
    let run = echo_cat_run(&cases, "cat notes.txt");
    std::fs::write(run.ws.join("notes.txt"), "plain notes\n").unwrap();
    for case in cases {
        assert!(bash_touches(case, &run.ws, &run.home), "{case:?}");
    }
    let plain = refused_then_plain(
        &run,
        &cases,
        &["-p", "try", "-o", "json", "--approval-mode", "plan"],
    );
    assert!(
        plain.contains("plain notes"),
        "cat did not run in plan mode: {plain}"
    );
}

/// Issue 33: the here-document attacks worked behind any allowed prefix,
/// `tools.allowed: ["run_shell_command(git status)"]` too.
#[test]
fn here_document_attacks_are_refused_under_tools_allowed() {
    // The delimiter lines must be allowed commands themselves for the
    // old analysis to let them through: `git;` is read as the delimiter.
    let cases = [
        "git status <<git;\ngit\ntime touch ../x\ngit;",
        "git status <<git;\ngit\ntime -p touch ../x\ngit;",
    ];
    let run = scripted_run(&cases, "git status --short");
    run.write_settings(
        &run.user_settings(),
        &json!({"tools": {"allowed": ["run_shell_command(git status)"]}}).to_string(),
    );
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&run.ws)
        .status()
        .expect("git runs");
    assert!(git.success());
    std::fs::write(run.ws.join("untracked.txt"), "x").unwrap();
    for case in cases {
        assert!(bash_touches(case, &run.ws, &run.home), "{case:?}");
    }
    let status = refused_then_plain(&run, &cases, &["-p", "try", "-o", "json"]);
    assert!(
        status.contains("untracked.txt"),
        "git status did not run under tools.allowed: {status}"
    );
}
