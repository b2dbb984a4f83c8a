//! What `extensions install` hands to the user's `git` (issue 33, item 6):
//! a `--ref` or a source that looks like an option must never reach git as
//! one (`--upload-pack=<command>` runs the command), and the `ext::`
//! transport (which runs a command by design) is refused even when the
//! user's environment allows it. Real git, a real local repository; the
//! proof that nothing ran is a marker file that must not appear.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::json;

/// A bare repository with an extension on `main`, a tag `v1` on its first
/// commit and a second commit; its `file://` URL and the first commit's id.
fn repository(base: &Path) -> (String, String) {
    let work = base.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let manifest = |version: &str| {
        std::fs::write(
            work.join("gemini-extension.json"),
            json!({"name": "from-git", "version": version}).to_string(),
        )
        .unwrap();
    };
    manifest("1.0.0");
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "v1"]);
    git(&work, &["tag", "v1"]);
    let first = String::from_utf8(
        Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(&work)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_owned();
    manifest("2.0.0");
    git(&work, &["commit", "-q", "-am", "v2"]);
    git(base, &["clone", "-q", "--bare", "work", "repo.git"]);
    (format!("file://{}", base.join("repo.git").display()), first)
}

fn install(run: &Run, args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["extensions", "install", "--consent"];
    all.extend_from_slice(args);
    let out = run.run(&all);
    (out.status.code(), stderr(&out))
}

fn version(run: &Run) -> String {
    let text = std::fs::read_to_string(
        run.home
            .join(".gemini/extensions/from-git/gemini-extension.json"),
    )
    .unwrap();
    serde_json::from_str::<serde_json::Value>(&text).unwrap()["version"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn marker(run: &Run) -> PathBuf {
    run.home.parent().unwrap().join("MARKER-git-option-ran")
}

#[test]
fn a_ref_that_is_an_option_is_refused_and_runs_nothing() {
    let run = Run::new(json!({"steps": []}));
    let base = run.home.parent().unwrap().to_path_buf();
    let (url, _) = repository(&base);
    let marker = marker(&run);
    for git_ref in [
        format!("--upload-pack=touch {}", marker.display()),
        format!("-u touch {}", marker.display()),
    ] {
        let (code, err) = install(&run, &[&url, &format!("--ref={git_ref}")]);
        assert!(!marker.exists(), "git ran the command of --ref={git_ref}");
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "Invalid --ref \"{git_ref}\": a ref cannot start with \"-\"."
            )),
            "{err}"
        );
        assert!(!run.home.join(".gemini/extensions/from-git").exists());
    }
    for (git_ref, why) in [
        ("main..v1", "a ref cannot contain \"..\""),
        ("ma in", "a ref cannot contain spaces or control characters"),
        (
            "main\n",
            "a ref cannot contain spaces or control characters",
        ),
        ("HEAD:refs/heads/x", "a ref cannot contain"),
        ("@{-1}", "a ref cannot contain \"@{\""),
    ] {
        let (code, err) = install(&run, &[&url, "--ref", git_ref]);
        assert_eq!(code, Some(1), "{err}");
        assert!(err.contains(why), "{git_ref:?}: {err}");
    }
}

#[test]
fn a_source_that_is_an_option_or_the_ext_transport_runs_nothing() {
    let run = Run::new(json!({"steps": []}));
    let base = run.home.parent().unwrap().to_path_buf();
    let (url, _) = repository(&base);
    let marker = marker(&run);
    let upload_pack = format!("--upload-pack=touch {}", marker.display());
    let ext = format!("ext::sh -c touch% {}", marker.display());
    for source in [upload_pack.as_str(), ext.as_str()] {
        let (code, err) = install(&run, &["--", source]);
        assert!(!marker.exists(), "{source} ran a command");
        assert_eq!(code, Some(1), "{err}");
    }
    // Even when the user's configuration rewrites a URL to `ext::` and the
    // environment allows that transport, it is refused.
    let config = base.join("gitconfig");
    std::fs::write(
        &config,
        format!(
            "[url \"ext::sh -c touch% {}% #\"]\n\tinsteadOf = file:///rewritten/\n",
            marker.display()
        ),
    )
    .unwrap();
    let out = run
        .command(&[
            "extensions",
            "install",
            "file:///rewritten/repo.git",
            "--consent",
        ])
        .env("GIT_CONFIG_GLOBAL", &config)
        .env("GIT_ALLOW_PROTOCOL", "ext:file")
        .output()
        .unwrap();
    assert!(!marker.exists(), "the ext:: transport ran a command");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("Failed to clone"), "{}", stderr(&out));
    // The real repository still installs.
    let (code, err) = install(&run, &[&url]);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn a_branch_a_tag_and_a_commit_id_still_install() {
    let run = Run::new(json!({"steps": []}));
    let base = run.home.parent().unwrap().to_path_buf();
    let (url, first) = repository(&base);
    for (git_ref, expected) in [
        ("main", "2.0.0"),
        ("v1", "1.0.0"),
        ("refs/tags/v1", "1.0.0"),
        (first.as_str(), "1.0.0"),
    ] {
        let (code, err) = install(&run, &[&url, "--ref", git_ref]);
        assert_eq!(code, Some(0), "--ref {git_ref}: {err}");
        assert_eq!(version(&run), expected, "--ref {git_ref}");
        let out = run.run(&["extensions", "uninstall", "from-git"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
}
