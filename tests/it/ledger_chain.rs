//! The ledger is a chain: each record links to the log before it, and the head is anchored in
//! `refs/andon/ledger`. A well-formed record appended by hand (with or without a correct link),
//! a copied, reordered or removed record fails `andon ledger check` and `andon check` (exit 1),
//! and the loop refuses to act on the log; an older, unlinked ledger is linked once, by a
//! recorded `ledger_chained` event.

use std::path::{Path, PathBuf};

use andon::ledger::{self, Record, chain};

use crate::support::{clean_three_stages, json, run, run_piped};

fn log_path(d: &Path) -> PathBuf {
    d.join("analysis/andon/ledger/ledger.jsonl")
}

/// A repository in git that `andon check` passes, whose loop ran twice (a gap deferred in
/// between): a chained ledger.
fn looped() -> (tempfile::TempDir, String) {
    let t = clean_three_stages(
        "[[contract]]\nname = \"core never imports cli\"\nkind = \"forbidden\"\nfrom = [\"src/core/**\"]\nto = [\"src/cli/**\"]\n",
    );
    let d = t.path();
    std::fs::write(
        d.join("src/core/__init__.py"),
        "def parse(text):\n    # TODO: empty text\n    return text.split()\n",
    )
    .unwrap();
    crate::support::commit_all(d);
    assert_eq!(run(&["check", "-q"], d).status.code(), Some(0), "the gate passes before any forgery");
    let v = json(&run(&["loop", "--format", "json", "-q"], d));
    let gap = v["picked"]["gap"].as_str().unwrap().to_string();
    assert_eq!(run(&["defer", &gap, "--by", "lead", "--reason", "later"], d).status.code(), Some(0));
    assert_eq!(run(&["loop", "-q"], d).status.code(), Some(0));
    (t, gap)
}

fn lines(d: &Path) -> Vec<String> {
    std::fs::read_to_string(log_path(d)).unwrap().lines().map(str::to_string).collect()
}

fn write_lines(d: &Path, lines: &[String]) {
    std::fs::write(log_path(d), lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
}

/// The header and records of the log as it is on disk.
fn parsed(d: &Path) -> (ledger::Header, Vec<Record>) {
    let log = ledger::parse(&std::fs::read_to_string(log_path(d)).unwrap());
    (log.header.unwrap(), log.records.into_iter().map(|(_, r)| r).collect())
}

/// `ledger check`, `check` and `loop` all refuse the log (exit 1), with `says` in the check.
fn refused(d: &Path, says: &str) {
    let o = run(&["ledger", "check", "--format", "json"], d);
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains(says), "`{says}` not in {text}");
    let o = run(&["check", "-q"], d);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stdout));
    let o = run(&["loop", "-q"], d);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn every_record_links_to_the_log_before_it_and_the_ref_names_the_head() {
    let (t, _) = looped();
    let d = t.path();
    let (h, records) = parsed(d);
    assert_eq!(h.andon_ledger, ledger::FORMAT);
    let mut c = chain::Chain::new(&h);
    for r in &records {
        assert_eq!(r.prev.as_deref(), Some(c.link().as_str()), "record {}", r.seq);
        c.push(r);
    }
    let a = chain::anchored(&log_path(d).parent().unwrap().to_path_buf()).expect("the ref is set");
    assert_eq!((a.seq, a.head.clone()), (records.last().unwrap().seq, c.link()));
    let view = std::fs::read_to_string(d.join("analysis/andon/ledger/ledger.md")).unwrap();
    assert!(view.contains(&c.link()), "ledger.md shows the head");
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
}

#[test]
fn a_well_formed_record_appended_by_hand_is_caught_with_or_without_a_correct_link() {
    let (t, gap) = looped();
    let d = t.path();
    let (h, records) = parsed(d);
    let seq = records.last().unwrap().seq + 1;
    let forged =
        ledger::Event::GapSkipped { gap: gap.clone(), by: "lead".into(), reason: "forged".into(), witness: None };
    let unlinked = Record { seq, at: 1, event: forged.clone(), more: 0, prev: None };
    let mut l = lines(d);
    l.push(serde_json::to_string(&unlinked).unwrap());
    write_lines(d, &l);
    refused(d, "carries no link");
    // with the link computed as andon computes it: the ref still ends the log before it
    let linked = Record { prev: Some(chain::Chain::over(&h, &records).link()), ..unlinked };
    let mut l = lines(d);
    l.pop();
    l.push(serde_json::to_string(&linked).unwrap());
    write_lines(d, &l);
    refused(d, "records past andon's last write");
    // ledger repair does not launder it into the view
    assert_eq!(run(&["ledger", "repair", "-q"], d).status.code(), Some(1));
}

#[test]
fn a_copied_a_reordered_and_a_removed_record_are_caught() {
    let (t, _) = looped();
    let d = t.path();
    let original = lines(d);
    let n = original.len();
    // a copy of an earlier record, renumbered as the next one
    let (_, records) = parsed(d);
    let mut copy = records[records.len() - 2].clone();
    copy.seq = records.last().unwrap().seq + 1;
    let mut l = original.clone();
    l.push(serde_json::to_string(&copy).unwrap());
    write_lines(d, &l);
    refused(d, "link");
    // two records swapped (renumbered so the sequence still counts up)
    let (_, mut rs) = parsed(d);
    rs.pop();
    let (a, b) = (rs.len() - 2, rs.len() - 1);
    rs.swap(a, b);
    rs[a].seq -= 1;
    rs[b].seq += 1;
    let mut l = vec![original[0].clone()];
    l.extend(rs.iter().map(|r| serde_json::to_string(r).unwrap()));
    write_lines(d, &l);
    refused(d, "link");
    // the last write removed
    write_lines(d, &original[..n - 1]);
    refused(d, "not where andon's last write left it");
    // restored, it is whole again
    write_lines(d, &original);
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
}

#[test]
fn a_write_stopped_after_the_ref_moved_is_an_interrupted_write_not_a_forgery() {
    let (t, _) = looped();
    let d = t.path();
    let dir = log_path(d).parent().unwrap().to_path_buf();
    let (h, records) = parsed(d);
    let head = chain::Chain::over(&h, &records).link();
    let next = chain::Anchor { seq: records.len() as u64 + 1, head: "sha256:00".into(), before: head };
    chain::anchor(&dir, &next).unwrap();
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
    assert_eq!(run(&["loop", "-q"], d).status.code(), Some(0));
}

#[test]
fn an_older_unlinked_ledger_is_linked_once_by_a_recorded_event() {
    let (t, _) = looped();
    let d = t.path();
    // the same log as an older andon wrote it: format 1, no links, no ref
    let (mut h, records) = parsed(d);
    h.andon_ledger = 1;
    let mut l = vec![serde_json::to_string(&h).unwrap()];
    l.extend(records.iter().map(|r| serde_json::to_string(&Record { prev: None, ..r.clone() }).unwrap()));
    write_lines(d, &l);
    std::fs::remove_file(d.join("analysis/andon/ledger/ledger.md")).unwrap();
    crate::support::git(d, &["update-ref", "-d", "refs/andon/ledger"]);
    assert_eq!(run(&["ledger", "repair", "-q"], d).status.code(), Some(0));
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
    // the next write (a decision asked for from a shell, recorded as pending) links the ledger
    let (_, gap) = (
        0,
        records
            .iter()
            .find_map(|r| match &r.event {
                ledger::Event::GapDeferred { gap, .. } => Some(gap.clone()),
                _ => None,
            })
            .unwrap(),
    );
    assert_eq!(run_piped(&["skip", &gap, "--by", "lead", "--reason", "r"], d).status.code(), Some(2));
    let (_, after) = parsed(d);
    let chained: Vec<&Record> =
        after.iter().filter(|r| matches!(r.event, ledger::Event::LedgerChained { .. })).collect();
    assert_eq!(chained.len(), 1, "linked once");
    assert_eq!(chained[0].seq, records.len() as u64 + 1);
    assert!(after[records.len()..].iter().all(|r| r.prev.is_some()));
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
    // an unlinked record after the chain began is caught
    let (_, now) = parsed(d);
    let mut l = lines(d);
    let last = Record { seq: now.last().unwrap().seq + 1, at: 1, event: now[0].event.clone(), more: 0, prev: None };
    l.push(serde_json::to_string(&last).unwrap());
    write_lines(d, &l);
    refused(d, "link");
}

#[test]
fn records_no_ref_vouches_for_are_refused_when_the_view_is_gone_too() {
    let (t, gap) = looped();
    let d = t.path();
    let (h, records) = parsed(d);
    crate::support::git(d, &["update-ref", "-d", "refs/andon/ledger"]);
    std::fs::remove_file(d.join("analysis/andon/ledger/ledger.md")).unwrap();
    let forged = Record {
        seq: records.last().unwrap().seq + 1,
        at: 1,
        event: ledger::Event::GapSkipped { gap, by: "lead".into(), reason: "forged".into(), witness: None },
        more: 0,
        prev: Some(chain::Chain::over(&h, &records).link()),
    };
    let mut l = lines(d);
    l.push(serde_json::to_string(&forged).unwrap());
    write_lines(d, &l);
    refused(d, "no refs/andon/ledger vouches for them");
    assert_eq!(run(&["ledger", "repair", "-q"], d).status.code(), Some(1));
}

/// The ledger's directory replaced by `replace` in a fresh clone of `d` (no ref: only what git
/// tracks speaks for the ledger) and in `d` itself; both `ledger check` and `check` fail.
fn unreadable_in_both(d: &Path, what: &str, replace: &dyn Fn(&Path)) {
    let clone = tempfile::tempdir().unwrap();
    let c = clone.path().join("c");
    let ok = std::process::Command::new("git").arg("clone").arg("-q").arg(d).arg(&c).status().unwrap();
    assert!(ok.success());
    for repo in [d, c.as_path()] {
        let saved = tempfile::tempdir().unwrap();
        let ledger = repo.join("analysis/andon/ledger");
        let keep = saved.path().join("ledger");
        assert!(std::process::Command::new("cp").arg("-a").arg(&ledger).arg(&keep).status().unwrap().success());
        replace(&ledger);
        let lc = run(&["ledger", "check"], repo);
        assert_eq!(lc.status.code(), Some(1), "{what}: ledger check: {}", String::from_utf8_lossy(&lc.stdout));
        assert!(!String::from_utf8_lossy(&lc.stdout).contains("never run"), "{what}: not absent");
        let ck = run(&["check", "-q"], repo);
        assert_eq!(ck.status.code(), Some(1), "{what}: check: {}", String::from_utf8_lossy(&ck.stdout));
        assert!(String::from_utf8_lossy(&ck.stdout).contains("(ledger)"), "{what}");
        // put it back for the next repository
        let _ = std::fs::remove_file(&ledger);
        let _ = std::fs::remove_dir_all(&ledger);
        assert!(std::process::Command::new("cp").arg("-a").arg(&keep).arg(&ledger).status().unwrap().success());
    }
}

#[cfg(unix)]
#[test]
fn a_ledger_that_cannot_be_read_is_never_absent_in_either_command() {
    let (t, _) = looped();
    let d = t.path();
    // the ledger committed, as a team keeps it
    crate::support::git(d, &["add", "-f", "analysis/andon/ledger/ledger.jsonl", "analysis/andon/ledger/ledger.md"]);
    crate::support::git(d, &["commit", "-qm", "the ledger"]);
    use std::os::unix::fs::symlink;
    let gone = |l: &Path| {
        std::fs::remove_dir_all(l).unwrap();
    };
    unreadable_in_both(d, "a symlink loop", &|l| {
        gone(l);
        symlink("ledger", l).unwrap();
    });
    unreadable_in_both(d, "a dangling link", &|l| {
        gone(l);
        symlink("nowhere", l).unwrap();
    });
    unreadable_in_both(d, "an empty directory", &|l| {
        gone(l);
        std::fs::create_dir(l).unwrap();
    });
    unreadable_in_both(d, "a regular file", &|l| {
        gone(l);
        std::fs::write(l, "not a ledger\n").unwrap();
    });
    // a link out of the repository: the ledger is not read from, or written to, where the
    // repository does not keep it
    let outside = tempfile::tempdir().unwrap();
    let empty = outside.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    unreadable_in_both(d, "a link to an empty directory outside", &|l| {
        gone(l);
        symlink(&empty, l).unwrap();
    });
    unreadable_in_both(d, "a link to a copy of itself outside", &|l| {
        let copy = outside.path().join(format!("copy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&copy);
        assert!(std::process::Command::new("cp").arg("-a").arg(l).arg(&copy).status().unwrap().success());
        gone(l);
        symlink(&copy, l).unwrap();
    });
    unreadable_in_both(d, "the log a link to itself", &|l| {
        std::fs::remove_file(l.join("ledger.jsonl")).unwrap();
        symlink("ledger.jsonl", l.join("ledger.jsonl")).unwrap();
    });
    // a repository where the loop never ran: absent in both, exit 0
    let fresh = clean_three_stages(
        "[[contract]]\nname = \"core never imports cli\"\nkind = \"forbidden\"\nfrom = [\"src/core/**\"]\nto = [\"src/cli/**\"]\n",
    );
    crate::support::git(fresh.path(), &["init", "-q"]);
    let lc = run(&["ledger", "check", "--format", "json"], fresh.path());
    assert_eq!(lc.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&lc.stdout).contains("absent"));
    assert_eq!(run(&["check", "-q"], fresh.path()).status.code(), Some(0));
}
