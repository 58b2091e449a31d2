//! `andon ledger check` and `andon ledger repair`, each serialized as its JSON document.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::super::{Error, SCHEMA_VERSION, json_document, next};
use crate::ledger::{self, LedgerError};

/// `andon ledger check` or `andon ledger repair`: the ledger's log file, `/`-separated.
pub(super) fn log_shown(dir: &Path) -> String {
    dir.join(ledger::LOG_FILE).to_string_lossy().replace('\\', "/")
}

/// Each problem of the ledger in `dir`: where (`ledger.jsonl:LINE`, or `ledger.md`) and what.
fn issue_rows(dir: &Path, issues: &[ledger::Issue]) -> Vec<(String, String)> {
    let (log, human) = (log_shown(dir), dir.join(ledger::HUMAN_FILE).to_string_lossy().replace('\\', "/"));
    issues
        .iter()
        .map(|x| (if x.line == 0 { human.clone() } else { format!("{log}:{}", x.line) }, x.message.clone()))
        .collect()
}

/// `andon ledger check`: every problem with its line, or the state's counts; `None` when there
/// is no ledger.
pub struct LedgerCheck {
    pub dir: PathBuf,
    pub result: Option<(Vec<ledger::Issue>, Option<ledger::State>)>,
    /// The log is valid and only `ledger.md` lags behind it (or is missing).
    pub stale: bool,
}

/// `andon ledger check` on the repository at `root`.
pub fn ledger_check(root: &Path) -> Result<LedgerCheck, Error> {
    if !root.exists() {
        return Err(Error::no_such_directory(root, ""));
    }
    let cfg = super::super::config(root)?;
    let dir = ledger::dir_of(root, &cfg.settings);
    if let Some(message) = ledger::leads_out(root, &cfg.settings) {
        return Ok(LedgerCheck { dir, result: Some((vec![ledger::Issue { line: 1, message }], None)), stale: false });
    }
    match ledger::presence(&dir) {
        ledger::Presence::Absent => return Ok(LedgerCheck { dir, result: None, stale: false }),
        // a link that leads nowhere, a file where the directory belongs, a tracked log missing, a
        // ledger removed while the ref anchors it: unreadable, never absent
        ledger::Presence::Unreadable(issue) => {
            return Ok(LedgerCheck { dir, result: Some((vec![issue], None)), stale: false });
        }
        ledger::Presence::There => {}
    }
    let mut found = ledger::inspect(&dir).map_err(Error::Ledger)?;
    // a log written for another repository ([`ledger::chain::foreign`])
    if let (true, Some((header, records))) = (found.issues.is_empty(), &found.log) {
        found.issues = ledger::chain::foreign(root, header, records);
        if !found.issues.is_empty() {
            found.state = None;
        }
    }
    let stale = found.stale();
    Ok(LedgerCheck { dir, result: Some((found.issues, found.state)), stale })
}

impl LedgerCheck {
    /// `absent`, `valid`, `stale` (the log is valid, its view lags) or `invalid`.
    pub fn outcome(&self) -> &'static str {
        match &self.result {
            None => "absent",
            Some((issues, _)) if issues.is_empty() => "valid",
            Some(_) if self.stale => "stale",
            Some(_) => "invalid",
        }
    }

    /// Each problem: where (`ledger.jsonl:LINE`, or `ledger.md`) and what.
    pub fn issues(&self) -> Vec<(String, String)> {
        self.result.as_ref().map(|(i, _)| issue_rows(&self.dir, i)).unwrap_or_default()
    }

    fn document(&self) -> Value {
        let issues = self.issues();
        let state = self.result.as_ref().and_then(|(_, s)| s.as_ref());
        json!({
            "schema_version": SCHEMA_VERSION,
            "ledger": log_shown(&self.dir),
            "issues": issues.iter().map(|(at, m)| json!({ "at": at, "message": m })).collect::<Vec<_>>(),
            "state": state.map(|s| json!({ "stages": s.stages.len(), "gaps": s.gaps.len(),
                "evidence": s.evidence.len(), "wires": s.wires.len(), "passes": s.passes, "cycles": s.cycles })),
            "next": match self.outcome() {
                "invalid" => next("repair-ledger", None,
                    "an interrupted last write: `andon ledger repair`; any other problem: restore the ledger from a copy or version control"),
                "stale" => next("repair-ledger", None,
                    "`andon ledger repair`, or the next `andon loop`, renders ledger.md again from the log"),
                _ => next("loop", None, "run `andon loop`"),
            },
            "verdict": { "outcome": self.outcome(), "issues": issues.len() },
        })
    }
}

/// `andon ledger repair`: what was repaired, or why nothing was.
pub struct LedgerRepair {
    pub dir: PathBuf,
    pub result: Result<ledger::Repaired, LedgerError>,
    /// There is no ledger (the loop never ran, or was stopped creating it).
    pub absent: bool,
    /// When the repair was refused: every problem of the ledger, as `andon ledger check` lists them.
    pub issues: Vec<(String, String)>,
}

/// `andon ledger repair` on the repository at `root`.
pub fn ledger_repair(root: &Path) -> Result<LedgerRepair, Error> {
    let cfg = super::super::config(root)?;
    let dir = ledger::dir_of(root, &cfg.settings);
    let absent = !dir.join(ledger::LOG_FILE).exists();
    let result = ledger::repair(&dir, super::super::now());
    let issues = match &result {
        Err(_) => ledger::check(&dir).map(|(i, _)| issue_rows(&dir, &i)).unwrap_or_default(),
        Ok(_) => Vec::new(),
    };
    Ok(LedgerRepair { dir, result, absent, issues })
}

/// A path as reports show it, `/`-separated.
fn shown(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

/// What was done to `ledger.md`, in words.
fn view_repaired(v: &ledger::View) -> String {
    match v {
        ledger::View::Behind { shown, total } => {
            format!("{} was behind the log, showing {shown} of its {total} records: rendered again", ledger::HUMAN_FILE)
        }
        _ => format!("{} was missing: rendered from the log", ledger::HUMAN_FILE),
    }
}

impl LedgerRepair {
    /// `repaired`, `unchanged` or `refused`, and what happened.
    pub fn outcome(&self) -> (&'static str, String) {
        let log = log_shown(&self.dir);
        let r = match &self.result {
            Ok(r) => r,
            Err(e) => return ("refused", e.to_string()),
        };
        let mut done = Vec::new();
        if let Some(a) = &r.set_aside {
            done.push(format!(
                "lines {}-{} of {log} were an interrupted write; they are kept in {}",
                a.lines.0,
                a.lines.1,
                shown(&a.kept_in)
            ));
        }
        done.extend(r.view.as_ref().map(view_repaired));
        if !r.removed.is_empty() {
            done.push(format!("{} temporary file(s) of stopped writers removed", r.removed.len()));
        }
        match (done.is_empty(), self.absent) {
            (true, true) => return ("unchanged", format!("no ledger at {log}: nothing to repair")),
            (true, false) => {
                return (
                    "unchanged",
                    format!("{log} has no interrupted write and {} agrees with it", ledger::HUMAN_FILE),
                );
            }
            _ => {}
        }
        ("repaired", done.join("; "))
    }

    fn document(&self) -> Value {
        let (outcome, detail) = self.outcome();
        let r = self.result.as_ref().ok();
        json!({
            "schema_version": SCHEMA_VERSION,
            "ledger": log_shown(&self.dir),
            "set_aside": r.and_then(|r| r.set_aside.as_ref()).map(|a| json!({ "first_line": a.lines.0,
                "last_line": a.lines.1, "kept_in": shown(&a.kept_in) })),
            "view": r.and_then(|r| r.view.as_ref()).map(view_repaired),
            "removed": r.map(|r| r.removed.iter().map(|p| shown(p)).collect::<Vec<_>>()).unwrap_or_default(),
            "issues": self.issues.iter().map(|(at, m)| json!({ "at": at, "message": m })).collect::<Vec<_>>(),
            "next": if outcome == "refused" {
                next("restore-ledger", None, "restore the ledger from a copy or version control; `andon ledger check` lists each problem")
            } else {
                next("loop", None, "run `andon loop`")
            },
            "verdict": { "outcome": outcome, "detail": detail },
        })
    }
}

json_document!(LedgerCheck, LedgerRepair);
