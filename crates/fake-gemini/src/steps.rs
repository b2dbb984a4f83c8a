//! Main-turn scripting: which step answers a request, and the parts it sends.
//!
//! Stateless like the reference fake: the step index is the number of tool
//! round-trips since the latest plain user prompt, read from the request's
//! own history, so one scenario can be replayed without resets.

use crate::scenario::{Scenario, Step};
use serde_json::{Value, json};

/// The chosen step for a main request.
pub struct ChosenStep<'a> {
    pub index: usize,
    pub step: &'a Step,
    /// `step[k]` or `after_steps` (the record's `source`).
    pub source: String,
    pub parts: Vec<Value>,
    /// `match_tool` mismatches and unresolved `@mcp:` names.
    pub warnings: Vec<String>,
}

/// True when the request declares function tools: the agent's chat turn.
/// Everything else (next-speaker check, routing, summaries) is "utility".
pub fn is_main(request: &Value) -> bool {
    tools(request).any(|t| {
        t.get("functionDeclarations")
            .is_some_and(crate::pyjson::truthy)
    })
}

fn tools(request: &Value) -> impl Iterator<Item = &Value> {
    request
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn parts_of(content: &Value) -> impl Iterator<Item = &Value> {
    content
        .get("parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn has_fn_response(content: &Value) -> bool {
    parts_of(content).any(|p| p.get("functionResponse").is_some())
}

/// Number of consecutive trailing user contents that carry `functionResponse`
/// parts (model contents in between are skipped, as in the reference).
pub fn step_index(request: &Value) -> usize {
    let contents = request.get("contents").and_then(Value::as_array);
    let mut k = 0;
    for c in contents.into_iter().flatten().rev() {
        let role = c.get("role").and_then(Value::as_str).unwrap_or("user");
        if role != "user" {
            continue;
        }
        if has_fn_response(c) {
            k += 1;
        } else {
            break;
        }
    }
    k
}

/// Names in the last content's `functionResponse` parts.
fn last_fn_response_names(request: &Value) -> Vec<String> {
    let last = request
        .get("contents")
        .and_then(Value::as_array)
        .and_then(|c| c.last());
    last.into_iter()
        .flat_map(parts_of)
        .filter_map(|p| p.get("functionResponse"))
        .map(|fr| {
            fr.get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

/// Names of all function declarations in the request.
pub fn declared_names(request: &Value) -> Vec<String> {
    tools(request)
        .filter_map(|t| t.get("functionDeclarations").and_then(Value::as_array))
        .flatten()
        .filter_map(|fd| fd.get("name").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// Resolves `@mcp:SERVER:TOOL` against the declared tool names: the first of
/// `mcp_SERVER_TOOL`, `SERVER__TOOL`, `TOOL` that is declared (else the first).
fn resolve_name(name: &str, declared: &[String], warnings: &mut Vec<String>) -> String {
    let Some(rest) = name.strip_prefix("@mcp:") else {
        return name.to_string();
    };
    let Some((server, tool)) = rest.split_once(':') else {
        warnings.push(format!("malformed MCP tool reference {name}"));
        return name.to_string();
    };
    let candidates = [
        format!("mcp_{server}_{tool}"),
        format!("{server}__{tool}"),
        tool.to_string(),
    ];
    if let Some(found) = candidates.iter().find(|c| declared.contains(c)) {
        return found.clone();
    }
    warnings.push(format!(
        "no declared tool for {name} (declared: {declared:?})"
    ));
    candidates[0].clone()
}

/// The reply parts of a step, in the reference order: thought, text, calls.
pub fn step_to_parts(step: &Step, declared: &[String], warnings: &mut Vec<String>) -> Vec<Value> {
    if let Some(parts) = &step.parts {
        return parts.clone();
    }
    let mut parts = Vec::new();
    if let Some(thought) = step.thought.as_deref().filter(|t| !t.is_empty()) {
        parts.push(json!({"text": thought, "thought": true}));
    }
    if let Some(text) = &step.text {
        parts.push(json!({"text": text}));
    }
    for fc in &step.function_calls {
        let mut call = json!({"name": resolve_name(&fc.name, declared, warnings), "args": fc.args});
        if let Some(id) = fc.id.as_deref().filter(|s| !s.is_empty()) {
            call["id"] = json!(id);
        }
        let mut part = json!({"functionCall": call});
        if let Some(sig) = fc.thought_signature.as_deref().filter(|s| !s.is_empty()) {
            part["thoughtSignature"] = json!(sig);
        }
        parts.push(part);
    }
    if parts.is_empty() {
        parts.push(json!({"text": ""}));
    }
    parts
}

/// Chooses the step for a main request and builds its parts.
pub fn choose<'a>(scenario: &'a Scenario, request: &Value) -> ChosenStep<'a> {
    let index = step_index(request);
    let system = request
        .get("systemInstruction")
        .map(Value::to_string)
        .unwrap_or_default();
    let branch = scenario
        .branches
        .iter()
        .position(|b| system.contains(&b.system_contains));
    let steps = branch.map_or(&scenario.steps, |b| &scenario.branches[b].steps);
    let (step, source) = match steps.get(index) {
        Some(step) if branch.is_some() => (
            step,
            format!("branches[{}].step[{index}]", branch.unwrap_or(0)),
        ),
        Some(step) => (step, format!("step[{index}]")),
        None => (&scenario.after_steps, "after_steps".to_string()),
    };
    let mut warnings = Vec::new();
    if let Some(expected) = step.match_tool.as_deref().filter(|s| !s.is_empty()) {
        let got = last_fn_response_names(request);
        if !got.iter().any(|g| g == expected) {
            warnings.push(format!(
                "expected functionResponse for {expected}, got {got:?}"
            ));
        }
    }
    let parts = step_to_parts(step, &declared_names(request), &mut warnings);
    ChosenStep {
        index,
        step,
        source,
        parts,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fr(name: &str) -> Value {
        json!({"role": "user", "parts": [{"functionResponse": {"name": name, "response": {}}}]})
    }

    #[test]
    fn step_index_counts_trailing_tool_round_trips() {
        let prompt = json!({"role": "user", "parts": [{"text": "hi"}]});
        let model = json!({"role": "model", "parts": [{"functionCall": {"name": "a"}}]});
        assert_eq!(step_index(&json!({"contents": [prompt]})), 0);
        assert_eq!(
            step_index(&json!({"contents": [prompt, model, fr("a")]})),
            1
        );
        assert_eq!(
            step_index(&json!({"contents": [prompt, model, fr("a"), model, fr("b")]})),
            2
        );
        // A new plain prompt restarts the script.
        assert_eq!(
            step_index(&json!({"contents": [prompt, model, fr("a"), prompt]})),
            0
        );
        assert_eq!(step_index(&json!({})), 0);
    }

    #[test]
    fn mcp_names_resolve_against_declarations() {
        let mut w = Vec::new();
        let declared = vec!["tiny__add".to_string(), "mcp_other_x".to_string()];
        assert_eq!(
            resolve_name("@mcp:tiny:add", &declared, &mut w),
            "tiny__add"
        );
        assert!(w.is_empty());
        assert_eq!(
            resolve_name("@mcp:tiny:sub", &declared, &mut w),
            "mcp_tiny_sub"
        );
        assert_eq!(w.len(), 1);
        assert_eq!(resolve_name("plain", &declared, &mut w), "plain");
    }

    #[test]
    fn parts_follow_reference_order() {
        let step: Step = serde_json::from_value(json!({
            "text": "t", "thought": "th",
            "functionCalls": [{"name": "f", "id": "i1", "thoughtSignature": "sig"}]
        }))
        .unwrap();
        let parts = step_to_parts(&step, &[], &mut Vec::new());
        assert_eq!(
            parts,
            vec![
                json!({"text": "th", "thought": true}),
                json!({"text": "t"}),
                json!({"functionCall": {"name": "f", "args": {}, "id": "i1"}, "thoughtSignature": "sig"}),
            ]
        );
        let empty = step_to_parts(&Step::default(), &[], &mut Vec::new());
        assert_eq!(empty, vec![json!({"text": ""})]);
    }
}
