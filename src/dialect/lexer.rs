//! The lexer: a text into tokens, each with its line and column.

use super::Span;
use super::syntax::CmpOp;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
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
    Pipe,
    Op(CmpOp),
    Eof,
}

pub(super) fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{}`", cut(s)),
        Tok::Str(s) => format!("string {:?}", cut(s)),
        Tok::Int(n) => format!("number {n}"),
        Tok::Directive(d) => format!("`.{}`", cut(d)),
        Tok::Doc(_) => "a `///` doc line".into(),
        Tok::LParen => "`(`".into(),
        Tok::RParen => "`)`".into(),
        Tok::Comma => "`,`".into(),
        Tok::Dot => "`.`".into(),
        Tok::Turnstile => "`:-`".into(),
        Tok::Bang => "`!`".into(),
        Tok::Colon => "`:`".into(),
        Tok::Pipe => "`|`".into(),
        Tok::Op(o) => format!("`{}`", o.text()),
        Tok::Eof => "the end of the text".into(),
    }
}

/// The longest name (relation, variable, column) the language reads.
const MAX_NAME: usize = 256;

/// A token's text for a message: at most 60 characters, `…` where it is cut.
pub(super) fn cut(s: &str) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &s[..at]).into(),
        None => s.into(),
    }
}

pub(super) fn lex(src: &str) -> Result<Vec<(Tok, Span)>, (Span, String)> {
    let b = src.as_bytes();
    let (mut i, mut line, mut line_start) = (0usize, 1u32, 0usize);
    let mut out = Vec::new();
    // the column is counted on from the last token of the line, never from its start again (a
    // line of a million tokens stays linear)
    let mut counted = (0usize, 1u32);
    let mut col_at = |line_start: usize, i: usize| {
        if counted.0 < line_start {
            counted = (line_start, 1);
        }
        counted = (i, counted.1 + src[counted.0..i].chars().count() as u32);
        counted.1
    };
    while i < b.len() {
        let span = Span { line, col: col_at(line_start, i) };
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
                    .map_err(|_| (span, format!("number {} is too large (max 4294967295)", cut(&src[i..j]))))?;
                out.push((Tok::Int(n), span));
                i = j;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let end = ident_end(b, i);
                if end - i > MAX_NAME {
                    return Err((span, format!("a name of {} characters; names are at most {MAX_NAME}", end - i)));
                }
                out.push((Tok::Ident(src[i..end].to_string()), span));
                i = end;
            }
            _ => {
                let ch = src[i..].chars().next().unwrap_or('?');
                return Err((span, format!("unexpected character `{ch}`")));
            }
        }
    }
    let span = Span { line, col: col_at(line_start, b.len()) };
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
        b'|' => (Tok::Pipe, 1),
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
