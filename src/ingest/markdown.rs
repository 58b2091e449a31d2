//! The Markdown brief ([`super::BRIEF_FILE`]): its phase headings found outside code fences and checked
//! against the sidecar's phases, in order.

use std::collections::HashMap;

use super::json;
use super::{Phase, Problems, SUMMARY_FILE, quote};

/// Checks the `## Phase <id>: <name>` headings against the summary's phases; returns each phase's
/// heading line (0 when it has none, which is then an error).
pub(super) fn check_markdown(md: &str, phases: &[Option<Phase>], errs: &mut Problems) -> Vec<u32> {
    let mut lines = vec![0; phases.len()];
    let want: Vec<(&str, &str)> = phases.iter().flatten().map(|p| (p.id.as_str(), p.name.as_str())).collect();
    if want.len() != phases.len() {
        return lines;
    }
    let index: HashMap<&str, usize> = want.iter().enumerate().map(|(i, (id, _))| (*id, i)).collect();
    let headings = headings(md, errs);
    let mut first: HashMap<&str, u32> = HashMap::new();
    // (summary index, heading line) of each first heading of a known phase, in document order.
    let mut matched: Vec<(usize, u32)> = Vec::new();
    for &(line, id, name) in &headings {
        let Some(&i) = index.get(id) else {
            errs.push(line, format!("heading names phase {}, which is not in {SUMMARY_FILE}", quote(id)));
            continue;
        };
        if let Some(f) = first.get(id) {
            errs.push(line, format!("second heading for phase {} (first at line {f})", quote(id)));
            continue;
        }
        first.insert(id, line);
        matched.push((i, line));
        lines[i] = line;
        if name != want[i].1.trim() {
            errs.push(
                line,
                format!(
                    "heading names phase {} {}, but {SUMMARY_FILE} names it {}",
                    quote(id),
                    quote(name),
                    quote(want[i].1)
                ),
            );
        }
    }
    let mut sorted: Vec<usize> = matched.iter().map(|&(i, _)| i).collect();
    sorted.sort_unstable();
    for (&(i, line), &expected) in matched.iter().zip(&sorted) {
        if i != expected {
            errs.push(
                line,
                format!(
                    "phase {} is out of order: {SUMMARY_FILE} has phase {} here (its position {})",
                    quote(want[i].0),
                    quote(want[expected].0),
                    expected + 1
                ),
            );
        }
    }
    let last = json::clamp(md.lines().count().max(1));
    for (i, (id, name)) in want.iter().enumerate() {
        if lines[i] == 0 {
            let line = matched.iter().filter(|&&(j, _)| j > i).map(|&(_, l)| l).min().unwrap_or(last);
            errs.push(
                line,
                format!(
                    "no heading for phase {}: expected `## Phase {}: {}`",
                    quote(id),
                    crate::text::short(id),
                    crate::text::short(name)
                ),
            );
        }
    }
    lines
}

/// The `## Phase <id>: <name>` headings outside fenced code blocks: (line, id, name). A line that
/// starts with `## Phase ` but has no `: ` is an error.
fn headings<'a>(md: &'a str, errs: &mut Problems) -> Vec<(u32, &'a str, &'a str)> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for (n, raw) in md.split('\n').enumerate() {
        let line_no = json::clamp(n + 1);
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let indented = line.trim_start_matches(' ');
        let marker = |c: char| {
            let len = indented.chars().take_while(|&x| x == c).count();
            (line.len() - indented.len() <= 3 && len >= 3).then_some(len)
        };
        if let Some((c, len)) = fence {
            if marker(c).is_some_and(|l| l >= len) && indented.trim_start_matches(c).trim().is_empty() {
                fence = None;
            }
            continue;
        }
        if let Some((c, len)) = ['`', '~'].into_iter().find_map(|c| marker(c).map(|l| (c, l))) {
            fence = Some((c, len));
            continue;
        }
        // `## Phase <id>: <name>`, also at levels 3 and 4, with `—`, `–` or `-` for the colon,
        // any run of spaces, and an optional closing `#` sequence
        if line.len() - indented.len() > 3 {
            continue;
        }
        let level = indented.chars().take_while(|&c| c == '#').count();
        let Some(text) = indented[level..].strip_prefix([' ', '\t']).filter(|_| (2..=4).contains(&level)) else {
            continue;
        };
        let text = text.trim();
        let text = match text.trim_end_matches('#') {
            t if t.len() < text.len() && (t.is_empty() || t.ends_with([' ', '\t'])) => t.trim_end(),
            _ => text,
        };
        let Some(rest) = text.strip_prefix("Phase").filter(|r| r.starts_with([' ', '\t'])).map(str::trim_start) else {
            continue;
        };
        let end = rest.find(|c: char| c == ':' || c.is_whitespace()).unwrap_or(rest.len());
        let (id, after) = (&rest[..end], rest[end..].trim_start());
        let name = ["：", ":", "—", "–", "-"].iter().find_map(|sep| after.strip_prefix(sep)).map(str::trim);
        match name {
            Some(name) if !id.is_empty() && !name.is_empty() => out.push((level, line_no, id, name)),
            // a level-3 or -4 heading that only starts with the word is prose
            _ if level > 2 => {}
            _ => {
                errs.push(line_no, format!("malformed phase heading {}: expected `## Phase <id>: <name>`", quote(line)))
            }
        }
    }
    // the phases are the headings of the shallowest level that has any; deeper ones are prose
    let top = out.iter().map(|h| h.0).min();
    out.into_iter().filter(|h| Some(h.0) == top).map(|(_, line, id, name)| (line, id, name)).collect()
}
