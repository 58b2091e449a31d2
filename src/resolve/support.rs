//! Support directories: what a repository holds beside its code. Test suites, examples,
//! documentation (and generated copies of it), benchmarks, vendored trees and tooling scripts are
//! *support*: listed with their role, never a stage, never in a layer, never a finding of a default
//! contract; their imports are usage evidence for the stages they reach. A support directory never
//! captures an import from code (`import pydantic` from a package is the dependency, not an
//! `examples/pydantic/`). What the name of a directory says is read here from paths alone, before
//! resolution; what needs the import graph (a test suite however named, a package of tests no code
//! imports) is judged by the stage rule.
//!
//! A name says *support* only above every package: a directory inside a Python package (its parent
//! has an `__init__.py`) or inside a `src/` tree is the package's own module (`tokio/src/doc`).

use super::HashMap;

/// The roles of support, as `Support` facts name them.
pub const ROLES: [&str; 7] = ["test", "example", "docs", "bench", "vendored", "tooling", "generated"];

/// Directories a build writes a package's compiled copy to: generated when a `src/` beside them
/// holds the source.
const BUILD_DIRS: &[&str] = &["dist", "build", "out", "lib", "esm", "cjs", "umd", "es"];

/// The role a directory name gives, if any.
fn role_of_dir(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    let role = match lower.as_str() {
        "examples" | "example" | "demo" | "demos" | "samples" | "sample" => "example",
        "docs" | "doc" | "documentation" | "docs_src" => "docs",
        "benchmarks" | "benchmark" | "bench" | "asv_bench" => "bench",
        "vendor" | "vendored" | "third_party" | "third-party" | "thirdparty" => "vendored",
        "scripts" | "tools" | "tooling" | "ci" => "tooling",
        _ if lower.ends_with("-docs") || lower.ends_with("_docs") => "docs",
        _ => return None,
    };
    Some(role)
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") }
}

/// Whether a file's own name makes it a tooling script: a build, task or test-runner
/// configuration that is no module of any package.
pub fn is_tooling_file(name: &str) -> bool {
    const SCRIPTS: &[&str] = &[
        "setup.py",
        "noxfile.py",
        "fabfile.py",
        "conftest.py",
        "dodo.py",
        "pavement.py",
        // build backends' hooks (fastapi's `pdm_build.py`)
        "pdm_build.py",
        "hatch_build.py",
    ];
    if SCRIPTS.contains(&name) {
        return true;
    }
    // `vite.config.ts`, `jest.config.js`, `eslint.config.mjs`, `rollup.config.cjs`, …
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    let runner = ["gruntfile", "gulpfile", "jakefile", "webpackfile"].contains(&stem.to_ascii_lowercase().as_str());
    stem.ends_with(".config") || stem.ends_with(".conf") || runner
}

/// The support directory (repo-relative) and role of every directory of the repository that lies in
/// one, from names alone. `is_pkg_dir` tells a Python package directory.
pub(crate) fn by_name<'d>(
    dirs: impl IntoIterator<Item = &'d String> + Clone,
    is_pkg_dir: &dyn Fn(&str) -> bool,
) -> HashMap<String, (String, &'static str)> {
    let all: std::collections::HashSet<&str> = dirs.clone().into_iter().map(String::as_str).collect();
    let is_dir = |d: &str| all.contains(d);
    let mut out = HashMap::default();
    for d in dirs {
        if let Some(found) = support_dir_of(d, is_pkg_dir, &is_dir) {
            out.insert(d.clone(), found);
        }
    }
    out
}

/// The outermost support directory holding directory `dir`, with its role.
fn support_dir_of(
    dir: &str,
    is_pkg_dir: &dyn Fn(&str) -> bool,
    is_dir: &dyn Fn(&str) -> bool,
) -> Option<(String, &'static str)> {
    if dir.is_empty() {
        return None;
    }
    let mut end: usize = 0;
    for part in dir.split('/') {
        let parent = &dir[..end.saturating_sub(1)];
        let here = &dir[..end + part.len()];
        end += part.len() + 1;
        // a build's copy of a package whose source is beside it
        if BUILD_DIRS.contains(&part) && is_dir(&join(parent, "src")) {
            return Some((here.to_string(), "generated"));
        }
        // a source tree, a package's compiled tree, or a package: what is below it is the
        // package's own; below a test directory, the test rule judges
        if part == "src"
            || BUILD_DIRS.contains(&part)
            || crate::extract::lang::CLEAR_TEST_DIRS.contains(&part)
            || !parent.is_empty() && is_pkg_dir(parent)
        {
            return None;
        }
        if let Some(role) = role_of_dir(part) {
            return Some((here.to_string(), role));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_support_only_above_packages() {
        let pkgs = ["pkg", "pkg/docs"];
        let is_pkg = |d: &str| pkgs.contains(&d);
        let is_dir = |d: &str| ["web/src", "src"].contains(&d);
        let of = |d: &str| support_dir_of(d, &is_pkg, &is_dir);
        assert_eq!(of("examples/pydantic"), Some(("examples".into(), "example")));
        assert_eq!(of("docs/_ext"), Some(("docs".into(), "docs")));
        assert_eq!(of("packages/ai/ai-docs/src"), Some(("packages/ai/ai-docs".into(), "docs")));
        assert_eq!(of("include/vendor/x"), Some(("include/vendor".into(), "vendored")));
        // a package's own module named like support is the package's
        assert_eq!(of("pkg/docs"), None);
        assert_eq!(of("pkg/docs/x"), None);
        assert_eq!(of("crates/core/src/doc"), None);
        assert_eq!(of("src/examples"), None);
        assert_eq!(of("dist/tools"), Some(("dist".into(), "generated")));
        assert_eq!(of("web/dist/x"), Some(("web/dist".into(), "generated")));
        assert_eq!(of("app/dist/x"), None);
        assert_eq!(of("tests/admin_docs"), None);
        assert_eq!(of(""), None);
        assert_eq!(of("httpx"), None);
    }

    #[test]
    fn tooling_files_by_name() {
        for n in [
            "setup.py",
            "noxfile.py",
            "conftest.py",
            "pdm_build.py",
            "hatch_build.py",
            "vite.config.ts",
            "jest.config.js",
            "eslint.config.mjs",
            "Gruntfile.js",
        ] {
            assert!(is_tooling_file(n), "{n}");
        }
        for n in ["config.py", "client.py", "index.ts", "configure.ts"] {
            assert!(!is_tooling_file(n), "{n}");
        }
    }
}
