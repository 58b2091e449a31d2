//! Stage detection (R28–R31): a stage is a package boundary keyed by the shallowest
//! importable directory. Cargo crates and npm packages are stages by their manifests; every
//! top-level Python package (or namespace package) under a source root is a stage of its own, so
//! two importable packages under one `pyproject.toml` are two stages. Each file belongs to the
//! deepest stage root that holds it (preferring its own ecosystem); files outside every stage form
//! one directory stage. A candidate whose files are all clearly test files (`TestFile`, and a
//! test by its own name or under a directory named as only test directories are: a
//! `tests/` package, a `__tests__` directory, a test-only crate) is no stage, unless a file of a
//! kept stage imports it; a clearly test file outside every candidate joins no directory stage:
//! such files are in no stage and carry no wire, and their imports are test evidence for the
//! stages they reach. A package named `testing` or `benches` stays a stage. A candidate with one
//! file that is not clearly a test keeps all its files (a crate's own `tests/`). All of it is
//! local detection, labelled `heuristic` with its source (R30).

use std::collections::{BTreeMap, BTreeSet};

use super::{Out, Repo, Resolvers, parent_dir, under};
use crate::extract::lang::{ECOSYSTEMS, Ecosystem, Language, StageRule};
use crate::facts::rel;

struct Cand {
    name: String,
    root: String,
    ecosystem: &'static str,
    source: &'static str,
    manifest: Option<String>,
}

/// Stage candidates of the ecosystems whose stages are their named manifests, in manifest order.
fn manifest_candidates(repo: &Repo) -> Vec<Cand> {
    let mut cands: Vec<Cand> = Vec::new();
    for (path, m) in &repo.manifests {
        let Some(eco) = Ecosystem::by_name(&m.ecosystem) else { continue };
        if eco.stages == StageRule::NamedManifest && !m.name.is_empty() {
            cands.push(Cand {
                name: m.name.clone(),
                root: parent_dir(path).to_string(),
                ecosystem: eco.name,
                source: eco.stage_source,
                manifest: Some(path.clone()),
            });
        }
    }
    cands
}

/// Stage candidates of the ecosystems whose stages are their importable packages, as each one's
/// resolver hook finds them, with the nearest manifest of the ecosystem above each.
fn package_candidates(repo: &Repo, hooks: &Resolvers) -> Vec<Cand> {
    let mut cands: Vec<Cand> = Vec::new();
    for eco in ECOSYSTEMS.iter().filter(|e| e.stages == StageRule::ImportablePackage) {
        let Some(hook) = hooks.of_ecosystem(eco) else { continue };
        for (name, root) in hook.top_level_packages() {
            let manifest = repo.manifests_above(&format!("{root}/x"), eco.name).first().map(|(p, _)| p.to_string());
            cands.push(Cand { name, root, ecosystem: eco.name, source: eco.stage_source, manifest });
        }
    }
    cands
}

/// Each source file's candidate: the deepest candidate root holding it, own ecosystem first;
/// the files no candidate holds are the second part.
fn assign<'r>(repo: &'r Repo, cands: &[Cand]) -> (BTreeMap<usize, Vec<&'r str>>, Vec<&'r str>) {
    let eco_of = |lang: &str| Language::by_name(lang).map_or("", |l| l.ecosystem.name);
    let mut members: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    let mut homeless: Vec<&str> = Vec::new();
    for (path, fi) in &repo.files {
        let eco = eco_of(&fi.lang);
        let best = |same: bool| {
            cands
                .iter()
                .enumerate()
                .filter(|(_, c)| under(path, &c.root) && (!same || c.ecosystem == eco))
                .max_by_key(|(_, c)| (c.root.len(), c.root.clone()))
                .map(|(i, _)| i)
        };
        match best(true).or_else(|| best(false)) {
            Some(i) => members.entry(i).or_default().push(path),
            None => homeless.push(path),
        }
    }
    (members, homeless)
}

/// Drops what is clearly test code only: the candidates all of whose files are test files
/// clearly (by a file's own name, or a directory named as only test directories are), and
/// such test files among the homeless ones (they join no directory stage). A candidate or file
/// that a file of a kept stage imports exactly (`edges`: importing file, imported file) is kept:
/// production code depends on it.
fn without_test_only<'r>(
    repo: &Repo,
    members: BTreeMap<usize, Vec<&'r str>>,
    homeless: Vec<&'r str>,
    edges: &[(&str, String)],
) -> (BTreeMap<usize, Vec<&'r str>>, Vec<&'r str>) {
    let clear = |p: &str| {
        repo.files
            .get(p)
            .is_some_and(|f| f.test_file && Language::by_name(&f.lang).is_some_and(|l| l.is_clear_test_path(p)))
    };
    // the doubtful groups: a candidate's files, or one homeless file
    let mut kept: BTreeSet<&str> = BTreeSet::new();
    let mut doubtful: Vec<Vec<&str>> = Vec::new();
    for files in members.values() {
        if files.iter().all(|p| clear(p)) {
            doubtful.push(files.clone());
        } else {
            kept.extend(files.iter().copied());
        }
    }
    for p in &homeless {
        if clear(p) {
            doubtful.push(vec![p]);
        } else {
            kept.insert(p);
        }
    }
    // the closure of "a kept file imports a file of the group", walked once from the kept files
    let mut group_of: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (g, files) in doubtful.iter().enumerate() {
        for &p in files {
            group_of.entry(p).or_insert(g);
        }
    }
    let mut imports: std::collections::HashMap<&str, Vec<&str>> = std::collections::HashMap::new();
    for (from, to) in edges {
        if group_of.contains_key(to.as_str()) {
            imports.entry(*from).or_default().push(to.as_str());
        }
    }
    let mut rescued = vec![false; doubtful.len()];
    let mut frontier: Vec<&str> = kept.iter().copied().collect();
    while let Some(from) = frontier.pop() {
        for to in imports.get(from).map(Vec::as_slice).unwrap_or_default() {
            let g = group_of[to];
            if !rescued[g] {
                rescued[g] = true;
                kept.extend(doubtful[g].iter().copied());
                frontier.extend(doubtful[g].iter().copied());
            }
        }
    }
    let members = members.into_iter().filter(|(_, files)| files.iter().any(|p| kept.contains(p))).collect();
    (members, homeless.into_iter().filter(|p| kept.contains(p)).collect())
}

/// Emits the stages (names made unique), their info and manifests, each file's stage and each
/// manifest's owner, and `StageMode("detected")`.
/// `edges` are the resolved imports outside test code, (importing file, imported file).
pub(crate) fn stages(repo: &Repo, hooks: &Resolvers, root_name: &str, edges: &[(&str, String)], out: &mut Out) {
    out.push(rel::STAGE_MODE, &["detected".into()]);
    let mut cands = manifest_candidates(repo);
    cands.extend(package_candidates(repo, hooks));
    let (members, homeless) = assign(repo, &cands);
    let (members, homeless) = without_test_only(repo, members, homeless, edges);
    let mut stages: Vec<(Cand, Vec<&str>)> = Vec::new();
    for (i, files) in members {
        let c = &cands[i];
        stages.push((
            Cand {
                name: c.name.clone(),
                root: c.root.clone(),
                ecosystem: c.ecosystem,
                source: c.source,
                manifest: c.manifest.clone(),
            },
            files,
        ));
    }
    if !homeless.is_empty() {
        let root = common_dir(&homeless);
        let name = if root.is_empty() {
            super::python::display_name(root_name)
        } else {
            root.rsplit('/').next().unwrap_or("root").to_string()
        };
        stages.push((Cand { name, root, ecosystem: "directory", source: "directory", manifest: None }, homeless));
    }
    // Unique names, deterministic: a repeated name gets `@root`.
    stages.sort_by(|a, b| (&a.0.root, &a.0.name).cmp(&(&b.0.root, &b.0.name)));
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for (c, _) in &stages {
        *count.entry(c.name.clone()).or_default() += 1;
    }
    // Each manifest's owner: of the stages it describes, the one with the shallowest root.
    let mut owner: BTreeMap<&str, (usize, &str, String)> = BTreeMap::new();
    for (c, files) in &stages {
        let name = if count[&c.name] > 1 {
            format!("{}@{}", c.name, if c.root.is_empty() { "." } else { &c.root })
        } else {
            c.name.clone()
        };
        let n = name.as_str();
        out.push(rel::STAGE, &[n.into(), crate::extract::manifest::dir_value(&c.root).into()]);
        out.push(rel::STAGE_INFO, &[n.into(), c.ecosystem.into(), "heuristic".into(), c.source.into()]);
        if let Some(m) = &c.manifest {
            out.push(rel::STAGE_MANIFEST, &[n.into(), m.as_str().into()]);
            let key = (c.root.split('/').filter(|x| !x.is_empty()).count(), c.root.as_str(), name.clone());
            let e = owner.entry(m.as_str()).or_insert_with(|| key.clone());
            if key < *e {
                *e = key;
            }
        }
        for f in files {
            out.push(rel::IN_STAGE, &[(*f).into(), n.into()]);
        }
    }
    for (m, (_, _, stage)) in owner {
        out.push(rel::MANIFEST_OWNER, &[m.into(), stage.as_str().into()]);
    }
}

fn common_dir(paths: &[&str]) -> String {
    let mut common: Option<Vec<&str>> = None;
    for p in paths {
        let parts: Vec<&str> = parent_dir(p).split('/').filter(|s| !s.is_empty()).collect();
        common = Some(match common {
            None => parts,
            Some(c) => c.iter().zip(&parts).take_while(|(a, b)| a == b).map(|(a, _)| *a).collect(),
        });
    }
    common.unwrap_or_default().join("/")
}

/// Emits a declared stream (R32) verbatim: each stage with its root, in declaration order
/// (`DeclaredStage`), labelled `declared`; each source file under a stage's root in that stage
/// (roots never hold one another); a manifest at a stage's root as the stage's; the declared wires
/// (`DeclaredWire`); and `StageMode("declared")`, which keeps imports from making wires. A file
/// outside every root is in no stage.
pub(crate) fn declared(repo: &Repo, d: &super::declared::DeclaredStream, out: &mut Out) {
    out.push(rel::STAGE_MODE, &["declared".into()]);
    for (n, s) in d.stages.iter().enumerate() {
        let name = s.name.as_str();
        out.push(rel::STAGE, &[name.into(), crate::extract::manifest::dir_value(&s.root).into()]);
        out.push(rel::STAGE_INFO, &[name.into(), "declared".into(), "declared".into(), "declared".into()]);
        out.push(rel::DECLARED_STAGE, &[name.into(), (n as u32).into()]);
        for path in repo.files.keys().filter(|p| under(p, &s.root)) {
            out.push(rel::IN_STAGE, &[path.as_str().into(), name.into()]);
        }
        for m in repo.manifests.keys().filter(|m| parent_dir(m) == s.root) {
            out.push(rel::STAGE_MANIFEST, &[name.into(), m.as_str().into()]);
            out.push(rel::MANIFEST_OWNER, &[m.as_str().into(), name.into()]);
        }
    }
    for w in &d.wires {
        out.push(rel::DECLARED_WIRE, &[w.producer.as_str().into(), w.consumer.as_str().into()]);
    }
}
