//! A session wired to the fake Gemini server, with helpers to run turns and
//! inspect what the model was sent.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use gd_core::tools::ToolRegistry;
use gd_core::{Session, SessionConfig, SessionHandle};
use gd_fake_gemini::{FakeGemini, RecordedRequest};
use gd_gemini::{Backend, ClientOptions, GeminiClient, RetryPolicy, SecretString};
use gd_protocol::{Event, Op, TurnStatus};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;

pub const MODEL: &str = "gemini-2.5-flash";
pub const SYSTEM_PROMPT: &str = "You are a test agent.";

pub struct Harness {
    pub fake: FakeGemini,
    pub workspace: PathBuf,
    pub handle: SessionHandle,
    pub events: UnboundedReceiver<Event>,
    pub _dir: tempfile::TempDir,
}

/// A copy of the peer-bench workspace (`hello.txt`, `README.md`, `src/main.rs`).
pub fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = gd_fake_gemini::fixtures::copy_peer_workspace(dir.path());
    (dir, ws)
}

pub fn fast_retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        initial_delay: Duration::from_millis(2),
        max_delay: Duration::from_millis(20),
        jitter: 0.0,
        max_server_delay: Duration::from_secs(5),
    }
}

pub fn client_for(fake: &FakeGemini, retry: RetryPolicy) -> GeminiClient {
    let backend = Backend::GeminiApi {
        base_url: fake.base_url(),
        api_version: "v1beta".into(),
        api_key: SecretString::new("test-key"),
    };
    GeminiClient::new(
        backend,
        ClientOptions {
            retry,
            ..ClientOptions::default()
        },
    )
    .unwrap()
}

impl Harness {
    pub fn start(scenario: Value) -> Self {
        Self::start_with(scenario, |_| {})
    }

    pub fn start_with(scenario: Value, configure: impl FnOnce(&mut SessionConfig)) -> Self {
        Self::start_with_policy(
            scenario,
            configure,
            std::sync::Arc::new(gd_core::approval::AllowAll),
        )
    }

    /// A session whose tool calls are decided by `policy`.
    pub fn start_with_policy(
        scenario: Value,
        configure: impl FnOnce(&mut SessionConfig),
        policy: std::sync::Arc<dyn gd_core::approval::ApprovalPolicy>,
    ) -> Self {
        Self::start_with_tools(scenario, configure, policy, |_| {
            ToolRegistry::with_builtins().into()
        })
    }

    /// Like `start_with_policy`, with the session's tools made by `tools`
    /// from the workspace path (MCP servers, for instance).
    pub fn start_with_tools(
        scenario: Value,
        configure: impl FnOnce(&mut SessionConfig),
        policy: std::sync::Arc<dyn gd_core::approval::ApprovalPolicy>,
        tools: impl FnOnce(&std::path::Path) -> gd_core::tools::live::SessionTools,
    ) -> Self {
        let (dir, ws) = workspace();
        let fake = FakeGemini::start_with_vars(scenario, &[("WORKSPACE", ws.to_str().unwrap())]);
        let mut config = SessionConfig::new(MODEL, ws.clone(), SYSTEM_PROMPT.into());
        config.temp_dir = dir.path().join("tmp");
        configure(&mut config);
        let client = client_for(&fake, fast_retry(3));
        let (handle, events) = Session::spawn(config, client, tools(&ws), policy);
        Self {
            fake,
            workspace: ws,
            handle,
            events,
            _dir: dir,
        }
    }

    /// Submits a prompt and returns the turn's events (through TurnComplete).
    pub async fn turn(&mut self, prompt: &str) -> Vec<Event> {
        self.handle.submit(Op::user_text(prompt)).unwrap();
        self.collect_turn().await
    }

    pub async fn collect_turn(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        loop {
            let event = tokio::time::timeout(Duration::from_secs(30), self.events.recv())
                .await
                .expect("turn did not complete within 30 s")
                .expect("session ended");
            let done = matches!(event, Event::TurnComplete { .. });
            events.push(event);
            if done {
                return events;
            }
        }
    }

    pub fn reset(&self, scenario: Value) {
        self.fake
            .reset(scenario, &[("WORKSPACE", self.workspace.to_str().unwrap())]);
    }

    /// Bodies of the main (chat) requests, in order.
    pub fn bodies(&self) -> Vec<Value> {
        self.fake.main_requests().into_iter().map(body).collect()
    }

    pub fn ws(&self) -> String {
        self.workspace.display().to_string()
    }
}

pub fn body(request: RecordedRequest) -> Value {
    request.body.expect("request had a JSON body")
}

pub fn status(events: &[Event]) -> TurnStatus {
    match events.last() {
        Some(Event::TurnComplete { status, .. }) => *status,
        other => panic!("last event is not TurnComplete: {other:?}"),
    }
}

pub fn text(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ContentDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

pub fn errors(events: &[Event]) -> Vec<(gd_protocol::ErrorKind, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Error { kind, message, .. } => Some((*kind, message.clone())),
            _ => None,
        })
        .collect()
}

pub fn event_types(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// Removes every `description` key, recursively (descriptions are our own prose).
pub fn strip_descriptions(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("description");
            map.values_mut().for_each(strip_descriptions);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_descriptions),
        _ => {}
    }
}

/// The python with `mcp` (scripts/install-mcp-test-deps.sh); missing, the
/// test fails rather than skips.
pub fn mcp_python() -> PathBuf {
    let python = std::env::var_os("GD_TEST_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/test-deps/venv-mcp/bin/python")
        });
    assert!(
        python.exists(),
        "{} not found: run scripts/install-mcp-test-deps.sh or set GD_TEST_MCP_PYTHON",
        python.display()
    );
    python
}

/// The built-in tools plus the untrusted python fixture server
/// (`tests/fixtures/mcp/fixture_server.py`) as `fixture`, started at once
/// (the session holds its first request until discovery completes).
pub fn with_fixture_server(workspace: &std::path::Path) -> gd_core::tools::live::SessionTools {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/mcp/fixture_server.py");
    let servers = serde_json::json!({"fixture": {
        "command": mcp_python(),
        "args": [script, "stdio"],
        "timeout": 60000
    }});
    let manager = gd_mcp::McpManager::new(gd_mcp::McpOptions::new(
        servers.as_object().unwrap(),
        vec![workspace.to_path_buf()],
    ));
    manager.start();
    gd_core::tools::live::SessionTools {
        registry: ToolRegistry::with_builtins(),
        mcp: Some(gd_core::tools::mcp::McpTools::new(manager)),
    }
}

/// Replaces `{{WORKSPACE}}` in a fixture.
pub fn with_workspace(value: &Value, ws: &str) -> Value {
    serde_json::from_str(&value.to_string().replace("{{WORKSPACE}}", ws)).unwrap()
}

/// Checks history validity: every model message with function calls is
/// followed by a user message answering each call id, in order.
pub fn assert_valid_history(contents: &[Value]) {
    for (i, content) in contents.iter().enumerate() {
        let parts = content["parts"].as_array().expect("parts");
        assert!(!parts.is_empty(), "content {i} has no parts");
        let calls: Vec<&Value> = parts.iter().filter_map(|p| p.get("functionCall")).collect();
        if calls.is_empty() {
            continue;
        }
        assert_eq!(content["role"], "model");
        let next = contents
            .get(i + 1)
            .unwrap_or_else(|| panic!("calls at {i} are not answered"));
        assert_eq!(next["role"], "user");
        // A subagent's calls are echoed without ids (as 0.61 does): their
        // answers are matched by name, in order.
        let key = if calls.iter().all(|c| c.get("id").is_none()) {
            "name"
        } else {
            "id"
        };
        let answered: Vec<&Value> = next["parts"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p.get("functionResponse").map(|r| &r[key]))
            .collect();
        let asked: Vec<&Value> = calls.iter().map(|c| &c[key]).collect();
        assert_eq!(
            asked,
            answered,
            "responses at {} do not match calls at {i}",
            i + 1
        );
    }
    assert!(
        contents.iter().all(|c| c["parts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p.get("thought").is_none())),
        "thought parts must not be sent back"
    );
}

/// An object's keys, sorted (to compare request shapes with the fixtures).
pub fn keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

/// Compares one of our schemas with 0.61's, field for field. A fixture
/// description redacted as `<redacted: N chars>` only needs one of ours.
pub fn assert_same_schema(ours: &Value, theirs: &Value, path: &str) {
    match (ours, theirs) {
        (Value::Object(o), Value::Object(t)) => {
            assert_eq!(keys(ours), keys(theirs), "keys of {path}");
            for (key, their_value) in t {
                let here = format!("{path}.{key}");
                match (key.as_str(), their_value.as_str()) {
                    ("description", Some(text)) if text.starts_with("<redacted") => {
                        let mine = o[key].as_str().unwrap_or("");
                        assert!(!mine.trim().is_empty(), "{here} is empty");
                    }
                    _ => assert_same_schema(&o[key], their_value, &here),
                }
            }
        }
        (Value::Array(o), Value::Array(t)) => {
            assert_eq!(o.len(), t.len(), "length of {path}");
            for (i, (a, b)) in o.iter().zip(t).enumerate() {
                assert_same_schema(a, b, &format!("{path}[{i}]"));
            }
        }
        _ => assert_eq!(ours, theirs, "{path}"),
    }
}

/// The names of the tools a request declares, in order (none: empty).
pub fn declared_names(body: &Value) -> Vec<String> {
    body["tools"][0]["functionDeclarations"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|d| d["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Writes `text` to `path`, creating its folders.
pub fn write_creating(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A home folder and a workspace side by side in one temporary folder,
/// for the definitions read from both (agents, skills). Test files add
/// their own loading methods.
pub struct Dirs {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub ws: PathBuf,
}

impl Dirs {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        Self {
            _dir: dir,
            home,
            ws,
        }
    }
}

/// A hook script in `dir` (`#!/bin/sh` and `body`), made executable; its path.
pub fn hook_script(dir: &std::path::Path, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// A session's hooks from a `hooks` settings object (the user's).
pub fn hook_registry(hooks: Value) -> std::sync::Arc<gd_hooks::HookRegistry> {
    let (defs, errors) = gd_hooks::config::parse_hooks(
        &hooks,
        gd_hooks::HookSource::User,
        None,
        std::path::Path::new("settings.json"),
    );
    assert!(errors.is_empty(), "{errors:?}");
    std::sync::Arc::new(gd_hooks::HookRegistry::new(
        defs,
        gd_hooks::HooksConfig::default(),
        gd_hooks::HookEnv::default(),
    ))
}

/// Every text part of a request's contents, in order.
pub fn request_texts(body: &Value) -> Vec<String> {
    body["contents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["parts"].as_array().unwrap().iter())
        .filter_map(|p| p["text"].as_str().map(str::to_owned))
        .collect()
}

impl Dirs {
    /// A headless YOLO session in this trusted workspace whose memory (and
    /// so extensions' context) is read from these folders: the setup of the
    /// extension op tests.
    pub fn extension_session(&self) -> Harness {
        let (home, ws) = (self.home.clone(), self.ws.clone());
        Harness::start_with_tools(
            serde_json::json!({"steps": []}),
            move |c| {
                c.workspace_trusted = true;
                c.memory = Some(gd_core::memory::DiscoveryOptions {
                    workspace: ws,
                    home: Some(home),
                    file_names: vec!["GEMINI.md".into()],
                    max_dirs: 10,
                    filtering: gd_core::config::FileFiltering::default(),
                    workspace_files: true,
                    boundary_markers: None,
                    include_directories: false,
                });
            },
            std::sync::Arc::new(gd_core::policy::PolicyApproval::new(
                gd_policy::PolicyEngine::new(gd_policy::default_rules()),
                gd_protocol::ApprovalMode::Yolo,
                false,
                None,
            )),
            |_| ToolRegistry::with_builtins().into(),
        )
    }
}

impl Harness {
    /// Submits `Op::PreviewExtension` for the extension folder `source`
    /// (copied, not linked); the answer is `Event::ExtensionPreview`.
    pub fn preview_extension(&self, source: &std::path::Path) {
        self.handle
            .submit(Op::PreviewExtension {
                spec: gd_protocol::ExtensionSourceSpec {
                    source: source.to_str().expect("a UTF-8 path").into(),
                    git_ref: None,
                    link: false,
                    auto_update: false,
                },
            })
            .unwrap();
    }
}

/// Context-file discovery for `ws` with `home` as the home folder, with
/// the defaults a session uses (`GEMINI.md`, 200 folders).
pub fn memory_options(
    ws: &std::path::Path,
    home: &std::path::Path,
) -> gd_core::memory::DiscoveryOptions {
    gd_core::memory::DiscoveryOptions {
        workspace: ws.to_path_buf(),
        home: Some(home.to_path_buf()),
        file_names: vec!["GEMINI.md".into()],
        max_dirs: 200,
        filtering: gd_core::config::FileFiltering::default(),
        workspace_files: true,
        boundary_markers: None,
        include_directories: false,
    }
}
