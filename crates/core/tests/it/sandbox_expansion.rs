//! A command the sandbox refused something, through the session API as the app drives it
//! (issue 36): the refusal becomes a `sandbox` confirmation; "always for this command" runs it
//! again with the folder writable and keeps that for the same command line only; "no" leaves
//! it refused and the model hears why. Real bubblewrap.

use crate::common;

use common::*;
use gd_core::sandbox::SandboxSettings;
use gd_protocol::{ConfirmationDetails, ConfirmationOutcome, Event, Op};
use serde_json::{Value, json};

/// A folder outside the workspace and outside /tmp (the sandbox has a /tmp of its own).
fn outside() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

fn runs(commands: &[&str]) -> Value {
    let mut steps: Vec<Value> = commands
        .iter()
        .map(|c| json!({"functionCalls": [{"name": "run_shell_command", "args": {"command": c}}]}))
        .collect();
    steps.push(json!({"text": "done"}));
    json!({ "steps": steps })
}

/// Runs a turn answering each confirmation with the next of `answers`; returns the details
/// asked about.
async fn turn_answering(
    h: &mut Harness,
    answers: &[ConfirmationOutcome],
) -> Vec<ConfirmationDetails> {
    h.handle.submit(Op::user_text("go")).unwrap();
    let mut answers = answers.iter();
    let mut asked = Vec::new();
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(30), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        match event {
            Event::ToolConfirmationRequest {
                call_id, details, ..
            } => {
                asked.push(details);
                let outcome = *answers.next().expect("an answer for every question");
                h.handle
                    .submit(Op::ConfirmTool {
                        call_id,
                        outcome,
                        content: None,
                        hunks: None,
                    })
                    .unwrap();
            }
            Event::TurnComplete { .. } => return asked,
            _ => {}
        }
    }
}

/// The `functionResponse`s of the last request, as text.
fn last_responses(h: &Harness) -> Vec<String> {
    let bodies = h.bodies();
    let last = bodies.last().unwrap();
    last["contents"].as_array().unwrap().last().unwrap()["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["functionResponse"]["response"].to_string())
        .collect()
}

#[tokio::test]
async fn always_for_this_command_holds_for_that_command_only_and_no_stays_no() {
    let out = outside();
    let folder = std::fs::canonicalize(out.path()).unwrap();
    let a = format!("touch {}/a", folder.display());
    let b = format!("touch {}/b", folder.display());
    let mut h = Harness::start_with(runs(&[&a]), |c| {
        c.shell.sandbox = SandboxSettings {
            enabled: true,
            ..SandboxSettings::default()
        };
    });

    let asked = turn_answering(&mut h, &[ConfirmationOutcome::ProceedAlways]).await;
    let [
        ConfirmationDetails::Sandbox {
            title,
            paths,
            network,
            command,
            ..
        },
    ] = asked.as_slice()
    else {
        panic!("one sandbox question: {asked:?}");
    };
    assert_eq!(command, &a);
    assert_eq!(paths, &[folder.display().to_string()]);
    assert!(!network);
    assert_eq!(
        title,
        &format!("This command needs to write in {}", folder.display())
    );
    assert!(folder.join("a").is_file(), "the allowed run wrote");
    let sent = last_responses(&h).join("\n");
    assert!(
        sent.contains("for this command for the rest of the session"),
        "{sent}"
    );

    // The same command again: no question. Another one: asked, declined.
    std::fs::remove_file(folder.join("a")).unwrap();
    h.reset(runs(&[&a, &b]));
    let asked = turn_answering(&mut h, &[ConfirmationOutcome::Cancel]).await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        matches!(&asked[0], ConfirmationDetails::Sandbox { command, .. } if *command == b),
        "{asked:?}"
    );
    assert!(folder.join("a").is_file(), "the granted command ran again");
    assert!(!folder.join("b").exists(), "the declined one wrote");
    let sent = last_responses(&h).join("\n");
    assert!(
        sent.contains("The sandbox refused this command")
            && sent.contains("The user did not allow it."),
        "{sent}"
    );
}

#[tokio::test]
async fn a_write_into_a_protected_part_is_not_offered() {
    let mut h = Harness::start_with(
        runs(&["mkdir -p .gemini && echo '{}' > .gemini/settings.json"]),
        |c| {
            c.shell.sandbox = SandboxSettings {
                enabled: true,
                ..SandboxSettings::default()
            };
        },
    );
    let asked = turn_answering(&mut h, &[]).await;
    assert!(asked.is_empty(), "{asked:?}");
    assert!(!h.workspace.join(".gemini/settings.json").exists());
    let sent = last_responses(&h).join("\n");
    assert!(sent.contains("The sandbox never allows that."), "{sent}");
}
