//! Adding an MCP server from the MCP panel: the form's name and command
//! line (or URL) become an `mcpServers` entry, checked with the same parser
//! the session uses ([`gd_mcp::config::parse_server`]) and written through
//! the settings writer, which keeps the file's comments and other keys.

use std::path::Path;

use gd_protocol::{NewMcpServer, SettingsScope, SettingsView};
use gd_settings::layers::lookup;
use gd_settings::parse_file;
use gd_settings::write::write_setting;
use serde_json::{Map, Value, json};

use crate::settings_screen::{SettingsScreenError, scope_file, settings_view};

fn invalid(message: impl Into<String>) -> SettingsScreenError {
    SettingsScreenError::Invalid(message.into())
}

/// The `mcpServers` entry for `server`, or what is wrong with the form.
pub fn entry(server: &NewMcpServer) -> Result<Value, SettingsScreenError> {
    let name = server.name.trim();
    if name.is_empty() {
        return Err(invalid("Give the server a name, e.g. github."));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(invalid(format!(
            "`{name}` cannot be a server name: use letters, digits, - and _ (its tools are called mcp_<name>_<tool>)."
        )));
    }
    let command = server
        .command_line
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty());
    let url = server
        .url
        .as_deref()
        .map(str::trim)
        .filter(|u| !u.is_empty());
    let value = match (command, url) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "Give either a command (a local server) or a URL (a remote one), not both.",
            ));
        }
        (None, None) => {
            return Err(invalid(
                "Give the command that starts the server, or its URL.",
            ));
        }
        (Some(line), None) => {
            let words = shlex::split(line)
                .filter(|w| !w.is_empty())
                .ok_or_else(|| invalid("The command has an unclosed quote."))?;
            json!({"command": words[0], "args": words[1..]})
        }
        (None, Some(url)) => json!({ "url": url }),
    };
    gd_mcp::config::parse_server(&value).map_err(invalid)?;
    Ok(value)
}

/// Adds `server` to the `scope` settings file (refused if that file already
/// has a server of that name) and returns the new settings view. The
/// running session picks it up when it reloads.
pub fn add_server(
    workspace: &Path,
    home: Option<&Path>,
    scope: SettingsScope,
    server: &NewMcpServer,
) -> Result<SettingsView, SettingsScreenError> {
    let value = entry(server)?;
    let name = server.name.trim();
    let view = settings_view(workspace, home);
    if scope == SettingsScope::Workspace && !view.workspace_trusted {
        return Err(SettingsScreenError::File(
            "This folder is not trusted, so its settings are not used. Trust it first, or add the server to your user settings.".into(),
        ));
    }
    let file = scope_file(scope, workspace, home)?;
    let existing = match std::fs::read_to_string(&file) {
        Ok(text) => {
            parse_file(&file, &text).map_err(|e| SettingsScreenError::File(e.to_string()))?
        }
        Err(_) => Value::Object(Map::new()),
    };
    if lookup(&existing, &["mcpServers", name]).is_some() {
        return Err(invalid(format!(
            "{} already has a server named {name}: choose another name, or edit that entry.",
            file.display()
        )));
    }
    write_setting(&file, &["mcpServers", name], Some(&value))?;
    tracing::info!(name, ?scope, "MCP server added");
    Ok(settings_view(workspace, home))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(name: &str, command: Option<&str>, url: Option<&str>) -> NewMcpServer {
        NewMcpServer {
            name: name.into(),
            command_line: command.map(Into::into),
            url: url.map(Into::into),
        }
    }

    #[test]
    fn a_command_line_is_split_like_a_shell_does() {
        assert_eq!(
            entry(&server("fx", Some("python3 'my server.py' --port 1"), None)).unwrap(),
            json!({"command": "python3", "args": ["my server.py", "--port", "1"]})
        );
        assert_eq!(
            entry(&server("web", None, Some(" http://localhost:8080/mcp "))).unwrap(),
            json!({"url": "http://localhost:8080/mcp"})
        );
    }

    #[test]
    fn the_form_errors_say_what_to_fix() {
        for (s, needle) in [
            (server("", Some("x"), None), "name"),
            (
                server("my server", Some("x"), None),
                "cannot be a server name",
            ),
            (server("a.b", Some("x"), None), "cannot be a server name"),
            (server("x", None, None), "command that starts"),
            (server("x", Some("x"), Some("http://h")), "not both"),
            (server("x", Some("python3 'open"), None), "unclosed quote"),
            (server("x", None, Some("not a url")), "url"),
        ] {
            let message = entry(&s).unwrap_err().to_string();
            assert!(message.contains(needle), "{s:?}: {message}");
        }
    }
}
