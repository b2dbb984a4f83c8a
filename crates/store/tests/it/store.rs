//! The history store against a real database file.

use gd_store::export::ExportFormat;
use gd_store::highlight::{MARK_END, MARK_START, spans};
use gd_store::retention::Retention;
use gd_store::schema;
use gd_store::{
    ListCursor, ListQuery, MessageKind, MessageRef, NewMessage, NewSession, PageFrom, PageQuery,
    Role, SearchQuery, Store, StoreError, TokenUsage, ToolCallRecord, title_from,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("h.sqlite3")).unwrap();
    (dir, store)
}

fn session(store: &Store, id: &str, workspace: &str, created: i64) {
    store
        .create_session(&NewSession {
            id: id.into(),
            workspace: workspace.into(),
            title: String::new(),
            model: Some("gemini-2.5-pro".into()),
            created_ms: created,
            source: gd_store::SOURCE_DESKTOP.into(),
            origin: None,
        })
        .unwrap();
}

fn msg(role: Role, kind: MessageKind, text: &str, at: i64) -> NewMessage {
    let mut m = NewMessage::new(role, kind, json!([{ "text": text }]), text);
    m.created_ms = at;
    m
}

#[test]
fn messages_append_in_order_and_page_by_keyset() {
    let (_d, store) = store();
    session(&store, "s1", "/w", 1000);
    for i in 1..=120 {
        let role = if i % 2 == 1 { Role::User } else { Role::Model };
        let kind = if i % 2 == 1 {
            MessageKind::Prompt
        } else {
            MessageKind::Model
        };
        let r = store
            .append_message("s1", &msg(role, kind, &format!("message {i}"), 1000 + i))
            .unwrap();
        assert_eq!(r.seq, i);
    }
    let first = store
        .page(
            "s1",
            &PageQuery {
                from: PageFrom::Start,
                limit: 50,
                max_bytes: 1024,
            },
        )
        .unwrap();
    assert_eq!(first.messages.len(), 50);
    assert_eq!(first.messages[0].text, "message 1");
    assert!(!first.has_before && first.has_after);
    let next = store
        .page(
            "s1",
            &PageQuery {
                from: PageFrom::After(50),
                limit: 50,
                max_bytes: 1024,
            },
        )
        .unwrap();
    assert_eq!(next.messages[0].seq, 51);
    let end = store
        .page(
            "s1",
            &PageQuery {
                from: PageFrom::End,
                limit: 30,
                max_bytes: 1024,
            },
        )
        .unwrap();
    assert_eq!(end.messages.first().unwrap().seq, 91);
    assert_eq!(end.messages.last().unwrap().seq, 120);
    assert!(end.has_before && !end.has_after);
    let before = store
        .page(
            "s1",
            &PageQuery {
                from: PageFrom::Before(91),
                limit: 10,
                max_bytes: 1024,
            },
        )
        .unwrap();
    assert_eq!(
        before.messages.iter().map(|m| m.seq).collect::<Vec<_>>(),
        (81..=90).collect::<Vec<_>>()
    );
    let around = store
        .page(
            "s1",
            &PageQuery {
                from: PageFrom::Around(60),
                limit: 20,
                max_bytes: 1024,
            },
        )
        .unwrap();
    assert!(around.messages.iter().any(|m| m.seq == 60));
    assert!(around.messages[0].seq < 60);
    let s = store.session("s1").unwrap().unwrap();
    assert_eq!(s.message_count, 120);
    assert_eq!(s.updated_ms, 1120);
}

#[test]
fn oversized_messages_come_back_cut_and_whole_on_request() {
    let (_d, store) = store();
    session(&store, "s", "/w", 1);
    let big = "x".repeat(200_000);
    let r = store
        .append_message("s", &msg(Role::Model, MessageKind::Model, &big, 2))
        .unwrap();
    let page = store
        .page(
            "s",
            &PageQuery {
                max_bytes: 4096,
                ..PageQuery::default()
            },
        )
        .unwrap();
    let m = &page.messages[0];
    assert!(m.truncated);
    assert!(m.parts.is_none());
    assert_eq!(m.text.len(), 4096);
    assert!(m.size > 200_000);
    let (sid, whole) = store.message(&r.id).unwrap().unwrap();
    assert_eq!(sid, "s");
    assert_eq!(
        whole.parts.unwrap()[0]["text"].as_str().unwrap().len(),
        200_000
    );
}

#[test]
fn listing_is_newest_first_paged_and_per_workspace() {
    let (_d, store) = store();
    for i in 0..7 {
        let ws = if i % 2 == 0 { "/a" } else { "/b" };
        session(&store, &format!("s{i}"), ws, 100 * i);
        // (Only sessions with a message are listed.)
        store
            .append_message(
                &format!("s{i}"),
                &msg(Role::User, MessageKind::Prompt, "hi", 100 * i),
            )
            .unwrap();
    }
    let page1 = store
        .list_sessions(&ListQuery {
            limit: 3,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        page1.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["s6", "s5", "s4"]
    );
    let page2 = store
        .list_sessions(&ListQuery {
            limit: 3,
            after: Some(ListCursor::from(page1.last().unwrap())),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        page2.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["s3", "s2", "s1"]
    );
    let a = store
        .list_sessions(&ListQuery {
            workspace: Some("/a".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        a.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["s6", "s4", "s2", "s0"]
    );
    assert_eq!(store.latest_session("/b").unwrap().unwrap().id, "s5");
    // Numbered oldest first, as Gemini CLI's --list-sessions.
    assert_eq!(store.resolve_session("/a", "1").unwrap().id, "s0");
    assert_eq!(store.resolve_session("/a", "latest").unwrap().id, "s6");
    assert_eq!(store.resolve_session("/a", "s3").unwrap().id, "s3");
    assert!(matches!(
        store.resolve_session("/a", "9"),
        Err(StoreError::NoSuchSession(_))
    ));
}

#[test]
fn search_ranks_by_bm25_marks_hits_and_treats_input_as_text() {
    let (_d, store) = store();
    session(&store, "s1", "/proj/one", 1);
    session(&store, "s2", "/proj/two", 2);
    store
        .append_message(
            "s1",
            &msg(
                Role::User,
                MessageKind::Prompt,
                "why is the flaky auth test flaky? flaky flaky",
                3,
            ),
        )
        .unwrap();
    store
        .append_message(
            "s1",
            &msg(Role::Model, MessageKind::Model, "The tests in this very long answer about many unrelated things mention flaky once among lots of other words about databases and caches", 4),
        )
        .unwrap();
    store
        .append_message(
            "s2",
            &msg(
                Role::User,
                MessageKind::Prompt,
                "deploy <b>html</b> to the server",
                5,
            ),
        )
        .unwrap();
    let hits = store
        .search(&SearchQuery {
            text: "flaky".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0].seq, 1, "the message full of the word ranks first");
    assert!(hits[0].score <= hits[1].score);
    assert_eq!(hits[0].workspace, "/proj/one");
    let marked = spans(&hits[0].snippet);
    assert!(marked.iter().any(|s| s.hit && s.text == "flaky"));
    assert!(!hits[0].snippet.contains("<mark>"));
    // Prefix of the last word, across projects.
    let hits = store
        .search(&SearchQuery {
            text: "depl".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].session_id, "s2");
    // Markup stays text; the marker characters delimit the hit.
    assert!(
        hits[0]
            .snippet
            .contains(&format!("{MARK_START}deploy{MARK_END}"))
    );
    assert!(hits[0].snippet.contains("<b>html</b>"));
    // FTS syntax in the input is not interpreted.
    for text in ["\"unbalanced", "flaky OR", "NEAR(x", "*", "a:b", "-flaky"] {
        store
            .search(&SearchQuery {
                text: text.into(),
                ..Default::default()
            })
            .unwrap();
    }
    // Workspace filter.
    let hits = store
        .search(&SearchQuery {
            text: "the".into(),
            workspace: Some("/proj/two".into()),
            ..Default::default()
        })
        .unwrap();
    assert!(hits.iter().all(|h| h.workspace == "/proj/two"));
    assert_eq!(hits.len(), 1);
}

#[test]
fn delete_removes_messages_and_index_entries() {
    let (_d, store) = store();
    session(&store, "s1", "/w", 1);
    session(&store, "s2", "/w", 2);
    store
        .append_message(
            "s1",
            &msg(Role::User, MessageKind::Prompt, "zebra crossing", 3),
        )
        .unwrap();
    store
        .append_message(
            "s2",
            &msg(Role::User, MessageKind::Prompt, "zebra stripes", 4),
        )
        .unwrap();
    assert!(store.delete_session("s1").unwrap());
    assert!(!store.delete_session("s1").unwrap());
    let hits = store
        .search(&SearchQuery {
            text: "zebra".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        hits.iter()
            .map(|h| h.session_id.as_str())
            .collect::<Vec<_>>(),
        ["s2"]
    );
    assert!(store.session("s1").unwrap().is_none());
    // The index agrees with its content table.
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    conn.execute(
        "INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)",
        [],
    )
    .unwrap();
}

/// In session `s`: prompt "one" and its answer, a prompt "failed" out of the context, prompt
/// "two" and its answer. Returns the two answered prompts.
fn two_turns_and_a_failed_prompt(store: &Store) -> (MessageRef, MessageRef) {
    let prompt = |text: &str, at| {
        store
            .append_message("s", &msg(Role::User, MessageKind::Prompt, text, at))
            .unwrap()
    };
    let answer = |text: &str, at| {
        store
            .append_message("s", &msg(Role::Model, MessageKind::Model, text, at))
            .unwrap()
    };
    let one = prompt("one", 2);
    answer("answer one", 3);
    let failed = prompt("failed", 4);
    store.exclude_from_context(&failed.id).unwrap();
    let two = prompt("two", 5);
    answer("answer two", 6);
    (one, two)
}

#[test]
fn rewind_truncates_at_a_message_and_context_excludes_failed_prompts() {
    let (_d, store) = store();
    session(&store, "s", "/w", 1);
    let (a, b) = two_turns_and_a_failed_prompt(&store);
    let ctx = store.load_context("s").unwrap();
    assert_eq!(
        ctx.iter()
            .map(|m| m.parts[0]["text"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["one", "answer one", "two", "answer two"]
    );
    assert_eq!(store.rewind("s", &b.id).unwrap(), 2);
    let ctx = store.load_context("s").unwrap();
    assert_eq!(ctx.len(), 2);
    assert_eq!(store.session("s").unwrap().unwrap().message_count, 3);
    assert!(
        store
            .search(&SearchQuery {
                text: "two".into(),
                ..Default::default()
            })
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        store.rewind("s", "nope"),
        Err(StoreError::NoSuchMessage(_))
    ));
    // New messages continue after the cut.
    let c = store
        .append_message("s", &msg(Role::User, MessageKind::Prompt, "three", 7))
        .unwrap();
    assert_eq!(c.seq, 4);
    assert_eq!(store.rewind("s", &a.id).unwrap(), 4);
    assert!(store.load_context("s").unwrap().is_empty());
}

#[test]
fn compression_replaces_the_context_but_keeps_the_transcript() {
    let (_d, store) = store();
    session(&store, "s", "/w", 1);
    store
        .append_message("s", &msg(Role::User, MessageKind::Prompt, "long talk", 2))
        .unwrap();
    store
        .append_message("s", &msg(Role::Model, MessageKind::Model, "long answer", 3))
        .unwrap();
    store
        .replace_context(
            "s",
            &[
                msg(Role::User, MessageKind::Summary, "summary of it", 4),
                msg(Role::Model, MessageKind::Summary, "Got it.", 4),
            ],
        )
        .unwrap();
    let ctx = store.load_context("s").unwrap();
    assert_eq!(ctx.len(), 2);
    assert_eq!(ctx[0].kind, MessageKind::Summary);
    assert_eq!(
        store
            .page("s", &PageQuery::default())
            .unwrap()
            .messages
            .len(),
        4
    );
}

#[test]
fn token_totals_and_tool_calls_are_kept() {
    let (_d, store) = store();
    session(&store, "s", "/w", 1);
    let mut m = msg(Role::Model, MessageKind::Model, "", 2);
    m.parts = json!([{"functionCall": {"id": "c1", "name": "ls", "args": {"dir": "."}}}]);
    m.tool_calls = vec![ToolCallRecord {
        call_id: "c1".into(),
        name: "ls".into(),
        args: Some(json!({"dir": "."})),
        status: None,
        summary: None,
        ..ToolCallRecord::default()
    }];
    m.usage = Some(TokenUsage {
        prompt: 100,
        output: 5,
        cached: 10,
        thoughts: 3,
        tool: 0,
        total: 118,
    });
    let model = store.append_message("s", &m).unwrap();
    let mut r = msg(Role::User, MessageKind::ToolResult, "a.txt b.txt", 3);
    r.tool_calls = vec![ToolCallRecord {
        call_id: "c1".into(),
        name: "ls".into(),
        args: None,
        status: Some("success".into()),
        summary: Some("a.txt b.txt".into()),
        ..ToolCallRecord::default()
    }];
    store.append_message("s", &r).unwrap();
    let mut m2 = msg(Role::Model, MessageKind::Model, "two files", 4);
    m2.usage = Some(TokenUsage {
        prompt: 200,
        output: 7,
        cached: 0,
        thoughts: 0,
        tool: 0,
        total: 207,
    });
    store.append_message("s", &m2).unwrap();
    let s = store.session("s").unwrap().unwrap();
    assert_eq!(
        (
            s.tokens.prompt,
            s.tokens.output,
            s.tokens.cached,
            s.tokens.total
        ),
        (300, 12, 10, 325)
    );
    assert_eq!(
        store.message_for_call("s", "c1").unwrap(),
        Some(model.id.clone())
    );
    // No prompt before the call: no turn prompt.
    assert_eq!(store.turn_prompt_for_call("s", "c1").unwrap(), None);
    assert_eq!(
        store.locate("s", &model.id).unwrap(),
        Some((1, MessageKind::Model))
    );
    assert_eq!(store.locate("other", &model.id).unwrap(), None);
    let page = store.page("s", &PageQuery::default()).unwrap();
    assert_eq!(
        page.messages[1].tool_calls[0].status.as_deref(),
        Some("success")
    );
}

#[test]
fn export_streams_markdown_and_valid_json() {
    let (_d, store) = store();
    session(&store, "s", "/w", 1);
    store.rename("s", "Fix the `build`").unwrap();
    store
        .append_message(
            "s",
            &msg(Role::User, MessageKind::Prompt, "hello ```code```", 2),
        )
        .unwrap();
    let mut m = msg(Role::Model, MessageKind::Model, "hi there", 3);
    m.thoughts = vec![gd_store::ThoughtRecord {
        subject: "Greeting".into(),
        description: "say hi".into(),
    }];
    store.append_message("s", &m).unwrap();
    let mut md = Vec::new();
    store.export("s", ExportFormat::Markdown, &mut md).unwrap();
    let md = String::from_utf8(md).unwrap();
    assert!(md.starts_with("# Fix the `build`\n"), "{md}");
    assert!(md.contains("## User\n\nhello ```code```"));
    assert!(md.contains("## Gemini"));
    assert!(md.contains("Thinking: Greeting"));
    let mut js = Vec::new();
    store.export("s", ExportFormat::Json, &mut js).unwrap();
    let v: Value = serde_json::from_slice(&js).unwrap();
    assert_eq!(v["session"]["title"], "Fix the `build`");
    assert_eq!(v["messages"].as_array().unwrap().len(), 2);
    assert_eq!(v["messages"][1]["thoughts"][0]["subject"], "Greeting");
    assert!(matches!(
        store.export("nope", ExportFormat::Json, &mut Vec::new()),
        Err(StoreError::NoSuchSession(_))
    ));
    assert!(matches!(
        store.rename("nope", "x"),
        Err(StoreError::NoSuchSession(_))
    ));
}

#[test]
fn retention_is_off_by_default_and_deletes_by_age_and_count() {
    let (_d, store) = store();
    let day = 86_400_000;
    let now = 100 * day;
    for i in 0..6 {
        let at = now - (10 - i) * day;
        session(&store, &format!("s{i}"), "/w", at);
        store
            .append_message(
                &format!("s{i}"),
                &msg(Role::User, MessageKind::Prompt, "hi", at),
            )
            .unwrap();
    }
    assert_eq!(
        store
            .apply_retention(&Retention::default(), now, None)
            .unwrap(),
        0
    );
    let by_age = Retention {
        enabled: true,
        max_age: Some("7d".into()),
        max_count: None,
        ..Retention::default()
    };
    // s0..s2 are 10, 9, 8 days old; s3 is exactly 7.
    assert_eq!(store.apply_retention(&by_age, now, Some("s0")).unwrap(), 2);
    assert!(
        store.session("s0").unwrap().is_some(),
        "the kept session survives"
    );
    let by_count = Retention {
        enabled: true,
        max_age: None,
        max_count: Some(2),
        ..Retention::default()
    };
    assert_eq!(store.apply_retention(&by_count, now, None).unwrap(), 2);
    let left: Vec<String> = store
        .list_sessions(&ListQuery::default())
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(left, ["s5", "s4"]);
}

#[test]
fn a_v1_database_is_migrated_with_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite3");
    {
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        schema::migrate_to(&mut conn, 1).unwrap();
        assert_eq!(schema::version(&conn).unwrap(), 1);
        conn.execute(
            "INSERT INTO sessions (id, workspace, title, created_ms, updated_ms) VALUES ('old', '/w', 'Old one', 1, 2)",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO messages (id, session_id, seq, role, kind, created_ms, parts, text)
             VALUES ('m1', 'old', 1, 'user', 'prompt', 2, '[{\"text\":\"legacy walrus\"}]', 'legacy walrus')",
            [],
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(schema::version(&conn).unwrap(), schema::CURRENT_VERSION);
    let s = store.session("old").unwrap().unwrap();
    assert_eq!(s.title, "Old one");
    assert_eq!(
        s.source,
        gd_store::SOURCE_DESKTOP,
        "new column got its default"
    );
    let hits = store
        .search(&SearchQuery {
            text: "walrus".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(hits.len(), 1);
    // Reopening is a no-op; a newer schema is refused.
    drop(store);
    Store::open(&path).unwrap();
    conn.pragma_update(None, "user_version", schema::CURRENT_VERSION + 1)
        .unwrap();
    assert!(matches!(Store::open(&path), Err(StoreError::TooNew { .. })));
}

#[test]
fn appending_to_a_missing_session_is_an_error() {
    let (_d, store) = store();
    let e = store
        .append_message("ghost", &msg(Role::User, MessageKind::Prompt, "x", 1))
        .unwrap_err();
    assert!(matches!(e, StoreError::NoSuchSession(_)), "{e}");
}

#[test]
fn titles_are_the_first_line_cut_on_a_word() {
    assert_eq!(title_from("  \n fix the   build \n more"), "fix the build");
    let long = "word ".repeat(40);
    let t = title_from(&long);
    assert!(t.chars().count() <= 81, "{t}");
    assert!(t.ends_with('…'));
    assert_eq!(title_from(&"x".repeat(200)).chars().count(), 80);
}

#[test]
fn two_processes_worth_of_connections_open_a_new_database_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("race.sqlite3");
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || Store::open(&path).map(|_| ()))
        })
        .collect();
    for t in threads {
        t.join().unwrap().unwrap();
    }
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(schema::version(&conn).unwrap(), schema::CURRENT_VERSION);
}

#[test]
fn the_prompt_of_a_calls_turn_is_found() {
    let (_d, store) = store();
    session(&store, "s", "/w", 1);
    store
        .append_message("s", &msg(Role::User, MessageKind::Prompt, "first", 2))
        .unwrap();
    let second = store
        .append_message("s", &msg(Role::User, MessageKind::Prompt, "second", 3))
        .unwrap();
    let call = |id: &str| ToolCallRecord {
        call_id: id.into(),
        name: "replace".into(),
        args: None,
        status: None,
        summary: None,
        ..ToolCallRecord::default()
    };
    // Two rounds of tool calls in the second prompt's turn.
    for (i, id) in ["c1", "c2"].iter().enumerate() {
        let mut m = msg(Role::Model, MessageKind::Model, "", 4 + i as i64 * 2);
        m.tool_calls = vec![call(id)];
        store.append_message("s", &m).unwrap();
        let mut r = msg(Role::User, MessageKind::ToolResult, "ok", 5 + i as i64 * 2);
        r.tool_calls = vec![call(id)];
        store.append_message("s", &r).unwrap();
    }
    assert_eq!(
        store.turn_prompt_for_call("s", "c2").unwrap(),
        Some(second.id.clone())
    );
    assert_eq!(
        store.turn_prompt_for_call("s", "c1").unwrap(),
        Some(second.id)
    );
    assert_eq!(store.turn_prompt_for_call("s", "nope").unwrap(), None);
}

#[test]
fn rewinding_to_before_a_compression_brings_the_compressed_messages_back() {
    let (_d, store) = store();
    session(&store, "s", "/w", 1);
    let texts = |store: &Store| {
        store
            .load_context("s")
            .unwrap()
            .iter()
            .map(|m| m.parts[0]["text"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let (_, two) = two_turns_and_a_failed_prompt(&store);
    // A compression: the summary replaces the context.
    store
        .replace_context(
            "s",
            &[
                msg(Role::User, MessageKind::Summary, "summary", 7),
                msg(Role::Model, MessageKind::Summary, "got it", 7),
            ],
        )
        .unwrap();
    let three = store
        .append_message("s", &msg(Role::User, MessageKind::Prompt, "three", 8))
        .unwrap();
    store
        .append_message(
            "s",
            &msg(Role::Model, MessageKind::Model, "answer three", 9),
        )
        .unwrap();
    assert_eq!(
        texts(&store),
        ["summary", "got it", "three", "answer three"]
    );
    // After the compression: the summary stays the context.
    assert_eq!(store.rewind("s", &three.id).unwrap(), 2);
    assert_eq!(texts(&store), ["summary", "got it"]);
    // Before it: the compression is undone, the failed prompt stays out.
    assert_eq!(store.rewind("s", &two.id).unwrap(), 4);
    assert_eq!(texts(&store), ["one", "answer one"]);
    let page = store.page("s", &PageQuery::default()).unwrap();
    assert_eq!(
        page.messages
            .iter()
            .map(|m| (m.text.as_str(), m.in_context))
            .collect::<Vec<_>>(),
        [("one", true), ("answer one", true), ("failed", false)]
    );
}

/// A conversation opened (New, another folder, `/clear`) and left before its first prompt is not
/// listed: the history shows no "Untitled session · 0 messages" rows.
#[test]
fn sessions_without_a_message_are_not_listed() {
    let (_d, store) = store();
    session(&store, "empty", "/w", 200);
    session(&store, "used", "/w", 100);
    store
        .append_message("used", &msg(Role::User, MessageKind::Prompt, "hello", 100))
        .unwrap();
    let ids = |q: ListQuery| -> Vec<String> {
        store
            .list_sessions(&q)
            .unwrap()
            .into_iter()
            .map(|s| s.id)
            .collect()
    };
    assert_eq!(ids(ListQuery::default()), ["used"]);
    assert_eq!(
        ids(ListQuery {
            workspace: Some("/w".into()),
            ..Default::default()
        }),
        ["used"]
    );
    assert_eq!(store.latest_session("/w").unwrap().unwrap().id, "used");
    // A turn end alone (a turn refused before anything was sent) is no message either.
    session(&store, "ended", "/w", 300);
    store
        .append_message("ended", &msg(Role::Model, MessageKind::TurnEnd, "", 300))
        .unwrap();
    assert_eq!(ids(ListQuery::default()), ["used"]);
}
