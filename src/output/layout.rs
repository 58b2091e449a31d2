//! A layered drawing of the stream (Sugiyama-style): each stage gets a layer by the longest path
//! from the stages nothing feeds (the stream order breaks cycles), layers are columns, an edge that
//! spans several layers passes through a virtual slot in each layer between (so it routes around
//! the boxes, never through one), and the slots of a layer are ordered by the barycentre of their
//! neighbours, sweeping both ways, to cut crossings.

use std::collections::BTreeMap;

/// Where each stage goes: its layer (column) and its place in the layer (row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Per stage, in the order given: (layer, row).
    pub at: Vec<(usize, usize)>,
    /// Per edge, in the order given: the (layer, row) slots it passes through between its ends,
    /// from producer to consumer (empty for an edge between neighbouring or equal layers).
    pub bends: Vec<Vec<(usize, usize)>>,
    pub layers: usize,
    /// The most slots in one layer.
    pub rows: usize,
}

/// The longest-path layer of each of `n` stages given in stream order; an edge back against the
/// order (a cycle) does not raise a layer.
fn layers_of(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut into: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(p, c) in edges {
        if p < c && c < n {
            into[c].push(p);
        }
    }
    let mut layer = vec![0usize; n];
    for v in 0..n {
        layer[v] = into[v].iter().map(|&p| layer[p] + 1).max().unwrap_or(0);
    }
    layer
}

/// Lays out `n` stages given in stream order, with `edges` (producer, consumer) as indices.
pub fn layered(n: usize, edges: &[(usize, usize)]) -> Layout {
    let layer = layers_of(n, edges);
    let layers = layer.iter().max().map_or(0, |m| m + 1);
    // slots: the stages, then one virtual slot per edge per layer it crosses
    let mut slot_layer = layer.clone();
    let mut unit: Vec<(usize, usize)> = Vec::new();
    let mut chains: Vec<Vec<usize>> = Vec::with_capacity(edges.len());
    for &(p, c) in edges {
        let (a, b) = (layer[p], layer[c]);
        let between: Vec<usize> = if a < b { (a + 1..b).collect() } else { (b + 1..a).rev().collect() };
        let mut chain = Vec::new();
        let mut prev = p;
        for l in between {
            slot_layer.push(l);
            let v = slot_layer.len() - 1;
            chain.push(v);
            unit.push((prev, v));
            prev = v;
        }
        unit.push((prev, c));
        chains.push(chain);
    }
    let row = order(&slot_layer, layers, &unit);
    let mut count = vec![0usize; layers];
    for &l in &slot_layer {
        count[l] += 1;
    }
    Layout {
        at: (0..n).map(|v| (layer[v], row[v])).collect(),
        bends: chains.iter().map(|ch| ch.iter().map(|&v| (slot_layer[v], row[v])).collect()).collect(),
        layers,
        rows: count.into_iter().max().unwrap_or(0),
    }
}

/// The row of every slot: eight barycentre sweeps, down and up, over the edges between adjacent
/// layers (`unit` joins slots one layer apart, or in the same layer for a same-layer edge).
fn order(slot_layer: &[usize], layers: usize, unit: &[(usize, usize)]) -> Vec<usize> {
    let mut columns: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for (v, &l) in slot_layer.iter().enumerate() {
        columns[l].push(v);
    }
    let mut near: Vec<Vec<usize>> = vec![Vec::new(); slot_layer.len()];
    for &(a, b) in unit {
        near[a].push(b);
        near[b].push(a);
    }
    let mut row = vec![0usize; slot_layer.len()];
    for col in &columns {
        for (i, &v) in col.iter().enumerate() {
            row[v] = i;
        }
    }
    for sweep in 0..8 {
        let down = sweep % 2 == 0;
        let order: Vec<usize> =
            if down { (1..layers).collect() } else { (0..layers.saturating_sub(1)).rev().collect() };
        for l in order {
            let from = if down { l.wrapping_sub(1) } else { l + 1 };
            let bary = |v: usize| -> f64 {
                let rows: Vec<f64> =
                    near[v].iter().filter(|&&u| slot_layer[u] == from).map(|&u| row[u] as f64).collect();
                if rows.is_empty() { row[v] as f64 } else { rows.iter().sum::<f64>() / rows.len() as f64 }
            };
            let mut keyed: Vec<(f64, usize, usize)> = columns[l].iter().map(|&v| (bary(v), row[v], v)).collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            columns[l] = keyed.into_iter().map(|(_, _, v)| v).collect();
            // only this layer moved: placing every layer again would cost layers × slots a sweep
            for (i, &v) in columns[l].iter().enumerate() {
                row[v] = i;
            }
        }
    }
    row
}

/// The lines a stage's box shows of each name, at most two of at most `width` units (characters)
/// each. A name that fits one line is that line; one that fits two breaks after a separator where one
/// fits (`/`, `@` or `:` first, then `-`, `_`, `.` or a space); a longer one keeps its head on the
/// first line and `…` and its tail on the second. Distinct names never get the same lines: cut
/// labels that collide show the stretch where their names differ instead of the tail, and any that
/// still collide are numbered.
pub fn labels(names: &[Vec<String>], width: usize) -> Vec<Vec<String>> {
    let width = width.max(4);
    let mut out: Vec<Vec<String>> = names.iter().map(|u| natural(u, width)).collect();
    let mut number = 0usize;
    for round in 0..64 {
        let mut groups: BTreeMap<&[String], Vec<usize>> = BTreeMap::new();
        for (i, l) in out.iter().enumerate() {
            groups.entry(l.as_slice()).or_default().push(i);
        }
        let groups: Vec<Vec<usize>> = groups.into_values().filter(|g| g.len() > 1).collect();
        if groups.is_empty() {
            break;
        }
        for group in groups {
            // a name shown whole keeps its label: only cut ones move
            let cut: Vec<usize> = group.iter().copied().filter(|&i| names[i].len() > 2 * width).collect();
            let movers = if cut.len() == group.len() && round > 0 { &cut[1..] } else { &cut[..] };
            for &i in movers {
                out[i] = if round == 0 {
                    around_difference(names, &group, i, width)
                } else {
                    number += 1;
                    numbered(&out[i], number, width)
                };
            }
        }
    }
    out
}

fn join(units: &[String]) -> String {
    units.concat()
}

/// Where to break a name of `units` into two lines of at most `width`: the last separator that
/// leaves both lines within `width`, the strongest kind first; else at `width`.
fn break_at(units: &[String], width: usize) -> usize {
    let n = units.len();
    let range = n.saturating_sub(width).max(1)..=width.min(n - 1);
    for kind in [&["/", "@", ":"][..], &["-", "_", ".", " "][..]] {
        if let Some(b) = range.clone().rev().find(|&b| kind.contains(&units[b - 1].as_str())) {
            return b;
        }
    }
    width.min(n)
}

fn natural(units: &[String], width: usize) -> Vec<String> {
    let n = units.len();
    if n <= width {
        return vec![join(units)];
    }
    if n <= 2 * width {
        let b = break_at(units, width);
        return vec![join(&units[..b]), join(&units[b..])];
    }
    vec![join(&units[..width]), format!("…{}", join(&units[n - (width - 1)..]))]
}

/// The label of cut name `i` of `group` (all the same label): its head, then the stretch around
/// the first unit where it differs from the name of the group it shares the longest head with.
fn around_difference(names: &[Vec<String>], group: &[usize], i: usize, width: usize) -> Vec<String> {
    let u = &names[i];
    let n = u.len();
    let common = |a: &[String], b: &[String]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let d = group.iter().filter(|&&j| j != i).map(|&j| common(u, &names[j])).max().unwrap_or(0);
    let room = width - 2;
    let start = d.saturating_sub(room / 2).min(n - room).max(width);
    let end = (start + room).min(n);
    let tail = if end < n { "…" } else { "" };
    vec![join(&u[..width]), format!("…{}{tail}", join(&u[start..end]))]
}

/// `label` with `#number` closing its last line, within `width` units.
fn numbered(label: &[String], number: usize, width: usize) -> Vec<String> {
    let mark = format!("#{number}");
    let mut lines = label.to_vec();
    if let Some(last) = lines.last_mut() {
        let keep: String = last.chars().take(width.saturating_sub(mark.chars().count())).collect();
        *last = format!("{keep}{mark}");
    }
    lines
}

/// How many pairs of edge segments between adjacent layers cross, each edge followed through its
/// bends.
pub fn crossings(l: &Layout, edges: &[(usize, usize)]) -> usize {
    let mut by_gap: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
    for (e, &(p, c)) in edges.iter().enumerate() {
        let path: Vec<(usize, usize)> =
            std::iter::once(l.at[p]).chain(l.bends[e].iter().copied()).chain([l.at[c]]).collect();
        for pair in path.windows(2) {
            let (a, b) = if pair[0].0 < pair[1].0 { (pair[0], pair[1]) } else { (pair[1], pair[0]) };
            if b.0 == a.0 + 1 {
                by_gap.entry(a.0).or_default().push((a.1, b.1));
            }
        }
    }
    by_gap
        .values()
        .map(|es| {
            let mut n = 0;
            for (i, a) in es.iter().enumerate() {
                for b in &es[i + 1..] {
                    if (a.0 < b.0 && a.1 > b.1) || (a.0 > b.0 && a.1 < b.1) {
                        n += 1;
                    }
                }
            }
            n
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_follow_the_longest_path_and_a_back_edge_raises_nothing() {
        // 0 -> 1 -> 2, 0 -> 2, and 2 -> 0 closing a cycle
        let l = layered(3, &[(0, 1), (1, 2), (0, 2), (2, 0)]);
        assert_eq!(l.at.iter().map(|a| a.0).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(l.layers, 3);
    }

    #[test]
    fn the_barycentre_sweeps_undo_a_crossing() {
        // sources 0, 1; sinks 2, 3 given crossed: 0 -> 3, 1 -> 2
        let edges = [(0, 3), (1, 2)];
        let l = layered(4, &edges);
        assert_eq!(crossings(&l, &edges), 0, "{l:?}");
    }

    #[test]
    fn a_long_edge_bends_through_slots_of_its_own_never_a_box() {
        // 0 -> 1 -> 2 -> 3 and 0 -> 3 over two layers; 3 -> 0 back over the same two
        let edges = [(0, 1), (1, 2), (2, 3), (0, 3), (3, 0)];
        let l = layered(4, &edges);
        assert_eq!(l.bends[0], vec![]);
        for (e, layers) in [(3, vec![1, 2]), (4, vec![2, 1])] {
            assert_eq!(l.bends[e].iter().map(|b| b.0).collect::<Vec<_>>(), layers, "{l:?}");
            for b in &l.bends[e] {
                assert!(!l.at.contains(b), "edge {e} passes through a stage's slot: {l:?}");
            }
        }
        assert_eq!(l.rows, 3, "each middle layer holds a stage and two bends");
        assert_eq!(crossings(&l, &edges[..4]), 0, "{l:?}");
    }

    fn units(s: &str) -> Vec<String> {
        s.chars().map(String::from).collect()
    }

    fn shown(names: &[&str], width: usize) -> Vec<Vec<String>> {
        labels(&names.iter().map(|n| units(n)).collect::<Vec<_>>(), width)
    }

    #[test]
    fn a_label_is_the_whole_name_on_one_or_two_lines_broken_after_a_separator() {
        let l = shown(&["core", "@effect/platform-node-shared", "a_package_with_a_long_name"], 22);
        assert_eq!(l[0], ["core"]);
        assert_eq!(l[1], ["@effect/", "platform-node-shared"]);
        assert_eq!(l[2], ["a_package_with_a_long_", "name"]);
        for label in &l {
            assert!(label.iter().all(|x| x.chars().count() <= 22), "{label:?}");
        }
    }

    #[test]
    fn distinct_names_never_share_a_label_however_long_and_alike() {
        let names = [
            "ai-docs@packages/ai/anthropic/docs",
            "ai-docs@packages/ai/openai/docs",
            "ai-docs@packages/ai/openrouter/docs",
            "ai-docs@packages/platform/node/shared/with/a/long/tail/docs",
            "ai-docs@packages/platform/bun/shared/with/a/long/tail/docs",
            "ai-docs@packages/platform/deno/shared/with/a/long/tail/docs",
            "x-with-a-very-long-common-head-and-the-same-tail-000-end",
            "x-with-a-very-long-common-head-and-the-same-tail-001-end",
            "x-with-a-very-long-common-head-and-the-same-tail-002-end",
            "x-with-a-very-long-common-head-and-the-same-tail-002-end…",
            "short",
        ];
        for width in [8, 12, 22] {
            let l = shown(&names, width);
            let distinct: std::collections::BTreeSet<&Vec<String>> = l.iter().collect();
            assert_eq!(distinct.len(), names.len(), "width {width}: {l:#?}");
            for label in &l {
                assert!(label.len() <= 2 && label.iter().all(|x| x.chars().count() <= width), "{label:?}");
            }
        }
        // the three long docs stages read apart by the part that tells them apart
        let l = shown(&names[3..6], 22);
        for (label, platform) in l.iter().zip(["node", "bun", "deno"]) {
            assert!(label.concat().contains(platform), "{label:?}");
        }
    }
}
