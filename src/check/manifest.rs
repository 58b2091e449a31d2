//! The `manifest` contract: imports a stage's manifest does not declare and dependencies it never
//! uses.

use super::*;

/// Undeclared imports (one finding per stage and package, at its first import) and unused
/// dependencies (at their line in the manifest). Both rest on name mapping and absence of
/// evidence, so they are tier 2.
pub(super) fn manifest(
    g: &DepGraph,
    store: &datalog::Store,
    root: &Path,
    scope: Option<&BTreeSet<String>>,
    checks: &BTreeSet<&str>,
) -> Vec<Raw> {
    let s = |v: u32| store.syms.str(v).to_string();
    let in_scope = |stage: &str| scope.is_none_or(|sc| sc.contains(stage));
    let mut out = Vec::new();
    if checks.contains("undeclared") {
        let mut by: BTreeMap<(String, String), Vec<(String, u32)>> = BTreeMap::new();
        for r in store.rels[rel::UNDECLARED_IMPORT.0 as usize].iter() {
            if in_scope(store.syms.str(r[0])) {
                by.entry((s(r[0]), s(r[1]))).or_default().push((s(r[2]), r[3]));
            }
        }
        for ((stage, package), mut sites) in by {
            sites.sort();
            let n = sites.len();
            let froms = sites
                .iter()
                .map(|(p, _)| Selected {
                    node: g.file(p),
                    path: Some(p.clone()),
                    stage: Some(stage.clone()),
                    package: None,
                })
                .collect();
            out.push(Raw {
                tier: 2,
                at: sites[0].clone(),
                message: format!(
                    "stage `{stage}` imports `{package}` ({n} import{}), which its manifest does not declare",
                    if n == 1 { "" } else { "s" }
                ),
                chain: Vec::new(),
                key: vec!["undeclared".into(), stage.clone(), package.clone()],
                froms,
                tos: vec![Selected { node: g.package_node(&package), package: Some(package), ..Selected::default() }],
                name: None,
                pair: None,
            });
        }
    }
    if checks.contains("unused") {
        let mut texts: HashMap<String, String> = HashMap::new();
        // a dependency declared through another file is found where that file names it
        let own: BTreeSet<(u32, u32, u32)> =
            store.rels[rel::DECLARES_DEPENDENCY.0 as usize].iter().map(|r| (r[0], r[1], r[2])).collect();
        let mut through: BTreeMap<(u32, u32, u32), (String, u32)> = BTreeMap::new();
        for r in store.rels[rel::DECLARED_THROUGH.0 as usize].iter() {
            let at = (s(r[3]), r[4]);
            through.entry((r[0], r[1], r[2])).and_modify(|e| *e = e.clone().min(at.clone())).or_insert(at);
        }
        for r in store.rels[rel::UNUSED_DEPENDENCY_AT.0 as usize].iter() {
            let (stage, dep, kind, manifest) = (s(r[0]), s(r[1]), s(r[2]), s(r[3]));
            if !in_scope(&stage) {
                continue;
            }
            let key = (r[3], r[1], r[2]);
            let (file, known) = match through.get(&key).filter(|_| !own.contains(&key)) {
                Some((source, line)) => (source.clone(), *line),
                None => (manifest.clone(), 0),
            };
            let line = match known {
                0 => {
                    let text = texts.entry(file.clone()).or_insert_with(|| source(root, &file).unwrap_or_default());
                    line_declaring(text, &dep)
                }
                n => n,
            };
            let via = if file == manifest { String::new() } else { format!(" (through `{file}`)") };
            out.push(Raw {
                tier: 2,
                at: (file.clone(), line),
                message: format!(
                    "stage `{stage}` declares `{dep}` ({kind}) in `{manifest}`{via}, but none of its code imports it"
                ),
                chain: Vec::new(),
                key: vec!["unused".into(), stage.clone(), dep.clone()],
                froms: vec![Selected { node: None, path: Some(manifest), stage: Some(stage), package: None }],
                tos: vec![Selected { node: g.package_node(&dep), package: Some(dep), ..Selected::default() }],
                name: None,
                pair: None,
            });
        }
    }
    out
}

/// The line of a manifest that declares `dep`: a key of a TOML dependency table (`dep = …`,
/// `dep.workspace = true`), a table of its own (`[dev-dependencies.dep]`), a JSON key
/// (`"dep": …`); else the first line that names it as a whole word (1 when none does).
pub(super) fn line_declaring(text: &str, dep: &str) -> u32 {
    let unquote = |k: &str| k.trim().trim_matches(['"', '\'']).to_string();
    let mut in_deps = false;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if let Some(h) = t.strip_prefix('[').and_then(|h| h.split(']').next()) {
            let h = h.trim_start_matches('[');
            in_deps = h.contains("dependencies");
            let names: Vec<&str> = h.split('.').collect();
            if names.len() > 1 && names[..names.len() - 1].iter().any(|n| n.contains("dependencies")) {
                if names.last().is_some_and(|n| unquote(n) == dep) {
                    return i as u32 + 1;
                }
                in_deps = false;
            }
            continue;
        }
        if in_deps && let Some((k, _)) = t.split_once('=') {
            let first = k.split('.').next().unwrap_or("");
            if unquote(first) == dep {
                return i as u32 + 1;
            }
        }
        if let Some(rest) = t.strip_prefix('"').and_then(|r| r.strip_prefix(dep)).and_then(|r| r.strip_prefix('"'))
            && rest.trim_start().starts_with(':')
        {
            return i as u32 + 1;
        }
    }
    line_naming(text, dep)
}

/// The first line of a manifest that names `dep` as a whole word (1 when none does).
pub(super) fn line_naming(text: &str, dep: &str) -> u32 {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '-' || c == '.';
    for (i, l) in text.lines().enumerate() {
        let mut from = 0;
        while let Some(p) = l[from..].find(dep) {
            let a = from + p;
            let b = a + dep.len();
            let before = l[..a].chars().next_back().is_none_or(|c| !word(c));
            let after = l[b..].chars().next().is_none_or(|c| !word(c));
            if before && after {
                return i as u32 + 1;
            }
            from = b;
        }
    }
    1
}
