//! A proof pins the behaviour it claims. Red first accepts any check that fails without the fix,
//! and a stub that throws makes every test that calls it red. So after red → green the checks run
//! again, in the scratch copy of the fixed tree, against trivial variants of each function or
//! method the fix changed (at most three, at most eight variants each): its body replaced by a
//! `return` of an empty or trivial value (Python: `None`, `0`, `""`, `[]`, `{}`, the first
//! argument; JavaScript/TypeScript: `undefined`, `0`, `""`, `[]`, `{}`, the first argument). A
//! variant the checks still pass means they do not pin what the function does: the proof is
//! `unknown`, reason `not-pinning` (exit 14), naming the variant. A variant that fails to load
//! counts as caught. Rust functions are not pinned here (that takes a mutation tool).

use std::path::Path;

use super::commands::CommandSpec;
use super::executed;
use super::expectations::depth;
use super::judged;
use super::proof::Proof;
use crate::extract::lang::Lang;
use crate::extract::public::{FnSpan, functions};
use crate::ledger::{PinVariant, Reason, RedFirst, Verdict};

/// At most this many changed functions are pinned, each with at most [`MAX_VARIANTS`] variants.
pub const MAX_FUNCTIONS: usize = 3;
pub const MAX_VARIANTS: usize = 8;

/// A changed function and the file it is in.
struct Changed {
    path: String,
    lang: Lang,
    span: FnSpan,
}

/// Runs the checks `specs` in the fixed tree `tree` against the trivial variants of the functions
/// the change (`changed` against `base`, read from `root`) touched, and makes a proven `proof`
/// unknown (not-pinning) at the first variant they pass. Returns every variant run, and the
/// files it could not pin here (Rust).
#[allow(clippy::too_many_arguments)]
pub fn pin(
    root: &Path,
    tree: &Path,
    base: &str,
    changed: &[(String, String)],
    specs: &[CommandSpec],
    out: &Path,
    nonce: &str,
    red: &RedFirst,
    proof: &mut Proof,
) -> (Vec<PinVariant>, Vec<String>) {
    let (fns, not_here) = changed_functions(root, base, changed);
    let mut runs = Vec::new();
    if proof.verdict != Verdict::Proven || fns.is_empty() {
        return (runs, not_here);
    }
    // only the tests that flipped, where the runner selects them
    let specs = &super::select::pinning_checks(tree, out, specs, red, changed, nonce);
    for f in fns {
        let file = tree.join(&f.path);
        let Ok(original) = std::fs::read_to_string(&file) else { continue };
        for (body, text) in variants(&f, &original).into_iter().take(MAX_VARIANTS) {
            if std::fs::write(&file, &text).is_err() {
                continue;
            }
            super::red::forget_caches(tree);
            let results = executed::run_checks(tree, out, specs, &format!("{nonce}-pin"));
            let caught = results.iter().any(|r| !r.passed());
            let _ = std::fs::write(&file, &original);
            runs.push(PinVariant { function: f.span.name.clone(), file: f.path.clone(), body: body.clone(), caught });
            if !caught {
                proof.verdict = Verdict::Unknown;
                proof.reason = Some(Reason::NotPinning);
                proof.claim = format!(
                    "`{body}` as the body of `{}` ({}) passes the same checks ({}): they do not pin what it does; assert what `{}` returns",
                    f.span.name,
                    f.path,
                    commands_of(specs),
                    f.span.name
                );
                super::red::forget_caches(tree);
                return (runs, not_here);
            }
        }
    }
    super::red::forget_caches(tree);
    if !runs.is_empty() {
        proof.claim = format!(
            "{}; every trivial variant of the changed functions fails them ({} run against {})",
            proof.claim,
            runs.len(),
            commands_of(specs)
        );
    }
    (runs, not_here)
}

/// The command lines of `specs`, as a claim names them.
fn commands_of(specs: &[CommandSpec]) -> String {
    specs.iter().map(|s| format!("`{}`", s.run)).collect::<Vec<_>>().join(", ")
}

/// The functions the change touched (those holding a line the fix added or changed), innermost
/// first and most-changed first, at most [`MAX_FUNCTIONS`]; and the Rust files among them, which
/// are not pinned here.
fn changed_functions(root: &Path, base: &str, changed: &[(String, String)]) -> (Vec<Changed>, Vec<String>) {
    let mut found: Vec<(usize, Changed)> = Vec::new();
    let mut not_here = Vec::new();
    for (status, path) in changed.iter().filter(|(st, p)| st != "D" && !super::red::test_path(p)) {
        let Some(lang) = Lang::from_path(path) else { continue };
        let now = judged::read(root, path);
        let before = if status == "A" || base == "none" {
            String::new()
        } else {
            judged::at_base(root, base, path).unwrap_or_default()
        };
        let had: std::collections::BTreeSet<&str> = before.lines().map(str::trim).collect();
        let new_lines: Vec<u32> = now
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty() && !had.contains(l.trim()))
            .map(|(i, _)| i as u32 + 1)
            .collect();
        if new_lines.is_empty() {
            continue;
        }
        let spans = functions(path, &now);
        let mut touched: Vec<(usize, FnSpan)> = Vec::new();
        for s in &spans {
            // a line counts for the innermost function that holds it
            let inner = |l: u32| {
                spans
                    .iter()
                    .filter(|o| o.line <= l && l <= o.end_line)
                    .min_by_key(|o| o.end_line - o.line)
                    .is_some_and(|o| o == s)
            };
            let n = new_lines.iter().filter(|l| s.line <= **l && **l <= s.end_line && inner(**l)).count();
            if n > 0 {
                touched.push((n, s.clone()));
            }
        }
        if lang == Lang::Rust {
            if !touched.is_empty() {
                not_here.push(path.clone());
            }
            continue;
        }
        found.extend(touched.into_iter().map(|(n, span)| (n, Changed { path: path.clone(), lang, span })));
    }
    found.sort_by(|a, b| {
        b.0.cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path)).then_with(|| a.1.span.line.cmp(&b.1.span.line))
    });
    (found.into_iter().take(MAX_FUNCTIONS).map(|(_, c)| c).collect(), not_here)
}

/// Each trivial body of `f` and the file's text with it: `(body, text)`.
fn variants(f: &Changed, text: &str) -> Vec<(String, String)> {
    match f.lang {
        Lang::Python => python_variants(&f.span, text),
        Lang::TypeScript | Lang::JavaScript => js_variants(&f.span, text),
        Lang::Rust => Vec::new(),
    }
}

/// Python: the lines after the signature replaced by one `return V` at the body's indentation.
fn python_variants(s: &FnSpan, text: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let (from, end) = (s.line as usize - 1, (s.end_line as usize).min(lines.len()));
    // the signature ends on the first line, from the `def`, whose brackets are closed and that ends in `:`
    let mut sig = String::new();
    let mut body_start = None;
    for (i, l) in lines.iter().enumerate().take(end).skip(from) {
        sig.push_str(l);
        sig.push('\n');
        let code = l.split('#').next().unwrap_or("").trim_end();
        if code.ends_with(':') && depth(&sig) == 0 && sig.contains("def ") {
            body_start = Some(i + 1);
            break;
        }
    }
    let Some(start) = body_start.filter(|b| *b < end) else { return Vec::new() };
    let indent: String = lines[start..end]
        .iter()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.chars().take_while(|c| c.is_whitespace()).collect())
        .unwrap_or_else(|| "    ".into());
    let mut values: Vec<String> = ["None", "0", "\"\"", "[]", "{}"].iter().map(|v| v.to_string()).collect();
    values.extend(first_argument(&sig, &["self", "cls"]));
    values
        .into_iter()
        .map(|v| {
            let body = format!("return {v}");
            let mut out: Vec<String> = lines[..start].iter().map(|l| l.to_string()).collect();
            out.push(format!("{indent}{body}"));
            out.extend(lines[end..].iter().map(|l| l.to_string()));
            (body, out.join("\n") + "\n")
        })
        .collect()
}

/// JavaScript/TypeScript: the block after the parameters (`{ … }`) replaced by
/// `{ return V; }`, or an arrow's expression replaced by `(V)`.
fn js_variants(s: &FnSpan, text: &str) -> Vec<(String, String)> {
    let offsets: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
    let at = |line: u32, col: u32| offsets.get(line as usize - 1).map(|o| o + col as usize - 1);
    let (Some(start), Some(end)) = (at(s.line, s.col), at(s.end_line, s.end_col)) else { return Vec::new() };
    let Some(def) = text.get(start..end.min(text.len())) else { return Vec::new() };
    let Some(open) = def.find('(') else { return Vec::new() };
    let Some(close) = matching(def, open) else { return Vec::new() };
    let params = &def[open..=close];
    let rest = &def[close + 1..];
    let (body_at, arrow) = match rest.find(['{', '=']) {
        Some(i) if rest[i..].starts_with("=>") => (close + 1 + i + 2, true),
        Some(i) if rest[i..].starts_with('{') => (close + 1 + i, false),
        _ => return Vec::new(),
    };
    let after = def[body_at..].trim_start();
    let body_start = start + def.len() - def[body_at..].len() + (def[body_at..].len() - after.len());
    let (replace_from, replace_to, block) = if after.starts_with('{') {
        let Some(m) = matching(text, body_start) else { return Vec::new() };
        (body_start, m + 1, true)
    } else if arrow {
        let e = start + def.trim_end().trim_end_matches(';').len();
        (body_start, e, false)
    } else {
        return Vec::new();
    };
    let mut values: Vec<String> = ["undefined", "0", "\"\"", "[]", "{}"].iter().map(|v| v.to_string()).collect();
    values.extend(first_argument(params, &["this"]));
    values
        .into_iter()
        .map(|v| {
            let body = if block { format!("{{ return {v}; }}") } else { format!("({v})") };
            let new = format!("{}{}{}", &text[..replace_from], body, &text[replace_to..]);
            (body, new)
        })
        .collect()
}

/// The name of the first parameter in `sig` (from its first `(`), skipping `skip`, stripped of
/// annotations, defaults and `*`/`...`.
fn first_argument(sig: &str, skip: &[&str]) -> Option<String> {
    let open = sig.find('(')?;
    let close = matching(sig, open)?;
    let inner = &sig[open + 1..close];
    let mut depth = 0;
    let mut parts = Vec::new();
    let mut cur = String::new();
    for c in inner.chars() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    parts.push(cur);
    parts.into_iter().find_map(|p| {
        let name: String = p
            .trim()
            .trim_start_matches(['*', '.'])
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
            .collect();
        (!name.is_empty() && !skip.contains(&name.as_str())).then_some(name)
    })
}

/// The index of the bracket closing the one at `open` in `text` (strings skipped roughly).
fn matching(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let (o, c) = match bytes.get(open)? {
        b'(' => (b'(', b')'),
        b'{' => (b'{', b'}'),
        b'[' => (b'[', b']'),
        _ => return None,
    };
    let (mut d, mut quote) = (0i32, None::<u8>);
    let mut i = open;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(_) if b == b'\\' => i += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if matches!(b, b'"' | b'\'' | b'`') => quote = Some(b),
            None if b == o => d += 1,
            None if b == c => {
                d -= 1;
                if d == 0 {
                    return Some(i);
                }
            }
            None => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span_of(path: &str, text: &str, name: &str) -> FnSpan {
        functions(path, text).into_iter().find(|f| f.name == name).unwrap()
    }

    #[test]
    fn python_bodies_are_replaced_at_their_indentation() {
        let text = "import os\n\n\ndef split(total, n):\n    \"\"\"Even parts.\"\"\"\n    q = total // n\n    return [q] * n\n\n\nX = 1\n";
        let f = Changed { path: "m.py".into(), lang: Lang::Python, span: span_of("m.py", text, "split") };
        let v = variants(&f, text);
        let bodies: Vec<&str> = v.iter().map(|(b, _)| b.as_str()).collect();
        assert_eq!(bodies, ["return None", "return 0", "return \"\"", "return []", "return {}", "return total"]);
        assert_eq!(v[3].1, "import os\n\n\ndef split(total, n):\n    return []\n\n\nX = 1\n");
    }

    #[test]
    fn javascript_blocks_and_arrow_expressions() {
        let text = "export function split(total, n) {\n  const q = Math.floor(total / n);\n  return [q];\n}\nexport const twice = (x) => x * 2;\n";
        let f = Changed { path: "m.js".into(), lang: Lang::JavaScript, span: span_of("m.js", text, "split") };
        let v = variants(&f, text);
        assert_eq!(
            v[0].1,
            "export function split(total, n) { return undefined; }\nexport const twice = (x) => x * 2;\n"
        );
        assert_eq!(v.last().unwrap().0, "{ return total; }");
        let span = functions("m.js", text).into_iter().find(|f| f.name == "twice").expect("an arrow is a function");
        let g = Changed { path: "m.js".into(), lang: Lang::JavaScript, span };
        let w = variants(&g, text);
        assert!(w.iter().any(|(b, t)| b == "(0)" && t.contains("(x) => (0)")), "{w:?}");
    }
}
