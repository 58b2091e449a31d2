//! Red first: a proof that would pass without the fix proves nothing (requirements.md §3,
//! patterns 9–10). For the executed and property approaches verify runs the stage's checks twice:
//! first in a scratch copy of the base tree (the tree the loop last proved) with the fix's test
//! files laid over it, then on the fixed tree. The fix is proven only when some check fails
//! without it and every check passes with it. A check that passes both ways does not
//! discriminate: the obligation is unknown until the fix brings a test that fails without it.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::super::error::Error;
use super::commands::failing_tests;
use super::commands::{self, CommandSpec};
use super::executed;
use super::proof::{Proof, cannot_run_here};
use crate::evidence::route::Approach;
use crate::facts::rel;
use crate::index::Index;
use crate::ledger::{CheckRun, RedFirst, Verdict};

/// Why a proof that passes both ways is not one.
pub const NOT_DISCRIMINATING: &str = "the check passes without the fix: add a test that fails without it";

/// Ignored directories never shared with the scratch copy: caches a check rewrites as it runs
/// (shared, the base run would write into the repository).
const UNSHARED: &[&str] = &["__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".andon"];

/// Must the proof of a fix of a gap from `source` by approach `a` discriminate? Every proof by
/// the stage's checks must, but a fix of a stage no test reaches: that gap is the absence of a
/// test, and a new test of code that already works passes without the fix by design (the index
/// shows the stage tested, the checks show the test passes).
pub fn applies(a: Approach, source: &str) -> bool {
    matches!(a, Approach::Executed | Approach::Property) && source != "MissingTests"
}

/// Does the fresh index say `path` holds test code only (a `TestFile` fact)?
pub fn test_file(idx: &Index, path: &str) -> bool {
    let in_global = idx.global.rows_of(rel::TEST_FILE).any(|r| idx.global.str(r[0]) == path);
    let Some(i) = idx.files.iter().position(|f| f.path == path) else { return in_global };
    let f = &idx.facts[i];
    let of = |seg: &crate::facts::Segment| seg.rows_of(rel::TEST_FILE).any(|r| seg.str(r[0]) == path);
    in_global || of(f.core()) || f.detail().is_ok_and(|d| of(&d))
}

/// Is `path` test code by its name or directory alone (a file the index no longer has)?
pub fn test_path(path: &str) -> bool {
    crate::extract::Lang::from_path(path).is_some_and(|l| l.spec().is_clear_test_path(path))
}

/// A scratch copy of the base tree with the fix's test files over it; removed on drop.
pub struct Scratch {
    dir: PathBuf,
    pub overlaid: Vec<String>,
}

impl Scratch {
    fn path(&self) -> &Path {
        &self.dir
    }

    /// The base tree with the test files over it.
    pub fn tree(&self) -> PathBuf {
        self.dir.join("tree")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Removes the scratch directories of `what` that a process no longer running left behind (a
/// verify killed before it could drop them). Only where `/proc` says which processes run.
fn sweep_stale(what: &str) {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return;
    }
    let prefix = format!("andon-{what}-");
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let pid =
            name.strip_prefix(&prefix).and_then(|rest| rest.split('-').next()).and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid
            && pid != std::process::id()
            && !proc.join(pid.to_string()).exists()
        {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A new empty directory under the system's temporary directory, named for this process.
fn scratch_dir(what: &str) -> Result<PathBuf, Error> {
    sweep_stale(what);
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "andon-{what}-{}-{n}-{:x}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
    ));
    std::fs::create_dir_all(&dir).map_err(|source| Error::ScratchDir { path: dir.clone(), source })?;
    Ok(dir)
}

/// Runs git at `cwd` with `args` and `env`; its stdout, or why it failed.
fn git(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Result<Vec<u8>, Error> {
    let mut c = Command::new("git");
    c.current_dir(cwd).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().map_err(Error::GitUnavailable)?;
    if !out.status.success() {
        return Err(Error::Git {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(out.stdout)
}

/// The base tree `base` of the repository at `root` checked out in a scratch directory, the
/// changed files `is_test` accepts taken from the working tree (a deleted one removed), and the
/// ignored entries of the working tree (a virtualenv, `node_modules`, a build directory) linked
/// in, but for `own` (andon's directories) and caches. `Err` says why it could not be built.
pub fn base_tree(
    root: &Path,
    base: &str,
    changed: &[(String, String)],
    is_test: &dyn Fn(&str) -> bool,
    own: &[String],
) -> Result<Scratch, Error> {
    // links and copies name the repository absolutely: a relative root would link a directory to itself
    let root = &fs_real(root)?;
    // removed on drop, the index with it, on every way out
    let mut scratch = Scratch { dir: scratch_dir("red")?, overlaid: Vec::new() };
    let work = scratch.path().join("tree");
    std::fs::create_dir(&work).map_err(Error::io(&work))?;
    let index = scratch.path().join("index");
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).trim().to_string();
    let git_dir = text(git(root, &["rev-parse", "--absolute-git-dir"], &[])?);
    let prefix = text(git(root, &["rev-parse", "--show-prefix"], &[])?);
    let tree = match prefix.trim_end_matches('/') {
        "" => format!("{base}^{{tree}}"),
        p => format!("{base}:{p}"),
    };
    let (work, git_dir) = (work.as_path(), PathBuf::from(git_dir));
    let env = [("GIT_INDEX_FILE", index.as_path())];
    let gd = format!("--git-dir={}", git_dir.display());
    let wt = format!("--work-tree={}", work.display());
    git(work, &[&gd, &wt, "read-tree", &tree], &env)?;
    git(work, &[&gd, &wt, "checkout-index", "-a", "-f"], &env)?;
    for (_, path) in changed.iter().filter(|(_, p)| is_test(p)) {
        take(root, work, path)?;
        scratch.overlaid.push(path.clone());
    }
    link_ignored(root, work, own)?;
    Ok(scratch)
}

/// Removes the caches a run wrote under `dir` (the [`UNSHARED`] directories; links are not
/// followed).
/// Removes what a run compiled in `dir` (Python's bytecode and the like), so the next run reads
/// the sources as they are now.
pub(super) fn forget_caches(dir: &Path) {
    clear_caches(dir);
}

fn clear_caches(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let Ok(t) = e.file_type() else { continue };
        if !t.is_dir() {
            continue;
        }
        if UNSHARED.contains(&e.file_name().to_string_lossy().as_ref()) {
            let _ = std::fs::remove_dir_all(e.path());
        } else {
            clear_caches(&e.path());
        }
    }
}

/// The repository root with its links resolved.
fn fs_real(root: &Path) -> Result<PathBuf, Error> {
    std::fs::canonicalize(root).map_err(Error::io(root))
}

/// Puts the working tree's `path` into the scratch tree `work`: a copy, or its removal when the
/// working tree no longer has it.
fn take(root: &Path, work: &Path, path: &str) -> Result<(), Error> {
    let (from, to) = (root.join(path), work.join(path));
    if from.is_file() {
        std::fs::create_dir_all(to.parent().unwrap_or(work)).map_err(Error::io(path))?;
        let _ = std::fs::remove_file(&to);
        std::fs::copy(&from, &to).map_err(|source| Error::ScratchCopy { path: path.into(), source })?;
    } else {
        let _ = std::fs::remove_file(&to);
    }
    Ok(())
}

impl Scratch {
    /// Lays the rest of the fix over the base tree: then the scratch tree is the fixed tree, in the
    /// same place as the run without the fix (the control: a check that fails there with the fix
    /// depends on where it runs, not on the fix).
    pub fn apply_fix(&self, root: &Path, changed: &[(String, String)]) -> Result<(), Error> {
        let root = &fs_real(root)?;
        let tree = self.tree();
        // what the run without the fix compiled is stale now, though a fix of the same size
        // copied within the same second would look fresh to a timestamp (Python's bytecode)
        clear_caches(&tree);
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(2);
        for (_, path) in changed.iter().filter(|(_, p)| !self.overlaid.contains(p)) {
            take(root, &tree, path)?;
            if let Ok(f) = std::fs::File::options().write(true).open(tree.join(path)) {
                let _ = f.set_modified(later);
            }
        }
        Ok(())
    }
}

/// Links each ignored entry of the working tree into the scratch tree `work` (what the checks
/// need but git does not keep), but for `own` directories and caches a run rewrites.
fn link_ignored(root: &Path, work: &Path, own: &[String]) -> Result<(), Error> {
    let listed = git(root, &["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"], &[])?;
    for entry in listed.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let Ok(rel) = std::str::from_utf8(entry) else { continue };
        let rel = rel.trim_end_matches('/');
        let name = rel.rsplit('/').next().unwrap_or(rel);
        // andon's own directories, and any directory holding one, are never shared
        let mine = own
            .iter()
            .map(|o| o.trim_end_matches('/'))
            .any(|o| rel == o || rel.starts_with(&format!("{o}/")) || o.starts_with(&format!("{rel}/")));
        if mine || UNSHARED.contains(&name) || rel.split('/').any(|c| c == ".andon") {
            continue;
        }
        let to = work.join(rel);
        if to.symlink_metadata().is_ok() {
            continue;
        }
        std::fs::create_dir_all(to.parent().unwrap_or(work)).map_err(Error::io(rel))?;
        std::os::unix::fs::symlink(root.join(rel), &to)
            .map_err(|source| Error::ScratchLink { path: rel.into(), source })?;
    }
    Ok(())
}

/// Is a run without the fix red: a check that ran and failed (not one that could not start, whose
/// tool is missing here, or that timed out: a copy starts with cold caches, so a timeout there
/// shows nothing about the fix)?
fn red(approach: Approach, root: &Path, r: &commands::Run, tools: &[crate::evidence::property::Detected]) -> bool {
    let failed = !r.timed_out && r.exit.is_some_and(|c| c != 0) && !cannot_run_here(root, r);
    match approach {
        Approach::Property => failed && executed::property_judgment(root, r, tools).1.verdict == Verdict::Refuted,
        _ => failed,
    }
}

/// The record of one run; `root` is where its output was kept relative to.
fn check_run(root: &Path, r: &commands::Run) -> CheckRun {
    let output = std::fs::read_to_string(root.join(&r.artifact)).unwrap_or_else(|_| r.tail.clone());
    CheckRun {
        command: r.run.clone(),
        exit: r.exit,
        timed_out: r.timed_out,
        artifact: r.artifact.clone(),
        failing: if r.passed() { Vec::new() } else { failing_tests(&output) },
        ran: super::commands::tests_ran(&output),
    }
}

/// What the fix left out of the checks' runs, if anything: fewer tests ran ([`fewer_tests_ran`]),
/// or a test that failed without the fix is not among those its runner names passing with it (a
/// file that exits before its tests register passes as a file).
fn left_out(root: &Path, before: &[CheckRun], control: &[CheckRun], after: &[CheckRun]) -> Option<String> {
    let output = |w: &CheckRun| std::fs::read_to_string(root.join(&w.artifact)).unwrap_or_default();
    // a runner made to exit 0 over failing tests (an exit hook, a session hook) has not passed
    let lying = control.iter().chain(after).find_map(|w| {
        let failing = super::commands::failing_tests(&output(w));
        let failing: Vec<&String> = failing.iter().filter(|f| !f.ends_with("# TODO") && !f.contains("# SKIP")).collect();
        (w.exit == Some(0) && !failing.is_empty()).then(|| {
            format!(
                "with the fix, `{}` exits 0 while its output says tests fail ({}): something in the change makes the runner exit 0 over failures",
                w.command,
                failing.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
            )
        })
    });
    lying.or_else(|| fewer_tests_ran(before, control, after)).or_else(|| {
        before.iter().enumerate().find_map(|(i, b)| {
            let with = [control.get(i)?, after.get(i)?];
            let name = b.failing.iter().find(|name| {
                with.iter().any(|w| w.exit == Some(0) && super::commands::seen_passing(&output(w), name) == Some(false))
            })?;
            Some(format!(
                "`{name}` failed without the fix, and with it `{}` passes but `{name}` is not seen passing: the test did not run (a file that exits before its tests register passes as a file); every test that failed without the fix must pass with it",
                b.command
            ))
        })
    })
}

/// A check that ran fewer tests with the fix than without it (`before`, in the copy with the
/// fix's tests over the base, so the same tests), in the copy with the fix (`control`) or in the
/// repository (`after`), or that says nothing of its tests there: something the fix did stops
/// tests from running (an exit at import, a skip, a deselection). Why, naming the check.
fn fewer_tests_ran(before: &[CheckRun], control: &[CheckRun], after: &[CheckRun]) -> Option<String> {
    before.iter().enumerate().find_map(|(i, b)| {
        let n = b.ran?;
        [control.get(i)?, after.get(i)?].into_iter().find_map(|w| match w.ran {
            Some(m) if m >= n => None,
            Some(m) => Some(format!(
                "with the fix, `{}` ran {m} test(s) and without it {n}: something in the change stops tests from running (an exit at import, a skip, a deselection); every test that runs without the fix must run with it",
                b.command
            )),
            None => Some(format!(
                "with the fix, `{}` says nothing of its tests (without it: {n} ran): something in the change stops the runner before it reports (an exit at import); every test that runs without the fix must run with it",
                b.command
            )),
        })
    })
}

/// What a proof of the executed or property approach needs to run red first.
pub struct RedFirstRun<'a> {
    pub approach: Approach,
    /// The applied change, (status, path).
    pub changed: &'a [(String, String)],
    /// Why the gap is red without the fix whatever the run there shows (a failing command the
    /// loop saw fail), if it is.
    pub red_by_definition: Option<&'a str>,
    pub root: &'a Path,
    /// The base tree's commit.
    pub base: &'a str,
    pub specs: &'a [CommandSpec],
    /// Where run outputs go, relative to `root`.
    pub out: &'a Path,
    pub tools: &'a [crate::evidence::property::Detected],
    pub nonce: &'a str,
}

/// Runs the checks in `scratch` without the fix, then in `scratch` with it (the control), then
/// with it at the root, and judges: red without it and green with it, both in the copy and at the
/// root, proves; green both ways is unknown ([`NOT_DISCRIMINATING`]); red with the fix in the copy
/// only is unknown (the check depends on where it runs); red at the root refutes, as a single run
/// would.
pub fn prove(ask: &RedFirstRun, scratch: &Scratch) -> (Proof, RedFirst) {
    let root = ask.root.canonicalize().unwrap_or_else(|_| ask.root.to_path_buf());
    let out = root.join(ask.out).join("red-first");
    let in_copy = |dir: &Path| -> Vec<commands::Run> {
        let mut runs = executed::run_checks(&scratch.tree(), dir, ask.specs, ask.nonce);
        for r in &mut runs {
            // kept under the repository's output directory: named from its root
            if let Ok(rel) = Path::new(&r.artifact).strip_prefix(&root) {
                r.artifact = rel.to_string_lossy().replace('\\', "/");
            }
        }
        runs
    };
    let before_runs = in_copy(&out);
    let control_runs = match scratch.apply_fix(ask.root, ask.changed) {
        Ok(()) => in_copy(&out.join("control")),
        Err(_) => Vec::new(),
    };
    let after_runs = executed::run_checks(ask.root, ask.out, ask.specs, ask.nonce);
    let mut proof = match ask.approach {
        Approach::Property => executed::property_proof(ask.root, &after_runs, ask.tools),
        _ => executed::executed_proof(ask.root, &after_runs),
    };
    let record = |runs: &[commands::Run]| -> Vec<CheckRun> { runs.iter().map(|r| check_run(ask.root, r)).collect() };
    let (before, control, after) = (record(&before_runs), record(&control_runs), record(&after_runs));
    // where the stage configures checks, only they can show the fix was needed: a check given to
    // verify adds to them (a grep that fails without the fix shows nothing about the behaviour)
    let configured = ask.specs.iter().any(|s| s.name != "given");
    let reds: Vec<usize> = (0..before_runs.len())
        .filter(|&i| !configured || ask.specs.get(i).is_some_and(|s| s.name != "given"))
        .filter(|&i| red(ask.approach, ask.root, &before_runs[i], ask.tools))
        .collect();
    // a run red without the fix only because a module the fix adds was not there shows nothing
    // about the behaviour: a test fails on what the code does, against code the base has
    let added: Vec<&str> = ask.changed.iter().filter(|(st, _)| st == "A").map(|(_, p)| p.as_str()).collect();
    let missing: Vec<String> = reds
        .iter()
        .filter_map(|&i| {
            let text = std::fs::read_to_string(ask.root.join(&before_runs[i].artifact)).unwrap_or_default();
            missing_added_module(&text, &added)
        })
        .collect();
    let import_only = !reds.is_empty() && missing.len() == reds.len();
    let control_green = control_runs.len() == ask.specs.len() && control_runs.iter().all(commands::Run::passed);
    let flipped: Vec<String> = reds
        .iter()
        .filter(|&&i| control_runs.get(i).is_some_and(commands::Run::passed))
        .flat_map(|&i| match before[i].failing.is_empty() {
            true => vec![format!("`{}`", before[i].command)],
            false => before[i].failing.clone(),
        })
        .collect();
    let said = |runs: &[CheckRun]| -> String {
        runs.iter().map(|r| format!("`{}` {}", r.command, exit_text(r))).collect::<Vec<_>>().join(", ")
    };
    let runs = format!(
        "in a copy without the fix: {}; in the copy with it: {}; in the repository: {}",
        said(&before),
        said(&control),
        said(&after)
    );
    let fewer = left_out(ask.root, &before, &control, &after);
    let canary = || {
        // the framework itself, asked: a test that must fail, beside a test file the fix or the
        // failing runs name, must fail with the fix in place
        let mut beside: Vec<String> = ask.changed.iter().filter(|(st, _)| st != "D").map(|(_, p)| p.clone()).collect();
        beside.extend(before.iter().filter_map(|b| {
            let text = std::fs::read_to_string(ask.root.join(&b.artifact)).unwrap_or_default();
            // the run without the fix ran in the copy: its paths are the copy's
            super::commands::failure_site(&scratch.tree(), &text).map(|(p, _)| p)
        }));
        let runs = (before.as_slice(), control.as_slice());
        let out = out.join("canary");
        let found = super::canary::disarmed(&scratch.tree(), &out, ask.specs, runs, &beside, ask.nonce);
        forget_caches(&scratch.tree());
        found
    };
    if proof.verdict == Verdict::Proven {
        let fewer = if control_green { fewer.or_else(canary) } else { fewer };
        if let Some(why) = fewer {
            proof.verdict = Verdict::Unknown;
            proof.reason = Some(crate::ledger::Reason::NotShown);
            proof.claim = why;
        } else if !control_green {
            proof.verdict = Verdict::Unknown;
            proof.claim = "the checks fail in a copy of the repository even with the fix: they depend on where they run (a `.git`, a path outside the repository, an absolute path), so red first cannot show the fix is needed; make them run on what the repository holds".to_string();
        } else if let Some(why) = ask.red_by_definition.filter(|_| !reds.is_empty() || scratch.overlaid.is_empty()) {
            proof.claim = format!("{}; red without the fix by definition: {why}", proof.claim);
        } else if ask.red_by_definition.is_some() {
            proof.verdict = Verdict::Unknown;
            proof.reason = Some(crate::ledger::Reason::NotDiscriminating);
            proof.claim = format!(
                "the failing command passes without the fix once the fix's tests ({}) are laid over the base: the change to the tests alone makes it pass; change the code, not what judges it",
                scratch.overlaid.join(", ")
            );
        } else if reds.is_empty() {
            proof.verdict = Verdict::Unknown;
            proof.reason = Some(crate::ledger::Reason::NotDiscriminating);
            proof.claim = NOT_DISCRIMINATING.to_string();
        } else if import_only {
            proof.verdict = Verdict::Unknown;
            proof.reason = Some(crate::ledger::Reason::NotDiscriminating);
            proof.claim = format!(
                "the checks fail without the fix only because {} did not exist there: that is no red first; add a test that fails on what the code does, against code the base has",
                missing.join(", ")
            );
        } else {
            proof.claim = format!("{}, and failed without it", proof.claim);
        }
    }
    proof.detail = format!("{}; {runs}", proof.detail);
    proof.references.extend(before.iter().chain(&control).map(|r| r.artifact.clone()));
    let overlaid = scratch.overlaid.clone();
    let record = RedFirst {
        base: ask.base.to_string(),
        overlaid,
        before,
        control,
        after,
        flipped,
        pinned: Vec::new(),
        not_pinned_here: Vec::new(),
    };
    (proof, record)
}

/// The module a run's output says it could not import, when it is one of the files the fix adds
/// (`added`): Python's `No module named 'a.b'`, Node's `Cannot find module '…/a/b.js'` and
/// `ERR_MODULE_NOT_FOUND`, Rust's `unresolved import` (E0432, E0433). Named as `` `path` ``.
pub fn missing_added_module(output: &str, added: &[&str]) -> Option<String> {
    let quoted = |l: &str, after: &str| -> Option<String> {
        let rest = &l[l.find(after)? + after.len()..];
        let q = rest.chars().find(|c| matches!(c, '\'' | '"' | '`'))?;
        let rest = &rest[rest.find(q)? + 1..];
        Some(rest[..rest.find(q)?].to_string())
    };
    let is_added = |candidates: &[String]| {
        added.iter().find(|a| candidates.iter().any(|c| !c.is_empty() && (a.ends_with(c.as_str()) || c.ends_with(*a))))
    };
    for l in output.lines() {
        let found = if let Some(m) = quoted(l, "No module named") {
            let p = m.replace('.', "/");
            is_added(&[format!("{p}.py"), format!("{p}/__init__.py")])
        } else if let Some(m) = quoted(l, "Cannot find module").or_else(|| quoted(l, "ERR_MODULE_NOT_FOUND")) {
            let m = m.trim_start_matches("./").trim_start_matches("../").to_string();
            let stem = m.rsplit_once('.').map_or(m.clone(), |(s, _)| s.to_string());
            is_added(&[m, format!("{stem}.js"), format!("{stem}.ts"), format!("{stem}/index.js")])
        } else if l.contains("unresolved import") || l.contains("E0432") || l.contains("E0433") {
            quoted(l, "import")
                .map(|m| m.rsplit("::").next().unwrap_or(&m).to_string())
                .and_then(|m| is_added(&[format!("/{m}.rs"), format!("/{m}/mod.rs")]))
        } else {
            None
        };
        if let Some(a) = found {
            return Some(format!("`{a}`"));
        }
    }
    None
}

/// A check that cannot run here with the fix: is it the environment, or the fix? The checks run
/// once more on the base tree `base` as it was (none of the fix's files, its tests neither). A
/// check that passes there ran to its end: what it needs was never missing, so the fix's files
/// make it exit as the shell does for a missing command (a test that prints the shell's message
/// and exits 127, a script calling a tool nothing here has), and the fix is refuted. A check that
/// fails there, or cannot run there either, shows nothing: the proof stays blocked.
pub fn environment_or_fix(
    root: &Path,
    base: &str,
    specs: &[CommandSpec],
    out: &Path,
    nonce: &str,
    own: &[String],
    proof: &mut Proof,
) {
    if proof.reason != Some(crate::ledger::Reason::UnprovableHere) || base == "none" {
        return;
    }
    let Ok(pure) = base_tree(root, base, &[], &|_| false, own) else { return };
    let out = scratch_output(root, out, "base");
    let runs = executed::run_checks(&pure.tree(), &out, specs, nonce);
    let lacked = proof.capability.as_ref().map(|c| c.command.clone()).unwrap_or_default();
    let name = proof.capability.as_ref().map(|c| c.name.clone()).unwrap_or_default();
    // the base tree cannot run it either: the environment lacks it, whoever names it
    if runs.iter().any(|r| r.run == lacked && cannot_run_here(root, r)) {
        return;
    }
    let claim = if runs.iter().any(|r| r.run == lacked && r.passed()) {
        format!(
            "`{lacked}` passes on the base tree, but with the fix it exits as if `{name}` were missing: the fix's files, not the environment, stop it"
        )
    } else if !named_where_a_shell_runs(root, base, &name, &lacked, own) {
        format!(
            "`{lacked}` exits as if `{name}` were missing, but nothing the check could call names `{name}` (not the command, no file of the base tree): a test that says so is no missing tool"
        )
    } else {
        return;
    };
    proof.capability = None;
    proof.verdict = Verdict::Refuted;
    proof.reason = None;
    proof.claim = claim;
    proof.references.extend(runs.iter().map(|r| r.artifact.clone()));
}

/// A handoff test shows the handoff only where the checks run it. The fixed tree is copied to a
/// scratch directory, the handoff tests `tests` are made unloadable there, and the checks `specs`
/// run on it: some check must fail. Where every check still passes, the checks never ran the test
/// (a file the runner does not collect), and the proof is unknown (not discriminating).
#[allow(clippy::too_many_arguments)]
pub fn handoff_probe(
    root: &Path,
    base: &str,
    changed: &[(String, String)],
    tests: &[String],
    specs: &[CommandSpec],
    out: &Path,
    nonce: &str,
    own: &[String],
    proof: &mut Proof,
) {
    if proof.verdict != Verdict::Proven || tests.is_empty() {
        return;
    }
    let copy = match base_tree(root, base, changed, &|_| true, own) {
        Ok(c) => c,
        Err(m) => return not_run(proof, format!("the checks could not be run with the handoff's test broken: {m}")),
    };
    for t in tests {
        if let Err(e) = std::fs::write(copy.tree().join(t), "andon probe: this test must not load )(\n") {
            return not_run(proof, format!("{t}: {e}"));
        }
    }
    let out = scratch_output(root, out, "probe");
    let runs = executed::run_checks(&copy.tree(), &out, specs, nonce);
    if runs.iter().any(|r| !r.passed()) {
        proof.claim = format!("{}; with it broken the checks fail: they run it", proof.claim);
        return;
    }
    not_run(
        proof,
        format!(
            "the checks pass with `{}` made unloadable: they never run it; name it so the stage's checks collect it",
            tests.join("`, `")
        ),
    );
}

/// Where a scratch run named `what` keeps its output: under the output directory `out` of the
/// repository at `root`, named absolutely (the run's working directory is the scratch copy).
fn scratch_output(root: &Path, out: &Path, what: &str) -> PathBuf {
    root.canonicalize().unwrap_or_else(|_| root.to_path_buf()).join(out).join("red-first").join(what)
}

/// The proof becomes unknown, not discriminating, because `claim`.
fn not_run(proof: &mut Proof, claim: String) {
    proof.verdict = Verdict::Unknown;
    proof.reason = Some(crate::ledger::Reason::NotDiscriminating);
    proof.claim = claim;
}

/// Does something the check could call name the capability `name`, as a whole word: the
/// command itself, or a file of the base tree `base` that is not prose (a script, a manifest's
/// scripts, a Makefile, a test's runner)? A shell reports a command missing only where a shell
/// was told to run it, and a fix's own files are not in the base tree. A command that computes
/// what it runs (`$VAR`, a substitution) and a search git cannot make answer yes: the proof
/// stays blocked rather than refuted on a guess.
fn named_where_a_shell_runs(root: &Path, base: &str, name: &str, command: &str, own: &[String]) -> bool {
    let word = |text: &str| {
        text.match_indices(name).any(|(i, _)| {
            let part = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.');
            !text[..i].chars().next_back().is_some_and(part) && !text[i + name.len()..].chars().next().is_some_and(part)
        })
    };
    if name.is_empty() || word(command) || command.contains('$') || command.contains('`') {
        return true;
    }
    // andon's own directories hold the check's output, which names it; its settings name the
    // checks, whose commands are judged above
    let mut excluded: Vec<String> = own.iter().map(|p| format!(":(exclude){p}")).collect();
    excluded.push(":(exclude)andon.toml".into());
    let mut args = vec!["grep", "-I", "-l", "-w", "-F", "-e", name, base, "--", "."];
    args.extend(excluded.iter().map(String::as_str));
    let Ok(out) = Command::new("git").current_dir(root).args(&args).output() else { return true };
    match out.status.code() {
        Some(0) => {}
        Some(1) => return false,
        _ => return true,
    }
    let prose = |p: &str| {
        let ext = p.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
        matches!(ext.as_str(), "md" | "rst" | "txt" | "adoc")
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.strip_prefix(&format!("{base}:")).unwrap_or(l))
        .any(|p| !prose(p))
}

/// How a run ended, in words.
fn exit_text(r: &CheckRun) -> String {
    match (r.exit, r.timed_out) {
        (_, true) => "timed out".into(),
        (Some(c), _) => format!("exit {c}"),
        (None, _) => "did not run".into(),
    }
}

#[cfg(test)]
mod missing_module_tests {
    use super::missing_added_module;

    #[test]
    fn an_import_of_a_module_the_fix_adds_is_named() {
        let py = "ModuleNotFoundError: No module named 'calc.fast'\n";
        assert_eq!(missing_added_module(py, &["calc/fast.py"]).as_deref(), Some("`calc/fast.py`"));
        assert_eq!(missing_added_module(py, &["calc/ops.py"]), None);
        let node = "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/tmp/x/src/fast.js' imported from /tmp/x/test/a.test.js\n";
        assert_eq!(missing_added_module(node, &["src/fast.js"]).as_deref(), Some("`src/fast.js`"));
        let rust = "error[E0432]: unresolved import `crate::fast`\n";
        assert_eq!(missing_added_module(rust, &["src/fast.rs"]).as_deref(), Some("`src/fast.rs`"));
        assert_eq!(missing_added_module("AssertionError: 3 != 5", &["calc/fast.py"]), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_directory_left_by_a_process_that_is_gone_is_swept() {
        if !Path::new("/proc/self").exists() {
            return;
        }
        // a pid far above any the kernel hands out
        let stale = std::env::temp_dir().join("andon-sweeptest-4194999-0-1");
        let mine = std::env::temp_dir().join(format!("andon-sweeptest-{}-0-1", std::process::id()));
        for d in [&stale, &mine] {
            std::fs::create_dir_all(d.join("tree")).unwrap();
        }
        sweep_stale("sweeptest");
        assert!(!stale.exists(), "a dead process's scratch is removed");
        assert!(mine.exists(), "a live one's stays");
        std::fs::remove_dir_all(&mine).unwrap();
    }

    #[test]
    fn failing_tests_are_read_from_the_common_runners() {
        let out = "F.\n======\nFAIL: test_discount (tests.test_prices.PricesTest.test_discount)\n\
                   ERROR: test_total (tests.test_cart.CartTest.test_total)\n\
                   FAILED tests/test_x.py::test_y - AssertionError: 1 != 2\n\
                   test parse::tests::empty ... FAILED\ntest parse::tests::ok ... ok\n\
                   not ok 3 - adds numbers\n  ✕ renders the title (5 ms)\nFAILED (errors=1)\nFAIL: test_discount (tests.test_prices.PricesTest.test_discount)\n";
        assert_eq!(
            failing_tests(out),
            [
                "test_discount (tests.test_prices.PricesTest.test_discount)",
                "test_total (tests.test_cart.CartTest.test_total)",
                "tests/test_x.py::test_y",
                "parse::tests::empty",
                "adds numbers",
                "renders the title (5 ms)",
            ]
        );
    }
}
