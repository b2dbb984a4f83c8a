//! Code Assist onboarding against the fake Code Assist server: tiers,
//! onboardUser with operation polling, the free-tier rule, and every error
//! turned into a message that says what to do.

use std::time::Duration;

use gd_auth::ProjectSource;
use gd_auth::code_assist::{
    CodeAssistApi, CodeAssistError, CodeAssistSetup, PollOptions, setup_user,
};
use gd_fake_gemini::FakeGemini;
use gd_http::SecretString;
use serde_json::{Value, json};

const TOKEN: &str = "ya29.test-token";

async fn setup(
    fake: &FakeGemini,
    project: Option<&str>,
) -> Result<CodeAssistSetup, CodeAssistError> {
    let api = CodeAssistApi::new(
        gd_http::http_client_builder().build().unwrap(),
        &fake.base_url(),
        "v1internal",
    );
    let steps = std::sync::Mutex::new(Vec::<String>::new());
    let result = setup_user(
        &api,
        &SecretString::new(TOKEN),
        project.map(|p| (p.to_owned(), ProjectSource::EnvGoogleCloudProject)),
        PollOptions {
            interval: Duration::from_millis(5),
            max_wait: Duration::from_secs(5),
        },
        &|s: &str| steps.lock().unwrap().push(s.to_owned()),
    )
    .await;
    assert!(
        result.is_err() || !steps.lock().unwrap().is_empty(),
        "progress is reported"
    );
    result
}

fn fake(code_assist: Value) -> FakeGemini {
    FakeGemini::start(json!({"code_assist": code_assist}))
}

fn setup_bodies(fake: &FakeGemini) -> Vec<(String, Value)> {
    fake.requests()
        .into_iter()
        .filter(|r| r.kind == "code_assist_setup")
        .map(|r| (r.api_method.unwrap(), r.body.unwrap_or(Value::Null)))
        .collect()
}

#[tokio::test]
async fn a_current_tier_with_a_project_needs_no_onboarding() {
    let fake = fake(json!({}));
    let setup = setup(&fake, None).await.unwrap();
    assert_eq!(setup.project, "fake-project");
    assert_eq!(setup.project_source, ProjectSource::CodeAssist);
    assert_eq!(setup.tier_id, "standard-tier");
    let calls = setup_bodies(&fake);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].0, "loadCodeAssist");
    assert_eq!(calls[0].1["metadata"]["ideType"], "IDE_UNSPECIFIED");
}

#[tokio::test]
async fn the_configured_project_is_sent_and_used() {
    let fake = fake(json!({"load": {"currentTier": {"id": "standard-tier", "name": "Standard"}}}));
    let setup = setup(&fake, Some("my-project")).await.unwrap();
    assert_eq!(setup.project, "my-project");
    assert_eq!(setup.project_source, ProjectSource::EnvGoogleCloudProject);
    assert_eq!(setup.tier_name.as_deref(), Some("Standard"));
    let calls = setup_bodies(&fake);
    assert_eq!(calls[0].1["cloudaicompanionProject"], "my-project");
    assert_eq!(calls[0].1["metadata"]["duetProject"], "my-project");
}

#[tokio::test]
async fn standard_tier_onboarding_polls_the_operation_with_the_project() {
    let fake = fake(json!({
        "load": {"allowedTiers": [{"id": "standard-tier", "name": "Standard", "isDefault": true, "userDefinedCloudaicompanionProject": true}]},
        "onboard": {"polls": 3, "project": "my-project"}
    }));
    let setup = setup(&fake, Some("my-project")).await.unwrap();
    assert_eq!(setup.project, "my-project");
    assert_eq!(setup.tier_id, "standard-tier");
    let calls = setup_bodies(&fake);
    let methods: Vec<_> = calls.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(
        methods,
        [
            "loadCodeAssist",
            "onboardUser",
            "getOperation",
            "getOperation",
            "getOperation"
        ]
    );
    assert_eq!(calls[1].1["tierId"], "standard-tier");
    assert_eq!(calls[1].1["cloudaicompanionProject"], "my-project");
    let paths: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.api_method.as_deref() == Some("getOperation"))
        .map(|r| (r.method, r.path))
        .collect();
    assert_eq!(
        paths[0],
        ("GET".into(), "/v1internal/operations/onboard-1".into())
    );
}

#[tokio::test]
async fn the_free_tier_is_onboarded_without_a_project() {
    let fake = fake(json!({
        "load": {"allowedTiers": [{"id": "free-tier", "name": "Gemini Code Assist for individuals", "isDefault": true}]},
        "onboard": {"polls": 1, "project": "managed-123"}
    }));
    let setup = setup(&fake, Some("my-project")).await.unwrap();
    assert_eq!(setup.project, "managed-123");
    assert_eq!(setup.project_source, ProjectSource::CodeAssist);
    let onboard = &setup_bodies(&fake)[1].1;
    assert!(onboard["cloudaicompanionProject"].is_null(), "{onboard}");
    assert!(
        onboard["metadata"].get("duetProject").is_none(),
        "{onboard}"
    );
}

#[tokio::test]
async fn a_numeric_project_is_refused_before_any_call() {
    let fake = fake(json!({}));
    let err = setup(&fake, Some("123456789012")).await.unwrap_err();
    assert!(
        matches!(err, CodeAssistError::NumericProjectId { .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("project number") && text.contains("project ID"),
        "{text}"
    );
    assert!(text.contains("GOOGLE_CLOUD_PROJECT"), "{text}");
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn validation_required_gives_the_url() {
    let fake = fake(json!({"load": {
        "allowedTiers": [{"id": "free-tier", "isDefault": true}],
        "ineligibleTiers": [{"reasonCode": "VALIDATION_REQUIRED", "reasonMessage": "Verify your account to continue.",
                              "tierId": "free-tier", "tierName": "Free", "validationUrl": "https://accounts.example.com/verify?x=1"}]
    }}));
    let err = setup(&fake, None).await.unwrap_err();
    assert_eq!(err.url(), Some("https://accounts.example.com/verify?x=1"));
    let text = err.to_string();
    assert!(text.contains("verify your account"), "{text}");
    assert!(text.contains("Verify your account to continue."), "{text}");
    let report = gd_auth::AuthError::from(err).report();
    assert_eq!(
        report.url.as_deref(),
        Some("https://accounts.example.com/verify?x=1")
    );
}

#[tokio::test]
async fn ineligible_tiers_carry_googles_reasons() {
    let fake = fake(json!({"load": {
        "currentTier": {"id": "standard-tier"},
        "ineligibleTiers": [{"reasonCode": "UNSUPPORTED_LOCATION", "reasonMessage": "Code Assist is not available in your region.",
                              "tierId": "standard-tier", "tierName": "Gemini Code Assist Standard"}]
    }}));
    let err = setup(&fake, None).await.unwrap_err();
    assert!(matches!(err, CodeAssistError::Ineligible { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("Gemini Code Assist Standard: Code Assist is not available in your region."),
        "{err}"
    );
}

#[tokio::test]
async fn a_missing_project_is_asked_for() {
    let fake = fake(json!({"load": {"currentTier": {"id": "standard-tier"}}}));
    let err = setup(&fake, None).await.unwrap_err();
    assert_eq!(err, CodeAssistError::ProjectRequired);
    assert!(err.to_string().contains("GOOGLE_CLOUD_PROJECT"));
    // Also when onboarding assigns none.
    let fake = fake_onboard_without_project();
    assert_eq!(
        setup(&fake, None).await.unwrap_err(),
        CodeAssistError::ProjectRequired
    );
}

fn fake_onboard_without_project() -> FakeGemini {
    fake(json!({
        "load": {"allowedTiers": [{"id": "standard-tier", "isDefault": true}]},
        "onboard": {"polls": 0}
    }))
}

#[tokio::test]
async fn the_retired_consumer_tier_is_explained() {
    // Google lists the individuals' tier as ineligible.
    let fake = fake(json!({"load": {
        "ineligibleTiers": [{"reasonCode": "INELIGIBLE_ACCOUNT", "reasonMessage": "Gemini Code Assist for individuals is no longer available.",
                              "tierId": "free-tier", "tierName": "Gemini Code Assist for individuals"}]
    }}));
    let err = setup(&fake, None).await.unwrap_err();
    assert!(
        matches!(err, CodeAssistError::ConsumerTierRetired { .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.contains("retired in June 2026"), "{text}");
    assert!(text.contains("API key"), "{text}");
    assert!(text.contains("no longer available"), "{text}");

    // Or onboarding to it fails.
    let fake = fake_free_onboard_error();
    let err = setup(&fake, None).await.unwrap_err();
    assert!(
        matches!(err, CodeAssistError::ConsumerTierRetired { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("tier) was retired"), "{err}");
}

fn fake_free_onboard_error() -> FakeGemini {
    fake(json!({
        "load": {"allowedTiers": [{"id": "free-tier", "isDefault": true}]},
        "onboard_error": {"status": 400, "message": "This tier is not available."}
    }))
}

#[tokio::test]
async fn a_failed_operation_is_reported() {
    let fake = fake(json!({
        "load": {"allowedTiers": [{"id": "standard-tier", "isDefault": true}]},
        "onboard": {"polls": 1},
        "operation_error": {"code": 9, "message": "License not assigned."}
    }));
    let err = setup(&fake, Some("p-1")).await.unwrap_err();
    assert_eq!(
        err,
        CodeAssistError::Operation("License not assigned.".into())
    );
}

#[tokio::test]
async fn http_401_and_403_become_instructions() {
    let fake = fake(json!({"load_error": {"status": 401}}));
    let err = setup(&fake, None).await.unwrap_err();
    assert_eq!(err, CodeAssistError::Unauthorized);
    assert!(err.needs_sign_in());
    assert!(err.to_string().contains("auth login"));

    let fake = fake_403_disabled();
    let err = setup(&fake, Some("proj-x")).await.unwrap_err();
    assert_eq!(
        err,
        CodeAssistError::ServiceDisabled {
            project: "proj-x".into(),
            url: "https://console.developers.google.com/apis/api/cloudaicompanion.googleapis.com/overview?project=proj-x".into()
        }
    );
    assert!(err.to_string().contains("not enabled in project proj-x"));

    let denied = fake_403_denied();
    let err = setup(&denied, Some("proj-y")).await.unwrap_err();
    assert!(
        matches!(err, CodeAssistError::PermissionDenied { .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("proj-y") && text.contains("does not have permission"),
        "{text}"
    );
    assert!(text.contains("license"), "{text}");
}

fn fake_403_denied() -> FakeGemini {
    fake(json!({"load_error": {"status": 403, "message": "The caller does not have permission"}}))
}

fn fake_403_disabled() -> FakeGemini {
    fake(json!({"load_error": {
        "status": 403, "reason": "SERVICE_DISABLED",
        "message": "Gemini for Google Cloud API has not been used in project proj-x before or it is disabled.",
        "activation_url": "https://console.developers.google.com/apis/api/cloudaicompanion.googleapis.com/overview?project=proj-x"
    }}))
}

#[tokio::test]
async fn vpc_service_controls_mean_a_standard_user() {
    let fake = fake(json!({"load_error": {"status": 403, "reason": "SECURITY_POLICY_VIOLATED"}}));
    let setup = setup(&fake, Some("corp-project")).await.unwrap();
    assert_eq!(setup.tier_id, "standard-tier");
    assert_eq!(setup.project, "corp-project");
}

#[tokio::test]
async fn the_bearer_token_is_sent_and_never_echoed() {
    let fake = FakeGemini::start(json!({"code_assist": {"tokens": ["other-token"]}}));
    let err = setup(&fake, None).await.unwrap_err();
    assert_eq!(err, CodeAssistError::Unauthorized);
    assert!(!err.to_string().contains(TOKEN));
    let fake = FakeGemini::start(json!({"code_assist": {"tokens": [TOKEN]}}));
    setup(&fake, None).await.unwrap();
}
