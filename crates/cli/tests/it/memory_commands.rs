//! Memory, `@`-references and custom commands through the headless CLI
//! (`-p`), as a real process against the fake Gemini server.

use crate::common;

use common::*;
use pretty_assertions::assert_eq;
use serde_json::json;

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn context_files_named_in_settings_go_into_the_system_instruction() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    write(&run.home.join(".gemini/GEMINI.md"), "Global: be brief.");
    write(
        &run.ws.join("AGENTS.md"),
        "Agents: use tabs.\n@./docs/more.md",
    );
    write(&run.ws.join("docs/more.md"), "More rules.");
    run.write_settings(
        &run.user_settings(),
        r#"{"context": {"fileName": ["AGENTS.md", "GEMINI.md"]}}"#,
    );
    let out = run.run(&["-p", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let body = &run.bodies()[0];
    let system = body["systemInstruction"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    let global = "../home/.gemini/GEMINI.md";
    let expected = format!(
        "\n\n---\n\n--- Context from: {global} ---\nGlobal: be brief.\n--- End of Context from: {global} ---\n\n\
         --- Context from: AGENTS.md ---\nAgents: use tabs.\n<!-- Imported from: ./docs/more.md -->\nMore rules.\n<!-- End of import from: ./docs/more.md -->\n--- End of Context from: AGENTS.md ---"
    );
    assert!(system.ends_with(&expected), "{system}");
}

#[test]
fn at_references_and_custom_commands_work_with_p() {
    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    let hello = std::fs::read_to_string(run.ws.join("hello.txt")).unwrap();
    let out = run.run(&["-p", "summarise @hello.txt"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        prompt_texts(&run.bodies()[0]),
        [
            "summarise @hello.txt".to_owned(),
            "\n--- Content from referenced files ---".to_owned(),
            "\nContent from @hello.txt:\n".to_owned(),
            hello.clone(),
            "\n--- End of content ---".to_owned(),
        ]
    );

    let run = Run::new(json!({"steps": [{"text": "ok"}]}));
    write(
        &run.home.join(".gemini/commands/team/greet.toml"),
        "description = \"Greets\"\nprompt = \"Say hello to {{args}}. @{hello.txt}\"\n",
    );
    let out = run.run(&["-p", "/team:greet Ada"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        prompt_texts(&run.bodies()[0]),
        ["Say hello to Ada. ".to_owned(), hello]
    );
}
