//! The history is private: its folder 0700, the database and SQLite's side files 0600, on a
//! fresh install and on one made before this rule (0755 folder, 0644 files).
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use gd_store::{MessageKind, NewMessage, NewSession, Role, Store};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn side(db: &Path, suffix: &str) -> std::path::PathBuf {
    let mut path = db.as_os_str().to_owned();
    path.push(suffix);
    path.into()
}

/// A session with one message, so the write-ahead log and shared memory exist.
fn write_something(store: &Store) {
    store
        .create_session(&NewSession {
            id: "s".into(),
            workspace: "/w".into(),
            title: String::new(),
            model: None,
            created_ms: 1,
            source: gd_store::SOURCE_DESKTOP.into(),
            origin: None,
        })
        .unwrap();
    let message = NewMessage::new(
        Role::User,
        MessageKind::Prompt,
        serde_json::json!([{ "text": "the secret plan" }]),
        "the secret plan",
    );
    store.append_message("s", &message).unwrap();
}

#[test]
fn a_fresh_history_is_owner_only() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("share/gemini-desktop");
    let db = data.join(gd_store::DB_FILE);
    let store = Store::open(&db).unwrap();
    write_something(&store);
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(data.parent().unwrap()), 0o700, "created parents too");
    assert_eq!(mode(&db), 0o600);
    for suffix in ["-wal", "-shm"] {
        let file = side(&db, suffix);
        assert!(file.exists(), "{suffix} exists while the store is open");
        assert_eq!(mode(&file), 0o600, "{suffix}");
    }
}

#[test]
fn an_older_readable_install_is_tightened_on_open() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("gemini-desktop");
    std::fs::create_dir(&data).unwrap();
    set_mode(&data, 0o755);
    let db = data.join(gd_store::DB_FILE);
    // The old version's files: the app still has them open (WAL and shared memory exist).
    let running = Store::open(&db).unwrap();
    write_something(&running);
    set_mode(&data, 0o755);
    for file in [db.clone(), side(&db, "-wal"), side(&db, "-shm")] {
        set_mode(&file, 0o644);
    }

    let store = Store::open(&db).unwrap();
    assert_eq!(mode(&data), 0o700);
    for file in [db.clone(), side(&db, "-wal"), side(&db, "-shm")] {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
    // Still the same history.
    assert_eq!(store.session("s").unwrap().unwrap().message_count, 1);
}
