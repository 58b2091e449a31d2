//! The `andon` binary: the command line, `cli::main`, and nothing else.

fn main() -> std::process::ExitCode {
    andon::cli::main()
}
