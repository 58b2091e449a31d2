//! The tests a file defines, and which of them are skipped: what a fix must not take away from
//! the proof that judges it (a test removed or skipped is a change to how code is judged).
//!
//! A skip is read from the facts (Python decorators, a method's class, definition spans) and from
//! the text of the lines around a test: its attributes, its body, the blocks that enclose it (by
//! definition span or indentation) and file-wide markers.

use super::{Context, Lang, extract_source};
use crate::facts::{RelId, SplitBuilder, rel};

/// A test function or case a file defines.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TestCase {
    pub name: String,
    pub line: u32,
    /// The last line of its definition (its own line when the span is unknown).
    pub end: u32,
    /// Why it does not run (or is not judged by its outcome): each skip marker, empty when it runs.
    pub skips: Vec<String>,
}

/// Which tests a skip marker found in a file's text applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Scope {
    /// Every test of the file.
    File,
    /// The test at this line or any test inside the block that starts at it.
    Under(u32),
    /// Every test method of the class of this name.
    Class(String),
    /// Every test of the file not inside a block that starts at one of these lines (a focus).
    Outside(Vec<u32>),
}

/// A skip marker of a file and the tests it applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Skip {
    scope: Scope,
    marker: String,
}

/// The facts `tests_of` reads about one file.
struct FileTestFacts {
    /// `(test name, line)`.
    tests: Vec<(String, u32)>,
    /// `(name, decorator)`.
    decorated: Vec<(String, String)>,
    /// `(method, class)`.
    class_of: Vec<(String, String)>,
    /// `(line, end line)` of every definition.
    spans: Vec<(u32, u32)>,
}

/// The tests `src` (the text of `path`) defines, each with its skip markers. Python: a decorator
/// that skips or expects failure (on the test or its class), a skip call in its body or its
/// class's `setUp`, a skipping `pytestmark`, `__unittest_skip__`, a module-level `load_tests`.
/// Rust: `#[ignore]`, `#[should_panic]`, a never-true `cfg` on the test or an enclosing `mod`.
/// JS/TS: `{ skip }`/`{ todo }` options, `t.skip(` in its body, an enclosing `describe.skip`, a
/// focus (`.only`, `fit`, `fdescribe`) elsewhere in the file. (An `it.skip`/`xit` is not a test
/// case at all.) Empty for a file of no indexed language.
pub fn tests_of(path: &str, src: &str) -> Vec<TestCase> {
    let Some(lang) = Lang::from_path(path) else { return Vec::new() };
    let f = facts_of(lang, path, src);
    let lines: Vec<&str> = src.lines().collect();
    let file_skips = match lang {
        Lang::Python => python_file_skips(&lines, &f),
        Lang::Rust => rust_file_skips(&lines),
        Lang::TypeScript | Lang::JavaScript => js_file_skips(&lines),
    };
    let mut tests: Vec<TestCase> = f
        .tests
        .iter()
        .map(|(name, line)| {
            let end = f.spans.iter().filter(|(l, _)| l == line).map(|(_, e)| *e).max();
            let mut skips = decorator_skips(&f, name);
            skips.extend(match lang {
                Lang::Python => python_body_skip(&lines, *line, end).into_iter().collect(),
                Lang::Rust => rust_attr_skips(&lines, *line),
                Lang::TypeScript | Lang::JavaScript => js_own_skips(&lines, *line),
            });
            let around = enclosing(&lines, &f.spans, *line);
            let class = f.class_of.iter().filter(|(m, _)| m == name).map(|(_, c)| c.as_str());
            let classes: Vec<&str> = class.collect();
            for s in file_skips.iter().filter(|s| applies(&s.scope, *line, &around, &classes)) {
                skips.push(s.marker.clone());
            }
            let mut seen = std::collections::BTreeSet::new();
            skips.retain(|s| seen.insert(s.clone()));
            TestCase { name: name.clone(), line: *line, end: end.map_or(*line, |e| e.max(*line)), skips }
        })
        .collect();
    tests.sort();
    tests.dedup();
    tests
}

/// Extracts the facts of one file that say which tests it defines and how they are decorated.
fn facts_of(lang: Lang, path: &str, src: &str) -> FileTestFacts {
    let mut out = SplitBuilder::default();
    extract_source(&mut Context::new(), lang, path, src, &mut out);
    let (core, detail) = out.finish();
    let rows = |r: RelId| core.all_rows().filter(move |(id, _)| *id == r).map(|(_, cols)| cols);
    let s = |v: u32| core.str(v).to_string();
    let spans = detail.all_rows().filter(|(id, _)| *id == rel::DEF_SPAN).map(|(_, c)| (c[2], c[4])).collect();
    FileTestFacts {
        tests: rows(rel::TEST_DEF).map(|c| (s(c[1]), c[2])).collect(),
        decorated: rows(rel::DECORATOR).map(|c| (s(c[1]), s(c[3]))).collect(),
        class_of: rows(rel::MEMBER).map(|c| (s(c[2]), s(c[1]))).collect(),
        spans,
    }
}

/// The skipping decorators of test `name` and of its classes, as `@dotted.name`.
fn decorator_skips(f: &FileTestFacts, name: &str) -> Vec<String> {
    let owners: Vec<&str> = std::iter::once(name)
        .chain(f.class_of.iter().filter(|(m, _)| m == name).map(|(_, class)| class.as_str()))
        .collect();
    let on = |o: &&str| f.decorated.iter().filter(|(n, _)| n == o).map(|(_, d)| d.as_str()).collect::<Vec<_>>();
    owners.iter().flat_map(on).filter(|d| skips(d)).map(|d| format!("@{d}")).collect()
}

/// Does a skip of `scope` apply to the test at `line`, enclosed by blocks `around`, of `classes`?
fn applies(scope: &Scope, line: u32, around: &[u32], classes: &[&str]) -> bool {
    match scope {
        Scope::File => true,
        Scope::Under(l) => *l == line || around.contains(l),
        Scope::Class(c) => classes.contains(&c.as_str()),
        Scope::Outside(focus) => !focus.iter().any(|l| around.contains(l) || *l == line),
    }
}

/// Does a Python decorator (dotted name, no arguments) skip its test or expect it to fail?
fn skips(decorator: &str) -> bool {
    let last = decorator.rsplit('.').next().unwrap_or(decorator).to_ascii_lowercase();
    last.starts_with("skip") || last == "xfail" || last == "expectedfailure"
}

/// The width of a line's leading whitespace.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Is this line blank or only a comment (Python `#`, C-style `//`, `/*`, `*`)?
fn is_blank(line: &str) -> bool {
    let t = line.trim_start();
    t.is_empty()
        || (t.starts_with('#') && !t.starts_with("#[") && !t.starts_with("#!["))
        || t.starts_with("//")
        || t.starts_with("/*")
        || t.starts_with('*')
}

/// The first lines (1-based) of the blocks that enclose `line`: the definitions whose span covers
/// it, and each less-indented line above it.
fn enclosing(lines: &[&str], spans: &[(u32, u32)], line: u32) -> Vec<u32> {
    let mut out: Vec<u32> = spans.iter().filter(|(l, e)| *l < line && line <= *e).map(|(l, _)| *l).collect();
    let Some(own) = lines.get((line as usize).wrapping_sub(1)) else { return out };
    let mut cur = indent(own);
    for i in (0..line as usize - 1).rev() {
        if cur == 0 {
            break;
        }
        let l = lines[i];
        if !is_blank(l) && indent(l) < cur {
            cur = indent(l);
            out.push(i as u32 + 1);
        }
    }
    out
}

/// The lines of the block that starts at `line`: it and the more-indented lines after it.
fn block(lines: &[&str], line: u32) -> std::ops::Range<usize> {
    let start = (line as usize).saturating_sub(1).min(lines.len());
    let Some(first) = lines.get(start) else { return start..start };
    let own = indent(first);
    let len = lines[start + 1..].iter().take_while(|l| is_blank(l) || indent(l) > own).count();
    start..start + 1 + len
}

/// The text of `line` without a trailing Python comment (a `#` after code).
fn code(line: &str) -> &str {
    line.split(" #").next().unwrap_or(line)
}

/// The Python call in `body` that skips at run time, by name (a decorator line is not a call).
fn python_skip_call<'a>(mut body: impl Iterator<Item = &'a str>) -> Option<String> {
    const CALLS: [(&str, &str); 5] = [
        ("skipTest(", "self.skipTest"),
        ("pytest.skip(", "pytest.skip"),
        ("pytest.xfail(", "pytest.xfail"),
        ("importorskip(", "pytest.importorskip"),
        ("unittest.skip(", "unittest.skip"),
    ];
    body.find_map(|l| {
        let t = code(l).trim_start();
        if is_blank(t) || t.starts_with('@') {
            return None;
        }
        if t.starts_with("raise ") && t.contains("SkipTest") {
            return Some("raise SkipTest".into());
        }
        CALLS.iter().find(|(needle, _)| t.contains(needle)).map(|(_, name)| name.to_string())
    })
}

/// A skip call in the body of the Python test at `line` (its definition ends at `end`).
fn python_body_skip(lines: &[&str], line: u32, end: Option<u32>) -> Option<String> {
    let end = end.map_or_else(|| block(lines, line).end, |e| e as usize).min(lines.len());
    let start = (line as usize).min(end);
    python_skip_call(lines[start..end].iter().copied())
}

/// The first line (1-based) of the class that directly encloses `line`, by indentation.
fn python_class_of(lines: &[&str], line: u32) -> Option<u32> {
    let parent = *enclosing(lines, &[], line).first()?;
    let t = lines[parent as usize - 1].trim_start();
    t.starts_with("class ").then_some(parent)
}

/// The skip markers of a Python file that apply beyond one test: `pytestmark`, `load_tests`,
/// `__unittest_skip__`, a skip in `setUp`/`setUpClass`/`setUpModule` or at module level.
fn python_file_skips(lines: &[&str], f: &FileTestFacts) -> Vec<Skip> {
    let mut out = Vec::new();
    let in_def = |l: u32| f.spans.iter().any(|(a, e)| *a <= l && l <= *e);
    let class_or_file = |l: u32| python_class_of(lines, l).map_or(Scope::File, Scope::Under);
    for (i, raw) in lines.iter().enumerate() {
        let (l, t) = (i as u32 + 1, code(raw).trim_start());
        if raw.starts_with("def load_tests(") {
            out.push(Skip { scope: Scope::File, marker: "load_tests".into() });
        }
        if t.starts_with("pytestmark") && t[10..].trim_start().starts_with(['=', ':']) {
            let text = lines[block(lines, l)].join("\n").to_ascii_lowercase();
            if text.contains("skip") || text.contains("xfail") {
                out.push(Skip { scope: class_or_file(l), marker: "pytestmark".into() });
            }
        }
        if let Some((lhs, rhs)) = t.split_once("__unittest_skip__")
            && rhs.trim_start().strip_prefix('=').is_some_and(|v| v.trim_start().starts_with("True"))
        {
            let marker = format!("{lhs}__unittest_skip__");
            match lhs.strip_suffix('.') {
                Some(class) => {
                    out.push(Skip { scope: Scope::Class(class.rsplit('.').next().unwrap_or(class).into()), marker })
                }
                None => out.extend(python_class_of(lines, l).map(|c| Skip { scope: Scope::Under(c), marker })),
            }
        }
        if !in_def(l)
            && let Some(call) = python_skip_call(std::iter::once(*raw))
        {
            out.push(Skip { scope: class_or_file(l), marker: call });
        }
        for setup in ["setUp", "setUpClass", "asyncSetUp", "setUpModule"] {
            let def = t.strip_prefix("async ").unwrap_or(t);
            if def.starts_with(&format!("def {setup}(")) {
                let end = f.spans.iter().filter(|(a, _)| *a == l).map(|(_, e)| *e).max();
                if let Some(call) = python_body_skip(lines, l, end) {
                    out.push(Skip { scope: class_or_file(l), marker: format!("{setup}: {call}") });
                }
            }
        }
    }
    out
}

/// The skip attributes right above (or on) the Rust function at `line`: `#[ignore]`, a
/// `cfg_attr` that ignores, `#[should_panic]` (its outcome no longer judges the code).
fn rust_attr_skips(lines: &[&str], line: u32) -> Vec<String> {
    let Some(at) = (line as usize).checked_sub(1) else { return Vec::new() };
    let Some(first) = lines.get(at).map(|l| l.trim_start()) else { return Vec::new() };
    let own = first.starts_with("#[").then_some(first);
    let above =
        lines[..at].iter().rev().map(|l| l.trim_start()).take_while(|l| l.starts_with("#[") || l.starts_with("//"));
    let mut out = Vec::new();
    for l in own.into_iter().chain(above) {
        for attr in l.split("#[").skip(1) {
            let attr = format!("#[{}", attr.split("//").next().unwrap_or(attr).trim_end());
            if attr.starts_with("#[ignore") {
                out.push("#[ignore]".to_string());
            } else if attr.starts_with("#[should_panic") {
                out.push("#[should_panic]".to_string());
            } else if attr.starts_with("#[cfg_attr") && attr.contains("ignore") {
                out.push(attr);
            }
        }
    }
    out
}

/// The never-true `#[cfg(…)]` / `#![cfg(…)]` of a Rust file, each scoped to the item (a test
/// function or a `mod`) or the module it applies to.
fn rust_file_skips(lines: &[&str]) -> Vec<Skip> {
    let mut out = Vec::new();
    for (i, raw) in lines.iter().enumerate() {
        let t = raw.trim();
        let inner = t.starts_with("#![cfg(");
        if !(inner || t.starts_with("#[cfg(")) {
            continue;
        }
        let attr = attribute_text(&lines[i..]);
        if cfg_holds(&attr[attr.find("cfg(").unwrap_or(0) + 4..]) != Some(false) {
            continue;
        }
        let marker = attr.clone();
        let scope = if inner {
            enclosing(lines, &[], i as u32 + 1).first().map_or(Scope::File, |p| Scope::Under(*p))
        } else {
            let item = (i + 1..lines.len()).find(|j| !is_blank(lines[*j]) && !lines[*j].trim_start().starts_with("#["));
            match item {
                Some(j) => Scope::Under(j as u32 + 1),
                None => continue,
            }
        };
        out.push(Skip { scope, marker });
    }
    out
}

/// The text of the attribute that starts at `lines[0]`, joined until its brackets close, without
/// comments or line breaks.
fn attribute_text(lines: &[&str]) -> String {
    let mut out = String::new();
    for l in lines.iter().take(40) {
        let code = l.split("//").next().unwrap_or(l).trim();
        out.push_str(if out.ends_with('(') || out.is_empty() { "" } else { " " });
        out.push_str(code);
        if out.matches('[').count() <= out.matches(']').count() {
            break;
        }
    }
    out.replace("( ", "(").replace(" )", ")")
}

/// Whether a `cfg` predicate (the text after `cfg(`) holds when tests are compiled: `Some(true)`
/// always, `Some(false)` never (`any()`, `false`, `FALSE`, `not(test)`, …), `None` it depends.
fn cfg_holds(text: &str) -> Option<bool> {
    let tokens = cfg_tokens(text);
    let mut pos = 0;
    cfg_eval(&tokens, &mut pos)
}

/// The tokens of a `cfg` predicate: identifiers, string literals, `(`, `)`, `,` and `=`.
fn cfg_tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '(' | ')' | ',' | '=' => out.push(c.to_string()),
            '"' => {
                let s: String = chars.by_ref().take_while(|c| *c != '"').collect();
                out.push(format!("\"{s}\""));
            }
            c if c.is_alphanumeric() || c == '_' => {
                let mut s = c.to_string();
                while let Some(n) = chars.next_if(|n| n.is_alphanumeric() || *n == '_') {
                    s.push(n);
                }
                out.push(s);
            }
            _ => {}
        }
    }
    out
}

/// Evaluates the `cfg` predicate at `tokens[*pos]` (see [`cfg_holds`]), moving past it.
fn cfg_eval(tokens: &[String], pos: &mut usize) -> Option<bool> {
    let name = tokens.get(*pos)?.clone();
    *pos += 1;
    if tokens.get(*pos).is_some_and(|t| t == "=") {
        *pos += 2;
        return None;
    }
    if tokens.get(*pos).is_none_or(|t| t != "(") {
        return match name.as_str() {
            "test" | "true" => Some(true),
            "false" | "FALSE" => Some(false),
            _ => None,
        };
    }
    *pos += 1;
    let mut args = Vec::new();
    loop {
        match tokens.get(*pos).map(String::as_str) {
            None => return None,
            Some(")") => break,
            _ => {}
        }
        args.push(cfg_eval(tokens, pos));
        if tokens.get(*pos).is_some_and(|t| t == ",") {
            *pos += 1;
        }
    }
    *pos += 1;
    match name.as_str() {
        "all" if args.contains(&Some(false)) => Some(false),
        "all" => args.iter().all(|a| *a == Some(true)).then_some(true),
        "any" if args.contains(&Some(true)) => Some(true),
        "any" => args.iter().all(|a| *a == Some(false)).then_some(false),
        "not" => args.first().copied().flatten().map(|a| !a),
        _ => None,
    }
}

/// Where `call` (a callee followed by `(`, or a prefix like `describe.skip`) is called in `line`
/// as a name of its own (not the tail of a longer name).
fn calls(line: &str, call: &str) -> bool {
    line.match_indices(call).any(|(i, _)| {
        !line[..i].chars().next_back().is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.'))
    })
}

/// The `{ skip }` / `{ todo }` option of a node:test call in `head`, if it is not `false`.
fn js_option_skip(head: &str) -> Option<String> {
    ["skip", "todo"].into_iter().find_map(|o| {
        head.match_indices(&format!("{o}:")).find_map(|(i, m)| {
            let before = head[..i].trim_end();
            let value = head[i + m.len()..].trim_start();
            let off = value.starts_with("false") || value.starts_with("undefined");
            ((before.ends_with('{') || before.ends_with(',')) && !off).then(|| format!("{{ {o} }}"))
        })
    })
}

/// The skips of the JS/TS test at `line` itself: a `{ skip }`/`{ todo }` option, or a skip of
/// its own context in its body (`t.skip(`, `t.todo(`, `this.skip(`).
fn js_own_skips(lines: &[&str], line: u32) -> Vec<String> {
    let body: Vec<&str> = lines[block(lines, line)].iter().copied().filter(|l| !is_blank(l)).collect();
    let text = body.join("\n");
    let cut = [text.find("=>"), text.find("function")].into_iter().flatten().min().unwrap_or(text.len());
    let (head, rest) = text.split_at(cut);
    let mut out: Vec<String> = js_option_skip(head).into_iter().collect();
    let param = js_callback_param(&text).unwrap_or("t");
    let own = [format!("{param}.skip("), format!("{param}.todo("), "this.skip(".to_string()];
    out.extend(own.iter().find(|c| calls(rest, c)).map(|c| c.trim_end_matches('(').to_string()));
    out
}

/// The name of the first parameter of a test's callback in `head` (`(t) =>`, `t =>`, `function (t`).
fn js_callback_param(head: &str) -> Option<&str> {
    let before = match head.split_once("=>") {
        Some((b, _)) => b.trim_end().trim_end_matches(')'),
        None => head.split_once("function")?.1.split_once('(')?.1.split([',', ')']).next()?,
    };
    let name = before.rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')).next()?;
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

/// The skips of a JS/TS file beyond one test: a skipped `describe` block (its tests), a focus
/// (`.only`, `fit`, `fdescribe`: every test outside it).
fn js_file_skips(lines: &[&str]) -> Vec<Skip> {
    const SKIPPED: [&str; 6] =
        ["describe.skip", "xdescribe(", "context.skip", "xcontext(", "suite.skip", "describe.todo"];
    const FOCUS: [&str; 7] =
        ["describe.only(", "it.only(", "test.only(", "fit(", "fdescribe(", "context.only(", "suite.only("];
    let mut out = Vec::new();
    let mut focus: Vec<(u32, &str)> = Vec::new();
    for (i, l) in lines.iter().enumerate().filter(|(_, l)| !is_blank(l)) {
        let at = i as u32 + 1;
        let suite = calls(l, "describe(") || calls(l, "suite(") || calls(l, "context(");
        let marker = SKIPPED.iter().find(|c| calls(l, c)).map(|c| c.trim_end_matches('(').to_string());
        if let Some(marker) = marker.or_else(|| suite.then(|| js_option_skip(l)).flatten()) {
            out.push(Skip { scope: Scope::Under(at), marker });
        }
        focus.extend(FOCUS.iter().find(|c| calls(l, c)).map(|c| (at, c.trim_end_matches('('))));
    }
    if let Some((_, first)) = focus.first() {
        let marker = first.to_string();
        out.push(Skip { scope: Scope::Outside(focus.iter().map(|(l, _)| *l).collect()), marker });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each test of `src` (as `path`) with its first skip marker.
    fn first_skips(path: &str, src: &str) -> Vec<(String, Option<String>)> {
        tests_of(path, src).into_iter().map(|t| (t.name, t.skips.first().cloned())).collect()
    }

    /// `(name, marker)` pairs, for comparing with [`first_skips`].
    fn want(rows: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
        rows.iter().map(|(n, m)| (n.to_string(), m.map(str::to_string))).collect()
    }

    #[test]
    fn python_skips_by_decorator_on_the_test_or_its_class() {
        let src = "import unittest\n\nclass T(unittest.TestCase):\n    @unittest.skip('later')\n    def test_a(self):\n        pass\n\n    def test_b(self):\n        pass\n\n@pytest.mark.xfail\ndef test_c():\n    pass\n";
        let got = first_skips("tests/test_x.py", src);
        assert_eq!(
            got,
            want(&[("test_a", Some("@unittest.skip")), ("test_b", None), ("test_c", Some("@pytest.mark.xfail"))])
        );
        let class = "import unittest\n\n@unittest.skipIf(True, 'x')\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n";
        assert_eq!(tests_of("tests/test_y.py", class)[0].skips, ["@unittest.skipIf"]);
    }

    #[test]
    fn python_skips_by_a_call_in_the_test_body() {
        let src = "import pytest, unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.skipTest('later')\n        assert f()\n\n    def test_skipTest(self):\n        assert f()  # self.skipTest( in a comment\n\n    def test_c(self):\n        raise unittest.SkipTest('no')\n\ndef test_d():\n    if True:\n        pytest.skip('x')\n\ndef test_e():\n    pytest.xfail('x')\n\ndef test_f():\n    assert g()\n";
        let got = first_skips("tests/test_x.py", src);
        assert_eq!(
            got,
            want(&[
                ("test_a", Some("self.skipTest")),
                ("test_c", Some("raise SkipTest")),
                ("test_d", Some("pytest.skip")),
                ("test_e", Some("pytest.xfail")),
                ("test_f", None),
                ("test_skipTest", None),
            ])
        );
    }

    #[test]
    fn python_pytestmark_skips_the_module_or_its_class() {
        let module = "import pytest\n\npytestmark = [\n    pytest.mark.django_db,\n    pytest.mark.skipif(True, reason='x'),\n]\n\ndef test_a():\n    pass\n";
        assert_eq!(first_skips("tests/test_x.py", module), want(&[("test_a", Some("pytestmark"))]));
        let plain = "import pytest\n\npytestmark = pytest.mark.django_db\n\ndef test_a():\n    pass\n";
        assert_eq!(first_skips("tests/test_x.py", plain), want(&[("test_a", None)]));
        let class = "import pytest\n\nclass TestA:\n    pytestmark = pytest.mark.skip\n\n    def test_a(self):\n        pass\n\ndef test_b():\n    pass\n";
        assert_eq!(first_skips("tests/test_x.py", class), want(&[("test_a", Some("pytestmark")), ("test_b", None)]));
        let level =
            "import pytest\n\nif True:\n    pytest.skip('no', allow_module_level=True)\n\ndef test_a():\n    pass\n";
        assert_eq!(first_skips("tests/test_x.py", level), want(&[("test_a", Some("pytest.skip"))]));
    }

    #[test]
    fn python_unittest_skip_attribute_setup_and_load_tests() {
        let attr = "import unittest\n\nclass A(unittest.TestCase):\n    def test_a(self):\n        pass\n\nclass B(unittest.TestCase):\n    def test_b(self):\n        pass\n\nA.__unittest_skip__ = True\n";
        assert_eq!(
            first_skips("tests/test_x.py", attr),
            want(&[("test_a", Some("A.__unittest_skip__")), ("test_b", None)])
        );
        let setup = "import unittest\n\nclass A(unittest.TestCase):\n    def setUp(self):\n        self.skipTest('x')\n\n    def test_a(self):\n        pass\n\nclass B(unittest.TestCase):\n    def test_b(self):\n        pass\n";
        assert_eq!(
            first_skips("tests/test_x.py", setup),
            want(&[("test_a", Some("setUp: self.skipTest")), ("test_b", None)])
        );
        let load = "import unittest\n\nclass A(unittest.TestCase):\n    def test_a(self):\n        pass\n\ndef load_tests(loader, tests, pattern):\n    return unittest.TestSuite()\n";
        assert_eq!(first_skips("tests/test_x.py", load), want(&[("test_a", Some("load_tests"))]));
    }

    #[test]
    fn rust_skips_by_ignore_or_should_panic() {
        let src = "#[cfg(test)]\nmod t {\n    #[test]\n    #[ignore = \"slow\"]\n    fn a() {}\n\n    #[test]\n    fn b() {}\n\n    #[test]\n    #[should_panic(expected = \"x\")]\n    fn c() {}\n}\n";
        let got = first_skips("src/lib.rs", src);
        assert_eq!(got, want(&[("a", Some("#[ignore]")), ("b", None), ("c", Some("#[should_panic]"))]));
    }

    #[test]
    fn rust_a_never_true_cfg_on_the_test_or_its_mod_skips_it() {
        let src = "#[cfg(all(test, any()))]\nmod off {\n    #[test]\n    fn a() {}\n}\n\n#[cfg(test)]\nmod on {\n    #[cfg(FALSE)]\n    #[test]\n    fn b() {}\n\n    #[test]\n    fn c() {}\n\n    #[test]\n    #[cfg(not(test))]\n    fn d() {}\n\n    #[cfg(feature = \"x\")]\n    #[test]\n    fn e() {}\n}\n";
        let got = first_skips("src/lib.rs", src);
        assert_eq!(
            got,
            want(&[
                ("a", Some("#[cfg(all(test, any()))]")),
                ("b", Some("#[cfg(FALSE)]")),
                ("c", None),
                ("d", Some("#[cfg(not(test))]")),
                ("e", None),
            ])
        );
        let inner = "#![cfg(any())]\n\n#[test]\nfn a() {}\n";
        assert_eq!(first_skips("tests/it.rs", inner), want(&[("a", Some("#![cfg(any())]"))]));
        let lines = "#![cfg(any(\n    feature = \"full\",\n    unix, // a comment\n))]\n\n#[test]\n#[cfg_attr(miri, ignore)] // slow\nfn a() {}\n";
        assert_eq!(first_skips("tests/it.rs", lines), want(&[("a", Some("#[cfg_attr(miri, ignore)]"))]));
        let off = "#![cfg(all(\n    unix,\n    any(),\n))]\n\n#[test]\nfn a() {}\n";
        assert_eq!(first_skips("tests/it.rs", off), want(&[("a", Some("#![cfg(all(unix, any(),))]"))]));
    }

    #[test]
    fn cfg_predicates_that_never_hold_under_test() {
        for never in ["any())", "all(test, any()))", "FALSE)", "not(test))", "all(unix, not(all())))", "false)"] {
            assert_eq!(cfg_holds(never), Some(false), "{never}");
        }
        for maybe in ["any(", "all(unix, any(", "test)", "unix)", "feature = \"x\")", "any(unix, any()))", "not(unix))"]
        {
            assert_ne!(cfg_holds(maybe), Some(false), "{maybe}");
        }
    }

    #[test]
    fn js_skips_by_option_or_a_skip_in_the_body() {
        let src = "import { test } from 'node:test';\n\ntest('a', { skip: true }, () => {\n  assert.ok(f());\n});\n\ntest('b', { todo: 'later' }, () => {});\n\ntest('c', { skip: false }, () => {});\n\ntest('d', (t) => {\n  t.skip('later');\n});\n\ntest('e', async (ctx) => {\n  ctx.todo();\n});\n\nit('f', function () {\n  this.skip();\n});\n\ntest('g', (t) => {\n  assert.ok(t);\n});\n";
        let got = first_skips("src/a.test.ts", src);
        assert_eq!(
            got,
            want(&[
                ("a", Some("{ skip }")),
                ("b", Some("{ todo }")),
                ("c", None),
                ("d", Some("t.skip")),
                ("e", Some("ctx.todo")),
                ("f", Some("this.skip")),
                ("g", None),
            ])
        );
    }

    #[test]
    fn js_tests_in_a_skipped_describe_are_skipped() {
        let src = "describe('on', () => {\n  it('a', () => {});\n});\n\ndescribe.skip('off', () => {\n  describe('inner', () => {\n    it('b', () => {\n      expect(1).toBe(1);\n    });\n  });\n});\n\nxdescribe('off too', () => {\n  it('c', () => {});\n});\n\ndescribe('node', { skip: true }, () => {\n  it('d', () => {});\n});\n\nit('e', () => {});\n";
        let got = first_skips("src/a.test.js", src);
        assert_eq!(
            got,
            want(&[
                ("a", None),
                ("b", Some("describe.skip")),
                ("c", Some("xdescribe")),
                ("d", Some("{ skip }")),
                ("e", None),
            ])
        );
    }

    #[test]
    fn js_a_focus_skips_every_other_test() {
        let src = "describe.only('focused', () => {\n  it('a', () => {});\n});\n\ndescribe('other', () => {\n  it('b', () => {});\n});\n\ntest('c', () => {});\n";
        assert_eq!(
            first_skips("src/a.test.ts", src),
            want(&[("a", None), ("b", Some("describe.only")), ("c", Some("describe.only"))])
        );
        let it_only = "it.only('a', () => {});\nit('b', () => {});\nfit('c', () => {});\n";
        assert_eq!(first_skips("src/b.test.ts", it_only), want(&[("b", Some("it.only"))]));
        let none = "it('b', () => {});\nconst profit = (x) => x;\nprofit(1);\n";
        assert_eq!(first_skips("src/c.test.ts", none), want(&[("b", None)]));
    }
}
