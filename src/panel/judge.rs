//! The mechanical verdict: the evidence role's checks re-run, each criterion's outcome, and the
//! panel's verdict over them (rules in `docs/panel.md`).

use std::collections::BTreeMap;
use std::path::Path;

use super::{
    Check, CheckResult, CheckStatus, Criterion, Judgment, Outcome, PanelInput, Role, RoleOutput, Stance, escape_inline,
    input_problems, validate,
};
use crate::ledger::Verdict;

/// Re-runs each check through `run(root, command)` (`None`: it could not be run) and compares
/// exit codes: not runnable or nothing reported → `unverifiable`; a different exit code →
/// `refuted`; the same → the evidence role's own status.
pub fn rerun(root: &Path, checks: &[Check], run: &dyn Fn(&Path, &str) -> Option<i32>) -> Vec<CheckResult> {
    (checks.iter())
        .map(|k| {
            let observed = run(root, &k.command);
            let (status, why) = match (k.exit_code, observed) {
                (_, None) => (CheckStatus::Unverifiable, "andon could not run it".to_string()),
                // the shell's "cannot execute" and "not found": the check's tool is not here
                (_, Some(o @ (126 | 127))) => (
                    CheckStatus::Unverifiable,
                    format!("andon could not run it here (exit {o}: the command or its tool is not available)"),
                ),
                (None, Some(_)) => (CheckStatus::Unverifiable, "no exit code was reported to compare".into()),
                (Some(r), Some(o)) if r != o => {
                    (CheckStatus::Refuted, format!("reported exit {r}, andon observed {o}"))
                }
                (Some(r), Some(_)) => (k.status, format!("reproduced (exit {r})")),
            };
            let observed = observed.filter(|o| !matches!(o, 126 | 127));
            CheckResult { id: k.id.clone(), command: k.command.clone(), reported: k.exit_code, observed, status, why }
        })
        .collect()
}

/// The mechanical verdict (rules in `docs/panel.md`).
pub fn judge(input: &PanelInput, outputs: &[RoleOutput], rerun: &[CheckResult], tier1_hold: bool) -> Judgment {
    judge_with(input, outputs, rerun, tier1_hold, true)
}

/// [`judge`], with or without the adjudicator's pass (the referee): without it
/// (`skip_verification`, R7) a criterion passes only on a confirmed check andon re-ran, fails on
/// a refuting one, and is otherwise unknown; nothing else changes, a tier-1 hold least of all.
pub fn judge_with(
    input: &PanelInput,
    outputs: &[RoleOutput],
    rerun: &[CheckResult],
    tier1_hold: bool,
    referee: bool,
) -> Judgment {
    let mut reasons = input_problems(input);
    let mut by_role = BTreeMap::new();
    for (o, ok) in outputs.iter().zip(validate(input, outputs)) {
        match ok {
            Ok(()) => {
                by_role.insert(o.role, o);
            }
            Err(why) => reasons.push(format!("refused: {why}")),
        }
    }
    let roles: Vec<Role> = Role::ALL.into_iter().filter(|r| referee || *r != Role::Adjudicator).collect();
    if !referee {
        by_role.remove(&Role::Adjudicator);
    }
    let incomplete = !reasons.is_empty() || roles.iter().any(|r| !by_role.contains_key(r));
    for r in roles.iter().filter(|r| !by_role.contains_key(r)) {
        reasons.push(format!("no accepted {} output", r.name()));
    }
    let per: Vec<(String, Outcome, String)> = input
        .criteria
        .iter()
        .map(|c| if referee { criterion_outcome(c, &by_role, rerun) } else { unrefereed_outcome(c, &by_role, rerun) })
        .collect();
    let mut verdict = overall(input, &per, incomplete, &mut reasons);
    if tier1_hold {
        reasons.push("a tier-1 structural hold stands; adjudication cannot clear it (R104, R77)".into());
        if verdict == Verdict::Proven {
            verdict = Verdict::Unproven;
        }
    }
    Judgment { verdict, per_criterion: per, reasons }
}

/// What an evidence check shows. andon's re-run outranks the evidence role's report when andon
/// could run the command; a check andon tried and could not re-run (it timed out, was killed,
/// could not start) backs nothing: it is unverifiable whatever the evidence role reported (R103).
fn check_status(k: &Check, rerun: &[CheckResult]) -> (CheckStatus, String) {
    match rerun.iter().find(|r| r.id == k.id) {
        // a criterion traces to a test result: a failing check confirms nothing, whatever the
        // evidence role called it
        Some(r) if r.status == CheckStatus::Confirmed && r.observed.is_some_and(|o| o != 0) => {
            (CheckStatus::Refuted, format!("{}: a failing check is no confirmation", r.why))
        }
        Some(r) if r.observed.is_some() => (r.status, r.why.clone()),
        Some(r) => (CheckStatus::Unverifiable, r.why.clone()),
        None => (k.status, "not re-run by andon; as the evidence role reported".into()),
    }
}

/// One criterion's outcome and why: the adjudicator's stance, overruled by a check that refutes
/// it, and a pass only when a confirmed check backs it.
fn criterion_outcome(
    c: &Criterion,
    by_role: &BTreeMap<Role, &RoleOutput>,
    rerun: &[CheckResult],
) -> (String, Outcome, String) {
    let checks: &[Check] = by_role.get(&Role::Evidence).map_or(&[], |o| &o.checks);
    let entry = |r: Role| by_role.get(&r).and_then(|o| o.criteria.iter().find(|e| e.id == c.id));
    let adj = entry(Role::Adjudicator);
    let facts: Vec<_> = (checks.iter())
        .filter(|k| k.criteria.contains(&c.id) || adj.is_some_and(|a| a.cites.contains(&k.id)))
        .map(|k| (k, check_status(k, rerun)))
        .collect();
    let refuted = facts.iter().find(|(_, (s, _))| *s == CheckStatus::Refuted);
    let backed = facts.iter().find(|(_, (s, _))| *s == CheckStatus::Confirmed);
    let cmd = |k: &Check| format!("check `{}` (`{}`)", escape_inline(&k.id), escape_inline(&k.command));
    let (outcome, mut why) = match (adj, refuted) {
        (None, _) => (Outcome::Unknown, "not adjudicated".to_string()),
        (Some(_), Some((k, (_, w)))) => (Outcome::Fail, format!("evidence refutes it: {}: {w}", cmd(k))),
        (Some(a), None) => match (a.stance, backed) {
            (Stance::Fail, _) => (Outcome::Fail, format!("adjudicated fail: {}", escape_inline(&a.reason))),
            (Stance::Neither, _) => (Outcome::Neither, "adjudicated neither: neither side carries it".into()),
            (Stance::Pass, Some((k, (_, w)))) => {
                (Outcome::Pass, format!("adjudicated pass, backed by {}: {w}", cmd(k)))
            }
            (Stance::Pass, None) => (Outcome::Unbacked, "adjudicated pass, but no confirmed check backs it".into()),
            (Stance::Concede, _) => (Outcome::Unknown, "not adjudicated".into()),
        },
    };
    if entry(Role::For).is_some_and(|e| e.stance == Stance::Concede) {
        why.push_str("; the for advocate conceded it");
    }
    (c.id.clone(), outcome, why)
}

/// One criterion's outcome with no adjudicator: the evidence role's checks for it, as andon re-ran
/// them, decide alone.
fn unrefereed_outcome(
    c: &Criterion,
    by_role: &BTreeMap<Role, &RoleOutput>,
    rerun: &[CheckResult],
) -> (String, Outcome, String) {
    let checks: &[Check] = by_role.get(&Role::Evidence).map_or(&[], |o| &o.checks);
    let facts: Vec<_> =
        checks.iter().filter(|k| k.criteria.contains(&c.id)).map(|k| (k, check_status(k, rerun))).collect();
    let cmd = |k: &Check| format!("check `{}` (`{}`)", escape_inline(&k.id), escape_inline(&k.command));
    let (outcome, why) = if let Some((k, (_, w))) = facts.iter().find(|(_, (s, _))| *s == CheckStatus::Refuted) {
        (Outcome::Fail, format!("evidence refutes it: {}: {w}", cmd(k)))
    } else if let Some((k, (_, w))) = facts.iter().find(|(_, (s, _))| *s == CheckStatus::Confirmed) {
        (Outcome::Pass, format!("backed by {} (no adjudicator: verification skipped): {w}", cmd(k)))
    } else {
        (Outcome::Unknown, "no confirmed check backs it, and no adjudicator judged it (verification skipped)".into())
    };
    (c.id.clone(), outcome, why)
}

/// The panel's verdict over every criterion's outcome, with the reason for it: unknown when the
/// panel is incomplete, refuted by any failed criterion, unproven while any blocks (a
/// load-bearing `neither` blocks), else proven.
fn overall(
    input: &PanelInput,
    per: &[(String, Outcome, String)],
    incomplete: bool,
    reasons: &mut Vec<String>,
) -> Verdict {
    let load_bearing = |id: &str| input.criteria.iter().any(|c| c.id == id && c.load_bearing);
    let blocked = |(id, o, _): &&(String, Outcome, String)| match o {
        Outcome::Pass => false,
        Outcome::Neither => load_bearing(id),
        _ => true,
    };
    let names = |pred: &dyn Fn(&&(String, Outcome, String)) -> bool| {
        per.iter().filter(pred).map(|(id, _, _)| escape_inline(id)).collect::<Vec<_>>().join(", ")
    };
    if incomplete {
        reasons.push("no verdict: the input is unusable or the panel incomplete".into());
        Verdict::Unknown
    } else if per.iter().any(|(_, o, _)| *o == Outcome::Fail) {
        reasons.push(format!("failed: {}", names(&|p| p.1 == Outcome::Fail)));
        Verdict::Refuted
    } else if per.iter().any(|p| blocked(&p)) {
        reasons.push(format!("not passed: {}", names(&|p| blocked(p))));
        Verdict::Unproven
    } else {
        reasons.push("every criterion passed".into());
        Verdict::Proven
    }
}
