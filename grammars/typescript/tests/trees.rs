//! The trees of the forms `transform.rs` changes, in both grammars.

use tree_sitter::{Language, Parser};

/// Both grammars, named.
fn grammars() -> [(&'static str, Language); 2] {
    [
        ("typescript", andon_grammar_typescript::LANGUAGE_TYPESCRIPT.into()),
        ("tsx", andon_grammar_typescript::LANGUAGE_TSX.into()),
    ]
}

/// The S-expression of `source` in every grammar, asserted to be the same and free of errors.
fn sexp(source: &str) -> String {
    let trees: Vec<String> = grammars()
        .into_iter()
        .map(|(name, language)| {
            let mut parser = Parser::new();
            parser.set_language(&language).expect("the grammar loads");
            let tree = parser.parse(source, None).expect("a tree");
            let text = tree.root_node().to_sexp();
            assert!(!tree.root_node().has_error(), "{name}: {source:?} has an error: {text}");
            text
        })
        .collect();
    assert_eq!(trees[0], trees[1], "{source:?}: the grammars disagree");
    trees[0].clone()
}

/// How many times `part` occurs in the tree of `source`.
fn count(source: &str, part: &str) -> usize {
    sexp(source).matches(part).count()
}

#[test]
fn variance_modifiers_are_tokens_before_the_name() {
    for source in [
        "interface I<out A> {}",
        "interface I<in A> {}",
        "type T<in out A, out E = never, in R extends object = {}> = A",
        "class C<const in out A> {}",
        "type T<out in A> = A",
    ] {
        assert!(sexp(source).contains("(type_parameter name: (type_identifier)"), "{source}");
    }
}

#[test]
fn a_type_parameter_may_be_named_out() {
    assert_eq!(count("type T<out> = out", "(type_parameter name: (type_identifier))"), 1);
    assert_eq!(count("type T<out out> = out", "(type_parameter name: (type_identifier))"), 1);
}

#[test]
fn in_and_out_stay_identifiers_elsewhere() {
    let tree = sexp("const out = 1\nfunction f(out: number) { for (const k in o) {} return out < 2 }\nlet x = o.in");
    assert_eq!(tree.matches("(variable_declarator name: (identifier)").count(), 2);
    assert!(tree.contains("(required_parameter pattern: (identifier)"));
    assert!(tree.contains("(for_in_statement"));
    assert!(tree.contains("(binary_expression left: (identifier) right: (number))"));
}

#[test]
fn call_signatures_separated_by_line_breaks_are_members() {
    let source = "type Dual = {\n  <A, B>(f: (a: A) => B): (self: A) => B\n  <A, B>(self: A, f: (a: A) => B): B\n  <A>(a: A): void\n  new <A>(a: A): Dual\n}";
    assert_eq!(count(source, "(call_signature type_parameters:"), 3);
    assert_eq!(count(source, "(construct_signature type_parameters:"), 1);
    let interface = "interface I {\n  <A>(a: A): Array<A>\n  <B>(b: B): B[]\n}";
    assert_eq!(count(interface, "(call_signature type_parameters:"), 2);
}

#[test]
fn a_less_than_on_the_next_line_of_an_expression_is_a_comparison() {
    assert!(sexp("const c = a\n  < b\nf()").contains("(binary_expression left: (identifier) right: (identifier))"));
    assert!(sexp("const c = f<number>(1)").contains("(call_expression function: (identifier) type_arguments:"));
}

#[test]
fn a_method_name_may_end_the_line_before_its_type_parameters() {
    assert!(
        sexp("class C {\n  get\n  <A>(a: A): A { return a }\n}")
            .contains("(method_definition name: (property_identifier) type_parameters:")
    );
    assert!(
        sexp("interface I {\n  get\n  <A>(a: A): A\n}")
            .contains("(method_signature name: (property_identifier) type_parameters:")
    );
}

#[test]
fn a_line_starting_with_in_is_a_member_in_a_type() {
    assert_eq!(count("interface P {\n  name: string\n  in: \"query\"\n  instanceof: 1\n}", "(property_signature"), 3);
    assert!(sexp("const c = a\n  in b").contains("(binary_expression"));
}

#[test]
fn static_accessors_template_type_escapes_tagged_generics_and_let_as() {
    assert_eq!(
        count("class S { static accessor a = 1; override accessor b = 2; accessor c }", "(public_field_definition"),
        3
    );
    assert!(sexp("type H<N extends string> = `a \\`${N}\\``").contains("(escape_sequence)"));
    assert!(
        sexp("const r = sql<Row>`SELECT 1`.pipe()")
            .contains("type_arguments: (type_arguments (type_identifier)) arguments: (template_string")
    );
    assert!(sexp("let as = [1]\nas = as.concat(as)").contains("(variable_declarator name: (identifier)"));
}

#[test]
fn tsx_keeps_jsx_and_generic_arrows() {
    let mut parser = Parser::new();
    parser.set_language(&andon_grammar_typescript::LANGUAGE_TSX.into()).unwrap();
    let source = "const f = <T,>(x: T) => x\nconst v = <List<number> items={[1]} />\nconst w = <div>{f(1)}</div>";
    let tree = parser.parse(source, None).unwrap();
    let text = tree.root_node().to_sexp();
    assert!(!tree.root_node().has_error(), "{text}");
    assert!(text.contains("(jsx_self_closing_element") && text.contains("(jsx_element"), "{text}");
}

#[test]
fn the_digest_names_both_grammars() {
    assert!(andon_grammar_typescript::DIGEST.starts_with("typescript-tsx "));
}
