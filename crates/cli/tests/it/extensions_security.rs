//! `security.blockGitExtensions` and `security.allowedExtensions` through
//! the real binary: what they refuse to install, what they stop from
//! loading (its context no longer reaches the model), their 0.61 messages,
//! and that a workspace cannot widen them.

use crate::common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::json;

const MARKER: &str = "SECURITY-TEST-CONTEXT-MARKER";

/// An extension folder with a context file the model would see.
fn extension(dir: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("gemini-extension.json"),
        json!({"name": name, "version": "1.0.0"}).to_string(),
    )
    .unwrap();
    std::fs::write(dir.join("GEMINI.md"), format!("{MARKER} from {name}\n")).unwrap();
    dir.to_path_buf()
}

/// A bare repository holding an extension; its `file://` URL.
fn bare_repo(base: &Path, name: &str) -> String {
    let work = extension(&base.join(format!("{name}-work")), name);
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "v1"]);
    let bare = format!("{name}.git");
    git(
        base,
        &["clone", "-q", "--bare", &format!("{name}-work"), &bare],
    );
    format!("file://{}", base.join(bare).display())
}

fn code_and_err(run: &Run, args: &[&str]) -> (Option<i32>, String) {
    let out = run.run(args);
    (out.status.code(), stderr(&out))
}

fn context_reaches_the_model(run: &Run) -> bool {
    let out = run.run(&["-p", "hello"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    run.bodies().last().unwrap().to_string().contains(MARKER)
}

#[test]
fn blocking_git_extensions_refuses_installs_and_stops_installed_ones() {
    let run = Run::new(json!({"steps": [{"text": "ok"}], "after_steps": {"text": "ok"}}));
    let base = run.home.parent().unwrap().to_path_buf();
    let url = bare_repo(&base, "from-git");
    let (code, err) = code_and_err(&run, &["extensions", "install", &url, "--consent"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(context_reaches_the_model(&run));

    run.write_settings(
        &run.user_settings(),
        &json!({"security": {"blockGitExtensions": true}}).to_string(),
    );
    // Installed before: no longer loaded, and `list` says why.
    assert!(
        !context_reaches_the_model(&run),
        "a blocked extension's context was sent"
    );
    let (code, err) = code_and_err(&run, &["extensions", "list"]);
    assert_eq!(code, Some(0));
    assert!(
        err.contains("Extensions from remote sources is disallowed by your current settings."),
        "{err}"
    );
    // A new one from git is refused before anything is fetched.
    let other = bare_repo(&base, "other");
    let (code, err) = code_and_err(&run, &["extensions", "install", &other, "--consent"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains(
            "Installing extensions from remote sources is disallowed by your current settings."
        ),
        "{err}"
    );
    assert!(!run.home.join(".gemini/extensions/other").exists());
    // A local one is still fine.
    let local = extension(&base.join("local"), "local-one");
    let (code, err) = code_and_err(
        &run,
        &["extensions", "link", local.to_str().unwrap(), "--consent"],
    );
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn allowed_extensions_match_the_source_and_a_workspace_cannot_widen_them() {
    let run = Run::new(json!({"steps": [{"text": "ok"}], "after_steps": {"text": "ok"}}));
    let base = run.home.parent().unwrap().to_path_buf();
    let approved = extension(&base.join("approved/tool"), "approved-tool");
    let stray = extension(&base.join("elsewhere/tool"), "stray-tool");
    run.write_settings(
        &run.user_settings(),
        &json!({"security": {"allowedExtensions": ["/approved/"]}}).to_string(),
    );
    // The trusted workspace tries to allow everything.
    run.write_settings(
        &run.ws.join(".gemini/settings.json"),
        &json!({"security": {"allowedExtensions": [".*"]}}).to_string(),
    );
    let (code, err) = code_and_err(
        &run,
        &[
            "extensions",
            "install",
            stray.to_str().unwrap(),
            "--consent",
        ],
    );
    assert_eq!(code, Some(1));
    assert!(
        err.contains(&format!(
            "Installing extension from source \"{}\" is not allowed by the \"allowedExtensions\" security setting.",
            stray.display()
        )),
        "{err}"
    );
    let (code, err) = code_and_err(
        &run,
        &[
            "extensions",
            "install",
            approved.to_str().unwrap(),
            "--consent",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(context_reaches_the_model(&run));

    // Narrowed later: the installed one stops loading.
    run.write_settings(
        &run.user_settings(),
        &json!({"security": {"allowedExtensions": ["^https://github\\.com/acme/"]}}).to_string(),
    );
    assert!(!context_reaches_the_model(&run));
    let (_, err) = code_and_err(&run, &["extensions", "list"]);
    assert!(
        err.contains(
            "This extension is not allowed by the \"allowedExtensions\" security setting."
        ),
        "{err}"
    );
    // It can still be removed.
    let (code, err) = code_and_err(&run, &["extensions", "uninstall", "approved-tool"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!run.home.join(".gemini/extensions/approved-tool").exists());
}
