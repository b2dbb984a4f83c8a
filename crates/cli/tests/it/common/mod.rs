//! The headless CLI run as a real process against the fake Gemini server,
//! in a temporary HOME and workspace.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use gd_fake_gemini::FakeGemini;
use gd_fake_gemini::fixtures::copy_peer_workspace;
use serde_json::{Value, json};

pub struct Run {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub ws: PathBuf,
    pub fake: FakeGemini,
}

impl Run {
    pub fn new(scenario: Value) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        let ws = copy_peer_workspace(dir.path());
        let fake = FakeGemini::start_with_vars(scenario, &[("WORKSPACE", ws.to_str().unwrap())]);
        let run = Self {
            _dir: dir,
            home,
            ws,
            fake,
        };
        // Folder trust is on by default, as in Gemini CLI: the runs happen
        // in a folder the user trusted (see `untrust` for the other case).
        run.write_settings(
            &run.trusted_folders(),
            &json!({run.ws.to_str().unwrap(): "TRUST_FOLDER"}).to_string(),
        );
        run
    }

    /// `~/.gemini/trustedFolders.json`.
    pub fn trusted_folders(&self) -> PathBuf {
        self.home.join(".gemini/trustedFolders.json")
    }

    /// Forgets that the workspace was trusted (no rule for it).
    pub fn untrust(&self) {
        std::fs::remove_file(self.trusted_folders()).unwrap();
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gemini-desktop-cli"));
        cmd.args(args)
            .current_dir(&self.ws)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("GEMINI_API_KEY", "fake-key")
            .env("GOOGLE_GEMINI_BASE_URL", self.fake.base_url())
            .env("GEMINI_DESKTOP_RETRY_INITIAL_MS", "1")
            .env("GEMINI_DESKTOP_RETRY_MAX_MS", "5")
            .stdin(Stdio::null());
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("the CLI runs")
    }

    pub fn write_settings(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    pub fn user_settings(&self) -> PathBuf {
        self.home.join(".gemini/settings.json")
    }

    pub fn bodies(&self) -> Vec<Value> {
        self.fake
            .main_requests()
            .into_iter()
            .map(|r| r.body.unwrap())
            .collect()
    }
}

/// The `functionResponse.response` objects of request `request` (its last message: the answers
/// to the tool calls of the step before).
pub fn responses(run: &Run, request: usize) -> Vec<Value> {
    let body = &run.bodies()[request];
    body["contents"].as_array().unwrap().last().unwrap()["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["functionResponse"]["response"].clone())
        .collect()
}

pub fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

pub fn stderr_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stderr).unwrap_or_else(|e| {
        panic!(
            "stderr is not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The key structure of a JSON value (objects' keys, recursively), so two
/// outputs can be compared in shape while their numbers differ.
pub fn shape(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), shape(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        Value::String(_) => json!("string"),
        Value::Number(_) => json!(0),
        other => other.clone(),
    }
}

/// The python with the `mcp` package (`GD_TEST_MCP_PYTHON`, else the venv
/// scripts/install-mcp-test-deps.sh installs). Like gd-mcp's server tests,
/// a missing interpreter fails the test rather than skipping it.
pub fn mcp_python() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var_os("GD_TEST_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/test-deps/venv-mcp/bin/python"));
    assert!(
        python.exists(),
        "{} not found: run scripts/install-mcp-test-deps.sh (or scripts/install-deps.sh --test), or set GD_TEST_MCP_PYTHON",
        python.display()
    );
    python
}

/// The fixture server's interpreter and script.
pub fn fixture_server() -> (String, String) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("tests/fixtures/mcp/fixture_server.py");
    (
        mcp_python().to_str().unwrap().to_owned(),
        script.to_str().unwrap().to_owned(),
    )
}

/// The user's texts in a request's first message, after the session
/// context.
pub fn prompt_texts(body: &Value) -> Vec<String> {
    body["contents"][0]["parts"].as_array().unwrap()[1..]
        .iter()
        .map(|p| p["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// A workspace settings file with the fixture server as `fixture`.
pub fn workspace_settings(run: &Run, python: &str, script: &str, trust: bool) {
    let settings = serde_json::json!({
        "mcpServers": {
            "fixture": {
                "command": python,
                "args": [script, "stdio"],
                "trust": trust,
                "timeout": 30000
            }
        }
    });
    run.write_settings(
        &run.ws.join(".gemini/settings.json"),
        &serde_json::to_string_pretty(&settings).unwrap(),
    );
}

/// Runs `git` in `dir` with a fixed identity; panics with its error.
pub fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
