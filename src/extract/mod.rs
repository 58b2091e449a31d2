//! Extraction: one file's bytes → its fact [`crate::facts::Segment`]. Never fails because of source text:
//! syntax errors become `ParseError` facts and imports in broken regions are recovered from text.
//!
//! Each language is one [`Lang`] row, one query in `grammars/<lang>/facts.scm` (compiled once per
//! process), and one module here for its quirks. Parsers and query cursors are per thread
//! ([`Context`]).

pub mod manifest;
mod python;
mod rust;
mod text;
mod typescript;

use std::sync::LazyLock;

use tree_sitter::{Language, Node, Parser, Query, QueryCursor, StreamingIterator, Tree};

use crate::facts::{RelId, SplitBuilder, Val, rel};

/// A source language andon indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lang {
    Rust,
    Python,
    TypeScript,
    JavaScript,
}

impl Lang {
    /// The language of a file, by its name.
    pub fn from_path(path: &str) -> Option<Lang> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let ext = name.rsplit_once('.')?.1;
        Some(match ext {
            "rs" => Lang::Rust,
            "py" | "pyi" => Lang::Python,
            "ts" | "tsx" | "mts" | "cts" => Lang::TypeScript,
            "js" | "jsx" | "mjs" | "cjs" => Lang::JavaScript,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::TypeScript => "typescript",
            Lang::JavaScript => "javascript",
        }
    }
}

/// The tree-sitter grammar a file is parsed with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Grammar {
    Rust,
    Python,
    TypeScript,
    Tsx,
}

impl Grammar {
    fn of(lang: Lang, path: &str) -> Grammar {
        match lang {
            Lang::Rust => Grammar::Rust,
            Lang::Python => Grammar::Python,
            Lang::TypeScript if path.ends_with(".tsx") => Grammar::Tsx,
            Lang::TypeScript => Grammar::TypeScript,
            Lang::JavaScript => Grammar::Tsx,
        }
    }

    fn language(self) -> Language {
        match self {
            Grammar::Rust => tree_sitter_rust::LANGUAGE.into(),
            Grammar::Python => tree_sitter_python::LANGUAGE.into(),
            Grammar::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Grammar::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        }
    }

    fn query(self) -> &'static LangQuery {
        match self {
            Grammar::Rust => &RUST_QUERY,
            Grammar::Python => &PYTHON_QUERY,
            Grammar::TypeScript => &TS_QUERY,
            Grammar::Tsx => &TSX_QUERY,
        }
    }
}

/// The extraction query sources, part of the index fingerprint.
pub const QUERY_SOURCES: [&str; 3] = [
    include_str!("../../grammars/rust/facts.scm"),
    include_str!("../../grammars/python/facts.scm"),
    include_str!("../../grammars/typescript/facts.scm"),
];

/// Grammar crate versions, part of the index fingerprint.
pub const GRAMMAR_VERSIONS: &str = "tree-sitter 0.27.1; rust 0.24.2; python 0.25.0; typescript 0.23.2";

pub(crate) struct LangQuery {
    query: Query,
    /// Capture index → capture name.
    names: Vec<&'static str>,
}

fn compile(grammar: Grammar, src: &'static str) -> LangQuery {
    let query = Query::new(&grammar.language(), src)
        .unwrap_or_else(|e| panic!("grammars/ query for {grammar:?} does not compile: {e}"));
    let names = query.capture_names().iter().map(|n| &*Box::leak(n.to_string().into_boxed_str())).collect();
    LangQuery { query, names }
}

static RUST_QUERY: LazyLock<LangQuery> = LazyLock::new(|| compile(Grammar::Rust, QUERY_SOURCES[0]));
static PYTHON_QUERY: LazyLock<LangQuery> = LazyLock::new(|| compile(Grammar::Python, QUERY_SOURCES[1]));
static TS_QUERY: LazyLock<LangQuery> = LazyLock::new(|| compile(Grammar::TypeScript, QUERY_SOURCES[2]));
static TSX_QUERY: LazyLock<LangQuery> = LazyLock::new(|| compile(Grammar::Tsx, QUERY_SOURCES[2]));

/// Every capture name each query uses, for the vocabulary test.
pub fn capture_names() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("rust", RUST_QUERY.names.clone()),
        ("python", PYTHON_QUERY.names.clone()),
        ("typescript", TS_QUERY.names.clone()),
        ("tsx", TSX_QUERY.names.clone()),
    ]
}

/// Per-thread parsing state.
pub struct Context {
    parsers: [Option<Parser>; 4],
    cursor: QueryCursor,
}

impl Default for Context {
    fn default() -> Self {
        Self::new()
    }
}

impl Context {
    pub fn new() -> Context {
        Context { parsers: [None, None, None, None], cursor: QueryCursor::new() }
    }

    fn parse(&mut self, grammar: Grammar, src: &[u8]) -> Option<Tree> {
        let slot = &mut self.parsers[grammar as usize];
        let parser = slot.get_or_insert_with(|| {
            let mut p = Parser::new();
            p.set_language(&grammar.language()).expect("grammar ABI is supported by this tree-sitter");
            p
        });
        parser.parse(src, None)
    }
}

/// Parses one source file and returns its facts. `path` is repo-relative with `/` separators;
/// `src` must be valid UTF-8 (the walker turns anything else into a `Skipped` fact).
pub fn extract_source(ctx: &mut Context, lang: Lang, path: &str, src: &str, out: &mut SplitBuilder) {
    let grammar = Grammar::of(lang, path);
    let mut x = Extractor::new(path, lang, src, out);
    x.push(rel::FILE, &[path.into(), lang.name().into()]);
    if x.test_file {
        x.push(rel::TEST_FILE, &[path.into()]);
    }
    let Some(tree) = ctx.parse(grammar, src.as_bytes()) else {
        x.push(rel::PARSE_ERROR, &[path.into(), 1.into(), 1.into(), 1.into(), 1.into(), "error".into()]);
        return;
    };
    let root = tree.root_node();
    let q = grammar.query();
    {
        let mut matches = ctx.cursor.matches(&q.query, root, src.as_bytes());
        while let Some(m) = matches.next() {
            let mut main: Option<(&str, Node)> = None;
            let mut name: Option<Node> = None;
            for c in m.captures() {
                let cname = q.names[c.index as usize];
                if cname == "name" {
                    name = Some(c.node);
                } else if !cname.starts_with('_') {
                    main = Some((cname, c.node));
                }
            }
            let Some((cname, node)) = main else { continue };
            match lang {
                Lang::Rust => rust::on_capture(&mut x, cname, node, name),
                Lang::Python => python::on_capture(&mut x, cname, node, name),
                Lang::TypeScript | Lang::JavaScript => typescript::on_capture(&mut x, cname, node, name),
            }
        }
    }
    if root.has_error() {
        let broken = parse_errors(&mut x, root);
        match lang {
            Lang::TypeScript | Lang::JavaScript => typescript::recover_imports(&mut x, &broken),
            Lang::Python => python::recover_imports(&mut x, &broken),
            Lang::Rust => {}
        }
    }
}

/// Facts for one file under construction, with the helpers every language shares.
pub(crate) struct Extractor<'a, 'o> {
    pub path: &'a str,
    pub src: &'a str,
    pub test_file: bool,
    b: &'o mut SplitBuilder,
    seen_refs: std::collections::HashSet<(u32, &'a str), foldhash::fast::FixedState>,
    /// Lines of imports taken from a clean syntax tree (for error recovery).
    pub import_lines: std::collections::HashSet<u32>,
}

impl<'a, 'o> Extractor<'a, 'o> {
    fn new(path: &'a str, lang: Lang, src: &'a str, out: &'o mut SplitBuilder) -> Self {
        Extractor {
            path,
            src,
            test_file: is_test_path(path, lang),
            b: out,
            seen_refs: Default::default(),
            import_lines: Default::default(),
        }
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
            if text::addresses_tool(l) {
                let clipped = text::clip(l.trim(), 200);
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

/// Whether a file holds test-only code by its location or name.
pub fn is_test_path(path: &str, lang: Lang) -> bool {
    let mut parts = path.split('/');
    let name = parts.next_back().unwrap_or("");
    let dir_test = path
        .split('/')
        .rev()
        .skip(1)
        .any(|d| matches!(d, "tests" | "test" | "__tests__" | "testing" | "benches") || d.ends_with("_tests"));
    let name_test = match lang {
        Lang::Python => name.starts_with("test_") || name.ends_with("_test.py") || name == "conftest.py",
        Lang::Rust => name.ends_with("_test.rs") || name == "tests.rs",
        Lang::TypeScript | Lang::JavaScript => {
            let stem = name.split('.').collect::<Vec<_>>();
            stem.len() >= 3 && matches!(stem[stem.len() - 2], "test" | "spec")
        }
    };
    dir_test || name_test
}

/// Records every ERROR and MISSING node (at most 100 per file; the first ones are the useful ones)
/// and returns the line ranges they cover.
fn parse_errors(x: &mut Extractor, root: Node) -> Vec<(u32, u32)> {
    let mut stack = vec![root];
    let mut found = Vec::new();
    while let Some(n) = stack.pop() {
        if found.len() >= 100 {
            break;
        }
        if n.is_error() || n.is_missing() {
            found.push(n);
            continue;
        }
        if !n.has_error() {
            continue;
        }
        let mut c = n.walk();
        let kids: Vec<Node> = n.children(&mut c).collect();
        stack.extend(kids.into_iter().rev());
    }
    let mut ranges = Vec::new();
    for n in found {
        let end = n.end_position();
        // Recovery looks at the whole top-level statement around the error: tree-sitter often
        // folds the next lines into a broken statement without marking them as errors.
        let top = ancestors(n).take_while(|a| a.parent().is_some()).last().unwrap_or(n);
        ranges.push((line(top).min(line(n)), (top.end_position().row as u32 + 1).max(end.row as u32 + 1)));
        let kind = if n.is_missing() { "missing" } else { "error" };
        x.push(
            rel::PARSE_ERROR,
            &[
                x.path.into(),
                line(n).into(),
                col(n).into(),
                (end.row as u32 + 1).into(),
                (end.column as u32 + 1).into(),
                kind.into(),
            ],
        );
    }
    ranges
}

/// Ancestors of a node, nearest first.
pub(crate) fn ancestors(node: Node) -> impl Iterator<Item = Node> {
    std::iter::successors(node.parent(), |n| n.parent())
}

/// Parses a file and walks every node without extracting anything: the raw tree-sitter cost that
/// benchmarks compare extraction against. Returns the number of nodes.
pub fn parse_only(ctx: &mut Context, lang: Lang, path: &str, src: &str) -> usize {
    let Some(tree) = ctx.parse(Grammar::of(lang, path), src.as_bytes()) else {
        return 0;
    };
    let mut cursor = tree.walk();
    let mut n = 0;
    loop {
        n += 1;
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every capture a query uses is one the extractors understand (grammars/README.md).
    #[test]
    fn capture_vocabulary_is_known() {
        let known = [
            "name",
            "import.use",
            "import.extern_crate",
            "import.qualified",
            "import.macro_tokens",
            "import.import",
            "import.from",
            "import.dynamic",
            "import.export",
            "import.require",
            "mod",
            "call",
            "call.macro",
            "ref",
            "comment",
            "string",
            "raise",
            "throw",
            "export",
        ];
        for (lang, names) in capture_names() {
            for n in names {
                let ok = known.contains(&n) || n.starts_with("def.") || n.starts_with('_');
                assert!(ok, "grammars/{lang}: unknown capture @{n}");
            }
        }
    }

    #[test]
    fn languages_by_extension() {
        for (p, l) in [
            ("a.rs", Lang::Rust),
            ("a.pyi", Lang::Python),
            ("x/a.d.ts", Lang::TypeScript),
            ("a.mts", Lang::TypeScript),
            ("a.cjs", Lang::JavaScript),
            ("a.jsx", Lang::JavaScript),
        ] {
            assert_eq!(Lang::from_path(p), Some(l), "{p}");
        }
        assert_eq!(Lang::from_path("Makefile"), None);
    }

    #[test]
    fn unquote_strips_quotes_and_prefixes_only_around_strings() {
        assert_eq!(unquote("\"./a\""), "./a");
        assert_eq!(unquote("f'x'"), "x");
        assert_eq!(unquote("r#\"raw\"#"), "raw");
        assert_eq!(unquote("util"), "util");
        assert_eq!(unquote("fmt"), "fmt");
    }

    #[test]
    fn test_paths() {
        assert!(is_test_path("tests/test_a.py", Lang::Python));
        assert!(is_test_path("pkg/test_a.py", Lang::Python));
        assert!(is_test_path("src/a.spec.ts", Lang::TypeScript));
        assert!(is_test_path("src/__tests__/a.ts", Lang::TypeScript));
        assert!(!is_test_path("src/contest.py", Lang::Python));
        assert!(!is_test_path("src/latest.ts", Lang::TypeScript));
    }
}
