//! TOML values as the configuration reads them: each with the line it starts on.

use super::*;

/// A parsed TOML value with the line it starts on.
pub(super) struct TomlValue {
    pub(super) line: u32,
    pub(super) v: TomlKind,
}

pub(super) enum TomlKind {
    Str(String),
    Int(i64),
    Bool(bool),
    Other,
    Array(Vec<TomlValue>),
    Table(Vec<(String, u32, TomlValue)>),
}

impl TomlValue {
    pub(super) fn table(&self) -> Option<&[(String, u32, TomlValue)]> {
        match &self.v {
            TomlKind::Table(t) => Some(t),
            _ => None,
        }
    }
}

/// The byte offsets where the lines of a text start, to turn offsets into line numbers in
/// logarithmic time (a file of many tables is converted in linear time).
pub(super) struct Lines(Vec<usize>);

impl Lines {
    pub(super) fn of(text: &str) -> Lines {
        Lines(std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect())
    }

    /// The 1-based line of byte `offset`.
    pub(super) fn at(&self, offset: usize) -> u32 {
        self.0.partition_point(|&start| start <= offset) as u32
    }
}

pub(super) fn convert(lines: &Lines, v: &toml::Spanned<DeValue<'_>>) -> TomlValue {
    let line = lines.at(v.span().start);
    let v = match v.get_ref() {
        DeValue::String(s) => TomlKind::Str(s.to_string()),
        DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
            Ok(n) => TomlKind::Int(n),
            Err(_) => TomlKind::Other,
        },
        DeValue::Float(_) => TomlKind::Other,
        DeValue::Boolean(b) => TomlKind::Bool(*b),
        DeValue::Datetime(_) => TomlKind::Other,
        DeValue::Array(a) => TomlKind::Array(a.iter().map(|x| convert(lines, x)).collect()),
        DeValue::Table(t) => TomlKind::Table(table_of(lines, t)),
    };
    TomlValue { line, v }
}

pub(super) fn convert_table(text: &str, t: &DeTable<'_>) -> Vec<(String, u32, TomlValue)> {
    table_of(&Lines::of(text), t)
}

/// A table's keys, each with its line and converted value.
pub(super) fn table_of(lines: &Lines, t: &DeTable<'_>) -> Vec<(String, u32, TomlValue)> {
    t.iter().map(|(k, v)| (k.get_ref().to_string(), lines.at(k.span().start), convert(lines, v))).collect()
}

/// A top-level table with its key lines: `(key, line, value)`.
pub(super) type Table = Vec<(String, u32, TomlValue)>;
