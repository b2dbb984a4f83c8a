//! The sign-in screen's and the auth status ("auth doctor") view's commands.
//!
//! Everything is delegated to one [`gd_auth::AuthManager`] per workspace folder (its `.env`
//! and settings can name an OAuth client, a project or `selectedType`), kept in [`SignIn`].
//! The manager stores what the user chose (keyring or 0600 file, plus `auth.json`); a session
//! started afterwards (`start_session` → `gd_core::launch::prepare`) builds its own manager
//! from the same files, so it picks up the new credentials without any hand-over.
//!
//! Errors are [`AuthErrorReport`]s (`{kind, message, url}`), which the UI shows as they are.
//! The webview never receives a secret: keys only travel from the UI to the store, and the
//! status says where a secret lives, not what it is.
//!
//! Google sign-in runs in the background once started: `auth_start_google_login` opens the
//! browser and returns the authorization URL (shown as a fallback link), its stages stream on
//! the given channel, and `auth_wait_google_login` resolves with the outcome (email, tier,
//! project) or rejects with an actionable error. Cancel and paste-code act on the running one.

use std::path::PathBuf;
use std::sync::Mutex;

use gd_auth::api_key::ApiKeyCheck;
use gd_auth::code_assist::CodeAssistSetup;
use gd_auth::{
    AuthErrorKind, AuthErrorReport, AuthManager, AuthMethod, AuthStatus, CloudProject,
    LoginControl, LoginOptions, LoginOutcome, LoginStage, SignOutReport, VertexInput,
};
use gd_gemini::SecretString;
use tauri::ipc::Channel;
use tauri::{AppHandle, Runtime, State};
use tokio::sync::watch;

use crate::state::AppState;

/// A program that receives the authorization URL instead of the system browser (tests act as
/// the browser this way; the CLI honours the same variable).
pub const BROWSER_ENV: &str = "GEMINI_DESKTOP_BROWSER";

type LoginResult = Option<Result<LoginOutcome, AuthErrorReport>>;

/// The sign-in part of the app state.
#[derive(Default)]
pub struct SignIn {
    /// The manager of the folder it was built for.
    manager: Mutex<Option<(PathBuf, AuthManager)>>,
    /// The Google sign-in in progress (or the last one, until the next starts).
    login: Mutex<Option<ActiveLogin>>,
}

impl std::fmt::Debug for SignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignIn").finish_non_exhaustive()
    }
}

struct ActiveLogin {
    control: LoginControl,
    /// `None` while it runs, then the outcome.
    result: watch::Receiver<LoginResult>,
}

impl SignIn {
    /// The manager for `workspace` (the home folder without one), built on first use and
    /// rebuilt when the folder changes.
    fn manager(&self, workspace: Option<PathBuf>) -> Result<AuthManager, AuthErrorReport> {
        let folder = workspace
            .or_else(gd_core::launch::home_dir)
            .unwrap_or_else(|| PathBuf::from("/"));
        let mut slot = self.manager.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((built_for, manager)) = slot.as_ref()
            && *built_for == folder
        {
            return Ok(manager.clone());
        }
        let manager = gd_core::launch::auth_manager_for_workspace(&folder)
            .map_err(|e| report(AuthErrorKind::Config, e.to_string()))?;
        *slot = Some((folder, manager.clone()));
        Ok(manager)
    }

    fn control(&self) -> Result<LoginControl, AuthErrorReport> {
        self.login
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|l| l.control.clone())
            .ok_or_else(no_login)
    }
}

fn report(kind: AuthErrorKind, message: impl Into<String>) -> AuthErrorReport {
    AuthErrorReport {
        kind,
        message: message.into(),
        url: None,
        cause: None,
        detail: None,
    }
}

fn no_login() -> AuthErrorReport {
    report(
        AuthErrorKind::Input,
        "No Google sign-in is in progress. Start one with “Sign in with Google”.",
    )
}

fn manager(state: &AppState) -> Result<AuthManager, AuthErrorReport> {
    state.signin.manager(state.workspace())
}

/// The auth doctor's data: active method and what chose it, where its secret lives, the Google
/// account, tier, project and token expiry, the last error and what the view can offer.
#[tauri::command]
pub async fn auth_status(state: State<'_, AppState>) -> Result<AuthStatus, AuthErrorReport> {
    Ok(manager(&state)?.status().await)
}

/// Checks an API key with a cheap call (list models) without storing it.
#[tauri::command]
pub async fn auth_validate_api_key(
    state: State<'_, AppState>,
    key: String,
) -> Result<ApiKeyCheck, AuthErrorReport> {
    let manager = manager(&state)?;
    manager
        .validate_api_key(&SecretString::new(key.trim()))
        .await
        .map_err(|e| e.report())
}

/// Validates the key, stores it in the secret store and makes the API key the chosen method.
#[tauri::command]
pub async fn auth_set_api_key(
    state: State<'_, AppState>,
    key: String,
) -> Result<ApiKeyCheck, AuthErrorReport> {
    let manager = manager(&state)?;
    let check = manager
        .set_api_key(SecretString::new(key))
        .await
        .map_err(|e| e.report())?;
    tracing::info!(
        models = check.models,
        "API key saved from the sign-in screen"
    );
    Ok(check)
}

/// Stores Vertex AI settings (project, location, API key or ADC) and chooses Vertex AI.
#[tauri::command]
pub async fn auth_set_vertex(
    state: State<'_, AppState>,
    input: VertexInput,
) -> Result<AuthStatus, AuthErrorReport> {
    let manager = manager(&state)?;
    manager.set_vertex(input).await.map_err(|e| e.report())?;
    Ok(manager.status().await)
}

/// Starts "Sign in with Google": opens the authorization URL in the system browser (or the
/// program named by `GEMINI_DESKTOP_BROWSER`) and returns it, so the UI can offer it as a link
/// when no browser opened. Stages arrive on `on_progress`; a running sign-in is cancelled.
#[tauri::command]
pub async fn auth_start_google_login<R: Runtime>(
    app: AppHandle<R>,
    state: State<'_, AppState>,
    on_progress: Channel<LoginStage>,
) -> Result<String, AuthErrorReport> {
    let manager = manager(&state)?;
    if let Some(previous) = state
        .signin
        .login
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        previous.control.cancel();
    }
    let login = manager
        .start_google_login(LoginOptions::default())
        .await
        .map_err(|e| e.report())?;
    let url = login.url().to_owned();
    let control = login.control();

    let mut stages = control.watch();
    tauri::async_runtime::spawn(async move {
        loop {
            let stage = stages.borrow_and_update().clone();
            let last = matches!(stage, LoginStage::Done | LoginStage::Failed { .. });
            if on_progress.send(stage).is_err() || last || stages.changed().await.is_err() {
                break;
            }
        }
    });

    let (tx, rx) = watch::channel(None);
    tauri::async_runtime::spawn(async move {
        let result = login.finish().await;
        match &result {
            Ok(outcome) => tracing::info!(
                tier = %outcome.code_assist.tier_id,
                "Google sign-in finished"
            ),
            Err(error) => tracing::warn!(kind = ?error.kind(), "Google sign-in failed: {error}"),
        }
        let _ = tx.send(Some(result.map_err(|e| e.report())));
    });
    *state.signin.login.lock().unwrap_or_else(|e| e.into_inner()) = Some(ActiveLogin {
        control,
        result: rx,
    });

    if let Err(error) = open_in_browser(&app, &url) {
        // The UI shows the URL with an "open" button and the paste-code field anyway.
        tracing::warn!("could not open the browser for Google sign-in: {error}");
    }
    Ok(url)
}

/// Opens `url` with `GEMINI_DESKTOP_BROWSER`'s program if set, else the system browser
/// (through the opener plugin).
pub(crate) fn open_in_browser<R: Runtime>(app: &AppHandle<R>, url: &str) -> Result<(), String> {
    // Only web pages: the opener plugin would also open `file:` and custom-scheme URLs.
    gd_auth::browser::check_web_url(url)?;
    if let Some(program) = gd_auth::browser::override_program() {
        return gd_auth::browser::run_program(&program, url);
    }
    use tauri_plugin_opener::OpenerExt;
    app.opener()
        .open_url(url, None::<&str>)
        .map_err(|e| e.to_string())
}

/// Waits for the running Google sign-in: the account and Code Assist setup, or the error that
/// says what to do (cancelled, timed out, ineligible tier, validation required...).
#[tauri::command]
pub async fn auth_wait_google_login(
    state: State<'_, AppState>,
) -> Result<LoginOutcome, AuthErrorReport> {
    let mut result = state
        .signin
        .login
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map(|l| l.result.clone())
        .ok_or_else(no_login)?;
    let outcome = result
        .wait_for(Option::is_some)
        .await
        .map_err(|_| report(AuthErrorKind::Cancelled, "Sign-in was cancelled."))?
        .clone();
    outcome.unwrap_or_else(|| Err(no_login()))
}

/// Cancels the running Google sign-in (its wait rejects with `cancelled`).
#[tauri::command]
pub fn auth_cancel_google_login(state: State<'_, AppState>) -> Result<(), AuthErrorReport> {
    state.signin.control()?.cancel();
    Ok(())
}

/// The paste-code fallback: the address the browser ended on, or the bare code. A typo
/// rejects with `input` and the sign-in keeps waiting.
#[tauri::command]
pub async fn auth_submit_login_code(
    state: State<'_, AppState>,
    code: String,
) -> Result<(), AuthErrorReport> {
    let control = state.signin.control()?;
    control.submit_code(&code).await.map_err(|e| e.report())
}

/// The Google Cloud projects the signed-in account can see, for the project picker.
#[tauri::command]
pub async fn auth_list_projects(
    state: State<'_, AppState>,
) -> Result<Vec<CloudProject>, AuthErrorReport> {
    let manager = manager(&state)?;
    manager.list_projects().await.map_err(|e| e.report())
}

/// The project picker's choice (`None` clears it); Code Assist setup runs again with it.
#[tauri::command]
pub async fn auth_pick_project(
    state: State<'_, AppState>,
    project: Option<String>,
) -> Result<CodeAssistSetup, AuthErrorReport> {
    let manager = manager(&state)?;
    manager.pick_project(project).await.map_err(|e| e.report())
}

/// Runs Code Assist setup again (after verifying the account or enabling the API).
#[tauri::command]
pub async fn auth_retry_setup(
    state: State<'_, AppState>,
) -> Result<CodeAssistSetup, AuthErrorReport> {
    let manager = manager(&state)?;
    manager.setup_code_assist().await.map_err(|e| e.report())
}

/// Makes `method` the one chosen in the app (settings and environment still win; the status
/// says so).
#[tauri::command]
pub async fn auth_select_method(
    state: State<'_, AppState>,
    method: AuthMethod,
) -> Result<AuthStatus, AuthErrorReport> {
    let manager = manager(&state)?;
    manager.select_method(method).await.map_err(|e| e.report())
}

/// Signs out of `method` (`None`: everything): revokes the Google sign-in at Google, deletes
/// the stored secrets. Running sessions keep their credentials until they end, so the UI
/// stops them.
#[tauri::command]
pub async fn auth_sign_out(
    state: State<'_, AppState>,
    method: Option<AuthMethod>,
) -> Result<SignOutReport, AuthErrorReport> {
    let manager = manager(&state)?;
    let result = manager.sign_out(method).await.map_err(|e| e.report())?;
    state.sessions.stop_all();
    tracing::info!(?method, revoked = result.revoked, "signed out");
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_and_paste_without_a_sign_in_say_so() {
        let signin = SignIn::default();
        let error = signin.control().unwrap_err();
        assert_eq!(error.kind, AuthErrorKind::Input);
        assert!(error.message.contains("No Google sign-in is in progress"));
    }
}
