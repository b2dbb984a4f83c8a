//! The set of tools a session offers.

use std::sync::Arc;

use gd_gemini::FunctionDeclaration;

use super::Tool;

/// Former tool names that still resolve: `(old, current)`. Models trained
/// on older Gemini CLI versions, saved policies and settings use them.
pub const TOOL_ALIASES: &[(&str, &str)] = &[(
    super::grep::GrepTool::LEGACY_NAME,
    super::grep::GrepTool::NAME,
)];

/// The tools the seeds define that Gemini CLI 0.61 no longer declares;
/// setting `tools.legacy` turns them back on.
pub const LEGACY_TOOLS: &[&str] = &[
    super::read_many_files::ReadManyFiles::NAME,
    super::memory::SaveMemory::NAME,
];

/// Tools in declaration order, looked up by name.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in tools declared by default: Gemini CLI 0.61's set, in
    /// its declaration order (`tools_yolo.json`). Which of them a session
    /// declares also depends on the policy (see `launch::declared_tools`).
    /// The tools 0.61 dropped are not here: see [`Self::add_legacy`].
    pub fn with_builtins() -> Self {
        let mut registry = Self::new();
        registry.register(Arc::new(super::topic::UpdateTopic::new()));
        registry.register(Arc::new(super::list_directory::ListDirectory::new()));
        registry.register(Arc::new(super::read_file::ReadFile::new()));
        registry.register(Arc::new(super::grep::GrepTool::new()));
        registry.register(Arc::new(super::glob::GlobTool::new()));
        registry.register(Arc::new(super::replace::Replace::new()));
        registry.register(Arc::new(super::write_file::WriteFile::new()));
        registry.register(Arc::new(super::web_fetch::WebFetch::new()));
        // One registry of background processes per session, shared by the
        // three shell tools.
        #[cfg(unix)]
        for tool in super::shell::tools(Arc::new(super::shell::BackgroundProcesses::new())) {
            registry.register(tool);
        }
        registry.register(Arc::new(super::web_search::GoogleWebSearch::new()));
        registry.register(Arc::new(super::todos::WriteTodos::new()));
        registry.register(Arc::new(super::plan_mode::EnterPlanMode::new()));
        registry.register(Arc::new(super::plan_mode::ExitPlanMode::new()));
        registry
    }

    /// The built-ins plus every legacy tool (tests and callers that want
    /// the seeds' whole set).
    pub fn with_all_builtins() -> Self {
        let mut registry = Self::with_builtins();
        registry.add_legacy(LEGACY_TOOLS);
        registry
    }

    /// Adds the legacy tools named in `names` (setting `tools.legacy`),
    /// after the others, in the order of [`LEGACY_TOOLS`]. Gemini CLI 0.61
    /// no longer has `save_memory` (memory is edited in GEMINI.md files
    /// with the ordinary edit tools) nor `read_many_files`; the seeds
    /// define them, so a user may keep them. Unknown names are ignored
    /// (and returned, for a warning).
    pub fn add_legacy<S: AsRef<str>>(&mut self, names: &[S]) -> Vec<String> {
        let wanted: Vec<&str> = names.iter().map(|n| n.as_ref().trim()).collect();
        for legacy in LEGACY_TOOLS {
            if !wanted.contains(legacy) {
                continue;
            }
            let tool: Arc<dyn Tool> = match *legacy {
                super::read_many_files::ReadManyFiles::NAME => {
                    Arc::new(super::read_many_files::ReadManyFiles::new())
                }
                _ => Arc::new(super::memory::SaveMemory::new()),
            };
            self.register(tool);
        }
        wanted
            .into_iter()
            .filter(|n| !LEGACY_TOOLS.contains(n))
            .map(str::to_owned)
            .collect()
    }

    /// The current name of a tool: `name` itself, or what a former name in
    /// [`TOOL_ALIASES`] now is (e.g. `search_file_content` → `grep_search`).
    pub fn canonical_name(name: &str) -> &str {
        TOOL_ALIASES
            .iter()
            .find(|(old, _)| *old == name)
            .map_or(name, |(_, current)| current)
    }

    /// Adds a tool, replacing one with the same name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
    }

    /// Adds a tool at `index` (clamped), replacing one with the same name.
    pub fn insert(&mut self, index: usize, tool: Arc<dyn Tool>) {
        self.tools.retain(|t| t.name() != tool.name());
        let index = index.min(self.tools.len());
        self.tools.insert(index, tool);
    }

    /// Where the tool called `name` is in declaration order.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.tools.iter().position(|t| t.name() == name)
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Removes tools by name (settings `tools.exclude`); former names
    /// count too.
    pub fn exclude(&mut self, names: &[String]) {
        self.tools
            .retain(|t| !names.iter().any(|n| Self::canonical_name(n) == t.name()));
    }

    /// Keeps only the tools `keep` accepts.
    pub fn retain(&mut self, keep: impl Fn(&dyn Tool) -> bool) {
        self.tools.retain(|t| keep(t.as_ref()));
    }

    /// The tool called `name`, or the one a former name now refers to.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name).or_else(|| {
            let current = Self::canonical_name(name);
            (current != name)
                .then(|| self.tools.iter().find(|t| t.name() == current))
                .flatten()
        })
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name().to_owned()).collect()
    }

    pub fn declarations(&self) -> Vec<FunctionDeclaration> {
        self.tools.iter().map(|t| t.declaration()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The error text for a call to an unknown tool, with the closest names
    /// (by edit distance) so the model can correct itself.
    pub fn not_found_message(&self, name: &str) -> String {
        let mut scored: Vec<(usize, &str)> = self
            .tools
            .iter()
            .map(|t| (levenshtein(name, t.name()), t.name()))
            .collect();
        scored.sort_by_key(|(d, _)| *d);
        let names: Vec<String> = scored
            .iter()
            .take(3)
            .map(|(_, n)| format!("\"{n}\""))
            .collect();
        let suggestion = match names.len() {
            0 => String::new(),
            1 => format!(" Did you mean {}?", names[0]),
            _ => format!(" Did you mean one of: {}?", names.join(", ")),
        };
        format!("Tool \"{name}\" not found.{suggestion}")
    }
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(current + 1);
            prev = current;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_closest_names() {
        let mut one = ToolRegistry::with_builtins();
        one.retain(|t| t.name() == "list_directory");
        assert_eq!(
            one.not_found_message("list_dir"),
            "Tool \"list_dir\" not found. Did you mean \"list_directory\"?"
        );
        assert!(
            ToolRegistry::with_builtins()
                .not_found_message("list_dir")
                .starts_with(
                    "Tool \"list_dir\" not found. Did you mean one of: \"list_directory\", "
                )
        );
        assert_eq!(
            ToolRegistry::new().not_found_message("x"),
            "Tool \"x\" not found."
        );
        assert_eq!(levenshtein("kitten", "sitting"), 3);
    }

    #[test]
    fn legacy_tools_only_when_named() {
        let names = ToolRegistry::with_builtins().names();
        assert!(!names.iter().any(|n| LEGACY_TOOLS.contains(&n.as_str())));
        let mut registry = ToolRegistry::with_builtins();
        let unknown = registry.add_legacy(&["save_memory", "nope"]);
        assert_eq!(unknown, ["nope"]);
        assert_eq!(registry.names().last().unwrap(), "save_memory");
        assert!(registry.get("read_many_files").is_none());
        let all = ToolRegistry::with_all_builtins().names();
        assert_eq!(all[all.len() - 2..], ["read_many_files", "save_memory"]);
    }

    #[cfg(unix)]
    #[test]
    fn declaration_order_follows_gemini_cli() {
        assert_eq!(
            ToolRegistry::with_builtins().names(),
            [
                "update_topic",
                "list_directory",
                "read_file",
                "grep_search",
                "glob",
                "replace",
                "write_file",
                "web_fetch",
                "run_shell_command",
                "list_background_processes",
                "read_background_output",
                "google_web_search",
                "write_todos",
                "enter_plan_mode",
                "exit_plan_mode",
            ]
        );
    }

    #[test]
    fn former_names_resolve_to_current_tools() {
        assert_eq!(
            ToolRegistry::canonical_name("search_file_content"),
            "grep_search"
        );
        assert_eq!(ToolRegistry::canonical_name("glob"), "glob");
        let mut registry = ToolRegistry::with_builtins();
        assert_eq!(
            registry.get("search_file_content").unwrap().name(),
            "grep_search"
        );
        assert!(registry.get("glob").is_some());
        assert!(!registry.names().contains(&"search_file_content".to_owned()));
        registry.exclude(&["search_file_content".to_owned()]);
        assert!(registry.get("grep_search").is_none());
        assert!(registry.get("glob").is_some());
    }
}
