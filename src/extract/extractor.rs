//! Facts for one file under construction ([`Extractor`]) and the node helpers every language's
//! extractor hooks share.

use tree_sitter::Node;

use super::text;
use super::tree::Links;
use crate::facts::{RelId, SplitBuilder, Val, rel};

/// Facts for one file under construction, with the helpers every language shares.
pub(crate) struct Extractor<'a, 'o> {
    pub path: &'a str,
    pub src: &'a str,
    pub test_file: bool,
    /// The root of the file's syntax tree (`None` when the parser returned no tree).
    pub root: Option<Node<'a>>,
    /// Parents and siblings of a deep tree's nodes (`None` for a shallow tree).
    pub links: Option<Links<'a>>,
    b: &'o mut SplitBuilder,
    seen_refs: std::collections::HashSet<(u32, &'a str), foldhash::fast::FixedState>,
    /// Lines of imports taken from a clean syntax tree (for error recovery).
    pub import_lines: std::collections::HashSet<u32>,
    /// Functions and methods defined so far, and markers found so far (for `MarkerIn`).
    pub owners: super::classes::Owners,
    /// How many macro bodies this extractor's tree is nested in (0 for the file's own tree).
    pub macro_depth: u32,
    /// The names already recorded as `BoundLocally` (each once per file).
    pub bound: std::collections::HashSet<&'a str>,
}

impl<'a, 'o> Extractor<'a, 'o> {
    /// Facts of the file at `path` (test-only when `test_file`) with syntax tree `root`, pushed to
    /// `out`.
    pub(super) fn new(
        path: &'a str,
        test_file: bool,
        src: &'a str,
        root: Option<Node<'a>>,
        out: &'o mut SplitBuilder,
    ) -> Self {
        let (seen_refs, import_lines, owners, bound) = Default::default();
        Extractor {
            path,
            src,
            test_file,
            root,
            links: None,
            b: out,
            seen_refs,
            import_lines,
            owners,
            macro_depth: 0,
            bound,
        }
    }

    /// An extractor of the same file over `root`, the syntax tree of a macro body parsed on its
    /// own, writing to the same facts.
    pub fn nested<'b>(&'b mut self, root: Node<'b>) -> Extractor<'b, 'b> {
        let (seen_refs, import_lines, owners, bound) = Default::default();
        let (path, src, test_file, macro_depth) = (self.path, self.src, self.test_file, self.macro_depth + 1);
        Extractor {
            path,
            src,
            test_file,
            root: Some(root),
            links: None,
            b: self.b,
            seen_refs,
            import_lines,
            owners,
            macro_depth,
            bound,
        }
    }

    /// The parent of a node (`Node::parent` walks down from the root: use this in a deep tree).
    pub fn parent(&self, node: Node<'a>) -> Option<Node<'a>> {
        match &self.links {
            Some(l) => l.parent(node),
            None => node.parent(),
        }
    }

    /// The previous sibling of a node (`Node::prev_sibling` asks for its parent first).
    pub fn prev_sibling(&self, node: Node<'a>) -> Option<Node<'a>> {
        match &self.links {
            Some(l) => l.prev_sibling(node),
            None => node.prev_sibling(),
        }
    }

    /// Ancestors of a node, nearest first: by the links of a deep tree, else in one walk down from
    /// the root (a chain of `Node::parent` calls costs the depth squared).
    pub fn ancestors(&self, node: Node<'a>) -> Vec<Node<'a>> {
        if let Some(l) = &self.links {
            return l.ancestors(node);
        }
        let mut path = Vec::new();
        let mut at = self.root;
        while let Some(n) = at.filter(|n| n.id() != node.id()) {
            path.push(n);
            at = n.child_with_descendant(node);
        }
        if at.is_none() {
            path.clear(); // `node` is not in this tree
        }
        path.reverse();
        path
    }

    pub fn push(&mut self, rel: RelId, vals: &[Val]) {
        self.b.push(rel, vals);
    }

    pub fn text(&self, node: Node) -> &'a str {
        &self.src[node.byte_range()]
    }

    /// Captures every language treats alike: identifier references and comment/string text.
    pub fn common_capture(&mut self, cap: &str, node: Node<'a>) {
        match cap {
            "ref" => {
                let t = self.text(node);
                self.reference(line(node), t);
            }
            "comment" => self.scan_text(node, true),
            "string" => self.scan_text(node, false),
            _ => {}
        }
    }

    pub fn reference(&mut self, line: u32, name: &'a str) {
        if self.seen_refs.insert((line, name)) {
            self.b.push(rel::REFERENCES, &[self.path.into(), line.into(), name.into()]);
        }
    }

    pub fn call(&mut self, node: Node, name: Node) {
        let n = self.text(name);
        self.push(rel::CALLS, &[self.path.into(), line(node).into(), n.into()]);
    }

    /// A definition with its span and visibility.
    pub fn define(&mut self, node: Node, name: &str, kind: &str, visibility: &str) {
        let (l, p) = (line(node), self.path);
        let end = node.end_position();
        self.push(rel::DEFINES, &[p.into(), name.into(), kind.into(), l.into()]);
        self.push(
            rel::DEF_SPAN,
            &[
                p.into(),
                name.into(),
                l.into(),
                col(node).into(),
                (end.row as u32 + 1).into(),
                (end.column as u32 + 1).into(),
            ],
        );
        self.push(rel::VISIBILITY, &[p.into(), name.into(), l.into(), visibility.into()]);
        self.owners.definition(kind, name, l, end.row as u32 + 1);
    }

    /// An import edge: one `Import` row for its form (`static` or `dynamic`) and one per qualifier.
    pub fn import(&mut self, line: u32, spec: &str, kinds: &[&str]) {
        let p = self.path;
        let form = if kinds.contains(&"dynamic") { "dynamic" } else { "static" };
        self.push(rel::IMPORT, &[p.into(), line.into(), spec.into(), form.into()]);
        for k in kinds.iter().filter(|k| **k != "dynamic") {
            self.push(rel::IMPORT, &[p.into(), line.into(), spec.into(), (*k).into()]);
        }
        if self.test_file && !kinds.contains(&"test") {
            self.push(rel::IMPORT, &[p.into(), line.into(), spec.into(), "test".into()]);
        }
    }

    pub fn imported_name(&mut self, line: u32, spec: &str, name: &str, alias: &str) {
        self.push(rel::IMPORTED_NAME, &[self.path.into(), line.into(), spec.into(), name.into(), alias.into()]);
    }

    pub fn marker(&mut self, line: u32, kind: &str, text: &str) {
        self.push(rel::MARKER, &[self.path.into(), line.into(), kind.into()]);
        let t = text::clip(text.trim(), 200);
        self.push(rel::MARKER_TEXT, &[self.path.into(), line.into(), t.as_str().into()]);
        // a not-implemented statement whose message refuses the operation by design
        if !matches!(kind, "TODO" | "FIXME" | "XXX")
            && let Some(words) = text::by_design(text)
        {
            self.push(rel::MARKER_BY_DESIGN, &[self.path.into(), line.into(), words.into()]);
        }
        self.owners.marker(line, kind);
    }

    /// Scans comment or string text for markers (comments only) and text that addresses the tool.
    pub fn scan_text(&mut self, node: Node, is_comment: bool) {
        let t = self.text(node);
        let first = line(node);
        for (i, l) in t.lines().enumerate() {
            let ln = first + i as u32;
            if is_comment {
                for kind in text::markers_in(l) {
                    self.marker(ln, kind, l);
                }
            }
            let trimmed = l.trim();
            if let Some((at, _)) = text::suspicion(trimmed) {
                // the stored text keeps the words that made it suspect: a long line is cut before them
                let mut clipped = text::clip(trimmed, 200);
                if text::suspicion(&clipped).is_none() {
                    let from = (0..=at.saturating_sub(20)).rev().find(|&i| trimmed.is_char_boundary(i)).unwrap_or(0);
                    clipped = format!("…{}", text::clip(&trimmed[from..], 200));
                }
                self.push(rel::SUSPECTED_INJECTION, &[self.path.into(), ln.into(), clipped.as_str().into()]);
            }
        }
    }
}

/// 1-based line of a node's start.
pub(crate) fn line(node: Node) -> u32 {
    node.start_position().row as u32 + 1
}

/// 1-based column of a node's start.
pub(crate) fn col(node: Node) -> u32 {
    node.start_position().column as u32 + 1
}

/// The string value of a string-literal node: its text without the quotes.
pub(crate) fn unquote(s: &str) -> &str {
    let s = s.trim();
    // string prefixes (`r"…"`, `b'…'`, `f"…"`, Rust `r#"…"#`) only when a quote follows
    let body = s.trim_start_matches(['r', 'b', 'u', 'f', 'R', 'B', 'U', 'F', 'c']).trim_start_matches('#');
    let s = if body.starts_with(['"', '\'']) { body.trim_end_matches('#') } else { s };
    for q in ["\"\"\"", "'''", "\"", "'", "`"] {
        if s.len() >= 2 * q.len() && s.starts_with(q) && s.ends_with(q) {
            return &s[q.len()..s.len() - q.len()];
        }
    }
    s
}

/// The value of a string-literal node as the language reads it: [`unquote`], then the escapes of
/// a JavaScript/TypeScript or Python string decoded (`\x61`, `\u0061`, `\u{61}`, `\n`, `\\`,
/// an escaped quote, a line continuation), so an import spelled with escapes names the module it
/// loads. A raw string (`r"…"`) keeps its backslashes; an escape that does not decode stays as written.
pub(crate) fn string_value(s: &str) -> std::borrow::Cow<'_, str> {
    let body = unquote(s);
    let raw = s.trim_start().starts_with(['r', 'R'])
        || s.trim_start().starts_with(['b', 'B']) && s.trim_start()[1..].starts_with(['r', 'R']);
    if raw || !body.contains('\\') {
        return std::borrow::Cow::Borrowed(body);
    }
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let (decoded, used) = escape_at(&rest[i + 1..]);
        match decoded {
            Some(c) => out.extend(c),
            None => out.push_str(&rest[i..i + 1 + used]),
        }
        rest = &rest[i + 1 + used..];
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// The character an escape stands for (None: a line continuation, or no escape it knows) and how
/// many bytes after the backslash it spans.
fn escape_at(s: &str) -> (Option<Option<char>>, usize) {
    let hex = |digits: &str| u32::from_str_radix(digits, 16).ok().and_then(char::from_u32);
    let Some(c) = s.chars().next() else { return (None, 0) };
    let fixed = |n: usize| match s.get(1..1 + n).filter(|d| d.chars().all(|c| c.is_ascii_hexdigit())) {
        Some(d) => (hex(d).map(Some), 1 + n),
        None => (None, c.len_utf8()),
    };
    match c {
        'x' => fixed(2),
        'u' if s[1..].starts_with('{') => match s[2..].find('}') {
            Some(end) if end > 0 && end <= 6 => (hex(&s[2..2 + end]).map(Some), 3 + end),
            _ => (None, 1),
        },
        'u' => fixed(4),
        'U' => fixed(8),
        'n' => (Some(Some('\n')), 1),
        't' => (Some(Some('\t')), 1),
        'r' => (Some(Some('\r')), 1),
        '0' if !s[1..].starts_with(|d: char| d.is_ascii_digit()) => (Some(Some('\0')), 1),
        '\n' => (Some(None), 1),
        '\\' | '\'' | '"' | '`' | '/' => (Some(Some(c)), 1),
        _ => (None, c.len_utf8()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_value_decodes_escapes_as_the_language_reads_them() {
        assert_eq!(string_value("\"../\\u0061pi/index\""), "../api/index");
        assert_eq!(string_value("'\\x61pi'"), "api");
        assert_eq!(string_value("\"\\u{61}pi\""), "api");
        assert_eq!(string_value("\"a\\\\b\\\"c\""), "a\\b\"c");
        assert_eq!(string_value("r'\\x61'"), "\\x61");
        assert_eq!(string_value("'\\q\\x6'"), "\\q\\x6");
        assert_eq!(string_value("\"./a\""), "./a");
    }

    #[test]
    fn unquote_strips_quotes_and_prefixes_only_around_strings() {
        assert_eq!(unquote("\"./a\""), "./a");
        assert_eq!(unquote("f'x'"), "x");
        assert_eq!(unquote("r#\"raw\"#"), "raw");
        assert_eq!(unquote("util"), "util");
        assert_eq!(unquote("fmt"), "fmt");
    }
}
