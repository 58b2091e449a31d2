//! The language table: everything andon knows about a source language is one [`Language`] row of
//! [`LANGUAGES`], and every other module asks the table (by extension, by name, by ecosystem)
//! instead of matching on a language's name or extension.
//!
//! A row holds the language's file extensions with the tree-sitter [`Grammar`] each is parsed with
//! (its query in `grammars/<dir>/facts.scm` and the grammar crate's version, part of the index
//! fingerprint), the test-file naming rule, the extractor hooks (`src/extract/<lang>.rs`), the
//! resolver hook (`src/resolve/<lang>.rs`, named by [`Resolver`]: resolution sits above this
//! module), the package [`Ecosystem`] whose manifests and stages the language belongs to, and the
//! external tools that serve it (mutation and property testing).

use tree_sitter::Node;

use super::extractor::Extractor;
use super::{manifest, python, rust, typescript};

/// A source language andon indexes: the id of its row in [`LANGUAGES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lang {
    Rust,
    Python,
    TypeScript,
    JavaScript,
}

impl Lang {
    /// The language's row of the table.
    pub fn spec(self) -> &'static Language {
        &LANGUAGES[self as usize]
    }

    /// The language of a file, by its extension.
    pub fn from_path(path: &str) -> Option<Lang> {
        Language::by_path(path).map(|l| l.lang)
    }

    /// The language's name, as `File` facts and the index name it.
    pub fn name(self) -> &'static str {
        self.spec().name
    }
}

/// A tree-sitter grammar and the extraction query run with it.
#[derive(Debug)]
pub struct Grammar {
    /// The grammar's name, as the capture vocabulary check names it.
    pub name: &'static str,
    /// Its position in [`GRAMMARS`]: the slot of its per-thread parser and compiled query.
    pub slot: usize,
    /// The tree-sitter language.
    pub language: fn() -> tree_sitter::Language,
    /// The extraction query, `grammars/<dir>/facts.scm`.
    pub query: &'static str,
    /// The grammar crate and its version, or for a grammar generated in this repository the
    /// digest of its sources (`grammars/typescript/`): part of the index fingerprint.
    pub version: &'static str,
}

/// How an ecosystem's stages are found (`StageInfo` names `stage_source` as their source).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageRule {
    /// A manifest that names a package is the stage of its directory.
    NamedManifest,
    /// Every top-level importable package is a stage of its own (found by the resolver hook).
    ImportablePackage,
}

/// Parses one manifest of an ecosystem into facts (`src/extract/manifest.rs`).
pub(crate) type ManifestHook = fn(&mut manifest::M, &str);

/// A package ecosystem: the manifests its packages are declared in and how its stages are found.
pub struct Ecosystem {
    /// As `Manifest` and `StageInfo` facts name it.
    pub name: &'static str,
    /// Its manifests by file name, each with the parser that turns it into facts.
    pub(crate) manifests: &'static [(&'static str, ManifestHook)],
    /// How its stages are found.
    pub stages: StageRule,
    /// The source `StageInfo` gives its stages.
    pub stage_source: &'static str,
}

/// The resolver hook of a language: which `src/resolve/<module>.rs` resolves its imports, names
/// its modules and knows its standard library. Resolution sits above extraction, so the table
/// names the hook and the resolver module holds its implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolver {
    /// `src/resolve/rust.rs`
    Rust,
    /// `src/resolve/python.rs`
    Python,
    /// `src/resolve/typescript.rs`
    TypeScript,
}

/// Records the facts of one query capture (`src/extract/<lang>.rs`).
pub(crate) type CaptureHook = for<'a, 'o> fn(&mut Extractor<'a, 'o>, &str, Node<'a>, Option<Node<'a>>);

/// Recovers imports inside the line ranges the grammar could not parse.
pub(crate) type RecoverHook = fn(&mut Extractor, &[(u32, u32)]);

/// One source language: one row of [`LANGUAGES`].
pub struct Language {
    /// The row's id.
    pub lang: Lang,
    /// As `File` facts and the index name it.
    pub name: &'static str,
    /// The family `andon init` groups its stages by, as the drafted contracts name it (TypeScript
    /// and JavaScript are one family).
    pub family: &'static str,
    /// File-name extensions (without the dot), each with the grammar that parses it. A path of
    /// the language with none of them is parsed with the first one's grammar.
    pub extensions: &'static [(&'static str, &'static Grammar)],
    /// Whether a file's name (its directories aside) makes it a test file.
    pub test_file_name: fn(&str) -> bool,
    /// The extractor hook: the facts of one query capture.
    pub(crate) on_capture: CaptureHook,
    /// The extractor hook for syntax errors: imports recovered from text, if the language has one.
    pub(crate) recover_imports: Option<RecoverHook>,
    /// The resolver hook.
    pub resolver: Resolver,
    /// The ecosystem whose manifests declare its packages and whose stages hold its files.
    pub ecosystem: &'static Ecosystem,
    /// A wildcard import puts the target's public names on the importing module's surface even
    /// without a re-export (Python's `from m import *`).
    pub wildcard_import_reexports: bool,
    /// Identifiers can name a dependency without any import (Rust paths such as `serde::de`), so
    /// its detail facts (`References`) count where dependency use is judged.
    pub references_name_packages: bool,
    /// The mutation-testing tool that audits its proofs (a tool name of the capability registry).
    pub mutation_tool: Option<&'static str>,
    /// The property-testing tools its tests use (tool names of the property approach).
    pub property_tools: &'static [&'static str],
}

/// The tree-sitter library version, part of the index fingerprint.
pub const TREE_SITTER_VERSION: &str = "tree-sitter 0.27.1";

static RUST_GRAMMAR: Grammar = Grammar {
    name: "rust",
    slot: 0,
    language: || tree_sitter_rust::LANGUAGE.into(),
    query: include_str!("../../grammars/rust/facts.scm"),
    version: "rust 0.24.2",
};

static PYTHON_GRAMMAR: Grammar = Grammar {
    name: "python",
    slot: 1,
    language: || tree_sitter_python::LANGUAGE.into(),
    query: include_str!("../../grammars/python/facts.scm"),
    version: "python 0.25.0",
};

static TYPESCRIPT_GRAMMAR: Grammar = Grammar {
    name: "typescript",
    slot: 2,
    language: || andon_grammar_typescript::LANGUAGE_TYPESCRIPT.into(),
    query: include_str!("../../grammars/typescript/facts.scm"),
    version: andon_grammar_typescript::DIGEST,
};

static TSX_GRAMMAR: Grammar = Grammar {
    name: "tsx",
    slot: 3,
    language: || andon_grammar_typescript::LANGUAGE_TSX.into(),
    query: include_str!("../../grammars/typescript/facts.scm"),
    version: andon_grammar_typescript::DIGEST,
};

/// How many grammars there are (the slots of [`GRAMMARS`]).
pub const GRAMMAR_COUNT: usize = 4;

/// Every grammar, by slot.
pub static GRAMMARS: [&Grammar; GRAMMAR_COUNT] = [&RUST_GRAMMAR, &PYTHON_GRAMMAR, &TYPESCRIPT_GRAMMAR, &TSX_GRAMMAR];

static CARGO: Ecosystem = Ecosystem {
    name: "cargo",
    manifests: &[("Cargo.toml", manifest::cargo)],
    stages: StageRule::NamedManifest,
    stage_source: "cargo-manifest",
};

static NPM: Ecosystem = Ecosystem {
    name: "npm",
    manifests: &[("package.json", manifest::npm)],
    stages: StageRule::NamedManifest,
    stage_source: "npm-manifest",
};

static PYTHON_PACKAGES: Ecosystem = Ecosystem {
    name: "python",
    manifests: &[
        ("pyproject.toml", manifest::pyproject),
        ("setup.cfg", manifest::setup_cfg),
        ("setup.py", manifest::setup_py),
    ],
    stages: StageRule::ImportablePackage,
    stage_source: "python-package",
};

/// Every ecosystem a language belongs to, in the order stage candidates are taken from them.
pub static ECOSYSTEMS: [&Ecosystem; 3] = [&CARGO, &NPM, &PYTHON_PACKAGES];

/// Every language andon indexes, in [`Lang`] order.
pub static LANGUAGES: [Language; 4] = [
    Language {
        lang: Lang::Rust,
        name: "rust",
        family: "Rust",
        extensions: &[("rs", &RUST_GRAMMAR)],
        test_file_name: rust::is_test_file_name,
        on_capture: rust::on_capture,
        recover_imports: None,
        resolver: Resolver::Rust,
        ecosystem: &CARGO,
        wildcard_import_reexports: false,
        references_name_packages: true,
        mutation_tool: Some("cargo-mutants"),
        property_tools: &["proptest", "quickcheck"],
    },
    Language {
        lang: Lang::Python,
        name: "python",
        family: "Python",
        extensions: &[("py", &PYTHON_GRAMMAR), ("pyi", &PYTHON_GRAMMAR)],
        test_file_name: python::is_test_file_name,
        on_capture: python::on_capture,
        recover_imports: Some(python::recover_imports),
        resolver: Resolver::Python,
        ecosystem: &PYTHON_PACKAGES,
        wildcard_import_reexports: true,
        references_name_packages: false,
        mutation_tool: Some("mutmut"),
        property_tools: &["hypothesis"],
    },
    Language {
        lang: Lang::TypeScript,
        name: "typescript",
        family: "TypeScript/JavaScript",
        extensions: &[
            ("ts", &TYPESCRIPT_GRAMMAR),
            ("tsx", &TSX_GRAMMAR),
            ("mts", &TYPESCRIPT_GRAMMAR),
            ("cts", &TYPESCRIPT_GRAMMAR),
        ],
        test_file_name: typescript::is_test_file_name,
        on_capture: typescript::on_capture,
        recover_imports: Some(typescript::recover_imports),
        resolver: Resolver::TypeScript,
        ecosystem: &NPM,
        wildcard_import_reexports: false,
        references_name_packages: false,
        mutation_tool: Some("stryker"),
        property_tools: &["fast-check"],
    },
    Language {
        lang: Lang::JavaScript,
        name: "javascript",
        family: "TypeScript/JavaScript",
        extensions: &[("js", &TSX_GRAMMAR), ("jsx", &TSX_GRAMMAR), ("mjs", &TSX_GRAMMAR), ("cjs", &TSX_GRAMMAR)],
        test_file_name: typescript::is_test_file_name,
        on_capture: typescript::on_capture,
        recover_imports: Some(typescript::recover_imports),
        resolver: Resolver::TypeScript,
        ecosystem: &NPM,
        wildcard_import_reexports: false,
        references_name_packages: false,
        mutation_tool: Some("stryker"),
        property_tools: &["fast-check"],
    },
];

/// The extension of a path's file name (after its last dot), if it has one.
fn extension(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    Some(name.rsplit_once('.')?.1)
}

impl Language {
    /// The language of a file, by its extension.
    pub fn by_path(path: &str) -> Option<&'static Language> {
        let ext = extension(path)?;
        LANGUAGES.iter().find(|l| l.extensions.iter().any(|(e, _)| *e == ext))
    }

    /// The language `File` facts name `name`.
    pub fn by_name(name: &str) -> Option<&'static Language> {
        LANGUAGES.iter().find(|l| l.name == name)
    }

    /// The grammar a file of the language is parsed with, by its extension.
    pub fn grammar_for(&self, path: &str) -> &'static Grammar {
        let ext = extension(path);
        self.extensions.iter().find(|(e, _)| Some(*e) == ext).unwrap_or(&self.extensions[0]).1
    }

    /// Whether a file of the language at `path` is test-only by its location or name.
    pub fn is_test_path(&self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or("");
        let dir_test = path
            .split('/')
            .rev()
            .skip(1)
            .any(|d| matches!(d, "tests" | "test" | "__tests__" | "testing" | "benches") || d.ends_with("_tests"));
        dir_test || (self.test_file_name)(name)
    }

    /// Whether a file of the language at `path` is clearly test code: its own name is a test
    /// file's, or one of its directories is named as only test directories are
    /// ([`CLEAR_TEST_DIRS`]).
    pub fn is_clear_test_path(&self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or("");
        let dir_test = path.split('/').rev().skip(1).any(|d| CLEAR_TEST_DIRS.contains(&d));
        dir_test || (self.test_file_name)(name)
    }
}

/// Directory names only test code has (`testing`, `benches` or `*_tests` may name production
/// packages, so they are not among them).
pub const CLEAR_TEST_DIRS: &[&str] = &["tests", "test", "__tests__", "spec", "specs"];

impl Ecosystem {
    /// The ecosystem `Manifest` facts name `name`.
    pub fn by_name(name: &str) -> Option<&'static Ecosystem> {
        ECOSYSTEMS.iter().copied().find(|e| e.name == name)
    }

    /// The ecosystem of a manifest, by its file name, with the manifest's parser.
    pub(crate) fn by_manifest(file_name: &str) -> Option<(&'static Ecosystem, ManifestHook)> {
        ECOSYSTEMS.iter().find_map(|e| e.manifests.iter().find(|(n, _)| *n == file_name).map(|(_, hook)| (*e, *hook)))
    }

    /// The first language of the ecosystem (its resolver resolves the ecosystem's dependencies).
    pub fn language(&self) -> Option<&'static Language> {
        LANGUAGES.iter().find(|l| std::ptr::eq(l.ecosystem, self))
    }
}

/// Whether a file name is a manifest of some ecosystem in the table.
pub fn is_manifest_name(file_name: &str) -> bool {
    Ecosystem::by_manifest(file_name).is_some()
}

/// Whether the detail facts (`References`) of files in the language `File` facts name `lang` can
/// show a dependency's use (see [`Language::references_name_packages`]).
pub fn references_name_packages(lang: &str) -> bool {
    Language::by_name(lang).is_some_and(|l| l.references_name_packages)
}

/// A path without the source extension the table knows it by (`pkg/a.py` → `pkg/a`).
pub fn strip_source_extension(path: &str) -> &str {
    match (Language::by_path(path), extension(path)) {
        (Some(_), Some(ext)) => &path[..path.len() - ext.len() - 1],
        _ => path,
    }
}

/// The extraction query texts, each once, in grammar order: part of the index fingerprint.
pub fn query_sources() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for g in GRAMMARS {
        if !out.contains(&g.query) {
            out.push(g.query);
        }
    }
    out
}

/// The tree-sitter and grammar crate versions, each once: part of the index fingerprint.
pub fn grammar_versions() -> String {
    let mut parts = vec![TREE_SITTER_VERSION];
    for g in GRAMMARS {
        if !parts.contains(&g.version) {
            parts.push(g.version);
        }
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_in_lang_order_and_grammars_in_slot_order() {
        for (i, l) in LANGUAGES.iter().enumerate() {
            assert_eq!(l.lang as usize, i, "{}", l.name);
            assert!(std::ptr::eq(l.lang.spec(), l));
            assert!(!l.extensions.is_empty(), "{}", l.name);
        }
        for (i, g) in GRAMMARS.iter().enumerate() {
            assert_eq!(g.slot, i, "{}", g.name);
        }
    }

    #[test]
    fn every_row_query_compiles_with_its_grammar() {
        for l in &LANGUAGES {
            for (ext, g) in l.extensions {
                let q = tree_sitter::Query::new(&(g.language)(), g.query);
                assert!(
                    q.is_ok(),
                    "{} (.{ext}): grammars/ query for {} does not compile: {:?}",
                    l.name,
                    g.name,
                    q.err()
                );
            }
        }
    }

    #[test]
    fn an_extension_belongs_to_one_language() {
        let mut seen = std::collections::BTreeMap::new();
        for l in &LANGUAGES {
            for (ext, _) in l.extensions {
                assert_eq!(seen.insert(*ext, l.name), None, ".{ext}");
                assert_eq!(Language::by_path(&format!("src/a.{ext}")).map(|r| r.name), Some(l.name));
            }
        }
    }

    #[test]
    fn the_fingerprint_inputs_are_unchanged() {
        let typescript = andon_grammar_typescript::DIGEST;
        assert!(typescript.starts_with("typescript-tsx ") && typescript.len() == 31, "{typescript}");
        assert_eq!(grammar_versions(), format!("tree-sitter 0.27.1; rust 0.24.2; python 0.25.0; {typescript}"));
        let q = query_sources();
        assert_eq!(q.len(), 3);
        assert_eq!(q[0], include_str!("../../grammars/rust/facts.scm"));
        assert_eq!(q[1], include_str!("../../grammars/python/facts.scm"));
        assert_eq!(q[2], include_str!("../../grammars/typescript/facts.scm"));
    }

    #[test]
    fn grammars_by_extension() {
        let g = |p: &str| Language::by_path(p).unwrap().grammar_for(p).name;
        assert_eq!(
            ["a.rs", "a.py", "a.pyi", "a.ts", "a.d.ts", "a.tsx", "a.mts", "a.js", "a.jsx", "a.cjs"].map(g),
            ["rust", "python", "python", "typescript", "typescript", "tsx", "typescript", "tsx", "tsx", "tsx"]
        );
        // a path with none of the language's extensions takes its first grammar
        assert_eq!(Lang::TypeScript.spec().grammar_for("Makefile").name, "typescript");
    }

    #[test]
    fn ecosystems_by_manifest_and_language() {
        let eco = |n: &str| Ecosystem::by_manifest(n).map(|(e, _)| e.name);
        assert_eq!(
            ["Cargo.toml", "package.json", "pyproject.toml", "setup.cfg", "setup.py", "tsconfig.json"].map(eco),
            [Some("cargo"), Some("npm"), Some("python"), Some("python"), Some("python"), None]
        );
        for e in ECOSYSTEMS {
            assert!(e.language().is_some_and(|l| std::ptr::eq(l.ecosystem, e)), "{}", e.name);
            assert!(std::ptr::eq(Ecosystem::by_name(e.name).unwrap(), e));
        }
        assert_eq!(strip_source_extension("pkg/__init__.py"), "pkg/__init__");
        assert_eq!(strip_source_extension("a/b.d.ts"), "a/b.d");
        assert_eq!(strip_source_extension("README.md"), "README.md");
        assert!(references_name_packages("rust") && !references_name_packages("python"));
    }
}
