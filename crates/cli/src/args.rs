//! Command-line arguments, named as in Gemini CLI's headless mode.

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The answer as plain text, streamed.
    Text,
    /// One JSON object at the end: `{session_id, response, stats}`.
    Json,
    /// One JSON event per line as things happen.
    #[value(name = "stream-json")]
    StreamJson,
}

/// What `--restore-checkpoint` puts back (Gemini CLI's `/rewind` choices).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RestoreMode {
    /// The files only.
    Code,
    /// The conversation only.
    Conversation,
    /// The files, then the conversation.
    Both,
}

impl Args {
    /// The output format: `-o`, else settings `output.format` (filled in
    /// by [`crate::setup::output_format_from_settings`]), else text.
    pub fn format(&self) -> OutputFormat {
        self.output_format.unwrap_or(OutputFormat::Text)
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "gemini-desktop-cli",
    version,
    about = "Gemini Desktop's agent, headless: answers one prompt and exits.",
    long_about = "Gemini Desktop's agent, headless. Reads the prompt from -p/--prompt, the positional argument and/or standard input, runs the agent in the current directory and exits. Settings come from ~/.gemini/settings.json and .gemini/settings.json; credentials from GEMINI_API_KEY (or Vertex AI variables), else from what `gemini-desktop-cli auth` or Gemini Desktop's Sign in stored."
)]
pub struct Args {
    /// `auth ...`; without a subcommand the prompt is run.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The prompt. Appended to standard input when both are given.
    #[arg(short = 'p', long = "prompt", value_name = "PROMPT")]
    pub prompt: Option<String>,

    /// The prompt, as a positional argument.
    #[arg(value_name = "QUERY", conflicts_with = "prompt")]
    pub query: Option<String>,

    /// Output format (else settings `output.format`, else text).
    #[arg(short = 'o', long = "output-format", value_enum)]
    pub output_format: Option<OutputFormat>,

    /// Model to use (else GEMINI_MODEL, else settings model.name).
    #[arg(short = 'm', long = "model")]
    pub model: Option<String>,

    /// Approve every tool call automatically.
    #[arg(short = 'y', long = "yolo")]
    pub yolo: bool,

    /// Trust the current folder for this run (its workspace settings,
    /// `.env`, commands and MCP servers load; see trusted folders).
    #[arg(long = "skip-trust")]
    pub skip_trust: bool,

    /// default, auto_edit or yolo.
    #[arg(long = "approval-mode", value_name = "MODE")]
    pub approval_mode: Option<String>,

    /// More workspace directories (comma-separated, repeatable).
    #[arg(
        long = "include-directories",
        value_delimiter = ',',
        value_name = "DIRS"
    )]
    pub include_directories: Vec<String>,

    /// List this folder's checkpoints (snapshots taken before edits,
    /// newest first) and exit. With `-o json`, a JSON array.
    #[arg(long = "list-checkpoints", conflicts_with_all = ["prompt", "query", "restore_checkpoint"])]
    pub list_checkpoints: bool,

    /// Go back to checkpoint ID (from --list-checkpoints) and exit: by
    /// default this folder's files are put back as they were before that
    /// edit (the state before is checkpointed too, so the restore can be
    /// undone); see --restore-mode for the conversation.
    #[arg(long = "restore-checkpoint", value_name = "ID", conflicts_with_all = ["prompt", "query"])]
    pub restore_checkpoint: Option<String>,

    /// What --restore-checkpoint restores: `code` (the files), `conversation`
    /// (the edit's session history is cut before the prompt of the edit's
    /// turn, so a resumed session no longer carries it) or `both`.
    #[arg(
        long = "restore-mode",
        value_enum,
        value_name = "WHAT",
        default_value = "code",
        requires = "restore_checkpoint"
    )]
    pub restore_mode: RestoreMode,
    /// Continue a stored session: `latest` (the default), its number from
    /// --list-sessions, or its id. Gemini CLI's sessions of this project
    /// can be resumed too (they are imported into Gemini Desktop's history).
    #[arg(
        short = 'r',
        long = "resume",
        value_name = "SESSION",
        num_args = 0..=1,
        default_missing_value = "latest"
    )]
    pub resume: Option<String>,

    /// Use only these extensions (names, comma-separated or repeated; `none`
    /// for none). Without it, every enabled extension is used.
    #[arg(
        short = 'e',
        long = "extensions",
        value_name = "NAME",
        value_delimiter = ',',
        num_args = 1
    )]
    pub extensions: Vec<String>,

    /// List all available extensions and exit.
    #[arg(short = 'l', long = "list-extensions")]
    pub list_extensions: bool,

    /// List this project's sessions (Gemini Desktop's and Gemini CLI's) and exit.
    #[arg(long = "list-sessions", conflicts_with_all = ["resume", "delete_session"])]
    pub list_sessions: bool,

    /// Delete a session (its number from --list-sessions, or its id) and exit.
    #[arg(
        long = "delete-session",
        value_name = "SESSION",
        conflicts_with = "resume"
    )]
    pub delete_session: Option<String>,

    /// Verbose logs on standard error.
    #[arg(short = 'd', long = "debug", global = true)]
    pub debug: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Sign-in: show the status, store an API key, sign in with Google, sign out.
    #[command(subcommand)]
    Auth(AuthCommand),
    /// MCP servers: sign in to HTTP servers with OAuth, or sign out.
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Subagents: list the agents the model can call here.
    #[command(subcommand)]
    Agents(AgentsCommand),
    /// Agent skills: list them, enable or disable one.
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// Extensions (Gemini CLI 0.61's `gemini extensions`): list, install,
    /// uninstall, enable, disable, link, update.
    #[command(subcommand)]
    Extensions(ExtensionsCommand),
}

#[derive(Debug, Subcommand)]
pub enum ExtensionsCommand {
    /// Lists installed extensions.
    List {
        /// `text` (the default) or `json`.
        #[arg(short = 'o', long = "output-format", value_enum)]
        output_format: Option<OutputFormat>,
    },
    /// Installs an extension from a git repository URL or a local path.
    Install {
        /// The git URL or local path of the extension to install.
        source: String,
        /// The git ref to install from.
        #[arg(long = "ref")]
        git_ref: Option<String>,
        /// Enable auto-update for this extension.
        #[arg(long = "auto-update")]
        auto_update: bool,
        /// Enable pre-release versions for this extension.
        #[arg(long = "pre-release")]
        pre_release: bool,
        /// Acknowledge the security risks of installing an extension and skip the confirmation prompt.
        #[arg(long)]
        consent: bool,
        /// Skip the configuration on install process.
        #[arg(long = "skip-settings")]
        skip_settings: bool,
    },
    /// Uninstalls one or more extensions.
    Uninstall {
        /// The name(s) or source path(s) of the extension(s) to uninstall.
        names: Vec<String>,
        /// Uninstall all installed extensions.
        #[arg(long)]
        all: bool,
    },
    /// Enables an extension.
    Enable {
        name: String,
        /// `user` or `workspace`; without it, enabled in all scopes.
        #[arg(long)]
        scope: Option<String>,
    },
    /// Disables an extension.
    Disable {
        name: String,
        /// `user` (the default) or `workspace`.
        #[arg(long, default_value = "User")]
        scope: String,
    },
    /// Links an extension from a local path. Updates made to the local path will always be reflected.
    Link {
        path: String,
        /// Acknowledge the security risks and skip the confirmation prompt.
        #[arg(long)]
        consent: bool,
    },
    /// Updates all extensions or a named extension to the latest version.
    Update {
        name: Option<String>,
        /// Update all extensions.
        #[arg(long, conflicts_with = "name")]
        all: bool,
    },
    /// Create a new extension from a boilerplate example.
    New {
        /// The path to create the extension in.
        path: String,
        /// The boilerplate template to use: custom-commands, exclude-tools,
        /// hooks, mcp-server, policies, skills or themes-example.
        template: Option<String>,
    },
    /// Configure extension settings.
    Config {
        /// Name of the extension to configure (all of them without it).
        name: Option<String>,
        /// The specific setting to configure (name or env var).
        setting: Option<String>,
        /// The scope to set the setting in: `user` (the default) or `workspace`.
        #[arg(long, default_value = "user", value_parser = ["user", "workspace"])]
        scope: String,
    },
    /// Validates an extension from a local path.
    Validate {
        /// The path of the extension to validate.
        path: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// List the skills found here (built-in, extensions, `~/.gemini/skills`
    /// and `~/.agents/skills`, and in a trusted folder `.gemini/skills` and
    /// `.agents/skills`). `--all` also lists the ones another tier hides.
    List {
        #[arg(long)]
        all: bool,
        /// `text` (the default) or `json` (`{skills, errors}`).
        #[arg(short = 'o', long = "output-format", value_enum)]
        output_format: Option<OutputFormat>,
    },
    /// Turn a skill back on (removes it from `skills.disabled`).
    Enable {
        name: String,
        /// `user` (~/.gemini/settings.json, the default) or `workspace`.
        #[arg(long, value_enum, default_value = "user")]
        scope: ScopeArg,
    },
    /// Turn a skill off (adds it to `skills.disabled`): it is no longer
    /// offered to the model.
    Disable {
        name: String,
        /// `user` (~/.gemini/settings.json, the default) or `workspace`.
        #[arg(long, value_enum, default_value = "user")]
        scope: ScopeArg,
    },
}

/// Where `skills enable|disable` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScopeArg {
    User,
    Workspace,
}

#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// List the built-in agents and those of `~/.gemini/agents` and (in a
    /// trusted folder) `.gemini/agents`, with their model, limits and
    /// whether they can run (what `/agents` shows in the app). Files that
    /// could not be read are printed on standard error as `path:line:
    /// message`. `--output-format json` prints `{agents, errors}`.
    List {
        /// `text` (a table, the default) or `json`.
        #[arg(short = 'o', long = "output-format", value_enum)]
        output_format: Option<OutputFormat>,
    },
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List the configured MCP servers: each is started, and its state,
    /// transport, tools and prompts are printed (Gemini CLI's `gemini mcp
    /// list`; what `/mcp` shows in the app).
    List,
    /// Sign in to an HTTP MCP server with OAuth (Gemini CLI's `/mcp auth
    /// <server>`): prints the address to open on standard error, opens the
    /// browser, waits up to 5 minutes for the redirect, stores the tokens
    /// and connects once to check. Without a server: lists the HTTP servers
    /// and whether they are signed in.
    Auth {
        /// The server's name under `mcpServers`.
        server: Option<String>,
        /// Do not open a browser; just print the address and wait.
        #[arg(long)]
        no_browser: bool,
    },
    /// Forget the stored sign-in to an MCP server.
    Logout {
        /// The server's name under `mcpServers`.
        server: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Which credentials a run would use, where the secret lives, the Google
    /// account, tier, project and token expiry. Exit code 0 when a run can
    /// start, 41 when not.
    Status {
        /// Print the status as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Reads a Gemini API key from standard input, checks it (lists models)
    /// and stores it in the keyring (or the 0600 fallback file).
    SetApiKey,
    /// Sign in with Google (Gemini Code Assist Standard / Enterprise /
    /// Workspace with a Google Cloud project). Prints the address to open on
    /// standard error, opens the browser, and also accepts the address the
    /// browser ended on (or the code) pasted on standard input.
    Login {
        /// Do not open a browser; just print the address and wait.
        #[arg(long)]
        no_browser: bool,
        /// Listen for Google's answer on this local port (else a free one).
        #[arg(long, value_name = "PORT")]
        port: Option<u16>,
    },
    /// Signs out everywhere: revokes the Google sign-in and deletes stored
    /// keys and tokens.
    Logout,
}
