//! The ledger on disk: reading and checking the log, the exclusive lock, the one writer
//! ([`append`]) and the view it renders again ([`refresh_view`]).

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;

use super::{
    Event, FORMAT, HUMAN_FILE, Header, Issue, LOCK_FILE, LOG_FILE, LedgerError, Log, Record, State, View, apply, chain,
    fold, parse_bytes, render, view,
};

pub(super) fn io_err(p: &Path) -> impl Fn(std::io::Error) -> LedgerError + '_ {
    move |source| LedgerError::File { path: p.to_path_buf(), source }
}

/// The bytes of the log in `dir`; `None` when there is none.
pub(super) fn read_log(dir: &Path) -> Result<Option<Vec<u8>>, LedgerError> {
    let path = dir.join(LOG_FILE);
    match fs::read(&path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(&path)(e)),
    }
}

/// The state the parsed log folds into and every problem of it (its lines, its writes, its
/// records' rules, a newer format), sorted by line.
pub(super) fn examine(log: &Log) -> (State, Vec<Issue>) {
    let (state, mut issues) = fold(log);
    issues.extend(log.issues.iter().cloned());
    issues.extend(chain::broken_links(log));
    if let Some(h) = &log.header
        && h.andon_ledger > FORMAT
    {
        issues.push(Issue {
            line: 1,
            message: format!("ledger format {} is newer than this andon's ({FORMAT}); upgrade andon", h.andon_ledger),
        });
    }
    issues.sort_by_key(|i| i.line);
    (state, issues)
}

/// The log as it stands before an interrupted write (the whole log when there is none): the
/// state those records fold into, the problems among them, and the records.
pub(super) fn before_cut(log: &Log) -> (State, Vec<Issue>, Vec<Record>) {
    let cut = log.torn.unwrap_or(u64::MAX);
    let kept = Log {
        header: log.header.clone(),
        records: log.records.iter().filter(|(n, _)| *n < cut).cloned().collect(),
        issues: log.issues.iter().filter(|i| i.line < cut).cloned().collect(),
        torn: None,
    };
    let (state, issues) = examine(&kept);
    (state, issues, kept.records.into_iter().map(|(_, r)| r).collect())
}

/// Reads the ledger in `dir`: None when there is none; the state when it is valid, its links
/// whole and its head where the ref anchors it ([`chain`]).
pub fn load(dir: &Path) -> Result<Option<(Header, State, Vec<Record>)>, LedgerError> {
    match super::presence(dir) {
        super::Presence::Absent => return Ok(None),
        super::Presence::Unreadable(issue) => return Err(LedgerError::Invalid(vec![issue])),
        super::Presence::There => {}
    }
    let Some(bytes) = read_log(dir)? else {
        return match chain::gone(dir) {
            Some(issue) => Err(LedgerError::Invalid(vec![issue])),
            None => Ok(None),
        };
    };
    let log = parse_bytes(&bytes);
    let (state, mut issues) = examine(&log);
    let records: Vec<Record> = log.records.into_iter().map(|(_, r)| r).collect();
    if let (true, Some(h)) = (issues.is_empty(), &log.header) {
        let shows = read_view(dir)?.as_deref().and_then(view::last_shown);
        issues.extend(chain::unanchored(dir, h, &records, shows));
    }
    match (issues.is_empty(), log.header) {
        (true, Some(h)) => Ok(Some((h, state, records))),
        _ => Err(LedgerError::Invalid(issues)),
    }
}

/// `ledger.md` as the log in `dir` renders it now: None when there is no ledger.
pub fn rendered(dir: &Path) -> Result<Option<String>, LedgerError> {
    Ok(load(dir)?.map(|(h, state, records)| render::render(&h, &state, &records)))
}

/// Takes the ledger's exclusive lock in `dir`, held until the returned file is dropped.
pub(super) fn lock(dir: &Path) -> Result<fs::File, LedgerError> {
    let lock_path = dir.join(LOCK_FILE);
    let lock =
        OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path).map_err(io_err(&lock_path))?;
    lock.lock().map_err(io_err(&lock_path))?;
    Ok(lock)
}

/// Appends `events` under the exclusive lock, creating the ledger with `header` when there is
/// none (an existing ledger keeps the header it was created with, and its view is rendered from
/// it). The whole log is checked first and every new event against the state; a refused event
/// writes nothing. Returns the records written.
pub fn append(dir: &Path, header: &Header, events: &[Event], now: u64) -> Result<Vec<Record>, LedgerError> {
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let lock = lock(dir)?;
    view::remove_dead_temporaries(dir);
    let path = dir.join(LOG_FILE);
    let (recorded, mut state, mut records) = match load(dir)? {
        Some((h, state, records)) => (Some(h), state, records),
        None => (None, State::default(), Vec::new()),
    };
    if let Some(h) = &recorded {
        refuse_a_view_that_differs(dir, h, &state, &records)?;
    }
    // a new ledger is created in this andon's format, every record linked
    let created = Header { andon_ledger: header.andon_ledger.max(FORMAT), ..header.clone() };
    let head = recorded.as_ref().unwrap_or(&created);
    let mut events = events.to_vec();
    if !chain::is_linked(head, &records) {
        // a ledger from before records were linked is linked from this write on
        events.insert(0, Event::LedgerChained { unlinked: records.len() as u64 });
    }
    let mut links = chain::Chain::over(head, &records);
    let before = links.link();
    let mut seq = records.len() as u64;
    let mut text = String::new();
    if recorded.is_none() {
        text.push_str(&serde_json::to_string(&created).expect("header serializes"));
        text.push('\n');
    }
    let mut written = Vec::new();
    for (i, e) in events.iter().enumerate() {
        seq += 1;
        apply(&mut state, seq, e).map_err(|m| LedgerError::Refused(format!("refused, nothing written: {m}")))?;
        let r =
            Record { seq, at: now, event: e.clone(), more: (events.len() - 1 - i) as u32, prev: Some(links.link()) };
        links.push(&r);
        text.push_str(&serde_json::to_string(&r).expect("record serializes"));
        text.push('\n');
        written.push(r);
    }
    // the ref first: a writer stopped before the log's append leaves the log at its `before`
    chain::anchor(dir, &chain::Anchor { seq, head: links.link(), before })?;
    if recorded.is_none() {
        // a new ledger appears whole (header and first write) or not at all
        write_atomic(dir, &path, text.as_bytes())?;
    } else {
        let mut f = OpenOptions::new().append(true).open(&path).map_err(io_err(&path))?;
        f.write_all(text.as_bytes()).and_then(|_| f.sync_all()).map_err(io_err(&path))?;
    }
    records.extend(written.iter().cloned());
    write_human(dir, &render(recorded.as_ref().unwrap_or(&created), &state, &records))
        .map_err(|e| LedgerError::Unrendered { source: Box::new(e) })?;
    drop(lock);
    Ok(written)
}

/// Refuses to write while `ledger.md` differs from the log's rendering (and is no earlier one):
/// the log or the view was edited by hand, and a write would render the view again and erase the
/// only trace of the edit. A view that is behind or missing is rendered by the write.
fn refuse_a_view_that_differs(dir: &Path, h: &Header, state: &State, records: &[Record]) -> Result<(), LedgerError> {
    match view::stand(read_view(dir)?.as_deref(), h, state, records) {
        View::Differs { line } => Err(LedgerError::ViewEdited { path: dir.join(HUMAN_FILE), line }),
        _ => Ok(()),
    }
}

/// Writes `path` whole and durably ([`crate::text::write_durable`]).
pub(super) fn write_atomic(_dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), LedgerError> {
    crate::text::write_durable(path, bytes).map_err(io_err(path))
}

/// Under the exclusive lock: renders `ledger.md` again when it is behind the log or missing (a
/// writer was stopped between the two), and removes the temporary files of dead writers. A view
/// that differs otherwise is left for `andon ledger check` to report. Returns how the view stood
/// when it was rendered again; an invalid log is refused, as by [`load`].
pub fn refresh_view(dir: &Path) -> Result<Option<View>, LedgerError> {
    if !dir.is_dir() {
        return Ok(None);
    }
    let lock = lock(dir)?;
    view::remove_dead_temporaries(dir);
    let Some((header, state, records)) = load(dir)? else { return Ok(None) };
    let have = read_view(dir)?;
    // a view that shows the last record is not behind: nothing to render (the common case)
    if have.as_deref().and_then(view::last_shown).is_some_and(|n| Some(n) == records.last().map(|r| r.seq)) {
        return Ok(None);
    }
    let stood = view::stand(have.as_deref(), &header, &state, &records);
    if !stood.renders_again() {
        return Ok(None);
    }
    write_human(dir, &render(&header, &state, &records))?;
    drop(lock);
    Ok(Some(stood))
}

pub(super) fn write_human(dir: &Path, text: &str) -> Result<(), LedgerError> {
    write_atomic(dir, &dir.join(HUMAN_FILE), text.as_bytes())
}

/// The text of `ledger.md` in `dir` (bytes that are not UTF-8 are replaced, so they differ);
/// `None` when there is none.
pub(super) fn read_view(dir: &Path) -> Result<Option<String>, LedgerError> {
    let path = dir.join(HUMAN_FILE);
    match fs::read(&path) {
        Ok(b) => Ok(Some(String::from_utf8_lossy(&b).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(&path)(e)),
    }
}
