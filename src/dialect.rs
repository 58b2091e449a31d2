//! andon's Datalog dialect: the parser and the checker (names, arity, types, safety,
//! stratification). Self-contained (std only), because `build.rs` includes this very file to check
//! `rules/*.dl` and translate them for crepe: one grammar, one set of diagnostics, both paths.
//!
//! ```text
//! /// Stage `producer` feeds stage `consumer`.            (a doc line, required on built-in decls)
//! .decl Wire(producer: sym, consumer: sym)                (column types: path, sym, int)
//! .computed StreamOrder(stage: sym, position: int) from Stage, Wire
//! Wire(p, c) :- WireImport(p, c, _, _, _, _), p != c.     (rule)
//! Kind("cargo", "normal").                                (fact)
//! ```
//! A body literal is an atom, a negated atom `!A(..)`, or a comparison `x op y` with op one of
//! `= != < <= > >=`; `x = <bound term>` also binds `x`. Terms: variables (any identifier), `_`,
//! "strings" and unsigned integers. Comments: `//` and `/* */`.

use std::collections::HashMap;
use std::fmt;

/// A 1-based position in a source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub line: u32,
    pub col: u32,
}

/// A diagnostic: which source, where, what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DialectError {
    pub source: String,
    pub span: Span,
    pub msg: String,
}

impl fmt::Display for DialectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.source, self.span.line, self.span.col, self.msg)
    }
}

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
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Decl(Decl),
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
    fn is_str(self) -> bool {
        self != Ty::Int
    }
}

// ---- lexer -------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Int(u32),
    Directive(String),
    Doc(String),
    LParen,
    RParen,
    Comma,
    Dot,
    Turnstile,
    Bang,
    Colon,
    Op(CmpOp),
    Eof,
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Str(s) => format!("string {s:?}"),
        Tok::Int(n) => format!("number {n}"),
        Tok::Directive(d) => format!("`.{d}`"),
        Tok::Doc(_) => "a `///` doc line".into(),
        Tok::LParen => "`(`".into(),
        Tok::RParen => "`)`".into(),
        Tok::Comma => "`,`".into(),
        Tok::Dot => "`.`".into(),
        Tok::Turnstile => "`:-`".into(),
        Tok::Bang => "`!`".into(),
        Tok::Colon => "`:`".into(),
        Tok::Op(o) => format!("`{}`", o.text()),
        Tok::Eof => "the end of the text".into(),
    }
}

fn lex(src: &str) -> Result<Vec<(Tok, Span)>, (Span, String)> {
    let b = src.as_bytes();
    let (mut i, mut line, mut line_start) = (0usize, 1u32, 0usize);
    let mut out = Vec::new();
    while i < b.len() {
        let span = Span { line, col: (src[line_start..i].chars().count() + 1) as u32 };
        if let Some((tok, len)) = punct(b, i) {
            out.push((tok, span));
            i += len;
            continue;
        }
        let c = b[i];
        match c {
            b'\n' => {
                i += 1;
                line += 1;
                line_start = i;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = src[i..].find('\n').map_or(b.len(), |e| i + e);
                if b.get(i + 2) == Some(&b'/') && b.get(i + 3) != Some(&b'/') {
                    out.push((Tok::Doc(src[i + 3..end].trim().to_string()), span));
                }
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let Some(e) = src[i + 2..].find("*/") else { return Err((span, "unterminated `/*` comment".into())) };
                let end = i + 2 + e + 2;
                for (k, ch) in src[i..end].char_indices() {
                    if ch == '\n' {
                        line += 1;
                        line_start = i + k + 1;
                    }
                }
                i = end;
            }
            b'.' if b.get(i + 1).is_some_and(|c| c.is_ascii_alphabetic()) => {
                let end = ident_end(b, i + 1);
                out.push((Tok::Directive(src[i + 1..end].to_string()), span));
                i = end;
            }
            b'.' => (out.push((Tok::Dot, span)), i += 1).1,
            b'"' => {
                let (s, end) = lex_string(src, i, span)?;
                out.push((Tok::Str(s), span));
                i = end;
            }
            b'0'..=b'9' => {
                let mut j = i;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                let n: u32 = src[i..j]
                    .parse()
                    .map_err(|_| (span, format!("number {} is too large (max 4294967295)", &src[i..j])))?;
                out.push((Tok::Int(n), span));
                i = j;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let end = ident_end(b, i);
                out.push((Tok::Ident(src[i..end].to_string()), span));
                i = end;
            }
            _ => {
                let ch = src[i..].chars().next().unwrap_or('?');
                return Err((span, format!("unexpected character `{ch}`")));
            }
        }
    }
    let span = Span { line, col: (src[line_start..].chars().count() + 1) as u32 };
    out.push((Tok::Eof, span));
    Ok(out)
}

/// The punctuation or operator token at `i`, with its length in bytes.
fn punct(b: &[u8], i: usize) -> Option<(Tok, usize)> {
    let next_is = |c: u8| b.get(i + 1) == Some(&c);
    Some(match b[i] {
        b'(' => (Tok::LParen, 1),
        b')' => (Tok::RParen, 1),
        b',' => (Tok::Comma, 1),
        b':' if next_is(b'-') => (Tok::Turnstile, 2),
        b':' => (Tok::Colon, 1),
        b'!' if next_is(b'=') => (Tok::Op(CmpOp::Ne), 2),
        b'!' => (Tok::Bang, 1),
        b'=' => (Tok::Op(CmpOp::Eq), if next_is(b'=') { 2 } else { 1 }),
        b'<' if next_is(b'=') => (Tok::Op(CmpOp::Le), 2),
        b'<' => (Tok::Op(CmpOp::Lt), 1),
        b'>' if next_is(b'=') => (Tok::Op(CmpOp::Ge), 2),
        b'>' => (Tok::Op(CmpOp::Gt), 1),
        _ => return None,
    })
}

/// The string literal whose opening quote is at `i` (and at `span`): its value, and the index
/// after its closing quote.
fn lex_string(src: &str, i: usize, span: Span) -> Result<(String, usize), (Span, String)> {
    let mut s = String::new();
    let mut j = i + 1;
    loop {
        match src[j..].chars().next() {
            None | Some('\n') => return Err((span, "unterminated string".into())),
            Some('"') => break,
            Some('\\') => {
                let e = src[j + 1..].chars().next();
                s.push(match e {
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('\\') => '\\',
                    Some('"') => '"',
                    _ => {
                        return Err((span, "unknown escape in string (use \\\\, \\\", \\n or \\t)".into()));
                    }
                });
                j += 2;
            }
            Some(ch) => {
                s.push(ch);
                j += ch.len_utf8();
            }
        }
    }
    Ok((s, j + 1))
}

fn ident_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        i += 1;
    }
    i
}

// ---- parser ------------------------------------------------------------------------------------

struct Parser {
    toks: Vec<(Tok, Span)>,
    pos: usize,
}

type PResult<T> = Result<T, (Span, String)>;

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }
    fn span(&self) -> Span {
        self.toks[self.pos].1
    }
    fn bump(&mut self) -> (Tok, Span) {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn expect(&mut self, t: Tok, what: &str) -> PResult<Span> {
        if *self.peek() == t {
            Ok(self.bump().1)
        } else {
            Err((self.span(), format!("expected {what}, found {}", describe(self.peek()))))
        }
    }
    fn ident(&mut self, what: &str) -> PResult<(String, Span)> {
        match self.bump() {
            (Tok::Ident(s), sp) => Ok((s, sp)),
            (t, sp) => Err((sp, format!("expected {what}, found {}", describe(&t)))),
        }
    }

    fn program(&mut self) -> PResult<Vec<Item>> {
        let mut items = Vec::new();
        let mut doc: Option<String> = None;
        loop {
            match self.peek().clone() {
                Tok::Eof => {
                    return Ok(items);
                }
                Tok::Doc(d) => {
                    self.bump();
                    doc = Some(match doc {
                        Some(prev) => format!("{prev} {d}"),
                        None => d,
                    });
                }
                Tok::Directive(d) if d == "decl" || d == "computed" => {
                    self.bump();
                    items.push(Item::Decl(self.decl(doc.take(), d == "computed")?));
                }
                Tok::Directive(d) => {
                    return Err((self.span(), format!("unknown directive `.{d}` (known: `.decl`, `.computed`)")));
                }
                _ => {
                    doc = None;
                    items.push(Item::Rule(self.rule()?));
                }
            }
        }
    }

    fn decl(&mut self, doc: Option<String>, computed: bool) -> PResult<Decl> {
        let (name, span) = self.ident("a relation name")?;
        self.expect(Tok::LParen, "`(` after the relation name")?;
        let mut columns = Vec::new();
        loop {
            let (col, csp) = self.ident("a column name")?;
            self.expect(Tok::Colon, "`:` and a column type")?;
            let (ty, tsp) = self.ident("a column type (path, sym, int)")?;
            let ty = match ty.as_str() {
                "path" => Ty::Path,
                "sym" => Ty::Sym,
                "int" => Ty::Int,
                other => return Err((tsp, format!("unknown column type `{other}` (path, sym, int)"))),
            };
            if columns.iter().any(|(c, _)| *c == col) {
                return Err((csp, format!("column `{col}` is declared twice")));
            }
            columns.push((col, ty));
            match self.bump() {
                (Tok::Comma, _) => continue,
                (Tok::RParen, _) => break,
                (t, sp) => return Err((sp, format!("expected `,` or `)`, found {}", describe(&t)))),
            }
        }
        let computed_from = if computed {
            match self.bump() {
                (Tok::Ident(f), _) if f == "from" => {}
                (t, sp) => {
                    return Err((
                        sp,
                        format!("expected `from` and the relations it is computed from, found {}", describe(&t)),
                    ));
                }
            }
            let mut from = vec![self.ident("a relation name")?];
            while *self.peek() == Tok::Comma {
                self.bump();
                from.push(self.ident("a relation name")?);
            }
            Some(from)
        } else {
            None
        };
        Ok(Decl { name, span, doc, columns, computed_from })
    }

    fn atom(&mut self) -> PResult<Atom> {
        let (rel, span) = self.ident("a relation name")?;
        self.expect(Tok::LParen, &format!("`(` after `{rel}`"))?;
        let mut args = Vec::new();
        if *self.peek() == Tok::RParen {
            return Err((self.span(), format!("`{rel}()` has no arguments")));
        }
        loop {
            args.push(self.term()?);
            match self.bump() {
                (Tok::Comma, _) => continue,
                (Tok::RParen, _) => break,
                (t, sp) => {
                    return Err((
                        sp,
                        format!("expected `,` or `)` in the arguments of `{rel}`, found {}", describe(&t)),
                    ));
                }
            }
        }
        Ok(Atom { rel, span, args })
    }

    fn term(&mut self) -> PResult<Term> {
        match self.bump() {
            (Tok::Ident(s), sp) if s == "_" => Ok(Term::Wild(sp)),
            (Tok::Ident(s), sp) => Ok(Term::Var(s, sp)),
            (Tok::Str(s), sp) => Ok(Term::Str(s, sp)),
            (Tok::Int(n), sp) => Ok(Term::Int(n, sp)),
            (t, sp) => Err((sp, format!("expected a variable, `_`, a string or a number, found {}", describe(&t)))),
        }
    }

    fn literal(&mut self) -> PResult<Literal> {
        if *self.peek() == Tok::Bang {
            self.bump();
            return Ok(Literal::Neg(self.atom()?));
        }
        if matches!(self.peek(), Tok::Ident(_)) && self.toks[self.pos + 1].0 == Tok::LParen {
            return Ok(Literal::Pos(self.atom()?));
        }
        let left = self.term()?;
        let op = match self.bump() {
            (Tok::Op(op), _) => op,
            (t, sp) => {
                let hint = if matches!(left, Term::Var(..)) { " (an atom needs `(`)" } else { "" };
                return Err((sp, format!("expected a comparison operator, found {}{hint}", describe(&t))));
            }
        };
        let right = self.term()?;
        Ok(Literal::Cmp(left, op, right))
    }

    fn body(&mut self) -> PResult<Vec<Literal>> {
        let mut body = vec![self.literal()?];
        while *self.peek() == Tok::Comma {
            self.bump();
            body.push(self.literal()?);
        }
        Ok(body)
    }

    fn rule(&mut self) -> PResult<Rule> {
        let head = self.atom()?;
        let body = match self.bump() {
            (Tok::Dot, _) => return Ok(Rule { head, body: Vec::new() }),
            (Tok::Turnstile, _) => self.body()?,
            (t, sp) => return Err((sp, format!("expected `:-` or `.` after the rule head, found {}", describe(&t)))),
        };
        self.expect(Tok::Dot, "`,` or `.` ending the rule")?;
        Ok(Rule { head, body })
    }
}

fn parser(src: &str) -> PResult<Parser> {
    Ok(Parser { toks: lex(src)?, pos: 0 })
}

/// Parses a program: declarations, rules and facts.
pub fn parse_program(source: &str, src: &str) -> Result<Vec<Item>, DialectError> {
    parser(src).and_then(|mut p| p.program()).map_err(|(span, msg)| DialectError { source: source.into(), span, msg })
}

/// Parses a query: a rule body, optionally ending with `.`.
pub fn parse_query(source: &str, src: &str) -> Result<Vec<Literal>, DialectError> {
    let r = parser(src).and_then(|mut p| {
        if *p.peek() == Tok::Eof {
            return Err((p.span(), "the query is empty; write a rule body such as `File(path, lang)`".into()));
        }
        let body = p.body()?;
        if *p.peek() == Tok::Dot {
            p.bump();
        }
        if *p.peek() != Tok::Eof {
            return Err((p.span(), format!("expected `,` or the end of the query, found {}", describe(p.peek()))));
        }
        Ok(body)
    });
    r.map_err(|(span, msg)| DialectError { source: source.into(), span, msg })
}

// ---- display (explanations and generated code read rules back) --------------------------------

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

// ---- checked programs --------------------------------------------------------------------------

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
    by_name: HashMap<String, usize>,
}

/// Assembles a program from sources, checking each as it comes.
#[derive(Default)]
pub struct Builder {
    prog: Program,
    pending: Vec<(String, Rule)>,
    /// Whether rule heads may introduce relations without a `.decl` (user rules, queries).
    pub implicit_heads: bool,
    /// Whether declarations must carry a `///` doc line (built-in rules).
    pub require_docs: bool,
    /// Implicitly declared relations whose column types come from their rules.
    untyped: Vec<usize>,
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
        });
        self.prog.by_name.insert(d.name, id);
        Ok(id)
    }

    /// Adds a program text: its declarations are derived (or computed) relations.
    /// Marks the rules added so far as the built-in ones.
    pub fn builtin_done(&mut self) {
        self.builtin_pending = self.pending.len();
    }

    pub fn add_source(&mut self, source: &str, src: &str, base: bool) -> Result<(), DialectError> {
        for item in parse_program(source, src)? {
            match item {
                Item::Decl(d) => {
                    self.declare(source, d, if base { RelKind::Base } else { RelKind::Derived })?;
                }
                Item::Rule(r) => {
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

    fn suggest(&self, name: &str) -> String {
        let lower = name.to_lowercase();
        let best = self
            .prog
            .rels
            .iter()
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
                let d = Decl { name: r.head.rel.clone(), span: r.head.span, doc: None, columns, computed_from: None };
                self.declare(source, d, RelKind::Derived)?;
                self.prog.rels.last_mut().expect("just declared").doc = "(defined by a user rule)".into();
                self.untyped.push(self.prog.rels.len() - 1);
            }
        }
        // Types of implicit relations come from their rules: iterate until stable.
        let mut rules = Vec::new();
        for _ in 0..=pending.len() {
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

    /// Checks one rule: body, bindings, types, safety and head. Also says whether it changed a
    /// column type of an implicitly declared head relation.
    fn check_rule(&mut self, source: &str, r: &Rule) -> Result<(CRule, bool), DialectError> {
        let mut rc = RuleCheck { source, rule: r, names: Vec::new(), types: Vec::new(), bound: Vec::new() };
        let body = self.check_body(&mut rc)?;
        // `x = <bound>` binds x; iterate to a fixpoint.
        rc.bind_equalities(&body);
        rc.type_comparisons(&body)?;
        rc.check_safety()?;
        let (head, head_args, changed) = self.check_head(&rc)?;
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
        let mut args = Vec::new();
        for (t, (cname, cty)) in a.args.iter().zip(cols) {
            args.push(match t {
                Term::Wild(_) => Arg::Wild,
                Term::Str(s, sp) => {
                    if *cty == Ty::Int {
                        return Err(rc.err(*sp, format!("column `{cname}` of `{}` is an int; {t} is a string", a.rel)));
                    }
                    Arg::Const(Value::Str(s.clone()))
                }
                Term::Int(n, sp) => {
                    if cty.is_str() {
                        return Err(rc.err(
                            *sp,
                            format!("column `{cname}` of `{}` is a {}; {n} is a number", a.rel, cty.name()),
                        ));
                    }
                    Arg::Const(Value::Int(*n))
                }
                Term::Var(v, sp) => {
                    let i = rc.slot(v);
                    let untyped = self.untyped.contains(&rel);
                    if !untyped {
                        match rc.types[i] {
                            Some(t0) if t0.is_str() != cty.is_str() => {
                                return Err(rc.err(
                                    *sp,
                                    format!(
                                        "`{v}` is used as a {} and as a {} (column `{cname}` of `{}`)",
                                        t0.name(),
                                        cty.name(),
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
                    if untyped {
                        if let Some(t) = rc.types[i]
                            && t != cty
                        {
                            self.prog.rels[head].columns[k].1 = t;
                            changed = true;
                        }
                    } else if let Some(t0) = rc.types[i]
                        && t0.is_str() != cty.is_str()
                    {
                        return Err(rc.err(
                            *sp,
                            format!(
                                "`{v}` is a {}, but column `{}` of `{}` is a {}",
                                t0.name(),
                                self.prog.rels[head].columns[k].0,
                                r.head.rel,
                                cty.name()
                            ),
                        ));
                    }
                    Arg::Var(i)
                }
                Term::Str(s, sp) => {
                    if untyped && cty == Ty::Int {
                        self.prog.rels[head].columns[k].1 = Ty::Sym;
                    } else if !cty.is_str() {
                        return Err(rc.err(*sp, format!("column {} of `{}` is an int", k + 1, r.head.rel)));
                    }
                    Arg::Const(Value::Str(s.clone()))
                }
                Term::Int(n, sp) => {
                    if untyped && cty != Ty::Int {
                        self.prog.rels[head].columns[k].1 = Ty::Int;
                        changed = true;
                    } else if cty != Ty::Int {
                        return Err(rc.err(*sp, format!("column {} of `{}` is a {}", k + 1, r.head.rel, cty.name())));
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

    /// Strongly connected components of the relation dependency graph, in dependency order;
    /// negation inside a component is an error.
    fn stratify(&mut self) -> Result<(), DialectError> {
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
        for c in comps {
            if c.iter().all(|&r| self.prog.rels[r].kind == RelKind::Base) {
                continue;
            }
            let mut rels = c.clone();
            rels.sort_unstable();
            let rules: Vec<usize> =
                self.prog.rules.iter().enumerate().filter(|(_, r)| rels.contains(&r.head)).map(|(i, _)| i).collect();
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

    /// Carries types through comparisons (two passes); a string compared with an int is an error.
    fn type_comparisons(&mut self, body: &[Lit]) -> Result<(), DialectError> {
        for _ in 0..2 {
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
                            return Err(self.err(span, format!("cannot compare a {} with a {}", x.name(), y.name())));
                        }
                        (Some(x), None) => {
                            if let Arg::Var(i) = b {
                                self.types[*i] = Some(x)
                            }
                        }
                        (None, Some(y)) => {
                            if let Arg::Var(i) = a {
                                self.types[*i] = Some(y)
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

/// The head relation the query becomes.
pub const QUERY_REL: &str = "?";

fn literal_span(l: &Literal) -> Span {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The diagnostics `build.rs` prints for a broken rules file: the file, line and column.
    fn build_error(rules: &str) -> String {
        let mut b = Builder::new();
        b.require_docs = true;
        b.add_source("rules/schema.dl", "/// A file.\n.decl File(path: path, lang: sym)\n", true).unwrap();
        match b.add_source("rules/topic.dl", rules, false).and_then(|_| b.finish()) {
            Ok(_) => panic!("{rules:?} should be refused"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn broken_rules_files_name_the_file_line_and_column() {
        let e = build_error("/// Rust files.\n.decl Rs(path: path)\nRs(p) :- Fiel(p, \"rust\").\n");
        assert_eq!(e, "rules/topic.dl:3:10: unknown relation `Fiel`; did you mean `File`?");
        let e = build_error(".decl Rs(path: path)\n");
        assert_eq!(e, "rules/topic.dl:1:7: `Rs` has no `///` doc line above its declaration");
        let e = build_error("/// Rust files.\n.decl Rs(path: path)\nRs(p) :- File(p, \"rust\")\n");
        assert!(e.starts_with("rules/topic.dl:4:1: expected `,` or `.` ending the rule"), "{e}");
        let e = build_error("/// Not declared.\nOther(p) :- File(p, _).\n");
        assert!(e.starts_with("rules/topic.dl:2:1: `Other` is not declared"), "{e}");
    }
}
