//! Names that exist in the real language are never an exact absence (tier 1), a genuinely missing
//! name in a closed module still is, and stubs are told from methods meant to be overridden, on
//! inputs shaped like real code: Rust names made by `extern crate`, derives, macro expansions,
//! `cfg_attr` and `#[path]`; Python names bound by statements other than a plain assignment;
//! TypeScript exports by destructuring, `export import`, `export =` and `declare`; classes that
//! subclass a class of the same name.

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::{andon, commit_all, git, json, run, run_ok, write_files};

/// (name, confidence) of every `BrokenImportAt` row of the repository at `dir`, indexing it first.
fn broken(dir: &Path) -> Vec<(String, String)> {
    run_ok(&["index", "-q"], dir);
    let out = run_ok(&["query", "-q", "BrokenImportAt(p, l, n, s, t, c)", "--format", "json"], dir);
    let mut rows: Vec<(String, String)> = json(&out)["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[2].as_str().unwrap().to_string(), r[5].as_str().unwrap().to_string()))
        .collect();
    rows.sort();
    rows.dedup();
    rows
}

/// The names of `BrokenImportAt` rows with confidence "exact".
fn exact(dir: &Path) -> Vec<String> {
    broken(dir).into_iter().filter(|(_, c)| c == "exact").map(|(n, _)| n).collect()
}

/// A Rust workspace: crate `core-x` (its files under `core/`, written as `core_files`, with the
/// dependency lines `deps`) and crate `app`, whose `src/main.rs` is `main`.
fn rust_repo(deps: &str, core_files: &[(&str, &str)], main: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let mut files: Vec<(String, String)> = vec![
        ("Cargo.toml".into(), "[workspace]\nmembers = [\"core\", \"app\"]\n".into()),
        (
            "core/Cargo.toml".into(),
            format!("[package]\nname = \"core-x\"\nversion = \"0.1.0\"\n\n[dependencies]\n{deps}"),
        ),
        (
            "app/Cargo.toml".into(),
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\ncore-x = { path = \"../core\" }\n"
                .into(),
        ),
        ("app/src/main.rs".into(), main.into()),
    ];
    files.extend(core_files.iter().map(|(p, s)| (format!("core/{p}"), s.to_string())));
    write_files(t.path(), &files);
    t
}

/// `andon verify --request` over the wire `wire` of the committed repository at `dir`, with a
/// one-line change to `file`: the exit code.
fn verify_exit(dir: &Path, wire: &str, file: &str) -> i32 {
    commit_all(dir);
    let p = dir.join(file);
    let mut text = std::fs::read_to_string(&p).unwrap();
    text.push_str("// touched\n");
    std::fs::write(&p, text).unwrap();
    git(dir, &["add", "-A", "--intent-to-add"]);
    let diff = std::process::Command::new("git").args(["diff"]).current_dir(dir).output().unwrap().stdout;
    let request = serde_json::json!({
        "wire": wire,
        "contract": { "obligation": "behavior is unchanged", "kind": "behavior" },
        "fixDiff": { "files": [], "diff": String::from_utf8(diff).unwrap() },
    });
    let scratch = tempfile::tempdir().unwrap();
    let f = scratch.path().join("request.json");
    std::fs::write(&f, serde_json::to_vec(&request).unwrap()).unwrap();
    let o =
        andon().args(["verify", "--request", f.to_str().unwrap(), "--format", "json", "-q"]).arg(dir).output().unwrap();
    o.status.code().unwrap()
}

// ---- Rust: names that exist ---------------------------------------------------------------------

/// `pub extern crate libc;` and `pub extern crate libc as c;` put `libc` and `c` in the crate's
/// root: `use core_x::libc` compiles.
#[test]
fn a_pub_extern_crate_is_a_name_of_its_module() {
    let t = rust_repo(
        "libc = \"0.2\"\n",
        &[("src/lib.rs", "pub fn here() {}\npub extern crate libc;\npub extern crate libc as c;\n")],
        "use core_x::here;\nuse core_x::libc;\nuse core_x::c;\n\nfn main() { here(); }\n",
    );
    assert_eq!(exact(t.path()), Vec::<String>::new());
}

/// A derive macro defines items beside the item it derives (derive_builder's `ConfigBuilder`,
/// snafu's context selectors): a module with a derive from outside the standard library may define
/// names the index cannot see, so an absence there is not exact, and no tier-1 hold follows.
#[test]
fn a_name_a_derive_macro_defines_is_no_exact_absence() {
    let t = rust_repo(
        "derive_builder = \"0.20\"\nsnafu = \"0.8\"\n",
        &[
            ("src/lib.rs", "pub mod config;\npub mod error;\n"),
            (
                "src/config.rs",
                "use derive_builder::Builder;\n\n#[derive(Builder)]\npub struct Config {\n    x: u32,\n}\n",
            ),
            (
                "src/error.rs",
                "use snafu::Snafu;\n\n#[derive(Debug, Snafu)]\npub enum Error {\n    Missing { path: String },\n}\n",
            ),
        ],
        "use core_x::config::ConfigBuilder;\nuse core_x::error::MissingSnafu;\n\nfn main() {}\n",
    );
    assert_eq!(exact(t.path()), Vec::<String>::new());
    assert_ne!(verify_exit(t.path(), "core-x -> app", "core/src/config.rs"), 12, "a tier-1 hold on code that compiles");
}

/// `#[macro_export]` written by a macro's expansion in a submodule puts the macro at the crate
/// root, which has no item-level macro of its own.
/// Pinned as it stands: the expansion is not read, so the name is still an exact absence (a false
/// tier-1 hold); when it is read, this test fails and its assertion becomes `[]`.
#[test]
fn a_macro_exported_by_an_expansion_in_a_submodule_is_pinned_as_an_exact_absence() {
    let t = rust_repo(
        "",
        &[
            (
                "src/lib.rs",
                "macro_rules! exported {\n    ($n:ident) => {\n        #[macro_export]\n        macro_rules! $n { () => {} }\n    };\n}\n\nmod sub;\n",
            ),
            ("src/sub.rs", "exported!(hello);\n"),
        ],
        "use core_x::hello;\n\nfn main() { hello!(); }\n",
    );
    assert_eq!(exact(t.path()), ["hello"]);
}

/// `#[cfg_attr(predicate, macro_export)]` exports the macro as `#[macro_export]` does (with the
/// predicate true, as the index takes every `cfg`).
#[test]
fn a_macro_exported_under_cfg_attr_is_a_crate_root_name() {
    let t = rust_repo(
        "",
        &[
            ("src/lib.rs", "mod macros;\n"),
            (
                "src/macros.rs",
                "#[cfg_attr(not(feature = \"quiet\"), macro_export)]\nmacro_rules! maybe {\n    () => {};\n}\n",
            ),
        ],
        "use core_x::maybe;\n\nfn main() { maybe!(); }\n",
    );
    assert_eq!(exact(t.path()), Vec::<String>::new());
}

/// `#[path = "sys_unix.rs"] mod sys;` next to a plain `mod sys;` under another `cfg`: the module
/// `sys` is either file, so a name missing from `sys.rs` alone is no exact absence.
/// The module tree takes `sys.rs`, but a `mod` with a `path` attribute makes the file a guess:
/// the absence is heuristic, never a tier-1 hold.
#[test]
fn a_module_with_a_path_attribute_is_no_exact_absence() {
    let t = rust_repo(
        "",
        &[
            ("src/lib.rs", "#[cfg(unix)]\n#[path = \"sys_unix.rs\"]\npub mod sys;\n#[cfg(not(unix))]\npub mod sys;\n"),
            ("src/sys.rs", "pub fn generic() {}\n"),
            ("src/sys_unix.rs", "pub fn unix_only() {}\n"),
        ],
        "use core_x::sys::unix_only;\n\nfn main() { unix_only(); }\n",
    );
    assert_eq!(exact(t.path()), Vec::<String>::new());
    assert_eq!(broken(t.path()), [("unix_only".to_string(), "heuristic".to_string())]);
}

// ---- Rust: a name that is really missing --------------------------------------------------------

/// A child module that reads its parent's names (`use super::*;`) and a parent that re-exports the
/// child's (`pub use a::*;`) is the common shape of a crate root; the glob cycle must not hide a
/// name that neither defines: it is an exact absence, the stop rule's case.
#[test]
fn a_glob_cycle_does_not_hide_a_missing_name() {
    let t = rust_repo(
        "",
        &[
            ("src/lib.rs", "mod a;\npub use a::*;\n\npub struct Config;\n"),
            ("src/a.rs", "use super::*;\n\npub fn fa() -> Config {\n    Config\n}\n"),
        ],
        "use core_x::fa;\nuse core_x::gone;\n\nfn main() { fa(); }\n",
    );
    assert_eq!(broken(t.path()), [("gone".to_string(), "exact".to_string())]);
}

/// The glob cycle above, where the name does exist (through the child's second glob): found, not
/// missing, from the parent and from the child alike.
#[test]
fn a_glob_cycle_still_finds_a_name_one_of_its_files_brings_in() {
    let t = rust_repo(
        "",
        &[
            ("src/lib.rs", "mod a;\nmod b;\npub use a::*;\npub mod c;\n\npub struct Config;\n"),
            ("src/a.rs", "use super::*;\npub use crate::b::*;\n"),
            ("src/b.rs", "pub fn deep() {}\n"),
            ("src/c.rs", "pub use crate::*;\n"),
        ],
        "use core_x::deep;\nuse core_x::c::deep as d2;\nuse core_x::gone;\n\nfn main() { deep(); d2(); }\n",
    );
    assert_eq!(broken(t.path()), [("gone".to_string(), "exact".to_string())]);
}

// ---- Python: names that exist -------------------------------------------------------------------

/// A Python project where `api` imports `names` from `core`, whose `__init__.py` is `core_init`.
fn python_repo(core_init: &str, names: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("pyproject.toml", "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n"),
            ("src/core/__init__.py", core_init),
            ("src/api/__init__.py", &format!("from core import {names}\n")),
        ],
    );
    t
}

/// A module `__getattr__` bound by an assignment (`__getattr__ = make_getattr(…)`, lazy_loader's
/// `__getattr__, __dir__, _ = lazy.attach(…)`) answers any name, as a `def __getattr__` does.
#[test]
fn a_module_getattr_bound_by_assignment_opens_the_surface() {
    for core in [
        "def _lazy(name):\n    return name\n\n\n__getattr__ = _lazy\n",
        "import lazy_loader as lazy\n\n__getattr__, __dir__, _ = lazy.attach(__name__, submodules=[\"sub\"])\n",
    ] {
        let t = python_repo(core, "anything");
        assert_eq!(broken(t.path()), [("anything".to_string(), "heuristic".to_string())], "{core}");
    }
}

/// Statements other than a plain top-level assignment bind module names too; none of these imports
/// fails in Python. The module dunders are names of every module; chains, starred and list
/// patterns, `with`/`for` targets and bodies, `elif` and `try`/`else` blocks and `:=` are recorded.
/// PEP 695 `type X = …` defines `X`; `globals().update(…)` at module level computes the module's
/// names (its surface is open).
#[test]
fn python_names_bound_by_any_statement_are_no_exact_absence() {
    let t = python_repo("x = 1\n", "__file__, __name__, __doc__, __path__");
    assert_eq!(exact(t.path()), Vec::<String>::new());
    for (core, names) in [
        ("a = b = 1\n", "a, b"),
        ("type Vector = list[float]\n", "Vector"),
        ("first, *rest = [1, 2, 3]\n", "first, rest"),
        ("[left, right] = [1, 2]\n", "left, right"),
        ("import contextlib\n\nwith contextlib.suppress(ImportError):\n    fast = 1\n", "fast"),
        ("for index in range(3):\n    pass\n", "index"),
        ("import sys\n\nif sys.platform == \"win32\":\n    pass\nelif sys.platform:\n    posix = 1\n", "posix"),
        ("try:\n    import json\nexcept ImportError:\n    pass\nelse:\n    HAS_JSON = True\n", "HAS_JSON"),
        ("(walrus := 1)\n", "walrus"),
        ("globals().update({\"dynamic\": 1})\n", "dynamic"),
    ] {
        let t = python_repo(core, names);
        assert_eq!(exact(t.path()), Vec::<String>::new(), "{core:?}");
    }
}

// ---- TypeScript: names that exist ---------------------------------------------------------------

/// A TypeScript workspace where `@acme/app` runs `import_line` against `@acme/core`, whose
/// `src/index.ts` is `index`.
fn ts_repo(index: &str, import_line: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("package.json", "{\"private\": true, \"workspaces\": [\"packages/*\"]}\n"),
            ("packages/core/package.json", "{\"name\": \"@acme/core\", \"main\": \"src/index.ts\"}\n"),
            ("packages/core/src/index.ts", index),
            ("packages/app/package.json", "{\"name\": \"@acme/app\", \"dependencies\": {\"@acme/core\": \"*\"}}\n"),
            ("packages/app/src/main.ts", &format!("{import_line}\nconsole.log(1);\n")),
        ],
    );
    t
}

/// Exports tsc accepts: a destructuring declaration, `export import`, `export =` of a namespace
/// (its names are a value's: the surface is open) and `export declare const`. None is an exact
/// absence.
#[test]
fn typescript_exports_of_every_form_are_no_exact_absence() {
    for (index, import) in [
        (
            "const obj = { a: 1, b: 2 };\nexport const { a, b } = obj;\nexport const [c] = [1];\n",
            "import { a, c } from \"@acme/core\";",
        ),
        ("namespace N {\n  export const X = 1;\n}\nexport import Y = N.X;\n", "import { Y } from \"@acme/core\";"),
        ("namespace NS {\n  export const a = 1;\n}\nexport = NS;\n", "import { a } from \"@acme/core\";"),
        (
            "export declare const dc: number;\nexport declare function df(): void;\n",
            "import { dc, df } from \"@acme/core\";",
        ),
    ] {
        let t = ts_repo(index, import);
        assert_eq!(exact(t.path()), Vec::<String>::new(), "{index:?}");
    }
}

// ---- stubs --------------------------------------------------------------------------------------

/// The marker gaps of the first loop step, once `dir` is committed: (path, line, summary).
fn marker_gaps(dir: &Path) -> BTreeSet<(String, u64, String)> {
    commit_all(dir);
    crate::stubs::marker_gaps(dir)
}

/// `class Command(Command)` extends the imported `Command`, not itself, and an inheritance cycle
/// is no subclass of the class itself: `run` and `a_only` are real stubs nobody overrides.
#[test]
fn a_class_named_as_its_base_does_not_override_its_own_stubs() {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("pyproject.toml", "[project]\nname = \"shapes\"\nversion = \"1\"\n"),
            ("src/shapes/__init__.py", ""),
            ("src/shapes/base.py", "class Command:\n    def handle(self):\n        return 1\n"),
            (
                "src/shapes/cmd.py",
                "from shapes.base import Command\n\n\nclass Command(Command):\n    def run(self):\n        raise NotImplementedError\n\n\n\
                 class A(B):\n    def a_only(self):\n        raise NotImplementedError\n\n\n\
                 class B(A):\n    def b_only(self):\n        raise NotImplementedError\n",
            ),
        ],
    );
    let got = marker_gaps(t.path());
    let p = "src/shapes/cmd.py".to_string();
    let want: BTreeSet<(String, u64, String)> =
        [6, 11, 16].into_iter().map(|l| (p.clone(), l, "NotImplementedError marker".to_string())).collect();
    assert_eq!(got, want);
}

/// A TODO above a stub whose decorator spans lines is that stub's gap, not one more.
#[test]
fn a_todo_above_a_multi_line_decorator_is_the_stubs_gap() {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("pyproject.toml", "[project]\nname = \"shapes\"\nversion = \"1\"\n"),
            ("src/shapes/__init__.py", ""),
            (
                "src/shapes/deco.py",
                "import functools\n\n\n# TODO: implement the cache\n@functools.lru_cache(\n    maxsize=None,\n)\ndef cached():\n    raise NotImplementedError\n",
            ),
        ],
    );
    let got = marker_gaps(t.path());
    let want: BTreeSet<(String, u64, String)> =
        [("src/shapes/deco.py".to_string(), 9, "NotImplementedError marker".to_string())].into_iter().collect();
    assert_eq!(got, want);
}

/// A chain of 800 classes, each overriding its base's method, in one file: the first loop step
/// stays fast (the rules that close inheritance transitively do not grow with the chain's cube).
#[test]
fn a_deep_class_chain_does_not_stall_the_loop() {
    let t = tempfile::tempdir().unwrap();
    let mut chain = String::from("class C0:\n    def m(self):\n        raise NotImplementedError\n");
    for i in 1..800 {
        chain.push_str(&format!("\n\nclass C{i}(C{}):\n    def m(self):\n        raise NotImplementedError\n", i - 1));
    }
    write_files(
        t.path(),
        &[
            ("pyproject.toml", "[project]\nname = \"pkg\"\nversion = \"1\"\n"),
            ("src/pkg/__init__.py", ""),
            ("src/pkg/chain.py", chain.as_str()),
        ],
    );
    commit_all(t.path());
    run_ok(&["index", "-q"], t.path());
    let start = std::time::Instant::now();
    let o = run(&["loop", "--format", "json", "-q"], t.path());
    let took = start.elapsed();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(took < std::time::Duration::from_secs(8), "the loop took {took:?} on an 800-class chain");
}

/// A trait written inside an item-level macro (`cfg_feature! { pub trait Shape { … } }`, tokio's
/// `cfg_*!` wrappers) has the same members as one written in place: its default `todo!()`, which
/// `Square` overrides, is no gap; the one nobody overrides still is.
#[test]
fn a_stub_inside_an_item_level_macro_is_judged_as_one_written_in_place() {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("Cargo.toml", "[package]\nname = \"shapes\"\nversion = \"0.1.0\"\n"),
            (
                "src/lib.rs",
                "macro_rules! cfg_feature {\n    ($($item:item)*) => { $( $item )* };\n}\n\n\
                 cfg_feature! {\n    pub trait Shape {\n        fn area(&self) -> f64 {\n            todo!()\n        }\n\n\
                 \x20       fn corners(&self) -> u32 {\n            todo!()\n        }\n    }\n}\n\n\
                 pub struct Square;\n\nimpl Shape for Square {\n    fn area(&self) -> f64 {\n        1.0\n    }\n}\n",
            ),
        ],
    );
    let want: BTreeSet<(String, u64, String)> =
        [("src/lib.rs".to_string(), 12, "todo! marker".to_string())].into_iter().collect();
    assert_eq!(marker_gaps(t.path()), want);
}
