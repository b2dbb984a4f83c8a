//! Rules, decisions, modes and tiers, and how one rule matches a tool call.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::LazyRegex;

/// The shell tool; `commandPrefix` and `commandRegex` apply to it.
pub const SHELL_TOOL_NAME: &str = "run_shell_command";

/// Tool names that are the same tool (Gemini CLI renamed `grep`'s tool). A
/// rule naming either name applies to both.
const TOOL_ALIASES: &[(&str, &str)] = &[("search_file_content", "grep_search")];

fn canonical_tool_name(name: &str) -> &str {
    TOOL_ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, canonical)| canonical)
}

/// The approval mode of a session. Rules with `modes` apply only in those.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Ask before anything that is not read-only.
    Default,
    /// File edits are allowed without asking.
    AutoEdit,
    /// Everything is allowed without asking.
    Yolo,
    /// Read-only: the model plans, nothing is changed.
    Plan,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Default, Mode::AutoEdit, Mode::Yolo, Mode::Plan];

    /// The name used in policy files and by Gemini CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::AutoEdit => "autoEdit",
            Mode::Yolo => "yolo",
            Mode::Plan => "plan",
        }
    }
}

impl FromStr for Mode {
    type Err = String;

    /// `default`, `autoEdit` (also `auto_edit`), `yolo`, `plan`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "default" => Ok(Mode::Default),
            "autoEdit" | "auto_edit" => Ok(Mode::AutoEdit),
            "yolo" => Ok(Mode::Yolo),
            "plan" => Ok(Mode::Plan),
            _ => Err(format!(
                "unknown mode `{s}`: expected \"default\", \"autoEdit\", \"yolo\" or \"plan\""
            )),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the engine says about one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it without asking.
    Allow,
    /// Do not run it; the message (a rule's `deny_message`, or why) is for
    /// the model and the user.
    Deny { message: Option<String> },
    /// Ask the user first.
    AskUser,
}

impl Decision {
    pub fn is_allow(&self) -> bool {
        matches!(self, Decision::Allow)
    }

    pub fn is_deny(&self) -> bool {
        matches!(self, Decision::Deny { .. })
    }
}

/// A rule's `decision`. Ordered by restrictiveness: `Allow < AskUser < Deny`,
/// which breaks ties between rules of equal priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RuleDecision {
    Allow,
    AskUser,
    Deny,
}

impl RuleDecision {
    /// The name used in policy files.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleDecision::Allow => "allow",
            RuleDecision::AskUser => "ask_user",
            RuleDecision::Deny => "deny",
        }
    }
}

impl FromStr for RuleDecision {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "allow" => Ok(RuleDecision::Allow),
            "deny" => Ok(RuleDecision::Deny),
            "ask_user" => Ok(RuleDecision::AskUser),
            _ => Err(format!(
                "invalid decision `{s}`: expected \"allow\", \"deny\" or \"ask_user\""
            )),
        }
    }
}

impl fmt::Display for RuleDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a rule came from, which decides how much it weighs.
///
/// A rule's effective priority is `tier base + priority / 1000`; any rule of
/// a higher tier beats every rule of a lower one. The bases are Gemini CLI's
/// current ones (its docs still show the older Default 1, User 2, Admin 3):
///
/// | tier      | base | directory                     |
/// |-----------|------|-------------------------------|
/// | Default   | 1    | built in (`defaults/*.toml`)  |
/// | Extension | 2    | an enabled extension's `policies/` (no `allow`, no `yolo`) |
/// | Workspace | 3    | `<workspace>/.gemini/policies` |
/// | User      | 4    | `~/.gemini/policies`          |
/// | Admin     | 5    | `/etc/gemini-cli/policies`    |
///
/// Workspace is below User on purpose: a repository's policy files come
/// with the code, not from the user, so they must not override the user's
/// own rules (for example turn a user's `deny` into an `allow`). They still
/// override the built-in defaults, which is what a project needs to allow
/// its own build commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    Default,
    /// An enabled extension's `policies/*.toml`. Only `ask_user` and `deny`
    /// rules outside yolo mode are kept (see `PolicyEngine::load`): an
    /// extension may make the agent more careful, never less.
    Extension,
    Workspace,
    User,
    Admin,
}

impl Tier {
    pub const fn base(self) -> u32 {
        match self {
            Tier::Default => 1,
            Tier::Extension => 2,
            Tier::Workspace => 3,
            Tier::User => 4,
            Tier::Admin => 5,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Default => "default",
            Tier::Extension => "extension",
            Tier::Workspace => "workspace",
            Tier::User => "user",
            Tier::Admin => "admin",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The file and line (1-based, of its `[[rule]]` header) a rule was read
/// from. Built-in rules have paths like `<built-in>/read-only.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSource {
    pub path: PathBuf,
    pub line: usize,
}

impl fmt::Display for RuleSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.path.display(), self.line)
    }
}

/// One policy rule: conditions, a decision and a priority.
///
/// All conditions must hold for the rule to apply. The fields are the TOML
/// fields after checking (see the crate README):
/// `commandPrefix`/`commandRegex` set `tool_names` to `run_shell_command`
/// when `toolName` is absent.
#[derive(Debug, Clone)]
pub struct Rule {
    /// `toolName`: tool names or patterns (`*`, `server__*`, `server__tool`,
    /// `mcp_server_*`). Empty means any tool (or, with `mcp_name`, any tool
    /// of that server).
    pub tool_names: Vec<String>,
    /// `mcpName`: the rule is about tools of this MCP server (`*` = any
    /// server). With `tool_names`, each name is a tool of that server.
    pub mcp_name: Option<String>,
    /// `subagent` (0.61): the rule is only about the calls this subagent
    /// makes (`parent/child` for one a subagent started); unset, about
    /// every call, the main agent's and every subagent's.
    pub subagent: Option<String>,
    /// `argsPattern`, searched for in the stable JSON of the arguments.
    pub args_pattern: Option<LazyRegex>,
    /// `commandPrefix`: the shell command starts with one of these.
    pub command_prefixes: Vec<String>,
    /// `commandRegex`, searched for in the shell command text.
    pub command_regex: Option<LazyRegex>,
    pub decision: RuleDecision,
    /// 0..=999, the order within the tier.
    pub priority: u16,
    /// The modes the rule applies in; empty means all.
    pub modes: Vec<Mode>,
    /// `interactive` (Gemini CLI's key): the rule applies only in
    /// interactive sessions (`true`) or only in headless ones (`false`);
    /// unset, in both.
    pub interactive: Option<bool>,
    /// `deny_message`: returned with a `deny` decision.
    pub deny_message: Option<String>,
    /// `allowRedirection` (or `allow_redirection`): an allow also covers
    /// shell commands that redirect output to (or input from) a file;
    /// without it such a command is asked about.
    pub allow_redirection: bool,
    pub tier: Tier,
    pub source: Option<RuleSource>,
}

impl Rule {
    /// A rule about one tool (or tool pattern), any arguments, any mode,
    /// priority 0, User tier. Adjust the public fields as needed.
    pub fn for_tool(tool_name: impl Into<String>, decision: RuleDecision) -> Rule {
        Rule {
            tool_names: vec![tool_name.into()],
            ..Rule::any_tool(decision)
        }
    }

    /// A rule about every tool.
    pub fn any_tool(decision: RuleDecision) -> Rule {
        Rule {
            tool_names: Vec::new(),
            mcp_name: None,
            subagent: None,
            args_pattern: None,
            command_prefixes: Vec::new(),
            command_regex: None,
            decision,
            priority: 0,
            modes: Vec::new(),
            interactive: None,
            deny_message: None,
            allow_redirection: false,
            tier: Tier::User,
            source: None,
        }
    }

    /// A `run_shell_command` rule for commands starting with `prefix`.
    pub fn for_command_prefix(prefix: impl Into<String>, decision: RuleDecision) -> Rule {
        Rule {
            command_prefixes: vec![prefix.into()],
            ..Rule::for_tool(SHELL_TOOL_NAME, decision)
        }
    }

    /// `tier base * 1000 + priority`: the documented `tier + priority/1000`
    /// in thousandths, so it compares exactly.
    pub fn effective_priority(&self) -> u32 {
        self.tier.base() * 1000 + u32::from(self.priority)
    }

    /// Whether the rule looks at the arguments (`argsPattern`,
    /// `commandPrefix`, `commandRegex`), so that it may or may not apply to
    /// a call of a tool it names.
    pub fn has_args_conditions(&self) -> bool {
        self.args_pattern.is_some()
            || !self.command_prefixes.is_empty()
            || self.command_regex.is_some()
    }

    pub fn applies_in(&self, mode: Mode) -> bool {
        self.modes.is_empty() || self.modes.contains(&mode)
    }

    /// Whether the rule is about calls made by `subagent` (`None`: the
    /// main agent). A rule without `subagent` is about every caller.
    pub fn applies_to(&self, subagent: Option<&str>) -> bool {
        self.subagent
            .as_deref()
            .is_none_or(|wanted| Some(wanted) == subagent)
    }

    /// Whether the rule applies in an interactive (or headless) session.
    pub fn applies_when(&self, interactive: bool) -> bool {
        self.interactive.is_none_or(|wanted| wanted == interactive)
    }

    /// Whether the rule names the called tool (ignoring arguments and mode).
    pub(crate) fn matches_tool(&self, call: &CallId<'_>) -> bool {
        match self.mcp_name.as_deref() {
            Some(server) => {
                let Some(bare) = call.bare_in_server(server) else {
                    return false;
                };
                self.tool_names.is_empty()
                    || self.tool_names.iter().any(|t| {
                        t == "*"
                            || t == bare
                            || t.strip_prefix(server).and_then(|r| r.strip_prefix("__"))
                                == Some(bare)
                    })
            }
            None => {
                self.tool_names.is_empty()
                    || self.tool_names.iter().any(|t| call.matches_pattern(t))
            }
        }
    }

    /// Whether a regex condition holds. A regex that cannot be compiled
    /// (too big, found only when first used) gives no answer; the rule is
    /// then taken to match unless it allows, so what cannot be checked is
    /// never allowed by it and never escapes a `deny` or `ask_user`.
    fn regex_holds(&self, re: &LazyRegex, text: &str) -> bool {
        re.is_match(text)
            .unwrap_or(self.decision != RuleDecision::Allow)
    }

    /// Whether the rule applies to a call of a tool it names: the argument
    /// conditions. `args_json` is the stable JSON of the arguments;
    /// `command` is the shell command text (only for shell calls).
    pub(crate) fn matches_args<'s>(
        &self,
        args_json: &dyn Fn() -> &'s str,
        command: Option<&str>,
    ) -> bool {
        if !self.command_prefixes.is_empty() {
            let Some(command) = command else { return false };
            if !self
                .command_prefixes
                .iter()
                .any(|p| prefix_matches(command, p))
            {
                return false;
            }
        }
        if let Some(re) = &self.command_regex {
            let Some(command) = command else { return false };
            if !self.regex_holds(re, command) {
                return false;
            }
        }
        if let Some(re) = &self.args_pattern
            && !self.regex_holds(re, args_json())
        {
            return false;
        }
        true
    }
}

/// `commandPrefix`: the command (leading whitespace ignored) starts with the
/// prefix, and the prefix ends at a word boundary: `git` matches `git` and
/// `git status` but not `gitk` (as in Gemini CLI). A prefix that ends in
/// whitespace (`"git "`) needs nothing more.
pub(crate) fn prefix_matches(command: &str, prefix: &str) -> bool {
    let command = command.trim_start();
    let Some(rest) = command.strip_prefix(prefix) else {
        return false;
    };
    prefix.is_empty()
        || prefix.ends_with(char::is_whitespace)
        || rest.is_empty()
        || rest.starts_with(char::is_whitespace)
}

/// Who a call is: its name, and for an MCP tool its server and the tool's
/// name on that server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallId<'a> {
    pub name: &'a str,
    pub server: Option<&'a str>,
    /// The tool's own name (`tool` in `server__tool`), aliases resolved for
    /// built-in tools.
    pub bare: &'a str,
    /// The subagent making the call (`None`: the main agent).
    pub subagent: Option<&'a str>,
}

impl<'a> CallId<'a> {
    /// `mcp_server` from the registry when known; otherwise a `server__tool`
    /// name is taken to be an MCP tool.
    pub fn new(name: &'a str, mcp_server: Option<&'a str>) -> CallId<'a> {
        if let Some(server) = mcp_server {
            let bare = name
                .strip_prefix(server)
                .and_then(|r| r.strip_prefix("__"))
                .or_else(|| {
                    name.strip_prefix("mcp_")
                        .and_then(|r| r.strip_prefix(server))
                        .and_then(|r| r.strip_prefix('_'))
                })
                .unwrap_or(name);
            return CallId {
                name,
                server: Some(server),
                bare,
                subagent: None,
            };
        }
        match name.split_once("__") {
            Some((server, bare)) if !server.is_empty() && !bare.is_empty() => CallId {
                name,
                server: Some(server),
                bare,
                subagent: None,
            },
            _ => CallId {
                name,
                server: None,
                bare: canonical_tool_name(name),
                subagent: None,
            },
        }
    }

    pub fn is_shell(&self) -> bool {
        self.server.is_none() && self.bare == SHELL_TOOL_NAME
    }

    /// The tool's name on `server` (`*` = any server) when it is a tool of
    /// that server. A name of the form `mcp_<server>_<tool>` (Gemini CLI
    /// 0.61's declared names) counts when no server is known.
    fn bare_in_server(&self, server: &str) -> Option<&'a str> {
        match self.server {
            Some(s) if server == "*" || s == server => Some(self.bare),
            Some(_) => None,
            None if server == "*" => self.name.strip_prefix("mcp_"),
            None => self
                .name
                .strip_prefix("mcp_")
                .and_then(|r| r.strip_prefix(server))
                .and_then(|r| r.strip_prefix('_'))
                .filter(|t| !t.is_empty()),
        }
    }

    /// A `toolName` value without `mcpName`.
    fn matches_pattern(&self, pattern: &str) -> bool {
        if pattern == "*" {
            return true;
        }
        if pattern == "mcp_*" {
            return self.bare_in_server("*").is_some();
        }
        // `server__*` and `server__tool` (the documented MCP forms).
        if let Some((server, tool)) = pattern.split_once("__")
            && !server.is_empty()
            && !tool.is_empty()
        {
            return match self.bare_in_server(server) {
                Some(bare) => tool == "*" || tool == bare,
                None => false,
            };
        }
        // `mcp_server_*` (Gemini CLI's newer form).
        if let Some(server) = pattern
            .strip_prefix("mcp_")
            .and_then(|r| r.strip_suffix("_*"))
            && !server.is_empty()
        {
            return self.bare_in_server(server).is_some();
        }
        // `mcp_server_tool`: the full name, either as called or built from
        // the known server.
        if pattern.starts_with("mcp_") {
            return pattern == self.name
                || self.server.is_some_and(|s| {
                    pattern
                        .strip_prefix("mcp_")
                        .and_then(|r| r.strip_prefix(s))
                        .and_then(|r| r.strip_prefix('_'))
                        == Some(self.bare)
                });
        }
        // A built-in tool: never an MCP server's tool of the same name.
        self.server.is_none() && canonical_tool_name(pattern) == self.bare
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(names: &[&str], mcp: Option<&str>) -> Rule {
        Rule {
            tool_names: names.iter().map(|s| s.to_string()).collect(),
            mcp_name: mcp.map(str::to_owned),
            ..Rule::any_tool(RuleDecision::Allow)
        }
    }

    #[test]
    fn tool_name_matching_table() {
        // (rule toolName, rule mcpName, call name, call server, matches)
        type Case<'a> = (
            &'a [&'a str],
            Option<&'a str>,
            &'a str,
            Option<&'a str>,
            bool,
        );
        let cases: &[Case<'_>] = &[
            (&["read_file"], None, "read_file", None, true),
            (&["read_file"], None, "write_file", None, false),
            (&["read_file"], None, "read_file", Some("srv"), false),
            (&["read_file"], None, "srv__read_file", None, false),
            (&[], None, "anything", None, true),
            (&["*"], None, "srv__x", None, true),
            (&["grep_search"], None, "search_file_content", None, true),
            (&["search_file_content"], None, "grep_search", None, true),
            (&["srv__*"], None, "srv__search", None, true),
            (&["srv__*"], None, "search", Some("srv"), true),
            (&["srv__*"], None, "mcp_srv_search", None, true),
            (&["srv__*"], None, "other__search", None, false),
            (&["srv__*"], None, "search", Some("other"), false),
            (&["srv__*"], None, "srv_search", None, false),
            (&["srv__search"], None, "srv__search", None, true),
            (&["srv__search"], None, "search", Some("srv"), true),
            (&["srv__search"], None, "srv__other", None, false),
            (&["search"], Some("srv"), "srv__search", None, true),
            (&["search"], Some("srv"), "search", Some("srv"), true),
            (
                &["search"],
                Some("srv"),
                "mcp_srv_search",
                Some("srv"),
                true,
            ),
            (&["search"], Some("srv"), "mcp_srv_search", None, true),
            (&["search"], Some("srv"), "search", None, false),
            (&["search"], Some("srv"), "srv__delete", None, false),
            (&[], Some("srv"), "srv__delete", None, true),
            (&[], Some("srv"), "delete", Some("srv"), true),
            (&[], Some("srv"), "x__delete", None, false),
            (&[], Some("*"), "x__delete", None, true),
            (&[], Some("*"), "read_file", None, false),
            (&["mcp_srv_*"], None, "mcp_srv_search", None, true),
            (&["mcp_srv_*"], None, "search", Some("srv"), true),
            (&["mcp_srv_*"], None, "mcp_other_search", None, false),
            (&["mcp_srv_search"], None, "mcp_srv_search", None, true),
            (&["mcp_srv_search"], None, "search", Some("srv"), true),
            (&["mcp_srv_search"], None, "search", Some("other"), false),
            (&["mcp_*"], None, "search", Some("srv"), true),
            (&["mcp_*"], None, "read_file", None, false),
        ];
        for (names, mcp, call, server, expected) in cases {
            let got = rule(names, *mcp).matches_tool(&CallId::new(call, *server));
            assert_eq!(
                got, *expected,
                "toolName={names:?} mcpName={mcp:?} call={call} server={server:?}"
            );
        }
    }

    #[test]
    fn command_prefix_ends_at_a_word_boundary() {
        assert!(prefix_matches("git status", "git"));
        assert!(prefix_matches("  git status", "git status"));
        assert!(prefix_matches("git", "git"));
        assert!(!prefix_matches("gitk", "git"));
        assert!(prefix_matches("git status", "git "));
        assert!(!prefix_matches("git", "git "));
        assert!(!prefix_matches("git statusx", "git status"));
        assert!(!prefix_matches("ls", "git"));
    }

    #[test]
    fn effective_priority_orders_tiers_first() {
        let mut low_admin = Rule::any_tool(RuleDecision::Allow);
        low_admin.tier = Tier::Admin;
        low_admin.priority = 0;
        let mut high_user = Rule::any_tool(RuleDecision::Allow);
        high_user.priority = 999;
        assert!(low_admin.effective_priority() > high_user.effective_priority());
        assert_eq!(high_user.effective_priority(), 4999);
        assert!(Tier::Workspace.base() < Tier::User.base());
        assert!(Tier::Default.base() < Tier::Workspace.base());
    }

    #[test]
    fn modes_parse_both_spellings() {
        assert_eq!("autoEdit".parse::<Mode>(), Ok(Mode::AutoEdit));
        assert_eq!("auto_edit".parse::<Mode>(), Ok(Mode::AutoEdit));
        assert!("AUTO".parse::<Mode>().is_err());
        for m in Mode::ALL {
            assert_eq!(m.as_str().parse::<Mode>(), Ok(m));
        }
    }
}
