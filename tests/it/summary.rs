//! `andon check --format markdown`: the pull-request summary.

use std::path::Path;

use crate::support::{commit_all, run, write_files};

const FORBIDDEN: &str = "[[contract]]\nname = \"core | stays <b>apart</b>\"\nkind = \"forbidden\"\nfrom = [\"src/core/**\"]\nto = [\"src/api/**\"]\n";

/// Two stages, `core` and `api` (which imports `core`), and `extra` files, committed.
fn two_stages(extra: &[(&str, &str)]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let mut files = vec![
        ("pyproject.toml", "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n"),
        (".gitignore", "analysis/\n"),
        ("andon.toml", FORBIDDEN),
        ("src/core/__init__.py", "def parse(t):\n    return t\n"),
        ("src/api/__init__.py", "from core import parse\n\n\ndef run(t):\n    return parse(t)\n"),
    ];
    files.extend_from_slice(extra);
    write_files(t.path(), &files);
    commit_all(t.path());
    t
}

fn summary(d: &Path, extra: &[&str]) -> (i32, String) {
    let mut args = vec!["check", "--format", "markdown", "-q"];
    args.extend_from_slice(extra);
    let o = run(&args, d);
    (o.status.code().unwrap(), String::from_utf8(o.stdout).unwrap())
}

#[test]
fn a_broken_contract_is_summarized_with_its_witness_and_its_edge_marked_in_the_stream() {
    let t = two_stages(&[("src/core/back.py", "import api\n")]);
    let (code, md) = summary(t.path(), &[]);
    assert_eq!(code, 1, "{md}");
    assert!(md.starts_with("## ❌ andon check: blocked"), "{md}");
    // the contract's name, escaped for a table cell: the row has its seven cell borders only
    let row = md.lines().find(|l| l.contains("stays")).unwrap();
    assert!(row.contains(r"core \| stays \<b\>apart\</b\>"), "{row}");
    assert_eq!(row.matches('|').count() - row.matches(r"\|").count(), 7, "{row}");
    assert!(md.contains("src/core/back.py:1"), "{md}");
    // the names a message quotes, and the witness's import and file, as code spans: no backslash
    // shows in them, and no backtick is escaped into view
    assert!(md.contains("`src/core/back.py:1` imports `api` → `src/api/__init__.py`"), "{md}");
    assert!(md.contains(": `src/core/back.py` must not depend on `src/api/**`: it imports `api` (tier 1)"), "{md}");
    assert!(!md.contains(r"\`"), "{md}");
    let chart = &md[md.find("```mermaid").expect("a mermaid block")..];
    // the stream's wire core -> api, and the broken edge api -> core drawn red
    let index = |from: &str, to: &str| {
        let id = |name: &str| {
            chart
                .lines()
                .find(|l| l.ends_with(&format!("[\"{name}\"]")))
                .unwrap()
                .trim()
                .split('[')
                .next()
                .unwrap()
                .to_string()
        };
        let edges: Vec<&str> = chart.lines().filter(|l| l.contains("->")).collect();
        edges.iter().position(|l| {
            l.trim().starts_with(&format!("{} ", id(from))) && l.trim().ends_with(&format!(" {}", id(to)))
        })
    };
    let broken = index("api", "core").expect("the back edge is drawn");
    assert!(chart.contains(&format!("linkStyle {broken} stroke:#d73a49")), "{chart}");
    let wire = index("core", "api").expect("the wire is drawn");
    assert!(!chart.contains(&format!("linkStyle {wire} ")), "the wire itself is not broken: {chart}");
}

#[test]
fn a_kept_contract_passes_with_the_stream_and_no_findings_section() {
    let t = two_stages(&[]);
    let (code, md) = summary(t.path(), &[]);
    assert_eq!(code, 0, "{md}");
    assert!(md.starts_with("## ✅ andon check: pass"), "{md}");
    assert!(!md.contains("### Blocking findings"), "{md}");
    assert!(md.contains("```mermaid") && !md.contains("linkStyle"), "{md}");
}

#[test]
fn a_long_list_is_cut_with_a_count_under_64_kib() {
    let files: Vec<(String, String)> = (0..1500)
        .map(|i| (format!("src/core/m{i:04}_with_a_rather_long_module_name.py"), "import api\n".to_string()))
        .collect();
    let extra: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let t = two_stages(&extra);
    let (code, md) = summary(t.path(), &[]);
    assert_eq!(code, 1);
    assert!(md.len() < 64 * 1024, "{} bytes", md.len());
    assert!(md.contains("more blocking findings"), "{}", &md[md.len().saturating_sub(2000)..]);
    assert!(md.contains("```mermaid"), "the chart survives the cut");
}

#[test]
fn under_base_the_new_findings_come_first() {
    let t = two_stages(&[("src/core/old.py", "import api\n")]);
    let d = t.path();
    write_files(d, &[("src/core/zz_new.py", "import api\n")]);
    crate::support::git(d, &["add", "-A"]);
    crate::support::git(d, &["commit", "-qm", "new back edge"]);
    let (code, md) = summary(d, &["--base", "HEAD~1"]);
    assert_eq!(code, 1, "{md}");
    let items: Vec<&str> = md.lines().filter(|l| l.starts_with("- **")).collect();
    assert_eq!(items.len(), 2, "{md}");
    assert!(items[0].contains(r"zz\_new.py") && items[0].contains("**new**"), "{items:?}");
    assert!(items[1].contains("old.py") && !items[1].contains("**new**"), "{items:?}");
    assert!(md.contains("1 new since HEAD"), "{md}");
}

#[test]
fn long_contract_names_keep_the_summary_under_64_kib() {
    let names: String = (0..40)
        .map(|i| {
            format!(
                "[[contract]]\nname = \"contract {i} {}\"\nkind = \"forbidden\"\nfrom = [\"src/core/**\"]\nto = [\"src/api/**\"]\n",
                "x".repeat(3000)
            )
        })
        .collect();
    let t = two_stages(&[("src/core/back.py", "import api\n")]);
    write_files(t.path(), &[("andon.toml", names.as_str())]);
    let (code, md) = summary(t.path(), &[]);
    assert_eq!(code, 1);
    assert!(md.len() < 64 * 1024, "{} bytes", md.len());
    assert!(md.contains("more contracts"), "the table is cut with a count");
    assert!(md.contains("```mermaid"), "the chart survives the cut");
}

#[test]
fn the_base_is_shown_as_text_never_with_its_escapes_in_a_code_span() {
    let t = two_stages(&[("src/core/old.py", "import api\n")]);
    crate::support::git(t.path(), &["branch", "main_line"]);
    let (_, md) = summary(t.path(), &["--base", "main_line"]);
    // inside backticks a backslash is shown, so `main\_line` would read with a backslash
    assert!(md.contains(", 0 new since main\\_line;"), "{md}");
}
