//! Stratification: the relations' dependency graph cut into strongly connected components, in
//! evaluation order, refusing negation inside a component.

use super::builder::Builder;
use super::program::{CRule, Lit, RelKind, Stratum};
use super::{DialectError, Span};

impl Builder {
    /// Strongly connected components of the relation dependency graph, in dependency order;
    /// negation inside a component is an error.
    pub(super) fn stratify(&mut self) -> Result<(), DialectError> {
        let n = self.prog.rels.len();
        let mut deps: Vec<Vec<(usize, Option<usize>)>> = vec![Vec::new(); n];
        for (ri, r) in self.prog.rules.iter().enumerate() {
            for l in &r.body {
                match l {
                    Lit::Pos(b, _) => deps[r.head].push((*b, None)),
                    Lit::Neg(b, _) => deps[r.head].push((*b, Some(ri))),
                    Lit::Cmp(..) => {}
                }
            }
        }
        for (i, d) in self.prog.rels.iter().enumerate() {
            for f in &d.from {
                deps[i].push((*f, None));
            }
        }
        let succ: Vec<Vec<usize>> = deps.iter().map(|d| d.iter().map(|(b, _)| *b).collect()).collect();
        let comps = tarjan(&succ);
        let mut comp_of = vec![0; n];
        for (ci, c) in comps.iter().enumerate() {
            for &r in c {
                comp_of[r] = ci;
            }
        }
        for (h, d) in deps.iter().enumerate() {
            for (b, neg) in d {
                if let Some(ri) = neg
                    && comp_of[*b] == comp_of[h]
                {
                    let r = &self.prog.rules[*ri];
                    let (bn, hn) = (&self.prog.rels[*b].name, &self.prog.rels[h].name);
                    return Err(DialectError {
                        source: r.source.clone(),
                        span: neg_span(r, *b).unwrap_or(r.span),
                        msg: format!(
                            "unstratifiable negation: `{hn}` depends on `!{bn}`, which depends on `{hn}` again; negation may only use relations computed before"
                        ),
                    });
                }
            }
        }
        // each relation's rules, found once (a scan of every rule per component was quadratic)
        let mut by_head: Vec<Vec<usize>> = vec![Vec::new(); self.prog.rels.len()];
        for (i, r) in self.prog.rules.iter().enumerate() {
            by_head[r.head].push(i);
        }
        for c in comps {
            if c.iter().all(|&r| self.prog.rels[r].kind == RelKind::Base) {
                continue;
            }
            let mut rels = c.clone();
            rels.sort_unstable();
            let mut rules: Vec<usize> = rels.iter().flat_map(|&r| by_head[r].iter().copied()).collect();
            rules.sort_unstable();
            let recursive = rules
                .iter()
                .any(|&ri| self.prog.rules[ri].body.iter().any(|l| matches!(l, Lit::Pos(b, _) if rels.contains(b))));
            if rels.len() > 1 && rels.iter().any(|&r| self.prog.rels[r].kind == RelKind::Computed) {
                let r = rels.iter().find(|&&r| self.prog.rels[r].kind == RelKind::Computed).copied().unwrap_or(rels[0]);
                let d = &self.prog.rels[r];
                return Err(DialectError {
                    source: d.source.clone(),
                    span: d.span,
                    msg: format!("computed relation `{}` is part of a recursive cycle", d.name),
                });
            }
            self.prog.strata.push(Stratum { rels, rules, recursive });
        }
        Ok(())
    }
}

fn neg_span(r: &CRule, rel: usize) -> Option<Span> {
    let i = r.body.iter().position(|l| matches!(l, Lit::Neg(b, _) if *b == rel))?;
    r.lit_spans.get(i).copied()
}

/// Tarjan's strongly connected components; components come out dependencies first.
pub fn tarjan(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct St<'a> {
        succ: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut St, v: usize) {
        // Iterative DFS: (node, next successor position).
        let mut work = vec![(v, 0usize)];
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on[v] = true;
        while let Some(&mut (u, ref mut k)) = work.last_mut() {
            if *k < s.succ[u].len() {
                let w = s.succ[u][*k];
                *k += 1;
                match s.index[w] {
                    None => {
                        s.index[w] = Some(s.next);
                        s.low[w] = s.next;
                        s.next += 1;
                        s.stack.push(w);
                        s.on[w] = true;
                        work.push((w, 0));
                    }
                    Some(iw) if s.on[w] => s.low[u] = s.low[u].min(iw),
                    _ => {}
                }
            } else {
                work.pop();
                if let Some(&(p, _)) = work.last() {
                    s.low[p] = s.low[p].min(s.low[u]);
                }
                if Some(s.low[u]) == s.index[u] {
                    let mut comp = Vec::new();
                    loop {
                        let w = s.stack.pop().expect("tarjan stack");
                        s.on[w] = false;
                        comp.push(w);
                        if w == u {
                            break;
                        }
                    }
                    s.out.push(comp);
                }
            }
        }
    }
    let n = succ.len();
    let mut s = St {
        succ,
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}
