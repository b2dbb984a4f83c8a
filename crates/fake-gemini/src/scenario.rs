//! Scenario loading: `{{VAR}}` substitution, validation and the typed form the
//! server works from.
//!
//! The JSON format is a superset of `fake_gemini.py`'s (see the crate docs).
//! Validation happens once, when a scenario is loaded, so a bad scenario is a
//! clear error at reset/start time instead of a confusing reply later.

use crate::faults::{FailSpec, FaultRule};
use crate::pyjson::truthy;
use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value, json};
use std::path::Path;
use std::time::Duration;

/// A loaded, validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The scenario's `name` (reported by `/__admin/health`).
    pub name: Option<String>,
    /// The JSON after `{{VAR}}` substitution, kept for utility defaults and debugging.
    pub raw: Value,
    pub steps: Vec<Step>,
    /// Scripts for other conversations than the main one (a subagent's),
    /// chosen by their system instruction; the first that matches wins.
    pub branches: Vec<Branch>,
    /// Reply when the step index is past `steps`.
    pub after_steps: Step,
    /// >0: split a single text part into SSE events of this many characters.
    pub chunk_chars: usize,
    /// Pause between SSE events.
    pub chunk_delay: Option<Duration>,
    /// Latency before every model reply (python's `delay_ms`).
    pub delay: Option<Duration>,
    pub fail_first: Option<FailSpec>,
    pub fail_always: Option<FailSpec>,
    pub faults: Vec<FaultRule>,
    pub utility: Vec<UtilityRule>,
    pub utility_defaults: Map<String, Value>,
    pub utility_text: String,
    /// When set, API-key style requests must carry one of these keys.
    pub api_keys: Option<Vec<String>>,
    /// Code Assist setup answers (see [`crate::code_assist`]).
    pub code_assist: crate::code_assist::CodeAssistFake,
}

/// `branches[]`: a script of its own for the requests whose system
/// instruction contains `system_contains` (a subagent has its own prompt
/// and conversation); steps are counted the same way.
#[derive(Debug, Clone, Deserialize)]
pub struct Branch {
    pub system_contains: String,
    pub steps: Vec<Step>,
}

/// One scripted model turn.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Step {
    pub text: Option<String>,
    pub thought: Option<String>,
    #[serde(rename = "functionCalls", alias = "function_calls")]
    pub function_calls: Vec<FunctionCallSpec>,
    /// Raw Gemini parts; when present they are the whole reply.
    pub parts: Option<Vec<Value>>,
    pub match_tool: Option<String>,
    pub finish_reason: Option<String>,
    /// Answer with no candidates and `promptFeedback.blockReason`.
    pub block_reason: Option<String>,
    /// Answer with `"candidates": []`.
    pub empty_candidates: bool,
    /// Replaces the computed `usageMetadata` object.
    pub usage: Option<Value>,
    pub chunk_chars: Option<usize>,
    #[serde(deserialize_with = "opt_millis")]
    pub delay_ms: Option<Duration>,
    #[serde(deserialize_with = "opt_millis")]
    pub chunk_delay_ms: Option<Duration>,
}

/// A scripted `functionCall` part.
#[derive(Debug, Clone, Deserialize)]
pub struct FunctionCallSpec {
    pub name: String,
    #[serde(default = "empty_object")]
    pub args: Value,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default, rename = "thoughtSignature", alias = "thought_signature")]
    pub thought_signature: Option<String>,
}

/// `utility` rule: when `match` is a substring of the request JSON, answer `json` or `text`.
#[derive(Debug, Clone, Deserialize)]
pub struct UtilityRule {
    #[serde(default, rename = "match")]
    pub pattern: String,
    #[serde(default)]
    pub json: Option<Value>,
    #[serde(default)]
    pub text: Option<String>,
    /// Extra fields of the answer's candidate, e.g. `groundingMetadata` for
    /// a google-search grounded answer.
    #[serde(default)]
    pub candidate: Option<serde_json::Map<String, Value>>,
}

/// The scenario used when none is given (same as the reference fake).
pub fn default_scenario() -> Value {
    json!({"name": "default", "steps": [{"text": "OK"}]})
}

/// Resolves a scenario source the way `/__admin/reset` does: `null` → default
/// scenario, a string → path of a JSON file, an object → inline scenario.
/// Then substitutes `vars` and validates.
pub fn load(source: &Value, vars: &[(String, String)]) -> Result<Scenario> {
    let raw = match source {
        Value::Null => default_scenario(),
        Value::String(path) => read_json_file(Path::new(path))?,
        Value::Object(_) => source.clone(),
        other => bail!("scenario must be a file path or a JSON object, got {other}"),
    };
    Scenario::from_value(substitute(raw, vars))
}

/// Reads and validates a scenario file (no substitution).
pub fn read_scenario_file(path: &Path) -> Result<Value> {
    let value = read_json_file(path)?;
    Scenario::from_value(value.clone())
        .with_context(|| format!("invalid scenario in {}", path.display()))?;
    Ok(value)
}

fn read_json_file(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read scenario file {}", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("scenario file {} is not valid JSON", path.display()))
}

/// Replaces `{{NAME}}` in every string value (not keys) by the variable's
/// value, applying the variables in order like the reference fake.
pub fn substitute(value: Value, vars: &[(String, String)]) -> Value {
    if vars.is_empty() {
        return value;
    }
    match value {
        Value::String(mut s) => {
            for (name, val) in vars {
                let pat = format!("{{{{{name}}}}}");
                if s.contains(&pat) {
                    s = s.replace(&pat, val);
                }
            }
            Value::String(s)
        }
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| substitute(v, vars)).collect())
        }
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, substitute(v, vars)))
                .collect(),
        ),
        other => other,
    }
}

/// Converts the `vars` object of an admin reset into ordered pairs; non-string
/// values are stringified like Python's `str()` would for numbers.
pub fn vars_from_json(value: Option<&Value>) -> Result<Vec<(String, String)>> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => Ok(map
            .iter()
            .map(|(k, v)| {
                let s = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), s)
            })
            .collect()),
        Some(other) => bail!("vars must be an object, got {other}"),
    }
}

impl Scenario {
    /// Validates an (already substituted) scenario object.
    pub fn from_value(raw: Value) -> Result<Scenario> {
        let obj = raw
            .as_object()
            .ok_or_else(|| anyhow!("scenario must be a JSON object"))?;
        let field = |name: &str| obj.get(name).filter(|v| !v.is_null());
        fn parse<T: for<'de> Deserialize<'de>>(name: &str, v: &Value) -> Result<T> {
            T::deserialize(v).map_err(|e| anyhow!("scenario field `{name}`: {e}"))
        }

        let name = match field("name") {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        };
        let steps: Vec<Step> = match field("steps") {
            Some(v) => parse("steps", v)?,
            None => Vec::new(),
        };
        let after_steps = match field("after_steps") {
            Some(v) => parse("after_steps", v)?,
            None => Step {
                text: Some("(fake) no more scripted steps.".into()),
                ..Step::default()
            },
        };
        // Like python: an empty `fail_first: {}` means "no fault".
        let fail = |name: &str| -> Result<Option<FailSpec>> {
            match field(name) {
                Some(v) if truthy(v) => Ok(Some(parse(name, v)?)),
                _ => Ok(None),
            }
        };
        let scenario = Scenario {
            name,
            steps,
            branches: match field("branches") {
                Some(v) => parse("branches", v)?,
                None => Vec::new(),
            },
            after_steps,
            chunk_chars: match field("chunk_chars") {
                Some(v) => parse("chunk_chars", v)?,
                None => 0,
            },
            chunk_delay: millis_field(field("chunk_delay_ms"), "chunk_delay_ms")?,
            delay: millis_field(field("delay_ms"), "delay_ms")?,
            fail_first: fail("fail_first")?,
            fail_always: fail("fail_always")?,
            faults: match field("faults") {
                Some(v) => parse::<Vec<Value>>("faults", v)?
                    .iter()
                    .enumerate()
                    .map(|(i, f)| FaultRule::from_json(f).with_context(|| format!("faults[{i}]")))
                    .collect::<Result<_>>()?,
                None => Vec::new(),
            },
            utility: match field("utility") {
                Some(v) => parse("utility", v)?,
                None => Vec::new(),
            },
            utility_defaults: match field("utility_defaults") {
                Some(v) => parse("utility_defaults", v)?,
                None => Map::new(),
            },
            utility_text: match field("utility_text") {
                Some(v) => parse("utility_text", v)?,
                None => "OK".into(),
            },
            api_keys: match field("api_keys") {
                Some(v) => Some(parse("api_keys", v)?),
                None => None,
            },
            code_assist: match field("code_assist") {
                Some(v) => parse("code_assist", v)?,
                None => Default::default(),
            },
            raw: raw.clone(),
        };
        for (i, step) in scenario.steps.iter().enumerate() {
            step.validate().with_context(|| format!("steps[{i}]"))?;
        }
        for (b, branch) in scenario.branches.iter().enumerate() {
            for (i, step) in branch.steps.iter().enumerate() {
                step.validate()
                    .with_context(|| format!("branches[{b}].steps[{i}]"))?;
            }
        }
        scenario.after_steps.validate().context("after_steps")?;
        Ok(scenario)
    }
}

impl Step {
    fn validate(&self) -> Result<()> {
        if let Some(usage) = &self.usage
            && !usage.is_object()
        {
            bail!("`usage` must be an object");
        }
        for fc in &self.function_calls {
            if let Some(rest) = fc.name.strip_prefix("@mcp:")
                && rest.split(':').count() < 2
            {
                bail!(
                    "function call name {:?} must look like @mcp:SERVER:TOOL",
                    fc.name
                );
            }
        }
        Ok(())
    }
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// Milliseconds (integer or fractional, like python's `delay_ms / 1000.0`).
/// A number too big for a `Duration` is an error in the scenario, not a
/// panic of the server (`Duration::from_secs_f64` panics on it).
pub(crate) fn millis(v: &Value) -> Result<Duration> {
    v.as_f64()
        .filter(|ms| *ms >= 0.0)
        .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
        .ok_or_else(|| anyhow!("expected a non-negative number of milliseconds, got {v}"))
}

fn millis_field(v: Option<&Value>, name: &str) -> Result<Option<Duration>> {
    let Some(v) = v else { return Ok(None) };
    let d = millis(v).with_context(|| format!("scenario field `{name}`"))?;
    Ok((!d.is_zero()).then_some(d))
}

/// Serde adapter for optional millisecond fields.
pub(crate) fn opt_millis<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => millis(&v).map(Some).map_err(serde::de::Error::custom),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn substitutes_values_not_keys() {
        let v = json!({"{{A}}": "x{{A}}y", "n": [{"s": "{{B}}"}], "k": 3});
        let out = substitute(v, &vars(&[("A", "1"), ("B", "two")]));
        assert_eq!(out, json!({"{{A}}": "x1y", "n": [{"s": "two"}], "k": 3}));
    }

    #[test]
    fn empty_fail_spec_means_no_fault() {
        let s = Scenario::from_value(json!({"fail_always": {}, "fail_first": {"status": 429}}))
            .unwrap();
        assert!(s.fail_always.is_none());
        assert_eq!(s.fail_first.unwrap().status, Some(429));
    }

    #[test]
    fn rejects_bad_shapes_with_field_names() {
        let err = Scenario::from_value(json!({"steps": "nope"})).unwrap_err();
        assert!(format!("{err:#}").contains("steps"), "{err:#}");
        let err = Scenario::from_value(json!({"steps": [{"usage": 3}]})).unwrap_err();
        assert!(format!("{err:#}").contains("steps[0]"), "{err:#}");
        let err = Scenario::from_value(json!({"faults": [{"request": 1, "kind": "explode"}]}))
            .unwrap_err();
        assert!(format!("{err:#}").contains("faults[0]"), "{err:#}");
        assert!(Scenario::from_value(json!([1])).is_err());
    }

    #[test]
    fn milliseconds_too_big_for_a_duration_are_an_error_not_a_panic() {
        assert_eq!(millis(&json!(1.5)).unwrap(), Duration::from_micros(1500));
        for bad in [json!(1e30), json!(-1), json!("5")] {
            let err = millis(&bad).unwrap_err();
            assert!(err.to_string().contains("milliseconds"), "{err}");
        }
    }

    #[test]
    fn default_after_steps_text() {
        let s = Scenario::from_value(json!({})).unwrap();
        assert_eq!(
            s.after_steps.text.as_deref(),
            Some("(fake) no more scripted steps.")
        );
    }
}
