//! The JSON Schemas of the tools: each tool's `inputSchema` (its arguments, nothing else allowed)
//! and `outputSchema` (the JSON document `andon <command> --format json` prints, the tool's
//! `structuredContent`). An output schema requires what every document of the command carries and
//! types the rest; a test holds every document the command line prints to it.

use serde_json::{Map, Value, json};

/// An object schema: `props` are `(name, schema, required)`; `open` allows other keys.
fn object(props: &[(&str, Value, bool)], open: bool) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, schema, req) in props {
        properties.insert(name.to_string(), schema.clone());
        if *req {
            required.push(json!(name));
        }
    }
    let mut s = json!({ "type": "object", "properties": properties, "required": required });
    if !open {
        s["additionalProperties"] = json!(false);
    }
    s
}

fn string(doc: &str) -> Value {
    json!({ "type": "string", "description": doc })
}

fn strings(doc: &str) -> Value {
    json!({ "type": "array", "items": { "type": "string" }, "description": doc })
}

fn boolean(doc: &str) -> Value {
    json!({ "type": "boolean", "description": doc })
}

fn count() -> Value {
    json!({ "type": "integer", "minimum": 0 })
}

fn list() -> Value {
    json!({ "type": "array" })
}

fn any_object() -> Value {
    json!({ "type": "object" })
}

fn nullable(t: &str) -> Value {
    json!({ "type": [t, "null"] })
}

/// `verdict`: every document has one, with its outcome token.
fn verdict() -> Value {
    object(&[("outcome", json!({ "type": "string" }), true)], true)
}

/// `next`: what the caller does next, about which gap.
fn next() -> Value {
    object(
        &[
            ("action", json!({ "type": "string" }), true),
            ("gap", nullable("string"), false),
            ("detail", json!({ "type": "string" }), false),
        ],
        true,
    )
}

/// The output schema of a document with `props` beside `schema_version` and `verdict`.
fn document(props: &[(&str, Value, bool)]) -> Value {
    let mut all =
        vec![("schema_version", json!({ "type": "integer", "const": 1 }), true), ("verdict", verdict(), true)];
    all.extend(props.iter().cloned());
    object(&all, true)
}

/// The output schema of `tool`'s documents.
pub(crate) fn output(tool: &str) -> Value {
    let injections = ("suspected_injections", list(), false);
    match tool {
        "index" => document(&[
            ("root", json!({ "type": "string" }), true),
            ("index", json!({ "type": "string" }), true),
            ("files", any_object(), true),
            ("facts", count(), true),
            ("parse_errors", count(), true),
            ("stages", list(), true),
            ("diagnostics", list(), true),
            ("unchanged", json!({ "type": "boolean" }), true),
        ]),
        "facts" => document(&[("count", count(), true), ("facts", list(), true)]),
        "query" => document(&[
            ("columns", strings("the query's variables, in order"), true),
            ("rows", json!({ "type": "array", "items": { "type": "array" } }), true),
            ("count", count(), true),
            ("warnings", list(), true),
            ("explanations", list(), false),
        ]),
        "stream" => document(&[
            ("stages", list(), true),
            ("wires", list(), true),
            ("order", strings("the stages in stream order"), true),
            ("cycles", list(), true),
            ("module_cycles", list(), true),
            ("support", list(), true),
        ]),
        "why" => document(&[
            ("from", any_object(), true),
            ("to", any_object(), true),
            ("found", json!({ "type": "boolean" }), true),
            ("hops", list(), true),
        ]),
        "check" => document(&[
            ("contracts", list(), true),
            ("findings", list(), true),
            ("stale_exceptions", list(), true),
            ("unjudged", list(), true),
            ("summary", any_object(), true),
            injections,
        ]),
        "status" => document(&[
            ("ledger", json!({ "type": "string" }), true),
            ("never_run", json!({ "type": "boolean" }), true),
            ("next", next(), true),
            ("index", any_object(), true),
            ("holds", list(), false),
            ("stages", list(), false),
            ("constraint", nullable("object"), false),
            ("gaps", any_object(), false),
            injections,
        ]),
        "preflight" => document(&[("checks", list(), true), ("next", next(), true)]),
        "loop" => document(&[
            ("next", next(), true),
            ("stream", any_object(), true),
            ("ledger", any_object(), true),
            ("constraint", nullable("object"), true),
            ("gaps", list(), true),
            ("picked", nullable("object"), true),
            ("packet", nullable("object"), true),
            injections,
        ]),
        "packet" => document(&[
            ("gap", any_object(), true),
            ("stage", nullable("object"), true),
            ("wire", nullable("object"), true),
            ("earlier_gaps", list(), true),
            ("evidence", list(), true),
            ("house_rules", any_object(), true),
        ]),
        "propose" => document(&[
            ("next", next(), true),
            ("gap", json!({ "type": "string" }), false),
            ("artifact", json!({ "type": "string" }), false),
            ("problems", strings("why the proposal was refused"), false),
        ]),
        "verify" => document(&[
            ("gap", json!({ "type": "string" }), true),
            ("detail", json!({ "type": "string" }), true),
            ("next", next(), true),
            ("evidence", any_object(), false),
            ("diff", any_object(), false),
            injections,
        ]),
        _ => any_object(),
    }
}

/// The input schema of `tool`: its arguments, and no other.
pub(crate) fn input(tool: &str) -> Value {
    match tool {
        "index" => object(&[("rebuild", boolean("ignore the stored index and parse every file"), false)], false),
        "stream" => {
            object(&[("within", string("also the modules inside this stage: their imports and layers"), false)], false)
        }
        "facts" => object(
            &[
                ("relation", string("only this relation (the `query` tool's schema lists them), e.g. `Import`"), false),
                ("file", string("only the facts about this repository-relative file"), false),
            ],
            false,
        ),
        "query" => object(
            &[
                ("query", string("a Datalog rule body over the index, e.g. `Wire(p, c), Stage(c, root)`"), true),
                ("rules", strings("`.dl` files inside the repository whose rules the query may use"), false),
                ("explain", boolean("one minimal derivation per answer"), false),
            ],
            false,
        ),
        "why" => object(
            &[
                ("from", string("what depends: a stage, module, file or directory"), true),
                ("to", string("what it depends on"), true),
            ],
            false,
        ),
        "check" => {
            object(&[("base", string("a git revision: mark which findings are new relative to it"), false)], false)
        }
        "loop" => object(
            &[
                (
                    "max_passes",
                    json!({ "type": "integer", "minimum": 0, "description": "at most this many passes the loop proves by itself (default 100)" }),
                    false,
                ),
                ("slow", boolean("run the slow lane of configured commands too"), false),
            ],
            false,
        ),
        "packet" => object(&[("gap", string("any gap of the ledger (`status` lists them)"), true)], false),
        "propose" => object(
            &[
                ("gap", string("the gap the fix closes: the loop's `next.gap`"), true),
                (
                    "blast_radius",
                    json!({ "type": "string", "enum": ["local+reversible", "hard-to-reverse", "shared-state-visible"],
                            "description": "exactly one blast-radius tag" }),
                    true,
                ),
                (
                    "approach",
                    string(
                        "exactly one verification approach: structural, executed, property, numeric, rubric, agentic, proof-strength or adversarial",
                    ),
                    true,
                ),
                ("reason", string("why that approach proves the wire"), true),
                ("description", string("what the fix does"), true),
                ("write_set", strings("every repository-relative file the fix will write"), true),
                ("proposer", string("who proposes and builds the fix (a provenance id)"), false),
                (
                    "interview",
                    json!({ "type": "array", "description": "the load-bearing forks resolved, one at a time (never a confirmation for a local+reversible change)",
                            "items": { "type": "object", "additionalProperties": false,
                                       "required": ["question", "recommended", "answer"],
                                       "properties": { "question": { "type": "string" }, "recommended": { "type": "string" }, "answer": { "type": "string" } } } }),
                    false,
                ),
            ],
            false,
        ),
        "verify" => object(
            &[
                ("gap", string("the gap whose fix was applied"), true),
                ("command", string("for the `executed` approach: the check to run; its exit code decides"), false),
                (
                    "diff",
                    string(
                        "the fix as a unified diff (its text, or a file inside the repository) instead of the working tree against the proposal's base",
                    ),
                    false,
                ),
                ("rubric", string("the claim rubric record (a file inside the repository), for `rubric`"), false),
                ("process", string("the agent process record (a file inside the repository), for `agentic`"), false),
                ("panel", string("the adversarial panel's directory inside the repository, for `adversarial`"), false),
                ("proposer", string("who proposed or built the fix (a provenance id)"), false),
            ],
            false,
        ),
        _ => object(&[], false),
    }
}
