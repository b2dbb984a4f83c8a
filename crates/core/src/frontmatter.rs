//! Markdown files with YAML front matter: agent definitions
//! (`.gemini/agents/*.md`) and skills (`SKILL.md`), as Gemini CLI 0.61
//! reads them. The front matter is the block between a first line `---`
//! and the next `---` line; the rest is the body (an agent's system prompt,
//! a skill's instructions).
//!
//! Errors name the file and the line in the file (not in the front matter),
//! so a user can go straight to the mistake.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

/// A front matter that could not be read: `path:line: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontMatterError {
    pub path: PathBuf,
    /// 1-based line in the file, when the error has one.
    pub line: Option<u32>,
    pub message: String,
}

impl fmt::Display for FrontMatterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for FrontMatterError {}

impl From<FrontMatterError> for gd_protocol::DefinitionError {
    fn from(e: FrontMatterError) -> Self {
        Self {
            path: e.path.display().to_string(),
            line: e.line,
            message: e.message,
        }
    }
}

/// A parsed file: the front matter as `T` and the body after it.
#[derive(Debug)]
pub struct Document<'a, T> {
    pub meta: T,
    pub body: &'a str,
}

/// Splits `text` (the contents of `path`) into front matter and body and
/// deserialises the front matter into `T`. A file without a front matter,
/// or with one that is not closed, is an error: both agents and skills
/// require it.
pub fn parse<'a, T: DeserializeOwned>(
    path: &Path,
    text: &'a str,
) -> Result<Document<'a, T>, FrontMatterError> {
    let error = |line: Option<u32>, message: String| FrontMatterError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err(error(
            Some(1),
            "the file must start with a YAML front matter between `---` lines".into(),
        ));
    }
    let yaml_start = first.len();
    let mut offset = yaml_start;
    let mut closing = None;
    for line in lines {
        if line.trim_end() == "---" {
            closing = Some((offset, offset + line.len()));
            break;
        }
        offset += line.len();
    }
    let Some((yaml_end, body_start)) = closing else {
        return Err(error(
            Some(1),
            "the front matter is not closed: add a `---` line after it".into(),
        ));
    };
    let yaml = &text[yaml_start..yaml_end];
    let meta = serde_yaml_ng::from_str::<T>(yaml).map_err(|e| {
        // The YAML parser counts from the front matter's first line, which
        // is the file's second.
        let line = e.location().map(|l| l.line() as u32 + 1);
        let message = strip_location(&e.to_string());
        error(line, message)
    })?;
    Ok(Document {
        meta,
        body: &text[body_start..],
    })
}

/// serde_yaml_ng appends " at line L column C" (relative to the front
/// matter) to its messages; the file's line is given separately.
fn strip_location(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Meta {
        name: String,
        #[serde(default)]
        max_turns: Option<u32>,
    }

    #[test]
    fn splits_front_matter_and_body() {
        let doc = parse::<Meta>(
            Path::new("a.md"),
            "---\nname: x\nmax_turns: 3\n---\nBody\nmore\n",
        )
        .unwrap();
        assert_eq!(doc.meta.name, "x");
        assert_eq!(doc.meta.max_turns, Some(3));
        assert_eq!(doc.body, "Body\nmore\n");
    }

    #[test]
    fn an_error_names_the_file_line() {
        let e = parse::<Meta>(
            Path::new("/h/agents/a.md"),
            "---\nname: x\nmax_turns: many\n---\n",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.to_string().starts_with("/h/agents/a.md:3: "), "{e}");
        assert!(!e.message.contains("at line"), "{e}");
    }

    #[test]
    fn broken_yaml_names_its_line() {
        let e = parse::<Meta>(Path::new("a.md"), "---\nname: x\n  bad: [\n---\n").unwrap_err();
        assert!(matches!(e.line, Some(2..=4)), "{e}");
    }

    #[test]
    fn missing_or_unclosed_front_matter_is_an_error() {
        let e = parse::<Meta>(Path::new("a.md"), "name: x\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        let e = parse::<Meta>(Path::new("a.md"), "---\nname: x\n").unwrap_err();
        assert!(e.message.contains("not closed"), "{e}");
    }
}
