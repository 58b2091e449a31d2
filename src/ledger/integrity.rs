//! Integrity of the ledger: [`inspect`] and [`check`] report every problem of the log and of
//! `ledger.md` against it; [`repair`] sets an interrupted write aside and nothing else.

use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};

use super::store::{before_cut, examine, io_err, lock, read_log, read_view, write_atomic, write_human};
use super::{
    HUMAN_FILE, Header, Issue, LOG_FILE, LedgerError, Log, Record, State, View, chain, parse_bytes, render, view,
};

/// An interrupted write `repair` set aside.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetAside {
    /// Lines set aside (first, last), counting the header as line 1.
    pub lines: (u64, u64),
    /// Where they were kept.
    pub kept_in: PathBuf,
}

/// What `repair` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Repaired {
    /// The interrupted last write, set aside.
    pub set_aside: Option<SetAside>,
    /// How `ledger.md` stood (behind the log, or missing) before it was rendered again.
    pub view: Option<View>,
    /// Temporary files of dead writers, removed.
    pub removed: Vec<PathBuf>,
}

impl Repaired {
    /// Anything was repaired.
    pub fn changed(&self) -> bool {
        self.set_aside.is_some() || self.view.is_some() || !self.removed.is_empty()
    }
}

/// Under the exclusive lock, repairs what an interrupted writer leaves and nothing else: an
/// interrupted last write (a torn last line, or whole lines of a write whose last record is
/// missing) is copied to `ledger.torn-<at>.jsonl` beside the log, fsynced, and only then cut from
/// it, and the view rendered again; a `ledger.md` behind the log or missing is rendered again;
/// temporary files of dead writers are removed. A ledger with any other problem (a hand edit of
/// the log, or a view that is no rendering of a whole log) is refused and left unchanged, because
/// only a person can say what an edit meant.
/// With no log, only the temporaries of dead writers are removed (a ledger being created whole
/// when its writer was stopped).
pub fn repair(dir: &Path, now: u64) -> Result<Repaired, LedgerError> {
    if !dir.is_dir() {
        return Ok(Repaired::default());
    }
    let lock = lock(dir)?;
    let path = dir.join(LOG_FILE);
    let Some(bytes) = read_log(dir)? else {
        return Ok(Repaired { removed: view::remove_dead_temporaries(dir), ..Repaired::default() });
    };
    let log = parse_bytes(&bytes);
    let (header, state, records) = repairable(&log, &path)?;
    // records past the head the ref anchors were not written by andon: never rendered into the view
    let shows = read_view(dir)?.as_deref().and_then(view::last_shown);
    if let Some(issue) = chain::unanchored(dir, &header, &records, shows) {
        return Err(LedgerError::NotRepairable { path, issue });
    }
    let stood = view::stand(read_view(dir)?.as_deref(), &header, &state, &records);
    // a view beside an interrupted write is rendered again whatever it shows; beside a whole log,
    // one that is no earlier rendering of it says the log or the view was edited
    if let (View::Differs { line }, None) = (&stood, log.torn) {
        let log_line = view_differs(*line, &records, &header, &state);
        return Err(LedgerError::ViewDisagrees { path: dir.join(HUMAN_FILE), line: *line, log_line });
    }
    let mut done = Repaired { removed: view::remove_dead_temporaries(dir), ..Repaired::default() };
    if let Some(cut) = log.torn {
        let offset = line_start(&bytes, cut);
        let last = bytes.split_inclusive(|b| *b == b'\n').count() as u64;
        let aside = dir.join(format!("ledger.torn-{now}.jsonl"));
        write_atomic(dir, &aside, &bytes[offset..])?;
        let f = OpenOptions::new().write(true).open(&path).map_err(io_err(&path))?;
        f.set_len(offset as u64).and_then(|_| f.sync_all()).map_err(io_err(&path))?;
        done.set_aside = Some(SetAside { lines: (cut, last), kept_in: aside });
    }
    if done.set_aside.is_some() || stood.renders_again() {
        write_human(dir, &render(&header, &state, &records))?;
        done.view = stood.renders_again().then_some(stood);
    }
    drop(lock);
    Ok(done)
}

/// The ledger `repair` would leave (header, state, records), or why it is refused: a problem
/// anywhere before the interrupted write of the log at `path`, or a torn header.
fn repairable(log: &Log, path: &Path) -> Result<(Header, State, Vec<Record>), LedgerError> {
    let (state, mut issues, records) = before_cut(log);
    if log.torn.is_some_and(|cut| cut <= 1) {
        issues.insert(
            0,
            Issue {
                line: 1,
                message: "the header itself is torn: remove the ledger and run `andon loop` again".into(),
            },
        );
    }
    match (issues.first(), &log.header) {
        (None, Some(h)) => Ok((h.clone(), state, records)),
        (first, _) => {
            let i = first.cloned().unwrap_or(Issue { line: 1, message: "no header".into() });
            Err(LedgerError::NotRepairable { path: path.to_path_buf(), issue: i })
        }
    }
}

/// The byte offset at which line `line` (1-based) of `bytes` starts.
fn line_start(bytes: &[u8], line: u64) -> usize {
    if line <= 1 {
        return 0;
    }
    bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(line as usize - 2).map_or(bytes.len(), |(i, _)| i + 1)
}

/// Where a view that differs from the log's rendering at its line `line` does in the log: the
/// log's line, when that line of the rendering is a record's history line.
fn view_differs(line: u64, records: &[Record], header: &Header, state: &State) -> Option<u64> {
    let want = render(header, state, records);
    let seq = want
        .lines()
        .nth(line as usize - 1)
        .and_then(|l| l.split_once(". "))
        .and_then(|(n, _)| n.parse::<u64>().ok())
        .filter(|s| records.iter().any(|r| r.seq == *s));
    seq.map(|s| s + 1)
}

/// What `andon ledger check` finds: every problem (line 0 is `ledger.md`), the state when there
/// is none, and how `ledger.md` stands against the log (when the log has a header).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inspection {
    pub issues: Vec<Issue>,
    pub state: Option<State>,
    pub view: Option<View>,
    /// The log as read, when it has a header: what later checks read, never parsed again.
    pub log: Option<(Header, Vec<Record>)>,
}

impl Inspection {
    /// The log is valid and only its view lags (behind or missing): `andon ledger repair` or the
    /// next `andon loop` renders it again.
    pub fn stale(&self) -> bool {
        self.view.as_ref().is_some_and(View::renders_again) && self.issues.iter().all(|i| i.line == 0)
    }
}

/// Every problem of the ledger in `dir`: the log's format and rules, and whether `ledger.md`
/// agrees with it. Err when there is no ledger.
pub fn check(dir: &Path) -> Result<(Vec<Issue>, Option<State>), LedgerError> {
    inspect(dir).map(|i| (i.issues, i.state))
}

/// The problems of the log itself, without how `ledger.md` stands against it, and its state
/// when it has none ([`Inspection`], the view's lag left out).
pub fn log_problems(dir: &Path) -> Result<Inspection, LedgerError> {
    let mut i = inspect(dir)?;
    // a view behind its log or missing is a stopped writer's, rendered again by the next loop; a
    // view that disagrees with the log says the log was edited
    if matches!(i.view, Some(View::Behind { .. } | View::Missing)) {
        i.issues.pop();
    }
    if !i.issues.is_empty() {
        i.state = None;
    }
    Ok(i)
}

/// [`check`], with how `ledger.md` stands against the log. The view is compared only with a log
/// that has no problem: an edited or unreadable record is reported on its own line, and `repair`
/// renders the view again when it sets an interrupted write aside.
pub fn inspect(dir: &Path) -> Result<Inspection, LedgerError> {
    let path = dir.join(LOG_FILE);
    let bytes = fs::read(&path).map_err(io_err(&path))?;
    let log = parse_bytes(&bytes);
    let (state, mut issues) = examine(&log);
    if let (true, Some(h)) = (issues.is_empty(), &log.header) {
        let records: Vec<Record> = log.records.iter().map(|(_, r)| r.clone()).collect();
        let shows = read_view(dir)?.as_deref().and_then(view::last_shown);
        issues.extend(chain::unanchored(dir, h, &records, shows));
    }
    let view = match log.header.as_ref().filter(|_| issues.is_empty()) {
        Some(h) => {
            let records: Vec<Record> = log.records.iter().map(|(_, r)| r.clone()).collect();
            Some(view::stand(read_view(dir)?.as_deref(), h, &state, &records))
        }
        None => None,
    };
    if let Some(m) = view.as_ref().and_then(view_issue) {
        issues.push(Issue { line: 0, message: m });
    }
    let state = issues.is_empty().then_some(state);
    let records = log.records.into_iter().map(|(_, r)| r).collect();
    Ok(Inspection { issues, state, view, log: log.header.map(|h| (h, records)) })
}

/// The problem a view that is not the log's rendering is, in words, with what to do.
fn view_issue(v: &View) -> Option<String> {
    match v {
        View::Current => None,
        View::Behind { shown, total } => Some(format!(
            "{HUMAN_FILE} is behind the log: it shows {shown} of its {total} records (a writer was stopped after the log's append and before the view's); `andon ledger repair` or the next `andon loop` renders it again"
        )),
        View::Missing => Some(format!(
            "{HUMAN_FILE} is missing; `andon ledger repair` or the next `andon loop` renders it from the log"
        )),
        View::Differs { line } => Some(format!(
            "{HUMAN_FILE} disagrees with the log at its line {line}; it is rendered from the log, never edited: if the log is right as it is, delete {HUMAN_FILE} and run `andon ledger repair`, else restore {LOG_FILE} from a copy or version control"
        )),
    }
}
