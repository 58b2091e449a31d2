//! Derived relations kept between runs, so that a run over facts that did not change does not
//! derive them again.
//!
//! `.andon/derived-<view>.bin` holds the rows of one [`View`]'s relations with the key they were
//! derived under: the [`Stamp`] of the facts (every segment's checksum) and a digest of the rules
//! and of this andon. A run whose facts or rules differ, or that finds the file damaged, derives
//! again; nothing is ever read from a file whose key or checksum does not match. The file is a
//! cache, never a source of truth: written to a temporary name and renamed (a run killed while
//! writing leaves the old file or none), by whichever run derived it (two runs derive the same
//! rows), and a write that fails (a read-only `.andon/`) is skipped.
//!
//! Layout: the magic `ANDONDRV`, the format version (u32 LE), the xxh3-64 of the body (u64 LE),
//! then the postcard body ([`KeptWire`]).

use std::io::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::lang::Program;
use super::{Store, load_with, run_compiled};
use crate::facts::{CONSTANTS, RULE_SOURCES, RelId, rel};
use crate::index::{Index, Stamp};

const MAGIC: &[u8; 8] = b"ANDONDRV";
const FORMAT: u32 = 1;
const PREAMBLE: usize = 8 + 4 + 8;
/// Larger files are not read (a kept view is a few MiB on a repository of 5,000 files).
const MAX_BYTES: u64 = 1 << 30;

/// A set of derived relations kept together, and how they are derived: by the built-in rules
/// from the index, decoding the detail facts of the files whose language `detail_for` accepts (a
/// view that decodes fewer has another name: its rows may differ).
pub struct View {
    pub name: &'static str,
    /// The relations its users read: derived ones, and any base one read beside them.
    pub rels: &'static [RelId],
    pub detail_for: fn(&str) -> bool,
    /// The engine that derives it: the two agree (a differential test holds them to it), and
    /// which is faster depends on the rules (for both views here, the run-time engine: 0.60 s
    /// against 0.72 s for the stream of a monorepo of 5,700 files, 0.45 s against 1.3 s for the
    /// loop's scan of 42 crates).
    pub engine: Engine,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Compiled,
    Runtime,
}

/// The stream's relations: stages, wires and what carries them, the stream order and the cycles.
pub const STREAM: View = View {
    name: "stream",
    rels: &[
        rel::STAGE,
        rel::STAGE_INFO,
        rel::IN_STAGE,
        rel::WIRE,
        rel::WIRE_IMPORT,
        rel::WIRE_REFERENCE,
        rel::WIRE_SYMBOL,
        rel::WIRE_CONFIDENCE,
        rel::WIRE_EDGE_KIND,
        rel::STREAM_ORDER,
        rel::STAGE_CYCLE,
        rel::MODULE_CYCLE,
        rel::MODULE_EDGE,
    ],
    detail_for: |_| true,
    engine: Engine::Runtime,
};

#[derive(Serialize, Deserialize)]
struct KeptWire {
    facts: u128,
    rules: u64,
    view: String,
    /// Every string the rows name, once.
    strings: Vec<String>,
    /// (relation, arity, rows flattened, strings as indexes into `strings`).
    rels: Vec<(String, u32, Vec<u32>)>,
}

/// The rules and the andon that derive: kept rows of another version are never read.
fn rules_digest() -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    for (path, text) in RULE_SOURCES {
        h.update(&(path.len() as u64).to_le_bytes());
        h.update(path.as_bytes());
        h.update(&(text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
    }
    h.digest()
}

fn path_of(stamp: &Stamp, view: &View) -> PathBuf {
    stamp.dir.join(format!("derived-{}.bin", view.name))
}

/// `view`'s relations over `idx`: recalled when kept for these facts, else derived (and kept,
/// when `keep`). The store holds `view.rels`; a relation outside them
/// may be empty.
pub fn derive(prog: &Program, idx: &Index, view: &View, keep: bool) -> Result<Store, String> {
    if let Some(store) = recall(prog, &idx.stamp, view) {
        return Ok(store);
    }
    let goals: Vec<usize> = view.rels.iter().map(|r| r.0 as usize).collect();
    let need = prog.needed(&goals);
    let mut store = load_with(prog, idx, Some(&need), &view.detail_for)?;
    match view.engine {
        Engine::Compiled => run_compiled(prog, &mut store, Some(&need)),
        Engine::Runtime => super::run_runtime(prog, &mut store, Some(&need)),
    }
    if keep {
        write(prog, &idx.stamp, view, &store);
    }
    Ok(store)
}

/// The kept rows of `view` for the facts of `stamp`, in a store of `prog`; `None` when none are
/// kept for these facts and rules, or the file cannot be read whole and intact.
pub fn recall(prog: &Program, stamp: &Stamp, view: &View) -> Option<Store> {
    let bytes = crate::index::walk::read_regular(&path_of(stamp, view), MAX_BYTES).ok()?;
    let w = decode(&bytes)?;
    if w.facts != stamp.facts || w.rules != rules_digest() || w.view != view.name {
        return None;
    }
    let mut store = Store::new(prog, CONSTANTS);
    let ids: Vec<u32> = w.strings.iter().map(|s| store.syms.intern(s)).collect();
    for (name, arity, data) in &w.rels {
        let r = prog.relation(name)?;
        let decl = &prog.rels[r];
        if decl.columns.len() != *arity as usize || *arity == 0 || data.len() % *arity as usize != 0 {
            return None;
        }
        let rows = &mut store.rels[r];
        rows.data.reserve(data.len());
        for chunk in data.chunks(*arity as usize) {
            for (v, (_, ty)) in chunk.iter().zip(&decl.columns) {
                rows.data.push(if *ty == super::lang::Ty::Int { *v } else { *ids.get(*v as usize)? });
            }
        }
        rows.normalize();
    }
    // every relation of the view is in the file, or the file is not the view's
    view.rels.iter().all(|r| w.rels.iter().any(|(n, ..)| Some(n.as_str()) == rel_name(prog, *r))).then_some(store)
}

fn rel_name(prog: &Program, r: RelId) -> Option<&str> {
    prog.rels.get(r.0 as usize).map(|d| d.name.as_str())
}

fn decode(bytes: &[u8]) -> Option<KeptWire> {
    if bytes.len() < PREAMBLE || &bytes[..8] != MAGIC {
        return None;
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().ok()?);
    let sum = u64::from_le_bytes(bytes[12..20].try_into().ok()?);
    let body = &bytes[PREAMBLE..];
    if version != FORMAT || xxhash_rust::xxh3::xxh3_64(body) != sum {
        return None;
    }
    postcard::from_bytes(body).ok()
}

/// Keeps `view`'s rows of `store` for the facts of `stamp`. Best effort: a cache that cannot be
/// written is derived again next time.
fn write(prog: &Program, stamp: &Stamp, view: &View, store: &Store) {
    let mut strings: Vec<String> = Vec::new();
    let mut index: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    let mut rels = Vec::new();
    for r in view.rels {
        let decl = &prog.rels[r.0 as usize];
        let rows = &store.rels[r.0 as usize];
        let mut data = Vec::with_capacity(rows.data.len());
        for row in rows.iter() {
            for (v, (_, ty)) in row.iter().zip(&decl.columns) {
                data.push(if *ty == super::lang::Ty::Int {
                    *v
                } else {
                    *index.entry(*v).or_insert_with(|| {
                        strings.push(store.syms.str(*v).to_string());
                        strings.len() as u32 - 1
                    })
                });
            }
        }
        rels.push((decl.name.clone(), decl.columns.len() as u32, data));
    }
    let w = KeptWire { facts: stamp.facts, rules: rules_digest(), view: view.name.into(), strings, rels };
    let Ok(body) = postcard::to_allocvec(&w) else { return };
    let mut bytes = Vec::with_capacity(PREAMBLE + body.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT.to_le_bytes());
    bytes.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&body).to_le_bytes());
    bytes.extend_from_slice(&body);
    let tmp = stamp.dir.join(format!("{}{}", crate::index::KEPT_TMP_PREFIX, std::process::id()));
    // `create_new`: another thread of this process writing the same view wins; this one skips
    let Ok(mut f) = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp) else { return };
    let written = f.write_all(&bytes).is_ok();
    drop(f);
    if !written || std::fs::rename(&tmp, path_of(stamp, view)).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// The relations of `view` a program may take as kept rather than derive, indexed by the
/// program's relations: those the built-in rules alone give (no rule file adds to them or to
/// anything they read), that read no ledger relation (the ledger is not in the key), each alone
/// in its stratum (so no stratum that is evaluated derives it again).
pub fn leaves(prog: &Program, view: &View) -> Vec<bool> {
    let mut out = vec![false; prog.rels.len()];
    let builtin = |source: &str| RULE_SOURCES.iter().any(|(p, _)| *p == source);
    for r in view.rels {
        let Some(i) = prog.relation(crate::facts::RELATIONS[r.0 as usize].name) else { continue };
        let reads = prog.needed(&[i]);
        let own_rules = prog.rules.iter().all(|rule| !reads[rule.head] || builtin(&rule.source));
        let no_ledger = !super::needs_ledger(prog, &reads);
        let alone = prog.strata.iter().all(|st| !st.rels.contains(&i) || st.rels.len() == 1);
        out[i] = own_rules && no_ledger && alone;
    }
    out
}

/// A store of `to` holding the rows of `view`'s relations from `from`, a store of `from_prog`.
pub fn transfer(from_prog: &Program, from: &Store, to: &Program, view: &View) -> Store {
    let mut store = Store::new(to, CONSTANTS);
    for r in view.rels {
        let (Some(a), Some(b)) = (
            rel_name(from_prog, *r).and_then(|n| from_prog.relation(n)),
            rel_name(from_prog, *r).and_then(|n| to.relation(n)),
        ) else {
            continue;
        };
        let cols = &to.rels[b].columns;
        let mut data = Vec::with_capacity(from.rels[a].data.len());
        for row in from.rels[a].iter() {
            for (v, (_, ty)) in row.iter().zip(cols) {
                data.push(if *ty == super::lang::Ty::Int { *v } else { store.syms.intern(from.syms.str(*v)) });
            }
        }
        store.rels[b].data = data;
        store.rels[b].normalize();
    }
    store
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{IndexOptions, walk::WalkOptions};

    fn indexed(files: &[(&str, &str)]) -> (tempfile::TempDir, Index) {
        let t = tempfile::tempdir().unwrap();
        for (p, text) in files {
            let p = t.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let opts =
            IndexOptions { walk: WalkOptions::standard(), max_file_size: 1 << 20, threads: Some(1), rebuild: false };
        crate::index::update(t.path(), &opts, &|_, _| {}).unwrap();
        let idx = crate::index::load(t.path()).unwrap().unwrap();
        (t, idx)
    }

    const REPO: &[(&str, &str)] =
        &[("core/__init__.py", "def parse():\n    return 1\n"), ("api/__init__.py", "from core import parse\n")];

    fn wires(prog: &Program, s: &Store) -> Vec<(String, String)> {
        let r = prog.relation("Wire").unwrap();
        s.rels[r].iter().map(|x| (s.syms.str(x[0]).to_string(), s.syms.str(x[1]).to_string())).collect()
    }

    #[test]
    fn what_is_kept_is_recalled_for_the_same_facts_only() {
        let (_t, idx) = indexed(REPO);
        let prog = super::super::builtin_program();
        assert!(recall(&prog, &idx.stamp, &STREAM).is_none(), "nothing is kept yet");
        let derived = derive(&prog, &idx, &STREAM, true).unwrap();
        assert_eq!(wires(&prog, &derived), [("core".to_string(), "api".to_string())]);
        let recalled = recall(&prog, &idx.stamp, &STREAM).expect("kept for these facts");
        for r in STREAM.rels {
            let rows = |s: &Store| {
                let mut v: Vec<Vec<String>> = s.rels[r.0 as usize]
                    .iter()
                    .map(|x| x.iter().map(|v| s.syms.str(*v).to_string()).collect())
                    .collect();
                v.sort();
                v
            };
            if prog.rels[r.0 as usize].columns.iter().all(|c| c.1 != super::super::lang::Ty::Int) {
                assert_eq!(rows(&recalled), rows(&derived), "{}", prog.rels[r.0 as usize].name);
            }
        }
        let other = Stamp { dir: idx.stamp.dir.clone(), facts: idx.stamp.facts ^ 1 };
        assert!(recall(&prog, &other, &STREAM).is_none(), "other facts recall nothing");
    }

    #[test]
    fn a_recalled_row_is_what_was_kept_not_derived_again() {
        // the kept file is what answers: a row kept under the right key is recalled as it is
        let (_t, idx) = indexed(REPO);
        let prog = super::super::builtin_program();
        let mut store = derive(&prog, &idx, &STREAM, false).unwrap();
        let r = prog.relation("Wire").unwrap();
        let (a, b) = (store.syms.intern("kept-only"), store.syms.intern("api"));
        store.rels[r].data.extend([a, b]);
        store.rels[r].normalize();
        write(&prog, &idx.stamp, &STREAM, &store);
        let recalled = derive(&prog, &idx, &STREAM, true).unwrap();
        assert!(wires(&prog, &recalled).contains(&("kept-only".into(), "api".into())));
    }

    #[test]
    fn a_relation_a_rule_file_adds_to_is_no_leaf() {
        let q =
            super::super::prepare("Wire(p, c)", &[("x.dl".into(), "Wire(\"x\", s) :- Stage(s, _).\n".into())]).unwrap();
        let taken = leaves(&q.prog, &STREAM);
        let is_leaf = |n: &str| taken[q.prog.relation(n).unwrap()];
        assert!(!is_leaf("Wire"), "a rule file adds to Wire");
        assert!(!is_leaf("StreamOrder"), "the stream order reads Wire");
        assert!(is_leaf("Stage") && is_leaf("InStage"), "what Wire's new rule reads is still the built-in rules'");
        let plain = super::super::prepare("Wire(p, c)", &[]).unwrap();
        let all = leaves(&plain.prog, &STREAM);
        assert!(
            STREAM.rels.iter().all(|r| all[plain.prog.relation(crate::facts::RELATIONS[r.0 as usize].name).unwrap()])
        );
    }
}
