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
