//! The data model: relations declared in `rules/schema.dl`, per-file fact segments and the merged
//! fact base. No I/O here.
//!
//! A [`Segment`] holds the facts one file (or the whole-repo resolution pass) produced: its own
//! string table plus flat rows `[rel, col0, col1, ...]`, where `path`/`sym` columns index the
//! segment's strings and `int` columns hold the number itself. Segments are self-contained, so the
//! index can splice a re-parsed file's segment in without renumbering anything else.
//!
//! The catalog (`build.rs` generates it from `rules/*.dl`) also holds the schema's closed
//! vocabularies as enums, in [`vocab`].

use std::collections::HashMap;

mod error;
mod style;
pub use error::Error;

/// A relation's position in [`RELATIONS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RelId(pub u16);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColType {
    Path,
    Sym,
    Int,
}

#[derive(Debug)]
pub struct Column {
    pub name: &'static str,
    pub ty: ColType,
}

pub use crate::dialect::RelKind;

/// One file as the index saw it: its path, kind, language, stamp and content hash, and why it
/// was not parsed, if it was not. Persisted in the index header; resolution reads it.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct FileMeta {
    pub path: String,
    /// 0 source, 1 manifest, 2 both
    pub kind: u8,
    pub lang: String,
    pub size: u64,
    pub mtime_ns: u64,
    pub hash: u128,
    /// Why the file was not parsed, if it was not.
    pub skipped: Option<String>,
    /// How many facts the file produced.
    pub facts: u64,
}

#[derive(Debug)]
pub struct RelationInfo {
    pub name: &'static str,
    pub doc: &'static str,
    pub columns: &'static [Column],
    /// Base (facts from the index), derived (rules) or computed (Rust, from other relations).
    pub kind: RelKind,
    /// The rules file that declares it.
    pub source: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/catalog.rs"));

impl RelId {
    pub fn info(self) -> &'static RelationInfo {
        &RELATIONS[self.0 as usize]
    }
    pub fn arity(self) -> usize {
        self.info().columns.len()
    }
    pub fn by_name(name: &str) -> Option<RelId> {
        RELATIONS.iter().position(|r| r.name == name).map(|i| RelId(i as u16))
    }
}

/// The text of `rules/schema.dl`, part of the index fingerprint.
pub const SCHEMA_TEXT: &str = include_str!("../../rules/schema.dl");

/// One value of a fact while it is being built.
#[derive(Clone, Copy, Debug)]
pub enum Val<'a> {
    S(&'a str),
    I(u32),
}

impl From<u32> for Val<'_> {
    fn from(v: u32) -> Self {
        Val::I(v)
    }
}
impl<'a> From<&'a str> for Val<'a> {
    fn from(v: &'a str) -> Self {
        Val::S(v)
    }
}
impl<'a> From<&'a String> for Val<'a> {
    fn from(v: &'a String) -> Self {
        Val::S(v.as_str())
    }
}

/// The facts of one file (or of one whole-repo pass), self-contained.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    pub strings: Vec<String>,
    pub rows: Vec<u32>,
}

impl Segment {
    pub fn str(&self, id: u32) -> &str {
        &self.strings[id as usize]
    }

    /// Rows of relation `rel`, each as its column slice.
    pub fn rows_of(&self, rel: RelId) -> impl Iterator<Item = &[u32]> + '_ {
        SegmentRows { seg: self, pos: 0 }.filter(move |(r, _)| *r == rel).map(|(_, c)| c)
    }

    /// All rows, each as (relation, columns).
    pub fn all_rows(&self) -> impl Iterator<Item = (RelId, &[u32])> + '_ {
        SegmentRows { seg: self, pos: 0 }
    }

    pub fn row_count(&self) -> usize {
        self.all_rows().count()
    }

    /// Checks that every row is well formed (known relation, right arity, string ids in range).
    pub fn validate(&self) -> bool {
        let mut pos = 0;
        while pos < self.rows.len() {
            let rel = self.rows[pos] as usize;
            let Some(info) = RELATIONS.get(rel).filter(|i| i.kind == RelKind::Base) else {
                return false;
            };
            let end = pos + 1 + info.columns.len();
            if end > self.rows.len() {
                return false;
            }
            for (c, v) in info.columns.iter().zip(&self.rows[pos + 1..end]) {
                if c.ty != ColType::Int && *v as usize >= self.strings.len() {
                    return false;
                }
            }
            pos = end;
        }
        true
    }
}

struct SegmentRows<'a> {
    seg: &'a Segment,
    pos: usize,
}

impl<'a> Iterator for SegmentRows<'a> {
    type Item = (RelId, &'a [u32]);
    fn next(&mut self) -> Option<Self::Item> {
        let rows = &self.seg.rows;
        if self.pos >= rows.len() {
            return None;
        }
        let rel = RelId(rows[self.pos] as u16);
        let start = self.pos + 1;
        let end = start + rel.arity();
        self.pos = end;
        Some((rel, &rows[start..end]))
    }
}

/// A string table: each string stored once, looked up by hash.
#[derive(Default, Clone)]
pub struct Interner {
    strings: Vec<String>,
    ids: hashbrown::HashTable<u32>,
    hasher: foldhash::fast::FixedState,
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> u32 {
        use std::hash::BuildHasher;
        let hash = self.hasher.hash_one(s);
        let strings = &self.strings;
        if let Some(&id) = self.ids.find(hash, |&id| strings[id as usize] == s) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.strings.push(s.to_string());
        let (strings, hasher) = (&self.strings, &self.hasher);
        self.ids.insert_unique(hash, id, |&i| hasher.hash_one(strings[i as usize].as_str()));
        id
    }

    /// The id of `s`, if it was interned.
    pub fn get(&self, s: &str) -> Option<u32> {
        use std::hash::BuildHasher;
        let hash = self.hasher.hash_one(s);
        self.ids.find(hash, |&id| self.strings[id as usize] == s).copied()
    }

    pub fn str(&self, id: u32) -> &str {
        &self.strings[id as usize]
    }

    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    pub fn into_strings(self) -> Vec<String> {
        self.strings
    }
}

/// Builds a [`Segment`], interning strings locally (each string is stored once; the table holds
/// only ids into it).
#[derive(Default)]
pub struct SegmentBuilder {
    rows: Vec<u32>,
    strings: Interner,
}

impl SegmentBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn intern(&mut self, s: &str) -> u32 {
        self.strings.intern(s)
    }

    /// Appends one fact. Panics only on a programming error (wrong arity or column type).
    pub fn push(&mut self, rel: RelId, vals: &[Val]) {
        let info = rel.info();
        assert_eq!(info.columns.len(), vals.len(), "arity of {}", info.name);
        self.rows.push(rel.0 as u32);
        for (c, v) in info.columns.iter().zip(vals) {
            let id = match (c.ty, v) {
                (ColType::Int, Val::I(n)) => *n,
                (ColType::Path | ColType::Sym, Val::S(s)) => self.intern(s),
                _ => panic!("column {} of {} has the wrong type", c.name, info.name),
            };
            self.rows.push(id);
        }
    }

    pub fn finish(self) -> Segment {
        Segment { strings: self.strings.into_strings(), rows: self.rows }
    }
}

/// Relations kept in a file's detail segment: many rows, never read by resolution, so the index
/// can leave them encoded when only resolution needs the facts.
pub fn is_detail(r: RelId) -> bool {
    // signatures and call shapes stay in the core: the loop's scan judges calls across wires
    // without decoding every file's identifiers
    matches!(r, rel::REFERENCES | rel::CALLS | rel::DEF_SPAN | rel::VISIBILITY | rel::MARKER_TEXT)
}

/// Builds a file's core and detail segments, routing each fact by its relation.
#[derive(Default)]
pub struct SplitBuilder {
    pub core: SegmentBuilder,
    pub detail: SegmentBuilder,
}

impl SplitBuilder {
    pub fn push(&mut self, rel: RelId, vals: &[Val]) {
        if is_detail(rel) { self.detail.push(rel, vals) } else { self.core.push(rel, vals) }
    }

    pub fn finish(self) -> (Segment, Segment) {
        (self.core.finish(), self.detail.finish())
    }
}

/// A merged, deduplicated view of facts with one global string table; the form queries and the
/// facts view read.
#[derive(Default)]
pub struct Facts {
    pub strings: Vec<String>,
    ids: HashMap<String, u32>,
    /// Per relation: sorted, deduplicated rows (each `arity` values).
    pub tables: Vec<Vec<Box<[u32]>>>,
}

impl Facts {
    pub fn from_segments<'a>(segments: impl IntoIterator<Item = &'a Segment>) -> Facts {
        let mut f = Facts { tables: vec![Vec::new(); RELATIONS.len()], ..Default::default() };
        for seg in segments {
            let map: Vec<u32> = seg.strings.iter().map(|s| f.intern(s)).collect();
            for (rel, cols) in seg.all_rows() {
                let info = rel.info();
                let row: Box<[u32]> = info
                    .columns
                    .iter()
                    .zip(cols)
                    .map(|(c, &v)| if c.ty == ColType::Int { v } else { map[v as usize] })
                    .collect();
                f.tables[rel.0 as usize].push(row);
            }
        }
        for (i, t) in f.tables.iter_mut().enumerate() {
            let info = &RELATIONS[i];
            let strings = &f.strings;
            t.sort_by(|a, b| cmp_rows(info, strings, a, b));
            t.dedup();
        }
        f
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.strings.len() as u32;
        self.strings.push(s.to_string());
        self.ids.insert(s.to_string(), id);
        id
    }

    pub fn str(&self, id: u32) -> &str {
        &self.strings[id as usize]
    }

    pub fn rows(&self, rel: RelId) -> &[Box<[u32]>] {
        &self.tables[rel.0 as usize]
    }
}

/// Orders rows by their rendered values (strings by text, ints numerically), so output never
/// depends on interning order.
fn cmp_rows(info: &RelationInfo, strings: &[String], a: &[u32], b: &[u32]) -> std::cmp::Ordering {
    for ((c, x), y) in info.columns.iter().zip(a).zip(b) {
        let o = if c.ty == ColType::Int { x.cmp(y) } else { strings[*x as usize].cmp(&strings[*y as usize]) };
        if o.is_ne() {
            return o;
        }
    }
    std::cmp::Ordering::Equal
}
