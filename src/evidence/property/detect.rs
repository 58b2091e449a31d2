//! Which property-testing tools a repository declares: the manifests walked, `Cargo.toml` and
//! `package.json` read; the Python manifests are in `python.rs`.

use std::path::Path;

use toml::de::{DeTable, DeValue};

use super::python::{pyproject, requirements, setup_cfg, setup_py};
use super::{Detected, MAX_DEPTH, MAX_MANIFEST_BYTES, PropertyTool};
use crate::config::line_at;
use crate::index::walk::VENDORED_DIRS;

/// The kinds of manifest [`detect`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Manifest {
    Cargo,
    Pyproject,
    Requirements,
    SetupCfg,
    SetupPy,
    PackageJson,
}

fn manifest_of(rel: &str) -> Option<Manifest> {
    let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    Some(match name {
        "Cargo.toml" => Manifest::Cargo,
        "pyproject.toml" => Manifest::Pyproject,
        "setup.cfg" => Manifest::SetupCfg,
        "setup.py" => Manifest::SetupPy,
        "package.json" => Manifest::PackageJson,
        n if (n.ends_with(".txt") || n.ends_with(".in"))
            && (n.contains("requirements") || dir.rsplit('/').next() == Some("requirements")) =>
        {
            Manifest::Requirements
        }
        _ => return None,
    })
}

/// The property-testing tools the repository at `root` declares as dependencies, sorted by
/// manifest, line and tool; one entry per manifest and declared package.
///
/// Walks at most [`MAX_DEPTH`] levels, honouring `.gitignore`/`.ignore` and skipping hidden
/// directories, `.git`, `.andon` and vendored trees (`target`, `node_modules`, …). A manifest that
/// cannot be read or parsed declares nothing.
pub fn detect(root: &Path) -> Vec<Detected> {
    let mut walk = ignore::WalkBuilder::new(root);
    walk.hidden(true)
        .git_ignore(true)
        .ignore(true)
        .git_global(false)
        .git_exclude(false)
        .parents(false)
        .require_git(false)
        .follow_links(false)
        .max_depth(Some(MAX_DEPTH))
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            e.depth() == 0
                || !(is_dir && (name == ".git" || name == ".andon" || VENDORED_DIRS.contains(&name.as_ref())))
        });
    let mut out = Vec::new();
    for entry in walk.build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else { continue };
        let rel = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
        let Some(kind) = manifest_of(&rel) else { continue };
        if entry.metadata().map_or(true, |m| m.len() > MAX_MANIFEST_BYTES) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else { continue };
        for (tool, package, line) in declared(kind, &text) {
            out.push(Detected { tool, package, manifest: rel.clone(), line });
        }
    }
    out.sort_by(|a, b| (&a.manifest, &a.package, a.line).cmp(&(&b.manifest, &b.package, b.line)));
    out.dedup_by(|later, first| later.manifest == first.manifest && later.package == first.package);
    out.sort_by(|a, b| (&a.manifest, a.line, a.tool, &a.package).cmp(&(&b.manifest, b.line, b.tool, &b.package)));
    out
}

/// The tools one manifest declares: (tool, package, line).
fn declared(kind: Manifest, text: &str) -> Vec<(PropertyTool, String, usize)> {
    match kind {
        Manifest::Cargo => cargo(text),
        Manifest::Pyproject => pyproject(text),
        Manifest::Requirements => requirements(text),
        Manifest::SetupCfg => setup_cfg(text),
        Manifest::SetupPy => setup_py(text),
        Manifest::PackageJson => package_json(text),
    }
}

pub(super) fn line(text: &str, offset: usize) -> usize {
    line_at(text, offset) as usize
}

pub(super) fn subtable<'a, 'i>(t: &'a DeTable<'i>, key: &str) -> Option<&'a DeTable<'i>> {
    match t.get(key)?.get_ref() {
        DeValue::Table(t) => Some(t),
        _ => None,
    }
}

pub(super) fn tables<'a, 'i>(t: &'a DeTable<'i>) -> impl Iterator<Item = &'a DeTable<'i>> {
    t.values().filter_map(|v| match v.get_ref() {
        DeValue::Table(t) => Some(t),
        _ => None,
    })
}

/// `Cargo.toml`: `[dependencies]`, `[dev-dependencies]`, `[workspace.dependencies]` and their
/// `[target.'…'.…]` forms; a renamed dependency counts by its `package`.
fn cargo(text: &str) -> Vec<(PropertyTool, String, usize)> {
    let Ok(doc) = DeTable::parse(text) else { return Vec::new() };
    let root = doc.get_ref();
    const KINDS: [&str; 2] = ["dependencies", "dev-dependencies"];
    let mut deps: Vec<&DeTable<'_>> = KINDS.iter().filter_map(|k| subtable(root, k)).collect();
    deps.extend(subtable(root, "workspace").and_then(|w| subtable(w, "dependencies")));
    for target in subtable(root, "target").into_iter().flat_map(tables) {
        deps.extend(KINDS.iter().filter_map(|k| subtable(target, k)));
    }
    let mut out = Vec::new();
    for table in deps {
        for (key, spec) in table.iter() {
            let package = match spec.get_ref() {
                DeValue::Table(t) => match t.get("package").map(|p| p.get_ref()) {
                    Some(DeValue::String(p)) => p.as_ref(),
                    _ => key.get_ref().as_ref(),
                },
                _ => key.get_ref().as_ref(),
            };
            let tool = match package {
                "proptest" => PropertyTool::Proptest,
                "quickcheck" => PropertyTool::Quickcheck,
                _ => continue,
            };
            out.push((tool, package.to_string(), line(text, key.span().start)));
        }
    }
    out
}

/// The first index at or after `i` that is not ASCII whitespace.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The index just past the JSON string that opens at `i`.
fn json_string_end(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The index just past the JSON value that starts at `i` (the document is known to be valid).
fn json_value_end(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => json_string_end(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = json_string_end(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            b.len()
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']') && !b[j].is_ascii_whitespace() {
                j += 1;
            }
            j
        }
    }
}

/// The members of the JSON object that opens at `at`: (key, offset of the key, offset of the value).
fn json_members(text: &str, at: usize) -> Vec<(String, usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    if b.get(at) != Some(&b'{') {
        return out;
    }
    let mut i = at + 1;
    loop {
        i = skip_ws(b, i);
        if b.get(i) != Some(&b'"') {
            return out;
        }
        let key_end = json_string_end(b, i);
        let Ok(key) = serde_json::from_str::<String>(&text[i..key_end]) else { return out };
        let colon = skip_ws(b, key_end);
        if b.get(colon) != Some(&b':') {
            return out;
        }
        let value = skip_ws(b, colon + 1);
        out.push((key, i, value));
        i = skip_ws(b, json_value_end(b, value));
        if b.get(i) != Some(&b',') {
            return out;
        }
        i += 1;
    }
}

/// `package.json`: `dependencies` and `devDependencies`.
fn package_json(text: &str) -> Vec<(PropertyTool, String, usize)> {
    if serde_json::from_str::<serde_json::Value>(text).map_or(true, |v| !v.is_object()) {
        return Vec::new();
    }
    let top = skip_ws(text.as_bytes(), 0);
    let mut out = Vec::new();
    for (key, _, value) in json_members(text, top) {
        if key != "dependencies" && key != "devDependencies" {
            continue;
        }
        for (name, at, _) in json_members(text, value) {
            if PropertyTool::FastCheck.packages().contains(&name.as_str()) {
                out.push((PropertyTool::FastCheck, name, line(text, at)));
            }
        }
    }
    out
}
