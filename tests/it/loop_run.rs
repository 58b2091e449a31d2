//! `andon loop`, one step: the ledger initialized from the stream, resumed from the log alone,
//! gaps of the cursor's stage recorded once, the pick and the rule that decided, the next action.

use andon::ledger::{self, BlastRadius, Event};

use crate::support::{clean_three_stages, git, json, run, scratch, three_stages};

/// A check of the TODO in `api`'s fix: it loads `api`'s test (so it runs a test of the changed
/// code), pins what `run` (and so `parse`) and `missing_name` return (a trivial body of either
/// fails it), and fails while the TODO is there (red without the fix).
const NO_TODO: &str = "cd src && python3 -c \"import api.test_api, api, core; r = api.run('a b'); r = r[0] if isinstance(r, tuple) else r; assert r == ['a', 'b'], r; assert getattr(core, 'missing_name', lambda: 1)() == 1\" && cd .. && ! grep -q TODO src/api/__init__.py";

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
    // billing -> orders needs no change: the loop proves it itself and advances (one pass)
    assert_eq!(v["notes"][0], "pass 1: billing -> orders proven structurally (tier 1); the cursor advances");
    assert_eq!(v["ledger"]["passes"], 1);
    assert_eq!(v["cursor"], "orders");
    // the scan reports only the cursor's stage and its outgoing wire (R48)
    assert!(v["gaps"].as_array().unwrap().iter().all(|g| g["stage"] == "orders"), "{v:#}");
    let picked = v["picked"]["gap"].as_str().unwrap();
    assert!(picked.starts_with("W-"), "a wire gap first: {v:#}");
    assert!(v["picked"]["rule"].as_str().unwrap().starts_with("rule "), "{v:#}");
    assert_eq!((v["next"]["action"].as_str(), v["next"]["gap"].as_str()), (Some("propose"), Some(picked)));
    assert_eq!(v["verdict"]["outcome"], "awaiting-proposal");
    // the ledger holds one stage record per stage and one record per gap
    let (_, state, _) = ledger::load(&t.path().join("analysis/andon/ledger")).unwrap().unwrap();
    assert_eq!(state.stages.len(), 2);
    assert_eq!(state.gaps.len() as u64, v["recorded"].as_u64().unwrap());
    assert!(t.path().join("analysis/andon/loop.json").exists(), "the session's sidecar");
}

/// The `more` counts of the records in `log` after line `skip`: one write is one group whose
/// counts fall to 0 on its last record.
fn groups(log: &[u8], skip: usize) -> Vec<Vec<u64>> {
    let mut out: Vec<Vec<u64>> = Vec::new();
    let mut open = false;
    for line in String::from_utf8_lossy(log).lines().skip(1 + skip) {
        let more = serde_json::from_str::<serde_json::Value>(line).unwrap()["more"].as_u64().unwrap_or(0);
        if !open {
            out.push(Vec::new());
        }
        out.last_mut().unwrap().push(more);
        open = more > 0;
    }
    out
}

#[test]
fn a_step_is_recorded_in_one_write() {
    let t = scratch("py-gaps");
    let v = json(&run(&["loop", "--format", "json", "-q"], t.path()));
    // stages, a proof the loop made itself and the gaps it opened: every record in one group
    let first = groups(&ledger_bytes(t.path()), 0);
    assert_eq!(first.len(), 1, "{first:?}");
    let n = first[0].len() as u64;
    assert!(n > 3, "{first:?}");
    assert_eq!(first[0], (0..n).rev().collect::<Vec<_>>());
    assert_eq!(v["ledger_seq"].as_u64(), Some(n));
    // a new stage: the next step records its stage and whatever the scan opens, again in one write
    std::fs::create_dir_all(t.path().join("src/shipping")).unwrap();
    std::fs::write(t.path().join("src/shipping/__init__.py"), "from billing import invoice\n").unwrap();
    run(&["loop", "-q"], t.path());
    let second = groups(&ledger_bytes(t.path()), n as usize);
    assert_eq!(second.len(), 1, "{second:?}");
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
    assert!(text.starts_with("ledger: 1 passes, 0 cycles"), "{text}");
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
                proposer: None,
                judging: Default::default(),
                interview: Vec::new(),
            },
            Event::Halted { gap: gap.clone(), condition: "authorization".into(), reason: "over the ceiling".into() },
        ],
        1,
    )
    .unwrap();
    let o = run(&["loop", "--format", "json", "-q"], t.path());
    assert_eq!(o.status.code(), Some(11), "a halt on authorization has its own exit code");
    assert_eq!(json(&o)["verdict"]["outcome"], "halt:authorization");
    let v = json(&o);
    assert_eq!(v["picked"]["gap"], gap.as_str());
    assert_eq!(v["picked"]["rule"], "in progress: a gap is finished before another is picked");
    assert_eq!(
        (v["next"]["action"].as_str(), v["verdict"]["outcome"].as_str()),
        (Some("decide"), Some("halt:authorization"))
    );
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
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("interrupted") && err.contains("andon ledger repair"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), text, "nothing appended after a torn line");
    // the repair sets the interrupted write aside and the loop goes on
    assert_eq!(run(&["ledger", "repair", "-q"], t.path()).status.code(), Some(0));
    assert_eq!(run(&["loop", "-q"], t.path()).status.code(), Some(0));
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
    assert_eq!(o.status.code(), Some(11));
    let v = json(&o);
    assert!(
        v["notes"][0].as_str().unwrap().contains("halted: hard-to-reverse exceeds the ceiling local+reversible"),
        "{v:#}"
    );
    // a person's decision: refused when unattended, recorded otherwise, and bound to this diff
    let o = run(&["authorize", &gap, "--by", "lead", "--reason", "reviewed", "--unattended"], t.path());
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["authorize", &gap, "--by", "lead", "--reason", "reviewed"], t.path());
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let v = json(&run(&["loop", "--format", "json", "-q"], t.path()));
    assert_eq!(v["next"]["action"], "apply-and-verify");
    let dir = t.path().join("analysis/andon/ledger");
    let (_, state, _) = ledger::load(&dir).unwrap().unwrap();
    let ws = vec!["src/billing/__init__.py".to_string()];
    let now = andon::andon_loop::diff::hash(t.path(), None, &ws, &[]);
    let gate = |h: &str| andon::ledger::andon_rule::rule_on(&state, &gap, BlastRadius::LocalReversible, Some(h));
    assert!(!matches!(
        gate(&now),
        andon::ledger::andon_rule::Ruling::Halt(andon::ledger::andon_rule::Condition::Authorization, _)
    ));
    std::fs::write(t.path().join("src/billing/__init__.py"), "# changed after the authority was raised\n").unwrap();
    let changed = andon::andon_loop::diff::hash(t.path(), None, &ws, &[]);
    assert_ne!(now, changed);
    assert!(matches!(
        gate(&changed),
        andon::ledger::andon_rule::Ruling::Halt(andon::ledger::andon_rule::Condition::Authorization, _)
    ));
    // skipping moves the loop on to another gap
    run(&["skip", &gap, "--by", "lead", "--reason", "later"], t.path());
    assert_ne!(picked(t.path()), gap);
    // an override needs a tier-2 record to override
    let o = run(
        &["override", &gap, "--evidence", "E404", "--basis", "stale-live-view", "--by", "lead", "--reason", "r"],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("no evidence `E404` to override"));
}

fn loop_json(dir: &std::path::Path) -> (i32, serde_json::Value) {
    let o = run(&["loop", "--format", "json", "-q"], dir);
    (o.status.code().unwrap(), json(&o))
}

/// A local+reversible proposal by `approach` writing `file`.
fn propose_with(dir: &std::path::Path, gap: &str, approach: &str, file: &str) -> std::process::Output {
    run(
        &[
            "propose",
            "--gap",
            gap,
            "--blast-radius",
            "local+reversible",
            "--approach",
            approach,
            "--reason",
            "r",
            "--description",
            "d",
            "--write-set",
            file,
        ],
        dir,
    )
}

fn propose(dir: &std::path::Path, gap: &str, radius: &str, file: &str) -> i32 {
    let o = run(
        &[
            "propose",
            "--gap",
            gap,
            "--blast-radius",
            radius,
            "--approach",
            "structural",
            "--reason",
            "the broken import is an exact fact of the index",
            "--description",
            "define missing_name in core",
            "--write-set",
            file,
        ],
        dir,
    );
    o.status.code().unwrap()
}

#[test]
fn end_to_end_three_stages_halt_fix_advance_sub_cycle_converge_harden() {
    let t = three_stages();
    let d = t.path();
    // api also has work of its own, for later
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse, missing_name\n\n\n# TODO: validate the input\ndef run(text):\n    return parse(text), missing_name\n",
    )
    .unwrap();
    git(d, &["commit", "-qam", "a TODO in api"]);
    // 1. the loop stops on the broken wire core -> api
    let (code, v) = loop_json(d);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["cursor"], "core");
    let gap = v["picked"]["gap"].as_str().unwrap().to_string();
    let g = v["gaps"].as_array().unwrap().iter().find(|x| x["id"] == gap.as_str()).unwrap().clone();
    assert_eq!((g["kind"].as_str(), g["source"].as_str()), (Some("wire"), Some("BrokenImport")), "{v:#}");
    assert_eq!(g["path"], "src/api/__init__.py");
    // 2. a proposal over the ceiling halts
    assert_eq!(propose(d, &gap, "hard-to-reverse", "src/core/__init__.py"), 0);
    let (code, v) = loop_json(d);
    assert_eq!((code, v["verdict"]["outcome"].as_str()), (11, Some("halt:authorization")), "{v:#}");
    // 3. verifying before anything is applied is refused; a change that does not fix the wire leaves
    //    the broken import an exact fact: a tier-1 hold
    assert_eq!(propose(d, &gap, "local+reversible", "src/core/__init__.py"), 0);
    let (_, v) = loop_json(d);
    assert_eq!(v["next"]["action"], "apply-and-verify", "{v:#}");
    assert_eq!(run(&["verify", "--gap", &gap, "-q"], d).status.code(), Some(2), "no change, nothing to prove");
    std::fs::write(
        d.join("src/core/__init__.py"),
        "def parse(text):\n    # split on whitespace\n    return text.split()\n",
    )
    .unwrap();
    let o = run(&["verify", "--gap", &gap, "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(12), "{}", String::from_utf8_lossy(&o.stdout));
    let vv = json(&o);
    assert_eq!(vv["verdict"]["outcome"], "halt:tier1-hold");
    assert!(vv["evidence"]["references"][0].as_str().unwrap().contains("`missing_name` is not defined or exported"));
    // the loop records the hold; no override clears it; status lists it first
    let (code, v) = loop_json(d);
    assert_eq!((code, v["verdict"]["outcome"].as_str()), (12, Some("halt:tier1-hold")), "{v:#}");
    assert_eq!(v["next"]["action"], "fix-the-code", "{v:#}");
    // the hold is the gap's last evidence (the first is the note of the authorization halt)
    let (_, state, _) = ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    let hold = state.gap_evidence[&gap].last().unwrap().clone();
    assert!(state.evidence[&hold].hold);
    let o = run(
        &[
            "override",
            &gap,
            "--evidence",
            &hold,
            "--basis",
            "extractor-limitation",
            "--by",
            "lead",
            "--reason",
            "it is fine",
        ],
        d,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("tier-1 hold"), "{}", String::from_utf8_lossy(&o.stdout));
    let status = String::from_utf8_lossy(&run(&["status"], d).stdout).into_owned();
    assert!(status.lines().nth(1).unwrap().starts_with("STANDING TIER-1 HOLDS"), "{status}");
    // 4. a fix that writes outside the declared write-set is refused and listed
    assert_eq!(propose(d, &gap, "local+reversible", "src/core/__init__.py"), 0);
    loop_json(d);
    std::fs::write(
        d.join("src/core/__init__.py"),
        "def parse(text):\n    return text.split()\n\n\ndef missing_name():\n    return 1\n",
    )
    .unwrap();
    std::fs::write(d.join("src/cli/extra.py"), "X = 1\n").unwrap();
    let o = run(&["verify", "--gap", &gap, "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json(&o)["outside_write_set"], serde_json::json!(["src/cli/extra.py"]));
    // 5. the fix alone is proven, the loop records it and the cursor advances to api
    std::fs::remove_file(d.join("src/cli/extra.py")).unwrap();
    let o = run(&["verify", "--gap", &gap, "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(json(&o)["evidence"]["tier"], 1);
    let ledger_before = std::fs::read(d.join("analysis/andon/ledger/ledger.jsonl")).unwrap();
    let (code, v) = loop_json(d);
    assert_eq!(code, 0, "{v:#}");
    assert!(ledger_before.len() < std::fs::read(d.join("analysis/andon/ledger/ledger.jsonl")).unwrap().len());
    // the fix closed core -> api; api -> cli needs no change and is proven by the loop itself;
    // the cursor is at api, whose TODO is the next work
    assert_eq!(v["ledger"]["passes"], 3, "a halted pass, the verified fix, the self-proven wire: {v:#}");
    let wires = v["ledger"]["wires"].as_array().unwrap();
    assert!(wires.iter().all(|w| w["status"] == "proven"), "{v:#}");
    assert_eq!((v["cursor"].as_str(), v["next"]["action"].as_str()), (Some("api"), Some("propose")), "{v:#}");
    let todo = v["picked"]["gap"].as_str().unwrap().to_string();
    assert!(todo.starts_with("F-"), "{v:#}");
    // 6. the TODO's fix changes the signature of core's `parse`, which core -> api rests on
    let o = run(
        &[
            "propose",
            "--gap",
            &todo,
            "--blast-radius",
            "local+reversible",
            "--approach",
            "executed",
            "--reason",
            "the check exercises run()",
            "--description",
            "validate the input; parse takes a separator",
            "--write-set",
            "src/api/__init__.py",
            "--write-set",
            "src/core/__init__.py",
        ],
        d,
    );
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    loop_json(d);
    std::fs::write(
        d.join("src/core/__init__.py"),
        "def parse(text, sep=None):\n    return text.split(sep)\n\n\ndef missing_name():\n    return 1\n",
    )
    .unwrap();
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse, missing_name\n\n\ndef run(text):\n    if not text:\n        raise ValueError(\"empty\")\n    return parse(text, None), missing_name\n",
    )
    .unwrap();
    // a changed public surface rates hard-to-reverse: above the ceiling until a person authorizes this diff
    let o = run(&["verify", "--gap", &todo, "--command", NO_TODO, "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(11), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(
        json(&o)["detail"].as_str().unwrap().contains("rates hard-to-reverse (it writes files of 2 stages"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = run(&["authorize", &todo, "--by", "lead", "--reason", "parse gains an optional separator"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let o = run(&["verify", "--gap", &todo, "--command", NO_TODO, "--format", "json"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    // 7. verify records it and reopens core -> api in a sub-cycle; the loop re-proves it, and the
    // cycle converges
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("sub-cycle: core -> api reopened"), "{said}");
    let (code, v) = loop_json(d);
    assert_eq!(code, 0, "{v:#}");
    let notes: Vec<&str> = v["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(notes.iter().any(|n| n.contains("core -> api proven structurally")), "{notes:?}");
    assert!(!notes.iter().any(|n| n.contains("api -> cli reopened")), "run()'s signature did not change: {notes:?}");
    assert!(
        notes.iter().any(|n| n.contains("constraint: core -> api (reopened 1 time(s)")
            && n.ends_with("next cycle: harden (core -> api reopened 1 time(s) this cycle)")),
        "the cycle report (R64, R65): {notes:?}"
    );
    assert_eq!(
        (v["next"]["action"].as_str(), v["verdict"]["outcome"].as_str()),
        (Some("converged"), Some("converged")),
        "{v:#}"
    );
    let status = json(&run(&["status", "--format", "json"], d));
    assert_eq!(status["counters"]["sub_cycles"], 1);
    // the sub-cycle records the settings it used, and reopened the wire as unknown (R82)
    let (_, _, records) = ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    let sub = records.iter().find_map(|r| match &r.event {
        Event::SubCycle { backtrack_depth, thrash_threshold, .. } => Some((*backtrack_depth, *thrash_threshold)),
        _ => None,
    });
    assert_eq!(sub, Some((Some(2), Some(3))), "{records:?}");
    let reopened_unknown = records.iter().any(|r| {
        matches!(&r.event, Event::WireStatusChanged { wire, status: ledger::WireStatus::Unknown, .. } if wire.producer == "core")
    });
    assert!(reopened_unknown, "{records:?}");
    // after the convergence, status shows the constraint the convergence recorded, as the loop does
    assert_eq!(status["constraint"], v["constraint"], "{status:#}");
    assert_eq!(
        (status["constraint"]["producer"].as_str(), status["constraint"]["rule"].as_str()),
        (Some("core"), Some("last-cycle"))
    );
    let core_api = &status["stages"].as_array().unwrap().iter().find(|s| s["name"] == "core").unwrap()["wires"][0];
    assert_eq!((core_api["status"].as_str(), core_api["reopened"].as_u64()), (Some("proven"), Some(1)));
    // 8. a cycle that converges without a single fix: hardened
    let (code, v) = loop_json(d);
    assert_eq!(code, 0);
    assert_eq!(v["verdict"]["outcome"], "hardened", "{v:#}");
    let status = json(&run(&["status", "--format", "json"], d));
    assert_eq!(status["counters"]["cycles"], 2, "the run that reports the cycle hardened records it");
    assert!(status["constraint"].is_null(), "the hardened cycle had no limiting wire: {status:#}");
    assert_eq!(status["next"]["action"], "hardened", "{status:#}");
    let (_, v) = loop_json(d);
    assert_eq!(v["verdict"]["outcome"], "hardened", "{v:#}");
    let status = json(&run(&["status", "--format", "json"], d));
    assert_eq!(status["counters"]["cycles"], 2, "a hardening already recorded is not recorded again");
    let o = run(&["ledger", "check"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn a_clean_stream_is_proven_by_the_loop_converges_and_then_reports_hardened() {
    let t = three_stages();
    let d = t.path();
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse\n\n\ndef run(text):\n    return parse(text)\n",
    )
    .unwrap();
    // the budget ends a run with its own verdict, never silently
    let o = run(&["loop", "--max-passes", "1", "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(16));
    let v = json(&o);
    assert_eq!((v["verdict"]["outcome"].as_str(), v["ledger"]["passes"].as_u64()), (Some("budget"), Some(1)));
    // the next run proves the last wire and converges; the one after finds nothing to do
    let (code, v) = loop_json(d);
    assert_eq!((code, v["verdict"]["outcome"].as_str()), (0, Some("converged")), "{v:#}");
    let (code, v) = loop_json(d);
    assert_eq!((code, v["verdict"]["outcome"].as_str()), (0, Some("hardened")), "{v:#}");
    let before = ledger_bytes(d);
    assert_eq!(loop_json(d).1["verdict"]["outcome"], "hardened");
    assert_eq!(ledger_bytes(d), before, "confirming hardened writes nothing");
}

/// Three stages with every wire clean and a TODO in api; the loop proves both wires and picks it.
fn todo_in_api(d: &std::path::Path, settings: &str) -> String {
    todo_in_api_proposed_with(d, settings, &[])
}

/// [`todo_in_api`], with `extra` flags for `andon propose`.
fn todo_in_api_proposed_with(d: &std::path::Path, settings: &str, extra: &[&str]) -> String {
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse\n\n\n# TODO: validate the input\ndef run(text):\n    return parse(text)\n",
    )
    .unwrap();
    std::fs::write(d.join("andon.toml"), settings).unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "a TODO in api"]);
    let (_, v) = loop_json(d);
    assert_eq!((v["cursor"].as_str(), v["next"]["action"].as_str()), (Some("api"), Some("propose")), "{v:#}");
    let gap = v["picked"]["gap"].as_str().unwrap().to_string();
    let mut args = vec![
        "propose",
        "--gap",
        &gap,
        "--blast-radius",
        "local+reversible",
        "--approach",
        "executed",
        "--reason",
        "the check exercises run()",
        "--description",
        "validate the input",
        "--write-set",
        "src/api/__init__.py",
        "--write-set",
        "src/core/__init__.py",
    ];
    args.extend_from_slice(extra);
    let o = run(&args, d);
    assert_eq!(o.status.code(), Some(0));
    loop_json(d);
    gap
}

fn notes(v: &serde_json::Value) -> Vec<String> {
    v["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect()
}

#[test]
fn a_fix_inside_a_body_leaves_the_wires_it_crosses_proven() {
    let t = three_stages();
    let d = t.path();
    // a fix that writes two stages rates hard-to-reverse (decision 5): the ceiling admits it here
    let gap = todo_in_api(d, "authorization_level = \"hard-to-reverse\"\n");
    // core's parse keeps its signature; api changes its body and how it names the import
    std::fs::write(d.join("src/core/__init__.py"), "def parse(text):\n    # words\n    return text.split()\n").unwrap();
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse as parse_text\n\n\ndef run(text):\n    if not text:\n        raise ValueError(\"empty\")\n    return parse_text(text)\n",
    )
    .unwrap();
    let o = run(&["verify", "--gap", &gap, "--command", NO_TODO, "-q"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let (code, v) = loop_json(d);
    assert_eq!((code, v["verdict"]["outcome"].as_str()), (0, Some("converged")), "{v:#}");
    assert!(!notes(&v).iter().any(|n| n.contains("reopened")), "{:?}", notes(&v));
    assert_eq!(json(&run(&["status", "--format", "json"], d))["counters"]["sub_cycles"], 0);
}

#[test]
fn a_surface_changed_outside_the_loop_makes_the_proof_stale() {
    let t = three_stages();
    let d = t.path();
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse\n\n\ndef run(text):\n    return parse(text)\n",
    )
    .unwrap();
    assert_eq!(loop_json(d).1["verdict"]["outcome"], "converged");
    // someone changes what crosses core -> api without the loop (the call still fits it)
    std::fs::write(d.join("src/core/__init__.py"), "def parse(text, sep=None):\n    return text.split(sep)\n").unwrap();
    let (code, v) = loop_json(d);
    assert_eq!(code, 0, "{v:#}");
    let n = notes(&v);
    assert!(n.iter().any(|n| n.starts_with("stale: core -> api reopened")), "{n:?}");
    assert!(n.iter().any(|n| n.contains("core -> api proven structurally")), "{n:?}");
    assert_eq!(v["verdict"]["outcome"], "converged", "a pass closed: not hardened: {v:#}");
    let q = run(&["query", "LedgerReopened(p, c, seq)", "--format", "json", "-q"], d);
    assert_eq!(q.status.code(), Some(0), "{}", String::from_utf8_lossy(&q.stderr));
    let rows = json(&q)["rows"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0][0].as_str(), rows[0][1].as_str()), (Some("core"), Some("api")));
}

#[test]
fn a_wire_that_keeps_reopening_stops_the_backtracking_and_becomes_the_constraint() {
    let t = three_stages();
    let d = t.path();
    let gap = todo_in_api(d, "thrash_threshold = 1\nauthorization_level = \"hard-to-reverse\"\n");
    std::fs::write(d.join("src/core/__init__.py"), "def parse(text, sep=None):\n    return text.split(sep)\n").unwrap();
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse\n\n\ndef run(text):\n    if not text:\n        raise ValueError(\"empty\")\n    return parse(text, None)\n",
    )
    .unwrap();
    let o = run(&["verify", "--gap", &gap, "--command", NO_TODO], d);
    assert_eq!(o.status.code(), Some(0));
    // verify records the proof, and with it the reopening that makes the wire thrash
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(said.contains("thrash: core -> api has reopened 1 times (threshold 1); backtracking stops"), "{said}");
    let (code, v) = loop_json(d);
    // the loop does not re-prove it: it escalates to a person
    assert_eq!((code, v["next"]["action"].as_str()), (14, Some("decide")), "{v:#}");
    assert!(v["next"]["detail"].as_str().unwrap().starts_with("escalation: core -> api has reopened 1 times"), "{v:#}");
    assert_eq!(loop_json(d).0, 14, "and keeps escalating, never re-proving silently");
    let n = notes(&v);
    assert!(!n.iter().any(|n| n.starts_with("sub-cycle:")), "no backtrack once it thrashes: {n:?}");
    let status = json(&run(&["status", "--format", "json"], d));
    assert_eq!(status["counters"]["sub_cycles"], 0);
    assert_eq!(status["constraint"]["rule"], "thrash", "{status:#}");
    assert_eq!(
        (status["constraint"]["producer"].as_str(), status["constraint"]["consumer"].as_str()),
        (Some("core"), Some("api"))
    );
    // the ledger records the threshold the decision used, and the reopened wire is unknown (R82)
    let (_, state, records) = ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    let thrash = records.iter().find_map(|r| match &r.event {
        Event::Thrashing { wire, reopens, thrash_threshold, backtrack_depth } => {
            Some((wire.to_string(), *reopens, *thrash_threshold, *backtrack_depth))
        }
        _ => None,
    });
    assert_eq!(thrash, Some(("core -> api".to_string(), 1, 1, 2)), "{records:?}");
    let core_api = ledger::Wire { producer: "core".into(), consumer: "api".into() };
    assert_eq!(state.wires[&core_api].status, ledger::WireStatus::Unknown);
}

#[test]
fn each_session_reports_the_ledger_delta_since_the_last_run() {
    let t = scratch("py-gaps");
    let (_, first) = loop_json(t.path());
    assert!(
        first["delta"].as_array().unwrap().iter().any(|d| d.as_str().unwrap().contains("× stage recorded")),
        "{first:#}"
    );
    let gap = first["picked"]["gap"].as_str().unwrap().to_string();
    let (_, quiet) = loop_json(t.path());
    assert_eq!(quiet["delta"], serde_json::json!([]), "nothing happened in between");
    run(&["skip", &gap, "--by", "lead", "--reason", "later"], t.path());
    let (_, v) = loop_json(t.path());
    assert!(v["delta"].as_array().unwrap().iter().any(|d| d == "1 × gap skipped"), "{v:#}");
    let text = String::from_utf8_lossy(&run(&["loop", "-q"], t.path()).stdout).into_owned();
    assert!(!text.contains("ledger since the last run"), "{text}");
}

#[test]
fn verify_takes_a_unified_diff_and_checks_its_scope_and_radius() {
    let t = scratch("py-gaps");
    let gap = picked(t.path());
    let o = propose_with(t.path(), &gap, "structural", "src/orders/model.py");
    assert_eq!(o.status.code(), Some(0));
    loop_json(t.path());
    let diff = |name: &str, text: &str| {
        let p = t.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    // a file the proposal did not declare: refused and listed
    let wide = diff(
        "wide.diff",
        "--- a/src/orders/model.py\n+++ b/src/orders/model.py\n@@ -1 +1 @@\n-a\n+b\n--- a/src/billing/invoice.py\n+++ b/src/billing/invoice.py\n@@ -1 +1 @@\n-a\n+b\n",
    );
    let o = run(&["verify", "--gap", &gap, "--diff", &wide, "--format", "json", "-q"], t.path());
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(json(&o)["outside_write_set"], serde_json::json!(["src/billing/invoice.py"]));
    // deleting the file rates hard-to-reverse, above the ceiling: a person must authorize this diff
    let delete = diff("delete.diff", "--- a/src/orders/model.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n");
    let o = run(&["verify", "--gap", &gap, "--diff", &delete, "--format", "json", "-q"], t.path());
    assert_eq!(o.status.code(), Some(11), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(json(&o)["verdict"]["outcome"], "halt:authorization");
    // a diff that names no file is a bad request
    let empty = diff("empty.diff", "nothing here\n");
    assert_eq!(run(&["verify", "--gap", &gap, "--diff", &empty, "-q"], t.path()).status.code(), Some(2));
    // within scope: proven or not by the structural proof, never refused
    let narrow = diff("narrow.diff", "--- a/src/orders/model.py\n+++ b/src/orders/model.py\n@@ -1 +1 @@\n-a\n+b\n");
    let o = run(&["verify", "--gap", &gap, "--diff", &narrow, "--format", "json", "-q"], t.path());
    let outcome = json(&o)["verdict"]["outcome"].as_str().unwrap().to_string();
    assert!(outcome == "proven" || outcome.starts_with("halt:"), "{outcome}");
}

#[test]
fn a_tier_one_hold_outlasts_any_other_proof_until_the_code_changes() {
    let t = three_stages();
    let d = t.path();
    let (_, v) = loop_json(d);
    let gap = v["picked"]["gap"].as_str().unwrap().to_string();
    assert_eq!(propose(d, &gap, "local+reversible", "src/core/__init__.py"), 0);
    loop_json(d);
    std::fs::write(d.join("src/core/__init__.py"), "def parse(text):\n    return text.split()  # tidy\n").unwrap();
    assert_eq!(run(&["verify", "--gap", &gap, "-q"], d).status.code(), Some(12));
    loop_json(d);
    // another approach whose check passes on a change that does not fix the wire: verify routes
    // by what crosses the wire, not by the proposal, says so, and the hold stands
    let o = propose_with(d, &gap, "executed", "src/core/__init__.py");
    assert_eq!(o.status.code(), Some(0));
    loop_json(d);
    let o = run(&["verify", "--gap", &gap, "--command", "true", "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(12));
    let r = &json(&o)["routing"];
    assert_eq!(
        (r["approach"].as_str(), r["rung"].as_u64(), r["family"].as_str()),
        (Some("structural"), Some(2), Some("e")),
        "{r:#}"
    );
    assert!(r["disagreement"].as_str().unwrap().contains("recommended `executed`"), "{r:#}");
    loop_json(d);
    // a person may not overrule routing outside a tie
    let o = run(&["verify", "--gap", &gap, "--approach", "executed", "--command", "true", "-q"], d);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("routing chose structural"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let (code, v) = loop_json(d);
    assert_eq!(code, 12, "{v:#}");
    let status = json(&run(&["status", "--format", "json"], d));
    assert_eq!(status["holds"].as_array().unwrap().len(), 1, "the hold stands: {status:#}");
    let wire = &status["stages"].as_array().unwrap().iter().find(|s| s["name"] == "core").unwrap()["wires"][0];
    assert_eq!(wire["status"], "broken/unproven");
}

#[test]
fn an_overridden_tier_two_hold_lets_the_loop_advance() {
    let t = scratch("py-gaps");
    // without the missing name, the wire orders -> billing is contradicted only by a stub (tier 2)
    std::fs::write(
        t.path().join("src/billing/invoice.py"),
        "import attr\nfrom orders.model import Order, refund\n\n\ndef invoice_for(order: Order):\n    return refund(order)\n",
    )
    .unwrap();
    let (_, v) = loop_json(t.path());
    let gap = v["picked"]["gap"].as_str().unwrap().to_string();
    let o = propose_with(t.path(), &gap, "structural", "src/orders/model.py");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    loop_json(t.path());
    let diff = t.path().join("fix.diff");
    std::fs::write(&diff, "--- a/src/orders/model.py\n+++ b/src/orders/model.py\n@@ -1 +1 @@\n-a\n+b\n").unwrap();
    let o = run(&["verify", "--gap", &gap, "--diff", diff.to_str().unwrap(), "--format", "json", "-q"], t.path());
    assert_eq!(o.status.code(), Some(13), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(loop_json(t.path()).0, 13);
    let o = run(
        &[
            "override",
            &gap,
            "--evidence",
            &format!("E-{gap}-1"),
            "--by",
            "lead",
            "--reason",
            "refund is wired in the next release",
        ],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(2), "a free-text override without a basis is refused");
    let o = run(
        &[
            "override",
            &gap,
            "--evidence",
            &format!("E-{gap}-1"),
            "--basis",
            "extractor-limitation",
            "--artifact",
            "no/such/log.txt",
            "--by",
            "lead",
            "--reason",
            "refund is wired through a plugin registry the index cannot see",
        ],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(1), "a counter-artifact must exist");
    assert!(String::from_utf8_lossy(&o.stdout).contains("is not a file in the repository"));
    std::fs::write(t.path().join("registry.log"), "refund -> billing\n").unwrap();
    let status = || json(&run(&["status", "--format", "json"], t.path()));
    assert_eq!(status()["decisions"], serde_json::json!([]));
    let o = run(
        &[
            "override",
            &gap,
            "--evidence",
            &format!("E-{gap}-1"),
            "--basis",
            "extractor-limitation",
            "--artifact",
            "registry.log",
            "--by",
            "lead",
            "--reason",
            "refund is wired through a plugin registry the index cannot see",
        ],
        t.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let d = &status()["decisions"][0];
    assert_eq!(
        (d["action"].as_str(), d["by"].as_str(), d["gap"].as_str()),
        (Some("override"), Some("lead"), Some(gap.as_str()))
    );
    let (code, v) = loop_json(t.path());
    assert!(
        v["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("overridden; it closes")),
        "{v:#}"
    );
    assert_ne!(code, 14, "{v:#}");
    // the wire stands on the override, and the same contradiction is not reopened
    let wires = v["ledger"]["wires"].as_array().unwrap();
    assert!(
        wires.iter().any(|w| w["producer"] == "orders" && w["consumer"] == "billing" && w["status"] == "proven"),
        "{v:#}"
    );
    let (_, again) = loop_json(t.path());
    let reopened = format!("{gap}.2");
    assert!(!again["gaps"].as_array().unwrap().iter().any(|g| g["id"] == reopened.as_str()), "{again:#}");
    assert_eq!(run(&["ledger", "check"], t.path()).status.code(), Some(0));
}

#[test]
fn an_executed_check_that_fails_refutes_the_fix() {
    let t = three_stages();
    let d = t.path();
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse\n\n\n# TODO: validate\ndef run(text):\n    return parse(text)\n",
    )
    .unwrap();
    git(d, &["commit", "-qam", "a TODO"]);
    let gap = loop_json(d).1["picked"]["gap"].as_str().unwrap().to_string();
    assert_eq!(propose_with(d, &gap, "executed", "src/api/__init__.py").status.code(), Some(0));
    loop_json(d);
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse\n\n\ndef run(text):\n    return parse(text)\n",
    )
    .unwrap();
    let o = run(&["verify", "--gap", &gap, "--command", "echo failing >&2; exit 3", "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(10), "{}", String::from_utf8_lossy(&o.stdout));
    let v = json(&o);
    assert_eq!(v["verdict"]["outcome"], "halt:refuted");
    let artifact = std::fs::read_to_string(d.join(v["evidence"]["artifact"].as_str().unwrap())).unwrap();
    assert!(artifact.contains("exit: 3\n") && artifact.contains("failing"), "{artifact}");
}

fn lines_in(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path).map(|t| t.lines().count()).unwrap_or(0)
}

#[test]
fn a_failing_configured_command_is_a_gap_in_its_lane_and_proves_the_fix() {
    let t = clean_three_stages(
        "[[command]]\nname = \"core-check\"\nrun = \"mkdir -p analysis && echo x >> analysis/fast-runs; test -f src/core/ready\"\nstages = [\"core\"]\n\n[[command]]\nname = \"core-suite\"\nrun = \"mkdir -p analysis && echo x >> analysis/slow-runs; test -f src/core/ready\"\nstages = [\"core\"]\nlane = \"slow\"\n",
    );
    let d = t.path();
    let (code, v) = loop_json(d);
    assert_eq!(code, 0, "{v:#}");
    // the wires are proven first (wire before bug), then the failing command is the work
    let gap = v["picked"]["gap"].as_str().unwrap().to_string();
    let g = v["gaps"].as_array().unwrap().iter().find(|x| x["id"] == gap.as_str()).unwrap().clone();
    assert_eq!((g["source"].as_str(), g["kind"].as_str()), (Some("FailingCommand"), Some("bug")), "{v:#}");
    assert_eq!((g["path"].as_str(), g["line"].as_u64()), (Some("andon.toml"), Some(1)), "{g:#}");
    assert!(g["summary"].as_str().unwrap().contains("`core-check` (fast lane) exits 1"), "{g:#}");
    assert_eq!(lines_in(&d.join("analysis/fast-runs")), 1, "one run per step");
    assert_eq!(lines_in(&d.join("analysis/slow-runs")), 0, "the slow lane runs only on request");
    // an unchanged tree does not run it again; --slow runs the slow lane
    loop_json(d);
    assert_eq!(lines_in(&d.join("analysis/fast-runs")), 1, "cached on the unchanged tree");
    let o = run(&["loop", "--slow", "--format", "json", "-q"], d);
    assert_eq!(lines_in(&d.join("analysis/slow-runs")), 1);
    let slow =
        json(&o)["gaps"].as_array().unwrap().iter().any(|x| x["summary"].as_str().unwrap().contains("core-suite"));
    assert!(slow, "{:#}", json(&o));
    // the fix, for the gap the loop picks now: verify runs every configured command of the stage,
    // both lanes; the other command's gap closes on that proof
    let other = gap;
    let gap = json(&o)["picked"]["gap"].as_str().unwrap().to_string();
    assert_eq!(propose_with(d, &gap, "executed", "src/core/ready").status.code(), Some(0));
    loop_json(d);
    std::fs::write(d.join("src/core/ready"), "").unwrap();
    let o = run(&["verify", "--gap", &gap, "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let e = &json(&o)["evidence"];
    assert!(
        e["claim"].as_str().unwrap().contains("fast-runs") && e["claim"].as_str().unwrap().contains("slow-runs"),
        "{e:#}"
    );
    assert_eq!((lines_in(&d.join("analysis/fast-runs")), lines_in(&d.join("analysis/slow-runs"))), (2, 2));
    // verify recorded the proof: the gap is closed before the loop runs again
    let (_, state, _) = ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    assert_eq!(state.gaps[&gap].status, ledger::GapStatus::Closed, "{:?}", state.gaps[&gap]);
    let (code, v) = loop_json(d);
    assert_eq!(code, 0, "{v:#}");
    let (_, state, _) = ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    if other != gap {
        assert_eq!(state.gaps[&other].resolved_by, state.gaps[&gap].resolved_by, "{:?}", state.gaps[&other]);
    }
}

#[test]
fn a_check_that_cannot_finish_proves_nothing() {
    let t = clean_three_stages(
        "[[command]]\nname = \"hangs\"\nrun = \"test -f src/core/ready || sleep 30\"\nstages = [\"core\"]\ntimeout_secs = 1\n",
    );
    let d = t.path();
    let (_, v) = loop_json(d);
    let gap = v["picked"]["gap"].as_str().unwrap().to_string();
    let g = v["gaps"].as_array().unwrap().iter().find(|x| x["id"] == gap.as_str()).unwrap().clone();
    assert!(g["summary"].as_str().unwrap().contains("`hangs` (fast lane) times out"), "{g:#}");
    assert_eq!(propose_with(d, &gap, "executed", "src/core/__init__.py").status.code(), Some(0));
    loop_json(d);
    std::fs::write(d.join("src/core/__init__.py"), "def parse(text):\n    return text.split()  # same\n").unwrap();
    let started = std::time::Instant::now();
    let o = run(&["verify", "--gap", &gap, "--format", "json", "-q"], d);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(o.status.code(), Some(15), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(json(&o)["verdict"]["outcome"], "halt:unproven");
}

#[test]
fn a_command_naming_an_unknown_stage_is_a_config_error() {
    let t = clean_three_stages("[[command]]\nname = \"x\"\nrun = \"true\"\nstages = [\"cor\"]\n");
    let o = run(&["loop", "-q"], t.path());
    assert_ne!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("andon.toml:1: command `x` names stage `cor`"), "{err}");
}

#[test]
fn missing_tests_and_unused_dependencies_are_gaps() {
    let t = clean_three_stages("");
    let d = t.path();
    // `cli`'s tests run `api` too (a stage upstream of a tested one is tested): remove both
    std::fs::remove_file(d.join("src/api/test_api.py")).unwrap();
    std::fs::remove_file(d.join("src/cli/test_cli.py")).unwrap();
    std::fs::write(
        d.join("pyproject.toml"),
        "[project]\nname = \"shop\"\nversion = \"0.1.0\"\ndependencies = [\"requests\"]\n",
    )
    .unwrap();
    let (_, v) = loop_json(d);
    let found: Vec<(String, String, String)> = v["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["source"].as_str().unwrap().into(),
                g["path"].as_str().unwrap().into(),
                g["summary"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        found.contains(&(
            "MissingTests".into(),
            "src/api/__init__.py".into(),
            "stage `api` has no tests: no test file or test reaches it".into()
        )),
        "{found:?}"
    );
    let q = run(&["query", "UnusedDependency(s, d)", "--format", "json", "-q"], d);
    assert_eq!(json(&q)["rows"].as_array().unwrap().len(), 1, "{}", String::from_utf8_lossy(&q.stdout));
    assert_eq!(json(&q)["rows"][0][0], "api", "{}", String::from_utf8_lossy(&q.stdout));
    assert!(
        found.iter().any(|(s, p, m)| s == "UnusedDependency" && p == "pyproject.toml" && m.contains("`requests`")),
        "{found:?}"
    );
}

#[test]
fn a_converged_cycle_records_the_next_cycles_intent() {
    // stable wires and no pending checks: the next cycle is for features
    let t = clean_three_stages("");
    let (_, v) = loop_json(t.path());
    assert!(
        notes(&v).iter().any(|n| n.ends_with(
            "constraint: none; next cycle: feature (every wire is proven and stable, and no check is pending)"
        )),
        "{:?}",
        notes(&v)
    );
    // a slow lane that has not run on this tree: split
    let t = clean_three_stages("[[command]]\nname = \"e2e\"\nrun = \"true\"\nlane = \"slow\"\n");
    let (_, v) = loop_json(t.path());
    assert!(
        notes(&v).iter().any(|n| n
            .contains("next cycle: split (the fast lane passes but the slow lane has not passed on this tree (e2e)")),
        "{:?}",
        notes(&v)
    );
    let md = std::fs::read_to_string(t.path().join("analysis/andon/ledger/ledger.md")).unwrap();
    assert!(md.contains("Pass 1 (cycle 1) closed on"), "{md}");
    assert!(md.contains("Cycle 1 converged after 2 passes, 0 sub-cycles; next cycle: split"), "{md}");
    // with the slow lane run and passing, nothing is pending
    let t = clean_three_stages("[[command]]\nname = \"e2e\"\nrun = \"true\"\nlane = \"slow\"\n");
    let v = json(&run(&["loop", "--slow", "--format", "json", "-q"], t.path()));
    assert!(notes(&v).iter().any(|n| n.contains("next cycle: feature")), "{:?}", notes(&v));
}

#[test]
fn a_gap_that_moves_keeps_its_id_and_one_gone_from_the_code_vanishes() {
    let t = clean_three_stages("");
    let d = t.path();
    let api = "from core import parse\n\n\n# TODO: validate the input\ndef run(text):\n    return parse(text)\n";
    std::fs::write(d.join("src/api/__init__.py"), api).unwrap();
    let (_, v) = loop_json(d);
    let gap = v["picked"]["gap"].as_str().unwrap().to_string();
    assert!(gap.starts_with("F-"), "{v:#}");
    // two lines above it: the same gap, not a new one
    std::fs::write(d.join("src/api/__init__.py"), format!("\"\"\"The api.\"\"\"\n\n{api}")).unwrap();
    let (_, v) = loop_json(d);
    assert_eq!(v["picked"]["gap"], gap.as_str(), "{v:#}");
    assert_eq!(v["recorded"], 0, "{v:#}");
    // fixed by hand, outside the loop: the gap is gone from the code, and vanishes unproven
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse\n\n\ndef run(text):\n    return parse(text)\n",
    )
    .unwrap();
    let (code, v) = loop_json(d);
    assert_eq!(code, 0, "{v:#}");
    assert!(notes(&v).iter().any(|n| n.starts_with(&format!("gap `{gap}` vanished from the scan"))), "{:?}", notes(&v));
    assert_eq!(v["verdict"]["outcome"], "converged", "a gap vanished in this cycle: not hardened: {v:#}");
    let status = json(&run(&["status", "--format", "json"], d));
    assert_eq!(status["gaps"]["by_status"]["closed"].as_u64(), Some(2), "two wires: {status:#}");
    assert_eq!(status["gaps"]["by_status"]["vanished"].as_u64(), Some(1), "the TODO: {status:#}");
    assert_eq!(status["vanished"][0]["id"], gap.as_str(), "status lists it: {status:#}");
    let text = String::from_utf8_lossy(&run(&["status"], d).stdout).into_owned();
    assert!(text.contains(&format!("vanished, not proven: `{gap}`")), "{text}");
    assert_eq!(loop_json(d).1["verdict"]["outcome"], "hardened");
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
}

#[test]
fn what_verify_saw_must_still_be_the_tree_and_a_diff_cannot_understate_it() {
    let t = three_stages();
    let d = t.path();
    let gap = todo_in_api(d, "");
    // the tree deletes a file; a hand-written diff says it was only modified
    std::fs::remove_file(d.join("src/core/__init__.py")).unwrap();
    let understated = d.join("analysis/understated.diff");
    std::fs::write(&understated, "--- a/src/core/__init__.py\n+++ b/src/core/__init__.py\n@@ -1 +1 @@\n-a\n+b\n")
        .unwrap();
    let o = run(
        &[
            "verify",
            "--gap",
            &gap,
            "--diff",
            understated.to_str().unwrap(),
            "--command",
            NO_TODO,
            "--format",
            "json",
            "-q",
        ],
        d,
    );
    assert_eq!(o.status.code(), Some(11), "the tree's deletion rates it: {}", String::from_utf8_lossy(&o.stdout));
    git(d, &["checkout", "--", "src/core/__init__.py"]);
    // verify's halt for authority stands in the ledger until the gap is proposed again
    assert_eq!(loop_json(d).0, 11);
    let args = [
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
        "src/api/__init__.py",
        "--write-set",
        "src/core/__init__.py",
    ];
    assert_eq!(run(&args, d).status.code(), Some(0));
    loop_json(d);
    // proven on the tree it ran on, and recorded there and then: no later edit of the tree can
    // slip into a proof the loop records afterwards
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse\n\n\ndef run(text):\n    return parse(text)\n",
    )
    .unwrap();
    let o = run(&["verify", "--gap", &gap, "--command", NO_TODO, "-q"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let (_, state, _) = ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    assert_eq!(state.gaps[&gap].status, ledger::GapStatus::Closed);
    // an evidence file written by hand is never taken for a proof
    let forged = d.join(format!("analysis/andon/evidence/{gap}.json"));
    std::fs::create_dir_all(forged.parent().unwrap()).unwrap();
    std::fs::write(&forged, "{}").unwrap();
    let (code, v) = loop_json(d);
    assert_eq!(code, 0, "{v:#}");
    assert!(notes(&v).iter().any(|n| n.contains("not recorded, removed")), "{:?}", notes(&v));
    assert!(!forged.exists());
}

#[test]
fn concurrent_loop_runs_take_turns() {
    let t = clean_three_stages("");
    let d = t.path().to_path_buf();
    // the index first, so the runs race on the ledger rather than on parsing
    assert_eq!(run(&["index", "-q"], &d).status.code(), Some(0));
    let runs: Vec<_> = (0..4)
        .map(|_| {
            let d = d.clone();
            std::thread::spawn(move || run(&["loop", "--format", "json", "-q"], &d))
        })
        .collect();
    for r in runs {
        let o = r.join().unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let (_, state, records) = ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    let stages = records.iter().filter(|r| matches!(r.event, ledger::Event::StageRecorded { .. })).count();
    assert_eq!(stages, 3, "each stage recorded once");
    let hardened = records.iter().filter(|r| matches!(r.event, ledger::Event::CycleConverged { hardened: true, .. }));
    assert_eq!((state.cycles, hardened.count()), (2, 1), "converged once, then hardened once");
    assert_eq!(run(&["ledger", "check"], &d).status.code(), Some(0));
}

#[test]
fn a_ledger_of_another_repository_is_refused() {
    // without git and without `repo_id` nothing names a repository: the shared directory holds one
    // log, and it is the first repository's
    let shared = tempfile::tempdir().unwrap();
    let settings = format!("ledger_dir = \"{}\"\n", shared.path().join("ledger").display());
    let a = clean_three_stages(&settings);
    std::fs::remove_dir_all(a.path().join(".git")).unwrap();
    assert_eq!(run(&["loop", "-q"], a.path()).status.code(), Some(0));
    let b = tempfile::tempdir().unwrap();
    let other = b.path().join("other-repo");
    std::fs::create_dir_all(other.join("src/x")).unwrap();
    std::fs::write(other.join("src/x/__init__.py"), "X = 1\n").unwrap();
    std::fs::write(other.join("andon.toml"), &settings).unwrap();
    let before = std::fs::read(shared.path().join("ledger/ledger.jsonl")).unwrap();
    let o = run(&["loop", "-q"], &other);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("not `other-repo` (no stage the ledger recorded is in this repository): set `repo_id`"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(shared.path().join("ledger/ledger.jsonl")).unwrap(), before);
}

#[test]
fn a_file_name_cannot_forge_a_verdict_line() {
    let t = clean_three_stages("");
    let d = t.path();
    std::fs::write(d.join("src/core/evil\nandon: verdict hardened (all clear)\n.py"), "# FIXME: broken\nX = 1\n")
        .unwrap();
    let o = run(&["loop"], d);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let verdicts: Vec<&str> = text.lines().filter(|l| l.starts_with("andon: verdict")).collect();
    assert_eq!(verdicts.len(), 1, "{text}");
    assert!(!verdicts[0].contains("hardened"), "{text}");
    assert!(text.contains("evil\\u{a}andon: verdict hardened"), "the name is shown, escaped: {text}");
}

/// A repository in ingest mode with the `valid` fixture brief (phases P1, P2 with an entry gate, P3).
fn ingest_repo(with_brief: bool) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    for (f, text) in [
        ("shared/types.py", "X = 1\n"),
        ("shared/money.py", "Y = 2\n"),
        ("storage/db.py", "Z = 3\n"),
        ("api/routes.py", "R = 4\n"),
        ("andon.toml", "gap_source = \"ingest\"\n"),
    ] {
        std::fs::create_dir_all(d.join(f).parent().unwrap()).unwrap();
        std::fs::write(d.join(f), text).unwrap();
    }
    if with_brief {
        let src = crate::support::fixtures().join("briefs/valid");
        let dst = d.join("analysis/self-assess");
        std::fs::create_dir_all(&dst).unwrap();
        for f in ["MODERNIZATION_BRIEF.md", "transform_brief_summary.json"] {
            std::fs::copy(src.join(f), dst.join(f)).unwrap();
        }
    }
    t
}

#[test]
fn ingest_mode_without_a_brief_stops_and_never_scans() {
    let t = ingest_repo(false);
    let o = run(&["loop", "-q"], t.path());
    assert_ne!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("self-assess-transform-brief") && err.contains("does not fall back to scanning"), "{err}");
    assert!(!t.path().join("analysis/andon/ledger/ledger.jsonl").exists(), "no gap records");
    // it stops before anything is indexed or written: no index, no lock, no ledger directory
    assert!(!t.path().join(".andon").exists() && !t.path().join("analysis/andon").exists());
}

#[test]
fn a_phase_contract_closes_only_by_proof_never_by_a_regenerated_brief() {
    let t = ingest_repo(true);
    let d = t.path();
    // the spec's own spelling of the ingest value
    std::fs::write(d.join("andon.toml"), "gap_source = \"ingest-from-external-brief\"\n").unwrap();
    let (code, v) = loop_json(d);
    assert_eq!((code, v["cursor"].as_str()), (0, Some("P1")), "{v:#}");
    for g in v["gaps"].as_array().unwrap() {
        assert_eq!(
            run(&["defer", g["id"].as_str().unwrap(), "--by", "lead", "--reason", "later"], d).status.code(),
            Some(0)
        );
    }
    let (_, v) = loop_json(d);
    let contract = v["gaps"].as_array().unwrap().iter().find(|g| g["source"] == "PhaseContract").unwrap().clone();
    // P1's contract is on P1's own wire, out of it into P2
    assert_eq!(contract["wire"], serde_json::json!({ "producer": "P1", "consumer": "P2" }), "{contract:#}");
    // the brief is regenerated with more work in P1: the contract is not "gone", nothing proved it
    let sidecar = d.join("analysis/self-assess/transform_brief_summary.json");
    let mut brief: serde_json::Value = serde_json::from_slice(&std::fs::read(&sidecar).unwrap()).unwrap();
    brief["phases"][0]["work_items"].as_array_mut().unwrap().push(serde_json::json!({
        "id": "W9", "title": "Another finding", "path": "shared/types.py", "line": 1, "tag": "lint",
        "owner": "self-assess-idiom-fix"
    }));
    std::fs::write(&sidecar, serde_json::to_vec_pretty(&brief).unwrap()).unwrap();
    let (_, v) = loop_json(d);
    assert!(!notes(&v).iter().any(|n| n.contains("gone")), "{v:#}");
    let (_, state, _) = ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    let id = contract["id"].as_str().unwrap();
    assert_eq!(state.gaps[id].status, andon::ledger::GapStatus::Open);
    assert!(state.gap_evidence.get(id).is_none_or(Vec::is_empty), "no evidence was made up for it");
    assert_ne!(
        state.wires.get(&andon::ledger::Wire { producer: "P1".into(), consumer: "P2".into() }).map(|w| w.status),
        Some(andon::ledger::WireStatus::Proven)
    );
}

#[test]
fn ingest_mode_takes_phases_work_items_and_entry_gates_from_the_brief() {
    let t = ingest_repo(true);
    let d = t.path();
    let (code, v) = loop_json(d);
    assert_eq!(code, 0, "{v:#}");
    let order: Vec<&str> = v["stream"]["order"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    assert_eq!(order, ["P1", "P2", "P3"], "{v:#}");
    // the earliest phase with open work is the cursor and the constraint; its two work items are its gaps
    assert_eq!(v["cursor"], "P1");
    assert_eq!(v["constraint"]["rule"], "brief-order", "{v:#}");
    // on the phase's own wire, the one its contract proves; status says the same
    let status = json(&run(&["status", "--format", "json"], d));
    for c in [&v["constraint"], &status["constraint"]] {
        assert_eq!((c["producer"].as_str(), c["consumer"].as_str()), (Some("P1"), Some("P2")), "{c:#}");
    }
    let gaps = v["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 2, "{v:#}");
    assert!(gaps.iter().all(|g| g["source"] == "WorkItem" && g["kind"] == "bug"), "{v:#}");
    assert!(gaps.iter().any(|g| g["path"] == "shared/types.py"), "{v:#}");
    assert_eq!(v["next"]["action"], "propose");
    // they were opened on the constraint, the brief's earliest phase with open work
    let (_, state, _) = ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    assert!(state.gaps.values().all(|g| g.on_constraint == (g.stage == "P1")), "{:#?}", state.gaps);
    // P1's work is set aside: its contract is the last of its work; set aside too, P2 is next,
    // and its P0 rule below High confidence gates it
    for g in gaps {
        let id = g["id"].as_str().unwrap();
        assert_eq!(run(&["defer", id, "--by", "lead", "--reason", "later"], d).status.code(), Some(0));
    }
    let (_, v) = loop_json(d);
    assert_eq!(
        (v["cursor"].as_str(), v["picked"]["gap"].as_str().map(|g| g.starts_with("W-"))),
        (Some("P1"), Some(true))
    );
    let contract = v["gaps"].as_array().unwrap().iter().find(|g| g["source"] == "PhaseContract").unwrap().clone();
    assert_eq!(
        (contract["path"].as_str(), contract["line"].as_u64()),
        (Some("analysis/self-assess/MODERNIZATION_BRIEF.md"), Some(6)),
        "{contract:#}"
    );
    let id = contract["id"].as_str().unwrap();
    assert_eq!(run(&["defer", id, "--by", "lead", "--reason", "later"], d).status.code(), Some(0));
    let (code, v) = loop_json(d);
    assert_eq!((code, v["cursor"].as_str()), (17, Some("P2")), "{v:#}");
    assert_eq!(
        (v["next"]["action"].as_str(), v["verdict"]["outcome"].as_str()),
        (Some("confirm"), Some("halt:entry-gate"))
    );
    assert!(v["next"]["detail"].as_str().unwrap().contains("`BC-1` (P0, Medium confidence"), "{v:#}");
    // advisory notes are context, never gaps: P2 has two work items and one note
    assert_eq!(v["gaps"].as_array().unwrap().len(), 2, "{v:#}");
    // the andon rule itself refuses any advance in the gated stage
    let (_, state, _) = ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    let p2_gap = v["picked"]["gap"].as_str().unwrap().to_string();
    assert!(matches!(
        andon::ledger::andon_rule::rule_on(&state, &p2_gap, BlastRadius::SharedStateVisible, None),
        andon::ledger::andon_rule::Ruling::Halt(andon::ledger::andon_rule::Condition::EntryGate, _)
    ));
    assert_eq!(state.context["P2"].advisory.len(), 1);
    // status says what a person must do; a proposal in the gated stage is refused
    let status = json(&run(&["status", "--format", "json"], d));
    assert_eq!(status["next"]["action"], "confirm", "{status:#}");
    assert!(status["next"]["detail"].as_str().unwrap().contains("andon confirm P2 --rule BC-1"), "{status:#}");
    assert_eq!(status["constraint"]["producer"], "P2", "{status:#}");
    let p2 = status["stages"].as_array().unwrap().iter().find(|s| s["name"] == "P2").unwrap().clone();
    assert_eq!(
        (p2["advisory"].as_array().map(Vec::len), p2["open_entry_gates"].clone()),
        (Some(1), serde_json::json!(["BC-1"]))
    );
    assert_eq!(propose(d, &p2_gap, "local+reversible", "storage/db.py"), 17);
    // a confirmation unattended is refused; a person's is recorded and the work starts
    let o = run(&["confirm", "P2", "--rule", "BC-1", "--by", "lead", "--reason", "checked", "--unattended"], d);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["confirm", "P2", "--rule", "BC-9", "--by", "lead", "--reason", "checked"], d);
    assert_eq!(o.status.code(), Some(1), "not a gate of P2");
    let o = run(&["confirm", "P2", "--rule", "BC-1", "--by", "lead", "--reason", "the rounding rule was reviewed"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    let (code, v) = loop_json(d);
    assert_eq!((code, v["next"]["action"].as_str()), (0, Some("propose")), "{v:#}");
    let wire_gap = v["gaps"].as_array().unwrap().iter().find(|g| g["kind"] == "wire").unwrap().clone();
    assert_eq!(wire_gap["path"], "storage/db.py");
    let status = json(&run(&["status", "--format", "json"], d));
    assert!(status["decisions"].as_array().unwrap().iter().any(|x| x["action"] == "confirm"), "{status:#}");
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
}

#[test]
fn an_ingest_phase_contract_is_proven_obligation_by_obligation_and_the_phase_advances() {
    let t = ingest_repo(true);
    let d = t.path();
    std::fs::write(
        d.join("andon.toml"),
        "gap_source = \"ingest\"\n\n[[command]]\nname = \"suite\"\nrun = \"echo 1 passed\"\n\n[[command]]\nname = \"types\"\nrun = \"grep -q 'X: int = 1' shared/types.py && echo 1 passed\"\nlane = \"slow\"\n",
    )
    .unwrap();
    std::fs::write(d.join(".gitignore"), "analysis/andon/\n").unwrap();
    git(d, &["init", "-q"]);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    let (_, v) = loop_json(d);
    // status agrees with the loop: the constraint is the brief's earliest phase with open work
    let status = json(&run(&["status", "--format", "json"], d));
    assert_eq!(status["constraint"]["rule"], "brief-order", "{status:#}");
    assert!(status["constraint"]["detail"].as_str().unwrap().contains("`P1`"), "{status:#}");
    // W2 set aside (so W1 is the loop's pick); W1 fixed, verified by the repository's own check
    let gaps = v["gaps"].as_array().unwrap().clone();
    let w1 = gaps.iter().find(|g| g["path"] == "shared/types.py").unwrap()["id"].as_str().unwrap().to_string();
    let w2 = gaps.iter().find(|g| g["path"] == "shared/money.py").unwrap()["id"].as_str().unwrap().to_string();
    assert_eq!(run(&["defer", &w2, "--by", "lead", "--reason", "later"], d).status.code(), Some(0));
    assert_eq!(propose_with(d, &w1, "executed", "shared/types.py").status.code(), Some(0));
    loop_json(d);
    std::fs::write(d.join("shared/types.py"), "X: int = 1\n").unwrap();
    // the repository's own (slow-lane) check fails without the fix (red first); verify runs both lanes
    let o = run(&["verify", "--gap", &w1, "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    git(d, &["commit", "-qam", "W1"]);
    let (_, v) = loop_json(d);
    let contract = v["picked"]["gap"].as_str().unwrap().to_string();
    assert!(
        v["gaps"].as_array().unwrap().iter().any(|g| g["id"] == contract.as_str() && g["source"] == "PhaseContract"),
        "{v:#}"
    );
    let o = run(
        &[
            "propose",
            "--gap",
            &contract,
            "--blast-radius",
            "local+reversible",
            "--approach",
            "executed",
            "--reason",
            "r",
            "--description",
            "d",
            "--write-set",
            "shared/money.py",
            "--write-set",
            "requirements.txt",
        ],
        d,
    );
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    loop_json(d);
    std::fs::write(d.join("shared/money.py"), "Y: int = 2\n").unwrap();
    // every exit criterion and rule is routed on its own; the P0 property rule cannot be proven
    // until the repository declares its property-testing tool
    let o = run(&["verify", "--gap", &contract, "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(14), "{}", String::from_utf8_lossy(&o.stdout));
    let e = &json(&o)["evidence"];
    let refs = e["references"].to_string();
    assert!(
        refs.contains("exit-1 [executed, rung 3]: proven") && refs.contains("BC-1 [property, rung 3]: unknown"),
        "{e:#}"
    );
    assert!(e["evidence"].as_str().unwrap().contains("rule `BC-1` (P0 blocking rule)"), "{e:#}");
    std::fs::write(d.join("requirements.txt"), "hypothesis==6.100.0\n").unwrap();
    // the fix-applier hands its change in as a request for the loop's gap: proven the loop's way
    // and persisted by it (R112)
    git(d, &["add", "-N", "requirements.txt"]);
    let diff = String::from_utf8(std::process::Command::new("git").arg("diff").current_dir(d).output().unwrap().stdout)
        .unwrap();
    let request = serde_json::json!({ "wire": "P1 -> P3", "contract": "phase 1 is done", "fixDiff": diff });
    let scratch = tempfile::tempdir().unwrap();
    let req = scratch.path().join("request.json");
    std::fs::write(&req, serde_json::to_vec(&request).unwrap()).unwrap();
    let o = run(&["verify", "--gap", &contract, "--request", req.to_str().unwrap(), "-q"], d);
    assert_eq!(o.status.code(), Some(2), "not this gap's wire: {}", String::from_utf8_lossy(&o.stdout));
    // the request's own Behavior Contract rules are obligations too: an unmet P0 rule blocks
    let with_rule = serde_json::json!({ "wire": "P1 -> P2", "fixDiff": diff, "contract": { "obligation": "phase 1 is done",
        "rules": [{ "id": "X-1", "rule": "rounding", "validation": "numeric tolerance check", "priority": "P0", "confidence": "High" }] } });
    std::fs::write(&req, serde_json::to_vec(&with_rule).unwrap()).unwrap();
    let o = run(&["verify", "--gap", &contract, "--request", req.to_str().unwrap(), "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(14), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(json(&o)["evidence"]["evidence"].as_str().unwrap().contains("rule `X-1` (P0 blocking rule)"));
    let request = serde_json::json!({ "wire": "P1 -> P2", "contract": "phase 1 is done", "fixDiff": diff });
    std::fs::write(&req, serde_json::to_vec(&request).unwrap()).unwrap();
    let o = run(&["verify", "--gap", &contract, "--request", req.to_str().unwrap(), "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(json(&o)["evidence"]["approach"], "executed+property");
    // the loop records it: P1's wire is proven and the stream moves on to the gated P2
    let (code, v) = loop_json(d);
    assert_eq!((code, v["cursor"].as_str()), (17, Some("P2")), "{v:#}");
    let wires = run(&["status", "--format", "json"], d);
    let status = json(&wires);
    let p1 = status["stages"].as_array().unwrap().iter().find(|s| s["name"] == "P1").unwrap().clone();
    assert_eq!(p1["wires"][0]["status"], "proven", "{p1:#}");
}

#[test]
fn a_proof_strength_audit_is_added_to_the_evidence_it_audits() {
    let t = clean_three_stages("");
    let d = t.path();
    loop_json(d);
    let (_, state, _) = ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    let (id, ev) = state.evidence.iter().find(|(_, e)| e.gap.is_some()).map(|(i, e)| (i.clone(), e.clone())).unwrap();
    let audit = |path: &[&std::path::Path]| {
        let o = crate::support::andon()
            .args(["verify", "--audit", &id, "--format", "json", "-q"])
            .arg(d)
            .env("PATH", std::env::join_paths(path).unwrap())
            .output()
            .unwrap();
        (o.status.code().unwrap(), json(&o))
    };
    // no mutation tool for Python on PATH: unavailable, named, and the run goes on
    let empty = tempfile::tempdir().unwrap();
    let (code, v) = audit(&[empty.path()]);
    assert_eq!((code, v["audit"]["strength"].as_str()), (14, Some("unavailable")), "{v:#}");
    assert!(v["audit"]["detail"].as_str().unwrap().contains("`mutmut` (install mutmut from PyPI)"), "{v:#}");
    // a mutation run where mutants survive: the audited proof is weak
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("mutmut");
    std::fs::write(&fake, "#!/bin/sh\n[ \"$1\" = results ] && printf '    m.x_f__mutmut_1: killed\\n    m.x_f__mutmut_2: survived\\n'\nexit 0\n")
        .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let (code, v) = audit(&[bin.path(), std::path::Path::new("/usr/bin"), std::path::Path::new("/bin")]);
    assert_eq!((code, v["audit"]["strength"].as_str()), (1, Some("weak")), "{v:#}");
    assert!(v["audit"]["command"].as_str().unwrap().starts_with("mutmut run '"), "{v:#}");
    // an audit of an audit, or of nothing, is refused
    let o = crate::support::run(&["verify", "--audit", "E-nothing", "-q"], d);
    assert_eq!(o.status.code(), Some(2));
    // the loop adds it to the record; the evidence itself and its wire are unchanged
    let (_, v) = loop_json(d);
    assert!(notes(&v).iter().any(|n| n.contains(&format!("evidence `{id}` audited by mutmut: weak"))), "{v:#}");
    let (_, after, _) = ledger::load(&d.join("analysis/andon/ledger")).unwrap().unwrap();
    assert_eq!(after.evidence[&id], ev);
    assert_eq!(after.audits[&id].last().unwrap().1, "weak");
    let status = json(&run(&["status", "--format", "json"], d));
    assert!(
        status["audits"].as_array().unwrap().iter().any(|a| a["evidence"] == id.as_str() && a["strength"] == "weak"),
        "{status:#}"
    );
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
}

#[test]
fn the_panel_reads_the_change_never_the_ledger_beside_it() {
    let t = clean_three_stages("");
    let d = t.path();
    // the ledger is committed with the code: a proposal's reasoning lands in the tracked tree
    std::fs::write(d.join(".gitignore"), "").unwrap();
    let gap = todo_in_api(d, "");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "the ledger, tracked"]);
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse\n\n\ndef run(text):\n    return parse(text or \"\")\n",
    )
    .unwrap();
    loop_json(d);
    let scratch = tempfile::tempdir().unwrap();
    let panel = scratch.path().join("panel");
    let o = run(&["verify", "--gap", &gap, "--panel", panel.to_str().unwrap(), "--proposer", "builder", "-q"], d);
    assert_eq!(o.status.code(), Some(14), "{}", String::from_utf8_lossy(&o.stdout));
    let against = std::fs::read_to_string(panel.join("packet-against.json")).unwrap();
    assert!(against.contains("parse(text or"), "the change is in the packet: {against}");
    assert!(!against.contains("the check exercises run()"), "the proposer's reasoning is not: {against}");
    assert!(!against.contains("proposal_recorded") && !against.contains("\"verdict\""), "{against}");
}

#[test]
fn the_proposer_is_recorded_with_the_proposal_and_verify_holds_to_it() {
    let t = clean_three_stages("");
    let d = t.path();
    let gap = todo_in_api_proposed_with(d, "", &["--proposer", "builder-7"]);
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse\n\n\ndef run(text):\n    return parse(text or \"\")\n",
    )
    .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let panel = scratch.path().join("panel");
    // a flag naming someone else cannot stand in for the recorded proposer
    let o = run(&["verify", "--gap", &gap, "--panel", panel.to_str().unwrap(), "--proposer", "someone-else", "-q"], d);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("proposed by `builder-7`"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // without the flag the recorded one is used: the panel knows whose against case to refuse
    let o = run(&["verify", "--gap", &gap, "--panel", panel.to_str().unwrap(), "--format", "json", "-q"], d);
    assert_eq!(o.status.code(), Some(14), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(!json(&o).to_string().contains("no proposer provenance"), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(panel.join("packet-against.json").exists());
}

#[test]
fn a_proposal_written_again_while_a_step_runs_waits_for_the_next_step() {
    // the configured command revises any pending proposal while the step scans (as a second
    // `andon propose` could, in another terminal)
    let t = clean_three_stages(concat!(
        "[[command]]\nname = \"core-check\"\n",
        r#"run = "for f in analysis/andon/proposals/*.json; do [ -f \"$f\" ] && sed -i 's/\"description\": \"d\"/\"description\": \"d2\"/' \"$f\"; done; test -f src/core/ready""#,
        "\nstages = [\"core\"]\n"
    ));
    let d = t.path();
    let (_, v) = loop_json(d);
    let gap = v["picked"]["gap"].as_str().unwrap().to_string();
    assert!(v["gaps"].as_array().unwrap().iter().any(|g| g["id"] == gap.as_str() && g["source"] == "FailingCommand"));
    assert_eq!(propose_with(d, &gap, "executed", "src/core/ready").status.code(), Some(0));
    // a changed tree: the command runs again in this step, after the proposal was read
    std::fs::write(d.join("src/core/more.py"), "X = 1\n").unwrap();
    let (_, v) = loop_json(d);
    assert!(
        v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with(&format!("proposal for `{gap}` recorded"))),
        "{v:#}"
    );
    let file = d.join(format!("analysis/andon/proposals/{gap}.json"));
    let kept = std::fs::read_to_string(&file).expect("the revised proposal is kept, not removed unread");
    assert!(kept.contains("\"d2\""), "{kept}");
    // the next step records the revision
    let (_, v) = loop_json(d);
    let notes: Vec<&str> = v["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(notes.iter().any(|n| n.starts_with(&format!("proposal for `{gap}` recorded"))), "{notes:?}");
    assert!(!file.exists());
}

#[test]
fn skip_verification_never_touches_a_tier_one_hold() {
    let t = three_stages();
    let d = t.path();
    std::fs::write(d.join("andon.toml"), "skip_verification = true\n").unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "skip the referee"]);
    let (_, v) = loop_json(d);
    let gap = v["picked"]["gap"].as_str().unwrap().to_string();
    assert_eq!(propose(d, &gap, "local+reversible", "src/core/__init__.py"), 0);
    loop_json(d);
    // a change that does not define the missing name: the contradiction stands, a hold
    std::fs::write(d.join("src/core/__init__.py"), "def parse(text):\n    return text.split()  # tidy\n").unwrap();
    assert_eq!(run(&["verify", "--gap", &gap, "-q"], d).status.code(), Some(12));
    let (code, v) = loop_json(d);
    assert_eq!(code, 12, "{v:#}");
}

#[test]
fn the_loop_ignores_its_scratch_keeps_the_ledger_and_says_so_once() {
    let t = scratch("py-gaps");
    let d = t.path();
    git(d, &["init", "-q"]);
    let (_, v) = loop_json(d);
    let notes: Vec<&str> = v["notes"].as_array().unwrap().iter().filter_map(|n| n.as_str()).collect();
    assert!(
        notes.contains(
            &"wrote analysis/andon/.gitignore: what andon writes under analysis/andon is scratch, ignored by git"
        ),
        "{notes:?}"
    );
    let said = |notes: &[&str]| notes.iter().filter(|n| n.contains("is the loop's memory: commit it")).count();
    assert_eq!(said(&notes), 1, "{notes:?}");
    // git sees the ignore file and the ledger, nothing else of andon's
    let out = std::process::Command::new("git")
        .args(["status", "--porcelain", "-uall", "--", "analysis"])
        .current_dir(d)
        .output()
        .unwrap();
    let listed: Vec<String> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| l.trim_start_matches("?? ").to_string()).collect();
    assert_eq!(
        listed,
        ["analysis/andon/.gitignore", "analysis/andon/ledger/ledger.jsonl", "analysis/andon/ledger/ledger.md"],
        "{listed:?}"
    );
    // a person's own ignore file is never replaced, and the second run says nothing of either
    std::fs::write(d.join("analysis/andon/.gitignore"), "loop.txt\n").unwrap();
    let (_, v) = loop_json(d);
    let notes: Vec<&str> = v["notes"].as_array().unwrap().iter().filter_map(|n| n.as_str()).collect();
    assert_eq!(said(&notes), 0, "{notes:?}");
    assert!(!notes.iter().any(|n| n.starts_with("wrote analysis/andon/.gitignore")), "{notes:?}");
    assert_eq!(std::fs::read_to_string(d.join("analysis/andon/.gitignore")).unwrap(), "loop.txt\n");
}
