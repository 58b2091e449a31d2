//! A canary for the test framework. A fix can leave every test as it was and still make them
//! pass: by patching the framework from the code under test (`TestCase.assertEqual` replaced
//! through an alias, `getattr`, a bulk write; `assert.strictEqual` overwritten). No reading of
//! the diff finds every spelling, so the framework is asked: in the copy with the fix, a test that
//! must fail (`assertEqual(1, 2)`) is laid beside a test that flipped, importing what it imports,
//! and the check runs once more. A run that counts the canary and still passes has a framework
//! that no longer fails anything. A run that does not count it (its runner did not collect it)
//! shows nothing either way.

use std::path::Path;

use super::commands::{self, CommandSpec};
use super::executed;
use crate::extract::lang::Lang;
use crate::ledger::CheckRun;

/// The canary's test, as a runner names it.
const NAME: &str = "andon_canary";

/// Why the fix disarms the framework, if a flipped check that counts the canary passes with it:
/// for each check that failed without the fix (`before`) and passed with it (`control`, in `tree`),
/// a canary beside a test file (`beside`: the fix's, then those the failing runs named),
/// importing what that file imports.
pub fn disarmed(
    tree: &Path,
    out: &Path,
    specs: &[CommandSpec],
    runs: (&[CheckRun], &[CheckRun]),
    beside: &[String],
    nonce: &str,
) -> Option<String> {
    let (before, control) = runs;
    let test_path = |p: &str| Lang::from_path(p).is_some_and(|l| l.spec().is_clear_test_path(p));
    let beside = beside.iter().filter(|p| test_path(p)).find_map(|p| {
        let text = std::fs::read_to_string(tree.join(p)).ok()?;
        canary_for(p, &text)
    })?;
    let (file, text) = beside;
    let path = tree.join(&file);
    std::fs::write(&path, text).ok()?;
    let found = specs.iter().enumerate().find_map(|(i, spec)| {
        let (b, c) = (before.get(i)?, control.get(i)?);
        if b.exit == Some(0) || c.exit != Some(0) || !commands::reports_counts(&spec.run) {
            return None;
        }
        let run = commands::run(tree, out, spec, &executed::fresh(&format!("{nonce}-canary")));
        let output = std::fs::read_to_string(tree.join(&run.artifact))
            .or_else(|_| std::fs::read_to_string(&run.artifact))
            .unwrap_or_default();
        let counted = commands::tests_ran(&output).zip(c.ran).is_some_and(|(with, without)| with > without);
        (run.passed() && counted).then(|| {
            format!(
                "with the fix, `{}` passes a test that must fail (`{file}`, asserting 1 == 2): the change disarms the test framework, so its passing shows nothing",
                spec.run
            )
        })
    });
    let _ = std::fs::remove_file(&path);
    found
}

/// The canary file beside test file `path` (whose text is `text`), and its text: the file's own
/// top-level imports (so the code under test loads as it does for its tests), then a test that
/// must fail. `None` for a language without a canary here (Rust: a test binary is compiled whole).
fn canary_for(path: &str, text: &str) -> Option<(String, String)> {
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    let at = |name: &str| if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") };
    let imports: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.starts_with("import ") || l.starts_with("from ") || l.starts_with("const ") && l.contains("require(")
        })
        .filter(|l| !l.trim_end().ends_with('(') && !l.trim_end().ends_with('{'))
        .collect();
    match Lang::from_path(path)? {
        Lang::Python => {
            let body = format!(
                "import unittest\n{}\n\n\nclass AndonCanary(unittest.TestCase):\n    def test_{NAME}(self):\n        self.assertEqual(1, 2)\n\n\ndef test_{NAME}_plain():\n    assert 1 == 2\n",
                imports.join("\n")
            );
            Some((at(&format!("test_{NAME}.py")), body))
        }
        Lang::JavaScript | Lang::TypeScript if !path.ends_with(".ts") && !path.ends_with(".tsx") => {
            let ext = path.rsplit('.').next().unwrap_or("js");
            let esm = text.contains("import ");
            let head = if esm {
                "import { test as andonTest } from 'node:test';\nimport andonAssert from 'node:assert/strict';"
            } else {
                "const { test: andonTest } = require('node:test');\nconst andonAssert = require('node:assert/strict');"
            };
            let body = format!(
                "{}\n{head}\n\nandonTest('{NAME}', () => {{\n  andonAssert.strictEqual(1, 2);\n}});\n",
                imports.join("\n")
            );
            Some((at(&format!("{NAME}.test.{ext}")), body))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::canary_for;

    #[test]
    fn a_canary_imports_what_its_neighbour_imports_and_must_fail() {
        let py = "import unittest\n\nfrom calc.ops import add\n\n\nclass T(unittest.TestCase):\n    pass\n";
        let (file, text) = canary_for("tests/test_ops.py", py).unwrap();
        assert_eq!(file, "tests/test_andon_canary.py");
        assert!(text.contains("from calc.ops import add") && text.contains("self.assertEqual(1, 2)"), "{text}");
        let js = "import { test } from 'node:test';\nimport { split } from '../src/split.js';\n";
        let (file, text) = canary_for("test/split.test.js", js).unwrap();
        assert_eq!(file, "test/andon_canary.test.js");
        assert!(
            text.contains("import { split } from '../src/split.js';") && text.contains("strictEqual(1, 2)"),
            "{text}"
        );
        assert!(canary_for("tests/ops.rs", "use calc::add;\n").is_none());
    }
}
