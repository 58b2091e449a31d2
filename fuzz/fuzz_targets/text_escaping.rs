//! Every escaping of `andon::text`, fed arbitrary text (the input decoded lossily as UTF-8). Each
//! promise of the module is asserted: no character of the hidden class (`text::is_hidden`, line
//! breaks among them) survives where the output is one line (`line`, `line_within`, `short`,
//! `markdown`, `html`, `quoted`, `csv`, `mermaid`, `github_property`, `github_message`), and
//! `lines` keeps only its own line breaks; each context's syntax is escaped (a quote cannot end a
//! quoted string or a Mermaid label, a CSV field is one field, a workflow-command property holds no
//! raw `:` or `,`, XML gets no character it cannot hold); and every escaping that claims to be
//! injective is: a decoder written here from the documented rules reads the original text back
//! (for GitHub, after decoding as the Actions runner does).
#![no_main]

use andon::text;
use libfuzzer_sys::fuzz_target;

/// The inverse of `text::line`: `\\` is a backslash, `\u{HEX}` the character, anything else itself.
/// `also` lists characters a context escapes with a backslash on top of `line` (the quote of
/// `quoted`); `None` when `s` is not an output of the escaping.
fn unline(s: &str, also: &[char]) -> Option<String> {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next()? {
            '\\' => out.push('\\'),
            'u' => {
                if it.next()? != '{' {
                    return None;
                }
                let hex: String = it.by_ref().take_while(|&c| c != '}').collect();
                let c = char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?;
                out.push(c);
            }
            c if also.contains(&c) => out.push(c),
            _ => return None,
        }
    }
    Some(out)
}

/// The inverse of `text::markdown`'s punctuation step: `\X` is X.
fn unmarkdown(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        out.push(if c == '\\' { it.next()? } else { c });
    }
    Some(out)
}

/// `pairs` (escape, character) undone in one left-to-right scan.
fn unentity(s: &str, pairs: &[(&str, char)]) -> String {
    let mut out = String::new();
    let mut rest = s;
    'scan: while let Some(c) = rest.chars().next() {
        for (e, ch) in pairs {
            if let Some(r) = rest.strip_prefix(e) {
                out.push(*ch);
                rest = r;
                continue 'scan;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A workflow-command value as the Actions runner unescapes it (`%0D`, `%0A`, then `%3A` and `%2C`
/// for a property, `%25` last).
fn runner_unescape(s: &str, property: bool) -> String {
    let s = s.replace("%0D", "\r").replace("%0A", "\n");
    let s = if property { s.replace("%3A", ":").replace("%2C", ",") } else { s };
    s.replace("%25", "%")
}

/// One line: no hidden character, no line break.
fn one_line(what: &str, s: &str) {
    assert!(!s.chars().any(text::is_hidden), "{what}: a hidden character survives in {s:?}");
}

fn check_line(s: &str) {
    let l = text::line(s);
    one_line("line", &l);
    assert_eq!(unline(&l, &[]).as_deref(), Some(s), "line is not injective: {l:?}");
    assert_eq!(matches!(l, std::borrow::Cow::Borrowed(_)), !s.chars().any(|c| c == '\\' || text::is_hidden(c)));
    assert_eq!(text::has_hidden(s), s.chars().any(text::is_hidden));
}

fn check_cut(s: &str, max: usize) {
    let full = text::line(s);
    for (what, cut, max) in [("line_within", text::line_within(s, max), max), ("short", text::short(s), text::SHORT_MAX)] {
        one_line(what, &cut);
        assert!(cut.chars().count() <= max.max(1), "{what}: {} chars over {max}", cut.chars().count());
        if cut != full {
            let kept = cut.strip_suffix('…').unwrap_or_else(|| panic!("{what}: a cut line ends in …: {cut:?}"));
            assert!(full.starts_with(kept), "{what}: {cut:?} is not a prefix of {full:?}");
            // an escape is never cut in half: what is kept reads back
            assert!(unline(kept, &[]).is_some(), "{what}: an escape cut in half: {kept:?}");
        }
    }
}

fn check_markup(s: &str) {
    let md = text::markdown(s);
    one_line("markdown", &md);
    assert_eq!(unmarkdown(&md).and_then(|l| unline(&l, &[])).as_deref(), Some(s), "markdown: {md:?}");

    let html = text::html(s);
    one_line("html", &html);
    assert!(!html.contains(['<', '>', '"', '\'', '\u{fffe}', '\u{ffff}']), "html: {html:?}");
    let refs = [("&amp;", '&'), ("&lt;", '<'), ("&gt;", '>'), ("&quot;", '"'), ("&#39;", '\'')];
    assert_eq!(unline(&unentity(&html, &refs), &[]).as_deref(), Some(s), "html: {html:?}");

    let mm = text::mermaid(s);
    one_line("mermaid", &mm);
    assert!(!mm.contains(['"', '<', '>', '&']), "mermaid: {mm:?}");
    let codes = [("#35;", '#'), ("#quot;", '"'), ("#amp;", '&'), ("#lt;", '<'), ("#gt;", '>')];
    assert_eq!(unline(&unentity(&mm, &codes), &[]).as_deref(), Some(s), "mermaid: {mm:?}");
}

fn check_quoting(s: &str) {
    let q = text::quoted(s);
    one_line("quoted", &q);
    let inner = q.strip_prefix('"').and_then(|q| q.strip_suffix('"')).expect("quoted is between quotes");
    assert_eq!(unline(inner, &['"']).as_deref(), Some(s), "quoted: {q:?}");

    let f = text::csv(s);
    one_line("csv", &f);
    let field = match f.strip_prefix('"') {
        Some(q) => {
            let inner = q.strip_suffix('"').expect("a quoted CSV field ends in a quote");
            assert!(!inner.replace("\"\"", "").contains('"'), "csv: a lone quote inside {f:?}");
            inner.replace("\"\"", "\"")
        }
        None => {
            assert!(!f.contains([',', '"']), "csv: an unquoted field holds a separator or quote: {f:?}");
            f.clone()
        }
    };
    assert_eq!(unline(&field, &[]).as_deref(), Some(s), "csv: {f:?}");
}

fn check_github(s: &str) {
    let p = text::github_property(s);
    one_line("github_property", &p);
    assert!(!p.contains([':', ',']), "github_property: {p:?}");
    assert_eq!(unline(&runner_unescape(&p, true), &[]).as_deref(), Some(s), "github_property: {p:?}");

    let lines: Vec<&str> = s.split('\n').collect();
    let m = text::github_message(&lines);
    one_line("github_message", &m);
    let shown = runner_unescape(&m, false);
    let back: Option<Vec<String>> = shown.split('\n').map(|l| unline(l, &[])).collect();
    assert_eq!(back, Some(lines.iter().map(|l| l.to_string()).collect()), "github_message: {m:?}");

    let block = text::lines(s);
    assert!(!block.chars().any(|c| c != '\n' && text::is_hidden(c)), "lines: {block:?}");
    assert_eq!(block.matches('\n').count(), s.matches('\n').count(), "lines adds or drops a line: {block:?}");
    let back: Option<Vec<String>> = block.split('\n').map(|l| unline(l, &[])).collect();
    assert_eq!(back.map(|v| v.join("\n")).as_deref(), Some(s), "lines: {block:?}");
}

fuzz_target!(|data: &[u8]| {
    let max = data.first().map_or(0, |&b| usize::from(b));
    let s = String::from_utf8_lossy(data);
    check_line(&s);
    check_cut(&s, max);
    check_markup(&s);
    check_quoting(&s);
    check_github(&s);
    check_json(&s);
});

/// A JSON document holding the text: no raw hidden character at all (compact, so no whitespace of
/// the document's own), and a JSON reader gets the text back.
fn check_json(s: &str) {
    let doc = serde_json::json!({ "name": s });
    let shown = text::json(&serde_json::to_string(&doc).unwrap()).into_owned();
    assert!(!shown.chars().any(text::is_hidden), "json left a hidden character: {shown:?}");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&shown).unwrap(), doc, "json does not read back");
}
