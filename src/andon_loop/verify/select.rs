//! The checks pinning runs: only the tests red first saw flip, where the runner can select them
//! (pytest node ids, `node --test` files), else the whole check. A narrowed check is kept only
//! if it passes on the fixed tree first: a selection the runner does not take (a node id it
//! cannot find, a file it cannot load) falls back to the whole check, so a narrowing mistake can
//! never count a trivial variant as caught.

use std::path::Path;

use super::commands::{self, CommandSpec};
use super::executed;
use crate::ledger::{CheckRun, RedFirst};

/// The checks each trivial variant runs against, in the fixed tree `tree`: for every check red
/// first saw flip (red without the fix, green with it), that check narrowed to its flipped tests
/// where the runner can select them; checks that did not flip are left out. When none flipped
/// (red by definition), every check. Each narrowed check is run once on `tree` and kept only if it
/// passes there. `changed` names the fix's files (where a test name is looked for).
pub fn pinning_checks(
    tree: &Path,
    out: &Path,
    specs: &[CommandSpec],
    red: &RedFirst,
    changed: &[(String, String)],
    nonce: &str,
) -> Vec<CommandSpec> {
    let flipped: Vec<(&CommandSpec, &CheckRun)> = specs
        .iter()
        .enumerate()
        .filter(|(i, _)| red.before.get(*i).is_some_and(|b| b.exit != Some(0)))
        .filter(|(i, _)| red.control.get(*i).is_some_and(|c| c.exit == Some(0)))
        .filter_map(|(i, s)| Some((s, red.before.get(i)?)))
        .collect();
    if flipped.is_empty() {
        return specs.to_vec();
    }
    flipped
        .into_iter()
        .map(|(spec, before)| {
            let Some(narrow) = narrowed(tree, spec, &before.failing, changed) else { return spec.clone() };
            let run = commands::run(tree, out, &narrow, &executed::fresh(&format!("{nonce}-select")));
            if run.passed() { narrow } else { spec.clone() }
        })
        .collect()
}

/// `spec` run on its failing tests `failing` alone, where its runner can select them: a lone
/// `pytest` invocation given their node ids, or a lone `node --test` given the test files of the
/// fix that name them. `None` when the runner is another, the command line is more than one
/// runner invocation, it already selects tests, or a test cannot be placed.
pub fn narrowed(
    tree: &Path,
    spec: &CommandSpec,
    failing: &[String],
    changed: &[(String, String)],
) -> Option<CommandSpec> {
    if failing.is_empty() || spec.run.contains(|c: char| ";&|<>$`()\\\n'\"".contains(c)) {
        return None;
    }
    let words: Vec<&str> = spec.run.split_whitespace().collect();
    let selection = if let Some(at) = words.iter().position(|w| matches!(*w, "pytest" | "py.test")) {
        pytest_ids(&words[at + 1..], failing)?
    } else if let Some(at) = words.iter().position(|w| *w == "--test").filter(|_| words.first() == Some(&"node")) {
        node_files(tree, &words[at + 1..], failing, changed)?
    } else {
        return None;
    };
    let mut narrow = spec.clone();
    narrow.run = format!("{} {}", spec.run, selection.iter().map(|s| sh_quoted(s)).collect::<Vec<_>>().join(" "));
    Some(narrow)
}

/// pytest's node ids of the failing tests, when the invocation selects nothing itself (every word
/// after `pytest` an option without a separate value) and every failing test is a node id.
fn pytest_ids(after: &[&str], failing: &[String]) -> Option<Vec<String>> {
    if after.iter().any(|w| !w.starts_with('-')) || !failing.iter().all(|f| f.contains("::")) {
        return None;
    }
    Some(failing.to_vec())
}

/// The fix's JavaScript/TypeScript test files that name a failing test (as a string literal),
/// when `node --test` is given no files itself and every failing test is found in one.
fn node_files(tree: &Path, after: &[&str], failing: &[String], changed: &[(String, String)]) -> Option<Vec<String>> {
    if after.iter().any(|w| !w.starts_with('-')) {
        return None;
    }
    let tests: Vec<(String, String)> = changed
        .iter()
        .filter(|(st, p)| st != "D" && super::red::test_path(p))
        .filter(|(_, p)| crate::extract::Lang::from_path(p).is_some_and(|l| l != crate::extract::Lang::Rust))
        .filter(|(_, p)| crate::extract::Lang::from_path(p) != Some(crate::extract::Lang::Python))
        .filter_map(|(_, p)| Some((p.clone(), std::fs::read_to_string(tree.join(p)).ok()?)))
        .collect();
    let mut files: Vec<String> = Vec::new();
    for name in failing {
        let literal = |q: char| format!("{q}{name}{q}");
        let (file, _) = tests.iter().find(|(_, text)| ['\'', '"', '`'].iter().any(|q| text.contains(&literal(*q))))?;
        if !files.contains(file) {
            files.push(file.clone());
        }
    }
    Some(files)
}

/// `s` as one word of a POSIX shell command line.
fn sh_quoted(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "._/:=+-,@%".contains(c)) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(run: &str) -> CommandSpec {
        CommandSpec {
            name: "unit".into(),
            run: run.into(),
            stages: Vec::new(),
            lane: crate::config::Lane::Fast,
            timeout_secs: 60,
            technique: None,
            line: 1,
        }
    }

    #[test]
    fn pytest_is_given_the_failing_node_ids() {
        let failing = vec!["tests/test_split.py::test_split[1-2]".to_string()];
        let n = narrowed(Path::new("."), &spec("python3 -m pytest -q"), &failing, &[]).unwrap();
        assert_eq!(n.run, "python3 -m pytest -q 'tests/test_split.py::test_split[1-2]'");
    }

    #[test]
    fn an_invocation_that_selects_or_chains_is_left_whole() {
        let failing = vec!["tests/test_a.py::test_a".to_string()];
        for run in ["pytest tests/", "pytest -k fast", "cd src && pytest", "python3 -m unittest discover", "cargo test"]
        {
            assert!(narrowed(Path::new("."), &spec(run), &failing, &[]).is_none(), "{run}");
        }
        // a failing test that is no node id cannot be selected
        assert!(narrowed(Path::new("."), &spec("pytest"), &["test_a".to_string()], &[]).is_none());
    }

    #[test]
    fn node_test_is_given_the_fix_test_files_that_name_the_failing_tests() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("test")).unwrap();
        std::fs::write(dir.path().join("test/split.test.js"), "test('splits evenly', () => {});\n").unwrap();
        let changed = vec![("A".to_string(), "test/split.test.js".to_string())];
        let n = narrowed(dir.path(), &spec("node --test"), &["splits evenly".to_string()], &changed).unwrap();
        assert_eq!(n.run, "node --test test/split.test.js");
        assert!(narrowed(dir.path(), &spec("node --test"), &["another".to_string()], &changed).is_none());
    }
}
