//! The typed view of the settings the agent uses. Every field is optional;
//! keys this version does not know are ignored (and preserved on disk, since
//! we never rewrite files from this view).

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// Merged settings.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Settings {
    #[serde(deserialize_with = "model_settings")]
    pub model: ModelSettings,
    pub security: SecuritySettings,
    pub context: ContextSettings,
    pub general: GeneralSettings,
    pub tools: ToolsSettings,
    /// `mcpServers`: MCP servers by name. Kept as JSON here: each entry is
    /// checked on its own when the servers start (gd-mcp), so one broken
    /// entry does not make the whole file unusable.
    pub mcp_servers: serde_json::Map<String, serde_json::Value>,
    pub mcp: McpSettings,
    pub ui: UiSettings,
    pub advanced: AdvancedSettings,
    pub billing: BillingSettings,
    /// `policyPaths`: more policy files or directories (User tier).
    #[serde(deserialize_with = "lenient")]
    pub policy_paths: Option<Vec<String>>,
    /// `adminPolicyPaths`: more policy files or directories (Admin tier).
    #[serde(deserialize_with = "lenient")]
    pub admin_policy_paths: Option<Vec<String>>,
    pub agents: AgentsSettings,
    pub skills: SkillsSettings,
    pub experimental: ExperimentalSettings,
}

/// `agents.*`: subagents.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AgentsSettings {
    /// `agents.overrides`: per agent name, `enabled`, `modelConfig`,
    /// `runConfig`. Kept as JSON: each entry is read on its own when the
    /// agents load, so one broken entry is reported and the rest work.
    #[serde(deserialize_with = "lenient")]
    pub overrides: Option<serde_json::Map<String, serde_json::Value>>,
}

/// `skills.*`: agent skills.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SkillsSettings {
    /// `skills.enabled`: `false` turns skills off entirely.
    #[serde(deserialize_with = "lenient")]
    pub enabled: Option<bool>,
    /// `skills.disabled`: skill names not declared to the model.
    #[serde(deserialize_with = "lenient")]
    pub disabled: Option<Vec<String>>,
}

/// `experimental.*` keys this app reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ExperimentalSettings {
    /// `experimental.enableAgents`: `false` turns subagents off.
    #[serde(deserialize_with = "lenient")]
    pub enable_agents: Option<bool>,
    /// `experimental.extensionConfig`: `false` turns extension settings
    /// off — nothing is asked at install, `extensions config` refuses, and
    /// a launch gives the extensions no values (0.61's default `true`).
    #[serde(deserialize_with = "lenient")]
    pub extension_config: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BillingSettings {
    pub vertex_ai: VertexAiBillingSettings,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct VertexAiBillingSettings {
    /// `billing.vertexAi.requestType`: `dedicated` or `shared`, sent as
    /// `X-Vertex-AI-LLM-Request-Type` on Vertex AI requests.
    #[serde(deserialize_with = "lenient")]
    pub request_type: Option<String>,
    /// `billing.vertexAi.sharedRequestType`: `priority` or `flex`, sent as
    /// `X-Vertex-AI-LLM-Shared-Request-Type`.
    #[serde(deserialize_with = "lenient")]
    pub shared_request_type: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AdvancedSettings {
    /// `advanced.excludedEnvVars`: variables a project's plain `.env` file
    /// may not set (`DEBUG`, `DEBUG_MODE` by default).
    #[serde(deserialize_with = "lenient")]
    pub excluded_env_vars: Option<Vec<String>>,
    /// `advanced.ignoreLocalEnv`: plain `.env` files are read only from
    /// the home folder (`.gemini/.env` files still count).
    #[serde(deserialize_with = "lenient")]
    pub ignore_local_env: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct UiSettings {
    /// `ui.theme`. Gemini CLI stores a terminal theme's name here; the
    /// desktop app understands `light`, `dark` and `system` (and names
    /// containing "light" / "dark"); anything else follows the system.
    pub theme: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct McpSettings {
    /// `mcp.allowed`: when set, only these servers start.
    pub allowed: Option<Vec<String>>,
    /// `mcp.excluded`: these servers never start.
    pub excluded: Vec<String>,
    /// `mcp.serverCommand`: one more (stdio) server, named `mcp`, started
    /// from this command line.
    #[serde(deserialize_with = "lenient")]
    pub server_command: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ModelSettings {
    /// `model.name`: the model to use unless `-m` / `GEMINI_MODEL` say otherwise.
    pub name: Option<String>,
    /// `model.maxSessionTurns`: model requests allowed per session; -1 = no limit.
    pub max_session_turns: Option<i64>,
    /// `model.compressionThreshold`: fraction of the context window at which
    /// older history is summarised.
    pub compression_threshold: Option<f64>,
    /// `model.disableLoopDetection`: `true` lets the agent repeat itself
    /// (Gemini CLI's switch for its loop detection; off = detection on).
    #[serde(deserialize_with = "lenient")]
    pub disable_loop_detection: Option<bool>,
}

/// Accepts the legacy flat form `"model": "gemini-2.5-pro"` as well as the
/// nested object. A hand-written visitor (rather than an untagged enum) keeps
/// serde's key path and line numbers in errors inside the object.
fn model_settings<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ModelSettings, D::Error> {
    struct ModelVisitor;

    impl<'de> Visitor<'de> for ModelVisitor {
        type Value = ModelSettings;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a model name or an object of model settings")
        }

        fn visit_str<E: de::Error>(self, name: &str) -> Result<ModelSettings, E> {
            Ok(ModelSettings {
                name: Some(name.to_owned()),
                ..ModelSettings::default()
            })
        }

        fn visit_unit<E: de::Error>(self) -> Result<ModelSettings, E> {
            Ok(ModelSettings::default())
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ModelSettings, A::Error> {
            ModelSettings::deserialize(de::value::MapAccessDeserializer::new(map))
        }
    }

    deserializer.deserialize_any(ModelVisitor)
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SecuritySettings {
    pub auth: AuthSettings,
    pub folder_trust: FolderTrustSettings,
    /// `security.disableYoloMode`: YOLO cannot be chosen (a flag asking for
    /// it is an error, the app does not offer it), as in Gemini CLI.
    #[serde(deserialize_with = "lenient")]
    pub disable_yolo_mode: Option<bool>,
    /// `security.environmentVariableRedaction`: secrets kept from commands.
    pub environment_variable_redaction: EnvRedactionSettings,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct EnvRedactionSettings {
    /// `enabled` (off by default, as in Gemini CLI 0.61).
    #[serde(deserialize_with = "lenient")]
    pub enabled: Option<bool>,
    /// `allowed`: variables always passed on.
    #[serde(deserialize_with = "lenient")]
    pub allowed: Option<Vec<String>>,
    /// `blocked`: variables never passed on.
    #[serde(deserialize_with = "lenient")]
    pub blocked: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AuthSettings {
    /// `gemini-api-key`, `vertex-ai`, `oauth-personal`, ...
    pub selected_type: Option<String>,
    pub enforced_type: Option<String>,
    /// `security.auth.oauthClient`: the Google OAuth client used for
    /// "Sign in with Google" (a Desktop app client of a Google Cloud project).
    pub oauth_client: OAuthClientSettings,
    /// `security.auth.googleCloudProject`: the project for Gemini Code Assist
    /// (after `GOOGLE_CLOUD_PROJECT` / `GOOGLE_CLOUD_PROJECT_ID`).
    pub google_cloud_project: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct OAuthClientSettings {
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// A fixed port for the loopback redirect (else a free one).
    pub callback_port: Option<u16>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FolderTrustSettings {
    pub enabled: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ContextSettings {
    /// `context.fileName`: one name or a list (GEMINI.md by default).
    pub file_name: Option<OneOrMany>,
    pub include_directories: Vec<String>,
    /// `context.discoveryMaxDirs`: how many directories below the workspace
    /// the context-file discovery visits at most (200 by default).
    pub discovery_max_dirs: Option<usize>,
    pub file_filtering: FileFilteringSettings,
    /// `context.includeDirectoryTree`: `false` leaves the folder listing out
    /// of the first message.
    #[serde(deserialize_with = "lenient")]
    pub include_directory_tree: Option<bool>,
    /// `context.memoryBoundaryMarkers`: where the upward search for context
    /// files stops (`[".git"]` by default).
    #[serde(deserialize_with = "lenient")]
    pub memory_boundary_markers: Option<Vec<String>>,
    /// `context.loadMemoryFromIncludeDirectories`: context files are also
    /// looked for in and around the include directories.
    #[serde(deserialize_with = "lenient")]
    pub load_memory_from_include_directories: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FileFilteringSettings {
    pub respect_git_ignore: Option<bool>,
    pub respect_gemini_ignore: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct GeneralSettings {
    /// `general.defaultApprovalMode`: `default`, `auto_edit` or `plan`.
    pub default_approval_mode: Option<String>,
    /// `general.checkpointing`: snapshots of the workspace before edits.
    pub checkpointing: CheckpointingSettings,
    /// `general.sessionRetention` (`enabled`, `maxAge`, `maxCount`): which
    /// old sessions the history deletes. Kept as JSON: gd-store reads it,
    /// and a malformed entry must only warn, not break the whole file.
    pub session_retention: Option<serde_json::Value>,
    /// `general.maxAttempts`: attempts per model request, the first
    /// included (Gemini CLI: 10 by default, at most 10).
    #[serde(deserialize_with = "lenient")]
    pub max_attempts: Option<i64>,
    /// `general.topicUpdateNarration` (Gemini CLI 0.61; default on): the
    /// model narrates its work with `update_topic` chapters. Off, the tool
    /// is not declared.
    pub topic_update_narration: Option<bool>,
    /// `general.plan`: plan mode (`enabled`, `directory`).
    pub plan: PlanSettings,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PlanSettings {
    /// `general.plan.enabled`: `false` turns the `plan` approval mode off
    /// (a request for it falls back to `default`, as in Gemini CLI 0.61).
    pub enabled: Option<bool>,
    /// `general.plan.directory`: where plans are written, relative to the
    /// project root and inside it; unset: the session's temp directory.
    pub directory: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CheckpointingSettings {
    /// `general.checkpointing.enabled` (Gemini CLI's key). Unset: on in the
    /// desktop app, off in the headless CLI.
    pub enabled: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ToolsSettings {
    /// `tools.exclude`: tool names never declared to the model.
    pub exclude: Vec<String>,
    /// `tools.discoveryCommand`: prints function declarations of extra tools.
    pub discovery_command: Option<String>,
    /// `tools.callCommand`: runs a discovered tool (`<cmd> <name>`, args on stdin).
    pub call_command: Option<String>,
    /// `tools.allowed`: tools that run without a confirmation; a shell
    /// command is named as `run_shell_command(git status)` (a prefix).
    #[serde(deserialize_with = "lenient")]
    pub allowed: Option<Vec<String>>,
    /// `tools.core`: when set, only these built-in tools may run (same
    /// syntax as `tools.allowed`); everything else is denied.
    #[serde(deserialize_with = "lenient")]
    pub core: Option<Vec<String>>,
    /// `tools.confirmationRequired`: tools that always ask first, even when
    /// `tools.allowed` or the approval mode would let them run.
    #[serde(deserialize_with = "lenient")]
    pub confirmation_required: Option<Vec<String>>,
    /// `tools.truncateToolOutputThreshold`: characters of a tool's output
    /// sent to the model (the rest saved to a file); 0 or less = no limit.
    #[serde(deserialize_with = "lenient")]
    pub truncate_tool_output_threshold: Option<i64>,
    /// `tools.shell.*`.
    pub shell: ShellToolSettings,
    /// `tools.legacy` (ours; Gemini CLI 0.61 has no such key): tools the
    /// seeds define that 0.61 no longer declares, turned back on by name:
    /// `save_memory`, `read_many_files`.
    pub legacy: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ShellToolSettings {
    /// `tools.shell.pager`: `PAGER` / `GIT_PAGER` of commands (`cat`).
    #[serde(deserialize_with = "lenient")]
    pub pager: Option<String>,
    /// `tools.shell.inactivityTimeout`: seconds without output after which
    /// a command is stopped (300); 0 or less waits forever.
    #[serde(deserialize_with = "lenient")]
    pub inactivity_timeout: Option<i64>,
}

/// Reads a value of the expected type; anything else is ignored (`None`)
/// rather than failing the whole file: a key Gemini CLI 0.61 added must not
/// stop a settings file that works there from working here. The problem is
/// reported by [`ignored_values`] (shown as a launch warning).
fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let value = serde_json::Value::deserialize(deserializer)?;
    if value.is_null() {
        return Ok(None);
    }
    Ok(serde_json::from_value(value).ok())
}

/// What a leniently read key must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expected {
    Bool,
    Integer,
    String,
    StringList,
}

/// The keys read with [`lenient`], with their expected shape.
const LENIENT_KEYS: &[(&str, Expected)] = &[
    ("general.maxAttempts", Expected::Integer),
    ("model.disableLoopDetection", Expected::Bool),
    ("security.disableYoloMode", Expected::Bool),
    ("tools.allowed", Expected::StringList),
    ("tools.core", Expected::StringList),
    ("tools.confirmationRequired", Expected::StringList),
    ("tools.truncateToolOutputThreshold", Expected::Integer),
    ("tools.shell.pager", Expected::String),
    ("advanced.excludedEnvVars", Expected::StringList),
    ("advanced.ignoreLocalEnv", Expected::Bool),
    ("context.includeDirectoryTree", Expected::Bool),
    ("mcp.serverCommand", Expected::String),
    ("context.memoryBoundaryMarkers", Expected::StringList),
    ("context.loadMemoryFromIncludeDirectories", Expected::Bool),
    ("billing.vertexAi.requestType", Expected::String),
    ("policyPaths", Expected::StringList),
    (
        "security.environmentVariableRedaction.enabled",
        Expected::Bool,
    ),
    (
        "security.environmentVariableRedaction.allowed",
        Expected::StringList,
    ),
    (
        "security.environmentVariableRedaction.blocked",
        Expected::StringList,
    ),
    ("adminPolicyPaths", Expected::StringList),
    ("billing.vertexAi.sharedRequestType", Expected::String),
    ("tools.shell.inactivityTimeout", Expected::Integer),
    ("skills.enabled", Expected::Bool),
    ("skills.disabled", Expected::StringList),
    ("experimental.enableAgents", Expected::Bool),
];

/// One message per leniently read key whose merged value has the wrong
/// type (it was ignored), e.g. `general.maxAttempts must be a whole number
/// (found "ten"); ignored`.
pub fn ignored_values(merged: &serde_json::Value) -> Vec<String> {
    LENIENT_KEYS
        .iter()
        .filter_map(|(key, expected)| {
            let value = key.split('.').try_fold(merged, |v, k| v.get(k))?;
            let fits = match expected {
                Expected::Bool => value.is_boolean(),
                Expected::Integer => value.is_i64() || value.is_u64(),
                Expected::String => value.is_string(),
                Expected::StringList => value
                    .as_array()
                    .is_some_and(|items| items.iter().all(serde_json::Value::is_string)),
            };
            let wanted = match expected {
                Expected::Bool => "true or false",
                Expected::Integer => "a whole number",
                Expected::String => "a string",
                Expected::StringList => "a list of strings",
            };
            (!fits && !value.is_null())
                .then(|| format!("{key} must be {wanted} (found {value}); ignored"))
        })
        .collect()
}

/// A string or a list of strings.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            Self::One(s) => vec![s.clone()],
            Self::Many(v) => v.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_0_61_are_read() {
        let s: Settings = serde_json::from_str(
            r#"{"general": {"maxAttempts": 3},
                "model": {"disableLoopDetection": true},
                "security": {"disableYoloMode": true},
                "tools": {"allowed": ["run_shell_command(git status)", "glob"],
                          "core": ["read_file"], "confirmationRequired": ["glob"],
                          "truncateToolOutputThreshold": 0}}"#,
        )
        .unwrap();
        assert_eq!(s.general.max_attempts, Some(3));
        assert_eq!(s.model.disable_loop_detection, Some(true));
        assert_eq!(s.security.disable_yolo_mode, Some(true));
        assert_eq!(
            s.tools.allowed.as_deref(),
            Some(
                &[
                    "run_shell_command(git status)".to_owned(),
                    "glob".to_owned()
                ][..]
            )
        );
        assert_eq!(s.tools.core.as_deref(), Some(&["read_file".to_owned()][..]));
        assert_eq!(
            s.tools.confirmation_required.as_deref(),
            Some(&["glob".to_owned()][..])
        );
        assert_eq!(s.tools.truncate_tool_output_threshold, Some(0));
        assert_eq!(Settings::default().general.max_attempts, None);
    }

    #[test]
    fn a_wrong_type_in_a_new_key_is_ignored_with_a_message() {
        let text = r#"{"general": {"maxAttempts": "ten", "defaultApprovalMode": "auto_edit"},
            "security": {"disableYoloMode": "yes"},
            "tools": {"allowed": ["glob", 3], "truncateToolOutputThreshold": 1.5,
                      "core": null}}"#;
        let s: Settings = serde_json::from_str(text).unwrap();
        assert_eq!(s.general.max_attempts, None);
        assert_eq!(s.security.disable_yolo_mode, None);
        assert_eq!(s.tools.allowed, None);
        assert_eq!(s.tools.truncate_tool_output_threshold, None);
        // The rest of the file still counts.
        assert_eq!(
            s.general.default_approval_mode.as_deref(),
            Some("auto_edit")
        );
        let merged: serde_json::Value = serde_json::from_str(text).unwrap();
        let problems = ignored_values(&merged);
        assert_eq!(
            problems,
            vec![
                r#"general.maxAttempts must be a whole number (found "ten"); ignored"#,
                r#"security.disableYoloMode must be true or false (found "yes"); ignored"#,
                r#"tools.allowed must be a list of strings (found ["glob",3]); ignored"#,
                "tools.truncateToolOutputThreshold must be a whole number (found 1.5); ignored",
            ]
        );
        assert!(ignored_values(&serde_json::json!({})).is_empty());
    }

    #[test]
    fn checkpointing_uses_gemini_clis_key() {
        let on: Settings =
            serde_json::from_str(r#"{"general": {"checkpointing": {"enabled": true}}}"#).unwrap();
        assert_eq!(on.general.checkpointing.enabled, Some(true));
        assert_eq!(Settings::default().general.checkpointing.enabled, None);
        let wrong = serde_json::from_str::<Settings>(
            r#"{"general": {"checkpointing": {"enabled": "yes"}}}"#,
        );
        assert!(wrong.is_err());
    }
}
