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
