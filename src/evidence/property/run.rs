//! What one run of a property-testing tool showed: its verdict, whether any test ran, and the
//! minimized counterexample as the tool printed it.

use super::{MAX_BLOCK_LINES, MAX_COUNTEREXAMPLE_CHARS, PropertyResult, PropertyTool, TRUNCATED};
use crate::ledger::Verdict;

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
