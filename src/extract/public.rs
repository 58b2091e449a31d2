//! The public definitions a file makes, read from its text alone, with their signatures: what a
//! fix deletes when a public function or class of the base is gone from the working tree, or
//! changes when its signature differs (not a local edit either way: every caller rests on it).

use std::collections::{BTreeMap, BTreeSet};

use super::{Context, Lang, extract_source};
use crate::facts::{SplitBuilder, rel};

/// The top-level public definitions of `path` (its text `src`) as `(kind, name)`: functions,
/// classes, structs, enums, traits and the like whose visibility is public (`pub`, a Python name
/// without a leading underscore, an `export`). Empty for a file of no indexed language.
pub fn public_definitions(path: &str, src: &str) -> BTreeSet<(String, String)> {
    public_signatures(path, src).into_keys().collect()
}

/// [`public_definitions`], each with its signature: the text of its first line, its whitespace
/// collapsed (`def split(total, n):`, `export function split(total, n) {`).
pub fn public_signatures(path: &str, src: &str) -> BTreeMap<(String, String), String> {
    let Some(lang) = Lang::from_path(path) else { return BTreeMap::new() };
    let lines: Vec<&str> = src.lines().collect();
    let mut out = SplitBuilder::default();
    extract_source(&mut Context::new(), lang, path, src, &mut out);
    let (core, detail) = out.finish();
    let public: BTreeSet<(String, u32)> = detail
        .all_rows()
        .filter(|(id, _)| *id == rel::VISIBILITY)
        .filter(|(_, c)| matches!(detail.str(c[3]), "pub" | "public" | "exported" | "default"))
        .map(|(_, c)| (detail.str(c[1]).to_string(), c[2]))
        .collect();
    let members: BTreeSet<String> =
        core.all_rows().filter(|(id, _)| *id == rel::MEMBER).map(|(_, c)| core.str(c[2]).to_string()).collect();
    core.all_rows()
        .filter(|(id, _)| *id == rel::DEFINES)
        .map(|(_, c)| (core.str(c[1]).to_string(), core.str(c[2]).to_string(), c[3]))
        .filter(|(name, kind, line)| {
            !matches!(kind.as_str(), "variable" | "constant" | "import" | "parameter" | "field")
                && !members.contains(name)
                && public.contains(&(name.clone(), *line))
        })
        .map(|(name, kind, line)| {
            let text = lines.get(line.saturating_sub(1) as usize).copied().unwrap_or_default();
            ((kind, name), text.split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .collect()
}

/// Every name `path` (its text `src`) binds at any level: definitions, imports, assignments. A
/// public name moved elsewhere and imported back is still bound.
pub fn bound_names(path: &str, src: &str) -> BTreeSet<String> {
    let Some(lang) = Lang::from_path(path) else { return BTreeSet::new() };
    let mut out = SplitBuilder::default();
    extract_source(&mut Context::new(), lang, path, src, &mut out);
    let (core, _) = out.finish();
    let mut names: BTreeSet<String> =
        core.all_rows().filter(|(id, _)| *id == rel::DEFINES).map(|(_, c)| core.str(c[1]).to_string()).collect();
    // an imported name is bound as its alias (the name itself without one)
    names.extend(core.all_rows().filter(|(id, _)| *id == rel::IMPORTED_NAME).map(|(_, c)| {
        let alias = core.str(c[4]);
        if alias.is_empty() { core.str(c[3]).to_string() } else { alias.to_string() }
    }));
    names
}

/// A function or method a file defines, where its text is: 1-based lines, and 1-based byte
/// columns (`end_col` one past its last byte).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FnSpan {
    pub name: String,
    pub line: u32,
    pub col: u32,
    pub end_line: u32,
    pub end_col: u32,
}

/// The functions and methods `path` (its text `src`) defines, with their spans: declared ones,
/// and variables whose value is a function (`const split = (a, b) => …`, `= function (…) {…}`).
pub fn functions(path: &str, src: &str) -> Vec<FnSpan> {
    let Some(lang) = Lang::from_path(path) else { return Vec::new() };
    let mut out = SplitBuilder::default();
    extract_source(&mut Context::new(), lang, path, src, &mut out);
    let (core, detail) = out.finish();
    let defined: Vec<(String, u32, bool)> = core
        .all_rows()
        .filter(|(id, _)| *id == rel::DEFINES)
        .map(|(_, c)| (core.str(c[1]).to_string(), c[3], matches!(core.str(c[2]), "function" | "method")))
        .collect();
    let offsets: Vec<usize> = std::iter::once(0).chain(src.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let text_of = |f: &FnSpan| -> &str {
        let at = |l: u32, c: u32| offsets.get(l as usize - 1).map(|o| (o + c as usize - 1).min(src.len()));
        at(f.line, f.col).zip(at(f.end_line, f.end_col)).and_then(|(a, b)| src.get(a..b)).unwrap_or("")
    };
    let holds_a_function = |f: &FnSpan| {
        let value = text_of(f).split_once('=').map_or("", |(_, v)| v).trim_start();
        let value = value.strip_prefix("async").map_or(value, str::trim_start);
        value.starts_with("function") || arrow_head(value)
    };
    detail
        .all_rows()
        .filter(|(id, _)| *id == rel::DEF_SPAN)
        .map(|(_, c)| FnSpan {
            name: detail.str(c[1]).to_string(),
            line: c[2],
            col: c[3],
            end_line: c[4],
            end_col: c[5],
        })
        .filter(|f| {
            defined.iter().any(|(n, l, function)| *n == f.name && *l == f.line && (*function || holds_a_function(f)))
        })
        .collect()
}

/// Whether `value` starts an arrow function: `(…) =>` or `name =>`.
fn arrow_head(value: &str) -> bool {
    let head = match value.strip_prefix('(') {
        Some(rest) => rest.split_once(')').map(|(_, after)| after),
        None => Some(value.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_' || c == '$')),
    };
    head.is_some_and(|h| h.trim_start().trim_start_matches(|c: char| c != '=' && c != '{').starts_with("=>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_functions_and_classes_of_each_language() {
        let py = public_definitions(
            "m.py",
            "def split(a, b):\n    return a\n\n\ndef _helper():\n    pass\n\n\nclass Cart:\n    def add(self):\n        pass\n",
        );
        let names: Vec<&str> = py.iter().map(|(_, n)| n.as_str()).collect();
        assert!(names.contains(&"split") && names.contains(&"Cart"), "{py:?}");
        assert!(!names.contains(&"_helper"), "{py:?}");
        let js = public_definitions(
            "m.js",
            "export function split(a) { return a; }\nfunction inner() {}\nexport class Cart {}\n",
        );
        let names: Vec<&str> = js.iter().map(|(_, n)| n.as_str()).collect();
        assert!(names.contains(&"split") && names.contains(&"Cart") && !names.contains(&"inner"), "{js:?}");
        let rs = public_definitions("src/lib.rs", "pub fn split() {}\nfn inner() {}\npub struct Cart;\n");
        let names: Vec<&str> = rs.iter().map(|(_, n)| n.as_str()).collect();
        assert!(names.contains(&"split") && names.contains(&"Cart") && !names.contains(&"inner"), "{rs:?}");
    }

    #[test]
    fn arrow_functions_and_function_expressions_are_functions() {
        let js = "export const split = (total, n) => [total];\nconst twice = x => x * 2;\nexport const mul = function (a, b) { return a * b; };\nconst N = 3;\nconst f = compute(1);\n";
        let names: Vec<String> = functions("m.js", js).into_iter().map(|f| f.name).collect();
        for n in ["split", "twice", "mul"] {
            assert!(names.contains(&n.to_string()), "{n}: {names:?}");
        }
        assert!(!names.contains(&"N".to_string()) && !names.contains(&"f".to_string()), "{names:?}");
    }
}
