//! Whether a ledger is there: the one place that tells a ledger never written from one that
//! cannot be read. A ledger is absent only when nothing is at its path (no entry: `lstat` says
//! so, not a failed open through a link), git tracks no log there, and the ref anchors none.
//! Anything else at its path that is not a readable log is a problem with the ledger: a link that
//! loops or leads nowhere, a file where the directory belongs, a directory that lacks the log git
//! tracks.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use super::{Issue, LOG_FILE, chain};

/// What is at a ledger's path.
#[derive(Debug)]
pub enum Presence {
    /// Nothing: the loop never ran here.
    Absent,
    /// A log file to read.
    There,
    /// Something that is no readable ledger: the problem.
    Unreadable(Issue),
}

fn issue(message: String) -> Issue {
    Issue { line: 1, message }
}

fn problem(message: String) -> Presence {
    Presence::Unreadable(issue(message))
}

/// What is at the ledger directory `dir`.
pub fn presence(dir: &Path) -> Presence {
    let log = dir.join(LOG_FILE);
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == ErrorKind::NotFound => match broken_ancestor(dir) {
            Some(i) => Presence::Unreadable(i),
            None => missing(dir, &log),
        },
        Err(e) => {
            problem(format!("{}: cannot be reached ({e}); the ledger is there but cannot be read", dir.display()))
        }
        Ok(m) => match followed(dir, &m, "the ledger's directory") {
            Err(i) => Presence::Unreadable(i),
            Ok(m) if !m.is_dir() => problem(format!(
                "{}: a file where the ledger's directory belongs; restore the ledger from version control",
                dir.display()
            )),
            Ok(_) => match fs::symlink_metadata(&log) {
                Err(e) if e.kind() == ErrorKind::NotFound => missing(dir, &log),
                Err(e) => problem(format!("{}: cannot be read ({e})", log.display())),
                Ok(m) => match followed(&log, &m, "the ledger's log") {
                    Err(i) => Presence::Unreadable(i),
                    Ok(m) if m.is_file() => Presence::There,
                    Ok(_) => problem(format!(
                        "{}: not a regular file; restore the ledger from version control",
                        log.display()
                    )),
                },
            },
        },
    }
}

/// Nothing at `log` (or at its directory `dir`): absent, unless git tracks the log or the ref
/// anchors a ledger there.
fn missing(dir: &Path, log: &Path) -> Presence {
    if chain::tracked(log) {
        return problem(format!(
            "{}: missing, but git tracks it: the ledger was removed from the work tree; restore it (`git checkout -- {}`)",
            log.display(),
            log.display()
        ));
    }
    match chain::gone(dir) {
        Some(issue) => Presence::Unreadable(issue),
        None => Presence::Absent,
    }
}

/// The metadata behind `path` (whose own is `m`), a symbolic link followed; `Err` says why a link
/// leads nowhere.
fn followed(path: &Path, m: &fs::Metadata, what: &str) -> Result<fs::Metadata, Issue> {
    if !m.file_type().is_symlink() {
        return Ok(m.clone());
    }
    fs::metadata(path).map_err(|e| {
        let how = if e.raw_os_error() == Some(libc_eloop()) { "loops" } else { "leads nowhere" };
        issue(format!(
            "{}: {what} is a symbolic link that {how} ({e}); restore the ledger from version control",
            path.display()
        ))
    })
}

/// The nearest ancestor of `dir` that is there, when it is a symbolic link that leads nowhere or
/// no directory: then `dir` is unreachable, not absent.
fn broken_ancestor(dir: &Path) -> Option<Issue> {
    for a in dir.ancestors().skip(1) {
        let Ok(m) = fs::symlink_metadata(a) else { continue };
        return match followed(a, &m, "a directory above the ledger") {
            Err(i) => Some(i),
            Ok(m) if !m.is_dir() => {
                Some(issue(format!("{}: a file where a directory above the ledger belongs", a.display())))
            }
            Ok(_) => None,
        };
    }
    None
}

#[cfg(unix)]
fn libc_eloop() -> i32 {
    libc::ELOOP
}

#[cfg(not(unix))]
fn libc_eloop() -> i32 {
    -1
}
