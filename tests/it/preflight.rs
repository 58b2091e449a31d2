//! `andon preflight`: every check reported with one readiness level and its fix; the human report
//! and the JSON sidecar agree; read-only (no ledger, nothing but its reports).

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::{andon, json, run, scratch};

fn files(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if rel.starts_with(".andon") {
                continue; // the index cache (it ignores itself in git)
            }
            if p.is_dir() {
                stack.push(p);
            }
            out.insert(rel);
        }
    }
    out
}

#[test]
fn every_check_is_reported_and_the_sidecar_agrees_with_the_report() {
    let t = scratch("py-gaps");
    let before = files(t.path());
    let o = run(&["preflight", "--format", "json", "-q"], t.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let v = json(&o);
    let checks = v["checks"].as_array().unwrap();
    let caps: Vec<&str> = checks.iter().map(|c| c["capability"].as_str().unwrap()).collect();
    for want in [
        "stream detection",
        "ledger persistence",
        "reports",
        "propose: house rules",
        "verify: applied diff",
        "verify: structural",
        "proof-strength audit",
    ] {
        assert!(caps.contains(&want), "{want} missing: {caps:?}");
    }
    // every level short of ready names a fix
    for c in checks {
        assert!(["ready", "ready-with-gaps", "not-ready"].contains(&c["level"].as_str().unwrap()));
        assert_eq!(c["level"] != "ready", c["fix"].is_string(), "{c}");
    }
    // absent optional tools degrade, never fail (R26)
    assert!(checks.iter().filter(|c| c["capability"] == "proof-strength audit").all(|c| c["level"] != "not-ready"));
    // the human report and the sidecar list the same checks with the same levels (R23)
    let sidecar: serde_json::Value =
        serde_json::from_slice(&std::fs::read(t.path().join("analysis/andon/preflight.json")).unwrap()).unwrap();
    let md = std::fs::read_to_string(t.path().join("analysis/andon/preflight.md")).unwrap();
    let md_rows: Vec<(String, String)> = md
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| capability"))
        .map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            (cells[0].trim_start_matches("| ").to_string(), cells[1].to_string())
        })
        .collect();
    let json_rows: Vec<(String, String)> = sidecar["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["capability"].as_str().unwrap().to_string(), c["level"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(md_rows, json_rows);
    // read-only: no ledger, and nothing new but the reports under output_dir (R24, R25)
    assert!(!t.path().join("analysis/andon/ledger").exists());
    let added: Vec<String> = files(t.path()).difference(&before).cloned().collect();
    assert_eq!(
        added,
        vec!["analysis", "analysis/andon", "analysis/andon/preflight.json", "analysis/andon/preflight.md"]
    );
}

#[test]
fn a_capability_that_cannot_work_is_not_ready_with_its_fix() {
    let t = scratch("py-gaps");
    std::fs::write(t.path().join("andon.toml"), "output_dir = \"pyproject.toml/reports\"\ngap_source = \"ingest\"\n")
        .unwrap();
    let o = run(&["preflight", "--format", "json", "-q"], t.path());
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    let level = |cap: &str| {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["capability"] == cap)
            .map(|c| (c["level"].clone(), c["fix"].clone()))
            .unwrap()
    };
    assert_eq!(level("reports").0, "not-ready");
    assert!(level("reports").1.as_str().unwrap().contains("output_dir"));
    assert_eq!(level("ingest: brief").0, "not-ready");
    assert_eq!(v["verdict"]["outcome"], "not-ready");
    assert_eq!(v["next"]["action"], "fix-setup", "{v:#}");
}

#[test]
fn an_external_tool_on_path_is_ready() {
    let t = scratch("py-gaps");
    let bin = tempfile::tempdir().unwrap();
    std::fs::write(bin.path().join("mutmut"), "#!/bin/sh\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(bin.path().join("mutmut"), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let o =
        andon().args(["preflight", "--format", "json", "-q"]).env("PATH", path).current_dir(t.path()).output().unwrap();
    let v = json(&o);
    let mutmut =
        v["checks"].as_array().unwrap().iter().find(|c| c["found"].as_str().unwrap().contains("mutmut")).unwrap();
    assert_eq!(mutmut["level"], "ready");
}
