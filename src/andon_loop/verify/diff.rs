//! The applied change. With git it is the working tree as git would commit it (tracked edits and
//! untracked, unignored files alike) against the proposal's base: the base commit, or the tree
//! the loop last proved (the base commit plus the proven, recorded fixes), kept as a commit object
//! under `refs/andon/proven`. Its hash identifies it, so authority raised for one diff lapses when
//! the diff changes (R76). Without git: the contents of the declared write-set.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use super::super::error::Error;

/// The ref that keeps the proven trees reachable (each one's parent is the tree before it).
pub const PROVEN_REF: &str = "refs/andon/proven";

fn git(root: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().ok()?;
    out.status.success().then_some(out.stdout)
}

/// `args` then `-- .` and one `:(exclude)` pathspec per `exclude`d directory.
fn with_pathspecs<'a>(args: &[&'a str], exclude: &'a [String]) -> Vec<String> {
    let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    v.extend(["--".to_string(), ".".to_string()]);
    v.extend(exclude.iter().map(|e| format!(":(exclude){e}")));
    v
}

/// The working tree as git would commit it, in a private index: a copy of the repository's own
/// (so unchanged files are not read again) with every change under the root added, untracked
/// unignored files included, andon's cache and own directories left out. The repository's index
/// is never touched; the copy is removed on drop.
pub struct Snapshot {
    root: PathBuf,
    index: PathBuf,
    exclude: Vec<String>,
}

impl Snapshot {
    /// The working tree at `root` now, without the `exclude`d directories (`dir/` prefixes).
    /// `Err` when `root` is not in a git repository or git fails.
    pub fn take(root: &Path, exclude: &[String]) -> Result<Snapshot, Error> {
        static N: AtomicU32 = AtomicU32::new(0);
        let own = git(root, &["rev-parse", "--git-path", "index"]).ok_or(Error::NotGit)?;
        let own = root.join(String::from_utf8_lossy(&own).trim());
        let index = std::env::temp_dir().join(format!(
            "andon-index-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        if own.is_file() {
            copy_index(&own, &index).map_err(Error::io(&own))?;
        }
        let mut exclude = exclude.to_vec();
        exclude.push(".andon/".into());
        let snap = Snapshot { root: root.to_path_buf(), index, exclude };
        // every tracked file's edit or deletion, then the new files but build output and
        // dependency trees nobody committed (the directories the index walk skips)
        snap.add(&with_pathspecs(&["add", "-u"], &snap.exclude))?;
        let mut args = with_pathspecs(&["add", "-A", "--ignore-errors"], &[]);
        args.extend(snap.exclude.iter().map(|e| format!(":(exclude){e}")));
        args.extend(crate::index::walk::VENDORED_DIRS.iter().map(|d| format!(":(exclude,glob)**/{d}/**")));
        snap.add(&args)?;
        Ok(snap)
    }

    /// `git add` on the private index: a pathspec that names an ignored directory (andon's own,
    /// often ignored) is no error.
    fn add(&self, args: &[String]) -> Result<(), Error> {
        match self.run(args) {
            Err(Error::Git { stderr, .. })
                if stderr.contains("ignored by one of your .gitignore files") && !stderr.contains("fatal:") =>
            {
                Ok(())
            }
            r => r.map(|_| ()),
        }
    }

    /// Runs git on the private index; `Err` carries git's message.
    fn run(&self, args: &[String]) -> Result<Vec<u8>, Error> {
        let out = Command::new("git")
            .arg("-C")
            .arg(&self.root)
            .args(args)
            .env("GIT_INDEX_FILE", &self.index)
            .output()
            .map_err(Error::GitMissing)?;
        if !out.status.success() {
            return Err(Error::Git {
                args: args.join(" "),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(out.stdout)
    }

    /// `git diff --cached` of the snapshot against `base` with `args`, under the root, without
    /// the excluded directories.
    pub fn diff(&self, base: &str, args: &[&str]) -> Result<Vec<u8>, Error> {
        let mut a = vec!["diff", "--cached", "--no-color", "--no-renames"];
        a.extend(args);
        a.push(base);
        self.run(&with_pathspecs(&a, &self.exclude))
    }

    /// The stable hash of the change against `base`.
    pub fn hash(&self, base: &str) -> Result<String, Error> {
        let bytes = self.diff(base, &["--binary", "--relative"])?;
        Ok(format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&bytes)))
    }

    /// Keeps the snapshot as a commit object whose parent is `base`, reachable from
    /// [`PROVEN_REF`]: the tree the loop proved. Returns the commit's id.
    pub fn keep(&self, base: &str, message: &str) -> Result<String, Error> {
        let tree = String::from_utf8_lossy(&self.run(&["write-tree".to_string()])?).trim().to_string();
        let ident = [("GIT_AUTHOR_NAME", "andon"), ("GIT_AUTHOR_EMAIL", "andon@localhost")];
        let out = Command::new("git")
            .arg("-C")
            .arg(&self.root)
            .args(["commit-tree", &tree, "-p", base, "-m", message])
            .envs(ident)
            .envs([("GIT_COMMITTER_NAME", "andon"), ("GIT_COMMITTER_EMAIL", "andon@localhost")])
            .output()
            .map_err(Error::GitSpawn)?;
        if !out.status.success() {
            return Err(Error::Git {
                args: "commit-tree".into(),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        let commit = String::from_utf8_lossy(&out.stdout).trim().to_string();
        git(&self.root, &["update-ref", PROVEN_REF, &commit]).ok_or(Error::UpdateRef)?;
        Ok(commit)
    }
}

/// Copies the index at `from` to `to` with its modification time: git trusts an entry's cached
/// stat only when the entry is older than the index file, so a copy that looked newer would hide
/// an edit made in the second the index was written (git's "racy clean" rule).
fn copy_index(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::copy(from, to)?;
    let modified = std::fs::metadata(from)?.modified()?;
    std::fs::File::options().write(true).open(to)?.set_modified(modified)
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.index);
    }
}

/// The base a new proposal is applied on: `base` (the tree fixes are judged from) when it is a
/// commit here, else HEAD. `None` without git or a commit.
pub fn proposal_base(root: &Path, base: Option<&str>) -> Option<String> {
    match base {
        Some(c) if git(root, &["cat-file", "-e", &format!("{c}^{{commit}}")]).is_some() => Some(c.to_string()),
        _ => head_commit(root),
    }
}

/// Appends each file's name and contents to `bytes` (a name as [`crate::text::path_text`] writes
/// it names its own file; other text is taken as it is).
fn add_files(bytes: &mut Vec<u8>, root: &Path, files: &[String]) {
    for f in files {
        bytes.extend(f.as_bytes());
        bytes.push(0);
        let path = crate::text::os_path(f).unwrap_or_else(|| f.into());
        bytes.extend(std::fs::read(root.join(path)).unwrap_or_default());
        bytes.push(0);
    }
}

/// A stable hash of the change at `root` relative to `base` (or of `write_set` without git).
/// Paths under `exclude` (andon's own reports and ledger, as `dir/` prefixes) are not the change.
pub fn hash(root: &Path, base: Option<&str>, write_set: &[String], exclude: &[String]) -> String {
    if let Some(b) = base.filter(|b| *b != "none")
        && let Ok(h) = Snapshot::take(root, exclude).and_then(|s| s.hash(b))
    {
        return h;
    }
    let mut bytes: Vec<u8> = Vec::new();
    add_files(&mut bytes, root, write_set);
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&bytes))
}

/// The tracked change against `base` without the `exclude`d directories, as a binary diff.
fn tracked(root: &Path, base: &str, exclude: &[String]) -> Option<Vec<u8>> {
    let args = with_pathspecs(&["diff", "--no-color", "--binary", "--relative", base], exclude);
    git(root, &args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// The untracked, unignored files at `root`, sorted, without andon's cache and the `exclude`d
/// directories.
fn untracked(root: &Path, exclude: &[String]) -> Vec<String> {
    let out = git(root, &["ls-files", "-z", "--others", "--exclude-standard"]).unwrap_or_default();
    let mut files: Vec<String> = out
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(crate::text::path_text)
        .filter(|f| !f.starts_with(".andon/") && !exclude.iter().any(|e| f.starts_with(e.as_str())))
        .collect();
    files.sort();
    files
}

/// A seal on the working tree while checks re-run: the tracked change against `HEAD` plus the
/// contents of `untracked` (the untracked files there were before, when given; else those there
/// are now, which are returned). Files a check creates (caches, build output) do not break the
/// seal; a check that edits a tracked file or one of the change's new files does. `None` without
/// git.
pub fn seal(root: &Path, exclude: &[String], before: Option<&[String]>) -> Option<(String, Vec<String>)> {
    let mut bytes = tracked(root, "HEAD", exclude)?;
    let files = before.map_or_else(|| untracked(root, exclude), <[String]>::to_vec);
    add_files(&mut bytes, root, &files);
    Some((format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&bytes)), files))
}

/// The commit HEAD points at, when `root` is in a git repository.
pub fn head_commit(root: &Path) -> Option<String> {
    let out =
        Command::new("git").arg("-C").arg(root).args(["rev-parse", "--verify", "--quiet", "HEAD"]).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string()).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A git repository holding `a.py` (`x = 1`), committed.
    fn committed() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::write(d.join("a.py"), "x = 1\n").unwrap();
        let ids = ["-c", "user.name=a", "-c", "user.email=a@example.invalid", "-c", "commit.gpgsign=false"];
        for args in [&["init", "-q"][..], &["add", "-A"], &["commit", "-qm", "base"]] {
            assert!(Command::new("git").arg("-C").arg(d).args(ids).args(args).output().unwrap().status.success());
        }
        t
    }

    #[test]
    fn an_edit_in_the_second_the_index_was_written_is_seen_later() {
        let t = committed();
        let d = t.path();
        // same size, most likely the same second as the index: only git's racy rule catches it
        std::fs::write(d.join("a.py"), "x = 2\n").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let snap = Snapshot::take(d, &[]).unwrap();
        let listing = String::from_utf8(snap.diff("HEAD", &["--name-only"]).unwrap()).unwrap();
        assert_eq!(listing.trim(), "a.py");
    }

    #[test]
    fn new_files_count_but_build_output_nobody_committed_does_not() {
        let t = committed();
        let d = t.path();
        std::fs::create_dir_all(d.join("pkg/__pycache__")).unwrap();
        std::fs::write(d.join("pkg/__pycache__/a.cpython-312.pyc"), b"\0\x01").unwrap();
        std::fs::write(d.join("pkg/b.py"), "y = 1\n").unwrap();
        let snap = Snapshot::take(d, &[]).unwrap();
        let listing = String::from_utf8(snap.diff("HEAD", &["--name-status"]).unwrap()).unwrap();
        assert_eq!(listing.trim(), "A\tpkg/b.py");
        // the repository's own index is untouched
        let o = Command::new("git").arg("-C").arg(d).args(["diff", "--cached", "--name-only"]).output().unwrap();
        assert!(o.stdout.is_empty());
    }
}
