//! Configured commands (`[[command]]`: test suites, linters) as executed checks (R18, R49). A
//! failing command is a bug gap; a passing one is executed evidence for a fix.
//!
//! Commands run in one of two lanes. **Fast** commands run on every pass of the loop; **slow**
//! ones (a full test suite, an end-to-end run) only when explicitly requested (e.g. `--slow`), so
//! that a pass stays quick while the slow evidence is still one flag away. [`applicable`] picks
//! the commands for a stage and lane; [`run`] runs one.
//!
//! A run executes `sh -c <run>` at the repository root with no standard input, in its own process
//! group, killed whole (grandchildren too) when it outlives `timeout_secs`. Its combined output is
//! kept as an artifact (`<out>/artifacts/command-<name>-<fingerprint>.log`) and the run itself as
//! `<out>/commands/<name>.json`, which doubles as a cache: the same command line on the same
//! fingerprint (the caller's hash of the repository's content) is not run again while its
//! artifact exists.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use crate::config::{CommandSpec, Lane};

/// How many lines of output a [`Run`] keeps in `tail`.
pub const TAIL_LINES: usize = 20;
/// How much of the end of the output is read to find the tail.
const TAIL_BYTES: u64 = 64 * 1024;

/// One execution (or cached execution) of a configured command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub name: String,
    pub run: String,
    /// The command's line in the configuration.
    pub line: u32,
    pub lane: Lane,
    /// The exit code; `None` when it timed out, could not be started or was killed by a signal.
    pub exit: Option<i32>,
    pub timed_out: bool,
    /// Why it could not be started, was killed, or its output could not be kept.
    pub error: Option<String>,
    pub duration_ms: u64,
    /// The captured output, relative to the repository root, `/` separators.
    pub artifact: String,
    /// The last ≤ [`TAIL_LINES`] lines of combined output, control characters other than `\n`
    /// and `\t` replaced by U+FFFD.
    pub tail: String,
    pub fingerprint: String,
    /// Returned from the cache without executing.
    pub cached: bool,
    /// The failing tests its output names ([`failing_tests`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing: Vec<String>,
    /// Where the first failing test failed, repo-relative ([`failure_site`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_at: Option<(String, u32)>,
}

impl Run {
    /// Exited with 0.
    pub fn passed(&self) -> bool {
        self.exit == Some(0)
    }
}

/// The commands that speak for `stage` (their `stages` are empty or name it): every fast one,
/// the slow ones only when `slow`; in configuration order.
pub fn applicable<'a>(specs: &'a [CommandSpec], stage: &str, slow: bool) -> Vec<&'a CommandSpec> {
    specs
        .iter()
        .filter(|s| s.stages.is_empty() || s.stages.iter().any(|x| x == stage))
        .filter(|s| s.lane == Lane::Fast || slow)
        .collect()
}

/// The last recorded run of command `name`, if any (whatever its fingerprint).
pub fn last(root: &Path, out_dir: &Path, name: &str) -> Option<Run> {
    let text = fs::read_to_string(root.join(out_dir).join("commands").join(format!("{name}.json"))).ok()?;
    serde_json::from_str(&text).ok()
}

/// Runs `spec` at `root` (or returns its cached run for `fingerprint`), keeping its output and
/// the run under `out_dir` (absolute or relative to `root`). Never fails: a command that cannot
/// start, or output that cannot be kept, is reported in [`Run::error`].
pub fn run(root: &Path, out_dir: &Path, spec: &CommandSpec, fingerprint: &str) -> Run {
    let out_dir = root.join(out_dir);
    let cache = out_dir.join("commands").join(format!("{}.json", spec.name));
    if let Some(prev) = cached(root, &cache, spec, fingerprint) {
        return prev;
    }
    let dir = out_dir.join("artifacts");
    let artifact = dir.join(format!("command-{}-{}.log", spec.name, file_safe(fingerprint)));
    let mut r = Run {
        name: spec.name.clone(),
        run: spec.run.clone(),
        line: spec.line,
        lane: spec.lane,
        exit: None,
        timed_out: false,
        error: None,
        duration_ms: 0,
        artifact: String::new(),
        tail: String::new(),
        fingerprint: fingerprint.to_string(),
        cached: false,
        failing: Vec::new(),
        failed_at: None,
    };
    // Both streams go to one file, so their interleaving is kept and nothing can block on a pipe.
    let captured = fs::create_dir_all(&dir).and_then(|_| {
        let path = crate::text::sibling(&artifact, "out");
        let file = File::options().read(true).write(true).create_new(true).open(&path)?;
        Ok((path, file))
    });
    r.artifact = relative(root, &artifact);
    let (out_path, out_file) = match captured {
        Ok((p, f)) => (Some(p), Some(f)),
        Err(e) => {
            note(&mut r, format!("cannot capture output in {}: {e}", dir.display()));
            (None, None)
        }
    };
    let t0 = Instant::now();
    let started = execute(root, spec, out_file.as_ref());
    match &started {
        Ok((status, timed_out)) => {
            let (status, timed_out) = (*status, *timed_out);
            r.timed_out = timed_out;
            r.exit = if timed_out { None } else { status.code() };
            if let (false, None, Some(sig)) = (timed_out, status.code(), status.signal()) {
                note(&mut r, format!("killed by signal {sig}"));
            }
        }
        Err(e) => note(&mut r, format!("cannot start `sh -c {}`: {e}", spec.run)),
    }
    r.duration_ms = t0.elapsed().as_millis() as u64;
    if let (Some(path), Some(mut file)) = (out_path, out_file) {
        r.tail = tail(&mut file).unwrap_or_default();
        if let Err(e) = write_artifact(&artifact, &header(spec, &r), &mut file) {
            note(&mut r, format!("cannot write {}: {e}", artifact.display()));
        }
        let _ = fs::remove_file(path);
    }
    if r.exit.is_some_and(|c| c != 0)
        && let Ok(bytes) = fs::read(&artifact)
    {
        let output = String::from_utf8_lossy(&bytes);
        (r.failing, r.failed_at) = (failing_tests(&output), failure_site(root, &output));
    }
    // a command that never started says nothing about the content: nothing to cache
    if started.is_ok() {
        let json = serde_json::to_vec_pretty(&r).expect("a run serializes");
        if let Err(e) =
            fs::create_dir_all(out_dir.join("commands")).and_then(|_| crate::text::write_atomic(&cache, &json))
        {
            note(&mut r, format!("cannot write {}: {e}", cache.display()));
        }
    }
    r
}

/// The cached run, if it is for the same command line and fingerprint and its artifact is still
/// there. Anything unreadable is no cache.
fn cached(root: &Path, cache: &Path, spec: &CommandSpec, fingerprint: &str) -> Option<Run> {
    let prev: Run = serde_json::from_slice(&fs::read(cache).ok()?).ok()?;
    let same = prev.name == spec.name && prev.run == spec.run && prev.fingerprint == fingerprint;
    let kept = !prev.artifact.is_empty() && root.join(&prev.artifact).is_file();
    if !same || !kept {
        return None;
    }
    // the cache and the captured output must tell the same story, or the command runs again
    let log = fs::read(root.join(&prev.artifact)).ok()?;
    let log = String::from_utf8_lossy(&log);
    let exit = prev.exit.map_or_else(|| "none".to_string(), |c| c.to_string());
    if !log.starts_with(&format!("$ {}\nexit: {exit}\n", prev.run)) {
        return None;
    }
    Some(Run { line: spec.line, lane: spec.lane, cached: true, ..prev })
}

/// Runs `sh -c`, its output into `out` (discarded without one); kills its process group after
/// the timeout. Returns the status and whether it timed out.
fn execute(root: &Path, spec: &CommandSpec, out: Option<&File>) -> io::Result<(ExitStatus, bool)> {
    let (stdout, stderr) = match out {
        Some(f) => (Stdio::from(f.try_clone()?), Stdio::from(f.try_clone()?)),
        None => (Stdio::null(), Stdio::null()),
    };
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(&spec.run)
        .current_dir(root)
        // a run leaves no Python bytecode behind: a cache written by one run, and a fix of the
        // same size saved within the same second, would run the old code in the next
        .env("PYTHONDONTWRITEBYTECODE", "1")
        // what decides which tests run is the repository's, never the caller's environment: the
        // same tree is judged the same whoever runs the check (options go in the command line)
        .env_remove("PYTEST_ADDOPTS")
        .env_remove("PYTEST_PLUGINS")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .process_group(0)
        .spawn()?;
    let deadline = Instant::now() + Duration::from_secs(spec.timeout_secs);
    let mut nap = Duration::from_millis(2);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok((status, false));
        }
        let now = Instant::now();
        if now >= deadline {
            return kill_group(&mut child).map(|s| (s, true));
        }
        std::thread::sleep(nap.min(deadline - now));
        nap = (nap * 2).min(Duration::from_millis(50));
    }
}

/// Kills the child's whole process group (it leads it), then reaps the child.
fn kill_group(child: &mut Child) -> io::Result<ExitStatus> {
    let group = format!("-{}", child.id());
    let killed = Command::new("kill")
        .args(["-KILL", "--", &group])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !killed.is_ok_and(|s| s.success()) {
        // no `kill` to reach the group: at least the shell itself goes
        let _ = child.kill();
    }
    child.wait()
}

/// Adds `problem` to the run's `error`.
fn note(r: &mut Run, problem: String) {
    r.error = Some(match r.error.take() {
        Some(e) => format!("{e}; {problem}"),
        None => problem,
    });
}

fn header(spec: &CommandSpec, r: &Run) -> String {
    let exit = r.exit.map_or_else(|| "none".to_string(), |c| c.to_string());
    let timed_out = if r.timed_out { format!("yes, after {} s", spec.timeout_secs) } else { "no".into() };
    let error = r.error.as_ref().map_or_else(String::new, |e| format!("error: {e}\n"));
    format!(
        "$ {}\nexit: {exit}\nseconds: {:.3}\ntimed out: {timed_out}\n{error}---\n",
        spec.run,
        r.duration_ms as f64 / 1000.0
    )
}

/// Writes `header` then the captured output to `path` through a temporary file and a rename.
fn write_artifact(path: &Path, header: &str, output: &mut File) -> io::Result<()> {
    let tmp = crate::text::sibling(path, "tmp");
    let written = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(header.as_bytes())?;
        output.seek(SeekFrom::Start(0))?;
        io::copy(output, &mut f)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// The last [`TAIL_LINES`] lines of the output, made printable.
fn tail(out: &mut File) -> io::Result<String> {
    let len = out.seek(SeekFrom::End(0))?;
    let start = len.saturating_sub(TAIL_BYTES);
    out.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    out.read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes).replace("\r\n", "\n");
    let mut lines: Vec<&str> = text.trim_end_matches('\n').split('\n').collect();
    if start > 0 && lines.len() > 1 {
        lines.remove(0); // cut mid-line
    }
    let keep = &lines[lines.len().saturating_sub(TAIL_LINES)..];
    Ok(keep.join("\n").chars().map(|c| if c.is_control() && c != '\n' && c != '\t' { '\u{FFFD}' } else { c }).collect())
}

/// At most 12 characters of the fingerprint, safe in a file name.
fn file_safe(fingerprint: &str) -> String {
    fingerprint
        .chars()
        .take(12)
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' })
        .collect()
}

/// `path` relative to `root` with `/` separators (as given when it is not under `root`).
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).ok().map(Path::to_path_buf).or_else(|| {
        let (root, parent) = (root.canonicalize().ok()?, path.parent()?.canonicalize().ok()?);
        Some(parent.strip_prefix(root).ok()?.join(path.file_name()?))
    });
    match rel {
        Some(rel) => rel
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        None => path.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, run: &str) -> CommandSpec {
        CommandSpec {
            name: name.into(),
            run: run.into(),
            stages: vec![],
            lane: Lane::Fast,
            timeout_secs: 60,
            technique: None,
            line: 7,
        }
    }

    fn read(root: &Path, rel: &str) -> String {
        fs::read_to_string(root.join(rel)).unwrap()
    }

    #[test]
    fn a_passing_command_keeps_its_output() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let r = run(root, Path::new("analysis/andon"), &spec("t", "echo hello; echo oops >&2"), "0123456789abcdef");
        assert!(r.passed(), "{r:?}");
        assert_eq!((r.exit, r.timed_out, r.error.as_deref(), r.cached), (Some(0), false, None, false));
        assert_eq!((r.name.as_str(), r.line, r.lane), ("t", 7, Lane::Fast));
        assert_eq!(r.artifact, "analysis/andon/artifacts/command-t-0123456789ab.log");
        assert_eq!(r.tail, "hello\noops");
        let log = read(root, &r.artifact);
        assert!(log.starts_with("$ echo hello; echo oops >&2\nexit: 0\nseconds: "), "{log}");
        assert!(log.contains("timed out: no\n---\nhello\noops\n"), "{log}");
        let saved: Run = serde_json::from_str(&read(root, "analysis/andon/commands/t.json")).unwrap();
        assert_eq!(saved, r);
        // no temporary files are left behind
        let names: Vec<_> = fs::read_dir(root.join("analysis/andon/artifacts")).unwrap().collect();
        assert_eq!(names.len(), 1);
        // an absolute output directory under the root gives the same relative artifact
        let r = run(root, &root.join("analysis/andon"), &spec("u", "true"), "f");
        assert_eq!(r.artifact, "analysis/andon/artifacts/command-u-f.log");
    }

    #[test]
    fn a_failing_command_reports_its_exit_and_tail() {
        let dir = tempfile::tempdir().unwrap();
        let r = run(dir.path(), Path::new("out"), &spec("t", "echo bad thing; exit 3"), "fp");
        assert_eq!((r.exit, r.passed(), r.timed_out, r.error.as_deref()), (Some(3), false, false, None));
        assert!(r.tail.contains("bad thing"), "{r:?}");
        assert!(read(dir.path(), &r.artifact).contains("exit: 3\n"));
    }

    #[test]
    fn the_tail_is_the_last_lines_made_printable() {
        let dir = tempfile::tempdir().unwrap();
        let cmd = "i=0; while [ $i -lt 30 ]; do i=$((i+1)); echo line $i; done; printf 'a\\033[31mb\\tc\\r\\n'";
        let r = run(dir.path(), Path::new("out"), &spec("t", cmd), "fp");
        let lines: Vec<&str> = r.tail.lines().collect();
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!((lines[0], lines[19]), ("line 12", "a\u{FFFD}[31mb\tc"));
    }

    /// Whether process `pid` is gone (or a zombie waiting to be reaped).
    fn dead(pid: &str) -> bool {
        match fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat.rsplit(')').next().is_some_and(|s| s.trim_start().starts_with('Z')),
        }
    }

    #[test]
    fn a_timeout_kills_the_whole_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let t0 = Instant::now();
        let r = run(root, Path::new("out"), &CommandSpec { timeout_secs: 1, ..spec("t", "sleep 5") }, "fp");
        assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
        assert_eq!((r.exit, r.timed_out, r.passed()), (None, true, false), "{r:?}");
        assert!(read(root, &r.artifact).contains("timed out: yes, after 1 s"));

        // a grandchild in the background is killed too
        let cmd = "echo started; sh -c 'echo $$ > grandchild.pid; exec sleep 5' & wait";
        let t0 = Instant::now();
        let r = run(root, Path::new("out"), &CommandSpec { timeout_secs: 1, ..spec("g", cmd) }, "fp");
        assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
        assert!(r.timed_out && r.tail.contains("started"), "{r:?}");
        let pid = read(root, "grandchild.pid").trim().to_string();
        let t1 = Instant::now();
        while !dead(&pid) && t1.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(dead(&pid), "grandchild {pid} outlived the timeout");
    }

    #[test]
    fn the_same_command_on_the_same_fingerprint_is_cached() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let out = Path::new("out");
        let count = || read(root, "counter").lines().count();
        let s = spec("t", "echo x >> counter; echo ran");
        let first = run(root, out, &s, "fp1");
        assert_eq!((first.cached, count()), (false, 1));
        let again = run(root, out, &CommandSpec { line: 9, lane: Lane::Slow, ..s.clone() }, "fp1");
        assert_eq!((again.cached, count()), (true, 1));
        assert_eq!((again.line, again.lane), (9, Lane::Slow), "the spec's place and lane are current");
        assert_eq!(Run { cached: false, line: 7, lane: Lane::Fast, ..again }, first);
        // another fingerprint runs again
        assert_eq!((run(root, out, &s, "fp2").cached, count()), (false, 2));
        // so does a changed command line
        let changed = CommandSpec { run: "echo x >> counter; echo ran again".into(), ..s.clone() };
        assert_eq!((run(root, out, &changed, "fp2").cached, count()), (false, 3));
        assert_eq!((run(root, out, &changed, "fp2").cached, count()), (true, 3));
        // and a missing artifact
        let r = run(root, out, &changed, "fp2");
        fs::remove_file(root.join(&r.artifact)).unwrap();
        assert_eq!((run(root, out, &changed, "fp2").cached, count()), (false, 4));
    }

    #[test]
    fn a_corrupt_cache_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let s = spec("t", "echo x >> counter");
        run(root, Path::new("out"), &s, "fp");
        fs::write(root.join("out/commands/t.json"), "{ not json").unwrap();
        let r = run(root, Path::new("out"), &s, "fp");
        assert_eq!((r.cached, r.passed(), r.error.as_deref()), (false, true, None), "{r:?}");
        assert_eq!(read(root, "counter").lines().count(), 2);
        assert!(serde_json::from_str::<Run>(&read(root, "out/commands/t.json")).is_ok());
    }

    #[test]
    fn a_cache_that_disagrees_with_its_output_runs_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let s = spec("t", "echo x >> counter; exit 1");
        assert!(!run(root, Path::new("out"), &s, "fp").passed());
        // someone turns the failure into a pass in the cache
        let cache = root.join("out/commands/t.json");
        let forged = read(root, "out/commands/t.json").replace("\"exit\": 1", "\"exit\": 0");
        assert_ne!(forged, read(root, "out/commands/t.json"));
        fs::write(&cache, forged).unwrap();
        let r = run(root, Path::new("out"), &s, "fp");
        assert_eq!((r.cached, r.exit), (false, Some(1)), "{r:?}");
        assert_eq!(read(root, "counter").lines().count(), 2);
    }

    #[test]
    fn output_that_cannot_be_kept_is_an_error_beside_a_valid_result() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("out"), "a file where the output directory should be").unwrap();
        let r = run(root, Path::new("out"), &spec("t", "exit 4"), "fp");
        assert_eq!((r.exit, r.timed_out), (Some(4), false));
        assert!(r.error.as_deref().is_some_and(|e| e.contains("cannot capture output")), "{r:?}");

        // killed by a signal: no exit code, and the artifact says why
        let r = run(root, Path::new("elsewhere"), &spec("t", "kill -TERM $$"), "fp");
        assert_eq!((r.exit, r.timed_out), (None, false));
        assert_eq!(r.error.as_deref(), Some("killed by signal 15"));
        assert!(read(root, &r.artifact).contains("error: killed by signal 15\n---\n"));

        // a root that is not a directory: nothing can start there
        let r = run(&root.join("out"), Path::new("out"), &spec("t", "true"), "fp");
        assert_eq!((r.exit, r.timed_out, r.passed()), (None, false, false));
        assert!(r.error.as_deref().is_some_and(|e| e.contains("cannot start")), "{r:?}");
    }

    #[test]
    fn applicable_filters_by_stage_and_lane_in_config_order() {
        let mk = |name: &str, stages: &[&str], lane| CommandSpec {
            stages: stages.iter().map(|s| s.to_string()).collect(),
            lane,
            ..spec(name, "true")
        };
        let specs = [
            mk("slow-core", &["core"], Lane::Slow),
            mk("all", &[], Lane::Fast),
            mk("core", &["core", "x"], Lane::Fast),
            mk("slow-api", &["api"], Lane::Slow),
            mk("slow-all", &[], Lane::Slow),
        ];
        let names = |stage, slow| applicable(&specs, stage, slow).iter().map(|s| s.name.as_str()).collect::<Vec<_>>();
        assert_eq!(names("core", false), ["all", "core"]);
        assert_eq!(names("core", true), ["slow-core", "all", "core", "slow-all"]);
        assert_eq!(names("api", false), ["all"]);
        assert_eq!(names("api", true), ["all", "slow-api", "slow-all"]);
    }
}

/// How many tests a check's output says ran (skipped ones not counted), summed over the runners
/// it reports: unittest's `Ran N tests`, pytest's closing `N passed, M failed in …s`, cargo
/// test's `test result: … N passed; M failed`, node's `# tests N` / `ℹ tests N` less its skipped
/// and todo ones, jest's `Tests: … N total` and vitest's `Tests  N passed (M)` (passed and failed).
/// `None` when it reports no count.
pub fn tests_ran(output: &str) -> Option<u64> {
    let count = |l: &str, word: &str| -> u64 {
        // the number right before `word` (`3 passed`, `3 passed;`)
        let words: Vec<&str> = l.split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == '|').collect();
        words
            .windows(2)
            .filter(|w| w[1].trim_end_matches(['.', ':']) == word)
            .filter_map(|w| w[0].parse::<u64>().ok())
            .sum()
    };
    let (mut found, mut total) = (false, 0u64);
    let (mut node_tests, mut node_skipped) = (None::<u64>, 0u64);
    for line in output.lines() {
        let l = line.trim().trim_matches('=').trim();
        let timed = l.split_whitespace().rev().find(|w| w.ends_with('s')).is_some_and(|w| {
            w.trim_end_matches('s').parse::<f64>().is_ok() || w.trim_end_matches("ms").parse::<f64>().is_ok()
        });
        if let Some(n) = l.strip_prefix("Ran ").and_then(|r| r.split_whitespace().next()?.parse::<u64>().ok()) {
            (found, total) = (true, total + n);
        } else if (l.starts_with("OK") || l.starts_with("FAILED")) && l.contains("skipped=") {
            // unittest's closing line: its `Ran N` counted the skipped ones
            let skipped = l
                .split("skipped=")
                .nth(1)
                .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next().and_then(|n| n.parse::<u64>().ok()));
            total = total.saturating_sub(skipped.unwrap_or(0));
        } else if l.starts_with("test result: ") {
            (found, total) = (true, total + count(l, "passed") + count(l, "failed"));
        } else if (l.starts_with("Tests:") || l.starts_with("Tests ")) && (l.contains("passed") || l.contains("failed"))
        {
            let n = count(l, "passed") + count(l, "failed");
            (found, total) = (true, total + n);
        } else if let Some(rest) = l.strip_prefix("# tests ").or_else(|| l.strip_prefix("ℹ tests ")) {
            node_tests = Some(node_tests.unwrap_or(0) + rest.trim().parse::<u64>().unwrap_or(0));
        } else if let Some(rest) =
            ["# skip ", "# skipped ", "# todo ", "ℹ skipped ", "ℹ todo "].iter().find_map(|p| l.strip_prefix(p))
        {
            node_skipped += rest.trim().parse::<u64>().unwrap_or(0);
        } else if timed && l.contains(" in ") && (l.contains("passed") || l.contains("failed") || l.contains("error")) {
            // pytest's closing line
            let n =
                ["passed", "failed", "error", "errors", "xfailed", "xpassed"].iter().map(|w| count(l, w)).sum::<u64>();
            (found, total) = (true, total + n);
        } else if timed && l.starts_with("no tests ran in ") {
            found = true;
        }
    }
    if let Some(n) = node_tests {
        (found, total) = (true, total + n.saturating_sub(node_skipped));
    }
    found.then_some(total)
}

/// Whether `run` is a lone invocation of a test runner that always reports how many tests ran
/// (unittest, pytest, `node --test`, `cargo test`): its exit 0 without a count is no pass.
pub fn reports_counts(run: &str) -> bool {
    let words: Vec<&str> = run.split_whitespace().collect();
    let chained = run.contains(|c: char| ";&|`$()".contains(c));
    let unittest = words.windows(2).any(|w| w == ["-m", "unittest"]);
    let pytest = words.iter().any(|w| matches!(*w, "pytest" | "py.test"));
    let node = words.first() == Some(&"node") && words.contains(&"--test");
    let cargo = words.windows(2).any(|w| w[0] == "cargo" && matches!(w[1], "test" | "nextest"));
    !chained && (unittest || pytest || node || cargo)
}

/// Whether a check's output shows test `name` passing, where its runner names the tests that
/// pass: node's TAP `ok N - name` and spec `✔ name`, cargo test's `test name ... ok`. `None` where
/// the output names no passing test by name (unittest, pytest `-q`: only counts).
pub fn seen_passing(output: &str, name: &str) -> Option<bool> {
    let mut names_passes = false;
    for line in output.lines() {
        let l = line.trim();
        let passed = if let Some(rest) = l.strip_prefix("ok ") {
            Some(rest.split_once(" - ").map_or(rest, |(_, n)| n).trim())
        } else if let Some(rest) = l.strip_prefix("test ").and_then(|r| r.strip_suffix(" ... ok")) {
            Some(rest.trim())
        } else {
            l.strip_prefix("✔ ").map(|rest| rest.rsplit_once(" (").map_or(rest, |(n, _)| n).trim())
        };
        if let Some(p) = passed {
            names_passes = true;
            if p == name || crate::text::short(p) == name {
                return Some(true);
            }
        }
    }
    names_passes.then_some(false)
}

/// The tests a check's output names as failing: unittest's `FAIL:`/`ERROR:` headers, pytest's
/// `FAILED path::name`, cargo test's `test name ... FAILED`, node's `not ok N - name` and the
/// `✕ name` of jest and vitest. Each once, in order.
pub fn failing_tests(output: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in output.lines() {
        let l = line.trim();
        let name = if let Some(rest) = l.strip_prefix("FAIL: ").or_else(|| l.strip_prefix("ERROR: ")) {
            Some(rest.trim())
        } else if let Some(rest) = l.strip_prefix("FAILED ").filter(|r| !r.starts_with('(')) {
            // pytest's `FAILED path::name - why`; unittest's closing `FAILED (failures=1)` is not a test
            Some(rest.split(" - ").next().unwrap_or(rest).trim())
        } else if let Some(rest) = l.strip_prefix("test ").and_then(|r| r.strip_suffix(" ... FAILED")) {
            Some(rest.trim())
        } else if let Some(rest) = l.strip_prefix("not ok ") {
            Some(rest.split_once(" - ").map_or(rest, |(_, n)| n).trim())
        } else {
            l.strip_prefix("✕ ").map(|rest| rest.trim())
        };
        if let Some(n) = name.filter(|n| !n.is_empty())
            && !out.iter().any(|o| o == n)
        {
            out.push(crate::text::short(n).to_string());
        }
    }
    out
}

/// Where the first failing test of a run's `output` failed, as a repo-relative `(path, line)` of a
/// file under `root`: a Python traceback's `File "…", line N` (the innermost frame in a test
/// file, else the first in the repository), pytest's `path.py:N:`, a Rust panic's `at path:N:C`,
/// a JavaScript stack frame or TAP `location: '…:N:C'`. `None` when the output names no file of
/// the repository.
pub fn failure_site(root: &Path, output: &str) -> Option<(String, u32)> {
    let root_real = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let inside = |p: &str| -> Option<String> {
        let path = Path::new(p);
        let rel = if path.is_absolute() {
            let real = fs::canonicalize(path).ok()?;
            real.strip_prefix(&root_real).ok()?.to_string_lossy().replace('\\', "/")
        } else {
            p.trim_start_matches("./").to_string()
        };
        let skip = ["node_modules/", "site-packages/", ".venv/", "target/", "/rustc/"];
        (root.join(&rel).is_file() && !skip.iter().any(|s| rel.contains(s))).then_some(rel)
    };
    let mut first: Option<(String, u32)> = None;
    for line in output.lines() {
        let l = line.trim();
        let site = if let Some(rest) = l.strip_prefix("File \"") {
            // Python: File "path", line N, in name
            rest.split_once("\", line ")
                .and_then(|(p, n)| Some((p.to_string(), n.split(',').next()?.trim().parse().ok()?)))
        } else if let Some(at) = l.find("panicked at ") {
            let rest = &l[at + 12..];
            let mut parts = rest.trim_end_matches(':').rsplitn(3, ':');
            let (_, line, path) = (parts.next(), parts.next()?.parse().ok(), parts.next());
            line.zip(path.map(str::to_string)).map(|(n, p)| (p, n))
        } else {
            js_or_pytest_site(l)
        };
        let Some((path, n)) = site else { continue };
        let Some(rel) = inside(&path) else { continue };
        let test_like = rel.contains("test");
        if test_like {
            return Some((rel, n));
        }
        first.get_or_insert((rel, n));
    }
    first
}

/// A `path:line[:col]` site in one output line: a JavaScript stack frame `(path:N:C)` or
/// `at path:N:C`, TAP's `location: 'path:N:C'`, pytest's `path.py:N: Error`.
fn js_or_pytest_site(l: &str) -> Option<(String, u32)> {
    let l = l.trim_start_matches("at ").trim_start_matches("location: ");
    let candidate = match l.rfind('(') {
        Some(i) if l.ends_with(')') => &l[i + 1..l.len() - 1],
        _ => l.split_whitespace().next()?,
    };
    let candidate = candidate.trim_matches(['\'', '"']).trim_start_matches("file://");
    let mut parts = candidate.split(':');
    let path = parts.next()?;
    let line: u32 = parts.next()?.parse().ok()?;
    let known = [".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".mts", ".cts", ".rs"];
    known.iter().any(|e| path.ends_with(e)).then(|| (path.to_string(), line))
}

#[cfg(test)]
mod site_tests {
    use super::failure_site;

    #[test]
    fn the_first_failing_test_is_found_in_each_runners_output() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        for f in ["tests/test_ops.py", "calc/ops.py", "test/split.test.js", "src/lib.rs"] {
            std::fs::create_dir_all(root.join(f).parent().unwrap()).unwrap();
            std::fs::write(root.join(f), "x\n").unwrap();
        }
        let abs = std::fs::canonicalize(root).unwrap().display().to_string();
        let py = format!(
            "FAIL: test_add (tests.test_ops.AddTest.test_add)\nTraceback (most recent call last):\n  File \"{abs}/tests/test_ops.py\", line 8, in test_add\n    self.assertEqual(add(2, 3), 5)\n"
        );
        assert_eq!(failure_site(root, &py), Some(("tests/test_ops.py".into(), 8)));
        let pytest = "tests/test_ops.py:12: AssertionError\n";
        assert_eq!(failure_site(root, pytest), Some(("tests/test_ops.py".into(), 12)));
        let node = format!("not ok 1 - split\n  ---\n  location: '{abs}/test/split.test.js:4:3'\n");
        assert_eq!(failure_site(root, &node), Some(("test/split.test.js".into(), 4)));
        let rust = "thread 'tests::split' panicked at src/lib.rs:10:5:\nassertion failed\n";
        assert_eq!(failure_site(root, rust), Some(("src/lib.rs".into(), 10)));
        assert_eq!(failure_site(root, "error: something\n"), None);
    }
}

#[cfg(test)]
mod ran_tests {
    use super::tests_ran;

    #[test]
    fn each_runner_says_how_many_tests_ran() {
        let unittest =
            "..F\n======\nFAIL: test_add (t.T.test_add)\n------\nRan 3 tests in 0.001s\n\nFAILED (failures=1)\n";
        assert_eq!(tests_ran(unittest), Some(3));
        assert_eq!(tests_ran("ss\n------\nRan 2 tests in 0.001s\n\nOK (skipped=2)\n"), Some(0));
        assert_eq!(tests_ran("=========== 1 failed, 2 passed, 1 skipped in 0.12s ===========\n"), Some(3));
        assert_eq!(tests_ran("2 passed in 0.01s\n"), Some(2));
        assert_eq!(tests_ran("no tests ran in 0.01s\n"), Some(0));
        let cargo = "test result: ok. 2 passed; 0 failed; 1 ignored; 0 measured\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored\n";
        assert_eq!(tests_ran(cargo), Some(4));
        let tap = "ok 1 - add\nnot ok 2 - split\n# tests 3\n# suites 0\n# pass 1\n# fail 1\n# skipped 1\n# todo 0\n";
        assert_eq!(tests_ran(tap), Some(2));
        assert_eq!(tests_ran("ℹ tests 4\nℹ pass 4\nℹ skipped 0\n"), Some(4));
        assert_eq!(tests_ran("Tests:       1 failed, 1 skipped, 2 passed, 4 total\n"), Some(3));
        assert_eq!(tests_ran("      Tests  1 failed | 2 passed (3)\n"), Some(3));
        // an exit before any test ran reports nothing
        assert_eq!(tests_ran(""), None);
        assert_eq!(tests_ran("Traceback (most recent call last):\nSystemExit: 0\n"), None);
    }
}
