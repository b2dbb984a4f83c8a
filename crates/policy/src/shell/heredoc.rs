//! Here-documents the grammar may read differently from bash. The grammar's
//! here-document scanner and bash's disagree in corners (a backtick
//! substitution ends at a backtick inside a body it contains; a line
//! continuation before the delimiter line); where they could, the analysis
//! is unproven rather than trusting the grammar's reading.

use tree_sitter::Node;

use super::analysis::Walker;

impl Walker<'_> {
    /// Checks one `heredoc_redirect` node.
    pub(super) fn heredoc(&mut self, node: Node<'_>) {
        let mut in_backticks = false;
        let mut in_substitution = false;
        let mut up = node.parent();
        while let Some(n) = up {
            if n.kind() == "command_substitution" {
                in_substitution = true;
                in_backticks |= self.node_text(n).starts_with('`');
            }
            up = n.parent();
        }
        if in_backticks {
            // Bash finds the closing backtick before it reads the
            // here-document, so a backtick in the body ends the substitution.
            self.unproven("a here-document inside a backtick substitution");
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let start = children.iter().find(|c| c.kind() == "heredoc_start");
        let end = children.iter().find(|c| c.kind() == "heredoc_end");
        let bodies: Vec<&str> = children
            .iter()
            .filter(|c| c.kind() == "heredoc_body")
            .map(|c| self.node_text(*c))
            .collect();
        let (Some(start), Some(end)) = (start, end) else {
            if !bodies.is_empty() {
                self.unproven("a here-document without a delimiter the grammar found");
            }
            return;
        };
        let written = self.node_text(*start);
        let quoted = written.contains(['\'', '"', '\\']);
        let delimiter: String = written
            .chars()
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .collect();
        // Only `<<-` strips the tabs before the delimiter line.
        let strips_tabs = children
            .iter()
            .any(|c| !c.is_named() && self.node_text(*c) == "<<-");
        let end_line = self.node_text(*end);
        let end_line = if strips_tabs {
            end_line.trim_start_matches('\t')
        } else {
            end_line
        };
        // The grammar may leave the tabs before the delimiter out of its node.
        let before_end = self.src_between(0, end.start_byte());
        let indent = &before_end[before_end.rfind('\n').map_or(0, |p| p + 1)..];
        let indented = !(indent.is_empty() || strips_tabs && indent.chars().all(|c| c == '\t'));
        if indented || end_line != delimiter {
            self.unproven("a here-document ends at a line that is not its delimiter");
        }
        // Bash ends the body at the first line equal to the delimiter
        // (leading tabs removed with `<<-`; removed here in any case).
        let body = self.src_between(start.end_byte(), end.start_byte());
        let mut lines = body.split('\n');
        lines.next(); // the rest of the `<<EOF` line
        // Inside `$(...)` bash also ends it at a line that starts with the
        // delimiter (`EOFe)` ends the body and runs `e`).
        if lines.any(|l| {
            let l = l.trim_start_matches('\t');
            l == delimiter || (in_substitution && l.starts_with(&delimiter))
        }) {
            self.unproven(
                "a here-document's delimiter line inside what the grammar read as its body",
            );
        }
        if in_substitution && body.contains('`') {
            self.unproven("a backtick in a here-document inside a command substitution");
        }
        if !quoted && body.contains('`') {
            // The grammar reads no substitution in `` `...` `` in a body.
            let seen = children.iter().any(|c| {
                let mut cursor = c.walk();
                c.kind() == "heredoc_body"
                    && c.children(&mut cursor).any(|s| {
                        s.kind() == "command_substitution" && self.node_text(s).starts_with('`')
                    })
            });
            if !seen {
                self.unproven(
                    "a backtick substitution in a here-document the grammar read as text",
                );
            }
        }
        if !quoted && body.contains("coproc") {
            self.unproven("`coproc` in a here-document is not analysed");
        }
    }
}
