//! The models a user can pick: the API's own list where it has one (the
//! Gemini API), else the models known to work on every backend.

use tracing::warn;

use crate::{Backend, GeminiClient};

/// Models offered when the API cannot list them (Vertex AI, Code Assist).
pub const KNOWN_MODELS: &[(&str, &str)] = &[
    ("gemini-2.5-pro", "Gemini 2.5 Pro"),
    ("gemini-2.5-flash", "Gemini 2.5 Flash"),
    ("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite"),
    ("gemini-3-pro-preview", "Gemini 3 Pro (preview)"),
];

/// A model the user can pick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelOption {
    /// The id sent to the API, e.g. `gemini-2.5-pro`.
    pub name: String,
    pub display_name: String,
}

/// The models `client`'s credentials can use, sorted by id: the Gemini
/// API's Gemini models, or [`KNOWN_MODELS`] when the backend cannot list
/// them or listing fails (a picker with the known models beats none).
pub async fn available_models(client: &GeminiClient) -> Vec<ModelOption> {
    if matches!(client.backend(), Backend::GeminiApi { .. }) {
        match client.list_models().await {
            Ok(models) => {
                let mut options: Vec<ModelOption> = models
                    .into_iter()
                    .filter(|m| m.name.contains("gemini"))
                    .map(|m| {
                        let name = m.name.trim_start_matches("models/").to_owned();
                        ModelOption {
                            display_name: m.display_name.unwrap_or_else(|| name.clone()),
                            name,
                        }
                    })
                    .collect();
                options.sort_by(|a, b| a.name.cmp(&b.name));
                if !options.is_empty() {
                    return options;
                }
            }
            Err(error) => warn!(%error, "listing models failed; offering the known ones"),
        }
    }
    KNOWN_MODELS
        .iter()
        .map(|(name, display)| ModelOption {
            name: (*name).into(),
            display_name: (*display).into(),
        })
        .collect()
}
