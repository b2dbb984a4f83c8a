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
    /// `tools.legacy` (ours; Gemini CLI 0.61 has no such key): tools the
    /// seeds define that 0.61 no longer declares, turned back on by name:
    /// `save_memory`, `read_many_files`.
    pub legacy: Vec<String>,
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
