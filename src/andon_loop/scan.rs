//! The scan (R49): the gaps of a stage and its outgoing wires as the fresh index shows them,
//! failing configured commands as gaps, and the pick order among open gaps (R61–R65).

use std::collections::BTreeMap;

use crate::config::BlastRadius;
use crate::datalog::Store;
use crate::extract::lang::is_manifest_name;
use crate::facts::rel;
use crate::ledger::{Event, GapKind, Location, State, Wire, WireStatus};
use crate::ops::StreamReport;

use super::verify::commands;

/// A gap the scan found, before it is recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub id: String,
    pub kind: GapKind,
    pub stage: String,
    pub wire: Option<Wire>,
    pub location: Location,
    pub summary: String,
    /// The fact that produced it (`BrokenImport`, `StageMarker`, ...).
    pub source: &'static str,
}

pub(super) fn short_hash(parts: &[&str]) -> String {
    format!("{:08x}", xxhash_rust::xxh3::xxh3_64(parts.join("\0").as_bytes()) as u32)
}

pub(super) fn kind_letter(k: GapKind) -> &'static str {
    match k {
        GapKind::Bug => "B",
        GapKind::Feature => "F",
        GapKind::Wire => "W",
    }
}

/// What the scan reads, derived once per facts and kept ([`crate::datalog::kept`]): the gap
/// relations, and what [`super::surface`] reads beside them. Identifiers (`References`) count as
/// a dependency's use only in languages whose paths name a package without an import (Rust's):
/// decoding them for every other file would cost the step most of its time.
pub(super) const VIEW: crate::datalog::kept::View = crate::datalog::kept::View {
    name: "loop-scan",
    rels: &[
        rel::BROKEN_IMPORT,
        rel::ARITY_HANDOFF,
        rel::STUB_HANDOFF,
        rel::STAGE_MARKER,
        rel::UNDECLARED_IMPORT,
        rel::UNUSED_DEPENDENCY_AT,
        rel::UNTESTED_STAGE,
        rel::WIRE_IMPORT,
        rel::IN_STAGE,
        rel::MISSING_NAME,
        rel::UNDECLARED_WIRE_IMPORT,
        rel::ADVISORY_MARKER,
    ],
    detail_for: crate::extract::lang::references_name_packages,
};

/// The gaps of `stage` and of its outgoing wires (`stage` is their producer), from the derived
/// relations; wires without proof in the ledger are gaps too.
pub fn scan(store: &Store, stream: &StreamReport, state: &State, stage: &str) -> Vec<Candidate> {
    let mut found = StageScan { store, stage, out: Vec::new() };
    found.wire_gaps();
    found.stage_gaps();
    found.dependency_gaps();
    found.unproven_wires(stream, state);
    let mut out = found.out;
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out.dedup_by(|a, b| a.id == b.id);
    out
}

/// The most advisory markers a step lists.
const ADVISORIES_LISTED: usize = 20;

/// The advisory markers of `stage` (`AdvisoryMarker`: a not-implemented statement whose message
/// refuses its operation by design), listed for a reader and never gaps, sorted by place.
pub fn advisories(store: &Store, stage: &str) -> Vec<String> {
    let s = |v: u32| store.syms.str(v).to_string();
    let mut rows: Vec<(String, u32, String, String)> = store.rels[rel::ADVISORY_MARKER.0 as usize]
        .iter()
        .filter(|r| store.syms.str(r[0]) == stage)
        .map(|r| (s(r[1]), r[2], s(r[3]), s(r[4])))
        .collect();
    rows.sort();
    rows.dedup();
    let mut out: Vec<String> = rows
        .iter()
        .take(ADVISORIES_LISTED)
        .map(|(path, line, kind, words)| {
            format!("advisory, not a gap: {path}:{line}: {kind} whose message says \"{words}\" (by design)")
        })
        .collect();
    if rows.len() > ADVISORIES_LISTED {
        out.push(format!(
            "advisory, not a gap: {} more in stage `{stage}` (`andon query 'AdvisoryMarker(s, p, l, k, w)'`)",
            rows.len() - ADVISORIES_LISTED
        ));
    }
    out
}

/// What the scan of one stage has found so far.
struct StageScan<'a> {
    store: &'a Store,
    stage: &'a str,
    out: Vec<Candidate>,
}

impl StageScan<'_> {
    fn s(&self, v: u32) -> String {
        self.store.syms.str(v).to_string()
    }

    fn rows(&self, r: crate::facts::RelId) -> impl Iterator<Item = &[u32]> + '_ {
        self.store.rels[r.0 as usize].iter()
    }

    /// The rows of `r` whose column `col` is this stage.
    fn of_stage(&self, r: crate::facts::RelId, col: usize) -> Vec<Vec<u32>> {
        self.rows(r).filter(|x| self.store.syms.str(x[col]) == self.stage).map(<[u32]>::to_vec).collect()
    }

    /// A gap, its id a hash of what it is and where.
    fn push(
        &mut self,
        kind: GapKind,
        wire: Option<Wire>,
        at: (String, Option<u32>),
        summary: String,
        source: &'static str,
    ) {
        let (path, line) = at;
        let stage = self.stage;
        let id = format!(
            "{}-{}",
            kind_letter(kind),
            short_hash(&[source, stage, &path, &line.map(|l| l.to_string()).unwrap_or_default(), &summary])
        );
        let location = Location { path, line };
        self.out.push(Candidate { id, kind, stage: stage.to_string(), wire, location, summary, source });
    }

    /// Broken imports across the stage's outgoing wires, calls across them that do not fit their
    /// callee's signature, and stubs handed across them.
    fn wire_gaps(&mut self) {
        let stage = self.stage.to_string();
        for r in self.of_stage(rel::BROKEN_IMPORT, 3) {
            let Some(consumer) = self.rows(rel::IN_STAGE).find(|x| x[0] == r[0]).map(|x| self.s(x[1])) else {
                self.test_import_gap(&r);
                continue;
            };
            let what = format!("`{}` is imported from stage `{stage}` but not defined or exported there", self.s(r[2]));
            let wire = Wire { producer: stage.clone(), consumer };
            self.push(GapKind::Wire, Some(wire), (self.s(r[0]), Some(r[1])), what, "BrokenImport");
        }
        for r in self.of_stage(rel::ARITY_HANDOFF, 0) {
            let (callee, problem, param) = (self.s(r[4]), self.s(r[5]), self.s(r[6]));
            let about = if param.is_empty() { problem } else { format!("{problem} `{param}`") };
            let what = format!(
                "the call of `{callee}` from stage `{}` does not fit its signature in stage `{stage}` ({about})",
                self.s(r[1])
            );
            let wire = Wire { producer: stage.clone(), consumer: self.s(r[1]) };
            self.push(GapKind::Wire, Some(wire), (self.s(r[2]), Some(r[3])), what, "ArityMismatch");
        }
        for r in self.of_stage(rel::STUB_HANDOFF, 0) {
            let what =
                format!("`{}` crosses to `{}` but its body is a stub ({})", self.s(r[2]), self.s(r[1]), self.s(r[5]));
            let wire = Wire { producer: stage.clone(), consumer: self.s(r[1]) };
            self.push(GapKind::Wire, Some(wire), (self.s(r[3]), Some(r[4])), what, "StubHandoff");
        }
    }

    /// A broken import in a test file that is in no stage: a bug of the stage it imports from,
    /// on no wire (a test-only directory has none).
    fn test_import_gap(&mut self, r: &[u32]) {
        let what = format!(
            "`{}` is imported by a test from stage `{}` but not defined or exported there",
            self.s(r[2]),
            self.stage
        );
        self.push(GapKind::Bug, None, (self.s(r[0]), Some(r[1])), what, "BrokenImport");
    }

    /// Markers in the stage, and a stage no test reaches (R49: the gap sits at its first file).
    fn stage_gaps(&mut self) {
        for r in self.of_stage(rel::STAGE_MARKER, 0) {
            let kind = if self.s(r[3]) == "FIXME" { GapKind::Bug } else { GapKind::Feature };
            self.push(kind, None, (self.s(r[1]), Some(r[2])), format!("{} marker", self.s(r[3])), "StageMarker");
        }
        if let Some(first) = self.of_stage(rel::UNTESTED_STAGE, 0).iter().map(|r| self.s(r[1])).min() {
            let what = format!("stage `{}` has no tests: no test file or test reaches it", self.stage);
            self.push(GapKind::Feature, None, (first, None), what, "MissingTests");
        }
    }

    /// Packages imported but not declared (one gap each, at the first site), and declared
    /// dependencies nothing imports.
    fn dependency_gaps(&mut self) {
        let mut undeclared: BTreeMap<String, (String, u32)> = BTreeMap::new();
        for r in self.of_stage(rel::UNDECLARED_IMPORT, 0) {
            let site = (self.s(r[2]), r[3]);
            let e = undeclared.entry(self.s(r[1])).or_insert(site.clone());
            if site < *e {
                *e = site;
            }
        }
        for (pkg, (path, line)) in undeclared {
            let what = format!("`{pkg}` is imported but the manifest does not declare it");
            self.push(GapKind::Bug, None, (path, Some(line)), what, "UndeclaredImport");
        }
        // a declared stream (R32): an import across stages it has no wire for, in the importing stage
        let mut across: BTreeMap<String, (String, u32)> = BTreeMap::new();
        for r in self.of_stage(rel::UNDECLARED_WIRE_IMPORT, 1) {
            let site = (self.s(r[2]), r[3]);
            let e = across.entry(self.s(r[0])).or_insert(site.clone());
            if site < *e {
                *e = site;
            }
        }
        for (producer, (path, line)) in across {
            let what = format!(
                "imports from stage `{producer}`, but the declared stream has no wire {producer} -> {}: declare it, or remove the import",
                self.stage
            );
            self.push(GapKind::Bug, None, (path, Some(line)), what, "UndeclaredWireImport");
        }
        for r in self.of_stage(rel::UNUSED_DEPENDENCY_AT, 0) {
            let (dep, kind) = (self.s(r[1]), self.s(r[2]));
            let what = format!("`{dep}` is declared ({kind}) but no code of the stage imports it");
            self.push(GapKind::Bug, None, (self.s(r[3]), None), what, "UnusedDependency");
        }
    }

    /// Outgoing wires without a proof (R49: no evidence, or refuted/unknown), at their first import.
    fn unproven_wires(&mut self, stream: &StreamReport, state: &State) {
        let stage = self.stage;
        for w in stream.wires.iter().filter(|w| w.producer == stage) {
            let wire = Wire { producer: w.producer.clone(), consumer: w.consumer.clone() };
            if state.wires.get(&wire).is_some_and(|ws| ws.status == WireStatus::Proven) {
                continue;
            }
            let site = self
                .rows(rel::WIRE_IMPORT)
                .filter(|x| self.store.syms.str(x[0]) == stage && self.store.syms.str(x[1]) == w.consumer)
                .map(|x| (self.s(x[2]), x[3]))
                .min();
            // a lone stage's own wire is at its first file (R31)
            let own = || {
                let first =
                    self.rows(rel::IN_STAGE).filter(|x| self.store.syms.str(x[1]) == stage).map(|x| self.s(x[0]));
                first.min().filter(|_| w.producer == w.consumer)
            };
            let at =
                site.map(|(p, l)| (p, Some(l))).unwrap_or_else(|| (own().unwrap_or_else(|| w.consumer.clone()), None));
            let what = if w.producer == w.consumer {
                format!("stage `{stage}` is the only stage: its public API, its contract, has no proof")
            } else {
                format!("the handoff {wire} has no proof")
            };
            self.push(GapKind::Wire, Some(wire), at, what, "UnprovenWire");
        }
    }
}

/// A hash of a command's own settings, so changing them re-runs it.
pub(super) fn command_key(spec: &commands::CommandSpec) -> u64 {
    xxhash_rust::xxh3::xxh3_64(format!("{}\0{}\0{:?}", spec.run, spec.timeout_secs, spec.stages).as_bytes())
}

/// The gap id of configured command `name`: one gap per command, wherever the scan first meets it.
pub(super) fn command_id(name: &str) -> String {
    format!("B-{}", short_hash(&["FailingCommand", name]))
}

/// The gap of a configured command that does not pass, located at the first failing test its
/// output names (else at its `[[command]]` entry), naming the failing tests.
pub(super) fn command_gap(config: &str, stage: &str, r: &commands::Run) -> Candidate {
    command_gap_as(config, stage, r, None)
}

/// Why a run of a command that exits 0 does not clear its open failing-command gap (whose
/// recorded `summary` named the tests that failed), reading its `output`: it says tests fail
/// (an exit hook, a session hook rewriting the exit status), it says nothing of its tests (an exit
/// at import), or a test that failed is not among those it names passing (a file that exits
/// before its tests register). `None`: it passed.
pub(super) fn hollow_pass(run: &str, summary: &str, output: &str) -> Option<String> {
    let failed = failed_in(summary);
    let failed: Vec<&str> = failed.iter().map(String::as_str).collect();
    let still: Vec<String> = commands::failing_tests(output)
        .into_iter()
        .filter(|f| !f.ends_with("# TODO") && !f.contains("# SKIP"))
        .collect();
    if !still.is_empty() {
        let names: Vec<String> = still.iter().take(5).map(|t| format!("`{t}`")).collect();
        return Some(format!("exits 0 while its output says tests fail ({})", names.join(", ")));
    }
    let ran = commands::tests_ran(output);
    if ran.is_none() && commands::reports_counts(run) {
        return Some(
            "exits 0 but its runner reports no tests ran: it stopped before it reported (an exit at import)".into(),
        );
    }
    if failed.is_empty() {
        return None;
    }
    match ran {
        None => return Some("exits 0 but says nothing of its tests, which its failing run named: the runner stopped before it reported (an exit at import)".into()),
        Some(0) => return Some("exits 0 but ran no test (skipped or deselected), where its failing run named failing tests".into()),
        Some(_) => {}
    }
    let unseen = failed.iter().find(|f| commands::seen_passing(output, f) == Some(false))?;
    Some(format!("exits 0 but `{unseen}`, which failed, is not seen passing: it did not run"))
}

/// The failing tests a failing-command gap's summary names.
pub(super) fn failed_in(summary: &str) -> Vec<String> {
    let Some((_, rest)) = summary.split_once("; failing: ") else { return Vec::new() };
    let rest = rest.split("; its output is in").next().unwrap_or(rest);
    rest.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// [`command_gap`], saying `how` the command fails when it is not by its exit.
pub(super) fn command_gap_as(config: &str, stage: &str, r: &commands::Run, how: Option<String>) -> Candidate {
    let how = how.unwrap_or_else(|| match (r.exit, r.timed_out, &r.error) {
        (_, true, _) => "times out".to_string(),
        (Some(code @ (126 | 127)), _, _) => {
            let name = crate::capabilities::missing_from(&r.run, &r.tail);
            format!("exits {code}: `{name}` cannot run here (not installed, or not executable)")
        }
        (Some(code), _, _) => format!("exits {code}"),
        (None, _, Some(e)) => format!("does not run ({e})"),
        (None, _, None) => "does not finish".to_string(),
    });
    let id = command_id(&r.name);
    // at the first failing test when the output names one, else at the `[[command]]` entry
    let location = match &r.failed_at {
        Some((path, line)) => Location { path: path.clone(), line: Some(*line) },
        None => Location { path: config.to_string(), line: Some(r.line) },
    };
    let failing = match r.failing.len() {
        0 => String::new(),
        n => format!(
            "; failing: {}{}",
            r.failing.iter().take(5).map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", "),
            if n > 5 { format!(" and {} more", n - 5) } else { String::new() }
        ),
    };
    Candidate {
        id,
        kind: GapKind::Bug,
        stage: stage.to_string(),
        wire: None,
        location,
        summary: format!(
            "command `{}` ({} lane) {how}{failing}; its output is in {}",
            r.name,
            r.lane.name(),
            r.artifact
        ),
        source: "FailingCommand",
    }
}

/// The recorded gaps not closed that the scan finds told otherwise (a failing command's newest
/// log, a gap on another line), each restated as the scan finds it now.
pub(super) fn restated(state: &State, cands: &[Candidate]) -> Vec<Event> {
    cands
        .iter()
        .filter(|c| {
            state.gaps.get(&c.id).is_some_and(|g| {
                g.status != crate::ledger::GapStatus::Closed && (g.location != c.location || g.summary != c.summary)
            })
        })
        .map(|c| Event::GapRestated { gap: c.id.clone(), location: c.location.clone(), summary: c.summary.clone() })
        .collect()
}

/// The estimated blast radius of fixing a gap, from where it is (decision 5 of docs/requirements.md).
pub fn estimated_radius(c: &Candidate) -> BlastRadius {
    let p = c.location.path.as_str();
    let name = p.rsplit('/').next().unwrap_or(p);
    if p.starts_with(".github/") || p.starts_with(".gitlab") || name == ".gitlab-ci.yml" || p.starts_with(".ci/") {
        BlastRadius::SharedStateVisible
    } else if is_manifest_name(name) || c.kind == GapKind::Wire && c.source == "UnprovenWire" {
        BlastRadius::HardToReverse
    } else {
        BlastRadius::LocalReversible
    }
}

/// The stream's stages as ledger records.
pub(super) fn stage_events(stream: &StreamReport) -> Vec<Event> {
    stream
        .stages
        .iter()
        .map(|s| Event::StageRecorded {
            stage: s.name.clone(),
            root: s.root.clone(),
            confidence: s.confidence.to_string(),
            source: s.source.clone(),
            incoming: stream.wires.iter().filter(|w| w.consumer == s.name).map(|w| w.producer.clone()).collect(),
            outgoing: stream.wires.iter().filter(|w| w.producer == s.name).map(|w| w.consumer.clone()).collect(),
        })
        .collect()
}
