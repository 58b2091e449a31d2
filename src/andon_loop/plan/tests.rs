//! The plan without a file system: a repository answered from memory, a ledger in a [`Book`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::super::error::Error;
use super::super::proposal;
use super::super::scan::Candidate;
use super::super::verify::applied::VerifyStop;
use super::super::verify::commands::{self, CommandSpec};
use super::super::verify::fix;
use super::walk::cycle_overrides;
use super::*;
use crate::config::settings::Settings;
use crate::config::{BlastRadius, Config};
use crate::index::walk::WalkOptions;
use crate::ledger::GapStatus;
use crate::ledger::{GapKind, Location, Verdict, WireStatus};
use crate::ledger::{GapState, State, Wire};
use crate::ops::StreamReport;
use crate::ops::{StageRow, WireRow};

/// A repository answered from memory: the gaps the scan shows per stage, the structural proof
/// every wire gets, and which commands pass.
#[derive(Default)]
struct Memory {
    gaps: BTreeMap<String, Vec<Candidate>>,
    proof: Option<fix::StructuralProof>,
    ran: Vec<String>,
}

impl PlanPort for Memory {
    /// As the index's scan does: a wire with a proof in the ledger is no gap.
    fn scan(&self, state: &State, stage: &str) -> Vec<Candidate> {
        let proven = |c: &Candidate| {
            c.wire.as_ref().and_then(|w| state.wires.get(w)).is_some_and(|ws| ws.status == WireStatus::Proven)
        };
        self.gaps.get(stage).into_iter().flatten().filter(|c| !proven(c)).cloned().collect()
    }
    fn structural(&self, _gap: &GapState) -> Result<fix::StructuralProof, Error> {
        self.proof.clone().ok_or_else(|| Error::Facts("no proof".into()))
    }
    fn run_command(&mut self, spec: &CommandSpec, fingerprint: &str) -> commands::Run {
        self.ran.push(spec.name.clone());
        panic!("no command is configured in these tests: {fingerprint}")
    }
    fn output_of(&self, _run: &commands::Run) -> String {
        String::new()
    }

    fn last_run(&self, _name: &str) -> Option<commands::Run> {
        None
    }
    fn applied_change(
        &self,
        _base: &str,
        _write_set: &[String],
    ) -> Result<Result<(fix::AppliedChange, BlastRadius, String), VerifyStop>, Error> {
        Err(Error::NotGit)
    }
    fn surface_changed(&self, _state: &State) -> Result<bool, Error> {
        Ok(false)
    }

    fn judging(&self, _state: &State, _records: &[crate::ledger::Record]) -> crate::andon_loop::judging::Drift {
        crate::andon_loop::judging::Drift::Clean
    }
}

fn config() -> Config {
    Config {
        source: None,
        shadowed: None,
        walk: WalkOptions::standard(),
        max_file_size: 0,
        contracts: Vec::new(),
        commands: Vec::new(),
        settings: Settings::default(),
        stream: None,
    }
}

/// Two stages, `core` feeding `api`.
fn stream() -> StreamReport {
    let stage = |name: &str| StageRow {
        name: name.into(),
        root: format!("src/{name}"),
        ecosystem: "python".into(),
        confidence: crate::facts::vocab::Confidence::Exact,
        source: "python-package".into(),
        files: 1,
    };
    StreamReport {
        stages: vec![stage("core"), stage("api")],
        wires: vec![WireRow {
            producer: "core".into(),
            consumer: "api".into(),
            imports: 1,
            symbols: vec!["parse".into()],
            confidence: crate::facts::vocab::Confidence::Exact,
            kinds: vec!["static".into()],
            used_for: crate::ops::WireUse::RunTime,
        }],
        order: vec!["core".into(), "api".into()],
        cycles: Vec::new(),
        module_cycles: Vec::new(),
        declared: None,
        support: Vec::new(),
        within: None,
    }
}

fn wire() -> Wire {
    Wire { producer: "core".into(), consumer: "api".into() }
}

/// The scan's view of the unproven wire out of `core`.
fn unproven_wire() -> Candidate {
    Candidate {
        id: "W-0000beef".into(),
        kind: GapKind::Wire,
        stage: "core".into(),
        wire: Some(wire()),
        location: Location { path: "src/core".into(), line: None },
        summary: "the wire core → api has no proof".into(),
        source: "UnprovenWire",
    }
}

/// Plans one step on `book` with `repo`, as `andon loop --max-passes max_passes` would.
fn plan_step(book: &mut Book, repo: &mut Memory, max_passes: u32, pending: Pending) -> Plan {
    let (cfg, stream, surfaces) = (config(), stream(), BTreeMap::new());
    let setup = Setup {
        cfg: &cfg,
        stream: &stream,
        brief: None,
        surfaces: &surfaces,
        tree: "0123456789abcdef",
        config_path: "andon.toml".into(),
        brief_md: String::new(),
        max_passes,
        slow: false,
        had_ledger: !book.records.is_empty(),
    };
    plan(&setup, pending, book, repo).expect("the plan")
}

fn kinds(book: &Book) -> Vec<&'static str> {
    book.planned()
        .iter()
        .map(|e| match e {
            Event::StageRecorded { .. } => "stage",
            Event::GapOpened { .. } => "opened",
            Event::EvidenceRecorded { .. } => "evidence",
            Event::WireStatusChanged { .. } => "wire",
            Event::GapClosed { .. } => "closed",
            Event::PassClosed { .. } => "pass",
            Event::Halted { .. } => "halted",
            Event::CycleConverged { .. } => "converged",
            Event::ProposalRecorded { .. } => "proposal",
            _ => "other",
        })
        .collect()
}

#[test]
fn a_first_step_records_the_stream_proves_the_wire_itself_and_converges_in_one_write() {
    let mut book = Book::new(State::default(), Vec::new(), 7);
    let mut repo =
        Memory { proof: Some((Verdict::Proven, Some(1), false, "it holds".into(), Vec::new())), ..Memory::default() };
    repo.gaps.insert("core".into(), vec![unproven_wire()]);
    let plan = plan_step(&mut book, &mut repo, 100, Pending::default());
    assert_eq!(
        kinds(&book),
        ["stage", "stage", "opened", "evidence", "wire", "closed", "pass", "converged"],
        "every event of the step, planned in order"
    );
    assert!(plan.stream_changed);
    assert_eq!(plan.next.action, Action::Converged);
    assert_eq!(plan.halt, None);
    assert_eq!(book.state.passes, 1);
    assert!(book.records.iter().all(|r| r.at == 7));
    assert!(plan.notes.iter().any(|n| n.contains("proven structurally (tier 1)")), "{:?}", plan.notes);
}

#[test]
fn a_tier_one_contradiction_halts_the_step_and_asks_for_changed_code() {
    let mut book = Book::new(State::default(), Vec::new(), 1);
    let proof =
        (Verdict::Refuted, Some(1), true, "api imports a name core lacks".into(), vec!["src/api/a.py:3".into()]);
    let mut repo = Memory { proof: Some(proof), ..Memory::default() };
    repo.gaps.insert("core".into(), vec![unproven_wire()]);
    let plan = plan_step(&mut book, &mut repo, 100, Pending::default());
    assert_eq!(kinds(&book), ["stage", "stage", "opened", "evidence", "wire", "halted", "pass"]);
    assert_eq!(plan.next.action, Action::FixTheCode);
    assert_eq!(plan.halt, Some(Condition::Tier1Hold));
    assert_eq!(plan.picked.as_ref().map(|p| p.0.as_str()), Some("W-0000beef"));
}

#[test]
fn the_pass_budget_stops_the_loop_before_it_proves_anything() {
    let mut book = Book::new(State::default(), Vec::new(), 1);
    let mut repo =
        Memory { proof: Some((Verdict::Proven, Some(1), false, String::new(), Vec::new())), ..Memory::default() };
    repo.gaps.insert("core".into(), vec![unproven_wire()]);
    let plan = plan_step(&mut book, &mut repo, 0, Pending::default());
    assert_eq!(plan.next.action, Action::Budget);
    assert_eq!(kinds(&book), ["stage", "stage", "opened"]);
    assert_eq!(plan.recorded, 1);
}

#[test]
fn the_step_that_reports_a_cycle_hardened_records_it_once() {
    let mut book = Book::new(State::default(), Vec::new(), 1);
    let mut repo =
        Memory { proof: Some((Verdict::Proven, Some(1), false, String::new(), Vec::new())), ..Memory::default() };
    repo.gaps.insert("core".into(), vec![unproven_wire()]);
    plan_step(&mut book, &mut repo, 100, Pending::default());
    let mut again = Book::new(book.state.clone(), book.records.clone(), 2);
    let plan = plan_step(&mut again, &mut repo, 100, Pending::default());
    assert_eq!(kinds(&again), ["converged"], "the hardening is recorded by the step that reports it");
    assert!(matches!(again.planned()[0], Event::CycleConverged { cycle: 2, passes: 0, hardened: true, .. }));
    assert!(!plan.stream_changed);
    assert_eq!(plan.next.action, Action::Hardened, "a cycle that converged is confirmed hardened");
    let mut third = Book::new(again.state.clone(), again.records.clone(), 3);
    let plan = plan_step(&mut third, &mut repo, 100, Pending::default());
    assert!(third.planned().is_empty(), "{:?}", kinds(&third));
    assert_eq!(plan.next.action, Action::Hardened);
}

#[test]
fn a_proposal_for_a_gap_that_is_not_open_is_refused_and_left_in_place() {
    let mut book = Book::new(State::default(), Vec::new(), 1);
    let mut repo = Memory::default();
    let file = PathBuf::from("proposals/W-nope.json");
    let p = proposal::Proposal {
        written: None,
        gap: "W-nope".into(),
        blast_radius: BlastRadius::LocalReversible,
        approach: "structural".into(),
        reason: "r".into(),
        description: "d".into(),
        write_set: vec!["a.py".into()],
        base_commit: None,
        proposer: None,
        judging: Default::default(),
        interview: Vec::new(),
    };
    let pending = Pending { proposals: vec![(file.clone(), Ok(p))], ..Pending::default() };
    let plan = plan_step(&mut book, &mut repo, 100, pending);
    assert!(plan.notes.iter().any(|n| n.contains("refused: gap `W-nope` is not open")), "{:?}", plan.notes);
    assert!(!plan.consumed.contains(&file));
    assert!(!kinds(&book).contains(&"proposal"));
}

#[test]
fn a_refused_transition_plans_nothing_more() {
    let mut book = Book::new(State::default(), Vec::new(), 1);
    let bad = Event::GapClosed { gap: "W-none".into(), evidence: "E-none".into() };
    assert!(matches!(book.record(&[bad]), Err(LedgerError::Refused(m)) if m.starts_with("refused, nothing written")));
    assert!(book.planned().is_empty());
}

/// A TODO marker in `core`, as the scan shows it.
fn marker() -> Candidate {
    Candidate {
        id: "F-0000cafe".into(),
        kind: GapKind::Feature,
        stage: "core".into(),
        wire: None,
        location: Location { path: "src/core/a.py".into(), line: Some(3) },
        summary: "TODO marker".into(),
        source: "StageMarker",
    }
}

/// The plan's pick, next step and constraint are the agenda of the ledger it leaves.
fn agrees_with_status(book: &Book, plan: &Plan) {
    let opts = crate::status::Options { thrash: 3, ingest: false };
    let a = crate::status::agenda(&book.state, &book.records, opts);
    assert_eq!(
        (&a.next, &a.picked, &a.constraint, &a.cursor),
        (&plan.next, &plan.picked, &plan.constraint, &plan.cursor)
    );
}

#[test]
fn a_gap_gone_from_the_scan_without_a_verified_fix_vanishes_and_the_cycle_is_not_hardened() {
    let mut book = Book::new(State::default(), Vec::new(), 1);
    let mut repo =
        Memory { proof: Some((Verdict::Proven, Some(1), false, String::new(), Vec::new())), ..Memory::default() };
    repo.gaps.insert("core".into(), vec![unproven_wire(), marker()]);
    let plan = plan_step(&mut book, &mut repo, 100, Pending::default());
    agrees_with_status(&book, &plan);
    assert_eq!((plan.next.action, plan.next.gap.as_deref()), (Action::Propose, Some("F-0000cafe")));
    // the marker line is deleted outside any fix
    repo.gaps.insert("core".into(), vec![]);
    let mut again = Book::new(book.state.clone(), book.records.clone(), 2);
    let plan = plan_step(&mut again, &mut repo, 100, Pending::default());
    agrees_with_status(&again, &plan);
    assert!(again.planned().iter().any(|e| matches!(e, Event::GapVanished { gap, .. } if gap == "F-0000cafe")));
    assert!(!again.planned().iter().any(|e| matches!(e, Event::GapClosed { .. })), "never closed as proven");
    assert_eq!(again.state.gaps["F-0000cafe"].status, GapStatus::Vanished);
    assert!(again.planned().iter().any(|e| matches!(e, Event::CycleConverged { hardened: false, .. })));
    assert_eq!(plan.next.action, Action::Converged, "a cycle with a vanished gap is not hardened");
    assert!(plan.next.detail.contains("1 gap(s) vanished"), "{}", plan.next.detail);
    // the marker back is a new generation of the gap
    repo.gaps.insert("core".into(), vec![marker()]);
    let mut third = Book::new(again.state.clone(), again.records.clone(), 3);
    let plan = plan_step(&mut third, &mut repo, 100, Pending::default());
    agrees_with_status(&third, &plan);
    assert_eq!(plan.next.gap.as_deref(), Some("F-0000cafe.2"));
}

#[test]
fn every_stop_of_the_plan_is_the_agenda_of_the_ledger_it_leaves() {
    let proven = (Verdict::Proven, Some(1), false, String::new(), Vec::new());
    let refuted = (Verdict::Refuted, Some(2), false, "a name is missing".into(), Vec::new());
    for (proof, max_passes) in [(proven.clone(), 0), (proven, 100), (refuted, 100)] {
        let mut book = Book::new(State::default(), Vec::new(), 1);
        let mut repo = Memory { proof: Some(proof), ..Memory::default() };
        repo.gaps.insert("core".into(), vec![unproven_wire()]);
        let plan = plan_step(&mut book, &mut repo, max_passes, Pending::default());
        agrees_with_status(&book, &plan);
    }
}

#[test]
fn a_cycle_report_names_the_overrides_recorded_since_the_last_convergence() {
    use crate::ledger::{OverrideBasis, Record};
    let overridden = |gap: &str, by: &str| Event::Overridden {
        gap: gap.into(),
        evidence: format!("E-{gap}-1"),
        basis: OverrideBasis::ExtractorLimitation,
        by: by.into(),
        reason: "the registry wires it".into(),
        artifact: None,
        witness: None,
    };
    let converged = Event::CycleConverged {
        cycle: 1,
        passes: 1,
        sub_cycles: 0,
        proven: Vec::new(),
        constraint: None,
        intent: None,
        constraint_wire: None,
        hardened: false,
        environment_blocked: Vec::new(),
        overrides: Vec::new(),
    };
    let records: Vec<Record> = [overridden("W-a", "lead"), converged, overridden("W-b", "chief")]
        .into_iter()
        .enumerate()
        .map(|(i, event)| Record { seq: i as u64 + 1, at: 0, event, more: 0, prev: None })
        .collect();
    let got = cycle_overrides(&records);
    assert_eq!(got.len(), 1, "only this cycle's: {got:?}");
    assert_eq!((got[0].gap.as_str(), got[0].by.as_str()), ("W-b", "chief"));
    assert_eq!(got[0].basis, OverrideBasis::ExtractorLimitation);
    // the ledger's human view names them, and the environment-blocked wires
    let mut report = records.clone();
    report.push(Record {
        seq: 4,
        at: 0,
        event: Event::CycleConverged {
            cycle: 2,
            passes: 1,
            sub_cycles: 0,
            proven: Vec::new(),
            constraint: None,
            intent: None,
            constraint_wire: None,
            hardened: false,
            environment_blocked: vec![Wire { producer: "core".into(), consumer: "api".into() }],
            overrides: got,
        },
        more: 0,
        prev: None,
    });
    let header = crate::ledger::Header {
        andon_ledger: 1,
        andon: "t".into(),
        rules: "r".into(),
        repo: "r".into(),
        root_commit: None,
    };
    let md = crate::ledger::render(&header, &State::default(), &report);
    let line = md.lines().find(|l| l.contains("Cycle 2")).unwrap_or_else(|| panic!("{md}"));
    assert!(line.contains("converged except 1 environment-blocked wire(s) (core -\\> api) after"), "{line}");
    assert!(line.contains("overrides: `W-b` (evidence `E-W-b-1`, extractor-limitation, by chief)"), "{line}");
}
