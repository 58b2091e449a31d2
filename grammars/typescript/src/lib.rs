//! andon's TypeScript and TSX tree-sitter grammars: the upstream grammars (tree-sitter-typescript
//! 0.23.2, MIT, under `upstream/`) with the changes of `transform.rs`, generated and compiled by
//! `build.rs`.

use tree_sitter_language::LanguageFn;

unsafe extern "C" {
    fn tree_sitter_typescript() -> *const ();
    fn tree_sitter_tsx() -> *const ();
}

/// The TypeScript grammar (`.ts`, `.mts`, `.cts`).
pub const LANGUAGE_TYPESCRIPT: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_typescript) };

/// The TSX grammar (`.tsx`, and JavaScript).
pub const LANGUAGE_TSX: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_tsx) };

/// A digest of everything the parsers are generated and compiled from (the transformed grammars,
/// the transformed scanner, the generator's version): it changes whenever a parse can.
pub const DIGEST: &str = include_str!(concat!(env!("OUT_DIR"), "/digest.txt"));
