//! Shared helpers: run the real binary, copy fixtures to scratch directories.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn andon() -> Command {
    Command::new(env!("CARGO_BIN_EXE_andon"))
}

/// Runs andon in `dir`. A person's decision (`authorize`, `defer`, `skip`, `override`,
/// `confirm`) without `--unattended` runs as a person takes it: at a terminal, with the gap id
/// typed back ([`at_terminal`]); [`run_piped`] runs it as an agent's shell would.
pub fn run(args: &[&str], dir: &Path) -> Output {
    let decision = ["authorize", "defer", "skip", "override", "confirm"].contains(&args[0]);
    if decision && !args.contains(&"--unattended") {
        return at_terminal(args, dir, &format!("{}\n", args[1]));
    }
    run_piped(args, dir)
}

/// Runs andon in `dir` with standard input a pipe, outside CI.
pub fn run_piped(args: &[&str], dir: &Path) -> Output {
    andon().args(args).current_dir(dir).env_remove("CI").output().expect("andon runs")
}

/// Runs andon in `dir` with standard input a new pseudo-terminal on which `typed` is typed, as a
/// person at the keyboard would (outside CI).
pub fn at_terminal(args: &[&str], dir: &Path, typed: &str) -> Output {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    // SAFETY: the standard POSIX calls that open a pseudo-terminal pair; each result is checked.
    let (mut master, slave) = unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(m >= 0, "posix_openpt");
        assert_eq!(libc::grantpt(m), 0, "grantpt");
        assert_eq!(libc::unlockpt(m), 0, "unlockpt");
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(m, name.as_mut_ptr(), name.len()), 0, "ptsname_r");
        let path = std::ffi::CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned();
        let slave = std::fs::OpenOptions::new().read(true).write(true).open(&path).expect("the terminal opens");
        (std::fs::File::from_raw_fd(m), slave)
    };
    master.write_all(typed.as_bytes()).expect("typed on the terminal");
    let out = andon().args(args).current_dir(dir).env_remove("CI").stdin(slave).output().expect("andon runs");
    drop(master);
    out
}

/// Runs andon and asserts it succeeded, naming the arguments and stderr when it did not.
pub fn run_ok(args: &[&str], dir: &Path) -> Output {
    let out = run(args, dir);
    assert!(
        out.status.success(),
        "andon {args:?} failed ({:?}):\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Copies a fixture into a fresh temporary directory (so `.andon/` never lands in the source tree).
pub fn scratch(name: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixtures().join(name), t.path());
    t
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Facts of one relation as JSON objects.
pub fn facts(dir: &Path, relation: &str) -> Vec<serde_json::Value> {
    let out = run(&["facts", "--relation", relation, "--format", "json", "--quiet"], dir);
    assert!(out.status.success(), "facts failed: {}", String::from_utf8_lossy(&out.stderr));
    json(&out)["facts"].as_array().unwrap().clone()
}

/// Writes `files` (repo-relative path, text) under `dir`, creating their directories.
pub fn write_files<P: AsRef<str>, T: AsRef<str>>(dir: &Path, files: &[(P, T)]) {
    for (f, text) in files {
        let p = dir.join(f.as_ref());
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text.as_ref()).unwrap_or_else(|e| panic!("writing {:?}: {e}", f.as_ref()));
    }
}

/// A Python project with a contract, `core` must not import `api`, and one TypeScript file.
pub fn contract_repo() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("pyproject.toml", "[project]\nname = \"app\"\nversion = \"0.1.0\"\n"),
            ("src/app/__init__.py", ""),
            ("src/app/api/__init__.py", "def handler():\n    return 1\n"),
            ("src/app/core/__init__.py", "def parse(text):\n    return text\n"),
            ("web/main.ts", "export const x = 1;\n"),
            (
                "andon.toml",
                "[[contract]]\nname = \"core stays independent of api\"\nkind = \"forbidden\"\n\
                 from = [\"src/app/core/**\"]\nto = [\"src/app/api/**\"]\n",
            ),
        ],
    );
    t
}

/// `git init` in `dir` and one commit of everything in it.
pub fn commit_all(dir: &Path) {
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "base"]);
}

pub fn git(dir: &std::path::Path, args: &[&str]) {
    let o = std::process::Command::new("git")
        .args(["-c", "user.name=andon", "-c", "user.email=andon@example.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// Three stages in one src-layout Python project: core <- api <- cli, with a broken import across
/// core -> api (`missing_name` is not defined in core).
pub fn three_stages() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    for (f, text) in [
        ("pyproject.toml", "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n"),
        ("src/core/__init__.py", "def parse(text):\n    return text.split()\n"),
        (
            "src/api/__init__.py",
            "from core import parse, missing_name\n\n\ndef run(text):\n    return parse(text), missing_name\n",
        ),
        ("src/cli/__init__.py", "from api import run\n\n\ndef main():\n    return run(\"a b\")\n"),
        // every stage has a test, so no stage is missing tests
        ("src/core/test_core.py", "from core import parse\n\n\ndef test_parse():\n    assert parse(\"a b\")\n"),
        ("src/api/test_api.py", "import api\n\n\ndef test_api():\n    assert api\n"),
        ("src/cli/test_cli.py", "import cli\n\n\ndef test_cli():\n    assert cli\n"),
    ] {
        std::fs::create_dir_all(d.join(f).parent().unwrap()).unwrap();
        std::fs::write(d.join(f), text).unwrap();
    }
    std::fs::write(d.join(".gitignore"), "analysis/\n").unwrap();
    git(d, &["init", "-q"]);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "base"]);
    t
}

/// Three clean stages and `settings` as andon.toml, committed.
pub fn clean_three_stages(settings: &str) -> tempfile::TempDir {
    let t = three_stages();
    let d = t.path();
    std::fs::write(
        d.join("src/api/__init__.py"),
        "from core import parse\n\n\ndef run(text):\n    return parse(text)\n",
    )
    .unwrap();
    std::fs::write(d.join("andon.toml"), settings).unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "clean, with settings"]);
    t
}

/// The trial's shape: two packages, a broken import across the wire, a TODO stub, a `tests/`
/// package and a failing `[[command]]` that passes once the broken import is fixed (and runs the
/// discount's test once a fix brings `tests/test_prices.py`).
pub fn shop_trial() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("pyproject.toml", "[project]\nname = \"shopkit\"\nversion = \"0.1.0\"\n"),
            (
                "andon.toml",
                "[[command]]\nname = \"unit\"\nrun = \"grep -q 'def total_of' catalog/prices.py && { [ ! -e tests/test_prices.py ] || python3 -m unittest tests.test_prices; }\"\nstages = [\"catalog\", \"shop\"]\n",
            ),
            (
                "catalog/__init__.py",
                "\"\"\"Product catalog.\"\"\"\nfrom catalog.prices import price_of\n\n__all__ = [\"price_of\"]\n",
            ),
            (
                "catalog/prices.py",
                "PRICES = {\"apple\": 3, \"pear\": 4}\n\n\ndef price_of(name):\n    return PRICES[name]\n\n\n\
                 def discount(amount, percent):\n    # TODO: apply the percentage discount\n    raise NotImplementedError\n",
            ),
            ("shop/__init__.py", "\"\"\"The shop.\"\"\"\n"),
            (
                "shop/cart.py",
                "from catalog import price_of, total_of\n\n\ndef cart_total(items):\n    return sum(price_of(i) for i in items)\n",
            ),
            ("tests/__init__.py", ""),
            (
                "tests/test_cart.py",
                "import unittest\n\nfrom shop.cart import cart_total\n\n\nclass CartTest(unittest.TestCase):\n    def test_total(self):\n        self.assertEqual(cart_total([\"apple\", \"pear\"]), 7)\n",
            ),
            (".gitignore", "analysis/\n.andon/\n"),
        ],
    );
    git(t.path(), &["init", "-q"]);
    git(t.path(), &["add", "-A"]);
    git(t.path(), &["commit", "-qm", "base"]);
    t
}

/// One package, `calc`, whose `ops.py` is `ops`, its unit test of `add(2, 3) == 5` as the one
/// `[[command]]`; committed.
pub fn calc_repo(ops: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("pyproject.toml", "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n"),
            ("andon.toml", "[[command]]\nname = \"unit\"\nrun = \"python3 -m unittest discover -s tests -t .\"\n"),
            ("calc/__init__.py", "\"\"\"Arithmetic.\"\"\"\n"),
            ("calc/ops.py", ops),
            ("tests/__init__.py", ""),
            (
                "tests/test_ops.py",
                "import unittest\n\nfrom calc.ops import add\n\n\nclass AddTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
            ),
            (".gitignore", "analysis/\n.andon/\n__pycache__/\n"),
        ],
    );
    git(d, &["init", "-q"]);
    commit_all(d);
    t
}

/// The fix of the shop trial's broken import: `catalog` defines and exports `total_of`.
pub fn fix_the_trial_import(d: &Path) {
    write_files(
        d,
        &[
            (
                "catalog/prices.py",
                "PRICES = {\"apple\": 3, \"pear\": 4}\n\n\ndef price_of(name):\n    return PRICES[name]\n\n\n\
                 def discount(amount, percent):\n    # TODO: apply the percentage discount\n    raise NotImplementedError\n\n\n\
                 def total_of(names):\n    return sum(price_of(n) for n in names)\n",
            ),
            (
                "catalog/__init__.py",
                "\"\"\"Product catalog.\"\"\"\nfrom catalog.prices import price_of, total_of\n\n__all__ = [\"price_of\", \"total_of\"]\n",
            ),
        ],
    );
}

/// Whether strace can trace here (installed, and allowed to); says so when it cannot, for the
/// fault-injection tests that then skip.
pub fn strace_works() -> bool {
    let probe = std::process::Command::new("strace").args(["-q", "-o", "/dev/null", "true"]).output();
    let works = probe.is_ok_and(|o| o.status.success());
    if !works {
        eprintln!("skipped: strace is not installed or cannot trace here");
    }
    works
}
