//! Datalog benchmarks (criterion): `cargo bench --bench datalog`; `benches/datalog.sh` runs them on
//! the real corpora and prints medians and ratios.
//!
//! - `generated/*`: fact sets of growing size (a layered import graph of N files over √N stages,
//!   with names and definitions), answering a non-recursive two-join query with the run-time
//!   engine, and all built-in rules with both engines. Growth with N shows in the medians.
//! - `corpus/*` (when `ANDON_BENCH_DIR` names an indexed repository, e.g. django after
//!   `andon index`): loading the index, loading the fact store, a two-join query end to end
//!   (load + plan + evaluate), and all built-in rules with the crepe-compiled engine and with the
//!   run-time engine (their ratio is the engines' ratio).

use std::hint::black_box;
use std::path::PathBuf;

use andon::datalog::{self, Store};
use andon::dialect::{Program, RelKind};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

const TWO_JOIN: &str = "Resolves(path, line, target, \"exact\"), InStage(target, stage)";

/// A repository-shaped fact set: `n` files in `√n` stages; each file imports three others, mostly
/// from its own stage or an earlier one (so the stage graph is a DAG with some long chains).
fn generated(prog: &Program, n: usize) -> Store {
    let mut s = Store::new(prog, andon::facts::CONSTANTS);
    let rel = |name: &str| prog.relation(name).unwrap();
    let stages = (n as f64).sqrt().ceil() as usize;
    let exact = s.syms.intern("exact");
    let heuristic = s.syms.intern("heuristic");
    let stat = s.syms.intern("static");
    let func = s.syms.intern("function");
    let mut rng = 0x2545F4914F6CDD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let files: Vec<u32> = (0..n).map(|i| s.syms.intern(&format!("s{}/f{i}.py", i % stages))).collect();
    let stage_ids: Vec<u32> = (0..stages).map(|k| s.syms.intern(&format!("s{k}"))).collect();
    let names: Vec<u32> = (0..64).map(|k| s.syms.intern(&format!("name{k}"))).collect();
    let push = |s: &mut Store, r: &str, row: &[u32]| s.rels[rel(r)].data.extend_from_slice(row);
    for &id in &stage_ids {
        push(&mut s, "Stage", &[id, id]);
    }
    for (i, &f) in files.iter().enumerate() {
        let st = i % stages;
        push(&mut s, "InStage", &[f, stage_ids[st]]);
        let name = names[i % names.len()];
        push(&mut s, "Defines", &[f, name, func, 1]);
        push(&mut s, "Exports", &[f, name]);
        for line in 1..=3u32 {
            // A target in this stage or an earlier one.
            let tst = (next() as usize) % (st + 1);
            let j = ((next() as usize) % n.div_ceil(stages)) * stages + tst;
            let j = if j < n { j } else { tst };
            let conf = if next() % 4 == 0 { heuristic } else { exact };
            push(&mut s, "Import", &[f, line, files[j], stat]);
            push(&mut s, "Resolves", &[f, line, files[j], conf]);
            push(&mut s, "ImportedName", &[f, line, files[j], names[j % names.len()], names[j % names.len()]]);
        }
    }
    for r in &mut s.rels {
        r.normalize();
    }
    s
}

fn bench_generated(c: &mut Criterion) {
    let prog = datalog::builtin_program();
    let q = datalog::prepare(TWO_JOIN, &[]).expect("query checks");
    let mut g = c.benchmark_group("generated");
    g.sample_size(10);
    for n in [1_000usize, 10_000, 100_000] {
        let base = generated(&prog, n);
        let qbase = {
            let mut s = Store::new(&q.prog, andon::facts::CONSTANTS);
            s.syms = base.syms.clone();
            for (i, r) in base.rels.iter().enumerate() {
                s.rels[i] = r.clone();
            }
            s
        };
        let need = q.prog.needed(&[q.rel]);
        g.bench_with_input(BenchmarkId::new("two-join runtime", n), &n, |b, _| {
            b.iter(|| {
                let mut s = qbase.clone();
                datalog::run_runtime(&q.prog, &mut s, Some(&need));
                black_box(s.rels[q.rel].len())
            })
        });
        g.bench_with_input(BenchmarkId::new("rules compiled", n), &n, |b, _| {
            b.iter(|| {
                let mut s = base.clone();
                datalog::run_compiled(&prog, &mut s, None);
                black_box(s.rels.len())
            })
        });
        g.bench_with_input(BenchmarkId::new("rules runtime", n), &n, |b, _| {
            b.iter(|| {
                let mut s = base.clone();
                datalog::run_runtime(&prog, &mut s, None);
                black_box(s.rels.len())
            })
        });
    }
    g.finish();
}

fn bench_corpus(c: &mut Criterion) {
    let Some(dir) = std::env::var_os("ANDON_BENCH_DIR").map(PathBuf::from) else {
        eprintln!("corpus benchmarks skipped: set ANDON_BENCH_DIR to an indexed repository");
        return;
    };
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Bring the corpus's index up to date first (a no-op when it is).
    let opts = andon::index::IndexOptions {
        walk: andon::index::walk::WalkOptions::standard(),
        max_file_size: andon::config::DEFAULT_MAX_FILE_SIZE,
        threads: None,
        rebuild: false,
    };
    andon::index::update(&dir, &opts, &|_, _| {}).expect("the corpus indexes");
    let idx = andon::index::load(&dir).expect("index loads").expect("index written");
    let prog = datalog::builtin_program();
    let mut g = c.benchmark_group(format!("corpus/{name}"));
    g.sample_size(10);
    g.bench_function("load index", |b| b.iter(|| black_box(andon::index::load(&dir).unwrap().unwrap().files.len())));
    g.bench_function("load all facts", |b| b.iter(|| black_box(datalog::load(&prog, &idx, None).unwrap().syms.len())));
    g.bench_function("two-join query end to end", |b| {
        b.iter(|| {
            let idx = andon::index::load(&dir).unwrap().unwrap();
            let q = datalog::prepare(TWO_JOIN, &[]).unwrap();
            black_box(
                datalog::answer(&q, &datalog::Facts::Loaded(&idx), false, &[], datalog::Budget::default())
                    .unwrap()
                    .0
                    .rows
                    .len(),
            )
        })
    });
    let base = datalog::load(&prog, &idx, None).unwrap();
    g.bench_function("rules compiled", |b| {
        b.iter(|| {
            let mut s = base.clone();
            datalog::run_compiled(&prog, &mut s, None);
            black_box(s.rels.len())
        })
    });
    g.bench_function("rules runtime", |b| {
        b.iter(|| {
            let mut s = base.clone();
            datalog::run_runtime(&prog, &mut s, None);
            black_box(s.rels.len())
        })
    });
    g.finish();
    // Sizes, for the report.
    let mut s = base.clone();
    datalog::run_compiled(&prog, &mut s, None);
    let rows = |k: RelKind| {
        prog.rels.iter().enumerate().filter(|(_, r)| r.kind == k).map(|(i, _)| s.rels[i].len()).sum::<usize>()
    };
    eprintln!("{name}: {} base rows, {} derived rows", rows(RelKind::Base), rows(RelKind::Derived));
}

criterion_group!(benches, bench_generated, bench_corpus);
criterion_main!(benches);
