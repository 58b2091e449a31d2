//! Appeals to a person's authority (R105): the phrases, roles and verbs that mark a claim resting
//! on someone's say-so instead of an objective check.

/// Phrases that appeal to a person's authority (R105), matched case-insensitively; also
/// `as <one to three words> agreed` within one clause.
pub const AUTHORITY_PHRASES: &[&str] = &[
    "approved by",
    "signed off",
    "signed-off",
    "sign-off",
    "lead says",
    "lead said",
    "trust me",
    "take my word",
    "would agree",
    "vouched for",
    "vouches for",
    "endorsed by",
    "blessed by",
    "on the authority of",
    "on their word",
    "on his word",
    "on her word",
];

/// People whose say-so a criterion might lean on: `the architect says`, `per the tech lead`.
const AUTHORITY_ROLES: &[&str] = &[
    "lead",
    "architect",
    "manager",
    "owner",
    "owners",
    "maintainer",
    "maintainers",
    "reviewer",
    "reviewers",
    "cto",
    "boss",
    "expert",
    "experts",
    "senior",
    "team",
    "director",
    "qa",
];

/// What a person does when a criterion rests on their say-so.
const AUTHORITY_VERBS: &[&str] = &[
    "says",
    "said",
    "agrees",
    "agreed",
    "approved",
    "approves",
    "endorsed",
    "endorses",
    "confirmed",
    "confirms",
    "reviewed",
    "signed",
    "okayed",
    "blessed",
    "decided",
];

/// Sentence-opening words that are no one's name (`This says`, `It confirms`).
const NOT_A_NAME: &[&str] = &[
    "the",
    "this",
    "that",
    "it",
    "which",
    "what",
    "everything",
    "nothing",
    "output",
    "test",
    "tests",
    "check",
    "spec",
    "log",
    "code",
    "run",
    "result",
    "results",
    "benchmark",
    "profile",
    "cargo",
    "pytest",
    "ci",
];

/// The appeal to authority in `s`, if any.
pub fn appeals_to_authority(s: &str) -> Option<String> {
    let lower = s.to_lowercase();
    if let Some(p) = AUTHORITY_PHRASES.iter().find(|p| lower.contains(*p)) {
        return Some((*p).to_string());
    }
    // `<a role> <verb>` within three words (`the tech lead confirmed`), `per the <role>`, and a
    // capitalised name right before a verb (`Alice agrees`)
    let bare = |w: &str| w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
    let original: Vec<&str> = s.split_whitespace().collect();
    for (i, w) in original.iter().enumerate() {
        let word = bare(w);
        let verb_within = |n: usize| {
            original[i + 1..(i + 1 + n).min(original.len())]
                .iter()
                .find(|v| AUTHORITY_VERBS.contains(&bare(v).as_str()))
        };
        if AUTHORITY_ROLES.contains(&word.as_str()) {
            if let Some(v) = verb_within(3) {
                return Some(format!("{word} … {}", bare(v)));
            }
            if original[i.saturating_sub(3)..i].iter().any(|w| bare(w) == "per") {
                return Some(format!("per the {word}"));
            }
        }
        let capitalised =
            w.chars().next().is_some_and(char::is_uppercase) && w.chars().skip(1).all(char::is_alphabetic);
        if capitalised && w.len() > 1 && !NOT_A_NAME.contains(&word.as_str()) {
            if let Some(v) = verb_within(1) {
                return Some(format!("{w} {}", bare(v)));
            }
        }
    }
    // `as <one to three words> agreed`, within one clause.
    let words: Vec<&str> = lower.split_whitespace().collect();
    let clause_ends = |w: &str| w.ends_with([',', ';', '.', ':']);
    for i in (0..words.len()).filter(|&i| words[i] == "as") {
        for j in i + 2..(i + 5).min(words.len()) {
            if clause_ends(words[j - 1]) {
                break;
            }
            if words[j].trim_end_matches(|c: char| !c.is_alphanumeric()) == "agreed" {
                return Some(words[i..=j].join(" "));
            }
        }
    }
    None
}
