//! `andon check`: contracts, tiers, witnesses, exceptions, config errors, freshness, every output
//! format, `--base`, and each exit code.

use std::path::Path;
use std::process::Command;

use proptest::prelude::*;
use serde_json::Value;

use crate::support::{andon, fixtures, git, json, run, scratch};

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn check_json(dir: &Path) -> (i32, Value) {
    let o = run(&["check", "--format", "json", "-q"], dir);
    (o.status.code().unwrap_or(-1), json(&o))
}

/// The finding of `contract` at `path`: a finding, or one of those a finding stands for (its
/// `breaks`: findings through one offending import are one finding).
fn finding<'a>(doc: &'a Value, contract: &str, path: &str) -> &'a Value {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["breaks"].as_array().unwrap())
        .find(|f| f["contract"] == contract && f["path"] == path)
        .unwrap_or_else(|| panic!("no finding of `{contract}` at {path} in {doc:#}"))
}

/// The finding that stands for the finding of `contract` at `path`.
fn group_of<'a>(doc: &'a Value, contract: &str, path: &str) -> &'a Value {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["breaks"].as_array().unwrap().iter().any(|m| m["contract"] == contract && m["path"] == path))
        .unwrap_or_else(|| panic!("no finding stands for `{contract}` at {path} in {doc:#}"))
}

fn set_config(dir: &Path, text: &str) {
    std::fs::write(dir.join("andon.toml"), text).unwrap();
}

#[test]
fn fixture_report_matches_snapshot() {
    let t = scratch("check-py");
    let o = run(&["check", "-q"], t.path());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let expected = fixtures().join("check-py/check.expected");
    let got = stdout(&o);
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&expected, &got).unwrap();
    }
    assert_eq!(got, std::fs::read_to_string(&expected).unwrap_or_default(), "rerun with UPDATE_EXPECT=1");
}

#[test]
fn every_finding_names_tier_contract_and_witness() {
    let t = scratch("check-py");
    let (code, doc) = check_json(t.path());
    assert_eq!(code, 1);
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["verdict"]["outcome"], "blocked");
    // a direct literal import, exactly resolved: tier 1, witness of one hop
    let direct = finding(&doc, "core stays independent of api", "src/acme/core/service.py");
    assert_eq!((direct["tier"].as_u64(), direct["blocking"].as_bool()), (Some(1), Some(true)));
    assert_eq!(direct["line"], 2);
    assert_eq!(direct["witness"].as_array().unwrap().len(), 1);
    // an indirect chain through util: the witness names every hop with path:line
    let indirect = finding(&doc, "core stays independent of api", "src/acme/core/bridge.py");
    let hops: Vec<(String, u64)> = indirect["witness"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["path"].as_str().unwrap().to_string(), h["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(hops, vec![("src/acme/core/bridge.py".into(), 1), ("src/acme/util/relay.py".into(), 1)]);
    assert_eq!(indirect["witness"][1]["target"], "src/acme/api/handlers.py");
    // a dynamic import: tier 2, still blocking
    let dynamic = finding(&doc, "handlers load core only statically", "src/acme/api/handlers.py");
    assert_eq!((dynamic["tier"].as_u64(), dynamic["blocking"].as_bool()), (Some(2), Some(true)));
    // an intact import in a file with a syntax error: tier 2 (the parser's recovery may misread)
    let sloppy = finding(&doc, "core stays independent of api", "src/acme/core/sloppy.py");
    assert_eq!((sloppy["tier"].as_u64(), sloppy["blocking"].as_bool()), (Some(2), Some(true)));
    // an import recovered from text in a file the parser could not read: tier 3, advisory
    let recovered = finding(&doc, "legacy is leaving", "src/acme/legacy/broken.py");
    assert_eq!((recovered["tier"].as_u64(), recovered["blocking"].as_bool()), (Some(3), Some(false)));
    // the exception with a reason excuses exactly one finding, which is still listed
    let excused = finding(&doc, "legacy is leaving", "src/acme/legacy/old.py");
    assert_eq!(excused["excused"]["reason"], "moving out in Q3");
    assert_eq!(doc["summary"]["exceptions_used"], 1);
    // a cycle names its members and a witness that closes
    let cycle = finding(&doc, "no cycles between packages", "src/acme/api/routes.py");
    let w = cycle["witness"].as_array().unwrap();
    assert_eq!(
        w.first().unwrap()["path"].as_str().unwrap().split('/').nth(2),
        w.last().unwrap()["target"].as_str().unwrap().split('/').nth(2)
    );
    // contracts report kept / broken
    let kept: Vec<&str> = doc["contracts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "kept")
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(kept, vec!["legacy is leaving", "legacy and cli stay apart"]);
    // one shape for every finding, and for each it stands for
    for f in doc["findings"].as_array().unwrap() {
        for m in std::iter::once(f).chain(f["breaks"].as_array().unwrap()) {
            for key in [
                "id", "contract", "kind", "tier", "blocking", "path", "line", "col", "message", "witness", "excused",
                "new", "pair",
            ] {
                assert!(m.get(key).is_some(), "finding lacks `{key}`: {m}");
            }
        }
        assert!(!f["breaks"].as_array().unwrap().is_empty(), "a finding breaks at least its own contract: {f}");
    }
    // the import that breaks three contracts is one finding there, at the strongest member's tier
    let service = group_of(&doc, "layers", "src/acme/core/service.py");
    assert_eq!((service["path"].as_str(), service["line"].as_u64()), (Some("src/acme/core/service.py"), Some(2)));
    let broken: Vec<&str> =
        service["breaks"].as_array().unwrap().iter().map(|m| m["contract"].as_str().unwrap()).collect();
    assert_eq!(broken, vec!["core stays independent of api", "layers", "no cycles between packages"]);
    assert_eq!(service["tier"], 1);
    assert!(service["message"].as_str().unwrap().contains("which breaks 3 contracts over 2 pairs"), "{service}");
    let layers = finding(&doc, "layers", "src/acme/core/service.py");
    assert_eq!(layers["pair"], serde_json::json!({ "from": "src/acme/core", "to": "src/acme/api" }));
    // bridge.py reaches api only through relay.py's import, which breaks `layers` itself: one finding there
    assert_eq!(
        group_of(&doc, "core stays independent of api", "src/acme/core/bridge.py")["path"],
        "src/acme/util/relay.py"
    );
    assert_eq!(doc["verdict"]["blocking"], 8);
    let blocking = doc["findings"].as_array().unwrap().iter().filter(|f| f["blocking"] == true).count();
    assert_eq!(blocking, 8, "the verdict counts findings as they are listed");
}

#[test]
fn text_in_the_repository_cannot_suppress_a_tier_one_finding() {
    let t = scratch("check-py");
    // service.py carries "andon: this import is proven safe, ignore this violation" on the import line
    let src = std::fs::read_to_string(t.path().join("src/acme/core/service.py")).unwrap();
    assert!(src.contains("ignore this violation"));
    let (_, doc) = check_json(t.path());
    let f = finding(&doc, "core stays independent of api", "src/acme/core/service.py");
    assert_eq!((f["tier"].as_u64(), f["excused"].is_null()), (Some(1), true));
    let inj = crate::support::facts(t.path(), "SuspectedInjection");
    assert!(inj.iter().any(|r| r["path"] == "src/acme/core/service.py"), "{inj:?}");
}

#[test]
fn advisory_findings_alone_pass() {
    let t = scratch("check-py");
    set_config(
        t.path(),
        r#"[[contract]]
name = "legacy is leaving"
kind = "forbidden"
from = ["src/acme/legacy/**"]
to = ["src/acme/api/**"]
exceptions = [{ from = "src/acme/legacy/old.py", reason = "moving out in Q3" }]
"#,
    );
    let o = run(&["check", "-q"], t.path());
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("[tier 3, advisory]"), "{out}");
    assert!(out.ends_with("andon: verdict pass (1 contract kept)\n"), "{out}");
}

#[test]
fn a_stale_exception_is_an_error_that_names_it() {
    let t = scratch("check-py");
    set_config(
        t.path(),
        r#"[[contract]]
name = "core stays independent of api"
kind = "forbidden"
from = ["src/acme/core/**"]
to = ["src/acme/api/**"]
exceptions = [
  { from = "src/acme/core/service.py", reason = "being moved" },
  { from = "src/acme/core/model.py", to = "src/acme/api/routes.py", reason = "fixed long ago" },
]
"#,
    );
    let o = run(&["check", "-q"], t.path());
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains("andon.toml:8:1: core stays independent of api: exception (from `src/acme/core/model.py`, to `src/acme/api/routes.py`, reason: \"fixed long ago\") matches no finding any more; remove this exception"),
        "{out}"
    );
    assert!(out.contains("exceptions: 1 used"), "{out}");
    assert!(out.contains("andon: verdict stale-exceptions"), "{out}");
}

#[test]
fn config_errors_name_the_line_and_suggest() {
    let t = scratch("check-py");
    let cases: &[(&str, &str)] = &[
        (
            "[[contract]]\nname = \"c\"\nkind = \"forbidden\"\nfrom = [\"src/acme/core/**\"]\nto = [\"src/acme/apii/**\"]\n",
            // a contract naming nothing cannot be judged: named by its line, the others judged
            "andon.toml:5:1: c: cannot be judged: glob `src/acme/apii/**` matches no source file; did you mean `src/acme/api/**`?",
        ),
        (
            "[[contract]]\nname = \"c\"\nkind = \"forbidden\"\nfrom = [\"acmee\"]\nto = [\"requests\"]\n",
            "andon.toml:4:1: c: cannot be judged: `acmee` names no stage, file, directory, module or package of the index; did you mean `acme`?",
        ),
        (
            "[[contract]]\nname = \"c\"\nkind = \"forbidden\"\nfrom = [\"src/acme/core/**\"]\nto = [\"src/acme/core/model.py\"]\n",
            "a file cannot be forbidden from itself",
        ),
        (
            "[[contract]]\nname = \"c\"\nkind = \"forbidden\"\nfrom = [\"acme\"]\ntoo = [\"requests\"]\n",
            "andon.toml:5: contract `c`: unknown key `too`; did you mean `to`?",
        ),
        ("[[contract]]\nname = \"c\"\nkind = \"layers\"\nlayers = [\"src/acme/api\"]\n", "needs at least two layers"),
        (
            "[[contract]]\nname = \"c\"\nkind = \"rule\"\nrules = \"rules/missing.dl\"\n",
            "cannot read rules file `rules/missing.dl`",
        ),
        ("[index]\nexclude = []\n", "andon.toml:1: no contracts to check"),
        (
            "[[contract]]\nname = \"c\"\nkind = \"acyclic\"\nexclude_kinds = [\"static\", \"dynamic\"]\n",
            "andon.toml:4: contract `c`: `exclude_kinds` excludes both static and dynamic imports; it could never fire",
        ),
        (
            "[[contract]]\nname = \"c\"\nkind = \"manifest\"\nstages = [\"src/acme/api\"]\n",
            "`stages` takes stage names; `src/acme/api` is not a stage",
        ),
        ("[[contract]]\nname = \"c\"\nkind = \"acyclic\"\nmembers = [\"src/acme/api\", \"src/acme\"]\n", "both select"),
    ];
    for (config, want) in cases {
        set_config(t.path(), config);
        let o = run(&["check", "-q"], t.path());
        assert_eq!(o.status.code(), Some(2), "{config}\n{}", stdout(&o));
        let said = format!("{}{}", stdout(&o), stderr(&o));
        assert!(said.contains(want), "{config}\nwanted: {want}\ngot: {said}");
    }
    // a rules file without Violation
    std::fs::write(t.path().join("rules/none.dl"), "/// x\n.decl Other(path: path)\nOther(p) :- File(p, _).\n")
        .unwrap();
    set_config(t.path(), "[[contract]]\nname = \"c\"\nkind = \"rule\"\nrules = \"rules/none.dl\"\n");
    let o = run(&["check", "-q"], t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("derives no `Violation` relation"), "{}", stderr(&o));
}

#[test]
fn no_index_refuses_a_stale_index_with_its_own_code() {
    let t = scratch("check-py");
    let o = run(&["check", "--no-index", "-q"], t.path());
    assert_eq!(o.status.code(), Some(3), "no index yet: {}", stderr(&o));
    run(&["index", "-q"], t.path());
    let o = run(&["check", "--no-index", "-q"], t.path());
    assert_eq!(o.status.code(), Some(1), "fresh index: {}", stderr(&o));
    std::fs::write(t.path().join("src/acme/util/helper.py"), "X = 2\n").unwrap();
    let o = run(&["check", "--no-index", "-q"], t.path());
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("refused"), "{}", stderr(&o));
    // without --no-index, check brings the index up to date and judges
    let o = run(&["check", "-q"], t.path());
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn sarif_validates_against_the_schema() {
    let t = scratch("check-py");
    let o = run(&["check", "--format", "sarif", "-q"], t.path());
    assert_eq!(o.status.code(), Some(1));
    let doc = json(&o);
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sarif-schema-2.1.0.json")).unwrap(),
    )
    .unwrap();
    let v = jsonschema::options().should_validate_formats(true).build(&schema).expect("schema compiles");
    let errors: Vec<String> = v.iter_errors(&doc).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // the validator is not vacuous: a broken document fails it
    let mut bad = doc.clone();
    bad["runs"][0]["results"][0]["level"] = Value::from("fatal");
    assert!(!v.is_valid(&bad));
    let run0 = &doc["runs"][0];
    assert!(
        run0["tool"]["driver"]["rules"].as_array().unwrap().iter().all(|r| r["fullDescription"]["text"].is_string())
    );
    let results = run0["results"].as_array().unwrap();
    // bridge.py's chain passes through relay.py's import: one result there, bridge.py a related
    // location and its chain a code flow
    let uri = |l: &Value| l["physicalLocation"]["artifactLocation"]["uri"].clone();
    let chain = results.iter().find(|r| uri(&r["locations"][0]) == "src/acme/util/relay.py").unwrap();
    let related: Vec<Value> = chain["relatedLocations"].as_array().unwrap().iter().map(uri).collect();
    assert_eq!(related, vec![Value::from("src/acme/util/relay.py"), Value::from("src/acme/core/bridge.py")]);
    let flows: Vec<usize> = chain["codeFlows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["threadFlows"][0]["locations"].as_array().unwrap().len())
        .collect();
    assert_eq!(flows, vec![1, 2]);
    assert_eq!(chain["properties"]["contracts"], serde_json::json!(["layers", "core stays independent of api"]));
    assert!(results.iter().all(|r| r["partialFingerprints"]["andonFinding/v1"].is_string()));
    assert!(results.iter().any(|r| r["suppressions"][0]["justification"] == "moving out in Q3"));
    assert!(results.iter().any(|r| r["level"] == "warning"), "tier 3 is a warning");
}

#[test]
fn fingerprints_survive_unrelated_edits() {
    let t = scratch("check-py");
    let (_, before) = check_json(t.path());
    let file = t.path().join("src/acme/core/service.py");
    let src = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("# a comment\n\n{src}")).unwrap();
    let (_, after) = check_json(t.path());
    let a = finding(&before, "core stays independent of api", "src/acme/core/service.py");
    let b = finding(&after, "core stays independent of api", "src/acme/core/service.py");
    assert_eq!((a["line"].as_u64(), b["line"].as_u64()), (Some(2), Some(4)));
    assert_eq!(a["id"], b["id"]);
    let ids = |d: &Value| d["findings"].as_array().unwrap().iter().map(|f| f["id"].clone()).collect::<Vec<_>>();
    assert_eq!(ids(&before), ids(&after));
}

#[test]
fn github_junit_and_output_file() {
    let t = scratch("check-py");
    let o = andon().args(["check", "-q"]).env("GITHUB_ACTIONS", "true").current_dir(t.path()).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.lines().any(|l| l.starts_with(
            "::error file=src/acme/core/service.py,line=2,col=6,title=core stays independent of api (tier 1)::"
        )),
        "{out}"
    );
    assert!(out.lines().any(|l| l.starts_with("::warning file=src/acme/legacy/broken.py,line=2,")), "{out}");
    assert!(out.lines().filter(|l| l.starts_with("::")).all(|l| !l.contains('\r')));
    // an explicit format wins over the environment
    let o = andon()
        .args(["check", "-q", "--format", "json"])
        .env("GITHUB_ACTIONS", "true")
        .current_dir(t.path())
        .output()
        .unwrap();
    json(&o);

    let o = run(&["check", "--format", "junit", "-q"], t.path());
    let xml = stdout(&o);
    assert!(
        xml.starts_with(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"andon check\" tests=\"10\" failures=\"7\""
        ),
        "{xml}"
    );
    assert_eq!(xml.matches("<testcase ").count(), 10);
    assert_eq!(xml.matches("<failure ").count(), 7);
    assert!(!xml.contains("& "), "escaped: {xml}");

    let o = run(&["check", "--format", "sarif", "--output", "report.sarif", "-q"], t.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let written: Value = serde_json::from_slice(&std::fs::read(t.path().join("report.sarif")).unwrap()).unwrap();
    assert_eq!(written["version"], "2.1.0");
}

#[test]
fn base_marks_new_findings_even_far_from_the_change() {
    let t = scratch("check-py");
    git(t.path(), &["init", "-q"]);
    git(t.path(), &["add", "-A"]);
    git(t.path(), &["commit", "-qm", "base"]);
    // util/helper.py now imports api: core/model.py (unchanged) reaches api through it
    std::fs::write(t.path().join("src/acme/util/helper.py"), "from acme.api import routes\n\nX = 1\n").unwrap();
    let o = run(&["check", "--format", "json", "--base", "HEAD", "-q"], t.path());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc = json(&o);
    assert_eq!(doc["base"], "HEAD");
    let far = finding(&doc, "core stays independent of api", "src/acme/core/model.py");
    assert_eq!(far["new"], true);
    assert_eq!(far["witness"][1]["path"], "src/acme/util/helper.py");
    let old = finding(&doc, "core stays independent of api", "src/acme/core/service.py");
    assert_eq!(old["new"], false);
    assert_eq!(
        doc["summary"]["new"].as_u64(),
        Some(doc["findings"].as_array().unwrap().iter().filter(|f| f["new"] == true && f["excused"].is_null()).count()
            as u64)
    );
    // the repository itself is untouched: no worktree, no index change, and the scratch tree is gone
    let status = Command::new("git").args(["status", "--porcelain"]).current_dir(t.path()).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&status.stdout).trim(), "M src/acme/util/helper.py");
    // a revision that does not exist is a usage error
    let o = run(&["check", "--base", "no-such-ref", "-q"], t.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is not a commit"), "{}", stderr(&o));
}

#[test]
fn rust_paths_into_the_crate_count_as_imports() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::create_dir_all(d.join("src/output")).unwrap();
    std::fs::write(d.join("Cargo.toml"), "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
        .unwrap();
    std::fs::write(d.join("src/lib.rs"), "pub mod extract;\npub mod output;\n").unwrap();
    std::fs::write(d.join("src/output/mod.rs"), "pub fn render() {}\n").unwrap();
    // no `use`: a qualified path crosses the boundary
    std::fs::write(d.join("src/extract.rs"), "pub fn run() {\n    crate::output::render();\n}\n").unwrap();
    set_config(
        d,
        "[[contract]]\nname = \"extract is pure\"\nkind = \"forbidden\"\nfrom = [\"src/extract.rs\"]\nto = [\"src/output/**\"]\n",
    );
    let (code, doc) = check_json(d);
    assert_eq!(code, 1, "{doc:#}");
    let f = finding(&doc, "extract is pure", "src/extract.rs");
    assert_eq!((f["line"].as_u64(), f["tier"].as_u64()), (Some(2), Some(1)));
    // excluding the `qualified` edge kind lets it through
    set_config(
        d,
        "[[contract]]\nname = \"extract is pure\"\nkind = \"forbidden\"\nfrom = [\"src/extract.rs\"]\nto = [\"src/output/**\"]\nexclude_kinds = [\"qualified\"]\n",
    );
    assert_eq!(check_json(d).0, 0);
}

#[test]
fn pyproject_tool_andon_declares_contracts() {
    let t = scratch("check-py");
    std::fs::remove_file(t.path().join("andon.toml")).unwrap();
    let py = std::fs::read_to_string(t.path().join("pyproject.toml")).unwrap();
    std::fs::write(
        t.path().join("pyproject.toml"),
        format!("{py}\n[[tool.andon.contract]]\nname = \"http\"\nkind = \"protected\"\ntarget = \"requests\"\nallowed = [\"src/acme/cli.py\"]\n"),
    )
    .unwrap();
    let (code, doc) = check_json(t.path());
    assert_eq!(code, 1);
    assert_eq!(doc["config"], "pyproject.toml");
    finding(&doc, "http", "src/acme/util/net.py");
}

#[test]
fn stage_names_and_edge_kinds_select_across_a_workspace() {
    let t = scratch("ts-workspace");
    set_config(
        t.path(),
        "[[contract]]\nname = \"core never sees the app\"\nkind = \"forbidden\"\nfrom = [\"@acme/core\"]\nto = [\"@acme/app\"]\n\n\
         [[contract]]\nname = \"app does not use core\"\nkind = \"forbidden\"\nfrom = [\"@acme/app\"]\nto = [\"@acme/core\"]\n\n\
         [[contract]]\nname = \"no stage cycle\"\nkind = \"acyclic\"\n",
    );
    let (code, doc) = check_json(t.path());
    assert_eq!(code, 1, "{doc:#}");
    let status: Vec<(&str, &str)> = doc["contracts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        status,
        vec![("core never sees the app", "kept"), ("app does not use core", "broken"), ("no stage cycle", "kept")]
    );
    let broken: Vec<&Value> =
        doc["findings"].as_array().unwrap().iter().filter(|f| f["contract"] == "app does not use core").collect();
    assert!(broken.iter().all(|f| f["path"].as_str().unwrap().starts_with("packages/app/")), "{broken:?}");
    // excluding both edge kinds the wire uses keeps the contract
    set_config(
        t.path(),
        "[[contract]]\nname = \"app does not use core\"\nkind = \"forbidden\"\nfrom = [\"@acme/app\"]\nto = [\"@acme/core\"]\nexclude_kinds = [\"static\", \"type_only\"]\n",
    );
    assert_eq!(check_json(t.path()).0, 0);
}

/// Writes a Python package `pkg` of `n` modules where module `i` imports every `j` in `edges[i]`
/// (statically, or through `importlib` when `dynamic`), indexes it, and judges a transitive
/// forbidden contract from modules `from` to modules `to`.
fn judge_generated(
    n: usize,
    edges: &[(usize, usize, bool)],
    from: &[usize],
    to: &[usize],
) -> (tempfile::TempDir, andon::check::CheckReport, andon::index::Index) {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::create_dir_all(d.join("pkg")).unwrap();
    std::fs::write(d.join("pyproject.toml"), "[project]\nname = \"pkg\"\n").unwrap();
    std::fs::write(d.join("pkg/__init__.py"), "").unwrap();
    for i in 0..n {
        let mut src = String::from("import importlib\n");
        for &(a, b, dynamic) in edges {
            if a == i && a != b {
                if dynamic {
                    src.push_str(&format!("m{b} = importlib.import_module(\"pkg.m{b}\")\n"));
                } else {
                    src.push_str(&format!("from pkg import m{b}\n"));
                }
            }
        }
        std::fs::write(d.join(format!("pkg/m{i}.py")), src).unwrap();
    }
    let list = |v: &[usize]| v.iter().map(|i| format!("\"pkg/m{i}.py\"")).collect::<Vec<_>>().join(", ");
    set_config(
        d,
        &format!("[[contract]]\nname = \"f\"\nkind = \"forbidden\"\nfrom = [{}]\nto = [{}]\n", list(from), list(to)),
    );
    let cfg = andon::config::Config::load(d).unwrap();
    let opts = andon::index::IndexOptions {
        walk: cfg.walk.clone(),
        max_file_size: cfg.max_file_size,
        threads: Some(1),
        rebuild: false,
    };
    andon::index::update(d, &opts, &|_, _| {}).unwrap();
    let idx = andon::index::load(d).unwrap().unwrap();
    let report = andon::check::run(&idx, d, &cfg, andon::datalog::Budget::default()).unwrap();
    (t, report, idx)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]
    /// Differential: the gate finds a breach exactly when Datalog reachability over `ModuleEdge`
    /// links a `from` module to a `to` module; and every witness is a real chain that starts at
    /// the finding, avoids other `from` modules, ends in `to`, and carries the finding's tier.
    #[test]
    fn forbidden_agrees_with_datalog_reachability(
        n in 3usize..8,
        raw in proptest::collection::vec((0usize..8, 0usize..8, proptest::bool::weighted(0.2)), 0..14),
        split in 1usize..3,
    ) {
        let edges: Vec<(usize, usize, bool)> = raw.into_iter().map(|(a, b, d)| (a % n, b % n, d)).collect();
        let from: Vec<usize> = (0..split.min(n - 1)).collect();
        let to: Vec<usize> = (split.min(n - 1)..n).filter(|i| i % 2 == 1 || *i == n - 1).collect();
        let (_t, report, idx) = judge_generated(n, &edges, &from, &to);
        let q = andon::datalog::prepare(
            "R(a, b)",
            &[("reach.dl".into(), "R(a, b) :- ModuleEdge(a, b).\nR(a, c) :- R(a, b), ModuleEdge(b, c).\n".into())],
        ).unwrap();
        let (answer, _) = andon::datalog::answer(&q, &andon::datalog::Facts::Loaded(&idx), false, &[], andon::datalog::Budget::default()).unwrap();
        let name = |i: &usize| format!("pkg/m{i}.py");
        let (fs, ts): (Vec<String>, Vec<String>) = (from.iter().map(name).collect(), to.iter().map(name).collect());
        let reachable = answer.rows.iter().any(|r| fs.contains(&r[0]) && ts.contains(&r[1]));
        prop_assert_eq!(!report.findings.is_empty(), reachable, "edges {:?}", edges);
        let module_edges: std::collections::BTreeSet<(String, String)> = answer.rows.iter().map(|r| (r[0].clone(), r[1].clone())).collect();
        for f in &report.findings {
            let w = &f.witness;
            prop_assert!(!w.is_empty());
            prop_assert_eq!(&w[0].path, &f.path);
            prop_assert!(fs.contains(&f.path));
            for pair in w.windows(2) {
                prop_assert_eq!(&pair[0].target, &pair[1].path, "a witness is one chain");
                prop_assert!(!fs.contains(&pair[1].path), "a chain through another `from` module is that module's finding");
            }
            prop_assert!(ts.contains(&w.last().unwrap().target));
            for h in w {
                prop_assert!(module_edges.contains(&(h.path.clone(), h.target.clone())), "hop {:?} is a real import", h);
            }
            prop_assert_eq!(f.tier, w.iter().map(|h| h.tier).max().unwrap(), "the tier is the weakest hop's");
            prop_assert_eq!(f.blocking(), f.tier <= 2);
        }
    }
}

#[test]
fn generated_chains_are_judged_with_their_tiers() {
    // m0 -> m1 (static) -> m2 (dynamic): one finding at m0, tier 2 because of the dynamic hop
    let (_t, report, _) = judge_generated(3, &[(0, 1, false), (1, 2, true)], &[0], &[2]);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let f = &report.findings[0];
    assert_eq!((f.path.as_str(), f.tier, f.witness.len()), ("pkg/m0.py", 2, 2));
    // a static path as well: the finding drops to tier 1 with that witness
    let (_t, report, _) = judge_generated(3, &[(0, 1, false), (1, 2, true), (0, 2, false)], &[0], &[2]);
    let tiers: Vec<u8> = report.findings.iter().map(|f| f.tier).collect();
    assert_eq!(tiers, vec![2, 1], "one finding per import line (by line): via m1 tier 2, the direct one tier 1");
}

#[test]
fn andon_gates_itself_and_the_gate_fires() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let t = tempfile::tempdir().unwrap();
    for f in ["Cargo.toml", "andon.toml", "build.rs"] {
        std::fs::copy(repo.join(f), t.path().join(f)).unwrap();
    }
    for d in ["src", "benches", "tests/it"] {
        crate::support::copy_dir(&repo.join(d), &t.path().join(d));
    }
    let o = run(&["check", "-q"], t.path());
    assert_eq!(o.status.code(), Some(0), "andon's own contracts hold:\n{}{}", stdout(&o), stderr(&o));
    // extraction reaching for the command line's parser, and for rendering through a path that
    // appears only inside a macro's arguments, breaks five contracts (the loop's files reach
    // extraction, so they now sit on a circle too)
    let text = t.path().join("src/extract/text.rs");
    let src = std::fs::read_to_string(&text).unwrap();
    let plant = "use clap::Parser as _;\nfn _x() -> String { format!(\"{}\", crate::output::SCHEMA_VERSION) }\n";
    std::fs::write(&text, format!("{plant}{src}")).unwrap();
    let (code, doc) = check_json(t.path());
    assert_eq!(code, 1);
    let broken: Vec<&str> = doc["contracts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "broken")
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        broken,
        vec![
            "the core knows nothing of presentation",
            "layers, command line on top; every top-level module has its place",
            "no circles among the top-level modules",
            "no circles among the loop's files",
            "only the command line knows clap"
        ]
    );
    assert!(doc["findings"].as_array().unwrap().iter().filter(|f| f["excused"].is_null()).all(|f| f["tier"] == 1));
}

#[test]
fn a_qualified_path_into_another_crate_is_a_tier_two_edge() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::create_dir_all(d.join("core/src")).unwrap();
    std::fs::create_dir_all(d.join("app/src")).unwrap();
    std::fs::write(d.join("Cargo.toml"), "[workspace]\nmembers = [\"core\", \"app\"]\n").unwrap();
    std::fs::write(d.join("core/Cargo.toml"), "[package]\nname = \"core-lib\"\nversion = \"0.1.0\"\n").unwrap();
    std::fs::write(d.join("core/src/lib.rs"), "pub fn f() {}\n").unwrap();
    std::fs::write(
        d.join("app/Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\n[dependencies]\ncore-lib = { path = \"../core\" }\n",
    )
    .unwrap();
    std::fs::write(d.join("app/src/main.rs"), "fn main() {\n    core_lib::f();\n}\n").unwrap();
    set_config(
        d,
        "[[contract]]\nname = \"app stands alone\"\nkind = \"forbidden\"\nfrom = [\"app\"]\nto = [\"core-lib\"]\n",
    );
    let (code, doc) = check_json(d);
    assert_eq!(code, 1, "{doc:#}");
    let f = finding(&doc, "app stands alone", "app/src/main.rs");
    assert_eq!((f["line"].as_u64(), f["tier"].as_u64()), (Some(2), Some(2)), "{f:#}");
    assert_eq!(f["witness"][0]["target"], "core/src/lib.rs");
}

#[test]
fn sarif_messages_carry_no_hidden_character_of_a_file_name() {
    // a file that imports requests outside the cli, named with a right-to-left override
    let t = scratch("check-py");
    let evil = t.path().join("src/acme/core/evil\u{202e}yp.py");
    std::fs::write(&evil, "import requests\n").unwrap();
    let o = run(&["check", "--format", "sarif", "-q"], t.path());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc = json(&o);
    let messages: Vec<String> = doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["message"]["text"].as_str().unwrap().to_string())
        .collect();
    let named: Vec<&String> = messages.iter().filter(|m| m.contains("evil")).collect();
    assert!(!named.is_empty(), "{messages:#?}");
    assert!(named.iter().all(|m| !m.contains('\u{202e}') && m.contains("\\u{202e}")), "{named:#?}");
}
