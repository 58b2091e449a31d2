//! Whole-repo facts from all file segments: stages, module names, and the resolution of every
//! import with `exact | heuristic | unresolved` confidence. A pure function of what
//! [`Repo::build`] reads of each file, so the result never depends on which files were re-parsed;
//! when a change leaves those inputs as they were but for names no question asked about
//! ([`input_change`], [`asked`]), the index keeps the stored
//! result instead of computing it again.

pub mod declared;
mod joins;
mod python;
mod rust;
mod stages;
pub mod support;
mod surface;
mod typescript;

pub use surface::{SurfaceChange, asked};

use joins::{join_manifests, manifest_joins};

use std::collections::{BTreeMap, BTreeSet};

/// Hash sets and maps with a fast, fixed hasher (deterministic, not DoS-resistant: keys are repo
/// paths and names, and nothing iterates them in hash order into output).
pub(crate) type HashSet<T> = std::collections::HashSet<T, foldhash::fast::FixedState>;
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

use crate::extract::lang::{Ecosystem, Language, Resolver};
use crate::facts::FileMeta;
use crate::facts::{RelId, Segment, SegmentBuilder, rel};

/// One import statement edge, as the resolvers see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Imp {
    pub line: u32,
    pub spec: String,
    pub kinds: BTreeSet<String>,
    /// (name, alias) pairs the import binds.
    pub names: Vec<(String, String)>,
}

/// Facts of one file the resolvers need.
#[derive(Default, Debug, PartialEq, Eq)]
pub(crate) struct FileInfo<'s> {
    pub lang: String,
    pub imports: Vec<Imp>,
    /// What it defines and exports: read through [`Repo::defines`] and its siblings only.
    pub surface: surface::Surface<'s>,
    /// lines of `#[cfg(test)]` items (Rust `mod` declarations)
    pub cfg_test: HashSet<u32>,
    /// the file is test-only by its path
    pub test_file: bool,
    /// lines of imports recovered from text (their resolution is at best heuristic)
    pub recovered: HashSet<u32>,
    /// line → inline modules around a Rust import
    pub import_within: HashMap<u32, String>,
    /// (line, name, within) of out-of-line Rust `mod` declarations.
    pub mod_decls: Vec<(u32, String, String)>,
    /// lines of `mod` declarations with a `path` attribute
    pub mod_path_attr: HashSet<u32>,
    /// Macros the file puts at its crate's root (`CrateRootMacro`).
    pub root_macros: Vec<&'s str>,
    /// Why the file's surface is open (`OpenSurface` from extraction).
    pub open: Vec<&'s str>,
}

#[derive(Default, Debug, PartialEq, Eq)]
pub(crate) struct ManifestInfo {
    pub ecosystem: String,
    pub name: String,
    pub deps: BTreeSet<String>,
    pub dep_paths: Vec<(String, String)>,
    pub members: Vec<String>,
    pub import_names: Vec<String>,
    pub entries: Vec<(String, String)>,
    pub ts_paths: Vec<(String, String)>,
    pub ts_base_url: Option<String>,
    pub ts_extends: Option<String>,
    /// package.json `exports`: (subpath, condition, target), in file order.
    pub exports: Vec<(String, String, String)>,
    /// Written by a packaging tool (`ManifestPackaged`): another project's package, copied in.
    pub packaged: bool,
    /// Its own dependencies with their kinds, (dependency, kind).
    pub dep_kinds: Vec<(String, String)>,
    /// The requirements files it reads, (pattern, kind).
    pub reads: Vec<(String, String)>,
    /// A tsconfig with `compilerOptions.importHelpers`.
    pub import_helpers: bool,
    /// Dependencies it declares through another file, (dependency, kind, source, line): filled by
    /// [`join_manifests`] once every file is read (part of `deps` too).
    pub through: Vec<(String, String, String, u32)>,
}

/// A requirements file: what it lists, (dependency, line), and the files it includes.
#[derive(Default, Debug, PartialEq, Eq)]
pub(crate) struct Requirements {
    pub deps: Vec<(String, u32)>,
    pub includes: Vec<String>,
}

/// The repo as the resolvers see it.
pub(crate) struct Repo<'s> {
    pub files: BTreeMap<String, FileInfo<'s>>,
    pub manifests: BTreeMap<String, ManifestInfo>,
    /// Requirements files by path.
    pub requirements: BTreeMap<String, Requirements>,
    /// Every directory that holds an indexed file (and its ancestors), "" for the root.
    pub dirs: HashSet<String>,
    /// Each directory that lies in a support directory by its name ([`support::by_name`]): the
    /// support directory and its role.
    pub support: HashMap<String, (String, &'static str)>,
    /// Directories the configuration keeps as code whatever their names say (`[index] stage_dirs`).
    pub keep: Vec<String>,
    /// The questions resolution asked of the files' surfaces.
    reads: surface::Reads,
}

impl<'s> Repo<'s> {
    fn build(metas: &[FileMeta], segments: &[&'s Segment]) -> Repo<'s> {
        let mut files: BTreeMap<String, FileInfo<'s>> = BTreeMap::new();
        let mut manifests: BTreeMap<String, ManifestInfo> = BTreeMap::new();
        let mut requirements: BTreeMap<String, Requirements> = BTreeMap::new();
        let mut dirs = HashSet::default();
        dirs.insert(String::new());
        for (meta, seg) in metas.iter().zip(segments) {
            let mut d = parent_dir(&meta.path);
            while dirs.insert(d.to_string()) {
                if d.is_empty() {
                    break;
                }
                d = parent_dir(d);
            }
            let s = |i: u32| seg.str(i).to_string();
            let mut imports: BTreeMap<(u32, String), Imp> = BTreeMap::new();
            let mut fi = FileInfo::default();
            let mut is_source = false;
            for (r, c) in seg.all_rows() {
                match r {
                    rel::FILE => {
                        is_source = true;
                        fi.lang = s(c[1]);
                    }
                    rel::IMPORT => {
                        let e = imports.entry((c[1], s(c[2]))).or_insert_with(|| Imp {
                            line: c[1],
                            spec: s(c[2]),
                            kinds: BTreeSet::new(),
                            names: Vec::new(),
                        });
                        e.kinds.insert(s(c[3]));
                    }
                    rel::IMPORTED_NAME => {
                        if let Some(e) = imports.get_mut(&(c[1], s(c[2]))) {
                            e.names.push((s(c[3]), s(c[4])));
                        }
                    }
                    rel::DEFINES => {
                        fi.surface.define(seg.str(c[1]));
                    }
                    rel::EXPORTS => {
                        fi.surface.export(seg.str(c[1]));
                    }
                    rel::MOD_DECL => fi.mod_decls.push((c[1], s(c[2]), s(c[3]))),
                    rel::MOD_PATH_ATTR => {
                        fi.mod_path_attr.insert(c[1]);
                    }
                    rel::CRATE_ROOT_MACRO => fi.root_macros.push(seg.str(c[2])),
                    rel::OPEN_SURFACE => fi.open.push(seg.str(c[1])),
                    rel::CFG_TEST => {
                        fi.cfg_test.insert(c[1]);
                    }
                    rel::TEST_FILE => fi.test_file = true,
                    rel::IMPORT_RECOVERED => {
                        fi.recovered.insert(c[1]);
                    }
                    rel::IMPORT_WITHIN => {
                        fi.import_within.insert(c[1], s(c[2]));
                    }
                    rel::MANIFEST => {
                        let m = manifests.entry(s(c[0])).or_default();
                        m.ecosystem = s(c[1]);
                        m.name = s(c[2]);
                    }
                    rel::DECLARES_DEPENDENCY => {
                        let m = manifests.entry(s(c[0])).or_default();
                        m.deps.insert(s(c[1]));
                        m.dep_kinds.push((s(c[1]), s(c[2])));
                    }
                    rel::MANIFEST_READS => manifests.entry(s(c[0])).or_default().reads.push((s(c[1]), s(c[2]))),
                    rel::TS_IMPORT_HELPERS => manifests.entry(s(c[0])).or_default().import_helpers = true,
                    rel::REQUIREMENT => requirements.entry(s(c[0])).or_default().deps.push((s(c[1]), c[2])),
                    rel::REQUIREMENT_INCLUDE => requirements.entry(s(c[0])).or_default().includes.push(s(c[1])),
                    rel::DEPENDENCY_PATH => manifests.entry(s(c[0])).or_default().dep_paths.push((s(c[1]), s(c[2]))),
                    rel::WORKSPACE_MEMBER => manifests.entry(s(c[0])).or_default().members.push(s(c[1])),
                    rel::IMPORT_NAME => manifests.entry(s(c[0])).or_default().import_names.push(s(c[2])),
                    rel::MANIFEST_ENTRY => manifests.entry(s(c[0])).or_default().entries.push((s(c[1]), s(c[2]))),
                    rel::TS_PATH => manifests.entry(s(c[0])).or_default().ts_paths.push((s(c[1]), s(c[2]))),
                    rel::TS_BASE_URL => manifests.entry(s(c[0])).or_default().ts_base_url = Some(s(c[1])),
                    rel::TS_EXTENDS => manifests.entry(s(c[0])).or_default().ts_extends = Some(s(c[1])),
                    rel::MANIFEST_PACKAGED => manifests.entry(s(c[0])).or_default().packaged = true,
                    rel::PACKAGE_EXPORT => {
                        manifests.entry(s(c[0])).or_default().exports.push((s(c[1]), s(c[2]), s(c[3])))
                    }
                    _ => {}
                }
            }
            if is_source {
                fi.imports = imports.into_values().collect();
                files.insert(meta.path.clone(), fi);
            }
        }
        join_manifests(&mut manifests, &requirements);
        let is_pkg_dir =
            |d: &str| files.contains_key(&child(d, "__init__.py")) || files.contains_key(&child(d, "__init__.pyi"));
        let support = support::by_name(&dirs, &is_pkg_dir);
        Repo { files, manifests, requirements, dirs, support, keep: Vec::new(), reads: surface::Reads::default() }
    }

    /// The support directory holding `path` and its role, by names alone: a directory the names
    /// make support, or a tooling script by its own name; none under a directory kept as code.
    pub fn support_of(&self, path: &str) -> Option<(String, &'static str)> {
        let found = match self.support.get(parent_dir(path)) {
            Some(s) => Some(s.clone()),
            None => {
                let name = path.rsplit('/').next().unwrap_or(path);
                support::is_tooling_file(name).then(|| (path.to_string(), "tooling"))
            }
        };
        found.filter(|_| !self.keep.iter().any(|k| under(path, k)))
    }

    pub fn is_file(&self, p: &str) -> bool {
        self.files.contains_key(p)
    }

    pub fn is_dir(&self, p: &str) -> bool {
        self.dirs.contains(p)
    }

    /// Manifests of `ecosystem` in the directory of `path` or its ancestors, nearest first.
    pub fn manifests_above<'a>(&'a self, path: &str, ecosystem: &str) -> Vec<(&'a str, &'a ManifestInfo)> {
        let dir = parent_dir(path);
        let mut out: Vec<(&str, &ManifestInfo)> = self
            .manifests
            .iter()
            .filter(|(p, m)| m.ecosystem == ecosystem && under(dir, parent_dir(p)))
            .map(|(p, m)| (p.as_str(), m))
            .collect();
        out.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        out
    }
}

/// The directory part of a repo-relative path ("" at the root).
pub(crate) fn parent_dir(p: &str) -> &str {
    match p.rfind('/') {
        Some(i) => &p[..i],
        None => "",
    }
}

/// Whether `path` is `dir` or inside it.
pub(crate) fn under(path: &str, dir: &str) -> bool {
    dir.is_empty() || path == dir || (path.starts_with(dir) && path.as_bytes().get(dir.len()) == Some(&b'/'))
}

/// How one import resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// Files in the repo (a `from pkg import a, b` may reach several), with exact confidence?
    Files(Vec<(String, bool)>),
    External(String, bool),
    /// A package (by its import name) that no manifest governing the file declares.
    Undeclared(String),
    Unresolved(String),
}

impl Target {
    /// The same target with at most heuristic confidence.
    fn downgraded(self) -> Target {
        match self {
            Target::Files(fs) => Target::Files(fs.into_iter().map(|(f, _)| (f, false)).collect()),
            Target::External(p, _) => Target::External(p, false),
            u => u,
        }
    }
}

/// Output collector.
pub(crate) struct Out {
    b: SegmentBuilder,
}

impl Out {
    pub fn push(&mut self, r: RelId, vals: &[crate::facts::Val]) {
        self.b.push(r, vals);
    }

    fn resolution(&mut self, path: &str, hook: &dyn LangResolver, imp: &Imp, t: &Target) {
        let (p, l, spec) = (path, imp.line, imp.spec.as_str());
        let conf = |exact: bool| if exact { "exact" } else { "heuristic" };
        match t {
            Target::Files(fs) => {
                let all_exact = fs.iter().all(|f| f.1);
                self.push(rel::IMPORT_RESOLUTION, &[p.into(), l.into(), spec.into(), conf(all_exact).into()]);
                for (f, exact) in fs {
                    self.push(rel::RESOLVES, &[p.into(), l.into(), f.into(), conf(*exact).into()]);
                }
            }
            Target::External(pkg, exact) => {
                self.push(rel::IMPORT_RESOLUTION, &[p.into(), l.into(), spec.into(), conf(*exact).into()]);
                self.push(rel::RESOLVES_EXTERNAL, &[p.into(), l.into(), pkg.into(), conf(*exact).into()]);
                if !hook.is_std(pkg) {
                    self.push(rel::PACKAGE_IMPORT, &[p.into(), l.into(), pkg.into()]);
                }
            }
            Target::Undeclared(pkg) => {
                self.push(rel::IMPORT_RESOLUTION, &[p.into(), l.into(), spec.into(), "unresolved".into()]);
                let why = format!("package `{pkg}` is not in the repo, the standard library or a declared dependency");
                self.push(rel::UNRESOLVED, &[p.into(), l.into(), spec.into(), (&why).into()]);
                self.push(rel::PACKAGE_IMPORT, &[p.into(), l.into(), pkg.into()]);
            }
            Target::Unresolved(why) => {
                self.push(rel::IMPORT_RESOLUTION, &[p.into(), l.into(), spec.into(), "unresolved".into()]);
                self.push(rel::UNRESOLVED, &[p.into(), l.into(), spec.into(), why.into()]);
            }
        }
    }

    pub fn missing_name(&mut self, path: &str, line: u32, name: &str, target: &str) {
        self.push(rel::MISSING_NAME, &[path.into(), line.into(), name.into(), target.into()]);
    }

    pub fn missing_module(&mut self, path: &str, line: u32, module: &str, within: &str) {
        self.push(rel::MISSING_MODULE, &[path.into(), line.into(), module.into(), within.into()]);
    }
}

/// A resolver hook (`src/resolve/<lang>.rs`): what resolution knows of the languages whose row
/// of the language table names it.
pub(crate) trait LangResolver {
    /// The module facts of the language's files.
    fn modules(&self, out: &mut Out);
    /// Where one import of the file at `path` leads.
    fn resolve(&self, path: &str, imp: &Imp, out: &mut Out) -> Target;
    /// Whether `pkg` (as `ResolvesExternal` names it) is part of the language's standard library.
    fn is_std(&self, pkg: &str) -> bool;
    /// The name a dependency its ecosystem's manifests declare is imported by.
    fn import_name(&self, dep: &str) -> String;
    /// Importable top-level packages, (name, root directory): the stages of an ecosystem whose
    /// stages are its packages ([`crate::extract::lang::StageRule::ImportablePackage`]).
    fn top_level_packages(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// Every resolver hook, built over one repo.
pub(crate) struct Resolvers<'r> {
    rust: rust::Rust<'r>,
    python: python::Python<'r>,
    typescript: typescript::Ts<'r>,
}

impl<'r> Resolvers<'r> {
    fn new(repo: &'r Repo<'r>, root_name: &str) -> Resolvers<'r> {
        Resolvers {
            python: python::Python::new(repo, root_name),
            rust: rust::Rust::new(repo),
            typescript: typescript::Ts::new(repo),
        }
    }

    /// The implementation of the hook a table row names.
    fn hook(&self, id: Resolver) -> &dyn LangResolver {
        match id {
            Resolver::Rust => &self.rust,
            Resolver::Python => &self.python,
            Resolver::TypeScript => &self.typescript,
        }
    }

    /// Every hook, in the order their module facts are written (the whole-repo segment's order).
    fn all(&self) -> [&dyn LangResolver; 3] {
        [&self.python, &self.rust, &self.typescript]
    }

    /// The hook of an ecosystem: its first language's, if a language of the table belongs to it.
    pub(crate) fn of_ecosystem(&self, ecosystem: &Ecosystem) -> Option<&dyn LangResolver> {
        ecosystem.language().map(|l| self.hook(l.resolver))
    }
}

/// How a file's new core facts change resolution's inputs: `None` when they change more than its
/// surface (imports, modules, manifests, markers…); else how its surface changed (nothing, for an
/// edit of a comment or a function body). Resolution reads the segments only through
/// [`Repo::build`], one file at a time, and a surface only through the questions the stored record
/// of reads ([`asked`]) lists: so when no file was added or removed and every changed file's
/// inputs are the same but for names no question asked about, the whole-repo segment is the same
/// too, and need not be computed again.
pub fn input_change(meta: &FileMeta, old: &Segment, new: &Segment) -> Option<SurfaceChange> {
    let one = |seg| Repo::build(std::slice::from_ref(meta), &[seg]);
    let (mut a, mut b) = (one(old), one(new));
    if a.manifests != b.manifests || a.requirements != b.requirements {
        return None;
    }
    let (fa, fb) = (a.files.get_mut(&meta.path), b.files.get_mut(&meta.path));
    match (fa, fb) {
        (None, None) => Some(SurfaceChange::default()),
        (Some(fa), Some(fb)) => {
            let (sa, sb) = (std::mem::take(&mut fa.surface), std::mem::take(&mut fb.surface));
            (fa == fb).then(|| sb.changes_from(&sa))
        }
        _ => None,
    }
}

/// The whole-repo segment, with the record of the questions its resolution asked of surfaces
/// ([`asked`]).
pub struct Resolved {
    pub global: Segment,
    pub reads: Vec<u8>,
}

/// Computes the whole-repo segment from every file's facts.
/// `root_name` is the name of the indexed directory (a package when it holds `__init__.py`).
pub fn resolve(
    metas: &[FileMeta],
    segments: &[&Segment],
    root_name: &str,
    declared: Option<&declared::DeclaredStream>,
    stage_dirs: &[String],
) -> Resolved {
    let mut repo = Repo::build(metas, segments);
    repo.keep = stage_dirs.to_vec();
    let mut out = Out { b: SegmentBuilder::new() };
    let hooks = Resolvers::new(&repo, root_name);
    for hook in hooks.all() {
        hook.modules(&mut out);
    }
    let mut edges = Vec::new();
    let globs = resolve_imports(&repo, &hooks, &mut edges, &mut out);
    match declared {
        Some(d) => stages::declared(&repo, d, &mut out),
        None => stages::stages(&repo, &hooks, root_name, &edges, &mut out),
    }
    glob_exports(&repo, &globs, &mut out);
    dependency_imports(&repo, &hooks, &mut out);
    manifest_joins(&repo, &mut out);
    drop(hooks);
    Resolved { global: out.b.finish(), reads: repo.reads.encode() }
}

/// Resolves every import of every file with its language's hook; returns the wildcard imports
/// that carry the target's public names, (importing file, target file), and adds to `edges` the
/// file each import reaches exactly, (importing file, target file), but a test-only import
/// (`cfg(test)`) of a file that is not a test file.
fn resolve_imports<'p>(
    repo: &'p Repo,
    hooks: &Resolvers,
    edges: &mut Vec<(&'p str, String)>,
    out: &mut Out,
) -> Vec<(&'p str, String)> {
    let mut globs: Vec<(&str, String)> = Vec::new();
    for (path, fi) in &repo.files {
        let Some(lang) = Language::by_name(&fi.lang) else { continue };
        let hook = hooks.hook(lang.resolver);
        for imp in &fi.imports {
            let t = hook.resolve(path, imp, out);
            let t = if fi.recovered.contains(&imp.line) { t.downgraded() } else { t };
            out.resolution(path, hook, imp, &t);
            // a test file's imports all carry `test`: whether that file is test code is the stage
            // rule's to judge; a `#[cfg(test)]` import elsewhere is test code
            if let Target::Files(fs) = &t
                && (fi.test_file || !imp.kinds.contains("test"))
            {
                edges.extend(fs.iter().filter(|(_, exact)| *exact).map(|(f, _)| (path.as_str(), f.clone())));
            }
            open_glob(path, imp, &t, lang.wildcard_import_reexports, out);
            let carries =
                imp.kinds.contains("wildcard") && (imp.kinds.contains("re_export") || lang.wildcard_import_reexports);
            if carries && let Target::Files(fs) = &t {
                for (target, _) in fs.iter().filter(|(_, exact)| *exact) {
                    globs.push((path.as_str(), target.clone()));
                }
            }
        }
    }
    globs
}

/// A glob import (`use x::*`, `from x import *`, `export * from`) of something outside the index,
/// or of a file found only heuristically, opens the importing module's surface: the names it
/// brings in are unknown (a heuristic target's names are not carried, see `resolve_imports`).
fn open_glob(path: &str, imp: &Imp, t: &Target, reexports: bool, out: &mut Out) {
    if !imp.kinds.contains("wildcard") || imp.kinds.contains("test") {
        return;
    }
    // where a glob carries names only when re-exported, a private one (Rust's
    // `use pyo3::prelude::*`) brings names into the module and its descendants alone, never onto
    // its surface (the resolver judges the descendants' absences)
    if !reexports && !imp.kinds.contains("re_export") {
        return;
    }
    let whose = match t {
        Target::Files(fs) => match fs.iter().find(|(_, exact)| !exact) {
            Some((f, _)) => format!("`{f}`, found only heuristically"),
            None => return,
        },
        Target::External(pkg, _) => format!("the external package `{pkg}`"),
        Target::Undeclared(pkg) => format!("the undeclared package `{pkg}`"),
        Target::Unresolved(_) => "an unresolved module".to_string(),
    };
    let reason = format!("glob import of `{}` (line {}) from {whose}", imp.spec, imp.line);
    out.push(rel::OPEN_SURFACE, &[path.into(), reason.as_str().into()]);
}

/// `DependencyImport`: the name each declared dependency is imported by, as the resolver of its
/// manifest's ecosystem names it (a manifest of no language's ecosystem declares none).
/// Python names compare without case (`cx_oracle` is imported as `cx_Oracle`): a dependency is
/// imported by each spelling the repository's imports give its name, too.
fn dependency_imports(repo: &Repo, hooks: &Resolvers, out: &mut Out) {
    let mut spellings: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for fi in repo.files.values().filter(|f| f.lang == crate::extract::Lang::Python.name()) {
        for imp in fi.imports.iter().filter(|i| !i.spec.starts_with('.')) {
            let top = imp.spec.split('.').next().unwrap_or("");
            if top.chars().any(|c| c.is_ascii_uppercase()) {
                spellings.entry(norm_dep(top)).or_default().insert(top);
            }
        }
    }
    for (path, m) in &repo.manifests {
        let Some(eco) = Ecosystem::by_name(&m.ecosystem) else { continue };
        let Some(hook) = hooks.of_ecosystem(eco) else { continue };
        let python = eco.language().is_some_and(|l| l.resolver == Resolver::Python);
        for dep in &m.deps {
            let import = hook.import_name(dep);
            out.push(rel::DEPENDENCY_IMPORT, &[path.into(), dep.into(), import.as_str().into()]);
            let others = spellings.get(&norm_dep(&import)).filter(|_| python).into_iter().flatten();
            for spelled in others.filter(|s| **s != import) {
                out.push(rel::DEPENDENCY_IMPORT, &[path.into(), dep.into(), (*spelled).into()]);
            }
        }
    }
}

/// `export * from`, `pub use m::*` and Python's `from m import *` put the target's public names on
/// the importing module's surface too: propagated to a fixpoint over the files involved (cycles
/// terminate), each name once per file (a work list of the names each file newly gained).
fn glob_exports(repo: &Repo, globs: &[(&str, String)], out: &mut Out) {
    let mut importers: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut surface: BTreeMap<&str, HashSet<&str>> = BTreeMap::new();
    for (from, target) in globs {
        importers.entry(target.as_str()).or_default().push(from);
        for f in [*from, target.as_str()] {
            surface.entry(f).or_insert_with(|| repo.exports_of(f));
        }
    }
    let mut work: Vec<(&str, &str)> = Vec::new();
    for target in importers.keys() {
        work.extend(surface[target].iter().filter(|n| **n != "default").map(|n| (*target, *n)));
    }
    // A name enters a file's surface once, so each pair is new when it is added.
    let mut added: Vec<(&str, &str)> = Vec::new();
    while let Some((target, name)) = work.pop() {
        for from in importers.get(target).into_iter().flatten() {
            let mine = surface.get_mut(from).expect("every glob's file has a surface");
            if mine.insert(name) {
                added.push((from, name));
                work.push((from, name));
            }
        }
    }
    added.sort_unstable();
    for (p, n) in added {
        out.push(rel::EXPORTS, &[p.into(), n.into()]);
    }
}

/// Dependency names compare equal across `-`, `_`, `.` and case (PEP 503; Cargo's `-` vs `_`).
pub(crate) fn norm_dep(name: &str) -> String {
    name.chars().map(|c| if matches!(c, '-' | '.') { '_' } else { c.to_ascii_lowercase() }).collect()
}

/// `dir/name` at the root or below.
pub(crate) fn child(dir: &str, name: &str) -> String {
    if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{Context, Lang, extract_source};

    fn core(src: &str) -> Segment {
        let mut b = crate::facts::SplitBuilder::default();
        extract_source(&mut Context::new(), Lang::Python, "pkg/m.py", src, &mut b);
        b.finish().0
    }

    #[test]
    fn an_edit_that_changes_no_resolution_input_keeps_the_whole_repo_facts() {
        let meta = FileMeta {
            path: "pkg/m.py".into(),
            kind: 0,
            lang: "python".into(),
            size: 0,
            mtime_ns: 0,
            hash: 0,
            skipped: None,
            facts: 0,
        };
        let base = "import os\nfrom pkg import a\n\ndef f(x):\n    return x\n";
        let change = |edited: &str| input_change(&meta, &core(base), &core(edited));
        let same = Some(SurfaceChange::default());
        assert_eq!(change(&format!("{base}# a comment\n")), same, "a comment at the end");
        assert_eq!(change("import os\nfrom pkg import a\n\ndef f(x):\n    y = x + 1\n    return y\n"), same, "a body");
        let g = Some(SurfaceChange { defines: vec!["g".into()], exports: vec!["g".into()], emptiness: false });
        assert_eq!(change(&format!("{base}def g():\n    pass\n")), g, "a new definition: g defined and exported");
        assert_eq!(change(&format!("# moved\n{base}")), None, "the imports moved down a line");
        assert_eq!(change("import os\nfrom pkg import b\n\ndef f(x):\n    return x\n"), None, "another import");
    }
}
