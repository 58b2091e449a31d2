//! External capabilities (R118–R121): one registry of the external tools andon can use, each by
//! the exact executable name its package installs. A tool is detected on `PATH`; when it is absent
//! its approach reports `unavailable` for the wire and the run goes on (an absent optional
//! capability never fails a run); a wire with no available approach stays unknown, with the reason.
//! Which tool serves which language is the language table's (`mutation_tool` of each row).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::extract::LANGUAGES;

/// One external tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tool {
    /// The executable, exactly as installed.
    pub name: &'static str,
    /// The package that installs it, and the registry it comes from.
    pub package: &'static str,
    pub registry: &'static str,
    /// The verification approach it serves (R94 identifiers): every tool here is a mutation tool,
    /// `proof-strength`.
    pub approach: &'static str,
}

impl Tool {
    /// The languages of the code it audits (as the index names them): those whose row of the
    /// language table names it as their mutation tool, in table order.
    pub fn languages(&self) -> impl Iterator<Item = &'static str> + '_ {
        LANGUAGES.iter().filter(|l| l.mutation_tool == Some(self.name)).map(|l| l.name)
    }

    /// The first language it audits.
    pub fn language(&self) -> &'static str {
        self.languages().next().unwrap_or_default()
    }

    /// Whether it audits code in `language`.
    pub fn serves(&self, language: &str) -> bool {
        self.languages().any(|l| l == language)
    }
}

/// Every external tool andon knows.
pub const REGISTRY: &[Tool] = &[
    Tool { name: "cargo-mutants", package: "cargo-mutants", registry: "crates.io", approach: "proof-strength" },
    Tool { name: "mutmut", package: "mutmut", registry: "PyPI", approach: "proof-strength" },
    Tool { name: "stryker", package: "@stryker-mutator/core", registry: "npm", approach: "proof-strength" },
];

/// Whether an executable `name` is in one of the directories of `path_var`.
pub fn on_path(name: &str, path_var: Option<&OsStr>) -> bool {
    path_var.is_some_and(|p| std::env::split_paths(p).any(|d| executable(&d.join(name))))
}

/// Why no tool serves an approach here.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unavailable {
    /// The registry has no tool for the approach on this language.
    #[error("no external tool serves `{approach}` for {language}")]
    NoTool { approach: String, language: String },
    /// Tools exist, and none is on `PATH`.
    #[error("unavailable: {} is not on PATH", install_hints(.0))]
    NotOnPath(Vec<&'static Tool>),
}

fn install_hints(tools: &[&Tool]) -> String {
    let names: Vec<String> =
        tools.iter().map(|t| format!("`{}` (install {} from {})", t.name, t.package, t.registry)).collect();
    names.join(" or ")
}

/// The tool for `approach` on code in `language`, if one is available; otherwise why not.
pub fn available(approach: &str, language: &str, path_var: Option<&OsStr>) -> Result<&'static Tool, Unavailable> {
    let known: Vec<&'static Tool> = REGISTRY.iter().filter(|t| t.approach == approach && t.serves(language)).collect();
    if known.is_empty() {
        return Err(Unavailable::NoTool { approach: approach.into(), language: language.into() });
    }
    match known.iter().find(|t| on_path(t.name, path_var)) {
        Some(t) => Ok(t),
        None => Err(Unavailable::NotOnPath(known)),
    }
}

/// Commands that run another command: the one they run is the capability, not them.
const WRAPPERS: &[&str] = &["env", "timeout", "nice", "nohup", "exec", "command", "stdbuf", "time", "xargs", "sudo"];

/// Words of the shell itself (builtins and keywords), which no environment can lack.
const SHELL_WORDS: &[&str] = &[
    "exit", "return", "true", "false", ":", ".", "source", "cd", "echo", "printf", "test", "[", "export", "set",
    "unset", "eval", "exec", "if", "then", "else", "fi", "for", "do", "done", "while", "until", "case", "esac", "read",
    "shift", "trap", "wait", "kill",
];

/// Is `name` a word of the shell itself (`exit 127`), never a tool that could be missing?
pub fn shell_word(name: &str) -> bool {
    SHELL_WORDS.contains(&name)
}

/// The executable a command line could not run (the shell's exit 126 or 127): the name the
/// shell's message gives (`sh: 1: pytest: not found`, `bash: pytest: command not found`, `sh: 1:
/// ./run.sh: Permission denied`, `env: 'tool': No such file or directory`), else the command
/// line's first word past any `NAME=value`, wrapper (`env`, `timeout 60`, ...) and its options.
pub fn missing_from(command: &str, output: &str) -> String {
    let unquote = |n: &str| n.trim_matches(|c| matches!(c, '\'' | '"' | '`' | '\u{2018}' | '\u{2019}')).to_string();
    let said = output.lines().rev().find_map(|l| {
        let l = l.trim();
        ["command not found", "not found", "Permission denied", "No such file or directory"]
            .iter()
            .find_map(|tail| l.strip_suffix(tail))
            .and_then(|head| head.trim_end().strip_suffix(':'))
            .and_then(|head| head.rsplit(": ").next())
            .map(unquote)
            .filter(|name| {
                !name.is_empty() && !name.contains(|c: char| c.is_whitespace() || c.is_control() || c == '`')
            })
    });
    said.unwrap_or_else(|| {
        let mut words = command.split_whitespace().peekable();
        while let Some(w) = words.next() {
            let assignment = w.contains('=') && !w.starts_with('=');
            let option_or_number = w.starts_with('-')
                || w.parse::<f64>().is_ok()
                || w.ends_with('s') && w[..w.len() - 1].parse::<f64>().is_ok();
            if assignment || WRAPPERS.contains(&w) || (option_or_number && words.peek().is_some()) {
                continue;
            }
            return unquote(w);
        }
        command.trim().to_string()
    })
}

/// The file `name` resolves to as a command here: on `path_var` for a bare name (the first that is
/// an executable file, as the shell takes it), under `root` for a name with a `/`.
fn resolve(name: &str, root: &Path, path_var: Option<&OsStr>) -> Option<PathBuf> {
    if name.contains('/') {
        return Some(root.join(name)).filter(|p| executable(p));
    }
    path_var.and_then(|p| std::env::split_paths(p).map(|d| d.join(name)).find(|f| executable(f)))
}

/// Whether `f` is a file the shell may execute.
fn executable(f: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        f.is_file()
    }
}

/// Whether `name` resolves to an executable here: a check that exits 127 naming a capability
/// that resolves did not fail for want of it.
pub fn resolves(name: &str, root: &Path, path_var: Option<&OsStr>) -> bool {
    resolve(name, root, path_var).is_some()
}

/// Whether a recorded capability can be watched for a change: a bare name on `PATH`, run by a
/// command that neither changes `PATH` nor the directory it runs in. Anything else (a relative
/// path after a `cd`, a `PATH=./node_modules/.bin:$PATH` prefix) cannot be resolved the way the
/// command resolves it, so a proof blocked on it is never refused a re-run.
pub fn watchable(name: &str, command: &str) -> bool {
    !name.contains('/')
        && !command.contains("PATH=")
        && !command.split(|c: char| c == ';' || c == '&' || c == '|').any(|part| {
            let w = part.split_whitespace().next().unwrap_or_default();
            w == "cd" || w == "pushd"
        })
}

/// How `name` resolves here, as a fingerprint: the executable file it resolves to ([`resolve`]),
/// with its size, mode and modification time; or that nothing does. Installing the tool, moving
/// it, or making it executable changes it.
pub fn fingerprint(name: &str, root: &Path, path_var: Option<&OsStr>) -> String {
    let Some(file) = resolve(name, root, path_var) else { return format!("{name}: absent") };
    let meta = std::fs::metadata(&file).ok();
    #[cfg(unix)]
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        meta.as_ref().map_or(0, |m| m.permissions().mode())
    };
    #[cfg(not(unix))]
    let mode = 0;
    let modified = meta
        .as_ref()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let len = meta.map_or(0, |m| m.len());
    format!("{name}: {} {len} {mode:o} {modified}", file.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_missing_capability_is_named_from_the_shell_else_the_command() {
        assert_eq!(missing_from("pytest -q", "sh: 1: pytest: not found\n"), "pytest");
        assert_eq!(missing_from("x", "bash: line 1: ruff: command not found\n"), "ruff");
        assert_eq!(missing_from("./run.sh", "sh: 1: ./run.sh: Permission denied\n"), "./run.sh");
        // no message: the first word past the environment assignments
        assert_eq!(missing_from("CI=1 LANG=C tox -e py", ""), "tox");
        // the last such line is the shell's (a test's own output comes before)
        assert_eq!(missing_from("make", "a: b: not found\nmake: cc: Command not found\nsh: 1: cc: not found"), "cc");
        // quoted names lose their quotes; wrappers and their options are not the capability
        assert_eq!(missing_from("env X=1 tool", "env: \u{2018}tool\u{2019}: No such file or directory"), "tool");
        assert_eq!(missing_from("timeout 60 nosuchtool -q", ""), "nosuchtool");
        assert_eq!(missing_from("timeout -k 5 10s nice -n 5 ruff check .", ""), "ruff");
        assert_eq!(missing_from("env -i PATH=/x jest", ""), "jest");
    }

    #[test]
    fn a_capability_resolved_by_the_command_itself_is_not_watched() {
        assert!(watchable("pytest", "pytest -q"));
        assert!(!watchable("./run.sh", "./run.sh"));
        assert!(!watchable("jest", "PATH=./node_modules/.bin:$PATH jest"));
        assert!(!watchable("tool", "mkdir -p ci && cd ci && tool"));
    }

    #[test]
    fn a_capability_fingerprint_changes_when_it_is_installed_or_changed() {
        let dir = tempfile::tempdir().unwrap();
        let path = std::env::join_paths([dir.path()]).unwrap();
        let absent = fingerprint("andon-probe", dir.path(), Some(&path));
        assert_eq!(absent, "andon-probe: absent");
        assert_eq!(fingerprint("andon-probe", dir.path(), Some(&path)), absent, "stable while nothing changes");
        std::fs::write(dir.path().join("andon-probe"), "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            // a file the shell cannot execute is no capability
            assert_eq!(fingerprint("andon-probe", dir.path(), Some(&path)), absent);
            use std::os::unix::fs::PermissionsExt;
            let exe = std::fs::Permissions::from_mode(0o755);
            std::fs::set_permissions(dir.path().join("andon-probe"), exe).unwrap();
        }
        let installed = fingerprint("andon-probe", dir.path(), Some(&path));
        assert_ne!(installed, absent);
        assert!(resolves("andon-probe", dir.path(), Some(&path)));
        std::fs::write(dir.path().join("andon-probe"), "#!/bin/sh\nexit 0\n").unwrap();
        assert_ne!(fingerprint("andon-probe", dir.path(), Some(&path)), installed, "a changed tool");
        // a relative name resolves under the repository, not on PATH
        assert!(!fingerprint("./andon-probe", dir.path(), None).contains("absent"));
    }

    #[test]
    fn every_registry_name_is_detected_exactly_and_only_when_on_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = std::env::join_paths([dir.path()]).unwrap();
        for t in REGISTRY {
            assert!(!on_path(t.name, Some(&path)), "{} before it is installed", t.name);
            for l in t.languages() {
                assert!(available(t.approach, l, Some(&path)).unwrap_err().to_string().contains(t.name));
            }
            let exe = dir.path().join(t.name);
            std::fs::write(&exe, "#!/bin/sh\n").unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                // not executable: not a tool
                assert!(!on_path(t.name, Some(&path)));
                std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
            assert!(on_path(t.name, Some(&path)), "{}", t.name);
            for l in t.languages() {
                assert_eq!(available(t.approach, l, Some(&path)).unwrap().name, t.name);
            }
            // a near miss of the name is not the tool
            assert!(!on_path(&t.name.to_uppercase(), Some(&path)));
            std::fs::remove_file(&exe).unwrap();
        }
        // the names, exactly as their packages install them
        let names: std::collections::BTreeSet<&str> = REGISTRY.iter().map(|t| t.name).collect();
        assert_eq!(names.into_iter().collect::<Vec<_>>(), ["cargo-mutants", "mutmut", "stryker"]);
    }

    #[test]
    fn every_mutation_tool_of_the_language_table_is_a_registry_tool() {
        for l in &LANGUAGES {
            if let Some(tool) = l.mutation_tool {
                assert!(REGISTRY.iter().any(|t| t.name == tool), "{}: {tool}", l.name);
            }
        }
        for t in REGISTRY {
            assert!(t.languages().next().is_some(), "{} serves no language", t.name);
        }
        let stryker = REGISTRY.iter().find(|t| t.name == "stryker").unwrap();
        assert_eq!(stryker.languages().collect::<Vec<_>>(), ["typescript", "javascript"]);
    }

    #[test]
    fn an_approach_nothing_serves_says_so() {
        assert!(available("proof-strength", "cobol", None).unwrap_err().to_string().contains("no external tool"));
    }
}
