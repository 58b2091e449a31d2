//! A test that existed at the base can keep every assertion and still judge nothing: its
//! assertions' failures caught (`try: … except AssertionError: pass`), the name it tests rebound
//! in the test file (`split = lambda total, n: [334, 333, 333]`), or the name it imports bound to
//! another definition (`from calc.ops import add2 as add`). Each is a judging change. A renamed
//! function imported under its new name, a function moved to another module, and new tests are
//! not.

use std::collections::{BTreeMap, BTreeSet};

use super::expectations::of_tests;
use crate::extract::lang::Lang;
use crate::extract::test_defs::tests_of;

/// How the text `now` of test file `path` (`before` at the base) disarms the tests that existed
/// at the base, as `path: …` lines; empty when it does not, or when the base had no tests there.
pub fn disarmed(path: &str, before: &str, now: &str) -> Vec<String> {
    let Some(lang) = Lang::from_path(path).filter(|l| *l != Lang::Rust) else { return Vec::new() };
    let had = of_tests(path, before);
    if had.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Some(line) = caught_in_old_tests(path, before, now, &had) {
        out.push(format!("{path}: a test that existed at the base now catches its assertions' failures (`{line}`)"));
    }
    let (was, is) = (imports(lang, before), imports(lang, now));
    for (bound, source) in &is {
        if let Some(old) = was.get(bound)
            && old.1 != source.1
        {
            out.push(format!(
                "{path}: imports `{bound}` from another definition (`{}` where the base had `{}`): its tests no longer call what they named",
                source.1, old.1
            ));
        }
    }
    if lang == Lang::Python {
        let old: BTreeSet<&str> = before.lines().map(str::trim).collect();
        for l in now.lines().map(str::trim).filter(|l| !old.contains(l)) {
            if let Some(name) = rebinds(l).filter(|n| is.contains_key(*n)) {
                out.push(format!(
                    "{path}: rebinds `{name}`, which it imports, so its tests no longer call the code under test (`{}`)",
                    crate::text::short(l)
                ));
            }
        }
    }
    out
}

/// The names test file `path` imported at the base (`before`) that `now` no longer imports,
/// where their module (read under `root`) still defines them and `now` imports another name from
/// that module instead: its tests were switched away from the code under test, which stays as it
/// was (`add` left as it was, the test now calling a new `add2`). A renamed function is gone from
/// its module, and is not this.
pub fn switched(root: &std::path::Path, path: &str, before: &str, now: &str) -> Vec<String> {
    let Some(lang) = Lang::from_path(path).filter(|l| *l != Lang::Rust) else { return Vec::new() };
    if of_tests(path, before).is_empty() {
        return Vec::new();
    }
    let (was, is) = (imports(lang, before), imports(lang, now));
    let mut out = Vec::new();
    for (bound, (module, name)) in was.iter().filter(|(b, _)| !is.contains_key(*b)) {
        // the same definition under another name (`import add as plus`) is a rename in the test
        if is.values().any(|(m, n)| m == module && n == name) {
            continue;
        }
        let Some((instead, _)) = is.iter().find(|(b, (m, _))| m == module && !was.contains_key(*b)) else { continue };
        let Some(text) = module_text(root, path, lang, module) else { continue };
        if defines(&text, name) {
            out.push(format!(
                "{path}: no longer calls `{bound}`, which `{module}` still defines, and calls `{instead}` instead: its tests were moved off the code they judged"
            ));
        }
    }
    out
}

/// The text of the module an import in test file `path` names, when it is a file of the
/// repository at `root`: a Python dotted module (absolute, or relative to the test's package), a
/// relative JavaScript/TypeScript specifier.
fn module_text(root: &std::path::Path, path: &str, lang: Lang, module: &str) -> Option<String> {
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    let candidates: Vec<String> = match lang {
        Lang::Python => {
            let (base, rest) = match module.trim_start_matches('.') {
                m if module.starts_with('.') => (dir.to_string(), m),
                m => (String::new(), m),
            };
            let rel = rest.replace('.', "/");
            let join = |p: &str| if base.is_empty() { p.to_string() } else { format!("{base}/{p}") };
            vec![join(&format!("{rel}.py")), join(&format!("{rel}/__init__.py"))]
        }
        _ if module.starts_with('.') => {
            let joined = std::path::Path::new(dir).join(module);
            let mut parts: Vec<String> = Vec::new();
            for c in joined.components() {
                match c {
                    std::path::Component::ParentDir => {
                        parts.pop();
                    }
                    std::path::Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
                    _ => {}
                }
            }
            let p = parts.join("/");
            vec![p.clone(), format!("{p}.js"), format!("{p}.ts"), format!("{p}/index.js"), format!("{p}/index.ts")]
        }
        _ => Vec::new(),
    };
    candidates.iter().find_map(|c| std::fs::read_to_string(root.join(c)).ok())
}

/// Whether module text `text` defines `name` at its top level.
fn defines(text: &str, name: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start_matches("export ").trim_start_matches("async ");
        [
            format!("def {name}("),
            format!("class {name}"),
            format!("function {name}("),
            format!("const {name} ="),
            format!("let {name} ="),
        ]
        .iter()
        .any(|p| l.starts_with(p.as_str()))
            || l.strip_prefix(name)
                .is_some_and(|r| r.trim_start().starts_with('=') && !r.trim_start().starts_with("=="))
    })
}

/// The first line added inside a test that existed at the base that catches failures: Python's
/// `except` (or `contextlib.suppress`), JavaScript's `catch`.
fn caught_in_old_tests(
    path: &str,
    before: &str,
    now: &str,
    had: &BTreeMap<String, Vec<super::expectations::Expectation>>,
) -> Option<String> {
    let old: BTreeSet<&str> = before.lines().map(str::trim).collect();
    let lines: Vec<&str> = now.lines().collect();
    for t in tests_of(path, now).into_iter().filter(|t| had.contains_key(&t.name)) {
        let from = t.line.saturating_sub(1) as usize;
        let to = (if t.end > t.line { t.end as usize } else { super::expectations::block_end(&lines, from) })
            .min(lines.len());
        for l in lines[from..to].iter().map(|l| l.trim()) {
            let catches = l.starts_with("except")
                || l.contains("suppress(")
                || l.starts_with("} catch")
                || l.starts_with("catch")
                || l.contains(".catch(");
            if catches && !old.contains(l) {
                return Some(crate::text::short(l).to_string());
            }
        }
    }
    None
}

/// The name a Python line binds at its start (`name = …`, `name: T = …`, `def name(`,
/// `class name`), if any.
fn rebinds(l: &str) -> Option<&str> {
    let ident = |s: &str| -> Option<usize> {
        let n = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
        (n > 0 && !s.starts_with(|c: char| c.is_ascii_digit())).then_some(n)
    };
    for kw in ["def ", "class ", "async def "] {
        if let Some(rest) = l.strip_prefix(kw) {
            return ident(rest).map(|n| &rest[..n]);
        }
    }
    let n = ident(l)?;
    let rest = l[n..].trim_start();
    let assigns = (rest.starts_with('=') && !rest.starts_with("=="))
        || (rest.starts_with(':') && rest.contains('=') && !rest.contains("=="));
    assigns.then(|| &l[..n])
}

/// The names a file's imports bind, each with its module and the name it had there:
/// Python's `from m import a, b as c` (parenthesized lists too), JavaScript's
/// `import { a, b as c } from 'm'` and `import a from 'm'`.
fn imports(lang: Lang, text: &str) -> BTreeMap<String, (String, String)> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let mut stmt = line.trim().to_string();
        let open = |s: &str| s.matches(['(', '{']).count() > s.matches([')', '}']).count();
        while open(&stmt)
            && let Some(next) = lines.next()
        {
            stmt.push(' ');
            stmt.push_str(next.trim());
        }
        let parsed = match lang {
            Lang::Python => python_from(&stmt),
            _ => js_import(&stmt),
        };
        for (module, name, bound) in parsed {
            out.insert(bound, (module, name));
        }
    }
    out
}

/// `from m import a, b as c` → `(m, a, a)`, `(m, b, c)`.
fn python_from(stmt: &str) -> Vec<(String, String, String)> {
    let Some(rest) = stmt.strip_prefix("from ") else { return Vec::new() };
    let Some((module, names)) = rest.split_once(" import ") else { return Vec::new() };
    let names = names.split('#').next().unwrap_or("").trim().trim_start_matches('(').trim_end_matches(')');
    bindings(module.trim(), names, " as ")
}

/// `import { a, b as c } from 'm'` and `import d from 'm'` → `(m, a, a)`, `(m, b, c)`,
/// `(m, default, d)`.
fn js_import(stmt: &str) -> Vec<(String, String, String)> {
    let Some(rest) = stmt.strip_prefix("import ") else { return Vec::new() };
    let Some((what, from)) = rest.rsplit_once(" from ") else { return Vec::new() };
    let module = from.trim().trim_end_matches(';').trim_matches(|c| c == '\'' || c == '"' || c == '`');
    let what = what.trim().trim_start_matches("type ");
    match (what.find('{'), what.rfind('}')) {
        (Some(a), Some(b)) if a < b => {
            let mut out = bindings(module, &what[a + 1..b], " as ");
            let default = what[..a].trim().trim_end_matches(',').trim();
            if !default.is_empty() {
                out.push((module.to_string(), "default".into(), default.to_string()));
            }
            out
        }
        _ if !what.starts_with('*') && !what.is_empty() => {
            vec![(module.to_string(), "default".into(), what.to_string())]
        }
        _ => Vec::new(),
    }
}

/// Each `name` or `name AS bound` of a comma-separated list, from `module`.
fn bindings(module: &str, names: &str, alias: &str) -> Vec<(String, String, String)> {
    names
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty() && *n != "*")
        .map(|n| {
            let (name, bound) = n.split_once(alias).map_or((n, n), |(a, b)| (a.trim(), b.trim()));
            (module.to_string(), name.trim_start_matches("type ").to_string(), bound.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::disarmed;

    const BASE: &str = "import unittest\n\nfrom calc.ops import add, split\n\n\nclass T(unittest.TestCase):\n    def test_split(self):\n        self.assertEqual(split(1000, 3), [334, 333, 333])\n\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";

    #[test]
    fn caught_failures_a_rebound_name_and_an_alias_disarm_old_tests() {
        let caught = BASE.replace(
            "        self.assertEqual(split(1000, 3), [334, 333, 333])\n",
            "        try:\n            self.assertEqual(split(1000, 3), [334, 333, 333])\n        except AssertionError:\n            pass\n",
        );
        assert_eq!(disarmed("tests/test_calc.py", BASE, &caught).len(), 1);
        let rebound = BASE.replace("split\n\n\nclass", "split\n\nsplit = lambda total, n: [334, 333, 333]\n\n\nclass");
        let got = disarmed("tests/test_calc.py", BASE, &rebound);
        assert!(got.len() == 1 && got[0].contains("rebinds `split`"), "{got:?}");
        let aliased = BASE.replace("import add, split", "import add2 as add, split");
        let got = disarmed("tests/test_calc.py", BASE, &aliased);
        assert!(got.len() == 1 && got[0].contains("`add2` where the base had `add`"), "{got:?}");
    }

    #[test]
    fn a_rename_a_move_and_a_new_test_are_not() {
        let renamed = BASE.replace("import add, split", "import plus, split").replace("add(2, 3)", "plus(2, 3)");
        assert!(disarmed("tests/test_calc.py", BASE, &renamed).is_empty());
        let moved =
            BASE.replace("from calc.ops import add, split", "from calc.ops import split\nfrom calc.arith import add");
        assert!(disarmed("tests/test_calc.py", BASE, &moved).is_empty());
        let added = format!(
            "{BASE}\n    def test_bad(self):\n        try:\n            add(None, 1)\n        except TypeError:\n            pass\n"
        );
        assert!(disarmed("tests/test_calc.py", BASE, &added).is_empty());
        let js = "import { test } from 'node:test';\nimport { split } from '../src/split.js';\n\ntest('split', () => {\n  assert.deepEqual(split(1000, 3), [334, 333, 333]);\n});\n";
        let js_alias = js.replace("{ split }", "{ fake as split }");
        assert_eq!(disarmed("test/split.test.js", js, &js_alias).len(), 1);
        let js_caught = js.replace(
            "  assert.deepEqual(split(1000, 3), [334, 333, 333]);\n",
            "  try {\n  assert.deepEqual(split(1000, 3), [334, 333, 333]);\n  } catch {}\n",
        );
        assert_eq!(disarmed("test/split.test.js", js, &js_caught).len(), 1);
    }
}
