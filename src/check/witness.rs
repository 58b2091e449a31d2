//! A finding's witness hops and the columns of its line, read from the source file.

use super::*;

pub(super) fn hop(g: &DepGraph, e: u32) -> Hop {
    let e = &g.edges[e as usize];
    Hop {
        path: g.name(e.from).to_string(),
        line: e.line,
        col: 1,
        spec: e.spec.clone(),
        target: g.name(e.to).to_string(),
        confidence: e.confidence.clone(),
        tier: e.tier,
    }
}

/// The text of the file stored as `path` under `root` (`None` when it cannot be read).
pub(super) fn source(root: &Path, path: &str) -> Option<String> {
    read_regular(&walk::abs_path(root, path)?).ok()
}

/// The text of the regular file at `path` (see [`open_regular`]).
pub(super) fn read_regular(path: &Path) -> std::io::Result<String> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut open_regular(path)?, &mut text)?;
    Ok(text)
}

/// Where the longest tail of `spec` of two segments or more starts on `line`: inside a grouped
/// `use a::{b::C, d::E}` the spec `a::d::E` is written as `d::E`.
fn tail_in(line: &str, spec: &str) -> Option<usize> {
    let cuts = spec.match_indices("::").map(|(i, _)| i + 2);
    cuts.map(|i| &spec[i..]).filter(|t| t.contains("::")).find_map(|t| line.find(t))
}

/// Fills the columns of findings and witness hops from the source: where the import's spec
/// starts on its line (else the first non-blank character).
pub(super) fn columns(root: &Path, findings: &mut [Finding]) {
    let mut cache: HashMap<String, Vec<String>> = HashMap::new();
    let mut col = |path: &str, line: u32, spec: &str| -> u32 {
        let lines = cache
            .entry(path.to_string())
            .or_insert_with(|| source(root, path).map(|t| t.lines().map(str::to_string).collect()).unwrap_or_default());
        let Some(l) = lines.get(line.saturating_sub(1) as usize) else { return 1 };
        let at = (!spec.is_empty())
            .then(|| l.find(spec).or_else(|| tail_in(l, spec)))
            .flatten()
            .or_else(|| l.find(|c: char| !c.is_whitespace()));
        at.map(|b| l[..b].chars().count() as u32 + 1).unwrap_or(1)
    };
    for f in findings {
        for h in &mut f.witness {
            h.col = col(&h.path, h.line, &h.spec);
        }
        f.col = match f.witness.first() {
            Some(h) if h.path == f.path && h.line == f.line => h.col,
            _ => col(&f.path, f.line, ""),
        };
    }
}
