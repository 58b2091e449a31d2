//! Hostile state around the index: file names that are not UTF-8, a FIFO where the index file
//! should be, a read-only `.andon/`, and temporary files a dead writer left behind. None of them
//! may move a verdict, hang a command or drop a file silently.
#![cfg(unix)]

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{andon, contract_repo, json, run, run_ok};

/// A path under `dir` whose last component is the raw bytes `name`.
fn raw(dir: &Path, name: &[u8]) -> PathBuf {
    dir.join(OsStr::from_bytes(name))
}

/// Creates a file with a non-UTF-8 name, or `None` when the file system refuses such names.
fn write_raw(dir: &Path, name: &[u8], text: &str) -> Option<PathBuf> {
    let p = raw(dir, name);
    fs::write(&p, text).ok().map(|_| p)
}

/// Runs andon and kills it after `secs`: `None` when it did not finish in time.
fn run_within(args: &[&str], dir: &Path, secs: u64) -> Option<Output> {
    let mut child = andon()
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("andon starts");
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(secs) {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_breach_in_a_non_utf8_name_survives_a_colliding_name() {
    let t = contract_repo();
    let d = t.path();
    let core = d.join("src/app/core");
    if write_raw(&core, b"leak\xff.py", "from app.api import handler\n").is_none() {
        eprintln!("skipped: this file system refuses non-UTF-8 file names");
        return;
    }
    let first = run(&["check", "--quiet"], d);
    assert_eq!(first.status.code(), Some(1), "the breach blocks:\n{}", stderr(&first));
    // A second name that reads the same after a lossy conversion, with no breach of its own.
    write_raw(&core, b"leak\xfe.py", "X = 1\n").unwrap();
    let second = run(&["check", "--quiet"], d);
    assert_eq!(second.status.code(), Some(1), "the breach still blocks:\n{}", stderr(&second));
    let report = json(&run(&["check", "--quiet", "--format", "json"], d));
    assert!(report.to_string().contains(r"leak\\xff.py"), "the finding names the escaped path: {report}");

    // Both files are in the index, under distinct paths.
    let out = run_ok(&["facts", "--relation", "File", "--format", "json", "--quiet"], d);
    let files: Vec<String> =
        json(&out)["facts"].as_array().unwrap().iter().map(|f| f.to_string()).filter(|f| f.contains("leak")).collect();
    assert_eq!(files.len(), 2, "both names are indexed: {files:?}");

    // An edit to either file is seen by `index --check`, and fixing the breach clears it.
    run_ok(&["index", "--quiet"], d);
    fs::write(raw(&core, b"leak\xfe.py"), "X = 2\n# longer\n").unwrap();
    let stale = run(&["index", "--check", "--quiet"], d);
    assert_eq!(stale.status.code(), Some(3), "an edit to the second file is seen:\n{}", stderr(&stale));
    fs::write(raw(&core, b"leak\xff.py"), "import os\n").unwrap();
    let fixed = run(&["check", "--quiet"], d);
    assert_eq!(fixed.status.code(), Some(0), "the fix is seen:\n{}", stderr(&fixed));
    let fresh = run(&["index", "--check", "--quiet"], d);
    assert_eq!(fresh.status.code(), Some(0), "fresh after the update:\n{}", stderr(&fresh));
}

#[test]
fn a_non_utf8_directory_keeps_its_files_and_its_ignore_file() {
    let t = contract_repo();
    let d = t.path();
    let dir = raw(&d.join("src/app/core"), b"sub\xff");
    if fs::create_dir(&dir).is_err() {
        eprintln!("skipped: this file system refuses non-UTF-8 file names");
        return;
    }
    fs::write(dir.join("__init__.py"), "").unwrap();
    fs::write(dir.join("leak.py"), "from app.api import handler\n").unwrap();
    run_ok(&["index", "--quiet"], d);
    assert_eq!(run(&["check", "--quiet"], d).status.code(), Some(1));
    // An ignore file in that directory is honoured, and a later edit to it is seen.
    fs::write(dir.join(".ignore"), "nothing\n").unwrap();
    run_ok(&["index", "--quiet"], d);
    std::thread::sleep(Duration::from_millis(20));
    fs::write(dir.join(".ignore"), "leak.py\n").unwrap();
    let out = run(&["check", "--quiet"], d);
    assert_eq!(out.status.code(), Some(0), "the ignored breach no longer counts:\n{}", stderr(&out));
}

#[test]
fn a_fifo_at_the_index_file_hangs_nothing_and_is_rebuilt() {
    let t = contract_repo();
    let d = t.path();
    run_ok(&["index", "--quiet"], d);
    let ipath = d.join(".andon/index.bin");
    fs::remove_file(&ipath).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&ipath).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: mkfifo is not available");
        return;
    }
    let check = run_within(&["index", "--check", "--quiet"], d, 10).expect("index --check does not hang on a FIFO");
    assert_eq!(check.status.code(), Some(3), "a FIFO is no usable index:\n{}", stderr(&check));
    let said = String::from_utf8_lossy(&check.stdout);
    assert!(said.contains("not a regular file"), "the report says why: {said}");
    let gate = run_within(&["check", "--quiet"], d, 10).expect("check does not hang on a FIFO");
    assert_eq!(gate.status.code(), Some(0), "check rebuilds the index:\n{}", stderr(&gate));
    assert!(fs::symlink_metadata(&ipath).unwrap().file_type().is_file(), "the index is a regular file again");
    let fresh = run_within(&["index", "--check", "--quiet"], d, 10).unwrap();
    assert_eq!(fresh.status.code(), Some(0), "{}", stderr(&fresh));
}

#[test]
fn a_fifo_at_the_lock_file_hangs_nothing() {
    let t = contract_repo();
    let d = t.path();
    run_ok(&["index", "--quiet"], d);
    let lock = d.join(".andon/lock");
    let _ = fs::remove_file(&lock);
    if !std::process::Command::new("mkfifo").arg(&lock).status().is_ok_and(|s| s.success()) {
        eprintln!("skipped: mkfifo is not available");
        return;
    }
    let out = run_within(&["index", "--quiet"], d, 10).expect("index does not hang on a FIFO lock");
    assert_eq!(out.status.code(), Some(2), "a FIFO lock is an I/O error:\n{}", stderr(&out));
    assert!(stderr(&out).contains(".andon/lock"), "the error names the lock: {}", stderr(&out));
}

/// Whether permission bits bind this process (they do not for root).
fn permissions_bind(dir: &Path) -> bool {
    let probe = dir.join("probe");
    fs::create_dir(&probe).unwrap();
    fs::set_permissions(&probe, fs::Permissions::from_mode(0o555)).unwrap();
    let binds = fs::write(probe.join("x"), "x").is_err();
    fs::set_permissions(&probe, fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_dir_all(&probe).unwrap();
    binds
}

/// Makes `.andon/` and everything in it read-only (or writable again).
fn read_only(andon_dir: &Path, on: bool) {
    let (file, dir) = if on { (0o444, 0o555) } else { (0o644, 0o755) };
    if !on {
        fs::set_permissions(andon_dir, fs::Permissions::from_mode(dir)).unwrap();
    }
    for e in fs::read_dir(andon_dir).unwrap() {
        fs::set_permissions(e.unwrap().path(), fs::Permissions::from_mode(file)).unwrap();
    }
    if on {
        fs::set_permissions(andon_dir, fs::Permissions::from_mode(dir)).unwrap();
    }
}

/// How to run andon so permission bits bind: directly, or as `nobody` through `setpriv` when
/// they do not bind this user (root); `None` when neither can be done.
fn unprivileged(dir: &Path) -> Option<Vec<&'static str>> {
    if permissions_bind(dir) {
        return Some(Vec::new());
    }
    let prefix = vec!["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"];
    let probe = std::process::Command::new(prefix[0]).args(&prefix[1..]).arg("true").status();
    probe.is_ok_and(|s| s.success()).then_some(prefix)
}

/// Runs andon through `prefix` (see [`unprivileged`]).
fn run_as(prefix: &[&str], args: &[&str], dir: &Path) -> Output {
    let mut cmd = match prefix.split_first() {
        Some((first, rest)) => {
            let mut c = std::process::Command::new(first);
            c.args(rest).arg(env!("CARGO_BIN_EXE_andon"));
            c
        }
        None => andon(),
    };
    cmd.args(args).current_dir(dir).output().expect("andon runs")
}

#[test]
fn a_read_only_index_serves_readers_and_refuses_a_stale_write_clearly() {
    let t = contract_repo();
    let d = t.path();
    let Some(prefix) = unprivileged(d) else {
        eprintln!("skipped: permission bits do not bind this user (root) and setpriv cannot drop them");
        return;
    };
    fs::set_permissions(d, fs::Permissions::from_mode(0o755)).unwrap();
    run_ok(&["index", "--quiet"], d);
    let andon_dir = d.join(".andon");
    read_only(&andon_dir, true);
    let readers: &[&[&str]] = &[
        &["query", "--quiet", "File(p, l)"],
        &["facts", "--quiet"],
        &["stream", "--quiet"],
        &["check", "--quiet"],
        &["index", "--check", "--quiet"],
        &["index", "--quiet"],
    ];
    let mut failed = Vec::new();
    for args in readers {
        let out = run_as(&prefix, args, d);
        if out.status.code() != Some(0) {
            failed.push(format!("andon {args:?}: {:?}\n{}", out.status.code(), stderr(&out)));
        }
    }
    // A new mtime alone changes no fact: still served read-only.
    let api = d.join("src/app/api/__init__.py");
    let text = fs::read(&api).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    fs::write(&api, &text).unwrap();
    let touched = run_as(&prefix, &["query", "--quiet", "File(p, l)"], d);
    fs::write(&api, "def handler():\n    return 2\n").unwrap();
    let stale = run_as(&prefix, &["query", "--quiet", "File(p, l)"], d);
    read_only(&andon_dir, false);
    assert!(failed.is_empty(), "read-only commands fail:\n{}", failed.join("\n"));
    assert_eq!(touched.status.code(), Some(0), "a touched file needs no write:\n{}", stderr(&touched));
    assert_eq!(stale.status.code(), Some(2), "a stale read-only index is an I/O error:\n{}", stderr(&stale));
    let msg = stderr(&stale);
    assert!(msg.contains(".andon") && msg.contains("read-only"), "the error says why and where: {msg}");
    // Writable again, the same command brings the index up to date.
    run_ok(&["query", "--quiet", "File(p, l)"], d);
}

#[cfg(target_os = "linux")]
#[test]
fn temporary_files_of_dead_writers_are_removed_and_a_live_ones_kept() {
    let t = contract_repo();
    let d = t.path();
    run_ok(&["index", "--quiet"], d);
    let pid_max: u64 = fs::read_to_string("/proc/sys/kernel/pid_max").unwrap().trim().parse().unwrap();
    let dead = d.join(format!(".andon/index.bin.tmp.{}", pid_max + 1));
    let live = d.join(format!(".andon/index.bin.tmp.{}", std::process::id()));
    let other = d.join(".andon/index.bin.tmp.notapid");
    // a kept view's temporary file is `derived.tmp.<pid>.<n>`
    let dead_kept = d.join(format!(".andon/derived.tmp.{}.7", pid_max + 1));
    let live_kept = d.join(format!(".andon/derived.tmp.{}.7", std::process::id()));
    for p in [&dead, &live, &other, &dead_kept, &live_kept] {
        fs::write(p, vec![0u8; 1024]).unwrap();
    }
    run_ok(&["index", "--quiet"], d);
    assert!(!dead.exists() && !dead_kept.exists(), "a dead writer's temporary file is removed");
    assert!(live_kept.exists(), "a live process's temporary file is kept");
    assert!(live.exists(), "a live process's temporary file is kept");
    assert!(other.exists(), "a name that is not a writer's temporary file is kept");
}

#[test]
fn an_ignore_file_that_is_a_device_or_fifo_is_refused_without_blocking() {
    let t = contract_repo();
    let d = t.path();
    std::os::unix::fs::symlink("/dev/zero", d.join("src/app/.gitignore")).unwrap();
    let o = run_within(&["check", "-q"], d, 20).expect("check hung on a .gitignore linked to /dev/zero");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("src/app/.gitignore") && stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    fs::remove_file(d.join("src/app/.gitignore")).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(d.join(".ignore")).status().unwrap().success());
    let o = run_within(&["index", "-q"], d, 20).expect("index hung on a FIFO .ignore");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // --no-ignore reads no ignore file, so nothing is in the way
    let o = run_within(&["check", "-q", "--no-ignore"], d, 20).expect("check --no-ignore hung");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_stray_pack_with_the_largest_id_is_passed_over() {
    let t = contract_repo();
    let d = t.path();
    run_ok(&["index", "--quiet"], d);
    fs::write(d.join(".andon/pack-18446744073709551615.bin"), "stray").unwrap();
    fs::write(d.join("src/app/core/__init__.py"), "from app.api import handler\n").unwrap();
    let out = run(&["check", "--quiet"], d);
    assert_eq!(out.status.code(), Some(1), "the breach is found:\n{}", stderr(&out));
    let fresh = run(&["index", "--check", "--quiet"], d);
    assert_eq!(fresh.status.code(), Some(0), "{}", stderr(&fresh));
}

/// The pack files in `.andon/`.
fn packs(d: &Path) -> Vec<String> {
    let mut out: Vec<String> = fs::read_dir(d.join(".andon"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pack-"))
        .collect();
    out.sort();
    out
}

#[test]
fn a_damaged_pack_is_rewritten_by_the_next_writer_and_packs_never_pile_up() {
    let t = contract_repo();
    let d = t.path();
    run_ok(&["index", "--quiet"], d);
    let pack = d.join(".andon").join(&packs(d)[0]);
    let mut bytes = fs::read(&pack).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    fs::write(&pack, &bytes).unwrap();
    let damaged = run(&["index", "--check", "--quiet"], d);
    assert_eq!(damaged.status.code(), Some(3), "the damage is seen: {}", stderr(&damaged));
    // the next writer verifies the pack whose file changed, and writes again what it cannot trust
    let healed = run(&["index"], d);
    assert_eq!(healed.status.code(), Some(0), "{}", stderr(&healed));
    let said = format!("{}{}", String::from_utf8_lossy(&healed.stdout), stderr(&healed));
    assert!(said.contains("checksum mismatch") && said.contains("rebuilding"), "the rewrite is said: {said}");
    let fresh = run(&["index", "--check", "--quiet"], d);
    assert_eq!(fresh.status.code(), Some(0), "healed: {}", stderr(&fresh));
    // damage after each of many edits: never more than one pack per run's leftovers
    for i in 0..6 {
        fs::write(d.join("src/app/core/__init__.py"), format!("X = {i}\n")).unwrap();
        let pack = d.join(".andon").join(packs(d).last().unwrap());
        let mut bytes = fs::read(&pack).unwrap();
        let at = bytes.len() - 3;
        bytes[at] ^= 0x55;
        fs::write(&pack, &bytes).unwrap();
        run_ok(&["index", "--quiet"], d);
        assert_eq!(packs(d).len(), 1, "run {i}: {:?}", packs(d));
        assert_eq!(run(&["index", "--check", "--quiet"], d).status.code(), Some(0), "run {i}");
    }
    // a copy of the repository (every pack's file is new) is verified, not rebuilt
    let copy = tempfile::tempdir().unwrap();
    let to = copy.path().join("r");
    assert!(std::process::Command::new("cp").arg("-r").arg(d).arg(&to).status().unwrap().success());
    let out = run(&["index"], &to);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("rebuilding"), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_directory_at_the_index_head_is_reported_and_leaves_no_pack() {
    let t = contract_repo();
    let d = t.path();
    fs::create_dir_all(d.join(".andon/index.bin")).unwrap();
    for args in [&["index", "--quiet"][..], &["check", "--quiet"], &["query", "Stage(s, r)"]] {
        let out = run(args, d);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        assert!(stderr(&out).contains("a directory where andon writes its index"), "{args:?}: {}", stderr(&out));
    }
    assert!(packs(d).is_empty(), "no pack outlives a head that cannot be written: {:?}", packs(d));
}

#[test]
fn a_writer_waiting_for_the_lock_says_so_after_a_second() {
    let t = contract_repo();
    let d = t.path();
    run_ok(&["index", "--quiet"], d);
    fs::write(d.join("src/app/core/__init__.py"), "X = 2\n").unwrap();
    let held = fs::OpenOptions::new().write(true).open(d.join(".andon/lock")).unwrap();
    held.lock().unwrap();
    let mut index = andon();
    index.args(["index", "--quiet"]);
    let child = piped(index, d);
    std::thread::sleep(Duration::from_millis(1800));
    held.unlock().unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("waiting for") && stderr(&out).contains("lock"), "{}", stderr(&out));
    // an uncontended writer says nothing of a lock
    fs::write(d.join("src/app/core/__init__.py"), "X = 3\n").unwrap();
    assert!(!stderr(&run_ok(&["index", "--quiet"], d)).contains("waiting for"));
}

/// `cmd` started in `d`, no input, its output kept.
fn piped(mut cmd: std::process::Command, d: &Path) -> std::process::Child {
    cmd.current_dir(d).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

/// Runs `andon index` under strace with each open of `file` held for 1.5 s, and `swap` applied to
/// the file meanwhile (after the walk saw it); `None` where strace cannot run here.
fn index_with_swap(d: &Path, file: &Path, swap: impl FnOnce()) -> Option<Output> {
    if !crate::support::strace_works() {
        return None;
    }
    let mut strace = std::process::Command::new("strace");
    strace
        .args(["-f", "-q", "-o", "/dev/null", "-P"])
        .arg(file)
        .args(["-e", "trace=openat", "-e", "inject=openat:delay_enter=1500000"])
        .arg(env!("CARGO_BIN_EXE_andon"))
        .arg("index");
    let child = piped(strace, d);
    std::thread::sleep(Duration::from_millis(700));
    swap();
    let t0 = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(10), "the run hung on the swapped file");
    Some(out)
}

#[test]
fn a_file_swapped_for_a_fifo_or_a_device_after_the_walk_is_skipped_not_read() {
    for target in ["fifo", "/dev/zero"] {
        let t = contract_repo();
        let d = t.path();
        run_ok(&["index", "--quiet"], d);
        let file = d.join("src/app/core/__init__.py");
        fs::write(&file, "X = 2\n").unwrap();
        let swapped = file.clone();
        let Some(out) = index_with_swap(d, &file, move || {
            fs::remove_file(&swapped).unwrap();
            if target == "fifo" {
                assert!(std::process::Command::new("mkfifo").arg(&swapped).status().unwrap().success());
            } else {
                std::os::unix::fs::symlink(target, &swapped).unwrap();
            }
        }) else {
            return;
        };
        assert_eq!(out.status.code(), Some(0), "{target}: {}", stderr(&out));
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert!(said.contains("src/app/core/__init__.py: cannot be read"), "{target}: {said}");
        // a writer after it takes the lock at once
        let next = run_within(&["index", "--quiet"], d, 10).expect("the lock is free");
        assert!(!stderr(&next).contains("waiting for"), "{}", stderr(&next));
    }
}

#[test]
fn the_size_a_file_hash_records_is_that_of_the_bytes_read() {
    let t = contract_repo();
    let d = t.path();
    run_ok(&["index", "--quiet"], d);
    let file = d.join("src/app/core/__init__.py");
    fs::write(&file, "X = 2\n").unwrap();
    let swapped = file.clone();
    let text = "X = 3  # longer than what the walk saw\n";
    let Some(out) = index_with_swap(d, &file, move || fs::write(&swapped, text).unwrap()) else { return };
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let facts = run_ok(&["facts", "--relation", "FileHash", "--file", "src/app/core/__init__.py"], d);
    let facts = String::from_utf8_lossy(&facts.stdout);
    assert!(facts.contains(&format!("{}", text.len())), "the size read, {}: {facts}", text.len());
    assert!(!facts.contains(" 6)") && !facts.contains(", 6"), "not the walk's 6 bytes: {facts}");
}
