//! Requirements that were implemented but never made to fire: a custom `output_dir` read back
//! through status (R4), the brief's directory never read in self-scan mode (R11), a refuted gap
//! moved past only by a person's recorded deferral (R73), the same gating in both modes (R60), a
//! command run standalone as the loop runs it (R3), and an absent optional capability that
//! blocks nothing (R121).

use serde_json::Value;

use crate::support::{commit_all, json, run, shop_trial, write_files};

#[test]
fn every_report_goes_to_a_custom_output_dir_and_status_reads_them_there() {
    let t = shop_trial();
    let d = t.path();
    let toml = std::fs::read_to_string(d.join("andon.toml")).unwrap();
    write_files(d, &[("andon.toml", format!("output_dir = \"out/andon\"\n{toml}").as_str())]);
    commit_all(d);
    assert_eq!(run(&["preflight", "-q"], d).status.code().is_some(), true);
    run(&["loop", "-q"], d);
    for f in ["preflight.md", "preflight.json", "loop.json", "ledger/ledger.jsonl"] {
        assert!(d.join("out/andon").join(f).is_file(), "{f} is not under the custom output_dir");
    }
    assert!(!d.join("analysis/andon").exists(), "nothing goes to the default");
    let status = json(&run(&["status", "--format", "json"], d));
    assert!(status["ledger"].as_str().unwrap().contains("out/andon/ledger"), "{status:#}");
    assert_eq!(status["never_run"], false, "{status:#}");
    assert!(d.join("out/andon/status.json").is_file() && d.join("out/andon/status.md").is_file());
    // the loop's sidecar and status name the same next step
    let sidecar: Value = serde_json::from_slice(&std::fs::read(d.join("out/andon/loop.json")).unwrap()).unwrap();
    assert_eq!(sidecar["next"]["gap"], status["next"]["gap"]);
}

#[test]
fn in_self_scan_mode_the_brief_directory_is_never_read() {
    let t = shop_trial();
    let d = t.path();
    // a brief directory that is a file, and one that would fail every read
    let toml = std::fs::read_to_string(d.join("andon.toml")).unwrap();
    write_files(
        d,
        &[
            ("andon.toml", format!("self_assess_output_dir = \"brief-here\"\n{toml}").as_str()),
            ("brief-here", "not a directory\n"),
        ],
    );
    commit_all(d);
    let o = run(&["loop", "--format", "json", "-q"], d);
    let v = json(&o);
    assert_eq!(v["next"]["action"], "propose", "{v:#}");
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(!text.contains("brief-here") && !text.to_lowercase().contains("brief"), "{text}");
    let status = String::from_utf8_lossy(&run(&["status"], d).stdout).into_owned();
    assert!(!status.contains("brief-here"), "{status}");
}

#[test]
fn a_refuted_gap_is_moved_past_only_by_a_recorded_deferral() {
    // one package with a logic bug and its failing unit test as the command, and a TODO beside it
    let t = crate::support::calc_repo(
        "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    # TODO: multiply\n    raise NotImplementedError\n",
    );
    let d = t.path();
    let v = json(&run(&["loop", "--format", "json", "-q"], d));
    let gap = v["next"]["gap"].as_str().unwrap().to_string();
    let source = |v: &Value, id: &str| {
        v["gaps"].as_array().unwrap().iter().find(|g| g["id"] == id).map(|g| g["source"].clone()).unwrap_or_default()
    };
    assert_eq!(source(&v, &gap), "FailingCommand", "{v:#}");
    let propose = [
        "propose",
        "--gap",
        &gap,
        "--blast-radius",
        "local+reversible",
        "--approach",
        "executed",
        "--reason",
        "r",
        "--description",
        "d",
        "--write-set",
        "calc/ops.py",
    ];
    assert_eq!(run(&propose, d).status.code(), Some(0));
    run(&["loop", "-q"], d);
    // a "fix" the configured check refutes: the test still fails
    let ops = std::fs::read_to_string(d.join("calc/ops.py")).unwrap();
    write_files(d, &[("calc/ops.py", ops.replace("return a - b", "return a * b").as_str())]);
    let o = run(&["verify", "--gap", &gap, "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(10), "{}", String::from_utf8_lossy(&o.stdout));
    // the loop never continues silently: it halts on the refutation, again and again
    for _ in 0..2 {
        let o = run(&["loop", "--format", "json", "-q"], d);
        assert_eq!(o.status.code(), Some(10), "{}", String::from_utf8_lossy(&o.stdout));
        assert_eq!(json(&o)["next"]["gap"], gap.as_str());
    }
    // a person's deferral, recorded and visible, lets it move on
    let o = run(&["defer", &gap, "--by", "lead", "--reason", "after the release"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let o = run(&["loop", "--format", "json", "-q"], d);
    let v = json(&o);
    assert_ne!(v["next"]["gap"], gap.as_str(), "{v:#}");
    assert_ne!(o.status.code(), Some(10), "{v:#}");
    let status = json(&run(&["status", "--format", "json"], d));
    let decisions = status["decisions"].as_array().unwrap();
    assert!(
        decisions.iter().any(|x| x["gap"] == gap.as_str() && x["action"] == "defer" && x["by"] == "lead"),
        "{status:#}"
    );
}

/// One `andon ARGS --format json -q` at `d`: its exit code and its `verdict.outcome`.
fn outcome(d: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let mut all = args.to_vec();
    all.extend(["--format", "json", "-q"]);
    let o = run(&all, d);
    let v = json(&o);
    (o.status.code(), v["verdict"]["outcome"].as_str().unwrap_or_default().to_string())
}

/// A proposal of `radius` for `gap`, by running checks, writing `file`.
fn propose_at(d: &std::path::Path, gap: &str, radius: &str, file: &str) -> Option<i32> {
    let args = ["propose", "--gap", gap, "--blast-radius", radius, "--approach", "executed", "--reason", "r"];
    let mut all = args.to_vec();
    all.extend(["--description", "fill in the value", "--write-set", file]);
    run(&all, d).status.code()
}

/// The gating one gap meets from its proposal on: a proposal over the ceiling, the fix proposed
/// again within it, a check that refutes it, and a person's deferral. Each step's exit code and
/// verdict.
fn gating(d: &std::path::Path, gap: &str, file: &str) -> Vec<(Option<i32>, String)> {
    let mut seen = Vec::new();
    assert_eq!(propose_at(d, gap, "hard-to-reverse", file), Some(0));
    seen.push(outcome(d, &["loop"]));
    assert_eq!(propose_at(d, gap, "local+reversible", file), Some(0));
    seen.push(outcome(d, &["loop"]));
    let text = std::fs::read_to_string(d.join(file)).unwrap();
    write_files(d, &[(file, format!("{text}VALUE = 42\n").as_str())]);
    seen.push(outcome(d, &["verify", "--gap", gap, "--command", "exit 3"]));
    seen.push(outcome(d, &["loop"]));
    assert_eq!(run(&["defer", gap, "--by", "lead", "--reason", "later"], d).status.code(), Some(0));
    let (_, state, _) = andon::ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    seen.push((None, state.gaps[gap].status.name().to_string()));
    seen
}

#[test]
fn the_same_gap_meets_the_same_gating_in_both_modes() {
    // R60: ingest mode, a brief's work item on shared/types.py
    let t = tempfile::tempdir().unwrap();
    let ingest = t.path();
    write_files(
        ingest,
        &[
            ("shared/types.py", "X = 1\n"),
            ("shared/money.py", "Y = 2\n"),
            ("storage/db.py", "Z = 3\n"),
            ("api/routes.py", "R = 4\n"),
            ("andon.toml", "gap_source = \"ingest\"\n"),
        ],
    );
    let src = crate::support::fixtures().join("briefs/valid");
    for f in ["MODERNIZATION_BRIEF.md", "transform_brief_summary.json"] {
        let dst = ingest.join("analysis/self-assess").join(f);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(src.join(f), dst).unwrap();
    }
    // both under git: a fix is the change from the proposal's base commit in either mode
    crate::support::git(ingest, &["init", "-q"]);
    commit_all(ingest);
    let v = json(&run(&["loop", "--format", "json", "-q"], ingest));
    let item = v["picked"]["gap"].as_str().unwrap_or_else(|| panic!("{v:#}")).to_string();
    let at = v["gaps"].as_array().unwrap().iter().find(|g| g["id"] == item.as_str()).unwrap().clone();
    assert_eq!(at["source"], "WorkItem", "{v:#}");
    let file = at["path"].as_str().unwrap().to_string();
    // self-scan mode: the same file, with the work marked in the code
    let s = tempfile::tempdir().unwrap();
    let scan = s.path();
    let text = std::fs::read_to_string(ingest.join(&file)).unwrap();
    let module = file.trim_end_matches(".py").replace('/', ".");
    let test = format!("from {module} import *\n\n\ndef test_loads():\n    assert True\n");
    write_files(scan, &[(file.as_str(), format!("# TODO: the value\n{text}").as_str()), ("tests/test_it.py", &test)]);
    crate::support::git(scan, &["init", "-q"]);
    commit_all(scan);
    let v = json(&run(&["loop", "--format", "json", "-q"], scan));
    let marker = v["picked"]["gap"].as_str().unwrap_or_else(|| panic!("{v:#}")).to_string();
    assert_eq!(
        v["gaps"].as_array().unwrap().iter().find(|g| g["id"] == marker.as_str()).unwrap()["source"],
        "StageMarker"
    );
    let (a, b) = (gating(ingest, &item, &file), gating(scan, &marker, &file));
    assert_eq!(a, b, "ingest {a:?} / self-scan {b:?}");
    // and the gating is what the andon rule says, not two ways of saying nothing
    assert_eq!(a[0], (Some(11), "halt:authorization".to_string()));
    assert_eq!(a[1], (Some(0), "awaiting-verification".to_string()));
    assert_eq!(a[2], (Some(10), "halt:refuted".to_string()));
    assert_eq!(a[3], (Some(10), "halt:refuted".to_string()));
    assert_eq!(a[4], (None, "deferred".to_string()));
}

#[test]
fn a_command_run_standalone_applies_the_defaults_and_normalization_the_loop_does() {
    // R3: status, the packet and verify, run on their own from another directory with a path,
    // see exactly what the loop's step saw and wrote
    let t = shop_trial();
    let d = t.path();
    let toml = std::fs::read_to_string(d.join("andon.toml")).unwrap();
    write_files(d, &[("andon.toml", format!("output_dir = \"out/andon\"\n{toml}").as_str())]);
    commit_all(d);
    let step = json(&run(&["loop", "--format", "json", "-q"], d));
    let gap = step["picked"]["gap"].as_str().unwrap().to_string();
    let elsewhere = tempfile::tempdir().unwrap();
    let path = d.to_str().unwrap();
    let status = json(&run(&["status", path, "--format", "json"], elsewhere.path()));
    assert_eq!(status["next"], step["next"], "status: {status:#}\nloop: {step:#}");
    assert_eq!(status["constraint"]["rule"], step["constraint"]["rule"]);
    let sub = d.join("catalog");
    let packet = json(&run(&["propose", "..", "--packet", &gap, "--format", "json"], &sub));
    assert_eq!(packet["gap"]["id"], gap.as_str(), "{packet:#}");
    // a standalone verify reads the settings' output_dir as the loop does: its refusal of an
    // unproposed gap names the gap, and it writes nowhere else
    let o = run(&["verify", path, "--gap", &gap, "--format", "json"], elsewhere.path());
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(!d.join("analysis").exists() && !elsewhere.path().join("analysis").exists());
    assert!(!elsewhere.path().join("out").exists());
}

#[test]
fn an_absent_optional_capability_never_blocks_a_wire_that_does_not_need_it() {
    // R121: no mutation tool on PATH; the wire's structural proof and the loop go on
    let t = shop_trial();
    let d = t.path();
    let bin = tempfile::tempdir().unwrap();
    for tool in ["git", "sh", "python3"] {
        let found = std::process::Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().unwrap();
        let at = String::from_utf8_lossy(&found.stdout).trim().to_string();
        std::os::unix::fs::symlink(&at, bin.path().join(tool)).unwrap();
    }
    let with_path =
        |args: &[&str]| crate::support::andon().args(args).current_dir(d).env("PATH", bin.path()).output().unwrap();
    let pre = json(&with_path(&["preflight", "--format", "json", "-q"]));
    assert!(pre.to_string().contains("`mutmut` (python) is not on PATH"), "the audit tool is absent: {pre:#}");
    let v = json(&with_path(&["loop", "--format", "json", "-q"]));
    let wire = v["picked"]["gap"].as_str().unwrap().to_string();
    let o = with_path(&[
        "propose",
        "--gap",
        &wire,
        "--blast-radius",
        "local+reversible",
        "--approach",
        "structural",
        "--reason",
        "r",
        "--description",
        "define and export total_of",
        "--write-set",
        "catalog/prices.py",
        "catalog/__init__.py",
    ]);
    assert_eq!(o.status.code(), Some(0));
    with_path(&["loop", "-q"]);
    crate::support::fix_the_trial_import(d);
    let o = with_path(&["verify", "--gap", &wire, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let o = with_path(&["loop", "--format", "json", "-q"]);
    let v = json(&o);
    assert_eq!(o.status.code(), Some(0), "{v:#}");
    let wires = v["ledger"]["wires"].as_array().unwrap();
    assert!(wires.iter().any(|w| w["producer"] == "catalog" && w["status"] == "proven"), "{v:#}");
}
