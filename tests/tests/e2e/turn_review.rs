//! Whole-turn review through the real app: with "Review at end of turn" on, a turn edits two
//! files without asking, nothing reaches the disk until the end-of-turn review is applied; the
//! user rejects one change of one file and accepts the rest; the files on disk and the next
//! request's note to the model are checked.
//!
//! Test ids: `review-mode`, `turn-review`, `review-file`, `review-file-block` (`data-path`),
//! `hunk` (`data-hunk`), `hunk-reject`, `review-apply`, `confirmation`,
//! `prompt-input`, `cancel`, `send`.
//!
//! Build first: `npm --prefix ui ci && npm --prefix ui run build && cargo build -p gemini-desktop`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, ensure};
use gd_e2e::App;
use serde_json::{Value, json};

/// 25 numbered lines; `changed` changes lines 2 and 22 (two changes, far apart).
fn numbered(changed: bool) -> String {
    (1..=25)
        .map(|i| match i {
            2 | 22 if changed => format!("line {i} changed\n"),
            _ => format!("line {i}\n"),
        })
        .collect()
}

fn workspace(temp: &tempfile::TempDir) -> Result<PathBuf> {
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    std::fs::write(ws.join("two.txt"), numbered(false))?;
    std::fs::write(ws.join("one.txt"), "alpha\n")?;
    Ok(ws.canonicalize()?)
}

fn replace(file: &str, old: &str, new: &str) -> Value {
    json!({"name": "replace", "args": {
        "file_path": format!("{{{{WORKSPACE}}}}/{file}"),
        "instruction": "edit", "old_string": old, "new_string": new,
    }})
}

async fn wait_turn_over(app: &App) -> Result<()> {
    app.wait_until_gone("cancel", "is hidden once the turn ended")
        .await?;
    app.interactable("send").await?;
    Ok(())
}

fn utf8(path: &Path) -> Result<&str> {
    path.to_str().context("UTF-8 path")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_is_reviewed_at_its_end_and_only_the_accepted_changes_are_written() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = workspace(&temp)?;
    let vars = [("WORKSPACE", utf8(&ws)?)];
    let fake = gd_fake_gemini::FakeGemini::start_with_vars(
        json!({"steps": [
            {"text": "Editing both files.", "functionCalls": [
                replace("two.txt", &numbered(false), &numbered(true)),
                replace("one.txt", "alpha\n", "alpha beta\n"),
            ]},
            {"text": "Both files are edited."},
            {"text": "Understood."}
        ]}),
        &vars,
    );
    let app = App::launch_connected("turn_review", &[&ws], &fake.base_url()).await?;

    app.click("review-mode").await?;
    app.wait_for_script(
        "return document.querySelector('[data-testid=\"review-mode\"]').checked === true;",
        "the review switch is on",
    )
    .await?;
    app.type_and_enter("prompt-input", "Edit both files")
        .await?;
    app.wait_for_count("review-file", "lists both files", |n| n == 2)
        .await?;
    wait_turn_over(&app).await?;
    // Staged, not asked, not written.
    ensure!(
        app.count("confirmation").await? == 0,
        "no confirmation was asked"
    );
    ensure!(std::fs::read_to_string(ws.join("two.txt"))? == numbered(false));
    ensure!(std::fs::read_to_string(ws.join("one.txt"))? == "alpha\n");
    app.screenshot("turn-review").await?;

    let two = ws.join("two.txt");
    let reject = format!(
        "review-file-block[data-path={}] hunk[data-hunk=1] hunk-reject",
        utf8(&two)?
    );
    // The review scrolls inside its own box: bring the hunk's head out from under the diff's
    // sticky column heads first, as a user scrolling to it would.
    app.client()
        .execute(
            "document.querySelector(arguments[0]).scrollIntoView({ block: 'center' });",
            vec![json!(gd_e2e::testid(&reject))],
        )
        .await
        .context("scroll to the hunk")?;
    app.click(&reject).await?;
    app.click("review-apply").await?;
    app.wait_until_gone("turn-review", "closes once applied")
        .await?;

    let mut expected: Vec<String> = numbered(false).lines().map(str::to_owned).collect();
    expected[1] = "line 2 changed".into();
    let expected = expected.join("\n") + "\n";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::fs::read_to_string(&two)? != expected && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    ensure!(
        std::fs::read_to_string(&two)? == expected,
        "two.txt has change 1 only"
    );
    ensure!(std::fs::read_to_string(ws.join("one.txt"))? == "alpha beta\n");

    // The next message tells the model what was not applied.
    app.type_and_enter("prompt-input", "Go on").await?;
    wait_turn_over(&app).await?;
    let requests = fake.main_requests();
    let body = requests
        .get(2)
        .and_then(|r| r.body.clone())
        .context("the third request")?;
    let last = body["contents"]
        .as_array()
        .and_then(|c| c.last())
        .context("a last message")?;
    let text: String = last["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["text"].as_str())
        .collect();
    ensure!(
        text.contains("The user applied 1 of 2 proposed changes to two.txt")
            && text.contains("- line 22\n+ line 22 changed"),
        "the note names the rejected change: {text}"
    );
    app.close().await
}
