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

/// Package names that only test code has, whatever its files are called (`t/`, `testing/`):
/// support when no code imports them.
const TEST_PACKAGES: &[&str] = &["t", "testing", "testutils", "test_utils", "testlib", "test_support", "e2e"];

/// A group of files that may be support: its directory and role, and whose files they are.
struct Doubt<'r> {
    dir: String,
    role: &'static str,
    /// The candidate the files are in; none for files outside every candidate.
    cand: Option<usize>,
    files: Vec<&'r str>,
}

/// What is support, and the rest: test code (a candidate all of whose files are test files
/// clearly, or nine in ten of them, or a package named as only test packages are; test files
/// outside every candidate), directories support by their names and tooling scripts
/// ([`super::support`]), and vendored packages (a packaged manifest's candidate below the root
/// where the repository has code of its own). A group that a file of code imports exactly
/// (`edges`: importing file, imported file) is code: production depends on it.
fn split_support<'r>(
    repo: &Repo,
    cands: &[Cand],
    members: BTreeMap<usize, Vec<&'r str>>,
    homeless: Vec<&'r str>,
    edges: &[(&str, String)],
) -> (BTreeMap<usize, Vec<&'r str>>, Vec<&'r str>, Vec<Doubt<'r>>) {
    let lang_of = |p: &str| repo.files.get(p).and_then(|f| Language::by_name(&f.lang));
    let clear =
        |p: &str| repo.files.get(p).is_some_and(|f| f.test_file) && lang_of(p).is_some_and(|l| l.is_clear_test_path(p));
    let packaged = |c: &Cand| c.manifest.as_ref().is_some_and(|m| repo.manifests.get(m).is_some_and(|m| m.packaged));
    let own_code = members.keys().any(|&i| !packaged(&cands[i])) || !homeless.is_empty();
    let mut kept: BTreeSet<&str> = BTreeSet::new();
    let mut doubts: Vec<Doubt> = Vec::new();
    let mut doubt = |dir: String, role, cand, file| match doubts.iter_mut().find(|d| d.dir == dir && d.cand == cand) {
        Some(d) => d.files.push(file),
        None => doubts.push(Doubt { dir, role, cand, files: vec![file] }),
    };
    for (&i, files) in &members {
        let c = &cands[i];
        if packaged(c) && !c.root.is_empty() && own_code {
            let dir = match parent_dir(&c.root) {
                "" => c.root.clone(),
                d => d.to_string(),
            };
            files.iter().for_each(|f| doubt(dir.clone(), "vendored", Some(i), f));
            continue;
        }
        // a directory support by its name; a tooling script (its own file) is judged with the rest
        // a build's copy is never Rust (Cargo builds into `target/`): a crate's `build/` is code
        let by_name = |f: &str| {
            let rust = repo.files.get(f).is_some_and(|fi| fi.lang == crate::extract::Lang::Rust.name());
            repo.support_of(f).filter(|(_, role)| !(*role == "generated" && rust))
        };
        let in_dir = |f: &str| by_name(f).filter(|(d, _)| d != f);
        let (copies, files): (Vec<&str>, Vec<&str>) =
            files.iter().partition(|f| compiled_copy(repo, &c.root, f).is_some());
        for f in copies {
            doubt(compiled_copy(repo, &c.root, f).expect("partitioned by it"), "generated", Some(i), f);
        }
        let (named, rest): (Vec<&str>, Vec<&str>) = files.iter().partition(|f| in_dir(f).is_some());
        for f in named {
            let (dir, role) = in_dir(f).expect("partitioned by it");
            doubt(dir, role, Some(i), f);
        }
        // a test directory of the package's own (a crate's `tests/`, a package's `tests/`)
        let own_tests = |f: &str| through_test_dir(parent_dir(f)).filter(|d| d != &c.root && under(d, &c.root));
        // nine in ten of the files outside those are tests by their names
        let outside: Vec<&str> = rest.iter().copied().filter(|f| own_tests(f).is_none()).collect();
        let tests = outside.iter().filter(|p| clear(p)).count();
        let last = c.root.rsplit('/').next().unwrap_or(&c.root);
        let test_only = !rest.is_empty()
            && (rest.iter().all(|p| clear(p))
                || !outside.is_empty() && 10 * tests >= 9 * outside.len()
                || TEST_PACKAGES.contains(&last));
        for f in rest {
            // and a crate's `benches/`
            let own_tests = own_tests(f);
            let benches = super::child(&c.root, "benches");
            if test_only {
                doubt(through_test_dir(&c.root).unwrap_or_else(|| c.root.clone()), "test", Some(i), f);
            } else if let Some(dir) = own_tests.filter(|_| clear(f)) {
                doubt(dir, "test", Some(i), f);
            } else if c.ecosystem == "cargo" && under(f, &benches) {
                doubt(benches, "bench", Some(i), f);
            } else if let Some((dir, role)) = by_name(f) {
                doubt(dir, role, Some(i), f);
            } else {
                kept.insert(f);
            }
        }
    }
    for p in &homeless {
        match repo.support_of(p) {
            Some((dir, role)) if dir != *p || !clear(p) => doubt(dir, role, None, p),
            _ if clear(p) => doubt(test_dir(p), "test", None, p),
            _ => {
                kept.insert(p);
            }
        }
    }
    let rescued = rescued(&doubts, &kept, edges);
    let mut support = Vec::new();
    for (d, keep) in doubts.into_iter().zip(rescued) {
        // code that imports a build's copy (through a manifest's `main`) depends on its source
        if keep && d.role != "generated" || repo.keep.iter().any(|k| under(&d.dir, k)) {
            kept.extend(d.files.iter().copied());
        } else {
            support.push(d);
        }
    }
    let members = members
        .into_iter()
        .map(|(i, files)| (i, files.into_iter().filter(|p| kept.contains(p)).collect::<Vec<_>>()))
        .filter(|(_, files)| !files.is_empty())
        .collect();
    (members, homeless.into_iter().filter(|p| kept.contains(p)).collect(), support)
}

/// Where file `path` of the package rooted at `root` is a build's copy of a source file (`v3/x.cjs`,
/// `v3/x.d.ts` or `index.js` beside `src/v3/x.ts`, `src/index.ts`), the support directory it is in:
/// its first directory below the root, or the file itself at the root.
fn compiled_copy(repo: &Repo, root: &str, path: &str) -> Option<String> {
    const COPIES: &[&str] = &[".d.ts", ".d.cts", ".d.mts", ".js", ".cjs", ".mjs", ".jsx"];
    let rel = if root.is_empty() { path } else { path.strip_prefix(root)?.strip_prefix('/')? };
    if rel.starts_with("src/") {
        return None;
    }
    let stem = COPIES.iter().find_map(|ext| rel.strip_suffix(ext))?;
    let src = super::child(root, &format!("src/{stem}"));
    [".ts", ".tsx", ".mts", ".cts"].iter().any(|e| repo.is_file(&format!("{src}{e}"))).then(|| {
        match rel.split_once('/') {
            Some((dir, _)) => super::child(root, dir),
            None => path.to_string(),
        }
    })
}

/// The directory a test file outside every candidate is support in: the path through its first
/// test directory (`tests/`), else the file itself.
fn test_dir(p: &str) -> String {
    through_test_dir(parent_dir(p)).unwrap_or_else(|| p.to_string())
}

/// Directory `dir` up to and through its first test directory (`tests/`), if it has one.
fn through_test_dir(dir: &str) -> Option<String> {
    let mut end = 0;
    for part in dir.split('/') {
        end += part.len() + 1;
        if crate::extract::lang::CLEAR_TEST_DIRS.contains(&part) {
            return Some(dir[..end - 1].to_string());
        }
    }
    None
}

/// Which groups code depends on: the closure of "a kept file imports a file of the group", walked
/// once from the kept files.
fn rescued(doubts: &[Doubt], kept: &BTreeSet<&str>, edges: &[(&str, String)]) -> Vec<bool> {
    let mut group_of: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (g, d) in doubts.iter().enumerate() {
        for &p in &d.files {
            group_of.entry(p).or_insert(g);
        }
    }
    let mut imports: std::collections::HashMap<&str, Vec<&str>> = std::collections::HashMap::new();
    for (from, to) in edges {
        if group_of.contains_key(to.as_str()) {
            imports.entry(*from).or_default().push(to.as_str());
        }
    }
    let mut rescued = vec![false; doubts.len()];
    let mut frontier: Vec<&str> = kept.iter().copied().collect();
    while let Some(from) = frontier.pop() {
        for to in imports.get(from).map(Vec::as_slice).unwrap_or_default() {
            let g = group_of[to];
            if !rescued[g] {
                rescued[g] = true;
                frontier.extend(doubts[g].files.iter().copied());
            }
        }
    }
    rescued
}

/// Emits the stages (names made unique), their info and manifests, each file's stage and each
/// manifest's owner, and `StageMode("detected")`.
/// `edges` are the resolved imports outside test code, (importing file, imported file).
pub(crate) fn stages(repo: &Repo, hooks: &Resolvers, root_name: &str, edges: &[(&str, String)], out: &mut Out) {
    out.push(rel::STAGE_MODE, &["detected".into()]);
    let mut cands = manifest_candidates(repo);
    cands.extend(package_candidates(repo, hooks));
    let (members, homeless) = assign(repo, &cands);
    let (members, homeless, support) = split_support(repo, &cands, members, homeless, edges);
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
            // the repository's own name where a manifest gives one: a checkout's directory name
            // is whatever the clone was called
            let named = repo.manifests.iter().filter(|(p, m)| parent_dir(p).is_empty() && !m.name.is_empty());
            named.map(|(_, m)| m.name.clone()).next().unwrap_or_else(|| super::python::display_name(root_name))
        } else {
            root.rsplit('/').next().unwrap_or("root").to_string()
        };
        stages.push((Cand { name, root, ecosystem: "directory", source: "directory", manifest: None }, homeless));
    }
    stages.sort_by(|a, b| (&a.0.root, &a.0.name).cmp(&(&b.0.root, &b.0.name)));
    let names = unique_names(&stages.iter().map(|(c, _)| c).collect::<Vec<_>>());
    // Each manifest's owner: of the stages it describes, the one named as the manifest's package,
    // else the strongest claim, then the shallowest root; so a root script or a new package beside
    // the manifest's own package never takes its findings (and their exceptions) away from it.
    let mut owner: BTreeMap<&str, (bool, u8, usize, &str, String)> = BTreeMap::new();
    for ((c, files), name) in stages.iter().zip(names) {
        let n = name.as_str();
        out.push(rel::STAGE, &[n.into(), crate::extract::manifest::dir_value(&c.root).into()]);
        out.push(rel::STAGE_INFO, &[n.into(), c.ecosystem.into(), "heuristic".into(), c.source.into()]);
        if let Some(m) = &c.manifest {
            out.push(rel::STAGE_MANIFEST, &[n.into(), m.as_str().into()]);
            let package = repo.manifests.get(m).map_or("", |i| i.name.as_str());
            let norm = |x: &str| x.to_ascii_lowercase().replace(['-', '.'], "_");
            let key = (
                norm(package) != norm(&c.name),
                claim_strength(c),
                c.root.split('/').filter(|x| !x.is_empty()).count(),
                c.root.as_str(),
                name.clone(),
            );
            let e = owner.entry(m.as_str()).or_insert_with(|| key.clone());
            if key < *e {
                *e = key;
            }
        }
        for f in files {
            out.push(rel::IN_STAGE, &[(*f).into(), n.into()]);
        }
    }
    for (m, (_, _, _, _, stage)) in owner {
        out.push(rel::MANIFEST_OWNER, &[m.into(), stage.as_str().into()]);
    }
    let mut dirs: BTreeMap<&str, &str> = BTreeMap::new();
    for d in &support {
        dirs.entry(d.dir.as_str()).or_insert(d.role);
        for f in &d.files {
            out.push(rel::IN_SUPPORT, &[(*f).into(), d.dir.as_str().into()]);
            let eco = repo.files.get(*f).and_then(|fi| Language::by_name(&fi.lang)).map(|l| l.ecosystem.name);
            if let Some((m, _)) = eco.and_then(|e| repo.manifests_above(f, e).into_iter().next()) {
                out.push(rel::SUPPORT_MANIFEST, &[(*f).into(), m.into()]);
            }
        }
    }
    for (dir, role) in dirs {
        out.push(rel::SUPPORT, &[crate::extract::manifest::dir_value(dir).into(), role.into()]);
    }
}

/// Each stage's name: its import name, with `@root` only where two stages claim one name. Of
/// those, the strongest claim keeps the name bare (a package or a named manifest before a group
/// of loose modules, before a directory of files; then the shallowest root), so a stage keeps its
/// name whatever is added beside it; the others carry their root for as long as both exist.
fn unique_names(stages: &[&Cand]) -> Vec<String> {
    let claim = |c: &Cand| {
        (claim_strength(c), c.root.split('/').filter(|x| !x.is_empty()).count(), c.root.clone(), c.ecosystem)
    };
    let mut best: BTreeMap<&str, (u8, usize, String, &str)> = BTreeMap::new();
    for c in stages {
        let k = claim(c);
        let e = best.entry(c.name.as_str()).or_insert_with(|| k.clone());
        if k < *e {
            *e = k;
        }
    }
    stages
        .iter()
        .map(|c| {
            if claim(c) == best[c.name.as_str()] {
                c.name.clone()
            } else {
                let at = if c.root.is_empty() { "." } else { &c.root };
                // two claims on one root differ by ecosystem
                let clash = stages.iter().any(|o| o.name == c.name && o.root == c.root && o.ecosystem != c.ecosystem);
                if clash { format!("{}@{at}:{}", c.name, c.ecosystem) } else { format!("{}@{at}", c.name) }
            }
        })
        .collect()
}

/// How strongly a stage claims its name, strongest (0) first: a package or a named manifest, then
/// a group of loose modules (or a package at the repository's root), then a directory of files.
fn claim_strength(c: &Cand) -> u8 {
    match c.source {
        "directory" => 2,
        _ if c.manifest.is_some() && c.ecosystem != "python" => 0,
        // a package's root is named after it; a group of loose modules (or a package at the
        // repository's root) is named for them
        _ if !c.root.is_empty() && c.root.rsplit('/').next() == Some(c.name.as_str()) => 0,
        _ => 1,
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
