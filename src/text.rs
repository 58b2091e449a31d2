//! Repository text, made safe to show: the one rule for which characters never reach a reader
//! raw, and one escaping for each place text is shown (a terminal line, a Markdown cell, HTML or
//! XML, a quoted string, a CSV field, a Mermaid label, a GitHub workflow command). Every escaping
//! starts from [`line()`]: its output keeps to one line (or, for [`lines()`], to the text's own
//! lines) and reads back to the text, but for the cut ones ([`line_within`], [`short`]).
//! JSON needs nothing beyond serde's encoding. Also the small text helpers every layer shares:
//! a file name as reversible text (`path_text`), the nearest name for "did you mean", and writing
//! a file whole.
//!
//! This module is a leaf: it depends on nothing else in the crate (R123).

use std::borrow::Cow;
use std::fs::{self, File};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A character that must never reach a reader raw: C0 and C1 controls and DEL (line breaks and
/// tabs among them), zero-width characters and the left-to-right and right-to-left marks
/// (U+200B–U+200F), the line and paragraph separators (U+2028, U+2029), the Arabic letter mark
/// (U+061C), the byte-order mark (U+FEFF), and the bidirectional embeddings, overrides and isolates
/// (U+202A–U+202E, U+2066–U+2069), which could start a line of its own (a forged verdict line)
/// or reorder what a reader sees.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200b}'..='\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{061c}'
                | '\u{feff}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// Whether `s` holds a character of [`is_hidden`]'s class.
pub fn has_hidden(s: &str) -> bool {
    s.chars().any(is_hidden)
}

/// Text for one terminal line: every hidden character becomes its visible escape (`\u{202e}`),
/// so no repository string can break the line, forge one, or reorder what a reader sees; a
/// backslash becomes `\\`, so an escape cannot be forged and the text reads back unambiguously.
pub fn line(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c == '\\' || is_hidden(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push_escaped(c, &mut out);
    }
    Cow::Owned(out)
}

fn push_escaped(c: char, out: &mut String) {
    if c == '\\' {
        out.push_str("\\\\");
    } else if is_hidden(c) {
        out.extend(c.escape_unicode());
    } else {
        out.push(c);
    }
}

/// Serialized JSON with every hidden character that serde leaves raw (DEL, the C1 controls, line
/// and paragraph separators, bidirectional controls, zero-width characters) as a `\uXXXX` escape
/// (a surrogate pair above U+FFFF). A JSON reader gets the same text back; a terminal or a log
/// viewer that shows the document sees no hidden character. Below U+0020 serde escapes already,
/// and only there may a raw character of the class stand outside a string (the document's own
/// whitespace), so those are left as they are.
pub fn json(serialized: &str) -> Cow<'_, str> {
    let raw = |c: char| is_hidden(c) && c as u32 >= 0x7f;
    if !serialized.chars().any(raw) {
        return Cow::Borrowed(serialized);
    }
    let mut out = String::with_capacity(serialized.len() + 16);
    for c in serialized.chars() {
        if raw(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`line()`] cut to at most `max` characters; a longer result ends in `…`. An escape is never cut
/// in half.
pub fn line_within(s: &str, max: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    let mut buf = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        buf.clear();
        push_escaped(c, &mut buf);
        let n = buf.chars().count();
        let room = if chars.peek().is_some() { max.saturating_sub(1) } else { max };
        if used + n > room {
            out.push('…');
            return out;
        }
        used += n;
        out.push_str(&buf);
    }
    out
}

/// The longest [`short`] text, in characters.
pub const SHORT_MAX: usize = 500;

/// [`line_within`] [`SHORT_MAX`] characters: repository text quoted inside a message.
pub fn short(s: &str) -> String {
    line_within(s, SHORT_MAX)
}

/// The Markdown punctuation escaped in a cell or list line, so quoted text can never open markup,
/// a heading, a code span, a link, a new table cell or a character reference (`&rlm;` would render
/// a hidden character).
const MARKDOWN_PUNCTUATION: &str = "\\`*_[]<>#|~!&";

/// Text for one Markdown table cell or list line: [`line()`], then every Markdown punctuation
/// character behind a backslash.
pub fn markdown(s: &str) -> String {
    let one = line(s);
    let mut out = String::with_capacity(one.len() + 4);
    for c in one.chars() {
        if MARKDOWN_PUNCTUATION.contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Text for HTML or XML, in an element or a quoted attribute: [`line()`], then `&`, `<`, `>`, `"`
/// and `'` as character references, and the noncharacters U+FFFE and U+FFFF (which XML cannot
/// hold) as their escapes.
pub fn html(s: &str) -> String {
    html_escaped(&line(s))
}

/// [`html`] of [`line_within`] `max` characters: a label cut to fit, escaped once.
pub fn html_within(s: &str, max: usize) -> String {
    html_escaped(&line_within(s, max))
}

/// Text already through [`line()`] with HTML's syntax as character references.
fn html_escaped(one: &str) -> String {
    let mut out = String::with_capacity(one.len() + 8);
    for c in one.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\u{fffe}' | '\u{ffff}' => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    out
}

/// Text for a double-quoted string on one line (a fact's value, a Graphviz DOT id): [`line()`]
/// with `"` as `\"`, between double quotes.
pub fn quoted(s: &str) -> String {
    let one = line(s);
    let mut out = String::with_capacity(one.len() + 4);
    out.push('"');
    for c in one.chars() {
        if c == '"' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// A TOML basic string, between double quotes, that a TOML reader decodes back to `s`: `"` and
/// `\` behind a backslash, and every hidden character as its `\uXXXX` (`\UXXXXXXXX`) escape, so
/// the string stays on its line and shows no hidden character.
pub fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if is_hidden(c) && (c as u32) <= 0xffff => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if is_hidden(c) => out.push_str(&format!("\\U{:08x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text for one CSV field (RFC 4180) of a record on one line: [`line()`], between double quotes
/// (each `"` doubled) when it holds `,` or `"`.
pub fn csv(s: &str) -> String {
    let one = line(s);
    if one.contains([',', '"']) { format!("\"{}\"", one.replace('"', "\"\"")) } else { one.into_owned() }
}

/// Text for a Mermaid label between double quotes: [`line()`], then `#`, `"`, `&`, `<`, `>`,
/// `` ` ``, `%`, `{`, `}` and `'` as Mermaid entity codes (`#35;`, `#quot;`, …), so a name can
/// neither end the label, open markup, make the label a Markdown string (`` "`…`" ``), nor carry a
/// directive (`%%{init: …}%%`) that restyles the chart.
pub fn mermaid(s: &str) -> String {
    let one = line(s);
    let mut out = String::with_capacity(one.len() + 8);
    for c in one.chars() {
        match c {
            '#' => out.push_str("#35;"),
            '"' => out.push_str("#quot;"),
            '&' => out.push_str("#amp;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '`' => out.push_str("#96;"),
            '%' => out.push_str("#37;"),
            '{' => out.push_str("#123;"),
            '}' => out.push_str("#125;"),
            '\'' => out.push_str("#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Text for a property value of a GitHub workflow command (`file=`, `title=`): [`line()`], then
/// `%`, `:` and `,` percent-encoded as the runner decodes them.
pub fn github_property(s: &str) -> String {
    github_encoded(&line(s), true)
}

/// Text for the message of a GitHub workflow command: each of `lines` through [`line()`] with `%`
/// percent-encoded, joined by `%0A`, which GitHub shows as the line breaks of one annotation; a
/// line break inside a line stays an escape.
pub fn github_message<S: AsRef<str>>(lines: &[S]) -> String {
    lines.iter().map(|l| github_encoded(&line(l.as_ref()), false)).collect::<Vec<_>>().join("%0A")
}

fn github_encoded(one: &str, property: bool) -> String {
    let mut out = String::with_capacity(one.len() + 8);
    for c in one.chars() {
        match c {
            '%' => out.push_str("%25"),
            ':' if property => out.push_str("%3A"),
            ',' if property => out.push_str("%2C"),
            c => out.push(c),
        }
    }
    out
}

/// Text of several lines (a multi-line message): its own `\n` line breaks kept, each line through
/// [`line()`].
pub fn lines(s: &str) -> String {
    s.split('\n').map(line).collect::<Vec<_>>().join("\n")
}

/// A file name (or repo-relative path) as text, reversibly: valid UTF-8 stays as it is, a
/// backslash becomes `\\`, and each byte that is not part of valid UTF-8 becomes `\xNN` (two
/// lowercase hex digits). Two distinct names never share a text, and [`path_bytes`] reads it back.
pub fn path_text(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\\' {
                out.push_str("\\\\");
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// The bytes of a name written by [`path_text`]; `None` for text it never writes (an unknown
/// escape, or `\xNN` where the byte would be valid UTF-8), so the mapping is one to one.
pub fn path_bytes(text: &str) -> Option<Vec<u8>> {
    if !text.contains('\\') {
        return Some(text.as_bytes().to_vec());
    }
    let mut out = Vec::with_capacity(text.len());
    let mut it = text.bytes();
    while let Some(b) = it.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match it.next()? {
            b'\\' => out.push(b'\\'),
            b'x' => {
                let nibble = |c: u8| (c as char).to_digit(16).filter(|_| !c.is_ascii_uppercase());
                out.push((nibble(it.next()?)? * 16 + nibble(it.next()?)?) as u8);
            }
            _ => return None,
        }
    }
    (path_text(&out) == text).then_some(out)
}

/// [`path_text`] of an OS name (on Windows, of its WTF-8 bytes).
pub fn os_path_text(name: &std::ffi::OsStr) -> String {
    path_text(name.as_encoded_bytes())
}

/// The file-system path of a name written by [`path_text`] (`None` when the text is not one).
pub fn os_path(text: &str) -> Option<PathBuf> {
    let bytes = path_bytes(text)?;
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
    }
    #[cfg(not(unix))]
    {
        String::from_utf8(bytes).ok().map(PathBuf::from)
    }
}

/// Levenshtein distance over chars, for "did you mean" suggestions.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate nearest to `s` by edit distance (case-insensitive), if it is near enough to be a
/// plausible typo: at most a third of the longer name, and at least 1 edit allowed.
pub fn nearest<'a>(s: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = s.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (edit_distance(&lower, &c.to_lowercase()), c.len(), c))
        .min()
        .filter(|(d, len, _)| *d <= 3.max(len / 3) && *d < lower.len().max(*len))
        .map(|(_, _, c)| c)
}

/// Writes `path` whole: a temporary sibling no other writer (process or thread) uses, renamed
/// over `path`. A reader sees the old file or the new one, never half of either; on failure the
/// temporary file is removed. For reports and artifacts, which a crash may lose but never tear.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_whole(path, bytes, false)
}

/// Writes the file a person named (`--output FILE`): [`write_atomic`] over a regular file or none,
/// but into whatever else is there, in place: a symlink's target, a device (`/dev/stdout`), a pipe
/// (`>(…)`). Renaming over those would replace the link or the device node with a plain file.
pub fn write_named(path: &Path, bytes: &[u8]) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() && !m.is_dir() => {
            fs::OpenOptions::new().write(true).truncate(m.file_type().is_symlink()).open(path)?.write_all(bytes)
        }
        _ => write_atomic(path, bytes),
    }
}

/// [`write_atomic`], durable: the file is fsynced before the rename and its directory after, so
/// a crash keeps the old file or the new one (the ledger).
pub fn write_durable(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_whole(path, bytes, true)
}

fn write_whole(path: &Path, bytes: &[u8], durable: bool) -> io::Result<()> {
    let tmp = sibling(path, "tmp");
    // never through something already at the temporary name (a planted link)
    let written = File::create_new(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|_| if durable { f.sync_all() } else { Ok(()) }))
        .and_then(|_| fs::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
        return written;
    }
    if durable
        && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && let Ok(d) = File::open(dir)
    {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Creates `path` whole with `bytes`, never replacing anything there (a file, a link, a file
/// another writer created meanwhile): a temporary sibling is written, then hard-linked to `path`,
/// which fails with `AlreadyExists` when `path` exists. Where hard links are not supported, the
/// file is created exclusively (`O_EXCL`) and written.
pub fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = sibling(path, "tmp");
    let linked = File::create_new(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|_| f.sync_all()))
        .and_then(|_| fs::hard_link(&tmp, path));
    let _ = fs::remove_file(&tmp);
    match linked {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists && fs::symlink_metadata(path).is_err() => {
            let mut f = fs::OpenOptions::new().write(true).create_new(true).open(path)?;
            f.write_all(bytes).and_then(|_| f.sync_all())
        }
        other => other,
    }
}

/// A sibling of `path` no other writer (process or thread) uses: `.<name>.<pid>.<n>.<ext>`.
pub fn sibling(path: &Path, ext: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(format!(".{}.{n}.{ext}", std::process::id()));
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {

    #[test]
    fn json_escapes_what_serde_leaves_raw_and_reads_back() {
        let v = serde_json::json!({ "name": "a\u{7f}b\u{85}c\u{2028}d\u{202e}e\u{200b}f\u{feff}g\u{e0001}h\né" });
        let raw = serde_json::to_string_pretty(&v).unwrap();
        assert!(raw.contains('\u{202e}'), "serde leaves it raw: {raw}");
        let shown = json(&raw);
        assert!(!shown.chars().any(|c| is_hidden(c) && c != '\n'), "{shown}");
        assert!(shown.contains("\\u202e") && shown.contains("\\u0085") && shown.contains('é'), "{shown}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&shown).unwrap(), v);
        assert!(matches!(json("{\n  \"a\": 1\n}"), Cow::Borrowed(_)));
    }
    use super::*;

    const CLASS: &[char] = &[
        '\u{0}', '\n', '\r', '\t', '\u{1b}', '\u{7f}', '\u{85}', '\u{9f}', '\u{200b}', '\u{200c}', '\u{200d}',
        '\u{200e}', '\u{200f}', '\u{2028}', '\u{2029}', '\u{061c}', '\u{feff}', '\u{202a}', '\u{202e}', '\u{2066}',
        '\u{2069}',
    ];

    #[test]
    fn every_character_of_the_class_is_hidden_and_escaped_everywhere() {
        for &c in CLASS {
            let s = format!("a{c}b");
            assert!(is_hidden(c), "{:?}", c);
            let every = [
                line(&s).into_owned(),
                markdown(&s),
                html(&s),
                line_within(&s, 100),
                quoted(&s),
                csv(&s),
                mermaid(&s),
                github_property(&s),
                github_message(&[s.as_str()]),
                toml_string(&s),
            ];
            for shown in every {
                assert!(!has_hidden(&shown), "{c:?} reached {shown:?}");
                assert!(shown.contains(&format!("{:x}", c as u32)), "{c:?} is shown as an escape: {shown:?}");
            }
        }
        for c in ['a', 'é', '→', '\u{2030}', '\u{2065}', '\u{206a}', '\u{200a}', ' '] {
            assert!(!is_hidden(c), "{c:?}");
        }
    }

    #[test]
    fn markdown_and_html_escape_their_syntax() {
        assert_eq!(markdown("a|b `c` #d"), "a\\|b \\`c\\` \\#d");
        // a character reference would render a hidden character (`&rlm;`) or markup as text
        assert_eq!(markdown("a&rlm;b"), "a\\&rlm;b");
        assert_eq!(html("<script>\"'&"), "&lt;script&gt;&quot;&#39;&amp;");
        assert_eq!(line("plain"), Cow::Borrowed("plain"));
    }

    #[test]
    fn each_context_escapes_its_own_syntax() {
        assert_eq!(quoted("a\"b\\"), "\"a\\\"b\\\\\"");
        assert_eq!(quoted("plain"), "\"plain\"");
        assert_eq!(csv("plain"), "plain");
        assert_eq!(csv("a,\"b\""), "\"a,\"\"b\"\"\"");
        assert_eq!(csv("a\nb"), "a\\u{a}b");
        assert_eq!(mermaid("a\"#b<&>"), "a#quot;#35;b#lt;#amp;#gt;");
        // a backtick right inside the quotes would make the label a Markdown string
        assert_eq!(mermaid("`**b**`"), "#96;**b**#96;");
        // a directive in a name cannot restyle the chart
        let directive = mermaid("x %%{init: {'themeCSS': 'x'}}%% y");
        assert!(!directive.contains(['%', '{', '}', '\'']), "{directive}");
        assert_eq!(mermaid("%{}'"), "#37;#123;#125;#39;");
        assert_eq!(html_within("a\u{202e}\\b<c>defgh", 10), "a\\u{202e}…");
        assert_eq!(html_within("a\\b<c>", 9), "a\\\\b&lt;c&gt;");
        assert_eq!(html("\u{fffe}"), "\\u{fffe}");
        assert_eq!(github_property("a:b,c%d\ne"), "a%3Ab%2Cc%25d\\u{a}e");
        assert_eq!(github_message(&["a:b%", "c\nd"]), "a:b%25%0Ac\\u{a}d");
        assert_eq!(lines("a\nb\u{1b}\r"), "a\nb\\u{1b}\\u{d}");
    }

    #[test]
    fn a_cut_line_ends_in_an_ellipsis_and_never_halves_an_escape() {
        assert_eq!(line_within("abcdef", 6), "abcdef");
        assert_eq!(line_within("abcdefg", 6), "abcde…");
        let cut = line_within("ab\u{202e}cdef", 6);
        assert_eq!(cut, "ab…");
        assert!(cut.chars().count() <= 6);
    }

    #[test]
    fn a_literal_backslash_cannot_forge_an_escape() {
        assert_eq!(line("\\u{202e}"), "\\\\u{202e}");
        assert_eq!(line("a\nb"), "a\\u{a}b");
    }

    #[test]
    fn short_caps_at_its_length() {
        let exact = "a".repeat(SHORT_MAX);
        assert_eq!(short(&exact), exact);
        let long = short(&"a".repeat(SHORT_MAX + 1));
        assert_eq!(long.chars().count(), SHORT_MAX);
        assert!(long.ends_with("a…"));
        let huge = short(&"\n".repeat(100_000));
        assert!(huge.chars().count() <= SHORT_MAX && huge.ends_with('…'));
        assert!(!has_hidden(&huge));
    }

    #[test]
    fn nearest_suggests_plausible_typos_only() {
        assert_eq!(nearest("Wyre", ["Wire", "Stage"]), Some("Wire"));
        assert_eq!(nearest("zzzzzz", ["Wire", "Stage"]), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn path_text_escapes_only_what_is_not_utf8_and_backslashes() {
        assert_eq!(path_text(b"src/a.py"), "src/a.py");
        assert_eq!(path_text("café.py".as_bytes()), "café.py");
        assert_eq!(path_text(b"leak\xff.py"), "leak\\xff.py");
        assert_eq!(path_text(b"leak\\xff.py"), "leak\\\\xff.py");
        assert_eq!(path_bytes("leak\\xff.py").as_deref(), Some(&b"leak\xff.py"[..]));
        for not_written in ["a\\", "a\\q", "\\x4", "\\x41", "\\xFF", "\\xc3\\xa9", "\\x+f"] {
            assert_eq!(path_bytes(not_written), None, "{not_written:?}");
        }
    }

    /// Any byte but `/` and NUL, with the bytes of escapes and of multi-byte UTF-8 made likely.
    fn name_bytes() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let byte = prop_oneof![
            any::<u8>().prop_filter("no / or NUL", |b| *b != b'/' && *b != 0),
            prop::sample::select(&b"\\xf0a9\xff\xfe\xc3\xa9\xe2\x80\xae"[..]),
        ];
        prop::collection::vec(byte, 0..16)
    }

    proptest::proptest! {
        #[test]
        fn path_text_round_trips_and_is_one_to_one(a in name_bytes(), b in name_bytes()) {
            for name in [&a, &b] {
                let text = path_text(name);
                proptest::prop_assert_eq!(path_bytes(&text), Some(name.clone()));
                let on_disk = os_path(&text).unwrap().into_os_string().into_encoded_bytes();
                proptest::prop_assert_eq!(&on_disk, name);
            }
            proptest::prop_assert_eq!(a == b, path_text(&a) == path_text(&b));
        }
    }

    #[test]
    fn write_atomic_replaces_whole_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        write_atomic(&p, b"one").unwrap();
        write_durable(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(write_atomic(&dir.path().join("missing/x"), b"x").is_err());
    }
}
