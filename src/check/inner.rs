//! Architecture inside a stage: its top-level modules (a Python package's modules and
//! subpackages, a crate's modules under `src/`, a TypeScript package's directories and files
//! under `src/`) as units, the imports between them, and the layers they fall into. The layers are
//! what an import-linter user writes by hand: the units' import graph with each cycle collapsed
//! into one unit, ordered by its acyclic condensation (a unit sits one layer above the highest
//! unit it imports), units on one level side by side. A package's facade (`__init__.py`, `lib.rs`,
//! `index.ts` at the top) re-exports its units: it is in no layer, and the imports through it count.
//! The same view, a level down, inside each subpackage. `andon init` writes the layers as `layers`
//! contracts over path selectors; `andon stream --within` shows them.

use std::collections::{BTreeMap, BTreeSet};

use super::graph::DepGraph;

/// The files that stand for their package rather than for a unit of it.
const FACADES: &[&str] = &[
    "__init__.py",
    "__init__.pyi",
    "lib.rs",
    "main.rs",
    "mod.rs",
    "index.ts",
    "index.tsx",
    "index.js",
    "index.jsx",
    "index.mts",
    "index.mjs",
    "index.cts",
    "index.cjs",
    "index.d.ts",
];

/// One unit of a stage: a top-level module or subpackage (a file and a directory of the same
/// stem, as a crate's `foo.rs` and `foo/`, are one unit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// Its name as the directory lists it (`_client`, `_transports`).
    pub name: String,
    /// The repo-relative paths it covers: a directory, a file, or both.
    pub paths: Vec<String>,
    /// Selectors naming exactly its files.
    pub selectors: Vec<String>,
    pub files: usize,
    /// The directory it holds, for a subpackage.
    pub dir: Option<String>,
}

/// The architecture of one directory of a stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Within {
    /// The directory its units are the children of.
    pub base: String,
    pub units: Vec<Unit>,
    /// (importing unit, imported unit, how many imports lead there directly or through files
    /// of no unit), sorted.
    pub edges: Vec<(usize, usize, usize)>,
    /// The layers, top first, each a list of units; units with no import in or out are in none.
    pub layers: Vec<Vec<usize>>,
    /// Sets of two or more subpackages none of which reaches another, directly or indirectly.
    pub independent: Vec<Vec<usize>>,
}

/// The units of `files` (graph nodes) under their common source directory, the imports between
/// them (edges of tier `max_tier` or better whose kinds are not in `mask`) and their layers;
/// `is_test` leaves test files out. None when there are fewer than two units.
pub fn within(g: &DepGraph, files: &[u32], is_test: &dyn Fn(&str) -> bool, mask: u16) -> Option<Within> {
    let code: Vec<u32> = files.iter().copied().filter(|&f| !is_test(g.name(f))).collect();
    let base = source_base(&code.iter().map(|&f| g.name(f)).collect::<Vec<_>>());
    within_dir(g, &code, &base, mask)
}

/// [`within`] for the files of `files` below directory `base`.
pub fn within_dir(g: &DepGraph, files: &[u32], base: &str, mask: u16) -> Option<Within> {
    let mut by_stem: BTreeMap<String, (BTreeSet<String>, Vec<u32>, Option<String>)> = BTreeMap::new();
    let mut unit_of: Vec<Option<usize>> = vec![None; g.len()];
    for &f in files {
        let path = g.name(f);
        let Some(rel) = rel_to(path, base) else { continue };
        let (first, is_dir) = match rel.split_once('/') {
            Some((d, _)) => (d, true),
            None if FACADES.contains(&rel) => continue,
            None => (rel, false),
        };
        let stem = if is_dir { first } else { stem_of(first) };
        let e = by_stem.entry(stem.to_string()).or_default();
        e.0.insert(join(base, first));
        e.1.push(f);
        if is_dir {
            e.2 = Some(join(base, first));
        }
    }
    if by_stem.len() < 2 {
        return None;
    }
    let units: Vec<Unit> = by_stem
        .iter()
        .map(|(stem, (paths, fs, dir))| Unit {
            name: stem.clone(),
            paths: paths.iter().cloned().collect(),
            selectors: paths.iter().map(|p| super::init::file_selector(p)).collect(),
            files: fs.len(),
            dir: dir.clone(),
        })
        .collect();
    for (i, (_, (_, fs, _))) in by_stem.iter().enumerate() {
        for &f in fs {
            unit_of[f as usize] = Some(i);
        }
    }
    let edges = unit_edges(g, &by_stem.values().map(|v| v.1.clone()).collect::<Vec<_>>(), &unit_of, mask);
    let layers = layers(units.len(), &edges);
    let independent = independent(&units, &edges);
    Some(Within { base: base.to_string(), units, edges, layers, independent })
}

/// The directory of a stage's code: the common directory of its files, then down into a child
/// that holds four in five of them (a crate's or a package's `src/`).
fn source_base(paths: &[&str]) -> String {
    let mut base: Vec<&str> = match paths.first() {
        Some(p) => p.split('/').collect::<Vec<_>>()[..p.split('/').count() - 1].to_vec(),
        None => return String::new(),
    };
    for p in paths {
        let dir: Vec<&str> = p.split('/').collect();
        let dir = &dir[..dir.len() - 1];
        let same = base.iter().zip(dir).take_while(|(a, b)| a == b).count();
        base.truncate(same);
    }
    let mut base = base.join("/");
    loop {
        let mut child: BTreeMap<&str, usize> = BTreeMap::new();
        for p in paths {
            if let Some((d, _)) = rel_to(p, &base).and_then(|r| r.split_once('/')) {
                *child.entry(d).or_default() += 1;
            }
        }
        match child.into_iter().max_by_key(|(d, n)| (*n, std::cmp::Reverse(*d))) {
            Some((d, n)) if 5 * n >= 4 * paths.len() && n < paths.len() => base = join(&base, d),
            _ => return base,
        }
    }
}

/// `path` relative to directory `base`, if it is below it.
fn rel_to<'p>(path: &'p str, base: &str) -> Option<&'p str> {
    if base.is_empty() {
        return Some(path);
    }
    path.strip_prefix(base).and_then(|r| r.strip_prefix('/'))
}

fn join(base: &str, name: &str) -> String {
    if base.is_empty() { name.to_string() } else { format!("{base}/{name}") }
}

/// A file's module stem: `_client.py` and `_client.pyi` are `_client`, `types.d.ts` is `types`.
fn stem_of(name: &str) -> &str {
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    stem.strip_suffix(".d").unwrap_or(stem)
}

/// How many imports lead from each unit to each other one: directly, or through files of no unit
/// (the facade, a sibling stage's files), breadth first from each unit's files.
fn unit_edges(g: &DepGraph, members: &[Vec<u32>], unit_of: &[Option<usize>], mask: u16) -> Vec<(usize, usize, usize)> {
    let mut count: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for (u, fs) in members.iter().enumerate() {
        let mut seen: BTreeSet<u32> = BTreeSet::new();
        let mut queue: Vec<u32> = Vec::new();
        for &f in fs {
            for e in g.out_edges(f).filter(|&e| g.allowed(e, 2, mask)) {
                let t = g.edges[e as usize].to;
                match unit_of[t as usize] {
                    Some(v) if v != u => *count.entry((u, v)).or_default() += 1,
                    Some(_) => {}
                    None => {
                        if seen.insert(t) {
                            queue.push(t);
                        }
                    }
                }
            }
        }
        while let Some(n) = queue.pop() {
            for e in g.out_edges(n).filter(|&e| g.allowed(e, 2, mask)) {
                let t = g.edges[e as usize].to;
                match unit_of[t as usize] {
                    Some(v) if v != u => {
                        count.entry((u, v)).or_insert(1);
                    }
                    Some(_) => {}
                    None => {
                        if seen.insert(t) {
                            queue.push(t);
                        }
                    }
                }
            }
        }
    }
    count.into_iter().map(|((a, b), n)| (a, b, n)).collect()
}

/// The layers of `n` units under `edges` (importer, imported), top first: each strongly
/// connected set is one node of the condensation, which is layered by its longest path to a
/// unit importing nothing; units with no edge at all are left out.
fn layers(n: usize, edges: &[(usize, usize, usize)]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut touched = vec![false; n];
    for &(a, b, _) in edges {
        out[a].push(b);
        touched[a] = true;
        touched[b] = true;
    }
    let comp = sccs(n, &out);
    let n_comp = comp.iter().copied().max().map_or(0, |m| m + 1);
    let mut succ: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n_comp];
    for &(a, b, _) in edges {
        if comp[a] != comp[b] {
            succ[comp[a]].insert(comp[b]);
        }
    }
    // longest path down, memoized (the condensation is acyclic)
    let mut level: Vec<Option<usize>> = vec![None; n_comp];
    fn depth(c: usize, succ: &[BTreeSet<usize>], level: &mut [Option<usize>]) -> usize {
        if let Some(l) = level[c] {
            return l;
        }
        let mut stack = vec![(c, false)];
        while let Some((x, done)) = stack.pop() {
            if level[x].is_some() {
                continue;
            }
            if done {
                let l = succ[x].iter().map(|&s| level[s].map_or(0, |l| l + 1)).max().unwrap_or(0);
                level[x] = Some(l);
                continue;
            }
            stack.push((x, true));
            stack.extend(succ[x].iter().filter(|&&s| level[s].is_none()).map(|&s| (s, false)));
        }
        level[c].unwrap_or(0)
    }
    let mut by_level: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for u in (0..n).filter(|&u| touched[u]) {
        let l = depth(comp[u], &succ, &mut level);
        by_level.entry(l).or_default().push(u);
    }
    by_level.into_values().rev().collect()
}

/// Strongly connected components (Tarjan, iterative): each node's component number.
fn sccs(n: usize, out: &[Vec<usize>]) -> Vec<usize> {
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut comp = vec![usize::MAX; n];
    let (mut next, mut n_comp) = (0, 0);
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work: Vec<(usize, usize)> = vec![(root, 0)];
        while let Some((v, i)) = work.pop() {
            if i == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = out[v].get(i) {
                work.push((v, i + 1));
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp[w] = n_comp;
                    if w == v {
                        break;
                    }
                }
                n_comp += 1;
            }
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
        }
    }
    comp
}

/// Sets of subpackages (units holding a directory) none of which reaches another through the
/// units' imports, greedily from the largest; each set of two or more.
fn independent(units: &[Unit], edges: &[(usize, usize, usize)]) -> Vec<Vec<usize>> {
    let n = units.len();
    let mut reach = vec![vec![false; n]; n];
    for &(a, b, _) in edges {
        reach[a][b] = true;
    }
    for k in 0..n {
        for i in 0..n {
            if reach[i][k] {
                for j in 0..n {
                    if reach[k][j] {
                        reach[i][j] = true;
                    }
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..n).filter(|&u| units[u].dir.is_some()).collect();
    order.sort_by_key(|&u| (std::cmp::Reverse(units[u].files), u));
    let mut sets: Vec<Vec<usize>> = Vec::new();
    let mut placed = vec![false; n];
    for &u in &order {
        if placed[u] {
            continue;
        }
        let mut set = vec![u];
        for &v in &order {
            if !placed[v] && v != u && set.iter().all(|&w| !reach[v][w] && !reach[w][v]) {
                set.push(v);
            }
        }
        if set.len() >= 2 {
            set.iter().for_each(|&w| placed[w] = true);
            set.sort_unstable();
            sets.push(set);
        }
    }
    sets
}

/// The architecture `andon init` proposes inside a stage: layers and independent subpackages,
/// each over path selectors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proposed {
    /// The directory it is inside.
    pub base: String,
    /// `layers`: top first, each layer its selectors; empty for an independence set.
    pub layers: Vec<Vec<String>>,
    /// The names of the units, top layer first (for a contract's name).
    pub names: Vec<Vec<String>>,
    /// `independence`: each member's selector (its directory).
    pub members: Vec<String>,
}

/// How many levels below a stage's top `andon init` looks for subpackages with structure, and how
/// many contracts of each kind it proposes for one stage at most.
const MAX_DEPTH: usize = 3;
const MAX_LAYERS: usize = 12;
const MAX_INDEPENDENT: usize = 6;

/// The layers (three or more; else the shallowest two-layer structure, when the stage has no
/// deeper one) and independent subpackages of the stage of `files`, at its top and inside each
/// subpackage with structure of its own, shallowest first.
pub fn propose(g: &DepGraph, files: &[u32], is_test: &dyn Fn(&str) -> bool, mask: u16) -> Vec<Proposed> {
    let Some(top) = within(g, files, is_test, mask) else { return Vec::new() };
    let code: Vec<u32> = files.iter().copied().filter(|&f| !is_test(g.name(f))).collect();
    let mut found: Vec<(usize, Within)> = Vec::new();
    let mut todo: Vec<(usize, Within)> = vec![(0, top)];
    while let Some((depth, w)) = todo.pop() {
        if depth < MAX_DEPTH {
            for u in w.units.iter().filter(|u| u.files >= 4) {
                let Some(dir) = &u.dir else { continue };
                let inside: Vec<u32> = code.iter().copied().filter(|&f| rel_to(g.name(f), dir).is_some()).collect();
                if let Some(inner) = within_dir(g, &inside, dir, mask) {
                    todo.push((depth + 1, inner));
                }
            }
        }
        found.push((depth, w));
    }
    found.sort_by(|a, b| (a.0, &a.1.base).cmp(&(b.0, &b.1.base)));
    let mut layered: Vec<&Within> = found.iter().filter(|(_, w)| w.layers.len() >= 3).map(|(_, w)| w).collect();
    if layered.is_empty() {
        layered.extend(found.iter().find(|(_, w)| w.layers.len() == 2).map(|(_, w)| w));
    }
    let mut out: Vec<Proposed> = layered.into_iter().take(MAX_LAYERS).map(layers_of).collect();
    let sets = found.iter().flat_map(|(_, w)| w.independent.iter().map(move |set| (w, set)));
    out.extend(sets.take(MAX_INDEPENDENT).map(|(w, set)| Proposed {
        base: w.base.clone(),
        layers: Vec::new(),
        names: vec![set.iter().map(|&u| w.units[u].name.clone()).collect()],
        members: set.iter().filter_map(|&u| w.units[u].dir.as_deref().map(super::init::file_selector)).collect(),
    }));
    out
}

fn layers_of(w: &Within) -> Proposed {
    Proposed {
        base: w.base.clone(),
        layers: w.layers.iter().map(|l| l.iter().flat_map(|&u| w.units[u].selectors.clone()).collect()).collect(),
        names: w.layers.iter().map(|l| l.iter().map(|&u| w.units[u].name.clone()).collect()).collect(),
        members: Vec::new(),
    }
}

/// The contracts `andon init` drafts inside every stage of the graph that has internal structure:
/// for each, `layers` over its units' paths, top first, and `independence` of its subpackages
/// that never import each other. `is_test` tells a test file (in no unit).
pub(super) fn drafts(g: &DepGraph, is_test: &dyn Fn(&str) -> bool) -> Vec<super::init::Drafted> {
    let mask = super::init::INIT_EXCLUDED.iter().fold(0u16, |m, k| m | super::graph::kind_bit(k));
    let mut out = Vec::new();
    for stage in g.stage_names() {
        let files = g.stage_files(stage).unwrap_or(&[]);
        for p in propose(g, files, is_test, mask) {
            let at = if p.base.is_empty() { ".".to_string() } else { p.base.clone() };
            out.push(if p.members.is_empty() {
                let (top, bottom) = (p.names[0].join(", "), p.names[p.names.len() - 1].join(", "));
                super::init::Drafted {
                    name: format!(
                        "layers in {at}: {} > … > {} ({} layers)",
                        short(&top),
                        short(&bottom),
                        p.layers.len()
                    ),
                    kind: crate::config::ContractKind::Layers,
                    why: vec![
                        format!("The modules of `{at}` (stage `{stage}`), layered by what they import today,"),
                        "top first: a module may import the layers below it, never one above; the modules of".into(),
                        "one layer import none of each other. A module that imports nothing and is imported by".into(),
                        "none is in no layer.".into(),
                    ],
                    layers: p.layers,
                    members: Vec::new(),
                    exceptions: Vec::new(),
                }
            } else {
                super::init::Drafted {
                    name: format!("independent in {at}: {}", short(&p.names[0].join(", "))),
                    kind: crate::config::ContractKind::Independence,
                    why: vec![
                        format!("These subpackages of `{at}` (stage `{stage}`) import none of each other today,"),
                        "directly or through other modules: keep them apart.".into(),
                    ],
                    layers: Vec::new(),
                    members: p.members,
                    exceptions: Vec::new(),
                }
            });
        }
    }
    out
}

/// The modules inside stage `stage` of the index (`andon stream --within`), with the imports
/// and layers `andon init` would draw from (type-checking and test imports left out).
pub fn view(idx: &crate::index::Index, stage: &str) -> Result<crate::ops::WithinView, crate::ops::Error> {
    let store = crate::ops::derive(&crate::datalog::builtin_program(), idx, super::graph::GOALS)?;
    let g = DepGraph::build(&store);
    let Some(files) = g.stage_files(stage) else {
        let nearest = crate::config::nearest(stage, g.stage_names()).map(str::to_string);
        return Err(crate::ops::Error::UnknownStage { name: stage.to_string(), nearest });
    };
    Ok(view_of(idx, &g, stage, files))
}

/// [`view`] of every stage of the index that has two modules or more, by stage name (the
/// report's stages, opened).
pub fn views(idx: &crate::index::Index) -> Result<Vec<crate::ops::WithinView>, crate::ops::Error> {
    let store = crate::ops::derive(&crate::datalog::builtin_program(), idx, super::graph::GOALS)?;
    let g = DepGraph::build(&store);
    let mut out = Vec::new();
    for stage in g.stage_names() {
        let v = view_of(idx, &g, stage, g.stage_files(stage).unwrap_or(&[]));
        if v.modules.len() >= 2 {
            out.push(v);
        }
    }
    Ok(out)
}

fn view_of(idx: &crate::index::Index, g: &DepGraph, stage: &str, files: &[u32]) -> crate::ops::WithinView {
    let lang: BTreeMap<&str, &str> = idx.files.iter().map(|f| (f.path.as_str(), f.lang.as_str())).collect();
    let is_test = |p: &str| {
        let l = lang.get(p).and_then(|l| crate::extract::lang::Language::by_name(l));
        l.is_some_and(|l| l.is_clear_test_path(p))
    };
    let mask = super::init::INIT_EXCLUDED.iter().fold(0u16, |m, k| m | super::graph::kind_bit(k));
    let Some(w) = within(g, files, &is_test, mask) else {
        return crate::ops::WithinView { stage: stage.to_string(), ..Default::default() };
    };
    let layer_of: BTreeMap<usize, usize> =
        w.layers.iter().enumerate().flat_map(|(i, l)| l.iter().map(move |&u| (u, i))).collect();
    let name = |u: usize| w.units[u].name.clone();
    crate::ops::WithinView {
        stage: stage.to_string(),
        base: w.base.clone(),
        modules: (0..w.units.len())
            .map(|u| crate::ops::WithinModule {
                name: name(u),
                paths: w.units[u].paths.clone(),
                files: w.units[u].files,
                layer: layer_of.get(&u).copied(),
                package: w.units[u].dir.is_some(),
            })
            .collect(),
        imports: w.edges.iter().map(|&(a, b, n)| (name(a), name(b), n)).collect(),
        layers: w.layers.iter().map(|l| l.iter().map(|&u| name(u)).collect()).collect(),
        independent: w.independent.iter().map(|s| s.iter().map(|&u| name(u)).collect()).collect(),
    }
}

/// A list of names, cut to about forty characters.
fn short(s: &str) -> String {
    if s.chars().count() <= 40 {
        return s.to_string();
    }
    let cut: String = s.chars().take(37).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_share_a_layer_and_levels_follow_the_longest_path() {
        // 0 -> 1 -> 2, 1 <-> 3, 4 alone
        let edges = [(0, 1, 1), (1, 2, 1), (1, 3, 1), (3, 1, 1)];
        assert_eq!(layers(5, &edges), vec![vec![0], vec![1, 3], vec![2]]);
        // a unit importing only the bottom sits one above it, beside a longer chain's middle
        let edges = [(0, 1, 1), (1, 2, 1), (3, 2, 1)];
        assert_eq!(layers(4, &edges), vec![vec![0], vec![1, 3], vec![2]]);
    }

    #[test]
    fn the_source_base_descends_into_src() {
        assert_eq!(source_base(&["c/src/lib.rs", "c/src/a.rs", "c/src/b/x.rs", "c/src/b/y.rs", "c/build.rs"]), "c/src");
        assert_eq!(source_base(&["httpx/__init__.py", "httpx/_client.py", "httpx/_t/a.py"]), "httpx");
        assert_eq!(source_base(&["a.py", "b.py"]), "");
    }

    #[test]
    fn stems_join_stubs_and_declarations() {
        assert_eq!(stem_of("_client.pyi"), "_client");
        assert_eq!(stem_of("types.d.ts"), "types");
        assert_eq!(stem_of("mod"), "mod");
    }
}
