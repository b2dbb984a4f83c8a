//! What a subagent sends, against what Gemini CLI 0.61 sent for the same
//! agent and the same script (tests/fixtures/gemini-cli-0.61/
//! subagent_investigator_*, recorded by scripts/capture-061-subagent.py with
//! the real 0.61 against our fake server): the investigator's requests go to
//! its own model with its own system instruction, tool set (schemas field for
//! field), generation config and history shape, and the parent hears 0.61's
//! exact result text.

use crate::common;

use std::sync::Arc;

use common::*;
use gd_core::ApprovalMode;
use gd_core::launch::declared_tools;
use gd_core::policy::PolicyApproval;
use gd_core::subagents::{AgentCatalog, InvokeAgent, builtin};
use gd_fake_gemini::fixtures::{gemini_cli_fixture, gemini_cli_fixtures_dir};
use gd_policy::{PolicyEngine, default_rules};
use gd_protocol::TurnStatus;
use pretty_assertions::assert_eq;
use serde_json::Value;

/// Roles and part shapes (the keys of each part and of its call or
/// response), which is what must match; ids and texts differ by run.
fn shape(contents: &Value) -> Vec<(String, Vec<Vec<String>>)> {
    contents
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let parts = c["parts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    let mut k = keys(p);
                    for inner in ["functionCall", "functionResponse"] {
                        if let Some(v) = p.get(inner) {
                            k.extend(keys(v).into_iter().map(|x| format!("{inner}.{x}")));
                        }
                    }
                    k
                })
                .collect();
            (c["role"].as_str().unwrap().to_owned(), parts)
        })
        .collect()
}

#[tokio::test]
async fn the_investigators_requests_match_gemini_cli_0_61() {
    let scenario = gd_fake_gemini::scenario_from_file(
        gemini_cli_fixtures_dir().join("subagent_investigator_scenario.json"),
    )
    .unwrap();
    let policy = Arc::new(PolicyApproval::new(
        PolicyEngine::new(default_rules()),
        ApprovalMode::Yolo,
        false,
        None,
    ));
    let settings = gd_settings::Settings::default();
    let mut h = Harness::start_with_tools(
        scenario,
        |c| c.agents = Arc::new(AgentCatalog::new(builtin::agents(), Vec::new())),
        policy.clone(),
        |ws| {
            let mut tools = declared_tools(&settings, &policy, ws, &mut Vec::new());
            tools.register(Arc::new(InvokeAgent::new()));
            tools.into()
        },
    );
    let events = h.turn("Where is the greeting printed?").await;
    assert_eq!(status(&events), TurnStatus::Completed, "{events:#?}");

    let requests = h.fake.main_requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    let fixture = |n: usize, kind: &str| {
        gemini_cli_fixture(&format!("subagent_investigator_req{n:02}_{kind}.json"))
    };
    let theirs = [
        fixture(1, "main"),
        fixture(2, "subagent"),
        fixture(3, "subagent"),
        fixture(4, "main"),
    ];
    let their_paths: Vec<&str> = theirs.iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, their_paths, "the agent's own model, in 0.61's order");

    let plain_grep = gemini_cli_fixture("tools_yolo.json")
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "grep_search")
        .unwrap()
        .clone();
    for (n, (ours, theirs)) in requests.iter().zip(&theirs).enumerate().skip(1).take(2) {
        let ours = ours.body.as_ref().unwrap();
        let theirs = &theirs["body"];
        let at = format!("request {}", n + 1);
        assert_eq!(keys(ours), keys(theirs), "{at}: body keys");
        assert_eq!(
            keys(&ours["systemInstruction"]),
            keys(&theirs["systemInstruction"]),
            "{at}"
        );
        let system = ours["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .unwrap();
        assert!(
            system.contains("Codebase Investigator"),
            "{at}: its own prompt"
        );
        assert_eq!(ours["generationConfig"], theirs["generationConfig"], "{at}");
        assert_eq!(
            declared_names(ours),
            declared_names(theirs),
            "{at}: its own tools"
        );
        for (mine, their) in ours["tools"][0]["functionDeclarations"]
            .as_array()
            .unwrap()
            .iter()
            .zip(
                theirs["tools"][0]["functionDeclarations"]
                    .as_array()
                    .unwrap(),
            )
        {
            // The recording machine had ripgrep, so 0.61 declared its richer
            // grep_search (grep_search_with_ripgrep.json); ours is the
            // variant 0.61 declares without it, as in tools_yolo.json.
            let their = if their["name"] == "grep_search" {
                &plain_grep
            } else {
                their
            };
            assert_same_schema(mine, their, mine["name"].as_str().unwrap());
        }
        assert_eq!(shape(&ours["contents"]), shape(&theirs["contents"]), "{at}");
    }
    // The task reaches the agent inside 0.61's objective block.
    let first = requests[1].body.as_ref().unwrap()["contents"][0]["parts"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        first.contains("<objective>\nFind where the greeting is printed.\n</objective>"),
        "{first}"
    );

    // 0.61 answers a subagent's call under `<agent run id>#<turn>-<n>`.
    let id =
        requests[2].body.as_ref().unwrap()["contents"][2]["parts"][0]["functionResponse"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
    assert!(id.ends_with("#0-0"), "{id}");

    // The parent hears exactly what 0.61's parent heard.
    let last = requests[3].body.as_ref().unwrap();
    let response =
        |body: &Value| body["contents"][2]["parts"][0]["functionResponse"]["response"].clone();
    assert_eq!(response(last), response(&theirs[3]["body"]));
    assert_eq!(
        shape(&last["contents"]),
        shape(&theirs[3]["body"]["contents"])
    );
}
