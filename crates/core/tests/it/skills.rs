//! Agent skills (issue 19): discovery in every tier, `activate_skill`
//! through a real turn against the fake server (consent, instructions,
//! resources readable), disabled skills not declared, `/skills` ops, and
//! the declaration against Gemini CLI 0.61's fixture.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use gd_core::policy::PolicyApproval;
use gd_core::skills::{ActivateSkill, SkillCatalog, load};
use gd_core::tools::{ToolInfo, ToolRegistry};
use gd_fake_gemini::fixtures::gemini_cli_fixture;
use gd_policy::{PolicyEngine, default_rules};
use gd_protocol::{
    ApprovalMode, ConfirmationDetails, ConfirmationOutcome, DefinitionSource, Event, Op,
    SettingsScope,
};
use gd_settings::Settings;
use serde_json::{Value, json};

fn skill_md(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n")
}

impl Dirs {
    fn catalog(&self, settings: &Settings, trusted: bool) -> SkillCatalog {
        load(settings, Some(&self.home), &self.ws, trusted)
    }
}

/// One skill in every tier, and one name in two tiers.
fn every_tier(d: &Dirs) {
    let ext = d.home.join(".gemini/extensions/tools-ext");
    write_creating(
        &ext.join("gemini-extension.json"),
        r#"{"name": "tools-ext", "version": "1.0.0"}"#,
    );
    write_creating(
        &ext.join("skills/from-ext/SKILL.md"),
        &skill_md("from-ext", "Extension skill.", "E"),
    );
    write_creating(
        &d.home.join(".gemini/skills/from-user/SKILL.md"),
        &skill_md("from-user", "User skill.", "U"),
    );
    write_creating(
        &d.home.join(".agents/skills/from-alias/SKILL.md"),
        &skill_md("from-alias", "User alias skill.", "A"),
    );
    write_creating(
        &d.ws.join(".gemini/skills/from-ws/SKILL.md"),
        &skill_md("from-ws", "Workspace skill.", "W"),
    );
    write_creating(
        &d.ws.join(".agents/skills/from-ws-alias/SKILL.md"),
        &skill_md("from-ws-alias", "Workspace alias skill.", "WA"),
    );
    write_creating(
        &d.home.join(".gemini/skills/dup/SKILL.md"),
        &skill_md("dup", "User dup.", "user body"),
    );
    write_creating(
        &d.ws.join(".gemini/skills/dup/SKILL.md"),
        &skill_md("dup", "Workspace dup.", "ws body"),
    );
}

#[test]
fn skills_are_discovered_in_every_tier_and_a_later_tier_wins() {
    let d = Dirs::new();
    every_tier(&d);
    let catalog = d.catalog(&Settings::default(), true);
    let all = catalog.all();
    let found: Vec<(&str, DefinitionSource)> =
        all.iter().map(|s| (s.name.as_str(), s.source)).collect();
    assert_eq!(
        found,
        [
            ("skill-creator", DefinitionSource::BuiltIn),
            ("antigravity-support", DefinitionSource::BuiltIn),
            ("from-ext", DefinitionSource::Extension),
            ("dup", DefinitionSource::Workspace),
            ("from-user", DefinitionSource::User),
            ("from-alias", DefinitionSource::User),
            ("from-ws", DefinitionSource::Workspace),
            ("from-ws-alias", DefinitionSource::Workspace),
        ]
    );
    let dup = catalog.all().into_iter().find(|s| s.name == "dup").unwrap();
    assert_eq!(dup.instructions(), "ws body");
    let hidden: Vec<_> = catalog
        .infos()
        .into_iter()
        .filter(|i| i.shadowed_by.is_some())
        .collect();
    assert_eq!(hidden.len(), 1);
    assert_eq!(hidden[0].source, DefinitionSource::User);
    assert_eq!(hidden[0].shadowed_by, Some(DefinitionSource::Workspace));
    assert!(catalog.errors().is_empty(), "{:?}", catalog.errors());
}

#[test]
fn an_untrusted_folder_does_not_load_workspace_skills() {
    let d = Dirs::new();
    every_tier(&d);
    let catalog = d.catalog(&Settings::default(), false);
    let names: Vec<String> = catalog.all().iter().map(|s| s.name.clone()).collect();
    assert!(!names.iter().any(|n| n.starts_with("from-ws")), "{names:?}");
    let dup = catalog.all().into_iter().find(|s| s.name == "dup").unwrap();
    assert_eq!(dup.source, DefinitionSource::User);
}

#[test]
fn a_bad_front_matter_names_the_file_and_line_and_the_others_load() {
    let d = Dirs::new();
    let bad = d.home.join(".gemini/skills/bad/SKILL.md");
    write_creating(&bad, "---\nname: bad\ndescription: [unclosed\n---\nbody\n");
    write_creating(
        &d.home.join(".gemini/skills/good/SKILL.md"),
        &skill_md("good", "Fine.", "G"),
    );
    let catalog = d.catalog(&Settings::default(), true);
    assert!(catalog.all().iter().any(|s| s.name == "good"));
    assert_eq!(catalog.errors().len(), 1);
    let error = &catalog.errors()[0];
    assert_eq!(error.path, bad);
    assert!(matches!(error.line, Some(2..=4)), "{error}");
    assert!(
        error
            .to_string()
            .starts_with(&format!("{}:", bad.display())),
        "{error}"
    );
}

#[test]
fn disabled_skills_and_skills_enabled_false() {
    let d = Dirs::new();
    every_tier(&d);
    let settings: Settings =
        serde_json::from_value(json!({"skills": {"disabled": ["From-User", "skill-creator"]}}))
            .unwrap();
    let catalog = Arc::new(d.catalog(&settings, true));
    let tool = ActivateSkill::new(catalog.clone());
    let declared = serde_json::to_value(tool.declaration()).unwrap();
    let names = declared["parametersJsonSchema"]["properties"]["name"]["enum"].clone();
    assert_eq!(
        names,
        json!([
            "antigravity-support",
            "from-ext",
            "dup",
            "from-alias",
            "from-ws",
            "from-ws-alias"
        ])
    );
    assert!(
        catalog
            .prompt_section()
            .unwrap()
            .contains("<name>from-ext</name>")
    );
    assert!(!catalog.prompt_section().unwrap().contains("from-user"));

    let off: Settings = serde_json::from_value(json!({"skills": {"enabled": false}})).unwrap();
    assert!(d.catalog(&off, true).enabled().is_empty());
}

/// The declaration against 0.61's (tools_yolo.json), field for field, with
/// only the built-in skills (0.61's two).
#[test]
fn the_declaration_matches_gemini_cli_0_61() {
    let d = Dirs::new();
    let catalog = Arc::new(d.catalog(&Settings::default(), true));
    let ours = serde_json::to_value(ActivateSkill::new(catalog).declaration()).unwrap();
    let fixture = gemini_cli_fixture("tools_yolo.json");
    let theirs = fixture
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "activate_skill")
        .unwrap()
        .clone();
    let mut ours_schema = ours["parametersJsonSchema"].clone();
    let mut their_schema = theirs["parametersJsonSchema"].clone();
    // Descriptions are redacted in the fixture: ours only need to exist.
    assert!(
        ours_schema["properties"]["name"]["description"]
            .as_str()
            .unwrap()
            .len()
            > 10
    );
    ours_schema["properties"]["name"]["description"] = Value::Null;
    their_schema["properties"]["name"]["description"] = Value::Null;
    assert_eq!(ours_schema, their_schema);
    let mut keys: Vec<_> = ours.as_object().unwrap().keys().cloned().collect();
    let mut their_keys: Vec<_> = theirs.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    their_keys.sort();
    assert_eq!(keys, their_keys);
    assert!(
        ours["description"]
            .as_str()
            .unwrap()
            .contains("'antigravity-support'")
    );
}

/// A session with the built-in policies, interactive, default mode: a skill
/// from a folder asks for consent.
fn interactive_default() -> Arc<PolicyApproval> {
    Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        true,
        None,
    ))
}

async fn next_event(h: &mut Harness, want: impl Fn(&Event) -> bool) -> (Event, Vec<Event>) {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .expect("no event within 30 s")
            .expect("session ended");
        if want(&event) {
            return (event, seen);
        }
        seen.push(event);
    }
}

#[tokio::test]
async fn activating_a_skill_asks_loads_its_instructions_and_makes_its_files_readable() {
    let d = Dirs::new();
    let folder = d.home.join(".gemini/skills/release-notes");
    write_creating(
        &folder.join("SKILL.md"),
        &skill_md(
            "release-notes",
            "Use for release notes.",
            "Group the commits. Read style.md first.",
        ),
    );
    write_creating(
        &folder.join("style.md"),
        "STYLE: past tense, one line each.\n",
    );
    let catalog = Arc::new(d.catalog(&Settings::default(), true));
    let policy = interactive_default();
    let style = folder.join("style.md");
    let scenario = json!({"steps": [
        {"functionCalls": [{"name": "activate_skill", "args": {"name": "release-notes"}}]},
        {"match_tool": "activate_skill", "functionCalls": [{"name": "read_file", "args": {"file_path": style.to_str().unwrap()}}]},
        {"match_tool": "read_file", "text": "Done."}
    ]});
    let mut h = skills_session(scenario, &catalog, policy, true);
    h.handle
        .submit(Op::user_text("Write the release notes"))
        .unwrap();
    let (event, _) = next_event(&mut h, |e| {
        matches!(e, Event::ToolConfirmationRequest { .. })
    })
    .await;
    let Event::ToolConfirmationRequest {
        call_id, details, ..
    } = event
    else {
        unreachable!()
    };
    assert_eq!(
        details,
        ConfirmationDetails::ActivateSkill {
            title: "Activate Skill: release-notes".into(),
            name: "release-notes".into(),
            description: "Use for release notes.".into(),
            location: folder.display().to_string(),
        }
    );
    h.handle
        .submit(Op::ConfirmTool {
            call_id,
            outcome: ConfirmationOutcome::ProceedOnce,
            content: None,
            hunks: None,
        })
        .unwrap();
    let events = h.collect_turn().await;
    assert_eq!(status(&events), gd_protocol::TurnStatus::Completed);

    let bodies = h.bodies();
    // The first request declared the skill and listed it in the system instruction.
    let first = &bodies[0];
    let declared: Vec<&Value> = first["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    let activate = declared
        .iter()
        .find(|d| d["name"] == "activate_skill")
        .expect("declared");
    assert_eq!(
        activate["parametersJsonSchema"]["properties"]["name"]["enum"],
        json!(["skill-creator", "antigravity-support", "release-notes"])
    );
    let system = first["systemInstruction"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        system.contains("<available_skills>") && system.contains("<name>release-notes</name>"),
        "{system}"
    );

    // The second carries the instructions and the folder's files.
    let result = function_response(&bodies[1], "activate_skill");
    assert!(
        result.contains("<activated_skill name=\"release-notes\">"),
        "{result}"
    );
    assert!(
        result.contains("Group the commits. Read style.md first."),
        "{result}"
    );
    assert!(result.contains("style.md"), "{result}");
    // The third: the resource outside the workspace was read.
    let read = function_response(&bodies[2], "read_file");
    assert!(read.contains("STYLE: past tense"), "{read}");
    let infos = catalog.infos();
    assert!(infos.iter().any(|s| s.name == "release-notes" && s.active));
}

/// The output text of the functionResponse to `name` in a request body.
fn function_response(body: &Value, name: &str) -> String {
    body["contents"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p.get("functionResponse").cloned())
        .filter(|r| r["name"] == name)
        .map(|r| match &r["response"]["output"] {
            Value::String(text) => text.clone(),
            other => r["response"].to_string() + &other.to_string(),
        })
        .next_back()
        .unwrap_or_else(|| panic!("no functionResponse to {name}"))
}

#[tokio::test]
async fn a_disabled_skill_leaves_the_next_requests_declaration() {
    let d = Dirs::new();
    write_creating(
        &d.home.join(".gemini/skills/one/SKILL.md"),
        &skill_md("one", "First.", "1"),
    );
    write_creating(
        &d.home.join(".gemini/skills/two/SKILL.md"),
        &skill_md("two", "Second.", "2"),
    );
    let catalog = Arc::new(d.catalog(&Settings::default(), true));
    let mut h = skills_session(
        json!({"steps": [{"text": "ok"}]}),
        &catalog,
        headless_yolo(),
        false,
    );
    h.turn("hi").await;
    assert_eq!(
        enum_of(&h.bodies()[0]),
        Some(json!([
            "skill-creator",
            "antigravity-support",
            "one",
            "two"
        ]))
    );
    h.handle
        .submit(Op::SetSkillEnabled {
            name: "one".into(),
            enabled: false,
            scope: SettingsScope::Workspace,
        })
        .unwrap();
    let (event, _) = next_event(&mut h, |e| matches!(e, Event::Skills { .. })).await;
    let Event::Skills { skills, .. } = event else {
        unreachable!()
    };
    assert!(skills.iter().any(|s| s.name == "one" && !s.enabled));
    let settings = std::fs::read_to_string(h.workspace.join(".gemini/settings.json")).unwrap();
    assert!(settings.contains("\"one\""), "{settings}");
    h.reset(json!({"steps": [{"text": "ok"}]}));
    h.turn("again").await;
    let bodies = h.bodies();
    assert_eq!(
        enum_of(bodies.last().unwrap()),
        Some(json!(["skill-creator", "antigravity-support", "two"]))
    );
    let system = bodies.last().unwrap()["systemInstruction"]["parts"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!system.contains("<name>one</name>") && system.contains("<name>two</name>"));

    // An unknown name is refused with a warning, and the list still comes.
    h.handle
        .submit(Op::SetSkillEnabled {
            name: "nope".into(),
            enabled: false,
            scope: SettingsScope::Workspace,
        })
        .unwrap();
    let (event, _) = next_event(&mut h, |e| matches!(e, Event::Warning { .. })).await;
    assert!(matches!(event, Event::Warning { message } if message.contains("nope")));
}

#[test]
fn headless_default_mode_does_not_declare_activate_skill_as_in_0_61() {
    let d = Dirs::new();
    let catalog = Arc::new(d.catalog(&Settings::default(), true));
    let policy = PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Default,
        false,
        None,
    );
    let mut tools = ToolRegistry::new();
    gd_core::skills::register(&mut tools, &catalog, &Settings::default(), &policy);
    assert!(tools.get("activate_skill").is_none());
    gd_core::skills::register(&mut tools, &catalog, &Settings::default(), &headless_yolo());
    assert!(tools.get("activate_skill").is_some());
}

/// A session whose tools are the built-ins plus `activate_skill`, with the
/// skills of `catalog` and the given policy.
fn skills_session(
    scenario: Value,
    catalog: &Arc<SkillCatalog>,
    policy: Arc<PolicyApproval>,
    interactive: bool,
) -> Harness {
    let (tools_catalog, tools_policy, config_catalog) =
        (catalog.clone(), policy.clone(), catalog.clone());
    Harness::start_with_tools(
        scenario,
        move |c| {
            c.interactive = interactive;
            c.skills = config_catalog;
        },
        policy,
        move |_| {
            let mut tools = ToolRegistry::with_builtins();
            gd_core::skills::register(
                &mut tools,
                &tools_catalog,
                &Settings::default(),
                &tools_policy,
            );
            tools.into()
        },
    )
}

/// The consent promises "read only": once active, the read tools reach the
/// skill's folder (outside the workspace) and the edit tools and the
/// shell's `dir_path` still refuse it, even in YOLO mode where nothing is
/// asked. Before activation even reading is refused.
#[tokio::test]
async fn an_active_skills_folder_is_readable_and_never_writable() {
    let d = Dirs::new();
    let folder = d.home.join(".gemini/skills/release-notes");
    write_creating(
        &folder.join("SKILL.md"),
        &skill_md("release-notes", "Use for release notes.", "Read style.md."),
    );
    let style = folder.join("style.md");
    write_creating(&style, "STYLE: past tense.\n");
    let catalog = Arc::new(d.catalog(&Settings::default(), true));
    let policy = headless_yolo();
    let (dir, file) = (folder.to_str().unwrap(), style.to_str().unwrap());
    let calls = |calls: Value| json!({"functionCalls": calls});
    let scenario = json!({"steps": [
        // The read runs in the batch that activates: not yet readable.
        calls(json!([
            {"name": "read_file", "args": {"file_path": file}},
            {"name": "activate_skill", "args": {"name": "release-notes"}}
        ])),
        calls(json!([
            {"name": "read_file", "args": {"file_path": file}},
            {"name": "list_directory", "args": {"dir_path": dir}},
            {"name": "grep_search", "args": {"pattern": "past tense", "dir_path": dir}},
            {"name": "glob", "args": {"pattern": "*.md", "dir_path": dir}}
        ])),
        calls(json!([
            {"name": "write_file", "args": {"file_path": file, "content": "changed\n"}},
            {"name": "replace", "args": {"file_path": file, "old_string": "STYLE", "new_string": "X", "instruction": "change it"}},
            {"name": "run_shell_command", "args": {"command": "touch made-by-shell", "dir_path": dir}}
        ])),
        {"text": "Done."}
    ]});
    let mut h = skills_session(scenario, &catalog, policy, false);
    let events = h.turn("Write the release notes").await;
    assert_eq!(status(&events), gd_protocol::TurnStatus::Completed);
    let bodies = h.bodies();
    assert_eq!(bodies.len(), 4);

    let before = function_response(&bodies[1], "read_file");
    assert!(before.contains("outside the workspace"), "{before}");
    assert!(function_response(&bodies[1], "activate_skill").contains("<activated_skill"));

    let read = |name| function_response(&bodies[2], name);
    assert!(
        read("read_file").contains("STYLE: past tense."),
        "{}",
        read("read_file")
    );
    assert!(
        read("list_directory").contains("style.md"),
        "{}",
        read("list_directory")
    );
    assert!(
        read("grep_search").contains("past tense"),
        "{}",
        read("grep_search")
    );
    assert!(read("glob").contains("style.md"), "{}", read("glob"));

    for tool in ["write_file", "replace", "run_shell_command"] {
        let refused = function_response(&bodies[3], tool);
        assert!(
            refused.contains("outside the workspace") || refused.contains("not in the workspace"),
            "{tool}: {refused}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&style).unwrap(),
        "STYLE: past tense.\n"
    );
    assert!(!folder.join("made-by-shell").exists());
}

/// 0.61 asks no consent for its built-in skills: in the app (interactive,
/// default mode) `skill-creator` activates unasked through the generated
/// rule, while a skill from a folder is still asked about.
#[tokio::test]
async fn built_in_skills_activate_unasked_in_the_app() {
    let d = Dirs::new();
    write_creating(
        &d.home.join(".gemini/skills/mine/SKILL.md"),
        &skill_md("mine", "Mine.", "M"),
    );
    let catalog = Arc::new(d.catalog(&Settings::default(), true));
    let mut engine = PolicyEngine::new(default_rules());
    engine.add_rules(gd_core::skills::consent::builtin_rule(&catalog));
    let policy = Arc::new(PolicyApproval::new(
        engine,
        ApprovalMode::Default,
        true,
        None,
    ));
    let scenario = json!({"steps": [
        {"functionCalls": [{"name": "activate_skill", "args": {"name": "skill-creator"}}]},
        {"functionCalls": [{"name": "activate_skill", "args": {"name": "mine"}}]},
        {"text": "Done."}
    ]});
    let mut h = skills_session(scenario, &catalog, policy, true);
    h.handle.submit(Op::user_text("Make a skill")).unwrap();
    let (event, seen) = next_event(&mut h, |e| {
        matches!(e, Event::ToolConfirmationRequest { .. })
    })
    .await;
    let Event::ToolConfirmationRequest {
        details, call_id, ..
    } = event
    else {
        unreachable!()
    };
    // The first confirmation asked is for `mine`: the built-in ran before it.
    assert!(
        matches!(&details, ConfirmationDetails::ActivateSkill { name, .. } if name == "mine"),
        "{details:?}"
    );
    assert!(
        seen.iter()
            .any(|e| matches!(e, Event::ToolCallResponse { .. })),
        "the built-in activation ran first: {seen:?}"
    );
    h.handle
        .submit(Op::ConfirmTool {
            call_id,
            outcome: ConfirmationOutcome::Cancel,
            content: None,
            hunks: None,
        })
        .unwrap();
    h.collect_turn().await;
    let first = function_response(&h.bodies()[1], "activate_skill");
    assert!(
        first.contains("<activated_skill name=\"skill-creator\">"),
        "{first}"
    );
}

/// `/skills` looks in the folders again (0.61's `/skills reload`): a skill
/// written while the session runs is listed, declared at the next request
/// and can be activated; one whose folder is gone leaves.
#[tokio::test]
async fn listing_reloads_a_skill_written_during_the_session() {
    let d = Dirs::new();
    write_creating(
        &d.home.join(".gemini/skills/old/SKILL.md"),
        &skill_md("old", "Old one.", "O"),
    );
    let catalog = Arc::new(d.catalog(&Settings::default(), true));
    let mut h = skills_session(
        json!({"steps": [{"text": "ok"}]}),
        &catalog,
        headless_yolo(),
        false,
    );
    h.turn("hi").await;
    assert_eq!(
        enum_of(&h.bodies()[0]),
        Some(json!(["skill-creator", "antigravity-support", "old"]))
    );

    write_creating(
        &d.home.join(".gemini/skills/fresh/SKILL.md"),
        &skill_md("fresh", "Written just now.", "Fresh instructions."),
    );
    std::fs::remove_dir_all(d.home.join(".gemini/skills/old")).unwrap();
    h.handle.submit(Op::ListSkills).unwrap();
    let (event, _) = next_event(&mut h, |e| matches!(e, Event::Skills { .. })).await;
    let Event::Skills { skills, .. } = event else {
        unreachable!()
    };
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["skill-creator", "antigravity-support", "fresh"]);

    h.reset(json!({"steps": [
        {"functionCalls": [{"name": "activate_skill", "args": {"name": "fresh"}}]},
        {"text": "ok"}
    ]}));
    let events = h.turn("use it").await;
    assert_eq!(status(&events), gd_protocol::TurnStatus::Completed);
    let bodies = h.bodies();
    assert_eq!(
        enum_of(&bodies[0]),
        Some(json!(["skill-creator", "antigravity-support", "fresh"]))
    );
    let result = function_response(&bodies[1], "activate_skill");
    assert!(result.contains("Fresh instructions."), "{result}");
}

/// The built-in policies of a headless session in YOLO mode.
fn headless_yolo() -> Arc<PolicyApproval> {
    Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Yolo,
        false,
        None,
    ))
}

/// The `activate_skill` enum a request declares, if it declares the tool.
fn enum_of(body: &Value) -> Option<Value> {
    body["tools"][0]["functionDeclarations"]
        .as_array()?
        .iter()
        .find(|d| d["name"] == "activate_skill")
        .map(|d| d["parametersJsonSchema"]["properties"]["name"]["enum"].clone())
}
