//! The start of nearly every end-to-end test: the app launched against the fake Gemini server,
//! signed in with a test key, waited for until its session is connected.

use std::ffi::OsStr;

use anyhow::Result;

use crate::App;

/// The model the end-to-end tests run with (the fake server answers for any model name).
pub const E2E_MODEL: &str = "gemini-2.5-flash";

impl App {
    /// Launches the app on `args` (the workspace folder) with a test API key, the fake Gemini
    /// server at `base_url` as its endpoint and [`E2E_MODEL`], then waits until the page is ready
    /// and the header names the model, i.e. the session is connected and takes prompts.
    pub async fn launch_connected<S: AsRef<OsStr>>(
        name: &str,
        args: &[S],
        base_url: &str,
    ) -> Result<Self> {
        Self::launch_connected_with_env(name, args, base_url, &[]).await
    }

    /// [`App::launch_connected`] with more environment variables for the app.
    pub async fn launch_connected_with_env<S: AsRef<OsStr>>(
        name: &str,
        args: &[S],
        base_url: &str,
        env: &[(&str, &str)],
    ) -> Result<Self> {
        let mut all = vec![
            ("GEMINI_API_KEY", "e2e-key"),
            ("GOOGLE_GEMINI_BASE_URL", base_url),
            ("GEMINI_MODEL", E2E_MODEL),
        ];
        all.extend_from_slice(env);
        let app = Self::launch_with_env(name, args, &all).await?;
        app.wait_ready().await?;
        app.wait_for_text("connection-text", "showed the model", |t| {
            t.contains(E2E_MODEL)
        })
        .await?;
        Ok(app)
    }
}
