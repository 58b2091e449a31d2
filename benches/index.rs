//! Indexing benchmarks: `cargo bench --bench index [-- DIR]`.
//!
//! The corpus is `$ANDON_BENCH_DIR`, else the first argument, else this repository (so
//! `cargo bench` always runs offline). It is copied to a temporary directory first (only the files
//! andon indexes, plus `.gitignore`/`.ignore`), so the caller's tree is never written to.
//!
//! Measured, each `$ANDON_BENCH_RUNS` times (default 5) after `$ANDON_BENCH_WARMUP` warm-up runs
//! (default 1), medians printed (raw parse, parse + extract and full index alternate run by run, so
//! that other work on the machine skews them alike):
//! - walk: `index::walk::walk` alone; stat: `symlink_metadata` of every walked file;
//! - raw parse: read + tree-sitter parse + walk every node (`extract::parse_only`) of the same
//!   source files andon indexes, in parallel and per file, largest first, as andon schedules them;
//! - parse + extract: the same with `extract::extract_source` (facts, no index);
//! - full index: `index::update` with `rebuild: true`;
//! - no change: `index::update` on an index that is up to date;
//! - one file changed: a comment line appended to one mid-sized source file (of the corpus's main
//!   language), then `index::update`.
//!
//! Files/s and MB/s are over the whole corpus for every row (the source files that are parsed: not
//! over the size limit, not binary), so rows compare directly; the full/raw ratio is full-index
//! throughput over raw-parse throughput. Then a breakdown of the warm runs (walk, stat, reading and
//! checksumming the head `.andon/index.bin`, decoding the index, a head-sized write with fsync, extracting the
//! edited file) and the peak RSS (VmHWM, per phase where Linux lets it be reset).
//!
//! Environment: `ANDON_BENCH_DIR`, `ANDON_BENCH_RUNS`, `ANDON_BENCH_WARMUP`, `ANDON_BENCH_THREADS`
//! (default: one per core), `ANDON_BENCH_EXCLUDE` (comma-separated gitignore-style globs, as
//! `andon index --exclude`), `ANDON_BENCH_KEEP=1` keeps the temporary copy.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use andon::config::DEFAULT_MAX_FILE_SIZE;
use andon::extract::{Context, Lang, extract_source, parse_only};
use andon::index::walk::{FileKind, WalkEntry, WalkOptions, walk};
use andon::index::{IndexOptions, IndexReport, update};
use rayon::prelude::*;

fn main() {
    let runs = env_usize("ANDON_BENCH_RUNS").unwrap_or(5).max(1);
    let warmup = env_usize("ANDON_BENCH_WARMUP").unwrap_or(1);
    let threads = env_usize("ANDON_BENCH_THREADS").filter(|&n| n > 0);
    let corpus = corpus_dir();
    let corpus = fs::canonicalize(&corpus).unwrap_or_else(|e| {
        fail(&format!("corpus {}: {e}", corpus.display()));
    });

    // The copy: the files andon would index in the corpus, and the ignore files above them.
    let wopts = WalkOptions {
        exclude: std::env::var("ANDON_BENCH_EXCLUDE")
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .map(String::from)
            .collect(),
        ..WalkOptions::standard()
    };
    let (orig, ..) = walk(&corpus, &wopts).unwrap_or_else(|e| fail(&e.to_string()));
    if orig.is_empty() {
        fail(&format!("{}: nothing to index (no .rs/.py/.ts/.js files or manifests found)", corpus.display()));
    }
    remove_stale_copies();
    let tmp = std::env::temp_dir().join(format!("andon-bench-{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    let _ = TMP.set(tmp.clone());
    let root = tmp.join("corpus");
    let t = Instant::now();
    copy_corpus(&corpus, &orig, &root).unwrap_or_else(|e| fail(&format!("copying the corpus: {e}")));
    let copy_ms = ms(t);
    let _cleanup = Cleanup(tmp.clone());
    let root = fs::canonicalize(&root).unwrap_or_else(|e| fail(&e.to_string()));

    let (entries, walk_errors, _) = walk(&root, &wopts).unwrap_or_else(|e| fail(&e.to_string()));
    if entries.len() != orig.len() {
        eprintln!("warning: the copy walks to {} files, the corpus to {}", entries.len(), orig.len());
    }

    // The source files that are parsed: by language, not too large, not binary.
    let mut sources: Vec<(Lang, &WalkEntry)> = Vec::new();
    let mut manifests = 0usize;
    let mut too_large = 0usize;
    let mut binary = 0usize;
    for e in &entries {
        let lang = match e.kind {
            FileKind::Source(l) => l,
            FileKind::SourceAndManifest(l) => {
                manifests += 1;
                l
            }
            FileKind::Manifest => {
                manifests += 1;
                continue;
            }
        };
        if e.size > DEFAULT_MAX_FILE_SIZE {
            too_large += 1;
            continue;
        }
        let bytes = fs::read(&e.abs).unwrap_or_default();
        if bytes[..bytes.len().min(8192)].contains(&0) {
            binary += 1;
            continue;
        }
        sources.push((lang, e));
    }
    // Largest first, as andon schedules its parse jobs.
    sources.sort_by_key(|(_, e)| std::cmp::Reverse(e.size));
    let files = sources.len() as f64;
    let bytes: u64 = sources.iter().map(|(_, e)| e.size).sum();
    let mut by_lang: Vec<(&str, usize, u64)> = Vec::new();
    for (l, e) in &sources {
        match by_lang.iter_mut().find(|(n, ..)| *n == l.name()) {
            Some(x) => {
                x.1 += 1;
                x.2 += e.size;
            }
            None => by_lang.push((l.name(), 1, e.size)),
        }
    }
    by_lang.sort();

    let pool = match threads {
        Some(n) => rayon::ThreadPoolBuilder::new().num_threads(n).build().ok(),
        None => None,
    };
    let nthreads = pool.as_ref().map(|p| p.current_num_threads()).unwrap_or_else(rayon::current_num_threads);

    println!("andon index benchmark");
    println!("corpus   {}", corpus.display());
    if !wopts.exclude.is_empty() {
        println!("exclude  {}", wopts.exclude.join(", "));
    }
    println!("copy     {} ({copy_ms:.0} ms to copy)", root.display());
    println!(
        "files    {} walked ({} manifests{}), {} parsed sources, {:.2} MB: {}",
        entries.len(),
        manifests,
        if walk_errors.is_empty() { String::new() } else { format!(", {} walk errors", walk_errors.len()) },
        sources.len(),
        mb(bytes),
        by_lang.iter().map(|(n, c, b)| format!("{n} {c} files {:.2} MB", mb(*b))).collect::<Vec<_>>().join(", ")
    );
    if too_large + binary > 0 {
        println!("         not parsed: {too_large} over the size limit, {binary} binary");
    }
    println!("threads  {nthreads}; runs {runs} (+{warmup} warm-up); medians; load average {}", loadavg());
    println!();

    let opts =
        |rebuild: bool| IndexOptions { walk: wopts.clone(), max_file_size: DEFAULT_MAX_FILE_SIZE, threads, rebuild };
    let index = |rebuild: bool| -> IndexReport {
        update(&root, &opts(rebuild), &|_done, _total| {}).unwrap_or_else(|e| fail(&format!("andon index: {e:?}")))
    };
    let mut peaks: Vec<(&str, u64)> = Vec::new();
    let mut rows: Vec<Row> = Vec::new();

    // 1. walk alone
    reset_peak();
    let walk_ms = measure(runs, warmup, || {
        let (w, ..) = walk(&root, &wopts).unwrap_or_else(|e| fail(&e.to_string()));
        std::hint::black_box(w.len());
    });
    peaks.push(("walk", peak_kib()));
    rows.push(Row::new("walk only", walk_ms, ""));

    // 1b. stat every walked file (what a run does instead of the walk when no directory changed)
    let stat_ms = measure(runs, warmup, || {
        for e in &entries {
            std::hint::black_box(fs::symlink_metadata(&e.abs).map(|m| m.len()).unwrap_or(0));
        }
    });

    // 2-3. raw parse, parse + extract, and full index, interleaved run by run so that a change in
    // the machine's speed (other work on it) hits all three alike: their ratios are what matters.
    // Every file read and parsed per file, in parallel, largest first, as andon schedules them.
    let per_file = |work: &(dyn Fn(&mut Context, Lang, &str, &str) -> usize + Sync)| -> usize {
        sources
            .par_iter()
            .with_max_len(1)
            .map_init(Context::new, |ctx, (lang, e)| {
                let bytes = fs::read(&e.abs).unwrap_or_default();
                work(ctx, *lang, &e.rel, &String::from_utf8_lossy(&bytes))
            })
            .sum()
    };
    // raw parse: read, parse and visit every node.
    let raw_parse = || per_file(&|ctx, lang, rel, text| parse_only(ctx, lang, rel, text));
    // parse + extract: the per-file work of a full index without the walk, hashing, resolution
    // and the index write.
    let parse_extract = || {
        per_file(&|ctx, lang, rel, text| {
            let mut out = andon::facts::SplitBuilder::default();
            extract_source(ctx, lang, rel, text, &mut out);
            std::hint::black_box(out.finish());
            1
        })
    };
    let mut nodes = 0usize;
    let mut full = None;
    let ([raw_ms, extract_ms, full_ms], [raw_peak, extract_peak, full_peak]) = interleave(
        runs,
        warmup,
        [
            &mut || nodes = in_pool(&pool, raw_parse),
            &mut || {
                in_pool(&pool, parse_extract);
            },
            &mut || full = Some(index(true)),
        ],
    );
    let full = full.expect("ran");
    peaks.push(("raw parse", raw_peak));
    peaks.push(("parse + extract", extract_peak));
    peaks.push(("full index", full_peak));
    rows.push(Row::new("raw parse (read+parse+visit)", raw_ms, &format!("{nodes} nodes")));
    rows.push(Row::new("parse + extract (no index)", extract_ms, "read, parse, extract facts"));
    rows.push(Row::new(
        "full index (rebuild)",
        full_ms,
        &format!("{} parsed, {} facts", full.parsed, full.summary.facts),
    ));

    // 4. no change
    reset_peak();
    let mut warm = None;
    let warm_ms = measure(runs, warmup, || warm = Some(index(false)));
    let warm = warm.expect("ran");
    peaks.push(("no change", peak_kib()));
    if !warm.unchanged || warm.parsed != 0 {
        eprintln!("warning: the no-change run was not a no-op: {} parsed, {} re-read", warm.parsed, warm.rehashed);
    }
    rows.push(Row::new("no-change re-index", warm_ms, &format!("{} parsed, {} re-read", warm.parsed, warm.rehashed)));

    // 5. one file changed: a mid-sized source file of the most common language
    let main_lang = by_lang.iter().max_by_key(|(_, c, b)| (*c, *b)).map(|(n, ..)| *n).unwrap_or("");
    let mut cands: Vec<&(Lang, &WalkEntry)> = sources.iter().filter(|(l, _)| l.name() == main_lang).collect();
    cands.sort_by(|a, b| (a.1.size, &a.1.rel).cmp(&(b.1.size, &b.1.rel)));
    let one = cands.get(cands.len() / 2).map(|(l, e)| (*l, *e));
    let mut one_row = None;
    let mut one_extract: Option<Stat> = None;
    if let Some((lang, target)) = one {
        let comment = match lang {
            Lang::Python => "#",
            Lang::Rust | Lang::TypeScript | Lang::JavaScript => "//",
        };
        let ends_nl = fs::read(&target.abs).map(|b| b.last().is_none_or(|&c| c == b'\n')).unwrap_or(true);
        let mut edit = 0usize;
        let mut last = None;
        reset_peak();
        let one_ms = measure_with_setup(
            runs,
            warmup,
            || {
                edit += 1;
                let mut f = fs::OpenOptions::new()
                    .append(true)
                    .open(&target.abs)
                    .unwrap_or_else(|e| fail(&format!("{}: {e}", target.abs.display())));
                let nl = if edit == 1 && !ends_nl { "\n" } else { "" };
                writeln!(f, "{nl}{comment} andon bench edit {edit}").expect("append");
            },
            || last = Some(index(false)),
        );
        peaks.push(("one file changed", peak_kib()));
        let r = last.expect("ran");
        if r.parsed != 1 {
            eprintln!("warning: the one-file run parsed {} files, not 1", r.parsed);
        }
        let text = fs::read_to_string(&target.abs).unwrap_or_default();
        let mut ctx = Context::new();
        one_extract = Some(measure(runs, warmup, || {
            let mut out = andon::facts::SplitBuilder::default();
            extract_source(&mut ctx, lang, &target.rel, &text, &mut out);
            std::hint::black_box(out.finish());
        }));
        rows.push(Row::new(
            "one-file-change re-index",
            one_ms,
            &format!("{} parsed, {} re-read: {} ({} B)", r.parsed, r.rehashed, target.rel, target.size),
        ));
        one_row = Some(one_ms);
    }

    println!("{:<30} {:>10} {:>10} {:>10} {:>9}  notes", "", "median ms", "min ms", "files/s", "MB/s");
    for r in &rows {
        println!(
            "{:<30} {:>10.1} {:>10.1} {:>10.0} {:>9.2}  {}",
            r.name,
            r.median,
            r.min,
            files / (r.median / 1000.0),
            mb(bytes) / (r.median / 1000.0),
            r.note
        );
    }
    let ratio = raw_ms.median / full_ms.median;
    println!();
    println!("full index / raw parse throughput: {ratio:.2} (full index takes {:.2}x the raw parse time)", 1.0 / ratio);

    // Where the warm runs spend their time.
    reset_peak();
    let ipath = andon::index::index_path(&root);
    let isize = fs::metadata(&ipath).map(|m| m.len()).unwrap_or(0);
    let read_ms = measure(runs, warmup, || {
        let b = fs::read(&ipath).expect("index.bin");
        std::hint::black_box(xxhash_rust::xxh3::xxh3_128(&b));
    });
    // What a head write costs on this file system: the same bytes, written, fsynced, renamed,
    // the directory fsynced (as andon writes its index).
    let wtmp = tmp.join("write-probe.tmp");
    let wdst = tmp.join("write-probe.bin");
    let ibytes = fs::read(&ipath).expect("index.bin");
    let write_ms = measure(runs, warmup, || {
        let mut f = fs::File::create(&wtmp).expect("probe");
        f.write_all(&ibytes).expect("probe");
        f.sync_all().expect("probe");
        fs::rename(&wtmp, &wdst).expect("probe");
        if let Ok(d) = fs::File::open(&tmp) {
            let _ = d.sync_all();
        }
    });
    drop(ibytes);
    let mut loaded = None;
    let load_ms = measure(runs, warmup, || {
        loaded = andon::index::load(&root).unwrap_or_else(|e| fail(&e.to_string()));
    });
    let idx = loaded.expect("an index was written");
    drop(idx);
    peaks.push(("breakdown", peak_kib()));
    println!();
    println!("breakdown (medians):");
    println!("  walk (gitignore-aware directory walk)          {:>9.2} ms", walk_ms.median);
    println!("  stat every walked file                         {:>9.2} ms", stat_ms.median);
    println!("  read + checksum the head (.andon/index.bin)    {:>9.2} ms  ({:.2} MB)", read_ms.median, mb(isize));
    println!("  load: read + decode the whole index            {:>9.2} ms", load_ms.median);
    println!("  write + fsync + rename + fsync dir, same size  {:>9.2} ms", write_ms.median);
    if let Some(x) = one_extract {
        println!("  parse + extract the edited file                {:>9.2} ms", x.median);
    }
    println!(
        "  no change {:.2} ms: beyond reading the index {:.2} ms (walk or stat, compare)",
        warm_ms.median,
        warm_ms.median - read_ms.median
    );
    if let Some(one_ms) = one_row {
        let known = load_ms.median + write_ms.median + one_extract.map(|x| x.median).unwrap_or(0.0);
        println!(
            "  one file {:.2} ms: load + parse 1 + write {:.2} ms, the rest {:.2} ms \
             (walk or stat, resolve, summarize, encode)",
            one_ms.median,
            known,
            one_ms.median - known
        );
    }
    println!(
        "  full index {:.1} ms: raw parse {:.1} ms, extraction {:.1} ms, the rest {:.1} ms \
         (walk, hash, resolve, encode, write)",
        full_ms.median,
        raw_ms.median,
        extract_ms.median - raw_ms.median,
        full_ms.median - extract_ms.median
    );

    println!();
    let reset_works = reset_peak();
    println!(
        "peak RSS (VmHWM){}: {}",
        if reset_works { " per phase" } else { " cumulative" },
        peaks.iter().map(|(n, k)| format!("{n} {:.1} MiB", *k as f64 / 1024.0)).collect::<Vec<_>>().join(", ")
    );
    let peak = peaks.iter().map(|p| p.1).max().unwrap_or(0);
    println!("peak RSS of the process: {:.1} MiB", peak as f64 / 1024.0);
    println!("load average at the end: {} (other work on the machine skews every number)", loadavg());
    println!(
        "summary files={} MB={:.2} raw_ms={:.1} extract_ms={:.1} full_ms={:.1} nochange_ms={:.1} onefile_ms={:.1} \
         ratio={ratio:.3} walk_ms={:.1} read_index_ms={:.1} load_ms={:.1} \
         write_ms={:.1} index_MB={:.2} peak_rss_MiB={:.1}",
        sources.len(),
        mb(bytes),
        raw_ms.median,
        extract_ms.median,
        full_ms.median,
        warm_ms.median,
        one_row.map(|m| m.median).unwrap_or(f64::NAN),
        walk_ms.median,
        read_ms.median,
        load_ms.median,
        write_ms.median,
        mb(isize),
        peak as f64 / 1024.0,
    );
}

#[derive(Clone, Copy)]
struct Stat {
    median: f64,
    min: f64,
}

struct Row {
    name: &'static str,
    median: f64,
    min: f64,
    note: String,
}

impl Row {
    fn new(name: &'static str, s: Stat, note: &str) -> Row {
        Row { name, median: s.median, min: s.min, note: note.to_string() }
    }
}

/// Runs the functions one after the other, `warmup + runs` rounds; returns their times and the
/// peak RSS each reached.
fn interleave<const N: usize>(runs: usize, warmup: usize, mut fs: [&mut dyn FnMut(); N]) -> ([Stat; N], [u64; N]) {
    let mut times: [Vec<f64>; N] = std::array::from_fn(|_| Vec::with_capacity(runs));
    let mut peaks = [0u64; N];
    for round in 0..warmup + runs {
        for (i, f) in fs.iter_mut().enumerate() {
            reset_peak();
            let t = Instant::now();
            f();
            let elapsed = ms(t);
            peaks[i] = peaks[i].max(peak_kib());
            if round >= warmup {
                times[i].push(elapsed);
            }
        }
    }
    (times.map(stat), peaks)
}

fn in_pool<R: Send>(pool: &Option<rayon::ThreadPool>, f: impl FnOnce() -> R + Send) -> R {
    match pool {
        Some(p) => p.install(f),
        None => f(),
    }
}

fn measure(runs: usize, warmup: usize, f: impl FnMut()) -> Stat {
    measure_with_setup(runs, warmup, || {}, f)
}

/// Runs `setup` (untimed) then `f` (timed), `warmup + runs` times.
fn measure_with_setup(runs: usize, warmup: usize, mut setup: impl FnMut(), mut f: impl FnMut()) -> Stat {
    let mut times = Vec::with_capacity(runs);
    for i in 0..warmup + runs {
        setup();
        let t = Instant::now();
        f();
        if i >= warmup {
            times.push(ms(t));
        }
    }
    stat(times)
}

/// Median and minimum of at least one time.
fn stat(mut times: Vec<f64>) -> Stat {
    times.sort_by(|a, b| a.total_cmp(b));
    let n = times.len();
    let median = if n % 2 == 1 { times[n / 2] } else { (times[n / 2 - 1] + times[n / 2]) / 2.0 };
    Stat { median, min: times[0] }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

fn env_usize(name: &str) -> Option<usize> {
    let v = std::env::var(name).ok()?;
    match v.trim().parse() {
        Ok(n) => Some(n),
        Err(_) => fail(&format!("{name}={v:?} is not a number")),
    }
}

/// `$ANDON_BENCH_DIR`, else the first argument that is not a flag (`cargo bench` passes
/// `--bench`), else this repository.
fn corpus_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("ANDON_BENCH_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if let Some(a) = std::env::args_os().skip(1).find(|a| !a.to_string_lossy().starts_with('-')) {
        return PathBuf::from(a);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Copies the walked files and the `.gitignore`/`.ignore` files of their directories.
fn copy_corpus(src: &Path, entries: &[WalkEntry], dst: &Path) -> std::io::Result<()> {
    let mut dirs = BTreeSet::new();
    dirs.insert(String::new());
    for e in entries {
        let to = dst.join(&e.rel);
        if let Some(p) = to.parent() {
            fs::create_dir_all(p)?;
        }
        fs::copy(&e.abs, &to)?;
        let mut d = e.rel.as_str();
        while let Some((parent, _)) = d.rsplit_once('/') {
            if !dirs.insert(parent.to_string()) {
                break;
            }
            d = parent;
        }
    }
    for d in &dirs {
        for name in [".gitignore", ".ignore"] {
            let from = src.join(d).join(name);
            if from.is_file() {
                fs::copy(&from, dst.join(d).join(name))?;
            }
        }
    }
    Ok(())
}

/// Removes the copies left by benchmark processes that died without cleaning up (an abort runs no
/// destructors): `andon-bench-<pid>` in the temporary directory whose process is gone (Linux).
fn remove_stale_copies() {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(dir) = fs::read_dir(std::env::temp_dir()) else { return };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix("andon-bench-").and_then(|p| p.parse::<u32>().ok())
            && pid != std::process::id()
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

/// The temporary copy, removed by [`fail`] too (`process::exit` runs no destructors).
static TMP: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        if std::env::var_os("ANDON_BENCH_KEEP").is_some_and(|v| v == "1") {
            eprintln!("kept {}", self.0.display());
        } else {
            let _ = fs::remove_dir_all(&self.0);
        }
    }
}

/// Resets the peak RSS to the current RSS (Linux `clear_refs` 5); false where that is not possible.
fn reset_peak() -> bool {
    fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// VmHWM in KiB, 0 where `/proc` is missing.
fn peak_kib() -> u64 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// The 1-, 5- and 15-minute load averages, "?" where `/proc` is missing.
fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn fail(msg: &str) -> ! {
    eprintln!("bench: {msg}");
    if let Some(t) = TMP.get() {
        drop(Cleanup(t.clone()));
    }
    std::process::exit(2)
}
