//! The settings writer on real files: in-place edits that keep every other
//! byte, new files and folders, broken files refused and left alone.

use std::fs;
use std::path::Path;

use gd_settings::write::{key_path, write_setting};
use gd_settings::{WriteError, parse_file};
use serde_json::json;

const USER_FILE: &str = r#"{
  // My settings. Keep this comment!
  "model": {
    "name": "gemini-2.5-pro", /* the good one */
    "maxSessionTurns": 20
  },
  "someFutureKey": {"nested": [1, 2, 3]},
  "general": {
    "checkpointing": {
      "enabled": false // off for now
    }
  },
}
"#;

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

#[test]
fn changing_a_value_keeps_every_other_byte() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    fs::write(&file, USER_FILE).unwrap();
    write_setting(
        &file,
        &key_path("general.checkpointing.enabled"),
        Some(&json!(true)),
    )
    .unwrap();
    assert_eq!(
        read(&file),
        USER_FILE.replace("\"enabled\": false", "\"enabled\": true")
    );
    write_setting(
        &file,
        &key_path("model.name"),
        Some(&json!("gemini-2.5-flash")),
    )
    .unwrap();
    let text = read(&file);
    assert_eq!(
        text,
        USER_FILE
            .replace("\"enabled\": false", "\"enabled\": true")
            .replace("gemini-2.5-pro", "gemini-2.5-flash")
    );
    let value = parse_file(&file, &text).unwrap();
    assert_eq!(value["someFutureKey"]["nested"], json!([1, 2, 3]));
}

#[test]
fn adding_and_removing_keys_touch_only_their_own_lines() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    fs::write(&file, USER_FILE).unwrap();
    write_setting(
        &file,
        &key_path("context.includeDirectories"),
        Some(&json!(["../lib", "/opt/shared"])),
    )
    .unwrap();
    let added = read(&file);
    // Everything before the insertion point is unchanged.
    let prefix_end = USER_FILE.find("\n}\n").unwrap();
    assert_eq!(&added[..prefix_end], &USER_FILE[..prefix_end]);
    assert!(
        added.contains("  \"context\": {\n    \"includeDirectories\": [\n      \"../lib\",\n      \"/opt/shared\"\n    ]\n  },\n}\n"),
        "{added}"
    );
    let value = parse_file(&file, &added).unwrap();
    assert_eq!(value["context"]["includeDirectories"][1], "/opt/shared");

    write_setting(&file, &key_path("context"), None).unwrap();
    assert_eq!(read(&file), USER_FILE);
    // Removing what is not there leaves the file alone.
    write_setting(&file, &key_path("ui.theme"), None).unwrap();
    assert_eq!(read(&file), USER_FILE);
}

#[test]
fn a_missing_file_and_folder_are_created() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ws/.gemini/settings.json");
    write_setting(&file, &key_path("ui.theme"), Some(&json!("dark"))).unwrap();
    assert_eq!(
        read(&file),
        "{\n  \"ui\": {\n    \"theme\": \"dark\"\n  }\n}\n"
    );
    // No temporary files are left behind.
    let names: Vec<_> = fs::read_dir(file.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["settings.json"]);
}

#[test]
fn a_broken_file_is_refused_with_its_line_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    let broken = "{\n  \"model\": {\n    \"name\": \"x\"\n  \n  \"oops\": 1\n}\n";
    fs::write(&file, broken).unwrap();
    let err = write_setting(&file, &key_path("ui.theme"), Some(&json!("dark"))).unwrap_err();
    let WriteError::Broken { line, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*line, 5);
    assert!(
        err.to_string()
            .starts_with(&format!("{}:5:", file.display())),
        "{err}"
    );
    assert_eq!(read(&file), broken);
}

#[test]
fn a_wrong_type_is_refused_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    fs::write(&file, USER_FILE).unwrap();
    let err = write_setting(
        &file,
        &key_path("model.maxSessionTurns"),
        Some(&json!("ten")),
    )
    .unwrap_err();
    assert!(matches!(err, WriteError::Invalid(_)), "{err:?}");
    assert!(err.to_string().contains("`model.maxSessionTurns`"), "{err}");
    assert_eq!(read(&file), USER_FILE);
}

#[cfg(unix)]
#[test]
fn permissions_and_symlinks_are_kept() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("dotfiles/settings.json");
    fs::create_dir_all(real.parent().unwrap()).unwrap();
    fs::write(&real, "{}").unwrap();
    fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.path().join("settings.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    write_setting(&link, &key_path("ui.theme"), Some(&json!("light"))).unwrap();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(read(&real).contains("\"theme\": \"light\""));
    assert_eq!(
        fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o640
    );
}
