//! The facts of a run's new file table, per file: where the table is the stored one (the same
//! paths in the same order), the stored segments stay where they are, opened but neither read nor
//! held one by one, with the files the run parsed laid over them. A one-file change of a large
//! table then materialises one file's facts, not every file's.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::FileFacts;
use super::store::{Blob, Loc, Pack, Part};

pub(super) enum TableFacts {
    /// The stored table's segments (file `i` at `i`) in the opened packs, with this run's facts of
    /// the files it parsed, by place in increasing order.
    Overlay { packs: BTreeMap<u64, Arc<Pack>>, stored: Vec<(Loc, Loc)>, new: Vec<(usize, FileFacts)> },
    /// Every file's facts, one by one.
    Each(Vec<FileFacts>),
}

/// The parsed file at place `i` of an overlay, if it is one.
fn new_at(new: &[(usize, FileFacts)], i: usize) -> Option<&FileFacts> {
    new.binary_search_by_key(&i, |(k, _)| *k).ok().map(|k| &new[k].1)
}

impl TableFacts {
    /// File `i`'s facts where they are at hand: this run's, or any file's once materialised.
    pub(super) fn at(&self, i: usize) -> Option<&FileFacts> {
        match self {
            TableFacts::Overlay { new, .. } => new_at(new, i),
            TableFacts::Each(v) => v.get(i),
        }
    }

    /// The facts of the files this run parsed.
    pub(super) fn parsed(&self) -> Vec<&FileFacts> {
        match self {
            TableFacts::Overlay { new, .. } => new.iter().map(|(_, f)| f).collect(),
            TableFacts::Each(v) => v.iter().filter(|f| f.is_new()).collect(),
        }
    }

    /// Every file's facts, one by one (a stored file's opened, not read).
    pub(super) fn each(self) -> Vec<FileFacts> {
        match self {
            TableFacts::Each(v) => v,
            TableFacts::Overlay { packs, stored, new } => {
                let mut new = new.into_iter().peekable();
                let mut each = Vec::with_capacity(stored.len());
                for (i, (c, d)) in stored.into_iter().enumerate() {
                    match new.next_if(|(k, _)| *k == i) {
                        Some((_, f)) => each.push(f),
                        None => each.push(FileFacts::stored(Blob::lazy(&packs, c), Blob::lazy(&packs, d))),
                    }
                }
                each
            }
        }
    }

    /// Each file's core and detail, where it is stored (if it is) and its length, in table order.
    pub(super) fn places(&self) -> Box<dyn Iterator<Item = (Option<Loc>, u64)> + '_> {
        let place = |b: &Blob| (b.loc(), b.len());
        match self {
            TableFacts::Each(v) => Box::new(v.iter().flat_map(move |f| [place(&f.core_blob), place(&f.detail)])),
            TableFacts::Overlay { stored, new, .. } => {
                let mut new = new.iter().peekable();
                Box::new(stored.iter().enumerate().flat_map(move |(i, (c, d))| match new.next_if(|(k, _)| *k == i) {
                    Some((_, f)) => [place(&f.core_blob), place(&f.detail)],
                    None => [(Some(*c), c.len), (Some(*d), d.len)],
                }))
            }
        }
    }

    /// File `i`'s core and detail as parts of a write; with `bytes`, a stored blob's bytes are read
    /// and verified (an overlay has none read: a write that needs them materialises it first).
    pub(super) fn parts(&self, i: usize, bytes: bool) -> (Part<'_>, Part<'_>) {
        let f = match self {
            TableFacts::Overlay { stored, new, .. } => match new_at(new, i) {
                Some(f) => f,
                None => {
                    debug_assert!(!bytes, "an overlay's stored blobs are not read");
                    let (c, d) = stored[i];
                    return (Part::Stored(c, None), Part::Stored(d, None));
                }
            },
            TableFacts::Each(v) => &v[i],
        };
        (Part::of(&f.core_blob, bytes), Part::of(&f.detail, bytes))
    }
}
