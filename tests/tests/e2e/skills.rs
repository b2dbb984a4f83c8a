//! Agent skills through the real app (issue 19): `/skills` lists the built-in, user and
//! workspace skills and looks in the folders again (a user skill written after the app started
//! appears); its switch disables the workspace skill in the workspace's settings.json and the
//! next request no longer offers it; the model activates the user skill, the consent card shows
//! which skill and folder, approving loads its instructions, and the skill's resource (outside
//! the workspace) can then be read — read only.
//!
//! Test ids: `skills-panel`, `skills-item` (`data-name`, `data-enabled`), `skills-toggle`,
//! `skills-scope-workspace`, `confirmation` (`data-kind`), `skill-consent`,
//! `skill-consent-name`, `skill-consent-location`, `approve`, `message-model`.
//!
//! Build first: `npm --prefix ui ci && npm --prefix ui run build && cargo build -p gemini-desktop`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, ensure};
use gd_e2e::{App, function_responses};
use gd_fake_gemini::FakeGemini;
use serde_json::{Value, json};

const WS_SKILL: &str = "project-style";
const USER_SKILL: &str = "release-notes";
const INSTRUCTIONS: &str = "Group the commits by kind. Read style.md first.";
const STYLE: &str = "STYLE: past tense, one line per change.\n";
const ANSWER: &str = "Release notes follow the style.";

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::create_dir_all(path.parent().context("parent")?)?;
    std::fs::write(path, text)?;
    Ok(())
}

fn skill_md(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n")
}

fn call(name: &str, args: Value) -> Value {
    json!({"functionCalls": [{"name": name, "args": args}]})
}

/// The `activate_skill` enum of a request body, if the tool is declared.
fn skill_enum(body: &Value) -> Option<Vec<String>> {
    let declarations = body["tools"][0]["functionDeclarations"].as_array()?;
    let tool = declarations
        .iter()
        .find(|d| d["name"] == "activate_skill")?;
    Some(
        tool["parametersJsonSchema"]["properties"]["name"]["enum"]
            .as_array()?
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
    )
}

async fn shots(app: &App, what: &str, scroll_to: &str) -> Result<()> {
    for (width, theme) in [(1440, "light"), (800, "dark")] {
        gd_e2e::docs::resize(app, width).await?;
        gd_e2e::docs::theme(app, theme).await?;
        app.client()
            .execute(
                &format!(
                    "document.querySelector('[data-testid=\"{scroll_to}\"]')?.scrollIntoView();"
                ),
                vec![],
            )
            .await?;
        let shot = app.screenshot(&format!("{what}-{theme}-{width}")).await?;
        eprintln!("{what} screenshot: {}", shot.display());
    }
    gd_e2e::docs::theme(app, "light").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_listed_toggled_consented_to_and_their_files_read() -> Result<()> {
    let temp = tempfile::tempdir()?;
    let ws = temp.path().join("project");
    std::fs::create_dir(&ws)?;
    let ws = ws.canonicalize()?;
    write(
        &ws.join(".gemini/skills").join(WS_SKILL).join("SKILL.md"),
        &skill_md(WS_SKILL, "How this project formats code.", "Use tabs."),
    )?;
    let fake = FakeGemini::start(json!({"steps": [{"text": "unused"}]}));
    let app = App::launch_connected("skills", &[&ws], &fake.base_url()).await?;

    // 1. A user skill written after the app started: `/skills` looks again and lists it.
    let folder: PathBuf = app.home().join(".gemini/skills").join(USER_SKILL);
    write(
        &folder.join("SKILL.md"),
        &skill_md(USER_SKILL, "Use for release notes.", INSTRUCTIONS),
    )?;
    write(&folder.join("style.md"), STYLE)?;
    app.type_and_enter("prompt-input", "/skills").await?;
    app.wait_for_count(
        &format!("skills-panel skills-item[data-name={USER_SKILL}]"),
        "lists the new user skill",
        |n| n == 1,
    )
    .await?;
    for name in ["skill-creator", "antigravity-support", WS_SKILL] {
        ensure!(
            app.count(&format!("skills-item[data-name={name}]")).await? == 1,
            "{name} is listed"
        );
    }
    shots(&app, "skills-panel", "skills-panel").await?;

    // 2. Its switch, saved in the workspace: the workspace skill goes off.
    app.click("skills-scope-workspace").await?;
    app.click(&format!("skills-item[data-name={WS_SKILL}] skills-toggle"))
        .await?;
    app.wait_for_attr(
        &format!("skills-item[data-name={WS_SKILL}]"),
        "data-enabled",
        "is off",
        |v| v == "false",
    )
    .await?;
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join(".gemini/settings.json"))?)?;
    ensure!(
        settings["skills"]["disabled"] == json!([WS_SKILL]),
        "saved in the workspace: {settings}"
    );
    ensure!(
        !app.home().join(".gemini/settings.json").exists(),
        "the user's settings are left alone"
    );
    shots(&app, "skills-panel-off", "skills-panel").await?;

    // 3. The model activates the user skill: the consent card names it and its folder.
    let style = folder.join("style.md");
    fake.reset(
        json!({"steps": [
            call("activate_skill", json!({"name": USER_SKILL})),
            call("read_file", json!({"file_path": "{{STYLE}}"})),
            {"text": ANSWER}
        ]}),
        &[("STYLE", style.to_str().context("UTF-8 path")?)],
    );
    app.client()
        .active_element()
        .await?
        .send_keys("\u{e00c}")
        .await?;
    app.wait_until_gone("skills-panel", "the panel closed with Escape")
        .await?;
    app.type_and_enter("prompt-input", "Write the release notes")
        .await?;
    app.wait_for_attr("confirmation", "data-kind", "asks about the skill", |k| {
        k == "activate_skill"
    })
    .await?;
    app.wait_for_text("skill-consent-name", "names the skill", |t| t == USER_SKILL)
        .await?;
    let location = app.texts("skill-consent-location").await?;
    ensure!(
        location.iter().any(|l| l.contains(USER_SKILL)),
        "shows the folder: {location:?}"
    );
    shots(&app, "skill-consent", "skill-consent").await?;

    // 4. Approved: the instructions reach the model, then the resource outside the workspace
    // is read, and the model answers.
    app.click("approve").await?;
    app.wait_for_last_text("message-model", "answered", |t| t.contains(ANSWER))
        .await?;
    let bodies: Vec<Value> = fake
        .main_requests()
        .into_iter()
        .filter_map(|r| r.body)
        .collect();
    let first = bodies.first().context("a request")?;
    let offered = skill_enum(first).context("activate_skill declared")?;
    ensure!(
        offered.contains(&USER_SKILL.to_owned()) && !offered.contains(&WS_SKILL.to_owned()),
        "the new skill is offered, the disabled one is not: {offered:?}"
    );
    let responses: Vec<Value> = bodies.iter().flat_map(function_responses).collect();
    let text = |name: &str| -> String {
        responses
            .iter()
            .filter(|r| r["name"] == name)
            .map(|r| r["response"].to_string())
            .collect()
    };
    let activated = text("activate_skill");
    ensure!(
        activated.contains(&format!("<activated_skill name=\\\"{USER_SKILL}\\\">"))
            && activated.contains(INSTRUCTIONS),
        "the instructions were loaded: {activated}"
    );
    ensure!(
        text("read_file").contains("STYLE: past tense"),
        "the skill's file was read: {}",
        text("read_file")
    );
    ensure!(
        std::fs::read_to_string(&style)? == STYLE,
        "and left as it was"
    );

    // 5. Switched on again: out of the workspace's list, offered from the next request.
    app.type_and_enter("prompt-input", "/skills").await?;
    app.click(&format!("skills-item[data-name={WS_SKILL}] skills-toggle"))
        .await?;
    app.wait_for_attr(
        &format!("skills-item[data-name={WS_SKILL}]"),
        "data-enabled",
        "is on again",
        |v| v == "true",
    )
    .await?;
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join(".gemini/settings.json"))?)?;
    ensure!(
        settings["skills"]["disabled"] == json!([]),
        "removed from the list: {settings}"
    );
    app.close().await
}
