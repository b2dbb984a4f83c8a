//! The turn loop: events, history and tool rounds over several requests.

use crate::common;

use common::*;
use gd_protocol::{Event, ToolCallStatus, TurnStatus};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

#[tokio::test]
async fn thoughts_become_events_and_stay_out_of_history() {
    let scenario = json!({"steps": [
        {"thought": "**Looking around**\n\nI should list the workspace.",
         "functionCalls": [{"name": "list_directory", "args": {"dir_path": "."}}]},
        {"thought": "**Answering**", "text": "All done."}
    ]});
    let mut h = Harness::start(scenario);
    let events = h.turn("what is here?").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let thoughts: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Thought {
                subject,
                description,
            } => Some((subject.clone(), description.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        thoughts,
        vec![
            (
                "Looking around".into(),
                "I should list the workspace.".into()
            ),
            ("Answering".into(), String::new())
        ]
    );
    assert_eq!(text(&events), "All done.");
    // The second request echoes the model's call without the thought part.
    let contents = h.bodies()[1]["contents"].as_array().unwrap().clone();
    assert_valid_history(&contents);
    assert_eq!(contents[1]["parts"].as_array().unwrap().len(), 1);

    // And the next turn's history holds the final answer without its thought.
    h.reset(json!({"steps": [{"text": "ok"}]}));
    h.turn("thanks").await;
    let contents = h.bodies()[0]["contents"].as_array().unwrap().clone();
    assert_eq!(
        contents[3],
        json!({"parts": [{"text": "All done."}], "role": "model"})
    );
    assert_valid_history(&contents);
}

#[tokio::test]
async fn model_ids_and_real_signatures_are_sent_back_verbatim() {
    let scenario = json!({"steps": [
        {"functionCalls": [{"name": "list_directory", "args": {"dir_path": "."}, "id": "call-from-model", "thoughtSignature": "c2lnbmF0dXJl"}]},
        {"text": "ok"}
    ]});
    let mut h = Harness::start(scenario);
    h.turn("go").await;
    let contents = h.bodies()[1]["contents"].as_array().unwrap().clone();
    let call = &contents[1]["parts"][0];
    assert_eq!(call["functionCall"]["id"], "call-from-model");
    assert_eq!(call["thoughtSignature"], "c2lnbmF0dXJl");
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"]["id"],
        "call-from-model"
    );
}

#[tokio::test]
async fn bad_tool_calls_go_back_to_the_model_as_errors() {
    let scenario = json!({"steps": [
        {"functionCalls": [
            {"name": "delete_files", "args": {"path": "/"}},
            {"name": "list_directory", "args": {"dir_path": 7}},
            {"name": "list_directory", "args": {"dir_path": "/etc"}}
        ]},
        {"text": "I will try something else."}
    ]});
    let mut h = Harness::start(scenario);
    let events = h.turn("do it").await;
    assert_eq!(status(&events), TurnStatus::Completed);
    let responses: Vec<Value> = h.bodies()[1]["contents"][2]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["functionResponse"]["response"].clone())
        .collect();
    assert!(
        responses[0]["error"]
            .as_str()
            .unwrap()
            .starts_with("Tool \"delete_files\" not found. Did you mean"),
        "{}",
        responses[0]
    );
    assert_eq!(
        responses[1],
        json!({"error": "Invalid parameters for list_directory: params/dir_path must be string"})
    );
    assert!(
        responses[2]["error"]
            .as_str()
            .unwrap()
            .contains("outside the workspace")
    );
    let failed = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::ToolCallResponse {
                    status: ToolCallStatus::Error,
                    ..
                }
            )
        })
        .count();
    assert_eq!(failed, 3);
}

#[tokio::test]
async fn session_context_only_in_the_first_message() {
    let mut h = Harness::start(json!({"steps": [{"text": "first answer"}]}));
    h.turn("one").await;
    h.turn("two").await;
    let bodies = h.bodies();
    let second = bodies[1]["contents"].as_array().unwrap();
    assert_eq!(second.len(), 3);
    assert!(
        second[0]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("<session_context>")
    );
    assert_eq!(
        second[1],
        json!({"parts": [{"text": "first answer"}], "role": "model"})
    );
    assert_eq!(
        second[2],
        json!({"parts": [{"text": "two"}], "role": "user"})
    );
}

#[tokio::test]
async fn streamed_text_arrives_in_pieces_and_is_recorded_whole() {
    let answer = "A fairly long answer that the fake server splits into many small chunks.";
    let mut h = Harness::start(json!({"chunk_chars": 7, "steps": [{"text": answer}]}));
    let events = h.turn("stream please").await;
    let deltas = events
        .iter()
        .filter(|e| matches!(e, Event::ContentDelta { .. }))
        .count();
    assert!(deltas >= 10, "{deltas} deltas");
    assert_eq!(text(&events), answer);
    h.turn("again").await;
    let contents = h.bodies()[1]["contents"].as_array().unwrap().clone();
    assert_eq!(
        contents[1],
        json!({"parts": [{"text": answer}], "role": "model"})
    );
    let usage = events
        .iter()
        .filter(|e| matches!(e, Event::Usage { .. }))
        .count();
    assert_eq!(usage, 1, "one usage event per request");
}

#[tokio::test]
async fn the_session_announces_itself_first() {
    let mut h = Harness::start(json!({"steps": [{"text": "x"}]}));
    let first = h.events.recv().await.unwrap();
    match first {
        Event::SessionConfigured {
            model,
            auth,
            tools,
            workspace_dirs,
            ..
        } => {
            assert_eq!(model, MODEL);
            assert_eq!(auth, "gemini-api-key");
            assert!(tools.contains(&"list_directory".to_string()), "{tools:?}");
            assert_eq!(workspace_dirs, vec![h.ws()]);
        }
        other => panic!("unexpected first event {other:?}"),
    }
}
