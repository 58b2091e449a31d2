//! TypeScript/JavaScript: relative specifiers with extension and `index` resolution (including the
//! ESM habit of writing `./a.js` for `./a.ts`), tsconfig `paths`/`baseUrl` (nearest tsconfig,
//! following a relative `extends`), workspace package names through their manifest entries,
//! Node built-ins, declared dependencies, and `export … from` chains for imported names.

use super::{Imp, Out, Repo, Target, child, parent_dir};
use crate::extract::lang::{Lang, Language, Resolver};
use crate::extract::manifest::join;
use crate::facts::rel;

/// The ecosystem of the languages this resolver serves, as the language table names it.
fn ecosystem() -> &'static str {
    Lang::TypeScript.spec().ecosystem.name
}

pub(crate) struct Ts<'a> {
    repo: &'a Repo<'a>,
}

const EXTS: &[&str] = &[".ts", ".tsx", ".d.ts", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];

const NODE_BUILTINS: &[&str] = &[
    "assert",
    "async_hooks",
    "buffer",
    "child_process",
    "cluster",
    "console",
    "constants",
    "crypto",
    "dgram",
    "diagnostics_channel",
    "dns",
    "domain",
    "events",
    "fs",
    "http",
    "http2",
    "https",
    "inspector",
    "module",
    "net",
    "os",
    "path",
    "perf_hooks",
    "process",
    "punycode",
    "querystring",
    "readline",
    "repl",
    "stream",
    "string_decoder",
    "sys",
    "timers",
    "tls",
    "trace_events",
    "tty",
    "url",
    "util",
    "v8",
    "vm",
    "wasi",
    "worker_threads",
    "zlib",
    "test",
];

impl<'a> Ts<'a> {
    pub fn new(repo: &'a Repo<'a>) -> Ts<'a> {
        Ts { repo }
    }

    pub fn modules(&self, out: &mut Out) {
        for (p, f) in &self.repo.files {
            if Language::by_name(&f.lang).is_some_and(|l| l.resolver == Resolver::TypeScript) {
                let stem = strip_ext(p);
                out.push(rel::MODULE, &[p.as_str().into(), stem.into()]);
            }
        }
    }

    /// The indexed file a path names, trying extensions and `index` files.
    fn try_file(&self, cand: &str) -> Option<String> {
        if self.repo.is_file(cand) {
            return Some(cand.to_string());
        }
        for (js, ts) in
            [(".js", ".ts"), (".js", ".tsx"), (".jsx", ".tsx"), (".mjs", ".mts"), (".cjs", ".cts"), (".js", ".d.ts")]
        {
            if let Some(stem) = cand.strip_suffix(js) {
                let c = format!("{stem}{ts}");
                if self.repo.is_file(&c) {
                    return Some(c);
                }
            }
        }
        for e in EXTS {
            let c = format!("{cand}{e}");
            if self.repo.is_file(&c) {
                return Some(c);
            }
        }
        if self.repo.is_dir(cand) {
            let pj = child(cand, "package.json");
            if let Some(m) = self.repo.manifests.get(&pj) {
                for (_, e) in &m.entries {
                    if let Some(f) = self.try_file_no_dir(e) {
                        return Some(f);
                    }
                }
            }
            for e in EXTS {
                let c = child(cand, &format!("index{e}"));
                if self.repo.is_file(&c) {
                    return Some(c);
                }
            }
        }
        None
    }

    fn try_file_no_dir(&self, cand: &str) -> Option<String> {
        if self.repo.is_dir(cand) && !self.repo.is_file(cand) {
            return None;
        }
        self.try_file(cand)
    }

    /// tsconfig `paths` and `baseUrl` of the nearest tsconfig (one relative `extends` followed).
    fn via_tsconfig(&self, path: &str, spec: &str) -> Option<String> {
        let configs = self.repo.manifests_above(path, "tsconfig");
        let (cfg_path, cfg) = configs
            .iter()
            .find(|(p, _)| p.ends_with("tsconfig.json") || p.ends_with("jsconfig.json"))
            .or(configs.first())?;
        let mut chain = vec![(cfg_path.to_string(), *cfg)];
        if let Some(ext) = &cfg.ts_extends
            && ext.starts_with('.')
        {
            let mut p = join(parent_dir(cfg_path), ext);
            if !p.ends_with(".json") {
                p.push_str(".json");
            }
            if let Some(m) = self.repo.manifests.get(&p) {
                chain.push((p, m));
            }
        }
        let base = chain.iter().find_map(|(_, m)| m.ts_base_url.clone());
        let paths = chain.iter().find(|(_, m)| !m.ts_paths.is_empty());
        if let Some((pcfg, m)) = paths {
            let pbase = base.clone().unwrap_or_else(|| parent_dir(pcfg).to_string());
            let mut best: Option<(usize, &str, String)> = None;
            for (pattern, target) in &m.ts_paths {
                let matched = match pattern.split_once('*') {
                    Some((pre, post))
                        if spec.starts_with(pre) && spec.ends_with(post) && spec.len() >= pre.len() + post.len() =>
                    {
                        Some((pre.len(), spec[pre.len()..spec.len() - post.len()].to_string()))
                    }
                    None if pattern == spec => Some((usize::MAX, String::new())),
                    _ => None,
                };
                if let Some((score, star)) = matched
                    && best.as_ref().is_none_or(|b| score > b.0)
                {
                    best = Some((score, target, star));
                }
            }
            if let Some((score, _, _)) = best {
                for (pattern, target) in &m.ts_paths {
                    let hit = match pattern.split_once('*') {
                        Some((pre, post)) => pre.len() == score && spec.starts_with(pre) && spec.ends_with(post),
                        None => score == usize::MAX && pattern == spec,
                    };
                    if !hit {
                        continue;
                    }
                    let star = match pattern.split_once('*') {
                        Some((pre, post)) => &spec[pre.len()..spec.len() - post.len()],
                        None => "",
                    };
                    if let Some(f) = self.try_file(&join(&pbase, &target.replace('*', star))) {
                        return Some(f);
                    }
                }
            }
        }
        base.and_then(|b| self.try_file(&join(&b, spec)))
    }

    /// A workspace package by name: (package root, sub-path).
    fn workspace_package(&self, spec: &str) -> Option<(String, String, &'a super::ManifestInfo)> {
        for (p, m) in &self.repo.manifests {
            if m.ecosystem != ecosystem() || m.name.is_empty() {
                continue;
            }
            if spec == m.name || spec.starts_with(&format!("{}/", m.name)) {
                let sub = spec[m.name.len()..].trim_start_matches('/').to_string();
                return Some((parent_dir(p).to_string(), sub, m));
            }
        }
        None
    }

    /// A workspace package's `sub` path through its package.json `exports`: the file a subpath
    /// (or a `*` pattern) names under the first condition that leads to one (types, import,
    /// module, default, require, then the others, in file order), exact; else, where the target
    /// is a build output the tree does not hold, the source file of the same path under `src/`
    /// (or the package root), heuristic.
    fn via_exports(&self, root: &str, m: &super::ManifestInfo, sub: &str) -> Option<(String, bool)> {
        let key = if sub.is_empty() { ".".to_string() } else { format!("./{sub}") };
        let mut best: Option<(usize, &str)> = None;
        for (pattern, _, _) in &m.exports {
            let score = match pattern.split_once('*') {
                None if *pattern == key => usize::MAX,
                Some((pre, post))
                    if key.starts_with(pre) && key.ends_with(post) && key.len() >= pre.len() + post.len() =>
                {
                    pre.len()
                }
                _ => continue,
            };
            if best.is_none_or(|b| score > b.0) {
                best = Some((score, pattern));
            }
        }
        let (_, pattern) = best?;
        let star = match pattern.split_once('*') {
            Some((pre, post)) => &key[pre.len()..key.len() - post.len()],
            None => "",
        };
        let rank =
            |c: &str| ["types", "import", "module", "default", "require"].iter().position(|k| *k == c).unwrap_or(5);
        let mut targets: Vec<(usize, usize, String)> = m
            .exports
            .iter()
            .enumerate()
            .filter(|(_, (p, _, _))| p == pattern)
            .map(|(i, (_, c, t))| (rank(c), i, t.replace('*', star)))
            .collect();
        targets.sort();
        // conditions that lead to different files (`node` and `browser`): which one a build takes
        // is not the tree's to say
        let files: std::collections::BTreeSet<String> =
            targets.iter().filter_map(|(_, _, t)| self.try_file_no_dir(t)).collect();
        if let Some(f) = targets.iter().find_map(|(_, _, t)| self.try_file_no_dir(t)) {
            return Some((f, files.len() == 1));
        }
        targets.iter().find_map(|(_, _, t)| self.source_of(root, t)).map(|f| (f, false))
    }

    /// The source file a build output `target` of the package at `root` was made from: the same
    /// path below `src/` or the root, with its build directories (`dist/`, `dist/esm/`, …) left out
    /// and its extension a source one.
    fn source_of(&self, root: &str, target: &str) -> Option<String> {
        let rest = target.strip_prefix(root).unwrap_or(target).trim_start_matches('/');
        let rest = strip_ext(rest);
        let parts: Vec<&str> = rest.split('/').collect();
        for k in 1..parts.len() {
            let tail = parts[k..].join("/");
            for dir in [child(root, "src"), root.to_string()] {
                let cand = child(&dir, &tail);
                if let Some(f) = self.try_file(&cand).filter(|f| !f.ends_with(".d.ts") || target.ends_with(".d.ts")) {
                    return Some(f);
                }
            }
        }
        None
    }

    pub fn resolve(&self, path: &str, imp: &Imp, out: &mut Out) -> Target {
        let spec = imp.spec.as_str();
        if spec == "<dynamic>" {
            return Target::Unresolved("dynamic import of a computed specifier".into());
        }
        let t = self.resolve_spec(path, spec);
        // a relative specifier of a module (no extension, or a script's) names a file of the repo
        let relative = spec.starts_with("./") || spec.starts_with("../");
        let last = spec.rsplit('/').next().unwrap_or(spec);
        let module_like = !last.contains('.') || EXTS.iter().any(|e| last.ends_with(e));
        if let Target::Unresolved(_) = &t
            && relative
            && module_like
            && !imp.kinds.contains("dynamic")
        {
            out.missing_module(path, imp.line, spec, parent_dir(path));
        }
        // a name missing from a file found heuristically is a heuristic absence (its resolution's)
        if let Target::Files(fs) = &t
            && let Some((target, _)) = fs.first()
        {
            self.check_names(path, imp, target, out);
        }
        t
    }

    fn resolve_spec(&self, path: &str, spec: &str) -> Target {
        if spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == ".." {
            let cand = join(parent_dir(path), spec);
            return match self.try_file(&cand) {
                Some(f) => Target::Files(vec![(f, true)]),
                None => Target::Unresolved(format!("no file for `{spec}` (tried extensions and index files)")),
            };
        }
        if spec.starts_with('/') {
            return Target::Unresolved("absolute file path".into());
        }
        if let Some(f) = self.via_tsconfig(path, spec) {
            return Target::Files(vec![(f, true)]);
        }
        if let Some((root, sub, m)) = self.workspace_package(spec) {
            if let Some(found) = self.via_exports(&root, m, &sub) {
                return Target::Files(vec![found]);
            }
            if sub.is_empty() {
                for (_, e) in &m.entries {
                    if let Some(f) = self.try_file_no_dir(e) {
                        return Target::Files(vec![(f, true)]);
                    }
                }
                for c in ["src/index", "index", "lib/index"] {
                    if let Some(f) = self.try_file(&child(&root, c)) {
                        return Target::Files(vec![(f, false)]);
                    }
                }
            } else {
                if let Some(f) = self.try_file(&child(&root, &sub)) {
                    return Target::Files(vec![(f, true)]);
                }
                if let Some(f) = self.try_file(&child(&child(&root, "src"), &sub)) {
                    return Target::Files(vec![(f, false)]);
                }
            }
            return Target::Unresolved(format!("workspace package `{}` has no file for `{spec}`", m.name));
        }
        let bare = spec.strip_prefix("node:").unwrap_or(spec);
        let top = bare.split('/').next().unwrap_or(bare);
        if spec.starts_with("node:") || NODE_BUILTINS.contains(&top) {
            return Target::External(format!("node:{top}"), true);
        }
        let pkg = package_name(spec);
        let declared = self
            .repo
            .manifests_above(path, ecosystem())
            .iter()
            .any(|(_, m)| m.deps.contains(pkg) || m.deps.contains(&format!("@types/{pkg}")));
        if declared {
            return Target::External(pkg.to_string(), true);
        }
        if self.repo.manifests.values().any(|m| m.ecosystem == ecosystem() && m.deps.contains(pkg)) {
            return Target::External(pkg.to_string(), false);
        }
        if self.repo.manifests.values().any(|m| m.ecosystem == ecosystem()) {
            return Target::Undeclared(pkg.to_string());
        }
        Target::Unresolved(format!("no file, workspace package or declared dependency for `{spec}`"))
    }

    /// Names imported from a resolved TypeScript or JavaScript module (ESM or CommonJS) that it
    /// neither defines nor exports.
    fn check_names(&self, path: &str, imp: &Imp, target: &str, out: &mut Out) {
        if !self.repo.files.contains_key(target) {
            return;
        }
        for (name, _) in &imp.names {
            if name == "*" || name == "default" && self.repo.exports(target, "default") {
                continue;
            }
            if !self.exports(target, name, 0) {
                out.missing_name(path, imp.line, name, target);
            }
        }
    }

    /// Whether module `file` exports `name`, through `export … from` chains. Unknown counts as yes.
    fn exports(&self, file: &str, name: &str, depth: u32) -> bool {
        let Some(fi) = self.repo.files.get(file) else {
            return true;
        };
        if self.repo.exports(file, name) {
            return true;
        }
        if depth > 8 {
            return true;
        }
        let mut stars = false;
        for imp in fi.imports.iter().filter(|i| i.kinds.contains("re_export") && i.kinds.contains("wildcard")) {
            stars = true;
            // `export * from` never carries `default`
            if name == "default" {
                continue;
            }
            match self.resolve_spec(file, &imp.spec) {
                Target::Files(fs) => {
                    if fs.iter().any(|(t, _)| self.exports(t, name, depth + 1)) {
                        return true;
                    }
                }
                // from outside the index: not followed (`OpenSurface` makes the absence heuristic)
                _ => continue,
            }
        }
        // a file that exports nothing the index can see (a script, ambient declarations): unknown;
        // a barrel of `export * from` lines alone exports what they carry, and nothing else
        !stars && self.repo.surface_empty(file)
    }
}

fn strip_ext(p: &str) -> &str {
    for e in [".d.ts", ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"] {
        if let Some(s) = p.strip_suffix(e) {
            return s;
        }
    }
    p
}

/// `@scope/pkg/sub` → `@scope/pkg`; `pkg/sub` → `pkg`.
fn package_name(spec: &str) -> &str {
    let mut parts = spec.splitn(3, '/');
    let a = parts.next().unwrap_or(spec);
    if a.starts_with('@') {
        match parts.next() {
            Some(b) => &spec[..a.len() + 1 + b.len()],
            None => a,
        }
    } else {
        a
    }
}

/// The package name a dependency is imported as: `@types/node` types `node`, `@types/a__b` types `@a/b`.
pub(crate) fn import_name(dep: &str) -> String {
    match dep.strip_prefix("@types/") {
        Some(t) => match t.split_once("__") {
            Some((scope, name)) => format!("@{scope}/{name}"),
            None => t.to_string(),
        },
        None => dep.to_string(),
    }
}

/// The resolver hook of TypeScript and JavaScript.
impl super::LangResolver for Ts<'_> {
    fn modules(&self, out: &mut Out) {
        Ts::modules(self, out)
    }
    fn resolve(&self, path: &str, imp: &Imp, out: &mut Out) -> Target {
        Ts::resolve(self, path, imp, out)
    }
    /// Node's built-in modules, `node:`-prefixed.
    fn is_std(&self, pkg: &str) -> bool {
        pkg.starts_with("node:")
    }
    fn import_name(&self, dep: &str) -> String {
        import_name(dep)
    }
}
