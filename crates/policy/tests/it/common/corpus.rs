//! The corpus files: `tests/corpus/*.txt`.
//!
//! A file holds cases separated by a line `---`. A file whose first line is
//! `%% one case per line` holds one case per non-empty line instead. Lines
//! starting with `%%` are comments of the corpus (not part of a case).

use std::fs;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Case {
    pub file: String,
    pub line: usize,
    pub text: String,
}

pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Every case of every corpus file, in file name order.
pub fn load() -> Vec<Case> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir())
        .expect("tests/corpus")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let text = fs::read_to_string(&path).expect("corpus file");
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        out.extend(parse(&file, &text));
    }
    out
}

pub fn parse(file: &str, text: &str) -> Vec<Case> {
    let mut out = Vec::new();
    let per_line = text
        .lines()
        .next()
        .is_some_and(|l| l.trim() == "%% one case per line");
    let mut current: Vec<&str> = Vec::new();
    let mut start = 1;
    let flush = |current: &mut Vec<&str>, start: usize, out: &mut Vec<Case>| {
        let joined = current.join("\n");
        if !joined.trim().is_empty() {
            out.push(Case {
                file: file.to_string(),
                line: start,
                text: joined,
            });
        }
        current.clear();
    };
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("%%") {
            continue;
        }
        if per_line {
            current.push(line);
            flush(&mut current, i + 1, &mut out);
        } else if line == "---" {
            flush(&mut current, start, &mut out);
            start = i + 2;
        } else {
            if current.is_empty() {
                start = i + 1;
            }
            current.push(line);
        }
    }
    flush(&mut current, start, &mut out);
    out
}

/// Why a case must not be run (outside the sandbox it could touch the
/// machine): an absolute path other than `/dev/null`-like ones, or `..`
/// three levels up (the case directory is only two deep).
pub fn unsafe_reason(text: &str) -> Option<String> {
    let b = text.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c != b'/' {
            continue;
        }
        let boundary = i == 0 || b" \t\n'\"=<>;&|(:{}`".contains(&b[i - 1]);
        let rest = &text[i + 1..];
        let path_like = rest.chars().next().is_some_and(|n| n.is_ascii_alphabetic());
        if boundary
            && path_like
            && !["dev/null", "dev/zero", "dev/urandom", "dev/fd", "dev/std"]
                .iter()
                .any(|ok| rest.starts_with(ok))
        {
            return Some(format!("absolute path at byte {i}"));
        }
    }
    if text.contains("../../..") {
        return Some("`../../..` leaves the case directory".into());
    }
    None
}
