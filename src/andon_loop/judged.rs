//! What in a change alters how the change is judged — one rule for `verify --gap` and
//! `verify --request`. A fix never proves itself by weakening its own proof: andon's settings
//! (`andon.toml`, the `[tool.andon]` table of `pyproject.toml`), the rules files its contracts
//! name and the files its `[[command]]`s run define the proof; andon's state (`.andon/`, the
//! output and ledger directories) records it; and the tests that existed at the base are what an
//! executed proof runs. A change to any of them is a person's decision.

use std::path::Path;
use std::process::Command;

use super::fix::AppliedChange;
use crate::config::Config;
use crate::extract::test_defs::tests_of;

/// What a change alters in how it is judged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Judged {
    /// Files that define the proof, each with why: `(path, why)`.
    pub definition: Vec<(String, String)>,
    /// andon's own state the change writes.
    pub state: Vec<String>,
    /// Tests that existed at the base and are gone or skipped now, as `path: test \`name\` …`.
    pub tests: Vec<String>,
}

impl Judged {
    /// Nothing about how the change is judged changes.
    pub fn is_empty(&self) -> bool {
        self.definition.is_empty() && self.state.is_empty() && self.tests.is_empty()
    }

    /// The paths that define the proof or hold andon's state.
    pub fn settings_paths(&self) -> Vec<String> {
        self.definition.iter().map(|(p, _)| p.clone()).chain(self.state.iter().cloned()).collect()
    }

    /// Why, in one sentence (empty when nothing changes).
    pub fn reason(&self) -> String {
        let mut parts: Vec<String> = self.definition.iter().map(|(p, why)| format!("`{p}` {why}")).collect();
        parts.extend(self.state.iter().map(|p| format!("`{p}` is andon's own state")));
        if !self.tests.is_empty() {
            parts.push(format!("it removes or skips tests that existed at the base ({})", self.tests.join("; ")));
        }
        if parts.is_empty() {
            return String::new();
        }
        format!("the fix changes how it is judged: {}", parts.join("; "))
    }
}

/// What `change` (against `base`, a commit, or `none` outside git) alters in how it is judged.
pub fn of_change(root: &Path, cfg: &Config, base: &str, change: &AppliedChange) -> Judged {
    let own = super::own_paths(cfg);
    let mut j = Judged::default();
    for (status, path) in &change.files {
        if path.starts_with(".andon/") || own.iter().any(|o| path.starts_with(o.as_str())) {
            j.state.push(path.clone());
            continue;
        }
        let before = (base != "none" && status != "A").then(|| at_base(root, base, path)).flatten();
        if let Some(why) = defines_proof(root, cfg, path, before.as_deref()) {
            j.definition.push((path.clone(), why));
        }
        if let Some(before) = &before {
            let now = if status == "D" { String::new() } else { read(root, path) };
            j.tests.extend(lost_tests(path, before, &now));
        }
    }
    j
}

/// Why `path` defines how a gap is proven, if it does. `before` is its text at the base.
fn defines_proof(root: &Path, cfg: &Config, path: &str, before: Option<&str>) -> Option<String> {
    if path == "andon.toml" {
        return Some("holds andon's settings, contracts and [[command]]s, which define how a gap is proven".into());
    }
    if path == "pyproject.toml" && andon_table(before.unwrap_or("")) != andon_table(&read(root, path)) {
        return Some("changes its [tool.andon] table, which defines how a gap is proven".into());
    }
    let plain = |p: &str| p.trim_matches(|c| c == '"' || c == '\'').trim_start_matches("./").to_string();
    if let Some(c) = cfg.contracts.iter().find(|c| c.rules.as_ref().is_some_and(|r| plain(&r.text) == path)) {
        return Some(format!("holds the rules of contract `{}`", c.name));
    }
    // a file a command names is part of the check once it exists (a new one may be the fix),
    // unless it is source code: the code under test, or tests, judged by the tests they keep
    before?;
    if crate::extract::Lang::from_path(path).is_some() {
        return None;
    }
    let runs = |run: &str| run.split(|c: char| c.is_whitespace() || c == '=' || c == ';').any(|t| plain(t) == path);
    cfg.commands
        .iter()
        .find(|c| runs(&c.run))
        .map(|c| format!("is named by [[command]] `{}`, which judges the fix", c.name))
}

/// The `[tool.andon…]` tables of a `pyproject.toml`, as text.
fn andon_table(text: &str) -> String {
    let mut inside = false;
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with('[') {
            let name = t.trim_start_matches('[').trim_start();
            inside = name.starts_with("tool.andon]") || name.starts_with("tool.andon.");
        }
        if inside {
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

/// The tests of `path` at the base that are gone in `now`, or skipped by a marker the base lacked.
fn lost_tests(path: &str, before: &str, now: &str) -> Vec<String> {
    let (was, is) = (tests_of(path, before), tests_of(path, now));
    let mut lost = Vec::new();
    for t in &was {
        match is.iter().find(|n| n.name == t.name) {
            None => lost.push(format!("{path}: test `{}` removed", t.name)),
            Some(n) => {
                let new = n.skips.iter().find(|m| !t.skips.contains(m));
                lost.extend(new.map(|m| format!("{path}: test `{}` skipped by `{m}`", t.name)));
            }
        }
    }
    lost.sort();
    lost.dedup();
    lost
}

/// The text of `path` at commit `base`, if it existed there.
fn at_base(root: &Path, base: &str, path: &str) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(root).args(["show", &format!("{base}:./{path}")]).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The text of `path` in the working tree (empty when it cannot be read).
fn read(root: &Path, path: &str) -> String {
    let p = crate::text::os_path(path).unwrap_or_else(|| path.into());
    std::fs::read(root.join(p)).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_a_command_runs_defines_the_proof_but_source_it_names_does_not() {
        let t = tempfile::tempdir().unwrap();
        let toml = "[[command]]\nname = \"unit\"\nrun = \"sh ./scripts/check.sh && pytest tests/test_a.py\"\n";
        std::fs::write(t.path().join("andon.toml"), toml).unwrap();
        let cfg = Config::load(t.path()).unwrap();
        let why = defines_proof(t.path(), &cfg, "scripts/check.sh", Some("exit 1\n"));
        assert_eq!(why.as_deref(), Some("is named by [[command]] `unit`, which judges the fix"));
        assert_eq!(defines_proof(t.path(), &cfg, "scripts/check.sh", None), None, "a new file may be the fix");
        assert_eq!(defines_proof(t.path(), &cfg, "tests/test_a.py", Some("def test_a(): pass\n")), None);
        let grep = "[[command]]\nname = \"g\"\nrun = \"grep -q total src/app.py\"\n";
        std::fs::write(t.path().join("andon.toml"), grep).unwrap();
        let cfg = Config::load(t.path()).unwrap();
        assert_eq!(defines_proof(t.path(), &cfg, "src/app.py", Some("x = 1\n")), None, "the code under test");
        assert!(defines_proof(t.path(), &cfg, "andon.toml", Some(toml)).is_some());
    }

    #[test]
    fn only_the_andon_tables_of_pyproject_count() {
        let a = "[project]\nname = \"x\"\n\n[tool.andon]\nfail_on = \"error\"\n\n[[tool.andon.command]]\nname = \"t\"\nrun = \"pytest\"\n\n[tool.ruff]\nx = 1\n";
        let b = a.replace("[tool.ruff]\nx = 1", "[tool.ruff]\nx = 2").replace("name = \"x\"", "name = \"y\"");
        assert_eq!(andon_table(a), andon_table(&b));
        assert_ne!(andon_table(a), andon_table(&a.replace("run = \"pytest\"", "run = \"true\"")));
    }

    #[test]
    fn a_removed_or_skipped_test_is_lost_and_a_new_one_is_not() {
        let before = "def test_a():\n    assert f()\n\ndef test_b():\n    assert g()\n";
        let now = "import pytest\n\n@pytest.mark.skip\ndef test_a():\n    assert f()\n\ndef test_c():\n    pass\n";
        assert_eq!(
            lost_tests("tests/test_x.py", before, now),
            ["tests/test_x.py: test `test_a` skipped by `@pytest.mark.skip`", "tests/test_x.py: test `test_b` removed"]
        );
        assert!(lost_tests("tests/test_x.py", before, &format!("{before}\ndef test_d():\n    pass\n")).is_empty());
    }

    #[test]
    fn a_skip_in_a_test_body_or_a_new_marker_on_a_skipped_test_is_lost() {
        let before = "class T(TestCase):\n    def test_a(self):\n        assert f()\n\n    @unittest.expectedFailure\n    def test_b(self):\n        assert g()\n";
        let now = before
            .replace("        assert f()", "        self.skipTest('later')\n        assert f()")
            .replace("    @unittest.expectedFailure\n", "    @unittest.expectedFailure\n    @unittest.skip('x')\n");
        assert_eq!(
            lost_tests("tests/test_x.py", before, &now),
            [
                "tests/test_x.py: test `test_a` skipped by `self.skipTest`",
                "tests/test_x.py: test `test_b` skipped by `@unittest.skip`"
            ]
        );
        assert!(lost_tests("tests/test_x.py", &now, &now.replace("'later'", "'soon'")).is_empty());
    }
}
