//! Rust: crate roots from `Cargo.toml` (lib, bins, build script, `src/bin`, `tests`, `examples`,
//! `benches`), the module tree through out-of-line `mod` declarations (`a.rs` or `a/mod.rs`),
//! `crate::`/`self::`/`super::` paths, 2018 uniform paths, workspace crates and declared
//! dependencies, `pub use` re-export chains and glob imports into the repo, and the macros a crate's
//! root defines (`CrateRootMacro`). `#[path]` attributes are not followed (such imports resolve with
//! `heuristic` confidence). A name missing from its module is a `MissingName` on an exact
//! resolution; whether that absence is sound is the rules' to say (`OpenSurface`).

use std::collections::BTreeMap;

use super::HashMap;

use super::{Imp, Out, Repo, Target, child, norm_dep, parent_dir, under};
use crate::extract::Lang;
use crate::facts::rel;

/// The ecosystem of Rust, as the language table names it.
fn ecosystem() -> &'static str {
    Lang::Rust.spec().ecosystem.name
}

struct Krate {
    manifest: String,
    root_dir: String,
    import_name: String,
    deps: Vec<String>,
}

/// One compilation unit: a crate's library, or one of its binaries, build script, tests,
/// examples or benches. Each has its own `crate::` root.
struct Unit {
    krate: usize,
}

pub(crate) struct Rust<'a> {
    repo: &'a Repo<'a>,
    crates: Vec<Krate>,
    units: Vec<Unit>,
    /// per crate, its library unit
    lib_unit: Vec<Option<usize>>,
    /// (unit, module path like `crate::a::b`) → file
    modules: HashMap<(usize, String), String>,
    /// file → (unit, module path, exact: reached through the mod tree); a file shared by several
    /// units belongs to the first (the library comes first)
    module_of: BTreeMap<String, (usize, String, bool)>,
    /// files reached only through `#[cfg(test)] mod x;` declarations
    test_only: BTreeMap<String, ()>,
    /// (file, name) → where `find_item` found it
    found: std::cell::RefCell<HashMap<(String, String), Found>>,
    /// per crate, the macros its root defines wherever they are written (`CrateRootMacro`)
    root_macros: Vec<super::HashSet<&'a str>>,
    /// file → the repo files its glob imports reach, with whether exactly
    globs: std::cell::RefCell<HashMap<String, Vec<(String, bool)>>>,
    /// the (file, name) pairs `find_item` is looking up, outermost first
    looking: std::cell::RefCell<Vec<(String, String)>>,
    /// the outermost position in `looking` that a cycle led back to (`usize::MAX`: none)
    cycle_to: std::cell::Cell<usize>,
}

/// Where an item was found: its file, and whether that is exact.
type Found = Option<(String, bool)>;

pub(crate) const BUILTIN_CRATES: &[&str] = &["std", "core", "alloc", "proc_macro", "test"];

impl<'a> Rust<'a> {
    pub fn new(repo: &'a Repo<'a>) -> Rust<'a> {
        let mut crates = Vec::new();
        for (p, m) in &repo.manifests {
            if m.ecosystem != ecosystem() || m.name.is_empty() {
                continue;
            }
            let import_name = m.import_names.first().cloned().unwrap_or_else(|| m.name.replace('-', "_"));
            crates.push(Krate {
                manifest: p.clone(),
                root_dir: parent_dir(p).to_string(),
                import_name,
                deps: m.deps.iter().map(|d| norm_dep(d)).collect(),
            });
        }
        let mut r = Rust {
            repo,
            crates,
            units: Vec::new(),
            lib_unit: Vec::new(),
            modules: HashMap::default(),
            module_of: BTreeMap::new(),
            test_only: BTreeMap::new(),
            found: Default::default(),
            root_macros: Vec::new(),
            globs: Default::default(),
            looking: Default::default(),
            cycle_to: std::cell::Cell::new(usize::MAX),
        };
        for ci in 0..r.crates.len() {
            let lib = r.lib_root(ci);
            let mut roots = r.crate_roots(ci);
            // the library first, so files it shares with other targets are named from it
            roots.sort_by_key(|root| Some(root) != lib.as_ref());
            r.lib_unit.push(None);
            for root in roots {
                let u = r.units.len();
                r.units.push(Unit { krate: ci });
                if Some(&root) == lib.as_ref() {
                    r.lib_unit[ci] = Some(u);
                }
                r.walk_mod_tree(u, &root, "crate".to_string(), false, true);
            }
        }
        // Files the mod tree does not reach get a module name from their path (heuristic).
        let rust_files: Vec<String> =
            repo.files.iter().filter(|(_, f)| f.lang == Lang::Rust.name()).map(|(p, _)| p.clone()).collect();
        for f in rust_files {
            if r.module_of.contains_key(&f) {
                continue;
            }
            let Some(ci) = r.crate_of(&f) else { continue };
            let unit = match r.lib_unit[ci] {
                Some(u) => u,
                None => {
                    r.units.push(Unit { krate: ci });
                    r.units.len() - 1
                }
            };
            let rel = f[r.crates[ci].root_dir.len()..].trim_start_matches('/');
            let rel = rel.strip_prefix("src/").unwrap_or(rel);
            let stem = rel.trim_end_matches(".rs").trim_end_matches("/mod");
            let m = format!("crate::{}", stem.replace('/', "::"));
            r.module_of.insert(f.clone(), (unit, m.clone(), false));
            r.modules.entry((unit, m)).or_insert(f);
        }
        r.root_macros = r.crate_root_macros();
        r
    }

    /// Per crate, the macros its root defines: `#[macro_export]` macros in any of its files and
    /// its proc macros.
    fn crate_root_macros(&self) -> Vec<super::HashSet<&'a str>> {
        let mut out = vec![super::HashSet::default(); self.crates.len()];
        for (f, fi) in &self.repo.files {
            if fi.root_macros.is_empty() {
                continue;
            }
            if let Some(ci) = self.crate_of(f) {
                out[ci].extend(fi.root_macros.iter().copied());
            }
        }
        out
    }

    /// Whether `file` is the root of its crate's library and that root defines the macro `name`.
    fn root_macro(&self, file: &str, name: &str) -> bool {
        let Some(ci) = self.crate_of(file) else { return false };
        let is_root =
            self.lib_unit[ci].is_some_and(|u| self.modules.get(&(u, "crate".to_string())).is_some_and(|f| f == file));
        is_root && self.root_macros[ci].contains(name)
    }

    /// Whether module file `file` `include!`s text the index does not hold: no name can be shown
    /// missing there.
    fn includes_unseen(&self, file: &str) -> bool {
        self.repo.files.get(file).is_some_and(|f| f.open.iter().any(|r| r.starts_with("`include!`")))
    }

    fn crate_of(&self, file: &str) -> Option<usize> {
        self.crates
            .iter()
            .enumerate()
            .filter(|(_, k)| under(file, &k.root_dir))
            .max_by_key(|(_, k)| k.root_dir.len())
            .map(|(i, _)| i)
    }

    /// The library root of crate `ci`, if it has one.
    fn lib_root(&self, ci: usize) -> Option<String> {
        let k = &self.crates[ci];
        let m = &self.repo.manifests[&k.manifest];
        let explicit = m.entries.iter().find(|(kind, _)| kind == "lib").map(|(_, p)| p.clone());
        explicit.or_else(|| Some(child(&k.root_dir, "src/lib.rs"))).filter(|p| self.repo.is_file(p))
    }

    /// The crate root files of crate `ci` that exist.
    fn crate_roots(&self, ci: usize) -> Vec<String> {
        let k = &self.crates[ci];
        let m = &self.repo.manifests[&k.manifest];
        let mut roots: Vec<String> = m
            .entries
            .iter()
            .filter(|(kind, _)| matches!(kind.as_str(), "lib" | "bin" | "build" | "test" | "bench" | "example"))
            .map(|(_, p)| p.clone())
            .collect();
        for implicit in ["src/lib.rs", "src/main.rs", "build.rs"] {
            roots.push(child(&k.root_dir, implicit));
        }
        for dir in ["src/bin", "tests", "examples", "benches"] {
            let d = child(&k.root_dir, dir);
            for (f, fi) in self.repo.files.range(d.clone()..) {
                if !f.starts_with(&d) {
                    break;
                }
                if fi.lang != Lang::Rust.name() || !under(f, &d) {
                    continue;
                }
                let rest = &f[d.len() + 1..];
                // `tests/a.rs` or `tests/a/main.rs` is a root; deeper files are its modules
                if !rest.contains('/') || rest.ends_with("/main.rs") && rest.matches('/').count() == 1 {
                    roots.push(f.clone());
                }
            }
        }
        roots.retain(|r| self.repo.is_file(r));
        roots.sort();
        roots.dedup();
        roots
    }

    /// Out-of-line modules always live below their parent's directory, so the walk terminates.
    /// `exact`: no `mod` on the way here carries a `path` attribute (its file is then a guess).
    fn walk_mod_tree(&mut self, unit: usize, file: &str, module: String, test_only: bool, exact: bool) {
        if self.modules.get(&(unit, module.clone())).is_some_and(|f| f == file) {
            return;
        }
        if test_only {
            self.test_only.insert(file.to_string(), ());
        }
        self.module_of.entry(file.to_string()).or_insert((unit, module.clone(), exact));
        self.modules.entry((unit, module.clone())).or_insert_with(|| file.to_string());
        let name = file.rsplit('/').next().unwrap_or(file);
        let is_dir_owner = module == "crate" || name == "mod.rs";
        let base_dir =
            if is_dir_owner { parent_dir(file).to_string() } else { file.trim_end_matches(".rs").to_string() };
        let decls = self.repo.files.get(file).map(|f| f.mod_decls.clone()).unwrap_or_default();
        let cfg_test = self.repo.files.get(file).map(|f| f.cfg_test.clone()).unwrap_or_default();
        let path_attr = self.repo.files.get(file).map(|f| f.mod_path_attr.clone()).unwrap_or_default();
        for (line, m, within) in decls {
            let child_test = test_only || cfg_test.contains(&line);
            let mut dir = base_dir.clone();
            let mut modpath = module.clone();
            for w in within.split("::").filter(|w| !w.is_empty()) {
                dir = child(&dir, w);
                modpath = format!("{modpath}::{w}");
            }
            let a = child(&dir, &format!("{m}.rs"));
            let b = child(&child(&dir, &m), "mod.rs");
            let target = if self.repo.is_file(&a) {
                a
            } else if self.repo.is_file(&b) {
                b
            } else {
                continue;
            };
            self.walk_mod_tree(
                unit,
                &target,
                format!("{modpath}::{m}"),
                child_test,
                exact && !path_attr.contains(&line),
            );
        }
    }

    pub fn modules(&self, out: &mut Out) {
        for (f, (_, m, _)) in &self.module_of {
            out.push(rel::MODULE, &[f.as_str().into(), m.as_str().into()]);
        }
        // Files compiled only for tests: their imports are test edges too.
        for f in self.test_only.keys() {
            let Some(fi) = self.repo.files.get(f) else { continue };
            if fi.test_file {
                continue;
            }
            out.push(rel::TEST_FILE, &[f.as_str().into()]);
            for imp in &fi.imports {
                if !imp.kinds.contains("test") {
                    out.push(
                        rel::IMPORT,
                        &[f.as_str().into(), imp.line.into(), imp.spec.as_str().into(), "test".into()],
                    );
                }
            }
        }
    }

    pub fn resolve(&self, path: &str, imp: &Imp, out: &mut Out) -> Target {
        let t = self.resolve_in(path, imp, out, 0);
        // `self::`/`super::`/`crate::` from a file whose place in the module tree (and so its
        // crate) is a guess: a file no `mod` reaches, or one reached through a `path` attribute
        let relative = ["self::", "super::", "crate::"].iter().any(|p| imp.spec.starts_with(p));
        if relative && self.module_of.get(path).is_some_and(|(_, _, exact)| !exact) { t.downgraded() } else { t }
    }

    /// `depth` counts nested resolutions through `pub use` chains, which stop after 8.
    fn resolve_in(&self, path: &str, imp: &Imp, out: &mut Out, depth: u32) -> Target {
        let segs: Vec<&str> = imp.spec.trim_start_matches("::").split("::").filter(|s| !s.is_empty()).collect();
        let Some(&first) = segs.first() else {
            return Target::Unresolved("empty path".into());
        };
        let Some((unit, me, _)) = self.module_of.get(path).cloned() else {
            if BUILTIN_CRATES.contains(&first) {
                return Target::External(first.to_string(), true);
            }
            return Target::Unresolved("file is in no Cargo crate".into());
        };

        // `self::`/`super::` inside inline `mod x { … }` blocks first climb those blocks.
        let inline = self
            .repo
            .files
            .get(path)
            .and_then(|f| f.import_within.get(&imp.line))
            .map(|w| w.split("::").count())
            .unwrap_or(0);
        if inline > 0 && (first == "self" || first == "super") {
            let supers = segs.iter().take_while(|s| **s == "super").count();
            if first == "self" || supers <= inline {
                let rest_start = if first == "self" { 1 } else { supers };
                let exact = match segs.get(rest_start) {
                    None => true,
                    Some(n) => self.repo.defines(path, n),
                };
                return Target::Files(vec![(path.to_string(), exact)]);
            }
            let mut adjusted: Vec<&str> = vec!["super"; supers - inline];
            adjusted.extend(&segs[supers..]);
            let fake = Imp { line: imp.line, spec: adjusted.join("::"), kinds: imp.kinds.clone(), names: Vec::new() };
            return self.resolve_outside(path, &fake, unit, &me, out, depth);
        }
        self.resolve_outside(path, imp, unit, &me, out, depth)
    }

    fn resolve_outside(&self, path: &str, imp: &Imp, unit: usize, me: &str, out: &mut Out, depth: u32) -> Target {
        let me = me.to_string();
        let segs: Vec<&str> = imp.spec.trim_start_matches("::").split("::").filter(|s| !s.is_empty()).collect();
        let Some(&first) = segs.first() else {
            return Target::Unresolved("empty path".into());
        };
        let ci = self.units[unit].krate;
        let k = &self.crates[ci];
        // `extern crate x as first;` in the file or at the crate root: the path is in crate `x`
        if !matches!(first, "crate" | "self" | "super")
            && depth < 8
            && !self.modules.contains_key(&(unit, format!("{me}::{first}")))
            && let Some(krate) = self.unit_extern(unit, path, first).filter(|k| *k != first)
        {
            let spec = std::iter::once(krate).chain(segs[1..].iter().copied()).collect::<Vec<_>>().join("::");
            let through = Imp { line: imp.line, spec, kinds: imp.kinds.clone(), names: imp.names.clone() };
            return self.resolve_outside(path, &through, unit, &me, out, depth + 1);
        }
        let (unit_idx, mut module, rest): (usize, String, &[&str]) = match first {
            "crate" => (unit, "crate".into(), &segs[1..]),
            "self" => (unit, me.clone(), &segs[1..]),
            "super" => {
                let mut m = me.clone();
                let mut i = 0;
                while segs.get(i) == Some(&"super") {
                    match m.rfind("::") {
                        Some(p) => m.truncate(p),
                        None => return Target::Unresolved("`super` above the crate root".into()),
                    }
                    i += 1;
                }
                (unit, m, &segs[i..])
            }
            _ if self.modules.contains_key(&(unit, format!("{me}::{first}"))) => (unit, me.clone(), &segs[..]),
            _ if BUILTIN_CRATES.contains(&first) => {
                return Target::External(first.to_string(), true);
            }
            _ => {
                // another workspace crate, this crate's own lib (from tests/, examples/, bins), or a dependency
                let norm = norm_dep(first);
                let own = first == k.import_name;
                // another crate is reached only as a declared dependency (by its package name or
                // its library name) or an `extern crate`
                let declared = |c: &Krate| {
                    let package = self.repo.manifests.get(&c.manifest).map(|m| norm_dep(&m.name)).unwrap_or_default();
                    k.deps.contains(&norm) || k.deps.contains(&package) || self.unit_extern(unit, path, first).is_some()
                };
                let other =
                    self.crates.iter().position(|c| c.import_name == first && c.manifest != k.manifest && declared(c));
                let target_crate = if own { Some(ci) } else { other };
                match target_crate.map(|c| (c, self.lib_unit[c])) {
                    Some((_, Some(lib))) => (lib, "crate".into(), &segs[1..]),
                    Some((c, None)) => {
                        let name = &self.crates[c].import_name;
                        return Target::Unresolved(format!("crate `{name}` has no library target"));
                    }
                    _ if k.deps.contains(&norm) => {
                        return Target::External(first.to_string(), true);
                    }
                    _ => {
                        if self.repo.defines(path, first) {
                            // `use Enum::Variant` or a local item path
                            return Target::Files(vec![(path.to_string(), false)]);
                        }
                        if self
                            .repo
                            .files
                            .get(path)
                            .is_some_and(|fi| fi.imports.iter().any(|i| i.names.iter().any(|(_, a)| a == first)))
                        {
                            // a path through a name imported by another `use` (e.g. `use a::b; use b::C;` inside functions)
                            return Target::Files(vec![(path.to_string(), false)]);
                        }
                        return Target::Unresolved(format!("no module, crate or declared dependency named `{first}`"));
                    }
                }
            }
        };
        // Walk the module tree as far as it goes.
        let mut i = 0;
        while i < rest.len() && self.modules.contains_key(&(unit_idx, format!("{module}::{}", rest[i]))) {
            module = format!("{module}::{}", rest[i]);
            i += 1;
        }
        let Some(file) = self.modules.get(&(unit_idx, module.clone())) else {
            return Target::Unresolved(format!("no root file for `{module}`"));
        };
        let remaining = &rest[i..];
        if remaining.is_empty() || imp.kinds.contains("wildcard") && remaining.is_empty() {
            return Target::Files(vec![(file.clone(), true)]);
        }
        let name = remaining[0];
        // `extern crate x as name;` there: the rest of the path is in crate `x`
        if let Some(krate) = self.extern_crate(file, name)
            && let Some((funit, fme, _)) = self.module_of.get(file.as_str()).cloned()
            && depth < 8
        {
            let spec = std::iter::once(krate).chain(remaining[1..].iter().copied()).collect::<Vec<_>>().join("::");
            let through = Imp { line: imp.line, spec, kinds: imp.kinds.clone(), names: imp.names.clone() };
            return self.resolve_outside(path, &through, funit, &fme, out, depth + 1);
        }
        if imp.kinds.contains("wildcard") {
            return self.item_glob(path, imp, file, name, depth, out);
        }
        match self.find_item(file, name, depth) {
            Some((f, exact)) => Target::Files(vec![(f, exact)]),
            None if self.includes_unseen(file) => Target::Files(vec![(file.clone(), false)]),
            None => {
                // Not defined, imported, re-exported or brought in by a glob there: the module is
                // certain, the name missing. Whether that absence is sound is the rules' to say
                // (`OpenSurface`: an item-level macro or a glob from outside may still define it).
                // a private glob there brings names only its own descendants see: for them the
                // absence is a guess, for every other module it is certain
                let seen_by_glob = self.descends(path, file)
                    && self.repo.files.get(file.as_str()).is_some_and(|fi| {
                        fi.imports.iter().any(|i| i.kinds.contains("wildcard") && !i.kinds.contains("re_export"))
                    });
                // a module file reached through a `path` attribute may be another file
                let certain = self.module_of.get(file.as_str()).is_none_or(|(_, _, exact)| *exact);
                out.missing_name(path, imp.line, name, file);
                Target::Files(vec![(file.clone(), !seen_by_glob && certain)])
            }
        }
    }

    /// Whether the module of `path` is the module of `file` or inside it.
    fn descends(&self, path: &str, file: &str) -> bool {
        match (self.module_of.get(path), self.module_of.get(file)) {
            (Some((u1, m1, _)), Some((u2, m2, _))) => {
                u1 == u2 && (m1 == m2 || m1.starts_with(m2.as_str()) && m1[m2.len()..].starts_with("::"))
            }
            _ => false,
        }
    }

    /// The crate `extern crate <crate> [as name];` in `path` or at the root of `unit` binds to `name`.
    fn unit_extern(&self, unit: usize, path: &str, name: &str) -> Option<&'a str> {
        let root = self.modules.get(&(unit, "crate".to_string()));
        [Some(path), root.map(String::as_str)].into_iter().flatten().find_map(|f| self.extern_crate(f, name))
    }

    /// The crate `extern crate <crate> as name;` (or `extern crate name;`) in `file` names.
    fn extern_crate(&self, file: &str, name: &str) -> Option<&'a str> {
        let fi = self.repo.files.get(file)?;
        fi.imports
            .iter()
            .find(|i| !i.spec.contains("::") && i.names.iter().any(|(n, a)| n == "*" && a == name))
            // `extern crate self as name;` names the crate itself
            .map(|i| if i.spec == "self" { "crate" } else { i.spec.as_str() })
    }

    /// `use m::Item::*`: the glob takes the members of an item (an enum's variants), which the
    /// index does not list, so its target is at most heuristic (and the importing module's surface
    /// open); an item that is not there is a missing name too.
    fn item_glob(&self, path: &str, imp: &Imp, file: &str, name: &str, depth: u32, out: &mut Out) -> Target {
        match self.find_item(file, name, depth) {
            Some((f, _)) => Target::Files(vec![(f, false)]),
            None => {
                out.missing_name(path, imp.line, name, file);
                Target::Files(vec![(file.to_string(), false)])
            }
        }
    }

    /// The file that defines `name` visible from module file `file`, following `pub use` chains
    /// and globs (at most 8 deep). A cycle (`pub use a::*;` in a module whose `a` has
    /// `use super::*;`) adds nothing: the pair it leads back to is still looking, and finds the
    /// name elsewhere or not at all (unless a module on the cycle has an open surface: then the
    /// name is unknown, as at the depth limit). A result found while such an outer pair is still
    /// looking is not final, so it is not kept.
    fn find_item(&self, file: &str, name: &str, depth: u32) -> Option<(String, bool)> {
        let key = (file.to_string(), name.to_string());
        if let Some(hit) = self.found.borrow().get(&key) {
            return hit.clone();
        }
        let cycle = self.looking.borrow().iter().position(|k| *k == key);
        if let Some(at) = cycle {
            // through a module whose surface is open, the cycle may carry names the index cannot see
            let open = self.looking.borrow()[at..]
                .iter()
                .any(|(f, _)| self.repo.files.get(f).is_some_and(|fi| !fi.open.is_empty()));
            if open {
                return Some((file.to_string(), false));
            }
            self.cycle_to.set(self.cycle_to.get().min(at));
            return None;
        }
        let me = self.looking.borrow().len();
        self.looking.borrow_mut().push(key.clone());
        let result = self.find_item_uncached(file, name, depth);
        self.looking.borrow_mut().pop();
        if self.cycle_to.get() == me {
            self.cycle_to.set(usize::MAX);
        }
        if self.cycle_to.get() > me {
            self.found.borrow_mut().insert(key, result.clone());
        }
        result
    }

    fn find_item_uncached(&self, file: &str, name: &str, depth: u32) -> Option<(String, bool)> {
        let fi = self.repo.files.get(file)?;
        if self.repo.defines(file, name) || self.root_macro(file, name) {
            Some((file.to_string(), true))
        } else if depth > 8 {
            Some((file.to_string(), false)) // too long a chain to follow: unknown, not missing
        } else {
            let via = fi.imports.iter().find(|imp| imp.names.iter().any(|(_, a)| a == name));
            let found = via.map(|imp| {
                let fake = Imp { line: imp.line, spec: imp.spec.clone(), kinds: imp.kinds.clone(), names: Vec::new() };
                let mut sink = Out { b: crate::facts::SegmentBuilder::new() };
                match self.resolve_in(file, &fake, &mut sink, depth + 1) {
                    Target::Files(fs) => match fs.into_iter().next() {
                        // A re-export from another crate: the name is part of this crate's
                        // surface, and the importer depends on this crate, not the one behind it.
                        Some((t, _)) if t != file && self.crate_of(&t) != self.crate_of(file) => {
                            (file.to_string(), imp.kinds.contains("re_export"))
                        }
                        Some((t, _)) if t != file => {
                            let last = imp.spec.rsplit("::").next().unwrap_or(name);
                            self.find_item(&t, last, depth + 1).unwrap_or((t, false))
                        }
                        _ => (file.to_string(), false),
                    },
                    _ => (file.to_string(), false),
                }
            });
            found.or_else(|| self.find_through_globs(file, name, depth))
        }
    }

    /// `name` brought into module file `file` by one of its glob imports (`use a::*`): the file
    /// that defines it, if a glob into the repo reaches one; a glob from outside the index is not
    /// followed (its module's surface is open instead).
    fn find_through_globs(&self, file: &str, name: &str, depth: u32) -> Found {
        for (t, exact) in self.glob_targets(file, depth) {
            if let Some((f, e)) = self.find_item(&t, name, depth + 1) {
                return Some((f, e && exact));
            }
        }
        None
    }

    /// The repo files the glob imports of module file `file` reach (resolved once per file).
    fn glob_targets(&self, file: &str, depth: u32) -> Vec<(String, bool)> {
        if let Some(hit) = self.globs.borrow().get(file) {
            return hit.clone();
        }
        let mut out = Vec::new();
        let imports = self.repo.files.get(file).map(|fi| fi.imports.as_slice()).unwrap_or_default();
        for imp in imports.iter().filter(|i| i.kinds.contains("wildcard")) {
            let fake = Imp { line: imp.line, spec: imp.spec.clone(), kinds: imp.kinds.clone(), names: Vec::new() };
            let mut sink = Out { b: crate::facts::SegmentBuilder::new() };
            if let Target::Files(fs) = self.resolve_in(file, &fake, &mut sink, depth + 1) {
                out.extend(fs.into_iter().filter(|(t, _)| t != file));
            }
        }
        self.globs.borrow_mut().insert(file.to_string(), out.clone());
        out
    }
}

/// The resolver hook of Rust.
impl super::LangResolver for Rust<'_> {
    fn modules(&self, out: &mut Out) {
        Rust::modules(self, out)
    }
    fn resolve(&self, path: &str, imp: &Imp, out: &mut Out) -> Target {
        Rust::resolve(self, path, imp, out)
    }
    fn is_std(&self, pkg: &str) -> bool {
        BUILTIN_CRATES.contains(&pkg)
    }
    /// A crate is imported by its name with `-` as `_`.
    fn import_name(&self, dep: &str) -> String {
        dep.replace('-', "_")
    }
}
