//! `andon check` and a declared stream (R32): an import across declared stages that the
//! declaration has no wire for is a finding of the contract `(stream)`, never a silent wire.

use std::path::Path;

use super::{ContractResult, Finding};
use crate::config::ContractKind;
use crate::datalog::Store;
use crate::facts::rel;
use crate::index::Index;

/// The contract name these findings carry (never a declared contract's: names are not
/// parenthesized).
pub const CONTRACT: &str = "(stream)";

/// Whether the index's stages are declared (`[stream]`, `--stream FILE`), not detected.
pub fn is_declared(idx: &Index) -> bool {
    idx.global.rows_of(rel::STAGE_MODE).any(|r| idx.global.str(r[0]) == "declared")
}

/// The declared stream judged as a contract over the derived `store`: each undeclared import
/// across its stages, a blocking finding at the import. `config` names where the stream is
/// declared.
pub fn judged(store: &Store, config: &Path) -> (ContractResult, Vec<Finding>) {
    let s = |v: u32| store.syms.str(v).to_string();
    let mut found: Vec<Finding> = store.rels[rel::UNDECLARED_WIRE_IMPORT.0 as usize]
        .iter()
        .map(|r| {
            let (producer, consumer, path, line) = (s(r[0]), s(r[1]), s(r[2]), r[3]);
            let message = format!(
                "imports across the declared stages `{producer}` -> `{consumer}`, which the declared stream has no wire for: declare `[[stream.wire]] producer = \"{producer}\", consumer = \"{consumer}\"`, or remove the import"
            );
            let key = vec![producer, consumer, path.clone()];
            Finding::builtin(ContractKind::Stream, CONTRACT, path, line, message, key)
        })
        .collect();
    found.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    found.dedup_by(|a, b| a.path == b.path && a.line == b.line && a.key == b.key);
    let result = ContractResult {
        name: CONTRACT.into(),
        kind: ContractKind::Stream,
        description: format!("every import across declared stages rides a declared wire ({})", config.display()),
        line: 0,
        findings: found.len(),
        blocking: found.len(),
        excused: 0,
    };
    (result, found)
}
