//! `.env` files, found the way Gemini CLI finds them, so a user's
//! `GEMINI_API_KEY` in `.gemini/.env` keeps working.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Finds the `.env` file to load: walking up from `start`, the first
/// `.gemini/.env` or `.env`; failing that, `~/.gemini/.env` or `~/.env`.
pub fn find_env_file(start: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let mut dir = Some(start);
    while let Some(current) = dir {
        for candidate in [current.join(".gemini").join(".env"), current.join(".env")] {
            if candidate.is_file() {
                return Some(candidate);
            }
        }
        dir = current.parent();
    }
    let home = home?;
    [home.join(".gemini").join(".env"), home.join(".env")]
        .into_iter()
        .find(|p| p.is_file())
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
            find_env_file(&project, Some(&home)),
            Some(home.join(".gemini/.env"))
        );
        std::fs::create_dir_all(dir.path().join("p/.gemini")).unwrap();
        std::fs::write(dir.path().join("p/.gemini/.env"), "K=p").unwrap();
        assert_eq!(
            find_env_file(&project, Some(&home)),
            Some(dir.path().join("p/.gemini/.env"))
        );
    }
}
