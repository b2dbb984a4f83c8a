//! A stored conversation for the benchmark: `messages` messages (prompts and answers
//! alternating) written with gd-store into a fresh data directory, for the workspace the app
//! is launched on. The app reopens the newest session of its workspace at start, so launching
//! it with `GEMINI_DESKTOP_DATA_DIR` pointing there opens this conversation, as a user who
//! resumes a long session would see it.

use std::path::Path;

use anyhow::{Context, Result};
use gd_store::{MessageKind, NewMessage, NewSession, Role, SOURCE_DESKTOP, Store};
use serde_json::json;

/// The seeded session's id (the app resumes it by id).
pub const SESSION_ID: &str = "00000000-0000-4000-8000-0000000000c8";

/// One answer: prose, a list and a fenced code block, like a coding agent's (~1.5 kB), so the
/// page pays for markdown, highlighting and DOM as it does with real conversations.
fn answer(i: usize) -> String {
    format!(
        "Step {i}: the function `parse_args` reads the command line and returns the options.\n\n\
         It does three things:\n\n\
         - splits the arguments at `--`, so later ones are never taken as options;\n\
         - resolves the workspace against the current directory;\n\
         - reports **unknown options** instead of ignoring them.\n\n\
         ```rust\n\
         fn parse_args(args: &[String]) -> Result<Options, Error> {{\n    \
             let mut options = Options::default();\n    \
             for (n, arg) in args.iter().enumerate() {{\n        \
                 if arg == \"--\" {{\n            \
                     options.rest = args[n + 1..].to_vec();\n            \
                     break;\n        \
                 }}\n        \
                 options.push(arg.parse()?);\n    \
             }}\n    \
             Ok(options)\n\
         }}\n\
         ```\n\n\
         The tests in `tests/args.rs` cover each case; run them with `cargo test -p cli args` \
         ({i} of them passed on the last run). Next, the settings file is read the same way, \
         so the two stay consistent and the error messages name the file and the line.\n"
    )
}

/// Writes the conversation into a new store at `data_dir` (the app's `GEMINI_DESKTOP_DATA_DIR`)
/// for `workspace` (canonical, as the app names it).
pub fn seed(data_dir: &Path, workspace: &Path, messages: usize) -> Result<()> {
    std::fs::create_dir_all(data_dir)?;
    let store = Store::open(data_dir.join(gd_store::DB_FILE)).context("open the seeded store")?;
    let now = gd_store::now_ms();
    store.create_session(&NewSession {
        id: SESSION_ID.into(),
        workspace: workspace.to_string_lossy().into_owned(),
        title: "A long conversation".into(),
        model: Some("gemini-2.5-flash".into()),
        created_ms: now - 3_600_000,
        source: SOURCE_DESKTOP.into(),
        origin: None,
    })?;
    let all: Vec<NewMessage> = (0..messages)
        .map(|n| {
            let (role, kind, text) = if n % 2 == 0 {
                (
                    Role::User,
                    MessageKind::Prompt,
                    format!("Question {}: how does parse_args handle `--`?", n / 2),
                )
            } else {
                (Role::Model, MessageKind::Model, answer(n / 2))
            };
            let mut message = NewMessage::new(role, kind, json!([{ "text": text }]), text);
            message.created_ms = now - 3_600_000 + n as i64 * 1000;
            message
        })
        .collect();
    store.append_messages(SESSION_ID, &all)?;
    Ok(())
}
