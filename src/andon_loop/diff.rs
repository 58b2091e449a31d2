//! The applied change: a hash that identifies it, so authority raised for one diff lapses when the
//! diff changes (R76). With git: the working tree against the proposal's base commit, untracked
//! files included; without: the contents of the declared write-set.

use std::path::Path;
use std::process::Command;

fn git(root: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().ok()?;
    out.status.success().then_some(out.stdout)
}

/// The tracked change against `base` without the `exclude`d directories, as a binary diff.
fn tracked(root: &Path, base: &str, exclude: &[String]) -> Option<Vec<u8>> {
    let mut args: Vec<String> =
        ["diff", "--no-color", "--binary", "--relative", base, "--", "."].iter().map(|s| s.to_string()).collect();
    args.extend(exclude.iter().map(|e| format!(":(exclude){e}")));
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
    let mut bytes: Vec<u8> = Vec::new();
    match base.filter(|b| *b != "none").and_then(|b| tracked(root, b, exclude)) {
        Some(diff) => {
            bytes.extend(diff);
            add_files(&mut bytes, root, &untracked(root, exclude));
        }
        None => add_files(&mut bytes, root, write_set),
    }
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&bytes))
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
