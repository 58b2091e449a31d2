//! `action.yml`: a composite GitHub Action whose commands exist with the flags it passes.

use std::path::Path;

use yaml_rust2::{Yaml, YamlLoader};

use crate::support::run;

fn action() -> Yaml {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml")).unwrap();
    YamlLoader::load_from_str(&text).expect("action.yml parses").remove(0)
}

fn steps(a: &Yaml) -> Vec<Yaml> {
    a["runs"]["steps"].as_vec().expect("steps").clone()
}

/// Every `andon <command> …` line in the action's scripts, as its words.
fn andon_lines(a: &Yaml) -> Vec<Vec<String>> {
    steps(a)
        .iter()
        .filter_map(|s| s["run"].as_str())
        .flat_map(|script| {
            script.lines().map(str::trim).filter(|l| l.starts_with("andon ")).map(String::from).collect::<Vec<_>>()
        })
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

#[test]
fn the_action_is_composite_with_its_inputs_and_caches_the_index() {
    let a = action();
    assert_eq!(a["runs"]["using"].as_str(), Some("composite"));
    for input in ["path", "args", "sarif", "summary", "base"] {
        assert!(!a["inputs"][input]["description"].is_badvalue(), "input {input}");
    }
    let all = steps(&a);
    let uses: Vec<&str> = all.iter().filter_map(|s| s["uses"].as_str()).collect();
    assert!(uses.iter().any(|u| u.starts_with("github/codeql-action/upload-sarif@")), "{uses:?}");
    let index_cache = steps(&a)
        .into_iter()
        .find(|s| {
            s["uses"].as_str().is_some_and(|u| u.starts_with("actions/cache@"))
                && s["with"]["path"].as_str().is_some_and(|p| p.ends_with("/.andon"))
        })
        .expect("actions/cache on .andon");
    let key = index_cache["with"]["key"].as_str().unwrap();
    assert!(key.contains("steps.build.outputs.version") && key.contains("steps.build.outputs.lock"), "{key}");
    let restore = index_cache["with"]["restore-keys"].as_str().unwrap();
    assert!(
        restore.contains("steps.build.outputs.base"),
        "a pull request starts from its base branch's index: {restore}"
    );
    let build = steps(&a).into_iter().find(|s| s["id"].as_str() == Some("build")).unwrap();
    assert_eq!(build["env"]["BASE_REF"].as_str(), Some("${{ github.base_ref }}"));
    // andon is built from the action's own ref
    let install = steps(&a)
        .into_iter()
        .filter_map(|s| s["run"].as_str().map(String::from))
        .find(|r| r.contains("cargo install"))
        .unwrap();
    assert!(install.contains("--locked") && install.contains("$GITHUB_ACTION_PATH"), "{install}");
}

#[test]
fn every_andon_command_the_action_runs_exists_with_its_flags() {
    let a = action();
    let lines = andon_lines(&a);
    assert!(lines.len() >= 2, "{lines:?}");
    let t = tempfile::tempdir().unwrap();
    for words in &lines {
        let sub = &words[1];
        let help = run(&[sub, "--help"], t.path());
        assert_eq!(help.status.code(), Some(0), "andon {sub} exists");
        let help = String::from_utf8_lossy(&help.stdout);
        for flag in words.iter().filter(|w| w.starts_with("--")) {
            assert!(help.contains(flag.as_str()), "andon {sub} has no {flag}");
        }
        // a format value is one the command takes
        if let Some(i) = words.iter().position(|w| w == "--format") {
            let value = &words[i + 1];
            assert!(help.contains(value.as_str()), "andon {sub} --format {value}");
        }
    }
    let formats: Vec<&str> =
        lines.iter().filter_map(|w| w.iter().position(|x| x == "--format").map(|i| w[i + 1].as_str())).collect();
    assert!(formats.contains(&"sarif") && formats.contains(&"markdown"), "{formats:?}");
}

/// The check step's own script, run as a runner would (bash -eo pipefail) with andon on PATH.
fn run_check_step(repo: &Path, summary: &str) -> (i32, String, String, bool) {
    let a = action();
    let step = steps(&a).into_iter().find(|s| s["id"].as_str() == Some("check")).expect("the check step");
    let script = step["run"].as_str().unwrap().to_string();
    let work = tempfile::tempdir().unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_andon")).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let o = std::process::Command::new("bash")
        .args(["-eo", "pipefail", "-c", &script])
        .current_dir(work.path())
        .env("PATH", path)
        .env("GITHUB_OUTPUT", work.path().join("out"))
        .env("GITHUB_STEP_SUMMARY", work.path().join("summary"))
        .env("ANDON_PATH", repo)
        .env("ANDON_ARGS", "--exclude nothing/**")
        .env("ANDON_BASE", "")
        .env("ANDON_SUMMARY", summary)
        .env_remove("GITHUB_BASE_REF")
        .output()
        .unwrap();
    let read = |f: &str| std::fs::read_to_string(work.path().join(f)).unwrap_or_default();
    (o.status.code().unwrap(), read("out"), read("summary"), work.path().join("andon.sarif").exists())
}

#[test]
fn the_check_step_reports_the_gate_writes_sarif_and_the_summary() {
    let t = tempfile::tempdir().unwrap();
    crate::support::write_files(
        t.path(),
        &[
            ("pyproject.toml", "[project]\nname = \"acme\"\nversion = \"0.1.0\"\n"),
            (
                "andon.toml",
                "[[contract]]\nname = \"core apart\"\nkind = \"forbidden\"\nfrom = [\"src/core/**\"]\nto = [\"src/api/**\"]\n",
            ),
            ("src/core/__init__.py", "import api\n"),
            ("src/api/__init__.py", "import core\n"),
        ],
    );
    crate::support::commit_all(t.path());
    let (code, out, summary, sarif) = run_check_step(t.path(), "true");
    // the step itself succeeds; the gate's exit code is its output, for the last step to fail on
    assert_eq!(code, 0);
    assert_eq!(out.trim(), "exit-code=1", "{out}");
    assert!(sarif, "andon.sarif for the upload step");
    assert!(summary.contains("andon check: blocked") && summary.contains("```mermaid"), "{summary}");
    let (_, _, summary, _) = run_check_step(t.path(), "false");
    assert!(summary.is_empty(), "summary: false writes none");
}

#[test]
fn the_binary_cache_is_keyed_by_the_architecture_and_the_source_it_was_built_from() {
    let a = action();
    let binary = steps(&a).into_iter().find(|s| s["id"].as_str() == Some("binary")).expect("the binary cache");
    let key = binary["with"]["key"].as_str().unwrap();
    // an x64 binary restored on an arm64 runner cannot run; a commit on the action's ref with the
    // same version and lockfile must not restore the binary of the commit before
    assert!(key.contains("runner.arch") && key.contains("steps.build.outputs.source"), "{key}");
    let build = steps(&a).into_iter().find(|s| s["id"].as_str() == Some("build")).unwrap();
    let script = build["run"].as_str().unwrap().to_string();
    let output_of = |dir: &Path, name: &str| {
        let work = tempfile::tempdir().unwrap();
        let o = std::process::Command::new("bash")
            .args(["-eo", "pipefail", "-c", &script])
            .env("GITHUB_ACTION_PATH", dir)
            .env("GITHUB_OUTPUT", work.path().join("out"))
            .env("HEAD_REF", "feat/a,b c")
            .env("BASE_REF", "main")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = std::fs::read_to_string(work.path().join("out")).unwrap();
        out.lines().find_map(|l| l.strip_prefix(&format!("{name}="))).map(String::from).expect("the output")
    };
    let source_of = |dir: &Path| output_of(dir, "source");
    let t = tempfile::tempdir().unwrap();
    crate::support::write_files(
        t.path(),
        &[
            ("Cargo.toml", "[package]\nname = \"andon\"\nversion = \"0.1.0\"\n"),
            ("Cargo.lock", "# lock\n"),
            ("src/main.rs", "fn main() {}\n"),
        ],
    );
    let before = source_of(t.path());
    assert_eq!(source_of(t.path()), before, "the same source, the same key");
    crate::support::write_files(t.path(), &[("src/main.rs", "fn main() { println!(); }\n")]);
    assert_ne!(source_of(t.path()), before, "changed source, a new binary");
    // a cache key holds no comma, whatever the branch is called
    assert_eq!(output_of(t.path(), "branch"), "feat/a_b_c");
    assert_eq!(output_of(t.path(), "base"), "main");
}
