//! Answers for "utility" requests (no function tools declared): gemini-cli's
//! next-speaker check, model router, loop detection, summaries...
//!
//! Order, as in the reference: scenario `utility` rules (substring match on
//! the request JSON), then a value filled in from `responseJsonSchema`, then
//! plain text.

use crate::pyjson::{dumps, truthy};
use crate::scenario::Scenario;
use serde_json::{Map, Value, json};

/// Reply parts and the record's `source` for a utility request.
pub fn respond(request: &Value, scenario: &Scenario) -> (Vec<Value>, String) {
    let haystack = dumps(request, false);
    for rule in &scenario.utility {
        if haystack.contains(&rule.pattern) {
            let text = match &rule.json {
                Some(v) => dumps(v, true),
                None => rule.text.clone().unwrap_or_else(|| "OK".into()),
            };
            return (
                vec![json!({"text": text})],
                format!("rule:{}", rule.pattern),
            );
        }
    }
    let config = request.get("generationConfig");
    let field = |name: &str| config.and_then(|c| c.get(name)).filter(|v| truthy(v));
    let schema = field("responseJsonSchema").or_else(|| field("responseSchema"));
    let wants_json = config
        .and_then(|c| c.get("responseMimeType"))
        .and_then(Value::as_str)
        == Some("application/json");
    if wants_json || schema.is_some() {
        let mut value = schema.map_or_else(|| json!({}), |s| fill_schema(s, 0));
        if let Value::Object(map) = &mut value {
            apply_helper_defaults(map, &scenario.utility_defaults);
        }
        return (
            vec![json!({"text": dumps(&value, true)})],
            "schema-fill".into(),
        );
    }
    (
        vec![json!({"text": scenario.utility_text})],
        "generic-text".into(),
    )
}

/// Extra candidate fields of the utility rule that answers `request`, if any.
pub fn candidate_extra(request: &Value, scenario: &Scenario) -> Option<Map<String, Value>> {
    let haystack = dumps(request, false);
    scenario
        .utility
        .iter()
        .find(|rule| haystack.contains(&rule.pattern))
        .and_then(|rule| rule.candidate.clone())
}

/// Sensible answers for the fields of gemini-cli's known helper calls.
fn apply_helper_defaults(map: &mut Map<String, Value>, defaults: &Map<String, Value>) {
    let default = |name: &str, fallback: Value| defaults.get(name).cloned().unwrap_or(fallback);
    if map.contains_key("next_speaker") {
        map.insert(
            "next_speaker".into(),
            default("next_speaker", json!("user")),
        );
    }
    if map.contains_key("model_choice") {
        map.insert(
            "model_choice".into(),
            default("model_choice", json!("flash")),
        );
    }
    if map.contains_key("complexity_score") {
        map.insert(
            "complexity_score".into(),
            default("complexity_score", json!(10)),
        );
    }
    if map.contains_key("unproductive_state_confidence") {
        map.insert("unproductive_state_confidence".into(), json!(0.0));
    }
    for (key, value) in map.iter_mut() {
        if value == "fake" && (key.contains("reason") || key.contains("analysis")) {
            *value = json!("fake utility answer");
        }
    }
}

/// A minimal value satisfying (a subset of) a JSON schema / Gemini `Schema`.
pub fn fill_schema(schema: &Value, depth: usize) -> Value {
    let Some(s) = schema.as_object().filter(|_| depth <= 8) else {
        return Value::Null;
    };
    if let Some(first) = s
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(first) = s
        .get("anyOf")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
    {
        return fill_schema(first, depth + 1);
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.to_lowercase(),
        Some(Value::Array(ts)) => ts
            .iter()
            .find(|t| t.as_str() != Some("null"))
            .or(ts.first())
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_lowercase(),
        _ => String::new(),
    };
    if ty == "object" || s.contains_key("properties") {
        let props = s.get("properties").and_then(Value::as_object);
        return Value::Object(
            props
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), fill_schema(v, depth + 1)))
                .collect(),
        );
    }
    match ty.as_str() {
        "array" => json!([]),
        "integer" | "number" => match s.get("minimum").filter(|m| !m.is_null()) {
            Some(min) => min.clone(),
            None if ty == "integer" => json!(1),
            None => json!(0),
        },
        "boolean" => json!(false),
        _ => json!("fake"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(v: Value) -> Scenario {
        Scenario::from_value(v).unwrap()
    }

    #[test]
    fn next_speaker_check_gets_user() {
        let req = json!({"generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": {
            "type": "object",
            "properties": {"reasoning": {"type": "string"}, "next_speaker": {"type": "string", "enum": ["user", "model"]}}
        }}});
        let (parts, source) = respond(&req, &scenario(json!({})));
        assert_eq!(source, "schema-fill");
        assert_eq!(
            parts,
            vec![
                json!({"text": r#"{"reasoning": "fake utility answer", "next_speaker": "user"}"#})
            ]
        );
    }

    #[test]
    fn rules_match_python_formatted_request_text() {
        let s = scenario(json!({"utility": [{"match": "\"role\": \"user\"", "json": {"a": 1}}]}));
        let (parts, source) = respond(&json!({"contents": [{"role": "user"}]}), &s);
        assert_eq!(source, "rule:\"role\": \"user\"");
        assert_eq!(parts, vec![json!({"text": "{\"a\": 1}"})]);
    }

    #[test]
    fn router_uses_defaults_and_minimum() {
        let schema = json!({"type": "object", "properties": {
            "complexity_score": {"type": "integer", "minimum": 1},
            "n": {"type": ["null", "number"], "minimum": 3},
            "xs": {"type": "array"}
        }});
        let s = scenario(json!({"utility_defaults": {"complexity_score": 90}}));
        let (parts, _) = respond(
            &json!({"generationConfig": {"responseJsonSchema": schema}}),
            &s,
        );
        assert_eq!(
            parts[0]["text"],
            r#"{"complexity_score": 90, "n": 3, "xs": []}"#
        );
    }

    #[test]
    fn plain_text_otherwise() {
        let (parts, source) = respond(
            &json!({"contents": []}),
            &scenario(json!({"utility_text": "hey"})),
        );
        assert_eq!(
            (parts, source.as_str()),
            (vec![json!({"text": "hey"})], "generic-text")
        );
    }
}
