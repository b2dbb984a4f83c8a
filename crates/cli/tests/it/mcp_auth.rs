//! `gemini-desktop-cli mcp auth <server>` against a real OAuth-protected MCP
//! server (tests/fixtures/mcp/oauth_server.py): the CLI prints the address,
//! runs `GEMINI_DESKTOP_BROWSER` (here a python one-liner that follows the
//! authorization redirect back to the CLI's loopback listener), stores the
//! tokens in the 0600 secrets file, and later runs connect with them.

use crate::common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;

/// The OAuth fixture (its port; the port file's directory lives as long);
/// killed on drop.
struct OAuthServer(
    std::process::Child,
    u16,
    #[allow(dead_code)] tempfile::TempDir,
);

impl OAuthServer {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port_file = dir.path().join("port");
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/mcp/oauth_server.py");
        let child = std::process::Command::new(mcp_python())
            .arg(script)
            .arg(&port_file)
            .stdin(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(90);
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                break text.trim().parse().unwrap();
            }
            assert!(Instant::now() < deadline, "the OAuth fixture did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        Self(child, port, dir)
    }
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn mcp_auth_signs_in_and_later_runs_use_the_tokens() {
    let server = OAuthServer::start();
    let run = Run::new(json!({"steps": [{"text": "ok."}, {"text": "ok again."}]}));
    let url = format!("http://127.0.0.1:{}/mcp", server.1);
    run.write_settings(
        &run.ws.join(".gemini/settings.json"),
        &json!({"mcpServers": {"remote": {"httpUrl": url, "trust": true, "timeout": 30000}}})
            .to_string(),
    );
    let browser = run.home.join("browser.sh");
    std::fs::write(
        &browser,
        format!(
            "#!/bin/sh\nexec '{}' -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()' \"$1\"\n",
            mcp_python().display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let auth_dir = run.home.join("auth");
    let cli = |args: &[&str]| {
        let mut cmd = run.command(args);
        cmd.env("GEMINI_DESKTOP_SECRET_STORE", "file")
            .env("GEMINI_DESKTOP_AUTH_DIR", &auth_dir)
            .env("GEMINI_DESKTOP_BROWSER", &browser);
        cmd.output().unwrap()
    };

    // Before: a run warns that the server needs signing in, and how.
    let out = cli(&["-p", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("MCP server 'remote' needs authentication")
            && err.contains("gemini-desktop-cli mcp auth remote"),
        "{err}"
    );
    let out = cli(&["mcp", "auth"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("remote\t{url}\tnot signed in\n")
    );

    let out = cli(&["mcp", "auth", "remote"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("/authorize?"), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        stdout.starts_with("Signed in to MCP server 'remote': connected,"),
        "{stdout}"
    );
    let out = cli(&["mcp", "auth"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("remote\t{url}\tsigned in\n")
    );

    // A headless run connects with the stored tokens: the server's tools
    // are declared in the first request.
    let out = cli(&["-p", "hi again"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("needs authentication"),
        "{}",
        stderr(&out)
    );
    let bodies = run.bodies();
    let names: Vec<String> = bodies.last().unwrap()["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.iter().any(|n| n == "mcp_remote_add"), "{names:?}");

    let out = cli(&["mcp", "logout", "remote"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = cli(&["mcp", "auth"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("remote\t{url}\tnot signed in\n")
    );

    let out = cli(&["mcp", "auth", "nope"]);
    assert_eq!(out.status.code(), Some(42));
    assert!(
        stderr(&out).contains("HTTP servers: remote"),
        "{}",
        stderr(&out)
    );
}
