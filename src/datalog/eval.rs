//! The run-time engine: semi-naive, stratified evaluation of a checked [`Program`] over a
//! [`Store`] of interned rows. Joins probe sorted, column-reordered indexes (binary search on the
//! bound key columns); each rule body is planned greedily at evaluation time (the delta atom first,
//! then the atom with the most bound columns, smallest first; filters and negations as soon as
//! their variables are bound).

use std::cmp::Ordering;
use std::collections::HashMap;

use super::budget::{Budget, Exceeded, Meter};
use crate::dialect::{Arg, CRule, CmpOp, Lit, Program, RelKind, Stratum, Ty, Value};
use crate::facts::Interner;

/// One relation's rows: flat, `arity` values each, sorted and deduplicated (by id).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rows {
    pub arity: usize,
    pub data: Vec<u32>,
}

impl Rows {
    pub fn new(arity: usize) -> Rows {
        Rows { arity, data: Vec::new() }
    }
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.arity).unwrap_or(0)
    }
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = &[u32]> {
        self.data.chunks_exact(self.arity.max(1))
    }
    /// Sorts and deduplicates the rows.
    pub fn normalize(&mut self) {
        self.data = sorted_dedup(&self.data, self.arity);
    }
    pub fn contains(&self, row: &[u32]) -> bool {
        let n = self.len();
        let (a, d) = (self.arity, &self.data);
        let i = partition(n, |k| d[k * a..k * a + a] < *row);
        i < n && d[i * a..i * a + a] == *row
    }
}

/// Sorted, deduplicated copy of flat rows. Rows of up to four values are sorted as one packed
/// integer each (the same order, several times faster than comparing slices).
pub fn sorted_dedup(data: &[u32], arity: usize) -> Vec<u32> {
    match arity {
        0 => return Vec::new(),
        1 => {
            let mut out = data.to_vec();
            out.sort_unstable();
            out.dedup();
            return out;
        }
        2 => return sorted_packed::<u64>(data, arity),
        3 | 4 => return sorted_packed::<u128>(data, arity),
        _ => {}
    }
    let mut perm: Vec<u32> = (0..(data.len() / arity) as u32).collect();
    let row = |i: u32| &data[i as usize * arity..i as usize * arity + arity];
    perm.sort_unstable_by(|&a, &b| row(a).cmp(row(b)));
    perm.dedup_by(|a, b| row(*a) == row(*b));
    let mut out = Vec::with_capacity(perm.len() * arity);
    for i in perm {
        out.extend_from_slice(row(i));
    }
    out
}

/// A row of up to four values packed into one integer, in the order of the rows.
trait Packed: Ord + Copy {
    fn pack(row: &[u32]) -> Self;
    fn unpack(self, arity: usize, out: &mut Vec<u32>);
}

impl Packed for u64 {
    fn pack(row: &[u32]) -> u64 {
        (u64::from(row[0]) << 32) | u64::from(row[1])
    }
    fn unpack(self, _: usize, out: &mut Vec<u32>) {
        out.extend([(self >> 32) as u32, self as u32]);
    }
}

impl Packed for u128 {
    fn pack(row: &[u32]) -> u128 {
        row.iter().fold(0u128, |acc, &v| (acc << 32) | u128::from(v))
    }
    fn unpack(self, arity: usize, out: &mut Vec<u32>) {
        out.extend((0..arity).rev().map(|i| (self >> (32 * i)) as u32));
    }
}

/// [`sorted_dedup`] of rows of `arity` values packed as `P`.
fn sorted_packed<P: Packed>(data: &[u32], arity: usize) -> Vec<u32> {
    let mut keys: Vec<P> = data.chunks_exact(arity).map(P::pack).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut out = Vec::with_capacity(keys.len() * arity);
    for k in keys {
        k.unpack(arity, &mut out);
    }
    out
}

/// Merges two sorted, deduplicated row sets.
fn merge(a: &[u32], b: &[u32], arity: usize) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i..i + arity].cmp(&b[j..j + arity]) {
            Ordering::Less => {
                out.extend_from_slice(&a[i..i + arity]);
                i += arity;
            }
            Ordering::Greater => {
                out.extend_from_slice(&b[j..j + arity]);
                j += arity;
            }
            Ordering::Equal => {
                out.extend_from_slice(&a[i..i + arity]);
                i += arity;
                j += arity;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Rows of `new` (sorted) not in `old` (sorted).
fn minus(new: &[u32], old: &Rows) -> Vec<u32> {
    let a = old.arity;
    let mut out = Vec::new();
    for r in new.chunks_exact(a) {
        if !old.contains(r) {
            out.extend_from_slice(r);
        }
    }
    out
}

fn partition(n: usize, mut less: impl FnMut(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if less(mid) { lo = mid + 1 } else { hi = mid }
    }
    lo
}

/// The facts and derived rows of one evaluation, and the strings their ids name.
#[derive(Clone)]
pub struct Store {
    pub syms: Interner,
    pub rels: Vec<Rows>,
    /// For explanations: the round each row of a recursive relation was first derived in.
    pub rounds: Option<HashMap<(usize, Vec<u32>), u32>>,
}

impl Store {
    /// An empty store for `prog`, its string table seeded with `constants` (ids 0..n, in order).
    pub fn new(prog: &Program, constants: &[&str]) -> Store {
        let mut syms = Interner::default();
        for c in constants {
            syms.intern(c);
        }
        Store { syms, rels: prog.rels.iter().map(|r| Rows::new(r.columns.len())).collect(), rounds: None }
    }

    /// Renders a value of type `ty`.
    pub fn render(&self, ty: Ty, v: u32) -> String {
        if ty == Ty::Int { v.to_string() } else { self.syms.str(v).to_string() }
    }

    fn constant(&mut self, v: &Value) -> u32 {
        match v {
            Value::Int(n) => *n,
            Value::Str(s) => self.syms.intern(s),
        }
    }

    /// Compares two values of a type: strings by text, ints by number.
    pub fn cmp(&self, ty: Ty, a: u32, b: u32) -> Ordering {
        if ty == Ty::Int || a == b { a.cmp(&b) } else { self.syms.str(a).cmp(self.syms.str(b)) }
    }

    /// Rows of `rel` sorted by their rendered values.
    pub fn sorted_rows(&self, prog: &Program, rel: usize) -> Vec<&[u32]> {
        let tys: Vec<Ty> = prog.rels[rel].columns.iter().map(|c| c.1).collect();
        let mut rows: Vec<&[u32]> = self.rels[rel].iter().collect();
        rows.sort_by(|a, b| {
            tys.iter()
                .zip(a.iter().zip(b.iter()))
                .map(|(t, (x, y))| self.cmp(*t, *x, *y))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        });
        rows
    }
}

/// Computes a computed relation from the store (graph algorithms and counting live outside the
/// engine).
pub type Compute<'a> = dyn Fn(&Program, &Store, usize) -> Vec<u32> + 'a;

/// A sorted index of one relation on some key columns: the rows with key columns first.
struct KeyIndex {
    key_len: usize,
    arity: usize,
    /// Column order: key columns, then the others.
    order: Vec<usize>,
    data: Vec<u32>,
}

impl KeyIndex {
    fn build(rows: &Rows, key_cols: &[usize]) -> KeyIndex {
        let mut order = key_cols.to_vec();
        order.extend((0..rows.arity).filter(|c| !key_cols.contains(c)));
        let data = Self::reorder(&rows.data, rows.arity, &order);
        KeyIndex { key_len: key_cols.len(), arity: rows.arity, order, data }
    }
    fn reorder(data: &[u32], arity: usize, order: &[usize]) -> Vec<u32> {
        if order.iter().enumerate().all(|(i, c)| i == *c) {
            return data.to_vec();
        }
        let mut out = Vec::with_capacity(data.len());
        for r in data.chunks_exact(arity) {
            out.extend(order.iter().map(|&c| r[c]));
        }
        sorted_dedup(&out, arity)
    }
    fn add(&mut self, new_rows: &[u32]) {
        let new = Self::reorder(new_rows, self.arity, &self.order);
        self.data = merge(&self.data, &new, self.arity);
    }
    /// The value range of the rows whose key columns equal `key` (in reordered layout).
    fn range(&self, key: &[u32]) -> (usize, usize) {
        let (a, k, d) = (self.arity, self.key_len, &self.data);
        let n = d.len() / a.max(1);
        if k == 0 {
            return (0, d.len());
        }
        let lo = partition(n, |i| d[i * a..i * a + k] < *key);
        let hi = lo + partition(n - lo, |i| d[(lo + i) * a..(lo + i) * a + k] <= *key);
        (lo * a, hi * a)
    }
}

#[derive(Clone, Copy, Debug)]
enum Operand {
    Slot(usize),
    Const(u32),
}

#[derive(Debug)]
enum PlanStep {
    /// Join with an atom: probe `index` of relation `rel` (delta or full) with `key`, then for
    /// each row bind or check the remaining columns (positions in the reordered row).
    Scan {
        rel: usize,
        delta: bool,
        key_cols: Vec<usize>,
        key: Vec<Operand>,
        binds: Vec<(usize, usize)>,
        checks: Vec<(usize, usize)>,
    },
    Neg {
        rel: usize,
        key_cols: Vec<usize>,
        key: Vec<Operand>,
    },
    Cmp {
        a: Operand,
        op: CmpOp,
        b: Operand,
        ty: Ty,
    },
    Bind {
        slot: usize,
        from: Operand,
    },
}

/// Built indexes by relation, whether of the delta rows, and key columns.
type KeyIndexes = HashMap<(usize, bool, Vec<usize>), KeyIndex>;

/// Evaluates `prog` over `store` for the relations in `need` (all when `None`), stratum by stratum,
/// within `budget`: Err names the budget that ran out and the relation being derived.
pub fn evaluate(
    prog: &Program,
    store: &mut Store,
    need: Option<&[bool]>,
    compute: &Compute,
    budget: Budget,
) -> Result<(), Exceeded> {
    let mut ev = Evaluation { prog, store, indexes: HashMap::new(), meter: Meter::new(budget), rel: 0 };
    for st in &prog.strata {
        if let Some(need) = need
            && !st.rels.iter().any(|r| need[*r])
        {
            continue;
        }
        ev.rel = st.rels[0];
        if st.rels.len() == 1 && prog.rels[st.rels[0]].kind == RelKind::Computed {
            ev.compute(st.rels[0], compute);
            ev.settle(st.rels[0])?;
            continue;
        }
        let mut delta = ev.first_round(st)?;
        if !st.recursive {
            continue;
        }
        let mut round = 0u32;
        loop {
            round += 1;
            if !ev.next_round(st, &mut delta, round)? {
                break;
            }
        }
    }
    Ok(())
}

/// An evaluation under way: the program, the store it fills, the indexes built so far, the meter
/// watching its budget and the relation being derived.
struct Evaluation<'a> {
    prog: &'a Program,
    store: &'a mut Store,
    indexes: KeyIndexes,
    meter: Meter,
    rel: usize,
}

/// Estimated bytes of what an evaluation derived into `store`: the rows of relations that are not
/// base facts (those the index bounds), and the rounds kept for explanations.
fn derived_bytes(prog: &Program, store: &Store) -> u64 {
    let rows: usize =
        store.rels.iter().zip(&prog.rels).filter(|(_, d)| d.kind != RelKind::Base).map(|(r, _)| r.data.len()).sum();
    let rounds = store.rounds.as_ref().map_or(0, |m| m.len() * ROUND_ENTRY_BYTES);
    (4 * rows + rounds) as u64
}

/// Estimated bytes of one entry of [`Store::rounds`] beyond its values.
const ROUND_ENTRY_BYTES: usize = 64;

/// Bytes of the built indexes of relations that are not base facts.
fn index_bytes(prog: &Program, indexes: &KeyIndexes) -> u64 {
    indexes
        .iter()
        .filter(|((r, _, _), _)| prog.rels[*r].kind != RelKind::Base)
        .map(|(_, i)| 4 * i.data.len() as u64)
        .sum()
}

impl Evaluation<'_> {
    /// Fills computed relation `r` with what `compute` says.
    fn compute(&mut self, r: usize, compute: &Compute) {
        let data = compute(self.prog, self.store, r);
        let mut rows = Rows { arity: self.prog.rels[r].columns.len(), data };
        rows.normalize();
        self.store.rels[r] = rows;
    }

    /// The error when the budget ran out, naming the relation being derived.
    fn halt(&self) -> Result<(), Exceeded> {
        match self.meter.exceeded(&self.prog.rels[self.rel].name) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Holds relation `r`, as it now is, to the budget.
    fn settle(&mut self, r: usize) -> Result<(), Exceeded> {
        self.rel = r;
        let held = derived_bytes(self.prog, self.store) + index_bytes(self.prog, &self.indexes);
        self.meter.settled(self.store.rels[r].len(), held);
        self.halt()
    }

    /// Runs `rule` planned as `plan` (its delta atom over `delta`), adding its head rows to
    /// `out`; Err when the budget ran out.
    fn run(
        &mut self,
        rule: &CRule,
        plan: &[PlanStep],
        delta: &Rows,
        out: &mut HashMap<usize, Vec<u32>>,
    ) -> Result<(), Exceeded> {
        build_indexes(plan, self.store, &mut self.indexes, delta);
        let pending: u64 = out.iter().filter(|(r, _)| **r != rule.head).map(|(_, b)| 4 * b.capacity() as u64).sum();
        let derived = derived_bytes(self.prog, self.store) + index_bytes(self.prog, &self.indexes);
        let held = derived + pending + 4 * delta.data.len() as u64;
        let buf = out.entry(rule.head).or_default();
        self.rel = rule.head;
        self.meter.start_rule(held, buf, rule.head_args.len());
        let env = vec![0u32; rule.var_names.len()];
        execute(rule, plan, self.store, &self.indexes, buf, env, &mut self.meter);
        self.halt()
    }

    /// Runs every rule of `st` once over the store, sets the stratum's relations to what they
    /// derive (round 0), and returns those rows as the first delta.
    fn first_round(&mut self, st: &Stratum) -> Result<HashMap<usize, Rows>, Exceeded> {
        let prog = self.prog;
        let mut out: HashMap<usize, Vec<u32>> = HashMap::new();
        for &ri in &st.rules {
            let rule = &prog.rules[ri];
            let plan = plan(rule, None, self.store);
            self.run(rule, &plan, &Rows::default(), &mut out)?;
        }
        let mut delta: HashMap<usize, Rows> = HashMap::new();
        for &r in &st.rels {
            let arity = prog.rels[r].columns.len();
            let data = sorted_dedup(out.get(&r).map(Vec::as_slice).unwrap_or(&[]), arity);
            self.store.rels[r] = Rows { arity, data: data.clone() };
            self.indexes.retain(|(ir, _, _), _| *ir != r);
            if let Some(rounds) = self.store.rounds.as_mut() {
                for row in data.chunks_exact(arity) {
                    rounds.insert((r, row.to_vec()), 0);
                }
            }
            delta.insert(r, Rows { arity, data });
            self.settle(r)?;
        }
        Ok(delta)
    }

    /// One semi-naive round of recursive stratum `st`: each rule once per body atom of the
    /// stratum with new rows, on those rows. Adds what is new to the store and makes it the next
    /// `delta`; says whether anything was new.
    fn next_round(&mut self, st: &Stratum, delta: &mut HashMap<usize, Rows>, round: u32) -> Result<bool, Exceeded> {
        let prog = self.prog;
        let in_stratum = |r: usize| st.rels.contains(&r);
        let mut out: HashMap<usize, Vec<u32>> = HashMap::new();
        for &ri in &st.rules {
            let rule = &prog.rules[ri];
            for (pos, l) in rule.body.iter().enumerate() {
                let Lit::Pos(b, _) = l else { continue };
                if !in_stratum(*b) || delta[b].is_empty() {
                    continue;
                }
                let plan = plan(rule, Some(pos), self.store);
                self.run(rule, &plan, &delta[b], &mut out)?;
            }
        }
        let mut any = false;
        for &r in &st.rels {
            let arity = prog.rels[r].columns.len();
            let new = sorted_dedup(out.get(&r).map(Vec::as_slice).unwrap_or(&[]), arity);
            let new = minus(&new, &self.store.rels[r]);
            any |= !new.is_empty();
            let merged = merge(&self.store.rels[r].data, &new, arity);
            self.store.rels[r].data = merged;
            for ((ir, d, _), idx) in self.indexes.iter_mut() {
                if *ir == r && !*d {
                    idx.add(&new);
                }
            }
            if let Some(rounds) = self.store.rounds.as_mut() {
                for row in new.chunks_exact(arity) {
                    rounds.insert((r, row.to_vec()), round);
                }
            }
            delta.insert(r, Rows { arity, data: new });
            self.settle(r)?;
        }
        // Delta indexes are rebuilt every round.
        self.indexes.retain(|(_, d, _), _| !*d);
        Ok(any)
    }
}

/// Plans a rule body: which atom to scan next, and where filters go.
fn plan(rule: &CRule, delta_pos: Option<usize>, store: &Store) -> Vec<PlanStep> {
    plan_from(rule, delta_pos, store, vec![false; rule.var_names.len()])
}

/// Plans a rule body with the variables `bound` already bound: filters as soon as their variables
/// are bound, then the best atom to scan, until every literal is placed.
fn plan_from(rule: &CRule, delta_pos: Option<usize>, store: &Store, bound: Vec<bool>) -> Vec<PlanStep> {
    let mut p = Planner { rule, delta_pos, store, bound, done: vec![false; rule.body.len()], steps: Vec::new() };
    loop {
        p.place_filters();
        let Some(i) = p.next_atom() else { break };
        p.scan(i);
    }
    p.steps
}

/// A rule body being planned: the steps so far, which literals they place, which variables
/// they bind.
struct Planner<'a> {
    rule: &'a CRule,
    delta_pos: Option<usize>,
    store: &'a Store,
    bound: Vec<bool>,
    done: Vec<bool>,
    steps: Vec<PlanStep>,
}

impl Planner<'_> {
    /// An argument as an operand: its slot, or its interned value (`_` as a placeholder).
    fn operand(&self, a: &Arg) -> Operand {
        match a {
            Arg::Var(i) => Operand::Slot(*i),
            Arg::Const(Value::Int(n)) => Operand::Const(*n),
            Arg::Const(Value::Str(s)) => {
                Operand::Const(self.store.syms.get(s).expect("constants are interned before planning"))
            }
            Arg::Wild => Operand::Const(u32::MAX),
        }
    }

    /// Whether an atom's argument is known before the scan: a bound variable or a constant.
    fn keyed(&self, a: &Arg) -> bool {
        match a {
            Arg::Var(v) => self.bound[*v],
            Arg::Const(_) => true,
            Arg::Wild => false,
        }
    }

    /// Places every filter whose variables are bound, until no more can be placed.
    fn place_filters(&mut self) {
        let mut progress = true;
        while progress {
            progress = false;
            for i in 0..self.rule.body.len() {
                if !self.done[i] && self.place_filter(i) {
                    self.done[i] = true;
                    progress = true;
                }
            }
        }
    }

    /// Places body literal `i` if it is a comparison whose sides are bound (an equality with one
    /// bound side binds the other) or a negation whose variables are bound; says whether it did.
    fn place_filter(&mut self, i: usize) -> bool {
        let rule = self.rule;
        let is_bound = |a: &Arg, bound: &[bool]| match a {
            Arg::Var(v) => bound[*v],
            _ => true,
        };
        match &rule.body[i] {
            Lit::Cmp(a, op, b) => {
                let (ba, bb) = (is_bound(a, &self.bound), is_bound(b, &self.bound));
                let ty = match (a, b) {
                    (Arg::Var(v), _) | (_, Arg::Var(v)) => rule.var_types[*v],
                    (Arg::Const(Value::Int(_)), _) => Ty::Int,
                    _ => Ty::Sym,
                };
                if ba && bb {
                    self.steps.push(PlanStep::Cmp { a: self.operand(a), op: *op, b: self.operand(b), ty });
                } else if *op == CmpOp::Eq && (ba || bb) {
                    let (x, y) = if ba { (b, a) } else { (a, b) };
                    let Arg::Var(slot) = x else { return false };
                    self.steps.push(PlanStep::Bind { slot: *slot, from: self.operand(y) });
                    self.bound[*slot] = true;
                } else {
                    return false;
                }
                true
            }
            Lit::Neg(rel, args) if args.iter().all(|a| !matches!(a, Arg::Var(v) if !self.bound[*v])) => {
                let key_cols: Vec<usize> = (0..args.len()).filter(|c| !matches!(args[*c], Arg::Wild)).collect();
                let key = key_cols.iter().map(|&c| self.operand(&args[c])).collect();
                self.steps.push(PlanStep::Neg { rel: *rel, key_cols, key });
                true
            }
            _ => false,
        }
    }

    /// The next atom to scan: the delta first, then the most bound columns, then the smallest.
    fn next_atom(&self) -> Option<usize> {
        type Rank = (bool, usize, std::cmp::Reverse<usize>);
        let mut best: Option<(usize, Rank)> = None;
        for (i, l) in self.rule.body.iter().enumerate() {
            let Lit::Pos(rel, args) = l else { continue };
            if self.done[i] {
                continue;
            }
            let nbound = args.iter().filter(|a| self.keyed(a));
            let score = (Some(i) == self.delta_pos, nbound.count(), std::cmp::Reverse(self.store.rels[*rel].len()));
            if best.as_ref().is_none_or(|(_, s)| score > *s) {
                best = Some((i, score));
            }
        }
        best.map(|(i, _)| i)
    }

    /// Places the scan of positive atom `i`: probe on its known columns, bind the others.
    fn scan(&mut self, i: usize) {
        let rule = self.rule;
        let Lit::Pos(rel, args) = &rule.body[i] else { unreachable!("chosen atoms are positive") };
        let key_cols: Vec<usize> = (0..args.len()).filter(|&c| self.keyed(&args[c])).collect();
        let key = key_cols.iter().map(|&c| self.operand(&args[c])).collect();
        let mut order = key_cols.clone();
        order.extend((0..args.len()).filter(|c| !key_cols.contains(c)));
        let (mut binds, mut checks) = (Vec::new(), Vec::new());
        for (pos, &c) in order.iter().enumerate().skip(key_cols.len()) {
            if let Arg::Var(v) = &args[c] {
                if self.bound[*v] {
                    checks.push((pos, *v));
                } else {
                    binds.push((pos, *v));
                    self.bound[*v] = true;
                }
            }
        }
        // A variable repeated within this atom: the first occurrence binds, later ones check.
        let mut seen: Vec<usize> = Vec::new();
        binds.retain(|&(pos, v)| {
            if seen.contains(&v) {
                checks.push((pos, v));
                false
            } else {
                seen.push(v);
                true
            }
        });
        let delta = Some(i) == self.delta_pos;
        self.steps.push(PlanStep::Scan { rel: *rel, delta, key_cols, key, binds, checks });
        self.done[i] = true;
    }
}

/// Builds the indexes `plan` probes (of `delta` for its delta atom) that are not built yet.
fn build_indexes(plan: &[PlanStep], store: &Store, indexes: &mut KeyIndexes, delta: &Rows) {
    for s in plan {
        let (rel, d, cols) = match s {
            PlanStep::Scan { rel, delta, key_cols, .. } => (*rel, *delta, key_cols),
            PlanStep::Neg { rel, key_cols, .. } => (*rel, false, key_cols),
            _ => continue,
        };
        let k = (rel, d, cols.clone());
        indexes.entry(k).or_insert_with(|| {
            let rows = if d { delta } else { &store.rels[rel] };
            KeyIndex::build(rows, cols)
        });
    }
}

/// Runs `rule` planned as `plan` over built `indexes` from the bindings `env`, pushing a head row
/// to `out` for every solution until `meter` stops it.
fn execute(
    rule: &CRule,
    plan: &[PlanStep],
    store: &Store,
    indexes: &KeyIndexes,
    out: &mut Vec<u32>,
    mut env: Vec<u32>,
    meter: &mut Meter,
) {
    let idx: Vec<Option<&KeyIndex>> = plan
        .iter()
        .map(|s| match s {
            PlanStep::Scan { rel, delta, key_cols, .. } => indexes.get(&(*rel, *delta, key_cols.clone())),
            PlanStep::Neg { rel, key_cols, .. } => indexes.get(&(*rel, false, key_cols.clone())),
            _ => None,
        })
        .collect();
    let mut key = Vec::new();
    let arity = rule.head_args.len();
    Exec { rule, plan, idx: &idx, store, arity }.step(0, &mut env, &mut key, &mut Sink { out, meter });
}

/// Where a running rule's head rows go, and the meter that may stop it.
struct Sink<'a> {
    out: &'a mut Vec<u32>,
    meter: &'a mut Meter,
}

/// A planned rule being run: its plan, the index each step probes, and the store.
struct Exec<'a> {
    rule: &'a CRule,
    plan: &'a [PlanStep],
    idx: &'a [Option<&'a KeyIndex>],
    store: &'a Store,
    /// Values per head row.
    arity: usize,
}

impl Exec<'_> {
    /// Runs the plan from step `i` with the variables in `env` (`key` is scratch for probe keys),
    /// pushing a head row to `sink` for every solution; returns early once its meter stops.
    fn step(&self, i: usize, env: &mut [u32], key: &mut Vec<u32>, sink: &mut Sink) {
        let val = |o: &Operand, env: &[u32]| match o {
            Operand::Slot(s) => env[*s],
            Operand::Const(c) => *c,
        };
        let Some(step) = self.plan.get(i) else {
            for a in &self.rule.head_args {
                sink.out.push(match a {
                    Arg::Var(v) => env[*v],
                    Arg::Const(Value::Int(n)) => *n,
                    Arg::Const(Value::Str(s)) => {
                        self.store.syms.get(s).expect("head constants are interned before evaluation")
                    }
                    Arg::Wild => unreachable!("checked: no `_` in heads"),
                });
            }
            if sink.meter.due(sink.out) {
                sink.meter.grown(sink.out, self.arity);
            }
            return;
        };
        match step {
            PlanStep::Scan { key: k, binds, checks, .. } => {
                let index = self.idx[i].expect("scan index built");
                let start = key.len();
                key.extend(k.iter().map(|o| val(o, env)));
                let (lo, hi) = index.range(&key[start..]);
                key.truncate(start);
                'rows: for row in index.data[lo..hi].chunks_exact(index.arity) {
                    if sink.meter.visit() {
                        return;
                    }
                    for &(pos, v) in binds {
                        env[v] = row[pos];
                    }
                    for &(pos, v) in checks {
                        if env[v] != row[pos] {
                            continue 'rows;
                        }
                    }
                    self.step(i + 1, env, key, sink);
                }
            }
            PlanStep::Neg { key: k, .. } => {
                let index = self.idx[i].expect("negation index built");
                let start = key.len();
                key.extend(k.iter().map(|o| val(o, env)));
                let (lo, hi) = index.range(&key[start..]);
                let hit = hi > lo;
                key.truncate(start);
                if !hit {
                    self.step(i + 1, env, key, sink);
                }
            }
            PlanStep::Cmp { a, op, b, ty } => {
                let (x, y) = (val(a, env), val(b, env));
                let o = if *ty == Ty::Int || matches!(op, CmpOp::Eq | CmpOp::Ne) {
                    x.cmp(&y)
                } else {
                    self.store.cmp(*ty, x, y)
                };
                if op.holds(o) {
                    self.step(i + 1, env, key, sink);
                }
            }
            PlanStep::Bind { slot, from } => {
                env[*slot] = val(from, env);
                self.step(i + 1, env, key, sink);
            }
        }
    }
}

/// Every binding of `rule`'s variables (one row of all its slots per solution) over the final
/// store, with the `fixed` slots bound beforehand; None when `meter` stopped the search.
pub fn bindings(rule: &CRule, store: &Store, fixed: &[(usize, u32)], meter: &mut Meter) -> Option<Vec<Vec<u32>>> {
    let n = rule.var_names.len();
    let mut bound = vec![false; n];
    let mut env = vec![0u32; n];
    for &(s, v) in fixed {
        bound[s] = true;
        env[s] = v;
    }
    let plan = plan_from(rule, None, store, bound);
    // Every variable, then a marker column, so a rule without variables still yields one row.
    let mut all = rule.clone();
    all.head_args = (0..n).map(Arg::Var).chain(std::iter::once(Arg::Const(Value::Int(0)))).collect();
    let mut out = Vec::new();
    let mut indexes = HashMap::new();
    build_indexes(&plan, store, &mut indexes, &Rows::default());
    meter.start_rule(0, &out, n + 1);
    execute(&all, &plan, store, &indexes, &mut out, env, meter);
    (!meter.stopped()).then(|| out.chunks_exact(n + 1).map(|r| r[..n].to_vec()).collect())
}

/// Interns every string constant of `prog` (so plans can refer to them by id).
pub fn intern_constants(prog: &Program, store: &mut Store) {
    for s in prog.string_constants() {
        store.constant(&Value::Str(s));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows sorted and deduplicated by comparing slices: the order every arity must give.
    fn reference(data: &[u32], arity: usize) -> Vec<u32> {
        let mut rows: Vec<&[u32]> = data.chunks_exact(arity).collect();
        rows.sort();
        rows.dedup();
        rows.concat()
    }

    #[test]
    fn packed_sorting_keeps_the_row_order_of_every_arity() {
        let mut x = 7u64;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            // small values repeat (duplicates); the high bit set tests the packing
            if x >> 63 == 0 { ((x >> 33) % 5) as u32 } else { u32::MAX - ((x >> 33) % 3) as u32 }
        };
        for arity in 1..=6 {
            let data: Vec<u32> = (0..arity * 400).map(|_| next()).collect();
            assert_eq!(sorted_dedup(&data, arity), reference(&data, arity), "arity {arity}");
        }
    }
}
