//! `.env` files, found the way Gemini CLI finds them, so a user's
//! `GEMINI_API_KEY` in `.gemini/.env` keeps working.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Variables a project's `.env` may not set unless
/// `advanced.excludedEnvVars` says otherwise (Gemini CLI's default).
pub const DEFAULT_EXCLUDED_ENV_VARS: &[&str] = &["DEBUG", "DEBUG_MODE"];

/// Whether `advanced.excludedEnvVars` applies to this file: Gemini CLI
/// exempts `.env` files in a `.gemini` folder (the user's own or the
/// project's Gemini settings), and applies it to every plain `.env`.
pub fn is_project_env_file(path: &Path) -> bool {
    !path.components().any(|c| c.as_os_str() == ".gemini")
}

/// Variables an untrusted folder's `.env` may still set (so that a key
/// kept there keeps working), as in Gemini CLI.
pub const UNTRUSTED_ALLOWED_VARS: &[&str] = &[
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
];

/// Finds the `.env` file to load: walking up from `start`, the first
/// `.gemini/.env` or `.env`; failing that, `~/.gemini/.env` or `~/.env`.
/// In an untrusted folder the `.gemini/.env` files are not considered (as
/// in Gemini CLI), and [`restrict`] applies to what is read.
pub fn find_env_file(start: &Path, home: Option<&Path>, trusted: bool) -> Option<PathBuf> {
    find_env_file_with(start, home, trusted, false)
}

/// [`find_env_file`]; with `ignore_local` (`advanced.ignoreLocalEnv`) a
/// plain `.env` is only taken from the home folder, as in Gemini CLI 0.61.
pub fn find_env_file_with(
    start: &Path,
    home: Option<&Path>,
    trusted: bool,
    ignore_local: bool,
) -> Option<PathBuf> {
    let candidates = |dir: &Path| {
        let gemini = trusted.then(|| dir.join(".gemini").join(".env"));
        let plain = (!ignore_local || Some(dir) == home).then(|| dir.join(".env"));
        gemini.into_iter().chain(plain)
    };
    let mut dir = Some(start);
    while let Some(current) = dir {
        if let Some(found) = candidates(current).find(|p| p.is_file()) {
            return Some(found);
        }
        dir = current.parent();
    }
    candidates(home?).find(|p| p.is_file())
}

/// What an untrusted folder's `.env` may set: only the credential
/// variables, with anything but letters, digits and `-_./` removed.
pub fn restrict(vars: HashMap<String, String>) -> HashMap<String, String> {
    vars.into_iter()
        .filter(|(key, _)| UNTRUSTED_ALLOWED_VARS.contains(&key.as_str()))
        .map(|(key, value)| {
            let clean = value
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
                .collect();
            (key, clean)
        })
        .collect()
}

/// Parses `KEY=value` lines: `#` comments, an optional `export ` prefix,
/// single or double quotes (double quotes understand `\n`), and inline
/// comments after unquoted values. Malformed lines are skipped.
pub fn parse(text: &str) -> HashMap<String, String> {
    let mut vars = HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let value = value.trim();
        let value = if let Some(inner) = value
            .strip_prefix('"')
            .and_then(|v| v.rfind('"').map(|end| &v[..end]))
        {
            inner.replace("\\n", "\n").replace("\\\"", "\"")
        } else if let Some(inner) = value
            .strip_prefix('\'')
            .and_then(|v| v.rfind('\'').map(|end| &v[..end]))
        {
            inner.to_owned()
        } else {
            value.split(" #").next().unwrap_or("").trim().to_owned()
        };
        vars.insert(key.to_owned(), value);
    }
    vars
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_forms() {
        let vars = parse(
            "# c\nexport A=1\nB = \"two words\\n\" \nC='x#y'\nD=plain # note\nbad line\n=x\n",
        );
        assert_eq!(vars["A"], "1");
        assert_eq!(vars["B"], "two words\n");
        assert_eq!(vars["C"], "x#y");
        assert_eq!(vars["D"], "plain");
        assert_eq!(vars.len(), 4);
    }

    #[test]
    fn finds_nearest_then_home() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p/sub");
        std::fs::create_dir_all(&project).unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        std::fs::write(home.join(".gemini/.env"), "K=home").unwrap();
        assert_eq!(
            find_env_file(&project, Some(&home), true),
            Some(home.join(".gemini/.env"))
        );
        std::fs::create_dir_all(dir.path().join("p/.gemini")).unwrap();
        std::fs::write(dir.path().join("p/.gemini/.env"), "K=p").unwrap();
        assert_eq!(
            find_env_file(&project, Some(&home), true),
            Some(dir.path().join("p/.gemini/.env"))
        );
        // Untrusted: no `.gemini/.env`, only plain `.env` files.
        assert_eq!(find_env_file(&project, Some(&home), false), None);
        std::fs::write(dir.path().join("p/.env"), "K=p").unwrap();
        assert_eq!(
            find_env_file(&project, Some(&home), false),
            Some(dir.path().join("p/.env"))
        );
    }

    #[test]
    fn untrusted_env_keeps_only_sanitised_credentials() {
        let vars = restrict(parse("GEMINI_API_KEY=AIza$(x)-_./9\nDEBUG=1\nPATH=/evil\n"));
        assert_eq!(vars.len(), 1);
        assert_eq!(vars["GEMINI_API_KEY"], "AIzax-_./9");
    }
}
