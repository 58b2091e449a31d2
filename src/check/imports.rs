//! The import-graph contracts (`forbidden`, `layers`, `independence`, `protected`, `acyclic`):
//! their banned imports, protected targets and cycles, each with its witness chain.

use super::*;

/// What a `forbid` search refutes: imports from `from` nodes into `to` nodes, direct or (when
/// transitive) through nodes outside `barrier`; `from_sels` name the importers and `to_sels` the
/// ends (a finding's pair), `prefix` opens messages.
pub(super) struct Ban<'s> {
    pub(super) from: &'s [bool],
    pub(super) to: &'s [bool],
    pub(super) barrier: &'s [bool],
    pub(super) from_sels: &'s [Selector],
    pub(super) to_sels: &'s [Selector],
    pub(super) prefix: String,
}

/// The imports `ban` refutes. One finding per import line, at the lowest tier that still refutes
/// the contract.
pub(super) fn forbid(g: &DepGraph, ban: &Ban, transitive: bool, mask: u16) -> Vec<Raw> {
    let (from, to) = (ban.from, ban.to);
    let mut best: BTreeMap<(u32, u32), (u8, Vec<u32>)> = BTreeMap::new();
    for tier in 1..=3u8 {
        let next = if transitive { g.toward(to, ban.barrier, tier, mask) } else { vec![None; g.len()] };
        for f in g.files().filter(|&f| from[f as usize]) {
            for e in g.out_edges(f) {
                if !g.allowed(e, tier, mask) {
                    continue;
                }
                let t = g.edges[e as usize].to;
                if from[t as usize] {
                    continue;
                }
                let chain = if to[t as usize] {
                    vec![e]
                } else if transitive && next[t as usize].is_some() {
                    g.follow(e, &next)
                } else {
                    continue;
                };
                let line = g.edges[e as usize].line;
                match best.get(&(f, line)) {
                    Some((t0, c0)) if *t0 < tier || c0.len() <= chain.len() => {}
                    _ => {
                        best.insert((f, line), (tier, chain));
                    }
                }
            }
        }
    }
    best.into_iter().map(|((f, line), (tier, chain))| banned_import(g, ban, f, line, tier, chain)).collect()
}

/// The imports an `independence` contract refutes: from a file of one member into another
/// member, direct or (when `transitive`) through nodes of no member; `member_of` gives each node's
/// member, `nodes` each member's nodes, `sels` each member's selector. The same findings as a
/// [`forbid`] per ordered pair of members, in that order, in time linear in the graph: per
/// member, only the edges into it and the nodes of no member that reach it are looked at.
pub(super) fn independent(
    g: &DepGraph,
    member_of: &[Option<u32>],
    nodes: &[Vec<u32>],
    sels: &[Selector],
    transitive: bool,
    mask: u16,
) -> Vec<Raw> {
    let mut next: Vec<Option<u32>> = vec![None; g.len()];
    let mut seen: Vec<bool> = vec![false; g.len()];
    let mut raws: Vec<(u32, usize, Raw)> = Vec::new();
    for (j, into) in nodes.iter().enumerate() {
        let mut best: BTreeMap<(u32, u32), (u8, Vec<u32>)> = BTreeMap::new();
        for tier in 1..=3u8 {
            // the nodes of no member that reach member `j` through nodes of no member
            let mut reached: Vec<u32> = Vec::new();
            if transitive {
                let mut queue: std::collections::VecDeque<u32> = into.iter().copied().collect();
                while let Some(v) = queue.pop_front() {
                    for e in g.in_edges(v).filter(|&e| g.allowed(e, tier, mask)) {
                        let u = g.edges[e as usize].from;
                        if seen[u as usize] || member_of[u as usize].is_some() {
                            continue;
                        }
                        seen[u as usize] = true;
                        next[u as usize] = Some(e);
                        reached.push(u);
                        queue.push_back(u);
                    }
                }
            }
            for &t in into.iter().chain(&reached) {
                for e in g.in_edges(t).filter(|&e| g.allowed(e, tier, mask)) {
                    let f = g.edges[e as usize].from;
                    if !g.is_file(f) || member_of[f as usize].is_none_or(|i| i as usize == j) {
                        continue;
                    }
                    let chain = if member_of[t as usize].is_some() { vec![e] } else { g.follow(e, &next) };
                    let line = g.edges[e as usize].line;
                    match best.get(&(f, line)) {
                        Some((t0, c0)) if *t0 < tier || c0.len() <= chain.len() => {}
                        _ => {
                            best.insert((f, line), (tier, chain));
                        }
                    }
                }
            }
            for u in reached {
                seen[u as usize] = false;
                next[u as usize] = None;
            }
        }
        for ((f, line), (tier, chain)) in best {
            let i = member_of[f as usize].expect("a member's file");
            let ban = Ban {
                from: &[],
                to: &[],
                barrier: &[],
                from_sels: std::slice::from_ref(&sels[i as usize]),
                to_sels: std::slice::from_ref(&sels[j]),
                prefix: String::new(),
            };
            raws.push((i, j, banned_import(g, &ban, f, line, tier, chain)));
        }
    }
    raws.sort_by_key(|(i, j, _)| (*i, *j));
    raws.into_iter().map(|(_, _, r)| r).collect()
}

/// The finding for file `f`'s import on `line`, refuted at `tier` by the import chain `chain`.
pub(super) fn banned_import(g: &DepGraph, ban: &Ban, f: u32, line: u32, tier: u8, chain: Vec<u32>) -> Raw {
    let first = &g.edges[chain[0] as usize];
    let end = g.edges[*chain.last().expect("a chain has an edge") as usize].to;
    let name_of = |sels: &[Selector], n: u32| target_name(g, sels, n);
    let to = name_of(ban.to_sels, end);
    let label = format!("`{to}`");
    let via = if chain.len() > 1 {
        format!(", which reaches `{}` through {} imports", g.name(end), chain.len())
    } else {
        String::new()
    };
    Raw {
        tier,
        at: (g.name(f).to_string(), line),
        message: format!("{}`{}` must not depend on {label}: it imports `{}`{via}", ban.prefix, g.name(f), first.spec),
        key: vec![g.name(f).to_string(), first.spec.clone(), g.name(end).to_string()],
        froms: vec![subject(g, f)],
        tos: chain.iter().map(|&e| subject(g, g.edges[e as usize].to)).collect(),
        name: None,
        pair: Some((name_of(ban.from_sels, f), to)),
        chain,
    }
}

/// Direct imports of `target` nodes by files that are neither `target` nor `allowed`.
pub(super) fn protect(
    g: &DepGraph,
    target: &[bool],
    allowed: &[bool],
    mask: u16,
    who: &str,
    target_l: &[Located],
    target_s: &[Selector],
) -> Vec<Raw> {
    let mut best: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    for (i, e) in g.edges.iter().enumerate() {
        let i = i as u32;
        if target[e.to as usize] && !target[e.from as usize] && !allowed[e.from as usize] && g.allowed(i, 3, mask) {
            let k = (e.from, e.line);
            match best.get(&k) {
                Some(&j) if g.edges[j as usize].tier <= e.tier => {}
                _ => {
                    best.insert(k, i);
                }
            }
        }
    }
    best.into_values()
        .map(|i| {
            let e = &g.edges[i as usize];
            Raw {
                tier: e.tier,
                at: (g.name(e.from).to_string(), e.line),
                message: format!(
                    "only {who} may import {}: `{}` imports `{}`",
                    labels(target_l),
                    g.name(e.from),
                    e.spec
                ),
                key: vec![g.name(e.from).to_string(), e.spec.clone()],
                froms: vec![subject(g, e.from)],
                tos: vec![subject(g, e.to)],
                name: None,
                pair: Some((g.name(e.from).to_string(), target_name(g, target_s, e.to))),
                chain: vec![i],
            }
        })
        .collect()
}

/// The selector among `sels` that holds node `n` as the configuration wrote it, else its name.
fn target_name(g: &DepGraph, sels: &[Selector], n: u32) -> String {
    sels.iter().find(|s| s.nodes[n as usize]).map(|s| s.text.clone()).unwrap_or_else(|| g.name(n).to_string())
}

/// Cycles among units (each a set of nodes), through nodes of no unit; one finding per cycle
/// (strongly connected set of units) at the lowest tier it appears.
pub(super) fn acyclic(
    g: &DepGraph,
    unit_of: &[Option<usize>],
    names: &[String],
    mask: u16,
    exceptions: &[Exception],
    hits: &mut [usize],
) -> Vec<Raw> {
    let units = names.len();
    let mut reported: BTreeSet<Vec<usize>> = BTreeSet::new();
    let mut out = Vec::new();
    for tier in 1..=3u8 {
        let mut chains = g.unit_chains(unit_of, units, tier, mask);
        // An exception allows one dependency between members: it is no part of any cycle. It
        // excuses something only while that dependency is on a cycle; else it is stale.
        let cyclic = on_cycles(&chains, names);
        chains.retain(|pair, chain| !(cyclic.contains(pair) && excuses_chain(g, chain, exceptions, hits)));
        let nodes: Vec<u32> = (0..units as u32).collect();
        let edges: Vec<(u32, u32)> = chains.keys().map(|&(a, b)| (a as u32, b as u32)).collect();
        for comp in crate::datalog::graph::condensed_order(&nodes, &edges, |n| names[n as usize].clone()) {
            if comp.len() < 2 {
                continue;
            }
            let mut units: Vec<usize> = comp.iter().map(|&n| n as usize).collect();
            units.sort_by(|a, b| names[*a].cmp(&names[*b]));
            if !reported.insert(units.clone()) {
                continue;
            }
            let Some(cycle) = shortest_cycle(&chains, &units) else { continue };
            out.push(cycle_finding(g, tier, &units, cycle, names));
        }
    }
    out
}

/// The dependencies between units that are on a cycle (both ends in one strongly connected set).
pub(super) fn on_cycles(chains: &BTreeMap<(usize, usize), Vec<u32>>, names: &[String]) -> BTreeSet<(usize, usize)> {
    let nodes: Vec<u32> = (0..names.len() as u32).collect();
    let edges: Vec<(u32, u32)> = chains.keys().map(|&(a, b)| (a as u32, b as u32)).collect();
    let mut comp_of: HashMap<usize, usize> = HashMap::new();
    for (i, comp) in
        crate::datalog::graph::condensed_order(&nodes, &edges, |n| names[n as usize].clone()).iter().enumerate()
    {
        if comp.len() > 1 {
            comp_of.extend(comp.iter().map(|&n| (n as usize, i)));
        }
    }
    chains.keys().filter(|(a, b)| comp_of.get(a).is_some_and(|c| comp_of.get(b) == Some(c))).copied().collect()
}

/// For every node, the unit whose set holds it (the last such set).
pub(super) fn units_of(g: &DepGraph, sets: &[Vec<bool>]) -> Vec<Option<usize>> {
    let mut unit_of: Vec<Option<usize>> = vec![None; g.len()];
    for (u, s) in sets.iter().enumerate() {
        for (n, b) in s.iter().enumerate() {
            if *b {
                unit_of[n] = Some(u);
            }
        }
    }
    unit_of
}

/// Whether an exception allows the dependency `chain` between two units (counted in `hits`).
pub(super) fn excuses_chain(g: &DepGraph, chain: &[u32], exceptions: &[Exception], hits: &mut [usize]) -> bool {
    let froms: Vec<Selected> = chain.iter().map(|&e| subject(g, g.edges[e as usize].from)).collect();
    let tos: Vec<Selected> = chain.iter().map(|&e| subject(g, g.edges[e as usize].to)).collect();
    match excuse(exceptions, &froms, &tos) {
        Some(i) => {
            hits[i] += 1;
            true
        }
        None => false,
    }
}

/// A dependency cycle among units: the units in order from the first, and the imports that
/// close it.
pub(super) struct Cycle {
    pub(super) units: Vec<usize>,
    pub(super) chain: Vec<u32>,
}

/// A shortest cycle through the first of `units` (a strongly connected component), within it.
pub(super) fn shortest_cycle(chains: &BTreeMap<(usize, usize), Vec<u32>>, units: &[usize]) -> Option<Cycle> {
    let start = units[0];
    let inside: BTreeSet<usize> = units.iter().copied().collect();
    let mut prev: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    let mut closing = None;
    'bfs: while let Some(u) = queue.pop_front() {
        for (&(a, b), _) in chains.range((u, 0)..(u + 1, 0)) {
            debug_assert_eq!(a, u);
            if b == start {
                closing = Some(u);
                break 'bfs;
            }
            if inside.contains(&b) && !prev.contains_key(&b) && b != start {
                prev.insert(b, u);
                queue.push_back(b);
            }
        }
    }
    let last = closing?;
    let mut cycle = vec![last];
    while let Some(&p) = prev.get(cycle.last().expect("non-empty")) {
        cycle.push(p);
    }
    cycle.reverse(); // start .. last
    let mut chain = Vec::new();
    for w in 0..cycle.len() {
        let (a, b) = (cycle[w], if w + 1 < cycle.len() { cycle[w + 1] } else { start });
        chain.extend(chains[&(a, b)].iter().copied());
    }
    Some(Cycle { units: cycle, chain })
}

/// The finding for `cycle`, found at `tier` in the strongly connected set `units`.
pub(super) fn cycle_finding(g: &DepGraph, tier: u8, units: &[usize], cycle: Cycle, names: &[String]) -> Raw {
    let Cycle { units: order, chain } = cycle;
    let mut path: Vec<&str> = order.iter().map(|&u| names[u].as_str()).collect();
    path.push(names[units[0]].as_str());
    let first = &g.edges[chain[0] as usize];
    let others = if units.len() > order.len() {
        let all: Vec<&str> = units.iter().map(|&u| names[u].as_str()).collect();
        let all = match all.len() {
            n if n <= super::judge::LISTED + 1 => all.join(", "),
            n => format!("{} and {} more", all[..super::judge::LISTED].join(", "), n - super::judge::LISTED),
        };
        format!(" (all of {all} depend on each other)")
    } else {
        String::new()
    };
    Raw {
        tier,
        at: (g.name(first.from).to_string(), first.line),
        message: format!(
            "dependency cycle: {}{others}",
            path.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(" -> ")
        ),
        key: units.iter().map(|&u| names[u].clone()).collect(),
        froms: chain.iter().map(|&e| subject(g, g.edges[e as usize].from)).collect(),
        tos: chain.iter().map(|&e| subject(g, g.edges[e as usize].to)).collect(),
        name: None,
        pair: None,
        chain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The findings of `independence` as a [`forbid`] per ordered pair of members: the reference
    /// [`independent`] must agree with.
    fn by_pairs(g: &DepGraph, sels: &[Selector], transitive: bool) -> Vec<(u8, String, Vec<u32>)> {
        let sets: Vec<Vec<bool>> = sels.iter().map(|s| s.nodes.clone()).collect();
        let all: Vec<bool> = (0..g.len()).map(|n| sets.iter().any(|s| s[n])).collect();
        let mut out = Vec::new();
        for i in 0..sets.len() {
            for j in (0..sets.len()).filter(|&j| j != i) {
                let ban = Ban {
                    from: &sets[i],
                    to: &sets[j],
                    barrier: &all,
                    from_sels: std::slice::from_ref(&sels[i]),
                    to_sels: std::slice::from_ref(&sels[j]),
                    prefix: String::new(),
                };
                out.extend(forbid(g, &ban, transitive, 0).into_iter().map(|r| (r.tier, r.message, r.chain)));
            }
        }
        out
    }

    /// A repository of `k` packages and a helper package no contract names, with the imports of
    /// `edges` (`(a, b)`: package `a` imports package `b`; `k` is the helper), indexed.
    fn graph_of(k: usize, edges: &[(usize, usize)]) -> (tempfile::TempDir, DepGraph) {
        let t = tempfile::tempdir().unwrap();
        let name = |i: usize| if i == k { "helper".to_string() } else { format!("p{i}") };
        for i in 0..=k {
            let dir = t.path().join(format!("pkgs/{}", name(i)));
            std::fs::create_dir_all(dir.join(format!("src/{}", name(i)))).unwrap();
            std::fs::write(dir.join("pyproject.toml"), format!("[project]\nname = \"{}\"\nversion = \"1\"\n", name(i)))
                .unwrap();
            let imports: String =
                edges.iter().filter(|e| e.0 == i).map(|e| format!("import {}\n", name(e.1))).collect();
            std::fs::write(dir.join(format!("src/{}/__init__.py", name(i))), format!("{imports}X = 1\n")).unwrap();
        }
        let opts = crate::index::IndexOptions {
            walk: crate::index::walk::WalkOptions::standard(),
            max_file_size: 1 << 20,
            threads: Some(1),
            rebuild: false,
        };
        crate::index::update(t.path(), &opts, &|_, _| {}).unwrap();
        let idx = crate::index::load(t.path()).unwrap().unwrap();
        let store = super::super::facts(&idx, false, false).unwrap();
        (t, DepGraph::build(&store))
    }

    #[test]
    fn independence_in_one_pass_per_member_agrees_with_a_search_per_pair() {
        // a small linear congruential sequence: the same graphs every run
        let mut seed = 7u64;
        let mut next = |m: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize % m
        };
        let (mut direct, mut through) = (0, 0);
        for round in 0..6 {
            let k = 3 + round % 3;
            let edges: Vec<(usize, usize)> =
                (0..k + 3).map(|_| (next(k + 1), next(k + 1))).filter(|(a, b)| a != b).collect();
            let (_t, g) = graph_of(k, &edges);
            let sels: Vec<Selector> = (0..k).filter_map(|i| select::stage(&g, &format!("p{i}"), 1)).collect();
            assert_eq!(sels.len(), k, "round {round}: every package is a stage");
            let (member_of, nodes) = super::super::judge::owners(&g, &sels, |i| i.to_string()).unwrap();
            for transitive in [false, true] {
                let fast: Vec<(u8, String, Vec<u32>)> = independent(&g, &member_of, &nodes, &sels, transitive, 0)
                    .into_iter()
                    .map(|r| (r.tier, r.message, r.chain))
                    .collect();
                assert_eq!(fast, by_pairs(&g, &sels, transitive), "round {round}, transitive {transitive}: {edges:?}");
                direct += fast.iter().filter(|f| f.2.len() == 1).count();
                through += fast.iter().filter(|f| f.2.len() > 1).count();
            }
        }
        assert!(direct > 0 && through > 0, "the graphs hold direct ({direct}) and transitive ({through}) findings");
    }
}
