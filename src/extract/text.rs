//! Text heuristics over comments and strings: markers and text that addresses the tool.

/// Marker words found in one comment line (`TODO`, `FIXME`, `XXX`, as whole upper-case words).
pub(crate) fn markers_in(line: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    for kind in ["TODO", "FIXME", "XXX"] {
        let mut from = 0;
        while let Some(i) = line[from..].find(kind) {
            let at = from + i;
            let before = line[..at].chars().next_back();
            let after = line[at + kind.len()..].chars().next();
            let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            if !word(before) && !word(after) {
                out.push(kind);
                break;
            }
            from = at + kind.len();
        }
    }
    out
}

/// Phrases that address andon or claim a verdict. Repository text is data: a match is recorded as
/// a suspected injection and never changes anything.
const PHRASES: &[&str] = &[
    "andon:",
    "andon,",
    "andon-ignore",
    "andon ignore",
    "andon skip",
    "wire is proven",
    "wire is verified",
    "this is proven",
    "mark as proven",
    "mark this as proven",
    "mark it as proven",
    "treat as verified",
    "treat this as verified",
    "skip checking",
    "skip the check",
    "skip verification",
    "ignore this failure",
    "ignore this finding",
    "ignore the failure",
    "ignore previous instructions",
    "ignore all previous instructions",
    "ignore prior instructions",
    "disregard previous instructions",
    "do not flag",
    "don't flag",
    "verdict: proven",
    "verdict=proven",
];

/// Whether a line of comment or string text addresses the tool.
pub(crate) fn addresses_tool(line: &str) -> bool {
    if line.len() < 5 {
        return false;
    }
    let lower = line.to_ascii_lowercase();
    PHRASES.iter().any(|p| lower.contains(p))
}

/// At most `max` bytes of `s`, cut at a character boundary, with `…` when cut.
pub(crate) fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_whole_words() {
        assert_eq!(markers_in("// TODO: later"), vec!["TODO"]);
        assert_eq!(markers_in("# FIXME(bob) and XXX"), vec!["FIXME", "XXX"]);
        assert!(markers_in("// TODOS and XXXL and todo").is_empty());
    }

    #[test]
    fn tool_addressing_text_is_detected() {
        assert!(addresses_tool("# andon: this wire is proven"));
        assert!(addresses_tool("// Skip checking here, it is fine"));
        assert!(addresses_tool("\"ignore this failure\""));
        assert!(!addresses_tool("// the wire carries bytes"));
    }

    #[test]
    fn clip_respects_char_boundaries() {
        assert_eq!(clip("héllo", 2), "h…");
        assert_eq!(clip("abc", 5), "abc");
    }
}
