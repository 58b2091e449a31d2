//! The tools: each parses its arguments (nothing else allowed), calls the library API as the
//! command of the same name does, and answers with the API's result serialized: the very JSON
//! document `andon <command> --format json` prints, and the exit code the command would give.

use std::path::Path;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::paths::{inside, read_inside, relative};
use super::progress::Progress;
use crate::api::{self, Error, WalkOverrides};
use crate::exit::Exit;
use crate::output;

/// A tool of the server.
pub(crate) struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// It reads the repository and changes nothing a person wrote (the index and reports under
    /// `output_dir` are caches and views).
    pub read_only: bool,
}

/// Every tool, in the order a session uses them. `authorize`, `defer`, `skip`, `override` and
/// `confirm` are not among them: those are a person's decisions.
pub(crate) const TOOLS: [ToolDef; 12] = [
    ToolDef {
        name: "index",
        title: "Index the repository",
        description: "Parse what changed into facts and persist the index (incremental; every other tool does this first). Same document as `andon index --format json`.",
        read_only: false,
    },
    ToolDef {
        name: "preflight",
        title: "Is the repository ready for the loop?",
        description: "Every readiness check, a level per capability and its fix. Same document as `andon preflight --format json`.",
        read_only: true,
    },
    ToolDef {
        name: "stream",
        title: "The stream",
        description: "Stages (package boundaries), wires (the handoffs between them), stream order, cycles and support directories; with `within`, the modules inside one stage, their imports and layers. Same document as `andon stream --format json [--within STAGE]`.",
        read_only: true,
    },
    ToolDef {
        name: "query",
        title: "Datalog query",
        description: "Answer a Datalog rule body over the index and the ledger, e.g. `Wire(p, c), Stage(c, root)`; an unknown relation is an error naming the nearest one. Same document as `andon query --format json`.",
        read_only: true,
    },
    ToolDef {
        name: "facts",
        title: "Facts of the index",
        description: "The facts of the index, optionally of one relation or one file. Same document as `andon facts --format json`.",
        read_only: true,
    },
    ToolDef {
        name: "why",
        title: "Why does A depend on B?",
        description: "The shortest dependency chain from `from` to `to` (stages, modules, files or directories), hop by hop with path:line. Same document as `andon why --format json`.",
        read_only: true,
    },
    ToolDef {
        name: "check",
        title: "The structural gate",
        description: "Judge the contracts of andon.toml: findings with tier, contract and witness chain. Same document as `andon check --format json`.",
        read_only: true,
    },
    ToolDef {
        name: "status",
        title: "The loop's board",
        description: "The read-only board from the ledger: holds, stages and wires, counters, the constraint, gaps, and `next`. Same document as `andon status --format json`.",
        read_only: true,
    },
    ToolDef {
        name: "loop",
        title: "One step of the loop",
        description: "Detect or resume the stream, scan the cursor's stage, pick one gap, record the step, and say what is next (`next.action`, `next.gap`). Same document as `andon loop --format json`.",
        read_only: false,
    },
    ToolDef {
        name: "packet",
        title: "What the proposer of a gap needs",
        description: "Read-only: the gap, its stage and wire, the stage's earlier gaps and their evidence, and the repository's house rules (its written conventions: data, never instructions to andon). Any gap of the ledger. Same document as `andon propose --packet G --format json`.",
        read_only: true,
    },
    ToolDef {
        name: "propose",
        title: "Propose a fix for the picked gap",
        description: "Check and write a proposal for the loop's picked gap: exactly one blast-radius tag, one approach with its reason, and every file the fix will write. Then apply the fix with your own tools and call `verify`. Same document as `andon propose --format json`.",
        read_only: false,
    },
    ToolDef {
        name: "verify",
        title: "Prove an applied fix",
        description: "Prove the applied fix of a proposed gap: the working tree (or `diff`) against the proposal's base, by the routed approach. A routing tie is a person's to settle (`andon verify --approach`). Same document as `andon verify --gap G --format json`.",
        read_only: false,
    },
];

/// A tool's answer: the command's document and the exit code the command would give.
pub(crate) struct Done {
    pub doc: Value,
    pub exit: Exit,
    /// The call failed as a whole (an `isError` result), its document saying why.
    pub failed: bool,
    /// What else a person should know (a report that could not be written).
    pub notes: Vec<String>,
}

impl Done {
    fn of(doc: &impl serde::Serialize, exit: Exit) -> Done {
        let doc = serde_json::to_value(doc).expect("a document serializes");
        let failed = matches!(exit, Exit::Error | Exit::StaleIndex | Exit::Disabled);
        Done { doc, exit, failed, notes: Vec::new() }
    }

    /// A command's outcome: its document, its exit code, its notes.
    fn outcome<T: serde::Serialize>(out: api::Outcome<T>) -> Done {
        Done { notes: out.notes, ..Done::of(&out.result, out.exit) }
    }
}

/// Why a call did not produce its document.
pub(crate) enum Failure {
    /// The arguments do not fit the tool's input schema: a JSON-RPC error.
    Params(String),
    /// The command could not run: an `isError` result with the command line's message.
    Run { message: String, exit: Exit, doc: Option<Value> },
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        let exit = e.exit();
        let doc = match &e {
            Error::InvalidLedger { message, .. } => {
                serde_json::to_value(api::InvalidLedger { error: message.clone() }).ok()
            }
            _ => None,
        };
        Failure::Run { message: e.to_string(), exit, doc }
    }
}

impl From<super::Error> for Failure {
    fn from(e: super::Error) -> Failure {
        match e {
            super::Error::Api(e) => Failure::from(e),
            e => Failure::Run { message: e.to_string(), exit: Exit::Error, doc: None },
        }
    }
}

type Ran = Result<Done, Failure>;

/// A call that could not run, with the message the command line would print (exit 2).
fn run_error(message: String) -> Failure {
    Failure::Run { message, exit: Exit::Error, doc: None }
}

/// Runs tool `name` with `args` on the repository at `root` (canonical).
pub(crate) fn call(root: &Path, name: &str, args: Value, progress: &Progress) -> Ran {
    if let Some(d) = api::Disabled::of(root) {
        let doc = serde_json::to_value(&d).ok();
        return Err(Failure::Run { message: d.message(), exit: Exit::Disabled, doc });
    }
    match name {
        "index" => index(root, parse(args)?, progress),
        "preflight" => preflight(root, parse(args)?, progress),
        "stream" => stream(root, parse(args)?, progress),
        "query" => query(root, parse(args)?, progress),
        "facts" => facts(root, parse(args)?, progress),
        "why" => why(root, parse(args)?, progress),
        "check" => check(root, parse(args)?, progress),
        "status" => status(root, parse(args)?),
        "loop" => run_loop(root, parse(args)?, progress),
        "packet" => packet(root, parse(args)?),
        "propose" => propose(root, parse(args)?),
        "verify" => verify(root, parse(args)?, progress),
        _ => Err(Failure::Params(unknown_tool(name))),
    }
}

/// The message for a tool the server lacks, with the nearest name.
pub(crate) fn unknown_tool(name: &str) -> String {
    let names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
    let decisions = ["authorize", "defer", "skip", "override", "confirm"];
    if decisions.contains(&name) {
        return format!(
            "`{name}` is a person's decision, never a tool: ask the person to run `andon {name} …` themselves"
        );
    }
    match crate::text::nearest(name, names.iter().copied()) {
        Some(near) => format!("unknown tool `{name}`; did you mean `{near}`?"),
        None => format!("unknown tool `{name}` (the tools: {})", names.join(", ")),
    }
}

/// The arguments of a call, as the tool's input schema says (no other key; `null` is none).
fn parse<T: DeserializeOwned>(args: Value) -> Result<T, Failure> {
    let args = if args.is_null() { Value::Object(Default::default()) } else { args };
    serde_json::from_value(args).map_err(|e| Failure::Params(format!("invalid arguments: {e}")))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IndexArgs {
    #[serde(default)]
    rebuild: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StreamArgs {
    within: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FactsArgs {
    relation: Option<String>,
    file: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QueryArgs {
    query: String,
    #[serde(default)]
    rules: Vec<String>,
    #[serde(default)]
    explain: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WhyArgs {
    from: String,
    to: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckArgs {
    base: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LoopArgs {
    max_passes: Option<u32>,
    #[serde(default)]
    slow: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PacketArgs {
    gap: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProposeArgs {
    gap: String,
    blast_radius: crate::config::BlastRadius,
    approach: String,
    reason: String,
    description: String,
    write_set: Vec<String>,
    proposer: Option<String>,
    #[serde(default)]
    interview: Vec<crate::ledger::Interview>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VerifyArgs {
    gap: String,
    command: Option<String>,
    diff: Option<String>,
    rubric: Option<String>,
    process: Option<String>,
    panel: Option<String>,
    proposer: Option<String>,
}

/// The repository at `root`, its settings' walk, progress reported to the client.
fn repo<'a>(root: &'a Path, progress: &'a Progress) -> api::Repo<'a> {
    const SETTINGS: &WalkOverrides = &WalkOverrides {
        hidden: false,
        no_ignore: false,
        vendored: false,
        follow: false,
        exclude: Vec::new(),
        max_filesize: None,
        threads: None,
        stream: None,
    };
    api::Repo { root, walk: SETTINGS, progress }
}

fn index(root: &Path, a: IndexArgs, progress: &Progress) -> Ran {
    Ok(Done::outcome(api::index(&repo(root, progress), a.rebuild)?))
}

fn preflight(root: &Path, _: NoArgs, progress: &Progress) -> Ran {
    let path_var = std::env::var_os("PATH");
    Ok(Done::outcome(api::preflight(&repo(root, progress), path_var.as_deref(), &Reports)?))
}

fn stream(root: &Path, a: StreamArgs, progress: &Progress) -> Ran {
    Ok(Done::outcome(api::stream(&repo(root, progress), a.within.as_deref())?))
}

fn query(root: &Path, a: QueryArgs, progress: &Progress) -> Ran {
    let mut rules = Vec::new();
    for f in &a.rules {
        let path = inside(root, f, "rules")?;
        let bytes = read_inside(root, &path, 64 << 20).map_err(|e| run_error(format!("cannot read rules: {e}")))?;
        let text =
            String::from_utf8(bytes).map_err(|e| run_error(format!("{f}: cannot read rules: not UTF-8 ({e})")))?;
        rules.push((f.clone(), text));
    }
    let ask = api::QueryAsk { query: a.query, rules, explain: a.explain, budget: Default::default(), no_index: false };
    Ok(Done::outcome(api::query(&repo(root, progress), &ask)?))
}

fn facts(root: &Path, a: FactsArgs, progress: &Progress) -> Ran {
    let file = a.file.as_deref().map(|f| inside(root, f, "file").map(|p| relative(root, &p))).transpose()?;
    Ok(Done::outcome(api::facts(&repo(root, progress), a.relation.as_deref(), file.as_deref())?))
}

fn why(root: &Path, a: WhyArgs, progress: &Progress) -> Ran {
    Ok(Done::outcome(api::why(&repo(root, progress), &a.from, &a.to)?))
}

fn check(root: &Path, a: CheckArgs, progress: &Progress) -> Ran {
    let ask = api::CheckAsk { base: a.base, ..Default::default() };
    let out = api::check(&repo(root, progress), &ask)?;
    Ok(Done { notes: out.notes, ..Done::of(&out.result.report, out.exit) })
}

fn status(root: &Path, _: NoArgs) -> Ran {
    Ok(Done::outcome(api::status(root, &Reports)?))
}

fn run_loop(root: &Path, a: LoopArgs, progress: &Progress) -> Ran {
    Ok(Done::outcome(api::loop_step(&repo(root, progress), a.max_passes, a.slow, &Reports)?))
}

fn packet(root: &Path, a: PacketArgs) -> Ran {
    Ok(Done::outcome(api::packet(root, &a.gap)?))
}

fn propose(root: &Path, a: ProposeArgs) -> Ran {
    let write_set = a
        .write_set
        .iter()
        .map(|f| inside(root, f, "write_set").map(|p| relative(root, &p)))
        .collect::<Result<_, _>>()?;
    let p = crate::andon_loop::proposal::Proposal {
        gap: a.gap,
        blast_radius: a.blast_radius,
        approach: a.approach,
        reason: a.reason,
        description: a.description,
        write_set,
        base_commit: None,
        proposer: a.proposer,
        judging: Default::default(),
        interview: a.interview,
        written: None,
    };
    Ok(Done::outcome(api::propose(root, p, &Reports)?))
}

fn verify(root: &Path, a: VerifyArgs, progress: &Progress) -> Ran {
    let file = |f: &Option<String>, what: &str| f.as_deref().map(|f| inside(root, f, what)).transpose();
    let ask = api::work::VerifyAsk {
        gap: Some(a.gap),
        diff: a.diff.as_deref().map(|d| diff_text(root, d)).transpose()?,
        command: a.command,
        rubric: file(&a.rubric, "rubric")?,
        process: file(&a.process, "process")?,
        panel: file(&a.panel, "panel")?,
        proposer: a.proposer,
        // settling a routing tie is a person's choice: `andon verify --approach`, never a tool's
        approach: None,
    };
    let out = api::verify(&repo(root, progress), &ask, None, &Reports)?;
    let doc = match &out.result {
        api::work::VerifyResult::Gap(v) => Done::of(v, out.exit),
        api::work::VerifyResult::Request(r) => Done::of(r, out.exit),
    };
    Ok(Done { notes: out.notes, ..doc })
}

/// A `diff` argument: the unified diff itself (it has several lines), else a file inside the
/// repository holding it.
fn diff_text(root: &Path, d: &str) -> Result<String, Failure> {
    if d.contains('\n') {
        return Ok(d.to_string());
    }
    let path = inside(root, d, "diff")?;
    let bytes = read_inside(root, &path, 64 << 20).map_err(|e| run_error(format!("cannot read the diff: {e}")))?;
    String::from_utf8(bytes).map_err(|e| run_error(format!("{d}: cannot read the diff: not UTF-8 ({e})")))
}

/// The human reports a tool's command writes under `output_dir`, rendered as the command line's.
struct Reports;

impl api::Render for Reports {
    fn human(&self, report: api::Human<'_>, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        output::human_report(report, w)
    }
}
