//! What changed how fixes are judged since the base: the tree the loop last proved (a gap closed
//! on a verified fix), or the base it recorded (the tree it first saw, HEAD after commits that
//! change nothing about judging, the tree a person accepted). A commit never moves the base by
//! itself: the change being judged is everything since the base, commits included.
//!
//! Judging is what [`judged`] names: andon's settings and the files a `[[command]]` runs, a test
//! runner's configuration, the tests that existed at the base (removed or skipped). When the
//! working tree changes any of it, the loop holds for a person before any gap vanishes or any
//! proof rests on it (exit 11); commits that change none of it only move the base to HEAD.

use std::path::Path;
use std::process::Command;

use super::verify::{diff, fix, judged};
use crate::config::Config;
use crate::ledger::{self, Event, JudgedFile, State};

/// How the working tree stands against the base.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Drift {
    /// Outside git, or nothing to say: fixes are judged as before.
    Clean,
    /// No base is recorded yet: the tree the loop first sees (HEAD) becomes it.
    NoBase { head: String },
    /// Commits since the base change nothing about judging: the base moves to HEAD.
    Moved { head: String, commits: Vec<String> },
    /// The working tree (commits included) changes how fixes are judged since `base`.
    Changed(Change),
}

/// A judging change: its id, the base, the commits since, the files and why, and its digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub id: String,
    pub base: String,
    pub commits: Vec<String>,
    pub files: Vec<JudgedFile>,
    pub fingerprint: String,
}

impl Change {
    /// The event that records it.
    pub fn event(&self) -> Event {
        Event::JudgingChanged {
            id: self.id.clone(),
            base: self.base.clone(),
            commits: self.commits.clone(),
            files: self.files.clone(),
            fingerprint: self.fingerprint.clone(),
        }
    }

    /// What the loop says of it, in one line.
    pub fn summary(&self) -> String {
        let files: Vec<String> = self.files.iter().map(|f| format!("`{}` {}", f.path, f.why)).collect();
        let commits = match self.commits.len() {
            0 => "in the working tree".to_string(),
            _ => format!("in commit(s) {} and the working tree", self.commits.join("; ")),
        };
        format!(
            "since `{}`, {commits}, how fixes are judged changed: {}",
            &self.base[..self.base.len().min(12)],
            files.join("; ")
        )
    }
}

/// The trees fixes may be judged from, newest first: the trees the loop proved (a gap closed on a
/// verified fix; `true`) and the recorded base (`false`), by their records' order.
pub fn candidates(state: &State, records: &[ledger::Record]) -> Vec<(String, bool)> {
    let mut out: Vec<(u64, String, bool)> = records
        .iter()
        .filter_map(|r| match &r.event {
            Event::GapClosed { evidence, .. } => Some((r.seq, state.evidence.get(evidence)?.commit.clone()?, true)),
            _ => None,
        })
        .collect();
    out.extend(state.base.iter().map(|(seq, c)| (*seq, c.clone(), false)));
    out.sort_by_key(|a| std::cmp::Reverse(a.0));
    out.into_iter().map(|(_, c, proven)| (c, proven)).collect()
}

/// The tree fixes are judged from: the newest candidate ([`candidates`]) that is a commit here and,
/// for a proven tree, whose proven change is still in the working tree (a proven fix undone — a
/// reset, a stash — is no base to build on: the one before it is). `None` where there is none.
pub fn base_of(root: &Path, cfg: &Config, state: &State, records: &[ledger::Record]) -> Option<String> {
    let own = super::own_paths(cfg);
    let snap = std::cell::OnceCell::new();
    base_in(root, state, records, || snap.get_or_init(|| diff::Snapshot::take(root, &own).ok()).as_ref())
}

/// [`base_of`], with the working tree's snapshot taken by `snap` only when a proven tree is a
/// candidate (a step with no proof yet takes none for it).
fn base_in<'s>(
    root: &Path,
    state: &State,
    records: &[ledger::Record],
    snap: impl Fn() -> Option<&'s diff::Snapshot>,
) -> Option<String> {
    candidates(state, records)
        .into_iter()
        .find(|(c, proven)| is_commit(root, c) && (!proven || snap().is_none_or(|s| still_applied(root, s, c))))
        .map(|(c, _)| c)
}

/// Whether the working tree (`snap`) still holds the change the proven tree `c` made on its
/// parent: every file it changed still differs from the parent's.
fn still_applied(root: &Path, snap: &diff::Snapshot, c: &str) -> bool {
    let parent = format!("{c}^");
    let Some(made) = git(root, &["diff", "--name-only", "--no-renames", &parent, c]) else { return true };
    let now: std::collections::BTreeSet<String> = snap
        .diff(&parent, &["--name-only"])
        .map(|b| String::from_utf8_lossy(&b).lines().map(str::to_string).collect())
        .unwrap_or_default();
    made.lines().all(|f| now.contains(f))
}

/// How the working tree at `root` stands against the base of the ledger's `state`.
pub fn drift(root: &Path, cfg: &Config, state: &State, records: &[ledger::Record]) -> Drift {
    let Some(head) = diff::head_commit(root) else { return Drift::Clean };
    // one snapshot of the working tree serves the whole check
    let own = super::own_paths(cfg);
    let snap = std::cell::OnceCell::new();
    let taken = || snap.get_or_init(|| diff::Snapshot::take(root, &own).ok()).as_ref();
    let Some(base) = base_in(root, state, records, taken) else {
        return Drift::NoBase { head };
    };
    let Some(Ok(change)) = taken().map(|s| fix::change_in(s, &base)) else { return Drift::Clean };
    let files = judged_files(&judged::of_change(root, cfg, &base, &change));
    let commits = commits_since(root, &base);
    if files.is_empty() {
        if commits.is_empty() || head == base {
            return Drift::Clean;
        }
        // the commits alone: HEAD becomes the base only when they change nothing about judging
        let committed = head_change(root, &base, &head);
        return match committed.map(|c| judged_files(&judged::of_change(root, cfg, &base, &c))) {
            Some(f) if f.is_empty() => Drift::Moved { head, commits },
            _ => Drift::Clean,
        };
    }
    let mut digest = Vec::new();
    for f in &files {
        digest.extend(f.path.as_bytes());
        digest.push(0);
        digest.extend(std::fs::read(root.join(&f.path)).unwrap_or_default());
        digest.push(0);
    }
    digest.extend(base.as_bytes());
    let fingerprint = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&digest));
    Drift::Changed(Change { id: format!("J-{}", &fingerprint[..8]), base, commits, files, fingerprint })
}

/// The files of a judged change and why, one list (definitions, andon's state, tests).
fn judged_files(j: &judged::Judged) -> Vec<JudgedFile> {
    let mut out: Vec<JudgedFile> =
        j.definition.iter().map(|(p, why)| JudgedFile { path: p.clone(), why: why.clone() }).collect();
    for t in &j.tests {
        let path = t.split(':').next().unwrap_or(t).to_string();
        out.push(JudgedFile { path, why: format!("loses a test that existed at the base ({t})") });
    }
    out
}

/// The change between two commits, as an applied change (names and statuses).
fn head_change(root: &Path, base: &str, head: &str) -> Option<fix::AppliedChange> {
    let out = git(root, &["diff", "--name-status", "--no-renames", "--relative", base, head])?;
    let files = out
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(st, p)| (st.chars().next().unwrap_or('M').to_string(), p.to_string()))
        .collect();
    Some(fix::AppliedChange { base: base.into(), hash: String::new(), files })
}

/// The commits HEAD has that the base has not, newest first, as `short-id subject` (at most 20).
fn commits_since(root: &Path, base: &str) -> Vec<String> {
    let not = format!("^{base}");
    git(root, &["log", "--format=%h %s", "-n", "20", "HEAD", &not])
        .map(|o| o.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

fn is_commit(root: &Path, c: &str) -> bool {
    git(root, &["cat-file", "-e", &format!("{c}^{{commit}}")]).is_some()
}

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The tree a person accepts: the working tree, kept as a commit whose parent is `base`.
pub fn accepted_tree(root: &Path, cfg: &Config, base: &str) -> Result<String, super::Error> {
    let snap = diff::Snapshot::take(root, &super::own_paths(cfg))?;
    snap.keep(base, "andon: the tree whose judging a person accepted")
}
