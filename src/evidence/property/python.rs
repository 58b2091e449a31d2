//! The Python manifests that can declare Hypothesis: `pyproject.toml`, `requirements*.txt`,
//! `setup.cfg` and `setup.py` (read as tokens, never run).

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::PropertyTool;
use super::detect::{line, subtable, tables};

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
pub(super) fn requirement_name(s: &str) -> Option<&str> {
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

pub(super) fn is_hypothesis(requirement: &str) -> bool {
    requirement_name(requirement).is_some_and(|n| normalize(n) == "hypothesis")
}

/// `pyproject.toml`: PEP 621 `dependencies` and `optional-dependencies`, PEP 735
/// `[dependency-groups]`, Poetry's dependency tables and groups, and the dev-dependency lists of
/// PDM, uv and Hatch environments.
pub(super) fn pyproject(text: &str) -> Vec<(PropertyTool, String, usize)> {
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
pub(super) fn requirements(text: &str) -> Vec<(PropertyTool, String, usize)> {
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
pub(super) fn setup_cfg(text: &str) -> Vec<(PropertyTool, String, usize)> {
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
pub(super) fn setup_py(text: &str) -> Vec<(PropertyTool, String, usize)> {
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
