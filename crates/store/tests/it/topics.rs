//! Topics (`update_topic` calls) in the history store: a model message
//! carrying one, as the core records it (the call with its arguments, and
//! the topic's title, summary and intent in the searchable text), is found
//! by its topic's words and comes back with the call's arguments, from
//! which a resumed conversation shows its chapters. No schema change: a
//! database of an older version stores and finds topics alike.

use gd_store::schema;
use gd_store::{
    MessageKind, NewMessage, NewSession, PageQuery, Role, SearchQuery, Store, ToolCallRecord,
};
use serde_json::json;

fn topic_message(title: &str, summary: &str, intent: &str) -> NewMessage {
    let args = json!({"title": title, "summary": summary, "strategic_intent": intent});
    let parts = json!([{"functionCall": {"id": "t1", "name": "update_topic", "args": args}}]);
    let text = format!("update_topic {title}\n{summary}\n{intent}");
    let mut message = NewMessage::new(Role::Model, MessageKind::Model, parts, text);
    message.tool_calls = vec![ToolCallRecord {
        call_id: "t1".into(),
        name: "update_topic".into(),
        args: Some(args),
        ..ToolCallRecord::default()
    }];
    message
}

fn found(store: &Store, words: &str) -> Vec<String> {
    store
        .search(&SearchQuery {
            text: words.into(),
            ..SearchQuery::default()
        })
        .unwrap()
        .into_iter()
        .map(|h| h.session_id)
        .collect()
}

#[test]
fn a_conversation_is_found_by_its_topics_also_in_an_older_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite3");
    {
        // A database as the first release wrote it.
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        schema::migrate_to(&mut conn, 1).unwrap();
    }
    let store = Store::open(&path).unwrap();
    for (id, title) in [("a", "Parser rewrite"), ("b", "Release notes")] {
        store
            .create_session(&NewSession {
                id: id.into(),
                workspace: "/w".into(),
                title: String::new(),
                model: None,
                created_ms: 1,
                source: gd_store::SOURCE_DESKTOP.into(),
                origin: None,
            })
            .unwrap();
        let summary = format!(
            "{} The quokka {id} phase ends here.",
            "Long work. ".repeat(80)
        );
        store
            .append_message(id, &topic_message(title, &summary, "Keep going."))
            .unwrap();
    }
    assert_eq!(found(&store, "parser rewrite"), ["a"]);
    assert_eq!(found(&store, "release"), ["b"]);
    // A word at the end of a long summary.
    let mut both = found(&store, "quokka");
    both.sort();
    assert_eq!(both, ["a", "b"]);

    // The call comes back with its arguments (the chapters of a resumed
    // conversation).
    let page = store.page("a", &PageQuery::default()).unwrap();
    let call = &page.messages[0].tool_calls[0];
    assert_eq!(call.name, "update_topic");
    assert_eq!(call.args.as_ref().unwrap()["title"], "Parser rewrite");
}
