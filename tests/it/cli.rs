//! The real binary: exit codes, JSON shapes, the verdict line, bad input and the index lifecycle.

use std::fs;

use crate::support::{facts, json, run, scratch};

#[test]
fn index_json_names_stages_and_counts_files() {
    let t = scratch("py-src-layout");
    let out = run(&["index", "--format", "json", "--quiet"], t.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["files"]["by_language"]["python"], 6);
    assert_eq!(v["files"]["parsed"], 7, "six sources and one manifest parsed");
    let stages: Vec<(String, String)> = v["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap().to_string(), s["root"].as_str().unwrap().to_string()))
        .collect();
    assert!(stages.contains(&("acme_core".into(), "src/acme_core".into())), "{stages:?}");
    assert!(stages.contains(&("acme_api".into(), "src/acme_api".into())), "{stages:?}");
    assert_eq!(v["verdict"]["outcome"], "indexed");
}

#[test]
fn second_run_parses_nothing_and_one_edit_parses_one_file() {
    let t = scratch("py-src-layout");
    let first = json(&run(&["index", "--format", "json", "--quiet"], t.path()));
    assert_eq!(first["unchanged"], false);
    let again = json(&run(&["index", "--format", "json", "--quiet"], t.path()));
    assert_eq!(again["files"]["parsed"], 0);
    assert_eq!(again["files"]["rehashed"], 0, "an unchanged file is never re-read");
    assert_eq!(again["unchanged"], true);
    let f = t.path().join("src/acme_api/helpers.py");
    let mut text = fs::read_to_string(&f).unwrap();
    text.push_str("\n\ndef added():\n    return 1\n");
    fs::write(&f, text).unwrap();
    let third = json(&run(&["index", "--format", "json", "--quiet"], t.path()));
    assert_eq!(third["files"]["parsed"], 1);
    let defs = facts(t.path(), "Defines");
    assert!(defs.iter().any(|d| d["name"] == "added" && d["path"] == "src/acme_api/helpers.py" && d["line"] == 8));
}

#[test]
fn check_exits_3_and_names_what_changed() {
    let t = scratch("py-src-layout");
    let missing = run(&["index", "--check"], t.path());
    assert_eq!(missing.status.code(), Some(3), "no index yet is stale");
    assert!(run(&["index", "--quiet"], t.path()).status.success());
    let fresh = run(&["index", "--check"], t.path());
    assert_eq!(fresh.status.code(), Some(0), "{}", String::from_utf8_lossy(&fresh.stdout));
    fs::write(t.path().join("src/acme_core/new.py"), "X = 1\n").unwrap();
    fs::write(t.path().join("src/acme_core/models.py"), "changed = True\n").unwrap();
    fs::remove_file(t.path().join("tests/test_views.py")).unwrap();
    let out = run(&["index", "--check", "--format", "json"], t.path());
    assert_eq!(out.status.code(), Some(3));
    let v = json(&out);
    assert_eq!(v["fresh"], false);
    let changed: Vec<(String, String)> = v["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["path"].as_str().unwrap().into(), c["change"].as_str().unwrap().into()))
        .collect();
    assert_eq!(
        changed,
        vec![
            ("src/acme_core/models.py".into(), "modified".into()),
            ("src/acme_core/new.py".into(), "added".into()),
            ("tests/test_views.py".into(), "deleted".into()),
        ]
    );
    // touching a file without changing it is not a change
    assert!(run(&["index", "--quiet"], t.path()).status.success());
    let f = t.path().join("src/acme_core/new.py");
    fs::write(&f, "X = 1\n").unwrap();
    assert_eq!(run(&["index", "--check"], t.path()).status.code(), Some(0));
}

#[test]
fn a_path_that_does_not_exist_exits_2() {
    let t = tempfile::tempdir().unwrap();
    let out = run(&["index", "no/such/dir"], t.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such directory"));
}

#[test]
fn usage_errors_exit_2() {
    let t = tempfile::tempdir().unwrap();
    assert_eq!(run(&["index", "--no-such-flag"], t.path()).status.code(), Some(2));
    let out = run(&["facts", "--relation", "Imprt"], t.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean `Import`"));
}

#[test]
fn an_empty_repo_is_one_empty_index() {
    let t = tempfile::tempdir().unwrap();
    let out = run(&["index", "--format", "json"], t.path());
    assert!(out.status.success());
    let v = json(&out);
    assert_eq!(v["files"]["total"], 0);
    assert_eq!(v["stages"].as_array().unwrap().len(), 0);
}

#[test]
fn text_output_ends_with_the_verdict_line() {
    let t = scratch("rs-workspace");
    let out = run(&["index"], t.path());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().last(), Some("andon: verdict indexed"));
    assert!(text.contains("acme-core"));
}

#[test]
fn a_malformed_config_names_file_line_and_the_nearest_key() {
    let t = scratch("py-src-layout");
    fs::write(t.path().join("andon.toml"), "[index]\nhiden = true\n").unwrap();
    let out = run(&["index"], t.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("andon.toml:2:") && err.contains("did you mean `index.hidden`"), "{err}");
    fs::write(t.path().join("andon.toml"), "[indx]\nhidden = true\n").unwrap();
    let out = run(&["index"], t.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("andon.toml:1:") && err.contains("did you mean `index`"), "{err}");
    fs::write(t.path().join("andon.toml"), "[index\n").unwrap();
    let out = run(&["index"], t.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("andon.toml:1:"));
}

#[test]
fn schema_lists_every_relation_with_its_doc_line() {
    let t = tempfile::tempdir().unwrap();
    let v = json(&run(&["facts", "--schema", "--format", "json"], t.path()));
    let rels = v["relations"].as_array().unwrap();
    for required in ["File", "Stage", "InStage", "Defines", "Import", "Resolves", "Marker"] {
        let r = rels.iter().find(|r| r["name"] == required).unwrap_or_else(|| panic!("{required} missing"));
        assert!(!r["doc"].as_str().unwrap().is_empty());
    }
}

#[test]
fn walking_skips_ignored_hidden_and_vendored_files_unless_asked() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    for (f, text) in [
        ("app.py", "import os\n"),
        ("node_modules/dep/index.js", "module.exports = 1;\n"),
        (".hidden/secret.py", "x = 1\n"),
        ("build_out/gen.py", "y = 2\n"),
        ("keep/kept.ts", "export const k = 1;\n"),
    ] {
        let path = p.join(f);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    // .gitignore is honoured without a git checkout
    fs::write(p.join(".gitignore"), "build_out/\n").unwrap();
    let paths = |args: &[&str]| -> Vec<String> {
        let mut a = vec!["facts", "--relation", "File", "--format", "json", "--quiet"];
        a.extend_from_slice(args);
        let out = run(&a, p);
        assert!(out.status.success());
        json(&out)["facts"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap().to_string()).collect()
    };

    assert_eq!(paths(&[]), vec!["app.py", "keep/kept.ts"]);
    let all = paths(&["--hidden", "--vendored", "--no-ignore"]);
    for f in [".hidden/secret.py", "build_out/gen.py", "node_modules/dep/index.js"] {
        assert!(all.contains(&f.to_string()), "{f} missing from {all:?}");
    }
    assert_eq!(paths(&["--exclude", "keep/**"]), vec!["app.py"]);
}

#[test]
fn bad_files_become_facts_and_diagnostics_never_failures() {
    let t = scratch("broken");
    let out = run(&["index", "--format", "json", "--quiet"], t.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out);
    let kinds: Vec<&str> = v["diagnostics"].as_array().unwrap().iter().map(|d| d["kind"].as_str().unwrap()).collect();
    for k in ["binary", "invalid-utf8", "manifest-error"] {
        assert!(kinds.contains(&k), "{k} not in {kinds:?}");
    }
    assert!(v["parse_errors"].as_u64().unwrap() >= 2);
    let skipped = facts(t.path(), "Skipped");
    assert!(skipped.iter().any(|s| s["path"] == "pkg/binary.py" && s["reason"] == "binary"));
    let errors = facts(t.path(), "ParseError");
    assert!(errors.iter().any(|e| e["path"] == "pkg/syntax.py" && e["line"] == 1));
    // imports after a syntax error are still found; the ones read from text are labelled
    let recovered = facts(t.path(), "ImportRecovered");
    assert!(recovered.iter().any(|r| r["path"] == "pkg/syntax.py" && r["spec"] == "sys" && r["line"] == 6));
    let res = facts(t.path(), "ImportResolution");
    assert!(res.iter().any(|r| r["path"] == "pkg/syntax.py" && r["line"] == 6 && r["confidence"] == "heuristic"));
    let merr = facts(t.path(), "ManifestError");
    assert!(merr.iter().any(|m| m["path"] == "package.json" && m["line"] == 3));
}

#[test]
fn files_over_the_size_limit_are_skipped_with_a_reason() {
    let t = scratch("py-src-layout");
    let out = run(&["index", "--format", "json", "--quiet", "--max-filesize", "100"], t.path());
    assert!(out.status.success());
    let skipped = facts(t.path(), "Skipped");
    // facts re-indexes with the default limit, so ask the index output itself
    let v = json(&out);
    assert!(v["files"]["skipped"].as_u64().unwrap() >= 1, "{v}");
    assert!(
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["kind"] == "too-large" && d["path"] == "src/acme_api/views.py")
    );
    assert!(skipped.iter().all(|s| s["reason"] != "too-large"), "the default limit parses them again");
}

#[cfg(unix)]
#[test]
fn symlink_loops_and_dangling_links_are_reported_not_fatal() {
    let t = scratch("py-src-layout");
    let p = t.path();
    std::os::unix::fs::symlink(p.join("src"), p.join("src/acme_core/loop")).unwrap();
    std::os::unix::fs::symlink(p.join("nowhere.py"), p.join("src/dangling.py")).unwrap();
    let out = run(&["index", "--follow", "--format", "json", "--quiet"], p);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out);
    let kinds: Vec<&str> = v["diagnostics"].as_array().unwrap().iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"symlink-loop"), "{kinds:?}");
    assert!(kinds.contains(&"unreadable"), "{kinds:?}");
    // without --follow, links are not walked at all
    let out = run(&["index", "--format", "json", "--quiet"], p);
    assert!(out.status.success());
}

#[test]
fn rust_targets_resolve_to_the_library_and_reexport_cycles_terminate() {
    let t = scratch("rs-targets");
    // a re-export cycle once recursed without end: the run must finish, well within a minute
    let mut child = crate::support::andon()
        .args(["index", "--quiet"])
        .current_dir(t.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("andon index did not finish on a re-export cycle");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(status.success());
    let res = facts(t.path(), "Resolves");
    let target = |path: &str, line: u64| -> Vec<(String, String)> {
        res.iter()
            .filter(|r| r["path"] == path && r["line"] == line)
            .map(|r| (r["target"].as_str().unwrap().to_string(), r["confidence"].as_str().unwrap().to_string()))
            .collect()
    };
    // an example and a binary import the crate's library by its lib name
    assert_eq!(target("examples/x.rs", 1), vec![("src/lib.rs".to_string(), "exact".to_string())]);
    // `pub use nested::deep::Deep as Shallow` is followed to the defining file
    assert_eq!(target("src/bin/tool.rs", 2), vec![("src/nested/deep.rs".to_string(), "exact".to_string())]);
    assert_eq!(target("tests/it.rs", 1), vec![("src/nested/deep.rs".to_string(), "exact".to_string())]);
    // the cycle resolves, but never as exact
    assert!(target("examples/x.rs", 2).iter().all(|(_, c)| c == "heuristic"));
    let stages = facts(t.path(), "Stage");
    assert_eq!(stages.len(), 1);
    assert_eq!(stages[0]["stage"], "guard-rs");
    assert_eq!(stages[0]["root"], ".", "the repository root is `.`");
}
