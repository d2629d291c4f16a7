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
