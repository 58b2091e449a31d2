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
//! Layout: the magic `ANDONDRV`, the format version (u32 LE), the key (facts u128 LE, rules u64
//! LE), the body's length and xxh3-64 (u64 LE each), then the postcard body ([`KeptWire`]). The
//! key and the length are checked before the body is read.

use std::io::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Budget, Error, Store, load_with, run_within};
use crate::dialect::Program;
use crate::facts::{CONSTANTS, RULE_SOURCES, RelId, rel};
use crate::index::{Index, Stamp};

const MAGIC: &[u8; 8] = b"ANDONDRV";
const FORMAT: u32 = 2;
/// Magic, version, facts key, rules key, body length, body checksum.
const PREAMBLE: usize = 8 + 4 + 16 + 8 + 8 + 8;
/// Larger files are not read (a kept view is under 1 MiB on a repository of 5,700 files).
const MAX_BYTES: u64 = 256 << 20;

/// A set of derived relations kept together, and how they are derived: by the built-in rules on
/// the run-time engine (which measures faster than the compiled one on both views: 0.60 s against
/// 0.72 s for the stream of a monorepo of 5,700 files, 0.45 s against 1.3 s for the loop's scan of
/// 42 crates), decoding the detail facts of the files whose language `detail_for` accepts (a view
/// that decodes fewer has another name: its rows may differ).
pub struct View {
    pub name: &'static str,
    /// The relations its users read: derived ones, and any base one read beside them.
    pub rels: &'static [RelId],
    pub detail_for: fn(&str) -> bool,
}

/// The stream's relations: stages, wires and what carries them, the stream order and the cycles.
pub const STREAM: View = View {
    name: "stream",
    rels: &[
        rel::STAGE,
        rel::STAGE_INFO,
        rel::STAGE_MODE,
        rel::DECLARED_STAGE,
        rel::IN_STAGE,
        rel::UNDECLARED_WIRE_IMPORT,
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
};

#[derive(Serialize, Deserialize)]
struct KeptWire {
    view: String,
    /// Every string the rows name, once.
    strings: Vec<String>,
    /// (relation, arity, rows flattened, strings as indexes into `strings`).
    rels: Vec<(String, u32, Vec<u32>)>,
}

/// The rules, the code that derives and the andon: rows kept by another version are never read.
fn rules_digest() -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(&crate::facts::DERIVE_DIGEST.to_le_bytes());
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

/// `view`'s relations over `idx`: recalled when kept for these facts, else derived within
/// `budget` (and kept, when `write`). The store holds `view.rels`; a relation outside them may be
/// empty.
pub fn derive(prog: &Program, idx: &Index, view: &View, write: bool, budget: Budget) -> Result<Store, Error> {
    if let Some(store) = recall(prog, &idx.stamp, view) {
        return Ok(store);
    }
    let goals: Vec<usize> = view.rels.iter().map(|r| r.0 as usize).collect();
    let need = prog.needed(&goals);
    let mut store = load_with(prog, idx, Some(&need), &view.detail_for)?;
    run_within(prog, &mut store, Some(&need), budget)?;
    if write {
        keep(prog, &idx.stamp, view, &store);
    }
    Ok(store)
}

/// The kept rows of `view` for the facts of `stamp`, in a store of `prog`; `None` when none are
/// kept for these facts and rules, or the file cannot be read whole and intact, or it names a
/// relation that is not the view's.
pub fn recall(prog: &Program, stamp: &Stamp, view: &View) -> Option<Store> {
    let w = read(stamp, view)?;
    if w.view != view.name {
        return None;
    }
    let mut store = Store::new(prog, CONSTANTS);
    let ids: Vec<u32> = w.strings.iter().map(|s| store.syms.intern(s)).collect();
    let mut seen = Vec::new();
    for (name, arity, data) in &w.rels {
        let r = view.rels.iter().find(|r| rel_name(prog, **r) == Some(name.as_str()))?;
        let decl = &prog.rels[r.0 as usize];
        if decl.columns.len() != *arity as usize || *arity == 0 || data.len() % *arity as usize != 0 {
            return None;
        }
        let rows = &mut store.rels[r.0 as usize];
        rows.data.reserve(data.len());
        for chunk in data.chunks(*arity as usize) {
            for (v, (_, ty)) in chunk.iter().zip(&decl.columns) {
                rows.data.push(if *ty == crate::dialect::Ty::Int { *v } else { *ids.get(*v as usize)? });
            }
        }
        rows.normalize();
        seen.push(*r);
    }
    // every relation of the view is in the file, or the file is not the view's
    view.rels.iter().all(|r| seen.contains(r)).then_some(store)
}

fn rel_name(prog: &Program, r: RelId) -> Option<&str> {
    prog.rels.get(r.0 as usize).map(|d| d.name.as_str())
}

/// The kept file of `view`, when its key is this stamp's and these rules', read and checked: the
/// preamble first, so a file of other facts or of an unexpected length is never read whole.
fn read(stamp: &Stamp, view: &View) -> Option<KeptWire> {
    use std::io::Read;
    let mut file = crate::index::walk::open_regular(&path_of(stamp, view)).ok()?;
    let mut pre = [0u8; PREAMBLE];
    file.read_exact(&mut pre).ok()?;
    let u64_at = |at: usize| u64::from_le_bytes(pre[at..at + 8].try_into().expect("8 bytes"));
    let facts = u128::from_le_bytes(pre[12..28].try_into().ok()?);
    let (rules, len, sum) = (u64_at(28), u64_at(36), u64_at(44));
    let version = u32::from_le_bytes(pre[8..12].try_into().ok()?);
    if &pre[..8] != MAGIC || version != FORMAT || facts != stamp.facts || rules != rules_digest() || len > MAX_BYTES {
        return None;
    }
    if file.metadata().ok()?.len() != PREAMBLE as u64 + len {
        return None;
    }
    let mut body = vec![0u8; len as usize];
    file.read_exact(&mut body).ok()?;
    if xxhash_rust::xxh3::xxh3_64(&body) != sum {
        return None;
    }
    postcard::from_bytes(&body).ok()
}

/// Keeps `view`'s rows of `store` for the facts of `stamp`. Best effort: a cache that cannot be
/// written is derived again next time.
pub fn keep(prog: &Program, stamp: &Stamp, view: &View, store: &Store) {
    let mut strings: Vec<String> = Vec::new();
    let mut index: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    let mut rels = Vec::new();
    for r in view.rels {
        let decl = &prog.rels[r.0 as usize];
        let rows = &store.rels[r.0 as usize];
        let mut data = Vec::with_capacity(rows.data.len());
        for row in rows.iter() {
            for (v, (_, ty)) in row.iter().zip(&decl.columns) {
                data.push(if *ty == crate::dialect::Ty::Int {
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
    let w = KeptWire { view: view.name.into(), strings, rels };
    let Ok(body) = postcard::to_allocvec(&w) else { return };
    let mut bytes = Vec::with_capacity(PREAMBLE + body.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT.to_le_bytes());
    bytes.extend_from_slice(&stamp.facts.to_le_bytes());
    bytes.extend_from_slice(&rules_digest().to_le_bytes());
    bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&body).to_le_bytes());
    bytes.extend_from_slice(&body);
    // a name no other writer of this process uses; one left by a dead process of the same id is
    // removed (never written through)
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = stamp.dir.join(format!("{}{}.{n}", crate::index::KEPT_TMP_PREFIX, std::process::id()));
    let create = || std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp);
    let file = match create() {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let _ = std::fs::remove_file(&tmp);
            create()
        }
        other => other,
    };
    let Ok(mut f) = file else { return };
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
    for r in view.rels {
        let Some(i) = prog.relation(crate::facts::RELATIONS[r.0 as usize].name) else { continue };
        let reads = prog.needed(&[i]);
        let own_rules = prog.rules[prog.builtin_rules..].iter().all(|rule| !reads[rule.head]);
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
                data.push(if *ty == crate::dialect::Ty::Int { *v } else { store.syms.intern(from.syms.str(*v)) });
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
        let derived = derive(&prog, &idx, &STREAM, true, Budget::UNLIMITED).unwrap();
        assert_eq!(wires(&prog, &derived), [("core".to_string(), "api".to_string())]);
        let recalled = recall(&prog, &idx.stamp, &STREAM).expect("kept for these facts");
        for r in STREAM.rels {
            let decl = &prog.rels[r.0 as usize];
            let rows = |s: &Store| {
                let mut v: Vec<Vec<String>> = s.rels[r.0 as usize]
                    .iter()
                    .map(|x| x.iter().zip(&decl.columns).map(|(v, (_, ty))| s.render(*ty, *v)).collect())
                    .collect();
                v.sort();
                v
            };
            assert_eq!(rows(&recalled), rows(&derived), "{}", decl.name);
        }
        let other = Stamp { dir: idx.stamp.dir.clone(), facts: idx.stamp.facts ^ 1 };
        assert!(recall(&prog, &other, &STREAM).is_none(), "other facts recall nothing");
    }

    #[test]
    fn a_recalled_row_is_what_was_kept_not_derived_again() {
        // the kept file is what answers: a row kept under the right key is recalled as it is
        let (_t, idx) = indexed(REPO);
        let prog = super::super::builtin_program();
        let mut store = derive(&prog, &idx, &STREAM, false, Budget::UNLIMITED).unwrap();
        let r = prog.relation("Wire").unwrap();
        let (a, b) = (store.syms.intern("kept-only"), store.syms.intern("api"));
        store.rels[r].data.extend([a, b]);
        store.rels[r].normalize();
        keep(&prog, &idx.stamp, &STREAM, &store);
        let recalled = derive(&prog, &idx, &STREAM, true, Budget::UNLIMITED).unwrap();
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

    #[test]
    fn a_kept_file_naming_a_relation_outside_its_view_is_not_read() {
        let (_t, idx) = indexed(REPO);
        let prog = super::super::builtin_program();
        let store = derive(&prog, &idx, &STREAM, true, Budget::UNLIMITED).unwrap();
        assert!(recall(&prog, &idx.stamp, &STREAM).is_some());
        // the same rows and one more relation (`File`, a base relation), under the right key
        let path = path_of(&idx.stamp, &STREAM);
        let bytes = std::fs::read(&path).unwrap();
        let mut w: KeptWire = postcard::from_bytes(&bytes[PREAMBLE..]).unwrap();
        let n = w.strings.len() as u32;
        w.strings.extend(["injected.py".to_string(), "python".to_string()]);
        w.rels.push(("File".into(), 2, vec![n, n + 1]));
        let body = postcard::to_allocvec(&w).unwrap();
        let mut forged = bytes[..36].to_vec();
        forged.extend_from_slice(&(body.len() as u64).to_le_bytes());
        forged.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&body).to_le_bytes());
        forged.extend_from_slice(&body);
        std::fs::write(&path, forged).unwrap();
        assert!(recall(&prog, &idx.stamp, &STREAM).is_none(), "a relation outside the view");
        drop(store);
    }
}
