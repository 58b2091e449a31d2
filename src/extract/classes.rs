//! Class facts every language shares: a base with its qualifier (`Inherits`, `QualifiedBase`), and
//! which definition a marker belongs to (`MarkerIn`): the innermost function or method around it,
//! or, for a marker comment, the function or method the comment directly precedes (only comment,
//! decorator and attribute lines between them). Language-neutral: it reads the definitions and
//! markers the hooks recorded, and the source lines.

use super::extractor::Extractor;
use crate::facts::rel;

/// A function or method definition: its name and first and last lines.
#[derive(Debug)]
struct Owner {
    name: String,
    first: u32,
    last: u32,
}

/// The functions, methods and markers of one file, as its hooks record them.
#[derive(Debug, Default)]
pub(crate) struct Owners {
    defs: Vec<Owner>,
    /// Marker lines, each with whether the marker is a comment word (TODO, FIXME, XXX).
    markers: Vec<(u32, bool)>,
}

impl Owners {
    /// Records a definition of `kind` named `name` on lines `first..=last` (functions and methods only).
    pub fn definition(&mut self, kind: &str, name: &str, first: u32, last: u32) {
        if matches!(kind, "function" | "method") {
            self.defs.push(Owner { name: name.to_string(), first, last });
        }
    }

    /// Records a marker of `kind` at `line`.
    pub fn marker(&mut self, line: u32, kind: &str) {
        self.markers.push((line, matches!(kind, "TODO" | "FIXME" | "XXX")));
    }

    /// Adds the definitions and markers of `other` (those of a macro body read as items).
    pub fn absorb(&mut self, other: Owners) {
        self.defs.extend(other.defs);
        self.markers.extend(other.markers);
    }

    /// The innermost definition whose lines hold `line`.
    fn around(&self, line: u32) -> Option<&Owner> {
        self.defs.iter().filter(|d| d.first <= line && line <= d.last).min_by_key(|d| (d.last - d.first, d.first))
    }

    /// The definition starting on `line` (the shortest, when several do).
    fn starting_at(&self, line: u32) -> Option<&Owner> {
        self.defs.iter().filter(|d| d.first == line).min_by_key(|d| d.last)
    }
}

/// Whether a trimmed source line is only a comment, a decorator or an attribute.
fn is_annotation_line(t: &str) -> bool {
    ["#", "//", "/*", "*", "@"].iter().any(|p| t.starts_with(p))
}

/// The line a comment at `line` directly precedes, when the comment's line is only a comment: the
/// first line after it that is not a comment, decorator or attribute line.
fn next_statement(lines: &[&str], line: u32) -> Option<u32> {
    let own = lines.get(line as usize - 1)?.trim_start();
    if !is_annotation_line(own) {
        return None;
    }
    let mut at = line as usize; // 0-based index of the next line
    while at < lines.len() && is_annotation_line(lines[at].trim_start()) {
        at = past_annotation(lines, at);
    }
    Some(at as u32 + 1)
}

/// The index of the line after the annotation starting at `lines[at]`: a decorator or attribute
/// whose brackets stay open (`@lru_cache(\n    maxsize=None,\n)`) runs on until they close.
fn past_annotation(lines: &[&str], mut at: usize) -> usize {
    let t = lines[at].trim_start();
    if !(t.starts_with('@') || t.starts_with("#[")) {
        return at + 1;
    }
    let mut depth = 0i32;
    while at < lines.len() {
        for c in lines[at].chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            }
        }
        at += 1;
        if depth <= 0 {
            break;
        }
    }
    at
}

/// Pushes `MarkerIn` for every marker of the file that belongs to a function or method, and
/// `MarkerBefore` for every marker comment right above a statement with a marker.
pub(super) fn marker_owners(x: &mut Extractor) {
    let owners = std::mem::take(&mut x.owners);
    let mut markers = owners.markers.clone();
    markers.sort_unstable();
    markers.dedup();
    let lines: Vec<&str> = x.src.lines().collect();
    for &(line, comment) in &markers {
        let next = if comment { next_statement(&lines, line) } else { None };
        if let Some(n) = next.filter(|n| markers.contains(&(*n, false))) {
            x.push(rel::MARKER_BEFORE, &[x.path.into(), line.into(), n.into()]);
        }
        let owner = next.and_then(|n| owners.starting_at(n)).or_else(|| owners.around(line));
        if let Some(d) = owner {
            x.push(rel::MARKER_IN, &[x.path.into(), line.into(), d.name.as_str().into(), d.first.into()]);
        }
    }
}

/// Records that class `class` (defined at `line`) has base `base` of `kind`; a base qualified by
/// `sep` (`.` or `::`) is also split into its qualifier and name.
pub(super) fn inherits(x: &mut Extractor, line: u32, class: &str, base: &str, kind: &str, sep: &str) {
    if base.is_empty() {
        return;
    }
    x.push(rel::INHERITS, &[x.path.into(), line.into(), class.into(), base.into(), kind.into()]);
    if let Some((qualifier, name)) = base.rsplit_once(sep) {
        x.push(rel::QUALIFIED_BASE, &[x.path.into(), line.into(), base.into(), qualifier.into(), name.into()]);
    }
}
