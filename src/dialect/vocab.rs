//! Closed vocabularies in rules: a string literal that fills a column typed by an `.enum`, or is
//! compared with a variable that fills one, must be one of its values.

use super::builder::Builder;
use super::syntax::{Literal, Rule, Term};
use super::{DialectError, Span};

impl Builder {
    /// Checks the string literals of rule `r` (written in `source`) against the vocabularies of
    /// the columns they fill or are compared with. The rule's atoms are already resolved.
    pub(super) fn check_vocab_literals(&self, source: &str, r: &Rule) -> Result<(), DialectError> {
        // a variable's vocabulary, from the first vocabulary-typed column it fills:
        // (variable, vocabulary, column, relation)
        let mut typed: Vec<(&str, usize, &str, &str)> = Vec::new();
        let atoms = r
            .body
            .iter()
            .filter_map(|l| match l {
                Literal::Pos(a) | Literal::Neg(a) => Some(a),
                Literal::Cmp(..) => None,
            })
            .chain(std::iter::once(&r.head));
        for a in atoms {
            let Some(rel) = self.relation(&a.rel) else { continue };
            let d = &self.prog.rels[rel];
            for (k, t) in a.args.iter().enumerate() {
                let (Some(Some(v)), Some((col, _))) = (d.vocabs.get(k), d.columns.get(k)) else { continue };
                match t {
                    Term::Str(s, sp) => {
                        self.vocab_holds(source, *v, s, *sp, &format!("column `{col}` of `{}`", a.rel))?;
                    }
                    Term::Var(x, _) if !typed.iter().any(|e| e.0 == x) => typed.push((x, *v, col, &a.rel)),
                    _ => {}
                }
            }
        }
        for l in &r.body {
            let Literal::Cmp(x, _, y) = l else { continue };
            for (a, b) in [(x, y), (y, x)] {
                if let (Term::Var(n, _), Term::Str(s, sp)) = (a, b)
                    && let Some(&(_, v, col, rel)) = typed.iter().find(|e| e.0 == n)
                {
                    self.vocab_holds(source, v, s, *sp, &format!("`{n}` is column `{col}` of `{rel}`"))?;
                }
            }
        }
        Ok(())
    }

    /// Err unless `value` is one of vocabulary `v`'s values; `what` says where it is used.
    fn vocab_holds(&self, source: &str, v: usize, value: &str, span: Span, what: &str) -> Result<(), DialectError> {
        let vocab = &self.prog.vocabs[v];
        if vocab.values.iter().any(|x| x == value) {
            return Ok(());
        }
        Err(DialectError {
            source: source.to_string(),
            span,
            msg: format!("{value:?} is not a `{}` ({what}): one of {}", vocab.name, vocab.listed()),
        })
    }
}
