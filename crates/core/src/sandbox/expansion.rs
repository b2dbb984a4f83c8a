//! Asking the user to widen the sandbox for a command it refused something, and what the model
//! hears either way.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gd_protocol::ConfirmationDetails;
use gd_sandbox::Denial;

use super::grants::Grant;

/// What to ask for a command refused `denial`: the confirmation and the grant a yes gives.
/// `None` when nothing can be granted (e.g. it wrote into a protected part of the workspace,
/// `.git/hooks` or `.gemini`, which no grant opens).
pub fn request(
    command: &str,
    cwd: &Path,
    denial: &Denial,
    workspace_dirs: &[PathBuf],
) -> Option<(ConfirmationDetails, Grant)> {
    let grant = grant_for(denial, workspace_dirs);
    if grant.is_empty() {
        return None;
    }
    let details = ConfirmationDetails::Sandbox {
        title: format!("This command needs {}", needs(&grant)),
        command: command.to_owned(),
        directory: cwd.display().to_string(),
        network: grant.network,
        paths: grant
            .paths
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        evidence: denial.evidence.clone(),
    };
    Some((details, grant))
}

/// The folders to open for the paths a command failed to write: an existing folder itself,
/// else the closest folder above it that exists (what bubblewrap can bind; the card names it,
/// so the user sees exactly what a yes allows). Paths inside the workspace are its protected
/// parts: never granted.
fn grant_for(denial: &Denial, workspace_dirs: &[PathBuf]) -> Grant {
    let mut paths = BTreeSet::new();
    for path in &denial.paths {
        if workspace_dirs.iter().any(|dir| path.starts_with(dir)) {
            continue;
        }
        let mut folder = path.as_path();
        while !folder.is_dir() {
            match folder.parent() {
                Some(parent) => folder = parent,
                None => break,
            }
        }
        if folder.is_dir() && folder != Path::new("/") {
            paths.insert(folder.to_path_buf());
        }
    }
    Grant {
        network: denial.network,
        paths,
    }
}

/// "network access", "to write in /x", "network access and to write in /x, /y".
fn needs(grant: &Grant) -> String {
    let paths: Vec<String> = grant
        .paths
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    match (grant.network, paths.is_empty()) {
        (true, true) => "network access".to_owned(),
        (false, _) => format!("to write in {}", paths.join(", ")),
        (true, false) => format!("network access and to write in {}", paths.join(", ")),
    }
}

/// What the sandbox refused, for the model: "network access", "writing to /x".
fn refused(denial: &Denial) -> String {
    let mut parts = Vec::new();
    if denial.network {
        parts.push("network access (commands have no network in the sandbox)".to_owned());
    }
    if !denial.paths.is_empty() {
        let paths: Vec<String> = denial
            .paths
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        parts.push(format!(
            "writing to {} (outside the folders it may write in)",
            paths.join(", ")
        ));
    }
    parts.join(" and ")
}

/// Why a refusal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The user answered no.
    Declined,
    /// Nobody can be asked (headless, a subagent running alone).
    NoOneToAsk,
    /// The sandbox never opens it (a protected part of the workspace, the filesystem root).
    NotGrantable,
}

/// Appended to the result of a command the sandbox refused something, when it stays refused.
pub fn refused_note(denial: &Denial, why: Refusal) -> String {
    let why = match why {
        Refusal::Declined => "The user did not allow it.",
        Refusal::NoOneToAsk => "Nobody could be asked to allow it, so it was not allowed.",
        Refusal::NotGrantable => "The sandbox never allows that.",
    };
    format!(
        "The sandbox refused this command {}. {why} Do not try to get around the sandbox; \
         do the task another way, or tell the user what it needs.",
        refused(denial)
    )
}

/// Put before the result of a run the user allowed after the sandbox refused the first.
pub fn granted_note(grant: &Grant, always: bool) -> String {
    format!(
        "The sandbox refused the first run; the user allowed this command {} {}, and it ran again:",
        needs(grant),
        if always {
            "for this command for the rest of the session"
        } else {
            "once"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_outside_asks_for_the_closest_existing_folder() {
        let outside = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let denial = Denial {
            network: false,
            paths: vec![
                outside.path().join("new/deeper/file"),
                ws.path().join(".git/hooks/pre-commit"),
            ],
            evidence: "touch: cannot touch".into(),
        };
        let (details, grant) =
            request("touch x", ws.path(), &denial, &[ws.path().to_path_buf()]).unwrap();
        assert_eq!(grant.paths, BTreeSet::from([outside.path().to_path_buf()]));
        let ConfirmationDetails::Sandbox { title, network, .. } = details else {
            panic!("a sandbox confirmation");
        };
        assert!(!network);
        assert_eq!(
            title,
            format!(
                "This command needs to write in {}",
                outside.path().display()
            )
        );
    }

    #[test]
    fn nothing_to_ask_for_a_protected_part_or_the_root() {
        let ws = tempfile::tempdir().unwrap();
        let denial = Denial {
            network: false,
            paths: vec![ws.path().join(".gemini/settings.json"), PathBuf::from("/x")],
            evidence: String::new(),
        };
        assert!(request("c", ws.path(), &denial, &[ws.path().to_path_buf()]).is_none());
    }

    #[test]
    fn the_model_hears_what_was_refused_and_why() {
        let denial = Denial {
            network: true,
            paths: vec![PathBuf::from("/srv/x")],
            evidence: String::new(),
        };
        let note = refused_note(&denial, Refusal::Declined);
        assert!(
            note.contains("network access") && note.contains("/srv/x"),
            "{note}"
        );
        assert!(note.contains("The user did not allow it."), "{note}");
        let grant = Grant {
            network: true,
            paths: BTreeSet::new(),
        };
        assert!(granted_note(&grant, false).contains("allowed this command network access once"));
    }
}
