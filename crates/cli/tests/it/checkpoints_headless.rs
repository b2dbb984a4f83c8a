//! `general.checkpointing.enabled` in a headless run, then
//! `--list-checkpoints` and `--restore-checkpoint` as separate processes.

use crate::common;

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

#[test]
fn restore_mode_both_puts_back_the_files_and_cuts_the_conversation() {
    let run = Run::new(json!({"steps": [{"text": "Noted: okapis."}]}));
    run.write_settings(
        &run.user_settings(),
        r#"{"general": {"checkpointing": {"enabled": true}}}"#,
    );
    let vars = [("WORKSPACE", run.ws.to_str().unwrap())];
    let out = run.run(&["-p", "remember the okapi", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let session = stdout_json(&out)["session_id"].as_str().unwrap().to_owned();
    run.fake.reset(write_hello(), &vars);
    let out = run.run(&["--resume", "-p", "rewrite hello", "-o", "json", "--yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["session_id"], session.as_str());
    assert_eq!(
        std::fs::read_to_string(run.ws.join("hello.txt")).unwrap(),
        "rewritten\n"
    );
    let list = stdout_json(&run.run(&["--list-checkpoints", "-o", "json"]));
    let id = list[0]["checkpoint_id"].as_str().unwrap().to_owned();
    assert_eq!(list[0]["session_id"], session.as_str());

    // A mode without a checkpoint is refused by the argument parser.
    let out = run.run(&["--restore-mode", "both"]);
    assert_ne!(out.status.code(), Some(0));

    let out = run.run(&[
        "--restore-checkpoint",
        &id,
        "--restore-mode",
        "both",
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let restored = stdout_json(&out);
    assert_eq!(
        restored["files"],
        json!([{"path": "hello.txt", "action": "reverted"}])
    );
    // The prompt, the call, its result and the answer.
    assert_eq!(restored["conversation"]["removed"], 4);
    assert_eq!(
        std::fs::read_to_string(run.ws.join("hello.txt")).unwrap(),
        "hello\n"
    );

    // Resumed again, the model no longer sees the undone turn.
    run.fake.reset(json!({"steps": [{"text": "Fine."}]}), &vars);
    let out = run.run(&["--resume", "-p", "what now?", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sent = run.bodies().last().unwrap()["contents"].to_string();
    assert!(sent.contains("remember the okapi"), "{sent}");
    assert!(!sent.contains("rewrite hello"), "{sent}");
    assert!(!sent.contains("functionCall"), "{sent}");

    // Its conversation is gone now; the code can still be restored.
    let out = run.run(&[
        "--restore-checkpoint",
        &id,
        "--restore-mode",
        "conversation",
    ]);
    assert_eq!(out.status.code(), Some(42));
    assert!(
        stderr(&out).contains("no longer in the history"),
        "{}",
        stderr(&out)
    );
}
