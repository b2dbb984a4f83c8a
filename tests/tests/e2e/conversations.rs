//! Several conversations in the real app (issue 16), against the fake Gemini server: two
//! conversations on two folders run turns at once; an edit waiting in the hidden one shows in its
//! sidebar entry and in the approval inbox, and approving it from the inbox writes the file; a
//! second launch naming a folder adds a conversation (the running one goes on); closing a
//! conversation stops its session.
//!
//! Test ids (the UI's contract): `conversation-item` (`data-status`, `data-folder`),
//! `approval-inbox` (text: the pending count), `inbox-item`, `approve`, `close-conversation`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use gd_e2e::{App, Notifications, Shown, function_responses};
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

const FILE: &str = "greeting.txt";
const ORIGINAL: &str = "Hello there\n";

fn folder(temp: &tempfile::TempDir, name: &str) -> Result<PathBuf> {
    let path = temp.path().join(name);
    std::fs::create_dir(&path)?;
    std::fs::write(path.join(FILE), ORIGINAL)?;
    Ok(path.canonicalize()?)
}

fn utf8(path: &Path) -> Result<&str> {
    path.to_str().context("UTF-8 path")
}

/// Each sidebar entry's `attribute`, in order.
async fn entries(app: &App, attribute: &str) -> Result<Vec<String>> {
    Ok(app
        .attrs("conversation-item", attribute)
        .await?
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect())
}

async fn wait_statuses(app: &App, expected: &[&str]) -> Result<()> {
    app.wait_for_script(
        &format!(
            "return JSON.stringify([...document.querySelectorAll('[data-testid=\"conversation-item\"]')]\
               .map((e) => e.dataset.status)) === {};",
            json!(json!(expected).to_string())
        ),
        &format!("the conversations' statuses are {expected:?}"),
    )
    .await
}

/// The notifications the app asked for (its `GEMINI_DESKTOP_NOTIFY_LOG`), once `done` holds.
async fn poll_notifications(path: &Path, done: impl Fn(&[Value]) -> bool) -> Result<Vec<Value>> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let all: Vec<Value> = match std::fs::read_to_string(path) {
            Ok(text) => text
                .lines()
                .map(serde_json::from_str)
                .collect::<Result<_, _>>()?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        if done(&all) {
            return Ok(all);
        }
        if Instant::now() >= deadline {
            bail!("the expected notification was not asked for within 20 s; got {all:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the notification service was asked to show a notification matching `wanted`.
async fn shown_notification(
    daemon: &Notifications,
    wanted: impl Fn(&Shown) -> bool,
) -> Result<Shown> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let all = daemon.shown();
        if let Some(found) = all.iter().find(|n| wanted(n)) {
            return Ok(found.clone());
        }
        if Instant::now() >= deadline {
            bail!("no such notification within 20 s; shown: {all:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the main window's WM_HINTS carry the urgency flag.
async fn urgent_window(app: &App) -> Result<()> {
    let ids = app
        .x11(
            "xdotool",
            &["search", "--onlyvisible", "--name", "^Gemini Desktop$"],
        )
        .await?;
    let id = ids.lines().next().context("the main window")?.to_owned();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let hints = app.x11("xprop", &["-id", &id, "WM_HINTS"]).await?;
        if hints.contains("urgency") {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!("no urgency hint on the window: {hints}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Clicks `button` (a test id) inside the inbox entry of the conversation on `folder`.
async fn click_in_inbox(app: &App, folder: &Path, button: &str) -> Result<()> {
    let clicked = app
        .client()
        .execute(
            "const [folder, button] = arguments;\
             const entry = [...document.querySelectorAll('[data-testid=\"inbox-item\"]')]\
               .find((e) => e.dataset.folder === folder);\
             const target = entry && entry.querySelector(`[data-testid=\"${button}\"]`);\
             if (!target || target.disabled) return false;\
             target.click();\
             return true;",
            vec![json!(utf8(folder)?), json!(button)],
        )
        .await?;
    ensure!(
        clicked == json!(true),
        "no enabled {button} in the inbox entry of {}",
        folder.display()
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_folders_run_at_once_and_the_inbox_approves_the_hidden_ones_edit() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let alpha = folder(&temp, "alpha project")?;
    let beta = folder(&temp, "beta project")?;
    // The fake answers each conversation by its own progress: a first prompt gets an edit of
    // `greeting.txt` (relative: the conversation's own folder), the tool result a closing answer.
    let fake = FakeGemini::start(json!({
        "chunk_chars": 8,
        "steps": [
            {"text": "I will greet the world.", "functionCalls": [{
                "name": "replace",
                "args": {
                    "file_path": FILE,
                    "instruction": "Greet the world",
                    "old_string": "Hello there",
                    "new_string": "Hello, world",
                }
            }]},
            {"text": "The greeting is updated."}
        ]
    }));
    // What the app asks the desktop to notify is also written here (the app's test hook).
    let notify_log = temp.path().join("notifications.jsonl");
    let app = App::launch_connected_with_env(
        "conversations",
        &[&alpha],
        &fake.base_url(),
        &[("GEMINI_DESKTOP_NOTIFY_LOG", utf8(&notify_log)?)],
    )
    .await?;
    ensure!(
        app.has_session_bus(),
        "this test needs dbus-daemon for the app's single-instance hand-over"
    );
    // The desktop's notification service, on the app's bus.
    let daemon = Notifications::serve(app.session_bus_address().context("the app's bus")?).await?;

    // Alpha: the edit waits for approval.
    app.type_and_enter("prompt-input", "Greet the world in alpha")
        .await?;
    app.wait_for_attr("confirmation", "data-kind", "is an edit", |k| k == "edit")
        .await?;

    // A second launch naming beta: a new conversation there, shown; alpha goes on waiting.
    let output = app.run_second_launch(&[&beta]).await?;
    ensure!(output.status.success(), "second launch: {output:?}");
    app.wait_for_count("conversation-item", "are two", |n| n == 2)
        .await?;
    app.wait_for_text("workspace-path", "shows beta", |t| {
        t == utf8(&beta).unwrap_or_default()
    })
    .await?;
    ensure!(entries(&app, "data-folder").await? == [utf8(&alpha)?, utf8(&beta)?]);
    wait_statuses(&app, &["approval", "idle"]).await?;
    app.wait_for_text("approval-inbox", "counts alpha's call", |t| t.trim() == "1")
        .await?;
    ensure!(
        app.count("confirmation-dock").await? == 0,
        "beta shows no confirmation of alpha's"
    );

    // Beta's turn runs while alpha's waits: both wait for approval now.
    app.wait_for_text("connection-text", "beta is connected", |t| {
        t.contains(gd_e2e::E2E_MODEL)
    })
    .await?;
    app.type_and_enter("prompt-input", "Greet the world in beta")
        .await?;
    app.wait_for_attr("confirmation", "data-kind", "beta's edit", |k| k == "edit")
        .await?;
    wait_statuses(&app, &["approval", "approval"]).await?;
    app.wait_for_text("approval-inbox", "counts both", |t| t.trim() == "2")
        .await?;

    // Approve alpha's edit from the inbox (beta is still shown): alpha's file only.
    app.click("approval-inbox").await?;
    app.wait_for_count("inbox-item", "lists both calls", |n| n == 2)
        .await?;
    click_in_inbox(&app, &alpha, "approve").await?;
    wait_statuses(&app, &["idle", "approval"]).await?;
    ensure!(std::fs::read_to_string(alpha.join(FILE))? == "Hello, world\n");
    ensure!(std::fs::read_to_string(beta.join(FILE))? == ORIGINAL);
    // Alpha's tool result went to the model in alpha's conversation.
    let results: Vec<Value> = fake
        .main_requests()
        .iter()
        .filter_map(|r| r.body.as_ref())
        .filter(|b| b.to_string().contains("Greet the world in alpha"))
        .flat_map(function_responses)
        .collect();
    ensure!(
        results.len() == 1
            && results[0]["name"] == "replace"
            && results[0]["response"].get("error").is_none(),
        "alpha's tool results: {results:?}"
    );
    // Alpha's turn finished while beta was shown: the user was called back about alpha (the
    // backend writes the log when the UI's call arrives: poll the file until it says so).
    let alpha_finished = |n: &Value| {
        n["reason"] == "finished"
            && n["body"]
                .as_str()
                .is_some_and(|b| b.contains("(alpha project)"))
    };
    let notified = poll_notifications(&notify_log, |all| all.iter().any(alpha_finished)).await?;
    // And the window asks for attention (X11's urgency hint, which taskbars flash).
    urgent_window(&app).await?;
    // The desktop showed the notification; clicking it shows alpha's conversation.
    let shown = shown_notification(&daemon, |n| {
        n.summary == "Gemini finished" && n.body.contains("(alpha project)")
    })
    .await?;
    ensure!(
        shown.app_name == "Gemini Desktop"
            && shown.actions.first().map(String::as_str) == Some("default"),
        "{shown:?}"
    );
    daemon.click(shown.id).await?;
    app.wait_for_text(
        "workspace-path",
        "a click on the notification shows alpha",
        |t| t == utf8(&alpha).unwrap_or_default(),
    )
    .await?;
    ensure!(
        !notified.iter().any(|n| n["reason"] == "finished"
            && n["body"]
                .as_str()
                .is_some_and(|b| b.contains("(beta project)"))),
        "beta, shown, finished nothing: {notified:?}"
    );
    // Reject beta's from the inbox: nothing is written there.
    click_in_inbox(&app, &beta, "reject").await?;
    wait_statuses(&app, &["idle", "idle"]).await?;
    app.wait_for_text("approval-inbox", "counts none", |t| t.trim() == "0")
        .await?;
    ensure!(std::fs::read_to_string(beta.join(FILE))? == ORIGINAL);

    // Closing alpha stops its session (beta's goes on).
    let alpha_sessions = app
        .invoke("history_list", json!({ "workspace": utf8(&alpha)? }))
        .await?
        .map_err(|e| anyhow::anyhow!("history_list: {e}"))?;
    let alpha_id = alpha_sessions[0]["id"]
        .as_str()
        .context("alpha's session id")?
        .to_owned();
    let list_models = |id: &str| json!({ "sessionId": id, "op": { "type": "list_models" } });
    let alive = app.invoke("submit", list_models(&alpha_id)).await?;
    ensure!(
        alive.is_ok(),
        "alpha's session runs before closing: {alive:?}"
    );
    app.client()
        .execute(
            "document.querySelectorAll('[data-testid=\"close-conversation\"]')[0].click();",
            vec![],
        )
        .await?;
    app.wait_for_count("conversation-item", "is beta alone", |n| n == 1)
        .await?;
    ensure!(entries(&app, "data-folder").await? == [utf8(&beta)?]);
    let closed = app.invoke("submit", list_models(&alpha_id)).await?;
    ensure!(
        closed
            .as_ref()
            .is_err_and(|e| e["kind"] == "unknown_session"),
        "alpha's session is stopped: {closed:?}"
    );
    app.close().await
}

/// Processes whose environment holds `marker` (the MCP servers a test configured with it).
fn processes_marked(marker: &str) -> Vec<u32> {
    let needle = format!("GD_E2E_MCP_MARK={marker}");
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == needle.as_bytes()))
        })
        .collect()
}

/// Waits until `count` marked processes run (they start and stop with sessions).
async fn wait_marked(marker: &str, count: usize, what: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = processes_marked(marker);
        if found.len() == count {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "{what}: {} MCP server processes, expected {count}",
                found.len()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_conversation_stops_its_mcp_servers() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = folder(&temp, "with a server")?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = std::env::var_os("GD_TEST_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/test-deps/venv-mcp/bin/python"));
    ensure!(
        python.exists(),
        "{} not found: run scripts/install-mcp-test-deps.sh or set GD_TEST_MCP_PYTHON",
        python.display()
    );
    let marker = format!("{}", std::process::id());
    let settings = json!({"mcpServers": {"fixture": {
        "command": python,
        "args": [root.join("tests/fixtures/mcp/fixture_server.py"), "stdio"],
        "env": {"GD_E2E_MCP_MARK": marker},
        "trust": true
    }}});
    std::fs::create_dir_all(ws.join(".gemini"))?;
    std::fs::write(ws.join(".gemini/settings.json"), settings.to_string())?;
    let fake = FakeGemini::start(json!({"steps": [{"text": "OK"}]}));
    let app = App::launch_connected("conversations_mcp", &[&ws], &fake.base_url()).await?;
    wait_marked(&marker, 1, "the first conversation's server").await?;

    app.click("new-conversation").await?;
    app.wait_for_count("conversation-item", "are two", |n| n == 2)
        .await?;
    wait_marked(&marker, 2, "each conversation runs its own server").await?;

    // Close the second: its session stops, and its server with it; the first's keeps running.
    app.client()
        .execute(
            "document.querySelectorAll('[data-testid=\"close-conversation\"]')[1].click();",
            vec![],
        )
        .await?;
    app.wait_for_count("conversation-item", "is one", |n| n == 1)
        .await?;
    wait_marked(&marker, 1, "the closed conversation's server is gone").await?;
    app.close().await?;
    wait_marked(&marker, 0, "no server outlives the app").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_moves_to_its_own_window_and_back_with_its_session() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = folder(&temp, "windows")?;
    let fake = FakeGemini::start(json!({"steps": [{"text": "An answer."}]}));
    let app = App::launch_connected("conversations_windows", &[&ws], &fake.base_url()).await?;
    app.type_and_enter("prompt-input", "Before the move")
        .await?;
    app.wait_for_last_text("message-model", "answered", |t| t.contains("An answer."))
        .await?;
    app.wait_until_gone("cancel", "the turn ended").await?;
    let main = app.client().window().await?;

    // Move it: a second window shows it; the main window keeps a fresh conversation.
    app.click("conversation-window").await?;
    let deadline = Instant::now() + Duration::from_secs(20);
    let other = loop {
        let windows = app.client().windows().await?;
        if let Some(other) = windows.into_iter().find(|w| *w != main) {
            break other;
        }
        if Instant::now() >= deadline {
            bail!("no second window opened");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    app.wait_for_count("conversation-item", "keeps one fresh conversation", |n| {
        n == 1
    })
    .await?;
    app.client().switch_to_window(other).await?;
    app.wait_ready().await?;
    app.wait_for_any_text("message-user", "shows the moved transcript", |t| {
        t.contains("Before the move")
    })
    .await?;
    ensure!(
        app.count("conversation-item").await? == 0,
        "a conversation window has no sidebar"
    );
    let shot = app.screenshot("conversation-window").await?;
    eprintln!("the conversation window: {}", shot.display());
    // Its session runs on here: the next prompt continues the same conversation.
    app.wait_for_text("connection-text", "is connected", |t| {
        t.contains(gd_e2e::E2E_MODEL)
    })
    .await?;
    app.type_and_enter("prompt-input", "After the move").await?;
    app.wait_for_count("message-model", "answered again", |n| n == 2)
        .await?;
    app.wait_until_gone("cancel", "the turn ended").await?;
    let last = fake
        .main_requests()
        .pop()
        .context("the request after the move")?;
    let body = last.body.context("its body")?.to_string();
    ensure!(
        body.contains("Before the move") && body.contains("After the move"),
        "the moved session kept its history: {body}"
    );

    // Move back: the window closes, the conversation returns to the main window, shown. (A
    // WebDriver command whose window closes under it may fail to read its own result, so the
    // click is deferred and that answer ignored: what follows checks that it happened.)
    app.interactable("conversation-return").await?;
    let _ = app
        .client()
        .execute(
            "setTimeout(() => document.querySelector('[data-testid=\"conversation-return\"]').click(), 0); return true;",
            vec![],
        )
        .await;
    app.client().switch_to_window(main).await?;
    app.wait_for_count("conversation-item", "has the conversation back", |n| n == 2)
        .await?;
    app.wait_for_any_text("message-user", "shows it", |t| t.contains("After the move"))
        .await?;
    let windows = app.client().windows().await?;
    ensure!(windows.len() == 1, "{} windows", windows.len());
    app.close().await
}
