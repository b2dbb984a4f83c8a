//! Every slash command of a session under its final name: the built-in
//! ones, the MCP servers' prompts and the custom commands.
//!
//! Names are given out as Gemini CLI's command resolver does: built-in
//! commands keep theirs; when other commands want the same name, each of
//! them is renamed with a prefix: `server.prompt` for an MCP prompt,
//! `user.name` / `workspace.name` for a custom command (then `…1`, `…2` if
//! that is taken too). An MCP prompt's own name has its whitespace turned
//! into `-`.

use std::collections::BTreeMap;

use gd_protocol::{McpPromptInfo, SlashCommandInfo, SlashCommandSource};

use super::{BUILT_IN, CustomCommand};

/// What running a command means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A built-in command, by its canonical name (handled by the frontend).
    BuiltIn(&'static str),
    /// A custom command, by its key in the loaded commands.
    Custom(String),
    /// A prompt of an MCP server.
    McpPrompt(McpPromptInfo),
}

/// One command under its final name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub info: SlashCommandInfo,
    pub target: Target,
}

/// The commands of a session at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    entries: Vec<Entry>,
}

impl Catalog {
    /// The catalog from the loaded custom commands and the connected MCP
    /// servers' prompts. `/restore` is only there with checkpointing on.
    pub fn new(
        custom: &BTreeMap<String, CustomCommand>,
        prompts: &[McpPromptInfo],
        checkpointing: bool,
    ) -> Self {
        let mut candidates: Vec<Entry> = BUILT_IN
            .iter()
            .filter(|b| checkpointing || b.name != "restore")
            .map(|b| Entry {
                info: SlashCommandInfo {
                    name: b.name.to_owned(),
                    description: b.description.to_owned(),
                    source: SlashCommandSource::BuiltIn,
                    alt_names: b.alt_names.iter().map(|n| (*n).to_owned()).collect(),
                    server: None,
                    arguments: Vec::new(),
                },
                target: Target::BuiltIn(b.name),
            })
            .collect();
        candidates.extend(prompts.iter().map(|p| {
            Entry {
                info: SlashCommandInfo {
                    name: p.name.split_whitespace().collect::<Vec<_>>().join("-"),
                    description: p
                        .description
                        .clone()
                        .filter(|d| !d.trim().is_empty())
                        .unwrap_or_else(|| format!("Invoke prompt {}", p.name)),
                    source: SlashCommandSource::McpPrompt,
                    alt_names: Vec::new(),
                    server: Some(p.server.clone()),
                    arguments: p.arguments.clone(),
                },
                target: Target::McpPrompt(p.clone()),
            }
        }));
        candidates.extend(custom.values().map(|c| Entry {
            info: SlashCommandInfo {
                name: c.name.clone(),
                description: c.description.clone(),
                source: c.source,
                alt_names: Vec::new(),
                server: None,
                arguments: Vec::new(),
            },
            target: Target::Custom(c.name.clone()),
        }));
        Self {
            entries: resolve_names(candidates),
        }
    }

    /// The command `name` runs: its final name, or a built-in one's other
    /// name.
    pub fn find(&self, name: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.info.name == name)
            .or_else(|| {
                self.entries
                    .iter()
                    .find(|e| e.info.alt_names.iter().any(|a| a == name))
            })
    }

    /// What autocomplete offers, built-in commands first.
    pub fn infos(&self) -> Vec<SlashCommandInfo> {
        self.entries.iter().map(|e| e.info.clone()).collect()
    }
}

/// Gives every candidate a unique name (see the module documentation).
/// Candidates come in Gemini CLI's loading order (built-in, MCP prompts,
/// custom commands); the result keeps that order.
fn resolve_names(candidates: Vec<Entry>) -> Vec<Entry> {
    // Final name → index into `candidates`, in the order names were given.
    let mut taken: Vec<(String, usize)> = Vec::new();
    let mut first_claimed: Vec<String> = Vec::new();
    for (index, candidate) in candidates.iter().enumerate() {
        let name = candidate.info.name.clone();
        let final_name = if first_claimed.contains(&name) {
            if !matches!(candidate.target, Target::BuiltIn(_)) {
                let renamed = renamed(&name, prefix(candidate), &taken);
                rename_owner(&name, &candidates, &mut taken);
                renamed
            } else {
                rename_owner(&name, &candidates, &mut taken);
                name
            }
        } else {
            first_claimed.push(name.clone());
            name
        };
        taken.push((final_name, index));
    }
    let mut entries: Vec<(usize, Entry)> = taken
        .into_iter()
        .map(|(name, index)| {
            let mut entry = candidates[index].clone();
            entry.info.name = name;
            (index, entry)
        })
        .collect();
    entries.sort_by_key(|(index, _)| *index);
    entries.into_iter().map(|(_, entry)| entry).collect()
}

/// Moves the command holding `name` (unless it is built-in) to its prefixed
/// name.
fn rename_owner(name: &str, candidates: &[Entry], taken: &mut Vec<(String, usize)>) {
    let Some(position) = taken.iter().position(|(n, _)| n == name) else {
        return;
    };
    let owner = &candidates[taken[position].1];
    if matches!(owner.target, Target::BuiltIn(_)) {
        return;
    }
    let (_, index) = taken.remove(position);
    let renamed = renamed(&owner.info.name, prefix(owner), taken);
    taken.push((renamed, index));
}

fn prefix(entry: &Entry) -> Option<&str> {
    match (&entry.target, entry.info.source) {
        (Target::McpPrompt(p), _) => Some(p.server.as_str()),
        (Target::Custom(_), SlashCommandSource::User) => Some("user"),
        (Target::Custom(_), SlashCommandSource::Project) => Some("workspace"),
        _ => None,
    }
}

/// `prefix.name`, with a number after it while that is taken.
fn renamed(name: &str, prefix: Option<&str>, taken: &[(String, usize)]) -> String {
    let base = prefix.map_or_else(|| name.to_owned(), |p| format!("{p}.{name}"));
    let mut candidate = base.clone();
    let mut suffix = 1;
    while taken.iter().any(|(n, _)| *n == candidate) {
        candidate = format!("{base}{suffix}");
        suffix += 1;
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;
    use gd_protocol::McpPromptArgument;
    use std::path::PathBuf;

    fn prompt(server: &str, name: &str) -> McpPromptInfo {
        McpPromptInfo {
            server: server.into(),
            name: name.into(),
            description: None,
            arguments: vec![McpPromptArgument {
                name: "x".into(),
                description: None,
                required: true,
            }],
        }
    }

    fn custom(name: &str, source: SlashCommandSource) -> (String, CustomCommand) {
        (
            name.to_owned(),
            CustomCommand {
                name: name.into(),
                description: "d".into(),
                prompt: "p".into(),
                path: PathBuf::from("x.toml"),
                source,
            },
        )
    }

    fn names(catalog: &Catalog) -> Vec<String> {
        catalog.infos().into_iter().map(|i| i.name).collect()
    }

    #[test]
    fn names_are_resolved_as_gemini_cli_does() {
        let custom: BTreeMap<_, _> = [
            custom("clear", SlashCommandSource::User),
            custom("greet", SlashCommandSource::Project),
            custom("solo", SlashCommandSource::User),
        ]
        .into_iter()
        .collect();
        let prompts = [
            prompt("a", "greet"),
            prompt("b", "greet"),
            prompt("a", "stats"),
            prompt("a", "code review"),
        ];
        let catalog = Catalog::new(&custom, &prompts, false);
        assert_eq!(
            names(&catalog),
            [
                "clear",
                "compress",
                "memory",
                "mcp",
                "stats",
                "policies",
                "agents",
                "skills",
                "hooks",
                "extensions",
                "a.greet",
                "b.greet",
                "a.stats",
                "code-review",
                "user.clear",
                "workspace.greet",
                "solo",
            ]
        );
        assert_eq!(
            catalog.find("new").unwrap().target,
            Target::BuiltIn("clear")
        );
        assert_eq!(catalog.find("restore"), None, "checkpointing is off");
        assert!(
            Catalog::new(&custom, &prompts, true)
                .find("restore")
                .is_some()
        );
        let Target::McpPrompt(p) = &catalog.find("b.greet").unwrap().target else {
            panic!("not a prompt");
        };
        assert_eq!(p.server, "b");
        assert_eq!(
            catalog.find("code-review").unwrap().info.description,
            "Invoke prompt code review"
        );
        assert_eq!(
            catalog.find("user.clear").unwrap().target,
            Target::Custom("clear".into())
        );
    }
}
