//! `andon mcp` driven through rmcp's client over a real child process: the handshake, every
//! tool's document against the command line's, the errors, progress, resources, concurrency, and
//! a loop step, then propose and verify.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ProgressNotificationParam, ProgressToken, ReadResourceRequestParams,
    RequestParamsMeta, Tool,
};
use rmcp::service::{NotificationContext, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::support::{clean_three_stages, commit_all, git, json as json_of, run, write_files};

/// A client that keeps every progress notification it receives.
#[derive(Clone, Default)]
struct Client {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Client {
    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params);
    }
}

type Session = RunningService<RoleClient, Client>;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// A session with `andon mcp ROOT` in a child process.
async fn connect(root: &Path) -> (Session, Client) {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_andon"));
    cmd.arg("mcp").arg(root).current_dir(std::env::temp_dir());
    let client = Client::default();
    let session = client.clone().serve(TokioChildProcess::new(cmd).unwrap()).await.expect("handshake");
    (session, client)
}

fn params(name: &str, args: Value) -> CallToolRequestParams {
    let mut p = CallToolRequestParams::new(name.to_string());
    p.arguments = args.as_object().cloned();
    p
}

async fn call(s: &Session, name: &str, args: Value) -> CallToolResult {
    s.call_tool(params(name, args)).await.unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

/// The structured document of a successful call.
async fn doc(s: &Session, name: &str, args: Value) -> Value {
    let r = call(s, name, args).await;
    assert_eq!(r.is_error, Some(false), "{name}: {r:?}");
    r.structured_content.unwrap_or_else(|| panic!("{name}: no structuredContent"))
}

/// The JSON-RPC error code of a call the server refuses as a protocol error.
async fn protocol_error(s: &Session, name: &str, args: Value) -> (i32, String) {
    match s.call_tool(params(name, args)).await {
        Err(ServiceError::McpError(e)) => (e.code.0, e.message.to_string()),
        other => panic!("{name}: expected a JSON-RPC error, got {other:?}"),
    }
}

fn text(r: &CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

fn canonical(d: &Path) -> PathBuf {
    d.canonicalize().unwrap()
}

/// `andon <args> ROOT --format json`, run from elsewhere so every path in it is absolute.
fn cli_doc(args: &[&str], root: &Path) -> Value {
    let root = canonical(root);
    let mut all: Vec<&str> = args.to_vec();
    let root_text = root.to_string_lossy().to_string();
    all.insert(1, &root_text);
    all.extend(["--format", "json"]);
    json_of(&run(&all, &std::env::temp_dir()))
}

const LAYERS: &str =
    "[[contract]]\nname = \"stack\"\nkind = \"layers\"\nlayers = [\"src/cli\", \"src/api\", \"src/core\"]\n";

fn output_schemas(tools: &[Tool]) -> std::collections::BTreeMap<String, Value> {
    tools
        .iter()
        .map(|t| (t.name.to_string(), Value::Object((**t.output_schema.as_ref().expect("outputSchema")).clone())))
        .collect()
}

fn assert_fits(schema: &Value, doc: &Value, what: &str) {
    let v = jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("{what}: the schema does not compile: {e}"));
    let errors: Vec<String> = v.iter_errors(doc).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{what} does not fit its outputSchema: {errors:?}\n{doc:#}");
}

#[test]
fn the_handshake_lists_every_tool_and_no_decision() {
    let t = clean_three_stages(LAYERS);
    runtime().block_on(async {
        let (s, _) = connect(t.path()).await;
        let info = s.peer_info().expect("server info");
        assert_eq!(info.server_info.as_ref().map(|i| i.name.as_str()), Some("andon"));
        let instructions = info.instructions.clone().unwrap_or_default();
        assert!(instructions.contains("person's decisions"), "{instructions}");
        let tools = s.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        for want in [
            "index",
            "query",
            "stream",
            "why",
            "check",
            "status",
            "loop",
            "packet",
            "propose",
            "verify",
            "facts",
            "preflight",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        for decision in ["authorize", "defer", "skip", "override", "confirm"] {
            assert!(!names.contains(&decision), "{decision} is a person's decision, never a tool");
        }
        let verify = tools.iter().find(|t| t.name == "verify").unwrap();
        assert!(verify.input_schema["properties"].get("approach").is_none(), "settling a tie is a person's choice");
        for t in &tools {
            let read_only = t.annotations.as_ref().and_then(|a| a.read_only_hint);
            let want = matches!(
                t.name.as_ref(),
                "query" | "stream" | "why" | "check" | "status" | "facts" | "preflight" | "packet"
            );
            assert_eq!(read_only, Some(want), "{}: readOnlyHint", t.name);
            // the tools that run shell commands say so
            let runs = matches!(t.name.as_ref(), "loop" | "verify");
            let destructive = t.annotations.as_ref().and_then(|a| a.destructive_hint);
            let open = t.annotations.as_ref().and_then(|a| a.open_world_hint);
            assert_eq!(open, Some(runs), "{}: openWorldHint", t.name);
            if !want {
                assert_eq!(destructive, Some(runs), "{}: destructiveHint", t.name);
            }
            assert_eq!(t.output_schema.as_ref().unwrap()["type"], "object", "{}", t.name);
            assert_eq!(t.input_schema["type"], "object", "{}", t.name);
            assert_eq!(t.input_schema["additionalProperties"], false, "{}", t.name);
        }
        s.cancel().await.unwrap();
    });
}

#[test]
fn every_tool_answers_with_the_document_of_its_command() {
    let t = clean_three_stages(LAYERS);
    let d = t.path();
    runtime().block_on(async {
        let (s, _) = connect(d).await;
        let schemas = output_schemas(&s.list_all_tools().await.unwrap());
        let index = doc(&s, "index", json!({})).await;
        assert_eq!(index["stages"], cli_doc(&["index"], d)["stages"]);
        assert_fits(&schemas["index"], &index, "index");
        let cases: [(&str, Value, Vec<&str>); 7] = [
            ("stream", json!({}), vec!["stream"]),
            ("query", json!({"query": "Wire(p, c)"}), vec!["query", "Wire(p, c)"]),
            ("why", json!({"from": "src/cli", "to": "src/core"}), vec!["why", "src/cli", "src/core"]),
            ("facts", json!({"relation": "Stage"}), vec!["facts", "--relation", "Stage"]),
            ("check", json!({}), vec!["check"]),
            ("status", json!({}), vec!["status"]),
            ("preflight", json!({}), vec!["preflight"]),
        ];
        for (name, args, cli) in cases {
            let got = doc(&s, name, args).await;
            // the path goes after the subcommand; `query` and `why` take theirs first too
            let want = cli_doc(&cli, d);
            assert_eq!(got, want, "{name}: the tool's document is the command's");
            assert_fits(&schemas[name], &got, name);
        }
        let why = doc(&s, "why", json!({"from": "src/cli", "to": "src/core"})).await;
        assert_eq!(why["found"], true);
        assert_eq!(doc(&s, "status", json!({})).await["never_run"], true);
        // the loop's document, on a repository with a gap, fits its schema too
        let step = doc(&s, "loop", json!({})).await;
        assert_fits(&schemas["loop"], &step, "loop");
        assert_fits(&schemas["status"], &doc(&s, "status", json!({})).await, "status after a step");
        s.cancel().await.unwrap();
    });
}

#[test]
fn errors_are_results_a_malformed_call_is_a_protocol_error_and_the_server_goes_on() {
    let t = clean_three_stages(LAYERS);
    let d = t.path();
    std::fs::write(d.parent().unwrap().join("outside.dl"), "Mine(p) :- Stage(p, _).\n").ok();
    runtime().block_on(async {
        let (s, _) = connect(d).await;
        let bad = call(&s, "query", json!({"query": "Wyre(p, c)"})).await;
        assert_eq!(bad.is_error, Some(true));
        assert!(text(&bad).contains("did you mean `Wire`"), "{}", text(&bad));
        let bad = call(&s, "facts", json!({"relation": "Stag"})).await;
        assert_eq!(bad.is_error, Some(true));
        assert!(text(&bad).contains("`Stage`"), "{}", text(&bad));
        for (name, args) in [
            ("why", json!({"from": "src/cli"})),
            ("why", json!({"from": "src/cli", "to": "src/core", "extra": 1})),
            ("query", json!({"query": 7})),
            ("propose", json!({"gap": "G"})),
            ("authorize", json!({"gap": "G"})),
            ("skip", json!({})),
            ("strem", json!({})),
            ("verify", json!({"gap": "G", "approach": "structural"})),
        ] {
            let (code, message) = protocol_error(&s, name, args.clone()).await;
            assert_eq!(code, -32602, "{name} {args}: {message}");
            if name == "authorize" {
                assert!(message.contains("person's decision"), "{message}");
            }
            if name == "strem" {
                assert!(message.contains("`stream`"), "{message}");
            }
        }
        // path arguments resolve inside the repository
        for rules in ["../outside.dl", "/etc/hostname"] {
            let r = call(&s, "query", json!({"query": "Stage(p, r)", "rules": [rules]})).await;
            assert_eq!(r.is_error, Some(true), "{rules}");
            assert!(text(&r).contains("outside the repository"), "{}", text(&r));
        }
        // a long query or rule body is answered at once (refused before it is planned), never a
        // dead server; one within the limit is answered
        let long = vec!["Stage(x, y)"; 3000].join(", ");
        let r = call(&s, "query", json!({"query": long})).await;
        assert_eq!(r.is_error, Some(true));
        assert!(text(&r).contains("more than 256 literals"), "{}", text(&r));
        std::fs::write(d.join("deep.dl"), format!("Deep(x) :- {long}.\n")).unwrap();
        let r = call(&s, "query", json!({"query": "Deep(x)", "rules": ["deep.dl"]})).await;
        assert!(text(&r).contains("more than 256 literals"), "{}", text(&r));
        let within = vec!["Stage(x, y)"; 200].join(", ");
        assert_eq!(doc(&s, "query", json!({"query": within})).await["verdict"]["outcome"], "answered");
        // a symbolic link that leads nowhere could lead outside later
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(d.parent().unwrap().join("nowhere"), d.join("dangle")).unwrap();
            let r = call(&s, "query", json!({"query": "Stage(p, r)", "rules": ["dangle/x.dl"]})).await;
            assert!(text(&r).contains("leads nowhere"), "{}", text(&r));
        }
        // a check without contracts is the command's error, with its file and line
        std::fs::write(d.join("andon.toml"), "[index]\nexclude = []\n").unwrap();
        let r = call(&s, "check", json!({})).await;
        assert_eq!(r.is_error, Some(true));
        assert!(text(&r).contains("no contracts to check"), "{}", text(&r));
        // still serving
        assert_eq!(doc(&s, "stream", json!({})).await["verdict"]["outcome"], "mapped");
        s.cancel().await.unwrap();
    });
}

#[test]
fn a_rules_file_without_decl_answers_through_the_server_and_a_conflict_is_an_error_result() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let mut body = String::from("# TODO: first\n");
    for i in 0..3000 {
        body.push_str(&format!("x{i} = {i}\n"));
    }
    body.push_str("# TODO: last\n");
    write_files(
        d,
        &[
            ("a.py", body.as_str()),
            ("at.dl", "At(p, l) :- Marker(p, l, _).\n"),
            ("mixed.dl", "Mixed(x) :- File(x, _).\nMixed(x) :- Marker(_, x, _).\n"),
        ],
    );
    runtime().block_on(async {
        let (s, _) = connect(d).await;
        let got = doc(&s, "query", json!({"query": "At(p, l)", "rules": ["at.dl"]})).await;
        assert_eq!(got["rows"], json!([["a.py", 1], ["a.py", 3002]]), "{got:#}");
        let r = call(&s, "query", json!({"query": "Mixed(x)", "rules": ["mixed.dl"]})).await;
        assert_eq!(r.is_error, Some(true));
        assert!(text(&r).contains("mixed.dl:2:7"), "{}", text(&r));
        // still serving
        assert_eq!(doc(&s, "query", json!({"query": "At(p, l)", "rules": ["at.dl"]})).await["count"], 2);
        s.cancel().await.unwrap();
    });
}

#[test]
fn a_disabled_repository_answers_every_call_with_the_disabled_document() {
    let t = clean_three_stages("enabled = false\n");
    runtime().block_on(async {
        let (s, _) = connect(t.path()).await;
        let r = call(&s, "stream", json!({})).await;
        assert_eq!(r.is_error, Some(true));
        assert!(text(&r).contains("exit 4"), "{}", text(&r));
        assert_eq!(r.structured_content.unwrap()["verdict"]["outcome"], "disabled");
        s.cancel().await.unwrap();
    });
    assert!(!t.path().join(".andon").exists(), "nothing was written");
}

#[test]
fn a_cold_index_sends_progress_before_its_result() {
    let t = clean_three_stages(LAYERS);
    runtime().block_on(async {
        let (s, client) = connect(t.path()).await;
        let mut p = params("index", json!({"rebuild": true}));
        p.set_progress_token(ProgressToken(rmcp::model::NumberOrString::String("cold".into())));
        let r = s.call_tool(p).await.unwrap();
        assert_eq!(r.is_error, Some(false));
        let files = r.structured_content.unwrap()["files"]["parsed"].as_u64().unwrap();
        for _ in 0..50 {
            if !client.progress.lock().unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        // the client handles notifications concurrently: their order on the wire is the wire test's
        let mut seen = client.progress.lock().unwrap().clone();
        assert!(!seen.is_empty(), "no progress notification");
        seen.sort_by(|a, b| a.progress.total_cmp(&b.progress));
        assert!(seen.windows(2).all(|w| w[0].progress < w[1].progress), "no value twice: {seen:?}");
        assert_eq!(seen.last().unwrap().total, Some(files as f64), "{seen:?}");
        let token = &seen[0].progress_token;
        assert!(seen.iter().all(|p| &p.progress_token == token), "one call, one token: {seen:?}");
        s.cancel().await.unwrap();
    });
}

/// A session on the wire itself: JSON-RPC lines in, JSON-RPC lines out.
struct Wire {
    child: std::process::Child,
    out: std::io::BufReader<std::process::ChildStdout>,
}

impl Wire {
    fn start(root: &Path) -> Wire {
        let mut child = crate::support::andon()
            .arg("mcp")
            .arg(root)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = std::io::BufReader::new(child.stdout.take().unwrap());
        Wire { child, out }
    }

    fn send(&mut self, message: &Value) {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// `initialize` (id 1) and its answer, then `notifications/initialized`.
    fn handshake(&mut self) {
        self.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}}}));
        self.until(1);
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// Every message up to and including the response to `id`.
    fn until(&mut self, id: u64) -> Vec<Value> {
        self.until_id(&json!(id))
    }

    /// Every message up to and including the response to `id`, a number or a string.
    fn until_id(&mut self, id: &Value) -> Vec<Value> {
        use std::io::BufRead;
        let mut seen = Vec::new();
        loop {
            let mut line = String::new();
            assert!(self.out.read_line(&mut line).unwrap() > 0, "the server closed stdout; seen: {seen:?}");
            let m: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a JSON-RPC line ({e}): {line}"));
            assert_eq!(m["jsonrpc"], "2.0", "{m}");
            let done = &m["id"] == id;
            seen.push(m);
            if done {
                return seen;
            }
        }
    }
}

#[test]
fn a_call_still_running_when_the_client_closes_stdin_writes_its_result() {
    let t = clean_three_stages(LAYERS);
    let mut w = Wire::start(t.path());
    w.handshake();
    w.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "loop", "arguments": {}}}));
    drop(w.child.stdin.take());
    let answer = w.until(2).pop().unwrap();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(answer["result"]["structuredContent"]["next"].is_object(), "{answer}");
    assert!(w.child.wait().unwrap().success());
}

#[test]
fn many_long_calls_never_keep_the_protocol_waiting() {
    // every loop step runs a command that takes two seconds, and the steps wait on each other
    let t = clean_three_stages("[[command]]\nname = \"slow\"\nrun = \"sleep 2\"\n");
    let mut w = Wire::start(t.path());
    w.handshake();
    for id in 100..120 {
        w.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "loop", "arguments": {}}}),
        );
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let asked = std::time::Instant::now();
    w.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    let seen = w.until(2);
    // a step holds the command's two seconds: a ping that waited for a thread waits that long
    let waited = asked.elapsed();
    assert!(waited < std::time::Duration::from_millis(1200), "the ping waited {waited:?} for a thread");
    assert_eq!(seen.len(), 1, "the ping waited for {} loop steps", seen.len() - 1);
    let rest = w.until(119);
    assert!(rest.len() >= 1, "{rest:?}");
    drop(w.child.stdin.take());
    let mut all = rest;
    use std::io::BufRead;
    for line in (&mut w.out).lines() {
        all.push(serde_json::from_str(&line.unwrap()).unwrap());
    }
    let answered = all.iter().filter(|m| m["id"].as_u64().is_some_and(|i| (100..120).contains(&i))).count();
    assert_eq!(answered, 20, "every step answered");
    assert!(w.child.wait().unwrap().success());
}

#[test]
fn on_the_wire_progress_follows_the_request_token_and_errors_keep_their_ids() {
    let t = clean_three_stages(LAYERS);
    let mut w = Wire::start(t.path());
    w.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "wire", "version": "1"}}}));
    let init = w.until(1).pop().unwrap();
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "andon");
    assert!(
        init["result"]["capabilities"]["tools"].is_object() && init["result"]["capabilities"]["resources"].is_object()
    );
    w.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // no token, no progress
    w.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "index", "arguments": {"rebuild": true}}}));
    let seen = w.until(2);
    assert_eq!(seen.len(), 1, "{seen:?}");
    let r = &seen[0]["result"];
    assert_eq!(r["isError"], false);
    assert_eq!(r["structuredContent"]["verdict"]["outcome"], "indexed");
    assert_eq!(r["content"][0]["type"], "text");
    // the token of the request, on every notification, before the response
    w.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "index", "arguments": {"rebuild": true}, "_meta": {"progressToken": "cold-7"}}}));
    let seen = w.until(3);
    let notes = &seen[..seen.len() - 1];
    assert!(!notes.is_empty(), "{seen:?}");
    let values: Vec<f64> = notes.iter().map(|n| n["params"]["progress"].as_f64().unwrap()).collect();
    assert!(values.windows(2).all(|v| v[0] < v[1]), "progress only increases: {values:?}");
    for n in notes {
        assert_eq!(n["method"], "notifications/progress", "{n}");
        assert_eq!(n["params"]["progressToken"], "cold-7", "{n}");
        assert!(n.get("id").is_none(), "a notification has no id: {n}");
    }
    // `check` against a base revision says when it judges the base
    w.send(&json!({"jsonrpc": "2.0", "id": 30, "method": "tools/call",
        "params": {"name": "check", "arguments": {"base": "HEAD"}, "_meta": {"progressToken": 30}}}));
    let seen = w.until(30);
    let r = &seen.last().unwrap()["result"];
    assert_eq!(r["structuredContent"]["verdict"]["outcome"], "pass", "{r}");
    assert!(
        seen.iter().any(|n| n["params"]["progressToken"] == 30
            && n["params"]["message"].as_str().is_some_and(|m| m.contains("base revision HEAD"))),
        "{seen:?}"
    );
    // a malformed call is a JSON-RPC error with its id, and the server goes on
    w.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "why", "arguments": {"to": "x"}}}));
    let e = w.until(4).pop().unwrap();
    assert_eq!(e["error"]["code"], -32602, "{e}");
    assert!(e["error"]["message"].as_str().unwrap().contains("`from`"), "{e}");
    w.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "query", "arguments": {"query": "Wyre(p, c)"}}}));
    let e = w.until(5).pop().unwrap();
    assert_eq!(e["result"]["isError"], true, "{e}");
    assert!(e["result"]["content"][0]["text"].as_str().unwrap().contains("`Wire`"), "{e}");
    w.send(&json!({"jsonrpc": "2.0", "id": 6, "method": "ping"}));
    assert_eq!(w.until(6).pop().unwrap()["result"], json!({}));
    drop(w.child.stdin.take());
    assert!(w.child.wait().unwrap().success(), "the server ends when its client closes stdin");
}

#[test]
fn the_ledger_and_the_status_board_are_resources() {
    let t = clean_three_stages(LAYERS);
    runtime().block_on(async {
        let (s, _) = connect(t.path()).await;
        let listed = s.list_resources(None).await.unwrap();
        let uris: Vec<&str> = listed.resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(uris, ["andon://ledger.md", "andon://status.md"]);
        let read = |uri: &str| s.read_resource(ReadResourceRequestParams::new(uri.to_string()));
        let first = read("andon://ledger.md").await.unwrap();
        let text_of = |r: &rmcp::model::ReadResourceResult| match &r.contents[0] {
            rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
            other => panic!("{other:?}"),
        };
        assert!(text_of(&first).contains("No ledger yet"), "{}", text_of(&first));
        doc(&s, "loop", json!({})).await;
        let ledger = text_of(&read("andon://ledger.md").await.unwrap());
        let on_disk = std::fs::read_to_string(t.path().join("analysis/andon/ledger/ledger.md")).unwrap();
        assert_eq!(ledger, on_disk, "the resource is the ledger's own rendering");
        let status = text_of(&read("andon://status.md").await.unwrap());
        assert!(status.starts_with("# andon status"), "{status}");
        assert!(read("andon://nothing").await.is_err());
        s.cancel().await.unwrap();
    });
}

const PRICES: &str = "PRICES = {\"apple\": 3, \"pear\": 4}\n\n\ndef price_of(name):\n    return PRICES[name]\n";

/// `catalog` and `shop`, where `shop` imports `total_of`, which `catalog` lacks.
fn broken_wire() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write_files(
        t.path(),
        &[
            ("pyproject.toml", "[project]\nname = \"shopkit\"\nversion = \"0.1.0\"\n"),
            (".gitignore", "analysis/\n"),
            ("catalog/__init__.py", "from catalog.prices import price_of\n\n__all__ = [\"price_of\"]\n"),
            ("catalog/prices.py", PRICES),
            ("shop/__init__.py", ""),
            ("shop/cart.py", "from catalog import total_of\n\n\ndef cart_total(items):\n    return total_of(items)\n"),
        ],
    );
    commit_all(t.path());
    t
}

#[test]
fn a_loop_step_then_propose_and_verify_through_the_server() {
    let t = broken_wire();
    let d = t.path();
    runtime().block_on(async {
        let (s, _) = connect(d).await;
        let schemas = output_schemas(&s.list_all_tools().await.unwrap());
        let step = doc(&s, "loop", json!({})).await;
        assert_eq!(step["next"]["action"], "propose", "{step:#}");
        let gap = step["next"]["gap"].as_str().unwrap().to_string();
        assert_fits(&schemas["loop"], &step, "loop");
        let packet = doc(&s, "packet", json!({"gap": gap})).await;
        assert_eq!(packet, step["packet"], "the loop's packet is the packet tool's");
        assert_fits(&schemas["packet"], &packet, "packet");
        // a write-set outside the repository is refused before anything is written
        let out = call(
            &s,
            "propose",
            json!({"gap": gap, "blast_radius": "local+reversible", "approach": "structural",
                   "reason": "r", "description": "d", "write_set": ["../elsewhere.py"]}),
        )
        .await;
        assert_eq!(out.is_error, Some(true));
        assert!(text(&out).contains("outside the repository"), "{}", text(&out));
        let proposed = doc(
            &s,
            "propose",
            json!({"gap": gap, "blast_radius": "local+reversible", "approach": "structural",
                   "reason": "the import resolves once catalog exports total_of",
                   "description": "define and export total_of in catalog",
                   "write_set": ["catalog/__init__.py", "catalog/prices.py"]}),
        )
        .await;
        assert_eq!(proposed["verdict"]["outcome"], "proposed", "{proposed:#}");
        assert_fits(&schemas["propose"], &proposed, "propose");
        // a refused proposal is an answer (exit 1), and fits the schema too
        let refused = call(
            &s,
            "propose",
            json!({"gap": gap, "blast_radius": "local+reversible", "approach": "structural",
                   "reason": "", "description": "d", "write_set": []}),
        )
        .await;
        let refusal = refused.structured_content.clone().unwrap();
        assert_eq!(refusal["verdict"]["outcome"], "refused", "{refusal:#}");
        assert!(text(&refused).contains("exit 1"), "{}", text(&refused));
        assert_fits(&schemas["propose"], &refusal, "a refused proposal");
        let recorded = doc(&s, "loop", json!({})).await;
        assert_eq!(recorded["next"]["gap"], gap.as_str(), "{recorded:#}");
        write_files(
            d,
            &[
                (
                    "catalog/prices.py",
                    format!("{PRICES}\n\ndef total_of(names):\n    return sum(price_of(n) for n in names)\n").as_str(),
                ),
                (
                    "catalog/__init__.py",
                    "from catalog.prices import price_of, total_of\n\n__all__ = [\"price_of\", \"total_of\"]\n",
                ),
            ],
        );
        let verified = call(&s, "verify", json!({"gap": gap})).await;
        let v = verified.structured_content.clone().unwrap();
        assert_eq!(v["verdict"]["outcome"], "proven", "{v:#}");
        assert!(text(&verified).contains("exit 0"), "{}", text(&verified));
        assert_fits(&schemas["verify"], &v, "verify");
        let after = doc(&s, "loop", json!({})).await;
        let status = doc(&s, "status", json!({})).await;
        assert_eq!(after["next"], status["next"], "the loop and the board agree");
        s.cancel().await.unwrap();
    });
    assert_eq!(run(&["ledger", "check"], d).status.code(), Some(0));
}

#[test]
fn concurrent_calls_are_as_safe_as_concurrent_commands() {
    let t = broken_wire();
    let d = t.path();
    runtime().block_on(async {
        let (s, _) = connect(d).await;
        let (a, b, c, e, f) = tokio::join!(
            call(&s, "loop", json!({})),
            call(&s, "index", json!({"rebuild": true})),
            call(&s, "loop", json!({})),
            call(&s, "status", json!({})),
            call(&s, "query", json!({"query": "Wire(p, c)"})),
        );
        for (i, r) in [a, b, c, e, f].iter().enumerate() {
            assert_eq!(r.is_error, Some(false), "call {i}: {}", text(r));
        }
        s.cancel().await.unwrap();
    });
    let check = run(&["ledger", "check", "--format", "json"], d);
    assert_eq!(check.status.code(), Some(0), "{}", String::from_utf8_lossy(&check.stdout));
    git(d, &["status", "--short"]);
}

#[test]
fn a_request_the_protocol_cannot_read_is_answered_with_its_id_and_an_oversized_one_without() {
    let t = clean_three_stages(LAYERS);
    let mut w = Wire::start(t.path());
    w.handshake();
    w.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": [1, 2]}));
    let e = w.until(2).pop().unwrap();
    assert_eq!(e["error"]["code"], -32602, "{e}");
    w.send(&json!({"jsonrpc": "2.0", "id": "three", "method": "tools/call", "params": "query"}));
    let e = w.until_id(&json!("three")).pop().unwrap();
    assert_eq!(e["error"]["code"], -32602, "{e}");
    // a query of 10 MB is never read whole: its answer is an error at once, and the server goes on
    let huge = "(".repeat(10 << 20);
    w.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "query", "arguments": {"query": huge}}}));
    w.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}));
    let seen = w.until(5);
    assert!(
        seen.iter().any(|m| m["id"].is_null()
            && m["error"]["code"] == -32600
            && m["error"]["message"].as_str().is_some_and(|s| s.contains("larger than"))),
        "{seen:?}"
    );
    drop(w.child.stdin.take());
    assert!(w.child.wait().unwrap().success(), "the server ends when its client closes stdin");
}
