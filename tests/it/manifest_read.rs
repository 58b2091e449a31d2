//! The `manifest` contract reads manifests as packaging tools do: `setup.py` and the requirements
//! files it reads, `setup.cfg`'s `file:`, PEP 621 `dynamic` dependencies, Poetry groups; imports
//! that say they may be missing are never undeclared; `tslib` under `importHelpers` is used; each
//! finding is at the line that declares it.

use std::path::Path;

use serde_json::Value;

use crate::support::*;

const CONTRACT: &str = "[[contract]]\nname = \"deps\"\nkind = \"manifest\"\n";

/// The `manifest` contract's findings, as (path, line, message).
fn manifest_findings(d: &Path) -> Vec<(String, u64, String)> {
    let out = run(&["check", "--quiet", "--format", "json"], d);
    let doc: Value = json(&out);
    let mut found: Vec<(String, u64, String)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["contract"] == "deps")
        .map(|f| {
            (
                f["path"].as_str().unwrap_or("").to_string(),
                f["line"].as_u64().unwrap_or(0),
                f["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    found.sort();
    found
}

fn undeclared(found: &[(String, u64, String)]) -> Vec<String> {
    let mut out: Vec<String> = found
        .iter()
        .filter(|f| f.2.contains("does not declare"))
        .filter_map(|f| f.2.split('`').nth(3).map(str::to_string))
        .collect();
    out.sort();
    out
}

const CELERY_LIKE_SETUP: &str = r#"import os
import setuptools

EXTENSIONS = {'redis', 'auth'}

def _reqs(*f):
    return [l.split('#', 1)[0].strip() for l in open(
        os.path.join(os.getcwd(), 'requirements', *f)).readlines()]

def reqs(*f):
    """Parse requirement file."""
    return [r for r in _reqs(*f) if r]

def extras(*p):
    return reqs('extras', *p)

def install_requires():
    return reqs('default.txt')

setuptools.setup(
    name='app',
    install_requires=install_requires(),
    tests_require=reqs('test.txt'),
    extras_require={x: extras(x + '.txt') for x in EXTENSIONS},
)
"#;

fn celery_like(d: &Path) {
    write_files(
        d,
        &[
            ("andon.toml", CONTRACT),
            ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"-q\"\n"),
            ("setup.py", CELERY_LIKE_SETUP),
            ("requirements/default.txt", "kombu>=5.3\n# a comment\nvine>=5.1\ntzdata>=2022.7\n-r base.txt\n"),
            ("requirements/base.txt", "click>=8\n"),
            ("requirements/test.txt", "pytest>=8\n"),
            ("requirements/extras/redis.txt", "redis>=4.5\n"),
            ("requirements/docs.txt", "sphinx\n"),
            (
                "app/__init__.py",
                "import kombu\nimport vine\nimport click\nimport redis\nimport missing_pkg\nimport sphinx\n",
            ),
            ("app/testing.py", "import pytest\n"),
        ],
    );
}

#[test]
fn setup_py_reads_the_requirements_files_it_opens() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    celery_like(d);
    let found = manifest_findings(d);
    // kombu, vine (default.txt), click (included by `-r base.txt`), redis (an extra), pytest
    // (tests_require) are declared; sphinx is in a file setup.py never reads
    assert_eq!(undeclared(&found), ["missing_pkg", "sphinx"], "{found:#?}");
    let unused: Vec<_> = found.iter().filter(|f| f.2.contains("none of its code imports")).collect();
    assert_eq!(unused.len(), 1, "{found:#?}");
    assert_eq!((unused[0].0.as_str(), unused[0].1), ("requirements/default.txt", 4), "{found:#?}");
    assert!(unused[0].2.contains("`tzdata`") && unused[0].2.contains("through `requirements/default.txt`"));
}

#[test]
fn a_changed_requirements_file_changes_the_result() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    celery_like(d);
    assert!(!undeclared(&manifest_findings(d)).contains(&"kombu".to_string()));
    write_files(d, &[("requirements/default.txt", "vine>=5.1\n-r base.txt\n")]);
    assert_eq!(undeclared(&manifest_findings(d)), ["kombu", "missing_pkg", "sphinx"]);
    write_files(d, &[("requirements/base.txt", "click>=8\nkombu\n")]);
    assert_eq!(undeclared(&manifest_findings(d)), ["missing_pkg", "sphinx"]);
}

#[test]
fn setup_cfg_pyproject_dynamic_and_poetry_groups_declare() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("andon.toml", CONTRACT),
            // PEP 621 dependencies filled from files by setuptools
            (
                "one/pyproject.toml",
                "[project]\nname = \"one\"\ndynamic = [\"dependencies\", \"optional-dependencies\"]\n\n\
                 [tool.setuptools.dynamic]\ndependencies = { file = [\"requirements.txt\"] }\n\
                 optional-dependencies.fast = { file = [\"requirements-fast.txt\"] }\n",
            ),
            ("one/requirements.txt", "attrs\n"),
            ("one/requirements-fast.txt", "ujson\n"),
            ("one/one/__init__.py", "import attr\nimport ujson\nimport nope_one\n"),
            // setup.cfg: a `file:` value, extras, and its setup.py beside it
            (
                "two/setup.cfg",
                "[metadata]\nname = two\n\n[options]\ninstall_requires = file: requirements/base.txt\n\
                 tests_require =\n    pytest\n\n[options.extras_require]\nyaml =\n    PyYAML>=6\noracle =\n    cx_oracle>=8\n",
            ),
            ("two/setup.py", "from setuptools import setup\nsetup()\n"),
            ("two/requirements/base.txt", "six\n"),
            // an import name differs from the distribution's by case alone
            ("two/two/__init__.py", "import six\nimport yaml\nimport pytest\nimport cx_Oracle\nimport nope_two\n"),
            // Poetry 1.2 groups
            (
                "three/pyproject.toml",
                "[tool.poetry]\nname = \"three\"\n\n[tool.poetry.dependencies]\npython = \"^3.9\"\n\
                 orjson = { version = \"*\", optional = true }\n\n[tool.poetry.group.test.dependencies]\nhypothesis = \"*\"\n",
            ),
            ("three/three/__init__.py", "import orjson\nimport hypothesis\nimport nope_three\n"),
        ],
    );
    let found = manifest_findings(d);
    assert_eq!(undeclared(&found), ["nope_one", "nope_three", "nope_two"], "{found:#?}");
}

#[test]
fn imports_that_say_they_may_be_missing_are_never_undeclared() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("andon.toml", CONTRACT),
            ("pyproject.toml", "[project]\nname = \"app\"\ndependencies = []\n"),
            (
                "app/__init__.py",
                "from typing import TYPE_CHECKING\n\
                 try:\n    import ujson as json\nexcept ImportError:\n    import json\n\
                 try:\n    from urllib.parse import urlsplit\nexcept ImportError:\n    from urlparse import urlsplit\n\
                 try:\n    from yaml import CLoader as Loader\nexcept ImportError:\n    from yaml import Loader\n\
                 if TYPE_CHECKING:\n    from _typeshed import SupportsRead\n    from mypy_extensions import trait\n\
                 fast = __import__('cython')\n\
                 import importlib\nspeedups = importlib.import_module('simplejson')\n\
                 import requests\n",
            ),
        ],
    );
    let found = manifest_findings(d);
    // `yaml` is the fallback to the same package the `try` imports: the code needs it either way
    assert_eq!(undeclared(&found), ["requests", "yaml"], "{found:#?}");
    let yaml = found.iter().find(|f| f.2.contains("`yaml`")).unwrap();
    assert_eq!(yaml.1, 13, "at the fallback's line: {found:#?}");
}

#[test]
fn tslib_is_used_under_import_helpers() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let pkg =
        "{\n  \"name\": \"web\",\n  \"dependencies\": {\n    \"tslib\": \"^2\",\n    \"left-pad\": \"^1\"\n  }\n}\n";
    write_files(
        d,
        &[
            ("andon.toml", CONTRACT),
            ("web/package.json", pkg),
            ("web/tsconfig.json", "{ \"extends\": \"./tsconfig.base.json\" }\n"),
            (
                "web/tsconfig.base.json",
                "{\n  // helpers from tslib\n  \"compilerOptions\": { \"importHelpers\": true, },\n}\n",
            ),
            ("web/src/index.ts", "export const x = 1;\n"),
        ],
    );
    let found = manifest_findings(d);
    let unused: Vec<_> = found.iter().filter(|f| f.2.contains("none of its code imports")).collect();
    assert_eq!(unused.len(), 1, "{found:#?}");
    assert!(unused[0].2.contains("`left-pad`"), "{found:#?}");
    assert_eq!((unused[0].0.as_str(), unused[0].1), ("web/package.json", 5));
    // without `importHelpers`, tslib is unused as any dependency is
    write_files(d, &[("web/tsconfig.base.json", "{ \"compilerOptions\": {} }\n")]);
    let found = manifest_findings(d);
    assert!(found.iter().any(|f| f.2.contains("`tslib`") && f.1 == 4), "{found:#?}");
}

#[test]
fn an_unused_cargo_dependency_table_is_at_its_line() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            ("andon.toml", CONTRACT),
            (
                "Cargo.toml",
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [dependencies]\nserde = \"1\"\n\n[dev-dependencies.proptest]\nversion = \"1\"\n",
            ),
            ("src/lib.rs", "//! app\npub fn f() {}\n"),
        ],
    );
    let found = manifest_findings(d);
    let at = |dep: &str| found.iter().find(|f| f.2.contains(&format!("`{dep}`"))).map(|f| (f.0.as_str(), f.1));
    assert_eq!(at("serde"), Some(("Cargo.toml", 7)), "{found:#?}");
    assert_eq!(at("proptest"), Some(("Cargo.toml", 9)), "{found:#?}");
}
