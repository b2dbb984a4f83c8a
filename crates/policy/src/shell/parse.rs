//! The bash grammar (tree-sitter-bash, as Gemini CLI uses), with one parser
//! per thread: creating a parser costs more than parsing a typical command.

use std::cell::RefCell;

use tree_sitter::{Parser, Tree};

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// The syntax tree of `src`; `None` only if the grammar cannot be loaded
/// (a build mismatch), which the caller treats as "cannot prove".
pub(super) fn tree(src: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            if let Err(e) = parser.set_language(&tree_sitter_bash::LANGUAGE.into()) {
                tracing::warn!(error = %e, "bash grammar did not load");
                return None;
            }
            *slot = Some(parser);
        }
        let parser = slot.as_mut()?;
        parser.parse(src, None)
    })
}
