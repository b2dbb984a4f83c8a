//! `general.checkpointing.enabled` in a headless run, then
//! `--list-checkpoints` and `--restore-checkpoint` as separate processes.

mod common;

use common::*;
use serde_json::json;

fn write_hello() -> serde_json::Value {
    json!({"steps": [
        {"functionCalls": [{"name": "write_file", "args": {"file_path": "hello.txt", "content": "rewritten\n"}}]},
        {"text": "Done."}
    ]})
}

#[test]
fn a_headless_edit_is_checkpointed_and_restored_from_the_command_line() {
    let run = Run::new(write_hello());
    run.write_settings(
        &run.user_settings(),
        r#"{"general": {"checkpointing": {"enabled": true}}}"#,
    );
    let out = run.run(&["-p", "rewrite hello", "-o", "json", "--yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(run.ws.join("hello.txt")).unwrap(),
        "rewritten\n"
    );
    assert!(
        run.home.join(".gemini/gemini-desktop/checkpoints").is_dir(),
        "the shadow repositories live in the data directory"
    );
    assert!(!run.ws.join(".git").exists(), "the workspace is left alone");

    let out = run.run(&["--list-checkpoints", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let list = stdout_json(&out);
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["tool"], "write_file");
    assert_eq!(list[0]["files"], json!(["hello.txt"]));
    let id = list[0]["checkpoint_id"].as_str().unwrap().to_owned();

    let out = run.run(&["--list-checkpoints"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&id) && text.contains("write_file hello.txt"),
        "{text}"
    );

    let out = run.run(&["--restore-checkpoint", &id]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("reverted  hello.txt"), "{text}");
    assert!(
        text.contains("To undo: gemini-desktop-cli --restore-checkpoint"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(run.ws.join("hello.txt")).unwrap(),
        "hello\n"
    );

    let out = run.run(&["--restore-checkpoint", "20990101T000000000Z-00000000"]);
    assert_eq!(out.status.code(), Some(42));
    assert!(
        stderr(&out).contains("no checkpoint 20990101T000000000Z-00000000"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn headless_runs_do_not_checkpoint_by_default() {
    let run = Run::new(write_hello());
    let out = run.run(&["-p", "rewrite hello", "-o", "json", "--yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run.run(&["--list-checkpoints"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("No checkpoints for "));
}
