//! The ledger is a chain. Each record carries the digest of the log before it: its header and
//! every record up to it, each in its canonical form (the JSON andon writes). So a record
//! inserted, copied, reordered, edited or removed breaks a link.
//!
//! The head (the digest of the whole log) is anchored outside the log, in the git repository that
//! holds the ledger's directory, under [`LEDGER_REF`], beside the proven trees, and shown in
//! `ledger.md`. A well-formed record appended by hand, with a correct link even, leaves the log
//! past the head the ref names; so does a truncation leave it short of it.
//!
//! Each write moves the ref first, naming the head before the write and the head after it, then
//! appends. A writer stopped between the two leaves the log at the ref's `before`: an
//! interrupted write, not a forgery.

use std::path::Path;
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use super::{Event, Header, Issue, LedgerError, Log, Record};

/// The digest of an input the loop takes in (an artifact file's bytes, as read): `sha256:<hex>`.
pub fn input_digest(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    let mut s = String::with_capacity(7 + 64);
    s.push_str("sha256:");
    for b in d.iter() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The ref that anchors the ledger's head, beside `refs/andon/proven`.
pub const LEDGER_REF: &str = "refs/andon/ledger";

/// The running digest of a log: fed its header, then each record in order.
#[derive(Clone)]
pub struct Chain(Sha256);

impl Chain {
    /// The chain of a log with `header` and no record yet.
    pub fn new(header: &Header) -> Chain {
        let mut c = Chain(Sha256::new());
        c.0.update(serde_json::to_string(header).expect("header serializes").as_bytes());
        c.0.update(b"\n");
        c
    }

    /// The chain over `header` then `records`.
    pub fn over(header: &Header, records: &[Record]) -> Chain {
        let mut c = Chain::new(header);
        for r in records {
            c.push(r);
        }
        c
    }

    /// The digest of the log so far: the link the next record carries, or the log's head.
    pub fn link(&self) -> String {
        let d = self.0.clone().finalize();
        let mut s = String::with_capacity(7 + 64);
        s.push_str("sha256:");
        for b in d.iter() {
            s.push_str(&format!("{b:02x}"));
        }
        s
    }

    /// Feeds one record's canonical line.
    pub fn push(&mut self, r: &Record) {
        self.0.update(serde_json::to_string(r).expect("record serializes").as_bytes());
        self.0.update(b"\n");
    }
}

/// Whether a ledger with `header` and `records` is linked: a chained format, or a record that
/// already carries a link (a ledger migrated by a `ledger_chained` record).
pub fn is_linked(header: &Header, records: &[Record]) -> bool {
    header.andon_ledger >= 2 || records.iter().any(|r| r.prev.is_some())
}

/// Every broken link of the parsed log: a record whose link is not the digest of the log before
/// it, a record without a link after the chain began, a link before it began.
pub fn broken_links(log: &Log) -> Vec<Issue> {
    let Some(h) = &log.header else { return Vec::new() };
    let mut chain = Chain::new(h);
    let mut began = h.andon_ledger >= 2;
    let mut issues = Vec::new();
    for (line, r) in &log.records {
        let line = *line;
        match &r.prev {
            Some(p) => {
                if !began && !matches!(r.event, Event::LedgerChained { .. }) {
                    issues.push(Issue {
                        line,
                        message: "a linked record before the `ledger_chained` record that begins the chain: written by hand".into(),
                    });
                }
                began = true;
                if *p != chain.link() {
                    issues.push(Issue {
                        line,
                        message: "the record's link is not the digest of the log before it: a record before it was inserted, copied, reordered, edited or removed; restore ledger.jsonl from a copy or version control".into(),
                    });
                }
            }
            None if began => issues.push(Issue {
                line,
                message: "the record carries no link to the log before it though the chain began: it was not written by andon".into(),
            }),
            None => {}
        }
        chain.push(r);
    }
    issues
}

/// The head as the ref anchors it: the last record's seq, the head after andon's last write, and
/// the head before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anchor {
    pub seq: u64,
    pub head: String,
    pub before: String,
}

impl Anchor {
    fn text(&self) -> String {
        format!("andon ledger head\nseq {}\nhead {}\nbefore {}\n", self.seq, self.head, self.before)
    }

    fn parse(text: &str) -> Option<Anchor> {
        let mut seq = None;
        let (mut head, mut before) = (None, None);
        for l in text.lines() {
            match l.split_once(' ') {
                Some(("seq", v)) => seq = v.parse().ok(),
                Some(("head", v)) => head = Some(v.to_string()),
                Some(("before", v)) => before = Some(v.to_string()),
                _ => {}
            }
        }
        Some(Anchor { seq: seq?, head: head?, before: before? })
    }
}

fn git(dir: &Path, args: &[&str], input: Option<&[u8]>) -> Option<Vec<u8>> {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir).args(args).stdout(Stdio::piped()).stderr(Stdio::null());
    cmd.stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = cmd.spawn().ok()?;
    if let Some(bytes) = input {
        use std::io::Write;
        child.stdin.take()?.write_all(bytes).ok()?;
    }
    let out = child.wait_with_output().ok()?;
    out.status.success().then_some(out.stdout)
}

/// Whether git tracks `file` (in the index of the repository around `file`'s nearest existing
/// ancestor): a tracked log missing from the work tree was removed, not never written.
pub fn tracked(file: &Path) -> bool {
    // the nearest ancestor that is a directory itself, not a link to one: git is asked where the
    // repository keeps the path, wherever a link on it leads now
    let real_dir = |d: &&Path| std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir());
    let Some(dir) = file.ancestors().skip(1).find(real_dir) else { return false };
    let Ok(rel) = file.strip_prefix(dir) else { return false };
    let rel = rel.to_string_lossy();
    git(dir, &["ls-files", "--error-unmatch", "--", &rel], None).is_some()
}

/// Whether `dir` is inside a git work tree (where the ref lives).
fn in_git(dir: &Path) -> bool {
    git(dir, &["rev-parse", "--is-inside-work-tree"], None).is_some_and(|o| o.starts_with(b"true"))
}

/// The anchor the ref holds for the ledger in `dir`; `None` outside git or where no write of
/// this andon set it (a fresh clone does not fetch `refs/andon/*`).
pub fn anchored(dir: &Path) -> Option<Anchor> {
    // a ledger directory removed whole is still asked of the repository that held it
    let dir = dir.ancestors().find(|d| d.is_dir())?;
    let bytes = git(dir, &["cat-file", "blob", LEDGER_REF], None)?;
    Anchor::parse(&String::from_utf8_lossy(&bytes))
}

/// The problem with a ledger that is gone from `dir` while the ref still anchors one: it was
/// removed outside andon (a fresh start would drop every halt and decision it held).
pub fn gone(dir: &Path) -> Option<Issue> {
    let a = anchored(dir).filter(|a| a.seq > 0)?;
    Some(Issue {
        line: 1,
        message: format!(
            "the ledger is gone from {}, but {LEDGER_REF} says andon's last write left {} records there (head {}): it was removed outside andon; restore it from a copy or version control, or, to start over on purpose, a person removes the ref (`git update-ref -d {LEDGER_REF}`)",
            dir.display(),
            a.seq,
            short(&a.head)
        ),
    })
}

/// Moves the ref to `a` (a blob holding it); nothing outside git.
pub fn anchor(dir: &Path, a: &Anchor) -> Result<(), LedgerError> {
    if !in_git(dir) {
        return Ok(());
    }
    let failed = || LedgerError::Anchor { dir: dir.to_path_buf() };
    let blob = git(dir, &["hash-object", "-w", "--stdin"], Some(a.text().as_bytes())).ok_or_else(failed)?;
    let blob = String::from_utf8_lossy(&blob).trim().to_string();
    git(dir, &["update-ref", LEDGER_REF, &blob], None).ok_or_else(failed)?;
    Ok(())
}

/// Where the log in `dir` (its `header` and `records`) stands against the ref: `None` when it
/// ends where andon's last write left it, or where a write stopped between the ref and the log
/// left it (the view, rendered last, shows no more than the log then), or when nothing anchors it;
/// else the problem. Without a ref, a view behind the log is a problem too: nothing vouches for
/// the records past it. `view_shows`: the last record `ledger.md` shows.
pub fn unanchored(dir: &Path, header: &Header, records: &[Record], view_shows: Option<u64>) -> Option<Issue> {
    let head = Chain::over(header, records).link();
    let last = records.last().map_or(0, |r| r.seq);
    let line_of = |seq: u64| records.iter().position(|r| r.seq > seq).map_or(1, |i| i as u64 + 2);
    match anchored(dir) {
        Some(a) if a.head == head => None,
        // the ref moved and the writer stopped before the log's append (and so before the view's)
        Some(a) if a.before == head && view_shows.is_some_and(|s| s <= last) => None,
        Some(a) if last > a.seq => Some(Issue {
            line: line_of(a.seq),
            message: format!(
                "records past andon's last write: {LEDGER_REF} ends the log at record {} and these were added outside andon; restore ledger.jsonl from a copy or version control",
                a.seq
            ),
        }),
        Some(a) => Some(Issue {
            line: line_of(last.min(a.seq).saturating_sub(1)),
            message: format!(
                "the log is not where andon's last write left it ({LEDGER_REF}: {} records, head {}): records were removed or changed outside andon; restore ledger.jsonl from a copy or version control",
                a.seq,
                short(&a.head)
            ),
        }),
        None => match view_shows {
            Some(shown) if shown >= last => None,
            _ if !is_linked(header, records) || !in_git(dir) => None,
            shown => Some(Issue {
                line: line_of(shown.unwrap_or(0)),
                message: format!(
                    "records past what ledger.md shows ({}) and no {LEDGER_REF} vouches for them: they were added outside andon; restore ledger.jsonl and ledger.md from a copy or version control",
                    shown.map_or("it is missing".to_string(), |s| format!("record {s}"))
                ),
            }),
        },
    }
}

/// A digest shortened for a message: its first 12 hex digits.
pub fn short(link: &str) -> &str {
    let hex = link.strip_prefix("sha256:").unwrap_or(link);
    &hex[..hex.len().min(12)]
}

/// The records whose base commit is not in the history of the repository at `root`: a proposal's
/// `base_commit` or a recorded base must be an ancestor of HEAD there, or a proof's commit an
/// earlier record of this log holds (kept under `refs/andon/proven`, which a clone does not
/// fetch). A log copied from another repository's, whole or in part, names commits this one never
/// had. Nothing is judged outside git, and in a shallow clone (whose history is cut, so a missing
/// commit proves nothing).
pub fn foreign_bases(root: &Path, records: &[Record]) -> Vec<Issue> {
    if !in_git(root)
        || git(root, &["rev-parse", "--is-shallow-repository"], None).is_some_and(|o| o.starts_with(b"true"))
    {
        return Vec::new();
    }
    foreign_commits(root, records)
}

/// Whether the log with `header` and `records` was written for another repository than the one at
/// `root`. A ledger that records its repository's root commit is judged by it: another root is an
/// integrity error (a copy of another repository's log), and its own root vouches for its
/// records' commits, which a squash merge or a shallow clone may leave out of this clone. A ledger
/// that records none (an older one) is judged by its records' base commits ([`foreign_bases`]).
pub fn foreign(root: &Path, header: &Header, records: &[Record]) -> Vec<Issue> {
    let Some(recorded) = header.root_commit.as_deref() else { return foreign_bases(root, records) };
    match super::repo_identity(root, "") {
        Some(mine) if mine != recorded => vec![Issue {
            line: 1,
            message: format!(
                "the ledger was created in the repository whose root commit is `{}`, and this one's is `{}`: it is another repository's log, copied here; restore this repository's ledger from version control",
                short(recorded),
                short(&mine)
            ),
        }],
        _ => Vec::new(),
    }
}

/// [`foreign_bases`] where git can tell.
fn foreign_commits(root: &Path, records: &[Record]) -> Vec<Issue> {
    let mut proven: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    let mut asked: Vec<(u64, &str)> = Vec::new();
    for r in records {
        match &r.event {
            Event::EvidenceRecorded { evidence } => proven.extend(evidence.commit.as_deref()),
            Event::ProposalRecorded { base_commit: c, .. } | Event::BaseRecorded { commit: c, .. }
                if is_commit_id(c) && !proven.contains(c.as_str()) =>
            {
                asked.push((r.seq, c.as_str()));
            }
            _ => {}
        }
    }
    let mut verdict: std::collections::BTreeMap<&str, bool> = std::collections::BTreeMap::new();
    let mut issues = Vec::new();
    for (seq, c) in asked {
        let ours = *verdict.entry(c).or_insert_with(|| {
            Command::new("git")
                .arg("-C")
                .arg(root)
                .args(["merge-base", "--is-ancestor", c, "HEAD"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
        if !ours {
            issues.push(Issue {
                line: seq + 1,
                message: format!(
                    "record {seq} names base commit `{}`, which is not in this repository's history (no ancestor of HEAD): it was written for another repository, or copied here; restore the ledger from version control",
                    short(c)
                ),
            });
        }
    }
    issues
}

/// Whether `s` is a full commit id (40 or 64 hex digits).
fn is_commit_id(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}
