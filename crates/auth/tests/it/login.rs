//! Google sign-in end to end on loopback: the test is the browser (it
//! opens the URL the app would open, the fake authorization server
//! redirects to the app's callback), the fake token endpoint checks PKCE,
//! userinfo names the account and the fake Code Assist server onboards.

use crate::common;

use std::collections::HashMap;
use std::time::Duration;

use common::{World, authorize_location, browse};
use futures::StreamExt;
use gd_auth::oauth::StoredTokens;
use gd_auth::secret_store::{FileStore, SecretStore};
use gd_auth::{AuthError, AuthMethod, LoginOptions, LoginStage, MethodOrigin, SecretKey};
use gd_fake_gemini::credential_fingerprint;
use gd_fake_gemini::oauth::{Consent, OAuthEvent};
use gd_gemini::{ClientOptions, GeminiClient, RequestMeta, StreamEvent};
use serde_json::json;

fn chat_scenario() -> serde_json::Value {
    json!({"steps": [{"text": "Hello from Code Assist"}]})
}

fn stored_tokens(world: &World) -> Option<StoredTokens> {
    FileStore::new(world.auth_dir().join("secrets.json"))
        .get(SecretKey::GoogleOauth)
        .unwrap()
        .map(|s| StoredTokens::from_secret(&s).unwrap())
}

async fn chat_once(client: &GeminiClient) -> Result<String, gd_gemini::GeminiError> {
    let request = gd_gemini::GenerateContentRequest {
        contents: vec![gd_gemini::Content::user_text("hi")],
        tools: Some(vec![
            serde_json::from_value(
                json!({"functionDeclarations": [{"name": "noop", "description": "x"}]}),
            )
            .unwrap(),
        ]),
        ..Default::default()
    };
    let meta = RequestMeta {
        session_id: "s".into(),
        prompt_id: "p".into(),
    };
    let mut stream = Box::pin(client.stream("gemini-2.5-pro", &request, &meta));
    let mut text = String::new();
    while let Some(event) = stream.next().await {
        if let StreamEvent::Chunk(chunk) = event? {
            text.push_str(&chunk.text());
        }
    }
    Ok(text)
}

#[tokio::test]
async fn loopback_sign_in_onboards_and_chats_over_code_assist() {
    let world = World::new(chat_scenario());
    let manager = world.manager(None);
    let login = manager
        .start_google_login(LoginOptions::default())
        .await
        .unwrap();
    let url = login.url().to_owned();
    assert!(login.redirect_uri().starts_with("http://127.0.0.1:"));
    assert!(login.redirect_uri().ends_with("/oauth2callback"));
    assert_eq!(login.control().stage(), LoginStage::WaitingForBrowser);

    let browser = tokio::spawn(browse(url.clone()));
    let outcome = login.finish().await.expect("signed in");
    let (status, page) = browser.await.unwrap();
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("signed in"), "{page}");

    assert_eq!(outcome.email.as_deref(), Some("dev@example.com"));
    assert_eq!(outcome.code_assist.project, "fake-project");
    assert_eq!(outcome.code_assist.tier_id, "standard-tier");

    // The authorization request had everything Google needs.
    let query: HashMap<String, String> = world
        .oauth
        .events()
        .into_iter()
        .find_map(|e| match e {
            OAuthEvent::Authorize(q) => Some(q),
            _ => None,
        })
        .unwrap();
    assert_eq!(query["access_type"], "offline");
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(
        query["scope"],
        "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile"
    );
    assert!(query["state"].len() >= 16);
    assert_eq!(world.oauth.token_requests("authorization_code"), 1);

    // Stored: tokens in the (file) store, account and project in the state.
    let tokens = stored_tokens(&world).expect("tokens stored");
    assert_eq!(tokens.access_token, "ya29.fake-access-2");
    assert_eq!(tokens.refresh_token.as_deref(), Some("1//fake-refresh-3"));
    let status = manager.status().await;
    assert!(status.ready, "{status:?}");
    assert_eq!(status.active, Some(AuthMethod::GoogleLogin));
    assert_eq!(status.chosen_by, Some(MethodOrigin::App));
    assert_eq!(status.google.email.as_deref(), Some("dev@example.com"));
    assert_eq!(status.google.tier_id.as_deref(), Some("standard-tier"));
    assert_eq!(status.google.project.as_deref(), Some("fake-project"));
    assert!(status.google.token_expires_in_secs.unwrap() > 3000);
    assert!(status.google.has_refresh_token);
    assert!(
        status
            .secret_location
            .as_deref()
            .unwrap()
            .contains("dev@example.com"),
        "{status:?}"
    );

    // A session's backend is Code Assist with the stored token.
    let resolved = manager.resolve_backend().unwrap();
    assert_eq!(resolved.backend.kind(), "code-assist");
    let client = GeminiClient::new(resolved.backend, ClientOptions::default()).unwrap();
    assert_eq!(chat_once(&client).await.unwrap(), "Hello from Code Assist");
    let main = world.gemini.main_requests();
    assert_eq!(main.len(), 1);
    assert_eq!(main[0].api_style, "code_assist");
    assert_eq!(
        main[0].credential_sha256_12.as_deref(),
        Some(credential_fingerprint("Bearer ya29.fake-access-2").as_str())
    );
    let setup: Vec<_> = world
        .gemini
        .requests()
        .into_iter()
        .filter(|r| r.kind == "code_assist_setup")
        .collect();
    assert_eq!(setup.len(), 1, "an already onboarded user only loads");
    assert_eq!(
        setup[0].body.as_ref().unwrap()["metadata"]["pluginType"],
        "GEMINI"
    );
}

/// A forged callback (any web page can send the browser to the loopback port) gets a 400
/// and does not end the sign-in: neither with a code, nor with `error=`, nor without a
/// `state`. The real callback afterwards still signs in.
#[tokio::test]
async fn a_forged_callback_is_refused_and_the_sign_in_keeps_waiting() {
    let world = World::new(chat_scenario());
    let manager = world.manager(None);
    let login = manager
        .start_google_login(LoginOptions::default())
        .await
        .unwrap();
    let redirect = login.redirect_uri().to_owned();
    let control = login.control();
    let location = authorize_location(login.url()).await;
    let finish = tokio::spawn(login.finish());
    for forged in [
        "state=forged&code=4/evil",
        "code=4/evil",
        "state=forged&error=access_denied",
        "error=access_denied",
    ] {
        let (status, page) = browse(format!("{redirect}?{forged}")).await;
        assert_eq!(status, 400, "{forged}: {page}");
        assert!(page.contains("state mismatch"), "{forged}: {page}");
        assert!(!finish.is_finished(), "{forged} ended the sign-in");
        assert_eq!(control.stage(), LoginStage::WaitingForBrowser);
    }
    // The real answer from Google completes it.
    let (status, page) = browse(location).await;
    assert_eq!(status, 200, "{page}");
    let outcome = finish.await.unwrap().expect("signed in");
    assert_eq!(outcome.email.as_deref(), Some("dev@example.com"));
    assert_eq!(world.oauth.token_requests("authorization_code"), 1);
    assert!(stored_tokens(&world).is_some());
}

/// The fake authorization server redirecting with another state: refused, nothing
/// exchanged, and the sign-in goes on until its timeout.
#[tokio::test]
async fn a_callback_with_another_state_is_refused() {
    let world = World::new(chat_scenario());
    world.oauth.set_consent(Consent::WrongState);
    let manager = world.manager(None);
    let login = manager
        .start_google_login(LoginOptions {
            timeout: Duration::from_secs(2),
            ..LoginOptions::default()
        })
        .await
        .unwrap();
    let (status, page) = browse(login.url().to_owned()).await;
    assert_eq!(status, 400);
    assert!(page.contains("state mismatch"), "{page}");
    let err = login.finish().await.unwrap_err();
    assert!(matches!(err, AuthError::TimedOut(_)), "{err:?}");
    assert_eq!(world.oauth.token_requests("authorization_code"), 0);
    assert!(stored_tokens(&world).is_none());
    assert!(!manager.status().await.google.signed_in);
}

#[tokio::test]
async fn denied_consent_is_explained() {
    let world = World::new(chat_scenario());
    world.oauth.set_consent(Consent::Deny);
    let manager = world.manager(None);
    let login = manager
        .start_google_login(LoginOptions::default())
        .await
        .unwrap();
    let control = login.control();
    let browser = tokio::spawn(browse(login.url().to_owned()));
    let err = login.finish().await.unwrap_err();
    assert!(matches!(err, AuthError::Denied(_)), "{err:?}");
    assert!(err.to_string().contains("access_denied"), "{err}");
    assert!(matches!(control.stage(), LoginStage::Failed { .. }));
    let (status, page) = browser.await.unwrap();
    assert_eq!(status, 400);
    assert!(page.contains("did not grant access"), "{page}");
    assert!(stored_tokens(&world).is_none());
}

#[tokio::test]
async fn no_answer_times_out_and_frees_the_port() {
    let world = World::new(chat_scenario());
    let manager = world.manager(None);
    let login = manager
        .start_google_login(LoginOptions {
            timeout: Duration::from_millis(300),
            ..LoginOptions::default()
        })
        .await
        .unwrap();
    let redirect = login.redirect_uri().to_owned();
    let err = login.finish().await.unwrap_err();
    assert!(matches!(err, AuthError::TimedOut(_)), "{err:?}");
    assert!(err.to_string().contains("minutes"), "{err}");
    // The callback server is gone.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let client = gd_http::http_client_builder().build().unwrap();
    let late = client
        .get(format!("{redirect}?code=x&state=y"))
        .timeout(Duration::from_secs(2))
        .send()
        .await;
    assert!(late.is_err(), "nobody listens after the timeout");
}

#[tokio::test]
async fn cancel_stops_the_sign_in() {
    let world = World::new(chat_scenario());
    let manager = world.manager(None);
    let login = manager
        .start_google_login(LoginOptions::default())
        .await
        .unwrap();
    let control = login.control();
    let finish = tokio::spawn(login.finish());
    tokio::time::sleep(Duration::from_millis(50)).await;
    control.cancel();
    let err = tokio::time::timeout(Duration::from_secs(5), finish)
        .await
        .expect("cancel is prompt")
        .unwrap()
        .unwrap_err();
    assert_eq!(err, AuthError::Cancelled);
    assert!(
        control.submit_code("4/late").await.is_err(),
        "a cancelled sign-in takes no code"
    );
}

#[tokio::test]
async fn exactly_one_callback_is_accepted() {
    let world = World::new(chat_scenario());
    let manager = world.manager(None);
    let login = manager
        .start_google_login(LoginOptions::default())
        .await
        .unwrap();
    let location = authorize_location(login.url()).await;
    let finish = tokio::spawn(login.finish());
    let (status, _) = browse(location.clone()).await;
    assert_eq!(status, 200);
    finish.await.unwrap().expect("signed in");
    // A replay of the same callback finds nobody (or a "finished" page).
    let client = gd_http::http_client_builder().build().unwrap();
    if let Ok(response) = client
        .get(&location)
        .timeout(Duration::from_secs(2))
        .send()
        .await
    {
        assert_ne!(response.status().as_u16(), 200);
    }
    assert_eq!(world.oauth.token_requests("authorization_code"), 1);
}

#[tokio::test]
async fn pasted_redirect_address_or_code_completes_the_sign_in() {
    for paste_whole_url in [true, false] {
        let world = World::new(chat_scenario());
        let manager = world.manager(None);
        let login = manager
            .start_google_login(LoginOptions::default())
            .await
            .unwrap();
        let control = login.control();
        // The browser ran elsewhere: its address bar shows the callback URL.
        let location = authorize_location(login.url()).await;
        let finish = tokio::spawn(login.finish());
        assert!(
            control.submit_code("not a code").await.is_err(),
            "a typo is refused without ending the sign-in"
        );
        let pasted = if paste_whole_url {
            location.clone()
        } else {
            let url = oauth2_url(&location);
            url["code"].clone()
        };
        control.submit_code(&pasted).await.expect("code accepted");
        let outcome = finish.await.unwrap().expect("signed in");
        assert_eq!(outcome.code_assist.project, "fake-project");
        assert!(stored_tokens(&world).is_some());
    }
}

fn oauth2_url(url: &str) -> HashMap<String, String> {
    let query = url.split_once('?').unwrap().1;
    query
        .split('&')
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap();
            (k.to_owned(), v.replace("%2F", "/"))
        })
        .collect()
}

#[tokio::test]
async fn pasting_another_sign_ins_address_is_a_state_mismatch() {
    let world = World::new(chat_scenario());
    let manager = world.manager(None);
    let login = manager
        .start_google_login(LoginOptions::default())
        .await
        .unwrap();
    let control = login.control();
    let finish = tokio::spawn(login.finish());
    let err = control
        .submit_code("http://127.0.0.1:1/oauth2callback?state=old&code=4/x")
        .await
        .unwrap_err();
    assert_eq!(err, AuthError::StateMismatch);
    // The sign-in goes on: the right paste still completes it.
    assert!(!finish.is_finished());
    control.cancel();
    assert_eq!(finish.await.unwrap().unwrap_err(), AuthError::Cancelled);
}

#[tokio::test]
async fn onboarding_failure_keeps_the_sign_in_and_explains() {
    let world = World::new(json!({
        "code_assist": {"load": {"currentTier": {"id": "standard-tier"}}}
    }));
    let manager = world.manager(None);
    let login = manager
        .start_google_login(LoginOptions::default())
        .await
        .unwrap();
    let browser = tokio::spawn(browse(login.url().to_owned()));
    let err = login.finish().await.unwrap_err();
    browser.await.unwrap();
    assert!(matches!(err, AuthError::CodeAssist(_)), "{err:?}");
    assert!(err.to_string().contains("GOOGLE_CLOUD_PROJECT"), "{err}");
    let status = manager.status().await;
    assert!(status.google.signed_in, "the tokens are kept");
    assert_eq!(status.google.email.as_deref(), Some("dev@example.com"));
    assert!(!status.ready);
    assert!(
        status
            .last_error
            .as_ref()
            .unwrap()
            .message
            .contains("project"),
        "{status:?}"
    );
    assert!(status.actions.contains(&gd_auth::AuthAction::PickProject));

    // The user picks a project: onboarding is retried with the stored sign-in.
    let setup = manager
        .pick_project(Some("picked-project".into()))
        .await
        .unwrap();
    assert_eq!(setup.project, "picked-project");
    assert_eq!(setup.project_source, gd_auth::ProjectSource::Picked);
    let status = manager.status().await;
    assert!(status.ready, "{status:?}");
    assert_eq!(status.last_error, None);
    let resolved = manager.resolve_backend().unwrap();
    assert!(format!("{:?}", resolved.backend).contains("picked-project"));
}

#[tokio::test]
async fn projects_are_listed_for_the_picker() {
    let world = World::new(chat_scenario());
    let manager = world.manager(None);
    let login = manager
        .start_google_login(LoginOptions::default())
        .await
        .unwrap();
    tokio::spawn(browse(login.url().to_owned()));
    login.finish().await.unwrap();
    let projects = manager.list_projects().await.unwrap();
    let ids: Vec<_> = projects.iter().map(|p| p.project_id.as_str()).collect();
    assert_eq!(ids, ["fake-project", "other-project"]);
}

/// The project of a session over Code Assist, from the resolved backend.
fn session_project(manager: &gd_auth::AuthManager) -> Option<String> {
    match manager.resolve_backend().unwrap().backend {
        gd_gemini::Backend::CodeAssist { project, .. } => project,
        other => panic!("not Code Assist: {other:?}"),
    }
}

#[tokio::test]
async fn a_signed_in_user_changes_the_project_and_keeps_it_unless_the_environment_sets_one() {
    let world = World::new(chat_scenario());
    let manager = world.manager(None);
    common::sign_in(&manager).await;
    let status = manager.status().await;
    assert!(status.ready);
    assert_eq!(status.google.project.as_deref(), Some("fake-project"));
    assert_eq!(
        status.google.project_source,
        Some(gd_auth::ProjectSource::CodeAssist)
    );
    assert!(
        status.actions.contains(&gd_auth::AuthAction::PickProject),
        "a working sign-in can change its project: {:?}",
        status.actions
    );

    // "Change project": onboarding runs again with the picked project.
    let setup = manager
        .pick_project(Some(" other-project ".into()))
        .await
        .unwrap();
    assert_eq!(setup.project, "other-project");
    assert_eq!(setup.project_source, gd_auth::ProjectSource::Picked);
    let load = world
        .gemini
        .requests()
        .into_iter()
        .rfind(|r| r.api_method.as_deref() == Some("loadCodeAssist"))
        .unwrap();
    assert_eq!(
        load.body.unwrap()["cloudaicompanionProject"],
        "other-project"
    );
    assert_eq!(session_project(&manager).as_deref(), Some("other-project"));

    // Kept in auth.json: a new manager (a restart) uses it.
    let restarted = world.manager(None);
    let status = restarted.status().await;
    assert_eq!(status.google.project.as_deref(), Some("other-project"));
    assert_eq!(
        status.google.project_source,
        Some(gd_auth::ProjectSource::Picked)
    );
    assert_eq!(
        session_project(&restarted).as_deref(),
        Some("other-project")
    );
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(world.auth_dir().join("auth.json")).unwrap())
            .unwrap();
    assert_eq!(state["picked_project"], "other-project", "{state:#}");

    // GOOGLE_CLOUD_PROJECT wins over the picked project: the picker is not
    // offered, a note says where the project comes from, picking is refused.
    let fixed = world.manager(Some("env-project"));
    let status = fixed.status().await;
    assert_eq!(status.google.project.as_deref(), Some("env-project"));
    assert_eq!(
        status.google.project_source,
        Some(gd_auth::ProjectSource::EnvGoogleCloudProject)
    );
    assert!(
        !status.actions.contains(&gd_auth::AuthAction::PickProject),
        "{:?}",
        status.actions
    );
    assert!(
        status
            .notes
            .iter()
            .any(|n| n.contains("env-project") && n.contains("GOOGLE_CLOUD_PROJECT")),
        "{:?}",
        status.notes
    );
    assert_eq!(session_project(&fixed).as_deref(), Some("env-project"));
    let err = fixed
        .pick_project(Some("third-project".into()))
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::Input(_)), "{err:?}");
    assert!(
        err.to_string()
            .contains("GOOGLE_CLOUD_PROJECT environment variable"),
        "{err}"
    );
    assert_eq!(
        restarted.status().await.google.project.as_deref(),
        Some("other-project"),
        "the refused pick changed nothing"
    );
}

#[tokio::test]
async fn sign_out_revokes_and_deletes() {
    let world = World::new(chat_scenario());
    let manager = world.manager(None);
    let login = manager
        .start_google_login(LoginOptions::default())
        .await
        .unwrap();
    tokio::spawn(browse(login.url().to_owned()));
    login.finish().await.unwrap();
    let refresh = stored_tokens(&world).unwrap().refresh_token.unwrap();

    let report = manager.sign_out(None).await.unwrap();
    assert!(report.revoked, "{report:?}");
    assert_eq!(report.removed, vec![SecretKey::GoogleOauth]);
    assert_eq!(world.oauth.is_refresh_token_revoked(&refresh), Some(true));
    assert!(stored_tokens(&world).is_none());
    assert!(
        !world.auth_dir().join("secrets.json").exists(),
        "no empty secrets file is left"
    );
    let status = manager.status().await;
    assert_eq!(status.active, None);
    assert!(!status.google.signed_in);
    assert_eq!(status.google.email, None);
    assert!(manager.resolve_backend().unwrap_err().needs_sign_in());
}

#[tokio::test]
async fn a_configured_port_is_used_and_a_busy_one_explained() {
    let world = World::new(chat_scenario());
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let manager = world.manager(None);
    let err = manager
        .start_google_login(LoginOptions {
            port: Some(port),
            ..LoginOptions::default()
        })
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains(&format!("127.0.0.1:{port}")),
        "{err}"
    );
    drop(busy);
    let login = manager
        .start_google_login(LoginOptions {
            port: Some(port),
            ..LoginOptions::default()
        })
        .await
        .unwrap();
    assert_eq!(
        login.redirect_uri(),
        format!("http://127.0.0.1:{port}/oauth2callback")
    );
    login.control().cancel();
    assert_eq!(login.finish().await.unwrap_err(), AuthError::Cancelled);
}

/// The desktop shell spawns these on Tauri's (multi-threaded) runtime.
#[test]
fn the_shell_facing_futures_are_send() {
    fn send<T: Send>(_: T) {}
    let world = World::new(chat_scenario());
    let manager = world.manager(None);
    send(manager.status());
    send(manager.start_google_login(LoginOptions::default()));
    send(manager.set_api_key(gd_http::SecretString::new("k")));
    send(manager.validate_api_key(&gd_http::SecretString::new("k")));
    send(manager.set_vertex(gd_auth::VertexInput::default()));
    send(manager.sign_out(None));
    send(manager.pick_project(None));
    send(manager.list_projects());
    send(manager.setup_code_assist());
    send(manager.select_method(AuthMethod::GeminiApiKey));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let login = runtime
        .block_on(manager.start_google_login(LoginOptions::default()))
        .unwrap();
    let control = login.control();
    send(control.submit_code("x"));
    send(login.finish());
    fn sync<T: Send + Sync + Clone + 'static>(_: &T) {}
    sync(&manager);
    sync(&control);
}

#[tokio::test]
async fn the_status_serializes_for_the_webview() {
    let world = World::new(chat_scenario());
    let manager = world.manager(None);
    common::sign_in(&manager).await;
    let value = serde_json::to_value(manager.status().await).unwrap();
    assert_eq!(value["active"], "google-login");
    assert_eq!(value["chosen_by"], "app");
    assert_eq!(value["ready"], true);
    assert_eq!(value["store"]["kind"]["type"], "file");
    assert_eq!(value["google"]["email"], "dev@example.com");
    assert_eq!(value["google"]["project_source"], "code_assist");
    assert_eq!(value["google"]["client_source"], "environment");
    assert!(
        value["actions"]
            .as_array()
            .unwrap()
            .contains(&json!("sign_out"))
    );
    let stage = serde_json::to_value(LoginStage::FinishingSetup { detail: "x".into() }).unwrap();
    assert_eq!(stage, json!({"stage": "finishing_setup", "detail": "x"}));
    let report = serde_json::to_value(AuthError::StateMismatch.report()).unwrap();
    assert_eq!(report["kind"], "state_mismatch");
}
