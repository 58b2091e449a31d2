//! The project's changes to the upstream TypeScript and TSX grammars (tree-sitter-typescript
//! 0.23.2, verbatim under `upstream/`). Each change matches the upstream text it edits exactly
//! and panics when that text is gone, so a grammar upgrade cannot drop a change silently.
//!
//! 1. Variance annotations (TypeScript 4.7): a type parameter may start with any run of the
//!    modifiers `const`, `in` and `out`, as tsc's parser accepts them (`<in out T>`,
//!    `<const in T>`; their order and place are the checker's business). A type parameter may
//!    still be named `out` (`<out>`, `<out out>`), and `in`/`out` stay ordinary words elsewhere.
//! 2. A `<` after a line break never opens type arguments (tsc's rule for a type reference), so
//!    newline-separated call signatures `{ <A>(a: A): A \n <B>(b: B): B }` are two members. The
//!    automatic-semicolon scanner ends the member or statement before such a `<` unless it can
//!    continue the line: as an operator (where `||` is valid: `a \n < b` stays a comparison) or
//!    as the type parameters of a method whose name ends the line (`m \n <T>(t: T): T`), which
//!    tsc reads as one method. The grammar gains an external token the scanner never produces,
//!    `_method_signature_start`, valid exactly where a method's signature may start after its
//!    name, so the scanner can tell that second case.
//! 3. An auto-accessor field may be `static` and `override` (`static accessor count = 0`), as
//!    tsc's parser accepts it.
//! 4. A template literal type may hold escape sequences (`` `a \`b\` ${T}` ``).
//! 5. A tagged template may have type arguments (`` sql<Row>`SELECT 1` ``), read as a generic call.
//! 6. `let` may declare a variable named `as` (`let as = []`).
//! 7. Where `||` is not valid (a type, a class body), a line starting with `in` or `instanceof`
//!    starts a new member (`{ name: string \n in: "query" }`) instead of continuing the line.

use serde_json::{Value, json};

/// The grammar's JSON with the project's changes applied.
pub fn grammar(upstream: &str) -> String {
    let mut g: Value = serde_json::from_str(upstream).expect("upstream grammar.json is JSON");
    variance_modifiers(&mut g);
    method_signature_start(&mut g);
    static_accessor(&mut g);
    template_type_escapes(&mut g);
    tagged_template_type_arguments(&mut g);
    let_as(&mut g);
    serde_json::to_string_pretty(&g).expect("a grammar serializes")
}

/// The external scanner's shared header with the project's changes applied.
pub fn scanner(upstream: &str) -> String {
    // The marker token, last among the grammar's externals.
    let text = replace_once(upstream, "    ERROR_RECOVERY,\n", "    ERROR_RECOVERY,\n    METHOD_SIGNATURE_START,\n");
    // `<` leaves the characters that never end a statement after a line break...
    let text = replace_once(&text, "        case '>':\n        case '<':\n", "        case '>':\n");
    // ...and ends one unless it continues an expression or opens a method's type parameters.
    let text = replace_once(
        &text,
        "            // Insert a semicolon before `--` and `++`",
        "        case '<':\n            if (valid_symbols[LOGICAL_OR] || valid_symbols[METHOD_SIGNATURE_START]) {\n                return false;\n            }\n            break;\n\n            // Insert a semicolon before `--` and `++`",
    );
    // `in` and `instanceof` continue an expression only.
    replace_once(
        &text,
        "        case 'i':\n            skip(lexer);\n",
        "        case 'i':\n            if (!valid_symbols[LOGICAL_OR]) {\n                return true;\n            }\n            skip(lexer);\n",
    )
}

/// The methods whose name a line break may separate from their signature's type parameters.
const METHODS: [&str; 3] = ["method_definition", "method_signature", "abstract_method_signature"];

/// Adds `_method_signature_start`, an external token the scanner never produces, before the call
/// signature of every method: its validity tells the scanner that a method's name precedes.
fn method_signature_start(g: &mut Value) {
    let marker = json!({"type": "SYMBOL", "name": "_method_signature_start"});
    let externals = g["externals"].as_array_mut().expect("externals are a list");
    let last = json!({"type": "SYMBOL", "name": "__error_recovery"});
    assert_eq!(externals.last(), Some(&last), "externals no longer end with __error_recovery");
    externals.push(marker.clone());
    let signature = json!({"type": "SYMBOL", "name": "_call_signature"});
    for method in METHODS {
        let mut rule = &mut g["rules"][method];
        if rule["type"] == "PREC_LEFT" {
            rule = &mut rule["content"];
        }
        let members = rule["members"].as_array_mut().unwrap_or_else(|| panic!("{method} is a SEQ"));
        let at =
            members.iter().position(|m| *m == signature).unwrap_or_else(|| panic!("{method} has no _call_signature"));
        members.insert(at, json!({"type": "CHOICE", "members": [marker.clone(), {"type": "BLANK"}]}));
    }
}

/// `type_parameter` starts with any run of `const`, `in` and `out`, and may be named `out`.
fn variance_modifiers(g: &mut Value) {
    let members = g["rules"]["type_parameter"]["members"].as_array_mut().expect("type_parameter is a SEQ");
    let upstream_const =
        json!({"type": "CHOICE", "members": [{"type": "STRING", "value": "const"}, {"type": "BLANK"}]});
    assert_eq!(members[0], upstream_const, "type_parameter no longer starts with optional('const')");
    members[0] = json!({"type": "REPEAT", "content": {"type": "CHOICE", "members": [
        {"type": "STRING", "value": "const"},
        {"type": "STRING", "value": "in"},
        {"type": "STRING", "value": "out"},
    ]}});
    let name = &mut members[1];
    let upstream_name =
        json!({"type": "FIELD", "name": "name", "content": {"type": "SYMBOL", "name": "_type_identifier"}});
    assert_eq!(*name, upstream_name, "type_parameter's name is no longer a _type_identifier");
    name["content"] = json!({"type": "CHOICE", "members": [
        {"type": "SYMBOL", "name": "_type_identifier"},
        {"type": "ALIAS", "content": {"type": "STRING", "value": "out"}, "named": true, "value": "type_identifier"},
    ]});
}

/// A field's `accessor` may follow `static` and `override`.
fn static_accessor(g: &mut Value) {
    let modifiers = g["rules"]["public_field_definition"]["members"][2]["members"]
        .as_array_mut()
        .expect("field modifiers are a CHOICE");
    let last = modifiers.last_mut().expect("field modifiers are not empty");
    let upstream_accessor =
        json!({"type": "CHOICE", "members": [{"type": "STRING", "value": "accessor"}, {"type": "BLANK"}]});
    assert_eq!(*last, upstream_accessor, "a field's last modifier choice is no longer optional('accessor')");
    *last = json!({"type": "SEQ", "members": [
        {"type": "CHOICE", "members": [{"type": "STRING", "value": "static"}, {"type": "BLANK"}]},
        {"type": "CHOICE", "members": [{"type": "SYMBOL", "name": "override_modifier"}, {"type": "BLANK"}]},
        {"type": "STRING", "value": "accessor"},
    ]});
}

/// `template_literal_type` holds escape sequences, as `template_string` does.
fn template_type_escapes(g: &mut Value) {
    let parts = g["rules"]["template_literal_type"]["members"][1]["content"]["members"]
        .as_array_mut()
        .expect("template_literal_type repeats a CHOICE");
    assert_eq!(parts.len(), 2, "template_literal_type's parts changed");
    parts.insert(1, json!({"type": "SYMBOL", "name": "escape_sequence"}));
}

/// A call may pass a template instead of arguments when it has type arguments: a new alternative
/// of `call_expression`, the generic call with `template_string` as its arguments, so it shares
/// the generic call's precedence and declared conflicts with `<` as a comparison.
fn tagged_template_type_arguments(g: &mut Value) {
    let alternatives = g["rules"]["call_expression"]["members"].as_array_mut().expect("call_expression is a CHOICE");
    let call =
        alternatives.iter().find(|a| a["value"] == "call").expect("call_expression has a call alternative").clone();
    let members = call["content"]["members"].as_array().expect("a call is a SEQ");
    assert_eq!(members.len(), 3, "a call is no longer a function, type arguments and arguments");
    assert_eq!(members[1]["name"], "type_arguments");
    let mut tagged = call.clone();
    tagged["content"]["members"][1]["content"] = json!({"type": "SYMBOL", "name": "type_arguments"});
    tagged["content"]["members"][2]["content"] = json!({"type": "SYMBOL", "name": "template_string"});
    alternatives.push(tagged);
}

/// A variable declarator may be named `as`, which is otherwise read as `let as <type>`.
fn let_as(g: &mut Value) {
    let name = &mut g["rules"]["variable_declarator"]["members"][0]["members"][0];
    assert_eq!(name["name"], "name", "variable_declarator no longer starts with its name");
    let choices = name["content"]["members"].as_array_mut().expect("a declarator's name is a CHOICE");
    choices.push(
        json!({"type": "ALIAS", "content": {"type": "STRING", "value": "as"}, "named": true, "value": "identifier"}),
    );
}

/// `text` with its one occurrence of `from` replaced by `to`.
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "upstream scanner.h: expected one occurrence of {from:?}");
    text.replacen(from, to, 1)
}
