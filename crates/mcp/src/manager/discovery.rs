//! What a server offers, as the manager keeps it: listing again after a
//! `list_changed` notification, and turning the lists into the declared
//! tools (filtered by the entry, schemas checked, names made valid),
//! prompts and resources of the server's slot.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use gd_protocol::{McpPromptArgument, McpPromptInfo, McpToolInfo};
use serde_json::Value;
use tracing::warn;

use super::state::{Inner, Slot};
use super::{McpResource, McpTool};
use crate::client::{self, Connection, Discovered, Notice};
use crate::log::{LogTail, NOTE_PREFIX};
use crate::names::{declared_schema, declared_tool_name, has_valid_types};

impl Inner {
    /// Turns discovered lists into the slot's tools, prompts and resources.
    pub(super) fn apply_discovery(&self, slot: &mut Slot, found: &Discovered) {
        let config = slot.config.clone();
        let trust = config.as_ref().is_some_and(|c| c.trust);
        if let Some(tools) = &found.tools {
            let mut seen = HashSet::new();
            slot.tools = tools
                .iter()
                .filter(|tool| {
                    config
                        .as_ref()
                        .is_none_or(|c| c.tool_enabled(tool.name.as_ref()))
                })
                .filter(|tool| {
                    let schema = Value::Object((*tool.input_schema).clone());
                    if has_valid_types(&schema) {
                        return true;
                    }
                    let line = format!(
                        "{NOTE_PREFIX}skipping tool '{}': its input schema lacks type information",
                        tool.name
                    );
                    warn!(server = %slot.name, "{line}");
                    slot.log.push(&line);
                    false
                })
                .filter(|tool| seen.insert(tool.name.to_string()))
                .map(|tool| {
                    Arc::new(McpTool {
                        server: slot.name.clone(),
                        name: tool.name.to_string(),
                        declared_name: declared_tool_name(&slot.name, &tool.name),
                        title: tool.title.clone(),
                        description: tool.description.as_deref().unwrap_or("").to_owned(),
                        schema: declared_schema(&tool.input_schema),
                        read_only_hint: tool
                            .annotations
                            .as_ref()
                            .and_then(|a| a.read_only_hint)
                            .unwrap_or(false),
                        trust,
                    })
                })
                .collect();
        }
        if let Some(prompts) = &found.prompts {
            slot.prompts = prompts
                .iter()
                .map(|p| McpPromptInfo {
                    server: slot.name.clone(),
                    name: p.name.clone(),
                    description: p.description.clone(),
                    arguments: p
                        .arguments
                        .iter()
                        .flatten()
                        .map(|a| McpPromptArgument {
                            name: a.name.clone(),
                            description: a.description.clone(),
                            required: a.required.unwrap_or(false),
                        })
                        .collect(),
                })
                .collect();
        }
        if let Some(resources) = &found.resources {
            slot.resources = resources
                .iter()
                .map(|r| McpResource {
                    server: slot.name.clone(),
                    uri: r.uri.clone(),
                    name: r.name.clone(),
                    description: r.description.clone(),
                    mime_type: r.mime_type.clone(),
                })
                .collect();
        }
        slot.status.tools = slot.tools.len() as u32;
        slot.status.tool_list = slot
            .tools
            .iter()
            .map(|t| McpToolInfo {
                name: t.name.clone(),
                declared_name: t.declared_name.clone(),
                description: t.description.clone(),
            })
            .collect();
        slot.status.prompts = slot.prompts.len() as u32;
        slot.status.resources = slot.resources.len() as u32;
    }
}

/// Re-lists what the server said changed.
pub(super) async fn refresh(
    conn: &Connection,
    notices: &HashSet<Notice>,
    timeout: Duration,
    log: &LogTail,
) -> Discovered {
    let tools = async {
        if notices.contains(&Notice::Tools) {
            match client::list_tools(&conn.peer, timeout).await {
                Ok(t) => Some(t),
                Err(e) => {
                    log.push(&format!("{NOTE_PREFIX}{e}"));
                    None
                }
            }
        } else {
            None
        }
    };
    let prompts = async {
        if notices.contains(&Notice::Prompts) {
            client::list_prompts(&conn.peer, timeout).await.ok()
        } else {
            None
        }
    };
    let resources = async {
        if notices.contains(&Notice::Resources) {
            client::list_resources(&conn.peer, timeout).await.ok()
        } else {
            None
        }
    };
    let (tools, prompts, resources) = tokio::join!(tools, prompts, resources);
    Discovered {
        tools,
        prompts,
        resources,
    }
}
