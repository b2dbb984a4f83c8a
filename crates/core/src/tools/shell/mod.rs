//! The shell tools: `run_shell_command` and, for the processes it starts in
//! the background, `list_background_processes` and `read_background_output`.
//!
//! The three share one [`BackgroundProcesses`] registry per session (the
//! tools are created per session); dropping the registry ends the
//! processes still running.
//!
//! * [`run`]: the command tool, foreground and background runs;
//! * [`background`]: the registry and the two background tools;
//! * [`process`]: spawning in a new process group, ending whole groups;
//! * [`output`]: the capped output buffer, ANSI stripping, binary detection;
//! * [`format`]: the result text;
//! * [`parse`]: the root commands of a command line, for confirmations.

pub mod background;
pub mod format;
pub mod output;
pub mod parse;
pub mod process;
pub mod run;

use std::sync::Arc;

pub use background::{
    BackgroundProcessInfo, BackgroundProcesses, BackgroundStatus, ListBackgroundProcesses,
    ReadBackgroundOutput,
};
pub use parse::root_commands;
pub use run::RunShellCommand;

use super::Tool;

/// The three shell tools, sharing `processes`.
pub fn tools(processes: Arc<BackgroundProcesses>) -> [Arc<dyn Tool>; 3] {
    [
        Arc::new(RunShellCommand::new(processes.clone())),
        Arc::new(ListBackgroundProcesses::new(processes.clone())),
        Arc::new(ReadBackgroundOutput::new(processes)),
    ]
}
