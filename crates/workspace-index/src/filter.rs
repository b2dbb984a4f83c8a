//! Which ignore rules apply, shared by the listing, the index and the
//! watcher so they agree on what is hidden.

use std::path::Path;

use ignore::WalkBuilder;

use crate::GEMINI_IGNORE_FILE;

/// The `context.fileFiltering` settings that matter here (the same two the
/// core's `FileFiltering` has).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Filtering {
    pub respect_git_ignore: bool,
    pub respect_gemini_ignore: bool,
}

impl Default for Filtering {
    fn default() -> Self {
        Self {
            respect_git_ignore: true,
            respect_gemini_ignore: true,
        }
    }
}

impl Filtering {
    /// A walker over `root` configured exactly like the core's
    /// `tools::walk::walker` (kept in step with it; this crate stays a leaf
    /// so the core may use it later): `.gitignore` and `.git/info/exclude`
    /// only inside git repositories, `.geminiignore` everywhere, rules of
    /// parent directories included, `.git` never entered, symlinks not
    /// followed. Dot-files are shown: the picker is for choosing context,
    /// and `.github/` or `.env.example` are legitimate picks.
    pub fn walker(self, root: &Path) -> WalkBuilder {
        let mut builder = WalkBuilder::new(root);
        builder
            .hidden(false)
            .ignore(false)
            .parents(true)
            .git_ignore(self.respect_git_ignore)
            .git_exclude(self.respect_git_ignore)
            .git_global(false)
            .require_git(true)
            .follow_links(false)
            .filter_entry(|entry| entry.depth() == 0 || entry.file_name() != ".git");
        if self.respect_gemini_ignore {
            builder.add_custom_ignore_filename(GEMINI_IGNORE_FILE);
        }
        builder
    }

    /// A walker that applies no ignore rule at all (still skipping `.git`),
    /// for the "show ignored" toggle.
    pub fn unfiltered_walker(root: &Path) -> WalkBuilder {
        let mut builder = WalkBuilder::new(root);
        builder
            .standard_filters(false)
            .follow_links(false)
            .filter_entry(|entry| entry.depth() == 0 || entry.file_name() != ".git");
        builder
    }
}

/// Whether a file name is one of the ignore files whose change alters what
/// the whole index should contain.
pub(crate) fn is_ignore_file(name: &str) -> bool {
    name == ".gitignore" || name == GEMINI_IGNORE_FILE || name == "exclude"
}
