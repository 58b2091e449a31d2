//! A declared stream (R32), as data: stages and wires written in the settings instead of
//! detected (`crate::config::stream` reads them).

use std::path::PathBuf;

/// One declared stage: a name and the repo-relative directory it roots (`""`: the whole
/// repository).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeclaredStage {
    pub name: String,
    pub root: String,
    pub line: u32,
}

/// One declared wire, `producer -> consumer`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeclaredWire {
    pub producer: String,
    pub consumer: String,
    pub line: u32,
}

/// The declared stream, in declaration order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeclaredStream {
    /// Where it is declared (the settings file, or the `--stream` file).
    pub source: PathBuf,
    pub stages: Vec<DeclaredStage>,
    pub wires: Vec<DeclaredWire>,
}
