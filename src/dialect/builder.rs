//! Assembles a program from sources (the schema, rules files, a query), then checks it whole.

use super::checker::literal_span;
use super::program::{Program, RelDecl, RelKind, Vocab};
use super::syntax::{Atom, Decl, Literal, QUERY_REL, Rule, Statement, Term, Ty, VocabDecl};
use super::{DialectError, Span, parse_program};

#[derive(Default)]
pub struct Builder {
    pub(super) prog: Program,
    pending: Vec<(String, Rule)>,
    /// Whether rule heads may introduce relations without a `.decl` (user rules, queries).
    pub implicit_heads: bool,
    /// Whether declarations must carry a `///` doc line (built-in rules).
    pub require_docs: bool,
    /// Implicitly declared relations whose column types come from their rules.
    pub(super) untyped: Vec<usize>,
    /// The columns `(relation, column)` of implicitly declared relations whose type a rule has
    /// fixed (from a typed column, a constant or a comparison); the others are not known yet.
    pub(super) inferred: std::collections::BTreeSet<(usize, usize)>,
    /// How many pending rules are the built-in ones ([`Builder::builtin_done`]).
    builtin_pending: usize,
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    pub fn relation(&self, name: &str) -> Option<usize> {
        self.prog.by_name.get(name).copied()
    }

    /// Declares a base relation (from the schema).
    pub fn declare(&mut self, source: &str, d: Decl, kind: RelKind) -> Result<usize, DialectError> {
        let err = |span, msg| DialectError { source: source.to_string(), span, msg };
        if let Some(&prev) = self.prog.by_name.get(&d.name) {
            let p = &self.prog.rels[prev];
            return Err(err(
                d.span,
                format!("relation `{}` is already declared at {}:{}", d.name, p.source, p.span.line),
            ));
        }
        if !d.name.starts_with(|c: char| c.is_ascii_uppercase()) && d.name != QUERY_REL {
            return Err(err(d.span, format!("relation names start with an upper-case letter: `{}`", d.name)));
        }
        if self.require_docs && d.doc.is_none() {
            return Err(err(d.span, format!("`{}` has no `///` doc line above its declaration", d.name)));
        }
        let mut from = Vec::new();
        for (f, sp) in d.computed_from.iter().flatten() {
            from.push(self.relation(f).ok_or_else(|| err(*sp, format!("unknown relation `{f}`{}", self.suggest(f))))?);
        }
        let mut vocabs = Vec::new();
        for v in &d.vocabs {
            vocabs.push(match v {
                None => None,
                Some((name, sp)) => Some(self.vocab(name).ok_or_else(|| {
                    let known: Vec<String> = self.prog.vocabs.iter().map(|v| format!("`{}`", v.name)).collect();
                    let known = if known.is_empty() { String::new() } else { format!(", {}", known.join(", ")) };
                    err(*sp, format!("unknown column type `{name}` (path, sym, int{known})"))
                })?),
            });
        }
        vocabs.resize(d.columns.len(), None);
        let id = self.prog.rels.len();
        let kind = if d.computed_from.is_some() { RelKind::Computed } else { kind };
        self.prog.rels.push(RelDecl {
            name: d.name.clone(),
            doc: d.doc.unwrap_or_default(),
            columns: d.columns,
            kind,
            source: source.to_string(),
            span: d.span,
            from,
            vocabs,
        });
        self.prog.by_name.insert(d.name, id);
        Ok(id)
    }

    /// The vocabulary named `name`.
    pub fn vocab(&self, name: &str) -> Option<usize> {
        self.prog.vocabs.iter().position(|v| v.name == name)
    }

    /// Declares a closed vocabulary (`.enum`).
    pub fn declare_vocab(&mut self, source: &str, d: VocabDecl) -> Result<usize, DialectError> {
        let err = |span, msg| DialectError { source: source.to_string(), span, msg };
        if let Some(p) = self.prog.vocabs.iter().find(|v| v.name == d.name) {
            return Err(err(
                d.span,
                format!("vocabulary `{}` is already declared at {}:{}", d.name, p.source, p.span.line),
            ));
        }
        if !d.name.starts_with(|c: char| c.is_ascii_uppercase()) {
            return Err(err(d.span, format!("vocabulary names start with an upper-case letter: `{}`", d.name)));
        }
        if self.require_docs && d.doc.is_none() {
            return Err(err(d.span, format!("`{}` has no `///` doc line above its declaration", d.name)));
        }
        self.prog.vocabs.push(Vocab {
            name: d.name,
            doc: d.doc.unwrap_or_default(),
            values: d.values.into_iter().map(|(v, _)| v).collect(),
            source: source.to_string(),
            span: d.span,
        });
        Ok(self.prog.vocabs.len() - 1)
    }

    /// Adds a program text: its declarations are derived (or computed) relations.
    /// Marks the rules added so far as the built-in ones.
    pub fn builtin_done(&mut self) {
        self.builtin_pending = self.pending.len();
    }

    pub fn add_source(&mut self, source: &str, src: &str, base: bool) -> Result<(), DialectError> {
        for item in parse_program(source, src)? {
            match item {
                Statement::Decl(d) => {
                    self.declare(source, d, if base { RelKind::Base } else { RelKind::Derived })?;
                }
                Statement::Vocab(v) => {
                    self.declare_vocab(source, v)?;
                }
                Statement::Rule(r) => {
                    if base {
                        return Err(DialectError {
                            source: source.into(),
                            span: r.head.span,
                            msg: "the schema declares relations only; rules go in a rules file".into(),
                        });
                    }
                    self.pending.push((source.to_string(), r));
                }
            }
        }
        Ok(())
    }

    /// Adds the query as the rule `Query(v1, v2, …) :- body`, over its named variables in order of
    /// first appearance. Returns the query relation's index once built.
    pub fn add_query(&mut self, source: &str, body: Vec<Literal>) -> Result<Vec<String>, DialectError> {
        let mut vars: Vec<(String, Span)> = Vec::new();
        for l in &body {
            let terms: Vec<&Term> = match l {
                Literal::Pos(a) | Literal::Neg(a) => a.args.iter().collect(),
                Literal::Cmp(x, _, y) => vec![x, y],
            };
            for t in terms {
                if let Term::Var(v, sp) = t
                    && !vars.iter().any(|(n, _)| n == v)
                {
                    vars.push((v.clone(), *sp));
                }
            }
        }
        let head_span = body.first().map(literal_span).unwrap_or_default();
        let names: Vec<String> = vars.iter().map(|(v, _)| v.clone()).collect();
        let head = Atom {
            rel: QUERY_REL.to_string(),
            span: head_span,
            args: vars.into_iter().map(|(v, sp)| Term::Var(v, sp)).collect(),
        };
        self.pending.push((source.to_string(), Rule { head, body }));
        Ok(names)
    }

    pub(super) fn suggest(&self, name: &str) -> String {
        let lower = name.to_lowercase();
        let best = self
            .prog
            .rels
            .iter()
            .filter(|r| r.name != QUERY_REL)
            .map(|r| (crate::text::edit_distance(&lower, &r.name.to_lowercase()), &r.name))
            .filter(|(d, n)| *d <= (n.len() / 2).max(2))
            .min();
        match best {
            Some((_, n)) => format!("; did you mean `{n}`?"),
            None => String::new(),
        }
    }

    /// Checks every rule and computes the strata.
    pub fn finish(mut self) -> Result<Program, DialectError> {
        let pending = std::mem::take(&mut self.pending);
        // Implicit heads first, so rules may use each other's relations in any order.
        for (source, r) in &pending {
            if self.relation(&r.head.rel).is_none() {
                if !self.implicit_heads && r.head.rel != QUERY_REL {
                    return Err(DialectError {
                        source: source.clone(),
                        span: r.head.span,
                        msg: format!(
                            "`{}` is not declared; add `.decl {}(…)`{}",
                            r.head.rel,
                            r.head.rel,
                            self.suggest(&r.head.rel)
                        ),
                    });
                }
                let columns = r
                    .head
                    .args
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (if let Term::Var(v, _) = t { v.clone() } else { format!("col{i}") }, Ty::Sym))
                    .collect();
                let d = Decl {
                    name: r.head.rel.clone(),
                    span: r.head.span,
                    doc: None,
                    columns,
                    computed_from: None,
                    vocabs: Vec::new(),
                };
                self.declare(source, d, RelKind::Derived)?;
                self.prog.rels.last_mut().expect("just declared").doc = "(defined by a user rule)".into();
                self.untyped.push(self.prog.rels.len() - 1);
            }
        }
        // Types of implicit relations come from their rules: iterate until stable. Each round that
        // changes something fixes one more column's type (`inferred` only grows), so this ends.
        let mut rules = Vec::new();
        loop {
            rules.clear();
            let mut changed = false;
            for (source, r) in &pending {
                let (c, ch) = self.check_rule(source, r)?;
                changed |= ch;
                rules.push(c);
            }
            if !changed {
                break;
            }
        }
        self.prog.rules = rules;
        self.prog.builtin_rules = self.builtin_pending;
        self.stratify()?;
        Ok(self.prog)
    }
}
