//! `mcpServers` entries of Gemini CLI's settings.json, checked one by one:
//! a broken entry is reported with its reason and the others still start.
//!
//! Keys (all of Gemini CLI's that concern a local client):
//!
//! | key | meaning |
//! |---|---|
//! | `command`, `args`, `env`, `cwd` | stdio: a child process speaking JSON-RPC on stdin/stdout |
//! | `httpUrl` | streamable HTTP (wins over `url`, as in Gemini CLI) |
//! | `url` + `type: "http"` | streamable HTTP |
//! | `url` + `type: "sse"` | the legacy HTTP+SSE transport |
//! | `url` without `type` | streamable HTTP, falling back to SSE if that fails (Gemini CLI 0.61's rule; older versions meant SSE) |
//! | `headers` | extra HTTP headers (`$VAR` / `${VAR}` are expanded by the settings loader, like every string) |
//! | `timeout` | milliseconds for connecting and for each request (default 600 000) |
//! | `trust` | the server's tools run without confirmation |
//! | `includeTools`, `excludeTools` | which of its tools are offered (`name` or `name(...)` in `includeTools`) |
//! | `description` | shown in the UI |
//! | `oauth` | OAuth for HTTP servers (see [`OAuthConfig`]): `enabled`, `clientId`, `clientSecret`, `authorizationUrl`, `tokenUrl`, `scopes`, `redirectUri`, `audiences` |
//!
//! `mcp.allowed` / `mcp.excluded` (server names, compared trimmed and
//! lower-cased) block servers before they start. Keys this client does not
//! use (`authProviderType`, `targetAudience`, `extension`, ...) are
//! ignored.

use std::path::PathBuf;
use std::time::Duration;

use gd_protocol::McpTransportKind;
use serde_json::{Map, Value};

use crate::names::normalize_server_id;

/// Gemini CLI's default for `timeout`: ten minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(600_000);

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportConfig {
    Stdio {
        command: String,
        args: Vec<String>,
        /// Extra environment variables (on top of the sanitised environment).
        env: Vec<(String, String)>,
        /// Working directory; relative paths are against the workspace.
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    Http {
        url: String,
        headers: Vec<(String, String)>,
        /// `url` without `type`: try the legacy SSE transport when streamable
        /// HTTP fails for a reason other than authentication.
        sse_fallback: bool,
    },
    /// The legacy HTTP+SSE transport.
    Sse {
        url: String,
        headers: Vec<(String, String)>,
    },
}

impl TransportConfig {
    pub fn kind(&self) -> McpTransportKind {
        match self {
            Self::Stdio { .. } => McpTransportKind::Stdio,
            Self::Http { .. } => McpTransportKind::Http,
            Self::Sse { .. } => McpTransportKind::Sse,
        }
    }
}

/// One valid `mcpServers` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    pub transport: TransportConfig,
    pub timeout: Duration,
    pub trust: bool,
    /// `sandbox: true` (ours, issue 36): a stdio server runs in the sandbox commands run in
    /// (writes only in the workspace, no network unless the settings give it). Refused, not
    /// started, when no sandbox can start.
    pub sandbox: bool,
    pub include_tools: Option<Vec<String>>,
    pub exclude_tools: Vec<String>,
    pub description: Option<String>,
    /// The entry's `oauth` object (defaults when absent).
    pub oauth: OAuthConfig,
}

/// An entry's `oauth` object, with Gemini CLI's keys. Every key is
/// optional: without any, a server that answers 401 is signed in to with
/// discovery (RFC 9728 / RFC 8414) and dynamic client registration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthConfig {
    /// `enabled: false` turns sign-in off for the server (a 401 then only
    /// says the server needs credentials).
    pub enabled: Option<bool>,
    /// A client registered with the authorization server beforehand
    /// (skips dynamic registration).
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// With `tokenUrl`: the authorization server's endpoints, when the
    /// server publishes no metadata.
    pub authorization_url: Option<String>,
    pub token_url: Option<String>,
    /// Scopes to ask for (else those the server suggests).
    pub scopes: Option<Vec<String>>,
    /// The loopback redirect, e.g. `http://localhost:7777/oauth/callback`
    /// (its port and path are listened on); else a free port on 127.0.0.1.
    pub redirect_uri: Option<String>,
    /// Accepted for compatibility with Gemini CLI's settings; not sent.
    pub audiences: Option<Vec<String>>,
}

impl OAuthConfig {
    /// Whether sign-in may be offered for the server.
    pub fn is_enabled(&self) -> bool {
        self.enabled != Some(false)
    }
}

impl ServerConfig {
    /// `includeTools` / `excludeTools` (Gemini CLI's `isEnabled`): excluded
    /// names never; with `includeTools`, only names listed (also as
    /// `name(...)`).
    pub fn tool_enabled(&self, tool: &str) -> bool {
        if self.exclude_tools.iter().any(|t| t == tool) {
            return false;
        }
        match &self.include_tools {
            None => true,
            Some(include) => include.iter().any(|t| {
                t == tool
                    || t.strip_prefix(tool)
                        .is_some_and(|rest| rest.starts_with('('))
            }),
        }
    }
}

/// An `mcpServers` entry: its name and the parsed configuration, or why it
/// cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerEntry {
    pub name: String,
    pub config: Result<ServerConfig, String>,
}

/// `mcp.allowed` / `mcp.excluded`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerFilter {
    /// When set (and not empty), only these servers may start.
    pub allowed: Option<Vec<String>>,
    pub excluded: Vec<String>,
}

impl ServerFilter {
    /// Why settings keep `name` from starting, in Gemini CLI's words.
    pub fn blocked_reason(&self, name: &str) -> Option<String> {
        let id = normalize_server_id(name);
        let listed = |list: &[String]| list.iter().any(|n| normalize_server_id(n) == id);
        if let Some(allowed) = self.allowed.as_ref().filter(|a| !a.is_empty())
            && !listed(allowed)
        {
            return Some(format!(
                "Server '{name}' is not in mcp.allowed list. Add it to settings.json mcp.allowed array to enable."
            ));
        }
        if listed(&self.excluded) {
            return Some(format!(
                "Server '{name}' is blocked by mcp.excluded. Remove it from settings.json mcp.excluded array to enable."
            ));
        }
        None
    }
}

/// Parses every entry of `mcpServers`, in settings order.
pub fn parse_servers(servers: &Map<String, Value>) -> Vec<ServerEntry> {
    servers
        .iter()
        .map(|(name, value)| ServerEntry {
            name: name.clone(),
            config: parse_server(value),
        })
        .collect()
}

/// Parses one `mcpServers` entry.
pub fn parse_server(value: &Value) -> Result<ServerConfig, String> {
    let Value::Object(entry) = value else {
        return Err("the entry must be an object".into());
    };
    let string = |key: &str| -> Result<Option<String>, String> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("`{key}` must be a string")),
        }
    };
    let strings = |key: &str| -> Result<Option<Vec<String>>, String> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .map(Some)
                .ok_or_else(|| format!("`{key}` must be a list of strings")),
            Some(_) => Err(format!("`{key}` must be a list of strings")),
        }
    };
    let string_map = |key: &str| -> Result<Vec<(String, String)>, String> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    Value::Number(n) => Ok((k.clone(), n.to_string())),
                    Value::Bool(b) => Ok((k.clone(), b.to_string())),
                    _ => Err(format!("`{key}.{k}` must be a string")),
                })
                .collect(),
            Some(_) => Err(format!("`{key}` must be an object of strings")),
        }
    };

    let http_url = string("httpUrl")?.filter(|u| !u.trim().is_empty());
    let url = string("url")?.filter(|u| !u.trim().is_empty());
    let command = string("command")?.filter(|c| !c.trim().is_empty());
    let kind = string("type")?;
    let headers = string_map("headers")?;
    for (name, value) in &headers {
        reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("`headers` has an invalid header name {name:?}"))?;
        reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| format!("`headers.{name}` is not a valid header value"))?;
    }
    let transport = if let Some(url) = http_url {
        check_url(&url, "httpUrl")?;
        TransportConfig::Http {
            url,
            headers,
            sse_fallback: false,
        }
    } else if let Some(url) = url {
        check_url(&url, "url")?;
        match kind.as_deref().map(str::trim) {
            Some("http") => TransportConfig::Http {
                url,
                headers,
                sse_fallback: false,
            },
            Some("sse") => TransportConfig::Sse { url, headers },
            None | Some("") => TransportConfig::Http {
                url,
                headers,
                sse_fallback: true,
            },
            Some(other) => {
                return Err(format!(
                    "unknown `type` {other:?}: expected \"http\" (streamable HTTP) or \"sse\""
                ));
            }
        }
    } else if let Some(command) = command {
        TransportConfig::Stdio {
            command,
            args: strings("args")?.unwrap_or_default(),
            env: string_map("env")?,
            cwd: string("cwd")?
                .filter(|c| !c.trim().is_empty())
                .map(PathBuf::from),
        }
    } else {
        return Err(
            "missing `command` (stdio), `httpUrl` (streamable HTTP) or `url` (HTTP or SSE)".into(),
        );
    };

    let timeout = match entry.get("timeout") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(ms) if ms >= 1.0 && ms.is_finite() => Duration::from_millis(ms as u64),
            _ => return Err("`timeout` must be a positive number of milliseconds".into()),
        },
        Some(_) => return Err("`timeout` must be a number of milliseconds".into()),
    };
    let trust = match entry.get("trust") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("`trust` must be true or false".into()),
    };
    let sandbox = match entry.get("sandbox") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("`sandbox` must be true or false".into()),
    };
    if sandbox && !matches!(transport, TransportConfig::Stdio { .. }) {
        return Err("`sandbox` applies to stdio servers (`command`) only".into());
    }
    Ok(ServerConfig {
        transport,
        timeout,
        trust,
        sandbox,
        include_tools: strings("includeTools")?,
        exclude_tools: strings("excludeTools")?.unwrap_or_default(),
        description: string("description")?,
        oauth: match entry.get("oauth") {
            None | Some(Value::Null) => OAuthConfig::default(),
            Some(value) => parse_oauth(value)?,
        },
    })
}

/// The `oauth` object of an entry.
fn parse_oauth(value: &Value) -> Result<OAuthConfig, String> {
    let Value::Object(map) = value else {
        return Err("`oauth` must be an object".into());
    };
    let string = |key: &str| -> Result<Option<String>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_owned())),
            Some(_) => Err(format!("`oauth.{key}` must be a string")),
        }
    };
    let strings = |key: &str| -> Result<Option<Vec<String>>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .map(Some)
                .ok_or_else(|| format!("`oauth.{key}` must be a list of strings")),
            Some(_) => Err(format!("`oauth.{key}` must be a list of strings")),
        }
    };
    let enabled = match map.get("enabled") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return Err("`oauth.enabled` must be true or false".into()),
    };
    let config = OAuthConfig {
        enabled,
        client_id: string("clientId")?,
        client_secret: string("clientSecret")?,
        authorization_url: string("authorizationUrl")?,
        token_url: string("tokenUrl")?,
        scopes: strings("scopes")?,
        redirect_uri: string("redirectUri")?,
        audiences: strings("audiences")?,
    };
    for (key, url) in [
        ("authorizationUrl", &config.authorization_url),
        ("tokenUrl", &config.token_url),
    ] {
        if let Some(url) = url {
            check_url(url, &format!("oauth.{key}"))?;
        }
    }
    if config.authorization_url.is_some() != config.token_url.is_some() {
        return Err("`oauth.authorizationUrl` and `oauth.tokenUrl` go together".into());
    }
    if config.client_secret.is_some() && config.client_id.is_none() {
        return Err("`oauth.clientSecret` needs `oauth.clientId`".into());
    }
    if let Some(redirect) = &config.redirect_uri {
        crate::oauth::callback::parse_redirect_uri(redirect)
            .map_err(|e| format!("`oauth.redirectUri`: {e}"))?;
    }
    Ok(config)
}

fn check_url(url: &str, key: &str) -> Result<(), String> {
    match reqwest::Url::parse(url.trim()) {
        Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => Ok(()),
        Ok(parsed) => Err(format!(
            "`{key}` must be an http:// or https:// URL, not {}://",
            parsed.scheme()
        )),
        Err(e) => Err(format!("`{key}` is not a valid URL ({e}): {url:?}")),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn sandbox_is_a_bool_for_stdio_servers_only() {
        let on = parse(json!({"command": "srv", "sandbox": true})).unwrap();
        assert!(on.sandbox);
        assert!(!parse(json!({"command": "srv"})).unwrap().sandbox);
        assert_eq!(
            parse(json!({"command": "srv", "sandbox": "yes"})).unwrap_err(),
            "`sandbox` must be true or false"
        );
        assert!(
            parse(json!({"httpUrl": "http://127.0.0.1:1/mcp", "sandbox": true}))
                .unwrap_err()
                .contains("stdio servers")
        );
    }
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn parse(v: Value) -> Result<ServerConfig, String> {
        parse_server(&v)
    }

    #[test]
    fn transports() {
        let stdio = parse(json!({"command": "python", "args": ["s.py", "stdio"], "env": {"A": "1", "N": 2}, "cwd": "sub", "trust": true, "timeout": 30000})).unwrap();
        assert_eq!(
            stdio.transport,
            TransportConfig::Stdio {
                command: "python".into(),
                args: vec!["s.py".into(), "stdio".into()],
                env: vec![("A".into(), "1".into()), ("N".into(), "2".into())],
                cwd: Some("sub".into()),
            }
        );
        assert!(stdio.trust);
        assert_eq!(stdio.timeout, Duration::from_secs(30));
        let both = parse(json!({"httpUrl": "http://h/mcp", "url": "http://u/sse", "type": "sse"}))
            .unwrap();
        assert_eq!(
            both.transport,
            TransportConfig::Http {
                url: "http://h/mcp".into(),
                headers: vec![],
                sse_fallback: false
            }
        );
        assert_eq!(both.timeout, DEFAULT_TIMEOUT);
        assert!(matches!(
            parse(json!({"url": "http://u/sse", "type": "sse", "headers": {"Authorization": "Bearer x"}})).unwrap().transport,
            TransportConfig::Sse { ref headers, .. } if headers == &[("Authorization".to_owned(), "Bearer x".to_owned())]
        ));
        assert!(matches!(
            parse(json!({"url": "http://u/mcp"})).unwrap().transport,
            TransportConfig::Http {
                sse_fallback: true,
                ..
            }
        ));
        assert!(matches!(
            parse(json!({"url": "http://u/mcp", "type": "http"}))
                .unwrap()
                .transport,
            TransportConfig::Http {
                sse_fallback: false,
                ..
            }
        ));
    }

    #[test]
    fn invalid_entries_say_why() {
        let cases = [
            (json!("python"), "must be an object"),
            (json!({"args": ["x"]}), "missing `command`"),
            (json!({"command": 3}), "`command` must be a string"),
            (
                json!({"command": "x", "args": "a b"}),
                "`args` must be a list",
            ),
            (json!({"command": "x", "env": {"A": [1]}}), "`env.A`"),
            (json!({"url": "ftp://x"}), "http:// or https://"),
            (json!({"url": "not a url"}), "not a valid URL"),
            (json!({"url": "http://x", "type": "ws"}), "unknown `type`"),
            (json!({"command": "x", "timeout": "10s"}), "`timeout`"),
            (json!({"command": "x", "timeout": 0}), "positive"),
            (json!({"command": "x", "trust": "yes"}), "`trust`"),
            (
                json!({"httpUrl": "http://x", "headers": {"Bad Name": "v"}}),
                "invalid header name",
            ),
            (
                json!({"command": "x", "includeTools": [1]}),
                "`includeTools`",
            ),
            (
                json!({"httpUrl": "http://x", "oauth": true}),
                "`oauth` must be",
            ),
            (
                json!({"httpUrl": "http://x", "oauth": {"enabled": "yes"}}),
                "`oauth.enabled`",
            ),
            (
                json!({"httpUrl": "http://x", "oauth": {"authorizationUrl": "http://a/auth"}}),
                "go together",
            ),
            (
                json!({"httpUrl": "http://x", "oauth": {"clientSecret": "s"}}),
                "needs `oauth.clientId`",
            ),
            (
                json!({"httpUrl": "http://x", "oauth": {"redirectUri": "https://example.com/cb"}}),
                "`oauth.redirectUri`",
            ),
        ];
        for (value, expected) in cases {
            let err = parse(value.clone()).unwrap_err();
            assert!(err.contains(expected), "{value}: {err}");
        }
        let entries = parse_servers(
            json!({"good": {"command": "x"}, "bad": {"nope": 1}})
                .as_object()
                .unwrap(),
        );
        assert_eq!(entries.len(), 2);
        assert!(entries[0].config.is_ok() && entries[1].config.is_err());
        assert_eq!(entries[1].name, "bad");
    }

    #[test]
    fn oauth_keys() {
        let config = parse(json!({"httpUrl": "http://x/mcp", "oauth": {
            "enabled": true, "clientId": "id", "clientSecret": "secret",
            "authorizationUrl": "https://a/authorize", "tokenUrl": "https://a/token",
            "scopes": ["read", "write"], "redirectUri": "http://localhost:7777/oauth/callback",
            "audiences": ["aud"]
        }}))
        .unwrap();
        assert_eq!(
            config.oauth,
            OAuthConfig {
                enabled: Some(true),
                client_id: Some("id".into()),
                client_secret: Some("secret".into()),
                authorization_url: Some("https://a/authorize".into()),
                token_url: Some("https://a/token".into()),
                scopes: Some(vec!["read".into(), "write".into()]),
                redirect_uri: Some("http://localhost:7777/oauth/callback".into()),
                audiences: Some(vec!["aud".into()]),
            }
        );
        assert!(config.oauth.is_enabled());
        let off = parse(json!({"httpUrl": "http://x/mcp", "oauth": {"enabled": false}})).unwrap();
        assert!(!off.oauth.is_enabled());
        assert!(
            parse(json!({"httpUrl": "http://x/mcp"}))
                .unwrap()
                .oauth
                .is_enabled()
        );
    }

    #[test]
    fn tool_filters() {
        let config = parse(json!({"command": "x", "includeTools": ["add", "shout(text)"], "excludeTools": ["add"]})).unwrap();
        assert!(!config.tool_enabled("add"));
        assert!(config.tool_enabled("shout"));
        assert!(!config.tool_enabled("other"));
        let all = parse(json!({"command": "x"})).unwrap();
        assert!(all.tool_enabled("anything"));
    }

    #[test]
    fn allowed_and_excluded() {
        let filter = ServerFilter {
            allowed: Some(vec!["Tiny ".into(), "other".into()]),
            excluded: vec!["other".into()],
        };
        assert_eq!(filter.blocked_reason("tiny"), None);
        assert!(
            filter
                .blocked_reason("other")
                .unwrap()
                .contains("mcp.excluded")
        );
        assert!(filter.blocked_reason("x").unwrap().contains("mcp.allowed"));
        assert_eq!(ServerFilter::default().blocked_reason("x"), None);
    }
}
