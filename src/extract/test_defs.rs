//! The tests a file defines, and which of them are skipped: what a fix must not take away from
//! the proof that judges it (a test removed or skipped is a change to how code is judged).

use super::{Context, Lang, extract_source};
use crate::facts::{RelId, SplitBuilder, rel};

/// A test function or case a file defines.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TestCase {
    pub name: String,
    pub line: u32,
    /// Why it does not run, when it is skipped: the skip decorator or attribute.
    pub skipped: Option<String>,
}

/// The tests `src` (the text of `path`) defines, each with its skip marker: a Python decorator
/// that skips or expects failure (on the test or its class), a Rust `#[ignore]`. (A TypeScript
/// `it.skip`/`xit` is not a test case at all.) Empty for a file of no indexed language.
pub fn tests_of(path: &str, src: &str) -> Vec<TestCase> {
    let Some(lang) = Lang::from_path(path) else { return Vec::new() };
    let mut out = SplitBuilder::default();
    extract_source(&mut Context::new(), lang, path, src, &mut out);
    let (core, _) = out.finish();
    let rows = |r: RelId| core.all_rows().filter(move |(id, _)| *id == r).map(|(_, cols)| cols);
    let s = |v: u32| core.str(v).to_string();
    let decorated: Vec<(String, String)> = rows(rel::DECORATOR).map(|c| (s(c[1]), s(c[3]))).collect();
    let class_of: Vec<(String, String)> = rows(rel::MEMBER).map(|c| (s(c[2]), s(c[1]))).collect();
    let lines: Vec<&str> = src.lines().collect();
    let mut tests: Vec<TestCase> = rows(rel::TEST_DEF)
        .map(|c| {
            let (name, line) = (s(c[1]), c[2]);
            let owners = std::iter::once(name.clone())
                .chain(class_of.iter().filter(|(m, _)| *m == name).map(|(_, class)| class.clone()));
            let skipped = owners
                .flat_map(|o| decorated.iter().filter(move |(n, _)| *n == o).map(|(_, d)| d.clone()))
                .find(|d| skips(d))
                .map(|d| format!("@{d}"))
                .or_else(|| (lang == Lang::Rust).then(|| ignored(&lines, line)).flatten());
            TestCase { name, line, skipped }
        })
        .collect();
    tests.sort();
    tests.dedup();
    tests
}

/// Does a Python decorator (dotted name, no arguments) skip its test or expect it to fail?
fn skips(decorator: &str) -> bool {
    let last = decorator.rsplit('.').next().unwrap_or(decorator).to_ascii_lowercase();
    last.starts_with("skip") || last == "xfail" || last == "expectedfailure"
}

/// The `#[ignore]` attribute among the attributes right above the Rust function at `line`.
fn ignored(lines: &[&str], line: u32) -> Option<String> {
    let at = (line as usize).checked_sub(1)?;
    let first = lines.get(at)?.trim_start();
    let own = first.starts_with("#[").then_some(first);
    let above =
        lines[..at].iter().rev().map(|l| l.trim_start()).take_while(|l| l.starts_with("#[") || l.starts_with("//"));
    own.into_iter()
        .chain(above)
        .find(|l| l.starts_with("#[ignore") || (l.starts_with("#[cfg_attr") && l.contains("ignore")))
        .map(|l| l.trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_skips_by_decorator_on_the_test_or_its_class() {
        let src = "import unittest\n\nclass T(unittest.TestCase):\n    @unittest.skip('later')\n    def test_a(self):\n        pass\n\n    def test_b(self):\n        pass\n\n@pytest.mark.xfail\ndef test_c():\n    pass\n";
        let t = tests_of("tests/test_x.py", src);
        let got: Vec<(&str, Option<&str>)> = t.iter().map(|t| (t.name.as_str(), t.skipped.as_deref())).collect();
        assert_eq!(got, [("test_a", Some("@unittest.skip")), ("test_b", None), ("test_c", Some("@pytest.mark.xfail"))]);
        let class = "import unittest\n\n@unittest.skipIf(True, 'x')\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n";
        assert_eq!(tests_of("tests/test_y.py", class)[0].skipped.as_deref(), Some("@unittest.skipIf"));
    }

    #[test]
    fn rust_skips_by_ignore() {
        let src = "#[cfg(test)]\nmod t {\n    #[test]\n    #[ignore]\n    fn a() {}\n\n    #[test]\n    fn b() {}\n}\n";
        let t = tests_of("src/lib.rs", src);
        let got: Vec<(&str, bool)> = t.iter().map(|t| (t.name.as_str(), t.skipped.is_some())).collect();
        assert_eq!(got, [("a", true), ("b", false)]);
    }
}
