//! Warnings about the shape of user rules that no plan makes cheap: a body whose atoms fall into
//! groups that share no variable is a cartesian product, every row of one group with every row
//! of the others. Such a rule still runs (within its budget); the warning names the atom.

use crate::dialect::{Arg, CRule, CmpOp, Lit, Program, Value};

/// A rule body that is a cartesian product: the first atom of a group joined to the atoms
/// before it by no variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cartesian {
    /// The rule's source (`query`, or a rule file) and where the atom starts.
    pub source: String,
    pub line: u32,
    pub col: u32,
    /// The atom's position among the body's atoms (1-based; comparisons are not atoms).
    pub atom: usize,
    /// The atom as written.
    pub text: String,
    /// The rule's head relation.
    pub head: String,
}

impl std::fmt::Display for Cartesian {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: atom {} `{}` shares no variable with the atoms before it: the body is a cartesian \
             product (every row of it with every row of the rest); join it through a shared variable",
            self.source, self.line, self.col, self.atom, self.text
        )
    }
}

/// The cartesian products in the bodies of the rules of `prog` from the sources `user` accepts.
pub fn cartesian_products(prog: &Program, user: &dyn Fn(&str) -> bool) -> Vec<Cartesian> {
    let mut out = Vec::new();
    for rule in prog.rules.iter().filter(|r| user(&r.source)) {
        out.extend(cartesian(prog, rule));
    }
    out
}

/// The first atom of every group of `rule`'s positive atoms after the first group, where a
/// group is the atoms connected by shared variables (or `x = y`).
fn cartesian(prog: &Program, rule: &CRule) -> Vec<Cartesian> {
    let mut root: Vec<usize> = (0..rule.var_names.len()).collect();
    let vars = |args: &[Arg]| -> Vec<usize> {
        args.iter().filter_map(|a| if let Arg::Var(v) = a { Some(*v) } else { None }).collect()
    };
    for l in &rule.body {
        match l {
            Lit::Pos(_, args) => {
                let vs = vars(args);
                for w in vs.windows(2) {
                    join(&mut root, w[0], w[1]);
                }
            }
            Lit::Cmp(Arg::Var(a), CmpOp::Eq, Arg::Var(b)) => join(&mut root, *a, *b),
            _ => {}
        }
    }
    let mut groups: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    let mut atom = 0;
    for (i, l) in rule.body.iter().enumerate() {
        if matches!(l, Lit::Neg(..)) {
            atom += 1;
        }
        let Lit::Pos(rel, args) = l else { continue };
        atom += 1;
        let Some(&v) = vars(args).first() else { continue };
        let g = find(&mut root, v);
        if groups.contains(&g) {
            continue;
        }
        groups.push(g);
        if groups.len() > 1 {
            let at = rule.lit_spans.get(i).copied().unwrap_or(rule.span);
            out.push(Cartesian {
                source: rule.source.clone(),
                line: at.line,
                col: at.col,
                atom,
                text: atom_text(prog, rule, *rel, args),
                head: prog.rels[rule.head].name.clone(),
            });
        }
    }
    out
}

/// The representative of variable `v`'s group (union-find over `root`).
fn find(root: &mut [usize], v: usize) -> usize {
    let mut r = v;
    while root[r] != r {
        r = root[r];
    }
    root[v] = r;
    r
}

/// Puts the groups of variables `a` and `b` together.
fn join(root: &mut [usize], a: usize, b: usize) {
    let (x, y) = (find(root, a), find(root, b));
    root[x] = y;
}

/// An atom as Datalog text, with the rule's variable names.
fn atom_text(prog: &Program, rule: &CRule, rel: usize, args: &[Arg]) -> String {
    let args: Vec<String> = args
        .iter()
        .map(|a| match a {
            Arg::Var(v) => rule.var_names[*v].clone(),
            Arg::Const(Value::Int(n)) => n.to_string(),
            Arg::Const(Value::Str(s)) => format!("{s:?}"),
            Arg::Wild => "_".into(),
        })
        .collect();
    format!("{}({})", prog.rels[rel].name, args.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(query: &str) -> Vec<Cartesian> {
        let q = crate::datalog::prepare(query, &[]).expect("query checks");
        cartesian_products(&q.prog, &|s| s == "query")
    }

    #[test]
    fn each_unconnected_group_is_named_by_its_first_atom() {
        let w = warnings("File(a, x), File(b, y), Module(a, m), File(c, z)");
        let named: Vec<(usize, &str)> = w.iter().map(|c| (c.atom, c.text.as_str())).collect();
        assert_eq!(named, [(2, "File(b, y)"), (4, "File(c, z)")]);
        assert_eq!((w[0].source.as_str(), w[0].line, w[0].col), ("query", 1, 13));
    }

    #[test]
    fn shared_variables_and_equalities_connect() {
        assert!(warnings("File(a, x), Module(a, m)").is_empty());
        assert!(warnings("File(a, x), Module(b, m), a = b").is_empty());
        assert!(warnings("File(a, x), File(_, \"rust\")").is_empty(), "an atom without variables tests existence");
        assert_eq!(warnings("File(a, x), Module(b, m), a != b").len(), 1);
    }
}
