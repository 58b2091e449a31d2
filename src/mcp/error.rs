//! Why the server, a path argument or a resource could not be served.

/// Why the server, a path argument or a resource could not be served. Paths are shown as text
/// already escaped for one line.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The repository to serve cannot be resolved.
    #[error("{path}: {source}")]
    Root { path: String, source: std::io::Error },
    /// The repository to serve is not a directory.
    #[error("{path}: not a directory; pass the repository to serve")]
    NotADirectory { path: String },
    /// The server's runtime could not start.
    #[error("cannot start the server: {0}")]
    Runtime(#[source] std::io::Error),
    /// The protocol's handshake failed.
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    /// The protocol's session ended with an error.
    #[error("the MCP server stopped: {0}")]
    Stopped(String),
    /// A path argument that is empty or holds a NUL.
    #[error("`{what}`: `{arg}` is not a path")]
    NotAPath { what: String, arg: String },
    /// A path argument that resolves outside the repository.
    #[error("`{what}`: `{arg}` is outside the repository {root}; every path must resolve inside it")]
    Outside { what: String, arg: String, root: String },
    /// A path argument through a symbolic link that leads nowhere.
    #[error(
        "`{what}`: `{arg}` goes through a symbolic link that leads nowhere; every path must resolve inside the repository"
    )]
    Dangling { what: String, arg: String },
    /// A file inside the repository that could not be read.
    #[error("{path}: {source}")]
    Read { path: String, source: std::io::Error },
    /// A file that led outside the repository when it was opened (a link swapped in).
    #[error("{path}: it led outside the repository when opened")]
    LedOutside { path: String },
    /// A path that is not a regular file.
    #[error("{path}: not a regular file")]
    NotAFile { path: String },
    /// A file over the size a call reads.
    #[error("{path}: larger than {mib} MiB")]
    TooLarge { path: String, mib: u64 },
    /// A call's thread could not run or answer.
    #[error("{0}")]
    Call(&'static str),
    /// A call's thread could not be started.
    #[error("cannot start a thread: {0}")]
    Thread(#[source] std::io::Error),
    /// The ledger could not be rendered.
    #[error("{dir}: {source}")]
    Ledger { dir: String, source: crate::ledger::LedgerError },
    /// A resource's command failed.
    #[error(transparent)]
    Api(#[from] crate::api::Error),
    /// A resource could not be rendered.
    #[error("{0}")]
    Render(#[source] std::io::Error),
}
