//! The `resolves` contract: every import names a module and a name that exist there, and (in
//! Python) a call of a function another module defines passes arguments it takes. A finding is
//! tier 1 where the absence is exact (an exact resolution into a closed surface), tier 2 where the
//! module was found by a heuristic, and advisory (tier 3) where the module's surface is open (it
//! may define names the index cannot see); its exceptions name the import's `file:line` and the
//! name.

use super::*;

/// The missing names and arity mismatches of the files `scope` selects (every file when `None`),
/// leaving out imports with an edge kind in `mask`.
pub(super) fn resolves(g: &DepGraph, store: &datalog::Store, scope: Option<&[bool]>, mask: u16) -> Vec<Raw> {
    let s = |v: u32| store.syms.str(v).to_string();
    let in_scope = |path: &str| match (scope, g.file(path)) {
        (None, _) => true,
        (Some(sc), Some(n)) => sc[n as usize],
        (Some(_), None) => false,
    };
    // an absence from an open module (one that may define names the index cannot see) is no
    // evidence of breakage: advisory, with the reason
    let mut open: HashMap<(u32, u32, u32, u32), String> = HashMap::new();
    for r in store.rels[rel::OPEN_ABSENCE.0 as usize].iter() {
        open.entry((r[0], r[1], r[2], r[3])).or_insert_with(|| format!("{}: {}", s(r[4]), s(r[5])));
    }
    let mut out = Vec::new();
    for r in store.rels[rel::MISSING_NAME_AT.0 as usize].iter() {
        let (path, line, name, target, confidence) = (s(r[0]), r[1], s(r[2]), s(r[3]), s(r[4]));
        if !in_scope(&path) {
            continue;
        }
        let edge = import_edge(g, &path, line, &target);
        if edge.is_some_and(|e| g.edges[e as usize].kinds & mask != 0) {
            continue;
        }
        let exact = confidence == "exact";
        let opened = open.get(&(r[0], r[1], r[2], r[3]));
        let (tier, why) = match (exact, opened) {
            (true, _) => (1, String::new()),
            (false, Some(reason)) => (3, format!(" (advisory: its surface is open, {reason})")),
            (false, None) => (2, " (heuristic: the module was found by a heuristic)".to_string()),
        };
        out.push(Raw {
            tier,
            at: (path.clone(), line),
            message: format!("`{name}` is not defined or exported by `{target}`{why}"),
            chain: edge.into_iter().collect(),
            key: vec!["missing".into(), path.clone(), name.clone(), target.clone()],
            froms: vec![site_subject(g, &path)],
            tos: vec![site_subject(g, &target)],
            name: Some(name),
            pair: None,
        });
    }
    // a module the repository's own package or directory does not hold: it may be built (a
    // compiled extension, generated code), so the absence is heuristic
    for r in store.rels[rel::MISSING_MODULE.0 as usize].iter() {
        let (path, line, module, within) = (s(r[0]), r[1], s(r[2]), s(r[3]));
        if !in_scope(&path) {
            continue;
        }
        let shown = if within.is_empty() { "." } else { within.as_str() };
        out.push(Raw {
            tier: 2,
            at: (path.clone(), line),
            message: format!("no module `{module}` in `{shown}` (heuristic: it may be built, not written)"),
            chain: Vec::new(),
            key: vec!["module".into(), path.clone(), module.clone()],
            froms: vec![site_subject(g, &path)],
            tos: Vec::new(),
            name: Some(module),
            pair: None,
        });
    }
    for r in store.rels[rel::ARITY_MISMATCH_AT.0 as usize].iter() {
        let (path, line, callee, target) = (s(r[0]), r[1], s(r[2]), s(r[3]));
        let (problem, param, confidence) = (s(r[4]), s(r[5]), s(r[6]));
        if !in_scope(&path) {
            continue;
        }
        let exact = confidence == "exact";
        let how = if exact {
            ""
        } else {
            " (heuristic: `*args`, `**kwargs`, a decorator or another definition may accept it)"
        };
        let what = match problem.as_str() {
            "too-many-positional" => format!("passes more positional arguments than `{callee}` takes"),
            "unknown-keyword" => format!("passes the keyword `{param}`, which `{callee}` does not take"),
            _ => format!("does not pass `{callee}`'s required argument `{param}`"),
        };
        out.push(Raw {
            tier: if exact { 1 } else { 2 },
            at: (path.clone(), line),
            message: format!("this call {what} (its signature is in `{target}`){how}"),
            chain: Vec::new(),
            key: vec!["arity".into(), path.clone(), callee.clone(), target.clone(), problem, param],
            froms: vec![site_subject(g, &path)],
            tos: vec![site_subject(g, &target)],
            name: Some(callee),
            pair: None,
        });
    }
    out
}

/// The import edge at `path`:`line` into `target`, if the graph has it.
fn import_edge(g: &DepGraph, path: &str, line: u32, target: &str) -> Option<u32> {
    let (from, to) = (g.file(path)?, g.file(target)?);
    g.out_edges(from).find(|&e| {
        let e = &g.edges[e as usize];
        e.line == line && e.to == to
    })
}

/// A file as a finding's subject.
fn site_subject(g: &DepGraph, path: &str) -> Selected {
    match g.file(path) {
        Some(n) => subject(g, n),
        None => Selected { path: Some(path.to_string()), ..Selected::default() },
    }
}

/// The first exception whose `at` is the finding's `file:line` and whose `name` (when it has one)
/// is the finding's name.
pub(super) fn excuse_site(exceptions: &[Exception], at: &(String, u32), name: Option<&str>) -> Option<usize> {
    exceptions.iter().position(|x| {
        let Some(site) = x.spec.at.as_ref().and_then(|l| crate::config::site(&l.text)) else { return false };
        site == (at.0.as_str(), at.1) && x.spec.name.as_ref().is_none_or(|n| Some(n.text.as_str()) == name)
    })
}
