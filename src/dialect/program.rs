//! A checked program: relations by index, rules with variables in slots, and the strata to
//! evaluate them in; what a program's relations depend on.

use std::collections::HashMap;

use super::Span;
use super::syntax::{CmpOp, Ty};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelKind {
    /// Facts from the index.
    Base,
    /// Defined by rules.
    Derived,
    /// Computed in Rust from other relations (graph algorithms, counting).
    Computed,
}

#[derive(Clone, Debug)]
pub struct RelDecl {
    pub name: String,
    pub doc: String,
    pub columns: Vec<(String, Ty)>,
    pub kind: RelKind,
    pub source: String,
    pub span: Span,
    /// For computed relations: what they are computed from.
    pub from: Vec<usize>,
    /// For each column, the vocabulary (an index into [`Program::vocabs`]) whose values it holds.
    pub vocabs: Vec<Option<usize>>,
}

/// A closed vocabulary (`.enum`): the strings a column it types may hold.
#[derive(Clone, Debug)]
pub struct Vocab {
    pub name: String,
    pub doc: String,
    pub values: Vec<String>,
    pub source: String,
    pub span: Span,
}

impl Vocab {
    /// The values, quoted and joined: `"a", "b", "c"`.
    pub fn listed(&self) -> String {
        self.values.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join(", ")
    }
}

/// A constant, not yet interned.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    Str(String),
    Int(u32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    Var(usize),
    Const(Value),
    Wild,
}

#[derive(Clone, Debug)]
pub enum Lit {
    Pos(usize, Vec<Arg>),
    Neg(usize, Vec<Arg>),
    Cmp(Arg, CmpOp, Arg),
}

/// A checked rule: relations by index, variables by slot.
#[derive(Clone, Debug)]
pub struct CRule {
    pub head: usize,
    pub head_args: Vec<Arg>,
    pub body: Vec<Lit>,
    pub var_names: Vec<String>,
    pub var_types: Vec<Ty>,
    pub source: String,
    pub span: Span,
    /// Where each body literal starts.
    pub lit_spans: Vec<Span>,
    pub text: String,
}

/// Relations evaluated together: one strongly connected component of the dependency graph.
#[derive(Clone, Debug)]
pub struct Stratum {
    pub rels: Vec<usize>,
    pub rules: Vec<usize>,
    pub recursive: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Program {
    pub rels: Vec<RelDecl>,
    pub rules: Vec<CRule>,
    /// How many of `rules`, from the first, are the built-in rules (whatever a user file is
    /// named, its rules come after).
    pub builtin_rules: usize,
    /// In evaluation order.
    pub strata: Vec<Stratum>,
    /// The closed vocabularies, in declaration order.
    pub vocabs: Vec<Vocab>,
    pub(super) by_name: HashMap<String, usize>,
}

impl Program {
    pub fn relation(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The relations `goals` depend on, transitively (including themselves).
    pub fn needed(&self, goals: &[usize]) -> Vec<bool> {
        self.needed_until(goals, &[])
    }

    /// [`Program::needed`], stopping at `leaves` (indexed by relation; missing entries are not
    /// leaves): a leaf that is reached is needed, what it reads is not (its rows come from
    /// elsewhere).
    pub fn needed_until(&self, goals: &[usize], leaves: &[bool]) -> Vec<bool> {
        let mut need = vec![false; self.rels.len()];
        let mut stack: Vec<usize> = goals.to_vec();
        while let Some(r) = stack.pop() {
            if std::mem::replace(&mut need[r], true) || leaves.get(r).copied().unwrap_or(false) {
                continue;
            }
            stack.extend(self.rels[r].from.iter().copied());
            for rule in self.rules.iter().filter(|x| x.head == r) {
                for l in &rule.body {
                    if let Lit::Pos(b, _) | Lit::Neg(b, _) = l {
                        stack.push(*b);
                    }
                }
            }
        }
        need
    }

    /// Every string constant the rules mention, sorted.
    pub fn string_constants(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.rules {
            let args = r.head_args.iter().chain(r.body.iter().flat_map(|l| match l {
                Lit::Pos(_, a) | Lit::Neg(_, a) => a.iter().collect::<Vec<_>>(),
                Lit::Cmp(x, _, y) => vec![x, y],
            }));
            for a in args {
                if let Arg::Const(Value::Str(s)) = a {
                    out.push(s.clone());
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }
}
