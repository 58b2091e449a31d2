//! andon's Datalog dialect: the parser and the checker (names, arity, types, safety,
//! stratification). Self-contained (std only), because `build.rs` includes this module to check
//! `rules/*.dl` and translate them for crepe: one grammar, one set of diagnostics, both paths.
//!
//! ```text
//! /// How sure a resolution is.                          (a doc line, required on built-in decls)
//! .enum Confidence = "exact" | "heuristic"                (a closed vocabulary)
//! .decl Resolves(path: path, target: path, confidence: Confidence)   (a column it types)
//! /// Stage `producer` feeds stage `consumer`.
//! .decl Wire(producer: sym, consumer: sym)                (column types: path, sym, int)
//! .computed StreamOrder(stage: sym, position: int) from Stage, Wire
//! Wire(p, c) :- WireImport(p, c, _, _, _, _), p != c.     (rule)
//! Kind("cargo", "normal").                                (fact)
//! ```
//! A body literal is an atom, a negated atom `!A(..)`, or a comparison `x op y` with op one of
//! `= != < <= > >=`; `x = <bound term>` also binds `x`. Terms: variables (any identifier), `_`,
//! "strings" and unsigned integers. Comments: `//` and `/* */`.
//!
//! A column typed by a vocabulary is a `sym` that holds only its values: a string literal that
//! fills such a column, or is compared with a variable that fills one, must be one of them (in a
//! rules file and in a query alike); `build.rs` makes each vocabulary a Rust enum.
//!
//! The files: `syntax` (what a text parses to), `lexer`, `parser`, `program` (a checked program),
//! `builder` (sources in, a program out), `checker` (names, arity, types, safety), `vocab` (the
//! literals of closed vocabularies) and `strata` (stratification).

mod builder;
mod checker;
mod lexer;
mod parser;
mod program;
mod strata;
mod syntax;
#[cfg(test)]
mod tests;
mod vocab;

use std::fmt;

pub use builder::Builder;
pub use parser::{parse_program, parse_query};
pub use program::{Arg, CRule, Lit, Program, RelDecl, RelKind, Stratum, Value, Vocab};
pub use strata::tarjan;
pub use syntax::{Atom, CmpOp, Decl, Literal, QUERY_REL, Rule, Statement, Term, Ty, VocabDecl};

/// A 1-based position in a source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub line: u32,
    pub col: u32,
}

/// The dialect's error, a diagnostic: which source (a rules file's path, or `query`), where, what.
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

impl std::error::Error for DialectError {}

impl DialectError {
    /// The source (a rules file's path, or `query`) and the line the diagnostic points at.
    pub fn location(&self) -> Option<(&std::path::Path, u32)> {
        Some((std::path::Path::new(&self.source), self.span.line))
    }
}
