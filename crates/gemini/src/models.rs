//! The models a user can pick and how their names resolve: the ids and
//! aliases Gemini CLI 0.61 knows (`auto`, `pro`, `flash`, `flash-lite`,
//! `auto-gemini-3`, `auto-gemini-2.5`), resolved the way 0.61 resolves them
//! for a Gemini API key (Gemini 3.1 launched, the latest Flash and
//! Flash-Lite available): a user's settings.json then picks the same model
//! in both programs.

use tracing::warn;

use crate::{Backend, GeminiClient};

/// Routes each prompt to Pro or Flash (see the core's `routing` module).
pub const AUTO: &str = "auto";
/// `auto`, restricted to the Gemini 3 family (0.61's `auto-gemini-3`).
pub const AUTO_GEMINI_3: &str = "auto-gemini-3";
/// `auto`, restricted to the Gemini 2.5 family (0.61's `auto-gemini-2.5`).
pub const AUTO_GEMINI_2_5: &str = "auto-gemini-2.5";
pub const ALIAS_PRO: &str = "pro";
pub const ALIAS_FLASH: &str = "flash";
pub const ALIAS_FLASH_LITE: &str = "flash-lite";

pub const PREVIEW_PRO: &str = "gemini-3-pro-preview";
pub const PRO_3_1: &str = "gemini-3.1-pro-preview";
/// 0.61 sends the Pro model's "custom tools" variant for API-key users when
/// the classifier picks Pro.
pub const PRO_3_1_CUSTOM_TOOLS: &str = "gemini-3.1-pro-preview-customtools";
pub const PREVIEW_FLASH: &str = "gemini-3-flash-preview";
pub const PRO_2_5: &str = "gemini-2.5-pro";
pub const BASE_FLASH: &str = "gemini-3.5-flash";
pub const LATEST_FLASH: &str = "gemini-3.8-flash";
pub const LEGACY_FLASH: &str = "gemini-3-flash";
pub const BASE_FLASH_LITE: &str = "gemini-3.1-flash-lite";
pub const LATEST_FLASH_LITE: &str = "gemini-3.5-flash-lite";
pub const GEMMA_4_31B: &str = "gemma-4-31b-it";
pub const GEMMA_4_26B: &str = "gemma-4-26b-a4b-it";

/// The model used when nothing names one: `auto`, as in Gemini CLI 0.61.
pub const DEFAULT_MODEL: &str = AUTO;

/// The model the classifier runs on (0.61's `classifier` config: the
/// `flash-lite` alias).
pub const CLASSIFIER_MODEL: &str = LATEST_FLASH_LITE;

/// Shown for `auto` in the model picker.
pub const AUTO_DESCRIPTION: &str =
    "Let Gemini decide the best model for each prompt: gemini-3.1-pro-preview, gemini-3.8-flash";

/// Models offered when the API cannot list them (Vertex AI, Code Assist):
/// 0.61's visible model definitions, `auto` first.
pub const KNOWN_MODELS: &[(&str, &str)] = &[
    (AUTO, "Auto"),
    (PRO_3_1, "Gemini 3.1 Pro (preview)"),
    (PREVIEW_PRO, "Gemini 3 Pro (preview)"),
    (LATEST_FLASH, "Gemini 3.8 Flash"),
    (BASE_FLASH, "Gemini 3.5 Flash"),
    (PREVIEW_FLASH, "Gemini 3 Flash (preview)"),
    (LATEST_FLASH_LITE, "Gemini 3.5 Flash-Lite"),
    (BASE_FLASH_LITE, "Gemini 3.1 Flash-Lite"),
    (PRO_2_5, "Gemini 2.5 Pro"),
    ("gemini-2.5-flash", "Gemini 2.5 Flash"),
    ("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite"),
];

/// Whether `model` asks for per-prompt routing.
pub fn is_auto(model: &str) -> bool {
    matches!(model.trim(), AUTO | AUTO_GEMINI_3 | AUTO_GEMINI_2_5)
}

/// The concrete model id a configured name stands for when nothing routes
/// it (0.61's `resolveModel`): aliases and `auto*` map to a model, older
/// Flash ids are promoted to the latest Flash, anything else is sent as is.
pub fn resolve_model(name: &str) -> String {
    let name = name.trim();
    let name = name.strip_prefix("models/").unwrap_or(name);
    match name {
        AUTO | ALIAS_PRO | PREVIEW_PRO | AUTO_GEMINI_3 => PRO_3_1.into(),
        AUTO_GEMINI_2_5 => PRO_2_5.into(),
        ALIAS_FLASH | BASE_FLASH | LEGACY_FLASH => LATEST_FLASH.into(),
        ALIAS_FLASH_LITE | BASE_FLASH_LITE => LATEST_FLASH_LITE.into(),
        other => other.into(),
    }
}

/// The tier a routing decision picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    Pro,
    Flash,
}

/// The model a classifier's choice stands for, given the configured
/// (`auto*`) model (0.61's `resolveClassifierModel`). `custom_tools`: the
/// Gemini API backend, where 0.61 picks Pro's custom-tools variant.
pub fn routed_model(configured: &str, tier: Tier, custom_tools: bool) -> String {
    match tier {
        Tier::Flash => LATEST_FLASH.into(),
        Tier::Pro => match configured.trim() {
            AUTO_GEMINI_2_5 | PRO_2_5 => PRO_2_5.into(),
            _ if custom_tools => PRO_3_1_CUSTOM_TOOLS.into(),
            _ => PRO_3_1.into(),
        },
    }
}

/// Whether a model belongs to the Gemini 3 family (its generation config
/// takes a thinking level instead of a budget).
pub fn is_gemini_3(model: &str) -> bool {
    let resolved = resolve_model(model);
    resolved == "gemini-3" || resolved.starts_with("gemini-3.") || resolved.starts_with("gemini-3-")
}

/// The model 0.61 offers to switch to when `failed` runs out of quota, for
/// a session configured with `configured`; `None` when 0.61 has no other
/// model for it (a model the user pinned outside the Gemini 3 family).
///
/// 0.61's chain for `auto` and Gemini 3 models is Pro, then Preview Flash
/// (wrapping around): Pro falls back to Flash, anything else to Pro.
pub fn fallback_model(configured: &str, failed: &str) -> Option<String> {
    let configured = configured.trim();
    if !is_auto(configured) && !is_gemini_3(configured) {
        return None;
    }
    let (pro, flash) = if configured == AUTO_GEMINI_2_5 {
        (PRO_2_5, LATEST_FLASH)
    } else {
        (PRO_3_1, PREVIEW_FLASH)
    };
    let failed = resolve_model(failed);
    let next = if failed == pro || failed == PRO_3_1_CUSTOM_TOOLS {
        flash
    } else {
        pro
    };
    (next != failed).then(|| next.to_owned())
}

/// A model the user can pick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelOption {
    /// The id sent to the API, e.g. `gemini-2.5-pro`.
    pub name: String,
    pub display_name: String,
    /// A short explanation (for `auto`).
    pub description: Option<String>,
}

fn auto_option() -> ModelOption {
    ModelOption {
        name: AUTO.into(),
        display_name: "Auto".into(),
        description: Some(AUTO_DESCRIPTION.into()),
    }
}

/// The models `client`'s credentials can use, `auto` first: the Gemini
/// API's Gemini models sorted by id, or [`KNOWN_MODELS`] when the backend
/// cannot list them or listing fails (a picker with the known models beats
/// none).
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
                            description: None,
                        }
                    })
                    .collect();
                options.sort_by(|a, b| a.name.cmp(&b.name));
                if !options.is_empty() {
                    options.insert(0, auto_option());
                    return options;
                }
            }
            Err(error) => warn!(%error, "listing models failed; offering the known ones"),
        }
    }
    KNOWN_MODELS
        .iter()
        .map(|(name, display)| {
            if *name == AUTO {
                auto_option()
            } else {
                ModelOption {
                    name: (*name).into(),
                    display_name: (*display).into(),
                    description: None,
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_resolve_as_gemini_cli_does() {
        assert_eq!(resolve_model("auto"), PRO_3_1);
        assert_eq!(resolve_model("pro"), PRO_3_1);
        assert_eq!(resolve_model("gemini-3-pro-preview"), PRO_3_1);
        assert_eq!(resolve_model("auto-gemini-2.5"), PRO_2_5);
        assert_eq!(resolve_model("flash"), LATEST_FLASH);
        assert_eq!(resolve_model("gemini-3.5-flash"), LATEST_FLASH);
        assert_eq!(resolve_model("flash-lite"), LATEST_FLASH_LITE);
        assert_eq!(resolve_model("gemini-3-flash-preview"), PREVIEW_FLASH);
        assert_eq!(resolve_model("models/gemini-2.5-flash"), "gemini-2.5-flash");
        assert_eq!(resolve_model("my-tuned-model"), "my-tuned-model");
    }

    #[test]
    fn routing_tiers_map_to_models() {
        assert_eq!(routed_model("auto", Tier::Flash, true), LATEST_FLASH);
        assert_eq!(routed_model("auto", Tier::Pro, true), PRO_3_1_CUSTOM_TOOLS);
        assert_eq!(routed_model("auto", Tier::Pro, false), PRO_3_1);
        assert_eq!(routed_model("auto-gemini-2.5", Tier::Pro, true), PRO_2_5);
    }

    #[test]
    fn fallback_chain() {
        assert_eq!(
            fallback_model("auto", PRO_3_1).as_deref(),
            Some(PREVIEW_FLASH)
        );
        assert_eq!(
            fallback_model("auto", LATEST_FLASH).as_deref(),
            Some(PRO_3_1)
        );
        assert_eq!(
            fallback_model("gemini-3.1-pro-preview", PRO_3_1).as_deref(),
            Some(PREVIEW_FLASH)
        );
        assert_eq!(fallback_model("gemini-2.5-pro", PRO_2_5), None);
        assert_eq!(
            fallback_model("auto-gemini-2.5", PRO_2_5).as_deref(),
            Some(LATEST_FLASH)
        );
    }

    #[test]
    fn families() {
        assert!(is_gemini_3("auto"));
        assert!(is_gemini_3("gemini-3.8-flash"));
        assert!(!is_gemini_3("gemini-2.5-pro"));
        assert!(is_auto("auto-gemini-3") && !is_auto("pro"));
    }
}
