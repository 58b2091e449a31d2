//! External capabilities (R118–R121): one registry of the external tools andon can use, each by
//! the exact executable name its package installs. A tool is detected on `PATH`; when it is absent
//! its approach reports `unavailable` for the wire and the run goes on (an absent optional
//! capability never fails a run); a wire with no available approach stays unknown, with the reason.
//! Which tool serves which language is the language table's (`mutation_tool` of each row).

use std::ffi::OsStr;
use std::path::Path;

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
    let executable = |f: &Path| {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            f.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        }
        #[cfg(not(unix))]
        {
            f.is_file()
        }
    };
    path_var.is_some_and(|p| std::env::split_paths(p).any(|d| executable(&d.join(name))))
}

/// The tool for `approach` on code in `language`, if one is available; otherwise why not.
pub fn available(approach: &str, language: &str, path_var: Option<&OsStr>) -> Result<&'static Tool, String> {
    let known: Vec<&Tool> = REGISTRY.iter().filter(|t| t.approach == approach && t.serves(language)).collect();
    if known.is_empty() {
        return Err(format!("no external tool serves `{approach}` for {language}"));
    }
    known.iter().find(|t| on_path(t.name, path_var)).copied().ok_or_else(|| {
        let names: Vec<String> =
            known.iter().map(|t| format!("`{}` (install {} from {})", t.name, t.package, t.registry)).collect();
        format!("unavailable: {} is not on PATH", names.join(" or "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registry_name_is_detected_exactly_and_only_when_on_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = std::env::join_paths([dir.path()]).unwrap();
        for t in REGISTRY {
            assert!(!on_path(t.name, Some(&path)), "{} before it is installed", t.name);
            for l in t.languages() {
                assert!(available(t.approach, l, Some(&path)).unwrap_err().contains(t.name));
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
        assert!(available("proof-strength", "cobol", None).unwrap_err().contains("no external tool"));
    }
}
