//! Sign-in for Gemini Desktop, free of any UI framework.
//!
//! * [`secret_store`]: where secrets live: the OS keyring (Secret Service,
//!   macOS Keychain, Windows Credential Manager) or a 0600 file when no
//!   keyring service is reachable; the choice is reported.
//! * [`api_key`]: API keys, validated with a cheap call (list models).
//! * [`oauth`] and [`login`]: Google OAuth for an installed app: loopback
//!   redirect on 127.0.0.1, state, PKCE S256, offline access; a paste-code
//!   fallback; cancellation and a 5-minute timeout; refresh and revocation.
//! * [`code_assist`]: Gemini Code Assist onboarding (`loadCodeAssist`,
//!   `onboardUser`, operation polling) with errors that say what to do.
//! * [`token_source`]: the stored sign-in as a [`gd_gemini::CredentialSource`],
//!   refreshed ahead of expiry; a revoked sign-in ends in "sign in again",
//!   never in a loop.
//! * [`adc`]: Application Default Credentials for Vertex AI.
//! * [`browser`]: opening sign-in pages (`GEMINI_DESKTOP_BROWSER` overrides).
//! * [`status`]: the data of the "auth doctor" view.
//! * [`manager`]: [`AuthManager`], the facade the desktop shell, the CLI and
//!   the session launch use.
//!
//! Secrets never reach logs: tokens are held in
//! [`gd_http::SecretString`] and every message built from a server answer
//! goes through [`redact`].

pub mod adc;
pub mod api_key;
pub mod browser;
pub mod code_assist;
pub mod config;
pub mod error;
pub mod friendly;
pub mod http;
pub mod login;
pub mod manager;
pub mod oauth;
pub mod redact;
pub mod secret_store;
pub mod state;
pub mod status;
pub mod token_source;

pub use config::{AuthConfig, ClientSource, Endpoints, OAuthClient, ProjectSource};
pub use error::{AuthError, AuthErrorKind, AuthErrorReport};
pub use friendly::ErrorCause;
pub use login::{LoginControl, LoginOptions, LoginStage};
pub use manager::{
    AuthManager, CloudProject, EnvFn, GoogleLogin, LoginOutcome, ResolvedBackend, SignOutReport,
    VertexInput,
};
pub use secret_store::{SecretKey, SecretStore, StoreInfo, StoreKind};
pub use state::{AuthMethod, VertexAuth};
pub use status::{AuthAction, AuthStatus, MethodOrigin, SignInOption, sign_in_options};
