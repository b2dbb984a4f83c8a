//! Settings keys applied at launch whose reading is more than one line:
//! `general.maxAttempts`, `tools.truncateToolOutputThreshold`,
//! `tools.shell.*`, `advanced.excludedEnvVars` / `ignoreLocalEnv`, checkpoints,
//! policy paths, Vertex AI headers, `security.auth.enforcedType`
//! (Gemini CLI 0.61's meanings and defaults). [`crate::launch`] calls them.

use std::path::Path;

use gd_gemini::RetryPolicy;
use gd_settings::{Settings, dotenv};
use tracing::warn;

use crate::launch::Env;

/// The retry policy: `general.maxAttempts` (Gemini CLI 0.61: at most 10,
/// 10 by default here too), unless `GEMINI_DESKTOP_MAX_ATTEMPTS` (tests,
/// scripts) says otherwise; the delays come from the environment.
pub fn retry_policy(settings: &Settings, env: &Env) -> RetryPolicy {
    let mut policy = RetryPolicy::from_env(|name| env.get(name));
    if env.get("GEMINI_DESKTOP_MAX_ATTEMPTS").is_none() {
        policy.max_attempts = settings
            .general
            .max_attempts
            .map_or(MAX_ATTEMPTS, |n| n.clamp(1, i64::from(MAX_ATTEMPTS)) as u32);
    }
    policy
}

/// Gemini CLI's default and ceiling for `general.maxAttempts`.
pub const MAX_ATTEMPTS: u32 = 10;

/// `tools.truncateToolOutputThreshold`: 0 or less sends whole outputs.
pub fn tool_output_limit(settings: &Settings) -> Option<usize> {
    match settings.tools.truncate_tool_output_threshold {
        None => Some(crate::tools::services::DEFAULT_MAX_OUTPUT_CHARS),
        Some(n) if n <= 0 => None,
        Some(n) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
    }
}

/// `tools.shell.pager` (blank: `cat`) and `tools.shell.inactivityTimeout`
/// (seconds; 0 or less: no limit).
pub fn shell_settings(settings: &Settings) -> crate::tools::ShellSettings {
    let shell = &settings.tools.shell;
    let mut applied = crate::tools::ShellSettings::default();
    if let Some(pager) = shell.pager.as_deref().filter(|p| !p.trim().is_empty()) {
        applied.pager = pager.to_owned();
    }
    let redaction = &settings.security.environment_variable_redaction;
    if redaction.enabled == Some(true) {
        applied.redaction = Some(crate::env_redaction::EnvRedaction::new(
            redaction.allowed.as_deref().unwrap_or_default(),
            redaction.blocked.as_deref().unwrap_or_default(),
        ));
    }
    if let Some(seconds) = shell.inactivity_timeout {
        applied.inactivity_timeout =
            (seconds > 0).then(|| std::time::Duration::from_secs(seconds as u64));
    }
    applied
}

/// Applies `advanced.ignoreLocalEnv` and `advanced.excludedEnvVars`
/// (read from settings, which themselves needed the environment for
/// their `$VAR`s): the `.env` is found again without plain local files,
/// and a project's plain `.env` loses the excluded variables.
pub fn apply_env_settings(
    mut env: Env,
    settings: &Settings,
    workspace: &Path,
    home: Option<&Path>,
    trusted: bool,
) -> Env {
    if settings.advanced.ignore_local_env == Some(true) {
        env = Env::load_with(workspace, home, trusted, true);
    }
    let excluded: Vec<String> = match &settings.advanced.excluded_env_vars {
        Some(names) => names.clone(),
        None => dotenv::DEFAULT_EXCLUDED_ENV_VARS
            .iter()
            .map(|n| (*n).to_owned())
            .collect(),
    };
    if env.file.as_deref().is_some_and(dotenv::is_project_env_file) {
        env.dotenv.retain(|name, _| !excluded.contains(name));
    }
    env
}

/// `mcp.serverCommand`: adds the server `mcp` (Gemini CLI 0.61's name)
/// running that command line, split like a shell would (quotes respected).
/// A command that cannot be split is reported and adds nothing.
pub fn add_server_command(settings: &mut Settings) -> Result<(), String> {
    let Some(line) = settings
        .mcp
        .server_command
        .as_deref()
        .filter(|c| !c.trim().is_empty())
    else {
        return Ok(());
    };
    let words = shlex::split(line)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| format!("mcp.serverCommand cannot be read as a command line: {line}"))?;
    settings.mcp_servers.insert(
        "mcp".to_owned(),
        serde_json::json!({"command": words[0], "args": &words[1..]}),
    );
    Ok(())
}

/// `security.auth.enforcedType`: the credentials in use must be of that
/// type (Gemini CLI 0.61's check and message; an administrator sets it in
/// the system settings).
pub fn check_enforced_auth(settings: &Settings, method: gd_auth::AuthMethod) -> Result<(), String> {
    let Some(enforced) = settings
        .security
        .auth
        .enforced_type
        .as_deref()
        .filter(|t| !t.trim().is_empty())
    else {
        return Ok(());
    };
    if gd_auth::AuthMethod::from_selected_type(enforced) == Some(method) {
        return Ok(());
    }
    let current = match method {
        gd_auth::AuthMethod::GeminiApiKey => "gemini-api-key",
        gd_auth::AuthMethod::VertexAi => "vertex-ai",
        gd_auth::AuthMethod::GoogleLogin => "oauth-personal",
    };
    Err(format!(
        "The enforced authentication type is '{enforced}', but the current type is '{current}'. Please re-authenticate with the correct type."
    ))
}

/// `billing.vertexAi.requestType` / `sharedRequestType` as Vertex AI
/// headers (only for the Vertex AI backend, as in Gemini CLI 0.61), and a
/// message for each value 0.61 would not accept (that value is not sent).
pub fn vertex_headers(
    settings: &Settings,
    backend_kind: &str,
) -> (Vec<(String, String)>, Vec<String>) {
    let vertex = &settings.billing.vertex_ai;
    let mut headers = Vec::new();
    let mut problems = Vec::new();
    let keys = [
        (
            "billing.vertexAi.requestType",
            "X-Vertex-AI-LLM-Request-Type",
            &vertex.request_type,
            &["dedicated", "shared"][..],
        ),
        (
            "billing.vertexAi.sharedRequestType",
            "X-Vertex-AI-LLM-Shared-Request-Type",
            &vertex.shared_request_type,
            &["priority", "flex"][..],
        ),
    ];
    for (key, header, value, allowed) in keys {
        let Some(value) = value.as_deref() else {
            continue;
        };
        if !allowed.contains(&value) {
            problems.push(format!(
                "Setting {key} must be one of {}; ignored",
                allowed.join(", ")
            ));
        } else if backend_kind == "vertex-ai" {
            headers.push((header.to_owned(), value.to_owned()));
        }
    }
    (headers, problems)
}

/// The rules of `policyPaths` (User tier) and `adminPolicyPaths` (Admin
/// tier): files or directories, relative to the workspace unless absolute,
/// read once at launch; each broken file is reported and left out.
pub fn policy_path_rules(
    settings: &Settings,
    workspace: &Path,
) -> (Vec<gd_policy::Rule>, Vec<String>) {
    let resolve = |paths: &Option<Vec<String>>| -> Vec<std::path::PathBuf> {
        paths
            .iter()
            .flatten()
            .filter(|p| !p.trim().is_empty())
            .map(|p| workspace.join(p.trim()))
            .collect()
    };
    let mut rules = Vec::new();
    let mut problems = Vec::new();
    for (paths, tier) in [
        (resolve(&settings.policy_paths), gd_policy::Tier::User),
        (
            resolve(&settings.admin_policy_paths),
            gd_policy::Tier::Admin,
        ),
    ] {
        let (found, errors) = gd_policy::load_paths(&paths, tier);
        rules.extend(found);
        problems.extend(errors.iter().map(|e| format!("Policy file skipped: {e}")));
    }
    (rules, problems)
}

/// Checkpoints before edits: `general.checkpointing.enabled` (Gemini CLI's
/// key) when set, else on for interactive sessions (the desktop app, where
/// every edit card can restore its checkpoint) and off for the headless CLI
/// (Gemini CLI's default). The shadow repositories live under
/// `$GEMINI_DESKTOP_CHECKPOINT_DIR` or `~/.gemini/gemini-desktop/checkpoints`.
pub fn checkpointing(
    settings: &Settings,
    interactive: bool,
    env: &dyn Fn(&str) -> Option<String>,
    home: Option<&Path>,
) -> Option<gd_checkpoint::CheckpointConfig> {
    if !settings
        .general
        .checkpointing
        .enabled
        .unwrap_or(interactive)
    {
        return None;
    }
    let root = gd_checkpoint::CheckpointConfig::default_root(env, home);
    if root.is_none() {
        warn!("checkpoints are off: no home directory to keep them in");
    }
    root.map(gd_checkpoint::CheckpointConfig::new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn settings(json: serde_json::Value) -> Settings {
        serde_json::from_value(json).unwrap()
    }

    fn no_env() -> Env {
        Env::default()
    }

    #[test]
    fn max_attempts_defaults_to_10_and_is_capped_at_10() {
        assert_eq!(
            retry_policy(&Settings::default(), &no_env()).max_attempts,
            10
        );
        let three = settings(serde_json::json!({"general": {"maxAttempts": 3}}));
        assert_eq!(retry_policy(&three, &no_env()).max_attempts, 3);
        let many = settings(serde_json::json!({"general": {"maxAttempts": 50}}));
        assert_eq!(retry_policy(&many, &no_env()).max_attempts, 10);
        let zero = settings(serde_json::json!({"general": {"maxAttempts": 0}}));
        assert_eq!(retry_policy(&zero, &no_env()).max_attempts, 1);
        let mut env = no_env();
        env.dotenv
            .insert("GEMINI_DESKTOP_MAX_ATTEMPTS".into(), "2".into());
        assert_eq!(retry_policy(&three, &env).max_attempts, 2);
    }

    #[test]
    fn output_threshold_zero_or_less_means_no_limit() {
        assert_eq!(tool_output_limit(&Settings::default()), Some(40_000));
        let small = settings(serde_json::json!({"tools": {"truncateToolOutputThreshold": 500}}));
        assert_eq!(tool_output_limit(&small), Some(500));
        for off in [0, -1] {
            let off = settings(serde_json::json!({"tools": {"truncateToolOutputThreshold": off}}));
            assert_eq!(tool_output_limit(&off), None);
        }
    }

    #[test]
    fn server_command_adds_the_server_mcp() {
        let mut set =
            settings(serde_json::json!({"mcp": {"serverCommand": "node 'my server.js' --port 3"}}));
        add_server_command(&mut set).unwrap();
        assert_eq!(
            set.mcp_servers["mcp"],
            serde_json::json!({"command": "node", "args": ["my server.js", "--port", "3"]})
        );
        let mut broken = settings(serde_json::json!({"mcp": {"serverCommand": "node 'open"}}));
        assert!(
            add_server_command(&mut broken)
                .unwrap_err()
                .contains("mcp.serverCommand")
        );
        assert!(broken.mcp_servers.is_empty());
        let mut none = Settings::default();
        add_server_command(&mut none).unwrap();
        assert!(none.mcp_servers.is_empty());
    }

    #[test]
    fn vertex_billing_headers_only_for_vertex_and_known_values() {
        let set = settings(serde_json::json!({"billing": {"vertexAi": {
            "requestType": "shared", "sharedRequestType": "fast"}}}));
        let (headers, problems) = vertex_headers(&set, "vertex-ai");
        assert_eq!(
            headers,
            [(
                "X-Vertex-AI-LLM-Request-Type".to_owned(),
                "shared".to_owned()
            )]
        );
        assert_eq!(
            problems,
            ["Setting billing.vertexAi.sharedRequestType must be one of priority, flex; ignored"]
        );
        assert!(vertex_headers(&set, "gemini-api-key").0.is_empty());
    }

    #[test]
    fn enforced_auth_type_must_match() {
        use gd_auth::AuthMethod;
        assert!(check_enforced_auth(&Settings::default(), AuthMethod::GeminiApiKey).is_ok());
        let vertex =
            settings(serde_json::json!({"security": {"auth": {"enforcedType": "vertex-ai"}}}));
        assert!(check_enforced_auth(&vertex, AuthMethod::VertexAi).is_ok());
        assert_eq!(
            check_enforced_auth(&vertex, AuthMethod::GeminiApiKey).unwrap_err(),
            "The enforced authentication type is 'vertex-ai', but the current type is 'gemini-api-key'. Please re-authenticate with the correct type."
        );
    }

    #[test]
    fn shell_settings_from_tools_shell() {
        let default = shell_settings(&Settings::default());
        assert_eq!(default.pager, "cat");
        assert_eq!(default.inactivity_timeout, Some(Duration::from_secs(300)));
        let set = shell_settings(&settings(
            serde_json::json!({"tools": {"shell": {"pager": "less", "inactivityTimeout": 5}}}),
        ));
        assert_eq!(set.pager, "less");
        assert_eq!(set.inactivity_timeout, Some(Duration::from_secs(5)));
        let off = shell_settings(&settings(
            serde_json::json!({"tools": {"shell": {"pager": " ", "inactivityTimeout": 0}}}),
        ));
        assert_eq!(off.pager, "cat");
        assert_eq!(off.inactivity_timeout, None);
    }

    #[test]
    fn project_env_files_lose_excluded_variables_and_local_ones_can_be_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join(".env"), "DEBUG=1\nGD_TEST_A=project\n").unwrap();
        std::fs::write(home.join(".gemini/.env"), "DEBUG=1\nGD_TEST_A=home\n").unwrap();
        let load = |json: serde_json::Value| {
            let env = Env::load(&ws, Some(&home), true);
            apply_env_settings(env, &settings(json), &ws, Some(&home), true)
        };
        // Defaults: DEBUG is dropped from the project's plain .env.
        let env = load(serde_json::json!({}));
        assert_eq!(
            env.dotenv.get("GD_TEST_A").map(String::as_str),
            Some("project")
        );
        assert!(!env.dotenv.contains_key("DEBUG"));
        // A custom list replaces the default.
        let env = load(serde_json::json!({"advanced": {"excludedEnvVars": ["GD_TEST_A"]}}));
        assert!(!env.dotenv.contains_key("GD_TEST_A"));
        assert_eq!(env.dotenv.get("DEBUG").map(String::as_str), Some("1"));
        // ignoreLocalEnv: the project's .env is skipped; ~/.gemini/.env is
        // not a project file, so DEBUG stays.
        let env = load(serde_json::json!({"advanced": {"ignoreLocalEnv": true}}));
        assert_eq!(
            env.dotenv.get("GD_TEST_A").map(String::as_str),
            Some("home")
        );
        assert_eq!(env.dotenv.get("DEBUG").map(String::as_str), Some("1"));
    }
}
