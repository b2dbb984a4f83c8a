//! `Content` and `Part`: the unit of conversation history.
//!
//! Every struct keeps unknown fields in an `extra` map so that whatever the
//! server sends (new part kinds, signatures, metadata) is echoed back exactly
//! as received when the history is replayed. This matters for
//! `thoughtSignature`, which the API requires verbatim on later turns.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who authored a [`Content`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Model,
    /// Any role this version does not know (e.g. `function` from old APIs).
    #[serde(other)]
    Other,
}

/// One message of the conversation: a role and its parts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Content {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
}

impl Content {
    pub fn user(parts: Vec<Part>) -> Self {
        Self {
            parts,
            role: Some(Role::User),
        }
    }

    pub fn model(parts: Vec<Part>) -> Self {
        Self {
            parts,
            role: Some(Role::Model),
        }
    }

    pub fn user_text(text: impl Into<String>) -> Self {
        Self::user(vec![Part::text(text)])
    }

    pub fn is_user(&self) -> bool {
        self.role == Some(Role::User)
    }

    pub fn is_model(&self) -> bool {
        self.role == Some(Role::Model)
    }

    /// Concatenated non-thought text of all parts.
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter(|p| !p.is_thought())
            .filter_map(|p| p.text.as_deref())
            .collect()
    }

    pub fn function_calls(&self) -> impl Iterator<Item = &FunctionCall> {
        self.parts.iter().filter_map(|p| p.function_call.as_ref())
    }

    pub fn has_function_response(&self) -> bool {
        self.parts.iter().any(|p| p.function_response.is_some())
    }
}

/// A single part. Exactly one of the payload fields is normally set; the
/// struct (rather than an enum) mirrors the API, where flags such as
/// `thought` and `thoughtSignature` ride alongside a payload.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Set on thought-summary parts; these are shown to the user but never
    /// recorded in history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought: Option<bool>,
    /// Opaque signature the API requires to be sent back unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_call: Option<FunctionCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_response: Option<FunctionResponse>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inline_data: Option<Blob>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_data: Option<FileData>,
    /// Code-execution parts are passed through untouched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executable_code: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_execution_result: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Part {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    pub fn function_call(call: FunctionCall) -> Self {
        Self {
            function_call: Some(call),
            ..Self::default()
        }
    }

    pub fn function_response(response: FunctionResponse) -> Self {
        Self {
            function_response: Some(response),
            ..Self::default()
        }
    }

    pub fn inline_data(mime_type: impl Into<String>, data_base64: impl Into<String>) -> Self {
        Self {
            inline_data: Some(Blob {
                mime_type: mime_type.into(),
                data: data_base64.into(),
            }),
            ..Self::default()
        }
    }

    pub fn is_thought(&self) -> bool {
        self.thought == Some(true)
    }

    /// True when the part carries nothing the API would accept as content:
    /// an empty text without any other payload or signature.
    pub fn is_empty(&self) -> bool {
        self.text.as_deref().is_none_or(str::is_empty)
            && self.thought_signature.is_none()
            && self.function_call.is_none()
            && self.function_response.is_none()
            && self.inline_data.is_none()
            && self.file_data.is_none()
            && self.executable_code.is_none()
            && self.code_execution_result.is_none()
            && self.extra.is_empty()
    }
}

/// A tool call requested by the model. `id` is optional on the wire: the
/// Gemini API usually omits it and the client must generate one.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FunctionCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    pub name: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The result of a tool call, sent back in a user message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FunctionResponse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    pub response: Value,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Base64-encoded bytes with their MIME type.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Blob {
    pub mime_type: String,
    pub data: String,
}

/// A reference to a file by URI (uploaded file or GCS object).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileData {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    pub file_uri: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_fields_and_signatures_round_trip_verbatim() {
        let wire = json!({
            "parts": [
                {"functionCall": {"name": "ls", "args": {"dir_path": "/x"}, "futureField": 1},
                 "thoughtSignature": "sig==", "videoMetadata": {"fps": 2}},
                {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
                {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}},
                {"fileData": {"mimeType": "image/png", "fileUri": "gs://b/o"}},
                {"text": "why", "thought": true}
            ],
            "role": "model"
        });
        let content: Content = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(content.parts[0].thought_signature.as_deref(), Some("sig=="));
        assert!(content.parts[4].is_thought());
        assert_eq!(content.text(), "");
        assert_eq!(serde_json::to_value(&content).unwrap(), wire);
    }

    #[test]
    fn function_call_without_id_stays_without_id() {
        let call: FunctionCall = serde_json::from_value(json!({"name": "ls", "args": {}})).unwrap();
        assert_eq!(call.id, None);
        assert_eq!(
            serde_json::to_value(&call).unwrap(),
            json!({"name": "ls", "args": {}})
        );
    }

    #[test]
    fn unknown_role_does_not_fail() {
        let c: Content = serde_json::from_value(json!({"role": "function", "parts": []})).unwrap();
        assert_eq!(c.role, Some(Role::Other));
    }
}
