//! Context-window sizes and cheap token estimates.

use gd_gemini::Content;

/// Input token limit of a model, as Gemini CLI 0.61's `tokenLimit`: the
/// Gemma 4 models have 256,000 tokens, every Gemini model (aliases
/// included) 1,048,576; 1.5 Pro had 2M.
pub fn token_limit(model: &str) -> u64 {
    let model = gd_gemini::models::resolve_model(model);
    if model == gd_gemini::models::GEMMA_4_31B || model == gd_gemini::models::GEMMA_4_26B {
        256_000
    } else if model.starts_with("gemini-1.5-pro") {
        2_097_152
    } else {
        1_048_576
    }
}

/// A fast estimate (about four characters per token for text, a flat cost
/// for binary parts) used where an exact count would cost a request.
pub fn estimate_tokens(contents: &[Content]) -> u64 {
    let chars: usize = contents
        .iter()
        .flat_map(|c| &c.parts)
        .map(|part| match serde_json::to_string(part) {
            Ok(json) if part.inline_data.is_none() => json.len(),
            _ => 1_032, // ~258 tokens, the API's cost of an image
        })
        .sum();
    (chars as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_scale_with_text() {
        let small = estimate_tokens(&[Content::user_text("hi")]);
        let large = estimate_tokens(&[Content::user_text("x".repeat(4000))]);
        assert!(
            small < 10 && (1000..1100).contains(&large),
            "{small} {large}"
        );
        assert_eq!(token_limit("gemini-2.5-pro"), 1_048_576);
        assert_eq!(token_limit("auto"), 1_048_576);
        assert_eq!(token_limit("gemini-3.8-flash"), 1_048_576);
        assert_eq!(token_limit("gemma-4-31b-it"), 256_000);
    }
}
