//! TypeScript/JavaScript quirks: import clauses, `import type`, `export … from`, `require`,
//! `import()`, export lists, not-implemented throws, test calls, and import recovery for files the
//! grammar cannot parse (e.g. TS 5 `import type * as ns from "…"`).

use tree_sitter::Node;

use super::extractor::{Extractor, line, string_value, unquote};
use crate::facts::rel;

/// Whether a TypeScript or JavaScript file's name makes it a test file (`*.test.*`, `*.spec.*`).
pub(super) fn is_test_file_name(name: &str) -> bool {
    let stem = name.split('.').collect::<Vec<_>>();
    stem.len() >= 3 && matches!(stem[stem.len() - 2], "test" | "spec")
}

/// Records the facts of one query capture in a TypeScript or JavaScript file.
pub(super) fn on_capture<'a>(x: &mut Extractor<'a, '_>, cap: &str, node: Node<'a>, name: Option<Node<'a>>) {
    match cap {
        "import.import" => import_statement(x, node),
        "import.export" => export_from(x, node),
        c if c.starts_with("def.") => {
            let Some(n) = name else { return };
            let kind = &c[4..];
            let nm = x.text(n);
            let (mut vis, exported) = export_of(x, node);
            if kind == "method" {
                // class members are public unless marked otherwise (or `#private`)
                vis = member_visibility(x, node, nm);
            }
            x.define(node, nm, kind, vis);
            class_facts(x, node, nm, kind);
            // `export default function f` exports `default`, not `f`
            if exported && kind != "method" && vis != "default" {
                x.push(rel::EXPORTS, &[x.path.into(), nm.into()]);
            }
            if matches!(kind, "function" | "method")
                && let Some(stub) = stub_body(x, node)
            {
                x.push(rel::STUB_BODY, &[x.path.into(), nm.into(), line(node).into(), stub.into()]);
            }
        }
        "export" => local_exports(x, node),
        "export.cjs" => super::module_exports::commonjs(x, node),
        "call" if node.kind() == "call_expression" => call(x, node),
        "call" => {
            if let Some(n) = name {
                x.call(node, n);
                test_call(x, node, n);
            }
        }
        "throw" => {
            if throws_not_implemented(x, node) {
                let t = x.text(node);
                x.marker(line(node), "not-implemented-throw", t);
            }
        }
        "comment" => {
            triple_slash_reference(x, node);
            x.common_capture(cap, node);
        }
        _ => x.common_capture(cap, node),
    }
}

/// A call expression: `require("…")` and `import("…")` are imports; `f(…)` and `o.f(…)` are calls
/// (and, in a test file, `it`/`test` name a test).
fn call<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    let Some(f) = node.child_by_field_name("function") else { return };
    let callee = match f.kind() {
        "import" => return dynamic_import(x, node),
        "identifier" => f,
        "member_expression" => match f.child_by_field_name("property").filter(|p| p.kind() == "property_identifier") {
            Some(p) => p,
            None => return,
        },
        _ => return,
    };
    if f.kind() == "identifier" && x.text(f) == "require" {
        require(x, node);
    }
    super::module_exports::exports_passed(x, node);
    x.call(node, callee);
    test_call(x, node, callee);
}

/// `require("…")`: an import, and the name it binds.
fn require<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    let l = line(node);
    let arg = node.child_by_field_name("arguments").and_then(|a| a.named_child(0));
    match arg.filter(|a| a.kind() == "string") {
        Some(s) => {
            let spec: &str = &string_value(x.text(s));
            x.import(l, spec, &[]);
            if let Some(binding) = require_binding(x, node) {
                x.imported_name(l, spec, "*", binding);
            }
        }
        None => x.import(l, "<dynamic>", &["dynamic"]),
    }
    x.import_lines.insert(l);
}

/// `import("…")`: a dynamic import (its specifier when it is a literal).
fn dynamic_import<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    let l = line(node);
    let arg = node.child_by_field_name("arguments").and_then(|a| a.named_child(0));
    let spec = match arg {
        Some(s) if s.kind() == "string" => string_value(x.text(s)).to_string(),
        Some(s) if s.kind() == "template_string" && !x.text(s).contains("${") => string_value(x.text(s)).to_string(),
        _ => "<dynamic>".to_string(),
    };
    x.import(l, &spec, &["dynamic"]);
    x.import_lines.insert(l);
}

/// A triple-slash directive `/// <reference path="./globals.d.ts" />` is an import of edge kind
/// `reference`, relative to the file (`./` added when the path has no dot prefix). `types=` is left
/// out: it names `@types/x` or `x` by where the compiler finds it, which the repository does not
/// say; `lib=` and `no-default-lib` name no file of the repository.
fn triple_slash_reference<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    let text = x.text(node);
    let Some(rest) = text.strip_prefix("///").map(str::trim_start) else { return };
    let Some(attrs) = rest.strip_prefix("<reference").filter(|a| a.starts_with(char::is_whitespace)) else {
        return;
    };
    let spec = match attribute(attrs, "path") {
        Some(p) if p.starts_with("./") || p.starts_with("../") => p.to_string(),
        Some(p) if !p.is_empty() && !p.starts_with('/') => format!("./{p}"),
        _ => return,
    };
    let l = line(node);
    x.import(l, &spec, &["reference"]);
    x.import_lines.insert(l);
}

/// The value of attribute `name` (`name="v"` or `name='v'`) in the attributes of a directive.
fn attribute<'t>(attrs: &'t str, name: &str) -> Option<&'t str> {
    let mut from = 0;
    while let Some(at) = attrs[from..].find(name).map(|i| i + from) {
        from = at + name.len();
        let before_ok = at == 0 || attrs[..at].ends_with(char::is_whitespace);
        let after = attrs[from..].trim_start();
        if let (true, Some(v)) = (before_ok, after.strip_prefix('=')) {
            let v = v.trim_start();
            let q = v.chars().next().filter(|c| matches!(c, '"' | '\''))?;
            return v[1..].find(q).map(|end| &v[1..1 + end]);
        }
    }
    None
}

/// A class's or interface's bases, a method's class, and the `abstract` modifier of either.
fn class_facts<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>, name: &str, kind: &str) {
    let l = line(node);
    if matches!(node.kind(), "abstract_class_declaration" | "abstract_method_signature") {
        x.push(rel::ABSTRACT_DEF, &[x.path.into(), name.into(), l.into()]);
    }
    if kind == "method" {
        let class = x.parent(node).filter(|b| b.kind() == "class_body").and_then(|b| x.parent(b));
        if let Some(class) = class.and_then(|c| c.child_by_field_name("name")) {
            let class = x.text(class);
            x.push(rel::MEMBER, &[x.path.into(), class.into(), name.into(), l.into()]);
        }
        return;
    }
    let mut c = node.walk();
    for part in node.named_children(&mut c) {
        let mut c2 = part.walk();
        let clauses: Vec<Node> = match part.kind() {
            "class_heritage" => part.named_children(&mut c2).collect(),
            "extends_type_clause" => vec![part],
            _ => continue,
        };
        for clause in clauses {
            let kind = if clause.kind() == "implements_clause" { "implements" } else { "extends" };
            let mut c3 = clause.walk();
            for b in clause.named_children(&mut c3) {
                let b = if b.kind() == "generic_type" { b.child_by_field_name("name").unwrap_or(b) } else { b };
                if matches!(b.kind(), "identifier" | "type_identifier" | "member_expression" | "nested_type_identifier")
                {
                    let base: String = x.text(b).split_whitespace().collect();
                    super::classes::inherits(x, l, name, &base, kind, ".");
                }
            }
        }
    }
}

fn has_token(node: Node, token: &str) -> bool {
    let mut c = node.walk();
    node.children(&mut c).any(|n| !n.is_named() && n.kind() == token)
}

fn import_statement<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    let l = line(node);
    let type_only = has_token(node, "type") || has_token(node, "typeof");
    let mut c = node.walk();
    let children: Vec<Node> = node.named_children(&mut c).collect();
    // `import x = require("y")`
    if let Some(req) = children.iter().find(|n| n.kind() == "import_require_clause") {
        if let Some(src) = req.child_by_field_name("source") {
            let spec: &str = &string_value(x.text(src));
            x.import(l, spec, if type_only { &["type_only"] } else { &[] });
            if let Some(id) = req.named_child(0).filter(|n| n.kind() == "identifier") {
                let alias = x.text(id);
                x.imported_name(l, spec, "*", alias);
            }
            x.import_lines.insert(l);
        }
        return;
    }
    let Some(src) = node.child_by_field_name("source") else {
        return;
    };
    let spec: &str = &string_value(x.text(src));
    let clause = children.iter().find(|n| n.kind() == "import_clause").copied();
    let mut names: Vec<(&str, &str, bool)> = Vec::new();
    if let Some(cl) = clause {
        let mut c = cl.walk();
        for part in cl.named_children(&mut c) {
            match part.kind() {
                "identifier" => names.push(("default", x.text(part), false)),
                "namespace_import" => {
                    if let Some(id) = part.named_child(0) {
                        names.push(("*", x.text(id), false));
                    }
                }
                "named_imports" => {
                    let mut c2 = part.walk();
                    for spec_node in part.named_children(&mut c2).filter(|n| n.kind() == "import_specifier") {
                        let Some(nm) = spec_node.child_by_field_name("name") else {
                            continue;
                        };
                        let alias = spec_node.child_by_field_name("alias").unwrap_or(nm);
                        let t = has_token(spec_node, "type");
                        names.push((unquote(x.text(nm)), x.text(alias), t));
                    }
                }
                _ => {}
            }
        }
    }
    // `import { type A, type B } from` is type-only as a whole when every name is.
    let all_type = type_only || (!names.is_empty() && names.iter().all(|n| n.2));
    x.import(l, spec, if all_type { &["type_only"] } else { &[] });
    for (nm, alias, _) in names {
        x.imported_name(l, spec, nm, alias);
    }
    x.import_lines.insert(l);
}

/// `export … from "x"`: a re-export edge.
fn export_from<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    let l = line(node);
    let Some(src) = node.child_by_field_name("source") else {
        return;
    };
    let spec: &str = &string_value(x.text(src));
    let type_only = has_token(node, "type");
    let mut kinds = vec!["re_export"];
    if type_only {
        kinds.push("type_only");
    }
    let mut c = node.walk();
    let children: Vec<Node> = node.named_children(&mut c).collect();
    let clause = children.iter().find(|n| n.kind() == "export_clause");
    let ns = children.iter().find(|n| n.kind() == "namespace_export");
    match (clause, ns) {
        (Some(cl), _) => {
            x.import(l, spec, &kinds);
            let mut c2 = cl.walk();
            for s in cl.named_children(&mut c2).filter(|n| n.kind() == "export_specifier") {
                let Some(nm) = s.child_by_field_name("name") else {
                    continue;
                };
                let alias = s.child_by_field_name("alias").unwrap_or(nm);
                let (nm, alias) = (unquote(x.text(nm)), unquote(x.text(alias)));
                x.imported_name(l, spec, nm, alias);
                x.push(rel::EXPORTS, &[x.path.into(), alias.into()]);
            }
        }
        (None, Some(n)) => {
            x.import(l, spec, &kinds);
            if let Some(id) = n.named_child(0) {
                let alias = unquote(x.text(id));
                x.imported_name(l, spec, "*", alias);
                x.push(rel::EXPORTS, &[x.path.into(), alias.into()]);
            }
        }
        (None, None) => {
            kinds.push("wildcard");
            x.import(l, spec, &kinds);
        }
    }
    x.import_lines.insert(l);
}

/// `export { a, b as c }` and `export default …` without a source.
fn local_exports<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    if node.child_by_field_name("source").is_some() {
        return;
    }
    if has_token(node, "default") {
        x.push(rel::EXPORTS, &[x.path.into(), "default".into()]);
    }
    if has_token(node, "=") {
        super::module_exports::export_assignment(x, node);
    }
    if let Some(decl) = node.child_by_field_name("declaration") {
        super::module_exports::declaration(x, decl);
    }
    let mut c = node.walk();
    for cl in node.named_children(&mut c).filter(|n| n.kind() == "export_clause") {
        let mut c2 = cl.walk();
        for s in cl.named_children(&mut c2).filter(|n| n.kind() == "export_specifier") {
            let Some(nm) = s.child_by_field_name("name") else {
                continue;
            };
            let alias = s.child_by_field_name("alias").unwrap_or(nm);
            let alias = unquote(x.text(alias));
            x.push(rel::EXPORTS, &[x.path.into(), alias.into()]);
        }
    }
}

/// Visibility of a definition, and whether the module exports it.
fn export_of<'a>(x: &Extractor<'a, '_>, node: Node<'a>) -> (&'static str, bool) {
    for a in x.ancestors(node).into_iter().take(3) {
        if a.kind() == "export_statement" {
            return if has_token(a, "default") { ("default", true) } else { ("exported", true) };
        }
        if matches!(a.kind(), "program" | "statement_block" | "class_body") {
            break;
        }
    }
    ("private", false)
}

fn member_visibility(x: &Extractor, node: Node, name: &str) -> &'static str {
    if name.starts_with('#') {
        return "private";
    }
    let mut c = node.walk();
    let modifier = node.children(&mut c).find(|n| n.kind() == "accessibility_modifier").map(|n| x.text(n));
    match modifier {
        Some("private") => "private",
        Some("protected") => "protected",
        _ => "public",
    }
}

/// `const x = require("y")` binds `x`.
fn require_binding<'a>(x: &Extractor<'a, '_>, call: Node<'a>) -> Option<&'a str> {
    let p = x.parent(call)?;
    if p.kind() == "variable_declarator" {
        let n = p.child_by_field_name("name")?;
        if n.kind() == "identifier" {
            return Some(x.text(n));
        }
    }
    None
}

fn throws_not_implemented(x: &Extractor, node: Node) -> bool {
    let Some(e) = node.named_child(0) else {
        return false;
    };
    let e = if e.kind() == "call_expression" || e.kind() == "new_expression" {
        e
    } else {
        return false;
    };
    let args = e.child_by_field_name("arguments").and_then(|a| a.named_child(0));
    args.is_some_and(|a| {
        matches!(a.kind(), "string" | "template_string") && {
            let t = x.text(a).to_ascii_lowercase();
            t.contains("not implemented") || t.contains("not yet implemented") || t.contains("unimplemented")
        }
    })
}

fn stub_body(x: &Extractor, node: Node) -> Option<&'static str> {
    let body = node.child_by_field_name("body")?;
    let mut c = body.walk();
    let stmts: Vec<Node> = body.named_children(&mut c).filter(|n| n.kind() != "comment").collect();
    if stmts.len() == 1 && stmts[0].kind() == "throw_statement" && throws_not_implemented(x, stmts[0]) {
        return Some("not-implemented");
    }
    None
}

/// `it("…")` / `test("…")` in a test file define tests.
fn test_call(x: &mut Extractor, node: Node, name: Node) {
    if !x.test_file {
        return;
    }
    let callee = x.text(name);
    if !matches!(callee, "it" | "test") {
        return;
    }
    if let Some(arg) = node.child_by_field_name("arguments").and_then(|a| a.named_child(0))
        && matches!(arg.kind(), "string" | "template_string")
    {
        let title = unquote(x.text(arg)).to_string();
        x.push(rel::TEST_DEF, &[x.path.into(), title.as_str().into(), line(node).into()]);
    }
}

/// Recovers `import … from "x"`, `import "x"` and `export … from "x"` lines inside regions the
/// grammar could not parse; such imports are labelled with `ImportRecovered`.
pub(super) fn recover_imports(x: &mut Extractor, broken: &[(u32, u32)]) {
    let src = x.src;
    for (i, raw) in src.lines().enumerate() {
        let l = i as u32 + 1;
        if x.import_lines.contains(&l) || !broken.iter().any(|(a, b)| *a <= l && l <= *b) {
            continue;
        }
        let t = raw.trim_start();
        let is_import = t.starts_with("import ")
            || t.starts_with("import{")
            || t.starts_with("import\"")
            || t.starts_with("import'");
        let is_export = t.starts_with("export ") && t.contains(" from");
        if !is_import && !is_export {
            continue;
        }
        let spec = match quoted_after_from(t) {
            Some(s) => s,
            None => continue,
        };
        let mut kinds = Vec::new();
        let after_kw = t.trim_start_matches("import").trim_start_matches("export").trim_start();
        if after_kw.starts_with("type ") {
            kinds.push("type_only");
        }
        if is_export {
            kinds.push("re_export");
            if after_kw.trim_start_matches("type ").trim_start().starts_with('*') && !after_kw.contains(" as ") {
                kinds.push("wildcard");
            }
        }
        x.import(l, spec, &kinds);
        x.push(rel::IMPORT_RECOVERED, &[x.path.into(), l.into(), spec.into()]);
    }
}

/// The quoted specifier of an import/export line: after ` from `, or right after `import`.
fn quoted_after_from(t: &str) -> Option<&str> {
    let rest = match t.rfind(" from") {
        Some(i) => &t[i + 5..],
        None => t.strip_prefix("import")?,
    };
    let rest = rest.trim_start();
    let q = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = &rest[1..];
    let end = body.find(q)?;
    Some(&body[..end])
}
