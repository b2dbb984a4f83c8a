//! `gemini-desktop-cli skills list|enable|disable` and `/skills` as a
//! headless prompt: the real binary on a temporary HOME and workspace.

use crate::common;

use common::*;
use serde_json::{Value, json};

fn skill(run: &Run, dir: &std::path::Path, name: &str) {
    run.write_settings(
        &dir.join(name).join("SKILL.md"),
        &format!("---\nname: {name}\ndescription: The {name} skill.\n---\nDo {name}.\n"),
    );
}

fn names(listing: &Value) -> Vec<(String, String, bool)> {
    listing["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["source"].as_str().unwrap().to_owned(),
                s["enabled"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn list_disable_and_enable_on_a_temporary_home() {
    let run = Run::new(json!({"steps": []}));
    skill(&run, &run.home.join(".gemini/skills"), "notes");
    skill(&run, &run.home.join(".agents/skills"), "alias");
    skill(&run, &run.ws.join(".gemini/skills"), "project");
    let bad = run.home.join(".gemini/skills/broken/SKILL.md");
    run.write_settings(&bad, "---\nname: broken\n---\nno description\n");

    let out = run.run(&["skills", "list", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listing = stdout_json(&out);
    assert_eq!(
        names(&listing),
        [
            ("skill-creator".into(), "built_in".into(), true),
            ("antigravity-support".into(), "built_in".into(), true),
            ("notes".into(), "user".into(), true),
            ("alias".into(), "user".into(), true),
            ("project".into(), "workspace".into(), true),
        ]
    );
    assert_eq!(listing["errors"][0]["path"], bad.display().to_string());
    assert!(
        stderr(&out).contains(&format!("{}:", bad.display())),
        "{}",
        stderr(&out)
    );

    let out = run.run(&["skills", "disable", "notes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let settings = std::fs::read_to_string(run.home.join(".gemini/settings.json")).unwrap();
    let settings: Value = serde_json::from_str(&settings).unwrap();
    assert_eq!(settings["skills"]["disabled"], json!(["notes"]));
    let listing = stdout_json(&run.run(&["skills", "list", "-o", "json"]));
    assert!(names(&listing).contains(&("notes".into(), "user".into(), false)));

    let out = run.run(&["skills", "disable", "project", "--scope", "workspace"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ws_settings = std::fs::read_to_string(run.ws.join(".gemini/settings.json")).unwrap();
    assert!(ws_settings.contains("\"project\""), "{ws_settings}");

    // The lists add up (0.61's union): disabled in both files, enabling
    // clears both.
    let out = run.run(&["skills", "disable", "notes", "--scope", "workspace"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run.run(&["skills", "enable", "notes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("Skill \"notes\" enabled") && said.contains(" and "),
        "{said}"
    );
    for file in [
        run.home.join(".gemini/settings.json"),
        run.ws.join(".gemini/settings.json"),
    ] {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains("\"notes\""), "{}: {text}", file.display());
    }
    let listing = stdout_json(&run.run(&["skills", "list", "-o", "json"]));
    assert!(names(&listing).contains(&("notes".into(), "user".into(), true)));
    assert!(names(&listing).contains(&("project".into(), "workspace".into(), false)));
    assert!(run.bodies().is_empty(), "nothing reaches the model");
}

#[test]
fn an_untrusted_folder_lists_no_workspace_skills() {
    let run = Run::new(json!({"steps": []}));
    skill(&run, &run.ws.join(".gemini/skills"), "project");
    run.untrust();
    let out = run.run(&["skills", "list", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        names(&stdout_json(&out)),
        [
            ("skill-creator".into(), "built_in".into(), true),
            ("antigravity-support".into(), "built_in".into(), true)
        ]
    );
    assert!(stderr(&out).contains("not trusted"), "{}", stderr(&out));
}

#[test]
fn the_skills_command_in_a_prompt_lists_the_sessions_skills() {
    let run = Run::new(json!({"steps": [{"text": "never"}]}));
    skill(&run, &run.home.join(".gemini/skills"), "notes");
    let out = run.run(&["-p", "/skills", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(names(&stdout_json(&out)).contains(&("notes".into(), "user".into(), true)));
    let out = run.run(&["-p", "/skills disable notes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Skill \"notes\" disabled"));
    assert!(run.bodies().is_empty(), "/skills does not reach the model");
}
