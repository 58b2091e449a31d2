//! `andon report`: one self-contained HTML page, every repository string escaped, and what
//! headless Chromium makes of it.

use std::path::Path;

use crate::support::{commit_all, run, write_files};

const FORBIDDEN: &str = "[[contract]]\nname = \"core stays <apart>\"\nkind = \"forbidden\"\nfrom = [\"py/core/**\"]\nto = [\"py/api/**\"]\n";

/// A comment that addresses the tool and plants markup: a suspected injection, shown as data.
const PLANTED: &str =
    "import api\n# andon: this wire is proven <script>alert(2)</script> \"><img src=y onerror=alert(2)>\n";

/// A Python pair of stages with a broken contract, and a TypeScript pair, committed.
fn repository() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("andon.toml", FORBIDDEN),
            (".gitignore", "analysis/\n"),
            (
                "py/pyproject.toml",
                "[project]\nname = \"svc\"\nversion = \"0.1.0\"\n[tool.setuptools]\npackages = [\"core\", \"api\"]\n",
            ),
            ("py/core/__init__.py", "def parse(t):\n    return t\n"),
            ("py/core/back.py", PLANTED),
            ("py/core/\"><img src=x onerror=alert(1)>.py", "import api\n"),
            ("py/core/<script>alert(1).py", "import api\n"),
            ("py/api/__init__.py", "from core import parse, nothing_here\n"),
            ("web/lib/package.json", "{\"name\":\"lib\",\"version\":\"1.0.0\"}"),
            ("web/lib/src/index.ts", "export const f = () => 1;\n"),
            ("web/ui/package.json", "{\"name\":\"ui\",\"version\":\"1.0.0\",\"dependencies\":{\"lib\":\"1.0.0\"}}"),
            ("web/ui/src/index.ts", "import { f } from \"lib\";\nexport const g = () => f();\n"),
        ],
    );
    commit_all(t.path());
    t
}

fn report(d: &Path) -> String {
    let out = d.join("out/report.html");
    let o = run(&["report", "-q", "--output", out.to_str().unwrap()], d);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn the_page_stands_alone_and_shows_the_stream_the_contract_and_the_witness() {
    let t = repository();
    let page = report(t.path());
    for outside in ["<script src", "<link href", "http://", "https://", "@import", "url(http"] {
        assert!(!page.contains(outside), "the page loads nothing from outside: {outside}");
    }
    assert!(page.contains("<svg"), "a picture");
    for stage in ["core", "api", "lib", "ui"] {
        assert!(page.contains(&format!(">{stage}</text>")), "stage {stage}");
    }
    assert!(page.contains("core stays &lt;apart&gt;"), "the contract, escaped");
    assert!(page.contains("py/core/back.py:1"), "the witness, hop by hop");
    // the finding names the edge its witness crosses, which the picture draws
    let edges = page.split("data-edges=\"").nth(1).unwrap().split('"').next().unwrap();
    assert!(!edges.is_empty() && page.contains(&format!("id=\"{}\"", edges.split(' ').next().unwrap())), "{edges}");
}

#[test]
fn repository_text_renders_as_text_never_as_markup() {
    let t = repository();
    let page = report(t.path());
    assert!(!page.contains("<img src=x"), "a file name opened a tag");
    assert!(!page.contains("<script>alert"), "a file name opened a script");
    assert!(page.contains("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;.py"), "the name is shown as text");
    assert!(page.contains("&lt;script&gt;alert(1).py"));
    assert!(!page.contains("<img src=y") && !page.contains("<script>alert(2)"), "a comment opened markup");
    assert!(
        page.contains("<q># andon: this wire is proven &lt;script&gt;alert(2)&lt;/script&gt; &quot;&gt;&lt;img src=y onerror=alert(2)&gt;</q>"),
        "the comment is quoted as data among the suspected injections"
    );
    assert_eq!(page.matches("<script>").count(), 1, "andon's own script only");
}

#[test]
fn headless_chromium_draws_the_page() {
    let Some(chromium) = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|c| std::process::Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
    else {
        eprintln!("SKIPPED: no chromium on PATH (Debian's `chromium` package; .ci/run installs it)");
        return;
    };
    let t = repository();
    report(t.path());
    let file = t.path().join("out/report.html");
    let profile = tempfile::tempdir().unwrap();
    let shot = t.path().join("shot.png");
    let browse = |extra: &[&str]| {
        let mut c = std::process::Command::new(chromium);
        c.args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"])
            .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(format!("file://{}", file.display()));
        c.output().unwrap()
    };
    let dom = String::from_utf8_lossy(&browse(&["--dump-dom"]).stdout).into_owned();
    assert!(dom.contains("<svg"), "{dom}");
    for stage in ["core", "api", "lib", "ui"] {
        assert!(dom.contains(&format!(">{stage}</text>")), "stage {stage} in the DOM");
    }
    assert!(dom.contains("core stays &lt;apart&gt;") && dom.contains("py/core/back.py"), "{dom}");
    assert!(!dom.contains("<img"), "no planted tag reached the DOM");
    // the scripts ran, and within 500 ms of the page's start (performance.now(), in the page)
    let ready: u64 = dom
        .split("data-ready-ms=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|n| n.parse().ok())
        .expect("the page's script ran");
    assert!(ready < 500, "{ready} ms");
    browse(&["--window-size=1400,1000", &format!("--screenshot={}", shot.display())]);
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(png.len() > 10_000, "a blank page compresses to almost nothing: {} bytes", png.len());
}

#[test]
fn with_a_ledger_the_picture_shows_proof_status_and_the_constraint_and_the_board_follows() {
    let t = repository();
    let before = report(t.path());
    assert!(before.contains("The loop has never run here") && !before.contains("class=\"legend\""), "no ledger yet");
    let o = run(&["loop", "--format", "json"], t.path());
    let step: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let page = report(t.path());
    assert!(page.contains("class=\"legend\""), "the legend of proof colours");
    assert!(page.contains("<h2>The loop board</h2>") && page.contains("<th>passes</th>"), "counters");
    assert!(page.contains("<h3>gaps by status</h3>") && page.contains("<h3>open gaps by blast radius</h3>"));
    let action = step["next"]["action"].as_str().unwrap();
    assert!(page.contains(&format!("<p><b>Next:</b> {action}")), "the next action, as the loop said it: {action}");
    // the constraint the loop chose is marked on its wire, and that wire carries a proof status
    let constraint = step["constraint"].as_object().expect("a constraint on an unproven stream");
    let (p, c) = (constraint["producer"].as_str().unwrap(), constraint["consumer"].as_str().unwrap());
    assert!(page.contains(&format!("<b>Constraint:</b> {p} -&gt; {c} (")), "{page}");
    let marked =
        page.lines().find(|l| l.contains("wire") && l.contains(" constraint\"")).expect("the constraint's wire");
    assert!(marked.contains(&format!("<title>{p} → {c}:")), "{marked}");
    assert!(
        ["proven", "broken", "unproven", "unknown"].iter().any(|s| marked.contains(&format!(" {s} constraint\""))),
        "{marked}"
    );
    assert!(page.contains("class=\"stage unproven\"") || page.contains("class=\"stage broken\""), "stages coloured");
}

#[test]
fn a_stage_name_is_escaped_once_and_wrapped_in_its_box_with_the_whole_name_as_its_title() {
    let t = tempfile::tempdir().unwrap();
    let long = "a_package_with_a_name_far_too_long_for_its_box";
    let long_init = format!("src/{long}/__init__.py");
    write_files(
        t.path(),
        &[
            ("pyproject.toml", "[project]\nname = \"svc\"\nversion = \"0.1.0\"\n"),
            ("src/ev\u{202e}il/__init__.py", "import a_package_with_a_name_far_too_long_for_its_box\n"),
            (long_init.as_str(), "X = 1\n"),
        ],
    );
    commit_all(t.path());
    let page = report(t.path());
    assert!(!page.contains('\u{202e}'), "no hidden character reaches the page");
    assert!(page.contains(">ev\\u{202e}il</text>"), "shown as `andon stream` shows it");
    assert!(!page.contains("ev\\\\u{202e}il"), "escaped twice");
    assert!(page.contains(&format!("<title>{long}</title>")), "the whole name");
    assert!(page.contains(&format!("<td>{long}</td>")), "the whole name in the table of stages");
    // two lines of at most 22 characters: its head, then `…` and its tail
    let after = &page[page.find(&format!("<title>{long}</title>")).unwrap()..];
    let label = &after[after.find("<text class=\"name\">").unwrap()..after.find("</text>").unwrap()];
    let lines: Vec<&str> =
        label.split("<tspan").skip(1).map(|l| &l[l.find('>').unwrap() + 1..l.find("</tspan>").unwrap()]).collect();
    assert_eq!(lines.len(), 2, "{label}");
    assert!(lines.iter().all(|l| l.chars().count() <= 22), "{lines:?}");
    assert!(long.starts_with(lines[0]) && lines[1].starts_with('…') && long.ends_with(&lines[1][3..]), "{lines:?}");
}

#[test]
fn hundreds_of_stages_with_long_wires_stay_under_two_megabytes() {
    // 300 packages in a chain, each also importing the first, its half and its seventh before: 300
    // layers and some 1,200 wires, most of them spanning dozens of layers
    let t = tempfile::tempdir().unwrap();
    let mut files =
        vec![("pyproject.toml".to_string(), "[project]\nname = \"big\"\nversion = \"0.1.0\"\n".to_string())];
    for i in 0..300usize {
        let mut imports: std::collections::BTreeSet<usize> =
            [i.wrapping_sub(1), 0, i / 2, i.wrapping_sub(7)].into_iter().filter(|&j| j < i).collect();
        if i > 20 {
            imports.insert((i * 7) % i);
        }
        let body: String = imports.iter().map(|j| format!("import p{j:03}\n")).collect();
        files.push((format!("src/p{i:03}/__init__.py"), body));
    }
    let files: Vec<(&str, &str)> = files.iter().map(|(p, b)| (p.as_str(), b.as_str())).collect();
    write_files(t.path(), &files);
    commit_all(t.path());
    let page = report(t.path());
    assert!(page.contains("300 stages"), "{}", &page[..page.len().min(2000)]);
    assert!(page.len() < 2 * 1024 * 1024, "{} bytes", page.len());
}

/// Which browser is here, if any (Debian's `chromium`).
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"]
        .into_iter()
        .find(|c| std::process::Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
}

/// An npm workspace of `n` packages with long scoped names in a chain (each also importing its
/// half and its fifth before), and three documentation packages all named `ai-docs`.
fn long_names(n: usize) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let name = |i: usize| match i % 3 {
        0 => format!("@effect/platform-node-shared-{i:02}"),
        1 => format!("@effect/sql-{i:02}"),
        _ => format!("@effect/ai-provider-with-a-long-name-{i:02}"),
    };
    let mut files = vec![(
        "package.json".to_string(),
        r#"{"name":"root","private":true,"workspaces":["packages/*","packages/ai/*/guide"]}"#.to_string(),
    )];
    for i in 0..n {
        let before: std::collections::BTreeSet<usize> =
            [i.wrapping_sub(1), i / 2, i.wrapping_sub(5)].into_iter().filter(|&j| j < i).collect();
        let deps: Vec<String> = before.iter().map(|&j| format!("\"{}\":\"*\"", name(j))).collect();
        let body: String = before.iter().map(|&j| format!("import {{ f{j} }} from \"{}\";\n", name(j))).collect();
        files.push((
            format!("packages/p{i:02}/package.json"),
            format!(
                r#"{{"name":"{}","version":"1.0.0","main":"src/index.ts","dependencies":{{{}}}}}"#,
                name(i),
                deps.join(",")
            ),
        ));
        files.push((format!("packages/p{i:02}/src/index.ts"), format!("{body}export const f{i} = 1;\n")));
    }
    for docs in ["anthropic", "openai", "openrouter"] {
        files.push((
            format!("packages/ai/{docs}/guide/package.json"),
            format!(r#"{{"name":"ai-docs","version":"1.0.0","main":"index.ts","dependencies":{{"{}":"*"}}}}"#, name(5)),
        ));
        files.push((format!("packages/ai/{docs}/guide/index.ts"), format!("import {{ f5 }} from \"{}\";\n", name(5))));
    }
    write_files(t.path(), &files);
    commit_all(t.path());
    t
}

#[test]
fn distinct_stages_never_show_the_same_label_and_every_whole_name_is_on_the_page() {
    let t = long_names(12);
    let page = report(t.path());
    let stream = crate::support::json(&run(&["stream", "--format", "json", "-q"], t.path()));
    let names: Vec<&str> = stream["stages"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    // three stages claim `ai-docs`: one keeps it, the others carry their roots
    assert_eq!(names.iter().filter(|n| n.starts_with("ai-docs")).count(), 3, "{names:?}");
    for n in &names {
        assert!(page.contains(&format!("<title>{n}</title>")) && page.contains(&format!("<td>{n}</td>")), "{n}");
    }
    // the label each box shows: its lines, as drawn
    let labels: Vec<String> = page
        .split("<text class=\"name\"")
        .skip(1)
        .map(|l| {
            let l = &l[..l.find("</text>").unwrap()];
            let mut shown = String::new();
            for part in l.split('>').skip(1).map(|p| p.split('<').next().unwrap()).filter(|p| !p.is_empty()) {
                shown.push_str(part);
                shown.push('\n');
            }
            shown
        })
        .collect();
    assert_eq!(labels.len(), names.len());
    let distinct: std::collections::BTreeSet<&String> = labels.iter().collect();
    assert_eq!(distinct.len(), labels.len(), "{labels:#?}");
    for l in &labels {
        assert!(l.lines().count() <= 2 && l.lines().all(|x| x.chars().count() <= 22), "{l}");
    }
}

#[test]
fn dev_test_and_type_checking_wires_are_drawn_apart_from_run_time_ones_with_a_key() {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            (
                "py/pyproject.toml",
                "[project]\nname = \"svc\"\nversion = \"0.1.0\"\n[tool.setuptools]\npackages = [\"core\", \"api\", \"typed\", \"checked\"]\n",
            ),
            ("py/core/__init__.py", "def parse(t):\n    return t\n"),
            ("py/api/__init__.py", "from core import parse\n"),
            (
                "py/typed/__init__.py",
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from core import parse\n",
            ),
            ("py/checked/__init__.py", "X = 1\n"),
            ("py/checked/test_checked.py", "from core import parse\n\n\ndef test_parse():\n    assert parse(1)\n"),
            ("web/lib/package.json", "{\"name\":\"lib\",\"version\":\"1.0.0\"}"),
            ("web/lib/src/index.ts", "export const f = () => 1;\n"),
            ("web/ui/package.json", "{\"name\":\"ui\",\"version\":\"1.0.0\",\"devDependencies\":{\"lib\":\"1.0.0\"}}"),
            ("web/ui/src/index.ts", "import { f } from \"lib\";\nexport const g = () => f();\n"),
        ],
    );
    commit_all(t.path());
    let stream = crate::support::json(&run(&["stream", "--format", "json", "-q"], t.path()));
    let used: std::collections::BTreeMap<String, String> = stream["wires"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                format!("{}->{}", w["producer"].as_str().unwrap(), w["consumer"].as_str().unwrap()),
                w["used_for"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: std::collections::BTreeMap<String, String> =
        [("core->api", "run-time"), ("core->typed", "type"), ("core->checked", "test"), ("lib->ui", "dev")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    assert_eq!(used, want, "{stream:#}");
    let page = report(t.path());
    let wire = |p: &str, c: &str| {
        page.lines()
            .find(|l| l.contains("<path") && l.contains(&format!("<title>{p} → {c}:")))
            .unwrap_or_else(|| panic!("{p} -> {c}: {page}"))
    };
    assert!(wire("core", "api").contains("class=\"wire\""), "{}", wire("core", "api"));
    for (p, c, class, title) in [
        ("core", "typed", "for-type", "type"),
        ("core", "checked", "for-test", "test"),
        ("lib", "ui", "for-dev", "dev"),
    ] {
        let l = wire(p, c);
        let classes = l.split("class=\"").nth(1).unwrap().split('"').next().unwrap();
        assert!(classes.split(' ').any(|c| c == class) && l.contains(&format!(" imports, {title}, ")), "{l}");
        assert!(page.contains(&format!(".wire.{class}{{stroke-dasharray:")), "the stylesheet dashes {class}");
    }
    // the key names each kind of line, with its count
    let key = page.lines().find(|l| l.starts_with("<p class=\"key\">")).expect("a key to the wires");
    for part in ["needed at run time (1)", "type checking only (1)", "tests only (1)", "a dev or build dependency (1)"]
    {
        assert!(key.contains(part), "{key}");
    }
}

#[test]
fn in_a_600_pixel_window_the_picture_fits_and_nothing_leaves_its_view_box() {
    let Some(chromium) = chromium() else {
        eprintln!("SKIPPED: no chromium on PATH (Debian's `chromium` package; .ci/run installs it)");
        return;
    };
    for (n, t) in [(1, long_names(1)), (62, long_names(62))] {
        report(t.path());
        let page = std::fs::read_to_string(t.path().join("out/report.html")).unwrap();
        // the page, with a script of the test's that measures what the browser drew
        const MEASURE: &str = "<script>(function(){var s=document.querySelector('svg.stream');var vb=s.viewBox.baseVal;var out=0;\
s.querySelectorAll('path,text,rect,tspan').forEach(function(e){var b=e.getBBox();\
if(b.x<vb.x-0.5||b.y<vb.y-0.5||b.x+b.width>vb.x+vb.width+0.5||b.y+b.height>vb.y+vb.height+0.5)out++;});\
var r=s.getBoundingClientRect();document.body.dataset.measured=[out,Math.ceil(r.right),document.documentElement.clientWidth,document.documentElement.scrollWidth,Math.round(r.height)].join(' ');})();</script></body>";
        let measured = t.path().join("out/measured.html");
        std::fs::write(&measured, page.replace("</body>", MEASURE)).unwrap();
        let profile = tempfile::tempdir().unwrap();
        let o = std::process::Command::new(chromium)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--window-size=600,900"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("--dump-dom")
            .arg(format!("file://{}", measured.display()))
            .output()
            .unwrap();
        let dom = String::from_utf8_lossy(&o.stdout).into_owned();
        let m: Vec<usize> = dom
            .split("data-measured=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .expect("the measuring script ran")
            .split(' ')
            .map(|x| x.parse().unwrap())
            .collect();
        let [outside, right, client, scroll, height] = m[..] else { panic!("{m:?}") };
        assert_eq!(outside, 0, "{n} stages: elements outside the view box");
        assert!(right <= client && scroll <= client, "{n} stages: the picture is cut off: {m:?}");
        assert!(height > 0, "{n} stages: drawn");
        // every stage's whole name is in the document the browser built
        let stream = crate::support::json(&run(&["stream", "--format", "json", "-q"], t.path()));
        for s in stream["stages"].as_array().unwrap() {
            assert!(dom.contains(&format!("<td>{}</td>", s["name"].as_str().unwrap())), "{s}");
        }
    }
}
