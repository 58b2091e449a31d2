//! Ledger benchmarks (criterion): `cargo bench --bench ledger`. A ledger of 100,000 events (gaps
//! opened, proposed, proven and closed, wire status changes, passes) is written once, then
//! replayed: read, strictly parsed, folded into state and checked, as every ledger-reading
//! command does. Target: ≤ 1 s.

use std::hint::black_box;

use andon::ledger::{self, BlastRadius, Event, Evidence, GapKind, Header, Location, Verdict, Wire, WireStatus};
use criterion::{Criterion, criterion_group, criterion_main};

/// 100,000 events: 12,500 gap lifecycles of 8 events each.
fn events() -> Vec<Event> {
    let mut out = Vec::new();
    for i in 0..12_500u32 {
        let gap = format!("G{i}");
        let wire = Wire { producer: format!("s{}", i % 40), consumer: format!("s{}", i % 40 + 1) };
        out.push(Event::GapOpened {
            gap: gap.clone(),
            gap_kind: GapKind::Wire,
            stage: wire.consumer.clone(),
            wire: Some(wire.clone()),
            location: Location { path: format!("src/m{}.py", i % 900), line: Some(i % 300 + 1) },
            on_constraint: i % 7 == 0,
            summary: "the handoff is unproven".into(),
            source: "UnprovenWire".into(),
            estimated_radius: None,
        });
        out.push(Event::ProposalRecorded {
            gap: gap.clone(),
            blast_radius: BlastRadius::LocalReversible,
            approach: "structural".into(),
            reason: "an import crosses the wire".into(),
            description: "import the model from its module".into(),
            write_set: vec![format!("src/m{}.py", i % 900)],
            base_commit: "0123456789abcdef".into(),
            proposer: None,
            judging: Default::default(),
            interview: Vec::new(),
        });
        for (k, verdict, status) in
            [(0, Verdict::Refuted, WireStatus::BrokenOrUnproven), (1, Verdict::Proven, WireStatus::Proven)]
        {
            let id = format!("E{i}-{k}");
            out.push(Event::EvidenceRecorded {
                evidence: Evidence {
                    id: id.clone(),
                    gap: Some(gap.clone()),
                    wire: wire.clone(),
                    approach: "structural".into(),
                    verdict,
                    hold: false,
                    tier: Some(1),
                    artifact: None,
                    claim: "the consumer imports only what the producer exports".into(),
                    evidence: "andon check: 0 findings".into(),
                    fix: None,
                    references: vec![format!("src/m{}.py:1", i % 900)],
                    surface: None,
                    crossing: Default::default(),
                    radius: None,
                    tree: None,
                    commit: None,
                    red_first: None,
                    reason: None,
                    capability: None,
                    rung: None,
                },
            });
            out.push(Event::WireStatusChanged { wire: wire.clone(), status, evidence: id });
        }
        out.push(Event::GapClosed { gap: gap.clone(), evidence: format!("E{i}-1") });
        out.push(Event::PassClosed {
            pass: i + 1,
            stage: wire.consumer.clone(),
            wire: Some(wire),
            gap,
            approach: "structural".into(),
            verdict: Verdict::Proven,
            advanced: true,
            ceiling: BlastRadius::LocalReversible,
            diff_hash: None,
        });
    }
    out
}

fn bench(c: &mut Criterion) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("ledger");
    let header = Header {
        andon_ledger: ledger::FORMAT,
        andon: "bench".into(),
        rules: "bench".into(),
        repo: "bench".into(),
        root_commit: None,
    };
    let events = events();
    assert_eq!(events.len(), 100_000);
    ledger::append(&dir, &header, &events, 1).unwrap();
    let mut g = c.benchmark_group("ledger");
    g.sample_size(10);
    g.bench_function("replay_100k", |b| b.iter(|| black_box(ledger::load(&dir).unwrap().unwrap().1.passes)));
    g.bench_function("check_100k", |b| b.iter(|| black_box(ledger::check(&dir).unwrap().0.len())));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
