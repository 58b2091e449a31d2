//! The ledger recovers from a killed writer, outlives a renamed repository, refuses to repair a
//! hand edit, and each loop step reports only what it recorded.

use std::path::{Path, PathBuf};
use std::process::Output;

use andon::ledger;

use crate::support::{copy_dir, git, json, run, three_stages};

const LEDGER: &str = "analysis/andon/ledger";

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn log_bytes(repo: &Path) -> Vec<u8> {
    std::fs::read(repo.join(LEDGER).join(ledger::LOG_FILE)).unwrap()
}

/// A repository the loop ran on once, copied to `<outer>/shop` so the directory can be renamed.
fn shop(settings: Option<&str>) -> (tempfile::TempDir, PathBuf) {
    let outer = tempfile::tempdir().unwrap();
    let repo = outer.path().join("shop");
    let t = three_stages();
    copy_dir(t.path(), &repo);
    if let Some(s) = settings {
        std::fs::write(repo.join("andon.toml"), s).unwrap();
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-qm", "settings"]);
    }
    assert_eq!(run(&["loop", "-q"], &repo).status.code(), Some(0), "the first step");
    (outer, repo)
}

/// A new stage importing from `cli`: the next step records it (one write, with its view).
fn add_stage(repo: &Path) {
    std::fs::create_dir_all(repo.join("src/web")).unwrap();
    std::fs::write(repo.join("src/web/__init__.py"), "from cli import main\n\n\ndef serve():\n    return main()\n")
        .unwrap();
}

/// The id of a process that has exited: no writer of that id is alive.
fn dead_pid() -> u32 {
    loop {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        if !Path::new(&format!("/proc/{pid}")).exists() {
            return pid;
        }
    }
}

fn temporaries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    names.sort();
    names
}

/// The state a kill between the log's append and the view's rename leaves: the log holds the
/// step, `ledger.md` is the rendering before it, and the killed writer's temporary is beside it.
/// A live writer's temporary (this process's) is there too.
fn torn_view() -> (tempfile::TempDir, PathBuf, String, String) {
    let (outer, repo) = shop(None);
    let dir = repo.join(LEDGER);
    let old_view = std::fs::read(dir.join(ledger::HUMAN_FILE)).unwrap();
    add_stage(&repo);
    assert_eq!(run(&["loop", "-q"], &repo).status.code(), Some(0));
    let new_view = std::fs::read(dir.join(ledger::HUMAN_FILE)).unwrap();
    assert_ne!(old_view, new_view, "the step recorded something");
    std::fs::write(dir.join(ledger::HUMAN_FILE), &old_view).unwrap();
    let dead = format!(".ledger.md.{}.0.tmp", dead_pid());
    let live = format!(".ledger.md.{}.0.tmp", std::process::id());
    std::fs::write(dir.join(&dead), &new_view).unwrap();
    std::fs::write(dir.join(&live), b"being written").unwrap();
    (outer, repo, dead, live)
}

#[test]
fn a_view_behind_its_log_is_reported_and_repair_renders_it_again() {
    let (_outer, repo, dead, live) = torn_view();
    let dir = repo.join(LEDGER);
    let o = run(&["ledger", "check"], &repo);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("ledger.md is behind the log"), "{}", stdout(&o));
    assert!(stdout(&o).contains("andon ledger repair"), "{}", stdout(&o));
    let o = run(&["ledger", "repair", "--format", "json"], &repo);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v = json(&o);
    assert_eq!(v["verdict"]["outcome"], "repaired", "{v:#}");
    assert!(v["view"].as_str().unwrap().contains("behind"), "{v:#}");
    let o = run(&["ledger", "check"], &repo);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(temporaries(&dir), vec![live], "the dead writer's temporary is gone, a live one's stays ({dead})");
    // nothing left to do
    let o = run(&["ledger", "repair"], &repo);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("andon: verdict unchanged"), "{}", stdout(&o));
}

#[test]
fn the_next_loop_renders_a_view_behind_its_log_even_when_it_records_nothing() {
    let (_outer, repo, _dead, live) = torn_view();
    let before = log_bytes(&repo);
    assert_eq!(run(&["loop", "-q"], &repo).status.code(), Some(0));
    assert_eq!(log_bytes(&repo), before, "the step had nothing to record");
    let o = run(&["ledger", "check"], &repo);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(temporaries(&repo.join(LEDGER)), vec![live]);
}

#[test]
fn a_step_killed_at_its_second_rename_leaves_a_ledger_that_recovers() {
    if std::process::Command::new("strace").arg("-V").output().is_err() {
        eprintln!("strace is not installed: the kill is covered by the simulated tests above");
        return;
    }
    let (_outer, repo) = shop(None);
    add_stage(&repo);
    // the step renames the index pack and head into place, then the stream and the scan it keeps
    // (`.andon/derived-*.bin`), then the view: killed at the view's rename
    let o = std::process::Command::new("strace")
        .args(["-f", "-o", "/dev/null", "-e", "inject=rename:when=5:signal=SIGKILL"])
        .arg(env!("CARGO_BIN_EXE_andon"))
        .args(["loop", "-q"])
        .current_dir(&repo)
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0), "killed: {}", String::from_utf8_lossy(&o.stderr));
    let dir = repo.join(LEDGER);
    assert_eq!(temporaries(&dir).len(), 1, "the killed writer's view is left beside the log");
    let second = tempfile::tempdir().unwrap();
    copy_dir(&repo, second.path());
    // `ledger repair` recovers it
    let o = run(&["ledger", "check"], &repo);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("behind the log"), "{}", stdout(&o));
    assert_eq!(run(&["ledger", "repair"], &repo).status.code(), Some(0));
    assert_eq!(run(&["ledger", "check"], &repo).status.code(), Some(0));
    assert_eq!(temporaries(&dir), Vec::<String>::new());
    // and so does the next step
    assert_eq!(run(&["loop", "-q"], second.path()).status.code(), Some(0));
    assert_eq!(run(&["ledger", "check"], second.path()).status.code(), Some(0));
    assert_eq!(temporaries(&second.path().join(LEDGER)), Vec::<String>::new());
}

#[test]
fn a_ledger_stopped_while_being_created_leaves_no_ledger_and_no_temporary() {
    let t = three_stages();
    let d = t.path();
    let dir = d.join(LEDGER);
    std::fs::create_dir_all(&dir).unwrap();
    // what a first step stopped at the log's rename leaves: the whole new log, never renamed
    let dead = format!(".ledger.jsonl.{}.0.tmp", dead_pid());
    std::fs::write(dir.join(&dead), b"{\"andon_ledger\":1}\n").unwrap();
    let o = run(&["ledger", "check"], d);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("andon: verdict absent"), "{}", stdout(&o));
    let o = run(&["ledger", "repair"], d);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).contains("andon: verdict repaired (1 temporary file(s)"), "{}", stdout(&o));
    assert_eq!(temporaries(&dir), Vec::<String>::new());
    let o = run(&["ledger", "repair"], d);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("andon: verdict unchanged (no ledger at"), "{}", stdout(&o));
    assert_eq!(run(&["loop", "-q"], d).status.code(), Some(0));
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
}

#[test]
fn a_renamed_repository_keeps_a_valid_ledger() {
    let (outer, repo) = shop(None);
    let moved = outer.path().join("shop-renamed");
    std::fs::rename(&repo, &moved).unwrap();
    add_stage(&moved);
    let before = log_bytes(&moved);
    assert_eq!(run(&["loop", "-q"], &moved).status.code(), Some(0));
    assert_ne!(log_bytes(&moved), before, "the step recorded the new stage");
    let o = run(&["ledger", "check"], &moved);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let view = std::fs::read_to_string(moved.join(LEDGER).join(ledger::HUMAN_FILE)).unwrap();
    assert!(view.starts_with("# andon ledger: shop\n"), "the name recorded at creation: {view}");
}

#[test]
fn a_renamed_repository_keeps_its_ledger_outside_it() {
    let shared = tempfile::tempdir().unwrap();
    let settings = format!("ledger_dir = \"{}\"\n", shared.path().join("ledger").display());
    let (outer, repo) = shop(Some(&settings));
    let moved = outer.path().join("shop-renamed");
    std::fs::rename(&repo, &moved).unwrap();
    add_stage(&moved);
    let o = run(&["loop", "-q"], &moved);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(run(&["ledger", "check"], &moved).status.code(), Some(0));
}

/// A ledger of one step on a repository, and its log's text.
fn one_step() -> (tempfile::TempDir, PathBuf, String) {
    let (outer, repo) = shop(None);
    let text = String::from_utf8(log_bytes(&repo)).unwrap();
    assert!(text.lines().count() > 4, "{text}");
    (outer, repo, text)
}

/// `text` with its line `n` (1 is the header) replaced by `edit` of it.
fn edit_line(text: &str, n: usize, edit: impl Fn(&str) -> String) -> String {
    text.lines().enumerate().map(|(i, l)| if i + 1 == n { edit(l) } else { l.to_string() } + "\n").collect()
}

#[test]
fn repair_refuses_a_hand_edited_middle_record_and_names_its_line() {
    let (_outer, repo, text) = one_step();
    let path = repo.join(LEDGER).join(ledger::LOG_FILE);
    let edits: Vec<(String, u64)> = vec![
        (edit_line(&text, 3, |l| l.replace("\"kind\":\"stage_recorded\"", "\"kind\":\"stage_recordd\"")), 3),
        (edit_line(&text, 3, |l| l.replace("\"seq\":2,", "\"seq\":7,")), 3),
        (edit_line(&text, 2, |l| l.replace("\"confidence\":", "\"note\":\"trust me\",\"confidence\":")), 2),
    ];
    for (edited, line) in edits {
        let want = format!("line {line}:");
        assert_ne!(edited, text);
        std::fs::write(&path, &edited).unwrap();
        let o = run(&["ledger", "repair"], &repo);
        assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
        assert!(stdout(&o).contains("andon: verdict refused (not repaired:"), "{}", stdout(&o));
        assert!(stdout(&o).contains(&want), "{want}: {}", stdout(&o));
        assert!(stdout(&o).contains(&format!("ledger.jsonl:{line}: ")), "every problem listed: {}", stdout(&o));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), edited, "nothing changed");
    }
}

#[test]
fn repair_refuses_an_edit_that_still_parses_and_folds() {
    let (_outer, repo, text) = one_step();
    let dir = repo.join(LEDGER);
    // a record that still parses and folds, with a changed root: the next record's link no
    // longer matches the log before it (and neither does the view)
    let edited = edit_line(&text, 2, |l| l.replace("\"root\":\"src/", "\"root\":\"lib/"));
    assert_ne!(edited, text);
    std::fs::write(dir.join(ledger::LOG_FILE), &edited).unwrap();
    let view = std::fs::read(dir.join(ledger::HUMAN_FILE)).unwrap();
    let o = run(&["ledger", "repair"], &repo);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("line 3: the record's link is not the digest of the log before it"), "{}", stdout(&o));
    assert_eq!(std::fs::read(dir.join(ledger::HUMAN_FILE)).unwrap(), view, "never rendered over");
    assert_eq!(std::fs::read_to_string(dir.join(ledger::LOG_FILE)).unwrap(), edited);
    // no writer launders the edit by rendering the view again
    let o = run(&["loop"], &repo);
    assert_ne!(o.status.code(), Some(0), "{}", stdout(&o));
    let said = format!("{}{}", stdout(&o), String::from_utf8_lossy(&o.stderr));
    assert!(said.contains("link is not the digest of the log before it"), "{said}");
    assert_eq!(std::fs::read_to_string(dir.join(ledger::LOG_FILE)).unwrap(), edited, "nothing appended");
    assert_eq!(std::fs::read(dir.join(ledger::HUMAN_FILE)).unwrap(), view, "never rendered over");
    assert_eq!(run(&["ledger", "check"], &repo).status.code(), Some(1));
}

#[test]
fn invalid_utf8_is_reported_with_its_line() {
    let (_outer, repo, text) = one_step();
    let path = repo.join(LEDGER).join(ledger::LOG_FILE);
    let mut bytes = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if i + 1 == 3 {
            bytes.extend_from_slice(&l.as_bytes()[..20]);
            bytes.push(0xff);
            bytes.extend_from_slice(&l.as_bytes()[20..]);
        } else {
            bytes.extend_from_slice(l.as_bytes());
        }
        bytes.push(b'\n');
    }
    std::fs::write(&path, &bytes).unwrap();
    let o = run(&["ledger", "check"], &repo);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).contains("ledger.jsonl:3: not valid UTF-8"), "{}", stdout(&o));
    let o = run(&["ledger", "repair"], &repo);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("not repaired: line 3: not valid UTF-8"), "{}", stdout(&o));
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    let o = run(&["loop", "-q"], &repo);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("line 3: not valid UTF-8"));
}

#[test]
fn a_torn_last_line_cut_inside_a_character_is_repaired() {
    let (_outer, repo, text) = one_step();
    let path = repo.join(LEDGER).join(ledger::LOG_FILE);
    let mut bytes = text.clone().into_bytes();
    bytes.extend_from_slice(b"{\"seq\":99,\"at\":1,\"event\":{\"kind\":\"gap_opened\",\"summary\":\"caf\xc3");
    std::fs::write(&path, &bytes).unwrap();
    let o = run(&["ledger", "check"], &repo);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("the last line is torn"), "{}", stdout(&o));
    let o = run(&["ledger", "repair"], &repo);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    assert_eq!(run(&["ledger", "check"], &repo).status.code(), Some(0));
}

#[test]
fn concurrent_steps_each_report_only_what_they_recorded() {
    let t = three_stages();
    let d = t.path().to_path_buf();
    assert_eq!(run(&["index", "-q"], &d).status.code(), Some(0));
    // the steps wait on the step lock together, each having started before any other recorded
    std::fs::create_dir_all(d.join(LEDGER)).unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(d.join(LEDGER).join("step.lock"))
        .unwrap();
    lock.lock().unwrap();
    let runs: Vec<_> = (0..4)
        .map(|_| {
            let d = d.clone();
            std::thread::spawn(move || run(&["loop", "--format", "json", "-q"], &d))
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    lock.unlock().unwrap();
    let mut claimed = 0;
    for r in runs {
        let v = json(&r.join().unwrap());
        for line in v["delta"].as_array().unwrap() {
            let line = line.as_str().unwrap();
            if let Some((n, _)) = line.split_once(" × ") {
                claimed += n.parse::<usize>().unwrap();
            }
        }
    }
    let (_, _, records) = ledger::load(&d.join(LEDGER)).unwrap().unwrap();
    assert_eq!(claimed, records.len(), "every event is claimed by the one step that wrote it");
}
