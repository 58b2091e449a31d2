//! One minimal derivation per answer (`andon query --explain`): which facts and rules produced
//! it. A tuple of a recursive relation is explained only from tuples derived in earlier rounds, so
//! every derivation is well founded, and among the rule instances that qualify the one whose
//! premises were derived earliest is chosen.

use super::Store;
use super::budget::{Exceeded, Meter};
use super::eval::bindings;
use crate::dialect::{Arg, CRule, Lit, Program, RelKind, Ty, Value};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Derivation {
    /// A base fact from the index.
    Fact(String),
    /// A row computed in Rust from other relations.
    Computed { fact: String, from: Vec<String> },
    /// A rule instance: the rule, where it is written, and why its body held.
    Rule { fact: String, rule: String, at: String, premises: Vec<Derivation>, absent: Vec<String>, checks: Vec<String> },
    /// Deeper than the explanation depth limit.
    Truncated(String),
}

const MAX_DEPTH: usize = 48;

/// A fact as Datalog text, values rendered.
pub fn render(prog: &Program, store: &Store, rel: usize, row: &[u32]) -> String {
    let vals: Vec<String> = prog.rels[rel]
        .columns
        .iter()
        .zip(row)
        .map(|((_, t), v)| if *t == Ty::Int { v.to_string() } else { format!("{:?}", store.syms.str(*v)) })
        .collect();
    let name = &prog.rels[rel].name;
    let name = if name == crate::dialect::QUERY_REL { "query" } else { name.as_str() };
    format!("{name}({})", vals.join(", "))
}

fn stratum_of(prog: &Program, rel: usize) -> Option<usize> {
    prog.strata.iter().position(|s| s.rels.contains(&rel))
}

fn round(store: &Store, rel: usize, row: &[u32]) -> Option<u32> {
    store.rounds.as_ref().and_then(|m| m.get(&(rel, row.to_vec())).copied())
}

/// A row of `rel` matching `pattern` (None = any value), the earliest derived; each row looked at
/// is a visit of `meter`.
fn witness(store: &Store, rel: usize, pattern: &[Option<u32>], meter: &mut Meter) -> Option<Vec<u32>> {
    store.rels[rel]
        .iter()
        .take_while(|_| !meter.visit())
        .filter(|r| r.iter().zip(pattern).all(|(v, p)| p.is_none_or(|p| p == *v)))
        .min_by_key(|r| round(store, rel, r).unwrap_or(0))
        .map(<[u32]>::to_vec)
}

fn pattern(store: &Store, args: &[Arg], env: &[u32]) -> Vec<Option<u32>> {
    args.iter()
        .map(|a| match a {
            Arg::Var(v) => Some(env[*v]),
            Arg::Const(Value::Int(n)) => Some(*n),
            Arg::Const(Value::Str(s)) => Some(store.syms.get(s).unwrap_or(u32::MAX)),
            Arg::Wild => None,
        })
        .collect()
}

/// One minimal derivation of `row` of `rel`, within the budget `meter` watches (Err names the
/// budget that ran out).
pub fn explain(
    prog: &Program,
    store: &Store,
    rel: usize,
    row: &[u32],
    meter: &mut Meter,
) -> Result<Derivation, Exceeded> {
    let d = Explainer { prog, store, meter }.at(rel, row, 0);
    match meter.exceeded(&prog.rels[rel].name) {
        Some(e) => Err(e),
        None => Ok(d),
    }
}

/// An explanation under way: the program, the final store and the meter of its budget.
struct Explainer<'a> {
    prog: &'a Program,
    store: &'a Store,
    meter: &'a mut Meter,
}

impl Explainer<'_> {
    /// The derivation of `row` of `rel`, `depth` levels below the answer (truncated once the
    /// meter stopped).
    fn at(&mut self, rel: usize, row: &[u32], depth: usize) -> Derivation {
        let (prog, store) = (self.prog, self.store);
        let fact = render(prog, store, rel, row);
        match prog.rels[rel].kind {
            RelKind::Base => return Derivation::Fact(fact),
            RelKind::Computed => {
                let from = prog.rels[rel].from.iter().map(|f| prog.rels[*f].name.clone()).collect();
                return Derivation::Computed { fact, from };
            }
            RelKind::Derived => {}
        }
        if depth >= MAX_DEPTH || self.meter.stopped() {
            return Derivation::Truncated(fact);
        }
        let Some(Instance { rule, env, premises, .. }) = earliest_instance(prog, store, rel, row, self.meter) else {
            return Derivation::Truncated(fact);
        };
        let (absent, checks) = side_conditions(prog, store, rule, &env);
        Derivation::Rule {
            fact,
            rule: rule.text.clone(),
            at: format!("{}:{}", rule.source, rule.span.line),
            premises: premises.iter().map(|(b, w)| self.at(*b, w, depth + 1)).collect(),
            absent,
            checks,
        }
    }
}

/// The rows a rule instance's positive atoms matched, with their relations.
type Premises = Vec<(usize, Vec<u32>)>;

/// A rule instance that derives a row: the rule, its variables' values, the rows its positive
/// atoms matched, and the latest round (within the row's stratum) one of those was derived in.
struct Instance<'r> {
    latest: i64,
    rule: &'r CRule,
    env: Vec<u32>,
    premises: Premises,
}

/// Among the rule instances that derive `row` of `rel` (for a recursive relation, only from rows
/// of earlier rounds), the one whose premises were derived earliest.
fn earliest_instance<'p>(
    prog: &'p Program,
    store: &Store,
    rel: usize,
    row: &[u32],
    meter: &mut Meter,
) -> Option<Instance<'p>> {
    let limit = round(store, rel, row).map(i64::from);
    let st = stratum_of(prog, rel);
    let mut best: Option<Instance> = None;
    for rule in prog.rules.iter().filter(|r| r.head == rel) {
        let Some(fixed) = unify(store, rule, row) else { continue };
        for env in bindings(rule, store, &fixed, meter)? {
            let Some((latest, premises)) = premises(prog, store, rule, &env, st, meter) else { continue };
            if limit.is_some_and(|k| latest >= k) {
                continue;
            }
            if best.as_ref().is_none_or(|b| latest < b.latest) {
                best = Some(Instance { latest, rule, env, premises });
            }
        }
    }
    best
}

/// The earliest row matching each positive atom of `rule` under `env`, and the latest round in
/// which one of stratum `st` was derived (-1 when none is); None when an atom matches no row.
fn premises(
    prog: &Program,
    store: &Store,
    rule: &CRule,
    env: &[u32],
    st: Option<usize>,
    meter: &mut Meter,
) -> Option<(i64, Premises)> {
    let mut premises = Vec::new();
    let mut latest = -1i64;
    for l in &rule.body {
        let Lit::Pos(b, args) = l else { continue };
        let w = witness(store, *b, &pattern(store, args, env), meter)?;
        if stratum_of(prog, *b) == st {
            latest = latest.max(round(store, *b, &w).map_or(0, i64::from));
        }
        premises.push((*b, w));
    }
    Some((latest, premises))
}

/// Why the rest of `rule`'s body held under `env`: the facts its negations found absent, and its
/// comparisons with their values.
fn side_conditions(prog: &Program, store: &Store, rule: &CRule, env: &[u32]) -> (Vec<String>, Vec<String>) {
    let mut absent = Vec::new();
    let mut checks = Vec::new();
    for l in &rule.body {
        match l {
            Lit::Neg(b, args) => {
                let vals: Vec<String> = args
                    .iter()
                    .zip(&prog.rels[*b].columns)
                    .map(|(a, (_, t))| match a {
                        Arg::Wild => "_".to_string(),
                        other => value_text(store, *t, other, env),
                    })
                    .collect();
                absent.push(format!("{}({})", prog.rels[*b].name, vals.join(", ")));
            }
            Lit::Cmp(a, op, b) => {
                let ty = match (a, b) {
                    (Arg::Var(v), _) | (_, Arg::Var(v)) => rule.var_types[*v],
                    (Arg::Const(Value::Int(_)), _) => Ty::Int,
                    _ => Ty::Sym,
                };
                checks.push(format!(
                    "{} {} {}",
                    value_text(store, ty, a, env),
                    op.text(),
                    value_text(store, ty, b, env)
                ));
            }
            Lit::Pos(..) => {}
        }
    }
    (absent, checks)
}

fn value_text(store: &Store, ty: Ty, a: &Arg, env: &[u32]) -> String {
    match a {
        Arg::Var(v) if ty == Ty::Int => env[*v].to_string(),
        Arg::Var(v) => format!("{:?}", store.syms.str(env[*v])),
        Arg::Const(Value::Int(n)) => n.to_string(),
        Arg::Const(Value::Str(s)) => format!("{s:?}"),
        Arg::Wild => "_".into(),
    }
}

/// Binds the head's variables to `row`; None when the head cannot produce it.
fn unify(store: &Store, rule: &CRule, row: &[u32]) -> Option<Vec<(usize, u32)>> {
    let mut fixed: Vec<(usize, u32)> = Vec::new();
    for (a, &v) in rule.head_args.iter().zip(row) {
        match a {
            Arg::Var(i) => match fixed.iter().find(|(s, _)| s == i) {
                Some((_, x)) if *x != v => return None,
                Some(_) => {}
                None => fixed.push((*i, v)),
            },
            Arg::Const(Value::Int(n)) if *n != v => return None,
            Arg::Const(Value::Str(s)) if store.syms.get(s) != Some(v) => return None,
            _ => {}
        }
    }
    Some(fixed)
}
