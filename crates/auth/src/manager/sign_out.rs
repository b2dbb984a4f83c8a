//! Signing out: the Google refresh token is revoked at Google, then the
//! local secrets and state go.

use crate::error::AuthError;
use crate::oauth::StoredTokens;
use crate::secret_store::SecretKey;
use crate::state::{AuthMethod, AuthState};

use super::{AuthManager, SignOutReport};

impl AuthManager {
    /// Signs out of `method` (`None`: everything): revokes the Google
    /// refresh token at Google, then deletes the local secrets and state.
    pub async fn sign_out(&self, method: Option<AuthMethod>) -> Result<SignOutReport, AuthError> {
        let mut report = SignOutReport::default();
        let google = matches!(method, None | Some(AuthMethod::GoogleLogin));
        if google {
            let stored = self
                .blocking(|m| m.get_secret(SecretKey::GoogleOauth))
                .await??;
            if let Some(secret) = stored {
                match (StoredTokens::from_secret(&secret), self.oauth()) {
                    (Ok(tokens), Ok(oauth)) => match oauth.revoke(&tokens).await {
                        Ok(()) => report.revoked = true,
                        Err(e) => report.revoke_error = Some(e.to_string()),
                    },
                    (Err(e), _) | (_, Err(e)) => report.revoke_error = Some(e.to_string()),
                }
            }
        }
        let keys: Vec<SecretKey> = match method {
            None => SecretKey::ALL.to_vec(),
            Some(AuthMethod::GoogleLogin) => vec![SecretKey::GoogleOauth],
            Some(AuthMethod::GeminiApiKey) => vec![SecretKey::GeminiApiKey],
            Some(AuthMethod::VertexAi) => vec![SecretKey::VertexApiKey],
        };
        report.removed = self
            .blocking(move |m| -> Result<Vec<SecretKey>, AuthError> {
                let store = &m.store()?.store;
                let mut removed = Vec::new();
                for key in keys {
                    if store.get(key).ok().flatten().is_some() {
                        removed.push(key);
                    }
                    store.delete(key)?;
                }
                m.inner
                    .state
                    .update(|s| {
                        match method {
                            None => *s = AuthState::default(),
                            Some(AuthMethod::GoogleLogin) => s.google = None,
                            Some(AuthMethod::VertexAi) => s.vertex = None,
                            Some(AuthMethod::GeminiApiKey) => {}
                        }
                        if method.is_none() || s.method == method {
                            s.method = None;
                        }
                        s.last_error = None;
                    })
                    .map_err(|e| AuthError::Storage(e.to_string()))?;
                Ok(removed)
            })
            .await??;
        Ok(report)
    }
}
