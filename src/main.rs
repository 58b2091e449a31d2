fn main() -> std::process::ExitCode {
    andon::cli::main()
}
