//! The set of tools a session offers.

use std::sync::Arc;

use gd_gemini::FunctionDeclaration;

use super::Tool;

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

    /// The built-in tools available in this version.
    pub fn with_builtins() -> Self {
        let mut registry = Self::new();
        registry.register(Arc::new(super::list_directory::ListDirectory::new()));
        registry.register(Arc::new(super::web_fetch::WebFetch::new()));
        registry.register(Arc::new(super::web_search::GoogleWebSearch::new()));
        registry.register(Arc::new(super::todos::WriteTodos::new()));
        registry.register(Arc::new(super::memory::SaveMemory::new()));
        // One registry of background processes per session, shared by the
        // three shell tools.
        #[cfg(unix)]
        for tool in super::shell::tools(Arc::new(super::shell::BackgroundProcesses::new())) {
            registry.register(tool);
        }
        registry.register(Arc::new(super::read_file::ReadFile::new()));
        registry.register(Arc::new(super::read_many_files::ReadManyFiles::new()));
        registry.register(Arc::new(super::write_file::WriteFile::new()));
        registry.register(Arc::new(super::replace::Replace::new()));
        registry
    }

    /// Adds a tool, replacing one with the same name.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
    }

    /// Removes tools by name (settings `tools.exclude`).
    pub fn exclude(&mut self, names: &[String]) {
        self.tools.retain(|t| !names.iter().any(|n| n == t.name()));
    }

    /// Keeps only the tools `keep` accepts.
    pub fn retain(&mut self, keep: impl Fn(&dyn Tool) -> bool) {
        self.tools.retain(|t| keep(t.as_ref()));
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.name() == name)
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
        let mut registry = ToolRegistry::new();
        registry.register(Arc::new(super::super::list_directory::ListDirectory::new()));
        assert_eq!(
            registry.not_found_message("list_dir"),
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
    fn builtins_include_the_file_tools() {
        let names = ToolRegistry::with_builtins().names();
        for name in [
            "list_directory",
            "read_file",
            "read_many_files",
            "write_file",
            "replace",
        ] {
            assert!(names.iter().any(|n| n == name), "{name} missing");
        }
    }
}
