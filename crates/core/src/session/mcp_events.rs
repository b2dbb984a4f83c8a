//! The MCP servers' side of a session: their status changes become
//! session events, and a change of the declared tools is announced.

use std::sync::Arc;

use gd_mcp::{McpEvent, McpManager};
use gd_protocol::Event;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use tracing::warn;

use crate::events::WeakEventSink;
use crate::tools::LiveTools;

/// Every server's status, then the discovery state.
pub(super) fn emit_snapshot(mcp: &McpManager, emit: &dyn Fn(Event)) {
    for status in mcp.statuses() {
        emit(Event::McpServerStatus { status });
    }
    emit(Event::McpDiscovery {
        state: mcp.discovery_state(),
    });
}

/// Passes the MCP servers' status changes on as session events, and tells
/// the frontend when the declared tools changed.
pub(super) async fn forward_mcp_events(
    mut events: broadcast::Receiver<McpEvent>,
    tools: Arc<LiveTools>,
    sink: WeakEventSink,
    finished: CancellationToken,
) {
    let mut declared = tools.current().names();
    loop {
        let event = tokio::select! {
            _ = finished.cancelled() => return,
            event = events.recv() => event,
        };
        match event {
            Ok(McpEvent::Status(status)) => sink.emit(Event::McpServerStatus { status }),
            Ok(McpEvent::Discovery(state)) => sink.emit(Event::McpDiscovery { state }),
            Ok(McpEvent::LogChanged(name)) => sink.emit(Event::McpServerLogChanged { name }),
            Ok(McpEvent::ToolsChanged) => {
                let names = tools.current().names();
                if names != declared {
                    declared = names.clone();
                    sink.emit(Event::ToolsChanged { tools: names });
                }
            }
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                warn!(missed, "MCP events were dropped; sending a fresh snapshot");
                if let Some(mcp) = tools.mcp() {
                    emit_snapshot(&mcp.manager, &|e| sink.emit(e));
                }
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}
