//! What a text parses to: terms, atoms, literals, rules, declarations and column types, and how
//! each reads back as text (explanations and generated code quote rules).

use std::fmt;

use super::Span;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Term {
    Var(String, Span),
    Wild(Span),
    Str(String, Span),
    Int(u32, Span),
}

impl Term {
    pub fn span(&self) -> Span {
        match self {
            Term::Var(_, s) | Term::Wild(s) | Term::Str(_, s) | Term::Int(_, s) => *s,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    pub fn text(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
    pub fn holds(self, o: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            CmpOp::Eq => o == Equal,
            CmpOp::Ne => o != Equal,
            CmpOp::Lt => o == Less,
            CmpOp::Le => o != Greater,
            CmpOp::Gt => o == Greater,
            CmpOp::Ge => o != Less,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Atom {
    pub rel: String,
    pub span: Span,
    pub args: Vec<Term>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Literal {
    Pos(Atom),
    Neg(Atom),
    Cmp(Term, CmpOp, Term),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub head: Atom,
    pub body: Vec<Literal>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decl {
    pub name: String,
    pub span: Span,
    pub doc: Option<String>,
    pub columns: Vec<(String, Ty)>,
    /// `.computed … from A, B`: the relations it is computed from.
    pub computed_from: Option<Vec<(String, Span)>>,
    /// For each column, the vocabulary (`.enum`) that types it, where the type is written.
    pub vocabs: Vec<Option<(String, Span)>>,
}

/// `.enum Name = "a" | "b"`: a closed vocabulary, the only strings a column it types holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VocabDecl {
    pub name: String,
    pub span: Span,
    pub doc: Option<String>,
    pub values: Vec<(String, Span)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Statement {
    Decl(Decl),
    Vocab(VocabDecl),
    Rule(Rule),
}

/// Column types. `Path` and `Sym` are both strings and compare with each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Path,
    Sym,
    Int,
}

impl Ty {
    pub fn name(self) -> &'static str {
        match self {
            Ty::Path => "path",
            Ty::Sym => "sym",
            Ty::Int => "int",
        }
    }
    /// The type's name with its article: `a path`, `a sym`, `an int`.
    pub fn a_name(self) -> &'static str {
        match self {
            Ty::Path => "a path",
            Ty::Sym => "a sym",
            Ty::Int => "an int",
        }
    }
    pub(super) fn is_str(self) -> bool {
        self != Ty::Int
    }
}

/// The head relation the query becomes.
pub const QUERY_REL: &str = "?";

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Var(v, _) => f.write_str(v),
            Term::Wild(_) => f.write_str("_"),
            Term::Str(s, _) => write!(f, "{s:?}"),
            Term::Int(n, _) => write!(f, "{n}"),
        }
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.rel)?;
        for (i, a) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{a}")?;
        }
        f.write_str(")")
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Pos(a) => write!(f, "{a}"),
            Literal::Neg(a) => write!(f, "!{a}"),
            Literal::Cmp(l, op, r) => write!(f, "{l} {} {r}", op.text()),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.head)?;
        if !self.body.is_empty() {
            f.write_str(" :- ")?;
            for (i, l) in self.body.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{l}")?;
            }
        }
        f.write_str(".")
    }
}
