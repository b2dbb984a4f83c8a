//! The tools of a running session, which may change between model
//! requests: a fixed set (built-in and discovered tools) plus the tools of
//! MCP servers that connect, crash, come back or change their tool lists.
//!
//! The scheduler looks calls up in [`LiveTools::current`]; the agent reads
//! the declarations from it before every model request, so a change is in
//! effect from the next request on.

use std::sync::{Arc, Mutex};

use super::ToolRegistry;
use super::mcp::McpTools;

/// A session's tool set: fixed tools plus, optionally, MCP servers' tools.
#[derive(Debug)]
pub struct SessionTools {
    pub registry: ToolRegistry,
    pub mcp: Option<McpTools>,
}

impl From<ToolRegistry> for SessionTools {
    fn from(registry: ToolRegistry) -> Self {
        Self {
            registry,
            mcp: None,
        }
    }
}

impl std::ops::Deref for SessionTools {
    type Target = ToolRegistry;

    fn deref(&self) -> &ToolRegistry {
        &self.registry
    }
}

impl std::ops::DerefMut for SessionTools {
    fn deref_mut(&mut self) -> &mut ToolRegistry {
        &mut self.registry
    }
}

/// The session's current tools, rebuilt when the MCP servers' tools change.
#[derive(Debug)]
pub struct LiveTools {
    base: ToolRegistry,
    mcp: Option<McpTools>,
    /// The MCP manager's tool generation the snapshot was built from.
    current: Mutex<(u64, Arc<ToolRegistry>)>,
}

impl LiveTools {
    pub fn new(tools: SessionTools) -> Self {
        let generation = tools
            .mcp
            .as_ref()
            .map_or(0, |m| m.manager.tools_generation());
        let snapshot = match &tools.mcp {
            Some(mcp) => mcp.compose(&tools.registry),
            None => tools.registry.clone(),
        };
        Self {
            base: tools.registry,
            mcp: tools.mcp,
            current: Mutex::new((generation, Arc::new(snapshot))),
        }
    }

    /// A fixed set of tools.
    pub fn fixed(registry: ToolRegistry) -> Self {
        Self::new(registry.into())
    }

    /// The tools as of now.
    pub fn current(&self) -> Arc<ToolRegistry> {
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(mcp) = &self.mcp {
            let generation = mcp.manager.tools_generation();
            if generation != current.0 {
                *current = (generation, Arc::new(mcp.compose(&self.base)));
            }
        }
        current.1.clone()
    }

    /// A number that changes whenever [`LiveTools::current`] may have.
    pub fn generation(&self) -> u64 {
        self.mcp
            .as_ref()
            .map_or(0, |m| m.manager.tools_generation())
    }

    pub fn mcp(&self) -> Option<&McpTools> {
        self.mcp.as_ref()
    }

    /// Resolves when the MCP servers' first discovery is over (at once
    /// without MCP servers).
    pub async fn ready(&self) {
        if let Some(mcp) = &self.mcp {
            mcp.manager.wait_discovery().await;
        }
    }
}
