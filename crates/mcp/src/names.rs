//! The names and schemas MCP tools are declared to the model with, exactly
//! as Gemini CLI 0.61 declares them.
//!
//! Names: `mcp_<server>_<tool>`, characters outside `[A-Za-z0-9_.:-]`
//! replaced by `_`, at most 63 characters (longer names keep their first and
//! last 30 characters around `...`). Schemas: the server's `inputSchema`
//! with `type`, `properties` and `required` first (the MCP TypeScript SDK's
//! parse puts them there), `type: [X, "null"]` turned into `type: X,
//! nullable: true`, and a `wait_for_previous` flag added to the properties.

use serde_json::{Map, Value, json};

/// Prefix of every MCP tool's declared name.
pub const MCP_TOOL_PREFIX: &str = "mcp_";
/// The Gemini API's limit is 64; Gemini CLI stays one below it.
pub const MAX_TOOL_NAME_LENGTH: usize = 63;
/// How many characters a shortened name keeps on each side of `...`.
const KEEP: usize = 30;

/// The description of the `wait_for_previous` flag added to MCP tools.
pub const WAIT_FOR_PREVIOUS_DESCRIPTION: &str = "Set to true when this call needs the results or side effects of the tool calls requested before it in this turn; it then starts only after they finished. Leave it unset to let the call run alongside them.";

/// Gemini CLI's `generateValidName`: prefixes `mcp_` (unless present),
/// replaces invalid characters and shortens long names in the middle.
pub fn generate_valid_name(name: &str) -> String {
    let prefixed = if name.starts_with(MCP_TOOL_PREFIX) {
        name.to_owned()
    } else {
        format!("{MCP_TOOL_PREFIX}{name}")
    };
    let mut valid = String::with_capacity(prefixed.len());
    for c in prefixed.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':') {
            valid.push(c);
        } else {
            // JavaScript replaces per UTF-16 unit: a character outside the
            // BMP becomes two underscores there.
            for _ in 0..c.len_utf16() {
                valid.push('_');
            }
        }
    }
    if !valid.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        valid.insert(0, '_');
    }
    if valid.len() > MAX_TOOL_NAME_LENGTH {
        // Only ASCII is left, so byte offsets are character offsets.
        valid = format!("{}...{}", &valid[..KEEP], &valid[valid.len() - KEEP..]);
    }
    valid
}

/// The name a server's tool is declared under: `mcp_<server>_<tool>`, made valid.
pub fn declared_tool_name(server: &str, tool: &str) -> String {
    generate_valid_name(&format!("{server}_{tool}"))
}

/// Whether a parameter schema carries type information everywhere Gemini
/// CLI's (pre-0.30) `hasValidTypes` looked: a schema without `type` must be
/// an `anyOf`/`allOf`/`oneOf` of valid schemas; objects check their
/// properties, arrays their items. A `$ref` counts as typed (its target is
/// checked where it is defined), so pydantic's nested models pass.
pub fn has_valid_types(schema: &Value) -> bool {
    let Some(object) = schema.as_object() else {
        return true;
    };
    let Some(kind) = object.get("type") else {
        if object.contains_key("$ref") {
            return true;
        }
        let subschemas: Vec<&Value> = ["anyOf", "allOf", "oneOf"]
            .iter()
            .filter_map(|k| object.get(*k))
            .flat_map(|v| match v {
                Value::Array(items) => items.iter().collect::<Vec<_>>(),
                other => vec![other],
            })
            .collect();
        return !subschemas.is_empty() && subschemas.into_iter().all(has_valid_types);
    };
    let is = |name: &str| match kind {
        Value::String(s) => s == name,
        Value::Array(kinds) => kinds.iter().any(|k| k == name),
        _ => false,
    };
    let mut valid = true;
    if is("object")
        && let Some(Value::Object(properties)) = object.get("properties")
    {
        valid &= properties.values().all(has_valid_types);
    }
    if is("array")
        && let Some(items) = object.get("items")
    {
        valid &= has_valid_types(items);
    }
    valid
}

/// The declared `parametersJsonSchema` of an MCP tool (see the module docs).
pub fn declared_schema(input_schema: &Map<String, Value>) -> Value {
    let mut schema = Map::new();
    schema.insert(
        "type".into(),
        input_schema
            .get("type")
            .cloned()
            .unwrap_or_else(|| json!("object")),
    );
    for key in ["properties", "required"] {
        if let Some(value) = input_schema.get(key) {
            schema.insert(key.into(), value.clone());
        }
    }
    for (key, value) in input_schema {
        if !schema.contains_key(key) {
            schema.insert(key.clone(), value.clone());
        }
    }
    let mut schema = Value::Object(schema);
    nullable_types(&mut schema);
    if let Value::Object(object) = &mut schema
        && object.get("type") == Some(&json!("object"))
    {
        let properties = object
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(properties) = properties {
            properties.insert(
                "wait_for_previous".into(),
                json!({"type": "boolean", "description": WAIT_FOR_PREVIOUS_DESCRIPTION}),
            );
        }
    }
    schema
}

/// `"type": ["string", "null"]` → `"type": "string", "nullable": true`,
/// everywhere in the schema (what Gemini CLI does before declaring).
fn nullable_types(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(nullable_types),
        Value::Object(object) => {
            let single = match object.get("type") {
                Some(Value::Array(kinds)) if kinds.len() == 2 => {
                    let null = kinds.iter().position(|k| k == "null");
                    null.and_then(|i| kinds[1 - i].as_str().map(str::to_owned))
                }
                _ => None,
            };
            if let Some(kind) = single {
                object.insert("type".into(), Value::String(kind));
                object.insert("nullable".into(), Value::Bool(true));
            }
            object.values_mut().for_each(nullable_types);
        }
        _ => {}
    }
}

/// Gemini CLI's server-id normalisation for settings lists and the
/// enablement file: trimmed and lower-cased.
pub fn normalize_server_id(name: &str) -> String {
    name.trim().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn names_follow_gemini_cli() {
        assert_eq!(declared_tool_name("tiny", "add"), "mcp_tiny_add");
        assert_eq!(
            declared_tool_name("everything", "get-annotated-message"),
            "mcp_everything_get-annotated-message"
        );
        assert_eq!(
            declared_tool_name("my server", "do it!"),
            "mcp_my_server_do_it_"
        );
        assert_eq!(declared_tool_name("a", "x:y.z"), "mcp_a_x:y.z");
        assert_eq!(generate_valid_name("mcp_already"), "mcp_already");
        assert_eq!(declared_tool_name("s", "é😀"), "mcp_s____");
        let long = declared_tool_name(
            "a-very-long-server-name",
            "and_an_even_longer_tool_name_that_goes_on_and_on",
        );
        assert_eq!(long.len(), 63);
        assert_eq!(
            long,
            "mcp_a-very-long-server-name_an..._tool_name_that_goes_on_and_on"
        );
        let exact = declared_tool_name("s", &"x".repeat(57));
        assert_eq!(exact.len(), 63);
        assert!(!exact.contains("..."));
        assert!(declared_tool_name("s", &"x".repeat(58)).contains("..."));
    }

    #[test]
    fn schema_gating() {
        assert!(has_valid_types(
            &json!({"type": "object", "properties": {"a": {"type": "string"}}})
        ));
        assert!(!has_valid_types(
            &json!({"type": "object", "properties": {"a": {"description": "no type"}}})
        ));
        assert!(has_valid_types(
            &json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
        ));
        assert!(!has_valid_types(
            &json!({"anyOf": [{"type": "string"}, {}]})
        ));
        assert!(!has_valid_types(&json!({})));
        assert!(!has_valid_types(
            &json!({"type": "array", "items": {"properties": {}}})
        ));
        assert!(has_valid_types(
            &json!({"type": "object", "properties": {"m": {"$ref": "#/$defs/M"}}})
        ));
        assert!(has_valid_types(
            &json!({"type": ["object", "null"], "properties": {"a": {"type": "integer"}}})
        ));
    }

    #[test]
    fn declared_schema_orders_keys_and_adds_wait_for_previous() {
        let raw = json!({
            "properties": {"a": {"title": "A", "type": "integer"}, "o": {"type": ["string", "null"]}},
            "required": ["a"], "type": "object", "title": "addArguments"
        });
        let declared = declared_schema(raw.as_object().unwrap());
        let text = serde_json::to_string(&declared).unwrap();
        assert_eq!(
            text,
            format!(
                r#"{{"type":"object","properties":{{"a":{{"title":"A","type":"integer"}},"o":{{"type":"string","nullable":true}},"wait_for_previous":{{"type":"boolean","description":"{WAIT_FOR_PREVIOUS_DESCRIPTION}"}}}},"required":["a"],"title":"addArguments"}}"#
            )
        );
        let everything = json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {}});
        let keys: Vec<String> = declared_schema(everything.as_object().unwrap())
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["type", "properties", "$schema"]);
    }
}
