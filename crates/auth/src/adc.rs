//! Application Default Credentials for Vertex AI: the file from
//! `GOOGLE_APPLICATION_CREDENTIALS` or gcloud's well-known location, of type
//! `authorized_user` (`gcloud auth application-default login`) or
//! `service_account` (a key file; the JWT is signed with ring's RSA).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chrono::Utc;
use futures::future::BoxFuture;
use gd_gemini::CredentialSource;
use gd_http::SecretString;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::Mutex;

use crate::config::{GOOGLE_TOKEN_URL, SCOPES};
use crate::error::AuthError;
use crate::redact::{error_chain, redact_with};

const ADC_FILE: &str = "application_default_credentials.json";

/// Where ADC would be read from, and whether the file exists.
pub fn adc_path(env: &dyn Fn(&str) -> Option<String>, home: Option<&Path>) -> Option<PathBuf> {
    let get = |n: &str| env(n).filter(|v| !v.trim().is_empty());
    if let Some(path) = get("GOOGLE_APPLICATION_CREDENTIALS") {
        return Some(PathBuf::from(path));
    }
    if let Some(dir) = get("CLOUDSDK_CONFIG") {
        return Some(PathBuf::from(dir).join(ADC_FILE));
    }
    if cfg!(windows) {
        return get("APPDATA").map(|d| PathBuf::from(d).join("gcloud").join(ADC_FILE));
    }
    home.map(|h| h.join(".config").join("gcloud").join(ADC_FILE))
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum AdcFile {
    AuthorizedUser {
        client_id: String,
        client_secret: String,
        refresh_token: String,
        #[serde(default)]
        token_uri: Option<String>,
    },
    ServiceAccount {
        client_email: String,
        private_key: String,
        #[serde(default)]
        token_uri: Option<String>,
    },
}

enum Grant {
    Refresh {
        client_id: String,
        client_secret: SecretString,
        refresh_token: SecretString,
    },
    Jwt {
        client_email: String,
        key: Arc<ring::signature::RsaKeyPair>,
    },
}

/// Bearer tokens from Application Default Credentials.
#[derive(Clone)]
pub struct AdcCredentials {
    inner: Arc<AdcInner>,
}

struct AdcInner {
    path: PathBuf,
    grant: Grant,
    token_url: String,
    http: reqwest::Client,
    cached: Mutex<Option<(SecretString, chrono::DateTime<Utc>)>>,
    invalidated: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for AdcCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdcCredentials")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl AdcCredentials {
    /// Reads the ADC file. `token_url` replaces Google's token endpoint for
    /// `authorized_user` files (tests); service accounts use their `token_uri`.
    pub fn load(
        path: &Path,
        token_url: Option<&str>,
        http: reqwest::Client,
    ) -> Result<Self, AuthError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            AuthError::Config(format!(
                "Cannot read Application Default Credentials at {}: {e}. Run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS to a key file.",
                path.display()
            ))
        })?;
        let file: AdcFile = serde_json::from_str(&text).map_err(|e| {
            AuthError::Config(format!(
                "{} is not an authorized_user or service_account credentials file ({})",
                path.display(),
                // serde's message names a position, not the content.
                e
            ))
        })?;
        let (grant, file_token_uri) = match file {
            AdcFile::AuthorizedUser {
                client_id,
                client_secret,
                refresh_token,
                token_uri,
            } => (
                Grant::Refresh {
                    client_id,
                    client_secret: SecretString::new(client_secret),
                    refresh_token: SecretString::new(refresh_token),
                },
                token_uri,
            ),
            AdcFile::ServiceAccount {
                client_email,
                private_key,
                token_uri,
            } => {
                let der = pem_to_der(&private_key).ok_or_else(|| {
                    AuthError::Config(format!("{}: private_key is not a PEM key", path.display()))
                })?;
                let key = ring::signature::RsaKeyPair::from_pkcs8(&der).map_err(|e| {
                    AuthError::Config(format!(
                        "{}: private_key is not a PKCS#8 RSA key ({e})",
                        path.display()
                    ))
                })?;
                (
                    Grant::Jwt {
                        client_email,
                        key: Arc::new(key),
                    },
                    token_uri,
                )
            }
        };
        let token_url = match (&grant, token_url) {
            (Grant::Refresh { .. }, Some(url)) => url.to_owned(),
            _ => file_token_uri.unwrap_or_else(|| GOOGLE_TOKEN_URL.into()),
        };
        Ok(Self {
            inner: Arc::new(AdcInner {
                path: path.to_owned(),
                grant,
                token_url,
                http,
                cached: Mutex::new(None),
                invalidated: Default::default(),
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    pub async fn token(&self) -> Result<SecretString, AuthError> {
        self.inner.token().await
    }
}

impl AdcInner {
    async fn token(&self) -> Result<SecretString, AuthError> {
        use std::sync::atomic::Ordering;
        let mut cached = self.cached.lock().await;
        let invalidated = self.invalidated.swap(false, Ordering::SeqCst);
        let now = Utc::now();
        if let Some((token, expires)) = cached.as_ref()
            && !invalidated
            && *expires - chrono::Duration::minutes(5) > now
        {
            return Ok(token.clone());
        }
        let form: Vec<(&str, String)> = match &self.grant {
            Grant::Refresh {
                client_id,
                client_secret,
                refresh_token,
            } => vec![
                ("grant_type", "refresh_token".into()),
                ("client_id", client_id.clone()),
                ("client_secret", client_secret.expose().into()),
                ("refresh_token", refresh_token.expose().into()),
            ],
            Grant::Jwt { client_email, key } => vec![
                (
                    "grant_type",
                    "urn:ietf:params:oauth:grant-type:jwt-bearer".into(),
                ),
                (
                    "assertion",
                    sign_jwt(key, client_email, &self.token_url, now.timestamp())?,
                ),
            ],
        };
        let secrets: Vec<String> = form.iter().map(|(_, v)| v.clone()).collect();
        let secret_refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
        let response = self
            .http
            .post(&self.token_url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_body(&form))
            .send()
            .await
            .map_err(|e| {
                AuthError::Network(format!(
                    "Cannot reach {}: {}",
                    self.token_url,
                    error_chain(&e)
                ))
            })?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|e| AuthError::Network(error_chain(&e)))?;
        #[derive(Deserialize)]
        struct TokenAnswer {
            access_token: Option<String>,
            expires_in: Option<u64>,
            error: Option<String>,
            error_description: Option<String>,
        }
        let answer: TokenAnswer = serde_json::from_str(&body).map_err(|_| {
            AuthError::Protocol(format!(
                "Unreadable answer from {} (HTTP {status})",
                self.token_url
            ))
        })?;
        match answer.access_token {
            Some(token) if status.is_success() => {
                let token = SecretString::new(token);
                let expires = token_expiry(now, answer.expires_in);
                *cached = Some((token.clone(), expires));
                Ok(token)
            }
            _ => {
                let reason = redact_with(
                    &format!(
                        "{}{}",
                        answer.error.unwrap_or_else(|| format!("HTTP {status}")),
                        answer
                            .error_description
                            .map(|d| format!(": {d}"))
                            .unwrap_or_default()
                    ),
                    &secret_refs,
                );
                Err(AuthError::SignInRequired(format!(
                    "Google refused the Application Default Credentials in {} ({reason}). Run `gcloud auth application-default login` again, or point GOOGLE_APPLICATION_CREDENTIALS at a valid key file.",
                    self.path.display()
                )))
            }
        }
    }
}

impl CredentialSource for AdcCredentials {
    fn access_token(&self) -> BoxFuture<'_, Result<SecretString, String>> {
        Box::pin(async move { self.inner.token().await.map_err(|e| e.to_string()) })
    }

    fn invalidate(&self) {
        self.inner
            .invalidated
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

fn form_body(fields: &[(&str, String)]) -> String {
    let mut body = oauth2::url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in fields {
        body.append_pair(name, value);
    }
    body.finish()
}

fn pem_to_der(pem: &str) -> Option<Vec<u8>> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("-----") && !l.is_empty())
        .collect();
    STANDARD.decode(body).ok()
}

fn sign_jwt(
    key: &ring::signature::RsaKeyPair,
    client_email: &str,
    audience: &str,
    now: i64,
) -> Result<String, AuthError> {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
    let claims = URL_SAFE_NO_PAD.encode(
        json!({
            "iss": client_email,
            "scope": SCOPES[0],
            "aud": audience,
            "iat": now,
            "exp": now + 3600,
        })
        .to_string(),
    );
    let message = format!("{header}.{claims}");
    let mut signature = vec![0u8; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        message.as_bytes(),
        &mut signature,
    )
    .map_err(|_| AuthError::Config("cannot sign the service-account token request".into()))?;
    Ok(format!("{message}.{}", URL_SAFE_NO_PAD.encode(signature)))
}

/// When a token the server says lasts `expires_in` seconds (an hour when
/// it does not say) expires. Any number may arrive: a lifetime beyond a
/// year is taken as a year, so the sum stays within the clock (a bigger one
/// overflowed `DateTime + TimeDelta`, a panic, or became zero, a token
/// expired on arrival). A token that dies sooner is replaced on its 401.
fn token_expiry(now: chrono::DateTime<Utc>, expires_in: Option<u64>) -> chrono::DateTime<Utc> {
    const MAX_LIFETIME_SECS: u64 = 365 * 24 * 60 * 60;
    let secs = expires_in.unwrap_or(3600).min(MAX_LIFETIME_SECS);
    now.checked_add_signed(chrono::Duration::seconds(secs as i64))
        .unwrap_or(chrono::DateTime::<Utc>::MAX_UTC)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The token endpoint's `expires_in` may be any number: it neither
    /// overflows the clock (a panic) nor makes a token already expired.
    #[test]
    fn any_token_lifetime_gives_a_usable_expiry() {
        let now = Utc::now();
        let hour = chrono::Duration::hours(1);
        assert_eq!(token_expiry(now, None), now + hour);
        assert_eq!(
            token_expiry(now, Some(3599)),
            now + hour - chrono::Duration::seconds(1)
        );
        for huge in [9_000_000_000_000_000, i64::MAX as u64, u64::MAX] {
            let expiry = token_expiry(now, Some(huge));
            assert!(
                expiry > now + chrono::Duration::days(300),
                "{huge}: {expiry}"
            );
        }
    }

    #[test]
    fn adc_path_precedence() {
        let env = |n: &str| match n {
            "CLOUDSDK_CONFIG" => Some("/cfg".to_string()),
            _ => None,
        };
        assert_eq!(
            adc_path(&env, Some(Path::new("/home/u"))),
            Some(PathBuf::from("/cfg").join(ADC_FILE))
        );
        let env2 = |n: &str| match n {
            "GOOGLE_APPLICATION_CREDENTIALS" => Some("/k.json".to_string()),
            _ => None,
        };
        assert_eq!(
            adc_path(&env2, Some(Path::new("/home/u"))),
            Some(PathBuf::from("/k.json"))
        );
        if !cfg!(windows) {
            assert_eq!(
                adc_path(&|_| None, Some(Path::new("/home/u"))),
                Some(PathBuf::from("/home/u/.config/gcloud").join(ADC_FILE))
            );
        }
    }

    #[test]
    fn unreadable_files_explain_themselves() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("adc.json");
        std::fs::write(&path, r#"{"type": "external_account"}"#).unwrap();
        let err = AdcCredentials::load(
            &path,
            None,
            crate::http::Http::new().unwrap().client().clone(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("authorized_user"), "{err}");
    }
}
