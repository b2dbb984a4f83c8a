//! Settings, read the way Gemini CLI reads them, so a user's existing
//! `~/.gemini/settings.json` and `<workspace>/.gemini/settings.json` simply
//! work.
//!
//! * [`jsonc`]: `//` and `/* */` comments are allowed (Gemini CLI strips them).
//! * [`env`]: `$VAR` and `${VAR}` in string values are expanded.
//! * [`merge`]: layers are merged, later ones winning.
//! * [`model`]: the typed view of the keys the agent uses. Unknown keys are
//!   ignored, a wrong type is an error naming the file, line and key.
//! * [`write`] / [`edit`]: one setting written back into a layer's file,
//!   editing the text in place so comments and unknown keys survive.
//! * [`trust`]: trusted folders; an untrusted workspace's settings are not
//!   read.

pub mod dotenv;
pub mod edit;
pub mod env;
pub mod jsonc;
pub mod layers;
pub mod merge;
pub mod model;
pub mod trust;
pub mod write;

pub use layers::{
    Layer, LayerKind, LoadOptions, LoadedSettings, SettingsError, load_layers, parse_file,
};
pub use model::Settings;
pub use trust::{TrustLevel, TrustSource, TrustedFolders, WorkspaceTrust, workspace_trust};
pub use write::{WriteError, write_setting};
