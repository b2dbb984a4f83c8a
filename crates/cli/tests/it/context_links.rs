//! Context files that are symbolic links, or import files, outside where
//! they may read (issue 33, item 5), through the real binary against the
//! fake Gemini server: a private file (standing in for `~/.ssh/id_rsa`,
//! holding a unique marker) must never reach the model's request, and the
//! user is told which file was skipped and why. Links that stay inside
//! still work.

use crate::common;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use common::*;
use serde_json::json;

const SECRET: &str = "PRIVATE-KEY-MARKER-6f3c9a1e";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `~/.ssh/id_rsa` of the temporary home, holding the marker.
fn secret(run: &Run) -> PathBuf {
    let key = run.home.join(".ssh/id_rsa");
    write(&key, &format!("-----BEGIN KEY-----\n{SECRET}\n"));
    key
}

/// One `-p` turn: the request the model received, and stderr.
fn turn(run: &Run, cwd: Option<&Path>) -> (String, String) {
    let mut cmd = run.command(&["-p", "hello"]);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (run.bodies().last().unwrap().to_string(), stderr(&out))
}

fn manifest(dir: &Path, name: &str) {
    write(
        &dir.join("gemini-extension.json"),
        &json!({"name": name, "version": "1.0.0"}).to_string(),
    );
}

/// A relative link from `link` to `target`, as a repository would carry.
fn relative_link(target: &Path, link: &Path) {
    let depth = link
        .parent()
        .unwrap()
        .strip_prefix(std::path::Component::RootDir.as_os_str())
        .unwrap()
        .components()
        .count();
    let up = "../".repeat(depth);
    let to = format!("{up}{}", target.strip_prefix("/").unwrap().display());
    symlink(to, link).unwrap();
}

#[test]
fn an_extensions_context_file_linked_outside_it_is_not_sent() {
    let run = Run::new(json!({"steps": [{"text": "ok"}], "after_steps": {"text": "ok"}}));
    let key = secret(&run);
    let src = run.home.parent().unwrap().join("src/notes");
    manifest(&src, "notes");
    write(&src.join("GEMINI.md"), "Notes extension context.");
    let out = run.run(&["extensions", "link", src.to_str().unwrap(), "--consent"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The linked folder changes after the consent: its GEMINI.md becomes a
    // link to the key.
    std::fs::remove_file(src.join("GEMINI.md")).unwrap();
    relative_link(&key, &src.join("GEMINI.md"));
    assert!(
        std::fs::read_to_string(src.join("GEMINI.md"))
            .unwrap()
            .contains(SECRET)
    );

    let (request, err) = turn(&run, None);
    assert!(!request.contains(SECRET), "the key was sent: {request}");
    assert!(
        err.contains("GEMINI.md") && err.contains("outside the extension \"notes\""),
        "{err}"
    );
}

#[test]
fn an_extensions_import_may_not_leave_it_even_in_a_home_under_git() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    let key = secret(&run);
    // A home folder that is a git repository (dotfiles) made the home the
    // extension's "project root", so `@../../../.ssh/id_rsa` was allowed.
    git(&run.home, &["init", "-q"]);
    let ws_secret = run.ws.join("secret.env");
    write(&ws_secret, &format!("TOKEN={SECRET}-ws"));
    let src = run.home.parent().unwrap().join("src/importer");
    manifest(&src, "importer");
    write(&src.join("docs/own.md"), "Own import works.");
    // Installed at ~/.gemini/extensions/importer: three levels below home.
    write(
        &src.join("GEMINI.md"),
        &format!(
            "Importer context.\n@./docs/own.md\n@../../../.ssh/id_rsa\n@{}\n@{}\n",
            key.display(),
            ws_secret.display()
        ),
    );
    let out = run.run(&["extensions", "install", src.to_str().unwrap(), "--consent"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let (request, _) = turn(&run, None);
    assert!(request.contains("Own import works."), "{request}");
    assert!(
        !request.contains(SECRET),
        "a file outside was sent: {request}"
    );
    assert!(
        request.contains(
            "Import failed: ../../../.ssh/id_rsa - Path is outside the allowed directories"
        ),
        "{request}"
    );
}

#[test]
fn installing_an_extension_with_a_link_outside_it_is_refused() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    let key = secret(&run);
    let base = run.home.parent().unwrap().to_path_buf();
    let src = base.join("src/leaky");
    manifest(&src, "leaky");
    relative_link(&key, &src.join("GEMINI.md"));
    let expected = "leaky cannot be installed: it has symbolic links that lead outside its folder";
    for args in [
        vec!["extensions", "install", src.to_str().unwrap(), "--consent"],
        vec!["extensions", "link", src.to_str().unwrap(), "--consent"],
    ] {
        let out = run.run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(expected), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("GEMINI.md -> ../"),
            "{}",
            stderr(&out)
        );
        assert!(!run.home.join(".gemini/extensions/leaky").exists());
    }
    // From git (a clone keeps the link): refused as well.
    git(&src, &["init", "-q", "-b", "main"]);
    git(&src, &["add", "."]);
    git(&src, &["commit", "-q", "-m", "v1"]);
    let url = format!("file://{}", src.display());
    let out = run.run(&["extensions", "install", &url, "--consent"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(expected), "{}", stderr(&out));
    assert!(!run.home.join(".gemini/extensions/leaky").exists());
    let (request, _) = turn(&run, None);
    assert!(!request.contains(SECRET));
}

#[test]
fn an_extension_linking_to_its_own_file_installs_and_its_consent_lists_the_link() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    let src = run.home.parent().unwrap().join("src/tidy");
    manifest(&src, "tidy");
    write(&src.join("docs/context.md"), "Tidy context through a link.");
    symlink("docs/context.md", src.join("GEMINI.md")).unwrap();
    // Without --consent (and no terminal to answer on) the text is shown
    // and nothing is installed.
    let out = run.run(&["extensions", "install", src.to_str().unwrap()]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        shown.contains("symbolic links, each to a file of its own")
            && shown.contains("GEMINI.md -> docs/context.md"),
        "{shown}"
    );
    let out = run.run(&["extensions", "install", src.to_str().unwrap(), "--consent"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (request, err) = turn(&run, None);
    assert!(
        request.contains("Tidy context through a link."),
        "{request}\n{err}"
    );
}

#[test]
fn a_workspace_gemini_md_linked_outside_is_not_sent_but_one_inside_is() {
    let run = Run::new(json!({"steps": [{"text": "ok"}], "after_steps": {"text": "ok"}}));
    let key = secret(&run);
    relative_link(&key, &run.ws.join("GEMINI.md"));
    // Found by discovery below the workspace, too.
    std::fs::create_dir_all(run.ws.join("sub")).unwrap();
    relative_link(&key, &run.ws.join("sub/GEMINI.md"));
    let (request, err) = turn(&run, None);
    assert!(!request.contains(SECRET), "the key was sent: {request}");
    assert!(
        err.contains("Context file GEMINI.md skipped: it leads to")
            && err.contains("outside the workspace"),
        "{err}"
    );

    std::fs::remove_file(run.ws.join("GEMINI.md")).unwrap();
    write(
        &run.ws.join("docs/rules.md"),
        "Rules through an inside link.",
    );
    symlink("docs/rules.md", run.ws.join("GEMINI.md")).unwrap();
    let (request, err) = turn(&run, None);
    assert!(
        request.contains("Rules through an inside link."),
        "{request}"
    );
    assert!(!request.contains(SECRET));
    assert!(!err.contains("skipped"), "{err}");
}

#[test]
fn a_workspace_import_outside_is_refused_even_in_a_home_under_git() {
    let run = Run::new(json!({"steps": [{"text": "ok"}], "after_steps": {"text": "ok"}}));
    secret(&run);
    // A workspace inside a home that is a git repository (dotfiles): the
    // home was its project root, so imports could reach ~/.ssh.
    git(&run.home, &["init", "-q"]);
    let ws = run.home.join("Downloads/project");
    write(
        &ws.join("GEMINI.md"),
        "Project rules.\n@../../.ssh/id_rsa\n@./inside.md\n",
    );
    write(&ws.join("inside.md"), "Inside import works.");
    run.write_settings(
        &run.trusted_folders(),
        &json!({ws.to_str().unwrap(): "TRUST_FOLDER"}).to_string(),
    );
    let (request, _) = turn(&run, Some(&ws));
    assert!(request.contains("Project rules."), "{request}");
    assert!(request.contains("Inside import works."), "{request}");
    assert!(!request.contains(SECRET), "the key was sent: {request}");
    assert!(
        request
            .contains("Import failed: ../../.ssh/id_rsa - Path is outside the allowed directories"),
        "{request}"
    );
}
