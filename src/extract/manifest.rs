//! Manifests → facts: `Cargo.toml`, `package.json`, `pyproject.toml`, `setup.cfg`, `setup.py`
//! (its requirements in `pymanifest`), `tsconfig.json`/`jsconfig.json`. A malformed manifest
//! becomes a `ManifestError` fact with its line.
//! Which file names are an ecosystem's manifests, and which parser reads each, is the language
//! table's ([`super::lang::Ecosystem`]; [`super::extract_manifest`] dispatches); the parsers are
//! here.

use crate::facts::{SegmentBuilder, rel};

/// The kind `Manifest` facts give a TypeScript/JavaScript compiler configuration.
pub(crate) const TSCONFIG: &str = "tsconfig";

/// Whether a file name is a `tsconfig*.json` or `jsconfig*.json`.
pub(crate) fn is_tsconfig(name: &str) -> bool {
    (name.starts_with("tsconfig") || name.starts_with("jsconfig")) && name.ends_with(".json")
}

/// One manifest under extraction.
pub(crate) struct M<'a> {
    pub(super) b: &'a mut SegmentBuilder,
    pub(super) path: &'a str,
    dir: &'a str,
    /// Its kind, as `Manifest` facts name it.
    kind: &'static str,
}

impl<'a> M<'a> {
    /// The manifest at `path` of `kind`, its facts appended to `b`.
    pub(crate) fn new(b: &'a mut SegmentBuilder, path: &'a str, kind: &'static str) -> M<'a> {
        let dir = match path.rfind('/') {
            Some(i) => &path[..i],
            None => "",
        };
        M { b, path, dir, kind }
    }

    /// The `Manifest` fact: the manifest's kind and the package it names.
    fn manifest(&mut self, name: &str) {
        self.b.push(rel::MANIFEST, &[self.path.into(), self.kind.into(), name.into()]);
    }
    fn error(&mut self, line: u32, msg: &str) {
        self.b.push(rel::MANIFEST_ERROR, &[self.path.into(), line.into(), msg.into()]);
    }
    pub(super) fn dep(&mut self, name: &str, kind: &str) {
        self.b.push(rel::DECLARES_DEPENDENCY, &[self.path.into(), name.into(), kind.into()]);
    }
    /// The manifest's directory ("" at the root).
    pub(super) fn dir(&self) -> &'a str {
        self.dir
    }
    /// A `ManifestReads` fact: dependencies of `kind` from the requirements files matching the
    /// repo-relative `pattern`.
    pub(super) fn reads(&mut self, pattern: &str, kind: &str) {
        self.b.push(rel::MANIFEST_READS, &[self.path.into(), pattern.into(), kind.into()]);
    }
    fn dep_path(&mut self, name: &str, rel_dir: &str) {
        let target = join(self.dir, rel_dir);
        self.b.push(rel::DEPENDENCY_PATH, &[self.path.into(), name.into(), dir_value(&target).into()]);
    }
    fn entry(&mut self, kind: &str, rel_file: &str) {
        let target = join(self.dir, rel_file);
        self.b.push(rel::MANIFEST_ENTRY, &[self.path.into(), kind.into(), target.as_str().into()]);
    }
}

/// A repo-relative directory as facts show it: the root is `.`.
pub fn dir_value(dir: &str) -> &str {
    if dir.is_empty() { "." } else { dir }
}

/// Joins a repo-relative directory and a relative path, normalising `.` and `..`.
pub fn join(dir: &str, rel_path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for seg in dir.split('/').chain(rel_path.split(['/', '\\'])) {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

fn line_of(src: &str, offset: usize) -> u32 {
    src[..offset.min(src.len())].bytes().filter(|b| *b == b'\n').count() as u32 + 1
}

fn parse_toml(m: &mut M, src: &str) -> Option<toml::Table> {
    match src.parse::<toml::Table>() {
        Ok(t) => Some(t),
        Err(e) => {
            let line = e.span().map(|s| line_of(src, s.start)).unwrap_or(1);
            let msg = e.message().to_string();
            m.error(line, &msg);
            None
        }
    }
}

/// Reads a `Cargo.toml` (the parser its ecosystem row in the language table names).
pub(crate) fn cargo(m: &mut M, src: &str) {
    let Some(t) = parse_toml(m, src) else {
        m.manifest("");
        return;
    };
    let pkg = t.get("package").and_then(|p| p.as_table());
    let name = pkg.and_then(|p| p.get("name")).and_then(|n| n.as_str()).unwrap_or("");
    m.manifest(name);
    if let Some(ws) = t.get("workspace").and_then(|w| w.as_table()) {
        for member in ws.get("members").and_then(|v| v.as_array()).into_iter().flatten() {
            if let Some(s) = member.as_str() {
                m.b.push(rel::WORKSPACE_MEMBER, &[m.path.into(), s.into()]);
            }
        }
        if let Some(deps) = ws.get("dependencies").and_then(|d| d.as_table()) {
            cargo_deps(m, deps, "workspace");
        }
    }
    if pkg.is_some() {
        let lib = t.get("lib").and_then(|l| l.as_table());
        let lib_name = lib
            .and_then(|l| l.get("name"))
            .and_then(|n| n.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| name.replace('-', "_"));
        m.b.push(rel::IMPORT_NAME, &[m.path.into(), name.into(), lib_name.as_str().into()]);
        // Only targets the manifest names; Cargo's implicit ones (src/lib.rs, src/main.rs, build.rs,
        // src/bin/*) are added by resolution when those files exist.
        if let Some(p) = lib.and_then(|l| l.get("path")).and_then(|p| p.as_str()) {
            m.entry("lib", p);
        }
        // `[[bin]]`, `[[test]]`, `[[bench]]` and `[[example]]` with a `path`: each a crate root
        for (kind, key) in [("bin", "bin"), ("test", "test"), ("bench", "bench"), ("example", "example")] {
            for target in t.get(key).and_then(|b| b.as_array()).into_iter().flatten() {
                if let Some(p) = target.get("path").and_then(|p| p.as_str()) {
                    m.entry(kind, p);
                }
            }
        }
        if let Some(b) = pkg.and_then(|p| p.get("build")).and_then(|b| b.as_str()) {
            m.entry("build", b);
        }
        for (kind, key) in [("normal", "dependencies"), ("dev", "dev-dependencies"), ("build", "build-dependencies")] {
            if let Some(deps) = t.get(key).and_then(|d| d.as_table()) {
                cargo_deps(m, deps, kind);
            }
        }
        for target in t.get("target").and_then(|x| x.as_table()).into_iter().flat_map(|x| x.values()) {
            for (kind, key) in
                [("normal", "dependencies"), ("dev", "dev-dependencies"), ("build", "build-dependencies")]
            {
                if let Some(deps) = target.get(key).and_then(|d| d.as_table()) {
                    cargo_deps(m, deps, kind);
                }
            }
        }
    }
}

fn cargo_deps(m: &mut M, deps: &toml::Table, kind: &str) {
    for (key, spec) in deps {
        // `foo = { package = "bar" }` is imported as `foo`
        let name = key.as_str();
        let optional = spec.get("optional").and_then(|o| o.as_bool()).unwrap_or(false);
        m.dep(name, if optional { "optional" } else { kind });
        if let Some(p) = spec.get("path").and_then(|p| p.as_str()) {
            m.dep_path(name, p);
        }
    }
}

/// Strips `//` and `/* */` comments and trailing commas (tsconfig files are JSONC).
fn strip_jsonc(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        let c = b[i];
        if in_str {
            if c == b'\\' && i + 1 < b.len() {
                out.push_str(&src[i..i + 2]);
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
        } else if c == b'"' {
            in_str = true;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let end = src[i + 2..].find("*/").map(|e| i + 2 + e + 2).unwrap_or(b.len());
            // keep newlines so line numbers stay right
            out.extend(src[i..end].chars().filter(|c| *c == '\n'));
            i = end;
            continue;
        } else if c == b',' {
            let rest = src[i + 1..].trim_start();
            if rest.starts_with('}') || rest.starts_with(']') {
                i += 1;
                continue;
            }
        }
        let ch = src[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

fn parse_json(m: &mut M, src: &str, jsonc: bool) -> Option<serde_json::Value> {
    let text = if jsonc { strip_jsonc(src) } else { src.to_string() };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(v) => Some(v),
        Err(e) => {
            let msg = e.to_string();
            m.error(e.line().max(1) as u32, &msg);
            None
        }
    }
}

/// Reads a `package.json` (the parser its ecosystem row in the language table names).
pub(crate) fn npm(m: &mut M, src: &str) {
    let Some(v) = parse_json(m, src, false) else {
        m.manifest("");
        return;
    };
    let name = v.get("name").and_then(|n| n.as_str()).unwrap_or("");
    m.manifest(name);
    if !name.is_empty() {
        m.b.push(rel::IMPORT_NAME, &[m.path.into(), name.into(), name.into()]);
    }
    for (kind, key) in [
        ("normal", "dependencies"),
        ("dev", "devDependencies"),
        ("peer", "peerDependencies"),
        ("optional", "optionalDependencies"),
    ] {
        if let Some(deps) = v.get(key).and_then(|d| d.as_object()) {
            for (dep, version) in deps {
                m.dep(dep, kind);
                if let Some(p) =
                    version.as_str().and_then(|s| s.strip_prefix("file:").or_else(|| s.strip_prefix("link:")))
                {
                    m.dep_path(dep, p);
                }
            }
        }
    }
    let ws = v.get("workspaces");
    let members =
        ws.and_then(|w| w.as_array()).or_else(|| ws.and_then(|w| w.get("packages")).and_then(|p| p.as_array()));
    for member in members.into_iter().flatten() {
        if let Some(s) = member.as_str() {
            m.b.push(rel::WORKSPACE_MEMBER, &[m.path.into(), s.into()]);
        }
    }
    for key in ["main", "module", "types", "typings", "source"] {
        if let Some(s) = v.get(key).and_then(|s| s.as_str()) {
            m.entry(if key == "typings" { "types" } else { key }, s);
        }
    }
    if let Some(exports) = v.get("exports") {
        package_exports(m, exports);
        let root = match exports {
            serde_json::Value::Object(o) if o.keys().any(|k| k.starts_with('.')) => o.get("."),
            other => Some(other),
        };
        let mut stack: Vec<&serde_json::Value> = root.into_iter().collect();
        while let Some(e) = stack.pop() {
            match e {
                serde_json::Value::String(s) => m.entry("exports", s),
                serde_json::Value::Object(o) => stack.extend(o.values()),
                serde_json::Value::Array(a) => stack.extend(a.iter()),
                _ => {}
            }
        }
    }
}

/// package.json `exports`, one `PackageExport` per subpath, condition and target: a string or a
/// conditions object is the subpath `.`; nested conditions are named by their innermost key
/// (`default` for a bare string), in file order.
fn package_exports(m: &mut M, exports: &serde_json::Value) {
    let subpaths: Vec<(&str, &serde_json::Value)> = match exports {
        serde_json::Value::Object(o) if o.keys().any(|k| k.starts_with('.')) => {
            o.iter().filter(|(k, _)| k.starts_with('.')).map(|(k, v)| (k.as_str(), v)).collect()
        }
        other => vec![(".", other)],
    };
    for (sub, value) in subpaths {
        let mut stack: Vec<(&str, &serde_json::Value)> = vec![("default", value)];
        let mut found: Vec<(&str, &str)> = Vec::new();
        while let Some((cond, e)) = stack.pop() {
            match e {
                serde_json::Value::String(s) => found.push((cond, s)),
                serde_json::Value::Object(o) => stack.extend(o.iter().rev().map(|(k, v)| (k.as_str(), v))),
                serde_json::Value::Array(a) => stack.extend(a.iter().rev().map(|v| (cond, v))),
                _ => {}
            }
        }
        for (cond, target) in found {
            let target = join(m.dir, target);
            m.b.push(rel::PACKAGE_EXPORT, &[m.path.into(), sub.into(), cond.into(), target.as_str().into()]);
        }
    }
}

/// The distribution name in a PEP 508 requirement: `requests[socks]>=2; python_version<"3"` → `requests`.
pub(super) fn pep508_name(req: &str) -> &str {
    let end = req.find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_' || c == '.')).unwrap_or(req.len());
    req[..end].trim()
}

/// Reads a `pyproject.toml` (the parser its ecosystem row in the language table names).
pub(crate) fn pyproject(m: &mut M, src: &str) {
    let Some(t) = parse_toml(m, src) else {
        m.manifest("");
        return;
    };
    let project = t.get("project").and_then(|p| p.as_table());
    let poetry = t.get("tool").and_then(|x| x.get("poetry")).and_then(|p| p.as_table());
    let name = project
        .and_then(|p| p.get("name"))
        .or_else(|| poetry.and_then(|p| p.get("name")))
        .and_then(|n| n.as_str())
        .unwrap_or("");
    m.manifest(name);
    if let Some(p) = project {
        for d in p.get("dependencies").and_then(|d| d.as_array()).into_iter().flatten() {
            if let Some(s) = d.as_str() {
                m.dep(pep508_name(s), "normal");
            }
        }
        for group in p.get("optional-dependencies").and_then(|d| d.as_table()).into_iter().flat_map(|t| t.values()) {
            for d in group.as_array().into_iter().flatten() {
                if let Some(s) = d.as_str() {
                    m.dep(pep508_name(s), "optional");
                }
            }
        }
    }
    for group in t.get("dependency-groups").and_then(|d| d.as_table()).into_iter().flat_map(|t| t.values()) {
        for d in group.as_array().into_iter().flatten() {
            if let Some(s) = d.as_str() {
                m.dep(pep508_name(s), "dev");
            }
        }
    }
    // PEP 621 `dynamic = ["dependencies", "optional-dependencies"]`, filled by setuptools from
    // requirements files: `[tool.setuptools.dynamic] dependencies = { file = [...] }`
    let dynamic = t.get("tool").and_then(|x| x.get("setuptools")).and_then(|s| s.get("dynamic"));
    let files = |v: Option<&toml::Value>| -> Vec<String> {
        match v.and_then(|v| v.get("file")) {
            Some(toml::Value::String(f)) => vec![f.clone()],
            Some(toml::Value::Array(a)) => a.iter().filter_map(|f| f.as_str().map(str::to_string)).collect(),
            _ => Vec::new(),
        }
    };
    for f in files(dynamic.and_then(|d| d.get("dependencies"))) {
        let target = join(m.dir, &f);
        m.reads(&target, "normal");
    }
    let extras = dynamic.and_then(|d| d.get("optional-dependencies")).and_then(|o| o.as_table());
    for group in extras.into_iter().flat_map(|t| t.values()) {
        for f in files(Some(group)) {
            let target = join(m.dir, &f);
            m.reads(&target, "optional");
        }
    }
    if let Some(p) = poetry {
        // `[tool.poetry.group.<name>.dependencies]` (Poetry 1.2) are dev dependencies too; one
        // marked `optional = true` belongs to an extra
        let groups = p.get("group").and_then(|g| g.as_table()).into_iter().flat_map(|g| g.values());
        let tables = [("normal", p.get("dependencies")), ("dev", p.get("dev-dependencies"))]
            .into_iter()
            .chain(groups.map(|g| ("dev", g.get("dependencies"))));
        for (kind, table) in tables {
            for (dep, spec) in table.and_then(|d| d.as_table()).into_iter().flatten() {
                if dep != "python" {
                    let optional = spec.get("optional").and_then(|o| o.as_bool()).unwrap_or(false);
                    m.dep(dep, if optional { "optional" } else { kind });
                }
            }
        }
        for pkg in p.get("packages").and_then(|x| x.as_array()).into_iter().flatten() {
            if let Some(inc) = pkg.get("include").and_then(|i| i.as_str()) {
                m.b.push(rel::IMPORT_NAME, &[m.path.into(), name.into(), inc.into()]);
            }
        }
    }
}

/// Reads a `setup.cfg` (the parser its ecosystem row in the language table names): `[metadata]
/// name`; under `[options]`, `install_requires` (normal), `tests_require` (dev) and
/// `setup_requires` (build); each key of `[options.extras_require]` (optional). A value is a list
/// on the key's line or on indented lines after it, or `file: a.txt, b.txt` (requirements files).
pub(crate) fn setup_cfg(m: &mut M, src: &str) {
    let mut section = String::new();
    let mut name = String::new();
    let mut kind: Option<&'static str> = None;
    let mut deps: Vec<(String, &'static str)> = Vec::new();
    let mut reads: Vec<(String, &'static str)> = Vec::new();
    let mut value = |v: &str, kind: &'static str, deps: &mut Vec<(String, &'static str)>| {
        let v = v.trim();
        if let Some(files) = v.strip_prefix("file:") {
            for f in files.split([',', ' ']).map(str::trim).filter(|f| !f.is_empty()) {
                reads.push((join(m.dir, f), kind));
            }
            return;
        }
        let d = pep508_name(v);
        if !d.is_empty() {
            deps.push((d.to_string(), kind));
        }
    };
    for raw in src.lines() {
        let line = raw.trim_end();
        if line.trim_start().starts_with(['#', ';']) {
            continue;
        }
        if let Some(s) = line.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            section = s.trim().to_string();
            kind = None;
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        if indented && let Some(k) = kind {
            value(line, k, &mut deps);
            continue;
        }
        kind = None;
        if let Some((k, v)) = line.split_once(['=', ':']) {
            let (k, v) = (k.trim(), v.trim());
            // `key = file: x.txt` splits at its `=`, the first of the two: the value keeps `file:`
            if section == "metadata" && k == "name" {
                name = v.to_string();
            }
            let this = match (section.as_str(), k) {
                ("options", "install_requires") => Some("normal"),
                ("options", "tests_require") => Some("dev"),
                ("options", "setup_requires") => Some("build"),
                ("options.extras_require", _) => Some("optional"),
                _ => None,
            };
            if let Some(kd) = this {
                kind = Some(kd);
                value(v, kd, &mut deps);
            }
        }
    }
    m.manifest(&name);
    for (d, kind) in deps {
        m.dep(&d, kind);
    }
    for (f, kind) in reads {
        m.reads(&f, kind);
    }
}

/// Reads a `setup.py` (the parser its ecosystem row in the language table names): its `name` from
/// the text, its requirements from its syntax tree ([`super::pymanifest::setup_py_requirements`]);
/// setup.py is never executed.
pub(crate) fn setup_py(m: &mut M, src: &str) {
    let name = keyword_string(src, "name").unwrap_or_default();
    m.manifest(&name);
    super::pymanifest::setup_py_requirements(m, src);
}

fn keyword_string(src: &str, key: &str) -> Option<String> {
    let mut from = 0;
    while let Some(i) = src[from..].find(key) {
        let at = from + i;
        let rest = src[at + key.len()..].trim_start();
        let ok_before = at == 0 || !src[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        if ok_before && let Some(r) = rest.strip_prefix('=') {
            let r = r.trim_start();
            if let Some(q) = r.chars().next().filter(|c| *c == '"' || *c == '\'') {
                let body = &r[1..];
                return body.find(q).map(|e| body[..e].to_string());
            }
        }
        from = at + key.len();
    }
    None
}

/// Reads a `tsconfig*.json` or `jsconfig*.json`.
pub(crate) fn tsconfig(m: &mut M, src: &str) {
    m.manifest("");
    let Some(v) = parse_json(m, src, true) else {
        return;
    };
    if let Some(e) = v.get("extends").and_then(|e| e.as_str()) {
        m.b.push(rel::TS_EXTENDS, &[m.path.into(), e.into()]);
    }
    let Some(opts) = v.get("compilerOptions") else {
        return;
    };
    if opts.get("importHelpers").and_then(|h| h.as_bool()) == Some(true) {
        m.b.push(rel::TS_IMPORT_HELPERS, &[m.path.into()]);
    }
    let base = opts.get("baseUrl").and_then(|b| b.as_str());
    if let Some(b) = base {
        let dir = join(m.dir, b);
        m.b.push(rel::TS_BASE_URL, &[m.path.into(), dir_value(&dir).into()]);
    }
    if let Some(paths) = opts.get("paths").and_then(|p| p.as_object()) {
        for (pattern, targets) in paths {
            for t in targets.as_array().into_iter().flatten() {
                if let Some(s) = t.as_str() {
                    m.b.push(rel::TS_PATH, &[m.path.into(), pattern.as_str().into(), s.into()]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonc_comments_and_trailing_commas() {
        let s = strip_jsonc("{\n // c\n \"a\": [1, 2,], /* x\n y */ \"b\": \"//no\",\n}");
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(v["b"], "//no");
        assert_eq!(v["a"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn pep508_names() {
        assert_eq!(pep508_name("requests[socks]>=2; python_version<'3'"), "requests");
        assert_eq!(pep508_name("zope.interface"), "zope.interface");
    }

    #[test]
    fn join_normalises() {
        assert_eq!(join("a/b", "../c/./d"), "a/c/d");
        assert_eq!(join("", "./src"), "src");
        assert_eq!(join(".", "a/*"), "a/*");
    }
}
