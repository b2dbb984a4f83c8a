//! The policy editor through a real session: rules listed from real policy
//! files with this session's rules, a rule saved to the user's file and the
//! session reloaded (keeping its "always allow" rules), dry runs on the
//! session's engine, and the "always allow and save" preview equal to what
//! is then written.

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use gd_core::ApprovalMode;
use gd_core::policy::PolicyApproval;
use gd_core::policy_editor::{delete_policy_rule, save_policy_rule};
use gd_policy::{PolicyEngine, PolicySources, Rule, RuleDecision, RuleSource, Tier};
use gd_protocol::{
    ConfirmationOutcome, DryRunDecision, EffectiveRule, Event, Op, PolicyRuleFields, PolicyTier,
};
use pretty_assertions::assert_eq;
use serde_json::json;

const USER_RULES: &str = "\
# Mine.
[[rule]]
commandPrefix = \"git status\"
decision = \"allow\"
priority = 10
";

fn policy_for(home: &Path) -> Arc<PolicyApproval> {
    let sources = PolicySources {
        user_dir: Some(home.join(".gemini").join("policies")),
        workspace_dir: None,
        admin_dir: None,
        extensions: Vec::new(),
    };
    let (engine, errors) = PolicyEngine::load(&sources);
    assert!(errors.is_empty(), "{errors:?}");
    Arc::new(
        PolicyApproval::new(
            engine,
            ApprovalMode::Default,
            true,
            Some(home.join(".gemini/policies/auto-saved.toml")),
        )
        .reloadable(sources, Vec::new()),
    )
}

async fn next(h: &mut Harness, wanted: impl Fn(&Event) -> bool) -> Event {
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), h.events.recv())
            .await
            .expect("no event within 30 s")
            .expect("session ended");
        if wanted(&event) {
            return event;
        }
    }
}

async fn policies(h: &mut Harness, op: Op) -> (Vec<EffectiveRule>, Vec<String>) {
    h.handle.submit(op).unwrap();
    match next(h, |e| matches!(e, Event::Policies { .. })).await {
        Event::Policies { rules, errors, .. } => (rules, errors),
        _ => unreachable!(),
    }
}

async fn dry_run(
    h: &mut Harness,
    command: &str,
) -> (DryRunDecision, Option<EffectiveRule>, String) {
    h.handle
        .submit(Op::PolicyDryRun {
            tool: "run_shell_command".into(),
            args: json!({ "command": command }),
            mcp_server: None,
            approval_mode: None,
        })
        .unwrap();
    match next(h, |e| matches!(e, Event::PolicyDryRun { .. })).await {
        Event::PolicyDryRun {
            decision,
            rule,
            reason,
            ..
        } => (decision, rule, reason),
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn saved_rules_take_effect_after_a_reload_and_dry_runs_name_the_deciding_rule() {
    let home = tempfile::tempdir().unwrap();
    let policies_dir = home.path().join(".gemini").join("policies");
    std::fs::create_dir_all(&policies_dir).unwrap();
    let mine = policies_dir.join("mine.toml");
    std::fs::write(&mine, USER_RULES).unwrap();
    let policy = policy_for(home.path());
    let mut h = Harness::start_with_policy(json!({"steps": []}), |_| {}, policy.clone());

    // The file's rule is listed first (user tier above the defaults),
    // editable, with its file and line.
    let (rules, errors) = policies(&mut h, Op::ListPolicies).await;
    assert!(errors.is_empty());
    assert_eq!(rules[0].tier, PolicyTier::User);
    assert_eq!(rules[0].path, mine.display().to_string());
    assert_eq!(rules[0].line, 2);
    assert!(rules[0].editable);
    assert_eq!(rules[0].fields.command_prefixes, ["git status"]);
    assert!(
        rules
            .iter()
            .any(|r| r.tier == PolicyTier::Default && !r.editable)
    );

    let (decision, rule, reason) = dry_run(&mut h, "git status --short").await;
    assert_eq!(decision, DryRunDecision::Allow);
    assert_eq!(rule.as_ref().map(|r| r.line), Some(2));
    assert!(reason.contains("mine.toml:2"), "{reason}");
    let (decision, rule, _) = dry_run(&mut h, "git push").await;
    assert_eq!(decision, DryRunDecision::AskUser);
    // The built-in rule that asks about the shell.
    assert_eq!(rule.map(|r| r.tier), Some(PolicyTier::Default));

    // A session rule ("always allow" of this session), kept over reloads.
    let mut session = Rule::for_command_prefix("ls", RuleDecision::Allow);
    session.tier = Tier::Workspace;
    session.priority = 950;
    session.source = Some(RuleSource {
        path: "<session>".into(),
        line: 1,
    });
    policy.engine().add_session_rule(session);

    // The editor denies `git push` in the user's file; the session decides
    // with it once reloaded.
    let fields = PolicyRuleFields {
        command_prefixes: vec!["git push".into()],
        decision: "deny".into(),
        priority: 500,
        deny_message: Some("Pushing is for people.".into()),
        ..PolicyRuleFields::default()
    };
    let saved = save_policy_rule(
        &h.workspace,
        Some(home.path()),
        PolicyTier::User,
        None,
        None,
        &fields,
    )
    .unwrap();
    let auto = policies_dir.join("auto-saved.toml");
    assert_eq!(saved.path, auto.display().to_string());
    assert_eq!(saved.line, 1);
    assert_eq!(dry_run(&mut h, "git push").await.0, DryRunDecision::AskUser);
    let (rules, _) = policies(&mut h, Op::ReloadPolicies).await;
    assert_eq!(rules[0].path, auto.display().to_string());
    assert_eq!(rules[0].fields.decision, "deny");
    assert!(
        rules
            .iter()
            .any(|r| r.session && r.fields.command_prefixes == ["ls"])
    );

    let (decision, rule, reason) = dry_run(&mut h, "git push origin main").await;
    assert_eq!(decision, DryRunDecision::Deny);
    assert_eq!(rule.unwrap().path, auto.display().to_string());
    assert!(reason.contains("auto-saved.toml:1"), "{reason}");
    let (decision, rule, reason) = dry_run(&mut h, "ls -la").await;
    assert_eq!(decision, DryRunDecision::Allow);
    assert!(rule.unwrap().session);
    assert!(reason.contains("This session's"), "{reason}");

    // A rule that would not load is refused, naming the line; the file
    // stays as it was.
    let before = std::fs::read_to_string(&mine).unwrap();
    let bad = PolicyRuleFields {
        command_regex: Some("git (".into()),
        decision: "allow".into(),
        ..PolicyRuleFields::default()
    };
    let err = save_policy_rule(
        &h.workspace,
        Some(home.path()),
        PolicyTier::User,
        Some(mine.to_str().unwrap()),
        None,
        &bad,
    )
    .unwrap_err();
    assert!(err.to_string().contains("mine.toml:8:"), "{err}");
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), before);
    // Files outside the policy folder and the admin tier are refused.
    let outside = save_policy_rule(
        &h.workspace,
        Some(home.path()),
        PolicyTier::User,
        Some(h.workspace.join("x.toml").to_str().unwrap()),
        None,
        &fields,
    );
    assert!(outside.is_err());
    assert!(
        save_policy_rule(
            &h.workspace,
            Some(home.path()),
            PolicyTier::Admin,
            None,
            None,
            &fields
        )
        .is_err()
    );

    // Deleted, reloaded: asked again.
    delete_policy_rule(
        &h.workspace,
        Some(home.path()),
        PolicyTier::User,
        auto.to_str().unwrap(),
        1,
    )
    .unwrap();
    policies(&mut h, Op::ReloadPolicies).await;
    assert_eq!(dry_run(&mut h, "git push").await.0, DryRunDecision::AskUser);
}

#[tokio::test]
async fn the_always_allow_and_save_preview_is_what_gets_written() {
    let home = tempfile::tempdir().unwrap();
    let policy = policy_for(home.path());
    let mut h = Harness::start_with_policy(
        json!({"steps": [
            {"functionCalls": [{"name": "run_shell_command", "args": {"command": "echo hi && wc -l x"}}]},
            {"text": "done"}
        ]}),
        |_| {},
        policy,
    );
    h.handle.submit(Op::user_text("run it")).unwrap();
    let preview = match next(&mut h, |e| matches!(e, Event::SavedRulePreview { .. })).await {
        Event::SavedRulePreview { preview, .. } => preview,
        _ => unreachable!(),
    };
    let file = home.path().join(".gemini/policies/auto-saved.toml");
    assert_eq!(preview.path, file.display().to_string());
    assert_eq!(
        preview.text,
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"echo\"\ndecision = \"allow\"\npriority = 100\n\n\
         [[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"wc\"\ndecision = \"allow\"\npriority = 100\n"
    );
    let Event::ToolConfirmationRequest { call_id, .. } = next(&mut h, |e| {
        matches!(e, Event::ToolConfirmationRequest { .. })
    })
    .await
    else {
        unreachable!()
    };
    h.handle
        .submit(Op::ConfirmTool {
            call_id,
            outcome: ConfirmationOutcome::ProceedAlwaysAndSave,
            content: None,
            hunks: None,
        })
        .unwrap();
    next(&mut h, |e| matches!(e, Event::TurnComplete { .. })).await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), preview.text);
}
