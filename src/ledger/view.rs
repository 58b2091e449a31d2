//! `ledger.md` as a view of the log: how it stands against the log (current, behind an
//! interrupted write, missing, or different), and the temporary files a killed writer of the
//! ledger left in its directory.

use std::path::{Path, PathBuf};

use super::{Header, Record, State, apply, render};

/// How `ledger.md` stands against the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum View {
    /// It is the log's rendering.
    Current,
    /// It is the rendering of the log's first `shown` records, the end of an earlier write: the
    /// writer was stopped after the log's append and before the view's rename.
    Behind { shown: u64, total: u64 },
    /// There is no `ledger.md`.
    Missing,
    /// It differs from the log's rendering first at its line `line` and is no earlier rendering
    /// of the log: the view or the log was edited.
    Differs { line: u64 },
}

impl View {
    /// Rendering the log again loses nothing: the view is only behind or missing.
    pub fn renders_again(&self) -> bool {
        matches!(self, View::Behind { .. } | View::Missing)
    }
}

/// How the view text `have` (`None`: no file) stands against the log: its header, the state its
/// records fold into, and the records.
pub fn stand(have: Option<&str>, header: &Header, state: &State, records: &[Record]) -> View {
    let Some(have) = have else { return View::Missing };
    let want = render(header, state, records);
    if have == want {
        return View::Current;
    }
    if let Some(shown) = last_shown(have)
        && let Some(prefix) = write_prefix(records, shown)
        && prefix.len() < records.len()
    {
        let mut earlier = State::default();
        for r in prefix {
            let _ = apply(&mut earlier, r.seq, &r.event);
        }
        if render(header, &earlier, prefix) == have {
            return View::Behind { shown, total: records.last().map_or(0, |r| r.seq) };
        }
    }
    let at = have.lines().zip(want.lines()).position(|(a, b)| a != b);
    View::Differs { line: at.unwrap_or(have.lines().count().min(want.lines().count())) as u64 + 1 }
}

/// The last record a view shows: the number of its History section's last line (0 when the
/// section is empty); `None` when it has no History section.
pub(super) fn last_shown(view: &str) -> Option<u64> {
    let (_, history) = view.rsplit_once("## History\n")?;
    let Some(last) = history.lines().rev().find(|l| !l.is_empty()) else { return Some(0) };
    last.split_once(". ").and_then(|(n, _)| n.parse().ok())
}

/// The records up to `seq` when `seq` ends a write (no record of the write follows it).
fn write_prefix(records: &[Record], seq: u64) -> Option<&[Record]> {
    let n = records.iter().take_while(|r| r.seq <= seq).count();
    let prefix = &records[..n];
    (prefix.last().is_none_or(|r| r.seq == seq && r.more == 0)).then_some(prefix)
}

/// Removes the temporary files (`.<file>.<pid>[.<n>].tmp`) that writers of the log or its view
/// left in `dir` when they were killed, the caller holding the ledger's lock. Only a file whose
/// writer is known to be dead is removed: never a live process's, nor any where liveness cannot
/// be told. Returns the files removed.
pub fn remove_dead_temporaries(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(writer_pid) else { continue };
        if is_dead(pid) && std::fs::remove_file(e.path()).is_ok() {
            removed.push(e.path());
        }
    }
    removed.sort();
    removed
}

/// The process id in the name of a ledger writer's temporary file: `.ledger.md.<pid>.<n>.tmp`,
/// `.ledger.jsonl.<pid>.tmp`, `.ledger.torn-<at>.jsonl.<pid>.<n>.tmp`.
fn writer_pid(name: &str) -> Option<u32> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (rest, last) = inner.rsplit_once('.')?;
    let (file, pid) = match rest.rsplit_once('.') {
        Some((file, pid)) if is_number(pid) && is_number(last) => (file, pid),
        _ => (rest, last),
    };
    let ours = file == super::LOG_FILE
        || file == super::HUMAN_FILE
        || (file.starts_with("ledger.torn-") && file.ends_with(".jsonl"));
    if ours { pid.parse().ok() } else { None }
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Whether process `pid` is known to have exited: no `/proc/<pid>` where `/proc` lists this
/// process. Elsewhere nothing is known, and nothing is removed.
fn is_dead(pid: u32) -> bool {
    pid != std::process::id() && Path::new("/proc/self").exists() && !Path::new("/proc").join(pid.to_string()).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_ledger_writers_temporaries_name_a_writer() {
        assert_eq!(writer_pid(".ledger.md.4242.0.tmp"), Some(4242));
        assert_eq!(writer_pid(".ledger.md.4242.tmp"), Some(4242));
        assert_eq!(writer_pid(".ledger.jsonl.17.3.tmp"), Some(17));
        assert_eq!(writer_pid(".ledger.torn-1700000000.jsonl.9.1.tmp"), Some(9));
        for other in [".index.bin.tmp.12", ".status.md.12.0.tmp", "ledger.md", ".ledger.md.x.tmp", ".lock"] {
            assert_eq!(writer_pid(other), None, "{other}");
        }
    }

    fn stage(seq: u64, more: u32) -> Record {
        let event = super::super::Event::StageRecorded {
            stage: format!("s{seq}"),
            root: format!("src/s{seq}"),
            confidence: "exact".into(),
            source: "manifest".into(),
            incoming: Vec::new(),
            outgoing: Vec::new(),
        };
        Record { seq, at: 1, event, more, prev: None }
    }

    fn rendered(h: &Header, records: &[Record]) -> String {
        let mut state = State::default();
        for r in records {
            apply(&mut state, r.seq, &r.event).unwrap();
        }
        render(h, &state, records)
    }

    #[test]
    fn a_view_is_behind_only_when_it_renders_the_end_of_an_earlier_write() {
        let h =
            Header { andon_ledger: 1, andon: "0".into(), rules: "r".into(), repo: "shop".into(), root_commit: None };
        // writes: [1, 2], [3]
        let records = vec![stage(1, 1), stage(2, 0), stage(3, 0)];
        let all = rendered(&h, &records);
        let mut state = State::default();
        for r in &records {
            apply(&mut state, r.seq, &r.event).unwrap();
        }
        let stand_of = |have: Option<&str>| stand(have, &h, &state, &records);
        assert_eq!(stand_of(Some(&all)), View::Current);
        assert_eq!(stand_of(None), View::Missing);
        assert_eq!(stand_of(Some(&rendered(&h, &records[..2]))), View::Behind { shown: 2, total: 3 });
        // record 1 alone never was a view: its write went on
        assert!(matches!(stand_of(Some(&rendered(&h, &records[..1]))), View::Differs { .. }));
        // the rendering of an earlier write, edited, is no earlier rendering
        let edited = rendered(&h, &records[..2]).replace("src/s2", "src/x2");
        assert!(matches!(stand_of(Some(&edited)), View::Differs { .. }));
        // another header's rendering differs at its first line
        let other = Header { repo: "shop-renamed".into(), ..h.clone() };
        assert_eq!(stand_of(Some(&rendered(&other, &records))), View::Differs { line: 1 });
    }

    #[test]
    fn a_live_writers_temporary_stays() {
        let t = tempfile::tempdir().unwrap();
        let mine = t.path().join(format!(".ledger.md.{}.0.tmp", std::process::id()));
        std::fs::write(&mine, "x").unwrap();
        assert_eq!(remove_dead_temporaries(t.path()), Vec::<PathBuf>::new());
        assert!(mine.exists());
    }
}
