//! Why a role output is refused: it does not parse, breaks its role's rules, or does not answer
//! the input and packet it claims to.

use super::{CheckStatus, Role, Stance, escape_inline};

/// One refused role output. Text from the output is escaped through [`escape_inline`] when shown.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid UTF-8 at byte {at}")]
    Utf8 { at: usize },
    #[error("line {} column {}: {}", .source.line(), .source.column(), serde_text(.source))]
    Json {
        #[source]
        source: serde_json::Error,
    },
    #[error("{source}")]
    Value {
        #[source]
        source: serde_json::Error,
    },
    #[error("a role output is one JSON object, its producer and every criterion and check objects too (docs/panel.md)")]
    NotObjects,
    #[error("{}: empty producer id", .role.name())]
    EmptyProducer { role: Role },
    #[error("evidence: the evidence role renders no verdict; `criteria` must be empty")]
    EvidenceVerdict,
    #[error("{}: only the evidence role reports checks", .role.name())]
    ChecksOutsideEvidence { role: Role },
    #[error("{}: criterion `{}` appears twice", .role.name(), escape_inline(.id))]
    CriterionTwice { role: Role, id: String },
    #[error("{}: criterion `{}`: stance `{}` is not one this role takes", .role.name(), escape_inline(.id), lower(.stance))]
    Stance { role: Role, id: String, stance: Stance },
    #[error("{}: criterion `{}`: a pass or fail must cite evidence", .role.name(), escape_inline(.id))]
    Uncited { role: Role, id: String },
    #[error("{}: criterion `{}`: empty reason", .role.name(), escape_inline(.id))]
    EmptyReason { role: Role, id: String },
    #[error(
        "{}: criterion `{}` appeals to a person's authority (`{}`); only objective checks count (R105)",
        .role.name(),
        escape_inline(.id),
        escape_inline(.appeal)
    )]
    Authority { role: Role, id: String, appeal: String },
    #[error("evidence: check id `{}` is empty or appears twice", escape_inline(.id))]
    CheckId { id: String },
    #[error("evidence: check `{}` needs a command and the criteria it bears on", escape_inline(.id))]
    CheckIncomplete { id: String },
    #[error("evidence: check `{}` is {} without an exit code", escape_inline(.id), lower(.status))]
    NoExitCode { id: String, status: CheckStatus },
    #[error("{}: a second {} output", .role.name(), .role.name())]
    SecondOutput { role: Role },
    #[error(
        "{}: packet_hash `{}` is not the hash of the {} packet ({want})",
        .role.name(),
        escape_inline(.given),
        .role.name()
    )]
    PacketHash { role: Role, given: String, want: String },
    #[error("against: produced by `{}`, who proposed or built the fix (R102)", escape_inline(.producer))]
    AgainstIsProposer { producer: String },
    #[error("against: produced by the same producer as the for case (R102)")]
    AgainstIsFor,
    #[error("{}: criterion `{}` is not in the contract", .role.name(), escape_inline(.id))]
    UnknownCriterion { role: Role, id: String },
    #[error("{}: criterion `{}` is not addressed", .role.name(), escape_inline(.id))]
    Unaddressed { role: Role, id: String },
}

/// serde_json's message without its own position, escaped.
fn serde_text(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    let msg = msg.strip_suffix(&format!(" at line {} column {}", e.line(), e.column())).unwrap_or(&msg);
    escape_inline(msg)
}

/// A stance or status as the format spells it.
fn lower(v: &impl std::fmt::Debug) -> String {
    format!("{v:?}").to_lowercase()
}
