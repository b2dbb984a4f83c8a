//! `@`-references in prompts, against the fake Gemini server: what the model
//! receives and what the user is told about references that cannot be used.

use crate::common;

use common::*;
use gd_protocol::{Event, TurnStatus};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn warnings(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Warning { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

fn prompt_parts(h: &Harness) -> Vec<Value> {
    let body = &h.bodies()[0];
    let parts = body["contents"][0]["parts"].as_array().unwrap().clone();
    // The first part is the session context.
    parts[1..].to_vec()
}

#[tokio::test]
async fn files_and_directories_are_expanded_like_gemini_cli() {
    let mut h = Harness::start(json!({"steps": [{"text": "ok"}]}));
    let hello = std::fs::read_to_string(h.workspace.join("hello.txt")).unwrap();
    let main = std::fs::read_to_string(h.workspace.join("src/main.rs")).unwrap();
    let prompt = "compare @hello.txt with @src/, and @missing.txt";
    let events = h.turn(prompt).await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let texts: Vec<String> = prompt_parts(&h)
        .iter()
        .map(|p| p["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        texts,
        [
            prompt.to_owned(),
            "\n--- Content from referenced files ---".to_owned(),
            "\nContent from @hello.txt:\n".to_owned(),
            hello,
            "\nContent from @src/main.rs:\n".to_owned(),
            main,
            "\n--- End of content ---".to_owned(),
        ]
    );
    assert_eq!(
        warnings(&events),
        ["@missing.txt: no such file or directory; not sent."]
    );
}

#[tokio::test]
async fn images_are_inline_data_and_ignored_or_outside_files_are_reported() {
    let mut h = Harness::start(json!({"steps": [{"text": "ok"}]}));
    let png: &[u8] = &[
        0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, b'I', b'H', b'D', b'R',
    ];
    std::fs::write(h.workspace.join("my shot.png"), png).unwrap();
    std::fs::write(h.workspace.join("secret.txt"), "top secret").unwrap();
    std::fs::write(h.workspace.join(".geminiignore"), "secret.txt\n").unwrap();
    let events = h
        .turn(r"look at @my\ shot.png and @secret.txt and @../../etc/passwd")
        .await;
    let parts = prompt_parts(&h);
    assert_eq!(parts[2]["text"], "\nContent from @my shot.png:\n");
    assert_eq!(parts[3]["inlineData"]["mimeType"], "image/png");
    assert!(
        !serde_json::to_string(&parts)
            .unwrap()
            .contains("top secret")
    );
    let warnings = warnings(&events);
    assert!(
        warnings.contains(
            &"@../../etc/passwd: outside the workspace directories; not sent.".to_owned()
        ),
        "{warnings:?}"
    );
    // The ignored file is not sent and the read summary says why.
    assert!(
        warnings.iter().any(|w| w.contains("secret.txt")),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn prompts_without_references_are_sent_as_typed() {
    let mut h = Harness::start(json!({"steps": [{"text": "ok"}]}));
    let events = h.turn("mail me at a@b.c, or @ me").await;
    assert!(warnings(&events).is_empty());
    assert_eq!(
        prompt_parts(&h),
        [json!({"text": "mail me at a@b.c, or @ me"})]
    );
}

/// Files with awkward names, referenced the way the picker writes them
/// (`tests/fixtures/at-mentions.json`), all reach the model.
#[tokio::test]
async fn picker_mentions_of_awkward_names_reach_the_model() {
    let fixture: Value =
        serde_json::from_str(include_str!("../../../../tests/fixtures/at-mentions.json")).unwrap();
    let cases: Vec<(String, String)> = fixture["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_owned(),
                c["mention"].as_str().unwrap().to_owned(),
            )
        })
        .filter(|(path, _)| !path.starts_with('/'))
        .collect();
    let mut h = Harness::start(json!({"steps": [{"text": "ok"}]}));
    for (path, _) in &cases {
        let file = h.workspace.join(path);
        if !file.exists() {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, format!("content of {path}")).unwrap();
        }
    }
    let mentions: Vec<&str> = cases.iter().map(|(_, m)| m.as_str()).collect();
    let prompt = format!("{}\nwhat are these?", mentions.join(" "));
    let events = h.turn(&prompt).await;
    assert_eq!(status(&events), TurnStatus::Completed);
    assert_eq!(warnings(&events), Vec::<String>::new());
    let headers: Vec<String> = prompt_parts(&h)
        .iter()
        .filter_map(|p| p["text"].as_str())
        .filter_map(|t| t.strip_prefix("\nContent from @"))
        .map(|t| t.trim_end_matches(":\n").to_owned())
        .collect();
    let mut expected: Vec<String> = cases.iter().map(|(p, _)| p.clone()).collect();
    let mut got = headers.clone();
    expected.sort();
    got.sort();
    assert_eq!(got, expected);
}
