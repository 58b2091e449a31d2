//! Python packaging read as its tools read it: `setup.py` (never executed: its syntax tree, with
//! the requirements files it reads) and requirements files (`requirements*.txt`,
//! `requirements/*.txt`, `*.in`). A `setup.py` that builds `install_requires` from files names
//! them in `ManifestReads` facts; resolution joins those with each file's `Requirement` facts.

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node;

use super::extractor::string_value;
use super::manifest::{M, join, pep508_name};
use crate::facts::rel;

/// The kind `Manifest`-less requirements files have in the walk (`index::walk::classify`).
pub(crate) const REQUIREMENTS: &str = "requirements";

/// Whether a repo-relative path is a requirements file: a `.txt` or `.in` file whose name holds
/// `requirements`, or one inside a directory named `requirements`.
pub(crate) fn is_requirements(path: &str) -> bool {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let lower = name.to_ascii_lowercase();
    (lower.ends_with(".txt") || lower.ends_with(".in"))
        && (lower.contains("requirements") || dir.split('/').any(|d| d.eq_ignore_ascii_case("requirements")))
}

/// A requirements file: one requirement a line (`name[extras] specifier ; marker`), `-r file`
/// (or `--requirement file`) includes another; other options (`-c`, `-e`, `--hash`, an index URL)
/// and URLs or paths without a name declare nothing.
pub(crate) fn requirements(m: &mut M, src: &str) {
    let mut logical = String::new();
    let mut first = 0u32;
    for (i, raw) in src.lines().enumerate() {
        let no = i as u32 + 1;
        if logical.is_empty() {
            first = no;
        }
        let text = strip_comment(raw);
        if let Some(cont) = text.trim_end().strip_suffix('\\') {
            logical.push_str(cont);
            logical.push(' ');
            continue;
        }
        logical.push_str(text);
        let req = std::mem::take(&mut logical);
        let req = req.trim();
        if let Some(target) = include_of(req) {
            let target = join(m.dir(), target);
            m.b.push(rel::REQUIREMENT_INCLUDE, &[m.path.into(), target.as_str().into()]);
            continue;
        }
        if let Some(dep) = requirement_name(req) {
            m.b.push(rel::REQUIREMENT, &[m.path.into(), dep.into(), first.into()]);
        }
    }
}

/// A line without its `#` comment (a `#` at the start or after whitespace; `#egg=` stays).
fn strip_comment(line: &str) -> &str {
    let b = line.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'#' && (i == 0 || b[i - 1].is_ascii_whitespace()) {
            return &line[..i];
        }
    }
    line
}

/// The file `-r file`, `-rfile`, `--requirement file` or `--requirement=file` includes.
fn include_of(req: &str) -> Option<&str> {
    let rest =
        req.strip_prefix("--requirement").map(|r| r.trim_start_matches('=')).or_else(|| req.strip_prefix("-r"))?;
    let target = rest.trim();
    (!target.is_empty()).then_some(target)
}

/// The distribution a requirement string names, if it names one: not an option, a URL or a path.
fn requirement_name(req: &str) -> Option<&str> {
    let req = req.trim();
    if req.is_empty() || req.starts_with(['-', '.', '/']) || (req.contains("://") && !req.contains(" @ ")) {
        return None;
    }
    let name = pep508_name(req);
    (!name.is_empty() && name.starts_with(|c: char| c.is_ascii_alphanumeric())).then_some(name)
}

/// `setup()` keywords that take requirements, with the kind their dependencies have.
const KEYWORDS: &[(&str, &str)] = &[
    ("install_requires", "normal"),
    ("requires", "normal"),
    ("extras_require", "optional"),
    ("tests_require", "dev"),
    ("setup_requires", "build"),
];

/// How many nodes one `setup.py` reading visits at most (a guard against a generated file).
const BUDGET: usize = 200_000;

/// Reads a `setup.py`'s requirements from its syntax tree: a literal list (through names bound to
/// one, `+` and `*` splices included) declares its entries; anything else (a call, a
/// comprehension, a name bound to either) is followed through the file's own functions and names,
/// and the requirements files its strings name become `ManifestReads` patterns: each file name
/// (`"base.txt"`, `f"{x}.txt"` as `*.txt`) under each order of the directory names passed beside
/// it (`os.path.join("requirements", …)`). When that finds nothing, every `requirements*.txt`
/// the file names is read. `pbr=True` reads `requirements.txt` and `test-requirements.txt`.
pub(crate) fn setup_py_requirements(m: &mut M, src: &str) {
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(&tree_sitter_python::LANGUAGE.into()).is_err() {
        return;
    }
    let Some(tree) = parser.parse(src, None) else { return };
    let file = File::read(src, tree.root_node());
    let mut deps: BTreeSet<(String, &str)> = BTreeSet::new();
    let mut reads: BTreeSet<(String, &str)> = BTreeSet::new();
    let mut unread = Vec::new();
    for (value, kind) in &file.values {
        let mut ev = Evidence::default();
        let mut budget = BUDGET;
        file.evaluate(*value, kind == &"optional", &mut ev, &mut budget);
        deps.extend(ev.deps.iter().map(|d| (d.clone(), *kind)));
        let patterns = ev.patterns();
        if ev.deps.is_empty() && patterns.is_empty() && ev.dynamic {
            unread.push(*kind);
        }
        reads.extend(patterns.into_iter().map(|p| (p, *kind)));
    }
    for kind in unread {
        for s in file.strings.iter().filter(|s| looks_like_requirements_file(s)) {
            reads.insert((s.to_string(), kind));
        }
    }
    if file.pbr {
        reads.insert(("requirements.txt".into(), "normal"));
        reads.insert(("test-requirements.txt".into(), "dev"));
    }
    for (d, kind) in deps {
        m.dep(&d, kind);
    }
    for (pattern, kind) in reads {
        let target = join(m.dir(), &pattern);
        m.reads(&target, kind);
    }
}

fn looks_like_requirements_file(s: &str) -> bool {
    let name = s.rsplit('/').next().unwrap_or(s);
    is_requirements(s) && !name.starts_with('.') && !s.contains(char::is_whitespace)
}

/// What one `setup.py` binds, as its requirements are read.
struct File<'t> {
    src: &'t str,
    /// Functions by name (any level): their bodies.
    defs: BTreeMap<&'t str, Vec<Node<'t>>>,
    /// Names bound by `=`, `with … as`, by name: the values.
    binds: BTreeMap<&'t str, Vec<Node<'t>>>,
    /// Values given to a requirements keyword (`setup(install_requires=…)`, `dict(…)`, a dict key),
    /// with their kind.
    values: Vec<(Node<'t>, &'static str)>,
    /// Every plain string literal of the file.
    strings: Vec<String>,
    pbr: bool,
}

impl<'t> File<'t> {
    fn read(src: &'t str, root: Node<'t>) -> File<'t> {
        let mut f = File {
            src,
            defs: BTreeMap::new(),
            binds: BTreeMap::new(),
            values: Vec::new(),
            strings: Vec::new(),
            pbr: false,
        };
        let mut stack = vec![root];
        let mut seen = 0usize;
        while let Some(n) = stack.pop() {
            seen += 1;
            if seen > BUDGET {
                break;
            }
            match n.kind() {
                "function_definition" => {
                    if let (Some(name), Some(body)) = (n.child_by_field_name("name"), n.child_by_field_name("body")) {
                        f.defs.entry(f.text(name)).or_default().push(body);
                    }
                }
                "assignment" | "augmented_assignment" => {
                    if let (Some(l), Some(r)) = (n.child_by_field_name("left"), n.child_by_field_name("right"))
                        && l.kind() == "identifier"
                    {
                        f.binds.entry(f.text(l)).or_default().push(r);
                    }
                }
                "as_pattern" => {
                    if let (Some(alias), Some(value)) = (n.child_by_field_name("alias"), n.named_child(0)) {
                        f.binds.entry(f.text(alias).trim()).or_default().push(value);
                    }
                }
                "keyword_argument" => {
                    if let (Some(k), Some(v)) = (n.child_by_field_name("name"), n.child_by_field_name("value")) {
                        let k = f.text(k);
                        if let Some((_, kind)) = KEYWORDS.iter().find(|(w, _)| *w == k) {
                            f.values.push((v, kind));
                        }
                        if k == "pbr" && f.text(v) == "True" {
                            f.pbr = true;
                        }
                    }
                }
                "pair" => {
                    if let (Some(k), Some(v)) = (n.child_by_field_name("key"), n.child_by_field_name("value"))
                        && k.kind() == "string"
                    {
                        let key = string_value(f.text(k));
                        if let Some((_, kind)) = KEYWORDS.iter().find(|(w, _)| *w == key) {
                            f.values.push((v, kind));
                        }
                    }
                }
                "string" => {
                    if let Some(s) = f.literal(n) {
                        f.strings.push(s);
                    }
                    continue;
                }
                _ => {}
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        f.values.sort_by_key(|(n, _)| n.start_byte());
        f
    }

    fn text(&self, n: Node) -> &'t str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    /// A string literal's value, or `None` when part of it is computed.
    fn literal(&self, n: Node) -> Option<String> {
        let mut c = n.walk();
        if n.named_children(&mut c).any(|x| x.kind() == "interpolation") {
            return None;
        }
        Some(string_value(self.text(n)).into_owned())
    }

    /// A string with each computed part (an f-string's `{…}`) as `*`.
    fn pattern(&self, n: Node) -> String {
        let mut out = String::new();
        let mut c = n.walk();
        for x in n.named_children(&mut c) {
            match x.kind() {
                "string_content" => out.push_str(self.text(x)),
                "interpolation" => out.push('*'),
                _ => {}
            }
        }
        out
    }

    /// The requirements a value gives: a literal list's entries (through names and `+`), else
    /// the evidence of the files it reads.
    fn evaluate(&self, value: Node<'t>, extras: bool, ev: &mut Evidence, budget: &mut usize) {
        let mut work = vec![(value, extras)];
        let mut followed: BTreeSet<usize> = BTreeSet::new();
        while let Some((n, extras)) = work.pop() {
            if *budget == 0 {
                return;
            }
            *budget -= 1;
            match n.kind() {
                "list" | "tuple" | "set" | "parenthesized_expression" | "list_splat" => {
                    let mut c = n.walk();
                    for item in n.named_children(&mut c) {
                        if item.kind() == "string" {
                            if let Some(d) = self.literal(item).as_deref().and_then(requirement_name) {
                                ev.deps.insert(d.to_string());
                            }
                        } else {
                            work.push((item, extras));
                        }
                    }
                }
                "binary_operator" => {
                    let mut c = n.walk();
                    work.extend(n.named_children(&mut c).map(|x| (x, extras)));
                }
                "string" if !extras => {
                    if let Some(d) = self.literal(n).as_deref().and_then(requirement_name) {
                        ev.deps.insert(d.to_string());
                    }
                }
                // `extras_require={"x": [...]}`: each extra's list
                "dictionary" if extras => {
                    let mut c = n.walk();
                    for pair in n.named_children(&mut c).filter(|p| p.kind() == "pair") {
                        if let Some(v) = pair.child_by_field_name("value") {
                            work.push((v, false));
                        }
                    }
                }
                "identifier" if self.binds.contains_key(self.text(n)) || self.defs.contains_key(self.text(n)) => {
                    let name = self.text(n);
                    ev.dynamic = true;
                    for v in self.binds.get(name).into_iter().flatten() {
                        if followed.insert(v.id()) {
                            work.push((*v, extras));
                        }
                    }
                    if self.defs.contains_key(name) {
                        self.gather(n, ev, budget);
                    }
                }
                _ => {
                    ev.dynamic = true;
                    self.gather(n, ev, budget);
                }
            }
        }
    }

    /// The files a computed value reads: its strings and those of the functions and names it
    /// uses, transitively (each once).
    fn gather(&self, from: Node<'t>, ev: &mut Evidence, budget: &mut usize) {
        let mut work = vec![from];
        while let Some(n) = work.pop() {
            if *budget == 0 {
                return;
            }
            *budget -= 1;
            match n.kind() {
                "identifier" => {
                    let name = self.text(n);
                    if !ev.names.insert(name.to_string()) {
                        continue;
                    }
                    work.extend(self.defs.get(name).into_iter().flatten().copied());
                    work.extend(self.binds.get(name).into_iter().flatten().copied());
                    continue;
                }
                "string" => {
                    let s = self.pattern(n);
                    let beside = n.parent().is_some_and(|p| matches!(p.kind(), "argument_list" | "binary_operator"));
                    ev.string(&s, beside);
                    continue;
                }
                _ => {}
            }
            let mut c = n.walk();
            work.extend(n.named_children(&mut c));
        }
    }
}

/// What following one requirements value found.
#[derive(Default)]
struct Evidence {
    deps: BTreeSet<String>,
    /// File names (a `*` for a computed part), in the order found.
    files: Vec<String>,
    /// Directory names passed beside them, in the order found.
    dirs: Vec<String>,
    /// Names already followed.
    names: BTreeSet<String>,
    /// The value is computed (not a literal list).
    dynamic: bool,
}

impl Evidence {
    fn string(&mut self, s: &str, beside: bool) {
        if !s.contains(char::is_alphanumeric) || s.contains(char::is_whitespace) || s.contains("://") {
            return;
        }
        let lower = s.to_ascii_lowercase();
        if lower.ends_with(".txt") || lower.ends_with(".in") {
            // `x + ".txt"`: a name computed but for its extension
            let s = if s.starts_with('.') { format!("*{s}") } else { s.to_string() };
            if !self.files.contains(&s) {
                self.files.push(s);
            }
        } else if beside
            && s.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
            && !s.starts_with('.')
            && !self.dirs.iter().any(|d| d == s)
            && self.dirs.len() < 3
        {
            self.dirs.push(s.to_string());
        }
    }

    /// Each file under each order of some of the directory names (all of them for a name computed
    /// but for its extension, which alone would match too much).
    fn patterns(&self) -> Vec<String> {
        let mut out = BTreeSet::new();
        for f in &self.files {
            // a computed name alone (`x + ".txt"`) is under all the directories; one with its
            // own directory (`f"requirements/{x}.txt"`) may be under any
            let bare = f.contains('*') && !f.contains('/');
            for prefix in arrangements(&self.dirs) {
                if bare && (prefix.is_empty() || prefix.len() < self.dirs.len()) {
                    continue;
                }
                let mut p = prefix.join("/");
                if !p.is_empty() {
                    p.push('/');
                }
                p.push_str(f);
                out.insert(p);
            }
        }
        out.into_iter().collect()
    }
}

/// Every ordered selection of `items` (at most three), the empty one first.
fn arrangements(items: &[String]) -> Vec<Vec<&str>> {
    let mut out: Vec<Vec<&str>> = vec![Vec::new()];
    let mut frontier: Vec<Vec<usize>> = vec![Vec::new()];
    for _ in 0..items.len().min(3) {
        let mut next = Vec::new();
        for sel in &frontier {
            for i in 0..items.len() {
                if !sel.contains(&i) {
                    let mut s = sel.clone();
                    s.push(i);
                    out.push(s.iter().map(|j| items[*j].as_str()).collect());
                    next.push(s);
                }
            }
        }
        frontier = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::SegmentBuilder;

    fn reads(src: &str) -> (Vec<String>, Vec<String>) {
        let mut b = SegmentBuilder::new();
        let mut m = M::new(&mut b, "setup.py", "python");
        setup_py_requirements(&mut m, src);
        let seg = b.finish();
        let mut deps = Vec::new();
        let mut pats = Vec::new();
        for (r, c) in seg.all_rows() {
            if r == rel::DECLARES_DEPENDENCY {
                deps.push(format!("{} {}", seg.str(c[1]), seg.str(c[2])));
            }
            if r == rel::MANIFEST_READS {
                pats.push(format!("{} {}", seg.str(c[1]), seg.str(c[2])));
            }
        }
        (deps, pats)
    }

    #[test]
    fn a_literal_list_through_names_and_splices() {
        let src = "BASE = ['a>=1', 'b']\nsetup(install_requires=BASE + ['c; python_version<\"3\"'], extras_require={'x': ['d']})\n";
        let (deps, pats) = reads(src);
        assert_eq!(deps, ["a normal", "b normal", "c normal", "d optional"]);
        assert!(pats.is_empty(), "{pats:?}");
    }

    #[test]
    fn files_read_by_the_file_own_functions() {
        let src = "import os\ndef _reqs(*f):\n    return open(os.path.join(os.getcwd(), 'requirements', *f)).readlines()\n\
                   def reqs(*f):\n    \"\"\"Parse requirement file.\"\"\"\n    return [r for r in _reqs(*f)]\n\
                   def extras(*p):\n    return reqs('extras', *p)\n\
                   NAMES = {'redis', 'auth'}\n\
                   setup(install_requires=reqs('default.txt'), tests_require=reqs('test.txt'),\n\
                         extras_require={x: extras(x + '.txt') for x in NAMES})\n";
        let (deps, pats) = reads(src);
        assert!(deps.is_empty(), "{deps:?}");
        assert!(pats.contains(&"requirements/default.txt normal".to_string()), "{pats:?}");
        assert!(pats.contains(&"requirements/test.txt dev".to_string()), "{pats:?}");
        assert!(pats.contains(&"requirements/extras/*.txt optional".to_string()), "{pats:?}");
        assert!(!pats.iter().any(|p| p.starts_with("redis") || p == "requirements/*.txt optional"), "{pats:?}");
    }

    #[test]
    fn open_read_splitlines_and_the_fallback() {
        let (_, pats) = reads(
            "with open('requirements.txt') as f:\n    reqs = f.read().splitlines()\nsetup(install_requires=reqs)\n",
        );
        assert_eq!(pats, ["requirements.txt normal"]);
        let (_, pats) = reads(
            "reqs = []\nfor l in open('requirements-base.txt'):\n    reqs.append(l)\nsetup(install_requires=reqs)\n",
        );
        assert_eq!(pats, ["requirements-base.txt normal"]);
    }

    #[test]
    fn computed_names_and_pbr() {
        let src = "def read(kind):\n    return open(f'requirements/{kind}.txt').read().splitlines()\n\
                   setup(install_requires=read('base'))\n";
        let (_, pats) = reads(src);
        assert!(pats.contains(&"requirements/*.txt normal".to_string()), "{pats:?}");
        let (_, pats) = reads("setup(setup_requires=['pbr'], pbr=True)\n");
        assert_eq!(pats, ["requirements.txt normal", "test-requirements.txt dev"]);
    }

    #[test]
    fn requirement_lines() {
        assert_eq!(requirement_name("requests[socks]>=2 ; python_version<'3'"), Some("requests"));
        assert_eq!(requirement_name("-e ."), None);
        assert_eq!(requirement_name("git+https://x/y.git#egg=z"), None);
        assert_eq!(requirement_name("pkg @ https://x/pkg.whl"), Some("pkg"));
        assert_eq!(include_of("-r extras/redis.txt"), Some("extras/redis.txt"));
        assert_eq!(include_of("--requirement=base.txt"), Some("base.txt"));
        assert!(is_requirements("requirements/extras/redis.txt"));
        assert!(is_requirements("dev-requirements.in"));
        assert!(!is_requirements("docs/notes.txt"));
    }
}
