//! What the catalog tells others: the user (`/agents`, `agents list`), the
//! main agent's system prompt (the "Available Sub-Agents" section Gemini CLI
//! 0.61 adds when `invoke_agent` is declared) and the note a prompt's
//! `@agent` mention adds to the request.

use gd_protocol::{AgentInfo, AgentKind, DefinitionError};

use super::{AgentCatalog, AgentDefinition, AgentTools, ModelChoiceForAgent};

/// The tool the main agent calls subagents with.
pub const INVOKE_AGENT: &str = "invoke_agent";

/// Shown for `kind: remote` definitions.
pub const REMOTE_NOTE: &str = "remote (A2A) agents are not supported yet";

/// Every agent of the catalog, for the user, and the files that failed.
pub fn listing(catalog: &AgentCatalog) -> (Vec<AgentInfo>, Vec<DefinitionError>) {
    let agents = catalog.all().iter().map(|a| info(catalog, a)).collect();
    let errors = catalog.errors().iter().cloned().map(Into::into).collect();
    (agents, errors)
}

/// One agent as the listing shows it.
pub fn info(catalog: &AgentCatalog, agent: &AgentDefinition) -> AgentInfo {
    let remote = agent.kind == AgentKind::Remote;
    let note = if remote {
        Some(REMOTE_NOTE.to_owned())
    } else if !agent.enabled {
        Some("disabled by agents.overrides".to_owned())
    } else {
        None
    };
    let note = match (note, catalog.note(&agent.name)) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or_else(|| b.map(str::to_owned)),
    };
    AgentInfo {
        name: agent.name.clone(),
        display_name: agent.display_name.clone(),
        description: agent.description.clone(),
        kind: agent.kind,
        source: agent.source,
        path: agent.path.as_ref().map(|p| p.display().to_string()),
        model: match &agent.model {
            ModelChoiceForAgent::Inherit => "inherit".to_owned(),
            ModelChoiceForAgent::Named(name) => name.clone(),
        },
        tools: match &agent.tools {
            AgentTools::Inherit => None,
            AgentTools::Listed(tools) => Some(tools.clone()),
        },
        max_turns: agent.max_turns,
        timeout_mins: u32::try_from(agent.timeout.as_secs().div_ceil(60)).unwrap_or(u32::MAX),
        enabled: agent.enabled && !remote,
        note,
    }
}

/// The system prompt's section naming the agents the model may call
/// (0.61's "Available Sub-Agents": a short how-to, then one line per agent,
/// `- name -> description`); `None` without runnable agents. Added only
/// when `invoke_agent` is declared.
pub fn prompt_section(catalog: &AgentCatalog) -> Option<String> {
    let mut list = String::new();
    for agent in catalog.runnable() {
        list.push_str(&format!(
            "- {} -> {}\n",
            agent.name,
            agent.description.trim()
        ));
    }
    if list.is_empty() {
        return None;
    }
    Some(format!(
        "\n# Available Sub-Agents\n\
Sub-agents are specialists that can do all or part of a task for you, in their own context, and report back.\n\n\
Call one with the `{INVOKE_AGENT}` tool, passing its name as `agent_name`. When a task matches a sub-agent's expertise, delegate it to that sub-agent.\n\n\
These sub-agents are available:\n\n\
{list}\n\
Prefer the closest matching sub-agent even when its expertise is broader than the task (a license agent also checks headers; a test-fixing agent also investigates failing tests).\n"
    ))
}

/// Appends [`prompt_section`] to the session's (default) system prompt
/// when `invoke_agent` is among the declared `tools` (0.61 adds the section
/// only then: naming agents the model cannot call would mislead it).
pub fn add_prompt_section(config: &mut crate::config::SessionConfig, tools: &[String]) {
    if !tools.iter().any(|t| t == INVOKE_AGENT) {
        return;
    }
    if let Some(section) = prompt_section(&config.agents) {
        config.system_prompt.push_str(&section);
    }
}

/// The runnable agents a prompt mentions as `@name`, in order, once each.
/// In 0.61 a mention of an agent is not a file reference, even if a file of
/// that name exists.
pub fn mentioned_agents(catalog: &AgentCatalog, prompt: &str) -> Vec<String> {
    if !prompt.contains('@') || catalog.runnable().next().is_none() {
        return Vec::new();
    }
    let mut names: Vec<String> = Vec::new();
    for reference in crate::at_refs::parse_references(prompt) {
        let is_agent = catalog.runnable().any(|a| a.name == reference.path);
        if is_agent && !names.contains(&reference.path) {
            names.push(reference.path);
        }
    }
    names
}

/// The note 0.61 appends (as its own text part, after the prompt) when the
/// user mentions agents: a `<system_note>` naming them so the model
/// delegates with `invoke_agent`.
pub fn mention_nudge(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    format!(
        "\n<system_note>\nThe user has chosen these agent(s) for this request: {}. Delegate the task with the {INVOKE_AGENT} tool, passing agent_name {}.\n</system_note>\n",
        names.join(", "),
        quoted.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use gd_protocol::DefinitionSource;
    use std::time::Duration;

    fn agent(name: &str, kind: AgentKind, enabled: bool) -> AgentDefinition {
        AgentDefinition {
            name: name.into(),
            display_name: None,
            description: format!("{name} does things"),
            kind,
            source: DefinitionSource::User,
            path: None,
            system_prompt: String::new(),
            tools: AgentTools::Inherit,
            model: ModelChoiceForAgent::Inherit,
            temperature: None,
            max_turns: 30,
            timeout: Duration::from_secs(600),
            enabled,
            mcp_servers: Default::default(),
        }
    }

    fn catalog() -> AgentCatalog {
        AgentCatalog::new(
            vec![
                agent("reviewer", AgentKind::Local, true),
                agent("off", AgentKind::Local, false),
                agent("far", AgentKind::Remote, true),
            ],
            Vec::new(),
        )
    }

    #[test]
    fn the_section_lists_runnable_agents_only() {
        let section = prompt_section(&catalog()).unwrap();
        assert!(section.contains("# Available Sub-Agents"));
        assert!(section.contains("- reviewer -> reviewer does things\n"));
        assert!(!section.contains("- off") && !section.contains("- far"));
        assert_eq!(prompt_section(&AgentCatalog::default()), None);
    }

    #[test]
    fn mentions_of_runnable_agents() {
        let c = catalog();
        assert_eq!(
            mentioned_agents(&c, "@reviewer, check @src/main.rs and @off @far @reviewer"),
            vec!["reviewer".to_string()]
        );
        assert!(mentioned_agents(&c, "mail me@reviewer").is_empty());
        let nudge = mention_nudge(&["reviewer".into()]);
        assert!(nudge.contains("<system_note>") && nudge.contains("'reviewer'"));
    }

    #[test]
    fn remote_agents_are_listed_not_runnable() {
        let c = catalog();
        let (infos, _) = listing(&c);
        let far = infos.iter().find(|i| i.name == "far").unwrap();
        assert!(!far.enabled);
        assert_eq!(far.note.as_deref(), Some(REMOTE_NOTE));
        let off = infos.iter().find(|i| i.name == "off").unwrap();
        assert!(!off.enabled && off.note.is_some());
    }
}
