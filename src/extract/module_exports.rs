//! The export forms of a TypeScript/JavaScript module beyond a named declaration: destructuring
//! (`export const { a, b } = o`), `export import X = N.Y`, `export declare const x`, `export =`,
//! and CommonJS (`module.exports = { … }`, `exports.x = …`, `module.exports.x = …`). What the
//! index cannot name (a computed key, `module.exports = f()`, `Object.assign(exports, …)`) opens
//! the module's surface.

use tree_sitter::Node;

use super::extractor::{Extractor, line, string_value};
use crate::facts::rel;

fn export(x: &mut Extractor, name: &str) {
    x.push(rel::EXPORTS, &[x.path.into(), name.into()]);
}

fn open(x: &mut Extractor, reason: String) {
    x.push(rel::OPEN_SURFACE, &[x.path.into(), reason.as_str().into()]);
}

/// The names an `export <declaration>` binds that the definition captures do not: destructured
/// variables, an `import` alias, and an ambient (`declare`) declaration's variables.
pub(super) fn declaration<'a>(x: &mut Extractor<'a, '_>, decl: Node<'a>) {
    match decl.kind() {
        "lexical_declaration" | "variable_declaration" => {
            let mut c = decl.walk();
            for d in decl.named_children(&mut c).filter(|d| d.kind() == "variable_declarator") {
                let Some(name) = d.child_by_field_name("name") else { continue };
                let mut names = Vec::new();
                pattern_names(x, name, &mut names);
                // a plain identifier of a top-level declaration is exported by its definition
                if name.kind() != "identifier" || decl.parent().is_some_and(|p| p.kind() == "ambient_declaration") {
                    names.into_iter().for_each(|n| export(x, n));
                }
            }
        }
        "import_alias" => {
            let mut c = decl.walk();
            if let Some(id) = decl.named_children(&mut c).find(|n| n.kind() == "identifier") {
                export(x, x.text(id));
            }
        }
        "ambient_declaration" => {
            let mut c = decl.walk();
            let inner: Vec<Node> = decl.named_children(&mut c).collect();
            for d in inner {
                declaration(x, d);
            }
        }
        _ => {}
    }
}

/// The identifiers a binding pattern binds (not its default values).
fn pattern_names<'a>(x: &Extractor<'a, '_>, p: Node<'a>, out: &mut Vec<&'a str>) {
    match p.kind() {
        "identifier" | "shorthand_property_identifier_pattern" => out.push(x.text(p)),
        "pair_pattern" => {
            if let Some(v) = p.child_by_field_name("value") {
                pattern_names(x, v, out);
            }
        }
        "assignment_pattern" | "object_assignment_pattern" => {
            if let Some(l) = p.child_by_field_name("left") {
                pattern_names(x, l, out);
            }
        }
        "object_pattern" | "array_pattern" | "rest_pattern" => {
            let mut c = p.walk();
            let kids: Vec<Node> = p.named_children(&mut c).collect();
            for k in kids {
                pattern_names(x, k, out);
            }
        }
        _ => {}
    }
}

/// `export = value;`: the module's names are the value's, which the index does not follow.
pub(super) fn export_assignment(x: &mut Extractor, node: Node) {
    let reason = format!("`export =` at line {} makes the module's names those of a value", line(node));
    open(x, reason);
}

/// An assignment statement whose left side is a member expression: CommonJS exports.
pub(super) fn commonjs<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    let (Some(left), Some(right)) = (node.child_by_field_name("left"), node.child_by_field_name("right")) else {
        return;
    };
    if left.kind() != "member_expression" && left.kind() != "subscript_expression" {
        return;
    }
    let target: String = x.text(left).split_whitespace().collect();
    let l = line(node);
    if target == "module.exports" {
        export(x, "default");
        if right.kind() != "object" {
            open(x, format!("`module.exports` is assigned a value at line {l}"));
            return;
        }
        object_keys(x, right, l);
        return;
    }
    let Some(object) = left.child_by_field_name("object") else { return };
    let on: String = x.text(object).split_whitespace().collect();
    if on != "exports" && on != "module.exports" {
        return;
    }
    export(x, "default");
    let key = if left.kind() == "member_expression" {
        left.child_by_field_name("property").map(|p| x.text(p).to_string())
    } else {
        left.child_by_field_name("index").filter(|i| i.kind() == "string").map(|i| string_value(x.text(i)).to_string())
    };
    match key {
        Some(k) => export(x, &k),
        None => open(x, format!("a computed CommonJS export at line {l}")),
    }
}

/// The keys of `module.exports = { … }`.
fn object_keys<'a>(x: &mut Extractor<'a, '_>, obj: Node<'a>, l: u32) {
    let mut c = obj.walk();
    let props: Vec<Node> = obj.named_children(&mut c).collect();
    for p in props {
        let key = match p.kind() {
            "shorthand_property_identifier" => Some(x.text(p).to_string()),
            "pair" | "method_definition" => {
                p.child_by_field_name("key").or(p.child_by_field_name("name")).and_then(|k| match k.kind() {
                    "property_identifier" | "identifier" => Some(x.text(k).to_string()),
                    "string" => Some(string_value(x.text(k)).to_string()),
                    _ => None,
                })
            }
            "comment" => continue,
            _ => None,
        };
        match key {
            Some(k) => export(x, &k),
            None => open(x, format!("`module.exports` has a computed or spread key at line {l}")),
        }
    }
}

/// A call handed `exports` or `module.exports` (`Object.assign(module.exports, …)`,
/// `Object.defineProperty(exports, …)`, `__exportStar(…, exports)`): the module's names are
/// computed.
pub(super) fn exports_passed<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    let Some(args) = node.child_by_field_name("arguments") else { return };
    let mut c = args.walk();
    let passed = args.named_children(&mut c).any(|a| {
        let t = x.text(a);
        t == "exports"
            || t.starts_with("module") && t.len() < 40 && t.split_whitespace().collect::<String>() == "module.exports"
    });
    if passed {
        export(x, "default");
        open(x, format!("`exports` is handed to a call at line {}", line(node)));
    }
}
