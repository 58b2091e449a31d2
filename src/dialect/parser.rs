//! The parser: tokens into declarations and rules (a program) or a rule body (a query).

use super::lexer::{Tok, describe, lex};
use super::syntax::{Atom, CmpOp, Decl, Literal, Rule, Statement, Term, Ty, VocabDecl};
use super::{DialectError, Span};

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

    fn program(&mut self) -> PResult<Vec<Statement>> {
        let mut items = Vec::new();
        let mut doc: Option<String> = None;
        loop {
            if items.len() == MAX_STATEMENTS && *self.peek() != Tok::Eof {
                return Err((
                    self.span(),
                    format!("more than {MAX_STATEMENTS} declarations, rules and facts in one text; split the rules"),
                ));
            }
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
                    items.push(Statement::Decl(self.decl(doc.take(), d == "computed")?));
                }
                Tok::Directive(d) if d == "enum" => {
                    self.bump();
                    items.push(Statement::Vocab(self.vocab(doc.take())?));
                }
                Tok::Directive(d) => {
                    return Err((
                        self.span(),
                        format!("unknown directive `.{d}` (known: `.decl`, `.computed`, `.enum`)"),
                    ));
                }
                _ => {
                    doc = None;
                    items.push(Statement::Rule(self.rule()?));
                }
            }
        }
    }

    fn decl(&mut self, doc: Option<String>, computed: bool) -> PResult<Decl> {
        let (name, span) = self.ident("a relation name")?;
        self.expect(Tok::LParen, "`(` after the relation name")?;
        let mut columns = Vec::new();
        let mut vocabs = Vec::new();
        loop {
            let (col, csp) = self.ident("a column name")?;
            self.expect(Tok::Colon, "`:` and a column type")?;
            let (ty, tsp) = self.ident("a column type (path, sym, int)")?;
            let (ty, vocab) = match ty.as_str() {
                "path" => (Ty::Path, None),
                "sym" => (Ty::Sym, None),
                "int" => (Ty::Int, None),
                // a vocabulary: a `sym` holding only its values
                other if other.starts_with(|c: char| c.is_ascii_uppercase()) => {
                    (Ty::Sym, Some((other.to_string(), tsp)))
                }
                other => return Err((tsp, format!("unknown column type `{other}` (path, sym, int)"))),
            };
            if columns.iter().any(|(c, _)| *c == col) {
                return Err((csp, format!("column `{col}` is declared twice")));
            }
            columns.push((col, ty));
            vocabs.push(vocab);
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
        Ok(Decl { name, span, doc, columns, computed_from, vocabs })
    }

    /// `.enum Name = "a" | "b" | …`, after the directive.
    fn vocab(&mut self, doc: Option<String>) -> PResult<VocabDecl> {
        let (name, span) = self.ident("a vocabulary name")?;
        self.expect(Tok::Op(CmpOp::Eq), &format!("`=` and the values of `{name}`"))?;
        let mut values: Vec<(String, Span)> = Vec::new();
        loop {
            match self.bump() {
                (Tok::Str(v), sp) => {
                    if values.iter().any(|(x, _)| *x == v) {
                        return Err((sp, format!("{v:?} is listed twice in `{name}`")));
                    }
                    values.push((v, sp));
                }
                (t, sp) => return Err((sp, format!("expected a string value of `{name}`, found {}", describe(&t)))),
            }
            if *self.peek() != Tok::Pipe {
                break;
            }
            self.bump();
        }
        Ok(VocabDecl { name, span, doc, values })
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
            if body.len() == MAX_BODY {
                return Err((
                    self.span(),
                    format!("a rule body of more than {MAX_BODY} literals; split it into rules that name each other"),
                ));
            }
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

/// The most literals one rule body or query has: planning a body costs more than linear time in
/// its literals, so a body past this is refused before it is planned (real rules have a few).
pub const MAX_BODY: usize = 256;

/// The most declarations, rules and facts one text holds: planning them costs more than linear time
/// in their number beyond this (real rule files have tens).
pub const MAX_STATEMENTS: usize = 4096;

/// The largest text (a query, a rules file) the rule language reads, in bytes: refused before it
/// is read further.
pub const MAX_TEXT: usize = 1 << 20;

fn parser(src: &str) -> PResult<Parser> {
    if src.len() > MAX_TEXT {
        return Err((
            Span { line: 1, col: 1 },
            format!(
                "{} bytes; the rule language reads at most {} KiB per query or rules file",
                src.len(),
                MAX_TEXT >> 10
            ),
        ));
    }
    Ok(Parser { toks: lex(src)?, pos: 0 })
}

/// Parses a program: declarations, rules and facts.
pub fn parse_program(source: &str, src: &str) -> Result<Vec<Statement>, DialectError> {
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
