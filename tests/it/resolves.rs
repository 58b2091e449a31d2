//! The `resolves` contract: `andon init` writes it, `andon check` holds after init, and fails on a
//! new import of a missing name (Python, JavaScript, a TypeScript subpath, a Rust `crate::` path)
//! or a Python call across modules that does not fit its callee, and on nothing else: the import
//! forms real code uses (`import a.b as m`, `pub extern crate x as y`, CommonJS, package.json
//! `exports`) resolve as their language resolves them.

use std::path::Path;

use crate::support::{json, run, run_ok, write_files};

/// `andon check`'s exit code and its JSON document.
fn check(dir: &Path) -> (Option<i32>, serde_json::Value) {
    let out = run(&["check", "-q", "--format", "json"], dir);
    (out.status.code(), json(&out))
}

/// The blocking findings of `doc`: (path, line, tier, message).
fn blocking(doc: &serde_json::Value) -> Vec<(String, u64, u64, String)> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["blocking"] == true)
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap().to_string();
            (s("path"), f["line"].as_u64().unwrap(), f["tier"].as_u64().unwrap(), s("message"))
        })
        .collect()
}

/// Two Python packages: `lib` (re-exporting `g` and `K` from `lib.impl`) and `app`, which depends
/// on it; `app/app/__init__.py` is `app_init`.
fn python_pair(app_init: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("lib/pyproject.toml", "[project]\nname = \"lib\"\nversion = \"0.1\"\n"),
            ("lib/lib/__init__.py", "from .impl import g, K\n"),
            ("lib/lib/sub/__init__.py", ""),
            ("lib/lib/sub/deep.py", "def h(a, b=1):\n    return a\n"),
            (
                "lib/lib/impl.py",
                "def g(x, *, z=1):\n    return x\n\n\nclass K:\n    def __init__(self, a, b=2):\n        self.a = a\n",
            ),
            ("app/pyproject.toml", "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"lib\"]\n"),
            ("app/app/__init__.py", app_init),
        ],
    );
    t
}

const APP: &str = "from lib import g, K\n\n\ndef run():\n    g(1, z=2)\n    return K(1)\n";

#[test]
fn init_writes_resolves_and_check_holds_until_a_missing_name_or_a_wrong_call() {
    let t = python_pair(APP);
    let d = t.path();
    let doc = json(&run_ok(&["init", "-q", "--format", "json"], d));
    let kinds: Vec<&str> = doc["contracts"].as_array().unwrap().iter().map(|c| c["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"resolves"), "{doc:#}");
    assert_eq!(check(d).0, Some(0));

    // module aliases are the module itself, never a name it must bind
    write_files(d, &[("app/app/__init__.py", &format!("import lib as p\nimport lib.sub.deep as m\n{APP}"))]);
    let (code, doc) = check(d);
    assert_eq!(code, Some(0), "{doc:#}");

    write_files(d, &[("app/app/__init__.py", &format!("from lib import gone\n{APP}"))]);
    let (code, doc) = check(d);
    assert_eq!(code, Some(1));
    let found = blocking(&doc);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0.as_str(), found[0].1, found[0].2), ("app/app/__init__.py", 1, 1));
    assert!(found[0].3.contains("`gone`"), "{found:?}");

    // calls across the wire, through the re-export in `lib/__init__.py`, and through `import … as`
    for (call, says) in [
        ("g(1, 2)", "more positional arguments than `g` takes"),
        ("g()", "required argument `x`"),
        ("g(1, w=3)", "the keyword `w`"),
        ("K()", "required argument `a`"),
        ("m.h()", "required argument `a`"),
    ] {
        let src = format!("import lib.sub.deep as m\n{APP}\n\ndef more():\n    {call}\n");
        write_files(d, &[("app/app/__init__.py", &src)]);
        let (code, doc) = check(d);
        assert_eq!(code, Some(1), "{call}: {doc:#}");
        let found = blocking(&doc);
        assert_eq!(found.len(), 1, "{call}: {found:?}");
        assert_eq!((found[0].1, found[0].2), (11, 1), "{call}: {found:?}");
        assert!(found[0].3.contains(says), "{call}: {found:?}");
    }
}

#[test]
fn calls_that_fit_or_cannot_be_judged_raise_nothing() {
    let t = python_pair(APP);
    let d = t.path();
    run_ok(&["init", "-q"], d);
    for call in [
        // fits: keywords for positional parameters, defaults left out
        "g(x=1)",
        "K(a=1, b=3)",
        // unpacking: what it passes is unknown
        "g(*args)",
        "K(**kw)",
        // a parameter or a local binding of the same name shadows the import
        "(lambda g: g())(print)",
        "g = print\n    g()",
        "m = object()\n    m.h()",
    ] {
        let src = format!("import lib.sub.deep as m\n{APP}\n\ndef more(args, kw):\n    {call}\n");
        write_files(d, &[("app/app/__init__.py", &src)]);
        let (code, doc) = check(d);
        assert_eq!(code, Some(0), "{call}: {doc:#}");
    }
    // a decorator outside the known list decides what the call takes: not judged
    let init = "from lib import g, K\n";
    write_files(
        d,
        &[
            (
                "lib/lib/impl.py",
                "def command(f):\n    return lambda *a: f(1)\n\n\n@command\ndef g(x, *, z=1):\n    return x\n\n\nclass K:\n    def __init__(self, a, b=2):\n        self.a = a\n",
            ),
            ("app/app/__init__.py", &format!("{init}\n\ndef more():\n    g()\n")),
        ],
    );
    let (code, doc) = check(d);
    assert_eq!(code, Some(0), "{doc:#}");
    // `*args` takes extra positional arguments, never a missing required one: still exact
    write_files(
        d,
        &[(
            "lib/lib/impl.py",
            "def g(x, *rest, z=1):\n    return x\n\n\nclass K:\n    def __init__(self, a, b=2):\n        self.a = a\n",
        )],
    );
    let (code, doc) = check(d);
    assert_eq!(code, Some(1));
    assert_eq!(blocking(&doc).iter().map(|f| f.2).collect::<Vec<_>>(), [1], "{doc:#}");
    // two definitions of the name (which one runs is decided at import): not judged
    write_files(
        d,
        &[(
            "lib/lib/impl.py",
            "import sys\n\nif sys.platform == \"win32\":\n    def g(x, y):\n        return x\nelse:\n    def g(x, *, z=1):\n        return x\n\n\nclass K:\n    def __init__(self, a, b=2):\n        self.a = a\n",
        )],
    );
    let (code, doc) = check(d);
    assert_eq!(code, Some(0), "{doc:#}");
}

#[test]
fn a_resolves_exception_names_file_line_and_name_and_goes_stale() {
    let t = python_pair(&format!("from lib import gone\n{APP}"));
    let d = t.path();
    run_ok(&["init", "-q"], d);
    let toml = std::fs::read_to_string(d.join("andon.toml")).unwrap();
    assert!(toml.contains("{ at = \"app/app/__init__.py:1\", name = \"gone\", reason = "), "{toml}");
    assert_eq!(check(d).0, Some(0));
    // fixed: the exception excuses nothing and must go
    write_files(d, &[("app/app/__init__.py", APP)]);
    let (code, doc) = check(d);
    assert_eq!(code, Some(2), "{doc:#}");
    assert_eq!(doc["stale_exceptions"][0]["at"], "app/app/__init__.py:1");
    // an exception that names no `file:line` is a configuration error
    let bad = toml.replace("at = \"app/app/__init__.py:1\"", "at = \"app/app/__init__.py\"");
    std::fs::write(d.join("andon.toml"), bad).unwrap();
    let out = run(&["check", "-q"], d);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("file:line"), "{out:?}");
}

/// A JavaScript workspace: `ledger` (ESM), `legacy` (CommonJS) and `app`, which imports both.
fn js_repo(app: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("package.json", "{\"private\": true, \"workspaces\": [\"packages/*\"]}\n"),
            ("packages/ledger/package.json", "{\"name\": \"ledger\", \"type\": \"module\"}\n"),
            (
                "packages/ledger/src/index.js",
                "export function total(xs) {\n  return xs.length;\n}\nconst rate = 2;\nexport { rate as taxRate };\nexport default total;\n",
            ),
            ("packages/legacy/package.json", "{\"name\": \"legacy\"}\n"),
            (
                "packages/legacy/index.js",
                "function pad(s) {\n  return s;\n}\nmodule.exports = { pad, trim: (s) => s };\nmodule.exports.left = pad;\n",
            ),
            ("packages/app/package.json", "{\"name\": \"app\", \"type\": \"module\"}\n"),
            ("packages/app/src/main.js", app),
        ],
    );
    t
}

#[test]
fn javascript_modules_esm_and_commonjs_are_checked_for_names() {
    let ok = "import total, { taxRate } from \"../../ledger/src/index.js\";\nimport { pad, trim, left } from \"../../legacy/index.js\";\nconsole.log(total, taxRate, pad, trim, left);\n";
    let t = js_repo(ok);
    let d = t.path();
    run_ok(&["init", "-q"], d);
    let (code, doc) = check(d);
    assert_eq!(code, Some(0), "{doc:#}");
    for (line, name) in [
        ("import { formatMoney } from \"../../ledger/src/index.js\";", "formatMoney"),
        ("import { rate } from \"../../ledger/src/index.js\";", "rate"),
        ("import { center } from \"../../legacy/index.js\";", "center"),
    ] {
        write_files(d, &[("packages/app/src/main.js", &format!("{ok}{line}\n"))]);
        let (code, doc) = check(d);
        assert_eq!(code, Some(1), "{line}: {doc:#}");
        let found = blocking(&doc);
        assert_eq!(found.len(), 1, "{line}: {found:?}");
        assert_eq!((found[0].1, found[0].2), (4, 1), "{line}: {found:?}");
        assert!(found[0].3.contains(&format!("`{name}`")), "{found:?}");
    }
    // a computed CommonJS export opens the module: a name missing there is a guess (tier 2)
    write_files(
        d,
        &[
            ("packages/legacy/index.js", "const api = {};\nmodule.exports = build(api);\n"),
            ("packages/app/src/main.js", "import { center } from \"../../legacy/index.js\";\nconsole.log(center);\n"),
        ],
    );
    let (_, doc) = check(d);
    assert!(blocking(&doc).iter().all(|f| f.2 == 2), "{doc:#}");
}

/// A TypeScript workspace whose `kit` package exports subpaths into a build output the tree does
/// not hold (`dist/`), made from `src/`, and a literal subpath; `app` imports them.
fn ts_subpaths(app: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("package.json", "{\"private\": true, \"workspaces\": [\"packages/*\"]}\n"),
            (
                "packages/kit/package.json",
                "{\"name\": \"kit\", \"exports\": {\n  \".\": \"./src/index.ts\",\n  \"./Effect\": {\"types\": \"./dist/dts/Effect.d.ts\", \"import\": \"./dist/esm/Effect.js\"},\n  \"./util/*\": \"./src/util/*.ts\"\n}}\n",
            ),
            ("packages/kit/src/index.ts", "export const version = 1;\n"),
            ("packages/kit/src/Effect.ts", "export const succeed = (n: number) => n;\n"),
            ("packages/kit/src/util/strings.ts", "export function upper(s: string): string {\n  return s;\n}\n"),
            ("packages/app/package.json", "{\"name\": \"app\", \"dependencies\": {\"kit\": \"*\"}}\n"),
            ("packages/app/src/main.ts", app),
        ],
    );
    t
}

#[test]
fn typescript_subpaths_resolve_through_package_exports() {
    let ok = "import { succeed } from \"kit/Effect\";\nimport { upper } from \"kit/util/strings\";\nconsole.log(succeed(1), upper(\"a\"));\n";
    let t = ts_subpaths(ok);
    let d = t.path();
    run_ok(&["index", "-q"], d);
    let out = run_ok(&["query", "-q", "Resolves(\"packages/app/src/main.ts\", l, t, c)", "--format", "json"], d);
    let rows: Vec<(String, String)> = json(&out)["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[1].as_str().unwrap().to_string(), r[2].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        rows,
        [
            ("packages/kit/src/Effect.ts".to_string(), "heuristic".to_string()),
            ("packages/kit/src/util/strings.ts".to_string(), "exact".to_string()),
        ]
    );
    run_ok(&["init", "-q"], d);
    assert_eq!(check(d).0, Some(0));
    for (line, tier) in
        [("import { fail } from \"kit/Effect\";", 2), ("import { lower } from \"kit/util/strings\";", 1)]
    {
        write_files(d, &[("packages/app/src/main.ts", &format!("{ok}{line}\n"))]);
        let (code, doc) = check(d);
        assert_eq!(code, Some(1), "{line}: {doc:#}");
        let found = blocking(&doc);
        assert_eq!(found.iter().map(|f| (f.1, f.2)).collect::<Vec<_>>(), [(4, tier)], "{line}: {found:?}");
    }
}

/// A Rust workspace: `grep-matcher`, and `grep`, a facade that re-exports it as `matcher`
/// (`pub extern crate grep_matcher as matcher;`); `app` depends on `grep` only.
fn rust_facade(main: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let pkg = |name: &str, deps: &str| {
        format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n{deps}")
    };
    write_files(
        t.path(),
        &[
            ("Cargo.toml".to_string(), "[workspace]\nmembers = [\"matcher\", \"grep\", \"app\"]\n".to_string()),
            ("matcher/Cargo.toml".into(), pkg("grep-matcher", "")),
            ("matcher/src/lib.rs".into(), "pub trait Matcher {}\n".into()),
            ("grep/Cargo.toml".into(), pkg("grep", "grep-matcher = { path = \"../matcher\" }\n")),
            ("grep/src/lib.rs".into(), "pub extern crate grep_matcher as matcher;\n".into()),
            (
                "app/Cargo.toml".into(),
                format!(
                    "{}\n[[test]]\nname = \"it\"\npath = \"check/it.rs\"\n",
                    pkg("app", "grep = { path = \"../grep\" }\n")
                ),
            ),
            ("app/src/main.rs".into(), main.into()),
            ("app/src/util.rs".into(), "pub fn helper() {}\n".into()),
            ("app/check/it.rs".into(), "use app_shared::Thing;\n".into()),
            ("app/check/app_shared.rs".into(), "pub struct Thing;\n".into()),
        ],
    );
    t
}

#[test]
fn rust_paths_resolve_through_extern_crate_aliases_and_declared_dependencies_only() {
    let main = "mod util;\nuse grep::matcher::Matcher;\nuse crate::util::helper;\n\nfn main() { helper(); }\n";
    let t = rust_facade(main);
    let d = t.path();
    run_ok(&["index", "-q"], d);
    let out = run_ok(&["query", "-q", "Resolves(\"app/src/main.rs\", 2, t, c)", "--format", "json"], d);
    assert_eq!(json(&out)["rows"], serde_json::json!([["matcher/src/lib.rs", "exact"]]));
    // `app` reaches `grep-matcher`'s code through `grep`'s alias, as it would through a `pub use`
    let out = run_ok(&["query", "-q", "Wire(p, \"app\")", "--format", "json"], d);
    assert_eq!(json(&out)["rows"], serde_json::json!([["grep"], ["grep-matcher"]]));
    run_ok(&["init", "-q"], d);
    let (code, doc) = check(d);
    assert_eq!(code, Some(0), "{doc:#}");
    write_files(
        d,
        &[("app/src/main.rs", &main.replace("use crate::util::helper;", "use crate::util::{helper, gone};"))],
    );
    let (code, doc) = check(d);
    assert_eq!(code, Some(1), "{doc:#}");
    let found = blocking(&doc);
    assert_eq!(found.iter().map(|f| (f.0.as_str(), f.1, f.2)).collect::<Vec<_>>(), [("app/src/main.rs", 3, 1)]);
}

#[test]
fn a_crate_that_does_not_declare_a_workspace_crate_never_reaches_it() {
    // `errno` is a workspace crate, `libc` declares no dependency on it: `pub use errno::*` inside a
    // macro is a path to a local item, not a wire
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("Cargo.toml", "[workspace]\nmembers = [\"errno\", \"libc\"]\n"),
            ("errno/Cargo.toml", "[package]\nname = \"errno\"\nversion = \"0.1.0\"\n"),
            ("errno/src/lib.rs", "pub fn errno() -> i32 { 0 }\n"),
            ("libc/Cargo.toml", "[package]\nname = \"libc\"\nversion = \"0.1.0\"\n"),
            ("libc/src/lib.rs", "mod new;\n"),
            ("libc/src/new/mod.rs", "cfg_if! {\n    if #[cfg(unix)] {\n        pub use errno::*;\n    }\n}\n"),
        ],
    );
    run_ok(&["index", "-q"], d);
    let out = run_ok(&["query", "-q", "Wire(p, c)", "--format", "json"], d);
    assert_eq!(json(&out)["count"], 0, "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn an_import_of_a_module_the_package_does_not_hold_is_a_heuristic_finding() {
    let t = python_pair(APP);
    let d = t.path();
    run_ok(&["init", "-q"], d);
    for (line, module) in [
        ("from .gone import x", "app.gone"),
        ("import lib.nothere", "lib.nothere"),
        ("from lib.sub.nothere import y", "lib.sub.nothere"),
    ] {
        write_files(d, &[("app/app/__init__.py", &format!("{line}\n{APP}"))]);
        let (code, doc) = check(d);
        assert_eq!(code, Some(1), "{line}: {doc:#}");
        let found = blocking(&doc);
        assert_eq!(found.iter().map(|f| (f.1, f.2)).collect::<Vec<_>>(), [(1, 2)], "{line}: {found:?}");
        assert!(found[0].3.contains(&format!("`{module}`")), "{found:?}");
    }
    // a relative JavaScript specifier of a module that names no file; a stylesheet is no module
    let ok = "import total from \"../../ledger/src/index.js\";\nimport \"./style.css\";\nconsole.log(total);\n";
    let t = js_repo(ok);
    let d = t.path();
    run_ok(&["init", "-q"], d);
    assert_eq!(check(d).0, Some(0));
    write_files(d, &[("packages/app/src/main.js", &format!("{ok}import {{ a }} from \"./helpers.js\";\n"))]);
    let (code, doc) = check(d);
    assert_eq!(code, Some(1), "{doc:#}");
    assert_eq!(blocking(&doc).iter().map(|f| (f.1, f.2)).collect::<Vec<_>>(), [(4, 2)]);
}
