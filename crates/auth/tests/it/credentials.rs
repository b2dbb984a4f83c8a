//! The stored Google sign-in as a token source: refresh ahead of expiry,
//! the old refresh token kept, a revoked one leading back to sign-in (once,
//! no loop), and a 401 from Code Assist answered with one refresh.

use crate::common;

use common::{World, sign_in};
use futures::StreamExt;
use gd_auth::oauth::StoredTokens;
use gd_auth::secret_store::{FileStore, SecretStore};
use gd_auth::{AuthError, SecretKey};
use gd_gemini::{
    ClientOptions, CredentialSource, GeminiClient, GeminiError, RequestMeta, RetryPolicy,
};
use serde_json::json;

fn stored(world: &World) -> Option<StoredTokens> {
    FileStore::new(world.auth_dir().join("secrets.json"))
        .get(SecretKey::GoogleOauth)
        .unwrap()
        .map(|s| StoredTokens::from_secret(&s).unwrap())
}

#[tokio::test]
async fn a_fresh_token_is_reused_and_an_expiring_one_refreshed_ahead() {
    let world = World::new(json!(null));
    let manager = world.manager(None);
    sign_in(&manager).await;
    let credentials = manager.google_credentials().unwrap();
    // One hour left: no refresh.
    assert_eq!(
        credentials.token().await.unwrap().expose(),
        "ya29.fake-access-2"
    );
    assert_eq!(world.oauth.token_requests("refresh_token"), 0);

    // Four minutes left (inside the 5-minute margin): refreshed before use.
    let mut tokens = stored(&world).unwrap();
    tokens.expires_at = Some(chrono::Utc::now().timestamp() + 240);
    FileStore::new(world.auth_dir().join("secrets.json"))
        .set(SecretKey::GoogleOauth, &tokens.to_secret())
        .unwrap();
    let credentials = manager.google_credentials().unwrap();
    assert_eq!(
        credentials.token().await.unwrap().expose(),
        "ya29.fake-access-4"
    );
    assert_eq!(world.oauth.token_requests("refresh_token"), 1);
    let after = stored(&world).unwrap();
    assert_eq!(after.access_token, "ya29.fake-access-4");
    assert_eq!(
        after.refresh_token.as_deref(),
        Some("1//fake-refresh-3"),
        "Google omitted the refresh token, so the old one is kept"
    );
    assert!(after.expires_at.unwrap() > chrono::Utc::now().timestamp() + 3000);
    // The new token is reused.
    credentials.token().await.unwrap();
    assert_eq!(world.oauth.token_requests("refresh_token"), 1);
    let status = manager.status().await;
    assert!(status.google.token_expires_in_secs.unwrap() > 3000);
}

#[tokio::test]
async fn a_rotated_refresh_token_replaces_the_old_one() {
    let world = World::new(json!(null));
    world.oauth.set_access_token_ttl(30);
    world.oauth.set_rotate_refresh_tokens(true);
    let manager = world.manager(None);
    sign_in(&manager).await;
    let credentials = manager.google_credentials().unwrap();
    credentials.token().await.unwrap();
    let after = stored(&world).unwrap();
    assert_eq!(after.refresh_token.as_deref(), Some("1//fake-refresh-5"));
}

#[tokio::test]
async fn a_revoked_refresh_token_sends_the_user_back_to_sign_in_once() {
    let world = World::new(json!(null));
    world.oauth.set_access_token_ttl(30);
    let manager = world.manager(None);
    sign_in(&manager).await;
    world.oauth.revoke_all();

    let credentials = manager.google_credentials().unwrap();
    let err = credentials.token().await.unwrap_err();
    assert!(matches!(err, AuthError::SignInRequired(_)), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("expired or was revoked"), "{text}");
    assert!(text.contains("auth login"), "{text}");
    assert_eq!(world.oauth.token_requests("refresh_token"), 1);

    // No loop: later calls fail at once without asking Google again.
    for _ in 0..3 {
        assert!(credentials.access_token().await.is_err());
    }
    assert_eq!(world.oauth.token_requests("refresh_token"), 1);

    // The dead sign-in is gone; the status explains it; a launch says "sign in".
    assert!(stored(&world).is_none());
    let status = manager.status().await;
    assert!(!status.google.signed_in);
    let last = status.last_error.unwrap();
    assert!(last.sign_in_required);
    assert!(last.message.contains("revoked"));
    assert!(
        status
            .actions
            .contains(&gd_auth::AuthAction::SignInWithGoogle)
    );
    let err = manager.resolve_backend().unwrap_err();
    assert!(err.needs_sign_in());
    assert!(err.to_string().contains("revoked"), "{err}");
    assert_eq!(world.oauth.token_requests("refresh_token"), 1);
}

#[tokio::test]
async fn a_rejected_token_is_refreshed_once_and_the_request_retried() {
    let world = World::new(json!({"steps": [{"text": "after refresh"}]}));
    let manager = world.manager(None);
    sign_in(&manager).await;
    // The server stops accepting the first token (e.g. revoked access
    // token); only the refreshed one works.
    world.gemini.reset(
        json!({"steps": [{"text": "after refresh"}], "code_assist": {"tokens": ["ya29.fake-access-4"]}}),
        &[],
    );
    let resolved = manager.resolve_backend().unwrap();
    let client = GeminiClient::new(
        resolved.backend,
        ClientOptions {
            retry: RetryPolicy {
                max_attempts: 3,
                ..RetryPolicy::default()
            },
            ..ClientOptions::default()
        },
    )
    .unwrap();
    let request = gd_gemini::GenerateContentRequest {
        contents: vec![gd_gemini::Content::user_text("hi")],
        ..Default::default()
    };
    let response = client
        .generate("gemini-2.5-pro", &request, &RequestMeta::default())
        .await
        .unwrap();
    assert_eq!(response.text(), "OK", "a utility answer");
    assert_eq!(world.oauth.token_requests("refresh_token"), 1);
    let faults: Vec<_> = world
        .gemini
        .requests()
        .into_iter()
        .map(|r| r.fault)
        .collect();
    assert_eq!(faults, vec![Some("unauthenticated".into()), None]);

    // When Google then revokes everything, the session ends with a clear
    // "sign in again" instead of retrying.
    world.oauth.revoke_all();
    world.gemini.reset(
        json!({"steps": [{"text": "x"}], "code_assist": {"tokens": ["nothing-valid"]}}),
        &[],
    );
    let mut stream = Box::pin(client.stream("gemini-2.5-pro", &request, &RequestMeta::default()));
    let mut last = None;
    while let Some(item) = stream.next().await {
        if let Err(e) = item {
            last = Some(e);
        }
    }
    let err = last.expect("the stream fails");
    assert!(err.is_auth(), "{err:?}");
    assert!(matches!(err.root(), GeminiError::Credentials(_)), "{err:?}");
    assert!(err.to_string().contains("Sign in again"), "{err}");
    assert_eq!(
        world.gemini.requests().len(),
        1,
        "one attempt, one refresh, no loop"
    );
}
