//! A session's hooks: which run for an event, running them (a sequential
//! group one after another, each seeing the input its predecessors
//! changed; everything else at once), their merged answer, and each hook's
//! last run for the hooks view.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, RwLock};
use std::time::Duration;

use gd_protocol::{HookEventName, HookInfo, HookOutcome, HookRun};
use serde_json::{Map, Value};

use crate::config::{HookDef, HooksConfig};
use crate::output::{HookOutput, Merged, merge};
use crate::run::{Invocation, RawRun, run};
use crate::{event_name, matcher};

/// What every hook of the session runs with.
#[derive(Debug, Clone, Default)]
pub struct HookEnv {
    pub session_id: String,
    /// The session's transcript file.
    pub transcript_path: PathBuf,
    /// The project folder (also the hooks' working directory).
    pub cwd: PathBuf,
    pub plans_dir: PathBuf,
    /// The environment the hooks inherit (already without secrets); the
    /// `GEMINI_*` variables are added to it.
    pub base_env: Vec<(String, String)>,
}

/// The tool call a hook runs for, to key its run for the frontend.
#[derive(Debug, Clone, Default)]
pub struct CallRef {
    pub call_id: Option<String>,
    pub tool_name: Option<String>,
}

/// The result of firing one event.
#[derive(Debug, Clone, Default)]
pub struct Fired {
    /// Each hook's run, in configuration order.
    pub runs: Vec<HookRun>,
    /// The combined answer (`None` when no hook ran or none answered).
    pub merged: Option<Merged>,
}

impl Fired {
    /// A block (`deny`/`block`, or exit 2) with its reason.
    pub fn blocked(&self) -> Option<String> {
        let m = self.merged.as_ref()?;
        m.is_blocking().then(|| m.effective_reason())
    }

    /// `continue: false`, with its reason.
    pub fn stopped(&self) -> Option<String> {
        let m = self.merged.as_ref()?;
        m.stops().then(|| m.effective_reason())
    }

    pub fn additional_context(&self) -> Option<String> {
        self.merged.as_ref()?.additional_context()
    }

    pub fn system_message(&self) -> Option<String> {
        Some(self.merged.as_ref()?.system_message()?.to_owned())
    }

    /// The runs that failed (time-out, could not start, exit 1, killed).
    pub fn failed(&self) -> impl Iterator<Item = &HookRun> {
        self.runs.iter().filter(|r| {
            matches!(
                r.outcome,
                HookOutcome::Warning | HookOutcome::TimedOut | HookOutcome::Failed
            )
        })
    }
}

/// Every hook of a session.
#[derive(Debug)]
pub struct HookRegistry {
    hooks: Vec<HookDef>,
    /// Hooks that are configured but never run here (an untrusted folder's),
    /// listed so the user sees why.
    not_run: Vec<(HookDef, String)>,
    enabled: bool,
    disabled: RwLock<Vec<String>>,
    env: RwLock<HookEnv>,
    last: Mutex<HashMap<String, HookRun>>,
}

impl HookRegistry {
    pub fn new(hooks: Vec<HookDef>, config: HooksConfig, env: HookEnv) -> Self {
        Self {
            hooks,
            not_run: Vec::new(),
            enabled: config.enabled,
            disabled: RwLock::new(config.disabled),
            env: RwLock::new(env),
            last: Mutex::new(HashMap::new()),
        }
    }

    /// No hooks at all (the common case: firing costs nothing).
    pub fn empty() -> Self {
        Self::new(Vec::new(), HooksConfig::default(), HookEnv::default())
    }

    /// Lists `hooks` as configured but not run, with `why`.
    pub fn with_not_run(mut self, hooks: Vec<HookDef>, why: &str) -> Self {
        self.not_run
            .extend(hooks.into_iter().map(|h| (h, why.to_owned())));
        self
    }

    pub fn set_env(&self, env: HookEnv) {
        *self.env.write().unwrap_or_else(|e| e.into_inner()) = env;
    }

    pub fn env(&self) -> HookEnv {
        self.env.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Any hook configured at all (run or not).
    pub fn has_hooks(&self) -> bool {
        !self.hooks.is_empty()
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Whether any hook would run for `event` (so callers can skip building
    /// an input nobody reads).
    pub fn has(&self, event: HookEventName) -> bool {
        self.enabled && self.hooks.iter().any(|h| h.event == event && self.runs(h))
    }

    fn runs(&self, hook: &HookDef) -> bool {
        let disabled = self.disabled.read().unwrap_or_else(|e| e.into_inner());
        !disabled
            .iter()
            .any(|d| Some(d.as_str()) == hook.name.as_deref() || *d == hook.command)
    }

    /// Turns a hook on or off by name (or command) for this session; the
    /// caller writes `hooksConfig.disabled`. `false` when no hook has it.
    pub fn set_enabled(&self, name: &str, enabled: bool) -> bool {
        let known = self
            .hooks
            .iter()
            .chain(self.not_run.iter().map(|(h, _)| h))
            .any(|h| h.name.as_deref() == Some(name) || h.command == name);
        let mut disabled = self.disabled.write().unwrap_or_else(|e| e.into_inner());
        disabled.retain(|d| d != name);
        if !enabled {
            disabled.push(name.to_owned());
        }
        known
    }

    /// The hooks view: every configured hook with its state and last run.
    pub fn infos(&self) -> Vec<HookInfo> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let info = |h: &HookDef, enabled: bool, note: Option<String>| HookInfo {
            id: h.id.clone(),
            event: h.event,
            matcher: h.matcher.clone(),
            name: h.name.clone(),
            command: h.command.clone(),
            description: h.description.clone(),
            timeout_ms: h.timeout_ms,
            sequential: h.sequential,
            source: h.source,
            extension: h.extension.clone(),
            enabled,
            note,
            last_run: last.get(&h.id).cloned(),
        };
        let mut out: Vec<HookInfo> = self
            .hooks
            .iter()
            .map(|h| {
                let on = self.runs(h);
                let note = if !self.enabled {
                    Some("hooks are turned off (hooksConfig.enabled: false)".to_owned())
                } else if !on {
                    Some("turned off (hooksConfig.disabled)".to_owned())
                } else {
                    None
                };
                info(h, on && self.enabled, note)
            })
            .collect();
        out.extend(
            self.not_run
                .iter()
                .map(|(h, why)| info(h, false, Some(why.clone()))),
        );
        out
    }

    /// Runs the hooks of `event` that match `target` (the tool name, or the
    /// lifecycle trigger) with `fields` added to the base input.
    pub async fn fire(
        &self,
        event: HookEventName,
        target: Option<&str>,
        fields: Map<String, Value>,
        call: CallRef,
    ) -> Fired {
        if !self.enabled {
            return Fired::default();
        }
        let chosen: Vec<&HookDef> = self
            .hooks
            .iter()
            .filter(|h| h.event == event && self.runs(h))
            .filter(|h| matcher::matches(event, h.matcher.as_deref(), target))
            .collect();
        if chosen.is_empty() {
            return Fired::default();
        }
        let env = self.env();
        let mut input = Map::new();
        input.insert("session_id".into(), env.session_id.clone().into());
        input.insert(
            "transcript_path".into(),
            env.transcript_path.display().to_string().into(),
        );
        input.insert("cwd".into(), env.cwd.display().to_string().into());
        input.insert("hook_event_name".into(), event_name(event).into());
        input.insert(
            "timestamp".into(),
            chrono::Utc::now()
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
                .into(),
        );
        input.extend(fields);

        // Groups in order; a sequential group is one chain.
        let mut groups: Vec<Vec<&HookDef>> = Vec::new();
        for hook in chosen {
            match groups.last_mut() {
                Some(g) if g[0].sequential && g[0].group == hook.group && hook.sequential => {
                    g.push(hook)
                }
                _ => groups.push(vec![hook]),
            }
        }
        let results = join_all(
            groups
                .iter()
                .map(|group| {
                    let env = &env;
                    let input = input.clone();
                    async move {
                        let mut input = input;
                        let mut out = Vec::new();
                        for hook in group {
                            let (run, output) = run_one(hook, &input, env).await;
                            apply_to_input(event, &mut input, &output);
                            out.push((run, output));
                        }
                        out
                    }
                })
                .collect(),
        )
        .await;
        let mut runs = Vec::new();
        let mut outputs = Vec::new();
        for (mut run, output) in results.into_iter().flatten() {
            run.call_id = call.call_id.clone();
            run.tool_name = call.tool_name.clone();
            runs.push(run);
            outputs.push(output);
        }
        {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            for run in &runs {
                last.insert(run.hook_id.clone(), run.clone());
            }
        }
        Fired {
            merged: merge(event, &outputs),
            runs,
        }
    }
}

/// A minimal `join_all` (the crate has no futures dependency).
async fn join_all<F: std::future::Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut set = Vec::with_capacity(futures.len());
    for f in futures {
        set.push(Box::pin(f));
    }
    let mut results: Vec<Option<F::Output>> = (0..set.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in set.iter_mut().enumerate() {
            if results[i].is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => results[i] = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    results
        .into_iter()
        .map(|r| r.expect("every future finished"))
        .collect()
}

async fn run_one(
    hook: &HookDef,
    input: &Map<String, Value>,
    env: &HookEnv,
) -> (HookRun, HookOutput) {
    let bytes = serde_json::to_vec(input).unwrap_or_default();
    let mut vars = env.base_env.clone();
    let cwd = env.cwd.display().to_string();
    for (k, v) in [
        ("GEMINI_PROJECT_DIR", cwd.clone()),
        ("GEMINI_PLANS_DIR", env.plans_dir.display().to_string()),
        ("GEMINI_CWD", cwd.clone()),
        ("GEMINI_SESSION_ID", env.session_id.clone()),
        ("CLAUDE_PROJECT_DIR", cwd.clone()),
    ] {
        vars.retain(|(name, _)| name != k);
        vars.push((k.to_owned(), v));
    }
    for (k, v) in &hook.env {
        vars.retain(|(name, _)| name != k);
        vars.push((k.clone(), v.clone()));
    }
    let command = expand(&hook.command, env);
    let raw: RawRun = run(Invocation {
        command: &command,
        input: &bytes,
        cwd: &env.cwd,
        env: &vars,
        timeout: Duration::from_millis(hook.timeout_ms),
    })
    .await;
    let output = HookOutput::from_run(&raw, hook.timeout_ms);
    let run = HookRun {
        hook_id: hook.id.clone(),
        event: hook.event,
        label: hook.label().to_owned(),
        outcome: output.outcome.unwrap_or(HookOutcome::Success),
        exit_code: raw.exit_code,
        duration_ms: raw.duration.as_millis() as u64,
        stdout: raw.stdout.clone(),
        stderr: match &output.error {
            Some(error) if raw.stderr.is_empty() => error.clone(),
            Some(error) => format!("{}\n{error}", raw.stderr.trim_end()),
            None => raw.stderr.clone(),
        },
        decision: output.decision().map(str::to_owned),
        reason: (output.is_blocking() || output.stops()).then(|| output.effective_reason()),
        system_message: output.system_message().map(str::to_owned),
        additional_context: output.additional_context(),
        call_id: None,
        tool_name: None,
    };
    (run, output)
}

/// 0.61 replaces these variables in the command text itself (quoted for
/// the shell), besides setting them in the environment.
fn expand(command: &str, env: &HookEnv) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let cwd = quote(&env.cwd.display().to_string());
    command
        .replace("$GEMINI_PROJECT_DIR", &cwd)
        .replace("$GEMINI_CWD", &cwd)
        .replace(
            "$GEMINI_PLANS_DIR",
            &quote(&env.plans_dir.display().to_string()),
        )
        .replace("$GEMINI_SESSION_ID", &quote(&env.session_id))
        .replace("$CLAUDE_PROJECT_DIR", &cwd)
}

/// What a hook of a sequential group passes on to the next one.
fn apply_to_input(event: HookEventName, input: &mut Map<String, Value>, output: &HookOutput) {
    match event {
        HookEventName::BeforeAgent => {
            if let (Some(ctx), Some(Value::String(prompt))) = (
                output.specific("additionalContext").and_then(Value::as_str),
                input.get_mut("prompt"),
            ) {
                prompt.push_str("\n\n");
                prompt.push_str(ctx);
            }
        }
        HookEventName::BeforeTool => {
            if let (Some(Value::Object(new)), Some(Value::Object(args))) =
                (output.specific("tool_input"), input.get_mut("tool_input"))
            {
                args.extend(new.clone());
            }
        }
        HookEventName::BeforeModel => {
            if let (Some(Value::Object(new)), Some(Value::Object(req))) =
                (output.specific("llm_request"), input.get_mut("llm_request"))
            {
                req.extend(new.clone());
            }
        }
        _ => {}
    }
}
