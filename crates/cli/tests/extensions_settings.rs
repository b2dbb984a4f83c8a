//! `extensions install` asking for an extension's settings on a real
//! terminal (a pty driven by Python): each setting is asked with 0.61's
//! prompt, a sensitive one is not echoed, and it is kept in the secret
//! store (here gd-auth's 0600 file: no keyring in this test), never in the
//! extension's `.env`.

mod common;

use std::process::Command;

use common::*;
use serde_json::json;

/// Runs `cli` under a pseudo-terminal, answering each prompt that ends in
/// "› " with the next answer; prints what the terminal showed, exits with
/// the CLI's code.
const PTY_DRIVER: &str = r#"
import os, pty, sys
answers = sys.argv[1].split("\x1f")
args = sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(args[0], args)
shown = b""
def more():
    global shown
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        return False
    shown += chunk
    return bool(chunk)
for answer in answers:
    while shown.count("› ".encode()) <= answers.index(answer) and more():
        pass
    os.write(fd, answer.encode() + b"\r")
while more():
    pass
_, status = os.waitpid(pid, 0)
sys.stdout.write(shown.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
"#;

#[test]
fn install_asks_for_each_setting_and_a_secret_is_neither_echoed_nor_in_a_file() {
    let run = Run::new(json!({"steps": []}));
    let src = run.home.parent().unwrap().join("needs-settings");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("gemini-extension.json"),
        json!({"name": "needs-settings", "version": "1.0.0", "settings": [
            {"name": "Region", "description": "Where the service runs", "envVar": "SVC_REGION"},
            {"name": "Token", "description": "Your API token", "envVar": "SVC_TOKEN", "sensitive": true}
        ]})
        .to_string(),
    )
    .unwrap();
    let secret = "pty-secret-7d1c";
    let cli = run.command(&["extensions", "install", src.to_str().unwrap(), "--consent"]);
    let mut py = Command::new("python3");
    py.arg("-c")
        .arg(PTY_DRIVER)
        .arg(format!("eu-west\x1f{secret}"))
        .arg(cli.get_program())
        .args(cli.get_args())
        .current_dir(cli.get_current_dir().unwrap())
        .env_clear();
    for (key, value) in cli.get_envs() {
        if let Some(value) = value {
            py.env(key, value);
        }
    }
    // No keyring here: the secret goes to gd-auth's 0600 file.
    py.env("GEMINI_DESKTOP_SECRET_STORE", "file");
    let out = py.output().unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{shown}\n{}", stderr(&out));
    assert!(
        shown.contains("? Region\r\nWhere the service runs › "),
        "{shown}"
    );
    assert!(shown.contains("? Token\r\nYour API token › "), "{shown}");
    assert!(
        shown.contains("eu-west"),
        "a plain answer is echoed: {shown}"
    );
    assert!(!shown.contains(secret), "the secret was echoed: {shown}");
    assert!(
        shown.contains("Extension \"needs-settings\" installed successfully and enabled."),
        "{shown}"
    );

    let ext = run.home.join(".gemini/extensions/needs-settings");
    let env = std::fs::read_to_string(ext.join(".env")).unwrap();
    assert_eq!(env, "SVC_REGION=\"eu-west\"\n");
    let secrets = run.home.join(".gemini/gemini-desktop/secrets.json");
    let kept = std::fs::read_to_string(&secrets).unwrap();
    assert!(kept.contains(secret), "the secret is kept in the store");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&secrets).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // `list -o json` reports both set.
    let list = run.run(&["extensions", "list", "-o", "json"]);
    let list: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let settings = &list[0]["contributes"]["settings"];
    assert_eq!(settings[0]["is_set"], true, "{settings}");
    assert_eq!(settings[1]["is_set"], true, "{settings}");
}
