//! The usage meter and panel through the real app: after a turn against the fake Gemini server,
//! the header's meter and the usage panel show exactly the `usageMetadata` the server sent
//! (summed by the core over the turn's two requests), the turn's row and footer too, and on an
//! API key the quota is reported as unknown.
//!
//! Test ids (see `README.md` of this crate): `usage-meter`, `usage-meter-tokens`, `usage-panel`,
//! `usage-total-prompt`, `usage-total-cached`, `usage-total-output`, `usage-total-thoughts`,
//! `usage-total-tool`, `usage-total-total`, `usage-total-requests`, `usage-turn-row`,
//! `usage-turn-prompt`, `usage-lines-added`, `usage-quota`, `usage-quota-unknown`,
//! `turn-usage-prompt`.
//!
//! Build first: `npm --prefix ui run build && cargo build -p gemini-desktop`.

use anyhow::{Result, ensure};
use gd_e2e::App;
use gd_fake_gemini::FakeGemini;
use gd_fake_gemini::fixtures::copy_peer_workspace;
use serde_json::{Value, json};

fn usage(prompt: u64, cached: u64, output: u64, thoughts: u64, tool: u64) -> Value {
    json!({"promptTokenCount": prompt, "cachedContentTokenCount": cached,
           "candidatesTokenCount": output, "thoughtsTokenCount": thoughts,
           "toolUsePromptTokenCount": tool,
           "totalTokenCount": prompt + output + thoughts + tool})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn meter_and_panel_show_the_servers_usage_metadata() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = copy_peer_workspace(temp.path());
    // Two requests in one turn: a file written (3 lines), then the answer.
    let fake = FakeGemini::start_with_vars(
        json!({"steps": [
            {"functionCalls": [{"name": "write_file", "args": {
                "file_path": "{{WORKSPACE}}/notes.md", "content": "a\nb\nc\n"}}],
             "usage": usage(12_345, 2_000, 67, 89, 11)},
            {"text": "Wrote the notes.", "usage": usage(13_000, 5_000, 33, 11, 0)}
        ]}),
        &[("WORKSPACE", ws.to_str().unwrap_or_default())],
    );
    let app = App::launch_connected("usage_meter", &[&ws], &fake.base_url()).await?;
    // Before any turn: nothing used.
    app.wait_for_attr("usage-meter-tokens", "data-value", "starts at zero", |v| {
        v == "0"
    })
    .await?;

    app.type_and_enter("prompt-input", "Write the notes")
        .await?;
    // The write asks first (the default mode).
    app.click("approve").await?;
    app.wait_for_last_text("message-model", "answered", |t| {
        t.contains("Wrote the notes.")
    })
    .await?;
    let prompt = 12_345 + 13_000;
    let cached = 2_000 + 5_000;
    let output = 67 + 33;
    let thoughts = 89 + 11;
    let tool = 11;
    let total = prompt + output + thoughts + tool;
    app.wait_for_attr(
        "usage-meter-tokens",
        "data-value",
        "the turn's tokens",
        |v| v == total.to_string(),
    )
    .await?;
    let footer = app.texts("turn-usage-prompt").await?;
    ensure!(
        footer.last().map(String::as_str) == Some("↑25,345"),
        "the turn's footer: {footer:?}"
    );

    app.click("usage-meter").await?;
    app.wait_for_count("usage-panel", "opens", |n| n == 1)
        .await?;
    let n = |v: u64| {
        let s = v.to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    for (id, value) in [
        ("usage-total-prompt", prompt),
        ("usage-total-output", output),
        ("usage-total-thoughts", thoughts),
        ("usage-total-tool", tool),
        ("usage-total-total", total),
        ("usage-total-requests", 2),
    ] {
        app.wait_for_text(id, "shows the server's figure", |t| t.trim() == n(value))
            .await?;
    }
    app.wait_for_text("usage-total-cached", "cached", |t| {
        t.starts_with(&n(cached))
    })
    .await?;
    app.wait_for_text("usage-lines-added", "the written lines", |t| t == "+3")
        .await?;
    let rows = app.texts("usage-turn-prompt").await?;
    ensure!(rows == [n(prompt)], "one turn row: {rows:?}");
    app.wait_for_attr("usage-quota", "data-source", "an API key", |s| {
        s == "gemini_api"
    })
    .await?;
    app.wait_for_text("usage-quota-unknown", "says unknown", |t| {
        t.contains("does not report")
    })
    .await?;
    app.screenshot("usage-panel").await?;
    app.close().await
}
