//! The secret store's unit tests (the real keyring: tests/it/keyring.rs).

use super::*;

#[test]
fn file_store_round_trip_with_private_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("auth/secrets.json");
    let store = FileStore::new(path.clone());
    assert_eq!(store.get(SecretKey::GeminiApiKey).unwrap(), None);
    store
        .set(SecretKey::GeminiApiKey, &SecretString::new("AIza-one"))
        .unwrap();
    store
        .set(SecretKey::GoogleOauth, &SecretString::new("{\"t\":1}"))
        .unwrap();
    assert_eq!(
        store
            .get(SecretKey::GeminiApiKey)
            .unwrap()
            .unwrap()
            .expose(),
        "AIza-one"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dir_mode, 0o700);
    }
    store.delete(SecretKey::GeminiApiKey).unwrap();
    store.delete(SecretKey::GeminiApiKey).unwrap();
    assert_eq!(store.get(SecretKey::GeminiApiKey).unwrap(), None);
    assert!(store.get(SecretKey::GoogleOauth).unwrap().is_some());
    store.delete(SecretKey::GoogleOauth).unwrap();
    assert!(!path.exists(), "an empty store leaves no file");
}

#[test]
fn named_entries_sit_beside_the_apps_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secrets.json");
    let store = FileStore::new(path.clone());
    let service = "Gemini CLI Extensions ext 0123";
    store
        .set(SecretKey::GeminiApiKey, &SecretString::new("AIza-app"))
        .unwrap();
    store
        .set_entry(service, "__secret__TOKEN", &SecretString::new("t-1"))
        .unwrap();
    assert_eq!(
        store
            .get_entry(service, "__secret__TOKEN")
            .unwrap()
            .unwrap()
            .expose(),
        "t-1"
    );
    assert_eq!(store.get_entry(service, "__secret__OTHER").unwrap(), None);
    assert_eq!(
        store
            .get_entry("another service", "__secret__TOKEN")
            .unwrap(),
        None
    );
    store.delete_entry(service, "__secret__TOKEN").unwrap();
    store.delete_entry(service, "__secret__TOKEN").unwrap();
    assert_eq!(store.get_entry(service, "__secret__TOKEN").unwrap(), None);
    assert!(store.get(SecretKey::GeminiApiKey).unwrap().is_some());

    let memory = MemoryStore::default();
    memory
        .set_entry(service, "__secret__TOKEN", &SecretString::new("m"))
        .unwrap();
    assert_eq!(memory.get(SecretKey::GeminiApiKey).unwrap(), None);
    assert!(
        memory
            .get_entry(service, "__secret__TOKEN")
            .unwrap()
            .is_some()
    );
}

#[cfg(unix)]
#[test]
fn loose_permissions_are_tightened() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secrets.json");
    std::fs::write(&path, r#"{"gemini-api-key": "k"}"#).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let store = FileStore::new(path.clone());
    assert_eq!(
        store
            .get(SecretKey::GeminiApiKey)
            .unwrap()
            .unwrap()
            .expose(),
        "k"
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn corrupt_file_is_reported_without_content() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secrets.json");
    std::fs::write(&path, "AIzaSecretValue not json").unwrap();
    let err = FileStore::new(path)
        .get(SecretKey::GeminiApiKey)
        .unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }));
    assert!(!err.to_string().contains("AIzaSecretValue"), "{err}");
}

#[test]
fn preference_parsing() {
    assert_eq!(StorePreference::parse(None), Ok(StorePreference::Auto));
    assert_eq!(
        StorePreference::parse(Some(" File ")),
        Ok(StorePreference::File)
    );
    assert!(StorePreference::parse(Some("vault")).is_err());
}

#[test]
fn file_preference_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secrets.json");
    let selected = select_store("gd-test", path.clone(), StorePreference::File).unwrap();
    assert_eq!(selected.info.kind, StoreKind::File { path });
    assert_eq!(selected.info.fallback_reason, None);
}
