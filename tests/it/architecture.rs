//! ARCHITECTURE.md, docs/requirements.md and the documents that list the code's vocabularies, held
//! to the source tree: each test reads `src/` with std alone and names every offending file:line.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The most lines a file under `src/` may have, its unit tests included.
const MAX_LINES: usize = 900;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// One file under `src/`, read and split into code and comments.
struct Source {
    /// The path from the repository's root, with `/` between its parts.
    rel: String,
    text: String,
    /// The text with every comment, string and character literal blanked (newlines kept).
    code: String,
    /// Each comment with the line (from 1) it starts on.
    comments: Vec<(usize, String)>,
    /// Per line (index 0 is line 1): whether it is test code (`#[cfg(test)]` or a test module's file).
    test: Vec<bool>,
}

impl Source {
    /// The lines of the code that is not test code, numbered from 1.
    fn code_lines(&self) -> impl Iterator<Item = (usize, &str)> {
        self.code
            .lines()
            .enumerate()
            .filter(|(i, _)| !self.test.get(*i).copied().unwrap_or(false))
            .map(|(i, l)| (i + 1, l))
    }

    fn under(&self, prefixes: &[&str]) -> bool {
        prefixes.iter().any(|p| self.rel.starts_with(p))
    }
}

/// Every `.rs` file under `src/`, sorted by path.
fn sources() -> Vec<Source> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut paths = Vec::new();
    walk(&root().join("src"), &mut paths);
    paths.sort();
    let mut files: Vec<Source> = paths
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
            let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{rel}: {e}"));
            let (code, comments) = lex(&text);
            let test = vec![false; text.lines().count()];
            Source { rel, text, code, comments, test }
        })
        .collect();
    // test regions within each file, and the files of `#[cfg(test)] mod name;` declarations
    let mut test_files = BTreeSet::new();
    for f in &mut files {
        let (lines, children) = test_regions(&f.code);
        for l in lines {
            if let Some(t) = f.test.get_mut(l) {
                *t = true;
            }
        }
        let dir = match f.rel.rsplit_once('/') {
            Some((d, "mod.rs" | "lib.rs" | "main.rs")) => d.to_string(),
            _ => f.rel.trim_end_matches(".rs").to_string(),
        };
        for c in children {
            test_files.insert(format!("{dir}/{c}.rs"));
            test_files.insert(format!("{dir}/{c}/"));
        }
    }
    for f in &mut files {
        if test_files.iter().any(|t| f.rel == *t || (t.ends_with('/') && f.rel.starts_with(t.as_str()))) {
            f.test.iter_mut().for_each(|t| *t = true);
        }
    }
    files
}

/// Splits Rust source into its code, with comments and literals blanked (newlines kept, so line
/// numbers hold), and its comments with the line each starts on.
fn lex(text: &str) -> (String, Vec<(usize, String)>) {
    let c: Vec<char> = text.chars().collect();
    let mut code = String::with_capacity(text.len());
    let mut comments = Vec::new();
    let mut line = 1;
    let mut i = 0;
    // copies c[from..to] as blank (newlines kept), counting lines
    let blank = |code: &mut String, line: &mut usize, from: usize, to: usize| {
        for &ch in &c[from..to.min(c.len())] {
            if ch == '\n' {
                *line += 1;
                code.push('\n');
            } else {
                code.push(' ');
            }
        }
    };
    while i < c.len() {
        let ident_before = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            let end = c[i..].iter().position(|&ch| ch == '\n').map_or(c.len(), |p| i + p);
            comments.push((line, c[i..end].iter().collect()));
            blank(&mut code, &mut line, i, end);
            i = end;
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let (start, mut depth, mut j) = (line, 0usize, i);
            while j < c.len() {
                if c[j] == '/' && c.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            comments.push((start, c[i..j.min(c.len())].iter().collect()));
            blank(&mut code, &mut line, i, j);
            i = j;
        } else if !ident_before
            && (c[i] == 'r' || (c[i] == 'b' && c.get(i + 1) == Some(&'r')))
            && raw_start(&c, i).is_some()
        {
            let (hashes, open) = raw_start(&c, i).unwrap();
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let close: Vec<char> = close.chars().collect();
            let mut j = open + 1;
            while j < c.len() && c[j..].iter().take(close.len()).ne(close.iter()) {
                j += 1;
            }
            let end = (j + close.len()).min(c.len());
            blank(&mut code, &mut line, i, end);
            i = end;
        } else if c[i] == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            blank(&mut code, &mut line, i, j + 1);
            i = j + 1;
        } else if c[i] == '\'' && c.get(i + 1) == Some(&'\\') {
            let end = c[i + 2..].iter().position(|&ch| ch == '\'').map_or(c.len(), |p| i + 3 + p);
            blank(&mut code, &mut line, i, end);
            i = end;
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            blank(&mut code, &mut line, i, i + 3);
            i += 3;
        } else {
            if c[i] == '\n' {
                line += 1;
            }
            code.push(c[i]);
            i += 1;
        }
    }
    (code, comments)
}

/// Where a raw string literal starting at `i` (`r"`, `r#"`, `br#"`, …) opens: its `#` count and
/// the index of its opening quote.
fn raw_start(c: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = if c[i] == 'b' { i + 2 } else { i + 1 };
    let mut hashes = 0;
    while c.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (c.get(j) == Some(&'"')).then_some((hashes, j))
}

/// The lines (from 0) of the items under `#[cfg(test)]` in `code`, and the names of the modules
/// declared there without a body (`#[cfg(test)] mod tests;`: their files are test code).
fn test_regions(code: &str) -> (Vec<usize>, Vec<String>) {
    let b = code.as_bytes();
    let line_of = |at: usize| code[..at].matches('\n').count();
    let (mut lines, mut children) = (Vec::new(), Vec::new());
    let mut from = 0;
    while let Some(p) =
        ["#[cfg(test)]", "#[cfg(all(test"].iter().filter_map(|a| code[from..].find(a).map(|q| from + q)).min()
    {
        // past this attribute and any others, to the item
        let mut j = p;
        loop {
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            if b.get(j) != Some(&b'#') {
                break;
            }
            let mut depth = 0;
            while j < b.len() {
                match b[j] {
                    b'[' => depth += 1,
                    b']' => {
                        depth -= 1;
                        if depth == 0 {
                            j += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        let item = j;
        let semi = code[item..].find(';').map(|q| item + q);
        let brace = code[item..].find('{').map(|q| item + q);
        let end = match (semi, brace) {
            (Some(s), Some(o)) if s < o => s,
            (Some(s), None) => s,
            (_, Some(o)) => {
                let mut depth = 0;
                let mut k = o;
                while k < b.len() {
                    match b[k] {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    k += 1;
                }
                k.min(b.len().saturating_sub(1))
            }
            (None, None) => b.len().saturating_sub(1),
        };
        if semi == Some(end) {
            let words: Vec<&str> = code[item..end].split_whitespace().collect();
            if let Some(i) = words.iter().position(|w| *w == "mod") {
                if let Some(name) = words.get(i + 1) {
                    children.push(name.to_string());
                }
            }
        }
        lines.extend(line_of(p)..=line_of(end));
        from = end.max(p + 1);
    }
    (lines, children)
}

/// Whether `pat` occurs in `line` as a whole name: no letter, digit or `_` just before it, nor just
/// after it when it ends in one.
fn occurs(line: &str, pat: &str) -> bool {
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    line.match_indices(pat).any(|(at, _)| {
        let before = line[..at].chars().next_back().is_none_or(|ch| !ident(ch) || !pat.starts_with(ident));
        let after = line[at + pat.len()..].chars().next().is_none_or(|ch| !ident(ch) || !pat.ends_with(ident));
        before && after
    })
}

/// Fails naming each file:line of non-test code under `within` (every file when empty), outside
/// `allowed`, where one of `patterns` occurs.
fn forbid(claim: &str, patterns: &[&str], within: &[&str], allowed: &[&str]) {
    let mut bad = Vec::new();
    for f in sources() {
        if (!within.is_empty() && !f.under(within)) || f.under(allowed) {
            continue;
        }
        for (n, l) in f.code_lines() {
            if let Some(p) = patterns.iter().find(|p| occurs(l, p)) {
                bad.push(format!("{}:{n}: `{p}`", f.rel));
            }
        }
    }
    assert!(bad.is_empty(), "ARCHITECTURE.md: {claim}; broken at:\n{}", bad.join("\n"));
}

/// Reading and writing files, or running a process.
const IO: &[&str] =
    &["std::fs", "fs::read", "fs::write", "File::open", "File::create", "OpenOptions", "read_dir", "Command::new"];

#[test]
fn every_source_file_opens_with_a_doc_line() {
    let bad: Vec<String> =
        sources().iter().filter(|f| !f.text.starts_with("//!")).map(|f| format!("{}:1", f.rel)).collect();
    assert!(
        bad.is_empty(),
        "each file under src/ starts with a `//!` line saying what it holds; not:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_source_file_is_over_the_line_limit() {
    let bad: Vec<String> = sources()
        .iter()
        .filter(|f| f.text.lines().count() > MAX_LINES)
        .map(|f| format!("{}:{}: {} lines", f.rel, MAX_LINES + 1, f.text.lines().count()))
        .collect();
    assert!(
        bad.is_empty(),
        "no file under src/ is over {MAX_LINES} lines (unit tests included); over:\n{}",
        bad.join("\n")
    );
}

/// The generic arguments of the `Result<` that ends at `open` (the index of its `<`), split at
/// their top-level commas; `None` when they do not close.
fn generic_args(code: &str, open: usize) -> Option<Vec<String>> {
    let (mut depth, mut args, mut cur) = (0, Vec::new(), String::new());
    for ch in code[open..].chars() {
        match ch {
            '<' | '(' | '[' => {
                depth += 1;
                if depth == 1 {
                    continue;
                }
            }
            '>' | ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    args.push(cur.trim().to_string());
                    return Some(args);
                }
            }
            ',' if depth == 1 => {
                args.push(std::mem::take(&mut cur).trim().to_string());
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    None
}

/// A clap value parser in `src/cli/`: `fn name(s: &str) -> Result<T, String>` (one `&str` argument).
fn is_value_parser(f: &Source, line: &str) -> bool {
    let sig = line.split_once("fn ").map(|(_, s)| s);
    f.rel.starts_with("src/cli/")
        && sig.and_then(|s| s.split_once('(')).and_then(|(_, s)| s.split_once(')')).is_some_and(|(args, _)| {
            !args.contains(',') && args.split_once(':').is_some_and(|(_, t)| t.trim() == "&str")
        })
}

#[test]
fn no_result_has_a_string_error_outside_tests() {
    let mut bad = Vec::new();
    for f in sources() {
        let lines: Vec<&str> = f.code.lines().collect();
        for (at, _) in f.code.match_indices("Result<") {
            if f.code[..at].chars().next_back().is_some_and(|ch| ch.is_alphanumeric() || ch == '_') {
                continue;
            }
            let n = f.code[..at].matches('\n').count();
            if f.test.get(n).copied().unwrap_or(false) || is_value_parser(&f, lines[n]) {
                continue;
            }
            let args = generic_args(&f.code, at + "Result".len()).unwrap_or_default();
            if args.len() == 2 && args[1] == "String" {
                bad.push(format!("{}:{}: Result<{}, String>", f.rel, n + 1, args[0]));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "errors are typed (one `Error` per layer), never a String, outside tests and clap's value parsers; found:\n{}",
        bad.join("\n")
    );
}

/// Each requirement id (`R57`) in `text`, as a whole word.
fn requirement_ids(text: &str) -> Vec<String> {
    let c: Vec<char> = text.chars().collect();
    let word = |ch: Option<&char>| ch.is_some_and(|ch| ch.is_alphanumeric() || *ch == '_');
    let mut ids = Vec::new();
    for i in 0..c.len() {
        if c[i] != 'R' || (i > 0 && word(c.get(i - 1))) {
            continue;
        }
        let digits: String = c[i + 1..].iter().take_while(|ch| ch.is_ascii_digit()).collect();
        if (1..=3).contains(&digits.len()) && !word(c.get(i + 1 + digits.len())) {
            ids.push(format!("R{digits}"));
        }
    }
    ids
}

#[test]
fn every_requirement_the_code_cites_is_listed() {
    let doc = read("docs/requirements.md");
    let listed: BTreeSet<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("- **"))
        .filter_map(|l| l.split_once("**").map(|(id, _)| id.to_string()))
        .collect();
    let mut bad = Vec::new();
    for f in sources() {
        for (n, text) in &f.comments {
            for id in requirement_ids(text) {
                if !listed.contains(&id) {
                    bad.push(format!("{}:{n}: {id}", f.rel));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "every requirement a comment in src/ cites has its line in docs/requirements.md; missing:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_test_the_requirements_name_exists() {
    let doc = read("docs/requirements.md");
    let mut bad = Vec::new();
    let mut named = 0;
    for (n, line) in doc.lines().enumerate() {
        for span in line.split('`').skip(1).step_by(2) {
            let Some((file, test)) = span.rsplit_once("::") else { continue };
            let name = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || "_/.".contains(c));
            if !(file.starts_with("tests/") || file.starts_with("src/"))
                || !file.ends_with(".rs")
                || !name(file)
                || !name(test)
            {
                continue;
            }
            named += 1;
            let text = std::fs::read_to_string(root().join(file)).unwrap_or_default();
            let exists = text.lines().any(|l| {
                let l = l.trim_start();
                l.strip_prefix("fn ")
                    .or_else(|| l.strip_prefix("async fn "))
                    .is_some_and(|r| r.strip_prefix(test).is_some_and(|r| r.starts_with('(')))
            });
            if !exists {
                bad.push(format!("docs/requirements.md:{}: `{file}::{test}`", n + 1));
            }
        }
    }
    assert!(named > 0, "docs/requirements.md names no test");
    assert!(
        bad.is_empty(),
        "each test docs/requirements.md names is a `fn` of the file it names; not found:\n{}",
        bad.join("\n")
    );
}

// The "never" claims of ARCHITECTURE.md a search of the code can check. "No circle among the
// top-level modules" is `andon check` on andon itself: tests/it/check.rs::andon_gates_itself_and_the_gate_fires.

#[test]
fn only_cli_prints_and_exits() {
    let claim = "only `cli` prints to stdout or stderr and exits";
    forbid(claim, &["println!", "eprintln!", "print!", "eprint!", "dbg!", "process::exit"], &[], &["src/cli/"]);
}

#[test]
fn only_cli_and_mcp_hold_the_standard_streams() {
    let claim = "only `mcp` writes the protocol to the stdout `cli` hands it";
    forbid(claim, &["io::stdout", "io::stderr", "io::stdin"], &[], &["src/cli/", "src/mcp/"]);
}

#[test]
fn only_cli_knows_clap_and_the_terminal() {
    forbid("only `cli` knows clap and the terminal", &["clap", "indicatif", "IsTerminal"], &[], &["src/cli/"]);
}

#[test]
fn only_mcp_and_cli_know_rmcp_and_tokio() {
    forbid("only `mcp` and `cli` know rmcp and tokio", &["rmcp", "tokio"], &[], &["src/mcp/", "src/cli/"]);
}

#[test]
fn only_the_ledger_appends() {
    forbid("only `ledger::append` appends to the ledger", &[".append(true)"], &[], &["src/ledger/"]);
}

#[test]
fn status_and_preflight_never_write_the_ledger() {
    let claim = "`status` never writes the ledger; `preflight` never initializes it";
    forbid(claim, &["ledger::append", ".append(true)"], &["src/status", "src/preflight"], &[]);
}

#[test]
fn output_never_builds_a_json_document() {
    forbid("`output` never builds a JSON document (it serializes the API's result)", &["json!"], &["src/output/"], &[]);
}

#[test]
fn api_never_reads_the_environment_or_the_terminal() {
    let claim = "`api` never prints, reads the terminal or the environment (each outcome names its exit code from `exit`'s table)";
    let patterns = [
        "env::var",
        "env::vars",
        "env::var_os",
        "env::args",
        "env::current_dir",
        "env::temp_dir",
        "io::stdin",
        "IsTerminal",
        "process::exit",
        "ExitCode",
    ];
    forbid(claim, &patterns, &["src/api/"], &[]);
}

#[test]
fn check_reads_no_environment_variable() {
    forbid(
        "`check` never lets an environment variable suppress a finding",
        &["env::var", "env::var_os"],
        &["src/check/"],
        &[],
    );
}

#[test]
fn text_depends_on_nothing_else_in_the_crate() {
    let mut bad = Vec::new();
    for f in sources().iter().filter(|f| f.under(&["src/text.rs", "src/text/"])) {
        for (n, l) in f.code_lines() {
            if l.match_indices("crate::").any(|(at, _)| !l[at..].starts_with("crate::text")) {
                bad.push(format!("{}:{n}", f.rel));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "ARCHITECTURE.md: `text` depends on nothing else in the crate; broken at:\n{}",
        bad.join("\n")
    );
}

#[test]
fn dialect_uses_only_text() {
    let mut bad = Vec::new();
    for f in sources().iter().filter(|f| f.under(&["src/dialect.rs", "src/dialect/"])) {
        for (n, l) in f.code_lines() {
            if l.match_indices("crate::")
                .any(|(at, _)| !l[at..].starts_with("crate::text") && !l[at..].starts_with("crate::dialect"))
            {
                bad.push(format!("{}:{n}", f.rel));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "ARCHITECTURE.md: `dialect` may use only `text` and std (build.rs compiles it alone); broken at:\n{}",
        bad.join("\n")
    );
}

#[test]
fn facts_resolve_and_extract_do_no_file_io() {
    let claim = "`facts` does no I/O; `resolve` never reads the file system; `extract` never reads another file";
    forbid(claim, IO, &["src/facts", "src/resolve/", "src/extract/"], &[]);
}

#[test]
fn capabilities_evidence_and_panel_run_nothing() {
    let claim = "`capabilities` never runs a tool; `evidence` never runs a command itself; `panel` never calls a model";
    forbid(
        claim,
        &["Command::new", "TcpStream", "UdpSocket"],
        &["src/capabilities", "src/evidence/", "src/panel/"],
        &[],
    );
}

// The vocabularies the documents list, against the code's.

/// The backticked words of the bullets `- \`word\`` that follow the line `after` in `text`, up to
/// the next heading.
fn bullets_after(text: &str, after: &str) -> BTreeSet<String> {
    text.lines()
        .skip_while(|l| !l.contains(after))
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split_once('`').map(|(w, _)| w.to_string()))
        .collect()
}

#[test]
fn the_documents_list_the_contract_kinds_the_code_knows() {
    let code: BTreeSet<String> = andon::config::ContractKind::ALL.iter().map(|k| k.name().to_string()).collect();
    let check = read("docs/check.md");
    let skill = read("plugin/skills/andon-gate/SKILL.md");
    let mut lists = vec![("docs/check.md, the kinds", bullets_after(&check, "The kinds:"))];
    let comment = check.lines().find(|l| l.starts_with("kind = ") && l.contains(" | ")).and_then(|l| l.split_once('#'));
    lists.push((
        "docs/check.md, the comment of `kind =`",
        comment.map(|(_, k)| k.split('|').map(|w| w.trim().to_string()).collect()).unwrap_or_default(),
    ));
    let table = skill
        .lines()
        .skip_while(|l| !l.starts_with("| kind |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`').map(|(w, _)| w.to_string()));
    lists.push(("plugin/skills/andon-gate/SKILL.md, the table of kinds", table.collect()));
    let desc = skill
        .lines()
        .find(|l| l.starts_with("description:"))
        .and_then(|l| l.split_once("andon.toml ("))
        .and_then(|(_, r)| r.split_once(')'));
    lists.push((
        "plugin/skills/andon-gate/SKILL.md, the description",
        desc.map(|(k, _)| k.split(',').map(|w| w.trim().to_string()).collect()).unwrap_or_default(),
    ));
    let bad: Vec<String> = lists.iter().filter(|(_, l)| *l != code).map(|(w, l)| format!("{w}: {l:?}")).collect();
    assert!(bad.is_empty(), "the code's contract kinds are {code:?}; these lists differ:\n{}", bad.join("\n"));
}

#[test]
fn andon_init_writes_only_kinds_the_code_and_the_docs_know() {
    let code: BTreeSet<String> = andon::config::ContractKind::ALL.iter().map(|k| k.name().to_string()).collect();
    let documented = bullets_after(&read("docs/check.md"), "The kinds:");
    let mut bad = Vec::new();
    for t in [
        crate::support::three_stages(),
        crate::support::scratch("rs-workspace"),
        crate::support::scratch("ts-workspace"),
    ] {
        let out = crate::support::run_ok(&["init", "--print", "-q"], t.path());
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(text.contains("docs/check.md"), "init's header points at docs/check.md:\n{text}");
        for (n, l) in text.lines().enumerate() {
            let Some(kind) = l.strip_prefix("kind = \"").and_then(|k| k.strip_suffix('"')) else { continue };
            if !code.contains(kind) || !documented.contains(kind) {
                bad.push(format!("andon.toml:{}: kind {kind:?}", n + 1));
            }
        }
    }
    assert!(bad.is_empty(), "andon init writes a kind the code or docs/check.md does not list:\n{}", bad.join("\n"));
}

/// Language names as the language table spells them: `TypeScript/JavaScript` is two.
fn language_names(list: &str) -> BTreeSet<String> {
    list.split([',', '/']).map(|w| w.trim().to_lowercase()).filter(|w| !w.is_empty()).collect()
}

#[test]
fn the_documents_list_the_languages_the_code_indexes() {
    let code: BTreeSet<String> = andon::extract::LANGUAGES.iter().map(|l| l.name.to_string()).collect();
    let index = read("docs/index.md");
    let mut lists = Vec::new();
    let intro = index.lines().find_map(|l| l.split_once("parses a repository (")).and_then(|(_, r)| r.split_once(')'));
    lists.push(("docs/index.md, the first paragraph", intro.map(|(l, _)| language_names(l)).unwrap_or_default()));
    let headings = index
        .lines()
        .skip_while(|l| *l != "## Resolution")
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter_map(|l| l.strip_prefix("### "))
        .filter(|h| *h != "Open surfaces")
        .collect::<Vec<_>>()
        .join(",");
    lists.push(("docs/index.md, the sections of ## Resolution", language_names(&headings)));
    let bad: Vec<String> = lists.iter().filter(|(_, l)| *l != code).map(|(w, l)| format!("{w}: {l:?}")).collect();
    assert!(bad.is_empty(), "the code's languages are {code:?}; these lists differ:\n{}", bad.join("\n"));
}

#[test]
fn every_decision_the_code_cites_is_listed() {
    let doc = read("docs/requirements.md");
    let mut bad = Vec::new();
    for f in sources() {
        for (n, text) in &f.comments {
            for (at, _) in text.match_indices("decision ") {
                let digits: String = text[at + 9..].chars().take_while(|c| c.is_ascii_digit()).collect();
                if !digits.is_empty() && !doc.contains(&format!("- **Decision {digits}** — ")) {
                    bad.push(format!("{}:{n}: decision {digits}", f.rel));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "every decision a comment cites has its line in docs/requirements.md; missing:\n{}",
        bad.join("\n")
    );
}

/// Each command with the one API function both front ends call for it; `None` where the MCP
/// server has no tool for it (a person's decision, the page, the settings, the ledger's upkeep).
const COMMANDS: &[(&str, &str, Option<&str>)] = &[
    ("init", "api::init", None),
    ("index", "api::index", Some("index")),
    ("index --check", "api::index_check", None),
    ("facts", "api::facts", Some("facts")),
    ("query", "api::query", Some("query")),
    ("stream", "api::stream", Some("stream")),
    ("why", "api::why", Some("why")),
    ("check", "api::check", Some("check")),
    ("preflight", "api::preflight", Some("preflight")),
    ("status", "api::status", Some("status")),
    ("loop", "api::loop_step", Some("loop")),
    ("propose --packet", "api::packet", Some("packet")),
    ("propose", "api::propose", Some("propose")),
    ("verify", "api::verify", Some("verify")),
    ("verify --audit", "api::audit", None),
    ("authorize|defer|skip|override|confirm", "api::decide", None),
    ("ledger check", "api::ledger_check", None),
    ("ledger repair", "api::ledger_repair", None),
    ("config show", "api::config_show", None),
    ("report", "api::report", None),
];

/// The non-test code of the files under `prefix`, joined.
fn code_under(prefix: &str) -> String {
    sources()
        .iter()
        .filter(|f| f.under(&[prefix]))
        .flat_map(|f| f.code_lines().map(|(_, l)| l.to_string()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_command_line_and_the_server_reach_the_same_function_per_command() {
    let cli = code_under("src/cli/");
    let mcp = read("src/mcp/tools.rs");
    let called = |code: &str, f: &str| code.contains(&format!("{f}("));
    let mut bad = Vec::new();
    for (command, f, tool) in COMMANDS {
        if !called(&cli, f) {
            bad.push(format!("`andon {command}`: src/cli/ never calls `{f}`"));
        }
        if let Some(tool) = tool {
            let body =
                mcp.split(&format!("\nfn {}(", if *tool == "loop" { "run_loop" } else { tool })).nth(1).unwrap_or("");
            let body = body.split("\nfn ").next().unwrap_or("");
            if !called(body, f) {
                bad.push(format!("tool `{tool}`: src/mcp/tools.rs's function for it never calls `{f}`"));
            }
        }
    }
    // every tool of the server is in the table
    for name in andon::mcp::tool_names() {
        if !COMMANDS.iter().any(|(_, _, t)| *t == Some(name)) {
            bad.push(format!("tool `{name}` has no command in this table"));
        }
    }
    assert!(bad.is_empty(), "one API function per command, for both front ends:\n{}", bad.join("\n"));
}

#[test]
fn front_ends_hold_no_default_file_name_or_sequence_of_library_calls() {
    // what only the API may do for a command: load the settings, bring the index up to date,
    // compute the report directory, name a report file, or hold the loop's pass budget
    let patterns = [
        "Config::load",
        "api::config(",
        "fresh_index",
        "load_fresh",
        "freshen",
        "index_options",
        "output_path",
        "api::structure::",
        "api::work::loop_step",
        "api::work::status(",
        "api::work::verify(",
        "api::work::propose(",
        ".json\"",
        ".md\"",
        ".txt\"",
        "= 100",
        "(100)",
    ];
    let mut bad = Vec::new();
    for f in sources().iter().filter(|f| f.under(&["src/cli/", "src/mcp/tools.rs"])) {
        for (n, l) in f.code_lines() {
            if let Some(p) = patterns.iter().find(|p| l.contains(*p)) {
                bad.push(format!("{}:{n}: `{p}`", f.rel));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "a front end parses, calls its command's API function and renders; found:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_command_runs_the_compiled_rules() {
    forbid(
        "the crepe program is the differential test's reference; every command derives on the run-time engine",
        &["run_compiled"],
        &[],
        &["src/datalog/mod.rs"],
    );
}

#[test]
fn status_never_walks_or_updates_the_index_and_datalog_never_walks_the_repository() {
    forbid(
        "`status` never walks or updates the index",
        &["index::update", "walk::walk", "update("],
        &["src/status.rs"],
        &[],
    );
    forbid("`datalog` never walks the repository", &["walk::walk", "read_dir", "ignore::"], &["src/datalog/"], &[]);
}

/// The section of ARCHITECTURE.md under `heading`, up to the next `## ` heading.
fn architecture_section(heading: &str) -> String {
    let doc = read("ARCHITECTURE.md");
    let start = doc.find(heading).unwrap_or_else(|| panic!("ARCHITECTURE.md has no `{heading}`"));
    let rest = &doc[start + heading.len()..];
    rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string()
}

/// Fails unless every non-test file that names one of `markers` is named in the checklist
/// `list`, except `exempt` ones, and every path the list names exists but those it writes new.
fn checklist_covers(list: &str, markers: &[&str], exempt: &dyn Fn(&str) -> bool, new: &dyn Fn(&str) -> bool) {
    let mut bad = Vec::new();
    for f in sources() {
        let marked = f.code_lines().any(|(_, l)| markers.iter().any(|m| occurs(l, m)));
        if marked && !exempt(&f.rel) && !list.contains(&format!("`{}`", f.rel)) {
            bad.push(format!("{} names {markers:?} and the checklist does not name it", f.rel));
        }
    }
    for span in list.split('`').skip(1).step_by(2) {
        let path = span.split_whitespace().next().unwrap_or("");
        let named = ["src/", "grammars/", "docs/", "rules/", "plugin/", "tests/"].iter().any(|p| path.starts_with(p))
            || ["Cargo.toml", "README.md"].contains(&path);
        if named && !path.contains('*') && !path.contains('<') && !new(path) && !root().join(path).exists() {
            bad.push(format!("the checklist names `{path}`, which does not exist"));
        }
    }
    assert!(bad.is_empty(), "ARCHITECTURE.md's checklist and the code disagree:\n{}", bad.join("\n"));
}

#[test]
fn the_language_checklist_names_every_place_a_language_is_matched() {
    let list = architecture_section("## Checklist: add a language");
    let markers = ["Lang::Python", "Lang::Rust", "Lang::TypeScript", "Resolver::Python", "Resolver::Rust"];
    // a language's own modules are the files the checklist writes new for the new language
    let own = |rel: &str| ["python", "rust", "typescript"].iter().any(|l| rel.ends_with(&format!("/{l}.rs")));
    checklist_covers(&list, &markers, &own, &|p: &str| p.contains("go"));
}

#[test]
fn the_contract_kind_checklist_names_every_place_a_kind_is_matched() {
    let list = architecture_section("## Checklist: add a contract kind");
    let markers = ["ContractKind::Forbidden", "ContractKind::Layers", "ContractKind::Independence"];
    checklist_covers(&list, &markers, &|_: &str| false, &|p: &str| p.contains("<kind>"));
}
