//! Where a repository's ledger lives: `ledger_dir`, and the repository's own subdirectory of a
//! shared one, named by its identity.

use std::fs;
use std::path::{Path, PathBuf};

/// Where the ledger of a repository lives (`ledger_dir`, relative to the repository unless absolute).
///
/// A `ledger_dir` outside the repository may be shared by several repositories (R5): each one's
/// records go to its own log, in the subdirectory named by its identity ([`repo_identity`]), never
/// by its directory's name. Only a repository with no identity (no `repo_id`, no commit) keeps
/// its log in the shared directory itself, guarded by the log's recorded repository.
pub fn dir_of(root: &Path, settings: &crate::config::Settings) -> PathBuf {
    let d = &settings.ledger_dir.value;
    let dir = if d.is_absolute() { d.clone() } else { root.join(d) };
    if !outside(root, &dir) {
        return dir;
    }
    match repo_identity(root, &settings.repo_id.value) {
        Some(id) => dir.join(id),
        None => dir,
    }
}

/// Why the ledger of the repository at `root` may not be used: git tracks its log at the relative
/// `ledger_dir`, inside the repository, but a symbolic link on that path now leads out of it (to a
/// shared directory, where the log would be keyed anew, or anywhere else). Reading there would
/// find no ledger, or another one, and writing there would start one over. A link to a shared
/// directory that the repository never kept its log under is a shared ledger, keyed like one.
pub fn leads_out(root: &Path, settings: &crate::config::Settings) -> Option<String> {
    let d = &settings.ledger_dir.value;
    let log = root.join(d).join(super::LOG_FILE);
    (!d.is_absolute() && outside(root, &root.join(d)) && super::chain::tracked(&log)).then(|| {
        format!(
            "git tracks the ledger at `{}`, but a symbolic link on that path now leads out of the repository: restore the directory from version control",
            d.join(super::LOG_FILE).display()
        )
    })
}

/// Is `dir` outside the repository at `root` (compared without following links that may not
/// exist yet: `..` and `.` resolved in place, the root's own links resolved)?
pub fn outside(root: &Path, dir: &Path) -> bool {
    let lexical = |p: &Path| -> PathBuf {
        let mut out = PathBuf::new();
        for c in p.components() {
            match c {
                std::path::Component::ParentDir => {
                    out.pop();
                }
                std::path::Component::CurDir => {}
                other => out.push(other),
            }
        }
        out
    };
    let absolute =
        |p: &Path| if p.is_absolute() { p.to_path_buf() } else { std::env::current_dir().unwrap_or_default().join(p) };
    let root_real = fs::canonicalize(root).unwrap_or_else(|_| lexical(&absolute(root)));
    let dir = lexical(&absolute(dir));
    // the directory's nearest existing ancestor, with its links resolved
    let mut existing = dir.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.file_name().map(|n| n.to_os_string()), existing.parent().map(Path::to_path_buf)) {
            (Some(n), Some(p)) => {
                rest.push(n);
                existing = p;
            }
            _ => break,
        }
    }
    let mut real = fs::canonicalize(&existing).unwrap_or(existing);
    real.extend(rest.iter().rev());
    // where it really is: a link inside the repository to a shared directory is outside it
    !real.starts_with(&root_real)
}

/// The repository's stable identity: the `repo_id` setting, else its root commit (the oldest
/// commit with no parent, the smallest when several). `None` without either.
pub fn repo_identity(root: &Path, repo_id: &str) -> Option<String> {
    if !repo_id.is_empty() {
        return Some(repo_id.to_string());
    }
    static KNOWN: std::sync::Mutex<Vec<(PathBuf, Option<String>)>> = std::sync::Mutex::new(Vec::new());
    let key = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, id)) = known.iter().find(|(k, _)| *k == key) {
        return id.clone();
    }
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["rev-list", "--max-parents=0", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success());
    let id = out.and_then(|o| {
        String::from_utf8(o.stdout).ok()?.lines().map(str::trim).filter(|l| !l.is_empty()).min().map(str::to_string)
    });
    known.push((key, id.clone()));
    id
}
