//! Python: source roots (the repo root, manifest directories, `src/` layouts, and the parent of
//! every top-level package), dotted module names, absolute and relative imports, `__init__.py`,
//! namespace packages, and imported names the target module does not bind.

use std::collections::{BTreeMap, BTreeSet};

use super::HashMap;

use super::{FileInfo, Imp, Out, Repo, Target, child, norm_dep, parent_dir, under};
use crate::extract::Lang;
use crate::facts::rel;

/// The ecosystem of Python, as the language table names it.
fn ecosystem() -> &'static str {
    Lang::Python.spec().ecosystem.name
}

pub(crate) struct Python<'a> {
    repo: &'a Repo<'a>,
    roots: BTreeSet<String>,
    /// The roots every import can reach: the repository root and the manifests' roots.
    installed_roots: BTreeSet<String>,
    /// dotted module → file (a `.py` wins over a `.pyi`)
    modules: BTreeMap<String, String>,
    /// file → (dotted module, is package `__init__`)
    module_of: HashMap<String, (String, bool)>,
    /// dotted namespace package → directory
    namespaces: BTreeMap<String, String>,
    /// When the indexed directory is itself a package (`__init__.py` at the root), its name.
    root_package: Option<String>,
    /// The indexed directory's name (names a stage of loose top-level modules).
    root_name: String,
}

/// Distributions whose import name differs from their normalised name.
const DIST_IMPORTS: &[(&str, &str)] = &[
    ("pyyaml", "yaml"),
    ("pillow", "PIL"),
    ("beautifulsoup4", "bs4"),
    ("scikit_learn", "sklearn"),
    ("python_dateutil", "dateutil"),
    ("opencv_python", "cv2"),
    ("opencv_python_headless", "cv2"),
    ("protobuf", "google"),
    ("attrs", "attr"),
    ("pyjwt", "jwt"),
    ("python_dotenv", "dotenv"),
    ("pymysql", "pymysql"),
    ("psycopg2_binary", "psycopg2"),
    ("typing_extensions", "typing_extensions"),
    ("pyzmq", "zmq"),
    ("pycryptodome", "Crypto"),
    ("setuptools", "pkg_resources"),
    ("mysqlclient", "MySQLdb"),
    ("mysql_connector_python", "mysql"),
    ("dnspython", "dns"),
    ("pyopenssl", "OpenSSL"),
];

const STDLIB: &str = include_str!("python_stdlib.txt");

/// Names every module binds (a package also binds `__path__`).
const MODULE_DUNDERS: &[&str] = &[
    "__name__",
    "__file__",
    "__doc__",
    "__path__",
    "__package__",
    "__spec__",
    "__loader__",
    "__dict__",
    "__builtins__",
];

impl<'a> Python<'a> {
    pub fn new(repo: &'a Repo<'a>, root_name: &str) -> Python<'a> {
        let py_files: Vec<&String> =
            repo.files.iter().filter(|(_, f)| f.lang == Lang::Python.name()).map(|(p, _)| p).collect();
        let is_pkg_dir = |d: &str| repo.is_file(&child(d, "__init__.py")) || repo.is_file(&child(d, "__init__.pyi"));
        let mut roots = BTreeSet::new();
        if !py_files.is_empty() {
            roots.insert(String::new());
        }
        for (p, m) in &repo.manifests {
            if m.ecosystem == ecosystem() {
                let d = parent_dir(p);
                roots.insert(d.to_string());
                let src = child(d, "src");
                if repo.is_dir(&src) {
                    roots.insert(src);
                }
            }
        }
        let mut installed_roots = roots.clone();
        // The parent of every top-level regular package is a source root.
        for f in &py_files {
            let name = f.rsplit('/').next().unwrap_or("");
            if name == "__init__.py" || name == "__init__.pyi" {
                let pkg = parent_dir(f);
                if !pkg.is_empty() {
                    let parent = parent_dir(pkg);
                    if !is_pkg_dir(parent) || parent.is_empty() && !is_pkg_dir("") {
                        roots.insert(parent.to_string());
                    }
                }
            }
        }
        // A root inside a regular package is not a root (it is that package's subpackage).
        let roots: BTreeSet<String> = roots
            .iter()
            .filter(|r| r.is_empty() || !is_pkg_dir(r) || !repo.is_dir(parent_dir(r)) || !is_pkg_dir(parent_dir(r)))
            .cloned()
            .collect();
        installed_roots.retain(|r| roots.contains(r));
        let root_package = is_pkg_dir("").then(|| root_package_name(repo, &is_pkg_dir, root_name)).flatten();
        let mut modules: BTreeMap<String, String> = BTreeMap::new();
        let mut module_of = HashMap::default();
        let mut namespaces = BTreeMap::new();
        for f in &py_files {
            let Some(root) = roots.iter().filter(|r| under(f, r)).max_by_key(|r| r.len()) else {
                continue;
            };
            let rel = if root.is_empty() { f.as_str() } else { &f[root.len() + 1..] };
            let stem = rel.trim_end_matches(".pyi").trim_end_matches(".py");
            let mut parts: Vec<&str> = stem.split('/').collect();
            let is_pkg = parts.last() == Some(&"__init__");
            if is_pkg {
                parts.pop();
            }
            if let Some(p) = root_package.as_deref().filter(|_| root.is_empty()) {
                parts.insert(0, p);
            }
            if parts.is_empty() || parts.iter().any(|p| p.is_empty() || p.contains('.') || p.contains('-')) {
                continue;
            }
            let dotted = parts.join(".");
            // a module of a support directory is importable from that directory alone: it never
            // captures an import of the code (`examples/pydantic/` is not `pydantic`)
            let scope = repo.support_of(f).map(|(d, _)| d);
            let key = match &scope {
                Some(d) => format!("{d}\u{0}{dotted}"),
                None => dotted.clone(),
            };
            // a package directory before a module file of the same name (Python's finder checks the
            // directory first), and source before a stub
            let rank = |p: &str| (p.rsplit('/').next().is_some_and(|n| n.starts_with("__init__.")), p.ends_with(".py"));
            let prefer = match modules.get(&key) {
                Some(existing) => rank(f.as_str()) > rank(existing.as_str()),
                None => true,
            };
            if prefer {
                modules.insert(key, f.to_string());
            }
            module_of.insert(f.to_string(), (dotted, is_pkg));
            // every enclosing directory without `__init__` is a namespace package
            let mut d = parent_dir(f);
            let mut k = parts.len() - usize::from(!is_pkg);
            if root.is_empty() && root_package.is_some() {
                k = k.saturating_sub(1);
            }
            while k > 0 && under(d, root) && d.len() > root.len() {
                if !is_pkg_dir(d) {
                    let ns = parts[..k].join(".");
                    let ns = match &scope {
                        Some(s) => format!("{s}\u{0}{ns}"),
                        None => ns,
                    };
                    namespaces.insert(ns, d.to_string());
                }
                d = parent_dir(d);
                k -= 1;
            }
        }
        Python {
            repo,
            roots,
            installed_roots,
            modules,
            module_of,
            namespaces,
            root_package,
            root_name: display_name(root_name),
        }
    }

    /// Top-level importable names with their directory (packages) or file's directory (modules).
    pub fn top_level_packages(&self) -> Vec<(String, String)> {
        let mut out: BTreeMap<String, String> = BTreeMap::new();
        let scoped = |key: &str| key.contains('\u{0}');
        for (dotted, (file, is_pkg)) in
            self.modules.iter().filter(|(d, _)| !scoped(d)).map(|(d, f)| (d, (f, self.module_of[f].1)))
        {
            let top = dotted.split('.').next().unwrap_or(dotted);
            let root =
                self.roots.iter().filter(|r| under(file, r)).max_by_key(|r| r.len()).cloned().unwrap_or_default();
            let dir = if root.is_empty() && self.root_package.as_deref() == Some(top) {
                String::new()
            } else {
                child(&root, top)
            };
            if dotted.contains('.') || is_pkg {
                out.entry(top.to_string()).or_insert(dir);
            } else if !file.ends_with("setup.py") && !file.ends_with("conftest.py") {
                // a top-level single-file module: a stage rooted at its own directory
                out.entry(top.to_string()).or_insert_with(|| format!("{root}\u{0}{top}"));
            }
        }
        for (dotted, dir) in &self.namespaces {
            if !dotted.contains('.') && !scoped(dotted) {
                out.entry(dotted.clone()).or_insert(dir.clone());
            }
        }
        // Loose modules share their root directory: name them after the directory's manifest.
        let mut result = Vec::new();
        let mut loose: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, dir) in out {
            match dir.split_once('\u{0}') {
                Some((root, _)) => loose.entry(root.to_string()).or_default().push(name),
                None => result.push((name, dir)),
            }
        }
        for (root, modules) in loose {
            let manifest = self.repo.manifests_above(&child(&root, "x"), ecosystem());
            // a manifest's name, else a lone module's own, else the directory's (at the root, the
            // checkout's name: whatever the clone was called, so the last resort)
            // (a manifest's name that a package of it carries is that package's: a lone module
            // beside it goes by its own)
            let taken = |n: &String| result.iter().any(|(p, _)| import_name(p) == import_name(n));
            let named = manifest.first().map(|(_, m)| m.name.clone()).filter(|n| !n.is_empty());
            let name = named.filter(|n| !taken(n) || modules.len() != 1).unwrap_or_else(|| match modules.as_slice() {
                [one] => one.clone(),
                _ if root.is_empty() => self.root_name.clone(),
                _ => root.rsplit('/').next().unwrap_or("root").to_string(),
            });
            result.push((name, root));
        }
        result
    }

    pub fn modules(&self, out: &mut Out) {
        for r in &self.roots {
            out.push(rel::SOURCE_ROOT, &[crate::extract::manifest::dir_value(r).into()]);
        }
        let mut v: Vec<(&String, &(String, bool))> = self.module_of.iter().collect();
        v.sort();
        for (f, (m, _)) in v {
            out.push(rel::MODULE, &[f.as_str().into(), m.as_str().into()]);
        }
    }

    /// The source root file `path` is imported from: the longest root holding it.
    fn root_of(&self, path: &str) -> Option<&String> {
        self.roots.iter().filter(|r| under(path, r)).max_by_key(|r| r.len())
    }

    /// Whether an import in `from` surely reaches `file`: it sits under the importer's own
    /// root, the repository root or a manifest's root. A root found only as the parent of a
    /// top-level package (a `tests/` directory) is on the path only when something puts it
    /// there, so the same name may be an installed package instead (`docs/conf.py` importing
    /// `sphinx`, with a `tests/sphinx/` in the repository).
    fn surely_reaches(&self, from: &str, file: &str) -> bool {
        match self.root_of(file) {
            Some(root) => self.installed_roots.contains(root) || self.root_of(from) == Some(root),
            None => false,
        }
    }

    /// Whether the directory of `path` holds a module named as the first part of `abs` other than
    /// `file`: run as a script (or by a test runner that puts its directory first on the path),
    /// `path` imports that one instead.
    fn sibling_shadows(&self, path: &str, abs: &str, file: &str) -> bool {
        let top = abs.split('.').next().unwrap_or(abs);
        let near = child(parent_dir(path), top);
        let there = self.repo.is_file(&format!("{near}.py")) || self.repo.is_dir(&near);
        there && !under(file, &near) && file != format!("{near}.py")
    }

    /// The file of module `abs` below the directory of `path` (`a.b` as `dir/a/b.py` or
    /// `dir/a/b/__init__.py`), if there is one.
    fn sibling_module(&self, path: &str, abs: &str) -> Option<String> {
        let base = child(parent_dir(path), &abs.replace('.', "/"));
        [format!("{base}.py"), child(&base, "__init__.py")].into_iter().find(|f| self.repo.is_file(f))
    }

    /// The file (or namespace directory) of module `dotted` as file `from` imports it: a module
    /// of `from`'s own support directory first, then one of the code.
    fn file_of(&self, from: &str, dotted: &str) -> Option<(String, bool)> {
        if let Some((scope, _)) = self.repo.support_of(from) {
            let key = format!("{scope}\u{0}{dotted}");
            if let Some(f) = self.modules.get(&key).or_else(|| self.namespaces.get(&key)) {
                return Some((f.clone(), true));
            }
        }
        if let Some(f) = self.modules.get(dotted) {
            return Some((f.clone(), true));
        }
        self.namespaces.get(dotted).map(|d| (d.clone(), true))
    }

    fn binds(&self, file: &str, name: &str) -> Binding {
        if MODULE_DUNDERS.contains(&name) {
            return Binding::Yes;
        }
        self.binds_at(file, name, 0)
    }

    /// [`Self::binds`], `depth` star imports deep (a chain longer than 8 is unknown). A star import
    /// of a repo module is followed; one from outside the index is not (`OpenSurface` says the
    /// module's surface is open, so a name missing there is a heuristic absence, not an exact one).
    fn binds_at(&self, file: &str, name: &str, depth: u32) -> Binding {
        let Some(fi) = self.repo.files.get(file) else {
            return Binding::Unknown;
        };
        // a name `__all__` lists but nothing binds is no name of the module (`from m import x` fails)
        if self.repo.defines(file, name) || imports_bind(fi, name) {
            return Binding::Yes;
        }
        let mut answer = Binding::No;
        // a star import carries a name that starts with `_` only where an `__all__` lists it, which
        // the index does not tell apart: such a name through a star is a guess either way
        let carried = !name.starts_with('_') || name.starts_with("__") && name.ends_with("__");
        if !carried && fi.imports.iter().any(|i| i.kinds.contains("wildcard")) {
            return Binding::Unknown;
        }
        for imp in fi.imports.iter().filter(|i| i.kinds.contains("wildcard")) {
            if depth >= 8 {
                return Binding::Unknown;
            }
            let mut sink = Out { b: crate::facts::SegmentBuilder::new() };
            let Target::Files(fs) = self.resolve(file, imp, &mut sink) else { continue };
            for (t, _) in fs.iter().filter(|(t, _)| t != file) {
                match self.binds_at(t, name, depth + 1) {
                    Binding::Yes => return Binding::Yes,
                    Binding::Unknown => answer = Binding::Unknown,
                    Binding::No => {}
                }
            }
        }
        answer
    }

    pub fn resolve(&self, path: &str, imp: &Imp, out: &mut Out) -> Target {
        if imp.spec == "<dynamic>" {
            return Target::Unresolved("dynamic import of a computed name".into());
        }
        let abs = if imp.spec.starts_with('.') {
            let Some((me, is_pkg)) = self.module_of.get(path) else {
                return Target::Unresolved("relative import in a file outside every source root".into());
            };
            let dots = imp.spec.chars().take_while(|c| *c == '.').count();
            let rest = &imp.spec[dots..];
            let mut base: Vec<&str> = me.split('.').collect();
            if !is_pkg {
                base.pop();
            }
            for _ in 1..dots {
                if base.pop().is_none() {
                    return Target::Unresolved("relative import goes above the top-level package".into());
                }
            }
            let mut parts = base;
            if !rest.is_empty() {
                parts.extend(rest.split('.'));
            }
            parts.join(".")
        } else {
            imp.spec.clone()
        };
        // `import a.b as m` binds the module itself (its name is `*`), as `import a.b` does
        let is_from = imp.names.iter().any(|(n, _)| n != "*") || imp.kinds.contains("wildcard");
        if !abs.is_empty()
            && let Some((file, _)) = self.file_of(path, &abs)
        {
            // run as a script (or by a test runner that puts its directory first on the path), a
            // file imports the module beside it before one of a source root: a guess either way
            let shadowed = !imp.spec.starts_with('.') && self.sibling_shadows(path, &abs, &file);
            let file = if shadowed { self.sibling_module(path, &abs).unwrap_or(file) } else { file };
            let sure = imp.spec.starts_with('.') || self.surely_reaches(path, &file) && !shadowed;
            if !is_from || imp.kinds.contains("wildcard") {
                return Target::Files(vec![(file, sure)]);
            }
            // `from pkg import a, b`: a submodule, or a name the module binds
            let mut targets = Vec::new();
            for (name, _) in &imp.names {
                if let Some((sub, _)) = self.file_of(path, &format!("{abs}.{name}")) {
                    targets.push((sub, sure));
                    continue;
                }
                match self.binds(&file, name) {
                    Binding::Yes => targets.push((file.clone(), sure)),
                    Binding::Unknown => targets.push((file.clone(), false)),
                    Binding::No => {
                        // an empty package's names can only be submodules: one the index cannot
                        // read (a compiled `.pyx`/`.so` extension) makes the absence a guess
                        let bare = file.ends_with("__init__.py")
                            && self.repo.surface_empty(&file)
                            && self.repo.files.get(&file).is_some_and(|fi| fi.imports.is_empty());
                        out.missing_name(path, imp.line, name, &file);
                        targets.push((file.clone(), sure && !bare));
                    }
                }
            }
            targets.sort();
            targets.dedup();
            return Target::Files(targets);
        }
        // a dynamic import names its module at run time (`import_module(".x", package)` is relative
        // to `package`), and an optional one says it may be missing
        let judged = !imp.kinds.contains("dynamic") && !imp.kinds.contains("optional");
        if imp.spec.starts_with('.') {
            // the package is the importer's own: the module it names is not in it
            if let Some((pkg, _)) = abs.rsplit_once('.').and_then(|(p, _)| self.file_of(path, p)).filter(|_| judged) {
                out.missing_module(path, imp.line, &abs, &pkg);
            }
            return Target::Unresolved(format!("no module `{abs}` in the repo"));
        }
        // Longest prefix that is a module: `import a.b.c` where only `a.b` exists.
        let parts: Vec<&str> = abs.split('.').collect();
        for k in (1..parts.len()).rev() {
            if let Some((file, _)) = self.file_of(path, &parts[..k].join(".")) {
                // a regular package of the repo, reached surely, holds no such submodule
                if judged && file.ends_with("__init__.py") && self.surely_reaches(path, &file) {
                    out.missing_module(path, imp.line, &abs, &file);
                }
                return Target::Files(vec![(file, false)]);
            }
        }
        let top = parts[0];
        if STDLIB.lines().any(|l| l == top) {
            return Target::External(top.to_string(), true);
        }
        let provides = |dist: &str| {
            let d = norm_dep(dist);
            d == norm_dep(top) || DIST_IMPORTS.iter().any(|(k, imp)| *k == d && *imp == top) || import_name(dist) == top
        };
        let declared = self
            .repo
            .manifests
            .iter()
            .filter(|(p, m)| m.ecosystem == ecosystem() && under(path, parent_dir(p)))
            .any(|(_, m)| m.deps.iter().any(|d| provides(d)));
        if declared {
            return Target::External(top.to_string(), true);
        }
        let any_declared = self
            .repo
            .manifests
            .values()
            .filter(|m| m.ecosystem == ecosystem())
            .any(|m| m.deps.iter().any(|d| provides(d)));
        if any_declared {
            return Target::External(top.to_string(), false);
        }
        Target::Undeclared(top.to_string())
    }
}

/// The import name of an indexed directory that is itself a package: the name its own absolute
/// imports give it (`django.db.models` in a copy named anything, where `db/` is a subpackage of
/// the root), else the directory's name when that is an identifier.
fn root_package_name(repo: &Repo, is_pkg_dir: &dyn Fn(&str) -> bool, dir_name: &str) -> Option<String> {
    let valid = |n: &str| {
        !n.is_empty()
            && !n.starts_with(|c: char| c.is_ascii_digit())
            && n.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    let below = |sub: &str| valid(sub) && (is_pkg_dir(sub) || repo.is_file(&format!("{sub}.py")));
    let mut score: BTreeMap<&str, usize> = BTreeMap::new();
    for fi in repo.files.values().filter(|f| f.lang == Lang::Python.name()) {
        for imp in fi.imports.iter().filter(|i| !i.spec.starts_with('.')) {
            let mut parts = imp.spec.split('.');
            let top = parts.next().unwrap_or("");
            let hit = match parts.next() {
                Some(sub) => below(sub),
                None => imp.names.iter().any(|(n, _)| below(n)),
            };
            if hit && valid(top) && !is_stdlib(top) {
                *score.entry(top).or_default() += 1;
            }
        }
    }
    let own = score.get(dir_name).copied().unwrap_or(0);
    let best = score.iter().max_by_key(|(name, n)| (**n, std::cmp::Reverse(**name)));
    match best {
        Some((name, n)) if *n >= 3 && *n > own => Some(name.to_string()),
        _ => valid(dir_name).then(|| dir_name.to_string()),
    }
}

/// Whether `top` is a standard-library module.
pub(crate) fn is_stdlib(top: &str) -> bool {
    STDLIB.lines().any(|l| l == top)
}

/// The top-level name a distribution is imported as.
pub(crate) fn import_name(dist: &str) -> String {
    let d = norm_dep(dist);
    if let Some((_, i)) = DIST_IMPORTS.iter().find(|(k, _)| *k == d) {
        return i.to_string();
    }
    // a dotted name (`zope.interface`, `backports.zoneinfo`, `discord.py`) is imported by its first
    match dist.split_once('.') {
        Some((first, _)) if !first.is_empty() => norm_dep(first),
        _ => d,
    }
}

enum Binding {
    Yes,
    No,
    Unknown,
}

fn imports_bind(fi: &FileInfo, name: &str) -> bool {
    fi.imports.iter().any(|i| {
        i.names.iter().any(|(_, alias)| alias == name) || (i.names.is_empty() && i.spec.split('.').next() == Some(name))
    })
}

/// A stage name for the repository root: its directory name, or `root` when it has none.
pub(crate) fn display_name(root_name: &str) -> String {
    if root_name.is_empty() { "root".to_string() } else { root_name.to_string() }
}

/// The resolver hook of Python.
impl super::LangResolver for Python<'_> {
    fn modules(&self, out: &mut Out) {
        Python::modules(self, out)
    }
    fn resolve(&self, path: &str, imp: &Imp, out: &mut Out) -> Target {
        Python::resolve(self, path, imp, out)
    }
    fn is_std(&self, pkg: &str) -> bool {
        is_stdlib(pkg)
    }
    fn import_name(&self, dep: &str) -> String {
        import_name(dep)
    }
    fn top_level_packages(&self) -> Vec<(String, String)> {
        Python::top_level_packages(self)
    }
}
