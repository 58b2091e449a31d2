//! Characters of `andon::text::is_hidden`'s class, carried by file names, comments, docstrings and
//! string literals of a repository, never reach a reader raw: not on the standard output of any
//! text-producing command, and not in the text reports written under `analysis/andon`. Every
//! command prints exactly one `andon: verdict` line, whatever the repository's text says.

use std::path::Path;

use andon::text::is_hidden;
use proptest::prelude::*;

use crate::support::{commit_all, facts, run, write_files};

/// The class, range by range: C0 and C1 controls and DEL, zero-width characters and the
/// directional marks, the line and paragraph separators, the Arabic letter mark, the byte-order
/// mark, and the bidirectional embeddings, overrides and isolates.
fn class() -> Vec<char> {
    let ranges: [(u32, u32); 8] = [
        (0x00, 0x1f),
        (0x7f, 0x9f),
        (0x200b, 0x200f),
        (0x2028, 0x2029),
        (0x061c, 0x061c),
        (0xfeff, 0xfeff),
        (0x202a, 0x202e),
        (0x2066, 0x2069),
    ];
    ranges.iter().flat_map(|&(a, b)| (a..=b).filter_map(char::from_u32)).collect()
}

/// Text placed around the drawn characters: plain words, and text that addresses the tool.
const WORDS: &[&str] = &[
    "andon: verdict proven",
    "andon: verdict hardened (all clear)",
    "andon: this wire is proven, ignore this failure",
    r"ok\nandon: verdict proven",
    "andon, skip this stage",
    "plain words on a line",
    "",
];

/// The commands whose text report is checked, in the order they run.
const COMMANDS: &[&[&str]] = &[
    &["index"],
    &["stream"],
    &["facts"],
    &["check"],
    &["loop"],
    &["status"],
    &["preflight"],
    &["query", "Stage(s, r), InStage(f, s)"],
    &["query", "--explain", "Wire(p, c)"],
    &["why", "api", "core"],
    &["check", "--format", "github"],
];

/// The commands whose output has no verdict line (Markdown, CSV, DOT, Mermaid, JUnit): checked for
/// leaks, and that no line of theirs starts a verdict.
const SILENT: &[&[&str]] = &[
    &["status", "--format", "markdown"],
    &["query", "--format", "csv", "Stage(s, r), InStage(f, s)"],
    &["stream", "--format", "dot"],
    &["stream", "--format", "mermaid"],
    &["check", "--format", "junit"],
    &["check", "--format", "markdown"],
    &["init", "--print", "-q"],
];

/// The text files written under the output directory by `loop`, `status` and `preflight`.
const REPORTS: &[&str] = &[
    "analysis/andon/ledger/ledger.md",
    "analysis/andon/status.md",
    "analysis/andon/preflight.md",
    "analysis/andon/loop.txt",
];

/// Plain comment lines that fill the first 8 KiB of a file, so a NUL byte after them is still read
/// as text (a NUL within the first 8 KiB makes the file binary, and it is not parsed).
fn padding() -> String {
    "# plain padding so that what follows is read as text\n".repeat(160)
}

/// A src-layout Python project with stages core, api and cli: api imports `missing_name`, which
/// core does not define, and the forbidden contract api -> core is broken. `chars` are spread
/// over comments, docstrings and string literals appended to the packages' `__init__.py` after
/// [`padding`]; every character of `names` names two files: `src/api/x<c>y.py`, which holds
/// the same broken import of core, and `src/core/t<c>u.py`, which holds a TODO comment; it also
/// names a package of its own, `src/p<c>q/`, a stage fed by core. `words` surround the
/// characters.
fn repo(chars: &[char], names: &[char], words: &[&str]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let w = |i: usize| words[i % words.len()];
    let mut inits = [
        // core
        String::from("def parse(text):\n    return text.split()\n"),
        // api
        String::from(
            "from core import parse, missing_name\n\n\ndef run(text):\n    return parse(text), missing_name\n",
        ),
        // cli
        String::from("from api import run\n\n\ndef main():\n    return run(\"a b\")\n"),
    ];
    for init in &mut inits {
        init.push_str(&padding());
    }
    for (i, &c) in chars.iter().enumerate() {
        let (a, b) = (w(i), w(i + 1));
        inits[i % 3].push_str(&format!(
            "\n\n# {a}{c}{b}\ndef f{i}():\n    \"\"\"{b}{c}{a}\"\"\"\n    return \"\"\"{a} {c} {b}\"\"\"\n\n\nS{i} = \"\"\"{c}{a}\"\"\"\n"
        ));
    }
    let mut files: Vec<(String, String)> = vec![
        ("pyproject.toml".into(), "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n".into()),
        (
            "andon.toml".into(),
            "[[contract]]\nname = \"api keeps off core\"\nkind = \"forbidden\"\nfrom = [\"src/api/**\"]\nto = [\"src/core/**\"]\n"
                .into(),
        ),
        (".gitignore".into(), "analysis/\n".into()),
    ];
    for (stage, text) in ["core", "api", "cli"].into_iter().zip(inits) {
        files.push((format!("src/{stage}/__init__.py"), text));
    }
    for (i, &c) in names.iter().enumerate() {
        assert!(c != '\0' && c != '/', "{c:?} cannot be part of a file name");
        let (a, b) = (w(i + 2), w(i + 3));
        files.push((
            format!("src/api/x{c}y.py"),
            format!("from core import parse, missing_name\n# {a}{c}{b}\n\nNOTE = \"\"\"{b}{c}\"\"\"\n"),
        ));
        files.push((
            format!("src/core/t{c}u.py"),
            format!("# TODO: {a}{c}{b}\n\"\"\"{b}{c}{a}\"\"\"\nVALUE = \"{a}\"\n"),
        ));
        files.push((
            format!("src/p{c}q/__init__.py"),
            "from core import parse\n\n\ndef go():\n    return parse(\"x\")\n".into(),
        ));
    }
    write_files(d, &files);
    commit_all(d);
    t
}

/// Every hidden character of `text` outside the `\n` line ends, once per line it is on: (line
/// number, character, line).
fn hidden_in(text: &str) -> Vec<(usize, char, &str)> {
    let mut out = Vec::new();
    for (n, l) in text.split('\n').enumerate() {
        let mut seen: Vec<char> = l.chars().filter(|&c| is_hidden(c)).collect();
        seen.sort_unstable();
        seen.dedup();
        out.extend(seen.into_iter().map(|c| (n + 1, c, l)));
    }
    out
}

fn describe_leaks(what: &str, text: &str, problems: &mut Vec<String>) {
    for (n, c, l) in hidden_in(text) {
        problems.push(format!("{what}: line {n} holds {c:?} (U+{:04X}): {l:?}", c as u32));
    }
}

/// Runs every command on `d` (with `silent`, also those of [`SILENT`]) and checks its standard
/// output, then the reports it wrote; returns each problem found, described.
fn problems(d: &Path, silent: bool) -> Vec<String> {
    let mut problems = Vec::new();
    for &args in COMMANDS {
        let o = run(args, d);
        let cmd = args.join(" ");
        let out = match String::from_utf8(o.stdout) {
            Ok(s) => s,
            Err(e) => {
                problems.push(format!("`andon {cmd}` stdout: not UTF-8 ({e})"));
                continue;
            }
        };
        let err = String::from_utf8_lossy(&o.stderr);
        describe_leaks(&format!("`andon {cmd}` stdout"), &out, &mut problems);
        let verdicts: Vec<&str> = out.lines().filter(|l| l.trim_start().starts_with("andon: verdict")).collect();
        if verdicts.len() != 1 || !verdicts[0].starts_with("andon: verdict") {
            problems.push(format!(
                "`andon {cmd}` (exit {:?}) prints {} `andon: verdict` lines, not one at the start of a line: {verdicts:?}\nstdout:\n{out}\nstderr:\n{err}",
                o.status.code(),
                verdicts.len()
            ));
        }
    }
    for &args in if silent { SILENT } else { &[] } {
        let out = String::from_utf8_lossy(&run(args, d).stdout).into_owned();
        let cmd = args.join(" ");
        describe_leaks(&format!("`andon {cmd}` stdout"), &out, &mut problems);
        if let Some(l) = out.lines().find(|l| l.trim_start().starts_with("andon: verdict")) {
            problems.push(format!("`andon {cmd}` prints a verdict line: {l:?}"));
        }
    }
    for &f in REPORTS {
        match std::fs::read(d.join(f)) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => describe_leaks(f, &text, &mut problems),
                Err(e) => problems.push(format!("{f}: not UTF-8 ({e})")),
            },
            Err(e) => problems.push(format!("{f}: not written ({e})")),
        }
    }
    problems
}

/// The repository is what [`repo`] says: every file named with a drawn character is indexed, each
/// `src/api/x<c>y.py` imports a name core lacks, and `check` blocks on the broken contract.
fn assert_premise(d: &Path, names: &[char]) {
    let paths = |relation: &str| -> Vec<String> {
        facts(d, relation).iter().map(|f| f["path"].as_str().unwrap().to_string()).collect()
    };
    let (files, missing) = (paths("File"), paths("MissingName"));
    for &c in names {
        for want in [format!("src/api/x{c}y.py"), format!("src/core/t{c}u.py")] {
            assert!(files.contains(&want), "{want:?} is not indexed: {files:?}");
        }
        let api = format!("src/api/x{c}y.py");
        assert!(missing.contains(&api), "{api:?} has no broken import: {missing:?}");
    }
    assert_eq!(run(&["check", "-q"], d).status.code(), Some(1), "the broken contract blocks");
}

fn assert_none_reach_a_reader(chars: &[char], names: &[char], words: &[&str], silent: bool) {
    let t = repo(chars, names, words);
    let found = problems(t.path(), silent);
    assert_premise(t.path(), names);
    // the first problems are enough to locate a leak; the count says how many more there are
    assert!(
        found.is_empty(),
        "chars {chars:?}, names {names:?}, words {words:?}: {} problem(s), the first ones:\n{}",
        found.len(),
        found.iter().take(60).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn the_class_is_the_crate_rule() {
    let class = class();
    assert_eq!(class.len(), 32 + 33 + 5 + 2 + 1 + 1 + 5 + 4);
    for &c in &class {
        assert!(is_hidden(c), "{c:?}");
    }
    // the neighbours of each range are outside the class
    for c in ['\u{20}', '\u{7e}', '\u{a0}', '\u{200a}', '\u{2010}', '\u{2027}', '\u{202f}', '\u{2065}', '\u{206a}'] {
        assert!(!is_hidden(c), "{c:?}");
    }
}

/// One repository that carries every member of the class in its text, and every member but NUL
/// in its file names; the formats without a verdict line are checked here too.
#[test]
fn every_member_of_the_class_is_escaped_everywhere() {
    let class = class();
    let names: Vec<char> = class.iter().copied().filter(|&c| c != '\0').collect();
    assert_none_reach_a_reader(&class, &names, WORDS, true);
}

fn member() -> impl Strategy<Value = char> {
    prop::sample::select(class())
}

fn name_member() -> impl Strategy<Value = char> {
    prop::sample::select(class().into_iter().filter(|&c| c != '\0').collect::<Vec<_>>())
}

fn words() -> impl Strategy<Value = Vec<String>> {
    let word = prop_oneof![prop::sample::select(WORDS).prop_map(String::from), "[a-z :]{0,12}"];
    prop::collection::vec(word, 1..4)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 8,
        max_shrink_iters: 16,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn drawn_members_are_escaped_everywhere(
        chars in prop::collection::vec(member(), 1..=3),
        spare in name_member(),
        words in words(),
    ) {
        // every drawn member that can be part of a file name names files; NUL alone draws a spare
        let mut names: Vec<char> = chars.iter().copied().filter(|&c| c != '\0').collect();
        names.sort_unstable();
        names.dedup();
        if names.is_empty() {
            names.push(spare);
        }
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        assert_none_reach_a_reader(&chars, &names, &words, false);
    }
}
