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
        for r in store.rels[rel::UNUSED_DEPENDENCY_AT.0 as usize].iter() {
            let (stage, dep, kind, manifest) = (s(r[0]), s(r[1]), s(r[2]), s(r[3]));
            if !in_scope(&stage) {
                continue;
            }
            let text = texts.entry(manifest.clone()).or_insert_with(|| source(root, &manifest).unwrap_or_default());
            let line = line_naming(text, &dep);
            out.push(Raw {
                tier: 2,
                at: (manifest.clone(), line),
                message: format!(
                    "stage `{stage}` declares `{dep}` ({kind}) in `{manifest}`, but none of its code imports it"
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
