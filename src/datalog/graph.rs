//! Graph algorithms over derived relations: the stream order and cycles (petgraph
//! strongly connected components, condensed and ordered deterministically), and shortest
//! dependency chains for `andon why`. Results that are relations come back to the Datalog layer
//! through [`compute`].

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::datalog::Store;
use crate::dialect::Program;

/// Rows of relation `name` (which must exist).
fn rows<'s>(prog: &Program, store: &'s Store, name: &str) -> impl Iterator<Item = &'s [u32]> {
    let r = prog.relation(name).unwrap_or_else(|| panic!("relation {name} is declared"));
    store.rels[r].iter()
}

/// Strongly connected components of a graph over `nodes` (sorted ids) with `edges`, each component
/// sorted by `key`, components in a deterministic topological order (sources of edges first; ties
/// by the smallest key of the component).
pub fn condensed_order<K: Ord + Clone>(nodes: &[u32], edges: &[(u32, u32)], key: impl Fn(u32) -> K) -> Vec<Vec<u32>> {
    let mut g: DiGraph<u32, ()> = DiGraph::new();
    let mut ix: BTreeMap<u32, NodeIndex> = BTreeMap::new();
    for &n in nodes {
        ix.entry(n).or_insert_with(|| g.add_node(n));
    }
    for &(a, b) in edges {
        let ia = *ix.entry(a).or_insert_with(|| g.add_node(a));
        let ib = *ix.entry(b).or_insert_with(|| g.add_node(b));
        g.add_edge(ia, ib, ());
    }
    let mut comps: Vec<Vec<u32>> = tarjan_scc(&g).into_iter().map(|c| c.into_iter().map(|n| g[n]).collect()).collect();
    for c in &mut comps {
        c.sort_by_key(|&n| key(n));
    }
    let mut comp_of: BTreeMap<u32, usize> = BTreeMap::new();
    for (i, c) in comps.iter().enumerate() {
        for &n in c {
            comp_of.insert(n, i);
        }
    }
    let mut indeg = vec![0usize; comps.len()];
    let mut succ: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); comps.len()];
    for &(a, b) in edges {
        let (ca, cb) = (comp_of[&a], comp_of[&b]);
        if ca != cb && succ[ca].insert(cb) {
            indeg[cb] += 1;
        }
    }
    // Kahn's algorithm, always taking the ready component with the smallest key.
    let mut ready: BTreeSet<(K, usize)> =
        (0..comps.len()).filter(|&c| indeg[c] == 0).map(|c| (key(comps[c][0]), c)).collect();
    let mut out = Vec::with_capacity(comps.len());
    while let Some((k, c)) = ready.iter().next().cloned() {
        ready.remove(&(k, c));
        for &s in &succ[c] {
            indeg[s] -= 1;
            if indeg[s] == 0 {
                ready.insert((key(comps[s][0]), s));
            }
        }
        out.push(std::mem::take(&mut comps[c]));
    }
    out
}

/// The stream order of stages and its cycles: (order, cycles), by stage id.
pub fn stream(prog: &Program, store: &Store) -> (Vec<u32>, Vec<Vec<u32>>) {
    let nodes: Vec<u32> = rows(prog, store, "Stage").map(|r| r[0]).collect();
    let edges: Vec<(u32, u32)> = rows(prog, store, "Wire").map(|r| (r[0], r[1])).collect();
    let comps = condensed_order(&nodes, &edges, |n| store.syms.str(n).to_string());
    let order = comps.iter().flatten().copied().collect();
    let cycles = comps.into_iter().filter(|c| c.len() > 1).collect();
    (order, cycles)
}

/// Cycles among source files (components of more than one file), ordered by their first path.
pub fn module_cycles(prog: &Program, store: &Store) -> Vec<Vec<u32>> {
    let edges: Vec<(u32, u32)> = rows(prog, store, "ModuleEdge").map(|r| (r[0], r[1])).collect();
    let mut g: DiGraph<u32, ()> = DiGraph::new();
    let mut ix: BTreeMap<u32, NodeIndex> = BTreeMap::new();
    for &(a, b) in &edges {
        let ia = *ix.entry(a).or_insert_with(|| g.add_node(a));
        let ib = *ix.entry(b).or_insert_with(|| g.add_node(b));
        g.add_edge(ia, ib, ());
    }
    let name = |n: &u32| store.syms.str(*n).to_string();
    let mut cycles: Vec<Vec<u32>> = tarjan_scc(&g)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut v: Vec<u32> = c.into_iter().map(|n| g[n]).collect();
            v.sort_by_key(name);
            v
        })
        .collect();
    cycles.sort_by_key(|c| name(&c[0]));
    cycles
}

/// Fills computed relation `rel` (see `.computed` in `rules/stream.dl`).
pub fn compute(prog: &Program, store: &Store, rel: usize) -> Vec<u32> {
    let mut out = Vec::new();
    match prog.rels[rel].name.as_str() {
        "StreamOrder" => {
            for (i, s) in stream(prog, store).0.into_iter().enumerate() {
                out.extend([s, i as u32]);
            }
        }
        "StageCycle" => {
            for (i, c) in stream(prog, store).1.into_iter().enumerate() {
                for s in c {
                    out.extend([i as u32, s]);
                }
            }
        }
        "ModuleCycle" => {
            for (i, c) in module_cycles(prog, store).into_iter().enumerate() {
                for p in c {
                    out.extend([i as u32, p]);
                }
            }
        }
        other => panic!("no computation for relation {other}"),
    }
    out
}

/// One import on a dependency chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainHop {
    pub path: String,
    pub line: u32,
    pub spec: String,
    pub target: String,
    pub confidence: String,
}

/// The shortest chain of imports from any file of `from` to any file of `to` (breadth-first over
/// the file import graph; ties broken by path and line, so the answer is stable).
pub fn shortest_chain(prog: &Program, store: &Store, from: &[u32], to: &[u32]) -> Option<Vec<ChainHop>> {
    let s = |v: u32| store.syms.str(v).to_string();
    // path -> sorted (line, target, confidence)
    let mut adj: BTreeMap<u32, Vec<(u32, String, u32, u32)>> = BTreeMap::new();
    for r in rows(prog, store, "Resolves") {
        if r[0] != r[2] {
            adj.entry(r[0]).or_default().push((r[1], s(r[2]), r[2], r[3]));
        }
    }
    for v in adj.values_mut() {
        v.sort();
        v.dedup_by_key(|e| (e.0, e.2));
    }
    let targets: BTreeSet<u32> = to.iter().copied().collect();
    let mut prev: BTreeMap<u32, (u32, u32, u32)> = BTreeMap::new(); // node -> (from, line, confidence)
    let mut start: Vec<u32> = from.to_vec();
    start.sort_by_key(|&v| s(v));
    let mut seen: BTreeSet<u32> = start.iter().copied().collect();
    let mut queue: VecDeque<u32> = start.into_iter().collect();
    let mut hit = None;
    while let Some(n) = queue.pop_front() {
        if targets.contains(&n) && !from.contains(&n) {
            hit = Some(n);
            break;
        }
        for (line, _, t, conf) in adj.get(&n).map(Vec::as_slice).unwrap_or(&[]) {
            if seen.insert(*t) {
                prev.insert(*t, (n, *line, *conf));
                queue.push_back(*t);
            }
        }
    }
    // `from` and `to` overlapping (e.g. a stage to itself) is a chain of length zero only when
    // asked for the same thing; otherwise a hit must be a real import.
    let mut n = hit?;
    let specs: BTreeMap<(u32, u32), String> =
        rows(prog, store, "ImportResolution").map(|r| ((r[0], r[1]), s(r[2]))).collect();
    let mut hops = Vec::new();
    while let Some(&(p, line, conf)) = prev.get(&n) {
        hops.push(ChainHop {
            path: s(p),
            line,
            spec: specs.get(&(p, line)).cloned().unwrap_or_default(),
            target: s(n),
            confidence: s(conf),
        });
        n = p;
    }
    hops.reverse();
    Some(hops)
}
