//! `gemini-desktop-cli extensions …` on a temporary HOME with real folders,
//! real git (a local bare repository) and, for the session, a real MCP
//! server and the fake Gemini server: link, enable, disable (user and
//! workspace), uninstall, install from git with `--ref`, update, a broken
//! manifest, and an extension's server, policy, context and excluded tool
//! active only while it is enabled.

use crate::common;

use std::path::{Path, PathBuf};

use common::*;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn ok(run: &Run, args: &[&str]) -> String {
    let out = run.run(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    text(&out)
}

/// A minimal extension folder.
fn extension(dir: &Path, name: &str, version: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("gemini-extension.json"),
        json!({"name": name, "version": version}).to_string(),
    )
    .unwrap();
    dir.to_path_buf()
}

#[test]
fn link_disable_enable_per_scope_and_uninstall() {
    let run = Run::new(json!({"steps": []}));
    let src = extension(
        &run.home.parent().unwrap().join("src/linked"),
        "linked",
        "1.0.0",
    );
    std::fs::write(src.join("GEMINI.md"), "linked context").unwrap();

    let out = ok(
        &run,
        &["extensions", "link", src.to_str().unwrap(), "--consent"],
    );
    assert!(
        out.ends_with("Extension \"linked\" linked successfully and enabled.\n"),
        "{out}"
    );
    let record = run.home.join(".gemini/extensions/linked");
    let metadata: Value = serde_json::from_str(
        &std::fs::read_to_string(record.join(".gemini-extension-install.json")).unwrap(),
    )
    .unwrap();
    let real = src.canonicalize().unwrap();
    assert_eq!(
        metadata,
        json!({"source": real.to_str().unwrap(), "type": "link"})
    );
    assert!(
        !record.join("gemini-extension.json").exists(),
        "a link is not copied"
    );

    // Read in place: a change to the folder shows at once.
    extension(&src, "linked", "1.1.0");
    let list = ok(&run, &["extensions", "list"]);
    assert!(list.starts_with("\u{2713} linked (1.1.0)\n"), "{list}");
    assert!(
        list.contains(&format!(" Path: {}\n", real.display())),
        "{list}"
    );
    assert!(list.contains(" (Type: link)\n"), "{list}");
    assert!(
        list.contains(&format!("  {}/GEMINI.md", real.display())),
        "{list}"
    );

    assert_eq!(
        ok(&run, &["extensions", "disable", "linked"]),
        "Extension \"linked\" successfully disabled for scope \"User\".\n"
    );
    // The user scope is the home folder's rule; this workspace is not
    // under HOME, so (as in 0.61) it is still on here.
    let list = ok(&run, &["extensions", "list"]);
    assert!(list.starts_with("\u{2713} linked"), "{list}");
    assert!(
        list.contains(" Enabled (User): false\n Enabled (Workspace): true"),
        "{list}"
    );
    assert_eq!(
        ok(
            &run,
            &["extensions", "disable", "linked", "--scope", "workspace"]
        ),
        "Extension \"linked\" successfully disabled for scope \"workspace\".\n"
    );
    let list = ok(&run, &["extensions", "list"]);
    assert!(list.starts_with("\u{2717} linked"), "{list}");
    assert!(
        list.contains(" Enabled (User): false\n Enabled (Workspace): false"),
        "{list}"
    );

    assert_eq!(
        ok(
            &run,
            &["extensions", "enable", "linked", "--scope", "workspace"]
        ),
        "Extension \"linked\" successfully enabled for scope \"workspace\".\n"
    );
    let list = ok(&run, &["extensions", "list"]);
    assert!(
        list.contains(" Enabled (User): false\n Enabled (Workspace): true"),
        "{list}"
    );

    let out = run.run(&["extensions", "enable", "nope"]);
    assert_eq!(out.status.code(), Some(52));
    assert_eq!(
        stderr(&out).trim(),
        "Extension with name nope does not exist."
    );

    assert_eq!(
        ok(&run, &["extensions", "uninstall", "linked"]),
        "Extension \"linked\" successfully uninstalled.\n"
    );
    assert!(!record.exists());
    assert!(
        src.join("gemini-extension.json").exists(),
        "the linked folder stays"
    );
    assert_eq!(
        ok(&run, &["extensions", "list"]),
        "No extensions installed.\n"
    );
    let enablement = std::fs::read_to_string(
        run.home
            .join(".gemini/extensions/extension-enablement.json"),
    )
    .unwrap();
    assert_eq!(enablement, "{}");

    let out = run.run(&["extensions", "uninstall", "linked"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim(),
        "Failed to uninstall \"linked\": Extension not found."
    );
}

#[test]
fn install_from_a_local_bare_repository_with_ref_then_update() {
    let run = Run::new(json!({"steps": []}));
    let base = run.home.parent().unwrap().to_path_buf();
    let work = extension(&base.join("work"), "from-git", "1.0.0");
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "v1"]);
    git(&work, &["tag", "v1"]);
    extension(&work, "from-git", "2.0.0");
    git(&work, &["commit", "-q", "-am", "v2"]);
    git(&base, &["clone", "-q", "--bare", "work", "repo.git"]);
    let url = format!("file://{}", base.join("repo.git").display());

    let out = ok(
        &run,
        &["extensions", "install", &url, "--ref", "v1", "--consent"],
    );
    assert!(
        out.ends_with("Extension \"from-git\" installed successfully and enabled.\n"),
        "{out}"
    );
    let list = ok(&run, &["extensions", "list"]);
    assert!(list.starts_with("\u{2713} from-git (1.0.0)\n"), "{list}");
    assert!(
        list.contains(&format!(" Source: {url} (Type: git)\n Ref: v1\n")),
        "{list}"
    );

    let out = run.run(&["extensions", "install", &url, "--consent"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out)
            .contains("Extension \"from-git\" is already installed. Please uninstall it first."),
        "{}",
        stderr(&out)
    );

    // The ref is kept: updating stays on v1.
    assert_eq!(
        ok(&run, &["extensions", "update", "from-git"]),
        "Extension \"from-git\" is already up to date.\n"
    );
    ok(&run, &["extensions", "uninstall", "from-git"]);
    ok(&run, &["extensions", "install", &url, "--consent"]);
    assert!(ok(&run, &["extensions", "list"]).starts_with("\u{2713} from-git (2.0.0)\n"));

    // A bad ref: git's message, nothing installed.
    ok(&run, &["extensions", "uninstall", "from-git"]);
    let out = run.run(&[
        "extensions",
        "install",
        &url,
        "--ref",
        "no-such-ref",
        "--consent",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("Failed to clone Git repository from"),
        "{}",
        stderr(&out)
    );
    assert!(!run.home.join(".gemini/extensions/from-git").exists());

    // --ref is for git sources only (0.61's message).
    let out = run.run(&[
        "extensions",
        "install",
        work.to_str().unwrap(),
        "--ref",
        "v1",
        "--consent",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim(),
        "--ref and --auto-update are not applicable for local extensions."
    );
}

#[test]
fn update_reinstalls_from_the_local_source_and_keeps_enablement() {
    let run = Run::new(json!({"steps": []}));
    let src = extension(&run.home.parent().unwrap().join("src/upd"), "upd", "1.0.0");
    ok(
        &run,
        &["extensions", "install", src.to_str().unwrap(), "--consent"],
    );
    ok(
        &run,
        &["extensions", "disable", "upd", "--scope", "workspace"],
    );
    extension(&src, "upd", "1.1.0");
    assert_eq!(
        ok(&run, &["extensions", "update", "upd"]),
        "Extension \"upd\" successfully updated: 1.0.0 \u{2192} 1.1.0.\n"
    );
    let list = ok(&run, &["extensions", "list"]);
    assert!(list.starts_with("\u{2717} upd (1.1.0)\n"), "{list}");
    assert_eq!(
        ok(&run, &["extensions", "update", "--all"]),
        "No extensions to update.\n"
    );
    let installed = run.home.join(".gemini/extensions/upd");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(installed.join(".gemini-extension-install.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let mode = std::fs::metadata(&installed).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}

#[test]
fn a_broken_manifest_names_its_path_and_line_and_the_others_still_load() {
    let run = Run::new(json!({"steps": []}));
    let dir = run.home.join(".gemini/extensions");
    extension(&dir.join("good"), "good", "1.0.0");
    std::fs::create_dir_all(dir.join("broken")).unwrap();
    let manifest = dir.join("broken/gemini-extension.json");
    std::fs::write(
        &manifest,
        "{\n  \"name\": \"broken\",\n  \"version\" 1\n}\n",
    )
    .unwrap();
    let out = run.run(&["extensions", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        text(&out).starts_with("\u{2713} good (1.0.0)\n"),
        "{}",
        text(&out)
    );
    assert!(
        stderr(&out).contains(&format!("{}:3: invalid JSON", manifest.display())),
        "{}",
        stderr(&out)
    );

    // Installing a folder whose manifest is broken names the source file.
    let src = run.home.parent().unwrap().join("src/bad");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("gemini-extension.json"),
        "{\"name\": \"bad name\", \"version\": \"1\"}",
    )
    .unwrap();
    let out = run.run(&["extensions", "install", src.to_str().unwrap(), "--consent"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(&format!(
            "{}: invalid extension name",
            src.join("gemini-extension.json").display()
        )),
        "{}",
        stderr(&out)
    );
}

/// An extension bundling the fixture MCP server (through
/// `${extensionPath}`), a context file, an excluded tool and a policy with
/// an `allow` rule (ignored: extensions cannot allow) and a `deny` rule.
fn full_extension(run: &Run) -> PathBuf {
    let (python, script) = fixture_server();
    let src = run.home.parent().unwrap().join("src/full");
    std::fs::create_dir_all(src.join("policies")).unwrap();
    std::fs::copy(&script, src.join("server.py")).unwrap();
    std::fs::write(
        src.join("gemini-extension.json"),
        serde_json::to_string_pretty(&json!({
            "name": "full",
            "version": "1.0.0",
            "mcpServers": {"extfix": {
                "command": python,
                "args": ["${extensionPath}${/}server.py", "stdio"],
                "env": {"FIXTURE_NAME": "extfix"},
                "timeout": 30000,
                "trust": true
            }},
            "excludeTools": ["glob"],
            "contextFileName": "CONTEXT.md"
        }))
        .unwrap(),
    )
    .unwrap();
    std::fs::write(src.join("CONTEXT.md"), "FULL-EXTENSION-CONTEXT-MARKER").unwrap();
    std::fs::create_dir_all(src.join("commands")).unwrap();
    std::fs::write(
        src.join("commands/shipit.toml"),
        "prompt = \"FULL-EXTENSION-COMMAND-PROMPT {{args}}\"\n",
    )
    .unwrap();
    std::fs::write(
        src.join("policies/rules.toml"),
        "[[rule]]\ntoolName = \"mcp_extfix_add\"\ndecision = \"allow\"\npriority = 900\n\n[[rule]]\ntoolName = \"mcp_extfix_echo\"\ndecision = \"deny\"\npriority = 100\n",
    )
    .unwrap();
    src
}

fn declared_names(body: &Value) -> Vec<String> {
    body["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn an_extensions_server_policy_context_and_excluded_tool_apply_only_while_enabled() {
    let run = Run::new(json!({"steps": [{"text": "one"}], "after_steps": {"text": "more"}}));
    let src = full_extension(&run);
    ok(
        &run,
        &["extensions", "install", src.to_str().unwrap(), "--consent"],
    );

    // YOLO: every tool that may run is declared, so the server's tools show;
    // the extension's deny rule still removes `echo` (deny beats YOLO).
    let out = run.run(&["-p", "one", "-o", "json", "--approval-mode", "yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = run.bodies().last().unwrap().clone();
    let names = declared_names(&body);
    assert!(names.contains(&"mcp_extfix_add".to_owned()), "{names:?}");
    assert!(
        !names.contains(&"mcp_extfix_echo".to_owned()),
        "denied by the extension's policy: {names:?}"
    );
    assert!(
        !names.contains(&"glob".to_owned()),
        "excluded by the extension: {names:?}"
    );
    assert!(
        body.to_string().contains("FULL-EXTENSION-CONTEXT-MARKER"),
        "the extension's context reaches the model"
    );

    // Default mode, headless: the extension's `allow` rule for `add` is
    // ignored and its server's `trust` stripped, so `add` would have to be
    // asked for and is not offered.
    let out = run.run(&["-p", "two", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let names = declared_names(run.bodies().last().unwrap());
    assert!(!names.contains(&"mcp_extfix_add".to_owned()), "{names:?}");

    // Its command runs while it is enabled.
    let out = run.run(&["-p", "/shipit now", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sent = run.bodies().last().unwrap().to_string();
    assert!(sent.contains("FULL-EXTENSION-COMMAND-PROMPT now"), "{sent}");

    ok(
        &run,
        &["extensions", "disable", "full", "--scope", "workspace"],
    );
    // Disabled, `/shipit` is no command: it reaches the model as typed.
    let out = run.run(&["-p", "/shipit now", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sent = run.bodies().last().unwrap().to_string();
    assert!(!sent.contains("FULL-EXTENSION-COMMAND-PROMPT"), "{sent}");
    let out = run.run(&["-p", "three", "-o", "json", "--approval-mode", "yolo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let last = run.bodies().last().unwrap().clone();
    let names = declared_names(&last);
    assert!(
        !names.iter().any(|n| n.starts_with("mcp_extfix")),
        "{names:?}"
    );
    assert!(names.contains(&"glob".to_owned()), "{names:?}");
    assert!(!last.to_string().contains("FULL-EXTENSION-CONTEXT-MARKER"));
}

#[test]
fn a_settings_server_wins_over_an_extensions_server_of_the_same_name() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    let (python, script) = fixture_server();
    workspace_settings(&run, &python, &script, true);
    let src = run.home.parent().unwrap().join("src/clash");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("gemini-extension.json"),
        json!({"name": "clash", "version": "1.0.0",
               "mcpServers": {"fixture": {"command": "/nonexistent/server"}}})
        .to_string(),
    )
    .unwrap();
    ok(
        &run,
        &["extensions", "install", src.to_str().unwrap(), "--consent"],
    );
    let out = run.run(&["-p", "hi", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let names = declared_names(&run.bodies()[0]);
    assert!(
        names.contains(&"mcp_fixture_add".to_owned()),
        "settings' server runs: {names:?}"
    );
}

#[test]
fn an_enabled_extensions_hooks_run_with_its_path_substituted() {
    let run = Run::new(json!({"steps": [{"text": "one"}, {"text": "two"}]}));
    let src = run.home.parent().unwrap().join("src/hooked");
    std::fs::create_dir_all(src.join("hooks")).unwrap();
    std::fs::write(
        src.join("gemini-extension.json"),
        json!({"name": "hooked", "version": "1.0.0"}).to_string(),
    )
    .unwrap();
    std::fs::write(
        src.join("hooks/hooks.json"),
        json!({"hooks": {"BeforeAgent": [{"hooks": [
            {"type": "command", "command": "touch '${extensionPath}/ran'"}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    ok(
        &run,
        &["extensions", "install", src.to_str().unwrap(), "--consent"],
    );
    let installed = run.home.join(".gemini/extensions/hooked");
    let out = run.run(&["-p", "one", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        installed.join("ran").exists(),
        "the hook ran in the installed copy"
    );

    std::fs::remove_file(installed.join("ran")).unwrap();
    ok(
        &run,
        &["extensions", "disable", "hooked", "--scope", "workspace"],
    );
    let out = run.run(&["-p", "two", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !installed.join("ran").exists(),
        "a disabled extension's hook does not run"
    );
}
