//! The engine: loaded rules plus this session's rules, and the decision for
//! a tool call.

use std::cell::OnceCell;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{RwLock, RwLockReadGuard};

use serde_json::Value;
use tracing::{debug, warn};

use crate::loader::{PolicyError, load_dir, parse_policy_file};
use crate::matched::{Downgrade, MatchedRule};
use crate::rule::{CallId, Decision, Mode, Rule, RuleDecision, RuleSource, Tier};
use crate::shell;
use crate::stable_json::stable_stringify;

/// The file "proceed always and save" appends to, in the user's policy
/// directory (Gemini CLI's name).
pub const AUTO_SAVED_POLICY_FILE: &str = "auto-saved.toml";

/// The built-in policies (Default tier), as shipped in `defaults/`.
const DEFAULT_FILES: &[(&str, &str)] = &[
    ("read-only.toml", include_str!("../defaults/read-only.toml")),
    ("write.toml", include_str!("../defaults/write.toml")),
    ("plan.toml", include_str!("../defaults/plan.toml")),
    ("yolo.toml", include_str!("../defaults/yolo.toml")),
    ("agents.toml", include_str!("../defaults/agents.toml")),
];

/// One tool call as the model made it.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    /// The name the model called (for MCP tools, the declared name, e.g.
    /// `server__tool` or `mcp_server_tool`).
    pub name: &'a str,
    pub args: &'a Value,
    /// For MCP tools, the server the tool belongs to.
    pub mcp_server: Option<&'a str>,
    /// The subagent making the call (`parent/child` when nested); `None`
    /// for the main agent. Rules with `subagent` only match their agent's.
    pub subagent: Option<&'a str>,
}

/// A decision and the rule that made it (`None` when no rule matched and the
/// default `ask_user` applied, or the rule was added without a source).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub decision: Decision,
    pub rule: Option<RuleSource>,
    /// The deciding rule in full (also for rules without a source, such as
    /// this session's "always allow"); `None` when no rule matched. When
    /// `downgrade` is set this is the rule whose decision was downgraded.
    pub matched: Option<MatchedRule>,
    /// Why the decision is stricter than the matched rule's (or, with no
    /// rule, than the default question).
    pub downgrade: Option<Downgrade>,
}

/// Where the policy files are. Each directory's `*.toml` files are read in
/// name order; a missing directory is skipped. A path may also be a single
/// `.toml` file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicySources {
    /// `~/.gemini/policies` (User tier).
    pub user_dir: Option<PathBuf>,
    /// `<workspace>/.gemini/policies` (Workspace tier). Pass it only for a
    /// trusted workspace: its rules can allow tools.
    pub workspace_dir: Option<PathBuf>,
    /// `/etc/gemini-cli/policies` or as configured (Admin tier).
    pub admin_dir: Option<PathBuf>,
    /// The `policies/` folders of the enabled extensions (Extension tier).
    pub extensions: Vec<ExtensionPolicies>,
}

/// One enabled extension's policy folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionPolicies {
    /// The extension's name, for the messages about rules it may not add.
    pub name: String,
    /// `<extension>/policies`.
    pub dir: PathBuf,
}

impl PolicySources {
    /// The usual places: `<home>/.gemini/policies`,
    /// `<workspace>/.gemini/policies` and [`default_admin_dir`].
    pub fn standard(
        home: Option<&Path>,
        workspace: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> PolicySources {
        PolicySources {
            user_dir: home.map(|h| h.join(".gemini").join("policies")),
            workspace_dir: workspace.map(|w| w.join(".gemini").join("policies")),
            admin_dir: Some(default_admin_dir(env)),
            extensions: Vec::new(),
        }
    }
}

/// The admin policy directory, as Gemini CLI finds it: `policies` next to
/// the system settings file (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`, else
/// `/etc/gemini-cli/settings.json`, `/Library/Application
/// Support/GeminiCli/settings.json` on macOS,
/// `C:\ProgramData\gemini-cli\settings.json` on Windows).
pub fn default_admin_dir(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    if let Some(settings) = env("GEMINI_CLI_SYSTEM_SETTINGS_PATH").filter(|s| !s.is_empty()) {
        let settings = PathBuf::from(settings);
        return settings
            .parent()
            .map_or_else(|| PathBuf::from("policies"), |p| p.join("policies"));
    }
    if cfg!(target_os = "macos") {
        PathBuf::from("/Library/Application Support/GeminiCli/policies")
    } else if cfg!(windows) {
        PathBuf::from(r"C:\ProgramData\gemini-cli\policies")
    } else {
        PathBuf::from("/etc/gemini-cli/policies")
    }
}

/// The built-in rules (Default tier), parsed from `defaults/*.toml`.
pub fn default_rules() -> Vec<Rule> {
    let mut rules = Vec::new();
    for (name, text) in DEFAULT_FILES {
        let path = Path::new("<built-in>").join(name);
        match parse_policy_file(text, &path, Tier::Default) {
            Ok(file_rules) => rules.extend(file_rules),
            // The files are tested; this cannot happen in a release.
            Err(errors) => panic!("built-in policy {name} is invalid: {errors:?}"),
        }
    }
    rules
}

/// The policy: decides whether a tool call runs, is denied, or needs the
/// user's approval. Shared between threads; session rules can be added
/// through `&self`.
#[derive(Debug)]
pub struct PolicyEngine {
    rules: Vec<Rule>,
    session: RwLock<Vec<Rule>>,
}

/// The best matching rule so far.
#[derive(Debug, Clone)]
struct Hit {
    priority: u32,
    decision: RuleDecision,
    deny_message: Option<String>,
    source: Option<RuleSource>,
    /// The rule's `allowRedirection`.
    allow_redirection: bool,
    /// The rule itself, and whether it is one of this session's.
    rule: Option<(Rule, bool)>,
    /// The shell command (of several) this hit is about.
    command: Option<String>,
    downgrade: Option<Downgrade>,
}

impl Hit {
    /// No rule matched: ask.
    fn no_rule() -> Hit {
        Hit {
            priority: 0,
            decision: RuleDecision::AskUser,
            deny_message: None,
            source: None,
            allow_redirection: false,
            rule: None,
            command: None,
            downgrade: None,
        }
    }

    fn of(rule: &Rule, session: bool) -> Hit {
        Hit {
            priority: rule.effective_priority(),
            decision: rule.decision,
            deny_message: rule.deny_message.clone(),
            source: rule.source.clone(),
            allow_redirection: rule.allow_redirection,
            rule: Some((rule.clone(), session)),
            command: None,
            downgrade: None,
        }
    }

    /// An allow turned into a question: no rule decides any more, but the
    /// allowing rule is kept so the verdict can say what was overruled.
    fn downgraded(self, why: Downgrade) -> Hit {
        Hit {
            rule: self.rule,
            command: self.command,
            downgrade: Some(why),
            ..Hit::no_rule()
        }
    }

    /// For a command that redirects to a file: an allow becomes a question
    /// unless the allowing rule has `allowRedirection`.
    fn without_redirection(self, command: &str) -> Hit {
        if self.decision == RuleDecision::Allow && !self.allow_redirection {
            self.downgraded(Downgrade::Redirection {
                command: command.to_owned(),
            })
        } else {
            self
        }
    }

    /// The more restrictive of two decisions (the first on a tie).
    fn stricter(self, other: Hit) -> Hit {
        if other.decision > self.decision {
            other
        } else {
            self
        }
    }
}

/// Loads an extension's policy folder at the Extension tier, keeping only
/// what cannot loosen the user's approvals (0.61's rule): an `allow` rule,
/// or any rule that names yolo mode, is dropped with a message at its line,
/// so a user reading the policy errors sees why it has no effect.
fn load_extension_dir(
    extension: &ExtensionPolicies,
    rules: &mut Vec<Rule>,
    errors: &mut Vec<PolicyError>,
) {
    let mut loaded = Vec::new();
    load_dir(&extension.dir, Tier::Extension, &mut loaded, errors);
    for rule in loaded {
        let refused = if rule.decision == RuleDecision::Allow {
            Some("an ALLOW rule")
        } else if rule.modes.contains(&Mode::Yolo) {
            Some("a rule for YOLO mode")
        } else {
            None
        };
        match (refused, &rule.source) {
            (None, _) => rules.push(rule),
            (Some(what), source) => {
                let message = format!(
                    "extension \"{}\" attempted to contribute {what}; ignored for security",
                    extension.name
                );
                warn!(extension = %extension.name, "{message}");
                errors.push(PolicyError {
                    path: source
                        .as_ref()
                        .map_or_else(|| extension.dir.clone(), |s| s.path.clone()),
                    line: source.as_ref().map_or(0, |s| s.line),
                    column: usize::from(source.is_some()),
                    message,
                });
            }
        }
    }
}

impl PolicyEngine {
    /// An engine with exactly these rules (no built-in ones; see
    /// [`default_rules`]).
    pub fn new(rules: Vec<Rule>) -> PolicyEngine {
        PolicyEngine {
            rules,
            session: RwLock::new(Vec::new()),
        }
    }

    /// The built-in rules, then every policy file of `sources` (Extension,
    /// Workspace, User, Admin). Never fails as a whole: a file with errors is skipped
    /// and its errors returned, the others load. A workspace directory that
    /// is the user directory (a workspace at `$HOME`) is read once, as User.
    pub fn load(sources: &PolicySources) -> (PolicyEngine, Vec<PolicyError>) {
        let mut rules = default_rules();
        let mut errors = Vec::new();
        let same_as_user = match (&sources.workspace_dir, &sources.user_dir) {
            (Some(ws), Some(user)) => {
                ws == user
                    || matches!((ws.canonicalize(), user.canonicalize()), (Ok(a), Ok(b)) if a == b)
            }
            _ => false,
        };
        for extension in &sources.extensions {
            load_extension_dir(extension, &mut rules, &mut errors);
        }
        if let Some(dir) = &sources.workspace_dir
            && !same_as_user
        {
            load_dir(dir, Tier::Workspace, &mut rules, &mut errors);
        }
        if let Some(dir) = &sources.user_dir {
            load_dir(dir, Tier::User, &mut rules, &mut errors);
        }
        if let Some(dir) = &sources.admin_dir {
            load_dir(dir, Tier::Admin, &mut rules, &mut errors);
        }
        debug!(rules = rules.len(), errors = errors.len(), "policy loaded");
        (PolicyEngine::new(rules), errors)
    }

    /// Adds rules that hold for the engine's whole life, e.g. those derived
    /// from settings (trusted MCP servers). They weigh like any rule of
    /// their tier and priority.
    pub fn add_rules(&mut self, rules: impl IntoIterator<Item = Rule>) {
        self.rules.extend(rules);
    }

    /// The loaded rules (built-in and from files), not the session's.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The rules added during this session.
    pub fn session_rules(&self) -> Vec<Rule> {
        self.session().clone()
    }

    fn session(&self) -> RwLockReadGuard<'_, Vec<Rule>> {
        self.session.read().unwrap_or_else(|e| e.into_inner())
    }

    /// "Proceed always": the rule applies for the rest of this session. It
    /// weighs like any rule of its tier and priority (see
    /// [`Rule::effective_priority`]).
    pub fn add_session_rule(&self, rule: Rule) {
        self.session
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(rule);
    }

    /// "Proceed always and save": appends the rule as a `[[rule]]` table to
    /// `file` (usually `~/.gemini/policies/auto-saved.toml`; directories are
    /// created, the existing content is kept as it is) and adds it as a
    /// session rule. The rule is written only if it reads back as the same
    /// rule; when loaded again it takes the tier of the directory the file
    /// is in.
    pub fn save_rule(&self, rule: &Rule, file: &Path) -> io::Result<()> {
        let text = render_rule(rule);
        match parse_policy_file(&text, file, rule.tier) {
            Ok(parsed) if parsed.len() == 1 => {}
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "rule did not render",
                ));
            }
            Err(errors) => {
                let messages: Vec<String> = errors.iter().map(|e| e.message.clone()).collect();
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("this rule cannot be saved: {}", messages.join("; ")),
                ));
            }
        }
        if let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let existing = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let mut out = String::new();
        if !existing.is_empty() && !existing.ends_with('\n') {
            out.push('\n');
        }
        if !existing.trim().is_empty() {
            out.push('\n');
        }
        // The line of the new `[[rule]]` header.
        let line = existing.matches('\n').count() + out.matches('\n').count() + 1;
        out.push_str(&text);
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)?
            .write_all(out.as_bytes())?;
        debug!(path = %file.display(), "policy rule saved");
        self.add_session_rule(Rule {
            source: Some(RuleSource {
                path: file.to_owned(),
                line,
            }),
            ..rule.clone()
        });
        Ok(())
    }

    /// The decision for `call` in `mode`. See [`PolicyEngine::check`].
    pub fn decide(&self, call: &ToolCall<'_>, mode: Mode, interactive: bool) -> Decision {
        self.check(call, mode, interactive).decision
    }

    /// The decision for `call` in `mode`, and the rule that made it.
    ///
    /// The matching rule with the highest effective priority wins; at equal
    /// priority `deny` beats `ask_user` beats `allow`; no match means
    /// `ask_user`. A shell command is also decided command by command (see
    /// [`shell::analyze`]) and the most restrictive result holds; a
    /// redirection to a file or an analysis that cannot prove which commands
    /// run turns an allow into `ask_user`. In
    /// a non-interactive session `ask_user` becomes `deny`.
    pub fn check(&self, call: &ToolCall<'_>, mode: Mode, interactive: bool) -> Verdict {
        let id = CallId {
            subagent: call.subagent,
            ..CallId::new(call.name, call.mcp_server)
        };
        let session = self.session();
        let command = if id.is_shell() {
            call.args.get("command").and_then(Value::as_str)
        } else {
            None
        };
        let hit = match command {
            Some(command) => self.check_shell(&session, &id, call.args, command, mode, interactive),
            None => self
                .best_match(&session, &id, call.args, None, mode, interactive)
                .unwrap_or_else(Hit::no_rule),
        };
        let mut downgrade = hit.downgrade;
        let decision = match hit.decision {
            RuleDecision::Allow => Decision::Allow,
            RuleDecision::Deny => Decision::Deny {
                message: hit.deny_message,
            },
            RuleDecision::AskUser if interactive => Decision::AskUser,
            RuleDecision::AskUser => {
                downgrade.get_or_insert(Downgrade::NonInteractive);
                Decision::Deny {
                    message: Some(non_interactive_message(call.name)),
                }
            }
        };
        let matched = hit.rule.map(|(rule, session)| {
            MatchedRule::describe(&rule, session, hit.command, &builtin_text)
        });
        Verdict {
            decision,
            rule: hit.source,
            matched,
            downgrade,
        }
    }

    /// The shell part of [`PolicyEngine::check`]: every command the
    /// analysis finds is decided with `command` replaced by its text, the
    /// most restrictive result holds; an allow does not cover a redirection
    /// to a file unless its rule says `allowRedirection` (except in autoEdit
    /// and yolo modes, as in Gemini CLI); an unproven analysis asks (except
    /// in yolo mode, which asks nothing).
    fn check_shell(
        &self,
        session: &[Rule],
        id: &CallId<'_>,
        args: &Value,
        command: &str,
        mode: Mode,
        interactive: bool,
    ) -> Hit {
        let whole = self.best_match(session, id, args, Some(command), mode, interactive);
        let (found, unproven) = shell::analyze_found(command);
        let redirections_matter = !matches!(mode, Mode::AutoEdit | Mode::Yolo);
        let redirects = found
            .iter()
            .any(|f| !f.command.file_redirections.is_empty());
        // No rule about the whole text is no verdict while its commands
        // are decided one by one (`X=1; echo $X` is the `echo` rule's).
        let mut hit = whole.map(|h| {
            if redirections_matter && redirects {
                h.without_redirection(command)
            } else {
                h
            }
        });
        let stricter = |hit: &mut Option<Hit>, other: Hit| {
            *hit = Some(match hit.take() {
                Some(h) => h.stricter(other),
                None => other,
            });
        };
        for part in &found {
            let text = &part.command.text;
            let has_redirection = !part.command.file_redirections.is_empty();
            if part.assignment_only {
                // `X=1` runs no program: no rule has to allow it (its risks
                // make the analysis unproven), but `X=1 > f` writes a file.
                if has_redirection && redirections_matter {
                    stricter(
                        &mut hit,
                        Hit {
                            downgrade: Some(Downgrade::Redirection {
                                command: text.clone(),
                            }),
                            ..Hit::no_rule()
                        },
                    );
                }
                continue;
            }
            let mut part_args = args.clone();
            if let Some(object) = part_args.as_object_mut() {
                object.insert("command".to_owned(), Value::String(text.clone()));
            }
            let mut part_hit = self.best(session, id, &part_args, Some(text), mode, interactive);
            part_hit.command = Some(text.clone());
            if redirections_matter && has_redirection {
                part_hit = part_hit.without_redirection(text);
            }
            stricter(&mut hit, part_hit);
        }
        let mut hit = hit.unwrap_or_else(Hit::no_rule);
        if !unproven.is_empty() && mode != Mode::Yolo {
            debug!(?unproven, "shell command not proven; asking");
            let why = Downgrade::Unproven { reasons: unproven };
            if hit.decision == RuleDecision::Allow {
                hit = hit.downgraded(why);
            } else if hit.decision == RuleDecision::AskUser && hit.downgrade.is_none() {
                hit.downgrade = Some(why);
            }
        }
        hit
    }

    fn best(
        &self,
        session: &[Rule],
        id: &CallId<'_>,
        args: &Value,
        command: Option<&str>,
        mode: Mode,
        interactive: bool,
    ) -> Hit {
        self.best_match(session, id, args, command, mode, interactive)
            .unwrap_or_else(Hit::no_rule)
    }

    /// The best matching rule, if any matches.
    fn best_match(
        &self,
        session: &[Rule],
        id: &CallId<'_>,
        args: &Value,
        command: Option<&str>,
        mode: Mode,
        interactive: bool,
    ) -> Option<Hit> {
        let json = OnceCell::new();
        let args_json = || json.get_or_init(|| stable_stringify(args)).as_str();
        let mut best: Option<Hit> = None;
        for (i, rule) in self.rules.iter().chain(session).enumerate() {
            if !rule.applies_in(mode)
                || !rule.applies_when(interactive)
                || !rule.applies_to(id.subagent)
                || !rule.matches_tool(id)
                || !rule.matches_args(&args_json, command)
            {
                continue;
            }
            let better = best.as_ref().is_none_or(|b| {
                (rule.effective_priority(), rule.decision) > (b.priority, b.decision)
            });
            if better {
                best = Some(Hit::of(rule, i >= self.rules.len()));
            }
        }
        best
    }

    /// Whether to declare the tool to the model: `false` when every call of
    /// it would be denied in `mode` (or, when not `interactive`, denied or
    /// asked, which is the same there), whatever its arguments.
    ///
    /// Rules that look at the arguments (`argsPattern`, `commandPrefix`,
    /// `commandRegex`) may or may not apply, so an allowing one ranked above
    /// the first unconditional rule means some calls run: a headless session
    /// with `commandPrefix = "git status"` allowed still gets the shell tool.
    pub fn would_declare(
        &self,
        tool_name: &str,
        mcp_server: Option<&str>,
        mode: Mode,
        interactive: bool,
    ) -> bool {
        let id = CallId::new(tool_name, mcp_server);
        let session = self.session();
        let mut candidates: Vec<&Rule> = self
            .rules
            .iter()
            .chain(session.iter())
            .filter(|r| {
                r.applies_in(mode)
                    && r.applies_when(interactive)
                    && r.applies_to(None)
                    && r.matches_tool(&id)
            })
            .collect();
        candidates.sort_by_key(|r| std::cmp::Reverse((r.effective_priority(), r.decision)));
        let runs = |d: RuleDecision| match d {
            RuleDecision::Allow => true,
            RuleDecision::AskUser => interactive,
            RuleDecision::Deny => false,
        };
        for rule in candidates {
            if runs(rule.decision) {
                return true;
            }
            if !rule.has_args_conditions() {
                return false;
            }
        }
        runs(RuleDecision::AskUser)
    }
}

fn non_interactive_message(tool: &str) -> String {
    format!(
        "Tool \"{tool}\" needs the user's approval, but this session is non-interactive and cannot ask. \
         Allow it with a policy rule or use a more permissive approval mode."
    )
}

/// A TOML string (quoted and escaped as needed).
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

fn toml_list<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let items: Vec<String> = items.into_iter().map(toml_string).collect();
    format!("[{}]", items.join(", "))
}

/// The embedded text of a built-in policy file, by name.
fn builtin_text(name: &str) -> Option<&'static str> {
    DEFAULT_FILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// One `[[rule]]` table, ending with a newline: what
/// [`PolicyEngine::save_rule`] appends (also its preview).
pub fn render_rule(rule: &Rule) -> String {
    let mut out = String::from("[[rule]]\n");
    match rule.tool_names.as_slice() {
        [] => {}
        [one] => out.push_str(&format!("toolName = {}\n", toml_string(one))),
        many => out.push_str(&format!(
            "toolName = {}\n",
            toml_list(many.iter().map(String::as_str))
        )),
    }
    if let Some(mcp) = &rule.mcp_name {
        out.push_str(&format!("mcpName = {}\n", toml_string(mcp)));
    }
    if let Some(agent) = &rule.subagent {
        out.push_str(&format!("subagent = {}\n", toml_string(agent)));
    }
    if let Some(re) = &rule.args_pattern {
        out.push_str(&format!("argsPattern = {}\n", toml_string(re.as_str())));
    }
    match rule.command_prefixes.as_slice() {
        [] => {}
        [one] => out.push_str(&format!("commandPrefix = {}\n", toml_string(one))),
        many => out.push_str(&format!(
            "commandPrefix = {}\n",
            toml_list(many.iter().map(String::as_str))
        )),
    }
    if let Some(re) = &rule.command_regex {
        out.push_str(&format!("commandRegex = {}\n", toml_string(re.as_str())));
    }
    if rule.allow_redirection {
        out.push_str("allowRedirection = true\n");
    }
    out.push_str(&format!("decision = \"{}\"\n", rule.decision.as_str()));
    out.push_str(&format!("priority = {}\n", rule.priority));
    if !rule.modes.is_empty() {
        out.push_str(&format!(
            "modes = {}\n",
            toml_list(rule.modes.iter().map(|m| m.as_str()))
        ));
    }
    if let Some(interactive) = rule.interactive {
        out.push_str(&format!("interactive = {interactive}\n"));
    }
    if let Some(message) = &rule.deny_message {
        out.push_str(&format!("deny_message = {}\n", toml_string(message)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_policies_parse() {
        let rules = default_rules();
        assert!(rules.len() >= 5);
        assert!(rules.iter().all(|r| r.tier == Tier::Default));
        assert!(
            rules
                .iter()
                .all(|r| r.source.as_ref().unwrap().path.starts_with("<built-in>"))
        );
    }

    #[test]
    fn rendered_rules_read_back() {
        let mut rule = Rule::for_command_prefix("echo \"hi\" \\ 'x'", RuleDecision::Allow);
        rule.priority = 950;
        rule.modes = vec![Mode::Default, Mode::AutoEdit];
        rule.allow_redirection = true;
        let text = render_rule(&rule);
        let back = parse_policy_file(&text, Path::new("x.toml"), Tier::User).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].command_prefixes, rule.command_prefixes);
        assert_eq!(back[0].tool_names, ["run_shell_command"]);
        assert_eq!(back[0].modes, rule.modes);
        assert_eq!(back[0].priority, 950);
        assert!(back[0].allow_redirection);
        assert!(text.contains("allowRedirection = true"));
    }
}
