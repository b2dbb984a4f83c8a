//! Session history commands for the history browser: list, search, read a
//! transcript page by page, rename, delete, export, the last session of a
//! workspace, a stored session's checkpoints, and Gemini CLI's sessions. The work is gd-store's; every call
//! runs on a blocking thread, so the webview's IPC never waits on SQLite.
//!
//! Recording and resuming happen where sessions start (`sessions.rs`):
//! [`History::recorder`] gives the recorder to pass to
//! `Session::spawn_recorded`, and [`History::apply_retention`] applies
//! `general.sessionRetention` from the launch's settings.

use std::path::PathBuf;
use std::sync::OnceLock;

use gd_protocol::{CheckpointInfo, CommandError, CommandErrorKind};
use gd_store::export::ExportFormat;
use gd_store::gemini_cli;
use gd_store::{
    ListCursor, ListQuery, Page, PageFrom, PageQuery, SearchHit, SearchQuery, SessionSummary,
    Store, StoredMessage,
};
use serde::Serialize;
use tauri::State;

/// The history database, opened on first use.
#[derive(Default)]
pub struct History {
    store: OnceLock<Store>,
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History").finish_non_exhaustive()
    }
}

impl History {
    /// A history on an already open store (tests, a custom location).
    pub fn with_store(store: Store) -> Self {
        let history = Self::default();
        let _ = history.store.set(store);
        history
    }

    /// The store, opening it (and migrating it) the first time.
    pub fn store(&self) -> Result<Store, CommandError> {
        if let Some(store) = self.store.get() {
            return Ok(store.clone());
        }
        let store = Store::open_default().map_err(|e| {
            CommandError::new(
                CommandErrorKind::Config,
                format!("Cannot open the session history: {e}"),
            )
        })?;
        Ok(self.store.get_or_init(|| store).clone())
    }

    /// The recorder for a session about to start (gd-core's `history::open_for_launch`, as
    /// the CLI's): a new session recorded under `config.session_id`, or with `resume` the
    /// stored session continued (its id becomes `config.session_id`; its history is the
    /// chat's). Pass it to `Session::spawn_recorded`.
    pub async fn recorder(
        &self,
        config: &mut gd_core::SessionConfig,
        resume: Option<&str>,
    ) -> Result<gd_core::history::HistoryRecorder, CommandError> {
        let workspace = config.primary_workspace().display().to_string();
        gd_core::history::open_for_launch(self.store()?, config, &workspace, resume)
            .await
            .map_err(input)
    }

    /// Deletes what `general.sessionRetention` (off by default) no longer
    /// keeps; `keep` is never deleted. Returns how many sessions went.
    pub async fn apply_retention(
        &self,
        setting: Option<&serde_json::Value>,
        keep: Option<String>,
    ) -> Result<usize, CommandError> {
        let Some(value) = setting else {
            return Ok(0);
        };
        let retention = gd_store::retention::Retention::from_value(value).map_err(input)?;
        blocking(self, move |s| {
            s.apply_retention(&retention, gd_store::now_ms(), keep.as_deref())
        })
        .await
    }
}

fn input(e: impl std::fmt::Display) -> CommandError {
    CommandError::new(CommandErrorKind::Input, e.to_string())
}

async fn blocking<T: Send + 'static>(
    history: &History,
    f: impl FnOnce(Store) -> Result<T, gd_store::StoreError> + Send + 'static,
) -> Result<T, CommandError> {
    let store = history.store()?;
    tauri::async_runtime::spawn_blocking(move || f(store))
        .await
        .map_err(input)?
        .map_err(input)
}

/// Sessions newest first, a page at a time; pass the last row's
/// `updated_ms` and `id` as `after` for the next page.
#[tauri::command]
pub async fn history_list(
    history: State<'_, History>,
    workspace: Option<String>,
    after: Option<ListCursor>,
    limit: Option<u32>,
) -> Result<Vec<SessionSummary>, CommandError> {
    let query = ListQuery {
        workspace,
        after,
        limit: limit.unwrap_or(50),
    };
    blocking(&history, move |s| s.list_sessions(&query)).await
}

/// Full-text search across all projects (or one); snippets mark hits with
/// U+0002 ... U+0003.
#[tauri::command]
pub async fn history_search(
    history: State<'_, History>,
    text: String,
    workspace: Option<String>,
    limit: Option<u32>,
    offset: Option<u32>,
) -> Result<Vec<SearchHit>, CommandError> {
    let query = SearchQuery {
        text,
        workspace,
        limit: limit.unwrap_or(50),
        offset: offset.unwrap_or(0),
    };
    blocking(&history, move |s| s.search(&query)).await
}

/// A page of a transcript: `from` is `{"from": "start"}`, `{"from": "end"}`,
/// or `{"from": "after" | "before" | "around", "seq": N}`.
#[tauri::command]
pub async fn history_page(
    history: State<'_, History>,
    session_id: String,
    from: PageFrom,
    limit: Option<u32>,
    max_bytes: Option<u32>,
) -> Result<Page, CommandError> {
    let query = PageQuery {
        from,
        limit: limit.unwrap_or(50),
        max_bytes: max_bytes.unwrap_or(64 * 1024),
    };
    blocking(&history, move |s| s.page(&session_id, &query)).await
}

/// One whole message (one a page cut short).
#[tauri::command]
pub async fn history_message(
    history: State<'_, History>,
    message_id: String,
) -> Result<Option<StoredMessage>, CommandError> {
    blocking(&history, move |s| {
        Ok(s.message(&message_id)?.map(|(_, m)| m))
    })
    .await
}

#[tauri::command]
pub async fn history_rename(
    history: State<'_, History>,
    session_id: String,
    title: String,
) -> Result<(), CommandError> {
    if title.trim().is_empty() {
        return Err(input("A session title cannot be empty."));
    }
    blocking(&history, move |s| s.rename(&session_id, &title)).await
}

/// Deletes a session (the UI confirms first). `false` when it was gone.
#[tauri::command]
pub async fn history_delete(
    history: State<'_, History>,
    session_id: String,
) -> Result<bool, CommandError> {
    blocking(&history, move |s| s.delete_session(&session_id)).await
}

/// Writes a session as `markdown` or `json`, streamed, to `path`, or when
/// none is given to a new file in the downloads folder (the workspace when
/// there is none): the webview has no file system access of its own.
/// Returns the file's path.
#[tauri::command]
pub async fn history_export(
    app: tauri::AppHandle,
    history: State<'_, History>,
    state: State<'_, crate::state::AppState>,
    session_id: String,
    format: String,
    path: Option<String>,
) -> Result<String, CommandError> {
    use tauri::Manager;
    let default_dir = || {
        app.path()
            .download_dir()
            .ok()
            .filter(|d| d.is_dir())
            .or_else(|| state.workspace())
    };
    export_session(
        &history,
        session_id,
        &format,
        path.map(PathBuf::from),
        default_dir,
    )
    .await
}

/// [`history_export`] without Tauri's state: `default_dir` is asked for the
/// folder when no `path` is given.
pub async fn export_session(
    history: &History,
    session_id: String,
    format: &str,
    path: Option<PathBuf>,
    default_dir: impl FnOnce() -> Option<PathBuf>,
) -> Result<String, CommandError> {
    let format = ExportFormat::parse(format).ok_or_else(|| {
        input(format!(
            "Unknown export format '{format}': use markdown or json."
        ))
    })?;
    let path = match path {
        Some(path) => path,
        None => {
            let dir = default_dir()
                .ok_or_else(|| input("No folder to export to: open a folder first."))?;
            export_path(&dir, &session_id, format)
        }
    };
    let shown = path.display().to_string();
    blocking(history, move |s| {
        // Owner-only, like the history it comes from.
        let file =
            gd_store::private::create_file(&path).map_err(|source| gd_store::StoreError::Io {
                path: path.clone(),
                source,
            })?;
        let mut out = std::io::BufWriter::new(file);
        s.export(&session_id, format, &mut out)?;
        std::io::Write::flush(&mut out).map_err(|source| gd_store::StoreError::Io {
            path: path.clone(),
            source,
        })
    })
    .await?;
    Ok(shown)
}

/// A file name in `dir` that does not exist yet:
/// `gemini-session-<id prefix>[-N].md|json`.
fn export_path(dir: &std::path::Path, session_id: &str, format: ExportFormat) -> PathBuf {
    let ext = match format {
        ExportFormat::Markdown => "md",
        ExportFormat::Json => "json",
    };
    let short: String = session_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(8)
        .collect();
    let mut path = dir.join(format!("gemini-session-{short}.{ext}"));
    let mut n = 1;
    while path.exists() {
        n += 1;
        path = dir.join(format!("gemini-session-{short}-{n}.{ext}"));
    }
    path
}

/// Imports a Gemini CLI session (its recording `file`) into the history, so
/// that it can be resumed; returns its id. Importing twice is harmless.
#[tauri::command]
pub async fn history_import_gemini_cli(
    history: State<'_, History>,
    file: String,
    workspace: String,
) -> Result<String, CommandError> {
    let workspace = canonical(&workspace);
    blocking(&history, move |s| {
        let session = gemini_cli::read_file(std::path::Path::new(&file))?;
        s.import_gemini_cli(&session, &workspace)
    })
    .await
}

/// The session the desktop reopens for a workspace.
#[tauri::command]
pub async fn history_last_session(
    history: State<'_, History>,
    workspace: String,
) -> Result<Option<SessionSummary>, CommandError> {
    let workspace = canonical(&workspace);
    blocking(&history, move |s| s.latest_session(&workspace)).await
}

/// A Gemini CLI session as the browser lists it (read-only until resumed).
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct GeminiCliSessionInfo {
    pub id: String,
    pub title: String,
    #[ts(type = "number")]
    pub updated_ms: i64,
    pub file: String,
    pub messages: usize,
    pub skipped_lines: usize,
    /// Already imported into our history.
    pub imported: bool,
}

/// Gemini CLI's own sessions, of one workspace or of all projects.
#[tauri::command]
pub async fn history_gemini_cli_sessions(
    history: State<'_, History>,
    workspace: Option<String>,
) -> Result<Vec<GeminiCliSessionInfo>, CommandError> {
    let hash = workspace.map(|w| gemini_cli::project_hash(&canonical(&w)));
    blocking(&history, move |s| {
        let Some(dir) = gemini_cli::gemini_dir() else {
            return Ok(Vec::new());
        };
        gemini_cli::list_sessions(&dir, hash.as_deref())
            .into_iter()
            .map(|g| {
                Ok(GeminiCliSessionInfo {
                    imported: s.session(&g.id)?.is_some(),
                    title: g
                        .summary
                        .clone()
                        .or_else(|| g.first_prompt())
                        .map(|t| gd_store::title_from(&t))
                        .unwrap_or_default(),
                    updated_ms: g.updated_ms,
                    file: g.file.display().to_string(),
                    messages: g.conversation_len(),
                    skipped_lines: g.skipped_lines,
                    id: g.id,
                })
            })
            .collect()
    })
    .await
}

/// The checkpoints of a stored session (its edits and the snapshots taken before its restores),
/// newest first, read from its workspace's shadow repository without starting it: the history
/// browser offers Restore on the transcript's edits that have one. Empty when there are none.
#[tauri::command]
pub async fn history_checkpoints(
    history: State<'_, History>,
    session_id: String,
) -> Result<Vec<CheckpointInfo>, CommandError> {
    let store = history.store()?;
    tauri::async_runtime::spawn_blocking(move || {
        let session = store
            .session(&session_id)
            .map_err(|e| input(format!("Cannot read the session history: {e}")))?
            .ok_or_else(|| input(format!("No session {session_id} in the history.")))?;
        let Some(root) = gd_core::checkpoint::default_root() else {
            return Ok(Vec::new());
        };
        gd_core::checkpoint::session_checkpoints(
            &root,
            std::path::Path::new(&session.workspace),
            &session_id,
        )
        .map_err(|e| input(format!("Cannot read the checkpoints: {e}")))
    })
    .await
    .map_err(input)?
}

fn canonical(path: &str) -> String {
    std::path::Path::new(path)
        .canonicalize()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gd_store::{MessageKind, NewMessage, NewSession, Role};
    use serde_json::json;
    use tauri::Manager;

    #[test]
    fn the_commands_list_search_page_rename_export_and_delete() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap().display().to_string();
        let store = Store::open(dir.path().join("h.sqlite3")).unwrap();
        store
            .create_session(&NewSession {
                id: "s1".into(),
                workspace: ws.clone(),
                title: "Fix the okapi build".into(),
                model: None,
                created_ms: 1,
                source: gd_store::SOURCE_DESKTOP.into(),
                origin: None,
            })
            .unwrap();
        for i in 0..3 {
            let text = format!("okapi message {i}");
            store
                .append_message(
                    "s1",
                    &NewMessage::new(
                        Role::User,
                        MessageKind::Prompt,
                        json!([{ "text": text }]),
                        text,
                    ),
                )
                .unwrap();
        }
        let app = tauri::test::mock_builder()
            .manage(History::with_store(store.clone()))
            .build(tauri::test::mock_context(tauri::test::noop_assets()))
            .unwrap();
        tauri::async_runtime::block_on(async {
            let h = || app.state::<History>();
            let list = history_list(h(), None, None, None).await.unwrap();
            assert_eq!(list.len(), 1);
            let hits = history_search(h(), "okapi".into(), None, None, None)
                .await
                .unwrap();
            assert_eq!(hits.len(), 3);
            let page = history_page(h(), "s1".into(), PageFrom::End, Some(2), None)
                .await
                .unwrap();
            assert_eq!(page.messages.len(), 2);
            assert!(page.has_before);
            let whole = history_message(h(), page.messages[0].id.clone())
                .await
                .unwrap();
            assert_eq!(whole.unwrap().seq, 2);
            assert!(history_rename(h(), "s1".into(), "  ".into()).await.is_err());
            history_rename(h(), "s1".into(), "Okapi".into())
                .await
                .unwrap();
            let last = history_last_session(h(), ws.clone())
                .await
                .unwrap()
                .unwrap();
            assert_eq!(last.title, "Okapi");
            let out = dir.path().join("out.md");
            let written = export_session(&h(), "s1".into(), "markdown", Some(out.clone()), || None)
                .await
                .unwrap();
            assert_eq!(written, out.display().to_string());
            assert!(
                std::fs::read_to_string(&out)
                    .unwrap()
                    .starts_with("# Okapi")
            );
            let bad = export_session(&h(), "s1".into(), "pdf", Some(out.clone()), || None).await;
            assert_eq!(bad.unwrap_err().kind, CommandErrorKind::Input);
            // No path: a new file in the default folder, never overwriting.
            let first = export_session(&h(), "s1".into(), "json", None, || {
                Some(dir.path().to_path_buf())
            })
            .await
            .unwrap();
            let second = export_session(&h(), "s1".into(), "json", None, || {
                Some(dir.path().to_path_buf())
            })
            .await
            .unwrap();
            assert!(first.ends_with("gemini-session-s1.json"), "{first}");
            assert!(second.ends_with("gemini-session-s1-2.json"), "{second}");
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&second).unwrap()).unwrap();
            assert!(json.is_object(), "{json}");
            let none = export_session(&h(), "s1".into(), "json", None, || None).await;
            assert_eq!(none.unwrap_err().kind, CommandErrorKind::Input);
            assert!(history_delete(h(), "s1".into()).await.unwrap());
            assert!(!history_delete(h(), "s1".into()).await.unwrap());
            assert!(
                history_list(h(), None, None, None)
                    .await
                    .unwrap()
                    .is_empty()
            );
        });
    }
}
