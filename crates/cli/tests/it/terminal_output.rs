//! Model text cannot drive the user's terminal: under a real pseudo-terminal (`script`)
//! `-o text` drops escape sequences (OSC 52 would set the clipboard, CSI 2J clears the
//! screen), even split across stream chunks; through a pipe every byte is kept.
#![cfg(unix)]

use crate::common;

use common::*;
use serde_json::json;

/// Split into 3-character stream chunks, so the sequences straddle chunk boundaries.
const REPLY: &str = "before\x1b]52;c;ZXZpbA==\x07middle\x1b[2J\u{9b}31mafter\r\n";

fn scenario() -> serde_json::Value {
    json!({"chunk_chars": 3, "steps": [{"text": REPLY}]})
}

fn quoted(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', "'\\''"))
}

#[test]
fn escape_sequences_from_the_model_never_reach_a_terminal() {
    let run = Run::new(scenario());
    let cli = [
        env!("CARGO_BIN_EXE_gemini-desktop-cli"),
        "-p",
        "say it",
        "-o",
        "text",
    ]
    .map(quoted)
    .join(" ");
    // `script` gives the CLI a pseudo-terminal for stdin, stdout and stderr, and copies what
    // the terminal received to its own stdout.
    // The same environment as a direct run (fake server, temporary HOME).
    let direct = run.command(&[]);
    let out = std::process::Command::new("script")
        .env_clear()
        .envs(direct.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .args(["-q", "-e", "-c", &cli, "/dev/null"])
        .current_dir(&run.ws)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script runs");
    let seen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{seen}");
    assert!(
        !seen.contains('\x1b'),
        "an ESC reached the terminal: {seen:?}"
    );
    assert!(
        !seen.contains('\x07'),
        "a BEL reached the terminal: {seen:?}"
    );
    assert!(
        !seen.contains('\u{9b}'),
        "a C1 CSI reached the terminal: {seen:?}"
    );
    assert!(!seen.contains("52;c"), "{seen:?}");
    // The terminal turns each newline into CR LF itself; the text is all there.
    assert_eq!(seen.replace("\r\n", "\n"), "beforemiddleafter\n");
}

#[test]
fn a_pipe_gets_the_models_bytes_unchanged() {
    let run = Run::new(scenario());
    let out = run.run(&["-p", "say it", "-o", "text"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), REPLY);
}
