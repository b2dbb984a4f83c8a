//! One `[[rule]]` table: its fields checked one by one (unknown ones
//! with a "did you mean" hint, unsupported ones refused), into a [`Rule`].

use std::ops::Range;

use toml::de::{DeTable, DeValue};
use tracing::debug;

use crate::rule::{Rule, RuleDecision, SHELL_TOOL_NAME, Tier};

use super::values::{modes, priority, regex, string, string_or_list};
use super::{FileCtx, Value};

/// The fields of a `[[rule]]` table.
pub(super) const FIELDS: &[&str] = &[
    "toolName",
    "mcpName",
    "subagent",
    "argsPattern",
    "commandPrefix",
    "commandRegex",
    "decision",
    "priority",
    "modes",
    "deny_message",
    // The spelling the issue tracker and some docs use; both are accepted.
    "denyMessage",
    // Gemini CLI reads `allowRedirection`, and the older snake_case spelling.
    "allowRedirection",
    "allow_redirection",
    "interactive",
];

/// Gemini CLI fields whose conditions or checks we cannot evaluate. Ignoring
/// them would make a rule apply more widely than its author wrote, so such a
/// rule is an error.
const UNSUPPORTED_FIELDS: &[&str] = &["toolAnnotations", "safety_checker"];

pub(super) fn parse_rule(
    ctx: &mut FileCtx<'_>,
    table: &DeTable<'_>,
    header: Range<usize>,
    bom: usize,
    tier: Tier,
) -> Option<Rule> {
    let errors_before = ctx.errors.len();
    let shift = |s: Range<usize>| s.start + bom..s.end + bom;
    let get = |field: &str| -> Option<&Value<'_>> {
        table
            .iter()
            .find(|(k, _)| k.get_ref() == field)
            .map(|(_, v)| v)
    };

    for (key, _) in table.iter() {
        let name: &str = key.get_ref();
        if FIELDS.contains(&name) {
            continue;
        }
        let message = if UNSUPPORTED_FIELDS.contains(&name) {
            format!(
                "`{name}` is a Gemini CLI rule field that Gemini Desktop does not support; \
                 the rule cannot be applied as written"
            )
        } else {
            let hint = FIELDS
                .iter()
                .find(|f| {
                    f.replace('_', "")
                        .eq_ignore_ascii_case(&name.replace('_', ""))
                        || edit_distance(&f.to_ascii_lowercase(), &name.to_ascii_lowercase()) <= 2
                })
                .map(|f| format!(" (did you mean `{f}`?)"))
                .unwrap_or_default();
            format!(
                "unknown field `{name}` in [[rule]]{hint}; expected one of: {}",
                FIELDS.join(", ")
            )
        };
        ctx.error(shift(key.span()), message);
    }

    let tool_names = match get("toolName") {
        Some(v) => string_or_list(ctx, "toolName", v, bom).unwrap_or_default(),
        None => Vec::new(),
    };
    let mcp_name = get("mcpName").and_then(|v| string(ctx, "mcpName", v, bom));
    if let (Some(name), Some(v)) = (&mcp_name, get("mcpName"))
        && name.is_empty()
    {
        ctx.error(shift(v.span()), "`mcpName` must not be empty");
    }
    let subagent = get("subagent").and_then(|v| string(ctx, "subagent", v, bom));
    if let (Some(name), Some(v)) = (&subagent, get("subagent"))
        && name.is_empty()
    {
        ctx.error(shift(v.span()), "`subagent` must not be empty");
    }
    let args_pattern = get("argsPattern").and_then(|v| regex(ctx, "argsPattern", v, bom));
    let command_prefixes = match get("commandPrefix") {
        Some(v) => string_or_list(ctx, "commandPrefix", v, bom).unwrap_or_default(),
        None => Vec::new(),
    };
    let command_regex = get("commandRegex").and_then(|v| regex(ctx, "commandRegex", v, bom));

    let decision = match get("decision") {
        None => {
            ctx.error(
                header.clone(),
                "missing field `decision` (\"allow\", \"deny\" or \"ask_user\")",
            );
            None
        }
        Some(v) => string(ctx, "decision", v, bom).and_then(|s| match s.parse::<RuleDecision>() {
            Ok(d) => Some(d),
            Err(message) => {
                ctx.error(shift(v.span()), message);
                None
            }
        }),
    };
    let priority = match get("priority") {
        None => {
            ctx.error(
                header.clone(),
                "missing field `priority` (an integer from 0 to 999)",
            );
            None
        }
        Some(v) => priority(ctx, v, bom),
    };
    let modes = match get("modes") {
        None => Vec::new(),
        Some(v) => modes(ctx, v, bom),
    };
    let deny_message = match (get("deny_message"), get("denyMessage")) {
        (Some(v), _) => string(ctx, "deny_message", v, bom),
        (None, Some(v)) => string(ctx, "denyMessage", v, bom),
        (None, None) => None,
    };
    let mut allow_redirection = false;
    for field in ["allowRedirection", "allow_redirection"] {
        match get(field).map(|v| (v.get_ref(), v.span())) {
            None => {}
            Some((DeValue::Boolean(b), _)) => allow_redirection |= *b,
            Some((other, span)) => ctx.error(
                shift(span),
                format!("`{field}` must be a boolean, found {}", other.type_str()),
            ),
        }
    }

    let interactive = match get("interactive").map(|v| (v.get_ref(), v.span())) {
        None => None,
        Some((DeValue::Boolean(b), _)) => Some(*b),
        Some((other, span)) => {
            ctx.error(
                shift(span),
                format!(
                    "`interactive` must be a boolean, found {}",
                    other.type_str()
                ),
            );
            None
        }
    };

    // commandPrefix / commandRegex are about the shell tool.
    let has_prefix = get("commandPrefix").is_some();
    let has_regex = get("commandRegex").is_some();
    let mut tool_names = tool_names;
    if has_prefix || has_regex {
        if has_prefix && has_regex {
            let span = get("commandRegex").map_or(header.clone(), |v| shift(v.span()));
            ctx.error(
                span,
                "`commandPrefix` and `commandRegex` cannot be used in the same rule",
            );
        }
        if let Some(v) = get("mcpName") {
            ctx.error(shift(v.span()), "`commandPrefix`/`commandRegex` apply to run_shell_command and cannot be combined with `mcpName`");
        }
        if tool_names.is_empty() {
            tool_names.push(SHELL_TOOL_NAME.to_owned());
        } else if tool_names.iter().any(|t| t != SHELL_TOOL_NAME) {
            let span = get("toolName").map_or(header.clone(), |v| shift(v.span()));
            ctx.error(
                span,
                format!(
                    "`commandPrefix`/`commandRegex` only apply to toolName = \"{SHELL_TOOL_NAME}\""
                ),
            );
        }
    }

    if ctx.errors.len() > errors_before {
        return None;
    }
    debug!(path = %ctx.path.display(), ?tool_names, ?decision, "policy rule");
    Some(Rule {
        tool_names,
        mcp_name,
        subagent,
        args_pattern,
        command_prefixes,
        command_regex,
        decision: decision?,
        priority: priority?,
        modes,
        interactive,
        deny_message,
        allow_redirection,
        tier,
        source: None,
    })
}

/// Levenshtein distance, for "did you mean" hints.
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
