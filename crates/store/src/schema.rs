//! The database schema and its versioned migrations.
//!
//! The version lives in SQLite's `user_version`. Each migration runs in one
//! transaction together with the version bump, so a crash mid-migration
//! leaves the previous version intact. A database newer than this build is
//! refused rather than guessed at.

use rusqlite::{Connection, TransactionBehavior};

use crate::{Result, StoreError};

/// Migration `i` takes the database from version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[V1, V2, V3];

/// The schema version this build writes.
pub const CURRENT_VERSION: i64 = MIGRATIONS.len() as i64;

/// v1: sessions, messages and the full-text index over message text.
pub const V1: &str = r#"
CREATE TABLE sessions (
    id TEXT PRIMARY KEY NOT NULL,
    workspace TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    model TEXT,
    message_count INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    thoughts_tokens INTEGER NOT NULL DEFAULT 0,
    total_tokens INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_by_updated ON sessions(updated_ms DESC, id);

CREATE TABLE messages (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    in_context INTEGER NOT NULL DEFAULT 1,
    parts TEXT NOT NULL,
    text TEXT NOT NULL DEFAULT '',
    tool_calls TEXT,
    call_ids TEXT,
    thoughts TEXT,
    usage TEXT,
    model TEXT,
    UNIQUE (session_id, seq)
);

CREATE VIRTUAL TABLE messages_fts USING fts5(
    text,
    content = 'messages',
    content_rowid = 'rowid',
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '2 3'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO messages_fts(rowid, text) VALUES (new.rowid, new.text);
END;
"#;

/// v2: where a session came from (imports from Gemini CLI keep their file),
/// and listing per workspace without a scan.
pub const V2: &str = r#"
ALTER TABLE sessions ADD COLUMN source TEXT NOT NULL DEFAULT 'gemini-desktop';
ALTER TABLE sessions ADD COLUMN origin TEXT;
CREATE INDEX sessions_by_workspace ON sessions(workspace, updated_ms DESC, id);
CREATE INDEX messages_by_call ON messages(session_id, call_ids) WHERE call_ids IS NOT NULL;
"#;

/// v3: which compression took a message out of the context (the `seq` of
/// the first summary message that replaced it), so that rewinding to before
/// that compression brings the message back. Failed prompts, also out of
/// context, have none.
pub const V3: &str = r#"
ALTER TABLE messages ADD COLUMN compressed_at INTEGER;
"#;

/// The database's schema version.
pub fn version(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// Brings the database up to [`CURRENT_VERSION`].
pub fn migrate(conn: &mut Connection) -> Result<()> {
    migrate_to(conn, CURRENT_VERSION)
}

/// Applies the migrations up to `target` (tests build old versions with it).
///
/// Each step reads the version inside an IMMEDIATE transaction, so two
/// processes opening an old database at once (the app and the CLI) migrate
/// it once: the second waits for the first and then finds nothing to do.
pub fn migrate_to(conn: &mut Connection, target: i64) -> Result<()> {
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let found = version(&tx)?;
        if found > CURRENT_VERSION {
            return Err(StoreError::TooNew {
                found,
                known: CURRENT_VERSION,
            });
        }
        if found >= target.min(CURRENT_VERSION) {
            return Ok(());
        }
        tx.execute_batch(MIGRATIONS[found as usize])?;
        tx.pragma_update(None, "user_version", found + 1)?;
        tx.commit()?;
        tracing::info!(version = found + 1, "history database migrated");
    }
}
