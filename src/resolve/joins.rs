//! Manifests joined with the files they read: a Python manifest's dependencies from the
//! requirements files it names (`ManifestReads`, `-r` includes followed), and from the other
//! manifests of its distribution (`pyproject.toml`, `setup.cfg` and `setup.py` of one directory
//! describe one package); a tsconfig's `importHelpers` as a use of `tslib` by its package.

use std::collections::{BTreeMap, BTreeSet};

use super::{ManifestInfo, Out, Repo, Requirements, parent_dir};
use crate::extract::manifest::join;
use crate::facts::rel;

/// The Python ecosystem's name, as `Manifest` facts give it.
const PYTHON: &str = "python";

/// A dependency declared through another file: (dependency, kind, source, line).
type Through = (String, String, String, u32);

/// How many `-r` includes deep a requirements file is followed.
const MAX_INCLUDES: usize = 16;

/// How many `extends` a tsconfig is followed through.
const MAX_EXTENDS: usize = 8;

/// Fills each manifest's `through` (and adds those dependencies to its `deps`): first the
/// requirements files it reads, then what the other Python manifests of its directory declare,
/// themselves or through their files.
pub(super) fn join_manifests(manifests: &mut BTreeMap<String, ManifestInfo>, reqs: &BTreeMap<String, Requirements>) {
    for m in manifests.values_mut() {
        let mut through = BTreeSet::new();
        for (pattern, kind) in &m.reads {
            for file in reqs.keys().filter(|f| glob_match(pattern, f)) {
                read_file(file, kind, reqs, &mut through);
            }
        }
        m.through = through.into_iter().collect();
    }
    let mut by_dir: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (p, _) in manifests.iter().filter(|(_, m)| m.ecosystem == PYTHON) {
        by_dir.entry(parent_dir(p)).or_default().push(p);
    }
    let mut added: Vec<(String, Vec<Through>)> = Vec::new();
    for siblings in by_dir.values().filter(|s| s.len() > 1) {
        for p in siblings {
            let mut from_others = BTreeSet::new();
            for q in siblings.iter().filter(|q| *q != p) {
                let other = &manifests[*q];
                for (d, k) in &other.dep_kinds {
                    from_others.insert((d.clone(), k.clone(), q.to_string(), 0));
                }
                from_others.extend(other.through.iter().cloned());
            }
            added.push((p.to_string(), from_others.into_iter().collect()));
        }
    }
    for (p, more) in added {
        if let Some(m) = manifests.get_mut(&p) {
            m.through.extend(more);
            m.through.sort();
            m.through.dedup();
        }
    }
    for m in manifests.values_mut() {
        let more: Vec<String> = m.through.iter().map(|t| t.0.clone()).collect();
        m.deps.extend(more);
    }
}

/// The requirements of `file` and of the files it includes, transitively (each file once).
fn read_file(file: &str, kind: &str, reqs: &BTreeMap<String, Requirements>, out: &mut BTreeSet<Through>) {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut work: Vec<(&str, usize)> = vec![(file, 0)];
    while let Some((f, depth)) = work.pop() {
        let Some((path, r)) = reqs.get_key_value(f) else { continue };
        if !seen.insert(path.as_str()) {
            continue;
        }
        for (d, line) in &r.deps {
            out.insert((d.clone(), kind.to_string(), path.clone(), *line));
        }
        if depth < MAX_INCLUDES {
            work.extend(r.includes.iter().map(|i| (i.as_str(), depth + 1)));
        }
    }
}

/// Whether a repo-relative path matches a pattern of the same number of names, where `*` in a
/// name stands for any part of one name.
pub(crate) fn glob_match(pattern: &str, path: &str) -> bool {
    let (mut ps, mut fs) = (pattern.split('/'), path.split('/'));
    loop {
        match (ps.next(), fs.next()) {
            (None, None) => return true,
            (Some(p), Some(f)) if name_match(p, f) => {}
            _ => return false,
        }
    }
}

/// `*` matching any run of characters within one name.
fn name_match(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

/// `DeclaredThrough` for each joined dependency, and `ImpliedUse` of `tslib` by the package
/// (the nearest `package.json` at or above it) of each tsconfig whose `importHelpers` is set, on
/// it or on a configuration of the repository it extends.
pub(super) fn manifest_joins(repo: &Repo, out: &mut Out) {
    for (path, m) in &repo.manifests {
        for (dep, kind, source, line) in &m.through {
            let row = [path.into(), dep.into(), kind.into(), source.into(), (*line).into()];
            out.push(rel::DECLARED_THROUGH, &row);
        }
    }
    let mut implied: BTreeSet<(&str, &str)> = BTreeSet::new();
    for path in repo.manifests.iter().filter(|(_, m)| m.ecosystem == crate::extract::manifest::TSCONFIG).map(|(p, _)| p)
    {
        if !import_helpers(repo, path) {
            continue;
        }
        if let Some((pkg, _)) = repo.manifests_above(path, "npm").first() {
            implied.insert((pkg, path));
        }
    }
    for (pkg, ts) in implied {
        out.push(rel::IMPLIED_USE, &[pkg.into(), "tslib".into(), ts.into()]);
    }
}

/// Whether a tsconfig sets `importHelpers`, itself or through the repository files it extends.
fn import_helpers(repo: &Repo, tsconfig: &str) -> bool {
    let mut at = tsconfig.to_string();
    for _ in 0..MAX_EXTENDS {
        let Some(m) = repo.manifests.get(&at) else { return false };
        if m.import_helpers {
            return true;
        }
        let Some(ext) = m.ts_extends.as_deref().filter(|e| e.starts_with('.')) else { return false };
        let mut next = join(parent_dir(&at), ext);
        if !next.ends_with(".json") {
            next.push_str(".json");
        }
        at = next;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_within_one_name() {
        assert!(glob_match("requirements/extras/*.txt", "requirements/extras/redis.txt"));
        assert!(!glob_match("requirements/*.txt", "requirements/extras/redis.txt"));
        assert!(glob_match("requirements-*.txt", "requirements-dev.txt"));
        assert!(glob_match("a.txt", "a.txt"));
        assert!(!glob_match("*.txt", "a.in"));
        assert!(!glob_match("a*a.txt", "a.txt"));
    }

    #[test]
    fn requirements_reach_the_distribution_manifests_with_their_lines() {
        let mut manifests = BTreeMap::new();
        let reads = vec![("requirements/default.txt".to_string(), "normal".to_string())];
        manifests.insert("setup.py".into(), ManifestInfo { ecosystem: PYTHON.into(), reads, ..Default::default() });
        manifests.insert("pyproject.toml".into(), ManifestInfo { ecosystem: PYTHON.into(), ..Default::default() });
        let mut reqs = BTreeMap::new();
        reqs.insert(
            "requirements/default.txt".to_string(),
            Requirements { deps: vec![("kombu".into(), 2)], includes: vec!["requirements/extra.txt".into()] },
        );
        reqs.insert(
            "requirements/extra.txt".to_string(),
            Requirements { deps: vec![("vine".into(), 1)], includes: vec![] },
        );
        join_manifests(&mut manifests, &reqs);
        let py = &manifests["pyproject.toml"];
        assert!(py.deps.contains("kombu") && py.deps.contains("vine"), "{py:?}");
        assert!(py.through.contains(&("kombu".into(), "normal".into(), "requirements/default.txt".into(), 2)));
        assert!(manifests["setup.py"].through.contains(&(
            "vine".into(),
            "normal".into(),
            "requirements/extra.txt".into(),
            1
        )));
    }
}
