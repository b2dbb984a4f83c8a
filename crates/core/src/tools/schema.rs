//! A small JSON-Schema validator for tool arguments.
//!
//! Models sometimes send arguments that do not match the declared schema.
//! The error must go back to the model as a readable `functionResponse`
//! error, so messages follow the familiar `params/<path> must ...` form.
//! Supported: `type` (one or a list), `required`, `properties`, `items`,
//! `enum`, `minimum`, `maximum`, `minLength`, `minItems`, `anyOf`.

use serde_json::Value;

/// The `wait_for_previous` flag Gemini CLI 0.61 declares on tools that may
/// run alongside others (`update_topic`, the background tools, MCP tools):
/// `true` makes the scheduler start the call only after the calls before it
/// in the same response finished.
pub fn wait_for_previous() -> Value {
    serde_json::json!({
        "type": "boolean",
        "description": gd_mcp::names::WAIT_FOR_PREVIOUS_DESCRIPTION
    })
}

/// Checks `value` against `schema`; the error names the first violation.
pub fn validate(value: &Value, schema: &Value) -> Result<(), String> {
    check(value, schema, "params")
}

fn check(value: &Value, schema: &Value, path: &str) -> Result<(), String> {
    let Some(schema) = schema.as_object() else {
        return Ok(());
    };
    if let Some(expected) = schema.get("type") {
        let types: Vec<&str> = match expected {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !types.is_empty() && !types.iter().any(|t| has_type(value, t)) {
            return Err(format!("{path} must be {}", types.join(",")));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        let allowed: Vec<String> = options.iter().map(Value::to_string).collect();
        return Err(format!(
            "{path} must be equal to one of the allowed values: {}",
            allowed.join(", ")
        ));
    }
    if let Some(any_of) = schema.get("anyOf").and_then(Value::as_array)
        && !any_of.iter().any(|s| check(value, s, path).is_ok())
    {
        return Err(format!("{path} must match a schema in anyOf"));
    }
    match value {
        Value::Number(n) => {
            let n = n.as_f64().unwrap_or(0.0);
            if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
                && n < min
            {
                return Err(format!("{path} must be >= {min}"));
            }
            if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
                && n > max
            {
                return Err(format!("{path} must be <= {max}"));
            }
        }
        Value::String(s) => {
            if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
                && (s.chars().count() as u64) < min
            {
                return Err(format!("{path} must NOT have fewer than {min} characters"));
            }
        }
        Value::Array(items) => {
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                && (items.len() as u64) < min
            {
                return Err(format!("{path} must NOT have fewer than {min} items"));
            }
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item, item_schema, &format!("{path}/{i}"))?;
                }
            }
        }
        Value::Object(map) => {
            if let Some(required) = schema.get("required").and_then(Value::as_array) {
                for key in required.iter().filter_map(Value::as_str) {
                    if !map.contains_key(key) {
                        return Err(format!("{path} must have required property '{key}'"));
                    }
                }
            }
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (key, sub_schema) in properties {
                    if let Some(sub_value) = map.get(key) {
                        check(sub_value, sub_schema, &format!("{path}/{key}"))?;
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn has_type(value: &Value, t: &str) -> bool {
    match t {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "dir_path": {"type": "string"},
            "start_line": {"type": "integer", "minimum": 1},
            "ignore": {"type": "array", "items": {"type": "string"}},
            "mode": {"type": "string", "enum": ["a", "b"]}
        }, "required": ["dir_path"]})
    }

    #[test]
    fn reports_the_first_violation_with_its_path() {
        assert!(validate(&json!({"dir_path": "/x", "start_line": 2}), &schema()).is_ok());
        assert_eq!(
            validate(&json!({}), &schema()).unwrap_err(),
            "params must have required property 'dir_path'"
        );
        assert_eq!(
            validate(&json!({"dir_path": 1}), &schema()).unwrap_err(),
            "params/dir_path must be string"
        );
        assert_eq!(
            validate(&json!({"dir_path": "x", "start_line": 0}), &schema()).unwrap_err(),
            "params/start_line must be >= 1"
        );
        assert_eq!(
            validate(&json!({"dir_path": "x", "start_line": 1.5}), &schema()).unwrap_err(),
            "params/start_line must be integer"
        );
        assert_eq!(
            validate(&json!({"dir_path": "x", "ignore": ["a", 2]}), &schema()).unwrap_err(),
            "params/ignore/1 must be string"
        );
        assert!(
            validate(&json!({"dir_path": "x", "mode": "c"}), &schema())
                .unwrap_err()
                .starts_with("params/mode must be equal to one of")
        );
        assert_eq!(
            validate(&json!("s"), &schema()).unwrap_err(),
            "params must be object"
        );
    }
}
