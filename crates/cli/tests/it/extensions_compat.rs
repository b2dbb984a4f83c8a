//! Compatibility check (issue 20): the three public extensions' fixtures
//! installed with our CLI in a temporary HOME give what the real Gemini CLI
//! 0.61 printed and wrote for them (tests/fixtures/extensions/gemini-cli-0.61).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use pretty_assertions::assert_eq;

struct Home {
    _dir: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    fixtures: PathBuf,
}

fn recorded(name: &str) -> String {
    std::fs::read_to_string(fixtures().join("gemini-cli-0.61").join(name)).unwrap()
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/extensions")
        .canonicalize()
        .unwrap()
}

impl Home {
    /// A HOME with the workspace inside it, as the recording had.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().canonicalize().unwrap().join("home");
        let ws = home.join("ws");
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        Home {
            _dir: dir,
            home,
            ws,
            fixtures: fixtures(),
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gemini-desktop-cli"));
        cmd.args(args)
            .current_dir(&self.ws)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .stdin(Stdio::null());
        cmd
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The recording's substitutions (paths, and the hashes once checked).
    fn normalize(&self, text: &str) -> String {
        text.lines()
            .map(|line| {
                let line = line
                    .replace(self.fixtures.to_str().unwrap(), "$FIXTURES")
                    .replace(self.ws.to_str().unwrap(), "$WORKSPACE")
                    .replace(self.home.to_str().unwrap(), "$HOME");
                for key in [" ID: ", " name: "] {
                    if let Some(hash) = line.strip_prefix(key)
                        && hash.len() == 64
                        && hash.chars().all(|c| c.is_ascii_hexdigit())
                    {
                        return format!("{key}<sha256>");
                    }
                }
                line
            })
            .collect::<Vec<_>>()
            .join("\n")
            + if text.ends_with('\n') { "\n" } else { "" }
    }

    fn file(&self, path: &str) -> String {
        self.normalize(&std::fs::read_to_string(self.home.join(path)).unwrap())
    }
}

const NAMES: [&str; 3] = ["gemini-cli-security", "conductor", "google-workspace"];

fn install_three(h: &Home) -> String {
    let mut out = String::new();
    for name in NAMES {
        out += &h.ok(&[
            "extensions",
            "install",
            h.fixtures.join(name).to_str().unwrap(),
            "--consent",
        ]);
    }
    out
}

#[test]
fn install_list_disable_uninstall_match_0_61() {
    let h = Home::new();
    assert_eq!(h.normalize(&install_three(&h)), recorded("install.txt"));

    let list = h.ok(&["extensions", "list"]);
    assert_eq!(h.normalize(&list), recorded("list.txt"));
    // The hashes the recording hid: sha256 of the source and of the name.
    let expected_id = gd_extensions::sha256_hex(h.fixtures.join("conductor").to_str().unwrap());
    assert!(list.contains(&format!(" ID: {expected_id}\n")), "{list}");
    assert!(list.contains(&format!(
        " name: {}\n",
        gd_extensions::sha256_hex("conductor")
    )));

    assert_eq!(
        h.file(".gemini/extensions/extension-enablement.json"),
        recorded("enablement-user.json").trim_end()
    );
    assert_eq!(
        h.file(".gemini/extensions/conductor/.gemini-extension-install.json"),
        recorded("install-metadata.json").trim_end()
    );

    let out = h.ok(&["extensions", "disable", "conductor", "--scope", "workspace"]);
    assert_eq!(out, recorded("disable-workspace.txt"));
    assert_eq!(
        h.file(".gemini/extensions/extension-enablement.json"),
        recorded("enablement-workspace-disabled.json").trim_end()
    );
    assert_eq!(
        h.normalize(&h.ok(&["extensions", "list"])),
        recorded("list-workspace-disabled.txt")
    );

    assert_eq!(
        h.ok(&["extensions", "uninstall", "google-workspace"]),
        recorded("uninstall.txt")
    );

    // Without --consent and without a terminal: the consent text and the
    // question, then a refusal; nothing installed.
    let out = h.run(&[
        "extensions",
        "install",
        h.fixtures.join("google-workspace").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let signature = |t: &str| {
        t.lines()
            .map(|l| match l.split_once("Config signature: ") {
                Some((head, _)) => format!("{head}Config signature: <sha256>"),
                None => l.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        signature(&h.normalize(&String::from_utf8_lossy(&out.stdout))),
        signature(&recorded("install-no-consent.txt"))
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--consent"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut left: Vec<String> = std::fs::read_dir(h.home.join(".gemini/extensions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left.join("\n") + "\n",
        recorded("installed-after-no-consent.txt")
    );
}

#[test]
fn the_consent_signature_is_0_61s() {
    // 0.61 recorded `7beadd…` for the workspace server with the fixtures
    // under /work/main; the same definition gives the same signature here.
    let def = serde_json::json!({
        "program": "./workspace-server/dist/index.js",
        "command": "node",
        "args": ["scripts/start.js"],
        "cwd": "/work/main/tests/fixtures/extensions/google-workspace"
    });
    assert_eq!(
        gd_extensions::consent::signature(&def),
        "7beaddf57f59a0339510e63f74d619f0f767f7ce6eb036abd10cb78eb7c293e5"
    );
}
