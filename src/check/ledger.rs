//! `andon check` and the ledger (decision 13): where the repository has a ledger, `check` also
//! fails on the ledger's integrity problems (a torn or edited record, a broken chain), on a
//! wire that regressed from proven, on a judging change waiting for a person, and on a configured
//! check the loop saw fail that no verified fix closed, one finding each; and on the loop's standing
//! tier-1 holds (`holds`). A ledger with no contracts is judged alone.

use std::path::Path;

use super::{ContractResult, Finding};
use crate::config::{Config, ContractKind};
use crate::ledger::{self, GapKind, WireStatus};

/// The contract name ledger findings carry (no declared contract can have it: names are
/// `[A-Za-z0-9._-]`-like words, never parenthesized).
pub const CONTRACT: &str = "(ledger)";

/// The ledger judged as a contract: its result and its findings.
pub fn judged(root: &Path, cfg: &Config) -> Option<(ContractResult, Vec<Finding>)> {
    let found = findings(root, cfg)?;
    let result = ContractResult {
        name: CONTRACT.into(),
        kind: ContractKind::Ledger,
        description:
            "the ledger is intact, no wire regressed from proven, no judging change waits and no failing check stands"
                .into(),
        line: 0,
        findings: found.len(),
        blocking: found.len(),
        excused: 0,
    };
    Some((result, found))
}

/// The ledger's findings for the repository at `root`, or `None` when it has no ledger.
fn findings(root: &Path, cfg: &Config) -> Option<Vec<Finding>> {
    let dir = ledger::dir_of(root, &cfg.settings);
    let log = dir.join(ledger::LOG_FILE);
    let shown = log.strip_prefix(root).unwrap_or(&log).to_string_lossy().replace('\\', "/");
    if let Some(why) = ledger::leads_out(root, &cfg.settings) {
        let message = format!("the ledger is not intact: {why}");
        return Some(vec![finding(&shown, 1, message, vec!["integrity".into(), "0".into(), why])]);
    }
    // anything at its path is the ledger: what cannot be read is a problem, and nothing there while
    // git tracks a log or the ref anchors one is a ledger removed outside andon
    match ledger::presence(&dir) {
        ledger::Presence::Absent => return None,
        ledger::Presence::Unreadable(i) => {
            let message = format!("the ledger is not intact: {}", i.message);
            return Some(vec![finding(&shown, 1, message, vec!["integrity".into(), "0".into(), i.message])]);
        }
        ledger::Presence::There => {}
    }
    let mut out = Vec::new();
    let (mut issues, mut state, log) = match ledger::log_problems(&dir) {
        Ok(i) => (i.issues, i.state, i.log),
        Err(e) => (vec![ledger::Issue { line: 0, message: e.to_string() }], None, None),
    };
    // a log whose records name commits this repository never had was written for another one
    if let (true, Some((header, records))) = (issues.is_empty(), &log) {
        issues = ledger::chain::foreign(root, header, records);
        if !issues.is_empty() {
            state = None;
        }
    }
    for i in &issues {
        let message = format!("the ledger is not intact: {} (`andon ledger check` lists every problem)", i.message);
        out.push(finding(
            &shown,
            (i.line as u32).max(1),
            message,
            vec!["integrity".into(), i.line.to_string(), i.message.clone()],
        ));
    }
    for s in state.iter() {
        // a judging change waiting for a person: a gate that passed over it would carry it into main
        if let Some(j) = &s.judging {
            let files: Vec<&str> = j.files.iter().map(|f| f.path.as_str()).collect();
            let message = format!(
                "judging change `{}` waits for a person: how fixes are judged changed since the last proven tree ({}); `andon loop` says what to do",
                j.id,
                files.join(", ")
            );
            out.push(finding(&shown, 1, message, vec!["judging".into(), j.id.clone()]));
        }
        // a configured check the loop saw fail, not fixed since (no proof closed its gap)
        for g in s.gaps.values().filter(|g| g.source == "FailingCommand" && !g.status.finished()) {
            let message = format!(
                "{} (gap `{}`, {}): the loop saw it fail and no verified fix closed it; `andon loop` works on it",
                g.summary,
                g.id,
                g.status.name()
            );
            out.push(finding(&shown, 1, message, vec!["failing".into(), g.id.clone()]));
        }
        for (w, ws) in &s.wires {
            let why = if ws.status == WireStatus::Proven {
                // proven in the ledger, and a gap found since says it is broken
                if ledger::stands_proven(s, w) {
                    continue;
                }
                let gap = s.gaps.values().find(|g| {
                    g.wire.as_ref() == Some(w)
                        && g.kind == GapKind::Wire
                        && !g.status.set_aside()
                        && g.source != "UnprovenWire"
                });
                format!("gap `{}` is open across it", gap.map_or("?", |g| g.id.as_str()))
            } else if let Some(at) = ws.reopened.last() {
                format!("it is broken/unproven since ledger event {at}")
            } else {
                continue;
            };
            let message = format!(
                "wire {} -> {} regressed from proven: {why}; `andon loop` works on it until it is proven again",
                w.producer, w.consumer
            );
            out.push(finding(&shown, 1, message, vec!["regressed".into(), w.producer.clone(), w.consumer.clone()]));
        }
    }
    Some(out)
}

/// The loop's standing tier-1 holds, as findings of the ledger (decision 13): every exact absence
/// across a wire or in a stageless test (`BrokenImportAt`) and every exact arity mismatch
/// (`ArityMismatchAt`). No exception excuses them: changed code clears them. Keyed by
/// `["hold", path, target, name]`, so `--base` can keep those whose paths a change touched.
pub fn holds(idx: &crate::index::Index) -> Result<Vec<Finding>, super::CheckError> {
    use crate::facts::rel;
    let prog = crate::datalog::builtin_program();
    let store = super::derive(&prog, idx, &[rel::BROKEN_IMPORT_AT, rel::ARITY_MISMATCH_AT], false)?;
    let s = |v: u32| store.syms.str(v).to_string();
    let mut out = Vec::new();
    for r in store.rels[rel::BROKEN_IMPORT_AT.0 as usize].iter().filter(|r| s(r[5]) == "exact") {
        let (path, line, name, producer, target) = (s(r[0]), r[1], s(r[2]), s(r[3]), s(r[4]));
        let message = format!(
            "tier-1 hold: `{name}` is not defined or exported by `{target}` (stage `{producer}`); only changed code clears it"
        );
        out.push(hold(path.clone(), line, message, vec!["hold".into(), path, target, name]));
    }
    for r in store.rels[rel::ARITY_MISMATCH_AT.0 as usize].iter().filter(|r| s(r[6]) == "exact") {
        let (path, line, callee, target, problem, param) = (s(r[0]), r[1], s(r[2]), s(r[3]), s(r[4]), s(r[5]));
        let what = if param.is_empty() { problem.clone() } else { format!("{problem} `{param}`") };
        let message = format!(
            "tier-1 hold: the call of `{callee}` does not fit its signature in `{target}` ({what}); only changed code clears it"
        );
        out.push(hold(path.clone(), line, message, vec!["hold".into(), path, target, callee, problem, param]));
    }
    out.sort_by(|a, b| (&a.path, a.line, &a.key).cmp(&(&b.path, b.line, &b.key)));
    out.dedup_by(|a, b| a.key == b.key && a.line == b.line);
    Ok(out)
}

/// A tier-1 hold at `path`:`line`.
fn hold(path: String, line: u32, message: String, key: Vec<String>) -> Finding {
    let mut f = Finding::builtin(ContractKind::Ledger, CONTRACT, path, line, message, key);
    f.tier = 1;
    f
}

/// A blocking (tier 2) finding of the ledger at `path`:`line`.
fn finding(path: &str, line: u32, message: String, key: Vec<String>) -> Finding {
    Finding::builtin(ContractKind::Ledger, CONTRACT, path.to_string(), line, message, key)
}
