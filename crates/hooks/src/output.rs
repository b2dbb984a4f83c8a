//! What a hook's run means, and how the answers of several hooks on one
//! event combine — 0.61's rules, read from its hook runner and aggregator:
//!
//! - Exit 0: standard output (else standard error) is read as JSON; plain
//!   text is allowed and shown as a system message.
//! - Exit 1: a warning; plain text is shown as `Warning: <text>`.
//! - Any other exit code (2 is the documented one): the action is blocked;
//!   plain text (usually standard error) is the reason.
//! - A time-out or a hook that cannot start is a failure: a warning, and the
//!   action goes on.
//!
//! Several hooks: any `deny`/`block` blocks (reasons joined), `continue:
//! false` stops, system messages and additional context are joined; for
//! BeforeModel/AfterModel later fields replace earlier ones; for
//! BeforeToolSelection the allowed tools are a union, `NONE` wins over
//! `ANY` over `AUTO`.

use gd_protocol::{HookEventName, HookOutcome};
use serde_json::{Map, Value};

use crate::run::RawRun;

/// One hook's answer, as read from its run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookOutput {
    /// The JSON object (or the object made from plain text).
    pub json: Map<String, Value>,
    /// How the run ended.
    pub outcome: Option<HookOutcome>,
    /// Why it failed (time-out, could not start), in words.
    pub error: Option<String>,
}

impl HookOutput {
    /// Reads a finished run.
    pub fn from_run(raw: &RawRun, timeout_ms: u64) -> HookOutput {
        if raw.timed_out {
            return HookOutput {
                json: Map::new(),
                outcome: Some(HookOutcome::TimedOut),
                error: Some(format!("Hook timed out after {timeout_ms}ms")),
            };
        }
        if let Some(error) = &raw.spawn_error {
            return HookOutput {
                json: Map::new(),
                outcome: Some(HookOutcome::Failed),
                error: Some(error.clone()),
            };
        }
        let code = raw.exit_code.unwrap_or(-1);
        let text = match raw.stdout.trim() {
            "" => raw.stderr.trim(),
            out => out,
        };
        let json = if text.is_empty() {
            Map::new()
        } else {
            parse_object(text).unwrap_or_else(|| plain_text(text, code))
        };
        let mut out = HookOutput {
            json,
            outcome: None,
            error: None,
        };
        out.outcome = Some(if out.is_blocking() || out.stops() {
            HookOutcome::Blocked
        } else if code == 0 {
            HookOutcome::Success
        } else {
            HookOutcome::Warning
        });
        if raw.exit_code.is_none() {
            out.error = Some("the hook was killed by a signal".into());
            out.outcome = Some(HookOutcome::Warning);
        }
        out
    }

    fn str_field(&self, key: &str) -> Option<&str> {
        self.json.get(key).and_then(Value::as_str)
    }

    pub fn decision(&self) -> Option<&str> {
        self.str_field("decision")
    }

    /// `deny` or `block`.
    pub fn is_blocking(&self) -> bool {
        matches!(self.decision(), Some("deny" | "block"))
    }

    pub fn is_ask(&self) -> bool {
        self.decision() == Some("ask")
    }

    /// `continue: false`.
    pub fn stops(&self) -> bool {
        self.json.get("continue") == Some(&Value::Bool(false))
    }

    pub fn system_message(&self) -> Option<&str> {
        self.str_field("systemMessage")
    }

    /// `stopReason`, else `reason`, else 0.61's placeholder.
    pub fn effective_reason(&self) -> String {
        self.str_field("stopReason")
            .or_else(|| self.str_field("reason"))
            .unwrap_or("No reason provided")
            .to_owned()
    }

    pub fn reason(&self) -> Option<&str> {
        self.str_field("reason")
    }

    /// `hookSpecificOutput.<key>`.
    pub fn specific(&self, key: &str) -> Option<&Value> {
        self.json.get("hookSpecificOutput")?.get(key)
    }

    /// `hookSpecificOutput.additionalContext`, with `<` and `>` escaped as
    /// 0.61 does (so a hook cannot close the wrapper it is put in).
    pub fn additional_context(&self) -> Option<String> {
        let text = self.specific("additionalContext")?.as_str()?;
        Some(text.replace('<', "&lt;").replace('>', "&gt;"))
    }
}

fn parse_object(text: &str) -> Option<Map<String, Value>> {
    let mut value: Value = serde_json::from_str(text).ok()?;
    // 0.61 accepts a JSON string holding the JSON object.
    if let Value::String(inner) = &value {
        value = serde_json::from_str(inner).ok()?;
    }
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

fn plain_text(text: &str, code: i32) -> Map<String, Value> {
    let mut map = Map::new();
    match code {
        0 => {
            map.insert("decision".into(), "allow".into());
            map.insert("systemMessage".into(), text.into());
        }
        1 => {
            map.insert("decision".into(), "allow".into());
            map.insert("systemMessage".into(), format!("Warning: {text}").into());
        }
        _ => {
            map.insert("decision".into(), "deny".into());
            map.insert("reason".into(), text.into());
        }
    }
    map
}

/// The combined answer of the hooks that ran for one event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Merged(pub HookOutput);

impl std::ops::Deref for Merged {
    type Target = HookOutput;
    fn deref(&self) -> &HookOutput {
        &self.0
    }
}

/// Combines the answers of one event's hooks (failed runs have no answer).
pub fn merge(event: HookEventName, outputs: &[HookOutput]) -> Option<Merged> {
    let outputs: Vec<&Map<String, Value>> = outputs
        .iter()
        .filter(|o| o.error.is_none())
        .map(|o| &o.json)
        .collect();
    if outputs.is_empty() {
        return None;
    }
    let json = match event {
        HookEventName::BeforeModel | HookEventName::AfterModel => replace_fields(&outputs),
        HookEventName::BeforeToolSelection => tool_selection(&outputs),
        _ => or_decision(&outputs),
    };
    Some(Merged(HookOutput {
        json,
        outcome: None,
        error: None,
    }))
}

fn or_decision(outputs: &[&Map<String, Value>]) -> Map<String, Value> {
    let mut merged = Map::new();
    let (mut stop_reasons, mut reasons, mut messages, mut contexts) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut block, mut ask, mut stop) = (false, false, false);
    let mut specific = Map::new();
    for out in outputs {
        let get = |k: &str| out.get(k).and_then(Value::as_str);
        if out.get("continue") == Some(&Value::Bool(false)) {
            stop = true;
            if let Some(r) = get("stopReason") {
                stop_reasons.push(r.to_owned());
            }
        }
        match get("decision") {
            Some(d @ ("deny" | "block")) => {
                block = true;
                merged.insert("decision".into(), d.into());
            }
            Some("ask") if !block => {
                ask = true;
                merged.insert("decision".into(), "ask".into());
            }
            _ => {}
        }
        if let Some(r) = get("reason") {
            reasons.push(r.to_owned());
        }
        if let Some(m) = get("systemMessage") {
            messages.push(m.to_owned());
        }
        if let Some(Value::Object(s)) = out.get("hookSpecificOutput") {
            for (k, v) in s {
                if k == "additionalContext" {
                    if let Some(c) = v.as_str() {
                        contexts.push(c.to_owned());
                    }
                } else {
                    specific.insert(k.clone(), v.clone());
                }
            }
        }
    }
    if !block && !ask && !stop {
        merged.insert("decision".into(), "allow".into());
    }
    if stop {
        merged.insert("continue".into(), false.into());
    }
    for (key, list) in [
        ("stopReason", stop_reasons),
        ("reason", reasons),
        ("systemMessage", messages),
    ] {
        if !list.is_empty() {
            merged.insert(key.into(), list.join("\n").into());
        }
    }
    if !contexts.is_empty() {
        specific.insert("additionalContext".into(), contexts.join("\n").into());
    }
    if !specific.is_empty() {
        merged.insert("hookSpecificOutput".into(), Value::Object(specific));
    }
    merged
}

fn replace_fields(outputs: &[&Map<String, Value>]) -> Map<String, Value> {
    let mut merged = Map::new();
    let mut specific = Map::new();
    for out in outputs {
        for (k, v) in out.iter() {
            if k == "hookSpecificOutput" {
                if let Value::Object(s) = v {
                    specific.extend(s.clone());
                }
            } else {
                merged.insert(k.clone(), v.clone());
            }
        }
    }
    merged.insert("hookSpecificOutput".into(), Value::Object(specific));
    merged
}

fn tool_selection(outputs: &[&Map<String, Value>]) -> Map<String, Value> {
    let (mut none, mut any) = (false, false);
    let mut names = std::collections::BTreeSet::new();
    for out in outputs {
        let Some(config) = out
            .get("hookSpecificOutput")
            .and_then(|s| s.get("toolConfig"))
        else {
            continue;
        };
        match config.get("mode").and_then(Value::as_str) {
            Some("NONE") => none = true,
            Some("ANY") => any = true,
            _ => {}
        }
        if let Some(list) = config.get("allowedFunctionNames").and_then(Value::as_array) {
            names.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
        }
    }
    let (mode, names) = if none {
        ("NONE", Vec::new())
    } else if any {
        ("ANY", names.into_iter().collect())
    } else {
        ("AUTO", names.into_iter().collect())
    };
    let mut merged = Map::new();
    merged.insert(
        "hookSpecificOutput".into(),
        serde_json::json!({
            "hookEventName": "BeforeToolSelection",
            "toolConfig": {"mode": mode, "allowedFunctionNames": names}
        }),
    );
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn raw(code: i32, stdout: &str, stderr: &str) -> RawRun {
        RawRun {
            exit_code: Some(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
            timed_out: false,
            spawn_error: None,
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn exit_codes_and_plain_text_as_in_061() {
        let blocked = HookOutput::from_run(&raw(2, "", "writes are blocked\n"), 1000);
        assert!(blocked.is_blocking());
        assert_eq!(blocked.effective_reason(), "writes are blocked");
        assert_eq!(blocked.outcome, Some(HookOutcome::Blocked));

        let warned = HookOutput::from_run(&raw(1, "", "careful"), 1000);
        assert!(!warned.is_blocking());
        assert_eq!(warned.system_message(), Some("Warning: careful"));
        assert_eq!(warned.outcome, Some(HookOutcome::Warning));

        let said = HookOutput::from_run(&raw(0, "hello", ""), 1000);
        assert_eq!(said.system_message(), Some("hello"));
        assert_eq!(said.outcome, Some(HookOutcome::Success));

        let json = HookOutput::from_run(&raw(0, r#"{"decision":"deny","reason":"no"}"#, ""), 1000);
        assert!(json.is_blocking());
        assert_eq!(json.outcome, Some(HookOutcome::Blocked));

        let quoted = HookOutput::from_run(&raw(0, r#""{\"continue\":false}""#, ""), 1000);
        assert!(quoted.stops());

        let context = HookOutput::from_run(
            &raw(
                0,
                r#"{"hookSpecificOutput":{"additionalContext":"a <b>"}}"#,
                "",
            ),
            1000,
        );
        assert_eq!(context.additional_context().as_deref(), Some("a &lt;b&gt;"));
    }

    #[test]
    fn a_time_out_is_a_failure_that_does_not_block() {
        let mut r = raw(0, "", "");
        r.timed_out = true;
        r.exit_code = None;
        let out = HookOutput::from_run(&r, 1000);
        assert_eq!(out.outcome, Some(HookOutcome::TimedOut));
        assert_eq!(out.error.as_deref(), Some("Hook timed out after 1000ms"));
        assert!(!out.is_blocking());
        assert_eq!(merge(HookEventName::BeforeTool, &[out]), None);
    }

    #[test]
    fn merging_blocks_on_any_deny_and_joins_texts() {
        let a = HookOutput::from_run(
            &raw(
                0,
                r#"{"systemMessage":"one","hookSpecificOutput":{"additionalContext":"x"}}"#,
                "",
            ),
            1,
        );
        let b = HookOutput::from_run(&raw(2, "", "stop it"), 1);
        let c = HookOutput::from_run(
            &raw(
                0,
                r#"{"systemMessage":"two","hookSpecificOutput":{"additionalContext":"y"}}"#,
                "",
            ),
            1,
        );
        let merged = merge(HookEventName::BeforeTool, &[a.clone(), b, c.clone()]).unwrap();
        assert!(merged.is_blocking());
        assert_eq!(merged.effective_reason(), "stop it");
        assert_eq!(merged.system_message(), Some("one\ntwo"));
        let allowed = merge(HookEventName::AfterTool, &[a, c]).unwrap();
        assert_eq!(allowed.decision(), Some("allow"));
        assert_eq!(allowed.additional_context().as_deref(), Some("x\ny"));
    }

    #[test]
    fn tool_selection_is_a_union_and_none_wins() {
        let pick = |mode: &str, names: &[&str]| {
            HookOutput::from_run(
                &raw(0, &serde_json::json!({"hookSpecificOutput": {"toolConfig": {"mode": mode, "allowedFunctionNames": names}}}).to_string(), ""),
                1,
            )
        };
        let m = merge(
            HookEventName::BeforeToolSelection,
            &[pick("AUTO", &["b"]), pick("ANY", &["a"])],
        )
        .unwrap();
        let config = m.specific("toolConfig").unwrap();
        assert_eq!(config["mode"], "ANY");
        assert_eq!(
            config["allowedFunctionNames"],
            serde_json::json!(["a", "b"])
        );
        let m = merge(
            HookEventName::BeforeToolSelection,
            &[pick("NONE", &[]), pick("ANY", &["a"])],
        )
        .unwrap();
        assert_eq!(m.specific("toolConfig").unwrap()["mode"], "NONE");
    }
}
