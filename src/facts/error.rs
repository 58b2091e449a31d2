//! The fact catalog's error: a string that is not a value of a closed vocabulary.

/// What went wrong reading a value of the catalog.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `value` is not one of the values of vocabulary `vocab` (a `.enum` of `rules/schema.dl`).
    #[error("{value:?} is not a `{vocab}`: one of {}", listed(allowed))]
    UnknownValue { vocab: &'static str, value: String, allowed: &'static [&'static str] },
}

fn listed(values: &[&str]) -> String {
    values.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use crate::facts::vocab::{Confidence, EdgeKind, WireStatus};

    #[test]
    fn a_vocabulary_enum_reads_and_writes_its_tokens() {
        assert_eq!(Confidence::ALL.len(), Confidence::TOKENS.len());
        for c in Confidence::ALL {
            assert_eq!(c.as_str().parse::<Confidence>(), Ok(*c));
            assert_eq!(serde_json::to_string(c).unwrap(), format!("{:?}", c.as_str()));
        }
        assert_eq!(EdgeKind::TypeOnly.to_string(), "type_only");
        assert_eq!(WireStatus::parse("broken/unproven"), Some(WireStatus::BrokenOrUnproven));
        assert_eq!(serde_json::from_str::<Confidence>("\"heuristic\"").unwrap(), Confidence::Heuristic);
        let e = "exactt".parse::<Confidence>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "\"exactt\" is not a `Confidence`: one of \"exact\", \"heuristic\", \"unresolved\", \"declared\", \"brief\", \"self-assess-backed\", \"contract\""
        );
        assert!(serde_json::from_str::<Confidence>("\"sure\"").is_err());
    }
}
