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

/// Opens `url` with [`BROWSER_ENV`]'s program if set, else the platform's opener (`xdg-open`,
/// `open`, the URL handler on Windows). Returns once the program started.
pub fn open(url: &str) -> Result<(), String> {
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

/// Runs `program URL` without waiting for it (a browser may keep running).
pub fn run_program(program: &OsStr, url: &str) -> Result<(), String> {
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
        run_program(script.as_os_str(), url).unwrap();
        // The script renames its output into place: once it exists, it is complete.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !out.exists() {
            assert!(std::time::Instant::now() < deadline, "the script never ran");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(std::fs::read_to_string(&out).unwrap(), url);
    }

    #[test]
    fn a_missing_browser_program_is_a_clear_error() {
        let error = run_program("/nonexistent/browser".as_ref(), "http://x").unwrap_err();
        assert!(error.starts_with("/nonexistent/browser: "), "{error}");
    }
}
