//! Selectors: what a contract's `from`, `to`, `members`, ... name. A selector is, in this order of
//! precedence: a path glob (it has `*`, `?`, `[` or `{`), a stage name, a repo-relative file or
//! directory, a module name (`pkg.sub`, `crate::sub`; its submodules too), or an external package.
//! A prefix (`stage:`, `path:`, `module:`, `package:`) picks one meaning explicitly. A selector
//! that names nothing in the index is an error with the nearest valid name.

use std::collections::BTreeSet;

use globset::{GlobBuilder, GlobMatcher};

use super::graph::DepGraph;

#[derive(Clone, Debug)]
pub enum SelKind {
    Glob(GlobMatcher),
    Stage(String),
    Path(String),
    Module(String),
    Package(String),
}

/// A resolved selector: the graph nodes it covers.
#[derive(Clone, Debug)]
pub struct Selector {
    pub text: String,
    pub line: u32,
    pub kind: SelKind,
    /// `nodes[n]`: node `n` of the dependency graph is selected.
    pub nodes: Vec<bool>,
}

impl Selector {
    /// The nodes it selects, in order: a stage's from the graph's list of its files (no scan of
    /// the graph), any other's from `nodes`.
    pub fn node_list<'g>(&self, g: &'g DepGraph) -> std::borrow::Cow<'g, [u32]> {
        if let SelKind::Stage(name) = &self.kind
            && let Some(files) = g.stage_files(name)
        {
            return std::borrow::Cow::Borrowed(files);
        }
        let listed = self.nodes.iter().enumerate().filter(|(_, on)| **on).map(|(n, _)| n as u32).collect();
        std::borrow::Cow::Owned(listed)
    }
}

/// What a finding's end is, for matching exceptions: a node of the graph, or a name that is not
/// one (a manifest path, a dependency nobody imports).
#[derive(Clone, Debug, Default)]
pub struct Selected {
    pub node: Option<u32>,
    pub path: Option<String>,
    pub stage: Option<String>,
    pub package: Option<String>,
}

impl Selector {
    pub fn matches(&self, s: &Selected) -> bool {
        if let Some(n) = s.node
            && self.nodes.get(n as usize).copied().unwrap_or(false)
        {
            return true;
        }
        match &self.kind {
            SelKind::Glob(g) => s.path.as_deref().is_some_and(|p| g.is_match(p)),
            SelKind::Stage(name) => s.stage.as_deref() == Some(name.as_str()),
            SelKind::Path(p) => s.path.as_deref().is_some_and(|x| x == p || x.starts_with(&format!("{p}/"))),
            SelKind::Module(_) => false,
            SelKind::Package(name) => s.package.as_deref() == Some(name.as_str()),
        }
    }

    pub fn count(&self) -> usize {
        self.nodes.iter().filter(|b| **b).count()
    }
}

/// Resolves `text` against the graph; `Err` carries the message (the caller adds file and line).
/// The selector of stage `name` exactly as the index names it (no trimming: a stage whose name has
/// space around it is still itself), for a contract over every stage; `None` when there is none.
pub fn stage(g: &DepGraph, name: &str, line: u32) -> Option<Selector> {
    let files = g.stage_files(name)?;
    let mut nodes = vec![false; g.len()];
    for &f in files {
        nodes[f as usize] = true;
    }
    Some(Selector { text: format!("stage:{name}"), line, kind: SelKind::Stage(name.to_string()), nodes })
}

pub fn resolve(g: &DepGraph, text: &str, line: u32) -> Result<Selector, super::Error> {
    let (prefix, body) = match text.split_once(':') {
        Some((p @ ("stage" | "path" | "module" | "package"), rest)) => (Some(p), rest.trim()),
        _ => (None, text.trim()),
    };
    let body = body.trim_start_matches("./");
    let n = g.len();
    let mk = |kind: SelKind, nodes: Vec<bool>| Selector { text: text.to_string(), line, kind, nodes };
    let is_glob = body.contains(['*', '?', '[', '{']);
    if is_glob && matches!(prefix, None | Some("path")) {
        let glob = GlobBuilder::new(body)
            .literal_separator(true)
            .build()
            .map_err(|source| super::Error::BadGlob { text: text.to_string(), source })?
            .compile_matcher();
        let mut nodes = vec![false; n];
        for f in g.files() {
            nodes[f as usize] = glob.is_match(g.name(f));
        }
        if !nodes.contains(&true) {
            return Err(super::Error::GlobMatchesNothing { text: text.to_string(), hint: hint(g, body) });
        }
        return Ok(mk(SelKind::Glob(glob), nodes));
    }
    if matches!(prefix, None | Some("stage"))
        && let Some(files) = g.stage_files(body)
    {
        let mut nodes = vec![false; n];
        for &f in files {
            nodes[f as usize] = true;
        }
        return Ok(mk(SelKind::Stage(body.to_string()), nodes));
    }
    if matches!(prefix, None | Some("path")) {
        let under = format!("{body}/");
        let mut nodes = vec![false; n];
        let mut any = false;
        for f in g.files() {
            let p = g.name(f);
            if p == body || body == "." || p.starts_with(&under) {
                nodes[f as usize] = true;
                any = true;
            }
        }
        if any {
            return Ok(mk(SelKind::Path(body.to_string()), nodes));
        }
    }
    if matches!(prefix, None | Some("module")) {
        let mut nodes = vec![false; n];
        let mut any = false;
        for (f, m) in g.modules() {
            let sub = m.strip_prefix(body);
            if sub.is_some_and(|s| s.is_empty() || s.starts_with('.') || s.starts_with("::")) {
                nodes[f as usize] = true;
                any = true;
            }
        }
        if any {
            return Ok(mk(SelKind::Module(body.to_string()), nodes));
        }
    }
    if matches!(prefix, None | Some("package")) && g.knows_package(body) {
        let mut nodes = vec![false; n];
        if let Some(p) = g.package_node(body) {
            nodes[p as usize] = true;
        }
        return Ok(mk(SelKind::Package(body.to_string()), nodes));
    }
    let what = match prefix {
        Some(p) => format!("no {p}"),
        None => "no stage, file, directory, module or package".to_string(),
    };
    Err(super::Error::NamesNothing { text: text.to_string(), what, hint: hint(g, body) })
}

/// Why `text` is a glob that does not parse (whatever the index holds), if it is one.
pub fn bad_glob(text: &str) -> Option<String> {
    let body = match text.split_once(':') {
        Some(("stage" | "module" | "package", _)) => return None,
        Some(("path", rest)) => rest.trim(),
        _ => text.trim(),
    };
    let body = body.trim_start_matches("./");
    if !body.contains(['*', '?', '[', '{']) {
        return None;
    }
    GlobBuilder::new(body).literal_separator(true).build().err().map(|e| format!("`{text}` is not a valid glob: {e}"))
}

/// "; did you mean `x`?" over every stage, directory, file, module and package name.
fn hint(g: &DepGraph, s: &str) -> String {
    // a stage named once with `@root` and now without, or the other way: the same stage renamed
    let base = |n: &str| n.split('@').next().unwrap_or(n).to_string();
    if let Some(n) = g.stage_names().find(|n| *n != s && base(n) == base(s)) {
        return format!("; stage `{s}` was renamed: it is `{n}` now");
    }
    let mut cands: BTreeSet<String> = BTreeSet::new();
    cands.extend(g.stage_names().map(str::to_string));
    for f in g.files() {
        let p = g.name(f);
        cands.insert(p.to_string());
        let mut d = p;
        while let Some((parent, _)) = d.rsplit_once('/') {
            cands.insert(parent.to_string());
            cands.insert(format!("{parent}/**"));
            d = parent;
        }
    }
    cands.extend(g.modules().map(|(_, m)| m.to_string()));
    cands.extend(g.package_names().map(str::to_string));
    match crate::config::nearest(s, cands.iter().map(String::as_str)) {
        Some(n) => format!("; did you mean `{n}`?"),
        None => String::new(),
    }
}
