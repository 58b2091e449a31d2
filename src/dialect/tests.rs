//! Unit tests of the dialect: diagnostics of broken rules files.

use super::*;

/// The diagnostics `build.rs` prints for a broken rules file: the file, line and column.
fn build_error(rules: &str) -> String {
    let mut b = Builder::new();
    b.require_docs = true;
    b.add_source("rules/schema.dl", "/// A file.\n.decl File(path: path, lang: sym)\n", true).unwrap();
    match b.add_source("rules/topic.dl", rules, false).and_then(|_| b.finish()) {
        Ok(_) => panic!("{rules:?} should be refused"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn broken_rules_files_name_the_file_line_and_column() {
    let e = build_error("/// Rust files.\n.decl Rs(path: path)\nRs(p) :- Fiel(p, \"rust\").\n");
    assert_eq!(e, "rules/topic.dl:3:10: unknown relation `Fiel`; did you mean `File`?");
    let e = build_error(".decl Rs(path: path)\n");
    assert_eq!(e, "rules/topic.dl:1:7: `Rs` has no `///` doc line above its declaration");
    let e = build_error("/// Rust files.\n.decl Rs(path: path)\nRs(p) :- File(p, \"rust\")\n");
    assert!(e.starts_with("rules/topic.dl:4:1: expected `,` or `.` ending the rule"), "{e}");
    let e = build_error("/// Not declared.\nOther(p) :- File(p, _).\n");
    assert!(e.starts_with("rules/topic.dl:2:1: `Other` is not declared"), "{e}");
}

/// The schema of the vocabulary tests: one vocabulary, one relation with a column it types.
const VOCAB_SCHEMA: &str = "/// How sure.\n.enum Confidence = \"exact\" | \"heuristic\"\n/// A resolution.\n.decl Resolves(path: path, confidence: Confidence)\n";

/// The diagnostic for `rules` over [`VOCAB_SCHEMA`], or `None` when they check.
fn vocab_error(rules: &str) -> Option<String> {
    let mut b = Builder::new();
    b.require_docs = true;
    b.add_source("rules/schema.dl", VOCAB_SCHEMA, true).unwrap();
    b.add_source("rules/topic.dl", rules, false).and_then(|_| b.finish()).err().map(|e| e.to_string())
}

#[test]
fn a_vocabulary_types_a_column() {
    let mut b = Builder::new();
    b.add_source("rules/schema.dl", VOCAB_SCHEMA, true).unwrap();
    let prog = b.finish().unwrap();
    assert_eq!(prog.vocabs.len(), 1);
    assert_eq!(prog.vocabs[0].name, "Confidence");
    assert_eq!(prog.vocabs[0].values, ["exact", "heuristic"]);
    assert_eq!(prog.vocabs[0].doc, "How sure.");
    let r = &prog.rels[prog.relation("Resolves").unwrap()];
    assert_eq!(r.vocabs, [None, Some(0)]);
    assert_eq!(r.columns[1].1, Ty::Sym);
}

#[test]
fn literals_of_a_vocabulary_column_must_be_its_values() {
    let ok = "/// Exact ones.\n.decl Exact(path: path)\nExact(p) :- Resolves(p, \"exact\").\n";
    assert_eq!(vocab_error(ok), None);
    let e = vocab_error("/// Exact ones.\n.decl Exact(path: path)\nExact(p) :- Resolves(p, \"exactt\").\n");
    assert_eq!(
        e.as_deref(),
        Some(
            "rules/topic.dl:3:25: \"exactt\" is not a `Confidence` (column `confidence` of `Resolves`): one of \"exact\", \"heuristic\""
        )
    );
    let e = vocab_error("/// Exact ones.\n.decl Exact(path: path)\nExact(p) :- Resolves(p, c), c = \"sure\".\n");
    assert_eq!(
        e.as_deref(),
        Some(
            "rules/topic.dl:3:33: \"sure\" is not a `Confidence` (`c` is column `confidence` of `Resolves`): one of \"exact\", \"heuristic\""
        )
    );
    let e = vocab_error("/// Mine.\n.decl Mine(path: path, c: Confidence)\nMine(p, \"guess\") :- Resolves(p, _).\n");
    assert!(e.unwrap().starts_with("rules/topic.dl:3:9: \"guess\" is not a `Confidence` (column `c` of `Mine`)"));
}

#[test]
fn vocabulary_declarations_are_checked() {
    let e = vocab_error("/// Mine.\n.decl Mine(path: path, c: Sureness)\n");
    assert_eq!(
        e.as_deref(),
        Some("rules/topic.dl:2:27: unknown column type `Sureness` (path, sym, int, `Confidence`)")
    );
    let e = vocab_error("/// Again.\n.enum Confidence = \"a\"\n");
    assert_eq!(
        e.as_deref(),
        Some("rules/topic.dl:2:7: vocabulary `Confidence` is already declared at rules/schema.dl:2")
    );
    let e = vocab_error("/// Twice.\n.enum Twice = \"a\" | \"a\"\n");
    assert_eq!(e.as_deref(), Some("rules/topic.dl:2:21: \"a\" is listed twice in `Twice`"));
    let e = vocab_error(".enum Undocumented = \"a\"\n");
    assert_eq!(e.as_deref(), Some("rules/topic.dl:1:7: `Undocumented` has no `///` doc line above its declaration"));
}
