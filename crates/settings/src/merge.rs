//! Merging settings layers.

use serde_json::Value;

/// Keys whose entries are merged by name only one level deep: a workspace
/// `mcpServers.foo` replaces the user's `mcpServers.foo` as a whole instead of
/// being mixed with it (Gemini CLI's rule).
const SHALLOW_KEYS: &[&str] = &["mcpServers"];

/// Array settings that accumulate across layers instead of being replaced
/// (0.61's `mergeStrategy: union`): a workspace cannot switch off what the
/// user excluded or disabled by listing other names.
const CONCAT_KEYS: &[&str] = &[
    "context.includeDirectories",
    "context.fileFiltering.customIgnoreFilePaths",
    "tools.exclude",
    "advanced.excludedEnvVars",
    "extensions.disabled",
    "skills.disabled",
    "hooksConfig.disabled",
];

/// Merges `overlay` into `base`: objects recursively, everything else replaced.
pub fn merge_into(base: &mut Value, overlay: &Value) {
    merge_at(base, overlay, "");
}

fn merge_at(base: &mut Value, overlay: &Value, path: &str) {
    match (base, overlay) {
        (Value::Object(base_map), Value::Object(overlay_map)) => {
            for (key, value) in overlay_map {
                let child_path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match base_map.get_mut(key) {
                    Some(existing) if SHALLOW_KEYS.contains(&child_path.as_str()) => {
                        if let (Value::Object(e), Value::Object(o)) = (existing, value) {
                            for (name, entry) in o {
                                e.insert(name.clone(), entry.clone());
                            }
                        } else {
                            base_map.insert(key.clone(), value.clone());
                        }
                    }
                    Some(Value::Array(existing)) if CONCAT_KEYS.contains(&child_path.as_str()) => {
                        if let Value::Array(more) = value {
                            for item in more {
                                if !existing.contains(item) {
                                    existing.push(item.clone());
                                }
                            }
                        }
                    }
                    Some(existing) => merge_at(existing, value, &child_path),
                    None => {
                        base_map.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (base, overlay) => *base = overlay.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deep_merge_with_shallow_mcp_servers_and_concat_dirs() {
        let mut base = json!({
            "model": {"name": "a", "maxSessionTurns": 5},
            "mcpServers": {"x": {"command": "x", "trust": true}, "y": {"command": "y"}},
            "context": {"includeDirectories": ["/a"]}
        });
        merge_into(
            &mut base,
            &json!({
                "model": {"name": "b"},
                "mcpServers": {"x": {"command": "x2"}},
                "context": {"includeDirectories": ["/b", "/a"]}
            }),
        );
        assert_eq!(
            base,
            json!({
                "model": {"name": "b", "maxSessionTurns": 5},
                "mcpServers": {"x": {"command": "x2"}, "y": {"command": "y"}},
                "context": {"includeDirectories": ["/a", "/b"]}
            })
        );
    }

    #[test]
    fn disabled_skills_and_excluded_tools_add_up_across_layers() {
        let mut base = json!({"skills": {"disabled": ["a"]}, "tools": {"exclude": ["shell"]}});
        merge_into(
            &mut base,
            &json!({"skills": {"disabled": ["b", "a"]}, "tools": {"exclude": ["web_fetch"]}}),
        );
        assert_eq!(base["skills"]["disabled"], json!(["a", "b"]));
        assert_eq!(base["tools"]["exclude"], json!(["shell", "web_fetch"]));
    }
}
