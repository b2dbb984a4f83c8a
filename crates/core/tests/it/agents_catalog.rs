//! Agent definitions (Gemini CLI 0.61's `.gemini/agents/*.md`): real files
//! in a temporary home and workspace, read by the loader a launch uses;
//! the listing a session answers `Op::ListAgents` with; the note an
//! `@agent` mention adds to the request the fake Gemini server receives.

use crate::common;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use gd_core::subagents::{AgentCatalog, AgentTools, ModelChoiceForAgent, builtin, listing, load};
use gd_protocol::{AgentKind, DefinitionSource, Event, Op, TurnStatus};
use gd_settings::Settings;
use pretty_assertions::assert_eq;
use serde_json::json;

fn settings(value: serde_json::Value) -> Settings {
    serde_json::from_value(value).unwrap()
}

impl Dirs {
    fn user(&self, file: &str, text: &str) -> PathBuf {
        let path = self.home.join(".gemini/agents").join(file);
        write_creating(&path, text);
        path
    }

    fn workspace(&self, file: &str, text: &str) -> PathBuf {
        let path = self.ws.join(".gemini/agents").join(file);
        write_creating(&path, text);
        path
    }

    fn load(&self, settings: &Settings, trusted: bool) -> AgentCatalog {
        load::load(settings, Some(&self.home), &self.ws, trusted)
    }
}

const FULL: &str = "---
name: security-auditor
display_name: Security Auditor
description: Finds security problems in the code.
kind: local
tools:
  - read_file
  - grep_search
  - mcp_github_*
model: gemini-2.5-pro
temperature: 0.2
max_turns: 12
timeout_mins: 4
---

You are a security auditor.
Report what you find.
";

const MINIMAL: &str = "---
name: helper
description: Helps.
---
Be helpful.
";

fn file_agents(catalog: &AgentCatalog) -> Vec<&str> {
    catalog
        .all()
        .iter()
        .filter(|a| a.source != DefinitionSource::BuiltIn)
        .map(|a| a.name.as_str())
        .collect()
}

#[test]
fn user_and_workspace_files_load_with_every_field() {
    let d = Dirs::new();
    let full = d.workspace("auditor.md", FULL);
    d.user("helper.md", MINIMAL);
    // Skipped as 0.61 does: drafts (`_`) and files that are not `.md`.
    d.user("_draft.md", "---\nname: draft\ndescription: d\n---\n");
    d.user("notes.txt", "not an agent");
    let catalog = d.load(&Settings::default(), true);
    assert_eq!(catalog.errors(), &[]);

    // Built-in agents first, then the workspace's, then the user's.
    let builtins: Vec<String> = builtin::agents().into_iter().map(|a| a.name).collect();
    let names: Vec<&str> = catalog.all().iter().map(|a| a.name.as_str()).collect();
    assert_eq!(&names[..builtins.len()], builtins.as_slice());
    assert_eq!(file_agents(&catalog), ["security-auditor", "helper"]);

    let a = catalog.get("security-auditor").unwrap();
    assert_eq!(a.display_name.as_deref(), Some("Security Auditor"));
    assert_eq!(a.description, "Finds security problems in the code.");
    assert_eq!(a.kind, AgentKind::Local);
    assert_eq!(a.source, DefinitionSource::Workspace);
    assert_eq!(a.path.as_deref(), Some(full.as_path()));
    assert_eq!(
        a.system_prompt,
        "You are a security auditor.\nReport what you find."
    );
    assert_eq!(
        a.tools,
        AgentTools::Listed(vec![
            "read_file".into(),
            "grep_search".into(),
            "mcp_github_*".into()
        ])
    );
    assert_eq!(a.model, ModelChoiceForAgent::Named("gemini-2.5-pro".into()));
    assert_eq!(a.temperature, Some(0.2));
    assert_eq!(a.max_turns, 12);
    assert_eq!(a.timeout, Duration::from_secs(4 * 60));
    assert!(a.enabled);

    // 0.61's defaults.
    let h = catalog.get("helper").unwrap();
    assert_eq!(h.source, DefinitionSource::User);
    assert_eq!(h.tools, AgentTools::Inherit);
    assert_eq!(h.model, ModelChoiceForAgent::Inherit);
    assert_eq!((h.max_turns, h.timeout), (30, Duration::from_secs(600)));
    assert_eq!(h.temperature, None);
}

#[test]
fn a_bad_front_matter_names_the_file_and_line_and_the_others_still_load() {
    let d = Dirs::new();
    d.user("helper.md", MINIMAL);
    let bad = d.user(
        "broken.md",
        "---\nname: broken\ndescription: d\nmax_turns: many\n---\nbody\n",
    );
    let unknown = d.workspace(
        "typo.md",
        "---\nname: typo\ndescription: d\n\nmax_turn: 3\n---\n",
    );
    let catalog = d.load(&Settings::default(), true);
    assert_eq!(file_agents(&catalog), ["helper"]);
    let errors: Vec<(PathBuf, Option<u32>)> = catalog
        .errors()
        .iter()
        .map(|e| (e.path.clone(), e.line))
        .collect();
    assert_eq!(errors, [(unknown.clone(), Some(5)), (bad.clone(), Some(4))]);
    assert!(
        catalog.errors()[0].message.contains("max_turn"),
        "{:?}",
        catalog.errors()
    );
    let warnings = catalog.launch_warnings();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains(&format!("{}:4: ", bad.display()))),
        "{warnings:?}"
    );
    let (_, listed) = listing::listing(&catalog);
    assert_eq!(listed[1].path, bad.display().to_string());
    assert_eq!(listed[1].line, Some(4));
}

#[test]
fn an_untrusted_folder_skips_workspace_agents() {
    let d = Dirs::new();
    d.workspace("auditor.md", FULL);
    d.workspace("broken.md", "---\nname: [\n---\n");
    d.user("helper.md", MINIMAL);
    let catalog = d.load(&Settings::default(), false);
    assert_eq!(file_agents(&catalog), ["helper"]);
    assert_eq!(
        catalog.errors(),
        &[],
        "an untrusted folder's files are not even read"
    );
}

#[test]
fn the_first_definition_of_a_name_wins_as_in_0_61() {
    let d = Dirs::new();
    d.workspace(
        "helper.md",
        "---\nname: helper\ndescription: From the workspace.\n---\n",
    );
    d.user("helper.md", MINIMAL);
    let catalog = d.load(&Settings::default(), true);
    assert_eq!(file_agents(&catalog), ["helper"]);
    assert_eq!(
        catalog.get("helper").unwrap().description,
        "From the workspace."
    );
    let warnings = catalog.launch_warnings();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("Duplicate agent name 'helper'")),
        "{warnings:?}"
    );
    // A file cannot replace a built-in agent.
    if let Some(first) = builtin::agents().first() {
        d.user(
            "shadow.md",
            &format!("---\nname: {}\ndescription: impostor\n---\n", first.name),
        );
        let catalog = d.load(&Settings::default(), true);
        assert_eq!(
            catalog.get(&first.name).unwrap().source,
            DefinitionSource::BuiltIn
        );
    }
}

#[test]
fn overrides_disable_agents_and_change_their_limits() {
    let d = Dirs::new();
    d.user("helper.md", MINIMAL);
    d.workspace("auditor.md", FULL);
    let s = settings(json!({"agents": {"overrides": {
        "helper": {"enabled": false},
        "security-auditor": {
            "modelConfig": {"model": "gemini-2.5-flash", "generateContentConfig": {"temperature": 0.7}},
            "runConfig": {"maxTurns": 3, "maxTimeMinutes": 1}
        },
        "broken": {"runConfig": {"maxTurns": "three"}}
    }}}));
    let catalog = d.load(&s, true);
    let helper = catalog.get("helper").unwrap();
    assert!(!helper.enabled);
    assert!(catalog.runnable().all(|a| a.name != "helper"));
    let a = catalog.get("security-auditor").unwrap();
    assert_eq!(
        a.model,
        ModelChoiceForAgent::Named("gemini-2.5-flash".into())
    );
    assert_eq!(a.temperature, Some(0.7));
    assert_eq!((a.max_turns, a.timeout), (3, Duration::from_secs(60)));
    let warnings = catalog.launch_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("agents.overrides.broken"),
        "{warnings:?}"
    );
    let (infos, _) = listing::listing(&catalog);
    let helper = infos.iter().find(|i| i.name == "helper").unwrap();
    assert!(!helper.enabled);
    assert_eq!(helper.note.as_deref(), Some("disabled by agents.overrides"));
}

#[test]
fn enable_agents_false_gives_an_empty_catalog() {
    let d = Dirs::new();
    d.user("helper.md", MINIMAL);
    let catalog = d.load(
        &settings(json!({"experimental": {"enableAgents": false}})),
        true,
    );
    assert!(catalog.all().is_empty());
    let catalog = d.load(
        &settings(json!({"experimental": {"enableAgents": true}})),
        true,
    );
    assert_eq!(file_agents(&catalog), ["helper"]);
}

#[test]
fn remote_agents_are_recognised_not_runnable() {
    let d = Dirs::new();
    d.user(
        "remote.md",
        "---\nkind: remote\nname: far-away\ndescription: Lives elsewhere.\nagent_card_url: https://example.com/card.json\n---\n",
    );
    d.user(
        "inline-mcp.md",
        "---\nname: with-mcp\ndescription: d\nmcp_servers:\n  github:\n    command: gh-mcp\n---\n",
    );
    let catalog = d.load(&Settings::default(), true);
    assert_eq!(catalog.errors(), &[]);
    let remote = catalog.get("far-away").unwrap();
    assert_eq!(remote.kind, AgentKind::Remote);
    assert!(catalog.runnable().all(|a| a.name != "far-away"));
    let (infos, _) = listing::listing(&catalog);
    let info = infos.iter().find(|i| i.name == "far-away").unwrap();
    assert!(!info.enabled);
    assert_eq!(info.note.as_deref(), Some(listing::REMOTE_NOTE));
    // Inline MCP servers are loaded, and the listing says they start with
    // the agent (tests/it/subagents_mcp.rs runs one).
    let mcp = infos.iter().find(|i| i.name == "with-mcp").unwrap();
    assert!(mcp.enabled);
    assert!(
        mcp.note
            .as_deref()
            .is_some_and(|n| n.contains("github") && n.contains("start when it runs")),
        "{mcp:?}"
    );
}

fn catalog_with_reviewer(d: &Dirs) -> Arc<AgentCatalog> {
    d.user(
        "reviewer.md",
        "---\nname: reviewer\ndescription: Reviews changes.\n---\nYou review.\n",
    );
    Arc::new(d.load(&Settings::default(), true))
}

#[tokio::test]
async fn a_session_lists_its_agents() {
    let d = Dirs::new();
    d.user("broken.md", "---\nname: broken\n---\n");
    let agents = catalog_with_reviewer(&d);
    let mut h = Harness::start_with(json!({"steps": []}), |c| c.agents = agents.clone());
    h.handle.submit(Op::ListAgents).unwrap();
    let event = loop {
        let event = tokio::time::timeout(Duration::from_secs(10), h.events.recv())
            .await
            .unwrap()
            .unwrap();
        if matches!(event, Event::Agents { .. }) {
            break event;
        }
    };
    let Event::Agents { agents, errors } = event else {
        unreachable!()
    };
    assert!(agents.iter().any(|a| a.name == "reviewer" && a.enabled));
    assert_eq!(errors.len(), 1);
    assert!(errors[0].path.ends_with("broken.md") && errors[0].message.contains("description"));
}

#[tokio::test]
async fn an_agent_mention_adds_the_note_and_is_not_a_file_reference() {
    let d = Dirs::new();
    let agents = catalog_with_reviewer(&d);
    let mut h = Harness::start_with(json!({"steps": [{"text": "ok"}]}), |c| {
        c.agents = agents.clone()
    });
    // A file named like the agent is not read: the mention is the agent's.
    std::fs::write(h.workspace.join("reviewer"), "FILE CONTENT").unwrap();
    let hello = std::fs::read_to_string(h.workspace.join("hello.txt")).unwrap();
    let prompt = "@reviewer please check @hello.txt";
    let events = h.turn(prompt).await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let body = &h.bodies()[0];
    let texts: Vec<String> = body["contents"][0]["parts"].as_array().unwrap()[1..]
        .iter()
        .map(|p| p["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        texts,
        [
            prompt.to_owned(),
            listing::mention_nudge(&["reviewer".into()]),
            "\n--- Content from referenced files ---".to_owned(),
            "\nContent from @hello.txt:\n".to_owned(),
            hello,
            "\n--- End of content ---".to_owned(),
        ]
    );
    assert!(texts[1].contains("<system_note>") && texts[1].contains("'reviewer'"));
    assert!(!texts.concat().contains("FILE CONTENT"));

    // A prompt that only mentions the agent: the prompt, then the note.
    h.reset(json!({"steps": [{"text": "ok"}]}));
    h.turn("ask @reviewer.").await;
    let body = h.bodies().last().unwrap().clone();
    let parts = body["contents"].as_array().unwrap().last().unwrap()["parts"].clone();
    assert_eq!(parts[0]["text"], "ask @reviewer.");
    assert!(parts[1]["text"].as_str().unwrap().contains("<system_note>"));
}

#[test]
fn the_prompt_section_lists_runnable_agents_when_invoke_agent_is_declared() {
    let d = Dirs::new();
    let agents = catalog_with_reviewer(&d);
    let mut config = gd_core::SessionConfig::new(MODEL, d.ws.clone(), "BASE".into());
    config.agents = agents;
    listing::add_prompt_section(&mut config, &["read_file".into()]);
    assert_eq!(config.system_prompt, "BASE");
    listing::add_prompt_section(&mut config, &["read_file".into(), "invoke_agent".into()]);
    assert!(
        config
            .system_prompt
            .starts_with("BASE\n# Available Sub-Agents\n")
    );
    assert!(
        config
            .system_prompt
            .contains("\n- reviewer -> Reviews changes.\n")
    );
}
