//! The ledger's errors.

/// A problem with the ledger: the line it is on (1 is the header) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    pub line: u64,
    pub message: String,
}

#[derive(Debug)]
pub enum LedgerError {
    Io(String),
    /// The log breaks the ledger's rules; nothing may act on it.
    Invalid(Vec<Issue>),
    /// A new event the state does not allow; nothing was written.
    Refused(String),
}

impl std::fmt::Display for LedgerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LedgerError::Io(m) | LedgerError::Refused(m) => write!(f, "{m}"),
            LedgerError::Invalid(issues) => {
                let first = issues.first().map(|i| format!("line {}: {}", i.line, i.message)).unwrap_or_default();
                write!(
                    f,
                    "the ledger is invalid ({} problem(s); first: {first}); run `andon ledger check`",
                    issues.len()
                )
            }
        }
    }
}
