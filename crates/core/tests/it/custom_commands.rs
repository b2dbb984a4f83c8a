//! Custom slash commands (TOML in `~/.gemini/commands` and
//! `<workspace>/.gemini/commands`) against the fake Gemini server: listing,
//! expansion of `{{args}}`, `@{file}` and `!{shell}`, the shell piece going
//! through the normal confirmation, and `-p "/name args"`-style turns.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::*;
use gd_core::ApprovalMode;
use gd_core::config::FileFiltering;
use gd_core::memory::DiscoveryOptions;
use gd_core::policy::PolicyApproval;
use gd_policy::{PolicyEngine, default_rules};
use gd_protocol::{
    ConfirmationDetails, ConfirmationOutcome, Event, Op, SlashCommandSource, TurnStatus,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A session whose home is `home` (commands and memory are read there).
fn start(
    home: PathBuf,
    steps: Value,
    policy: Arc<dyn gd_core::approval::ApprovalPolicy>,
) -> Harness {
    Harness::start_with_policy(
        json!({ "steps": steps }),
        move |config| {
            config.memory = Some(DiscoveryOptions {
                workspace: config.workspace_dirs[0].clone(),
                home: Some(home),
                file_names: vec!["GEMINI.md".into()],
                max_dirs: 10,
                filtering: FileFiltering::default(),
                workspace_files: true,
                boundary_markers: None,
                include_directories: false,
            });
        },
        policy,
    )
}

fn commands_dir(h: &Harness) -> PathBuf {
    h.workspace.join(".gemini/commands")
}

fn prompt_texts(h: &Harness) -> Vec<String> {
    let body = &h.bodies()[0];
    body["contents"][0]["parts"].as_array().unwrap()[1..]
        .iter()
        .map(|p| p["text"].as_str().unwrap_or("<non-text>").to_owned())
        .collect()
}

#[tokio::test]
async fn commands_are_listed_with_built_ins_and_project_wins() {
    let home = tempfile::tempdir().unwrap();
    let mut h = start(
        home.path().to_path_buf(),
        json!([]),
        Arc::new(gd_core::approval::AllowAll),
    );
    write(
        &home.path().join(".gemini/commands/git/commit.toml"),
        "description = \"Writes a commit message\"\nprompt = \"Commit!\"\n",
    );
    write(
        &home.path().join(".gemini/commands/review.toml"),
        "prompt = \"user\"\n",
    );
    write(
        &commands_dir(&h).join("review.toml"),
        "description = \"Project review\"\nprompt = \"project\"\n",
    );
    write(&commands_dir(&h).join("broken.toml"), "prompt = \n");
    h.handle.submit(Op::ListCommands).unwrap();
    let mut warnings = Vec::new();
    let commands = loop {
        match h.events.recv().await.unwrap() {
            Event::Commands { commands } => break commands,
            Event::Warning { message } => warnings.push(message),
            _ => {}
        }
    };
    let names: Vec<(&str, SlashCommandSource)> = commands
        .iter()
        .map(|c| (c.name.as_str(), c.source))
        .collect();
    assert_eq!(
        names,
        [
            ("clear", SlashCommandSource::BuiltIn),
            ("compress", SlashCommandSource::BuiltIn),
            ("memory", SlashCommandSource::BuiltIn),
            ("mcp", SlashCommandSource::BuiltIn),
            ("stats", SlashCommandSource::BuiltIn),
            // No `/restore`: checkpointing is off in this session.
            ("policies", SlashCommandSource::BuiltIn),
            ("agents", SlashCommandSource::BuiltIn),
            ("skills", SlashCommandSource::BuiltIn),
            ("hooks", SlashCommandSource::BuiltIn),
            ("extensions", SlashCommandSource::BuiltIn),
            ("git:commit", SlashCommandSource::User),
            ("review", SlashCommandSource::Project),
        ]
    );
    assert_eq!(commands[10].description, "Writes a commit message");
    assert_eq!(commands[11].description, "Project review");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("broken.toml"), "{warnings:?}");
    // Listing again (each `/` typed in the composer) does not repeat it.
    h.handle.submit(Op::ListCommands).unwrap();
    loop {
        match h.events.recv().await.unwrap() {
            Event::Commands { .. } => break,
            Event::Warning { message } => panic!("repeated warning: {message}"),
            _ => {}
        }
    }
}

#[tokio::test]
async fn args_files_and_shell_output_are_expanded() {
    let home = tempfile::tempdir().unwrap();
    let mut h = start(
        home.path().to_path_buf(),
        json!([{"text": "ok"}, {"text": "ok"}]),
        Arc::new(gd_core::approval::AllowAll),
    );
    write(
        &commands_dir(&h).join("review.toml"),
        r#"prompt = "Review {{args}} carefully.\n@{hello.txt}\nGrep: !{printf '%s|' {{args}}}""#,
    );
    let hello = std::fs::read_to_string(h.workspace.join("hello.txt")).unwrap();
    let events = h.turn("/review it's; rm -rf x").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(
        prompt_texts(&h),
        [
            "Review it's; rm -rf x carefully.\n".to_owned(),
            hello,
            "\nGrep: it's; rm -rf x|".to_owned(),
        ]
    );
    // The shell piece ran as a run_shell_command call, visible to the user.
    assert!(
        events.iter().any(
            |e| matches!(e, Event::ToolCallRequest { name, .. } if name == "run_shell_command")
        )
    );

    // Without {{args}}, the invocation is appended after a blank line.
    write(
        &commands_dir(&h).join("plain.toml"),
        "prompt = \"Explain the code.\"\n",
    );
    h.reset(json!({"steps": [{"text": "ok"}]}));
    h.turn("/plain in detail").await;
    let body = &h.bodies()[0];
    let parts = body["contents"].as_array().unwrap().last().unwrap()["parts"].clone();
    assert_eq!(
        parts,
        json!([{"text": "Explain the code.\n\n/plain in detail"}])
    );
}

#[tokio::test]
async fn the_shell_piece_needs_confirmation_and_declining_stops_the_command() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let policy = Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        true,
        Some(dir.path().join("auto-saved.toml")),
    ));
    let mut h = start(home.path().to_path_buf(), json!([{"text": "ok"}]), policy);
    write(
        &commands_dir(&h).join("status.toml"),
        "prompt = \"State: !{touch ran.txt}\"\n",
    );
    h.handle.submit(Op::user_text("/status")).unwrap();
    let mut events = Vec::new();
    loop {
        let event = h.events.recv().await.unwrap();
        if let Event::ToolConfirmationRequest {
            call_id, details, ..
        } = &event
        {
            assert!(
                matches!(details, ConfirmationDetails::Execute { command, .. } if command == "touch ran.txt")
            );
            h.handle
                .submit(Op::ConfirmTool {
                    call_id: call_id.clone(),
                    outcome: ConfirmationOutcome::Cancel,
                    content: None,
                    hunks: None,
                })
                .unwrap();
        }
        let done = matches!(event, Event::TurnComplete { .. });
        events.push(event);
        if done {
            break;
        }
    }
    assert_eq!(status(&events), TurnStatus::Declined);
    assert!(!h.workspace.join("ran.txt").exists());
    assert!(h.bodies().is_empty(), "nothing is sent to the model");
}

#[tokio::test]
async fn unknown_slash_text_is_an_ordinary_prompt() {
    let home = tempfile::tempdir().unwrap();
    let mut h = start(
        home.path().to_path_buf(),
        json!([{"text": "ok"}]),
        Arc::new(gd_core::approval::AllowAll),
    );
    h.turn("/usr/bin is a directory").await;
    assert_eq!(prompt_texts(&h), ["/usr/bin is a directory"]);
}
