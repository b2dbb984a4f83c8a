//! The policy editor's operations, taken at once (even during a turn):
//! list the effective rules, read the policy files again, dry-run a call.

use gd_protocol::{Event, Op};
use tracing::warn;

use crate::approval::ApprovalPolicy;
use crate::events::EventSink;

/// Answers `Op::ListPolicies`, `Op::ReloadPolicies` and
/// `Op::PolicyDryRun` (other ops are not for it and are ignored). A
/// session without a policy engine says so with a warning.
pub(super) fn take(op: Op, policy: &dyn ApprovalPolicy, sink: &EventSink) {
    let Some(policy) = policy.as_policy() else {
        sink.emit(Event::Warning {
            message: "This session has no policy rules to list or test.".into(),
        });
        return;
    };
    match op {
        Op::ListPolicies => sink.emit(policy.policies_event(policy.load_errors())),
        Op::ReloadPolicies => match policy.reload() {
            Ok(errors) => {
                for error in &errors {
                    warn!("policy file skipped: {error}");
                }
                sink.emit(policy.policies_event(errors));
            }
            Err(message) => sink.emit(Event::Warning { message }),
        },
        Op::PolicyDryRun {
            tool,
            args,
            mcp_server,
            approval_mode,
        } => sink.emit(policy.dry_run_event(&tool, &args, mcp_server.as_deref(), approval_mode)),
        _ => {}
    }
}
