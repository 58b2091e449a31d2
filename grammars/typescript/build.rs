//! Build script: applies `transform.rs` to the upstream TypeScript and TSX grammars and their
//! scanner, generates both parsers with `tree-sitter-generate` (in parallel) and compiles them
//! with `cc`. Writes `$OUT_DIR/digest.txt`, the digest of everything a parse depends on.

#[path = "transform.rs"]
mod transform;

use std::{
    env, fs,
    path::{Path, PathBuf},
};

/// The generator, as the digest names it (`Cargo.toml` pins this version).
const GENERATOR: &str = "tree-sitter-generate 0.27.1";

/// The grammars: their directory under `upstream/` and in `$OUT_DIR`.
const GRAMMARS: [&str; 2] = ["typescript", "tsx"];

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=transform.rs");
    println!("cargo::rerun-if-changed=upstream");
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let scanner = transform::scanner(&read("upstream/common/scanner.h"));
    write(&out.join("common/scanner.h"), &scanner);
    let grammars: Vec<String> =
        GRAMMARS.iter().map(|g| transform::grammar(&read(&format!("upstream/{g}/src/grammar.json")))).collect();
    std::thread::scope(|s| {
        for (name, json) in GRAMMARS.iter().zip(&grammars) {
            let out = &out;
            s.spawn(move || generate(name, json, &out.join(name).join("src")));
        }
    });
    let mut digest_input = vec![GENERATOR.to_string(), scanner];
    for (name, json) in GRAMMARS.iter().zip(grammars) {
        digest_input.push(json);
        digest_input.push(read(&format!("upstream/{name}/src/scanner.c")));
    }
    let digest = xxhash_rust::xxh3::xxh3_64(digest_input.join("\0").as_bytes());
    write(&out.join("digest.txt"), &format!("typescript-tsx {digest:016x}"));
    compile(&out);
}

/// Generates one grammar's `parser.c` (with its headers and scanner) into `src`.
fn generate(name: &str, json: &str, src: &Path) {
    let mut diagnostics = Vec::new();
    let (_, c_code) =
        tree_sitter_generate::generate_parser_for_grammar(json, None, Default::default(), &mut diagnostics)
            .unwrap_or_else(|e| panic!("generating the {name} grammar: {e}"));
    assert!(diagnostics.is_empty(), "generating the {name} grammar: {diagnostics:?}");
    write(&src.join("grammar.json"), json);
    write(&src.join("parser.c"), &c_code);
    write(&src.join("scanner.c"), &read(&format!("upstream/{name}/src/scanner.c")));
    write(&src.join("tree_sitter/parser.h"), tree_sitter_generate::PARSER_HEADER);
    write(&src.join("tree_sitter/alloc.h"), tree_sitter_generate::ALLOC_HEADER);
    write(&src.join("tree_sitter/array.h"), tree_sitter_generate::ARRAY_HEADER);
}

/// Compiles both parsers and scanners into one static library.
fn compile(out: &Path) {
    let mut build = cc::Build::new();
    build.include(out.join("typescript/src")).flag_if_supported("-std=c11").flag_if_supported("-Wno-unused-parameter");
    for name in GRAMMARS {
        build.file(out.join(name).join("src/parser.c")).file(out.join(name).join("src/scanner.c"));
    }
    build.compile("andon-grammar-typescript");
}

/// A file of this crate, as text.
fn read(path: &str) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Writes `text` to `path`, creating its directory.
fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("a file has a directory")).expect("create the output directory");
    fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}
