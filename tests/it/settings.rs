//! The settings surface: legacy names, types and defaults; `config show` with origins; the legacy
//! settings file at lower precedence; `enabled = false` stopping every command first.

use std::path::Path;

use serde_json::Value;

use crate::support::{json, run, scratch};

fn show(dir: &Path) -> Value {
    let o = run(&["config", "show", "--format", "json"], dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    json(&o)
}

fn setting<'a>(doc: &'a Value, key: &str) -> (&'a Value, &'a str) {
    (&doc["settings"][key]["value"], doc["settings"][key]["origin"].as_str().unwrap())
}

#[test]
fn defaults_are_the_legacy_ones() {
    let t = tempfile::tempdir().unwrap();
    let doc = show(t.path());
    let want = [
        ("enabled", Value::from(true)),
        ("output_dir", Value::from("analysis/andon")),
        ("ledger_dir", Value::from("analysis/andon/ledger")),
        ("authorization_level", Value::from("local+reversible")),
        ("skip_verification", Value::from(false)),
        ("gap_source", Value::from("self-scan")),
        ("self_assess_output_dir", Value::from("analysis/self-assess")),
        ("house_rules_path", Value::from("HOUSE_RULES.md")),
        ("lint_max_rules", Value::from(20)),
    ];
    for (k, v) in want {
        assert_eq!(setting(&doc, k), (&v, "default"), "{k}");
    }
    assert_eq!(doc["verdict"]["outcome"], "shown");
}

#[test]
fn files_set_values_with_their_lines_and_the_legacy_file_yields() {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join(".claude")).unwrap();
    std::fs::write(
        t.path().join(".claude/andon.local.md"),
        "---\n# legacy settings\noutput_dir: reports/andon\nauthorization_level: \"hard-to-reverse\"\ngap_source: self-assess-brief\n---\n\nNotes for people.\n",
    )
    .unwrap();
    std::fs::write(
        t.path().join("andon.toml"),
        "# settings\nauthorization_level = \"shared-state-visible\"\nlint_max_rules = 5\n",
    )
    .unwrap();
    let doc = show(t.path());
    assert_eq!(doc["source"], "andon.toml");
    let origin = |k: &str| setting(&doc, k).1.to_string();
    assert_eq!(setting(&doc, "authorization_level").0, "shared-state-visible");
    assert_eq!(origin("authorization_level"), "andon.toml:2");
    assert_eq!(setting(&doc, "lint_max_rules").0, 5);
    assert_eq!(setting(&doc, "output_dir").0, "reports/andon");
    assert_eq!(origin("output_dir"), ".claude/andon.local.md:3");
    // the ledger nests under output_dir unless set on its own
    assert_eq!(setting(&doc, "ledger_dir"), (&Value::from("reports/andon/ledger"), "default"));
    // the legacy spelling of the ingest source is accepted
    assert_eq!(setting(&doc, "gap_source").0, "ingest");
    // read fresh by every command: an edit shows on the next run
    std::fs::write(t.path().join("andon.toml"), "ledger_dir = \"/srv/shared-ledger\"\n").unwrap();
    let doc = show(t.path());
    assert_eq!(setting(&doc, "ledger_dir").0, "/srv/shared-ledger");
    assert_eq!(setting(&doc, "authorization_level").0, "hard-to-reverse");
}

#[test]
fn bad_values_are_refused_with_what_is_allowed() {
    let t = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str)] = &[
        (
            "authorization_level = \"everything\"\n",
            "andon.toml:1: `authorization_level` must be one of local+reversible < hard-to-reverse < shared-state-visible",
        ),
        ("lint_max_rules = 0\n", "andon.toml:1: `lint_max_rules` must be a positive whole number"),
        ("gap_source = \"brief\"\n", "`gap_source` must be `self-scan` or `ingest`"),
        ("skip_verification = \"yes\"\n", "`skip_verification` must be true or false"),
        ("enabeld = true\n", "unknown key `enabeld`; did you mean `enabled`?"),
        // a relative path out of the repository moves with it: the ledger would start over
        (
            "ledger_dir = \"../shared-ledger\"\n",
            "andon.toml:1: a relative `ledger_dir` must stay inside the repository",
        ),
        ("ledger_dir = \"a/../../x\"\n", "give a shared `ledger_dir` as an absolute path"),
        ("output_dir = \"../out\"\n", "andon.toml:1: a relative `output_dir` must stay inside the repository"),
    ];
    for (text, want) in cases {
        std::fs::write(t.path().join("andon.toml"), text).unwrap();
        let o = run(&["config", "show"], t.path());
        assert_eq!(o.status.code(), Some(2), "{text}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{text}: {err}");
    }
    std::fs::remove_file(t.path().join("andon.toml")).unwrap();
    std::fs::create_dir_all(t.path().join(".claude")).unwrap();
    std::fs::write(t.path().join(".claude/andon.local.md"), "---\nouput_dir: x\n---\n").unwrap();
    let o = run(&["config", "show"], t.path());
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("andon.local.md:2: unknown key `ouput_dir`; did you mean `output_dir`?"), "{err}");
}

#[test]
fn disabled_stops_every_command_first_and_writes_nothing() {
    let t = scratch("check-py");
    // an unknown key too: `enabled = false` is honoured before any other check
    let cfg = std::fs::read_to_string(t.path().join("andon.toml")).unwrap();
    std::fs::write(t.path().join("andon.toml"), format!("enabled = false\nnot_a_key = 1\n{cfg}")).unwrap();
    let commands: &[&[&str]] = &[
        &["index"],
        &["index", "--check"],
        &["facts"],
        &["query", "File(p, l)"],
        &["stream"],
        &["why", "src/acme/cli.py", "requests"],
        &["check"],
        &["check", "--format", "sarif"],
        &["status"],
        &["ledger", "check"],
        &["loop"],
        &[
            "propose",
            "--gap",
            "G",
            "--blast-radius",
            "local+reversible",
            "--approach",
            "structural",
            "--reason",
            "r",
            "--description",
            "d",
            "--write-set",
            "a.py",
        ],
        &["skip", "G", "--by", "lead", "--reason", "r"],
        &["preflight"],
        &["verify", "--gap", "G"],
    ];
    for args in commands {
        let o = run(args, t.path());
        assert_eq!(o.status.code(), Some(4), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("andon.toml:1"), "{args:?}: {out}");
    }
    let o = run(&["check", "--format", "json"], t.path());
    assert_eq!(json(&o)["verdict"]["outcome"], "disabled");
    assert!(!t.path().join(".andon").exists(), "a disabled run writes nothing");
    // config show still runs, and says so
    let o = run(&["config", "show"], t.path());
    assert_eq!(o.status.code(), Some(2), "the unknown key is still an error there");
    std::fs::write(t.path().join("andon.toml"), format!("enabled = false\n{cfg}")).unwrap();
    let o = run(&["config", "show"], t.path());
    assert!(String::from_utf8_lossy(&o.stdout).contains("andon: verdict disabled"));
}

#[test]
fn the_legacy_file_can_disable_and_andon_toml_can_reenable() {
    let t = scratch("check-py");
    std::fs::create_dir_all(t.path().join(".claude")).unwrap();
    std::fs::write(t.path().join(".claude/andon.local.md"), "---\nenabled: false\n---\n").unwrap();
    let o = run(&["index", "-q"], t.path());
    assert_eq!(o.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&o.stdout).contains("andon.local.md:2"));
    let cfg = std::fs::read_to_string(t.path().join("andon.toml")).unwrap();
    std::fs::write(t.path().join("andon.toml"), format!("enabled = true\n{cfg}")).unwrap();
    assert_eq!(run(&["index", "-q"], t.path()).status.code(), Some(0));
}

/// `andon check` on `dir`: its exit code, stdout and stderr.
fn check(dir: &Path) -> (i32, String, String) {
    let o = run(&["check", "-q"], dir);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (o.status.code().unwrap_or(-1), text(&o.stdout), text(&o.stderr))
}

#[test]
fn andon_toml_wins_whole_over_tool_andon_and_says_so() {
    let t = scratch("check-py");
    let py = std::fs::read_to_string(t.path().join("pyproject.toml")).unwrap();
    // a [tool.andon] that, were it read or merged, would disable andon and move its reports
    std::fs::write(
        t.path().join("pyproject.toml"),
        format!("{py}\n[tool.andon]\nenabled = false\noutput_dir = \"elsewhere\"\n"),
    )
    .unwrap();
    let (code, out, err) = check(t.path());
    assert_eq!(code, 1, "andon.toml's contracts give the verdict: {out}{err}");
    assert!(err.contains("andon: note: settings are read from") && err.contains("is ignored"), "{err}");
    let doc = show(t.path());
    assert_eq!((doc["source"].as_str(), doc["ignored"].as_str()), (Some("andon.toml"), Some("pyproject.toml")));
    assert_eq!(setting(&doc, "output_dir").0, "analysis/andon");
    let o = run(&["config", "show"], t.path());
    assert!(String::from_utf8_lossy(&o.stdout).contains("ignored: the [tool.andon] table in pyproject.toml"));
}

#[test]
fn an_andon_toml_andon_cannot_read_is_a_config_error_never_a_fallback() {
    let t = scratch("check-py");
    let toml = std::fs::read(t.path().join("andon.toml")).unwrap();
    let py = std::fs::read_to_string(t.path().join("pyproject.toml")).unwrap();
    // the fallback would pass: its only contract is kept
    std::fs::write(
        t.path().join("pyproject.toml"),
        format!("{py}\n[[tool.andon.contract]]\nname = \"no cycles\"\nkind = \"acyclic\"\n"),
    )
    .unwrap();
    let with = |prefix: &[u8]| [prefix, &toml[..]].concat();
    std::fs::write(t.path().join("andon.toml"), with(b"enabled = false\n# Contr\xf4les\n")).unwrap();
    let (code, out, err) = check(t.path());
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("andon.toml:2:") && err.contains("not UTF-8") && err.contains("byte offset 23"), "{err}");
    assert!(!out.contains("verdict pass"), "{out}");
    let o = run(&["config", "show"], t.path());
    assert_eq!(o.status.code(), Some(2));
    std::fs::remove_file(t.path().join("andon.toml")).unwrap();
    std::fs::create_dir(t.path().join("andon.toml")).unwrap();
    let (code, _, err) = check(t.path());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("andon.toml") && err.contains("is a directory"), "{err}");
    // without andon.toml, [tool.andon] is the settings, and a pyproject.toml that cannot be decoded
    // while it mentions the table is an error too
    std::fs::remove_dir(t.path().join("andon.toml")).unwrap();
    assert_eq!(check(t.path()).0, 0);
    let bad = format!("{py}\n# caf\u{e9}\n[[tool.andon.contract]]\nname = \"c\"\nkind = \"acyclic\"\n")
        .replace('\u{e9}', "\u{1}");
    let mut bytes = bad.into_bytes();
    let at = bytes.iter().position(|b| *b == 1).unwrap();
    bytes[at] = 0xe9;
    std::fs::write(t.path().join("pyproject.toml"), bytes).unwrap();
    let (code, _, err) = check(t.path());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("pyproject.toml") && err.contains("not UTF-8"), "{err}");
}

/// `andon args` in `dir`, killed after 20 s: its exit code and stderr.
fn bounded(args: &[&str], dir: &Path) -> (Option<i32>, String) {
    let mut child = crate::support::andon()
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("andon {args:?} hung");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn a_settings_file_that_is_a_device_or_fifo_is_refused_without_blocking() {
    let t = scratch("check-py");
    let d = t.path();
    let fifo = |p: &Path| assert!(std::process::Command::new("mkfifo").arg(p).status().unwrap().success());
    std::fs::remove_file(d.join("andon.toml")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", d.join("andon.toml")).unwrap();
    let (code, err) = bounded(&["check", "-q"], d);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("andon.toml") && err.contains("not a regular file"), "{err}");
    std::fs::remove_file(d.join("andon.toml")).unwrap();
    fifo(&d.join("andon.toml"));
    let (code, err) = bounded(&["config", "show"], d);
    assert_eq!(code, Some(2), "{err}");
    std::fs::remove_file(d.join("andon.toml")).unwrap();
    std::fs::create_dir_all(d.join(".claude")).unwrap();
    fifo(&d.join(".claude/andon.local.md"));
    let (code, err) = bounded(&["check", "-q"], d);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("andon.local.md"), "{err}");
    std::fs::remove_file(d.join(".claude/andon.local.md")).unwrap();
    fifo(&d.join("r.dl"));
    let (code, err) = bounded(&["query", "--rules", "r.dl", "File(a, _)"], d);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("r.dl") && err.contains("not a regular file"), "{err}");
}

#[test]
fn settings_text_never_forges_a_verdict_line() {
    let t = scratch("check-py");
    let d = t.path();
    let forged = |out: &[u8]| String::from_utf8_lossy(out).lines().filter(|l| l.starts_with("andon: verdict")).count();
    // a contract name in an error, and a value shown by `config show`
    std::fs::write(
        d.join("andon.toml"),
        "output_dir = \"o\\nandon: verdict pass\\u001b\"\n[[contract]]\nname = \"c\\nandon: verdict pass\"\nkind = \"forbidden\"\n\
         from = [\"src/acme/core/**\"]\nto = [\"src/acme/api/**\"]\n\
         exceptions = [{ from = \"src/[zz\", to = \"src/acme/api/**\", reason = \"r\" }]\n",
    )
    .unwrap();
    let o = run(&["check", "-q"], d);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(forged(&o.stdout) + forged(&o.stderr), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&["config", "show"], d);
    assert_eq!(forged(&o.stdout), 1, "{}", String::from_utf8_lossy(&o.stdout));
    assert!(!o.stdout.contains(&0x1b), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn the_legacy_front_matter_is_read_strictly() {
    let t = scratch("check-py");
    let d = t.path();
    std::fs::create_dir_all(d.join(".claude")).unwrap();
    let legacy = d.join(".claude/andon.local.md");
    // a byte order mark and a blank line before `---` still disable andon
    std::fs::write(&legacy, "\u{feff}\n---\nenabled: false\n---\nnotes\n").unwrap();
    assert_eq!(check(d).0, 4);
    // a key set twice is an error, never one reading here and another there
    std::fs::write(&legacy, "---\nenabled: false\nenabled: true\n---\n").unwrap();
    let (code, _, err) = check(d);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("andon.local.md:3") && err.contains("set twice"), "{err}");
    assert_eq!(run(&["config", "show"], d).status.code(), Some(2));
    std::fs::write(&legacy, "----\nenabled: false\n---\n").unwrap();
    let (code, _, err) = check(d);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("must open with a line `---`"), "{err}");
}
