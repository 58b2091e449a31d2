//! Shared helpers: run the real binary, copy fixtures to scratch directories.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn andon() -> Command {
    Command::new(env!("CARGO_BIN_EXE_andon"))
}

pub fn run(args: &[&str], dir: &Path) -> Output {
    andon().args(args).current_dir(dir).output().expect("andon runs")
}

/// Runs andon and asserts it succeeded, naming the arguments and stderr when it did not.
pub fn run_ok(args: &[&str], dir: &Path) -> Output {
    let out = run(args, dir);
    assert!(
        out.status.success(),
        "andon {args:?} failed ({:?}):\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Copies a fixture into a fresh temporary directory (so `.andon/` never lands in the source tree).
pub fn scratch(name: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixtures().join(name), t.path());
    t
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Facts of one relation as JSON objects.
pub fn facts(dir: &Path, relation: &str) -> Vec<serde_json::Value> {
    let out = run(&["facts", "--relation", relation, "--format", "json", "--quiet"], dir);
    assert!(out.status.success(), "facts failed: {}", String::from_utf8_lossy(&out.stderr));
    json(&out)["facts"].as_array().unwrap().clone()
}
