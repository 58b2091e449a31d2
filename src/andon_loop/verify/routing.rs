//! Routing a verify (R88–R91): the checks that speak for a stage, what a gap is about, the route
//! with a person's choice of a tie applied, and the routing record kept with the evidence.

use super::super::error::Error;
use super::commands::{self, CommandSpec, Lane};
use super::proof::{Proof, Routing};
use crate::config::Config;
use crate::evidence::route::{self, Approach, Object, Route, Subject};
use crate::ledger::GapState;

/// The configured commands that speak for any of `stages`, both lanes (verifying is an explicit
/// request), then the `--command` given. A given command adds a check and never replaces the
/// configured ones: a stage's `[[command]]`s are its proof, so a one-line `--command` cannot stand
/// in for a suite that fails.
pub fn checks(cfg: &Config, stages: &[String], command: Option<&str>) -> Vec<CommandSpec> {
    let mut out: Vec<CommandSpec> = Vec::new();
    for s in stages {
        for c in commands::applicable(&cfg.commands, s, true) {
            if !out.iter().any(|o| o.name == c.name) {
                out.push(c.clone());
            }
        }
    }
    if let Some(c) = command.filter(|c| !out.iter().any(|o| o.run == *c)) {
        out.push(CommandSpec {
            name: "given".into(),
            run: c.to_string(),
            stages: Vec::new(),
            lane: Lane::Fast,
            timeout_secs: crate::config::DEFAULT_COMMAND_TIMEOUT_SECS,
            technique: None,
            line: 0,
        });
    }
    out
}

/// What a ledger gap is about, for routing: its source fact, its wire, its file.
pub fn subject_of_gap(g: &GapState, has_checks: bool) -> Subject {
    subject_of(g, has_checks, false)
}

/// [`subject_of_gap`], knowing whether the structural facts already said nothing of it: a wire
/// the loop's own structural proof could not show (a declared wire no import carries) is about
/// what the code does across it, and the stage's checks prove it.
pub fn subject_of(g: &GapState, has_checks: bool, structure_said_nothing: bool) -> Subject {
    let mut s = Subject { has_checks, ..Subject::default() };
    if structure_said_nothing && g.source == "UnprovenWire" {
        let w = g.wire.as_ref().map(|w| w.to_string()).unwrap_or_default();
        return s.with(
            Object::Behavior,
            format!("no import carries the handoff {w}: only a check that exercises it shows it"),
        );
    }
    let structural = matches!(
        g.source.as_str(),
        "BrokenImport"
            | "ArityMismatch"
            | "StubHandoff"
            | "UndeclaredImport"
            | "UndeclaredWireImport"
            | "UnusedDependency"
            | "UnprovenWire"
    );
    if structural {
        s = s.with(Object::Structure, format!("the gap comes from `{}`, a structural fact", g.source));
    } else if g.wire.is_some() {
        s = s.with(Object::Structure, format!("the gap is about the handoff {}", g.wire.as_ref().expect("wire")));
    }
    if let Some((o, why)) = route::object_of_path(&g.location.path) {
        s = s.with(o, why);
    }
    if s.objects.is_empty() {
        s = s.with(Object::Behavior, format!("the gap (`{}`) is about what the code does", g.source));
    }
    s
}

/// The route for a subject, with a person's choice applied when (and only when) the table tied
/// and the choice is one of the candidates. `Err` refuses a choice routing does not allow.
pub fn route_one(subject: &Subject, chosen: Option<Approach>) -> Result<Route, Error> {
    let mut r = route::route(subject);
    if let Some(c) = chosen {
        if !r.needs_human() {
            let routed = r.approach.map(Approach::id).unwrap_or_default();
            if Some(c) == r.approach {
                return Ok(r);
            }
            return Err(Error::ApproachNotATie {
                approach: c.id().to_string(),
                routed: routed.to_string(),
                why: r.why.join("; "),
            });
        }
        if !r.candidates.contains(&c) {
            let names: Vec<&str> = r.candidates.iter().map(|a| a.id()).collect();
            let candidates = names.into_iter().map(str::to_string).collect();
            return Err(Error::ApproachNotACandidate { approach: c.id().to_string(), candidates });
        }
        r.approach = Some(c);
        r.why.push(format!("a person chose {} (--approach)", c.id()));
    }
    Ok(r)
}

/// Routes several obligations with one person's choice: applied to each tie it is a candidate
/// of, ignored elsewhere; refused when it settles no tie.
pub fn route_all(subjects: &[&Subject], chosen: Option<Approach>) -> Result<Vec<Route>, Error> {
    let mut used = false;
    let routes = subjects
        .iter()
        .map(|s| {
            let mut r = route::route(s);
            if let Some(c) = chosen
                && r.needs_human()
                && r.candidates.contains(&c)
            {
                r.approach = Some(c);
                r.why.push(format!("a person chose {} (--approach)", c.id()));
                used = true;
            }
            r
        })
        .collect();
    match chosen {
        Some(c) if !used => Err(Error::ApproachSettlesNoTie { approach: c.id().to_string() }),
        _ => Ok(routes),
    }
}

pub fn routing_record(r: &Route, proposed: Option<&str>) -> Routing {
    let disagreement = match (proposed, r.approach) {
        (Some(p), Some(a)) if p != a.id() => {
            Some(format!("the proposal recommended `{p}`; routing chose `{}` and ran it", a.id()))
        }
        _ => None,
    };
    Routing {
        approach: r.approach.map(|a| a.id().to_string()),
        family: r.approach.and_then(Approach::family),
        rung: r.approach.map(|a| a.rung().number()),
        candidates: r.candidates.iter().map(|a| a.id().to_string()).collect(),
        why: r.why.clone(),
        disagreement,
    }
}

/// The proof of a tie: no verdict, the candidates listed (R91).
pub fn tie(r: &Route) -> Proof {
    let names: Vec<&str> = r.candidates.iter().map(|a| a.id()).collect();
    Proof::unknown(
        format!("routing is a genuine tie between {}: a person chooses (`--approach`)", names.join(" and ")),
        "needs-human: no verdict is rendered on a tie",
    )
}
