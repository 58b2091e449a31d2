//! Requirements that were implemented but never made to fire: a custom `output_dir` read back
//! through status (R4), the brief's directory never read in self-scan mode (R11), and a refuted
//! gap moved past only by a person's recorded deferral (R73).

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
