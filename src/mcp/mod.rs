//! `andon mcp`: the Model Context Protocol server over stdio, a front end beside the command
//! line. Its tools are the commands an agent drives (`index`, `query`, `stream`, `why`, `check`,
//! `status`, `loop`, `propose`, `verify`, `facts`, `preflight`), each answering with the very
//! document `andon <command> --format json` prints (the API's result serialized) and the exit
//! code the command would give. A person's decisions (authorize, defer, skip, override, confirm)
//! are never tools. Path arguments resolve inside the repository; calls run on blocking threads
//! under the same locks as the command line, so concurrent calls are as safe as concurrent
//! commands.

mod drain;
mod error;
mod gate;
mod paths;
mod progress;
mod resources;
mod schemas;
mod server;
mod tools;

use std::path::Path;

pub use error::Error;

use tokio::io::{AsyncRead, AsyncWrite};

/// Serves the repository at `root` over `input` and `output` (the process's stdin and stdout)
/// until the client closes them; tool calls still running are finished first.
pub fn serve<R, W>(root: &Path, input: R, output: W) -> Result<(), Error>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let root =
        std::fs::canonicalize(root).map_err(|source| Error::Root { path: root.display().to_string(), source })?;
    if !root.is_dir() {
        return Err(Error::NotADirectory { path: root.display().to_string() });
    }
    // Calls run on threads of their own (`server::on_own_thread`): the runtime's pools only read
    // and write the protocol.
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().map_err(Error::Runtime)?;
    rt.block_on(async move {
        // the gate reads the client's lines and the writer owns stdout; the library speaks to
        // both through pipes
        let (to_library, library_in) = tokio::io::duplex(1 << 16);
        let (library_out, from_library) = tokio::io::duplex(1 << 16);
        let (answers, answered) = tokio::sync::mpsc::unbounded_channel();
        let gate = tokio::spawn(gate::read(input, to_library, answers));
        let writer = tokio::spawn(gate::write(from_library, output, answered));
        let calls = drain::InFlight::new();
        let library_in = drain::UntilIdle::new(library_in, calls.clone());
        let served = async {
            let running = rmcp::serve_server(server::Server::new(root, calls), (library_in, library_out))
                .await
                .map_err(|e| Error::Handshake(e.to_string()))?;
            running.waiting().await.map_err(|e| Error::Stopped(e.to_string()))?;
            Ok(())
        }
        .await;
        // the library has closed its end of the output; the gate ends with the client's input
        gate.abort();
        let _ = writer.await;
        served
    })
}

/// The tool names, in the order the server lists them.
pub fn tool_names() -> Vec<&'static str> {
    tools::TOOLS.iter().map(|t| t.name).collect()
}
