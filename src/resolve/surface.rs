//! A file's surface — the names it defines and exports — and every question resolution asks of
//! it. Resolution reads a surface only through [`Repo`]'s methods here, and each records what it
//! asked: a name, the whole surface, or whether it is empty. The record is stored with the index,
//! so an edit that changes only names nobody asked about (a new function, a new constant) keeps
//! the whole-repo facts without resolving anything again: resolution is deterministic, so with
//! the same answers to the same questions it does the same work and writes the same facts.
//!
//! The record is a set of 64-bit keys (xxh3 of path and question); a collision can only make an
//! unasked question look asked, which costs a resolution, never a wrong fact.

use std::cell::RefCell;

use super::{HashSet, Repo};

/// The names a file defines and exports, readable only through [`Repo`]'s recording methods.
#[derive(Default, Debug, PartialEq, Eq)]
pub(crate) struct Surface<'s> {
    defines: HashSet<&'s str>,
    exports: HashSet<&'s str>,
}

impl<'s> Surface<'s> {
    pub fn define(&mut self, name: &'s str) {
        self.defines.insert(name);
    }

    pub fn export(&mut self, name: &'s str) {
        self.exports.insert(name);
    }

    fn is_empty(&self) -> bool {
        self.defines.is_empty() && self.exports.is_empty()
    }

    /// How `self` differs from `before`: the names defined in one and not the other, the names
    /// exported in one and not the other, and whether the surface became empty or stopped being.
    pub fn changes_from(&self, before: &Surface) -> SurfaceChange {
        let differ = |a: &HashSet<&str>, b: &HashSet<&str>| -> Vec<String> {
            let mut d: Vec<String> = a.symmetric_difference(b).map(|n| n.to_string()).collect();
            d.sort_unstable();
            d
        };
        SurfaceChange {
            defines: differ(&self.defines, &before.defines),
            exports: differ(&self.exports, &before.exports),
            emptiness: self.is_empty() != before.is_empty(),
        }
    }
}

/// How one file's surface changed ([`Surface::changes_from`]).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SurfaceChange {
    pub defines: Vec<String>,
    pub exports: Vec<String>,
    pub emptiness: bool,
}

impl SurfaceChange {
    pub fn is_none(&self) -> bool {
        self.defines.is_empty() && self.exports.is_empty() && !self.emptiness
    }
}

/// The questions asked of surfaces during one resolution.
#[derive(Default)]
pub(crate) struct Reads(RefCell<HashSet<u64>>);

/// What was asked of a surface.
#[derive(Clone, Copy)]
enum Question<'a> {
    Defines(&'a str),
    Exports(&'a str),
    EveryExport,
    Empty,
}

fn key(path: &str, q: Question) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(path.as_bytes());
    match q {
        Question::Defines(n) => {
            h.update(b"\0d");
            h.update(n.as_bytes());
        }
        Question::Exports(n) => {
            h.update(b"\0x");
            h.update(n.as_bytes());
        }
        Question::EveryExport => h.update(b"\0*"),
        Question::Empty => h.update(b"\0e"),
    }
    h.digest()
}

impl Reads {
    fn note(&self, path: &str, q: Question) {
        self.0.borrow_mut().insert(key(path, q));
    }

    /// The record as stored: distinct keys, ascending, little-endian.
    pub fn encode(self) -> Vec<u8> {
        let mut keys: Vec<u64> = self.0.into_inner().into_iter().collect();
        keys.sort_unstable();
        keys.iter().flat_map(|k| k.to_le_bytes()).collect()
    }
}

/// Whether the stored record `reads` ([`Reads::encode`]) shows that resolution asked a question of
/// `path`'s surface whose answer `change` alters. A record that is not one (its length is not a
/// multiple of 8) says yes to any change.
pub fn asked(reads: &[u8], path: &str, change: &SurfaceChange) -> bool {
    if change.is_none() {
        return false;
    }
    if reads.len() % 8 != 0 {
        return true;
    }
    let has = |k: u64| {
        let (mut lo, mut hi) = (0usize, reads.len() / 8);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let at = u64::from_le_bytes(reads[mid * 8..mid * 8 + 8].try_into().expect("8 bytes"));
            match at.cmp(&k) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    };
    (change.emptiness && has(key(path, Question::Empty)))
        || (!change.exports.is_empty() && has(key(path, Question::EveryExport)))
        || change.exports.iter().any(|n| has(key(path, Question::Exports(n))))
        || change.defines.iter().any(|n| has(key(path, Question::Defines(n))))
}

impl<'s> Repo<'s> {
    fn surface(&self, file: &str) -> Option<&Surface<'s>> {
        self.files.get(file).map(|f| &f.surface)
    }

    /// Whether `file` (a file of the repo) defines `name`.
    pub fn defines(&self, file: &str, name: &str) -> bool {
        self.reads.note(file, Question::Defines(name));
        self.surface(file).is_some_and(|s| s.defines.contains(name))
    }

    /// Whether `file` (a file of the repo) exports `name`.
    pub fn exports(&self, file: &str, name: &str) -> bool {
        self.reads.note(file, Question::Exports(name));
        self.surface(file).is_some_and(|s| s.exports.contains(name))
    }

    /// Every name `file` exports (empty when it is not a file of the repo).
    pub fn exports_of(&self, file: &str) -> HashSet<&'s str> {
        self.reads.note(file, Question::EveryExport);
        self.surface(file).map(|s| s.exports.clone()).unwrap_or_default()
    }

    /// Whether `file` defines and exports nothing (false when it is not a file of the repo).
    pub fn surface_empty(&self, file: &str) -> bool {
        self.reads.note(file, Question::Empty);
        self.surface(file).is_some_and(Surface::is_empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn surface<'a>(defines: &[&'a str], exports: &[&'a str]) -> Surface<'a> {
        let mut s = Surface::default();
        defines.iter().for_each(|n| s.define(n));
        exports.iter().for_each(|n| s.export(n));
        s
    }

    fn record(questions: &[(&str, Question)]) -> Vec<u8> {
        let r = Reads::default();
        for (p, q) in questions {
            r.note(p, *q);
        }
        r.encode()
    }

    #[test]
    fn only_a_changed_answer_to_a_question_asked_counts() {
        use Question::*;
        let before = surface(&["f", "g", "_h"], &["f", "g"]);
        // `_h` made public, `k` added as a private name
        let after = surface(&["f", "g", "_h", "k"], &["f", "g", "_h"]);
        let change = after.changes_from(&before);
        let expected = SurfaceChange { defines: vec!["k".into()], exports: vec!["_h".into()], emptiness: false };
        assert_eq!(change, expected);
        let a = |qs: &[(&str, Question)]| asked(&record(qs), "a.py", &change);
        assert!(!a(&[("a.py", Defines("f")), ("a.py", Exports("k")), ("b.py", Defines("k"))]), "f, and k as an export");
        assert!(a(&[("a.py", Defines("k"))]), "k as a definition");
        assert!(a(&[("a.py", Exports("_h"))]), "_h as an export");
        assert!(!a(&[("a.py", Defines("_h"))]), "_h was defined before and after");
        assert!(a(&[("a.py", EveryExport)]), "every export was read");
        assert!(!a(&[("a.py", Empty)]), "it was not empty and is not");
        let private = surface(&["f", "g", "_h", "k"], &["f", "g"]).changes_from(&before);
        assert!(!asked(&record(&[("a.py", EveryExport)]), "a.py", &private), "no export changed");
        let emptied = surface(&[], &[]).changes_from(&before);
        assert!(emptied.emptiness);
        assert!(asked(&record(&[("a.py", Empty)]), "a.py", &emptied));
        assert!(asked(&[1, 2, 3], "a.py", &change), "a torn record asks everything");
        assert!(!asked(&[1, 2, 3], "a.py", &SurfaceChange::default()), "no change, nothing to ask");
    }
}
