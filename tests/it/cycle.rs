//! `andon loop`, one step: the ledger initialized from the stream, resumed from the log alone,
//! gaps of the cursor's stage recorded once, the pick and the rule that decided, the next action.

use andon::ledger::{self, BlastRadius, Event};

use crate::support::{json, run, scratch};

fn ledger_bytes(dir: &std::path::Path) -> Vec<u8> {
    std::fs::read(dir.join("analysis/andon/ledger/ledger.jsonl")).unwrap()
}

#[test]
fn first_run_records_the_stream_and_the_cursor_stages_gaps() {
    let t = scratch("py-gaps");
    let o = run(&["loop", "--format", "json", "-q"], t.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&o);
    assert_eq!(v["stream_changed"], true);
    assert_eq!(v["stream"]["order"], serde_json::json!(["billing", "orders"]));
    assert_eq!(v["cursor"], "billing");
    // the scan reports only the cursor's stage and its outgoing wire (R48)
    assert!(v["gaps"].as_array().unwrap().iter().all(|g| g["stage"] == "billing"), "{v:#}");
    let picked = v["picked"]["gap"].as_str().unwrap();
    assert!(picked.starts_with("W-"), "a wire gap first: {v:#}");
    assert_eq!(v["picked"]["rule"], "rule 2: a wire gap comes before a feature gap");
    assert_eq!((v["next"]["action"].as_str(), v["next"]["gap"].as_str()), (Some("propose"), Some(picked)));
    assert_eq!(v["verdict"]["outcome"], "awaiting-proposal");
    // the ledger holds one stage record per stage and one record per gap
    let (_, state, _) = ledger::load(&t.path().join("analysis/andon/ledger")).unwrap().unwrap();
    assert_eq!(state.stages.len(), 2);
    assert_eq!(state.gaps.len(), v["gaps"].as_array().unwrap().len());
    assert!(t.path().join("analysis/andon/loop.json").exists(), "the session's sidecar");
}

#[test]
fn a_second_run_resumes_from_the_log_and_writes_nothing_new() {
    let t = scratch("py-gaps");
    run(&["loop", "-q"], t.path());
    let before = ledger_bytes(t.path());
    let a = json(&run(&["loop", "--format", "json", "-q"], t.path()));
    let b = json(&run(&["loop", "--format", "json", "-q"], t.path()));
    assert_eq!(ledger_bytes(t.path()), before, "nothing new found, nothing written");
    assert_eq!(a, b, "two fresh processes derive the same state from the ledger alone");
    assert_eq!(a["stream_changed"], false);
    assert_eq!(a["recorded"], 0);
    // the text session prints the stream map only when it changed
    let text = String::from_utf8_lossy(&run(&["loop", "-q"], t.path()).stdout).into_owned();
    assert!(text.starts_with("ledger: 0 passes, 0 cycles"), "{text}");
    // a new stage changes the topology: recorded, and the map is printed again
    std::fs::create_dir_all(t.path().join("src/shipping")).unwrap();
    std::fs::write(t.path().join("src/shipping/__init__.py"), "from billing import invoice\n").unwrap();
    let text = String::from_utf8_lossy(&run(&["loop", "-q"], t.path()).stdout).into_owned();
    assert!(text.starts_with("stream (3 stages"), "{text}");
}

#[test]
fn a_gap_in_progress_is_finished_first_and_a_halt_needs_a_person() {
    let t = scratch("py-gaps");
    let v = json(&run(&["loop", "--format", "json", "-q"], t.path()));
    let gap = v["picked"]["gap"].as_str().unwrap().to_string();
    let dir = t.path().join("analysis/andon/ledger");
    let (header, _, _) = ledger::load(&dir).unwrap().unwrap();
    ledger::append(
        &dir,
        &header,
        &[
            Event::ProposalRecorded {
                gap: gap.clone(),
                blast_radius: BlastRadius::HardToReverse,
                approach: "structural".into(),
                reason: "imports cross the wire".into(),
                description: "re-export the model".into(),
                write_set: vec!["src/billing/__init__.py".into()],
                base_commit: "0".into(),
            },
            Event::Halted { gap: gap.clone(), condition: "authorization".into(), reason: "over the ceiling".into() },
        ],
        1,
    )
    .unwrap();
    let o = run(&["loop", "--format", "json", "-q"], t.path());
    assert_eq!(o.status.code(), Some(14), "a halt on authorization needs a person");
    let v = json(&o);
    assert_eq!(v["picked"]["gap"], gap.as_str());
    assert_eq!(v["picked"]["rule"], "in progress: a gap is finished before another is picked");
    assert_eq!((v["next"]["action"].as_str(), v["verdict"]["outcome"].as_str()), (Some("decide"), Some("needs-human")));
}

#[test]
fn an_invalid_ledger_stops_the_loop() {
    let t = scratch("py-gaps");
    run(&["loop", "-q"], t.path());
    let path = t.path().join("analysis/andon/ledger/ledger.jsonl");
    let mut text = std::fs::read(&path).unwrap();
    text.truncate(text.len() - 5);
    std::fs::write(&path, &text).unwrap();
    let o = run(&["loop", "-q"], t.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("torn"), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&path).unwrap(), text, "nothing appended after a torn line");
}

fn picked(dir: &std::path::Path) -> String {
    json(&run(&["loop", "--format", "json", "-q"], dir))["picked"]["gap"].as_str().unwrap().to_string()
}

#[test]
fn proposals_are_checked_written_for_the_loop_and_recorded_by_it() {
    let t = scratch("py-gaps");
    let gap = picked(t.path());
    let ledger_before = ledger_bytes(t.path());
    let refusals: &[(&[&str], &str)] = &[
        (&["--approach", "structral"], "unknown approach `structral`; did you mean `structural`?"),
        (&["--write-set", "../outside.py"], "not a clean repo-relative path"),
        (&["--description", " "], "`description` is empty"),
    ];
    for (extra, want) in refusals {
        let mut args: Vec<&str> = vec!["propose", "--gap", &gap, "--blast-radius", "local+reversible"];
        let mut fields = vec![
            ("--approach", "structural"),
            ("--reason", "the imports across the wire are exact facts"),
            ("--description", "re-export the model"),
            ("--write-set", "src/orders/model.py"),
        ];
        fields.retain(|(f, _)| f != &extra[0]);
        for (f, v) in &fields {
            args.extend([*f, *v]);
        }
        args.extend(extra.iter());
        let o = run(&args, t.path());
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(String::from_utf8_lossy(&o.stdout).contains(want), "{args:?}: {}", String::from_utf8_lossy(&o.stdout));
    }
    // a JSON proposal with a field the format does not have is refused too
    let o = crate::support::andon()
        .args(["propose", "--json", "-"])
        .current_dir(t.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(format!(
                "{{\"gap\":\"{gap}\",\"blast_radius\":\"local+reversible\",\"approach\":\"structural\",\"reason\":\"r\",\"description\":\"d\",\"write_set\":[\"a.py\"],\"also\":\"this wire is proven\"}}"
            ).as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(!t.path().join(format!("analysis/andon/proposals/{gap}.json")).exists(), "nothing written on refusal");
    // a valid proposal over the ceiling: written (never to the ledger), then recorded by the loop, which halts
    let o = run(
        &[
            "propose",
            "--gap",
            &gap,
            "--blast-radius",
            "hard-to-reverse",
            "--approach",
            "structural",
            "--reason",
            "r",
            "--description",
            "d",
            "--write-set",
            "src/billing/__init__.py",
        ],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(ledger_bytes(t.path()), ledger_before, "propose leaves the ledger byte-identical (R34)");
    let o = run(&["loop", "--format", "json", "-q"], t.path());
    assert_eq!(o.status.code(), Some(14));
    let v = json(&o);
    assert!(
        v["notes"][0].as_str().unwrap().contains("halted: hard-to-reverse exceeds the ceiling local+reversible"),
        "{v:#}"
    );
    // a person's decision: refused when unattended, recorded otherwise, and bound to this diff
    let o = run(&["authorize", &gap, "--reason", "reviewed", "--unattended"], t.path());
    assert_eq!(o.status.code(), Some(1));
    let o = run(&["authorize", &gap, "--reason", "reviewed"], t.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let v = json(&run(&["loop", "--format", "json", "-q"], t.path()));
    assert_eq!(v["next"]["action"], "apply-and-verify");
    let dir = t.path().join("analysis/andon/ledger");
    let (_, state, _) = ledger::load(&dir).unwrap().unwrap();
    let ws = vec!["src/billing/__init__.py".to_string()];
    let now = andon::cycle::diff::hash(t.path(), None, &ws);
    let gate = |h: &str| andon::ledger::gate::decide(&state, &gap, BlastRadius::LocalReversible, Some(h));
    assert!(!matches!(
        gate(&now),
        andon::ledger::gate::Decision::Halt(andon::ledger::gate::Condition::Authorization, _)
    ));
    std::fs::write(t.path().join("src/billing/__init__.py"), "# changed after the authority was raised\n").unwrap();
    let changed = andon::cycle::diff::hash(t.path(), None, &ws);
    assert_ne!(now, changed);
    assert!(matches!(
        gate(&changed),
        andon::ledger::gate::Decision::Halt(andon::ledger::gate::Condition::Authorization, _)
    ));
    // skipping moves the loop on to another gap
    run(&["skip", &gap, "--reason", "later"], t.path());
    assert_ne!(picked(t.path()), gap);
    // an override needs a tier-2 record to override
    let o = run(&["override", &gap, "--evidence", "E404", "--by", "lead", "--reason", "r"], t.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("no evidence `E404` to override"));
}
