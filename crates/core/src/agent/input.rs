//! What starts a turn, turned into the parts of the user's message: typed
//! text with `@` references, a custom command (`/name args`) or an MCP
//! prompt.

use std::collections::BTreeMap;

use gd_gemini::Part;
use gd_protocol::{Event, InputItem, McpPromptInfo, TurnStatus};
use tokio_util::sync::CancellationToken;

use super::{Agent, PROMPTS_WAIT, fail_turn, input_error};
use crate::commands::{Catalog, CustomCommand, Target};
use crate::events::EventSink;
use crate::tools::ToolContext;

/// What starts a turn.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnInput {
    /// What the user typed: a prompt with `@` references, or `/name args`
    /// of a custom command or an MCP prompt.
    Items(Vec<InputItem>),
    /// An MCP prompt with its arguments already known (`Op::McpRunPrompt`).
    McpPrompt {
        server: String,
        name: String,
        arguments: BTreeMap<String, String>,
    },
}

impl TurnInput {
    /// The input as the user would have typed it, for the history.
    pub(super) fn typed(&self) -> String {
        match self {
            TurnInput::Items(items) => items
                .iter()
                .map(|item| match item {
                    InputItem::Text { text } => text.as_str(),
                })
                .collect::<Vec<_>>()
                .join("\n"),
            TurnInput::McpPrompt {
                name, arguments, ..
            } => {
                let mut typed = format!("/{name}");
                for (key, value) in arguments {
                    typed.push_str(&format!(" --{key}=\"{}\"", value.replace('"', "\\\"")));
                }
                typed
            }
        }
    }
}

/// A command a typed `/name` runs in the core.
enum Command {
    Custom(CustomCommand),
    McpPrompt(McpPromptInfo),
}

impl Agent {
    /// The user's input as parts: a custom command (`/name args`) is
    /// expanded ([`crate::commands`]), an MCP prompt is fetched from its
    /// server, `@path` references are expanded ([`crate::at_refs`]) and the
    /// ones that cannot be used are reported as warnings. A command that
    /// cannot run ends the turn early. Anything else that starts with `/`
    /// (a built-in command, a path, an unknown name) is sent as it is, as
    /// Gemini CLI does.
    pub(super) async fn prompt_parts(
        &mut self,
        input: TurnInput,
        ctx: &ToolContext,
        sink: &EventSink,
    ) -> Result<Vec<Part>, TurnStatus> {
        let items = match input {
            TurnInput::Items(items) => items,
            TurnInput::McpPrompt {
                server,
                name,
                arguments,
            } => {
                let tools = self.scheduler.tools().clone();
                tokio::select! {
                    biased;
                    _ = ctx.cancel.cancelled() => return Err(TurnStatus::Cancelled),
                    _ = tools.ready() => {}
                }
                return self.mcp_prompt(&server, &name, &arguments, ctx, sink).await;
            }
        };
        let mut parts = Vec::new();
        for item in items {
            let InputItem::Text { text } = item;
            if let Some((name, args)) = crate::commands::parse_invocation(&text) {
                match self.find_command(name, &ctx.cancel).await {
                    Some(Command::Custom(command)) => {
                        parts.extend(self.custom_command(&command, name, args, ctx, sink).await?);
                        continue;
                    }
                    Some(Command::McpPrompt(prompt)) => {
                        let arguments =
                            crate::commands::mcp_args::parse_args(args, &prompt.arguments)
                                .map_err(|message| input_error(sink, message))?;
                        parts.extend(
                            self.mcp_prompt(&prompt.server, &prompt.name, &arguments, ctx, sink)
                                .await?,
                        );
                        continue;
                    }
                    None => {}
                }
            }
            let agents = crate::subagents::listing::mentioned_agents(&self.config.agents, &text);
            let mut prompt = match crate::at_refs::expand_prompt(&text, ctx, &agents).await {
                Some(expanded) => {
                    for message in expanded.problems {
                        sink.emit(Event::Warning { message });
                    }
                    expanded.parts
                }
                None => vec![Part::text(text)],
            };
            if !agents.is_empty() {
                // 0.61's order: the prompt, the nudge, then file contents.
                let nudge = crate::subagents::listing::mention_nudge(&agents);
                prompt.insert(1.min(prompt.len()), Part::text(nudge));
            }
            parts.extend(prompt);
        }
        Ok(parts)
    }

    /// The command `/name` runs in the core, if any (built-in commands are
    /// the frontends'). A name that is unknown while the MCP servers are
    /// still being discovered waits for the discovery, and then at most
    /// [`PROMPTS_WAIT`] for their prompt lists: it may be one of their
    /// prompts. (Gemini CLI refuses such a command until its servers are
    /// loaded.)
    async fn find_command(&self, name: &str, cancel: &CancellationToken) -> Option<Command> {
        let tools = self.scheduler.tools().clone();
        let mut waited = false;
        loop {
            let (custom, _) = crate::commands::load_commands(
                self.user_home().as_deref(),
                self.config
                    .workspace_trusted
                    .then(|| self.config.primary_workspace()),
            );
            let prompts = tools.mcp().map(|m| m.manager.prompts()).unwrap_or_default();
            let catalog = Catalog::new(&custom, &prompts, self.config.checkpointing.is_some());
            match catalog.find(name).map(|entry| &entry.target) {
                Some(Target::Custom(key)) => return custom.get(key).cloned().map(Command::Custom),
                Some(Target::McpPrompt(prompt)) => return Some(Command::McpPrompt(prompt.clone())),
                Some(Target::BuiltIn(_)) => return None,
                None if !waited && tools.mcp().is_some() => {
                    waited = true;
                    let mcp = tools.mcp()?;
                    // The first request waits for the discovery anyway; the
                    // prompt lists that follow it get a bounded wait.
                    tokio::select! {
                        biased;
                        _ = cancel.cancelled() => return None,
                        _ = async {
                            tools.ready().await;
                            let _ = tokio::time::timeout(PROMPTS_WAIT, mcp.manager.wait_prompts()).await;
                        } => {}
                    }
                }
                None => return None,
            }
        }
    }

    /// Fetches an MCP prompt; its text is the user's message.
    async fn mcp_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: &BTreeMap<String, String>,
        ctx: &ToolContext,
        sink: &EventSink,
    ) -> Result<Vec<Part>, TurnStatus> {
        let tools = self.scheduler.tools().clone();
        let Some(mcp) = tools.mcp() else {
            return Err(input_error(
                sink,
                format!("MCP server '{server}' is not configured."),
            ));
        };
        let fetched = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => return Err(TurnStatus::Cancelled),
            fetched = mcp.manager.get_prompt(server, name, arguments) => fetched,
        };
        match fetched {
            Ok(text) if !text.trim().is_empty() => Ok(vec![Part::text(text)]),
            Ok(_) => Err(fail_turn(
                sink,
                format!(
                    "MCP prompt '{name}' of server '{server}' returned no text: received an empty or invalid prompt response from the server."
                ),
            )),
            Err(error) => Err(fail_turn(
                sink,
                format!("Error invoking MCP prompt '{name}' of server '{server}': {error}"),
            )),
        }
    }

    /// The home directory commands and memory are read from.
    pub fn user_home(&self) -> Option<std::path::PathBuf> {
        self.config
            .memory
            .as_ref()
            .and_then(|m| m.home.clone())
            .or_else(crate::launch::home_dir)
    }

    /// Expands the custom command `command` invoked as `/name args`.
    /// `!{…}` pieces run as `run_shell_command` calls through the scheduler
    /// (policy, confirmation and events as for the model's calls).
    async fn custom_command(
        &mut self,
        command: &CustomCommand,
        name: &str,
        args: &str,
        ctx: &ToolContext,
        sink: &EventSink,
    ) -> Result<Vec<Part>, TurnStatus> {
        use crate::commands::template::{Piece, expand};
        let fail = |message: String| fail_turn(sink, message);
        let pieces = expand(&command.prompt, name, args).map_err(|e| {
            fail(format!(
                "Custom command /{name} ({}): {e}",
                command.path.display()
            ))
        })?;
        let mut text_out = String::new();
        let mut parts = Vec::new();
        for (index, piece) in pieces.into_iter().enumerate() {
            match piece {
                Piece::Text(t) => text_out.push_str(&t),
                Piece::Shell(command_line) => {
                    let call = crate::chat::ToolCallRequest {
                        call_id: format!("{name}-shell-{index}"),
                        // By name: the shell tool only exists on Unix; elsewhere
                        // the scheduler reports it as unknown.
                        name: "run_shell_command".to_owned(),
                        args: serde_json::json!({
                            "command": command_line,
                            "description": format!("Part of the custom command /{name}"),
                        }),
                    };
                    let batch = self.scheduler.run(&[call], ctx, sink).await;
                    if batch.declined {
                        sink.emit(Event::Warning {
                            message: format!(
                                "/{name} was not run: its shell command was not allowed."
                            ),
                        });
                        return Err(TurnStatus::Declined);
                    }
                    let Some(done) = batch.completed.into_iter().next() else {
                        return Err(fail(format!("/{name}: the shell command did not run.")));
                    };
                    match done.status {
                        gd_protocol::ToolCallStatus::Success => text_out
                            .push_str(done.display.as_deref().unwrap_or_default().trim_end()),
                        gd_protocol::ToolCallStatus::Cancelled => {
                            return Err(TurnStatus::Cancelled);
                        }
                        gd_protocol::ToolCallStatus::Error => {
                            return Err(fail(format!(
                                "/{name}: the shell command `{command_line}` failed: {}",
                                done.error.unwrap_or_default()
                            )));
                        }
                    }
                }
                Piece::File(path) => {
                    let content =
                        crate::at_refs::read_references(std::slice::from_ref(&path), ctx).await;
                    if !content.problems.is_empty() {
                        return Err(fail(format!(
                            "/{name}: @{{{path}}} cannot be used: {}",
                            content.problems.join(" ")
                        )));
                    }
                    if !text_out.is_empty() {
                        parts.push(Part::text(std::mem::take(&mut text_out)));
                    }
                    // Only the content itself, without the reference markers.
                    let inner = content.parts.len().saturating_sub(1);
                    parts.extend(content.parts.into_iter().take(inner).skip(1).filter(|p| {
                        !p.text
                            .as_deref()
                            .is_some_and(|t| t.starts_with("\nContent from @"))
                    }));
                }
            }
        }
        if !text_out.is_empty() {
            parts.push(Part::text(text_out));
        }
        Ok(parts)
    }
}
