//! What in a change alters how the change is judged — one rule for `verify --gap` and
//! `verify --request`. A fix never proves itself by weakening its own proof: andon's settings
//! (`andon.toml`, the `[tool.andon]` table of `pyproject.toml`), the rules files its contracts
//! name and the files its `[[command]]`s run define the proof; andon's state (`.andon/`, the
//! output and ledger directories) records it; and the tests that existed at the base are what an
//! executed proof runs. A change to any of them is a person's decision.

use std::collections::BTreeMap;
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
    /// Tests that existed at the base and are gone or skipped now, or whose assertions changed,
    /// were weakened or removed, as `path: test \`name\` …`.
    pub tests: Vec<String>,
}

impl Judged {
    /// Nothing about how the change is judged changes.
    pub fn is_empty(&self) -> bool {
        self.definition.is_empty() && self.state.is_empty() && self.tests.is_empty()
    }

    /// Adds the parts of what defines the proof that changed since the proposal (`drift`), but
    /// those the change itself already names.
    pub fn add_drift(&mut self, drift: &[String]) {
        for part in drift {
            if !self.definition.iter().any(|(p, _)| part.starts_with(p.as_str())) {
                self.definition
                    .push((part.clone(), "changed since the proposal, and it defines how the fix is judged".into()));
            }
        }
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
            parts.push(format!(
                "it removes, skips or rewrites the expectations of tests that existed at the base ({})",
                self.tests.join("; ")
            ));
        }
        if parts.is_empty() {
            return String::new();
        }
        format!("the fix changes how it is judged: {}", parts.join("; "))
    }
}

/// What `change` (against `base`, a commit, or `none` outside git) alters in how it is judged.
pub fn of_change(root: &Path, cfg: &Config, base: &str, change: &AppliedChange) -> Judged {
    let own = super::super::own::own_paths(cfg);
    let mut j = Judged::default();
    for (status, path) in &change.files {
        if path.starts_with(".andon/") || own.iter().any(|o| path.starts_with(o.as_str())) {
            j.state.push(path.clone());
            continue;
        }
        let before = (base != "none" && status != "A").then(|| at_base(root, base, path)).flatten();
        if let Some(why) = defines_proof(root, cfg, path, before.as_deref()) {
            j.definition.push((path.clone(), why));
        } else if status != "D"
            && let Some(why) = patches_the_runner(before.as_deref().unwrap_or(""), &read(root, path))
        {
            j.definition.push((path.clone(), why));
        }
        if let Some(before) = &before {
            let now = if status == "D" { String::new() } else { read(root, path) };
            j.tests.extend(lost_tests(path, before, &now));
            j.tests.extend(super::expectations::rewritten(path, before, &now));
            j.tests.extend(super::disarmed::disarmed(path, before, &now));
            j.tests.extend(super::disarmed::switched(root, path, before, &now));
        }
    }
    j
}

/// Why `path` defines how a gap is proven, if it does. `before` is its text at the base.
fn defines_proof(root: &Path, cfg: &Config, path: &str, before: Option<&str>) -> Option<String> {
    if path == "andon.toml" {
        return Some("holds andon's settings, contracts and [[command]]s, which define how a gap is proven".into());
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    if name == "pyproject.toml" && judging_tables(before.unwrap_or("")) != judging_tables(&read(root, path)) {
        return Some(format!(
            "changes its {} tables, which define how a gap is proven and how tests run",
            TOOL_TABLES_TEXT
        ));
    }
    if name == "package.json" && npm_scripts(before.unwrap_or("")) != npm_scripts(&read(root, path)) {
        return Some("changes its `scripts`, which run the tests".into());
    }
    if is_test_config(name) || is_cargo_config(path) {
        return Some("configures how the tests run".into());
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

/// The `[tool.…]` tables of a `pyproject.toml` that define how a fix is judged.
const TOOL_TABLES: &[&str] = &["andon", "pytest", "coverage", "tox", "nox"];
const TOOL_TABLES_TEXT: &str = "[tool.andon]/[tool.pytest]/[tool.coverage]/[tool.tox]/[tool.nox]";

/// The judging tables of a `pyproject.toml`'s text, as parsed (so quoting, layout or a table
/// written inside a string changes nothing but what TOML reads); the text itself when it does
/// not parse.
fn judging_tables(text: &str) -> String {
    let Ok(doc) = toml::from_str::<toml::Table>(text) else { return text.to_string() };
    let tool = doc.get("tool").and_then(toml::Value::as_table);
    let tables: Vec<(&str, Option<&toml::Value>)> =
        TOOL_TABLES.iter().map(|t| (*t, tool.and_then(|x| x.get(*t)))).collect();
    serde_json::to_string(&tables).unwrap_or_default()
}

/// The `scripts` of a `package.json`'s text, as parsed; the text itself when it does not parse.
fn npm_scripts(text: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => v.get("scripts").map(|s| s.to_string()).unwrap_or_default(),
        Err(_) => text.to_string(),
    }
}

/// Is `path` Cargo's own configuration (`.cargo/config.toml`, `.cargo/config`), which sets the
/// runner of test binaries, the flags they are built with, aliases of `cargo test`?
fn is_cargo_config(path: &str) -> bool {
    let path = format!("/{path}");
    path.ends_with("/.cargo/config.toml") || path.ends_with("/.cargo/config")
}

/// The names of the files that configure how a repository's tests run, wherever they are
/// (pytest, tox, nox, coverage), and [`ROOT_TEST_CONFIG`] at its root (make, just).
const TEST_CONFIG: &[&str] = &[
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "tox.ini",
    "setup.cfg",
    "noxfile.py",
    ".coveragerc",
];
const ROOT_TEST_CONFIG: &[&str] = &["Makefile", "makefile", "GNUmakefile", "justfile", "Justfile"];
/// The beginnings of the names of JavaScript runners' configuration files (Jest, Vitest, Mocha,
/// Karma, Playwright, Cypress).
const TEST_CONFIG_PREFIXES: &[&str] =
    &["jest.config.", "vitest.config.", ".mocharc.", "karma.conf.", "playwright.config.", "cypress.config."];

/// Does a file of this name configure how a repository's tests run?
fn is_test_config(name: &str) -> bool {
    TEST_CONFIG.contains(&name)
        || ROOT_TEST_CONFIG.contains(&name)
        || TEST_CONFIG_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// What defines how a fix is judged, a digest per part: andon's settings, the judging tables of
/// `pyproject.toml` and the `scripts` of `package.json`, the rules files of contracts, the files
/// commands name, every test configuration file and every ignore rule (`.gitignore` and
/// `.ignore` files, ignored or not, `.git/info/exclude`, git's global excludes). `andon propose`
/// records it; verify compares, so a change outside the diff (an ignored file, a repository
/// without git) is seen too.
pub type Judging = BTreeMap<String, String>;

/// The [`Judging`] of the repository at `root` now.
pub fn fingerprint(root: &Path, cfg: &Config) -> Judging {
    let mut parts = Judging::new();
    let file = |parts: &mut Judging, path: &str| {
        let p = crate::text::os_path(path).unwrap_or_else(|| path.into());
        parts.insert(path.to_string(), std::fs::read(root.join(p)).map_or_else(|_| "absent".into(), |b| digest(&b)));
    };
    file(&mut parts, "andon.toml");
    parts.insert(
        "pyproject.toml (tool tables)".into(),
        digest(judging_tables(&read(root, "pyproject.toml")).as_bytes()),
    );
    parts.insert("package.json (scripts)".into(), digest(npm_scripts(&read(root, "package.json")).as_bytes()));
    let plain = |p: &str| p.trim_matches(|c| c == '"' || c == '\'').trim_start_matches("./").to_string();
    for rules in cfg.contracts.iter().filter_map(|c| c.rules.as_ref()) {
        file(&mut parts, &plain(&rules.text));
    }
    for c in &cfg.commands {
        for t in c.run.split(|c: char| c.is_whitespace() || c == '=' || c == ';').map(plain) {
            if !t.is_empty()
                && !t.starts_with('-')
                && crate::extract::Lang::from_path(&t).is_none()
                && root.join(&t).is_file()
            {
                let p = crate::text::os_path(&t).unwrap_or_else(|| t.clone().into());
                let d = std::fs::read(root.join(p)).map_or_else(|_| "absent".into(), |b| digest(&b));
                parts.insert(format!("{t} {NAMED_BY} `{}`", c.name), d);
            }
        }
    }
    // andon's own scratch ignore file (written by the loop) judges nothing
    let own_ignore: Vec<String> =
        super::super::own::own_paths(cfg).iter().map(|p| format!("{p}{}", super::super::own::SCRATCH_IGNORE)).collect();
    for path in judging_files(root).into_iter().filter(|p| !own_ignore.contains(p)) {
        file(&mut parts, &path);
    }
    for (name, path) in ignore_rule_files(root) {
        parts.insert(name, std::fs::read(path).map_or_else(|_| "absent".into(), |b| digest(&b)));
    }
    parts
}

/// How a part that is a file a command names is keyed: `PATH named by [[command]] `NAME``.
const NAMED_BY: &str = "named by [[command]]";

/// The parts of `recorded` and `now` that differ (a part present on one side only included),
/// but a file a command names that did not exist at the proposal: a new one may be the fix.
pub fn drift(recorded: &Judging, now: &Judging) -> Vec<String> {
    let absent = "absent".to_string();
    let keys: std::collections::BTreeSet<&String> = recorded.keys().chain(now.keys()).collect();
    keys.into_iter()
        .filter(|k| !k.contains(NAMED_BY) || recorded.contains_key(*k))
        .filter(|k| recorded.get(*k).unwrap_or(&absent) != now.get(*k).unwrap_or(&absent))
        .cloned()
        .collect()
}

fn digest(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

/// Every test configuration file and ignore file under `root`, tracked, untracked or ignored
/// (with git); the ones at the root without git.
fn judging_files(root: &Path) -> Vec<String> {
    let names: Vec<&str> = [".gitignore", ".ignore", ".cargo/config.toml", ".cargo/config"]
        .into_iter()
        .chain(TEST_CONFIG.iter().copied())
        .collect();
    let mut specs: Vec<String> = names.iter().map(|n| format!(":(glob)**/{n}")).collect();
    specs.extend(TEST_CONFIG_PREFIXES.iter().map(|p| format!(":(glob)**/{p}*")));
    specs.extend(ROOT_TEST_CONFIG.iter().map(|n| n.to_string()));
    let list = |extra: &[&str]| {
        let mut args = vec!["ls-files", "-z"];
        args.extend_from_slice(extra);
        args.push("--");
        let out = Command::new("git").arg("-C").arg(root).args(&args).args(&specs).output().ok()?;
        out.status.success().then_some(out.stdout)
    };
    let found =
        match (list(&["-c", "-o", "--exclude-standard"]), list(&["-o", "-i", "--exclude-standard", "--directory"])) {
            (Some(a), Some(b)) => [a, b].concat(),
            _ => return names.iter().filter(|n| root.join(n).is_file()).map(|n| n.to_string()).collect(),
        };
    let vendored = |f: &str| f.split('/').any(|c| crate::index::walk::VENDORED_DIRS.contains(&c));
    let mut files: Vec<String> = found
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty() && !f.ends_with(b"/"))
        .map(crate::text::path_text)
        .filter(|f| !vendored(f))
        .collect();
    files.sort();
    files.dedup();
    files
}

/// git's own ignore rules outside the tree: `.git/info/exclude` and the global excludes file.
fn ignore_rule_files(root: &Path) -> Vec<(String, std::path::PathBuf)> {
    let git = |args: &[&str]| {
        let out = Command::new("git").arg("-C").arg(root).args(args).output().ok()?;
        let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !s.is_empty()).then_some(s)
    };
    let mut files = Vec::new();
    if let Some(p) = git(&["rev-parse", "--git-path", "info/exclude"]) {
        files.push(("git info/exclude".to_string(), root.join(p)));
    }
    let global = git(&["config", "--path", "core.excludesFile"]).map(std::path::PathBuf::from).or_else(|| {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".config")))?;
        Some(base.join("git/ignore"))
    });
    if let Some(g) = global {
        files.push(("git global excludes".to_string(), g));
    }
    files
}

/// Why the text `now` (of a file that was `before` at the base) changes which tests run or how
/// their assertions judge, if a line it adds does: a `load_tests` or collection hook, or an
/// assignment to the test framework's own attributes (`unittest.TestCase.assertEqual = …`,
/// `setattr(unittest, …)`, `assert.strictEqual = …`, `expect = …`). Wherever it sits — a test
/// package's `__init__.py`, a source module — it decides verdicts, not the code under test.
fn patches_the_runner(before: &str, now: &str) -> Option<String> {
    let had: std::collections::BTreeSet<&str> = before.lines().map(str::trim).collect();
    let hooks = ["def load_tests(", "def pytest_collection_modifyitems", "def pytest_runtest_", "def pytest_configure"];
    let owners = ["unittest.", "TestCase.", "pytest.", "assert.", "expect.", "test.", "it.", "describe."];
    for l in now.lines().map(str::trim).filter(|l| !had.contains(l) && !l.starts_with('#')) {
        if let Some(h) = hooks.iter().find(|h| l.contains(*h)) {
            return Some(format!(
                "adds `{}`, which decides which tests run",
                h.trim_start_matches("def ").trim_end_matches('(')
            ));
        }
        let assigns = |target: &str| {
            let rest = target.trim();
            owners.iter().any(|o| rest.starts_with(o) || rest.contains(&format!(".{o}")))
                || rest == "expect"
                || rest == "assert"
        };
        let patched = match l.split_once('=') {
            Some((lhs, rhs)) if !rhs.starts_with('=') && !lhs.ends_with(['=', '!', '<', '>']) => assigns(lhs),
            _ => false,
        };
        // a computed key (`assert[k] = …`) or a bulk write (`Object.assign(assert, …)`) patches too
        let bare: Vec<&str> = owners.iter().map(|o| o.trim_end_matches('.')).collect();
        let computed = bare.iter().any(|o| l.starts_with(&format!("{o}[")) && l.contains("] ="));
        let bulk = ["Object.assign(", "Object.defineProperty(", "Object.defineProperties(", "Reflect.set(", "setattr("]
            .iter()
            .any(|f| bare.iter().any(|o| l.contains(&format!("{f}{o},")) || l.contains(&format!("{f}{o}."))));
        if patched || computed || bulk {
            return Some(format!(
                "patches the test framework (`{}`): it decides how assertions judge",
                crate::text::short(l)
            ));
        }
    }
    None
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
pub(crate) fn at_base(root: &Path, base: &str, path: &str) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(root).args(["show", &format!("{base}:./{path}")]).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The text of `path` in the working tree (empty when it cannot be read).
pub(crate) fn read(root: &Path, path: &str) -> String {
    let p = crate::text::os_path(path).unwrap_or_else(|| path.into());
    std::fs::read(root.join(p)).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_patch_of_the_framework_in_any_form_is_a_judging_change() {
        for line in [
            "unittest.TestCase.assertEqual = lambda *a, **k: None",
            "assert.equal = () => {};",
            "assert[k] = function () {};",
            "Object.assign(assert, { equal() {} });",
            "setattr(unittest.TestCase, 'assertEqual', noop)",
            "def load_tests(loader, tests, pattern):",
        ] {
            assert!(patches_the_runner("", line).is_some(), "{line}");
        }
        for line in ["x = assert_sorted(items)", "total = 3", "if a == b:", "expected = [1, 2]"] {
            assert!(patches_the_runner("", line).is_none(), "{line}");
        }
    }

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
        for config in ["tests/conftest.py", "pytest.ini", "tox.ini", "setup.cfg", "Makefile", "web/jest.config.js"] {
            assert_eq!(
                defines_proof(t.path(), &cfg, config, Some("")).as_deref(),
                Some("configures how the tests run")
            );
        }
        std::fs::write(t.path().join("package.json"), r#"{"name": "x", "scripts": {"test": "true"}}"#).unwrap();
        let before = r#"{"name": "x", "scripts": {"test": "node --test"}}"#;
        assert!(defines_proof(t.path(), &cfg, "package.json", Some(before)).is_some());
        let same = r#"{"name": "y", "scripts": {"test": "true"}}"#;
        assert_eq!(defines_proof(t.path(), &cfg, "package.json", Some(same)), None, "only its scripts judge");
    }

    #[test]
    fn only_the_judging_tables_of_pyproject_count_as_toml_reads_them() {
        let a = "[project]\nname = \"x\"\n\n[tool.andon]\nfail_on = \"error\"\n\n[[tool.andon.command]]\nname = \"t\"\nrun = \"pytest\"\n\n[tool.ruff]\nx = 1\n";
        let b = a.replace("[tool.ruff]\nx = 1", "[tool.ruff]\nx = 2").replace("name = \"x\"", "name = \"y\"");
        assert_eq!(judging_tables(a), judging_tables(&b));
        assert_ne!(judging_tables(a), judging_tables(&a.replace("run = \"pytest\"", "run = \"true\"")));
        // a quoted key is the same table; a table written inside a string is no table
        let quoted = a.replace(
            "[[tool.andon.command]]\nname = \"t\"\nrun = \"pytest\"",
            "[[tool.\"andon\".command]]\nname = \"t\"\nrun = \"true\"",
        );
        assert_ne!(judging_tables(a), judging_tables(&quoted));
        let hidden =
            a.replace("[project]\nname = \"x\"", "[project]\nname = \"x\"\ndescription = \"\"\"\n[tool.andon]\n\"\"\"");
        assert_eq!(judging_tables(a), judging_tables(&hidden));
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
