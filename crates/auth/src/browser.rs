//! Opening a sign-in page in the user's browser.
//!
//! Google sign-in (this crate), MCP server sign-in (gd-mcp), the CLI and the desktop shell all
//! open authorization URLs. `GEMINI_DESKTOP_BROWSER` names a program that receives the URL
//! instead: the tests use it to play the browser, and users on unusual setups can pick theirs.

use std::ffi::{OsStr, OsString};
use std::process::{Command, Stdio};

/// A program taking the URL as its argument, used instead of the system browser.
pub const BROWSER_ENV: &str = "GEMINI_DESKTOP_BROWSER";

/// The program from [`BROWSER_ENV`], when set and not empty.
pub fn override_program() -> Option<OsString> {
    std::env::var_os(BROWSER_ENV).filter(|program| !program.is_empty())
}

/// Checks that `url` is a web page (`http` or `https`) before anything opens it.
///
/// Authorization URLs come from remote metadata (an MCP server names its own authorization
/// endpoint). Handed to the system opener, `file://` shows or runs local files, and custom
/// schemes start whatever app registered them, with arguments the remote server chose. A
/// browser sign-in only ever needs a web page, so everything else is refused, with the
/// scheme named so the user sees what was attempted.
pub fn check_web_url(url: &str) -> Result<(), String> {
    let parsed = oauth2::url::Url::parse(url.trim())
        .map_err(|e| format!("refusing to open {:?}: not a valid URL ({e})", shorten(url)))?;
    match parsed.scheme() {
        "http" | "https" => Ok(()),
        scheme => Err(format!(
            "refusing to open a `{scheme}:` URL: only http and https pages are opened for a sign-in"
        )),
    }
}

/// The first characters of a refused URL, for an error message.
fn shorten(url: &str) -> String {
    url.chars().take(80).collect()
}

/// Opens `url` with [`BROWSER_ENV`]'s program if set, else the platform's opener (`xdg-open`,
/// `open`, the URL handler on Windows). Returns once the program started. Only `http` and
/// `https` URLs are opened ([`check_web_url`]).
pub fn open(url: &str) -> Result<(), String> {
    check_web_url(url)?;
    if let Some(program) = override_program() {
        return run_program(&program, url);
    }
    let (program, args): (&str, &[&str]) = if cfg!(target_os = "macos") {
        ("open", &[])
    } else if cfg!(windows) {
        ("rundll32", &["url.dll,FileProtocolHandler"])
    } else {
        ("xdg-open", &[])
    };
    spawn_detached(Command::new(program).args(args), url)
        .map_err(|e| format!("cannot open the browser ({program}): {e}"))
}

/// Runs `program URL` without waiting for it (a browser may keep running). Only `http` and
/// `https` URLs are passed on ([`check_web_url`]).
pub fn run_program(program: &OsStr, url: &str) -> Result<(), String> {
    check_web_url(url)?;
    spawn_detached(&mut Command::new(program), url)
        .map_err(|e| format!("{}: {e}", program.to_string_lossy()))
}

fn spawn_detached(command: &mut Command, url: &str) -> std::io::Result<()> {
    let mut child = command
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    // Reaped in the background, so no zombie stays behind: openers return at once.
    std::thread::spawn(move || child.wait());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_browser_program_receives_the_url() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("url");
        let script = dir.path().join("browser.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nprintf '%s' \"$1\" > '{0}.tmp' && mv '{0}.tmp' '{0}'\n",
                out.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let url = "http://127.0.0.1:9/auth?state=a&b=c d";
        // Another test thread forking while this one still had the script open
        // for writing makes its exec fail with ETXTBSY until that child execs:
        // a passing race of the test harness, not of the code under test.
        let mut attempts = 0;
        while let Err(e) = run_program(script.as_os_str(), url) {
            attempts += 1;
            assert!(e.contains("Text file busy") && attempts < 200, "{e}");
            // No event says when the other child has exec'd: poll briefly.
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // The script renames its output into place: once it exists, it is complete.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !out.exists() {
            assert!(std::time::Instant::now() < deadline, "the script never ran");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(std::fs::read_to_string(&out).unwrap(), url);
    }

    /// A browser program that records every URL it is given: proof of whether it ran.
    #[cfg(unix)]
    fn recording_browser(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let out = dir.join("opened");
        let script = dir.join("browser.sh");
        std::fs::write(
            &script,
            format!("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{}'\n", out.display()),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        (script, out)
    }

    #[cfg(unix)]
    #[test]
    fn only_web_urls_reach_the_browser_program() {
        let dir = tempfile::tempdir().unwrap();
        let (script, out) = recording_browser(dir.path());
        for (url, scheme) in [
            ("file:///etc/passwd", "file"),
            ("javascript:alert(1)", "javascript"),
            ("x-custom:run?arg=1", "x-custom"),
            ("FILE:///etc/passwd", "file"),
            ("  file:///etc/passwd", "file"),
        ] {
            let error = run_program(script.as_os_str(), url).unwrap_err();
            assert!(error.contains(&format!("`{scheme}:`")), "{url}: {error}");
        }
        let error = run_program(script.as_os_str(), "not a url").unwrap_err();
        assert!(error.contains("not a valid URL"), "{error}");
        // An accepted URL afterwards is the only line the program ever wrote: the refused
        // ones never started it (the program runs detached, so wait for its line).
        run_program(script.as_os_str(), "https://example.com/a").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&out).unwrap_or_default();
            if text.ends_with('\n') {
                assert_eq!(text, "https://example.com/a\n");
                break;
            }
            assert!(std::time::Instant::now() < deadline, "the script never ran");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    #[test]
    fn open_refuses_other_schemes_before_choosing_a_program() {
        // No override program may be set for this check to reach the system opener path;
        // the refusal comes first either way, so no process is started.
        for url in ["file:///etc/passwd", "javascript:alert(1)", "x-custom:go"] {
            let error = open(url).unwrap_err();
            assert!(error.starts_with("refusing to open"), "{url}: {error}");
        }
        assert!(check_web_url("http://127.0.0.1:9/cb").is_ok());
        assert!(check_web_url("https://accounts.google.com/o/oauth2/v2/auth?x=1").is_ok());
    }

    #[test]
    fn a_missing_browser_program_is_a_clear_error() {
        let error = run_program("/nonexistent/browser".as_ref(), "http://x").unwrap_err();
        assert!(error.starts_with("/nonexistent/browser: "), "{error}");
    }
}
