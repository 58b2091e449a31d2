//! Unit tests of the brief reader: valid and invalid briefs, error lines and texts, mutated input.

use std::path::PathBuf;

use super::*;

const MD: &str = "b.md";
const JS: &str = "s.json";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/briefs").join(name)
}

fn invalid(name: &str) -> Vec<BriefError> {
    match load(&fixture(name)) {
        Err(LoadError::Invalid(errors)) => errors,
        other => panic!("{name}: expected Invalid, got {other:?}"),
    }
}

fn parse_str(md: &str, summary: &str) -> Result<Brief, Vec<BriefError>> {
    parse(md.as_bytes(), summary.as_bytes(), Path::new(MD), Path::new(JS))
}

/// Exactly these errors, in this order: (file name, line, message fragment).
#[track_caller]
fn assert_errors(errors: &[BriefError], want: &[(&str, u32, &str)]) {
    let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(errors.len(), want.len(), "errors:\n{}", shown.join("\n"));
    for (e, &(file, line, fragment)) in errors.iter().zip(want) {
        assert!(e.file.ends_with(file), "{e} is not in {file}; errors:\n{}", shown.join("\n"));
        assert_eq!(e.line, line, "{e}; errors:\n{}", shown.join("\n"));
        assert!(e.message.contains(fragment), "{e} lacks {fragment:?}; errors:\n{}", shown.join("\n"));
    }
}

#[track_caller]
fn assert_invalid(md: &str, summary: &str, want: &[(&str, u32, &str)]) {
    match parse_str(md, summary) {
        Err(errors) => assert_errors(&errors, want),
        Ok(b) => panic!("expected errors, parsed {b:?}"),
    }
}

/// A one-phase summary around the given work item and rule JSON.
fn one_phase(items: &str, rules: &str) -> String {
    format!(
        "{{\n\"format\": 1,\n\"phases\": [\n{{\n\"id\": \"P1\",\n\"name\": \"Core\",\n\"exit_criteria\": [],\n\"contract\": [{rules}],\n\"work_items\": [{items}],\n\"advisory\": []\n}}\n]\n}}\n"
    )
}

const ONE_MD: &str = "# Brief\n\n## Phase P1: Core\n";

#[test]
fn valid_fixture_parses_into_the_model() {
    let brief = load(&fixture("valid")).unwrap();
    let ids: Vec<(&str, &str, u32)> = brief.phases.iter().map(|p| (p.id.as_str(), p.name.as_str(), p.line)).collect();
    assert_eq!(ids, [("P1", "Shared types", 6), ("P2", "Storage layer", 15), ("P3", "HTTP API", 19)]);

    let p1 = &brief.phases[0];
    assert_eq!(p1.exit_criteria, ["tests/test_types.py passes", "no module outside shared/ defines a Money type"]);
    assert!(p1.advisory.is_empty());
    assert_eq!(
        p1.contract,
        [
            ContractRule {
                id: "BC-1".into(),
                rule: "Money.round() keeps banker's rounding".into(),
                validation: "property test over 10k random amounts against the old implementation".into(),
                confidence: RuleConfidence::High,
                priority: Priority::P0,
            },
            ContractRule {
                id: "BC-2".into(),
                rule: "Serialized Money keeps its JSON shape".into(),
                validation: "golden-file comparison of fixtures/money/*.json".into(),
                confidence: RuleConfidence::Low,
                priority: Priority::P2,
            },
        ]
    );
    assert_eq!(
        p1.work_items[0],
        WorkItem {
            id: "W1".into(),
            title: "Replace manual dict merge with the | operator".into(),
            path: "shared/types.py".into(),
            line: Some(42),
            tag: "code-idiom".into(),
            owner: "self-assess-idiom-fix".into(),
        }
    );
    // P0 + High is not a gate; P2 + Low is not a gate.
    assert_eq!(p1.entry_gates().count(), 0);

    let p2 = &brief.phases[1];
    let gates: Vec<&str> = p2.entry_gates().map(|r| r.id.as_str()).collect();
    assert_eq!(gates, ["BC-1"]);
    assert_eq!(p2.contract[0].confidence, RuleConfidence::Medium);
    assert_eq!(p2.work_items[0].line, None);
    assert_eq!(p2.work_items[0].owner, "self-assess-transform-execute");
    assert_eq!(
        p2.advisory,
        ["The retry policy in storage/retry.py looks deliberate; confirm with the owners before touching it."]
    );

    let p3 = &brief.phases[2];
    assert!(p3.contract.is_empty());

    let kinds: Vec<(&str, ItemKind)> =
        brief.phases.iter().flat_map(|p| &p.work_items).map(|w| (w.id.as_str(), w.kind().unwrap())).collect();
    assert_eq!(
        kinds,
        [
            ("W1", ItemKind::Bug),
            ("W2", ItemKind::Bug),
            ("W3", ItemKind::Wire),
            ("W4", ItemKind::Bug),
            ("W5", ItemKind::Feature),
        ]
    );
}

#[test]
fn the_documented_example_parses() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/brief-format.md")).unwrap();
    let example = doc.split("## A complete example").nth(1).unwrap();
    let block = |lang: &str| {
        let start = example.find(&format!("```{lang}\n")).unwrap() + lang.len() + 4;
        let len = example[start..].find("\n```\n").unwrap() + 1;
        example[start..start + len].to_string()
    };
    let brief = parse_str(&block("markdown"), &block("json")).unwrap();
    let gates: Vec<(&str, &str)> =
        brief.phases.iter().flat_map(|p| p.entry_gates().map(move |r| (p.id.as_str(), r.id.as_str()))).collect();
    assert_eq!(gates, [("P2", "BC-1")]);
    let kinds: Vec<ItemKind> = brief.phases.iter().flat_map(|p| &p.work_items).map(|w| w.kind().unwrap()).collect();
    assert_eq!(kinds, [ItemKind::Bug, ItemKind::Wire, ItemKind::Feature]);
    assert_eq!(brief.phases[1].advisory.len(), 1);
}

#[test]
fn absent_fixture_names_both_files() {
    let dir = fixture("absent");
    let err = load(&dir).unwrap_err();
    assert_eq!(err, LoadError::Absent { dir: dir.clone(), missing: vec![BRIEF_FILE.into(), SUMMARY_FILE.into()] });
    let text = err.to_string();
    assert!(text.contains("does not exist yet") && text.contains(PRODUCER), "{text}");
    // A directory that does not exist at all is absent too.
    let err = load(&dir.join("nope")).unwrap_err();
    assert!(matches!(err, LoadError::Absent { ref missing, .. } if missing.len() == 2), "{err:?}");
}

#[test]
fn one_missing_file_is_absent_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("valid").join(BRIEF_FILE), tmp.path().join(BRIEF_FILE)).unwrap();
    assert_eq!(
        load(tmp.path()).unwrap_err(),
        LoadError::Absent { dir: tmp.path().to_path_buf(), missing: vec![SUMMARY_FILE.into()] }
    );
    std::fs::remove_file(tmp.path().join(BRIEF_FILE)).unwrap();
    std::fs::copy(fixture("valid").join(SUMMARY_FILE), tmp.path().join(SUMMARY_FILE)).unwrap();
    assert_eq!(
        load(tmp.path()).unwrap_err(),
        LoadError::Absent { dir: tmp.path().to_path_buf(), missing: vec![BRIEF_FILE.into()] }
    );
}

#[test]
fn unreadable_file_is_invalid_not_absent() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join(BRIEF_FILE)).unwrap();
    std::fs::copy(fixture("valid").join(SUMMARY_FILE), tmp.path().join(SUMMARY_FILE)).unwrap();
    let errors = match load(tmp.path()) {
        Err(LoadError::Invalid(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_errors(&errors, &[(BRIEF_FILE, 1, "cannot read")]);
}

#[test]
fn mismatch_fixture_reports_the_out_of_order_headings() {
    assert_errors(
        &invalid("mismatch"),
        &[
            (BRIEF_FILE, 5, "phase `P3` is out of order: transform_brief_summary.json has phase `P2` here"),
            (BRIEF_FILE, 7, "phase `P2` is out of order: transform_brief_summary.json has phase `P3` here"),
        ],
    );
}

#[test]
fn bad_tag_fixture_lists_accepted_tags_and_the_nearest() {
    let errors = invalid("bad-tag");
    assert_errors(
        &errors,
        &[
            (
                SUMMARY_FILE,
                15,
                "unknown tag `code-idom` (did you mean `code-idiom`?); accepted tags: code-idiom, lint,",
            ),
            (SUMMARY_FILE, 23, "unknown tag `security`; accepted tags: code-idiom,"),
        ],
    );
    assert!(errors[1].message.ends_with("docs-drift:absent"), "{}", errors[1]);
}

#[test]
fn unknown_field_fixture_reports_every_unknown_field() {
    assert_errors(
        &invalid("unknown-field"),
        &[(SUMMARY_FILE, 3, "unknown field `generated_by`"), (SUMMARY_FILE, 15, "unknown field `severity`")],
    );
}

#[test]
fn path_traversal_fixture_rejects_each_path() {
    assert_errors(
        &invalid("path-traversal"),
        &[
            (SUMMARY_FILE, 13, "path `../../etc/passwd` contains `..`"),
            (SUMMARY_FILE, 20, "path `/etc/passwd` is absolute"),
            (SUMMARY_FILE, 27, "path `src\\\\core.py` contains a backslash"),
        ],
    );
}

#[test]
fn error_display_is_file_line_message() {
    let e = BriefError { file: PathBuf::from("dir/x.json"), line: 7, message: "boom".into() };
    assert_eq!(e.to_string(), "dir/x.json:7: boom");
}

#[test]
fn json_syntax_errors_carry_serde_position() {
    assert_invalid(ONE_MD, "{\n  \"format\": 1,\n  \"phases\": [,]\n}\n", &[(JS, 3, "expected value (column 14)")]);
    assert_invalid(ONE_MD, "", &[(JS, 1, "EOF while parsing")]);
    assert_invalid(ONE_MD, "[1]", &[(JS, 1, "must be a JSON object")]);
}

#[test]
fn format_is_required_and_must_be_1() {
    assert_invalid(ONE_MD, "{\"phases\": []}", &[(JS, 1, "missing field `format`")]);
    assert_invalid(ONE_MD, "{\n\"format\": 2, \"phases\": [], \"new_thing\": 1}", &[(JS, 2, "unsupported format `2`")]);
    assert_invalid(ONE_MD, "{\"format\": \"1\", \"phases\": []}", &[(JS, 1, "unsupported format `\"1\"`")]);
    assert_invalid(ONE_MD, "{\"format\": 1.0, \"phases\": []}", &[(JS, 1, "unsupported format `1.0`")]);
}

#[test]
fn no_phases_is_an_error() {
    assert_invalid("", "{\"format\": 1,\n\"phases\": []}", &[(JS, 2, "the brief has no phases")]);
}

#[test]
fn a_phase_without_work_items_is_valid() {
    let brief = parse_str(ONE_MD, &one_phase("", "")).unwrap();
    assert_eq!(brief.phases.len(), 1);
    assert!(brief.phases[0].work_items.is_empty());
    assert_eq!(brief.phases[0].line, 3);
}

#[test]
fn strict_types_and_required_fields() {
    let item = r#"{"id": "W1", "title": "t", "path": "a.py", "line": -3, "tag": "lint", "owner": "o"}"#;
    assert_invalid(ONE_MD, &one_phase(item, ""), &[(JS, 9, "invalid value: integer `-3`, expected u32")]);
    let item = r#"{"id": "W1", "title": "t", "path": "a.py", "tag": "lint"}"#;
    assert_invalid(ONE_MD, &one_phase(item, ""), &[(JS, 9, "missing field `owner`")]);
    let item = r#""W1""#;
    assert_invalid(ONE_MD, &one_phase(item, ""), &[(JS, 9, "expected a work item object, found a string")]);
    // serde would build a struct from an array; the format does not.
    let item = r#"["W1", "t", "a.py", 1, "lint", "o"]"#;
    assert_invalid(ONE_MD, &one_phase(item, ""), &[(JS, 9, "expected a work item object, found an array")]);
    let s = "{\"format\": 1, \"phases\": [{\"id\": \"P1\", \"name\": \"Core\", \"exit_criteria\": \"x\", \"contract\": [], \"work_items\": [], \"advisory\": []}]}";
    assert_invalid(ONE_MD, s, &[(JS, 1, "invalid type: string \"x\", expected a sequence")]);
    let item = r#"{"id": "W1", "id": "W2", "title": "t", "path": "a.py", "tag": "lint", "owner": "o"}"#;
    assert_invalid(ONE_MD, &one_phase(item, ""), &[(JS, 9, "duplicate field `id`")]);
}

#[test]
fn rule_confidence_and_priority_values() {
    let rule = |c: &str, p: &str| {
        format!(r#"{{"id": "R1", "rule": "r", "validation": "v", "confidence": "{c}", "priority": "{p}"}}"#)
    };
    for (c, want) in [("LOW", RuleConfidence::Low), ("medium", RuleConfidence::Medium), ("High", RuleConfidence::High)]
    {
        let brief = parse_str(ONE_MD, &one_phase("", &rule(c, "P1"))).unwrap();
        assert_eq!(brief.phases[0].contract[0].confidence, want);
    }
    assert_invalid(
        ONE_MD,
        &one_phase("", &rule("sure", "P0")),
        &[(JS, 8, "confidence `sure` is not one of Low, Medium, High")],
    );
    assert_invalid(
        ONE_MD,
        &one_phase("", &rule("High", "p0")),
        &[(JS, 8, "priority `p0` is not one of P0, P1, P2, P3 (did you mean `P0`?)")],
    );
    assert_invalid(ONE_MD, &one_phase("", &rule("High", "P4")), &[(JS, 8, "priority `P4` is not one of")]);
}

#[test]
fn entry_gate_is_p0_below_high() {
    for c in RuleConfidence::ALL {
        for p in Priority::ALL {
            let r =
                ContractRule { id: "R".into(), rule: "r".into(), validation: "v".into(), confidence: c, priority: p };
            assert_eq!(r.is_entry_gate(), p == Priority::P0 && c != RuleConfidence::High, "{c:?} {p:?}");
        }
    }
    assert!(RuleConfidence::Low < RuleConfidence::Medium && RuleConfidence::Medium < RuleConfidence::High);
}

#[test]
fn every_tag_maps_to_its_kind() {
    let kind = |t: &str| ItemKind::from_tag(t);
    for t in ["code-idiom", "lint", "ui-audit", "confab:dependency-audit", "confab:contract-drift"] {
        assert_eq!(kind(t), Ok(ItemKind::Bug), "{t}");
    }
    for t in ["arch-health:merge", "arch-health:split", "arch-health:layering"] {
        assert_eq!(kind(t), Ok(ItemKind::Wire), "{t}");
    }
    assert_eq!(kind("documented-absent"), Ok(ItemKind::Feature));
    // the producer's own spellings, in any case
    for (t, k) in [
        ("LINT", ItemKind::Bug),
        ("lint-audit", ItemKind::Bug),
        ("confab:assertion-audit", ItemKind::Bug),
        (" arch-health ", ItemKind::Wire),
        ("arch-health:layering-fix", ItemKind::Wire),
        ("documented-but-absent", ItemKind::Feature),
        ("docs-drift", ItemKind::Feature),
    ] {
        assert_eq!(kind(t), Ok(k), "{t}");
    }
    assert!(kind("lnt").unwrap_err().to_string().contains("did you mean `lint`?"));
    assert!(kind("arch-health:splt").unwrap_err().to_string().contains("did you mean `arch-health:split`?"));
    assert!(!kind("").unwrap_err().to_string().contains("did you mean"));
    assert_eq!(ItemKind::Wire.gap_kind(), crate::ledger::GapKind::Wire);
    let w = WorkItem {
        id: "W".into(),
        title: "t".into(),
        path: "a".into(),
        line: None,
        tag: "x".into(),
        owner: "o".into(),
    };
    assert!(w.kind().unwrap_err().to_string().starts_with("unknown tag `x`"));
}

#[test]
fn duplicates_are_reported_with_the_first_line() {
    let phase = |id: &str, items: &str, rules: &str| {
        format!(
            "{{\"id\": \"{id}\", \"name\": \"N{id}\", \"exit_criteria\": [], \"contract\": [{rules}], \"work_items\": [{items}], \"advisory\": []}}"
        )
    };
    let item = |id: &str| {
        format!("{{\"id\": \"{id}\", \"title\": \"t\", \"path\": \"a.py\", \"tag\": \"lint\", \"owner\": \"o\"}}")
    };
    let rule = |id: &str| {
        format!(
            "{{\"id\": \"{id}\", \"rule\": \"r\", \"validation\": \"v\", \"confidence\": \"High\", \"priority\": \"P1\"}}"
        )
    };
    let s = format!(
        "{{\"format\": 1, \"phases\": [\n{},\n{},\n{}\n]}}",
        phase("A", &item("W1"), &format!("{},\n{}", rule("R1"), rule("R1"))),
        phase("B", &item("W1"), &rule("R1")),
        phase("A", "", "")
    );
    assert_invalid(
        "",
        &s,
        &[
            (JS, 3, "duplicate rule id `R1` in this phase (first at line 2)"),
            (JS, 4, "duplicate work item id `W1` (first at line 3)"),
            (JS, 5, "duplicate phase id `A` (first at line 2)"),
        ],
    );
}

#[test]
fn empty_and_malformed_values() {
    let item = r#"{"id": "", "title": " ", "path": "", "line": 0, "tag": "lint", "owner": ""}"#;
    assert_invalid(
        ONE_MD,
        &one_phase(item, ""),
        &[
            (JS, 9, "empty work item id"),
            (JS, 9, "empty title"),
            (JS, 9, "empty path"),
            (JS, 9, "line must be 1 or more"),
            (JS, 9, "empty owner"),
        ],
    );
    let item = r#"{"id": "a b", "title": "t", "path": "src/./a.py", "tag": "lint", "owner": "o"}"#;
    assert_invalid(
        ONE_MD,
        &one_phase(item, ""),
        &[(JS, 9, "work item id `a b` must be 1 to 64"), (JS, 9, "path `src/./a.py` is not normalized")],
    );
    for path in ["C:/x.py", "a/../b.py", "a//b.py", "a/", "a\u{202e}b"] {
        let item = format!(r#"{{"id": "W", "title": "t", "path": "{path}", "tag": "lint", "owner": "o"}}"#);
        let errors = parse_str(ONE_MD, &one_phase(&item, "")).unwrap_err();
        assert_eq!(errors.len(), 1, "{path}: {errors:?}");
        assert!(!errors[0].message.contains('\u{202e}'), "{}", errors[0]);
    }
    let s = "{\"format\": 1, \"phases\": [{\"id\": \"P1\", \"name\": \" Core\", \"exit_criteria\": [\"\"], \"contract\": [], \"work_items\": [], \"advisory\": [\" \"]}]}";
    assert_invalid(
        "## Phase P1:  Core\n",
        s,
        &[
            (JS, 1, "phase name ` Core` must fit its Markdown heading"),
            (JS, 1, "empty exit criterion"),
            (JS, 1, "empty advisory note"),
        ],
    );
}

#[test]
fn markdown_must_match_the_phases() {
    let s = "{\"format\": 1, \"phases\": [\n{\"id\": \"P1\", \"name\": \"One\", \"exit_criteria\": [], \"contract\": [], \"work_items\": [], \"advisory\": []},\n{\"id\": \"P2\", \"name\": \"Two\", \"exit_criteria\": [], \"contract\": [], \"work_items\": [], \"advisory\": []}\n]}";
    assert!(parse_str("## Phase P1: One\r\ntext\n## Phase P2: Two   \n", s).is_ok());
    assert_invalid("## Phase P1: One\n", s, &[(MD, 1, "no heading for phase `P2`: expected `## Phase P2: Two`")]);
    assert_invalid("x\n## Phase P2: Two\n", s, &[(MD, 2, "no heading for phase `P1`: expected `## Phase P1: One`")]);
    assert_invalid(
        "## Phase P1: One\n## Phase P2: Deux\n## Phase P3: Three\n## Phase P1: One\n## Phase P4\n",
        s,
        &[
            (MD, 2, "heading names phase `P2` `Deux`, but transform_brief_summary.json names it `Two`"),
            (MD, 3, "heading names phase `P3`, which is not in transform_brief_summary.json"),
            (MD, 4, "second heading for phase `P1` (first at line 1)"),
            (MD, 5, "malformed phase heading `## Phase P4`"),
        ],
    );
    // Headings inside fenced code blocks are prose; an unclosed fence hides the rest.
    assert_invalid("## Phase P1: One\n~~~~\n## Phase P2: Two\n~~~\n", s, &[(MD, 4, "no heading for phase `P2`")]);
    // "## Phases" is prose, and so is a deeper "### Phase" when the phases are level 2.
    assert!(parse_str("## Phases\n### Phase P9: x\n## Phase P1: One\n## Phase P2: Two\n", s).is_ok());
    // The phases may be level-3 or -4 headings under a section of their own, with a dash for
    // the colon, extra spaces, a closing `#` run and CRLF line ends.
    let md = "# Brief\r\n## 3. Phased sequence\r\n### Phase P1 — One ###\r\ntext\r\n###  Phase  P2:   Two\r\n";
    let b = parse_str(md, s).unwrap();
    assert_eq!(b.phases.iter().map(|p| p.line).collect::<Vec<_>>(), [3, 5]);
}

#[test]
fn summary_errors_come_first_and_markdown_is_checked_alongside() {
    let item = r#"{"id": "W1", "title": "t", "path": "a.py", "tag": "nope", "owner": "o"}"#;
    assert_invalid(
        "## Phase P1: Kern\n",
        &one_phase(item, ""),
        &[(JS, 9, "unknown tag `nope`"), (MD, 1, "heading names phase `P1` `Kern`")],
    );
}

#[test]
fn invalid_utf8_is_an_error_with_its_line() {
    let errors =
        parse(b"## Phase P1: Core\n\xff\n", one_phase("", "").as_bytes(), Path::new(MD), Path::new(JS)).unwrap_err();
    assert_errors(&errors, &[(MD, 2, "invalid UTF-8 at byte 18")]);
    let errors = parse(ONE_MD.as_bytes(), b"{\n\n\"\xc3\x28\": 1}", Path::new(MD), Path::new(JS)).unwrap_err();
    assert_errors(&errors, &[(JS, 3, "invalid UTF-8 at byte 4")]);
}

#[test]
fn a_byte_order_mark_is_ignored() {
    let brief = parse_str(&format!("\u{feff}{ONE_MD}"), &format!("\u{feff}{}", one_phase("", ""))).unwrap();
    assert_eq!(brief.phases[0].line, 3);
}

#[test]
fn untrusted_text_in_errors_is_escaped() {
    let item = "{\"id\": \"W1\", \"title\": \"t\", \"path\": \"a.py\", \"tag\": \"li\\u202ent\\n\", \"owner\": \"o\"}";
    let errors = parse_str(ONE_MD, &one_phase(item, "")).unwrap_err();
    assert_errors(&errors, &[(JS, 9, "unknown tag `li\\u{202e}nt\\u{a}`")]);
    let s = "{\"format\": 1, \"phases\": [], \"\\u2066x\": 1}";
    let errors = parse_str(ONE_MD, s).unwrap_err();
    assert!(errors.iter().all(|e| !e.message.contains('\u{2066}')), "{errors:?}");
    assert!(errors.iter().any(|e| e.message.contains("unknown field `\\u{2066}x`")), "{errors:?}");
}

/// xorshift64*: a tiny deterministic PRNG for the mutation test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    const NASTY: &[&[u8]] = &[
        b"{",
        b"}",
        b"[",
        b"]",
        b"\"",
        b"\\",
        b",",
        b":",
        b"\n",
        b"\xff",
        b"\xc3",
        b"\xe2\x80\xae",
        b"null",
        b"-1",
        b"1e999",
        b"\"..\"",
        b"\\u0000",
        b"## Phase X: y\n",
    ];
    let mut v = base.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(6) {
            0 => v.truncate(at),
            1 if at < v.len() => v[at] = rng.next() as u8,
            2 if at < v.len() => {
                let end = (at + rng.below(40)).min(v.len());
                v.drain(at..end);
            }
            3 => {
                let chunk = NASTY[rng.below(NASTY.len())];
                v.splice(at..at, chunk.iter().copied());
            }
            4 if at < v.len() => {
                let end = (at + rng.below(200)).min(v.len());
                let copy = v[at..end].to_vec();
                v.splice(at..at, copy);
            }
            _ => {}
        }
    }
    v
}

#[test]
fn mutated_briefs_never_panic() {
    let dir = fixture("valid");
    let md = std::fs::read(dir.join(BRIEF_FILE)).unwrap();
    let js = std::fs::read(dir.join(SUMMARY_FILE)).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut ok, mut bad) = (0, 0);
    for _ in 0..600 {
        let (m, j) = match rng.below(4) {
            0 => (mutate(&mut rng, &md), js.clone()),
            _ => (md.clone(), mutate(&mut rng, &js)),
        };
        match parse(&m, &j, Path::new(MD), Path::new(JS)) {
            Ok(_) => ok += 1,
            Err(errors) => {
                bad += 1;
                assert!(!errors.is_empty());
                for e in &errors {
                    assert!(e.line >= 1, "{e}");
                    assert!(!e.message.contains('\n') && !e.message.contains('\u{202e}'), "{e:?}");
                }
            }
        }
    }
    assert!(bad > 300, "mutations too tame: {ok} ok, {bad} rejected");
}

#[test]
fn deep_and_huge_inputs_are_fine() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_errors(&parse_str(ONE_MD, &deep).unwrap_err(), &[(JS, 1, "must be a JSON object")]);
    let deep = format!("{{\"format\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
    assert_errors(&parse_str(ONE_MD, &deep).unwrap_err(), &[(JS, 1, "unsupported format `null`")]);
    let deep = format!("{{\"format\": 1, \"phases\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
    assert_errors(&parse_str(ONE_MD, &deep).unwrap_err(), &[(JS, 1, "expected a phase object, found an array")]);
    let deep = format!("{{\"format\": 1, \"phases\": [{{\"id\": {}{}}}]}}", "[".repeat(120), "]".repeat(120));
    assert!(parse_str(ONE_MD, &deep).is_err());

    let item = |i: usize| {
        format!(
            "{{\"id\": \"W{i}\", \"title\": \"t\", \"path\": \"src/m{i}.py\", \"line\": {}, \"tag\": \"lint\", \"owner\": \"o\"}}",
            i + 1
        )
    };
    let items: Vec<String> = (0..20_000).map(item).collect();
    let brief = parse_str(ONE_MD, &one_phase(&items.join(",\n"), "")).unwrap();
    assert_eq!(brief.phases[0].work_items.len(), 20_000);
    assert_eq!(brief.phases[0].work_items[19_999].line, Some(20_000));
}
