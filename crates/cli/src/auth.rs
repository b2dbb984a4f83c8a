//! `gemini-desktop-cli auth status | set-api-key | login | logout`: the
//! same sign-in the desktop app offers, for terminals and scripts. Secrets
//! go where the app keeps them (keyring, else the 0600 file), so a run
//! without credentials in the environment uses them.

use std::io::{BufRead, IsTerminal, Read, Write};

use gd_auth::{AuthError, AuthManager, AuthMethod, AuthStatus, LoginOptions, MethodOrigin};
use gd_core::launch::{self, LaunchError};
use gd_gemini::SecretString;
use tokio::sync::mpsc;

use crate::args::AuthCommand;
use crate::exit;

/// Runs one `auth` subcommand; returns the exit code.
pub async fn run(command: &AuthCommand) -> i32 {
    let manager = match manager() {
        Ok(m) => m,
        Err((code, message)) => {
            eprintln!("Error: {message}");
            return code;
        }
    };
    let result = match command {
        AuthCommand::Status { json } => return status(&manager, *json).await,
        AuthCommand::SetApiKey => set_api_key(&manager).await,
        AuthCommand::Login { no_browser, port } => login(&manager, *no_browser, *port).await,
        AuthCommand::Logout => logout(&manager).await,
    };
    match result {
        Ok(()) => exit::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e}");
            exit_code(&e)
        }
    }
}

fn manager() -> Result<AuthManager, (i32, String)> {
    let workspace = std::env::current_dir().map_err(|e| {
        (
            exit::INPUT_ERROR,
            format!("Cannot use the current directory: {e}"),
        )
    })?;
    launch::auth_manager_for_workspace(&workspace).map_err(|e| match e {
        LaunchError::Config(m) => (exit::CONFIG_ERROR, m),
        LaunchError::Untrusted(m) => (exit::UNTRUSTED_WORKSPACE, m),
        LaunchError::Input(m) => (exit::INPUT_ERROR, m),
        LaunchError::Auth(m) => (exit::AUTH_ERROR, m),
    })
}

fn exit_code(error: &AuthError) -> i32 {
    match error {
        AuthError::Input(_) => exit::INPUT_ERROR,
        AuthError::Cancelled => exit::INTERRUPTED,
        _ => exit::AUTH_ERROR,
    }
}

async fn status(manager: &AuthManager, json: bool) -> i32 {
    let status = manager.status().await;
    let code = if status.ready {
        exit::SUCCESS
    } else {
        exit::AUTH_ERROR
    };
    if json {
        match serde_json::to_string_pretty(&status) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("Error: {e}");
                return exit::GENERAL_ERROR;
            }
        }
    } else {
        print!("{}", render_status(&status));
    }
    code
}

/// The status for people.
pub fn render_status(status: &AuthStatus) -> String {
    let mut out = String::new();
    let mut line = |label: &str, value: String| {
        out.push_str(&format!("{label:<16}{value}\n"));
    };
    let method = match (status.active, status.chosen_by) {
        (Some(m), Some(origin)) => format!(
            "{} ({})",
            m.label(),
            match origin {
                MethodOrigin::Settings => "security.auth.selectedType in settings",
                MethodOrigin::Environment => "from the environment",
                MethodOrigin::App => "chosen with Sign in / gemini-desktop-cli auth",
            }
        ),
        _ => "none".into(),
    };
    line("Method:", method);
    line(
        "Ready:",
        if status.ready {
            "yes".into()
        } else {
            "no".into()
        },
    );
    if let Some(problem) = &status.problem {
        line("Problem:", problem.message.clone());
        if let Some(url) = &problem.url {
            line("Open:", url.clone());
        }
    }
    if let Some(location) = &status.secret_location {
        line("Secret:", location.clone());
    }
    match (&status.store, &status.store_error) {
        (Some(store), _) => line("Secret store:", store.kind.describe()),
        (None, Some(e)) => line("Secret store:", format!("unavailable: {e}")),
        _ => {}
    }
    let g = &status.google;
    if g.signed_in || g.email.is_some() || status.active == Some(AuthMethod::GoogleLogin) {
        line(
            "Google account:",
            match (&g.email, g.signed_in) {
                (Some(email), true) => email.clone(),
                (Some(email), false) => format!("{email} (signed out)"),
                (None, true) => "signed in".into(),
                (None, false) => "not signed in".into(),
            },
        );
        if let Some(tier) = g.tier_name.clone().or_else(|| g.tier_id.clone()) {
            line("Code Assist:", tier);
        }
        if let Some(project) = &g.project {
            line(
                "Project:",
                match g.project_source {
                    Some(source) => format!("{project} ({})", source.describe()),
                    None => project.clone(),
                },
            );
        }
        if let (Some(at), Some(secs)) = (&g.token_expires_at, g.token_expires_in_secs) {
            let when = if secs > 0 {
                format!("in {} min", secs / 60)
            } else {
                "expired".into()
            };
            line(
                "Token expires:",
                format!("{at} ({when}; refreshed automatically)"),
            );
        }
        if !g.client_configured {
            line(
                "OAuth client:",
                "not configured (see GEMINI_DESKTOP_OAUTH_CLIENT_ID in the README)".into(),
            );
        }
    }
    if status.api_key.in_environment || status.api_key.stored {
        let mut where_ = Vec::new();
        if status.api_key.in_environment {
            where_.push("GEMINI_API_KEY in the environment");
        }
        if status.api_key.stored {
            where_.push("stored");
        }
        line("API key:", where_.join(", "));
    }
    let v = &status.vertex;
    if status.active == Some(AuthMethod::VertexAi) || v.auth.is_some() {
        line(
            "Vertex AI:",
            format!(
                "project {}, location {}, {}",
                v.project.as_deref().unwrap_or("-"),
                v.location.as_deref().unwrap_or("-"),
                match v.auth {
                    Some(gd_auth::VertexAuth::Adc) => "Application Default Credentials",
                    Some(gd_auth::VertexAuth::ApiKey) => "API key",
                    None => "from the environment",
                }
            ),
        );
    }
    if let Some(error) = &status.last_error {
        line("Last error:", format!("{} ({})", error.message, error.at));
    }
    for note in &status.notes {
        line("Note:", note.clone());
    }
    out
}

async fn set_api_key(manager: &AuthManager) -> Result<(), AuthError> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        eprint!("Paste your Gemini API key and press Enter: ");
        let _ = std::io::stderr().flush();
    }
    let mut key = String::new();
    if stdin.is_terminal() {
        stdin
            .lock()
            .read_line(&mut key)
            .map_err(|e| AuthError::Input(format!("Cannot read standard input: {e}")))?;
    } else {
        stdin
            .lock()
            .read_to_string(&mut key)
            .map_err(|e| AuthError::Input(format!("Cannot read standard input: {e}")))?;
    }
    let key = key.trim();
    if key.is_empty() {
        return Err(AuthError::Input(
            "No key on standard input. Example: gemini-desktop-cli auth set-api-key < key.txt"
                .into(),
        ));
    }
    warn_about_fallback(manager);
    let check = manager.set_api_key(SecretString::new(key)).await?;
    let store = manager
        .store()
        .map(|s| s.info.kind.describe())
        .unwrap_or_default();
    println!(
        "API key checked ({} models at {}) and stored in {store}.",
        check.models, check.base_url
    );
    if std::env::var_os("GEMINI_API_KEY").is_some() {
        println!("Note: GEMINI_API_KEY in the environment still takes precedence.");
    }
    Ok(())
}

async fn login(
    manager: &AuthManager,
    no_browser: bool,
    port: Option<u16>,
) -> Result<(), AuthError> {
    warn_about_fallback(manager);
    let login = manager
        .start_google_login(LoginOptions {
            port,
            ..LoginOptions::default()
        })
        .await?;
    let url = login.url().to_owned();
    let control = login.control();
    // The address first, so it is there even if no browser opens.
    eprintln!("Sign in with Google: open this address in a browser:\n\n  {url}\n");
    eprintln!(
        "If the browser runs on another machine, sign in there, then paste the address it ends on \
         (it starts with {}) here and press Enter.",
        login.redirect_uri()
    );
    if !no_browser {
        match gd_auth::browser::open(&url) {
            Ok(()) => eprintln!("Opening the browser…"),
            Err(e) => eprintln!("Could not open a browser ({e}); open the address yourself."),
        }
    }
    eprintln!("Waiting for the sign-in (5 minutes; Ctrl-C cancels)…");

    // Pasted input, read on a thread (stdin blocks).
    let (tx, mut pasted) = mpsc::channel::<String>(4);
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            if tx.blocking_send(line).is_err() {
                break;
            }
        }
    });
    let paste_control = control.clone();
    let paste_task = tokio::spawn(async move {
        while let Some(line) = pasted.recv().await {
            match paste_control.submit_code(&line).await {
                Ok(()) => break,
                Err(AuthError::Input(message)) => eprintln!("{message}"),
                // The flow reports the error itself.
                Err(_) => break,
            }
        }
    });
    let cancel_control = control.clone();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            cancel_control.cancel();
        }
    });
    let result = login.finish().await;
    paste_task.abort();
    ctrl_c.abort();
    let outcome = result?;
    let setup = &outcome.code_assist;
    println!(
        "Signed in as {}.",
        outcome.email.as_deref().unwrap_or("(unknown account)")
    );
    println!(
        "Gemini Code Assist: {} in project {} ({}).",
        setup
            .tier_name
            .as_deref()
            .filter(|n| !n.is_empty())
            .unwrap_or(&setup.tier_id),
        setup.project,
        setup.project_source.describe()
    );
    if let Ok(store) = manager.store() {
        println!("The sign-in is kept in {}.", store.info.kind.describe());
    }
    Ok(())
}

/// Says so when secrets will go to the fallback file.
fn warn_about_fallback(manager: &AuthManager) {
    if let Ok(store) = manager.store()
        && let Some(reason) = &store.info.fallback_reason
    {
        eprintln!(
            "Warning: no keyring service is reachable ({reason}); secrets are kept in {}.",
            store.info.kind.describe()
        );
    }
}

async fn logout(manager: &AuthManager) -> Result<(), AuthError> {
    let report = manager.sign_out(None).await?;
    if report.revoked {
        println!("Revoked the Google sign-in at Google.");
    }
    if let Some(e) = &report.revoke_error {
        eprintln!("Warning: {e} (the local copy is deleted anyway).");
    }
    if report.removed.is_empty() {
        println!("Nothing was stored; you are signed out.");
    } else {
        let names: Vec<&str> = report.removed.iter().map(|k| k.account()).collect();
        println!("Signed out. Deleted: {}.", names.join(", "));
    }
    Ok(())
}
