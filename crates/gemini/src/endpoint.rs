//! Where requests go and how they are authenticated: the Gemini API (API
//! key), Vertex AI (API key "express mode" or project + location with a
//! bearer token) and Code Assist (Google sign-in, bearer token).

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::credentials::CredentialSource;
use crate::error::GeminiError;
use crate::types::{Content, GenerateContentRequest};
use gd_http::SecretString;

pub const DEFAULT_GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com";
pub const DEFAULT_GEMINI_API_VERSION: &str = "v1beta";
pub const DEFAULT_VERTEX_API_VERSION: &str = "v1beta1";
pub const DEFAULT_CODE_ASSIST_ENDPOINT: &str = "https://cloudcode-pa.googleapis.com";
pub const DEFAULT_CODE_ASSIST_API_VERSION: &str = "v1internal";

/// The three ways to reach a Gemini model.
#[derive(Clone)]
pub enum Backend {
    GeminiApi {
        base_url: String,
        api_version: String,
        api_key: SecretString,
    },
    VertexAi {
        base_url: String,
        api_version: String,
        target: VertexTarget,
        auth: Auth,
    },
    CodeAssist {
        endpoint: String,
        api_version: String,
        /// The Google Cloud project; `None` until onboarding assigns one.
        project: Option<String>,
        credentials: Arc<dyn CredentialSource>,
    },
}

/// Vertex AI addressing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VertexTarget {
    /// API key ("express mode"): no project in the path.
    Express,
    Project {
        project: String,
        location: String,
    },
}

/// How a request proves who sends it.
#[derive(Clone)]
pub enum Auth {
    ApiKey(SecretString),
    Bearer(Arc<dyn CredentialSource>),
}

impl fmt::Debug for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::GeminiApi {
                base_url,
                api_version,
                ..
            } => f
                .debug_struct("GeminiApi")
                .field("base_url", base_url)
                .field("api_version", api_version)
                .finish_non_exhaustive(),
            Self::VertexAi {
                base_url,
                api_version,
                target,
                ..
            } => f
                .debug_struct("VertexAi")
                .field("base_url", base_url)
                .field("api_version", api_version)
                .field("target", target)
                .finish_non_exhaustive(),
            Self::CodeAssist {
                endpoint,
                api_version,
                project,
                ..
            } => f
                .debug_struct("CodeAssist")
                .field("endpoint", endpoint)
                .field("api_version", api_version)
                .field("project", project)
                .finish_non_exhaustive(),
        }
    }
}

/// The model methods we call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Generate,
    Stream,
    CountTokens,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Self::Generate => "generateContent",
            Self::Stream => "streamGenerateContent",
            Self::CountTokens => "countTokens",
        }
    }
}

/// Identifiers Code Assist wants with every request.
#[derive(Debug, Clone, Default)]
pub struct RequestMeta {
    pub session_id: String,
    pub prompt_id: String,
}

impl Backend {
    /// Chooses the backend from the environment, the way Gemini CLI reads
    /// it: `GOOGLE_GENAI_USE_VERTEXAI=true` selects Vertex AI (`GOOGLE_API_KEY`
    /// for express mode, else `GOOGLE_CLOUD_PROJECT` + `GOOGLE_CLOUD_LOCATION`
    /// with `bearer`), otherwise `GEMINI_API_KEY` selects the Gemini API.
    /// `GOOGLE_GEMINI_BASE_URL`, `GOOGLE_VERTEX_BASE_URL` and
    /// `GOOGLE_GENAI_API_VERSION` override the defaults.
    pub fn from_env(
        get: impl Fn(&str) -> Option<String>,
        bearer: Option<Arc<dyn CredentialSource>>,
    ) -> Result<Backend, GeminiError> {
        let get = |name: &str| get(name).filter(|v| !v.trim().is_empty());
        let use_vertex = get("GOOGLE_GENAI_USE_VERTEXAI").is_some_and(|v| is_true(&v));
        let version_override = get("GOOGLE_GENAI_API_VERSION");
        if use_vertex {
            let project = get("GOOGLE_CLOUD_PROJECT");
            let location = get("GOOGLE_CLOUD_LOCATION");
            let (target, auth) = if let Some(key) = get("GOOGLE_API_KEY") {
                (VertexTarget::Express, Auth::ApiKey(SecretString::new(key)))
            } else {
                match (project, location, bearer) {
                    (Some(project), Some(location), Some(creds)) => (
                        VertexTarget::Project { project, location },
                        Auth::Bearer(creds),
                    ),
                    (Some(_), Some(_), None) => {
                        return Err(GeminiError::Credentials(
                            "Vertex AI with GOOGLE_CLOUD_PROJECT/GOOGLE_CLOUD_LOCATION needs Google credentials; sign in, or set GOOGLE_API_KEY for Vertex AI express mode".into(),
                        ));
                    }
                    _ => {
                        return Err(GeminiError::Config(
                            "Vertex AI needs GOOGLE_API_KEY (express mode) or both GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION".into(),
                        ));
                    }
                }
            };
            let base_url =
                get("GOOGLE_VERTEX_BASE_URL").unwrap_or_else(|| default_vertex_base(&target));
            return Ok(Backend::VertexAi {
                base_url: trim_base(base_url),
                api_version: version_override.unwrap_or_else(|| DEFAULT_VERTEX_API_VERSION.into()),
                target,
                auth,
            });
        }
        let Some(key) = get("GEMINI_API_KEY") else {
            return Err(GeminiError::Credentials(
                "no API key: set GEMINI_API_KEY (or GOOGLE_GENAI_USE_VERTEXAI=true with Vertex AI settings)".into(),
            ));
        };
        Ok(Backend::GeminiApi {
            base_url: trim_base(
                get("GOOGLE_GEMINI_BASE_URL").unwrap_or_else(|| DEFAULT_GEMINI_BASE_URL.into()),
            ),
            api_version: version_override.unwrap_or_else(|| DEFAULT_GEMINI_API_VERSION.into()),
            api_key: SecretString::new(key),
        })
    }

    /// Code Assist with the endpoint from `CODE_ASSIST_ENDPOINT` /
    /// `CODE_ASSIST_API_VERSION` (or the defaults).
    pub fn code_assist_from_env(
        get: impl Fn(&str) -> Option<String>,
        project: Option<String>,
        credentials: Arc<dyn CredentialSource>,
    ) -> Backend {
        let get = |name: &str| get(name).filter(|v| !v.trim().is_empty());
        Backend::CodeAssist {
            endpoint: trim_base(
                get("CODE_ASSIST_ENDPOINT").unwrap_or_else(|| DEFAULT_CODE_ASSIST_ENDPOINT.into()),
            ),
            api_version: get("CODE_ASSIST_API_VERSION")
                .unwrap_or_else(|| DEFAULT_CODE_ASSIST_API_VERSION.into()),
            project,
            credentials,
        }
    }

    /// A short name for logs and the UI.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::GeminiApi { .. } => "gemini-api-key",
            Self::VertexAi { .. } => "vertex-ai",
            Self::CodeAssist { .. } => "code-assist",
        }
    }

    pub fn url(&self, model: &str, method: Method) -> String {
        let model = model.strip_prefix("models/").unwrap_or(model);
        let mut url = match self {
            Self::GeminiApi {
                base_url,
                api_version,
                ..
            } => {
                format!("{base_url}/{api_version}/models/{model}:{}", method.name())
            }
            Self::VertexAi {
                base_url,
                api_version,
                target,
                ..
            } => match target {
                VertexTarget::Express => format!(
                    "{base_url}/{api_version}/publishers/google/models/{model}:{}",
                    method.name()
                ),
                VertexTarget::Project { project, location } => format!(
                    "{base_url}/{api_version}/projects/{project}/locations/{location}/publishers/google/models/{model}:{}",
                    method.name()
                ),
            },
            Self::CodeAssist {
                endpoint,
                api_version,
                ..
            } => {
                format!("{endpoint}/{api_version}:{}", method.name())
            }
        };
        if method == Method::Stream {
            url.push_str("?alt=sse");
        }
        url
    }

    pub fn auth(&self) -> Auth {
        match self {
            Self::GeminiApi { api_key, .. } => Auth::ApiKey(api_key.clone()),
            Self::VertexAi { auth, .. } => auth.clone(),
            Self::CodeAssist { credentials, .. } => Auth::Bearer(credentials.clone()),
        }
    }

    /// Code Assist wraps requests and responses in envelopes.
    pub fn wraps_payloads(&self) -> bool {
        matches!(self, Self::CodeAssist { .. })
    }

    /// The JSON body of a generate / stream request.
    pub fn generate_body(
        &self,
        model: &str,
        request: &GenerateContentRequest,
        meta: &RequestMeta,
    ) -> Result<Vec<u8>, GeminiError> {
        let encoded = match self {
            Self::CodeAssist { project, .. } => serde_json::to_vec(&CodeAssistRequest {
                model,
                project: project.as_deref(),
                user_prompt_id: &meta.prompt_id,
                request: CodeAssistInner {
                    request,
                    session_id: &meta.session_id,
                },
            }),
            _ => serde_json::to_vec(request),
        };
        encoded.map_err(|e| GeminiError::Config(format!("cannot encode request: {e}")))
    }

    /// The JSON body of a countTokens request.
    pub fn count_tokens_body(
        &self,
        model: &str,
        contents: &[Content],
    ) -> Result<Vec<u8>, GeminiError> {
        let value = match self {
            Self::CodeAssist { .. } => serde_json::json!({
                "request": {"model": format!("models/{}", model.strip_prefix("models/").unwrap_or(model)), "contents": contents}
            }),
            _ => serde_json::json!({ "contents": contents }),
        };
        serde_json::to_vec(&value)
            .map_err(|e| GeminiError::Config(format!("cannot encode request: {e}")))
    }

    /// Removes the Code Assist `{"response": ...}` envelope when present.
    pub fn unwrap_response(&self, mut value: Value) -> Value {
        if self.wraps_payloads()
            && let Some(inner) = value.get_mut("response")
        {
            return inner.take();
        }
        value
    }
}

#[derive(Serialize)]
struct CodeAssistRequest<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    project: Option<&'a str>,
    user_prompt_id: &'a str,
    request: CodeAssistInner<'a>,
}

#[derive(Serialize)]
struct CodeAssistInner<'a> {
    #[serde(flatten)]
    request: &'a GenerateContentRequest,
    session_id: &'a str,
}

fn default_vertex_base(target: &VertexTarget) -> String {
    match target {
        VertexTarget::Project { location, .. } if location != "global" => {
            format!("https://{location}-aiplatform.googleapis.com")
        }
        _ => "https://aiplatform.googleapis.com".into(),
    }
}

fn trim_base(url: String) -> String {
    url.trim().trim_end_matches('/').to_owned()
}

fn is_true(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "true" | "1" | "yes"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credentials::StaticToken;
    use crate::types::{Content, Part};
    use serde_json::json;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn gemini_api_from_env_with_overrides() {
        let b = Backend::from_env(
            env(&[
                ("GEMINI_API_KEY", "k"),
                ("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9/"),
                ("GOOGLE_GENAI_API_VERSION", "v1alpha"),
            ]),
            None,
        )
        .unwrap();
        assert_eq!(
            b.url("gemini-2.5-flash", Method::Stream),
            "http://127.0.0.1:9/v1alpha/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            Backend::from_env(env(&[("GEMINI_API_KEY", "k")]), None)
                .unwrap()
                .url("models/gemini-2.5-pro", Method::CountTokens),
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:countTokens"
        );
        assert!(format!("{b:?}").contains("GeminiApi") && !format!("{b:?}").contains("\"k\""));
    }

    #[test]
    fn vertex_express_and_project_modes() {
        let express = Backend::from_env(
            env(&[
                ("GOOGLE_GENAI_USE_VERTEXAI", "true"),
                ("GOOGLE_API_KEY", "k"),
            ]),
            None,
        )
        .unwrap();
        assert_eq!(
            express.url("gemini-2.5-pro", Method::Generate),
            "https://aiplatform.googleapis.com/v1beta1/publishers/google/models/gemini-2.5-pro:generateContent"
        );
        let creds: Arc<dyn CredentialSource> = Arc::new(StaticToken(SecretString::new("t")));
        let project = Backend::from_env(
            env(&[
                ("GOOGLE_GENAI_USE_VERTEXAI", "1"),
                ("GOOGLE_CLOUD_PROJECT", "p"),
                ("GOOGLE_CLOUD_LOCATION", "us-central1"),
            ]),
            Some(creds),
        )
        .unwrap();
        assert_eq!(
            project.url("m", Method::Stream),
            "https://us-central1-aiplatform.googleapis.com/v1beta1/projects/p/locations/us-central1/publishers/google/models/m:streamGenerateContent?alt=sse"
        );
        let missing = Backend::from_env(env(&[("GOOGLE_GENAI_USE_VERTEXAI", "true")]), None);
        assert!(matches!(missing, Err(GeminiError::Config(_))));
        let no_creds = Backend::from_env(
            env(&[
                ("GOOGLE_GENAI_USE_VERTEXAI", "true"),
                ("GOOGLE_CLOUD_PROJECT", "p"),
                ("GOOGLE_CLOUD_LOCATION", "global"),
            ]),
            None,
        );
        assert!(matches!(no_creds, Err(GeminiError::Credentials(_))));
    }

    #[test]
    fn missing_key_is_a_credentials_error() {
        assert!(matches!(
            Backend::from_env(env(&[]), None),
            Err(GeminiError::Credentials(_))
        ));
    }

    #[test]
    fn code_assist_wraps_body_and_unwraps_response() {
        let creds: Arc<dyn CredentialSource> = Arc::new(StaticToken(SecretString::new("t")));
        let b = Backend::code_assist_from_env(
            env(&[("CODE_ASSIST_ENDPOINT", "http://localhost:1")]),
            Some("proj".into()),
            creds,
        );
        assert_eq!(
            b.url("gemini-2.5-pro", Method::Stream),
            "http://localhost:1/v1internal:streamGenerateContent?alt=sse"
        );
        let request = GenerateContentRequest {
            contents: vec![Content::user(vec![Part::text("hi")])],
            system_instruction: Some(Content::user_text("sys")),
            ..Default::default()
        };
        let meta = RequestMeta {
            session_id: "s1".into(),
            prompt_id: "s1########0".into(),
        };
        let body: Value =
            serde_json::from_slice(&b.generate_body("gemini-2.5-pro", &request, &meta).unwrap())
                .unwrap();
        assert_eq!(
            body,
            json!({"model": "gemini-2.5-pro", "project": "proj", "user_prompt_id": "s1########0",
                   "request": {"contents": [{"parts": [{"text": "hi"}], "role": "user"}],
                               "systemInstruction": {"parts": [{"text": "sys"}], "role": "user"},
                               "session_id": "s1"}})
        );
        let count: Value =
            serde_json::from_slice(&b.count_tokens_body("m", &request.contents).unwrap()).unwrap();
        assert_eq!(count["request"]["model"], "models/m");
        assert_eq!(
            b.unwrap_response(json!({"response": {"a": 1}, "traceId": "x"})),
            json!({"a": 1})
        );
    }
}
