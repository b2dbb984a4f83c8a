//! `extensions list` text, line for line as 0.61's `toOutputString`.

use std::path::Path;

use crate::{Extension, sha256_hex};

/// One extension's block (no trailing newline). `enabled_here` and
/// `enabled_for_user` are 0.61's `Enabled (Workspace)` and `Enabled (User)`.
pub fn block(ext: &Extension) -> String {
    let mut out = format!(
        "{} {} ({})",
        if ext.enabled { "\u{2713}" } else { "\u{2717}" },
        ext.manifest.name,
        ext.manifest.version
    );
    out.push_str(&format!("\n ID: {}", ext.id()));
    out.push_str(&format!("\n name: {}", sha256_hex(&ext.manifest.name)));
    out.push_str(&format!("\n Path: {}", ext.path.display()));
    if let Some(m) = &ext.install {
        out.push_str(&format!(
            "\n Source: {} (Type: {})",
            m.source,
            m.kind.as_str()
        ));
        if let Some(r) = &m.git_ref {
            out.push_str(&format!("\n Ref: {r}"));
        }
        if let Some(t) = &m.release_tag {
            out.push_str(&format!("\n Release tag: {t}"));
        }
    }
    out.push_str(&format!("\n Enabled (User): {}", ext.enabled_for_user));
    out.push_str(&format!("\n Enabled (Workspace): {}", ext.enabled));
    let c = &ext.contributions;
    if !c.context_files.is_empty() {
        out.push_str("\n Context files:");
        for f in &c.context_files {
            out.push_str(&format!("\n  {}", f.display()));
        }
    }
    if !ext.manifest.mcp_servers.is_empty() {
        out.push_str("\n MCP servers:");
        for name in ext.manifest.mcp_servers.keys() {
            out.push_str(&format!("\n  {name}"));
        }
    }
    if let Some(tools) = &ext.manifest.exclude_tools {
        out.push_str("\n Excluded tools:");
        for t in tools {
            out.push_str(&format!("\n  {t}"));
        }
    }
    if !c.skills.is_empty() {
        out.push_str("\n Agent skills:");
        for s in &c.skills {
            out.push_str(&format!("\n  {s}"));
        }
    }
    out
}

/// The whole listing: blocks separated by an empty line, or 0.61's
/// `No extensions installed.`.
pub fn text(extensions: &[Extension]) -> String {
    if extensions.is_empty() {
        return "No extensions installed.".into();
    }
    extensions
        .iter()
        .map(block)
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// For messages: a path shown as given.
pub fn shown(path: &Path) -> String {
    path.display().to_string()
}
