//! TypeScript parses where tsc's parser does. The fixture `ts-modern` holds modern syntax
//! (variance annotations, newline-separated call signatures, `satisfies`, `using`, `accessor`,
//! decorators, overloads, TSX generics); generated variants vary the forms the grammar changes in
//! `grammars/typescript/transform.rs` touch. The differential tests run tsc's parser (npm
//! `typescript`, through `benches/ts-parse-oracle.js`) and assert that every file it parses
//! without a syntax diagnostic has no `ParseError` fact. They need `node` and `typescript`: the
//! `node_modules` directory holding it is `ANDON_TYPESCRIPT_NODE_MODULES`, else
//! `~/.cache/andon-ci/typescript/node_modules` (where `.ci/run` installs it); without them they
//! print why and skip.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{facts, fixtures, run_ok, scratch, write_files};

/// The `node_modules` directory that holds npm `typescript`, if node and it are installed.
fn typescript_modules() -> Option<PathBuf> {
    let dir = match std::env::var_os("ANDON_TYPESCRIPT_NODE_MODULES") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".cache/andon-ci/typescript/node_modules"),
    };
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: `node` is not on PATH (the tsc differential test needs it)");
        return None;
    }
    if !dir.join("typescript/package.json").is_file() {
        eprintln!(
            "skipped: npm `typescript` is not in {} (set ANDON_TYPESCRIPT_NODE_MODULES, or run \
             `npm install --prefix ~/.cache/andon-ci/typescript typescript@5.9.3`)",
            dir.display()
        );
        return None;
    }
    Some(dir)
}

/// The files under `dir` that tsc parses without a syntax diagnostic.
fn tsc_clean(dir: &Path, modules: &Path) -> BTreeSet<String> {
    let oracle = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/ts-parse-oracle.js");
    let out = Command::new("node").arg(oracle).arg(dir).env("NODE_PATH", modules).output().expect("node runs");
    assert!(out.status.success(), "the oracle failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8 paths").lines().map(str::to_string).collect()
}

/// The files of the repository at `dir` with a `ParseError` fact.
fn parse_errors(dir: &Path) -> BTreeSet<String> {
    run_ok(&["index", "--quiet"], dir);
    facts(dir, "ParseError").iter().map(|f| f["path"].as_str().expect("a path").to_string()).collect()
}

/// Asserts that no file tsc parses cleanly has a `ParseError` fact, and that tsc parses at least
/// `min_clean` files cleanly (so the check cannot pass on nothing).
fn assert_parses_where_tsc_does(dir: &Path, modules: &Path, min_clean: usize) {
    let clean = tsc_clean(dir, modules);
    assert!(clean.len() >= min_clean, "tsc parses only {} files cleanly: {clean:?}", clean.len());
    let errors = parse_errors(dir);
    let wrong: Vec<_> = clean.intersection(&errors).collect();
    assert!(wrong.is_empty(), "tsc parses these cleanly, andon records a ParseError: {wrong:?}");
}

#[test]
fn the_modern_syntax_fixture_has_no_parse_error_and_defines_its_names() {
    let t = scratch("ts-modern");
    assert_eq!(parse_errors(t.path()), BTreeSet::new());
    assert_eq!(facts(t.path(), "MissingName"), Vec::<serde_json::Value>::new());
    let defines: BTreeSet<(String, String)> = facts(t.path(), "Defines")
        .iter()
        .map(|f| (f["path"].as_str().unwrap().to_string(), f["name"].as_str().unwrap().to_string()))
        .collect();
    for (file, name) in [
        ("src/function.ts", "dual"),
        ("src/function.ts", "pipe"),
        ("src/function.ts", "identity"),
        ("src/function.ts", "map"),
        ("src/variance.ts", "Cell"),
        ("src/variance.ts", "Channel"),
        ("src/modern.ts", "Service"),
        ("src/modern.ts", "lessThan"),
        ("src/view.tsx", "List"),
        ("src/edges.ts", "drain"),
    ] {
        assert!(defines.contains(&(file.to_string(), name.to_string())), "{file} does not define {name}");
    }
}

#[test]
fn the_modern_syntax_fixture_parses_where_tsc_does() {
    let Some(modules) = typescript_modules() else { return };
    let t = scratch("ts-modern");
    let files = std::fs::read_dir(fixtures().join("ts-modern/src")).unwrap().count();
    assert_parses_where_tsc_does(t.path(), &modules, files);
}

#[test]
fn generated_variants_parse_where_tsc_does() {
    let Some(modules) = typescript_modules() else { return };
    let t = tempfile::tempdir().unwrap();
    let files = variants();
    write_files(t.path(), &files);
    write_files(t.path(), &[("package.json", r#"{"name": "variants"}"#)]);
    assert_parses_where_tsc_does(t.path(), &modules, files.len() * 9 / 10);
}

/// Generated files: each varies one form the grammar changes touch.
fn variants() -> Vec<(String, String)> {
    let mut files = Vec::new();
    files.extend(variance_variants());
    files.extend(signature_list_variants());
    files.extend(line_break_variants());
    files
}

/// Variance and `const` modifiers on the type parameters of every declaration that has them.
fn variance_variants() -> Vec<(String, String)> {
    let modifiers = ["", "in ", "out ", "in out ", "const ", "const in ", "const out ", "in out out "];
    let tails = ["", " extends string", " = never", " extends object = {}"];
    let declarations = [
        "interface I<P> { readonly a: unknown }",
        "type A<P> = () => unknown",
        "class C<P> { m(): void {} }",
        "declare class D<P> {}",
        "export default interface E<X, P> {}",
    ];
    let mut files = Vec::new();
    for (i, m) in modifiers.iter().enumerate() {
        for (j, tail) in tails.iter().enumerate() {
            for (k, decl) in declarations.iter().enumerate() {
                let text = decl.replace('P', &format!("{m}T{tail}"));
                files.push((format!("variance/v{i}_{j}_{k}.ts"), format!("{text}\nconst out = 1\nexport {{ out }}\n")));
            }
        }
    }
    files
}

/// Call and construct signatures separated only by line breaks, after every kind of return type.
fn signature_list_variants() -> Vec<(String, String)> {
    let returns = [
        "void",
        "A",
        "Array<A>",
        "A[]",
        "(a: A) => A",
        "A | B",
        "{ a: A }",
        "typeof x",
        "\"a\"",
        "A extends B ? A : B",
    ];
    let seconds =
        ["<B>(b: B): B", "(b: number): void", "new <B>(b: B): object", "<B,>(b: B): B", "readonly in: number"];
    let containers = [
        ("interface I<B> {\n", "\n}\n"),
        ("type T<B> = {\n", "\n}\n"),
        ("declare const d: {\n", "\n}\n"),
        ("export declare const dual: <B>() => {\n", "\n}\n"),
    ];
    let mut files = Vec::new();
    for (i, r) in returns.iter().enumerate() {
        for (j, second) in seconds.iter().enumerate() {
            for (k, (open, close)) in containers.iter().enumerate() {
                let body = format!("  <A>(a: A): {r}\n  {second}\n  <A, C>(a: A, c: C): {r}");
                let text = format!("type A = 1\ntype B = 2\ndeclare const x: 1\n{open}{body}{close}");
                files.push((format!("signatures/s{i}_{j}_{k}.ts"), text));
            }
        }
    }
    files
}

/// A line break before `<` or `in`: a comparison, a method's type parameters, a new member.
fn line_break_variants() -> Vec<(String, String)> {
    let snippets = [
        "const a = 1, b = 2\nexport const c = a\n  < b\n",
        "export function f(a: number, b: number) {\n  return a\n    < b\n}\n",
        "declare const o: { in: number }\nexport const c = 1\n  < o.in\n",
        "export class C {\n  get\n  <A>(a: A): A { return a }\n}\n",
        "export interface I {\n  get\n  <A>(a: A): A\n}\n",
        "export abstract class C {\n  abstract get\n  <A>(a: A): A\n}\n",
        "export interface P {\n  name: string\n  in: \"query\"\n  instanceof: boolean\n}\n",
        "export class P {\n  name: string\n  in = 1\n}\n",
        "const inside = { in: 1 }\nfor (const k in inside) { if (k in inside) break }\nexport { inside }\n",
        "export function f(out: number, inner: number) { return out < inner }\n",
        "export const out = (x: number) => x\nexport const y = out<number>\n",
        "declare function tag<T>(s: TemplateStringsArray): T\nexport const v = tag<number>`x`.toFixed()\n",
        "export type Hint<N extends string> = `a \\`${N}\\` \\n`\n",
        "export function f() { let as = [1]; as = as.concat(as); return as }\n",
        "export class S { static accessor a = 1; override accessor b = 2; accessor c = 3 }\n",
        "export type Named<out> = out\nexport type Twice<out out> = out\n",
    ];
    snippets.iter().enumerate().map(|(i, s)| (format!("breaks/b{i}.ts"), s.to_string())).collect()
}
