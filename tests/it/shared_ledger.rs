//! A ledger shared by several repositories (R5): a `ledger_dir` outside the repository holds one
//! log per repository, keyed by its identity (its root commit, or `repo_id`), never by its
//! directory's name; each repository's `status`, `loop`, `ledger check` and ledger relations see
//! only its own records.

use std::path::Path;

use crate::support::{commit_all, git, json, run, write_files};

/// A repository: a catalog package with a TODO, a shop importing it, and `first` as the content
/// of its first commit (which names it); `ledger_dir` as given.
fn repo(dir: &Path, first: &str, ledger: &Path, extra: &[(&str, &str)]) {
    write_files(dir, &[("README.md", first)]);
    git(dir, &["init", "-q"]);
    commit_all(dir);
    let toml = format!("ledger_dir = \"{}\"\n", ledger.display());
    let mut files = vec![
        ("andon.toml", toml.as_str()),
        ("pyproject.toml", "[project]\nname = \"shopkit\"\nversion = \"0.1.0\"\n"),
        ("catalog/__init__.py", "from catalog.prices import price_of\n"),
        ("catalog/prices.py", "def price_of(name):\n    # TODO: look the price up\n    return 0\n"),
        ("shop/__init__.py", "from catalog import price_of\n"),
        (".gitignore", "analysis/\n"),
    ];
    files.extend_from_slice(extra);
    write_files(dir, &files);
    commit_all(dir);
}

/// The gap paths `andon query 'LedgerGapAt(g, p, l)'` lists in `dir`.
fn gap_paths(dir: &Path) -> Vec<String> {
    let o = run(&["query", "LedgerGapAt(g, p, l)", "--format", "json", "-q"], dir);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let mut paths: Vec<String> =
        json(&o)["rows"].as_array().unwrap().iter().map(|r| r[1].as_str().unwrap().to_string()).collect();
    paths.sort();
    paths
}

#[test]
fn two_repositories_share_a_ledger_dir_and_each_sees_only_its_own_records() {
    let shared = tempfile::tempdir().unwrap();
    let ledger = shared.path().join("ledger");
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    repo(a.path(), "# a\n", &ledger, &[]);
    repo(b.path(), "# b\n", &ledger, &[("catalog/tax.py", "def tax(x):\n    # FIXME: only in b\n    return x\n")]);
    for d in [a.path(), b.path()] {
        let o = run(&["loop", "-q"], d);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
    }
    let (in_a, in_b) = (gap_paths(a.path()), gap_paths(b.path()));
    assert!(in_b.contains(&"catalog/tax.py".to_string()), "{in_b:?}");
    assert!(!in_a.contains(&"catalog/tax.py".to_string()), "a lists b's gap: {in_a:?}");
    // two logs, each under its repository's root commit
    let logs: Vec<String> = std::fs::read_dir(&ledger)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| ledger.join(n).join("ledger.jsonl").is_file())
        .collect();
    assert_eq!(logs.len(), 2, "{logs:?}");
    let root_of = |d: &Path| {
        let o =
            std::process::Command::new("git").arg("-C").arg(d).args(["rev-list", "--max-parents=0", "HEAD"]).output();
        String::from_utf8(o.unwrap().stdout).unwrap().trim().to_string()
    };
    assert!(logs.contains(&root_of(a.path())) && logs.contains(&root_of(b.path())), "{logs:?}");
    // each one's status reads its own log
    let status = json(&run(&["status", "--format", "json"], a.path()));
    assert!(status["ledger"].as_str().unwrap().contains(&root_of(a.path())), "{status:#}");
}

#[test]
fn repo_id_names_a_repository_its_root_commit_cannot() {
    // a clone shares its origin's root commit: `repo_id` keeps their records apart
    let shared = tempfile::tempdir().unwrap();
    let ledger = shared.path().join("ledger");
    let a = tempfile::tempdir().unwrap();
    repo(a.path(), "# a\n", &ledger, &[]);
    let b = tempfile::tempdir().unwrap();
    let clone = b.path().join("clone");
    git(b.path(), &["clone", "-q", a.path().to_str().unwrap(), "clone"]);
    let toml = std::fs::read_to_string(clone.join("andon.toml")).unwrap();
    std::fs::write(clone.join("andon.toml"), format!("repo_id = \"the-clone\"\n{toml}")).unwrap();
    write_files(&clone, &[("catalog/tax.py", "def tax(x):\n    # FIXME: only in the clone\n    return x\n")]);
    commit_all(&clone);
    for d in [a.path(), clone.as_path()] {
        assert_eq!(run(&["loop", "-q"], d).status.code(), Some(0));
        assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
    }
    assert!(ledger.join("the-clone/ledger.jsonl").is_file());
    assert!(!gap_paths(a.path()).contains(&"catalog/tax.py".to_string()));
    assert!(gap_paths(&clone).contains(&"catalog/tax.py".to_string()));
    // a malformed repo_id is a configuration error with its line
    std::fs::write(clone.join("andon.toml"), format!("repo_id = \"../up\"\n{toml}")).unwrap();
    let o = run(&["status"], &clone);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("andon.toml:1"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_log_left_in_the_shared_directory_never_takes_over_a_repository_with_an_identity() {
    let shared = tempfile::tempdir().unwrap();
    let ledger = shared.path().join("ledger");
    let a = tempfile::tempdir().unwrap();
    repo(a.path(), "# a\n", &ledger, &[]);
    assert_eq!(run(&["loop", "-q"], a.path()).status.code(), Some(0));
    // a repository with no commit has no identity: its log is the shared directory's own
    let c = tempfile::tempdir().unwrap();
    write_files(
        c.path(),
        &[
            ("andon.toml", format!("ledger_dir = \"{}\"\n", ledger.display()).as_str()),
            ("catalog/__init__.py", "from catalog.tax import tax\n"),
            ("catalog/tax.py", "def tax(x):\n    # FIXME: only in c\n    return x\n"),
        ],
    );
    git(c.path(), &["init", "-q"]);
    assert_eq!(run(&["loop", "-q"], c.path()).status.code(), Some(0));
    assert!(ledger.join("ledger.jsonl").is_file());
    // the repository with an identity keeps its own log
    assert_eq!(run(&["loop", "-q"], a.path()).status.code(), Some(0));
    assert!(!gap_paths(a.path()).contains(&"catalog/tax.py".to_string()), "{:?}", gap_paths(a.path()));
    assert_eq!(run(&["ledger", "check"], a.path()).status.code(), Some(0));
}

#[test]
fn a_link_inside_the_repository_to_a_shared_directory_is_keyed_too() {
    let shared = tempfile::tempdir().unwrap();
    let a = tempfile::tempdir().unwrap();
    repo(a.path(), "# a\n", Path::new("led"), &[(".gitignore", "analysis/\nled\n")]);
    std::os::unix::fs::symlink(shared.path(), a.path().join("led")).unwrap();
    assert_eq!(run(&["loop", "-q"], a.path()).status.code(), Some(0));
    assert!(!shared.path().join("ledger.jsonl").exists(), "the log is keyed, not in the shared directory itself");
    let keyed: Vec<_> = std::fs::read_dir(shared.path())
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("ledger.jsonl").is_file())
        .collect();
    assert_eq!(keyed.len(), 1);
}
