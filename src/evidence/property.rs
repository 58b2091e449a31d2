//! Approach (f), property and invariant checks (spec 000 §6, R98), as a pure library: which
//! property-testing tools a repository declares ([`detect`]) and what one run of such a tool showed
//! ([`judge`], [`counterexample`]). The caller runs the command and hands in its exit code, whether
//! it timed out, and its captured output; nothing here spawns a process.
//!
//! Only a tool the repository declares as a dependency makes a run count as (f) evidence: a
//! hand-rolled loop over random inputs neither shrinks nor reports a minimal counterexample, so it
//! is not a property test. On failure the *minimized* counterexample is taken from the output as the
//! tool prints it. Manifests read and line shapes recognized: `docs/approaches-property-numeric.md`;
//! real outputs of each tool: `tests/fixtures/evidence-output/`.

use std::path::Path;

use serde::{Deserialize, Serialize};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::config::line_at;
use crate::extract::LANGUAGES;
use crate::index::walk::VENDORED_DIRS;
use crate::ledger::Verdict;

/// The longest counterexample kept, in characters; a longer one is cut and ends in [`TRUNCATED`].
pub const MAX_COUNTEREXAMPLE_CHARS: usize = 2000;
/// What ends a counterexample cut at [`MAX_COUNTEREXAMPLE_CHARS`].
pub const TRUNCATED: &str = "\n… (truncated)";
/// How deep [`detect`] looks for manifests: the root's own files are at depth 1.
pub const MAX_DEPTH: usize = 6;
/// Manifests larger than this are not read.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;
/// The most lines a multi-line counterexample block may span before it is taken as unterminated.
const MAX_BLOCK_LINES: usize = 400;

/// A property-testing tool with automatic shrinking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PropertyTool {
    Proptest,
    Quickcheck,
    Hypothesis,
    FastCheck,
}

impl PropertyTool {
    pub const ALL: [PropertyTool; 4] =
        [PropertyTool::Proptest, PropertyTool::Quickcheck, PropertyTool::Hypothesis, PropertyTool::FastCheck];

    /// The tool's name, as its package is named.
    pub fn name(self) -> &'static str {
        match self {
            PropertyTool::Proptest => "proptest",
            PropertyTool::Quickcheck => "quickcheck",
            PropertyTool::Hypothesis => "hypothesis",
            PropertyTool::FastCheck => "fast-check",
        }
    }

    /// The language of the tests that use the tool, as the index names it; fast-check serves
    /// TypeScript and JavaScript alike (see [`PropertyTool::languages`]).
    pub fn language(self) -> &'static str {
        self.languages()[0]
    }

    /// Every language the tool serves, the primary one first: those whose row of the language
    /// table lists it among their property-testing tools, in table order.
    pub fn languages(self) -> Vec<&'static str> {
        LANGUAGES.iter().filter(|l| l.property_tools.contains(&self.name())).map(|l| l.name).collect()
    }

    /// The dependency names that declare the tool (Python names in PEP 503 normal form). Companion
    /// crates such as `proptest-derive` or `quickcheck_macros` are not listed: they cannot run a
    /// property without the tool itself, which is then declared beside them.
    pub fn packages(self) -> &'static [&'static str] {
        match self {
            PropertyTool::Proptest => &["proptest"],
            PropertyTool::Quickcheck => &["quickcheck"],
            PropertyTool::Hypothesis => &["hypothesis"],
            PropertyTool::FastCheck => &["fast-check", "@fast-check/jest", "@fast-check/vitest", "@fast-check/ava"],
        }
    }
}

/// A property-testing tool a manifest declares as a dependency.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Detected {
    pub tool: PropertyTool,
    /// The dependency as declared: one of [`PropertyTool::packages`] (for a renamed Cargo
    /// dependency, its `package`).
    pub package: String,
    /// The manifest, relative to the root, with `/` separators.
    pub manifest: String,
    /// 1-based line of the declaration.
    pub line: usize,
}

/// What one run of a property-testing tool showed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PropertyResult {
    /// Proven (exit 0), Refuted (non-zero exit), or Unproven (timed out, no exit, or no test ran).
    pub verdict: Verdict,
    /// The minimized counterexample as the tool printed it (bounded), when the run was refuted and
    /// the output carried one.
    pub counterexample: Option<String>,
    /// One line saying what the run showed.
    pub summary: String,
}

// ---- detection -------------------------------------------------------------------------------

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

fn line(text: &str, offset: usize) -> usize {
    line_at(text, offset) as usize
}

fn subtable<'a, 'i>(t: &'a DeTable<'i>, key: &str) -> Option<&'a DeTable<'i>> {
    match t.get(key)?.get_ref() {
        DeValue::Table(t) => Some(t),
        _ => None,
    }
}

fn tables<'a, 'i>(t: &'a DeTable<'i>) -> impl Iterator<Item = &'a DeTable<'i>> {
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

/// PEP 503 normal form of a Python distribution name.
fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// The distribution name of a PEP 508 requirement (`hypothesis[numpy]>=6; python_version>"3.8"`),
/// or None when `s` is not one (prose such as `uses hypothesis for tests` is not).
fn requirement_name(s: &str) -> Option<&str> {
    let s = s.trim();
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))).unwrap_or(s.len());
    let name = &s[..end];
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if !alnum(name.chars().next()) || !alnum(name.chars().last()) {
        return None;
    }
    let rest = s[end..].trim_start();
    let follows = rest.is_empty() || rest.starts_with(['[', '(', '<', '>', '=', '!', '~', ';', '@']);
    follows.then_some(name)
}

fn is_hypothesis(requirement: &str) -> bool {
    requirement_name(requirement).is_some_and(|n| normalize(n) == "hypothesis")
}

/// `pyproject.toml`: PEP 621 `dependencies` and `optional-dependencies`, PEP 735
/// `[dependency-groups]`, Poetry's dependency tables and groups, and the dev-dependency lists of
/// PDM, uv and Hatch environments.
fn pyproject(text: &str) -> Vec<(PropertyTool, String, usize)> {
    let Ok(doc) = DeTable::parse(text) else { return Vec::new() };
    let root = doc.get_ref();
    // Requirement strings (arrays, or tables of arrays), and dependency tables keyed by name.
    let mut lists: Vec<&Spanned<DeValue<'_>>> = Vec::new();
    let mut keyed: Vec<&DeTable<'_>> = Vec::new();
    let tool = subtable(root, "tool");
    if let Some(project) = subtable(root, "project") {
        lists.extend(project.get("dependencies"));
        lists.extend(subtable(project, "optional-dependencies").into_iter().flat_map(|t| t.values()));
    }
    lists.extend(subtable(root, "dependency-groups").into_iter().flat_map(|t| t.values()));
    if let Some(poetry) = tool.and_then(|t| subtable(t, "poetry")) {
        keyed.extend(["dependencies", "dev-dependencies"].iter().filter_map(|k| subtable(poetry, k)));
        let groups = subtable(poetry, "group").into_iter().flat_map(tables);
        keyed.extend(groups.filter_map(|g| subtable(g, "dependencies")));
    }
    if let Some(pdm) = tool.and_then(|t| subtable(t, "pdm")) {
        lists.extend(subtable(pdm, "dev-dependencies").into_iter().flat_map(|t| t.values()));
    }
    lists.extend(tool.and_then(|t| subtable(t, "uv")).and_then(|uv| uv.get("dev-dependencies")));
    let envs = tool.and_then(|t| subtable(t, "hatch")).and_then(|h| subtable(h, "envs"));
    for env in envs.into_iter().flat_map(tables) {
        lists.extend(["dependencies", "extra-dependencies"].iter().filter_map(|k| env.get(*k)));
    }
    let mut out = Vec::new();
    for list in lists {
        let DeValue::Array(items) = list.get_ref() else { continue };
        for item in items.iter() {
            if let DeValue::String(s) = item.get_ref()
                && is_hypothesis(s)
            {
                out.push((PropertyTool::Hypothesis, "hypothesis".to_string(), line(text, item.span().start)));
            }
        }
    }
    for table in keyed {
        for (key, _) in table.iter() {
            if normalize(key.get_ref()) == "hypothesis" {
                out.push((PropertyTool::Hypothesis, "hypothesis".to_string(), line(text, key.span().start)));
            }
        }
    }
    out
}

/// Drops a `#` comment that starts the line or follows whitespace (pip's rule).
fn strip_hash_comment(line: &str) -> &str {
    let b = line.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'#' && (i == 0 || b[i - 1].is_ascii_whitespace()) {
            return &line[..i];
        }
    }
    line
}

/// `requirements*.txt` (and `requirements/*.txt`, `*.in`): one requirement a line; options such
/// as `-r`, `-e` and `--hash` are not requirements.
fn requirements(text: &str) -> Vec<(PropertyTool, String, usize)> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let req = strip_hash_comment(raw).trim();
        if !req.starts_with('-') && is_hypothesis(req) {
            out.push((PropertyTool::Hypothesis, "hypothesis".to_string(), i + 1));
        }
    }
    out
}

/// `setup.cfg`: `install_requires` and `tests_require` under `[options]`, and every key of
/// `[options.extras_require]`, on the key's line or on indented continuation lines.
fn setup_cfg(text: &str) -> Vec<(PropertyTool, String, usize)> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut key: Option<String> = None;
    for (i, raw) in text.lines().enumerate() {
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        let value = if raw.starts_with('[') {
            section = trimmed.trim_start_matches('[').trim_end_matches(']').trim().to_lowercase();
            key = None;
            continue;
        } else if raw.starts_with([' ', '\t']) {
            trimmed
        } else if let Some((k, v)) = raw.split_once(['=', ':']) {
            key = Some(k.trim().to_lowercase());
            v.trim()
        } else {
            key = None;
            continue;
        };
        let relevant = key.as_deref().is_some_and(|k| {
            (section == "options" && matches!(k, "install_requires" | "tests_require"))
                || section == "options.extras_require"
        });
        if relevant && strip_hash_comment(value).split([',', ';']).any(is_hypothesis) {
            out.push((PropertyTool::Hypothesis, "hypothesis".to_string(), i + 1));
        }
    }
    out
}

/// A token of Python source, as far as [`setup_py`] needs one.
#[derive(Debug, PartialEq)]
enum PyTok<'a> {
    Str { body: &'a str, line: usize },
    Name(&'a str),
    Punct(u8),
}

/// Python source → tokens: names, punctuation and string literals (comments and numbers dropped;
/// string bodies kept raw, prefixes such as `r`/`b`/`f` dropped).
fn py_tokens(text: &str) -> Vec<PyTok<'_>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line_no = 1;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line_no += 1;
                i += 1;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'\'' | b'"' => {
                // a string prefix (r, b, u, f and pairs) was read as a name just before
                if let Some(PyTok::Name(n)) = out.last()
                    && n.len() <= 2
                    && n.bytes().all(|x| b"rRbBuUfF".contains(&x))
                    && i >= n.len()
                    && &text[i - n.len()..i] == *n
                {
                    out.pop();
                }
                let triple = b.get(i + 1) == Some(&c) && b.get(i + 2) == Some(&c);
                let open = if triple { 3 } else { 1 };
                let start = i + open;
                let (start_line, mut j) = (line_no, start);
                let end = loop {
                    match b.get(j) {
                        None => break b.len(),
                        Some(b'\\') => j += 2,
                        Some(b'\n') if !triple => break j,
                        Some(&x) if x == c && (!triple || (b.get(j + 1) == Some(&c) && b.get(j + 2) == Some(&c))) => {
                            break j;
                        }
                        Some(_) => j += 1,
                    }
                };
                let end = end.min(b.len());
                line_no += text[start.min(end)..end].matches('\n').count();
                out.push(PyTok::Str { body: &text[start.min(end)..end], line: start_line });
                i = (end + open).min(b.len());
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let s = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                out.push(PyTok::Name(&text[s..i]));
            }
            c if c.is_ascii_digit() => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_') {
                    i += 1;
                }
            }
            c if c.is_ascii_punctuation() => {
                out.push(PyTok::Punct(c));
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// `setup()` keywords whose string values are requirements.
const SETUP_REQUIRES: &[&str] = &["install_requires", "tests_require", "extras_require", "setup_requires"];
/// Names whose lists hold something other than requirements.
const SETUP_NOT_REQUIRES: &[&str] = &[
    "keywords",
    "classifiers",
    "platforms",
    "packages",
    "py_modules",
    "package_data",
    "exclude_package_data",
    "data_files",
    "entry_points",
    "scripts",
    "exclude",
    "include",
    "project_urls",
    "namespace_packages",
];
const PY_KEYWORDS: &[&str] =
    &["in", "return", "and", "or", "not", "if", "else", "elif", "for", "while", "yield", "assert", "lambda", "is"];

/// `setup.py`, read as text: a string literal that is a `hypothesis` requirement, inside a list,
/// tuple or dict value (not one held by `keywords`, `classifiers`, …, and not a dict key) or as the
/// direct value of `install_requires=`/`tests_require=`/…. Comments, prose and call arguments
/// such as `print("hypothesis")` are not requirements.
fn setup_py(text: &str) -> Vec<(PropertyTool, String, usize)> {
    struct Frame<'a> {
        call: bool,
        owner: Option<&'a str>,
    }
    let toks = py_tokens(text);
    let mut stack: Vec<Frame<'_>> = Vec::new();
    // the name (or dict key) the next bracket's contents belong to
    let mut owner: Option<&str> = None;
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| &toks[p]);
        let next = toks.get(i + 1);
        match t {
            PyTok::Punct(b'=') => {
                if let Some(PyTok::Name(n)) = prev
                    && next != Some(&PyTok::Punct(b'='))
                {
                    owner = Some(n);
                }
            }
            PyTok::Punct(b':') => {
                owner = match prev {
                    Some(PyTok::Str { body, .. }) => Some(body),
                    Some(PyTok::Name(n)) => Some(n),
                    _ => owner,
                };
            }
            PyTok::Punct(c @ (b'(' | b'[' | b'{')) => {
                let call = *c == b'('
                    && match prev {
                        Some(PyTok::Name(n)) => !PY_KEYWORDS.contains(n),
                        Some(PyTok::Punct(p)) => matches!(p, b')' | b']'),
                        _ => false,
                    };
                let assigned = matches!(prev, Some(PyTok::Punct(b'=' | b':')));
                let inherited = stack.last().and_then(|f| f.owner);
                stack.push(Frame { call, owner: if assigned { owner } else { inherited } });
            }
            PyTok::Punct(b')' | b']' | b'}') => {
                stack.pop();
            }
            PyTok::Str { body, line } => {
                if !body.lines().any(is_hypothesis) {
                    continue;
                }
                let keyword_value = matches!(prev, Some(PyTok::Punct(b'=')))
                    && i >= 2
                    && matches!(&toks[i - 2], PyTok::Name(n) if SETUP_REQUIRES.contains(n));
                let dict_key = next == Some(&PyTok::Punct(b':'));
                let listed = match stack.last() {
                    Some(f) if !f.call => !f.owner.is_some_and(|o| SETUP_NOT_REQUIRES.contains(&o)),
                    _ => false,
                };
                if keyword_value || (listed && !dict_key) {
                    out.push((PropertyTool::Hypothesis, "hypothesis".to_string(), *line));
                }
            }
            _ => {}
        }
    }
    out
}

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

// ---- judging a run ---------------------------------------------------------------------------

/// What one run of `tool` showed: exit 0 is Proven, a non-zero exit is Refuted (with the minimized
/// counterexample when the output carries one), a timeout or a missing exit code is Unproven. A run
/// in which the test runner reports that no test ran at all (libtest `running 0 tests`, pytest exit
/// 5, nextest/vitest/jest "no tests") is Unproven whatever its exit code: nothing was checked.
pub fn judge(tool: PropertyTool, exit: Option<i32>, timed_out: bool, output: &str) -> PropertyResult {
    let name = tool.name();
    let unproven = |summary: String| PropertyResult { verdict: Verdict::Unproven, counterexample: None, summary };
    if timed_out {
        return unproven(format!("{name}: the run timed out; the property is neither shown nor refuted"));
    }
    let Some(code) = exit else {
        return unproven(format!(
            "{name}: the run ended without an exit code (not started or killed by a signal); nothing was shown"
        ));
    };
    let text = clean(output);
    if let Some(why) = nothing_ran(tool, code, &text) {
        return unproven(format!("{name}: {why} (exit {code}); nothing was checked"));
    }
    if code == 0 {
        return PropertyResult {
            verdict: Verdict::Proven,
            counterexample: None,
            summary: format!("{name}: the property held on every generated input (exit 0)"),
        };
    }
    let counterexample = extract(tool, &text);
    let summary = match &counterexample {
        None => {
            format!("{name}: the run failed (exit {code}) but the counterexample could not be captured from its output")
        }
        Some(cx) => {
            let shown = match cx.lines().count() {
                1 if cx.chars().count() <= 120 => format!("minimized counterexample: {cx}"),
                n => format!("minimized counterexample recorded ({n} lines)"),
            };
            let shrunk = shrink_count(tool, &text).map(|n| format!(", shrunk {n} time(s)")).unwrap_or_default();
            format!("{name} refuted the property (exit {code}); {shown}{shrunk}")
        }
    };
    PropertyResult { verdict: Verdict::Refuted, counterexample, summary }
}

/// Why the output shows that no test ran at all, if it does.
fn nothing_ran(tool: PropertyTool, code: i32, text: &str) -> Option<&'static str> {
    match tool {
        PropertyTool::Proptest | PropertyTool::Quickcheck => {
            let mut results = text.lines().filter(|l| l.starts_with("test result: "));
            let first = results.next()?;
            let none = |l: &str| l.contains(". 0 passed; 0 failed;");
            if code == 0 && none(first) && results.all(none) {
                return Some("cargo test ran no test (`running 0 tests`)");
            }
            text.lines().any(|l| l.contains("error: no tests to run")).then_some("nextest found no test to run")
        }
        PropertyTool::Hypothesis => (code == 5).then_some("the test runner collected no test"),
        PropertyTool::FastCheck => text
            .lines()
            .any(|l| l.contains("No test files found") || l.contains("No tests found"))
            .then_some("the test runner found no test"),
    }
}

/// The minimized counterexample `tool` printed in `output`: the last one when there are several
/// (the most shrunk), verbatim apart from terminal colour codes and a failure-report margin (pytest's
/// `E   `), cut at [`MAX_COUNTEREXAMPLE_CHARS`].
///
/// - proptest: `minimal failing input: …` up to the runner's tab-indented statistics, in both the
///   current two-line form and the older `Test failed: …; minimal failing input: x = 5`;
/// - quickcheck: the `(…)` after `[quickcheck] TEST FAILED[ (runtime error)]. Arguments: `;
/// - hypothesis: the call block after `Falsifying example:` / `Failing test case:` (or their
///   `explicit` forms), through its closing `)`; for a state machine, the steps through
///   `state.teardown()`;
/// - fast-check: the value after `Counterexample: ` (with any continuation before `Shrunk N time(s)`).
pub fn counterexample(tool: PropertyTool, output: &str) -> Option<String> {
    extract(tool, &clean(output))
}

fn extract(tool: PropertyTool, text: &str) -> Option<String> {
    let found = match tool {
        PropertyTool::Proptest => proptest_cx(text),
        PropertyTool::Quickcheck => quickcheck_cx(text),
        PropertyTool::Hypothesis => hypothesis_cx(text),
        PropertyTool::FastCheck => fast_check_cx(text),
    }?;
    let found = found.trim_end();
    if found.trim().is_empty() {
        return None;
    }
    Some(bound(found))
}

fn bound(s: &str) -> String {
    match s.char_indices().nth(MAX_COUNTEREXAMPLE_CHARS) {
        None => s.to_string(),
        Some((cut, _)) => format!("{}{TRUNCATED}", &s[..cut]),
    }
}

/// `output` without terminal escape sequences, with `\n` line ends only.
fn clean(output: &str) -> String {
    let mut out = String::with_capacity(output.len());
    let mut chars = output.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates, then one final byte in @..~
                Some('[') => {
                    for x in chars.by_ref() {
                        if ('@'..='~').contains(&x) {
                            break;
                        }
                    }
                }
                // OSC: up to BEL or ESC \
                Some(']') => {
                    while let Some(x) = chars.next() {
                        if x == '\u{7}' || (x == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' => {
                chars.next_if_eq(&'\n');
                out.push('\n');
            }
            c => out.push(c),
        }
    }
    out
}

fn proptest_cx(text: &str) -> Option<String> {
    const MARK: &str = "minimal failing input: ";
    let at = text.rfind(MARK)? + MARK.len();
    let mut lines = text[at..].split('\n');
    let mut block = vec![lines.next()?];
    // the value is `{:#?}`-formatted; the runner's statistics follow, each line opening with a tab
    for l in lines.take(MAX_BLOCK_LINES) {
        if l.trim().is_empty() || l.starts_with('\t') {
            break;
        }
        block.push(l);
    }
    Some(block.join("\n"))
}

fn quickcheck_cx(text: &str) -> Option<String> {
    const MARK: &str = "[quickcheck] TEST FAILED";
    let l = text.lines().rev().find(|l| l.contains(MARK))?;
    let rest = &l[l.find(MARK)? + MARK.len()..];
    if let Some(i) = rest.find("Arguments: ") {
        return Some(rest[i + "Arguments: ".len()..].trim_end().to_string());
    }
    // a property of no arguments failed: the empty argument list is the counterexample
    rest.contains("No Arguments Provided").then(|| "()".to_string())
}

fn hypothesis_cx(text: &str) -> Option<String> {
    const MARKS: [&str; 4] =
        ["Falsifying example:", "Falsifying explicit example:", "Failing test case:", "Failing explicit example:"];
    let lines: Vec<&str> = text.split('\n').collect();
    let (at, col, mark) = lines
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, l)| MARKS.iter().filter_map(|m| l.find(m).map(|c| (i, c, *m))).min_by_key(|&(_, c, _)| c))?;
    // pytest repeats the report in its failure section behind an `E   ` margin
    let margin = &lines[at][..col];
    let head = lines[at][col + mark.len()..].trim();
    let body = lines[at + 1..].iter().take(MAX_BLOCK_LINES).map_while(|l| l.strip_prefix(margin));
    if head.ends_with('(') {
        // `test_name(` … `)`: the arguments, one per indented line
        let mut block = vec![head];
        for l in body {
            if l.trim_end() == ")" {
                block.push(")");
                return Some(block.join("\n"));
            }
            if !l.starts_with([' ', '\t']) {
                break;
            }
            block.push(l);
        }
        return Some(block.join("\n"));
    }
    if head.is_empty() || head == "<state machine>" {
        // a state machine: the steps, through `state.teardown()`
        let mut block = Vec::new();
        for l in body {
            if l.trim().is_empty() {
                break;
            }
            block.push(l);
            if l.trim() == "state.teardown()" {
                break;
            }
        }
        return (!block.is_empty()).then(|| block.join("\n"));
    }
    Some(head.to_string())
}

fn fast_check_cx(text: &str) -> Option<String> {
    const MARK: &str = "Counterexample: ";
    let lines: Vec<&str> = text.split('\n').collect();
    let (at, col) = lines.iter().enumerate().rev().find_map(|(i, l)| l.find(MARK).map(|c| (i, c)))?;
    let margin = &lines[at][..col];
    let mut block = vec![&lines[at][col + MARK.len()..]];
    // a value whose printed form spans lines runs on until `Shrunk N time(s)`
    let mut more = Vec::new();
    for l in lines[at + 1..].iter().take(MAX_BLOCK_LINES) {
        let l = l.strip_prefix(margin).unwrap_or(l);
        if l.starts_with("Shrunk ") {
            block.append(&mut more);
            break;
        }
        if l.trim().is_empty() {
            break;
        }
        more.push(l);
    }
    Some(block.join("\n"))
}

/// fast-check's `Shrunk N time(s)` after the last counterexample.
fn shrink_count(tool: PropertyTool, text: &str) -> Option<u64> {
    if tool != PropertyTool::FastCheck {
        return None;
    }
    let after = &text[text.rfind("Counterexample: ")?..];
    let n = after.lines().find_map(|l| l.trim_start().strip_prefix("Shrunk "))?;
    n.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-output").join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[track_caller]
    fn check_cx(tool: PropertyTool, name: &str, expected: &str) {
        assert_eq!(counterexample(tool, &fixture(name)).as_deref(), Some(expected), "{name}");
    }

    // ---- counterexamples in real outputs ----

    #[test]
    fn proptest_counterexamples() {
        check_cx(PropertyTool::Proptest, "proptest-fail.txt", "x = 100");
        check_cx(PropertyTool::Proptest, "proptest-fail-multiline.txt", "xs = [\n    337,\n], y = 663");
        // proptest 1.0: `Test failed: …; minimal failing input: x = 100` on one line
        check_cx(PropertyTool::Proptest, "proptest-1.0-fail.txt", "x = 100");
        assert_eq!(counterexample(PropertyTool::Proptest, &fixture("proptest-pass.txt")), None);
    }

    #[test]
    fn quickcheck_counterexamples() {
        check_cx(PropertyTool::Quickcheck, "quickcheck-fail.txt", "(100)");
        check_cx(PropertyTool::Quickcheck, "quickcheck-fail-pair.txt", "([45], 255)");
        check_cx(PropertyTool::Quickcheck, "quickcheck-fail-runtime.txt", "([])");
        assert_eq!(counterexample(PropertyTool::Quickcheck, &fixture("quickcheck-pass.txt")), None);
        assert_eq!(
            counterexample(PropertyTool::Quickcheck, "[quickcheck] TEST FAILED. No Arguments Provided").as_deref(),
            Some("()")
        );
    }

    #[test]
    fn hypothesis_counterexamples() {
        // pytest, two failing tests: the last report, without pytest's `E   ` margin
        check_cx(PropertyTool::Hypothesis, "hypothesis-fail.txt", "test_pair(\n    xs=[],\n    y=1000,\n)");
        // an older Hypothesis says `Falsifying example:`
        check_cx(PropertyTool::Hypothesis, "hypothesis-6.100-fail.txt", "test_pair(\n    xs=[],\n    y=1000,\n)");
        // called directly, not under pytest
        check_cx(PropertyTool::Hypothesis, "hypothesis-fail-direct.txt", "test_pair(\n    xs=[],\n    y=1000,\n)");
        check_cx(
            PropertyTool::Hypothesis,
            "hypothesis-stateful-fail.txt",
            "state = Counter()\nstate.below_hundred()\nstate.add(n=50)\nstate.below_hundred()\nstate.add(n=50)\n\
             state.below_hundred()\nstate.teardown()",
        );
        assert_eq!(counterexample(PropertyTool::Hypothesis, &fixture("hypothesis-pass.txt")), None);
    }

    #[test]
    fn hypothesis_single_line_and_explicit_forms() {
        let out = "Falsifying example: test_x(x=5)\nTraceback (most recent call last):";
        assert_eq!(counterexample(PropertyTool::Hypothesis, out).as_deref(), Some("test_x(x=5)"));
        let out = "Failing explicit example: test_x(\n    x=0,\n)\nmore output";
        assert_eq!(counterexample(PropertyTool::Hypothesis, out).as_deref(), Some("test_x(\n    x=0,\n)"));
    }

    #[test]
    fn fast_check_counterexamples() {
        check_cx(PropertyTool::FastCheck, "fastcheck-fail.txt", "[100]");
        check_cx(PropertyTool::FastCheck, "fastcheck-fail-pair.txt", "[[988],12]");
        // vitest through @fast-check/vitest, with its colour codes
        check_cx(PropertyTool::FastCheck, "fastcheck-vitest-fail.txt", "[100]");
        assert_eq!(counterexample(PropertyTool::FastCheck, &fixture("fastcheck-pass.txt")), None);
    }

    #[test]
    fn a_tool_never_reads_another_tools_report() {
        assert_eq!(counterexample(PropertyTool::Proptest, &fixture("hypothesis-fail.txt")), None);
        assert_eq!(counterexample(PropertyTool::Hypothesis, &fixture("proptest-fail.txt")), None);
        assert_eq!(counterexample(PropertyTool::FastCheck, &fixture("quickcheck-fail.txt")), None);
        assert_eq!(counterexample(PropertyTool::Quickcheck, &fixture("fastcheck-fail.txt")), None);
    }

    #[test]
    fn the_last_counterexample_wins_and_length_is_bounded() {
        let out = "Counterexample: [5000]\nShrunk 1 time(s)\n\nCounterexample: [100]\nShrunk 26 time(s)\n";
        assert_eq!(counterexample(PropertyTool::FastCheck, out).as_deref(), Some("[100]"));
        let long = format!("minimal failing input: s = \"{}\"\n\tsuccesses: 0\n", "a".repeat(5000));
        let cx = counterexample(PropertyTool::Proptest, &long).unwrap();
        assert!(cx.ends_with(TRUNCATED), "{cx}");
        assert_eq!(cx.chars().count(), MAX_COUNTEREXAMPLE_CHARS + TRUNCATED.chars().count());
    }

    #[test]
    fn windows_line_ends_are_read() {
        let out = fixture("hypothesis-fail-direct.txt").replace('\n', "\r\n");
        assert_eq!(
            counterexample(PropertyTool::Hypothesis, &out).as_deref(),
            Some("test_pair(\n    xs=[],\n    y=1000,\n)")
        );
    }

    // ---- judging ----

    #[test]
    fn exit_zero_is_proven() {
        for (tool, name) in [
            (PropertyTool::Proptest, "proptest-pass.txt"),
            (PropertyTool::Quickcheck, "quickcheck-pass.txt"),
            (PropertyTool::Hypothesis, "hypothesis-pass.txt"),
            (PropertyTool::FastCheck, "fastcheck-pass.txt"),
        ] {
            let r = judge(tool, Some(0), false, &fixture(name));
            assert_eq!((r.verdict, r.counterexample.as_deref()), (Verdict::Proven, None), "{name}: {}", r.summary);
        }
    }

    #[test]
    fn a_failure_is_refuted_with_its_minimized_counterexample() {
        let r = judge(PropertyTool::Proptest, Some(101), false, &fixture("proptest-fail.txt"));
        assert_eq!(r.verdict, Verdict::Refuted);
        assert_eq!(r.counterexample.as_deref(), Some("x = 100"));
        assert_eq!(r.summary, "proptest refuted the property (exit 101); minimized counterexample: x = 100");
        let r = judge(PropertyTool::Hypothesis, Some(1), false, &fixture("hypothesis-fail.txt"));
        assert_eq!(r.verdict, Verdict::Refuted);
        assert_eq!(r.summary, "hypothesis refuted the property (exit 1); minimized counterexample recorded (4 lines)");
        let r = judge(PropertyTool::FastCheck, Some(1), false, &fixture("fastcheck-fail.txt"));
        assert_eq!(
            r.summary,
            "fast-check refuted the property (exit 1); minimized counterexample: [100], shrunk 26 time(s)"
        );
    }

    #[test]
    fn a_failure_without_a_counterexample_is_still_refuted() {
        let out = "error[E0425]: cannot find value `y` in this scope\nerror: could not compile `demo`";
        let r = judge(PropertyTool::Proptest, Some(101), false, out);
        assert_eq!((r.verdict, r.counterexample), (Verdict::Refuted, None));
        assert!(r.summary.contains("could not be captured"), "{}", r.summary);
    }

    #[test]
    fn a_timeout_or_a_missing_exit_is_unproven() {
        // even when the partial output already holds a counterexample
        let r = judge(PropertyTool::Hypothesis, Some(1), true, &fixture("hypothesis-fail.txt"));
        assert_eq!((r.verdict, r.counterexample), (Verdict::Unproven, None));
        assert!(r.summary.contains("timed out"), "{}", r.summary);
        let r = judge(PropertyTool::FastCheck, None, false, "");
        assert_eq!(r.verdict, Verdict::Unproven);
        assert!(r.summary.contains("without an exit code"), "{}", r.summary);
    }

    #[test]
    fn a_run_in_which_no_test_ran_is_unproven() {
        for (tool, exit, name) in [
            (PropertyTool::Proptest, 0, "proptest-none.txt"),
            (PropertyTool::Hypothesis, 5, "hypothesis-none.txt"),
            (PropertyTool::FastCheck, 1, "fastcheck-vitest-none.txt"),
        ] {
            let r = judge(tool, Some(exit), false, &fixture(name));
            assert_eq!(r.verdict, Verdict::Unproven, "{name}: {}", r.summary);
            assert!(r.summary.ends_with("nothing was checked"), "{}", r.summary);
        }
    }

    #[test]
    fn results_serialize_in_kebab_case() {
        let r = judge(PropertyTool::FastCheck, Some(1), false, &fixture("fastcheck-fail.txt"));
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!((v["verdict"].as_str(), v["counterexample"].as_str()), (Some("refuted"), Some("[100]")));
        let d = Detected {
            tool: PropertyTool::FastCheck,
            package: "fast-check".into(),
            manifest: "package.json".into(),
            line: 3,
        };
        assert_eq!(serde_json::to_value(&d).unwrap()["tool"], "fast-check");
        let back: Detected = serde_json::from_value(serde_json::to_value(&d).unwrap()).unwrap();
        assert_eq!(back, d);
    }

    #[test]
    fn tool_names_and_languages() {
        let names: Vec<_> = PropertyTool::ALL.iter().map(|t| (t.name(), t.language())).collect();
        assert_eq!(
            names,
            [("proptest", "rust"), ("quickcheck", "rust"), ("hypothesis", "python"), ("fast-check", "typescript")]
        );
        assert_eq!(PropertyTool::FastCheck.languages(), ["typescript", "javascript"]);
    }

    // ---- detection ----

    fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    fn found(files: &[(&str, &str)]) -> Vec<(PropertyTool, String, String, usize)> {
        let dir = repo(files);
        detect(dir.path()).into_iter().map(|d| (d.tool, d.package, d.manifest, d.line)).collect()
    }

    fn one(tool: PropertyTool, package: &str, manifest: &str, line: usize) -> (PropertyTool, String, String, usize) {
        (tool, package.to_string(), manifest.to_string(), line)
    }

    #[test]
    fn cargo_dependencies_of_every_kind() {
        let cargo = "[package]\nname = \"demo\"\ndescription = \"proptest and quickcheck, someday\"\n\
                     # proptest = \"1\"\n\n[dev-dependencies]\nproptest = \"1\"\n";
        assert_eq!(found(&[("Cargo.toml", cargo)]), [one(PropertyTool::Proptest, "proptest", "Cargo.toml", 7)]);
        let ws = "[workspace]\nmembers = [\"a\"]\n\n[workspace.dependencies]\nquickcheck = \"1\"\n";
        let member = "[package]\nname = \"a\"\n\n[target.'cfg(unix)'.dev-dependencies]\nqc = { package = \"quickcheck\", version = \"1\" }\n\n\
                      [dev-dependencies.proptest]\nversion = \"1\"\n";
        assert_eq!(
            found(&[("Cargo.toml", ws), ("a/Cargo.toml", member)]),
            [
                one(PropertyTool::Quickcheck, "quickcheck", "Cargo.toml", 5),
                one(PropertyTool::Quickcheck, "quickcheck", "a/Cargo.toml", 5),
                one(PropertyTool::Proptest, "proptest", "a/Cargo.toml", 7),
            ]
        );
    }

    #[test]
    fn companion_crates_alone_are_not_the_tool() {
        let cargo =
            "[package]\nname = \"demo\"\n\n[dev-dependencies]\nproptest-derive = \"0.5\"\nquickcheck_macros = \"1\"\n";
        assert_eq!(found(&[("Cargo.toml", cargo)]), []);
    }

    #[test]
    fn a_mention_outside_the_dependency_lists_is_not_detected() {
        let pyproject = "[project]\nname = \"demo\"\ndescription = \"hypothesis\"\nkeywords = [\"hypothesis\"]\n\
                         dependencies = [\"attrs\"]  # hypothesis later\n";
        let setup_py = "# install_requires=['hypothesis']\nfrom setuptools import setup\n\n\
                        setup(\n    name='demo',\n    description='hypothesis',\n    keywords=['hypothesis'],\n\
                        \x20   long_description='uses hypothesis for tests',\n    install_requires=['attrs'],\n)\n";
        let package = "{\n  \"name\": \"demo\",\n  \"description\": \"fast-check\",\n  \"keywords\": [\"fast-check\"],\n\
                       \x20 \"peerDependencies\": {},\n  \"dependencies\": {\"left-pad\": \"1\"}\n}\n";
        let reqs = "# hypothesis\nattrs  # not hypothesis\n-r hypothesis.txt\n";
        let cfg = "[metadata]\nname = hypothesis-demo\ndescription = hypothesis\n\n[options]\ninstall_requires =\n    attrs\n";
        assert_eq!(
            found(&[
                ("pyproject.toml", pyproject),
                ("setup.py", setup_py),
                ("package.json", package),
                ("requirements.txt", reqs),
                ("setup.cfg", cfg),
            ]),
            []
        );
    }

    #[test]
    fn python_manifests() {
        let pyproject = "[project]\nname = \"demo\"\ndependencies = [\"attrs\"]\n\n[project.optional-dependencies]\n\
                         test = [\n  \"pytest\",\n  \"Hypothesis[numpy] >= 6.0\",\n]\n";
        let poetry = "[tool.poetry]\nname = \"demo\"\n\n[tool.poetry.group.test.dependencies]\nhypothesis = \"^6\"\n";
        let groups = "[dependency-groups]\ndev = [\"pytest\", \"hypothesis>=6; python_version >= '3.9'\"]\n";
        let reqs = "pytest==8.0\nhypothesis==6.100.0 \\\n    --hash=sha256:abc\n";
        let cfg =
            "[options]\ninstall_requires = attrs\n\n[options.extras_require]\ntest =\n    pytest\n    hypothesis>=6\n";
        let setup_py = "from setuptools import setup\n\nTESTS = [\n    \"pytest\",\n    \"hypothesis>=6\",\n]\n\
                        setup(name=\"demo\", extras_require={\"test\": TESTS})\n";
        let got = found(&[
            ("a/pyproject.toml", pyproject),
            ("b/pyproject.toml", poetry),
            ("c/pyproject.toml", groups),
            ("requirements/test.txt", reqs),
            ("setup.cfg", cfg),
            ("setup.py", setup_py),
        ]);
        let h = |m: &str, l: usize| one(PropertyTool::Hypothesis, "hypothesis", m, l);
        assert_eq!(
            got,
            [
                h("a/pyproject.toml", 8),
                h("b/pyproject.toml", 5),
                h("c/pyproject.toml", 2),
                h("requirements/test.txt", 2),
                h("setup.cfg", 7),
                h("setup.py", 5),
            ]
        );
    }

    #[test]
    fn setup_py_keyword_values() {
        let setup_py = "setup(\n    tests_require='hypothesis',\n    extras_require={'hypothesis': ['pytest']},\n)\n";
        assert_eq!(found(&[("setup.py", setup_py)]), [one(PropertyTool::Hypothesis, "hypothesis", "setup.py", 2)]);
    }

    #[test]
    fn package_json_dependencies() {
        let package = "{\n  \"name\": \"demo\",\n  \"scripts\": {\"fast-check\": \"vitest\"},\n  \"devDependencies\": {\n\
                       \x20   \"vitest\": \"^4\",\n    \"@fast-check/vitest\": \"^0.5\",\n    \"fast-check\": \"^4\"\n  }\n}\n";
        assert_eq!(
            found(&[("web/package.json", package)]),
            [
                one(PropertyTool::FastCheck, "@fast-check/vitest", "web/package.json", 6),
                one(PropertyTool::FastCheck, "fast-check", "web/package.json", 7),
            ]
        );
    }

    #[test]
    fn vendored_hidden_ignored_and_deep_trees_are_skipped() {
        let dep = "[dev-dependencies]\nproptest = \"1\"\n";
        let npm = "{\"dependencies\": {\"fast-check\": \"4\"}}";
        let got = found(&[
            ("target/x/Cargo.toml", dep),
            ("node_modules/x/package.json", npm),
            (".hidden/Cargo.toml", dep),
            ("scratch/Cargo.toml", dep),
            (".gitignore", "scratch/\n"),
            ("a/b/c/d/e/Cargo.toml", dep),
            ("a/b/c/d/e/f/Cargo.toml", dep),
        ]);
        assert_eq!(got, [one(PropertyTool::Proptest, "proptest", "a/b/c/d/e/Cargo.toml", 2)]);
    }

    #[test]
    fn malformed_manifests_declare_nothing() {
        let got = found(&[
            ("Cargo.toml", "[dev-dependencies\nproptest = \"1\"\n"),
            ("package.json", "{\"devDependencies\": {\"fast-check\": \"4\"}"),
            ("pyproject.toml", "[project\ndependencies = [\"hypothesis\"]\n"),
        ]);
        assert_eq!(got, []);
    }

    #[test]
    fn requirement_names() {
        assert_eq!(requirement_name("hypothesis"), Some("hypothesis"));
        assert_eq!(requirement_name("hypothesis[numpy]>=6"), Some("hypothesis"));
        assert_eq!(requirement_name("hypothesis ; python_version>'3'"), Some("hypothesis"));
        assert_eq!(requirement_name("hypothesis @ https://example.invalid/h.whl"), Some("hypothesis"));
        assert_eq!(requirement_name("uses hypothesis for tests"), None);
        assert_eq!(requirement_name("hypothesis-jsonschema"), Some("hypothesis-jsonschema"));
        assert!(!is_hypothesis("hypothesis-jsonschema"));
        assert!(is_hypothesis("Hypothesis"));
    }
}
