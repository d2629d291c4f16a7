//! Small helpers over roxmltree that keep line numbers in every error.

use crate::error::{ConfigError, Result};
use roxmltree::{Document, Node};

pub fn parse(text: &str) -> Result<Document<'_>> {
    Document::parse(text).map_err(|e| {
        let pos = e.pos();
        ConfigError::new(format!("malformed XML: {e}")).at(pos.row)
    })
}

pub fn line_of(node: Node<'_, '_>) -> u32 {
    node.document().text_pos_at(node.range().start).row
}

/// Line numbers for many nodes of one document. roxmltree's `text_pos_at` (what
/// [`line_of`] uses, fine for one error) scans from the start of the text, so recording the
/// line of every queue of a 10,000-queue file was quadratic; this indexes the newlines once.
pub struct Lines(Vec<usize>);

impl Lines {
    pub fn of(doc: &Document<'_>) -> Self {
        Self(doc.input_text().match_indices('\n').map(|(at, _)| at).collect())
    }

    /// The 1-based line `node` starts on, as [`line_of`] gives it.
    pub fn line(&self, node: Node<'_, '_>) -> u32 {
        let start = node.range().start;
        self.0.partition_point(|&newline| newline < start) as u32 + 1
    }
}

/// An error located at `node`, naming its element.
pub fn error_at(node: Node<'_, '_>, message: impl Into<String>) -> ConfigError {
    ConfigError::new(message).at(line_of(node)).element(node.tag_name().name())
}

/// Child elements only (text and comments skipped).
pub fn elements<'a, 'input>(node: Node<'a, 'input>) -> impl Iterator<Item = Node<'a, 'input>> {
    node.children().filter(|n| n.is_element())
}

/// The text inside an element, trimmed as Hadoop trims (`String.trim`: every char ≤ U+0020).
pub fn text<'a>(node: Node<'a, '_>) -> &'a str {
    node.text().unwrap_or("").trim_matches(|c: char| c <= ' ')
}

/// Java's `Boolean.parseBoolean`: "true" in any case is true, anything else false.
pub fn java_bool(s: &str) -> bool {
    s.trim().eq_ignore_ascii_case("true")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexed_lines_are_roxmltrees() {
        let text = "<a>\n  <b/><c>\r\n\n<d x='1\n2'/>\n</c>\n<e/>\n</a>";
        let doc = parse(text).unwrap();
        let lines = Lines::of(&doc);
        let nodes: Vec<_> = doc.descendants().filter(|n| n.is_element()).collect();
        assert_eq!(nodes.len(), 5);
        for n in nodes {
            assert_eq!(lines.line(n), line_of(n), "<{}>", n.tag_name().name());
        }
    }
}
