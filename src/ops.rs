//! Use cases over the index: the stream report, dependency chains and the suspected injections.
//! Plain data out; `output` renders it.

use crate::facts::vocab::Confidence;
use std::collections::BTreeMap;

use crate::datalog::graph::{self, ChainHop};
use crate::datalog::{self, Store};
use crate::dialect::Program;
use crate::facts::rel;
use crate::index::Index;

/// Why a dependency chain could not be found.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The facts could not be derived.
    #[error(transparent)]
    Derive(#[from] crate::datalog::Error),
    /// An endpoint names nothing in the index; `nearest` is the closest stage, module or file.
    #[error(
        "`{}` is not a stage, module, file or directory of the index{}",
        crate::text::line(.name),
        .nearest.as_deref().map(|n| format!("; did you mean `{}`?", crate::text::line(n))).unwrap_or_default()
    )]
    UnknownEndpoint { name: String, nearest: Option<String> },
    /// `--within` names no stage of the index.
    #[error(
        "`{}` is not a stage of the index{}",
        crate::text::line(.name),
        .nearest.as_deref().map(|n| format!("; did you mean `{}`?", crate::text::line(n))).unwrap_or_default()
    )]
    UnknownStage { name: String, nearest: Option<String> },
}

/// A confidence as the rules wrote it (the schema types the column, so it is one of the tokens).
fn confidence(token: &str) -> Confidence {
    Confidence::parse(token).unwrap_or(Confidence::Unresolved)
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageRow {
    pub name: String,
    pub root: String,
    pub ecosystem: String,
    pub confidence: Confidence,
    pub source: String,
    pub files: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireRow {
    pub producer: String,
    pub consumer: String,
    /// How many imports (file:line) carry it.
    pub imports: usize,
    /// The names that cross it, sorted.
    pub symbols: Vec<String>,
    pub confidence: Confidence,
    /// Edge kinds of the imports carrying it, sorted.
    pub kinds: Vec<String>,
    /// What the consumer needs it for ([`WireUse`]).
    pub used_for: WireUse,
}

/// What a consumer needs a wire for: to run, or only to be developed. A wire is `Dev` when the
/// consumer's manifest declares the producer as a dev or build dependency and nothing else;
/// otherwise `RunTime` when one import or qualified path carrying it is neither in test code nor
/// type-only; otherwise `Type` when one is a type-only (or `TYPE_CHECKING`) import outside test
/// code; otherwise `Test`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum WireUse {
    #[default]
    RunTime,
    Type,
    Test,
    Dev,
}

impl WireUse {
    pub const ALL: [WireUse; 4] = [WireUse::RunTime, WireUse::Type, WireUse::Test, WireUse::Dev];

    /// Its token in JSON and the report's class.
    pub const fn token(self) -> &'static str {
        match self {
            WireUse::RunTime => "run-time",
            WireUse::Type => "type",
            WireUse::Test => "test",
            WireUse::Dev => "dev",
        }
    }
}

impl std::fmt::Display for WireUse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.token())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamReport {
    /// In declaration order when the stream is declared, else by name.
    pub stages: Vec<StageRow>,
    pub wires: Vec<WireRow>,
    pub order: Vec<String>,
    pub cycles: Vec<Vec<String>>,
    pub module_cycles: Vec<Vec<String>>,
    /// What a declared stream leaves out, when the stream is declared.
    pub declared: Option<Declared>,
    /// The support directories (tests, examples, docs, benchmarks, vendored code, tooling), by
    /// directory: never stages.
    pub support: Vec<SupportRow>,
    /// `--within STAGE`: the modules inside one stage, with their imports and layers.
    pub within: Option<WithinView>,
}

/// The modules inside one stage (`andon stream --within`): its top-level modules and
/// subpackages, the imports between them and the layers they fall into, top first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WithinView {
    pub stage: String,
    /// The directory the modules are the children of.
    pub base: String,
    pub modules: Vec<WithinModule>,
    /// (importing module, imported module, imports), by name.
    pub imports: Vec<(String, String, usize)>,
    /// Module names, top layer first; a module with no import in or out is in none.
    pub layers: Vec<Vec<String>>,
    /// Subpackages none of which imports another.
    pub independent: Vec<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WithinModule {
    pub name: String,
    pub paths: Vec<String>,
    pub files: usize,
    /// Its layer, from the top (0); none when it imports nothing and nothing imports it.
    pub layer: Option<usize>,
    pub package: bool,
}

/// A support directory: code beside the stages (`Support`), with how many of its files the
/// index holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SupportRow {
    pub dir: String,
    pub role: String,
    pub files: usize,
}

/// The support directories of the index, read from the resolution's facts, sorted by directory.
pub fn support(idx: &Index) -> Vec<SupportRow> {
    let seg = &idx.global;
    let mut files: BTreeMap<&str, usize> = BTreeMap::new();
    for r in seg.rows_of(rel::IN_SUPPORT) {
        *files.entry(seg.str(r[1])).or_default() += 1;
    }
    let mut rows: Vec<SupportRow> = seg
        .rows_of(rel::SUPPORT)
        .map(|r| {
            let dir = seg.str(r[0]);
            SupportRow {
                dir: dir.to_string(),
                role: seg.str(r[1]).to_string(),
                files: files.get(dir).copied().unwrap_or(0),
            }
        })
        .collect();
    rows.sort_by(|a, b| (&a.dir, &a.role).cmp(&(&b.dir, &b.role)));
    rows
}

/// What a declared stream (R32) leaves out: the imports across stages it has no wire for (a
/// finding each), and the source files outside every declared root (in no stage).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Declared {
    /// (producer, consumer, path, line), sorted.
    pub undeclared: Vec<(String, String, String, u32)>,
    /// Sorted.
    pub outside: Vec<String>,
}

/// Evaluates the built-in rules for `goals` over the index, on the run-time engine.
pub fn derive(prog: &Program, idx: &Index, goals: &[crate::facts::RelId]) -> Result<Store, Error> {
    let goals: Vec<usize> = goals.iter().map(|r| r.0 as usize).collect();
    let need = prog.needed(&goals);
    let mut store = datalog::load(prog, idx, Some(&need))?;
    datalog::run_runtime(prog, &mut store, Some(&need));
    Ok(store)
}

/// The stream of the index: its relations recalled when kept for these facts, else derived and
/// kept for the next run ([`datalog::kept`]).
pub fn stream(idx: &Index) -> Result<StreamReport, Error> {
    stream_with(idx, true)
}

/// [`stream`] that writes nothing (`andon status` writes only its report): kept relations are
/// read, never kept.
pub fn stream_read_only(idx: &Index) -> Result<StreamReport, Error> {
    stream_with(idx, false)
}

fn stream_with(idx: &Index, keep: bool) -> Result<StreamReport, Error> {
    let prog = datalog::builtin_program();
    let store = datalog::kept::derive(&prog, idx, &datalog::kept::STREAM, keep, datalog::Budget::UNLIMITED)?;
    let s = |v: u32| store.syms.str(v).to_string();
    let rows = |r: crate::facts::RelId| store.rels[r.0 as usize].iter();
    let mut files: BTreeMap<u32, usize> = BTreeMap::new();
    for r in rows(rel::IN_STAGE) {
        *files.entry(r[1]).or_default() += 1;
    }
    let info: BTreeMap<u32, &[u32]> = rows(rel::STAGE_INFO).map(|r| (r[0], r)).collect();
    let mut stages: Vec<StageRow> = rows(rel::STAGE)
        .map(|r| {
            let i = info.get(&r[0]);
            let col = |k: usize| i.map(|i| s(i[k])).unwrap_or_default();
            StageRow {
                name: s(r[0]),
                root: s(r[1]),
                ecosystem: col(1),
                confidence: confidence(&col(2)),
                source: col(3),
                files: files.get(&r[0]).copied().unwrap_or(0),
            }
        })
        .collect();
    // a declared stream keeps its order; detected stages go by name
    let declared_at: BTreeMap<u32, u32> = rows(rel::DECLARED_STAGE).map(|r| (r[0], r[1])).collect();
    let name_of: BTreeMap<String, u32> = rows(rel::STAGE).map(|r| (s(r[0]), r[0])).collect();
    stages.sort_by_key(|x| (name_of.get(&x.name).and_then(|v| declared_at.get(v)).copied(), x.name.clone()));
    let mut wires: BTreeMap<(String, String), WireRow> = BTreeMap::new();
    for r in rows(rel::WIRE) {
        let (p, c) = (s(r[0]), s(r[1]));
        wires.insert(
            (p.clone(), c.clone()),
            WireRow {
                producer: p,
                consumer: c,
                imports: 0,
                symbols: Vec::new(),
                confidence: Confidence::Unresolved,
                kinds: Vec::new(),
                used_for: WireUse::RunTime,
            },
        );
    }
    let key = |r: &[u32]| (s(r[0]), s(r[1]));
    let mut carried: BTreeMap<(String, String), std::collections::BTreeSet<(u32, u32)>> = BTreeMap::new();
    for r in rows(rel::WIRE_IMPORT) {
        carried.entry(key(r)).or_default().insert((r[2], r[3]));
    }
    for r in rows(rel::WIRE_REFERENCE) {
        carried.entry(key(r)).or_default().insert((r[2], r[3]));
    }
    for (k, set) in carried {
        if let Some(w) = wires.get_mut(&k) {
            w.imports = set.len();
        }
    }
    for r in rows(rel::WIRE_SYMBOL) {
        if let Some(w) = wires.get_mut(&key(r)) {
            w.symbols.push(s(r[2]));
        }
    }
    for r in rows(rel::WIRE_CONFIDENCE) {
        if let Some(w) = wires.get_mut(&key(r)) {
            w.confidence = confidence(&s(r[2]));
        }
    }
    // each import's edge kinds, to tell what the consumer needs the wire for
    let mut import_kinds: BTreeMap<(String, String), BTreeMap<(u32, u32), Vec<String>>> = BTreeMap::new();
    for r in rows(rel::WIRE_EDGE_KIND) {
        if let Some(w) = wires.get_mut(&key(r)) {
            w.kinds.push(s(r[4]));
            import_kinds.entry(key(r)).or_default().entry((r[2], r[3])).or_default().push(s(r[4]));
        }
    }
    let mut references: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for r in rows(rel::WIRE_REFERENCE) {
        references.entry(key(r)).or_default().push(s(r[2]));
    }
    let needs = Needs::of(idx);
    for (k, w) in &mut wires {
        let imports = import_kinds.get(k).into_iter().flat_map(|m| m.values());
        let refs = references.get(k).into_iter().flatten().map(String::as_str);
        w.used_for = needs.judge(&k.0, &k.1, imports, refs);
    }
    let mut wires: Vec<WireRow> = wires.into_values().collect();
    for w in &mut wires {
        w.symbols.sort();
        w.symbols.dedup();
        w.kinds.sort();
        w.kinds.dedup();
    }
    let (order, cycles) = graph::stream(&prog, &store);
    let names = |v: Vec<u32>| v.into_iter().map(s).collect::<Vec<_>>();
    let declared = rows(rel::STAGE_MODE).any(|r| s(r[0]) == "declared").then(|| declared_gaps(idx, &store));
    Ok(StreamReport {
        stages,
        wires,
        order: names(order),
        cycles: cycles.into_iter().map(names).collect(),
        module_cycles: graph::module_cycles(&prog, &store).into_iter().map(names).collect(),
        declared,
        support: support(idx),
        within: None,
    })
}

/// What [`WireUse`] is judged from beyond the wire's own imports: the test files, and the
/// dependencies each stage's manifests declare, by the package names of the stages.
struct Needs {
    tests: std::collections::BTreeSet<String>,
    /// Per stage, the names its manifests give its package.
    names: BTreeMap<String, Vec<String>>,
    /// Per stage, (dependency, kind) its manifests declare.
    declares: BTreeMap<String, Vec<(String, String)>>,
}

impl Needs {
    fn of(idx: &Index) -> Needs {
        let segments: Vec<&crate::facts::Segment> = idx.facts.iter().map(|f| f.core()).chain([&idx.global]).collect();
        let mut tests = std::collections::BTreeSet::new();
        let mut manifest_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut manifest_deps: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
        let mut stage_manifests: Vec<(String, String)> = Vec::new();
        for seg in &segments {
            for (r, cols) in seg.all_rows() {
                let col = |k: usize| seg.str(cols[k]).to_string();
                match r {
                    rel::TEST_FILE => {
                        tests.insert(col(0));
                    }
                    rel::MANIFEST => manifest_name.entry(col(0)).or_default().push(col(2)),
                    rel::DECLARES_DEPENDENCY => manifest_deps.entry(col(0)).or_default().push((col(1), col(2))),
                    rel::STAGE_MANIFEST => stage_manifests.push((col(0), col(1))),
                    _ => {}
                }
            }
        }
        let (mut names, mut declares): (BTreeMap<String, Vec<String>>, BTreeMap<String, Vec<(String, String)>>) =
            Default::default();
        for (stage, m) in stage_manifests {
            names.entry(stage.clone()).or_default().extend(manifest_name.get(&m).into_iter().flatten().cloned());
            declares.entry(stage).or_default().extend(manifest_deps.get(&m).into_iter().flatten().cloned());
        }
        Needs { tests, names, declares }
    }

    /// What `consumer` needs the wire from `producer` for, given the edge kinds of each import
    /// carrying it and the files of its qualified paths.
    fn judge<'a>(
        &self,
        producer: &str,
        consumer: &str,
        imports: impl Iterator<Item = &'a Vec<String>>,
        references: impl Iterator<Item = &'a str>,
    ) -> WireUse {
        let names = self.names.get(producer).map(Vec::as_slice).unwrap_or_default();
        let declared: Vec<&str> = self
            .declares
            .get(consumer)
            .into_iter()
            .flatten()
            .filter(|(dep, _)| !dep.is_empty() && names.contains(dep))
            .map(|(_, kind)| kind.as_str())
            .collect();
        if !declared.is_empty() && declared.iter().all(|k| matches!(*k, "dev" | "build")) {
            return WireUse::Dev;
        }
        let mut seen = std::collections::BTreeSet::new();
        for kinds in imports {
            let has = |k: &str| kinds.iter().any(|x| x == k);
            seen.insert(if has("test") {
                WireUse::Test
            } else if has("type_only") || has("type_checking") {
                WireUse::Type
            } else {
                WireUse::RunTime
            });
        }
        for path in references {
            seen.insert(if self.tests.contains(path) { WireUse::Test } else { WireUse::RunTime });
        }
        // the first of run-time, type, test that any import needs; run-time when nothing carries it
        seen.into_iter().next().unwrap_or(WireUse::RunTime)
    }
}

/// What a declared stream leaves out, from the derived `store` and the file table of `idx`.
fn declared_gaps(idx: &Index, store: &Store) -> Declared {
    let s = |v: u32| store.syms.str(v).to_string();
    let rows = |r: crate::facts::RelId| store.rels[r.0 as usize].iter();
    let mut undeclared: Vec<(String, String, String, u32)> =
        rows(rel::UNDECLARED_WIRE_IMPORT).map(|r| (s(r[0]), s(r[1]), s(r[2]), r[3])).collect();
    undeclared.sort();
    undeclared.dedup();
    let staged: std::collections::BTreeSet<String> = rows(rel::IN_STAGE).map(|r| s(r[0])).collect();
    let mut outside: Vec<String> =
        idx.files.iter().filter(|f| !f.lang.is_empty() && !staged.contains(&f.path)).map(|f| f.path.clone()).collect();
    outside.sort();
    Declared { undeclared, outside }
}

/// Repository text that addresses the tool (R123): reported with its location, never obeyed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Injection {
    pub path: String,
    pub line: u32,
    /// The line as extracted (trimmed, clipped); raw repository text, escaped only when rendered.
    pub text: String,
    /// The words that made it suspect (an address to andon or a tool, an instruction, a verdict
    /// claim), as the rule spells them.
    pub words: Vec<String>,
}

/// Every `SuspectedInjection` row of the index, sorted by path, line and text. Read straight from
/// the stored segments: no rule runs and nothing is re-extracted, so it costs one pass over rows
/// the index already decoded.
pub fn suspected_injections(idx: &Index) -> Vec<Injection> {
    let segments = idx.facts.iter().map(|f| f.core()).chain([&idx.global]);
    let mut out: Vec<Injection> = segments
        .flat_map(|seg| {
            seg.rows_of(rel::SUSPECTED_INJECTION).map(move |r| {
                let text = seg.str(r[2]).to_string();
                let words = crate::extract::suspicion(&text).map(|s| s.1).unwrap_or_default();
                Injection { path: seg.str(r[0]).to_string(), line: r[1], text, words }
            })
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The suspected injections in `files` (a change's files): [`suspected_injections`] of those
/// paths only, in the same order.
pub fn injections_in<'a>(idx: &Index, files: impl IntoIterator<Item = &'a str>) -> Vec<Injection> {
    let files: std::collections::BTreeSet<&str> = files.into_iter().collect();
    suspected_injections(idx).into_iter().filter(|i| files.contains(i.path.as_str())).collect()
}

/// What `andon why` was asked about, resolved to files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub name: String,
    /// stage, module, file or directory
    pub kind: &'static str,
    pub files: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WhyReport {
    pub from: Endpoint,
    pub to: Endpoint,
    pub chain: Option<Vec<ChainHop>>,
}

/// The shortest dependency chain from `a` to `b` (each a stage, module, file or directory).
pub fn why(idx: &Index, a: &str, b: &str) -> Result<WhyReport, Error> {
    let prog = datalog::builtin_program();
    let goals = [rel::RESOLVES, rel::IN_STAGE, rel::MODULE, rel::IMPORT_RESOLUTION, rel::FILE, rel::STAGE];
    let store = derive(&prog, idx, &goals)?;
    let from = endpoint(&store, a)?;
    let to = endpoint(&store, b)?;
    let ids = |e: &Endpoint| e.files.iter().filter_map(|f| store.syms.get(f)).collect::<Vec<u32>>();
    let chain = graph::shortest_chain(&prog, &store, &ids(&from), &ids(&to));
    Ok(WhyReport { from, to, chain })
}

fn endpoint(store: &Store, name: &str) -> Result<Endpoint, Error> {
    let s = |v: u32| store.syms.str(v).to_string();
    let rows = |r: crate::facts::RelId| store.rels[r.0 as usize].iter();
    let name = name.trim_start_matches("./").trim_end_matches('/');
    let collect = |kind: &'static str, mut files: Vec<String>| {
        files.sort();
        files.dedup();
        Endpoint { name: name.to_string(), kind, files }
    };
    if rows(rel::FILE).any(|r| s(r[0]) == name) {
        return Ok(collect("file", vec![name.to_string()]));
    }
    let in_stage: Vec<String> = rows(rel::IN_STAGE).filter(|r| s(r[1]) == name).map(|r| s(r[0])).collect();
    if !in_stage.is_empty() {
        return Ok(collect("stage", in_stage));
    }
    let module: Vec<String> = rows(rel::MODULE).filter(|r| s(r[1]) == name).map(|r| s(r[0])).collect();
    if !module.is_empty() {
        return Ok(collect("module", module));
    }
    let prefix = format!("{name}/");
    let under: Vec<String> =
        rows(rel::FILE).map(|r| s(r[0])).filter(|p| p.starts_with(&prefix) || name == ".").collect();
    if !under.is_empty() {
        return Ok(collect("directory", under));
    }
    // Nothing by that name: suggest the nearest stage, module or file.
    let mut cands: Vec<String> = rows(rel::STAGE).map(|r| s(r[0])).collect();
    cands.extend(rows(rel::MODULE).map(|r| s(r[1])));
    cands.extend(rows(rel::FILE).map(|r| s(r[0])));
    let lower = name.to_lowercase();
    let near = cands.iter().min_by_key(|c| (crate::text::edit_distance(&lower, &c.to_lowercase()), c.len()));
    Err(Error::UnknownEndpoint { name: name.to_string(), nearest: near.cloned() })
}
