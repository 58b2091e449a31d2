//! The dependency graph contracts are judged on: source files and external packages as nodes,
//! every import (and qualified reference across stages) as an edge carrying its line, spec,
//! confidence, edge kinds and evidence tier:
//! - tier 1: an exact resolution of a static import the index parsed;
//! - tier 2: a heuristic resolution, a dynamic import, a qualified reference without an import, or
//!   an import in a file with syntax errors (the parser's recovery may have misread it);
//! - tier 3: an import recovered from text because the syntax tree there has errors.
//!
//! A finding's tier is the lowest level at which the graph, restricted to edges of that tier or
//! better, still refutes the contract; its witness is a shortest chain at that level.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use crate::config::EDGE_KINDS;
use crate::datalog::Store;
use crate::facts::rel;

#[derive(Clone, Debug)]
pub struct Edge {
    pub from: u32,
    pub to: u32,
    pub line: u32,
    pub spec: String,
    pub confidence: String,
    pub tier: u8,
    /// Bit `i` set: the import has edge kind `EDGE_KINDS[i]`.
    pub kinds: u16,
}

pub struct DepGraph {
    names: Vec<String>,
    n_files: u32,
    packages: BTreeMap<String, u32>,
    known_packages: BTreeSet<String>,
    stages: BTreeMap<String, Vec<u32>>,
    stage_of: Vec<Option<String>>,
    modules: Vec<(u32, String)>,
    pub edges: Vec<Edge>,
    out: Vec<Vec<u32>>,
    inc: Vec<Vec<u32>>,
}

/// The relations the graph is built from.
pub const GOALS: &[crate::facts::RelId] = &[
    rel::FILE,
    rel::STAGE,
    rel::IN_STAGE,
    rel::MODULE,
    rel::RESOLVES,
    rel::IMPORT,
    rel::IMPORT_RESOLUTION,
    rel::IMPORT_RECOVERED,
    rel::PARSE_ERROR,
    rel::PACKAGE_IMPORT,
    rel::RESOLVES_EXTERNAL,
    rel::DECLARES_DEPENDENCY,
    rel::DEPENDENCY_IMPORT,
    rel::STAGE_MANIFEST,
    rel::MANIFEST_ENTRY,
    rel::IMPORT_NAME,
];

/// Whether a stage's manifest declares a dependency imported under another stage's import name:
/// only then can `WireReference` (qualified paths into another stage) hold.
pub fn cross_stage_names(store: &Store) -> bool {
    let rows = |r: crate::facts::RelId| store.rels[r.0 as usize].iter();
    let manifest_of: BTreeMap<u32, Vec<u32>> = rows(rel::STAGE_MANIFEST).fold(BTreeMap::new(), |mut m, r| {
        m.entry(r[1]).or_insert_with(Vec::new).push(r[0]);
        m
    });
    let named: BTreeSet<u32> = rows(rel::IMPORT_NAME).map(|r| r[2]).collect();
    rows(rel::DEPENDENCY_IMPORT).any(|r| named.contains(&r[2]) && manifest_of.contains_key(&r[0]))
}

pub fn kind_bit(kind: &str) -> u16 {
    EDGE_KINDS.iter().position(|k| *k == kind).map(|i| 1u16 << i).unwrap_or(0)
}

/// The graph's nodes: files (sorted) then the imported packages, and the packages known by name.
struct Nodes<'s> {
    file_of: HashMap<&'s str, u32>,
    names: Vec<String>,
    n_files: u32,
    packages: BTreeMap<String, u32>,
    known_packages: BTreeSet<String>,
}

impl<'s> Nodes<'s> {
    /// Files and imported packages as nodes; declared and mapped dependencies as known packages.
    fn collect(store: &'s Store) -> Nodes<'s> {
        let s = |v: u32| store.syms.str(v);
        let rows = |r: crate::facts::RelId| store.rels[r.0 as usize].iter();
        let mut files: Vec<&str> = rows(rel::FILE).map(|r| s(r[0])).collect();
        files.sort_unstable();
        files.dedup();
        let file_of: HashMap<&str, u32> = files.iter().enumerate().map(|(i, f)| (*f, i as u32)).collect();
        let mut names: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        let n_files = names.len() as u32;

        let mut known_packages: BTreeSet<String> = BTreeSet::new();
        let mut pkg_names: BTreeSet<&str> = BTreeSet::new();
        for r in rows(rel::PACKAGE_IMPORT) {
            pkg_names.insert(s(r[2]));
        }
        known_packages.extend(pkg_names.iter().map(|p| p.to_string()));
        for r in rows(rel::DECLARES_DEPENDENCY) {
            known_packages.insert(s(r[1]).to_string());
        }
        for r in rows(rel::DEPENDENCY_IMPORT) {
            known_packages.insert(s(r[2]).to_string());
        }
        let mut packages = BTreeMap::new();
        for p in pkg_names {
            packages.insert(p.to_string(), names.len() as u32);
            names.push(p.to_string());
        }
        Nodes { file_of, names, n_files, packages, known_packages }
    }

    /// The files of each stage (sorted by path), and each file's first stage.
    fn stages(&self, store: &Store) -> Membership {
        let s = |v: u32| store.syms.str(v);
        let rows = |r: crate::facts::RelId| store.rels[r.0 as usize].iter();
        let mut stages: BTreeMap<String, Vec<u32>> = rows(rel::STAGE).map(|r| (s(r[0]).to_string(), vec![])).collect();
        let mut stage_of: Vec<Option<String>> = vec![None; self.n_files as usize];
        let mut in_stage: Vec<(&str, &str)> = rows(rel::IN_STAGE).map(|r| (s(r[1]), s(r[0]))).collect();
        in_stage.sort_unstable();
        for (stage, path) in in_stage {
            if let Some(&f) = self.file_of.get(path) {
                stages.entry(stage.to_string()).or_default().push(f);
                stage_of[f as usize].get_or_insert_with(|| stage.to_string());
            }
        }
        Membership { stages, stage_of }
    }

    /// The module names of files, sorted.
    fn modules(&self, store: &Store) -> Vec<(u32, String)> {
        let s = |v: u32| store.syms.str(v);
        let mut modules: Vec<(u32, String)> = store.rels[rel::MODULE.0 as usize]
            .iter()
            .filter_map(|r| self.file_of.get(s(r[0])).map(|&f| (f, s(r[1]).to_string())))
            .collect();
        modules.sort();
        modules
    }
}

/// What is known per import line (path and line ids): its edge kinds, its specs (sorted: a
/// grouped `use` tree or a `from m import a, b` has several on one line), its best confidence,
/// whether it was recovered from text, and which files have syntax errors.
struct ImportLines<'s> {
    kinds: HashMap<(u32, u32), u16>,
    specs: HashMap<(u32, u32), Vec<&'s str>>,
    resolution: HashMap<(u32, u32), &'s str>,
    recovered: BTreeSet<(u32, u32)>,
    broken: BTreeSet<u32>,
}

/// The key of an import line in a row that starts with its path and line.
fn line_key(r: &[u32]) -> (u32, u32) {
    (r[0], r[1])
}

impl<'s> ImportLines<'s> {
    /// Collects what the index says about each import line.
    fn collect(store: &'s Store) -> ImportLines<'s> {
        let s = |v: u32| store.syms.str(v);
        let rows = |r: crate::facts::RelId| store.rels[r.0 as usize].iter();
        let mut kinds: HashMap<(u32, u32), u16> = HashMap::new();
        for r in rows(rel::IMPORT) {
            *kinds.entry(line_key(r)).or_default() |= kind_bit(s(r[3]));
        }
        let mut specs: HashMap<(u32, u32), Vec<&str>> = HashMap::new();
        let mut resolution: HashMap<(u32, u32), &str> = HashMap::new();
        for r in rows(rel::IMPORT_RESOLUTION) {
            specs.entry(line_key(r)).or_default().push(s(r[2]));
            let c = resolution.entry(line_key(r)).or_insert(s(r[3]));
            if s(r[3]) == "exact" {
                *c = "exact";
            }
        }
        for v in specs.values_mut() {
            v.sort_unstable();
            v.dedup();
        }
        let recovered: BTreeSet<(u32, u32)> = rows(rel::IMPORT_RECOVERED).map(line_key).collect();
        let broken: BTreeSet<u32> = rows(rel::PARSE_ERROR).map(|r| r[0]).collect();
        ImportLines { kinds, specs, resolution, recovered, broken }
    }

    /// The evidence tier of an import on line `k` with `confidence` and edge kinds `kinds`.
    fn tier_of(&self, k: (u32, u32), confidence: &str, kinds: u16) -> u8 {
        if self.recovered.contains(&k) {
            3
        } else if confidence != "exact"
            || kinds & (kind_bit("dynamic") | kind_bit("reference")) != 0
            || self.broken.contains(&k.0)
        {
            2
        } else {
            1
        }
    }

    /// The edge `from` -> `to` of import line `k`, with the line's kinds and `extra` ones.
    fn edge(&self, from: u32, to: u32, k: (u32, u32), confidence: &str, extra: u16, spec: &str) -> Edge {
        let kd = self.kinds.get(&k).copied().unwrap_or(0) | extra;
        Edge {
            from,
            to,
            line: k.1,
            spec: spec.to_string(),
            confidence: confidence.to_string(),
            tier: self.tier_of(k, confidence, kd),
            kinds: kd,
        }
    }

    /// The spec of import line `k` that reaches `names` (a module name of the target file, or
    /// the package), when the line has several: the one that names the longest of them as its
    /// path (`a::b::X` reaches `a::b`), else one that has the target's file stem as a segment,
    /// else the smallest.
    fn spec_to<'n>(&self, k: (u32, u32), names: impl Iterator<Item = &'n str> + Clone, stem: &str) -> &'s str {
        let Some(specs) = self.specs.get(&k) else { return "" };
        if specs.len() < 2 {
            return specs.first().copied().unwrap_or("");
        }
        let reach = |spec: &str| {
            names.clone().filter(|m| !m.is_empty() && names_path(spec, m)).map(str::len).max().unwrap_or(0)
        };
        let mut best: Option<(usize, &'s str)> = None;
        for &sp in specs {
            let n = reach(sp);
            if n > 0 && best.is_none_or(|(b, _)| n > b) {
                best = Some((n, sp));
            }
        }
        if let Some((_, sp)) = best {
            return sp;
        }
        let by_stem = (!stem.is_empty()).then(|| specs.iter().copied().find(|sp| segments(sp).any(|seg| seg == stem)));
        by_stem.flatten().unwrap_or(specs[0])
    }

    /// Edges of imports resolved to files of the repository (none from a file to itself).
    fn file_edges(&self, store: &Store, nodes: &Nodes, modules: &[(u32, String)], edges: &mut Vec<Edge>) {
        let s = |v: u32| store.syms.str(v);
        for r in store.rels[rel::RESOLVES.0 as usize].iter() {
            let (Some(&a), Some(&b)) = (nodes.file_of.get(s(r[0])), nodes.file_of.get(s(r[2]))) else { continue };
            if a != b {
                let k = line_key(r);
                let from = modules.partition_point(|(f, _)| *f < b);
                let names = modules[from..].iter().take_while(|(f, _)| *f == b).map(|(_, m)| m.as_str());
                let spec = self.spec_to(k, names, file_stem(s(r[2])));
                edges.push(self.edge(a, b, k, s(r[3]), 0, spec));
            }
        }
    }

    /// Edges of imports of external packages, at their best confidence.
    fn package_edges(&self, store: &Store, nodes: &Nodes, edges: &mut Vec<Edge>) {
        let s = |v: u32| store.syms.str(v);
        let rows = |r: crate::facts::RelId| store.rels[r.0 as usize].iter();
        let mut external: HashMap<(u32, u32), &str> = HashMap::new();
        for r in rows(rel::RESOLVES_EXTERNAL) {
            let c = external.entry(line_key(r)).or_insert(s(r[3]));
            if s(r[3]) == "exact" {
                *c = "exact";
            }
        }
        for r in rows(rel::PACKAGE_IMPORT) {
            let Some(&a) = nodes.file_of.get(s(r[0])) else { continue };
            let k = line_key(r);
            let confidence = external.get(&k).or(self.resolution.get(&k)).copied().unwrap_or("heuristic");
            let package = s(r[2]);
            let spec = match self.spec_to(k, std::iter::once(package), package) {
                "" => package,
                spec => spec,
            };
            edges.push(self.edge(a, nodes.packages[s(r[2])], k, confidence, 0, spec));
        }
    }

    /// Edges of qualified paths into another stage without an import (`other_crate::f()`): they
    /// reach that stage's library entry (or its first file).
    fn reference_edges(&self, store: &Store, nodes: &Nodes, member: &Membership, edges: &mut Vec<Edge>) {
        let s = |v: u32| store.syms.str(v);
        let rows = |r: crate::facts::RelId| store.rels[r.0 as usize].iter();
        let (stages, stage_of) = (&member.stages, &member.stage_of);
        let mut entry: BTreeMap<&str, u32> = BTreeMap::new();
        let manifest_stage: Vec<(&str, &str)> = rows(rel::STAGE_MANIFEST).map(|r| (s(r[1]), s(r[0]))).collect();
        for r in rows(rel::MANIFEST_ENTRY) {
            if s(r[1]) != "lib" {
                continue;
            }
            for (m, stage) in &manifest_stage {
                if *m == s(r[0])
                    && let Some(&f) = nodes.file_of.get(s(r[2]))
                    && stage_of[f as usize].as_deref() == Some(*stage)
                {
                    entry.entry(stage).or_insert(f);
                }
            }
        }
        for r in rows(rel::WIRE_REFERENCE) {
            let producer = s(r[0]);
            let target = entry.get(producer).copied().or_else(|| stages.get(producer).and_then(|v| v.first().copied()));
            let (Some(&a), Some(b)) = (nodes.file_of.get(s(r[2])), target) else { continue };
            edges.push(self.edge(a, b, (r[2], r[3]), "heuristic", kind_bit("reference"), producer));
        }
    }
}

/// The segments of an import spec: split at `::`, `.`, `/` (and the `@` of a scoped package).
fn segments(spec: &str) -> impl Iterator<Item = &str> {
    spec.split("::").flat_map(|p| p.split(['.', '/'])).map(|p| p.trim_start_matches('@')).filter(|p| !p.is_empty())
}

/// Whether `spec` names `name` or a path inside it (`a::b::X` and `a.b.x` name `a::b`, `a.b`);
/// `-` and `_` are one (a package `grep-matcher` is imported as `grep_matcher`).
fn names_path(spec: &str, name: &str) -> bool {
    let norm = |t: &str| t.replace('-', "_");
    let (spec, name) = (norm(spec), norm(name));
    spec == name
        || spec.strip_prefix(name.as_str()).is_some_and(|rest| rest.starts_with("::") || rest.starts_with(['.', '/']))
}

/// The name a file is imported by: its stem, or its directory's for a package's own file
/// (`__init__.py`, `mod.rs`, `index.ts`, `lib.rs`).
fn file_stem(path: &str) -> &str {
    let mut parts = path.rsplit('/');
    let file = parts.next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    match stem {
        "__init__" | "mod" | "index" | "lib" => parts.next().unwrap_or(stem),
        _ => stem,
    }
}

/// For each of `n` nodes, the indexes of its outgoing and of its incoming edges.
fn adjacency(n: usize, edges: &[Edge]) -> (Vec<Vec<u32>>, Vec<Vec<u32>>) {
    let mut out = vec![Vec::new(); n];
    let mut inc = vec![Vec::new(); n];
    for (i, e) in edges.iter().enumerate() {
        out[e.from as usize].push(i as u32);
        inc[e.to as usize].push(i as u32);
    }
    (out, inc)
}

/// The files of each stage, and each file's (first) stage.
struct Membership {
    stages: BTreeMap<String, Vec<u32>>,
    stage_of: Vec<Option<String>>,
}

impl DepGraph {
    /// The graph of the facts in `store`.
    pub fn build(store: &Store) -> DepGraph {
        let nodes = Nodes::collect(store);
        let member = nodes.stages(store);
        let modules = nodes.modules(store);
        let lines = ImportLines::collect(store);
        let mut edges: Vec<Edge> = Vec::new();
        lines.file_edges(store, &nodes, &modules, &mut edges);
        lines.package_edges(store, &nodes, &mut edges);
        lines.reference_edges(store, &nodes, &member, &mut edges);
        // One edge per import line and target, at its best tier.
        edges.sort_by_key(|e| (e.from, e.line, e.to, e.tier));
        edges.dedup_by(|b, a| (a.from, a.line, a.to) == (b.from, b.line, b.to));
        let (out, inc) = adjacency(nodes.names.len(), &edges);
        let Nodes { names, n_files, packages, known_packages, .. } = nodes;
        let Membership { stages, stage_of } = member;
        DepGraph { names, n_files, packages, known_packages, stages, stage_of, modules, edges, out, inc }
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn name(&self, n: u32) -> &str {
        &self.names[n as usize]
    }

    pub fn is_file(&self, n: u32) -> bool {
        n < self.n_files
    }

    pub fn files(&self) -> impl Iterator<Item = u32> {
        0..self.n_files
    }

    pub fn file(&self, path: &str) -> Option<u32> {
        self.names[..self.n_files as usize].binary_search_by(|p| p.as_str().cmp(path)).ok().map(|i| i as u32)
    }

    pub fn stage_files(&self, stage: &str) -> Option<&[u32]> {
        self.stages.get(stage).map(Vec::as_slice)
    }

    pub fn stage_names(&self) -> impl Iterator<Item = &str> {
        self.stages.keys().map(String::as_str)
    }

    pub fn stage_of(&self, n: u32) -> Option<&str> {
        self.stage_of.get(n as usize).and_then(|s| s.as_deref())
    }

    pub fn modules(&self) -> impl Iterator<Item = (u32, &str)> {
        self.modules.iter().map(|(f, m)| (*f, m.as_str()))
    }

    pub fn knows_package(&self, name: &str) -> bool {
        self.known_packages.contains(name)
    }

    pub fn package_node(&self, name: &str) -> Option<u32> {
        self.packages.get(name).copied()
    }

    pub fn package_names(&self) -> impl Iterator<Item = &str> {
        self.known_packages.iter().map(String::as_str)
    }

    pub fn out_edges(&self, n: u32) -> impl Iterator<Item = u32> + '_ {
        self.out[n as usize].iter().copied()
    }

    pub fn allowed(&self, e: u32, max_tier: u8, mask: u16) -> bool {
        let e = &self.edges[e as usize];
        e.tier <= max_tier && e.kinds & mask == 0
    }

    /// For every node, the first edge of a shortest chain from it to a `targets` node whose inner
    /// nodes are neither targets nor `barrier` (None: no such chain). Targets themselves get None.
    pub fn toward(&self, targets: &[bool], barrier: &[bool], max_tier: u8, mask: u16) -> Vec<Option<u32>> {
        let mut next: Vec<Option<u32>> = vec![None; self.len()];
        let mut seen: Vec<bool> = targets.to_vec();
        let mut queue: VecDeque<u32> = (0..self.len() as u32).filter(|&n| targets[n as usize]).collect();
        while let Some(v) = queue.pop_front() {
            for &e in &self.inc[v as usize] {
                if !self.allowed(e, max_tier, mask) {
                    continue;
                }
                let u = self.edges[e as usize].from;
                if seen[u as usize] || barrier[u as usize] {
                    continue;
                }
                seen[u as usize] = true;
                next[u as usize] = Some(e);
                queue.push_back(u);
            }
        }
        next
    }

    /// The edges into node `n`.
    pub fn in_edges(&self, n: u32) -> impl Iterator<Item = u32> + '_ {
        self.inc[n as usize].iter().copied()
    }

    /// The chain that starts with edge `first` and then follows `next` to a target.
    pub fn follow(&self, first: u32, next: &[Option<u32>]) -> Vec<u32> {
        let mut chain = vec![first];
        let mut at = self.edges[first as usize].to;
        while let Some(e) = next[at as usize] {
            chain.push(e);
            at = self.edges[e as usize].to;
        }
        chain
    }

    /// For each ordered pair of distinct units (`unit_of[n]`), a shortest chain from a node of the
    /// first to a node of the second through nodes of no unit.
    pub fn unit_chains(
        &self,
        unit_of: &[Option<usize>],
        units: usize,
        max_tier: u8,
        mask: u16,
    ) -> BTreeMap<(usize, usize), Vec<u32>> {
        let mut found = BTreeMap::new();
        let mut of_unit: Vec<Vec<u32>> = vec![Vec::new(); units];
        for (n, u) in unit_of.iter().enumerate() {
            if let Some(u) = u {
                of_unit[*u].push(n as u32);
            }
        }
        // one search per unit over what it reaches through nodes of no unit; the marks it leaves
        // are cleared after it, so the work is what each search touches, not the graph per unit
        let mut prev: Vec<Option<u32>> = vec![None; self.len()];
        let mut seen: Vec<bool> = vec![false; self.len()];
        for (u, start) in of_unit.iter().enumerate() {
            let mut touched: Vec<u32> = start.clone();
            for &n in start {
                seen[n as usize] = true;
            }
            let mut queue: VecDeque<u32> = start.iter().copied().collect();
            while let Some(v) = queue.pop_front() {
                for &e in &self.out[v as usize] {
                    if !self.allowed(e, max_tier, mask) {
                        continue;
                    }
                    let w = self.edges[e as usize].to;
                    if seen[w as usize] {
                        continue;
                    }
                    seen[w as usize] = true;
                    prev[w as usize] = Some(e);
                    touched.push(w);
                    match unit_of[w as usize] {
                        Some(other) => {
                            found.entry((u, other)).or_insert_with(|| {
                                let mut chain = vec![e];
                                let mut at = self.edges[e as usize].from;
                                while let Some(p) = prev[at as usize] {
                                    chain.push(p);
                                    at = self.edges[p as usize].from;
                                }
                                chain.reverse();
                                chain
                            });
                        }
                        None => queue.push_back(w),
                    }
                }
            }
            for n in touched {
                seen[n as usize] = false;
                prev[n as usize] = None;
            }
        }
        found
    }
}
