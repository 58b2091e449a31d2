//! The checks of one rule: relations and arity, variable bindings, column types and safety.

use super::builder::Builder;
use super::program::{Arg, CRule, Lit, RelKind, Value};
use super::syntax::{Atom, CmpOp, Literal, Rule, Term, Ty};
use super::{DialectError, Span};

impl Builder {
    /// Checks one rule: body, bindings, types, safety and head. Also says whether it changed a
    /// column type of an implicitly declared head relation.
    pub(super) fn check_rule(&mut self, source: &str, r: &Rule) -> Result<(CRule, bool), DialectError> {
        let mut rc = RuleCheck { source, rule: r, names: Vec::new(), types: Vec::new(), bound: Vec::new() };
        let body = self.check_body(&mut rc)?;
        // `x = <bound>` binds x; iterate to a fixpoint.
        rc.bind_equalities(&body);
        rc.type_comparisons(&body)?;
        rc.check_safety()?;
        let (head, head_args, changed) = self.check_head(&rc)?;
        self.check_vocab_literals(source, r)?;
        let c = CRule {
            head,
            head_args,
            body,
            var_types: rc.types.iter().map(|t| t.unwrap_or(Ty::Sym)).collect(),
            var_names: rc.names,
            source: source.to_string(),
            span: r.head.span,
            lit_spans: r.body.iter().map(literal_span).collect(),
            text: r.to_string(),
        };
        Ok((c, changed))
    }

    /// The body with relations resolved and variables in slots; positive atoms bind.
    fn check_body(&self, rc: &mut RuleCheck) -> Result<Vec<Lit>, DialectError> {
        let mut body = Vec::new();
        // Positive atoms bind; resolve every atom first.
        for l in &rc.rule.body {
            match l {
                Literal::Pos(a) | Literal::Neg(a) => {
                    let positive = matches!(l, Literal::Pos(_));
                    let rel = self.resolve_atom(rc.source, a)?;
                    let args = self.atom_args(rc, a, rel, positive)?;
                    body.push(if positive { Lit::Pos(rel, args) } else { Lit::Neg(rel, args) });
                }
                Literal::Cmp(x, op, y) => {
                    let (a, b) = (rc.cmp_arg(x)?, rc.cmp_arg(y)?);
                    body.push(Lit::Cmp(a, *op, b));
                }
            }
        }
        Ok(body)
    }

    /// The arguments of body atom `a` of relation `rel`, checked against its column types; a
    /// variable's type comes from the first typed column it fills.
    fn atom_args(&self, rc: &mut RuleCheck, a: &Atom, rel: usize, positive: bool) -> Result<Vec<Arg>, DialectError> {
        let cols = &self.prog.rels[rel].columns;
        // an implicitly declared relation's column types only what a rule has fixed so far
        let untyped = self.untyped.contains(&rel);
        let known = |k: usize| !untyped || self.inferred.contains(&(rel, k));
        let mut args = Vec::new();
        for (k, (t, (cname, cty))) in a.args.iter().zip(cols).enumerate() {
            args.push(match t {
                Term::Wild(_) => Arg::Wild,
                Term::Str(s, sp) => {
                    if *cty == Ty::Int && known(k) {
                        return Err(rc.err(*sp, format!("column `{cname}` of `{}` is an int; {t} is a string", a.rel)));
                    }
                    Arg::Const(Value::Str(s.clone()))
                }
                Term::Int(n, sp) => {
                    if cty.is_str() && known(k) {
                        return Err(rc.err(
                            *sp,
                            format!("column `{cname}` of `{}` is {}; {n} is a number", a.rel, cty.a_name()),
                        ));
                    }
                    Arg::Const(Value::Int(*n))
                }
                Term::Var(v, sp) => {
                    let i = rc.slot(v);
                    if known(k) {
                        match rc.types[i] {
                            Some(t0) if t0.is_str() != cty.is_str() => {
                                return Err(rc.err(
                                    *sp,
                                    format!(
                                        "`{v}` is used as {} and as {} (column `{cname}` of `{}`)",
                                        t0.a_name(),
                                        cty.a_name(),
                                        a.rel
                                    ),
                                ));
                            }
                            None => rc.types[i] = Some(*cty),
                            _ => {}
                        }
                    }
                    if positive {
                        rc.bound[i] = true;
                    }
                    Arg::Var(i)
                }
            });
        }
        Ok(args)
    }

    /// The head relation and arguments, checked against the body's variables and the relation's
    /// column types; an implicitly declared head takes its column types from the rule (the `bool`
    /// says whether one changed).
    fn check_head(&mut self, rc: &RuleCheck) -> Result<(usize, Vec<Arg>, bool), DialectError> {
        let r = rc.rule;
        let head = self.resolve_atom(rc.source, &r.head)?;
        if self.prog.rels[head].kind != RelKind::Derived {
            let what = if self.prog.rels[head].kind == RelKind::Base {
                "a base relation (facts from the index)"
            } else {
                "computed in Rust"
            };
            return Err(rc.err(r.head.span, format!("`{}` is {what}; rules cannot add to it", r.head.rel)));
        }
        let mut head_args = Vec::new();
        let mut changed = false;
        let untyped = self.untyped.contains(&head);
        for (k, t) in r.head.args.iter().enumerate() {
            let cty = self.prog.rels[head].columns[k].1;
            head_args.push(match t {
                Term::Wild(sp) => return Err(rc.err(*sp, "`_` cannot appear in a rule head".into())),
                Term::Var(v, sp) => {
                    let Some(i) = rc.names.iter().position(|n| n == v) else {
                        return Err(rc.err(*sp, format!("variable `{v}` in the head is not bound by the body")));
                    };
                    if untyped && !self.inferred.contains(&(head, k)) {
                        if let Some(t) = rc.types[i] {
                            self.prog.rels[head].columns[k].1 = t;
                            self.inferred.insert((head, k));
                            changed = true;
                        }
                    } else if let Some(t0) = rc.types[i]
                        && t0.is_str() != cty.is_str()
                    {
                        return Err(rc.err(
                            *sp,
                            format!(
                                "`{v}` is {}, but column `{}` of `{}` is {}{}",
                                t0.a_name(),
                                self.prog.rels[head].columns[k].0,
                                r.head.rel,
                                cty.a_name(),
                                if untyped { " (as another of its rules makes it)" } else { "" }
                            ),
                        ));
                    }
                    Arg::Var(i)
                }
                Term::Str(s, sp) => {
                    if untyped && !self.inferred.contains(&(head, k)) {
                        self.prog.rels[head].columns[k].1 = Ty::Sym;
                        self.inferred.insert((head, k));
                        changed = true;
                    } else if !cty.is_str() {
                        let how = if untyped { " (as another of its rules makes it)" } else { "" };
                        return Err(rc.err(*sp, format!("column {} of `{}` is an int{how}", k + 1, r.head.rel)));
                    }
                    Arg::Const(Value::Str(s.clone()))
                }
                Term::Int(n, sp) => {
                    if untyped && !self.inferred.contains(&(head, k)) {
                        self.prog.rels[head].columns[k].1 = Ty::Int;
                        self.inferred.insert((head, k));
                        changed = true;
                    } else if cty != Ty::Int {
                        let how = if untyped { " (as another of its rules makes it)" } else { "" };
                        return Err(
                            rc.err(*sp, format!("column {} of `{}` is {}{how}", k + 1, r.head.rel, cty.a_name()))
                        );
                    }
                    Arg::Const(Value::Int(*n))
                }
            });
        }
        Ok((head, head_args, changed))
    }

    fn resolve_atom(&self, source: &str, a: &Atom) -> Result<usize, DialectError> {
        let err = |span, msg| DialectError { source: source.to_string(), span, msg };
        let Some(rel) = self.relation(&a.rel) else {
            return Err(err(a.span, format!("unknown relation `{}`{}", a.rel, self.suggest(&a.rel))));
        };
        let d = &self.prog.rels[rel];
        if d.columns.len() != a.args.len() {
            let cols: Vec<String> = d.columns.iter().map(|(n, t)| format!("{n}: {}", t.name())).collect();
            return Err(err(
                a.span,
                format!("`{}` takes {} arguments ({}), not {}", a.rel, d.columns.len(), cols.join(", "), a.args.len()),
            ));
        }
        Ok(rel)
    }
}

/// One rule under check: where it is written, and its variables by slot with their types so far
/// and whether something binds them.
struct RuleCheck<'r> {
    source: &'r str,
    rule: &'r Rule,
    names: Vec<String>,
    types: Vec<Option<Ty>>,
    bound: Vec<bool>,
}

impl RuleCheck<'_> {
    /// A diagnostic in the rule's source.
    fn err(&self, span: Span, msg: String) -> DialectError {
        DialectError { source: self.source.to_string(), span, msg }
    }

    /// The slot of variable `v`, added unbound and untyped when new.
    fn slot(&mut self, v: &str) -> usize {
        if let Some(i) = self.names.iter().position(|n| n == v) {
            i
        } else {
            self.names.push(v.to_string());
            self.types.push(None);
            self.bound.push(false);
            self.names.len() - 1
        }
    }

    /// One side of a comparison: a constant, or a variable's slot (`_` cannot be compared).
    fn cmp_arg(&mut self, t: &Term) -> Result<Arg, DialectError> {
        match t {
            Term::Wild(sp) => Err(self.err(*sp, "`_` cannot be compared; name the variable".into())),
            Term::Str(s, _) => Ok(Arg::Const(Value::Str(s.clone()))),
            Term::Int(n, _) => Ok(Arg::Const(Value::Int(*n))),
            Term::Var(v, _) => Ok(Arg::Var(self.slot(v))),
        }
    }

    /// Binds `x` wherever `x = <bound term>`, until nothing changes.
    fn bind_equalities(&mut self, body: &[Lit]) {
        let bound = &mut self.bound;
        loop {
            let mut changed = false;
            for l in body {
                if let Lit::Cmp(a, CmpOp::Eq, b) = l {
                    let is_bound = |a: &Arg, bound: &Vec<bool>| match a {
                        Arg::Var(i) => bound[*i],
                        _ => true,
                    };
                    for (x, y) in [(a, b), (b, a)] {
                        if let Arg::Var(i) = x
                            && !bound[*i]
                            && is_bound(y, bound)
                        {
                            bound[*i] = true;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Carries types through comparisons until nothing changes (a chain `x = y, y = z` of any
    /// length); a string compared with an int is an error.
    fn type_comparisons(&mut self, body: &[Lit]) -> Result<(), DialectError> {
        let mut changed = true;
        while changed {
            changed = false;
            for l in body {
                if let Lit::Cmp(a, _, b) = l {
                    let ty = |a: &Arg, types: &Vec<Option<Ty>>| match a {
                        Arg::Var(i) => types[*i],
                        Arg::Const(Value::Str(_)) => Some(Ty::Sym),
                        Arg::Const(Value::Int(_)) => Some(Ty::Int),
                        Arg::Wild => None,
                    };
                    match (ty(a, &self.types), ty(b, &self.types)) {
                        (Some(x), Some(y)) if x.is_str() != y.is_str() => {
                            let span = cmp_span(self.rule, l, body);
                            return Err(self.err(span, format!("cannot compare {} with {}", x.a_name(), y.a_name())));
                        }
                        (Some(x), None) => {
                            if let Arg::Var(i) = b {
                                self.types[*i] = Some(x);
                                changed = true;
                            }
                        }
                        (None, Some(y)) => {
                            if let Arg::Var(i) = a {
                                self.types[*i] = Some(y);
                                changed = true;
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// Safety: every variable bound by a positive atom (or an equality with a bound term).
    fn check_safety(&self) -> Result<(), DialectError> {
        let r = self.rule;
        let var_span = |v: &str| var_first_span(r, v).unwrap_or(r.head.span);
        for (i, b) in self.bound.iter().enumerate() {
            if !b {
                let v = &self.names[i];
                return Err(self.err(
                    var_span(v),
                    format!(
                        "variable `{v}` is not bound by a positive atom; a variable used in a negation, a comparison or the head must also appear in a positive atom of the body"
                    ),
                ));
            }
        }
        Ok(())
    }
}

pub(super) fn literal_span(l: &Literal) -> Span {
    match l {
        Literal::Pos(a) | Literal::Neg(a) => a.span,
        Literal::Cmp(x, _, _) => x.span(),
    }
}

fn var_first_span(r: &Rule, v: &str) -> Option<Span> {
    r.body.iter().chain(std::iter::once(&Literal::Pos(r.head.clone()))).find_map(|l| {
        let terms: Vec<&Term> = match l {
            Literal::Pos(a) | Literal::Neg(a) => a.args.iter().collect(),
            Literal::Cmp(x, _, y) => vec![x, y],
        };
        terms.into_iter().find_map(|t| match t {
            Term::Var(n, sp) if n == v => Some(*sp),
            _ => None,
        })
    })
}

fn cmp_span(r: &Rule, l: &Lit, body: &[Lit]) -> Span {
    let idx = body.iter().position(|x| std::ptr::eq(x, l)).unwrap_or(0);
    r.body.get(idx).map(literal_span).unwrap_or(r.head.span)
}
