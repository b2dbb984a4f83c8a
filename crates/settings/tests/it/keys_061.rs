//! The README's table of Gemini CLI 0.61's settings keys names every key of
//! the committed list (`src/keys_061.txt`, produced from 0.61's own schema by
//! `scripts/settings-keys.mjs`), each with a status, and no key that is not
//! in the list: the table cannot silently fall behind the schema.

use std::collections::BTreeSet;

const SECTION: &str = "## Settings: Gemini CLI 0.61 keys";
const STATUSES: &[&str] = &[
    "**honoured**",
    "**partly honoured**",
    "**not applicable**",
    "**planned**",
];

fn committed_keys() -> Vec<String> {
    include_str!("../../src/keys_061.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// `(key, status cell)` of each row of the section's tables.
fn readme_rows() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md at the workspace root");
    let start = readme
        .find(SECTION)
        .expect("the README has the keys section");
    let body = &readme[start + SECTION.len()..];
    let end = body.find("\n## ").unwrap_or(body.len());
    body[..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let key = cells.get(1)?.trim_matches('`').to_owned();
            Some((key, cells.get(2)?.to_string()))
        })
        .collect()
}

#[test]
fn the_list_is_0_61s_schema() {
    let keys = committed_keys();
    assert!(keys.len() > 200, "only {} keys", keys.len());
    for key in [
        "general.maxAttempts",
        "tools.truncateToolOutputThreshold",
        "mcpServers",
    ] {
        assert!(keys.iter().any(|k| k == key), "{key} missing");
    }
    let unique: BTreeSet<_> = keys.iter().collect();
    assert_eq!(unique.len(), keys.len(), "duplicates in keys_061.txt");
}

#[test]
fn every_key_has_a_row_with_a_status() {
    let rows = readme_rows();
    let keys = committed_keys();
    let in_table: BTreeSet<&str> = rows.iter().map(|(k, _)| k.as_str()).collect();
    let missing: Vec<&String> = keys
        .iter()
        .filter(|k| !in_table.contains(k.as_str()))
        .collect();
    assert!(missing.is_empty(), "keys without a README row: {missing:?}");
    let unknown: Vec<&str> = in_table
        .iter()
        .copied()
        .filter(|k| !keys.iter().any(|key| key == k))
        .collect();
    assert!(
        unknown.is_empty(),
        "README rows for keys 0.61 does not have: {unknown:?}"
    );
    let without_status: Vec<&String> = rows
        .iter()
        .filter(|(_, status)| !STATUSES.iter().any(|s| status.starts_with(s)))
        .map(|(k, _)| k)
        .collect();
    assert!(
        without_status.is_empty(),
        "rows whose status is not one of {STATUSES:?}: {without_status:?}"
    );
    assert_eq!(rows.len(), in_table.len(), "a key has two rows");
}
