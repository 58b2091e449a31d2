//! Extraction: one file's bytes → its fact [`crate::facts::Segment`]. Never fails because of source text:
//! syntax errors become `ParseError` facts and imports in broken regions are recovered from text.
//! The work per file is linear in its size: nodes deeper than [`MAX_DEPTH`] are not extracted (a
//! `too-deep` `ParseError`), and no walk recurses on the stack.
//!
//! Each language is one row of the language table ([`lang::LANGUAGES`]), one query in
//! `grammars/<lang>/facts.scm` (compiled once per process), and one module here for its quirks.
//! Parsers and query cursors are per thread ([`Context`]).

mod classes;
mod extractor;
pub mod lang;
pub mod manifest;
mod module_exports;
pub mod public;
mod pycall;
mod pymanifest;
mod python;
mod rust;
pub mod test_defs;
mod text;
mod tree;
mod typescript;

use std::sync::OnceLock;

use std::ops::ControlFlow;
use std::time::Duration;

use tree_sitter::{Node, Parser, Query, QueryCursor, StreamingIterator, Tree};

pub use lang::{GRAMMARS, Grammar, LANGUAGES, Lang, Language};
/// Whether repository text addresses the tool (a suspected injection, R123), and the words that
/// made it suspect.
pub(crate) use text::{addresses_tool, suspicion};
pub use tree::MAX_DEPTH;

use crate::facts::{SegmentBuilder, SplitBuilder, rel};
use extractor::{Extractor, col, line};
use tree::{LINK_DEPTH, Links};

/// The `ParseError` kind of a file whose syntax tree is deeper than [`MAX_DEPTH`].
pub const TOO_DEEP: &str = "too-deep";

/// The `ParseError` kind of a file whose parse or extraction ran past its budget
/// ([`budget_for`]): its facts may be incomplete, so its surface is open.
pub const TOO_COMPLEX: &str = "too-complex";

/// What a `too-complex` parse error means, and what to do about it.
pub fn too_complex_message() -> String {
    "too complex to extract within its budget (a syntax tree tree-sitter takes super-linear time on, \
     such as thousands of unclosed brackets): facts past the budget omitted and its surface open; \
     fix or exclude the file"
        .into()
}

/// The processor time one file's parse and extraction may take ([`spent`]): far above what any
/// source file of that size needs (a few milliseconds per 100 KB), so only a tree that
/// tree-sitter takes super-linear time on reaches it; then the file is `too-complex` in seconds,
/// not minutes.
pub fn budget_for(bytes: usize) -> Duration {
    // an unoptimized build does the same work several times slower
    let slower = if cfg!(debug_assertions) { 4 } else { 1 };
    (Duration::from_secs(2) + Duration::from_micros(bytes as u64)) * slower
}

/// The processor time this thread has used: what the budget counts, so other processes and the
/// other workers of the run never spend it (wall time where the platform cannot tell).
fn spent() -> Duration {
    #[cfg(unix)]
    {
        let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `t` is a valid timespec for the call to fill; the clock id is a constant.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0 {
            return Duration::new(t.tv_sec as u64, t.tv_nsec as u32);
        }
    }
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed()
}

/// What a `too-deep` parse error means, and what to do about it.
pub fn too_deep_message() -> String {
    format!(
        "too deeply nested: facts below depth {MAX_DEPTH} omitted; its imports count as resting on a \
         syntax error (tier 2 at most); split the nested code"
    )
}

/// An extraction query compiled for its grammar.
pub(crate) struct LangQuery {
    query: Query,
    /// Capture index → capture name.
    names: Vec<&'static str>,
}

/// Compiles a grammar's extraction query (a query that does not compile is a build defect).
fn compile(grammar: &Grammar) -> LangQuery {
    let query = Query::new(&(grammar.language)(), grammar.query)
        .unwrap_or_else(|e| panic!("grammars/ query for {} does not compile: {e}", grammar.name));
    let names = query.capture_names().iter().map(|n| &*Box::leak(n.to_string().into_boxed_str())).collect();
    LangQuery { query, names }
}

/// Each grammar's compiled query, by slot (compiled once per process, on first use).
static QUERIES: [OnceLock<LangQuery>; lang::GRAMMAR_COUNT] = [const { OnceLock::new() }; lang::GRAMMAR_COUNT];

/// A grammar's compiled extraction query.
fn query(grammar: &Grammar) -> &'static LangQuery {
    QUERIES[grammar.slot].get_or_init(|| compile(grammar))
}

/// Every capture name each query uses, for the vocabulary test.
pub fn capture_names() -> Vec<(&'static str, Vec<&'static str>)> {
    GRAMMARS.iter().map(|g| (g.name, query(g).names.clone())).collect()
}

/// Per-thread parsing state.
pub struct Context {
    /// One parser per grammar slot, made on first use.
    parsers: [Option<Parser>; lang::GRAMMAR_COUNT],
    cursor: QueryCursor,
}

impl Default for Context {
    fn default() -> Self {
        Self::new()
    }
}

impl Context {
    pub fn new() -> Context {
        let mut cursor = QueryCursor::new();
        cursor.set_max_start_depth(Some(MAX_DEPTH));
        Context { parsers: Default::default(), cursor }
    }

    fn parse(&mut self, grammar: &Grammar, src: &[u8]) -> Option<Tree> {
        self.parse_until(grammar, src, None)
    }

    /// Parses `src`, given up at `deadline` (`None` then).
    fn parse_until(&mut self, grammar: &Grammar, src: &[u8], deadline: Option<Duration>) -> Option<Tree> {
        let slot = &mut self.parsers[grammar.slot];
        let parser = slot.get_or_insert_with(|| {
            let mut p = Parser::new();
            p.set_language(&(grammar.language)()).expect("grammar ABI is supported by this tree-sitter");
            p
        });
        let Some(deadline) = deadline else { return parser.parse(src, None) };
        let mut past = |_: &tree_sitter::ParseState| {
            if spent() > deadline { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        };
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut past);
        let len = src.len();
        let tree = parser.parse_with_options(
            &mut |at: usize, _: tree_sitter::Point| if at < len { &src[at..] } else { &[] },
            None,
            Some(options),
        );
        // a parse given up leaves the parser mid-way: the next file starts clean
        parser.reset();
        tree
    }
}

/// Parses one source file and returns its facts. `path` is repo-relative with `/` separators;
/// `src` must be valid UTF-8 (the walker turns anything else into a `Skipped` fact).
pub fn extract_source(ctx: &mut Context, lang: Lang, path: &str, src: &str, out: &mut SplitBuilder) {
    extract_linked_past(ctx, lang, path, src, out, LINK_DEPTH);
}

/// [`extract_source`], with [`Links`] for a tree deeper than `link_depth`.
fn extract_linked_past(ctx: &mut Context, lang: Lang, path: &str, src: &str, out: &mut SplitBuilder, link_depth: u32) {
    let spec = lang.spec();
    let grammar = spec.grammar_for(path);
    let deadline = spent() + budget_for(src.len());
    let tree = ctx.parse_until(grammar, src.as_bytes(), Some(deadline));
    let mut x = Extractor::new(path, spec.is_test_path(path), src, tree.as_ref().map(Tree::root_node), out);
    x.push(rel::FILE, &[path.into(), lang.name().into()]);
    if x.test_file {
        x.push(rel::TEST_FILE, &[path.into()]);
    }
    let Some(root) = x.root else {
        if spent() > deadline {
            too_complex(&mut x);
        } else {
            x.push(rel::PARSE_ERROR, &[path.into(), 1.into(), 1.into(), 1.into(), 1.into(), "error".into()]);
        }
        return;
    };
    let survey = tree::survey(root);
    if survey.depth > link_depth {
        x.links = Some(Links::of(root));
    }
    let q = query(grammar);
    let mut halted = false;
    let mut past = |_: &tree_sitter::QueryCursorState| {
        halted |= spent() > deadline;
        if halted { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    };
    let options = tree_sitter::QueryCursorOptions::new().progress_callback(&mut past);
    let mut matches = ctx.cursor.matches_with_options(&q.query, root, src.as_bytes(), options);
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
        (spec.on_capture)(&mut x, cname, node, name);
    }
    drop(matches);
    if halted || spent() > deadline {
        too_complex(&mut x);
        return;
    }
    classes::marker_owners(&mut x);
    let mut broken = if root.has_error() { parse_errors(&mut x, root) } else { Vec::new() };
    if let Some(n) = survey.first_omitted {
        let end = n.end_position();
        let (el, ec) = (end.row as u32 + 1, end.column as u32 + 1);
        x.push(rel::PARSE_ERROR, &[path.into(), line(n).into(), col(n).into(), el.into(), ec.into(), TOO_DEEP.into()]);
    }
    if root.has_error() || !survey.omitted.is_empty() {
        broken.extend(survey.omitted);
        if let Some(recover) = spec.recover_imports {
            recover(&mut x, &broken);
        }
    }
}

/// Marks the file `too-complex`: a parse error over the whole file, and its surface open (what its
/// facts lack may be there).
fn too_complex(x: &mut Extractor) {
    let (path, end) = (x.path, x.src.lines().count().max(1) as u32);
    x.push(rel::PARSE_ERROR, &[path.into(), 1.into(), 1.into(), end.into(), 1.into(), TOO_COMPLEX.into()]);
    x.push(rel::OPEN_SURFACE, &[path.into(), TOO_COMPLEX.into()]);
}

/// Extracts the items written in the Rust macro body `body` (`cfg_x! { mod a; pub use a::B; }`) as
/// if they were written in place: the body is parsed on its own, keeping the file's positions, and
/// every capture of the Rust query in it but those named in `skip` (what the file's own tree already
/// yields from a token tree) goes to the Rust hook. Syntax errors there are not the file's: a macro's
/// input need not be items.
pub(crate) fn extract_macro_body(x: &mut Extractor, body: tree_sitter::Range, skip: &[&str]) {
    let grammar = Lang::Rust.spec().grammar_for(x.path);
    let mut parser = Parser::new();
    if parser.set_language(&(grammar.language)()).is_err() || parser.set_included_ranges(&[body]).is_err() {
        return;
    }
    let src = x.src;
    let Some(tree) = parser.parse(src.as_bytes(), None) else { return };
    let root = tree.root_node();
    let mut sub = x.nested(root);
    if tree::survey(root).depth > LINK_DEPTH {
        sub.links = Some(Links::of(root));
    }
    let q = query(grammar);
    let mut cursor = QueryCursor::new();
    cursor.set_max_start_depth(Some(MAX_DEPTH));
    let mut matches = cursor.matches(&q.query, root, src.as_bytes());
    while let Some(m) = matches.next() {
        let name = m.captures().iter().find(|c| q.names[c.index as usize] == "name").map(|c| c.node);
        let main = m
            .captures()
            .iter()
            .map(|c| (q.names[c.index as usize], c.node))
            .rfind(|(n, _)| *n != "name" && !n.starts_with('_'));
        if let Some((cname, node)) = main.filter(|(n, _)| !skip.contains(n)) {
            (Lang::Rust.spec().on_capture)(&mut sub, cname, node, name);
        }
    }
    // the body's functions and markers are the file's (`MarkerIn`)
    let owners = std::mem::take(&mut sub.owners);
    x.owners.absorb(owners);
}

/// The manifest kind of a file, by its name: its ecosystem in the language table, `tsconfig`, or
/// `requirements` (a requirements file: it declares no package, its manifests read it).
pub fn manifest_kind(path: &str) -> Option<&'static str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    match lang::Ecosystem::by_manifest(name) {
        Some((eco, _)) => Some(eco.name),
        None if pymanifest::is_requirements(path) => Some(pymanifest::REQUIREMENTS),
        None => manifest::is_tsconfig(name).then_some(manifest::TSCONFIG),
    }
}

/// Extracts a manifest's facts (appending to `b`) with the parser its ecosystem row names, else as
/// a `tsconfig` or a requirements file.
pub fn extract_manifest(b: &mut SegmentBuilder, path: &str, src: &str) {
    let name = path.rsplit('/').next().unwrap_or(path);
    match lang::Ecosystem::by_manifest(name) {
        Some((eco, parse)) => parse(&mut manifest::M::new(b, path, eco.name), src),
        None if pymanifest::is_requirements(path) => {
            pymanifest::requirements(&mut manifest::M::new(b, path, pymanifest::REQUIREMENTS), src)
        }
        None => manifest::tsconfig(&mut manifest::M::new(b, path, manifest::TSCONFIG), src),
    }
}

/// Whether a file holds test-only code by its location or name.
pub fn is_test_path(path: &str, lang: Lang) -> bool {
    lang.spec().is_test_path(path)
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
        let top = top_level(root, n);
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

/// The child of `root` that holds `n` (`n` itself when it is one, or is `root`), found among the
/// root's children: asking a node for its parent walks down from the root, once per level.
fn top_level<'t>(root: Node<'t>, n: Node<'t>) -> Node<'t> {
    let mut c = root.walk();
    let (start, end) = (n.start_byte(), n.end_byte());
    let top = root.children(&mut c).find(|k| k.start_byte() <= start && end <= k.end_byte());
    top.unwrap_or(n)
}

/// Parses a file and walks every node without extracting anything: the raw tree-sitter cost that
/// benchmarks compare extraction against. Returns the number of nodes.
pub fn parse_only(ctx: &mut Context, lang: Lang, path: &str, src: &str) -> usize {
    let Some(tree) = ctx.parse(lang.spec().grammar_for(path), src.as_bytes()) else {
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
            "import.export",
            "mod",
            "impl",
            "call",
            "call.macro",
            "ref",
            "comment",
            "string",
            "raise",
            "throw",
            "export",
            "export.cjs",
            "params",
            "open",
        ];
        for (lang, names) in capture_names() {
            for n in names {
                let ok = known.contains(&n) || n.starts_with("def.") || n.starts_with('_');
                assert!(ok, "grammars/{lang}: unknown capture @{n}");
            }
        }
    }

    /// A tree's links change how hooks find parents and ancestors, never what they find: every
    /// source file of the fixtures and of this module extracts to the same facts either way.
    #[test]
    fn links_change_no_fact() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        let mut dirs = vec![root.join("tests/fixtures"), root.join("src/extract")];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap().map(Result::unwrap) {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if Lang::from_path(&p.to_string_lossy()).is_some() {
                    files.push(p);
                }
            }
        }
        assert!(files.len() > 20, "{files:?}");
        let mut ctx = Context::new();
        for p in files {
            let Ok(src) = std::fs::read_to_string(&p) else { continue }; // an invalid UTF-8 fixture
            let path = p.to_string_lossy().into_owned();
            let lang = Lang::from_path(&path).unwrap();
            let facts = |ctx: &mut Context, link_depth| {
                let mut out = SplitBuilder::default();
                extract_linked_past(ctx, lang, &path, &src, &mut out, link_depth);
                out.finish()
            };
            assert_eq!(facts(&mut ctx, 0), facts(&mut ctx, u32::MAX), "{path}");
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
    fn test_paths() {
        assert!(is_test_path("tests/test_a.py", Lang::Python));
        assert!(is_test_path("pkg/test_a.py", Lang::Python));
        assert!(is_test_path("src/a.spec.ts", Lang::TypeScript));
        assert!(is_test_path("src/__tests__/a.ts", Lang::TypeScript));
        assert!(!is_test_path("src/contest.py", Lang::Python));
        assert!(!is_test_path("src/latest.ts", Lang::TypeScript));
    }
}
