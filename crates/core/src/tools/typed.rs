//! [`TypedTool`]: how a built-in tool is written. It receives its arguments
//! already decoded into its own struct and returns `Result`; the
//! object-safe [`Tool`] the registry and scheduler use is implemented once
//! for every typed tool below, so argument decoding, the error for bad
//! arguments, turning an error into a [`ToolResult`] and boxing the future
//! are written once instead of in every tool (as in codex-rs, whose
//! handlers share one `parse_arguments`).

use std::future::Future;

use futures::future::BoxFuture;
use gd_protocol::ConfirmationDetails;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Tool, ToolContext, ToolError, ToolErrorKind, ToolInfo, ToolResult};

/// A tool whose arguments decode into `Self::Args`; what it is (names,
/// schema...) it states as [`ToolInfo`].
pub trait TypedTool: ToolInfo {
    /// The arguments, decoded with serde after the call passed its JSON
    /// Schema check; what the schema cannot say fails as [`invalid_args`].
    type Args: DeserializeOwned + Send;

    /// See [`Tool::prepare`]; runs only when the arguments decode.
    fn prepare(
        &self,
        args: Self::Args,
        ctx: &ToolContext,
    ) -> impl Future<Output = Prepared> + Send {
        let _ = (args, ctx);
        async { Ok(None) }
    }

    /// Runs the call. An `Err` reaches the model and the card as
    /// [`ToolResult::from_error`].
    fn run(
        &self,
        args: Self::Args,
        ctx: &ToolContext,
    ) -> impl Future<Output = Result<ToolResult, ToolError>> + Send;
}

/// What [`TypedTool::prepare`] answers: what the user would approve, or
/// why the call cannot work.
pub type Prepared = Result<Option<ConfirmationDetails>, ToolError>;

/// The one error for arguments that do not decode into a tool's `Args`.
pub fn invalid_args(error: impl std::fmt::Display) -> ToolError {
    ToolError::new(
        ToolErrorKind::InvalidParams,
        format!("Invalid parameters: {error}"),
    )
}

/// Decodes a call's arguments into `A`, failing with [`invalid_args`].
pub fn decode<A: DeserializeOwned>(args: &Value) -> Result<A, ToolError> {
    A::deserialize(args).map_err(invalid_args)
}

impl<T: TypedTool> Tool for T {
    fn prepare<'a>(
        &'a self,
        args: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Option<ConfirmationDetails>, ToolError>> {
        Box::pin(async move { TypedTool::prepare(self, decode(args)?, ctx).await })
    }

    fn execute<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let result = match decode(&args) {
                Ok(args) => self.run(args, ctx).await,
                Err(error) => Err(error),
            };
            result.unwrap_or_else(ToolResult::from_error)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolKind;
    use serde::Deserialize;
    use serde_json::json;

    struct Echo {
        schema: Value,
    }

    #[derive(Deserialize)]
    struct EchoArgs {
        text: String,
    }

    impl ToolInfo for Echo {
        fn name(&self) -> &str {
            "echo"
        }

        fn display_name(&self) -> &str {
            "Echo"
        }

        fn description(&self) -> &str {
            "Echoes its text."
        }

        fn kind(&self) -> ToolKind {
            ToolKind::Think
        }

        fn parameter_schema(&self) -> &Value {
            &self.schema
        }
    }

    impl TypedTool for Echo {
        type Args = EchoArgs;

        async fn run(&self, args: EchoArgs, _ctx: &ToolContext) -> Result<ToolResult, ToolError> {
            if args.text.is_empty() {
                return Err(ToolError::new(ToolErrorKind::InvalidParams, "empty"));
            }
            Ok(ToolResult::success(args.text.clone(), args.text))
        }
    }

    #[tokio::test]
    async fn decodes_once_and_turns_errors_into_results() {
        let tool: &dyn Tool = &Echo { schema: json!({}) };
        let ctx = ToolContext::new(vec![std::env::temp_dir()]);
        let ok = tool.execute(json!({"text": "hi"}), &ctx).await;
        assert_eq!(ok, ToolResult::success("hi", "hi"));
        let bad = tool.execute(json!({"text": 1}), &ctx).await;
        let error = bad.error.unwrap();
        assert_eq!(error.kind, ToolErrorKind::InvalidParams);
        assert!(
            error
                .message
                .starts_with("Invalid parameters: invalid type"),
            "{}",
            error.message
        );
        assert_eq!(bad.display, error.message);
        let failed = tool.execute(json!({"text": ""}), &ctx).await;
        assert_eq!(
            failed,
            ToolResult::from_error(ToolError::new(ToolErrorKind::InvalidParams, "empty"))
        );
        // Undecodable arguments fail in prepare too, before anyone is asked.
        assert!(tool.prepare(&json!({}), &ctx).await.is_err());
        assert_eq!(tool.prepare(&json!({"text": "x"}), &ctx).await, Ok(None));
    }
}
