//! What an existing test expects: each of its assertions reduced to its kind (`assertEqual`,
//! `assert ==`, `expect.toEqual`, `assert_eq!`) and its literals (numbers, strings, `True`,
//! `null`, …). A fix that changes a literal in an assertion of a test that existed at the base,
//! removes an assertion, or weakens one (equality to truthiness, `toEqual` to `toBeDefined`,
//! `assertEqual` to `assertTrue`) rewrites the test's verdict: a judging change. Renaming
//! identifiers (the fix renamed a function) changes neither kind nor literals; added assertions
//! and added tests are always fine.

use std::collections::BTreeMap;

use crate::extract::test_defs::tests_of;

/// One assertion: its kind and its literals, in order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Expectation {
    pub kind: String,
    pub literals: Vec<String>,
}

impl std::fmt::Display for Expectation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({})", self.kind, self.literals.join(", "))
    }
}

/// The expectations of each test `path` defines in `src`, by test name.
pub fn of_tests(path: &str, src: &str) -> BTreeMap<String, Vec<Expectation>> {
    let lines: Vec<&str> = src.lines().collect();
    let mut out = BTreeMap::new();
    for t in tests_of(path, src) {
        let from = t.line.saturating_sub(1) as usize;
        // a test whose span the facts do not give (a JS `test(…, () => {…})` call): its brackets
        let to = if t.end > t.line { t.end as usize } else { block_end(&lines, from) }.min(lines.len());
        let mut found = Vec::new();
        let mut i = from;
        while i < to {
            let Some(kind) = assertion_kind(lines[i]) else {
                i += 1;
                continue;
            };
            // the whole statement: until its brackets balance (at most 12 lines)
            let mut text = lines[i].to_string();
            let mut j = i + 1;
            while depth(&text) > 0 && j < to && j < i + 12 {
                text.push('\n');
                text.push_str(lines[j]);
                j += 1;
            }
            found.push(Expectation { kind, literals: literals(&text) });
            i = j;
        }
        found.sort();
        out.insert(t.name, found);
    }
    out
}

/// The expectations of tests in `before` (the base) that `now` no longer holds, as
/// `path: test \`name\` …` lines: changed, weakened or removed. Tests gone entirely are another
/// rule's (a removed test).
pub fn rewritten(path: &str, before: &str, now: &str) -> Vec<String> {
    let (was, is) = (of_tests(path, before), of_tests(path, now));
    let mut out = Vec::new();
    for (name, expected) in &was {
        let Some(now) = is.get(name) else { continue };
        let mut left = now.clone();
        for e in expected {
            match left.iter().position(|n| n == e) {
                Some(k) => {
                    left.remove(k);
                }
                None => {
                    out.push(format!("{path}: test `{name}` no longer asserts `{e}` (changed, weakened or removed)"))
                }
            }
        }
    }
    out
}

/// The kind of assertion `line` starts, if it is one.
fn assertion_kind(line: &str) -> Option<String> {
    let t = line.trim_start();
    // Python's assert statement: its comparison is part of its kind
    if let Some(rest) = t.strip_prefix("assert ").or_else(|| t.strip_prefix("assert(")) {
        let ops = ["==", "!=", "<=", ">=", " < ", " > ", " is not ", " is ", " not in ", " in "];
        let op = ops.iter().find(|o| rest.contains(*o)).map_or("truthy", |o| o.trim());
        return Some(format!("assert {op}"));
    }
    for (marker, end) in [("self.assert", '('), ("assert_", '!'), ("assert!", '!'), ("assert.", '('), ("pytest.", '(')]
    {
        if let Some(at) = t.find(marker) {
            let word: String =
                t[at..].chars().take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '!')).collect();
            if word.ends_with(end) || t[at + word.len()..].starts_with(end) || end == '!' && word.ends_with('!') {
                let word = word.trim_end_matches(['(', '!']);
                let word = word.strip_prefix("self.").unwrap_or(word);
                return Some(word.to_string() + if end == '!' { "!" } else { "" });
            }
        }
    }
    // expect(x).not.toEqual(y): the matcher, with its negation
    if let Some(at) = t.find("expect(") {
        let after = &t[at..];
        let matcher = after.match_indices(".to").next().map(|(k, _)| {
            let m: String = after[k + 1..].chars().take_while(|c| c.is_alphanumeric()).collect();
            let negated = after[..k].ends_with(".not");
            format!("expect.{}{m}", if negated { "not." } else { "" })
        });
        return Some(matcher.unwrap_or_else(|| "expect".into()));
    }
    None
}

/// The line after the block that opens on line `from`: where its brackets close again (at most
/// 400 lines on; the line itself when it opens none).
pub(super) fn block_end(lines: &[&str], from: usize) -> usize {
    let mut text = String::new();
    for (i, l) in lines.iter().enumerate().skip(from).take(400) {
        text.push_str(l);
        text.push('\n');
        if depth(&text) <= 0 && i > from {
            return i + 1;
        }
    }
    (from + 400).min(lines.len()).max(from + 1)
}

/// How many brackets `text` leaves open (strings ignored roughly: quotes toggle).
pub(super) fn depth(text: &str) -> i32 {
    let (mut d, mut quote) = (0, None::<char>);
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'' | '`') => quote = Some(c),
            (None, '(' | '[' | '{') => d += 1,
            (None, ')' | ']' | '}') => d -= 1,
            _ => {}
        }
    }
    d
}

/// The literals of `text`, in order: strings, numbers and the constant words.
fn literals(text: &str) -> Vec<String> {
    let words = ["True", "False", "None", "true", "false", "null", "undefined", "NaN", "Infinity"];
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if matches!(c, '"' | '\'' | '`') {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != c {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            out.push(chars[i..(j + 1).min(chars.len())].iter().collect());
            i = j + 1;
        } else if c.is_ascii_digit() && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')) {
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_alphanumeric() || matches!(chars[j], '.' | '_')) {
                j += 1;
            }
            let negative = i > 0 && chars[i - 1] == '-';
            let n: String = chars[i..j].iter().collect();
            out.push(if negative { format!("-{n}") } else { n });
            i = j;
        } else if c.is_alphabetic()
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || matches!(chars[i - 1], '_' | '.')))
        {
            let mut j = i;
            while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            let w: String = chars[i..j].iter().collect();
            if words.contains(&w.as_str()) {
                out.push(w);
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "import unittest\n\nfrom calc import split\n\n\nclass T(unittest.TestCase):\n    def test_split(self):\n        self.assertEqual(split(1000, 3), [334, 333, 333])\n        assert total(3) == 3100\n";

    #[test]
    fn a_changed_literal_a_weakened_and_a_removed_assertion_are_rewrites() {
        let changed = BASE.replace("3100", "3000");
        assert_eq!(rewritten("tests/test_calc.py", BASE, &changed).len(), 1);
        let weakened =
            BASE.replace("self.assertEqual(split(1000, 3), [334, 333, 333])", "self.assertTrue(split(1000, 3))");
        let w = rewritten("tests/test_calc.py", BASE, &weakened);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("assertEqual"), "{w:?}");
        let truthy = BASE.replace("assert total(3) == 3100", "assert total(3)");
        assert_eq!(rewritten("tests/test_calc.py", BASE, &truthy).len(), 1);
        let removed = BASE.replace("        assert total(3) == 3100\n", "");
        assert_eq!(rewritten("tests/test_calc.py", BASE, &removed).len(), 1);
    }

    #[test]
    fn a_rename_and_an_added_assertion_are_not() {
        let renamed = BASE.replace("split(", "divide(").replace("from calc import split", "from calc import divide");
        assert!(rewritten("tests/test_calc.py", BASE, &renamed).is_empty());
        let added = BASE.replace("== 3100\n", "== 3100\n        self.assertIsNotNone(split(1, 1))\n");
        assert!(rewritten("tests/test_calc.py", BASE, &added).is_empty());
    }

    #[test]
    fn javascript_matchers_and_node_assert() {
        let base = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n\ntest('split', () => {\n  assert.deepStrictEqual(split(1000, 3), [334, 333, 333]);\n  expect(total(3)).toEqual(3100);\n});\n";
        let weakened = base.replace("toEqual(3100)", "toBeDefined()");
        assert_eq!(rewritten("split.test.js", base, &weakened).len(), 1);
        let changed = base.replace("[334, 333, 333]", "[333, 333, 333]");
        assert_eq!(rewritten("split.test.js", base, &changed).len(), 1);
        let ok = base.replace("split(", "divide(");
        assert!(rewritten("split.test.js", base, &ok).is_empty());
    }

    #[test]
    fn rust_assertion_macros() {
        let base = "#[test]\nfn split_three() {\n    assert_eq!(split(1000, 3), vec![334, 333, 333]);\n}\n";
        let changed = base.replace("334", "333");
        assert_eq!(rewritten("src/lib.rs", base, &changed).len(), 1);
        let weakened =
            base.replace("assert_eq!(split(1000, 3), vec![334, 333, 333])", "assert!(!split(1000, 3).is_empty())");
        assert_eq!(rewritten("src/lib.rs", base, &weakened).len(), 1);
    }
}
