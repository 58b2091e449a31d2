//! One offending import, one finding: in a one-package project whose modules are layered, kept
//! independent and acyclic, a planted import yields exactly one blocking finding whatever number
//! of contracts, layers and pairs it breaks; exceptions excuse what they excused, go stale when
//! the import goes, and never hide a contract they were not written for.

use std::path::Path;

use serde_json::Value;

use crate::support::{json, run, write_files};

/// A package `shop` whose modules import down the layers cli > api > service > model > util, with
/// two reporting modules (kept apart from mail) and an unlisted helper they share.
fn shop(extra: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("pyproject.toml", "[project]\nname = \"shop\"\nversion = \"1\"\n"),
            ("shop/__init__.py", ""),
            ("shop/cli.py", "from shop import api\n\n\ndef main():\n    return api.serve()\n"),
            ("shop/api.py", "from shop import service\n\n\ndef serve():\n    return service.run()\n"),
            ("shop/service.py", "from shop import model\n\n\ndef run():\n    return model.load()\n"),
            ("shop/model.py", "from shop import util\n\n\ndef load():\n    return util.X\n"),
            ("shop/util.py", "X = 1\n"),
            ("shop/helper.py", "from shop import util\n\nY = util.X\n"),
            ("shop/reporting/daily.py", "from shop import helper\n\nD = helper.Y\n"),
            ("shop/reporting/weekly.py", "from shop import helper\n\nW = helper.Y\n"),
            ("shop/mail.py", "from shop import util\n\nM = util.X\n"),
        ],
    );
    let config = format!(
        r#"[[contract]]
name = "layers"
kind = "layers"
layers = ["path:shop/cli.py", "path:shop/api.py", "path:shop/service.py", "path:shop/model.py", "path:shop/util.py"]
{extra}
[[contract]]
name = "reporting stays apart from mail"
kind = "independence"
members = ["path:shop/reporting/**", "path:shop/mail.py"]

[[contract]]
name = "no cycle among modules"
kind = "acyclic"
members = ["path:shop/cli.py", "path:shop/api.py", "path:shop/service.py", "path:shop/model.py", "path:shop/util.py"]

[[contract]]
name = "imports resolve"
kind = "resolves"
"#
    );
    std::fs::write(t.path().join("andon.toml"), config).unwrap();
    t
}

fn check(d: &Path) -> (Option<i32>, Value) {
    let o = run(&["check", "--format", "json", "-q"], d);
    (o.status.code(), json(&o))
}

fn blocking(doc: &Value) -> Vec<&Value> {
    doc["findings"].as_array().unwrap().iter().filter(|f| f["blocking"] == true).collect()
}

fn contracts(f: &Value) -> Vec<&str> {
    let mut v: Vec<&str> = f["breaks"].as_array().unwrap().iter().map(|m| m["contract"].as_str().unwrap()).collect();
    v.dedup();
    v
}

#[test]
fn an_import_that_jumps_four_layers_and_closes_a_cycle_is_one_finding() {
    let t = shop("");
    let d = t.path();
    let (code, doc) = check(d);
    assert_eq!(code, Some(0), "{doc:#}");
    // the bottom layer imports the top one, by a name the top one does not define
    write_files(d, &[("shop/util.py", "from shop.cli import start\n\nX = 1\n")]);
    let (code, doc) = check(d);
    assert_eq!(code, Some(1), "{doc:#}");
    let found = blocking(&doc);
    assert_eq!(found.len(), 1, "{doc:#}");
    let f = found[0];
    assert_eq!((f["path"].as_str(), f["line"].as_u64(), f["tier"].as_u64()), (Some("shop/util.py"), Some(1), Some(1)));
    // the findings at the import first, then the cycle through it
    assert_eq!(contracts(f), ["layers", "imports resolve", "no cycle among modules"], "{f:#}");
    assert!(f["message"].as_str().unwrap().contains("which breaks 3 contracts"), "{f:#}");
    let layers = f["breaks"].as_array().unwrap().iter().find(|m| m["contract"] == "layers").unwrap();
    assert_eq!(layers["pair"], serde_json::json!({ "from": "path:shop/util.py", "to": "path:shop/cli.py" }));
    assert_eq!((doc["verdict"]["blocking"].as_u64(), doc["summary"]["blocking"].as_u64()), (Some(1), Some(1)));
    for c in doc["contracts"].as_array().unwrap().iter().filter(|c| c["status"] == "broken") {
        assert_eq!(c["blocking"], 1, "each contract it breaks counts the one finding: {c}");
    }
    // every format says one
    let o = run(&["check", "-q"], d);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("findings: 1 blocking"), "{text}");
    assert!(text.contains("    breaks layers: `path:shop/util.py` -> `path:shop/cli.py` [tier 1]"), "{text}");
    let o = run(&["check", "--format", "sarif", "-q"], d);
    let sarif = json(&o);
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.iter().filter(|r| r["properties"]["blocking"] == true).count(), 1, "{sarif:#}");
    assert_eq!(results[0]["relatedLocations"].as_array().unwrap().len(), 3);
    let o = run(&["check", "--format", "markdown", "-q"], d);
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(md.contains("1 blocking findings"), "{md}");
    assert_eq!(md.matches("\n- **").count(), 1, "{md}");
}

#[test]
fn an_import_several_importers_reach_a_member_through_is_one_finding_there() {
    let t = shop("");
    let d = t.path();
    // the helper both reporting modules import now imports mail: a chain of two hops from each
    write_files(d, &[("shop/helper.py", "from shop import util\nfrom shop import mail\n\nY = util.X\n")]);
    let (code, doc) = check(d);
    assert_eq!(code, Some(1), "{doc:#}");
    let found = blocking(&doc);
    assert_eq!(found.len(), 1, "{doc:#}");
    let f = found[0];
    assert_eq!((f["path"].as_str(), f["line"].as_u64()), (Some("shop/helper.py"), Some(2)), "{f:#}");
    let from: Vec<&str> = f["breaks"].as_array().unwrap().iter().map(|m| m["path"].as_str().unwrap()).collect();
    assert_eq!(from, ["shop/reporting/daily.py", "shop/reporting/weekly.py"]);
    assert!(f["message"].as_str().unwrap().contains("breaks 1 contract over 1 pair"), "{f:#}");
}

#[test]
fn an_exception_excuses_its_contract_only_and_goes_stale_with_its_import() {
    // model.py imported api before the contracts: excused for the layers, not for `forbidden`
    let t = shop(
        r#"exceptions = [{ from = "shop/model.py", to = "shop/api.py", reason = "moving in Q3" }]

[[contract]]
name = "model never reaches the api"
kind = "forbidden"
from = ["path:shop/model.py"]
to = ["path:shop/api.py"]
transitive = false
"#,
    );
    let d = t.path();
    let model = "from shop import util\nimport shop.api\n\n\ndef load():\n    return util.X\n";
    write_files(d, &[("shop/model.py", model)]);
    let acyclic = "members = [\"path:shop/cli.py\", \"path:shop/api.py\", \"path:shop/service.py\", \"path:shop/model.py\", \"path:shop/util.py\"]\n";
    let cfg = std::fs::read_to_string(d.join("andon.toml")).unwrap();
    let allowed = format!(
        "{acyclic}exceptions = [{{ from = \"shop/model.py\", to = \"shop/api.py\", reason = \"moving in Q3\" }}]\n"
    );
    std::fs::write(d.join("andon.toml"), cfg.replace(acyclic, &allowed)).unwrap();
    let (code, doc) = check(d);
    assert_eq!(code, Some(1), "{doc:#}");
    let found = blocking(&doc);
    assert_eq!(found.len(), 1, "{doc:#}");
    assert_eq!(contracts(found[0]), ["model never reaches the api"], "{doc:#}");
    let excused: Vec<&Value> = doc["findings"].as_array().unwrap().iter().filter(|f| !f["excused"].is_null()).collect();
    assert_eq!(excused.len(), 1, "{doc:#}");
    assert_eq!(contracts(excused[0]), ["layers"]);
    assert_eq!(doc["summary"]["exceptions_used"], 2, "the layers exception and the acyclic one: {doc:#}");
    // the import goes: both exceptions are stale, and said so
    write_files(d, &[("shop/model.py", "from shop import util\n\n\ndef load():\n    return util.X\n")]);
    let (code, doc) = check(d);
    assert_eq!(code, Some(2), "{doc:#}");
    let stale: Vec<&str> =
        doc["stale_exceptions"].as_array().unwrap().iter().map(|s| s["contract"].as_str().unwrap()).collect();
    assert_eq!(stale, ["layers", "no cycle among modules"]);
}

#[test]
fn a_hop_inside_a_grouped_use_names_the_path_that_reaches_its_target() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    write_files(
        d,
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nbstr = \"1\"\ngrep-matcher = \"0.1\"\n",
            ),
            (
                "src/lib.rs",
                "pub mod a;\npub mod b;\nuse {\n    bstr::ByteSlice,\n    grep_matcher::{LineTerminator, Match},\n};\nuse crate::{a::X, b::Y};\n",
            ),
            ("src/a.rs", "pub struct X;\n"),
            ("src/b.rs", "pub struct Y;\n"),
            (
                "andon.toml",
                "[[contract]]\nname = \"no matcher\"\nkind = \"protected\"\ntarget = [\"package:grep_matcher\"]\n\n[[contract]]\nname = \"lib stays off b\"\nkind = \"forbidden\"\nfrom = [\"src/lib.rs\"]\nto = [\"src/b.rs\"]\n",
            ),
        ],
    );
    let (code, doc) = check(d);
    assert_eq!(code, Some(1), "{doc:#}");
    let hop = |contract: &str| {
        let f = doc["findings"].as_array().unwrap().iter().find(|f| f["contract"] == contract).unwrap();
        (f["witness"][0]["spec"].as_str().unwrap().to_string(), f["witness"][0]["col"].as_u64().unwrap())
    };
    // the line's first path is `bstr::ByteSlice` (and `crate::a::X`): each hop names its own
    assert_eq!(hop("no matcher").0, "grep_matcher::LineTerminator");
    assert_eq!(hop("lib stays off b"), ("crate::b::Y".to_string(), 19), "at `b::Y` in `use crate::{{a::X, b::Y}}`");
    let f = doc["findings"].as_array().unwrap().iter().find(|f| f["contract"] == "lib stays off b").unwrap();
    assert!(f["message"].as_str().unwrap().ends_with("it imports `crate::b::Y`"), "{f:#}");
}
