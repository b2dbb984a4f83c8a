//! No token, code or client secret in the logs of a whole sign-in, refresh
//! and sign-out. A test binary of its own: tracing caches per-callsite
//! interest process-wide, so a thread-local subscriber only sees everything
//! when no other test thread logs at the same time.

use crate::common;

use common::{World, browse};
use gd_auth::LoginOptions;
use serde_json::json;

#[tokio::test]
async fn tokens_and_codes_never_reach_the_logs() {
    use std::sync::{Arc, Mutex};
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buffer = Buffer::default();
    let writer = buffer.clone();
    // The app's crates; the test's own browser (reqwest) logs the redirect
    // with the code, which is the browser's business, not ours.
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter("gd_auth=trace,gd_gemini=trace,oauth2=trace,hyper=trace")
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let world = World::new(json!({"steps": [{"text": "hi"}]}));
    world.oauth.set_access_token_ttl(10);
    let manager = world.manager(None);
    let login = manager
        .start_google_login(LoginOptions::default())
        .await
        .unwrap();
    tokio::spawn(browse(login.url().to_owned()));
    login.finish().await.unwrap();
    // A refresh (the token is inside the refresh margin) and a revoke.
    manager.google_credentials().unwrap().token().await.unwrap();
    manager.sign_out(None).await.unwrap();

    let logs = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("signed in with Google"),
        "logging works: {logs}"
    );
    for secret in ["ya29.", "1//fake", "4/fake", "fake-client-secret"] {
        assert!(
            !logs.contains(secret),
            "{secret} leaked into the logs:\n{logs}"
        );
    }
}
