//! A layered drawing of the stream (Sugiyama-style): each stage gets a layer by the longest path
//! from the stages nothing feeds (the stream order breaks cycles), layers are columns, and the
//! stages of a layer are ordered by the barycentre of their neighbours, sweeping both ways, to
//! cut crossings.

use std::collections::BTreeMap;

/// Where each stage goes: its layer (column) and its place in the layer (row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Per stage, in the order given: (layer, row).
    pub at: Vec<(usize, usize)>,
    pub layers: usize,
    /// The most stages in one layer.
    pub rows: usize,
}

/// Lays out `n` stages given in stream order, with `edges` (producer, consumer) as indices; an
/// edge back against the order (a cycle) does not raise a layer.
pub fn layered(n: usize, edges: &[(usize, usize)]) -> Layout {
    let mut layer = vec![0usize; n];
    for v in 0..n {
        for &(p, c) in edges {
            if c == v && p < v {
                layer[v] = layer[v].max(layer[p] + 1);
            }
        }
    }
    let layers = layer.iter().max().map_or(0, |m| m + 1);
    let mut columns: Vec<Vec<usize>> = vec![Vec::new(); layers];
    for v in 0..n {
        columns[layer[v]].push(v);
    }
    let mut row = vec![0usize; n];
    let place = |columns: &Vec<Vec<usize>>, row: &mut Vec<usize>| {
        for col in columns {
            for (i, &v) in col.iter().enumerate() {
                row[v] = i;
            }
        }
    };
    place(&columns, &mut row);
    for sweep in 0..8 {
        let down = sweep % 2 == 0;
        let order: Vec<usize> =
            if down { (1..layers).collect() } else { (0..layers.saturating_sub(1)).rev().collect() };
        for l in order {
            let bary = |v: usize| -> f64 {
                let near: Vec<usize> = edges
                    .iter()
                    .filter_map(|&(p, c)| match down {
                        true if c == v && layer[p] + 1 == layer[v] => Some(p),
                        false if p == v && layer[c] == layer[v] + 1 => Some(c),
                        _ => None,
                    })
                    .collect();
                if near.is_empty() {
                    row[v] as f64
                } else {
                    near.iter().map(|&u| row[u] as f64).sum::<f64>() / near.len() as f64
                }
            };
            let mut keyed: Vec<(f64, usize, usize)> = columns[l].iter().map(|&v| (bary(v), row[v], v)).collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            columns[l] = keyed.into_iter().map(|(_, _, v)| v).collect();
            place(&columns, &mut row);
        }
    }
    let rows = columns.iter().map(Vec::len).max().unwrap_or(0);
    Layout { at: (0..n).map(|v| (layer[v], row[v])).collect(), layers, rows }
}

/// How many pairs of edges between adjacent layers cross.
pub fn crossings(l: &Layout, edges: &[(usize, usize)]) -> usize {
    let mut by_gap: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
    for &(p, c) in edges {
        let ((lp, rp), (lc, rc)) = (l.at[p], l.at[c]);
        if lc == lp + 1 {
            by_gap.entry(lp).or_default().push((rp, rc));
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
}
