//! Unit tests of property-tool detection and of judging a run, on real tool outputs.

use std::path::Path;

use super::python::{is_hypothesis, requirement_name};
use super::*;

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-output").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[track_caller]
fn check_cx(tool: PropertyTool, name: &str, expected: &str) {
    assert_eq!(counterexample(tool, &fixture(name)).as_deref(), Some(expected), "{name}");
}

// ---- counterexamples in real outputs ----

#[test]
fn proptest_counterexamples() {
    check_cx(PropertyTool::Proptest, "proptest-fail.txt", "x = 100");
    check_cx(PropertyTool::Proptest, "proptest-fail-multiline.txt", "xs = [\n    337,\n], y = 663");
    // proptest 1.0: `Test failed: …; minimal failing input: x = 100` on one line
    check_cx(PropertyTool::Proptest, "proptest-1.0-fail.txt", "x = 100");
    assert_eq!(counterexample(PropertyTool::Proptest, &fixture("proptest-pass.txt")), None);
}

#[test]
fn quickcheck_counterexamples() {
    check_cx(PropertyTool::Quickcheck, "quickcheck-fail.txt", "(100)");
    check_cx(PropertyTool::Quickcheck, "quickcheck-fail-pair.txt", "([45], 255)");
    check_cx(PropertyTool::Quickcheck, "quickcheck-fail-runtime.txt", "([])");
    assert_eq!(counterexample(PropertyTool::Quickcheck, &fixture("quickcheck-pass.txt")), None);
    assert_eq!(
        counterexample(PropertyTool::Quickcheck, "[quickcheck] TEST FAILED. No Arguments Provided").as_deref(),
        Some("()")
    );
}

#[test]
fn hypothesis_counterexamples() {
    // pytest, two failing tests: the last report, without pytest's `E   ` margin
    check_cx(PropertyTool::Hypothesis, "hypothesis-fail.txt", "test_pair(\n    xs=[],\n    y=1000,\n)");
    // an older Hypothesis says `Falsifying example:`
    check_cx(PropertyTool::Hypothesis, "hypothesis-6.100-fail.txt", "test_pair(\n    xs=[],\n    y=1000,\n)");
    // called directly, not under pytest
    check_cx(PropertyTool::Hypothesis, "hypothesis-fail-direct.txt", "test_pair(\n    xs=[],\n    y=1000,\n)");
    check_cx(
        PropertyTool::Hypothesis,
        "hypothesis-stateful-fail.txt",
        "state = Counter()\nstate.below_hundred()\nstate.add(n=50)\nstate.below_hundred()\nstate.add(n=50)\n\
             state.below_hundred()\nstate.teardown()",
    );
    assert_eq!(counterexample(PropertyTool::Hypothesis, &fixture("hypothesis-pass.txt")), None);
}

#[test]
fn hypothesis_single_line_and_explicit_forms() {
    let out = "Falsifying example: test_x(x=5)\nTraceback (most recent call last):";
    assert_eq!(counterexample(PropertyTool::Hypothesis, out).as_deref(), Some("test_x(x=5)"));
    let out = "Failing explicit example: test_x(\n    x=0,\n)\nmore output";
    assert_eq!(counterexample(PropertyTool::Hypothesis, out).as_deref(), Some("test_x(\n    x=0,\n)"));
}

#[test]
fn fast_check_counterexamples() {
    check_cx(PropertyTool::FastCheck, "fastcheck-fail.txt", "[100]");
    check_cx(PropertyTool::FastCheck, "fastcheck-fail-pair.txt", "[[988],12]");
    // vitest through @fast-check/vitest, with its colour codes
    check_cx(PropertyTool::FastCheck, "fastcheck-vitest-fail.txt", "[100]");
    assert_eq!(counterexample(PropertyTool::FastCheck, &fixture("fastcheck-pass.txt")), None);
}

#[test]
fn a_tool_never_reads_another_tools_report() {
    assert_eq!(counterexample(PropertyTool::Proptest, &fixture("hypothesis-fail.txt")), None);
    assert_eq!(counterexample(PropertyTool::Hypothesis, &fixture("proptest-fail.txt")), None);
    assert_eq!(counterexample(PropertyTool::FastCheck, &fixture("quickcheck-fail.txt")), None);
    assert_eq!(counterexample(PropertyTool::Quickcheck, &fixture("fastcheck-fail.txt")), None);
}

#[test]
fn the_last_counterexample_wins_and_length_is_bounded() {
    let out = "Counterexample: [5000]\nShrunk 1 time(s)\n\nCounterexample: [100]\nShrunk 26 time(s)\n";
    assert_eq!(counterexample(PropertyTool::FastCheck, out).as_deref(), Some("[100]"));
    let long = format!("minimal failing input: s = \"{}\"\n\tsuccesses: 0\n", "a".repeat(5000));
    let cx = counterexample(PropertyTool::Proptest, &long).unwrap();
    assert!(cx.ends_with(TRUNCATED), "{cx}");
    assert_eq!(cx.chars().count(), MAX_COUNTEREXAMPLE_CHARS + TRUNCATED.chars().count());
}

#[test]
fn windows_line_ends_are_read() {
    let out = fixture("hypothesis-fail-direct.txt").replace('\n', "\r\n");
    assert_eq!(
        counterexample(PropertyTool::Hypothesis, &out).as_deref(),
        Some("test_pair(\n    xs=[],\n    y=1000,\n)")
    );
}

// ---- judging ----

#[test]
fn exit_zero_is_proven() {
    for (tool, name) in [
        (PropertyTool::Proptest, "proptest-pass.txt"),
        (PropertyTool::Quickcheck, "quickcheck-pass.txt"),
        (PropertyTool::Hypothesis, "hypothesis-pass.txt"),
        (PropertyTool::FastCheck, "fastcheck-pass.txt"),
    ] {
        let r = judge(tool, Some(0), false, &fixture(name));
        assert_eq!((r.verdict, r.counterexample.as_deref()), (Verdict::Proven, None), "{name}: {}", r.summary);
    }
}

#[test]
fn a_failure_is_refuted_with_its_minimized_counterexample() {
    let r = judge(PropertyTool::Proptest, Some(101), false, &fixture("proptest-fail.txt"));
    assert_eq!(r.verdict, Verdict::Refuted);
    assert_eq!(r.counterexample.as_deref(), Some("x = 100"));
    assert_eq!(r.summary, "proptest refuted the property (exit 101); minimized counterexample: x = 100");
    let r = judge(PropertyTool::Hypothesis, Some(1), false, &fixture("hypothesis-fail.txt"));
    assert_eq!(r.verdict, Verdict::Refuted);
    assert_eq!(r.summary, "hypothesis refuted the property (exit 1); minimized counterexample recorded (4 lines)");
    let r = judge(PropertyTool::FastCheck, Some(1), false, &fixture("fastcheck-fail.txt"));
    assert_eq!(
        r.summary,
        "fast-check refuted the property (exit 1); minimized counterexample: [100], shrunk 26 time(s)"
    );
}

#[test]
fn a_failure_without_a_counterexample_is_still_refuted() {
    let out = "error[E0425]: cannot find value `y` in this scope\nerror: could not compile `demo`";
    let r = judge(PropertyTool::Proptest, Some(101), false, out);
    assert_eq!((r.verdict, r.counterexample), (Verdict::Refuted, None));
    assert!(r.summary.contains("could not be captured"), "{}", r.summary);
}

#[test]
fn a_timeout_or_a_missing_exit_is_unproven() {
    // even when the partial output already holds a counterexample
    let r = judge(PropertyTool::Hypothesis, Some(1), true, &fixture("hypothesis-fail.txt"));
    assert_eq!((r.verdict, r.counterexample), (Verdict::Unproven, None));
    assert!(r.summary.contains("timed out"), "{}", r.summary);
    let r = judge(PropertyTool::FastCheck, None, false, "");
    assert_eq!(r.verdict, Verdict::Unproven);
    assert!(r.summary.contains("without an exit code"), "{}", r.summary);
}

#[test]
fn a_run_in_which_no_test_ran_is_unproven() {
    for (tool, exit, name) in [
        (PropertyTool::Proptest, 0, "proptest-none.txt"),
        (PropertyTool::Hypothesis, 5, "hypothesis-none.txt"),
        (PropertyTool::FastCheck, 1, "fastcheck-vitest-none.txt"),
    ] {
        let r = judge(tool, Some(exit), false, &fixture(name));
        assert_eq!(r.verdict, Verdict::Unproven, "{name}: {}", r.summary);
        assert!(r.summary.ends_with("nothing was checked"), "{}", r.summary);
    }
}

#[test]
fn results_serialize_in_kebab_case() {
    let r = judge(PropertyTool::FastCheck, Some(1), false, &fixture("fastcheck-fail.txt"));
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!((v["verdict"].as_str(), v["counterexample"].as_str()), (Some("refuted"), Some("[100]")));
    let d = Detected {
        tool: PropertyTool::FastCheck,
        package: "fast-check".into(),
        manifest: "package.json".into(),
        line: 3,
    };
    assert_eq!(serde_json::to_value(&d).unwrap()["tool"], "fast-check");
    let back: Detected = serde_json::from_value(serde_json::to_value(&d).unwrap()).unwrap();
    assert_eq!(back, d);
}

#[test]
fn tool_names_and_languages() {
    let names: Vec<_> = PropertyTool::ALL.iter().map(|t| (t.name(), t.language())).collect();
    assert_eq!(
        names,
        [("proptest", "rust"), ("quickcheck", "rust"), ("hypothesis", "python"), ("fast-check", "typescript")]
    );
    assert_eq!(PropertyTool::FastCheck.languages(), ["typescript", "javascript"]);
}

// ---- detection ----

fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

fn found(files: &[(&str, &str)]) -> Vec<(PropertyTool, String, String, usize)> {
    let dir = repo(files);
    detect(dir.path()).into_iter().map(|d| (d.tool, d.package, d.manifest, d.line)).collect()
}

fn one(tool: PropertyTool, package: &str, manifest: &str, line: usize) -> (PropertyTool, String, String, usize) {
    (tool, package.to_string(), manifest.to_string(), line)
}

#[test]
fn cargo_dependencies_of_every_kind() {
    let cargo = "[package]\nname = \"demo\"\ndescription = \"proptest and quickcheck, someday\"\n\
                     # proptest = \"1\"\n\n[dev-dependencies]\nproptest = \"1\"\n";
    assert_eq!(found(&[("Cargo.toml", cargo)]), [one(PropertyTool::Proptest, "proptest", "Cargo.toml", 7)]);
    let ws = "[workspace]\nmembers = [\"a\"]\n\n[workspace.dependencies]\nquickcheck = \"1\"\n";
    let member = "[package]\nname = \"a\"\n\n[target.'cfg(unix)'.dev-dependencies]\nqc = { package = \"quickcheck\", version = \"1\" }\n\n\
                      [dev-dependencies.proptest]\nversion = \"1\"\n";
    assert_eq!(
        found(&[("Cargo.toml", ws), ("a/Cargo.toml", member)]),
        [
            one(PropertyTool::Quickcheck, "quickcheck", "Cargo.toml", 5),
            one(PropertyTool::Quickcheck, "quickcheck", "a/Cargo.toml", 5),
            one(PropertyTool::Proptest, "proptest", "a/Cargo.toml", 7),
        ]
    );
}

#[test]
fn companion_crates_alone_are_not_the_tool() {
    let cargo =
        "[package]\nname = \"demo\"\n\n[dev-dependencies]\nproptest-derive = \"0.5\"\nquickcheck_macros = \"1\"\n";
    assert_eq!(found(&[("Cargo.toml", cargo)]), []);
}

#[test]
fn a_mention_outside_the_dependency_lists_is_not_detected() {
    let pyproject = "[project]\nname = \"demo\"\ndescription = \"hypothesis\"\nkeywords = [\"hypothesis\"]\n\
                         dependencies = [\"attrs\"]  # hypothesis later\n";
    let setup_py = "# install_requires=['hypothesis']\nfrom setuptools import setup\n\n\
                        setup(\n    name='demo',\n    description='hypothesis',\n    keywords=['hypothesis'],\n\
                        \x20   long_description='uses hypothesis for tests',\n    install_requires=['attrs'],\n)\n";
    let package = "{\n  \"name\": \"demo\",\n  \"description\": \"fast-check\",\n  \"keywords\": [\"fast-check\"],\n\
                       \x20 \"peerDependencies\": {},\n  \"dependencies\": {\"left-pad\": \"1\"}\n}\n";
    let reqs = "# hypothesis\nattrs  # not hypothesis\n-r hypothesis.txt\n";
    let cfg =
        "[metadata]\nname = hypothesis-demo\ndescription = hypothesis\n\n[options]\ninstall_requires =\n    attrs\n";
    assert_eq!(
        found(&[
            ("pyproject.toml", pyproject),
            ("setup.py", setup_py),
            ("package.json", package),
            ("requirements.txt", reqs),
            ("setup.cfg", cfg),
        ]),
        []
    );
}

#[test]
fn python_manifests() {
    let pyproject = "[project]\nname = \"demo\"\ndependencies = [\"attrs\"]\n\n[project.optional-dependencies]\n\
                         test = [\n  \"pytest\",\n  \"Hypothesis[numpy] >= 6.0\",\n]\n";
    let poetry = "[tool.poetry]\nname = \"demo\"\n\n[tool.poetry.group.test.dependencies]\nhypothesis = \"^6\"\n";
    let groups = "[dependency-groups]\ndev = [\"pytest\", \"hypothesis>=6; python_version >= '3.9'\"]\n";
    let reqs = "pytest==8.0\nhypothesis==6.100.0 \\\n    --hash=sha256:abc\n";
    let cfg =
        "[options]\ninstall_requires = attrs\n\n[options.extras_require]\ntest =\n    pytest\n    hypothesis>=6\n";
    let setup_py = "from setuptools import setup\n\nTESTS = [\n    \"pytest\",\n    \"hypothesis>=6\",\n]\n\
                        setup(name=\"demo\", extras_require={\"test\": TESTS})\n";
    let got = found(&[
        ("a/pyproject.toml", pyproject),
        ("b/pyproject.toml", poetry),
        ("c/pyproject.toml", groups),
        ("requirements/test.txt", reqs),
        ("setup.cfg", cfg),
        ("setup.py", setup_py),
    ]);
    let h = |m: &str, l: usize| one(PropertyTool::Hypothesis, "hypothesis", m, l);
    assert_eq!(
        got,
        [
            h("a/pyproject.toml", 8),
            h("b/pyproject.toml", 5),
            h("c/pyproject.toml", 2),
            h("requirements/test.txt", 2),
            h("setup.cfg", 7),
            h("setup.py", 5),
        ]
    );
}

#[test]
fn setup_py_keyword_values() {
    let setup_py = "setup(\n    tests_require='hypothesis',\n    extras_require={'hypothesis': ['pytest']},\n)\n";
    assert_eq!(found(&[("setup.py", setup_py)]), [one(PropertyTool::Hypothesis, "hypothesis", "setup.py", 2)]);
}

#[test]
fn package_json_dependencies() {
    let package = "{\n  \"name\": \"demo\",\n  \"scripts\": {\"fast-check\": \"vitest\"},\n  \"devDependencies\": {\n\
                       \x20   \"vitest\": \"^4\",\n    \"@fast-check/vitest\": \"^0.5\",\n    \"fast-check\": \"^4\"\n  }\n}\n";
    assert_eq!(
        found(&[("web/package.json", package)]),
        [
            one(PropertyTool::FastCheck, "@fast-check/vitest", "web/package.json", 6),
            one(PropertyTool::FastCheck, "fast-check", "web/package.json", 7),
        ]
    );
}

#[test]
fn vendored_hidden_ignored_and_deep_trees_are_skipped() {
    let dep = "[dev-dependencies]\nproptest = \"1\"\n";
    let npm = "{\"dependencies\": {\"fast-check\": \"4\"}}";
    let got = found(&[
        ("target/x/Cargo.toml", dep),
        ("node_modules/x/package.json", npm),
        (".hidden/Cargo.toml", dep),
        ("scratch/Cargo.toml", dep),
        (".gitignore", "scratch/\n"),
        ("a/b/c/d/e/Cargo.toml", dep),
        ("a/b/c/d/e/f/Cargo.toml", dep),
    ]);
    assert_eq!(got, [one(PropertyTool::Proptest, "proptest", "a/b/c/d/e/Cargo.toml", 2)]);
}

#[test]
fn malformed_manifests_declare_nothing() {
    let got = found(&[
        ("Cargo.toml", "[dev-dependencies\nproptest = \"1\"\n"),
        ("package.json", "{\"devDependencies\": {\"fast-check\": \"4\"}"),
        ("pyproject.toml", "[project\ndependencies = [\"hypothesis\"]\n"),
    ]);
    assert_eq!(got, []);
}

#[test]
fn requirement_names() {
    assert_eq!(requirement_name("hypothesis"), Some("hypothesis"));
    assert_eq!(requirement_name("hypothesis[numpy]>=6"), Some("hypothesis"));
    assert_eq!(requirement_name("hypothesis ; python_version>'3'"), Some("hypothesis"));
    assert_eq!(requirement_name("hypothesis @ https://example.invalid/h.whl"), Some("hypothesis"));
    assert_eq!(requirement_name("uses hypothesis for tests"), None);
    assert_eq!(requirement_name("hypothesis-jsonschema"), Some("hypothesis-jsonschema"));
    assert!(!is_hypothesis("hypothesis-jsonschema"));
    assert!(is_hypothesis("Hypothesis"));
}
