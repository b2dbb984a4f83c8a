//! The installed app (scripts/test-package.sh): whatever binary `GD_E2E_APP` names, typically
//! `/usr/bin/gemini-desktop` from the .deb, starts, shows the prompt box and answers a prompt
//! through the fake Gemini server. Ignored in the normal run (chat.rs covers the build tree's
//! app); test-package.sh runs it with
//! `GD_E2E_APP=/usr/bin/gemini-desktop cargo test --release -p gd-e2e --test e2e -- --ignored installed::`.

use anyhow::Result;
use gd_e2e::{App, app_binary};
use gd_fake_gemini::FakeGemini;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by scripts/test-package.sh against the installed package (GD_E2E_APP)"]
async fn the_installed_app_shows_the_prompt_box_and_answers() -> Result<()> {
    eprintln!("installed: testing {}", app_binary()?.display());
    let temp = tempfile::tempdir()?;
    let fake = FakeGemini::start(json!({
        "steps": [{"text": "Hello from the installed package."}]
    }));
    let app = App::launch_connected("installed", &[temp.path()], &fake.base_url()).await?;
    // The prompt box is there and takes input: the UI was embedded and the webview runs it.
    app.interactable("prompt-input").await?;
    app.type_and_enter("prompt-input", "Are you installed?")
        .await?;
    app.wait_for_last_text("message-model", "showed the fake server's answer", |t| {
        t.contains("Hello from the installed package.")
    })
    .await?;
    app.close().await
}
