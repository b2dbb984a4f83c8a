//! `-e/--extensions` and `-l/--list-extensions` through the real binary:
//! a run uses exactly the named extensions (even a disabled one, as 0.61),
//! `-e none` uses none, an unknown name is reported, and `-l` lists them.

use crate::common;

use common::*;
use serde_json::json;

/// Links an extension whose context file carries `<name>-MARKER`.
fn linked(run: &Run, name: &str) {
    let dir = run.home.parent().unwrap().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("gemini-extension.json"),
        json!({"name": name, "version": "1.0.0"}).to_string(),
    )
    .unwrap();
    std::fs::write(dir.join("GEMINI.md"), format!("{name}-MARKER\n")).unwrap();
    let out = run.run(&["extensions", "link", dir.to_str().unwrap(), "--consent"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// The markers of the extensions whose context reached the model.
fn used(run: &Run, args: &[&str]) -> (Vec<&'static str>, String) {
    let out = run.run(args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = run.bodies().last().unwrap().to_string();
    let names = ["alpha", "beta", "gamma"]
        .into_iter()
        .filter(|n| body.contains(&format!("{n}-MARKER")))
        .collect();
    (names, stderr(&out))
}

#[test]
fn a_run_uses_exactly_the_named_extensions() {
    let run = Run::new(json!({"steps": [{"text": "ok"}], "after_steps": {"text": "ok"}}));
    for name in ["alpha", "beta", "gamma"] {
        linked(&run, name);
    }
    let out = run.run(&["extensions", "disable", "gamma", "--scope", "workspace"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    assert_eq!(used(&run, &["-p", "hi"]).0, vec!["alpha", "beta"]);
    assert_eq!(used(&run, &["-p", "hi", "-e", "BETA"]).0, vec!["beta"]);
    // Named, a disabled one is used too; both spellings of a list work.
    assert_eq!(
        used(&run, &["-p", "hi", "-e", "alpha,gamma"]).0,
        vec!["alpha", "gamma"]
    );
    assert_eq!(
        used(&run, &["-p", "hi", "-e", "alpha", "-e", "beta"]).0,
        vec!["alpha", "beta"]
    );
    assert!(used(&run, &["-p", "hi", "-e", "none"]).0.is_empty());
    let (names, err) = used(&run, &["-p", "hi", "-e", "alpha,nope"]);
    assert_eq!(names, vec!["alpha"]);
    assert!(err.contains("Extension not found: nope"), "{err}");
}

#[test]
fn list_extensions_prints_them_and_exits() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    linked(&run, "alpha");
    linked(&run, "beta");
    let out = run.run(&["-l"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Installed extensions:\n- alpha\n- beta\n"
    );
    assert!(run.bodies().is_empty(), "the model was asked");
}
