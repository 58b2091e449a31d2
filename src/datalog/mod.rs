//! The Datalog layer: one dialect ([`crate::dialect`]), two engines.
//! - The run-time engine ([`eval`]) evaluates everything andon derives: the built-in rules
//!   (`rules/*.dl`) for the stream, the loop's scan, `check`, verify and `why`, and ad hoc queries
//!   and user rule files, each within a budget. It measures faster than the compiled program on
//!   all built-in rules (0.84× and 0.82× its time on the bench corpora, docs/performance.md).
//! - The same built-in rules, checked by `build.rs` with [`crate::dialect`] and compiled by crepe
//!   ([`run_compiled`]), are the reference a differential test holds the run-time engine to
//!   (`tests/it/datalog.rs`); no command runs them.
//!
//! Computed relations (stream order, cycles) are filled by [`crate::datalog::graph`] after the relations
//! they read are complete.

pub mod budget;
mod error;
pub mod eval;
pub mod explain;
pub mod graph;
pub mod kept;
pub mod lint;

include!(concat!(env!("OUT_DIR"), "/compiled.rs"));

use crate::dialect::{self, Builder, DialectError, Program, RelKind, Ty};
use crate::facts::{CONSTANTS, RELATIONS, RULE_SOURCES, RelId, Segment, is_detail};
use crate::index::Index;
pub use budget::{Budget, Exceeded};
pub use error::Error;
pub use eval::{Rows, Store};

/// A builder holding the schema and the built-in rules (relations numbered as [`RELATIONS`]).
pub fn builtin_builder() -> Builder {
    let mut b = Builder::new();
    for (i, (path, text)) in RULE_SOURCES.iter().enumerate() {
        b.add_source(path, text, i == 0).expect("built-in rules were checked by build.rs");
    }
    b.builtin_done();
    b
}

/// The built-in program, as the run-time engine sees it.
pub fn builtin_program() -> Program {
    builtin_builder().finish().expect("built-in rules were checked by build.rs")
}

/// Adds rendered rows of base relations that do not come from the index (the ledger's).
pub fn add_rows(prog: &Program, store: &mut Store, rows: &[(&str, Vec<String>)]) {
    let mut touched = Vec::new();
    for (name, row) in rows {
        let Some(r) = prog.relation(name) else { continue };
        for (v, (_, ty)) in row.iter().zip(&prog.rels[r].columns) {
            let id = if *ty == Ty::Int { v.parse().unwrap_or(0) } else { store.syms.intern(v) };
            store.rels[r].data.push(id);
        }
        touched.push(r);
    }
    touched.sort_unstable();
    touched.dedup();
    for r in touched {
        store.rels[r].normalize();
    }
}

/// Whether a program needs any relation read from the ledger.
pub fn needs_ledger(prog: &Program, need: &[bool]) -> bool {
    prog.rels.iter().enumerate().any(|(i, r)| need[i] && r.name.starts_with("Ledger") && r.kind == RelKind::Base)
}

/// Which base relations a set of needed relations reads.
fn needs_detail(need: &[bool]) -> bool {
    (0..RELATIONS.len()).any(|r| need[r] && RELATIONS[r].kind == RelKind::Base && is_detail(RelId(r as u16)))
}

/// Loads the base relations in `need` (all when `None`) from an index into a fresh store.
pub fn load(prog: &Program, idx: &Index, need: Option<&[bool]>) -> Result<Store, Error> {
    load_with(prog, idx, need, &|_| true)
}

/// [`load`], decoding the detail facts (references, calls, spans) only of files whose language
/// `detail_for` accepts: a caller that needs identifiers only where they can mean something (Rust
/// paths to a crate used without `use`) saves decoding the largest relation everywhere else.
pub fn load_with(
    prog: &Program,
    idx: &Index,
    need: Option<&[bool]>,
    detail_for: &dyn Fn(&str) -> bool,
) -> Result<Store, Error> {
    let mut store = Store::new(prog, CONSTANTS);
    load_into(&mut store, idx, need, detail_for)?;
    Ok(store)
}

/// Adds the base relations in `need` (all when `None`) from an index to `store`.
fn load_into(
    store: &mut Store,
    idx: &Index,
    need: Option<&[bool]>,
    detail_for: &dyn Fn(&str) -> bool,
) -> Result<(), Error> {
    let want = |r: usize| RELATIONS.get(r).is_some_and(|i| i.kind == RelKind::Base) && need.is_none_or(|n| n[r]);
    let detail = need.is_none_or(needs_detail);
    let add = |seg: &Segment, store: &mut Store| {
        let mut map: Vec<u32> = vec![u32::MAX; seg.strings.len()];
        for (rel, cols) in seg.all_rows() {
            let r = rel.0 as usize;
            if !want(r) {
                continue;
            }
            for (c, &v) in RELATIONS[r].columns.iter().zip(cols) {
                let id = if c.ty == crate::facts::ColType::Int {
                    v
                } else {
                    if map[v as usize] == u32::MAX {
                        map[v as usize] = store.syms.intern(seg.str(v));
                    }
                    map[v as usize]
                };
                store.rels[r].data.push(id);
            }
        }
    };
    for (f, meta) in idx.facts.iter().zip(&idx.files) {
        add(f.core(), store);
        if detail && detail_for(&meta.lang) {
            add(&f.detail().map_err(|e| Error::DecodeFacts { source: e.into() })?, store);
        }
    }
    add(&idx.global, store);
    for r in 0..RELATIONS.len() {
        if want(r) {
            store.rels[r].normalize();
        }
    }
    Ok(())
}

/// Runs the compiled built-in rules over `store` for the relations in `need` (all when `None`;
/// their base relations must be loaded), then the needed computed relations: the reference the
/// differential test and the benchmarks hold the run-time engine to.
pub fn run_compiled(prog: &Program, store: &mut Store, need: Option<&[bool]>) {
    for m in compiled::MODULES {
        if need.is_some_and(|n| !m.outputs.iter().any(|&o| n[o])) {
            continue;
        }
        for (rel, data) in (m.run)(&store.rels) {
            store.rels[rel].data = data;
        }
    }
    for (i, r) in prog.rels.iter().enumerate() {
        if r.kind == RelKind::Computed && need.is_none_or(|n| n[i]) {
            let data = crate::datalog::graph::compute(prog, store, i);
            let mut rows = Rows { arity: r.columns.len(), data };
            rows.normalize();
            store.rels[i] = rows;
        }
    }
}

/// Runs the built-in rules (and any added) with the run-time engine, for the relations `need`
/// (all when `None`), without a budget: the index bounds what the built-in rules derive.
pub fn run_runtime(prog: &Program, store: &mut Store, need: Option<&[bool]>) {
    run_within(prog, store, need, Budget::UNLIMITED).expect("an unlimited budget is never exceeded");
}

/// [`run_runtime`] within `budget`: Err names the budget that ran out and the relation that grew.
pub fn run_within(prog: &Program, store: &mut Store, need: Option<&[bool]>, budget: Budget) -> Result<(), Exceeded> {
    eval::intern_constants(prog, store);
    eval::evaluate(prog, store, need, &crate::datalog::graph::compute, budget)
}

/// A query's answer: its variables and every binding, sorted by rendered value.
pub struct Answer {
    pub columns: Vec<String>,
    pub types: Vec<Ty>,
    pub rows: Vec<Vec<String>>,
    /// The query relation (for explanations).
    pub rel: usize,
}

/// A parsed and checked query over the built-in program plus user rule files.
pub struct Query {
    pub prog: Program,
    pub columns: Vec<String>,
    pub rel: usize,
}

impl Query {
    /// The cartesian products in the bodies of the query and its rule files.
    pub fn cartesian_products(&self) -> Vec<lint::Cartesian> {
        lint::cartesian_products(&self.prog, &|source| !RULE_SOURCES.iter().any(|(path, _)| *path == source))
    }
}

/// Checks a query and user rules against the schema and the built-in rules.
pub fn prepare(query: &str, rule_files: &[(String, String)]) -> Result<Query, DialectError> {
    let mut b = builtin_builder();
    b.implicit_heads = true;
    for (name, text) in rule_files {
        b.add_source(name, text, false)?;
    }
    let body = dialect::parse_query("query", query)?;
    let columns = b.add_query("query", body)?;
    let prog = b.finish()?;
    let rel = prog.relation(dialect::QUERY_REL).expect("query relation declared");
    Ok(Query { prog, columns, rel })
}

/// The facts a query reads: an index already loaded, or a stored one, loaded only when the
/// relations kept for its facts ([`kept`]) cannot answer alone.
pub enum Facts<'a> {
    Loaded(&'a Index),
    /// A stored index, loaded by `load` (its caller's error) only when needed.
    Stored {
        stamp: crate::index::Stamp,
        load: &'a dyn Fn() -> Result<Index, Box<dyn std::error::Error + Send + Sync>>,
    },
}

/// Evaluates a prepared query over an index within `budget`: loads only the base relations it
/// reads, takes the stream's relations as kept where it can (never to explain: an explanation
/// walks their derivation), runs only the strata it needs. Err says what failed (a budget that
/// ran out, by name).
pub fn answer(
    q: &Query,
    facts: &Facts,
    explain: bool,
    extra: &[(&str, Vec<String>)],
    budget: Budget,
) -> Result<(Answer, Store), Error> {
    let (mut store, need) = seeded(q, facts, explain, budget)?;
    add_rows(&q.prog, &mut store, extra);
    if explain {
        store.rounds = Some(Default::default());
    }
    run_within(&q.prog, &mut store, Some(&need), budget)?;
    let types: Vec<Ty> = q.prog.rels[q.rel].columns.iter().map(|c| c.1).collect();
    let found = &store.rels[q.rel];
    let text: usize = found
        .iter()
        .flat_map(|r| r.iter().zip(&types))
        .map(|(v, t)| if *t == Ty::Int { 10 } else { store.syms.str(*v).len() })
        .sum();
    budget::rendered_fits(budget, found.len(), found.data.len(), text, dialect::QUERY_REL)?;
    let rows = store
        .sorted_rows(&q.prog, q.rel)
        .into_iter()
        .map(|r| r.iter().zip(&types).map(|(v, t)| store.render(*t, *v)).collect())
        .collect();
    Ok((Answer { columns: q.columns.clone(), types, rows, rel: q.rel }, store))
}

/// The store a query starts from, with what is left to evaluate: the stream's relations it
/// reaches recalled (or derived and kept), and the base relations it still reads loaded.
fn seeded(q: &Query, facts: &Facts, explain: bool, budget: Budget) -> Result<(Store, Vec<bool>), Error> {
    let mut own: Option<Index> = None;
    let index = |own: &mut Option<Index>| -> Result<(), Error> {
        if let (None, Facts::Stored { load, .. }) = (&own, facts) {
            *own = Some(load().map_err(|source| Error::LoadIndex { source })?);
        }
        Ok(())
    };
    let plain = |own: &mut Option<Index>, need: Vec<bool>| -> Result<(Store, Vec<bool>), Error> {
        index(own)?;
        let idx = match facts {
            Facts::Loaded(i) => i,
            Facts::Stored { .. } => own.as_ref().expect("loaded above"),
        };
        Ok((load_with(&q.prog, idx, Some(&need), &|_| true)?, need))
    };
    let leaves = if explain { Vec::new() } else { kept::leaves(&q.prog, &kept::STREAM) };
    let need = q.prog.needed_until(&[q.rel], &leaves);
    let kept_used: Vec<bool> = (0..need.len()).map(|r| need[r] && leaves.get(r) == Some(&true)).collect();
    let derived_used = kept_used.iter().enumerate().any(|(r, k)| *k && RELATIONS[r].kind != RelKind::Base);
    if !kept_used.contains(&true) {
        return plain(&mut own, q.prog.needed(&[q.rel]));
    }
    let stamp = match facts {
        Facts::Loaded(i) => &i.stamp,
        Facts::Stored { stamp, .. } => stamp,
    };
    let recalled = kept::recall(&q.prog, stamp, &kept::STREAM);
    // base relations alone, nothing kept: load them rather than derive the whole stream
    if recalled.is_none() && !derived_used {
        return plain(&mut own, q.prog.needed(&[q.rel]));
    }
    let rest: Vec<bool> = need.iter().zip(&kept_used).map(|(n, k)| *n && !k).collect();
    let reads_index = (0..RELATIONS.len()).any(|r| rest[r] && RELATIONS[r].kind == RelKind::Base);
    if recalled.is_none() || reads_index {
        index(&mut own)?;
    }
    let idx = match facts {
        Facts::Loaded(i) => Some(*i),
        Facts::Stored { .. } => own.as_ref(),
    };
    // an index loaded after its stamp was read may have changed since: derive from the one loaded
    // and the whole stream may not fit the query's budget where what the query reads does: then
    // only that is derived
    let mut store = match recalled {
        Some(s) if idx.is_none_or(|i| i.stamp.facts == stamp.facts) => s,
        _ => match from_stream(q, idx.expect("the index is loaded when nothing is kept"), budget) {
            Ok(s) => s,
            Err(_) => return plain(&mut own, q.prog.needed(&[q.rel])),
        },
    };
    // a relation of the stream this program cannot take as kept is derived here
    for (r, rows) in store.rels.iter_mut().enumerate() {
        if !kept_used[r] && RELATIONS.get(r).is_none_or(|i| i.kind != RelKind::Base) {
            rows.data.clear();
        }
    }
    if reads_index {
        load_into(&mut store, idx.expect("loaded above"), Some(&rest), &|_| true)?;
    }
    Ok((store, rest))
}

/// The stream's relations of `idx` (recalled, or derived by the built-in rules within the
/// query's budget and kept) in a store of the query's program.
fn from_stream(q: &Query, idx: &Index, budget: Budget) -> Result<Store, Error> {
    let builtin = builtin_program();
    let derived = kept::derive(&builtin, idx, &kept::STREAM, true, budget)?;
    Ok(kept::transfer(&builtin, &derived, &q.prog, &kept::STREAM))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_query_comparing_a_vocabulary_column_with_another_value_is_refused() {
        let e = super::prepare("ImportResolution(p, l, s, c), c = \"exactt\"", &[]).err().expect("refused");
        assert_eq!(
            e.to_string(),
            "query:1:35: \"exactt\" is not a `Confidence` (`c` is column `confidence` of `ImportResolution`): one of \"exact\", \"heuristic\", \"unresolved\", \"declared\", \"brief\", \"self-assess-backed\", \"contract\""
        );
        assert!(super::prepare("ImportResolution(p, l, s, \"unresolved\")", &[]).is_ok());
    }
}
