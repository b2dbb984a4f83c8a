//! Issue 36 end to end: the headless CLI with `security.toolSandboxing` in YOLO mode, a model
//! that writes outside the workspace, into HOME, through a symlink out of it, and connects to
//! a server on the host's loopback. Gemini CLI 0.61 refuses the three writes; so do we, and the
//! connection too. Each case is run with bash first, so it is known to do what it says when
//! nothing stops it.

use crate::common;

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Run, stderr};
use serde_json::{Value, json};

/// A folder outside the workspace and outside /tmp (the sandbox's /tmp is its own, so a
/// folder under the host's /tmp would be refused for being invisible rather than read-only).
fn outside_folder() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// A run whose model runs each of `commands` in one step, then says "done".
fn scripted(commands: &[String]) -> Run {
    let calls: Vec<Value> = commands
        .iter()
        .map(|c| json!({"name": "run_shell_command", "args": {"command": c}}))
        .collect();
    Run::new(json!({"steps": [{"functionCalls": calls}, {"text": "done"}]}))
}

fn sandbox_on(run: &Run) {
    run.write_settings(
        &run.user_settings(),
        r#"{"security": {"toolSandboxing": true}}"#,
    );
}

/// The three writes of the issue, against `outside` and HOME.
fn writes(outside: &Path, home: &Path) -> (Vec<String>, Vec<PathBuf>) {
    let commands = vec![
        format!("touch {}/touched", outside.display()),
        "echo x > $HOME/echoed".to_owned(),
        format!(
            "ln -s {} link && echo x > link/through-link",
            outside.display()
        ),
    ];
    let targets = vec![
        outside.join("touched"),
        home.join("echoed"),
        outside.join("through-link"),
    ];
    (commands, targets)
}

/// Runs `command` with bash in `ws` (HOME = `home`): it must create `target`, which is then
/// removed again (with the symlink it made).
fn bash_creates(command: &str, ws: &Path, home: &Path, target: &Path) {
    Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(ws)
        .env("HOME", home)
        .output()
        .expect("bash runs");
    assert!(
        target.exists(),
        "bash itself does not create {} with {command:?}: the case proves nothing",
        target.display()
    );
    std::fs::remove_file(target).unwrap();
    let _ = std::fs::remove_file(ws.join("link"));
}

#[test]
fn the_three_writes_are_refused_in_yolo_mode_and_the_model_hears_why() {
    let outside = outside_folder();
    // The commands do not depend on HOME (`$HOME` is expanded when they run). The run's HOME
    // is under /tmp, which the sandbox replaces with its own: that write is refused all the
    // same, which is what counts.
    let run = scripted(&writes(outside.path(), Path::new("/")).0);
    let (commands, targets) = writes(outside.path(), &run.home);
    for (command, target) in commands.iter().zip(&targets) {
        bash_creates(command, &run.ws, &run.home, target);
    }
    sandbox_on(&run);

    let out = run.run(&["-p", "write", "--yolo", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for target in &targets {
        assert!(!target.exists(), "{} was written", target.display());
    }
    let answers = common::responses(&run, 1);
    assert_eq!(answers.len(), 3, "{answers:?}");
    for (command, answer) in commands.iter().zip(&answers) {
        let text = answer.to_string();
        assert!(
            !text.contains("Exit Code: 0") && !text.contains("\"exit_code\":0"),
            "{command:?} succeeded: {answer}"
        );
    }
    // The write outside the workspace is named to the model, with why it stays refused.
    let first = answers[0].to_string();
    assert!(
        first.contains("The sandbox refused this command")
            && first.contains(&outside.path().join("touched").display().to_string())
            && first.contains("Nobody could be asked"),
        "{first}"
    );
}

/// A listener on the host's loopback, and whether anyone connected to it.
struct Listener(TcpListener);

impl Listener {
    fn open() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        Self(listener)
    }

    fn port(&self) -> u16 {
        self.0.local_addr().unwrap().port()
    }

    fn connected(&self) -> bool {
        match self.0.accept() {
            Ok(_) => true,
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            Err(e) => panic!("accept: {e}"),
        }
    }
}

/// `bash`'s own TCP client: no curl or python needed.
fn connect_command(port: u16) -> String {
    format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
}

#[test]
fn a_connection_fails_in_the_sandbox_unless_the_settings_grant_the_network() {
    let listener = Listener::open();
    let run = scripted(&[connect_command(listener.port())]);
    sandbox_on(&run);
    let out = run.run(&["-p", "connect", "--yolo", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !listener.connected(),
        "a sandboxed command reached the host"
    );
    let answer = common::responses(&run, 1)[0].to_string();
    assert!(!answer.contains("connected\\n"), "{answer}");

    let listener = Listener::open();
    let run = scripted(&[connect_command(listener.port())]);
    run.write_settings(
        &run.user_settings(),
        r#"{"security": {"toolSandboxing": true, "sandbox": {"network": "all"}}}"#,
    );
    let out = run.run(&["-p", "connect", "--yolo", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        listener.connected(),
        "network \"all\" did not reach the host: {}",
        common::responses(&run, 1)[0]
    );
}

#[test]
fn the_workspace_stays_writable_and_git_works_in_the_sandbox() {
    let run = scripted(&[
        "git add -A && git -c user.name=t -c user.email=t@t commit -qm first \
         && echo ok > made.txt && git status --short"
            .to_owned(),
    ]);
    // The user's repository (a command cannot `git init` one in the sandbox: it could plant
    // hooks in it).
    common::git(&run.ws, &["init", "-q"]);
    sandbox_on(&run);
    let out = run.run(&["-p", "work", "--yolo", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answer = common::responses(&run, 1)[0].to_string();
    assert!(run.ws.join("made.txt").is_file(), "{answer}");
    assert!(answer.contains("?? made.txt"), "{answer}");
}

#[test]
fn a_sandbox_that_cannot_start_refuses_the_command() {
    let outside = outside_folder();
    let target = outside.path().join("touched");
    let run = scripted(&[format!("touch {}", target.display())]);
    sandbox_on(&run);
    let out = run
        .command(&["-p", "touch", "--yolo", "-o", "json"])
        .env("GEMINI_DESKTOP_BWRAP", "/nonexistent/bwrap")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!target.exists(), "the command ran unconfined");
    let answer = common::responses(&run, 1)[0].to_string();
    assert!(
        answer.contains("The command was not run") && answer.contains("bubblewrap"),
        "{answer}"
    );
}

#[test]
fn yolo_without_the_sandbox_says_what_it_means() {
    let run = scripted(&["true".to_owned()]);
    let out = run.run(&["-p", "go", "--yolo", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let warnings = common::stdout_json(&out)["warnings"].to_string();
    assert!(
        warnings.contains("Commands run without a sandbox"),
        "{warnings}"
    );
}
