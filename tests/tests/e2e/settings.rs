//! Trusted folders and the settings screen in the real app.
//!
//! An untrusted folder whose `.gemini/settings.json` names a model opens with the trust prompt
//! and in restricted mode: the chat works, with the default model (the workspace's setting is
//! not in effect). "Trust folder" writes `~/.gemini/trustedFolders.json` and reloads the
//! session: the workspace's model is used. Then the settings screen changes the theme in the
//! user's file (its comments and other keys stay byte for byte) and the model in the
//! workspace's file, which the running session picks up.
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`.

use std::path::Path;

use anyhow::{Context, Result, ensure};
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use gd_fake_gemini::fixtures::copy_peer_workspace;
use serde_json::json;

const USER_SETTINGS: &str = r#"{
  // Written by hand; the app must keep this comment.
  "security": {"auth": {"selectedType": "gemini-api-key"}}, /* and this one */
  "ui": {
    "theme": "light" // the theme
  },
  "someFutureKey": [1, 2, 3]
}
"#;

const WORKSPACE_SETTINGS: &str = r#"{
  // The project's model.
  "model": {"name": "gemini-from-workspace"}
}
"#;

/// Sends `text` and waits for `answer` (the fake's next reply); returns the model the request
/// named.
async fn send(app: &App, fake: &FakeGemini, text: &str, answer: &str) -> Result<String> {
    fake.reset(json!({"steps": [{"text": answer}]}), &[]);
    let before = fake.main_requests().len();
    app.type_and_enter("prompt-input", text).await?;
    app.wait_for_last_text("message-model", "showed the answer", |t| t.contains(answer))
        .await?;
    let requests = fake.main_requests();
    ensure!(requests.len() == before + 1, "one request per prompt");
    let last = requests.last().context("a request")?;
    Ok(last.model.clone().unwrap_or_default())
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::create_dir_all(path.parent().context("a parent")?)?;
    std::fs::write(path, text).with_context(|| format!("write {}", path.display()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_folder_is_restricted_until_trusted_then_settings_are_written_in_place()
-> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path()).canonicalize()?;
    write(&ws.join(".gemini/settings.json"), WORKSPACE_SETTINGS)?;
    let fake = FakeGemini::start(json!({"steps": [{"text": "unused"}]}));
    let base = fake.base_url();
    let app = App::launch_untrusted(
        "settings_trust",
        &[&ws],
        &[
            ("GEMINI_API_KEY", "e2e-key"),
            ("GOOGLE_GEMINI_BASE_URL", &base),
        ],
    )
    .await?;
    app.wait_ready().await?;
    let user_file = app.home().join(".gemini/settings.json");
    write(&user_file, USER_SETTINGS)?;

    // Undecided: the prompt, restricted mode, and the workspace's model is not in effect.
    app.wait_for_attr("trust-prompt", "data-state", "the trust prompt", |s| {
        s == "undecided"
    })
    .await?;
    // The prompt is one line; what the folder holds is behind "Details".
    app.click("trust-details").await?;
    app.wait_for_text("trust-found", "listed the workspace settings", |t| {
        t.contains("Settings: model")
    })
    .await?;
    // The default model is `auto`: each prompt is routed (the fake's
    // classifier answers a low score, so Flash).
    app.wait_for_text("connection-text", "connected with the default model", |t| {
        t.contains("auto")
    })
    .await?;
    app.screenshot("trust-prompt").await?;
    let model = send(
        &app,
        &fake,
        "Hello from restricted mode",
        "Restricted answer.",
    )
    .await?;
    ensure!(
        model == "gemini-3.8-flash",
        "restricted: the default model (auto, routed to Flash), not {model}"
    );

    // Trust it: the choice is saved and the session reloads with the workspace's settings.
    app.click("trust-folder").await?;
    app.wait_until_gone("trust-prompt", "after trusting")
        .await?;
    app.wait_for_text(
        "connection-text",
        "reloaded with the workspace's model",
        |t| t.contains("gemini-from-workspace"),
    )
    .await?;
    let trusted: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        app.home().join(".gemini/trustedFolders.json"),
    )?)?;
    ensure!(
        trusted[ws.to_str().context("UTF-8 path")?] == "TRUST_FOLDER",
        "trustedFolders.json: {trusted}"
    );
    // The conversation continues in the reloaded session.
    app.wait_for_text("message-user", "kept the conversation", |t| {
        t.contains("Hello from restricted mode")
    })
    .await?;
    let model = send(&app, &fake, "And now?", "Trusted answer.").await?;
    ensure!(
        model == "gemini-from-workspace",
        "trusted: the workspace's model, not {model}"
    );
    let last = fake
        .main_requests()
        .last()
        .context("a request")?
        .body
        .clone()
        .context("a body")?;
    ensure!(
        last.to_string().contains("Hello from restricted mode"),
        "the reloaded session sent the earlier conversation"
    );

    // The settings screen: the theme in the user's file.
    app.click("settings-open").await?;
    app.wait_for_text("setting-source", "showed where the values come from", |t| {
        t.contains("From Workspace settings")
    })
    .await?;
    // Nothing sets checkpoints: the screen shows the default in force (On), not "Off".
    let checkpoints = "setting[data-key=general.checkpointing.enabled]";
    ensure!(
        app.attrs(
            "setting[data-key=general.checkpointing.enabled]",
            "data-source"
        )
        .await?
            == [Some("default".to_owned())],
        "checkpoints come from the default"
    );
    for (id, expected) in [
        ("setting-effective", "On"),
        ("setting-source", "Default"),
        ("setting-user", "not set"),
        ("setting-workspace", "not set"),
    ] {
        let texts = app.texts(&format!("{checkpoints} {id}")).await?;
        ensure!(texts == [expected], "{id}: {texts:?}");
    }
    let theme = "setting[data-key=ui.theme]";
    app.select_option(&format!("{theme} setting-input"), "dark")
        .await?;
    app.select_option(&format!("{theme} setting-scope"), "user")
        .await?;
    app.click(&format!("{theme} setting-save")).await?;
    app.wait_for_text("settings-status", "confirmed the save", |t| {
        t.contains("Saved ui.theme")
    })
    .await?;
    let written = std::fs::read_to_string(&user_file)?;
    ensure!(
        written == USER_SETTINGS.replace("\"theme\": \"light\"", "\"theme\": \"dark\""),
        "only the theme changed:\n{written}"
    );
    app.screenshot("settings-dark").await?;

    // The model in the workspace's file: the running session picks it up.
    let model = "setting[data-key=model.name]";
    app.replace_text(&format!("{model} setting-input"), "gemini-2.5-flash")
        .await?;
    app.select_option(&format!("{model} setting-scope"), "workspace")
        .await?;
    app.click(&format!("{model} setting-save")).await?;
    app.wait_for_text("connection-text", "reloaded with the new model", |t| {
        t.contains("gemini-2.5-flash")
    })
    .await?;
    let workspace_file = std::fs::read_to_string(ws.join(".gemini/settings.json"))?;
    ensure!(
        workspace_file == WORKSPACE_SETTINGS.replace("gemini-from-workspace", "gemini-2.5-flash"),
        "the workspace file kept its comment:\n{workspace_file}"
    );
    app.click("settings-close").await?;
    let model = send(&app, &fake, "Which model?", "Flash answer.").await?;
    ensure!(model == "gemini-2.5-flash", "the new model, not {model}");
    app.close().await
}
