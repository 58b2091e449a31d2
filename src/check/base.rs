//! `--base REF`: the same contracts judged on the tree of a git revision, so findings can be marked
//! new. The revision's files are written with git plumbing (`ls-tree` + `cat-file --batch`; the
//! repository, its index and its worktrees are never touched) into a scratch directory outside
//! the repository (inside it, the repository's own ignore files would hide the tree), indexed there
//! (reusing the current index for every unchanged file), judged, and removed.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::config::Config;
use crate::index::{self, IndexOptions, walk};

/// Removes the exported tree when dropped.
struct ExportedTree(PathBuf);

impl Drop for ExportedTree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

use super::Error;

fn git(root: &Path, args: &[&str]) -> Result<Vec<u8>, Error> {
    let out =
        Command::new("git").arg("-C").arg(root).args(args).stderr(Stdio::piped()).output().map_err(Error::NoGit)?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(Error::Git { args: args.join(" "), stderr });
    }
    Ok(out.stdout)
}

/// Writes the files of `rev` under `root` (the repository subdirectory `root` is) into `dest`.
fn export(root: &Path, rev: &str, dest: &Path) -> Result<(), Error> {
    let commit = git(root, &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")])
        .map_err(|_| Error::NotACommit { rev: rev.to_string(), root: root.to_path_buf() })?;
    let commit = String::from_utf8_lossy(&commit).trim().to_string();
    let listing = git(root, &["ls-tree", "-r", "-z", &commit, "--", "."])?;
    // Names keep their raw bytes (as the text form the index stores, mapped back to the file).
    let mut blobs: Vec<(String, PathBuf)> = Vec::new();
    for entry in listing.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let Some(tab) = entry.iter().position(|b| *b == b'\t') else { continue };
        let meta = String::from_utf8_lossy(&entry[..tab]);
        let path = crate::text::path_text(&entry[tab + 1..]);
        let mut parts = meta.split(' ');
        let (mode, kind, hash) = (parts.next(), parts.next(), parts.next());
        let plain = path.split('/').all(|c| !matches!(c, "" | "." | ".."));
        if kind == Some("blob") && matches!(mode, Some("100644" | "100755")) && plain {
            if let (Some(h), Some(file)) = (hash, walk::abs_path(dest, &path)) {
                blobs.push((h.to_string(), file));
            }
        }
    }
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(Error::NoGit)?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let hashes: Vec<String> = blobs.iter().map(|(h, _)| h.clone()).collect();
    let writer = std::thread::spawn(move || {
        for h in hashes {
            if writeln!(stdin, "{h}").is_err() {
                break;
            }
        }
    });
    let mut out = BufReader::new(child.stdout.take().expect("piped stdout"));
    for (_, file) in &blobs {
        let mut header = String::new();
        out.read_line(&mut header).map_err(Error::CatFile)?;
        let size: usize = header
            .split_whitespace()
            .nth(2)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| Error::CatFileHeader(header.trim().to_string()))?;
        let mut body = vec![0u8; size + 1];
        out.read_exact(&mut body).map_err(Error::CatFile)?;
        body.pop();
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|source| Error::Io { path: parent.to_path_buf(), source })?;
        }
        std::fs::write(file, body).map_err(|source| Error::Io { path: file.clone(), source })?;
    }
    let _ = writer.join();
    let _ = child.wait();
    Ok(())
}

/// The fingerprints of every finding the contracts of `cfg` produce on revision `rev`. A contract
/// that cannot be judged there (its selectors name files the revision lacks) contributes none, so
/// all its current findings count as new. The tree is exported under the system's temporary
/// directory.
/// The repo-relative paths the working tree changed since revision `rev`: tracked files that
/// differ from it (added, modified, deleted, renamed) and files git does not track and does not
/// ignore.
pub fn changed(root: &Path, rev: &str) -> Result<std::collections::BTreeSet<String>, Error> {
    let commit = git(root, &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")])
        .map_err(|_| Error::NotACommit { rev: rev.to_string(), root: root.to_path_buf() })?;
    let commit = String::from_utf8_lossy(&commit).trim().to_string();
    let mut out = std::collections::BTreeSet::new();
    for args in [
        vec!["diff", "--name-only", "--no-renames", "--relative", "-z", commit.as_str(), "--"],
        vec!["ls-files", "--others", "--exclude-standard", "-z"],
    ] {
        let listed = git(root, &args)?;
        out.extend(
            listed.split(|b| *b == 0).filter(|p| !p.is_empty()).map(|p| String::from_utf8_lossy(p).into_owned()),
        );
    }
    Ok(out)
}

pub fn fingerprints(
    root: &Path,
    rev: &str,
    cfg: &Config,
    opts: &IndexOptions,
    budget: super::datalog::Budget,
) -> Result<BTreeSet<String>, Error> {
    fingerprints_in(&std::env::temp_dir(), root, rev, cfg, opts, budget)
}

/// [`fingerprints`], the tree exported under `scratch`.
fn fingerprints_in(
    scratch: &Path,
    root: &Path,
    rev: &str,
    cfg: &Config,
    opts: &IndexOptions,
    budget: super::datalog::Budget,
) -> Result<BTreeSet<String>, Error> {
    let root = std::fs::canonicalize(root).map_err(|source| Error::Io { path: root.to_path_buf(), source })?;
    let name = root.file_name().map(|n| n.to_os_string()).unwrap_or_else(|| "repo".into());
    let scratch_dir = scratch.join(format!("andon-base-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch_dir);
    let scratch = ExportedTree(scratch_dir);
    let dest = scratch.0.join(name);
    std::fs::create_dir_all(&dest).map_err(|source| Error::Io { path: dest.clone(), source })?;
    export(&root, rev, &dest)?;
    // Unchanged files are reused from the current index (segments are keyed by path and content);
    // where it cannot be copied, the base is indexed from scratch.
    let _ = index::copy(&root, &dest);
    index::update(&dest, opts, &|_, _| {}).map_err(|source| Error::IndexBase { rev: rev.to_string(), source })?;
    let idx = index::load(&dest).map_err(Error::LoadBase)?.ok_or(Error::BaseNotWritten)?;
    super::fingerprints(&idx, &dest, cfg, budget).map_err(|e| Error::Base(Box::new(e)))
}

#[cfg(all(test, unix))]
mod tests {
    use std::process::Command;
    use std::time::Duration;

    use super::*;
    use crate::index::walk::WalkOptions;

    /// Runs git in `dir` with a fixed identity, asserting success.
    fn git_ok(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(["-c", "user.name=andon", "-c", "user.email=andon@example.invalid", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    #[test]
    fn a_fifo_at_the_current_index_hangs_nothing() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("repo");
        std::fs::create_dir_all(d.join("src/app/core")).unwrap();
        std::fs::write(d.join("src/app/__init__.py"), "").unwrap();
        std::fs::write(d.join("src/app/core/__init__.py"), "import app\n").unwrap();
        std::fs::write(d.join("pyproject.toml"), "[project]\nname = \"app\"\nversion = \"0.1.0\"\n").unwrap();
        let toml = "[[contract]]\nname = \"c\"\nkind = \"forbidden\"\nfrom = [\"src/app/core/**\"]\nto = [\"src/app/__init__.py\"]\n";
        std::fs::write(d.join("andon.toml"), toml).unwrap();
        git_ok(&d, &["init", "-q"]);
        git_ok(&d, &["add", "-A"]);
        git_ok(&d, &["commit", "-qm", "base"]);
        let ipath = index::index_path(&d);
        std::fs::create_dir_all(ipath.parent().unwrap()).unwrap();
        if !Command::new("mkfifo").arg(&ipath).status().is_ok_and(|s| s.success()) {
            eprintln!("skipped: mkfifo is not available");
            return;
        }
        let cfg = Config::load(&d).unwrap();
        let opts =
            IndexOptions { walk: WalkOptions::standard(), max_file_size: 1 << 20, threads: Some(1), rebuild: false };
        let scratch = t.path().join("scratch");
        std::fs::create_dir_all(&scratch).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(fingerprints_in(&scratch, &d, "HEAD", &cfg, &opts, Default::default()));
        });
        let got = rx.recv_timeout(Duration::from_secs(10)).expect("--base does not hang on a FIFO index");
        assert_eq!(got.map(|f| f.len()).map_err(|e| e.to_string()), Ok(1), "the base is judged, on a cold index");
    }
}
