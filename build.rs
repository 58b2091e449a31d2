//! Build script: checks `rules/*.dl` with andon's own Datalog parser and checker (the same code
//! the run-time engine uses, included from `src/dialect/`), then generates
//! - `$OUT_DIR/catalog.rs`: every relation (base, derived, computed) with its columns and doc
//!   line, the schema's vocabularies as Rust enums (`facts::vocab`), the rules' string constants,
//!   the rule texts, and digests for the index fingerprint;
//! - `$OUT_DIR/compiled.rs`: the built-in rules translated into one `crepe!` program.
//!
//! A mistake in a `.dl` file fails the build with `rules/<file>.dl:LINE:COL: message`.

#[allow(dead_code, unused_imports)]
#[path = "src/dialect/mod.rs"]
mod dialect;
#[allow(dead_code)]
#[path = "src/text.rs"]
mod text;

use std::{env, fmt::Write as _, fs, path::Path};

use dialect::{Arg, Builder, CmpOp, Lit, Program, RelKind, Ty, Value};

fn main() {
    println!("cargo::rerun-if-changed=rules");
    println!("cargo::rerun-if-changed=grammars");
    println!("cargo::rerun-if-changed=src/dialect");
    println!("cargo::rerun-if-changed=src/text.rs");
    let mut files: Vec<String> = fs::read_dir("rules")
        .expect("rules/ is readable")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".dl") && n != "schema.dl")
        .collect();
    files.sort();
    let mut b = Builder::new();
    b.require_docs = true;
    let mut sources = vec![("rules/schema.dl".to_string(), true)];
    sources.extend(files.iter().map(|f| (format!("rules/{f}"), false)));
    for (path, base) in &sources {
        println!("cargo::rerun-if-changed={path}");
        let text = fs::read_to_string(path).unwrap_or_else(|e| fail(&format!("{path}: {e}")));
        if let Err(e) = b.add_source(path, &text, *base) {
            fail(&e.to_string());
        }
    }
    let prog = b.finish().unwrap_or_else(|e| fail(&e.to_string()));
    portable(&prog);
    let constants = prog.string_constants();
    let out_dir = env::var("OUT_DIR").expect("OUT_DIR");
    fs::write(Path::new(&out_dir).join("catalog.rs"), catalog(&prog, &constants, &sources)).expect("write catalog");
    fs::write(Path::new(&out_dir).join("compiled.rs"), compiled(&prog, &constants)).expect("write compiled rules");
}

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1);
}

/// Built-in rules must mean the same under crepe (ids) and the run-time engine (values): no
/// ordering comparison of strings, no computed relation in a rule body.
fn portable(prog: &Program) {
    for r in &prog.rules {
        for (i, l) in r.body.iter().enumerate() {
            let sp = r.lit_spans[i];
            let at = format!("{}:{}:{}", r.source, sp.line, sp.col);
            match l {
                Lit::Cmp(a, op, _) if !matches!(op, CmpOp::Eq | CmpOp::Ne) => {
                    let ty = match a {
                        Arg::Var(v) => r.var_types[*v],
                        Arg::Const(Value::Int(_)) => Ty::Int,
                        _ => Ty::Sym,
                    };
                    if ty != Ty::Int {
                        fail(&format!("{at}: built-in rules compare strings only with `=` and `!=` (crepe sees ids)"));
                    }
                }
                Lit::Pos(rel, _) | Lit::Neg(rel, _) if prog.rels[*rel].kind == RelKind::Computed => {
                    fail(&format!(
                        "{at}: `{}` is computed in Rust; built-in rules cannot read it",
                        prog.rels[*rel].name
                    ));
                }
                _ => {}
            }
        }
    }
}

fn catalog(prog: &Program, constants: &[String], sources: &[(String, bool)]) -> String {
    let mut out = String::from("// generated from rules/*.dl by build.rs\n");
    let mut consts = String::new();
    let mut entries = String::new();
    for (id, r) in prog.rels.iter().enumerate() {
        writeln!(consts, "    pub const {}: RelId = RelId({id});", screaming(&r.name)).unwrap();
        let mut cols = String::new();
        for (n, t) in &r.columns {
            let ty = match t {
                Ty::Path => "Path",
                Ty::Sym => "Sym",
                Ty::Int => "Int",
            };
            write!(cols, "Column {{ name: {n:?}, ty: ColType::{ty} }}, ").unwrap();
        }
        let kind = format!("{:?}", r.kind);
        writeln!(
            entries,
            "    RelationInfo {{ name: {:?}, doc: {:?}, columns: &[{cols}], kind: RelKind::{kind}, source: {:?} }},",
            r.name, r.doc, r.source
        )
        .unwrap();
    }
    writeln!(out, "/// Relation ids, in declaration order.\npub mod rel {{\n    use super::RelId;\n{consts}}}")
        .unwrap();
    out.push_str(&vocabularies(prog));
    writeln!(out, "/// Every relation, in declaration order (index = `RelId`).\npub static RELATIONS: &[RelationInfo] = &[\n{entries}];").unwrap();
    writeln!(out, "/// The string constants of the built-in rules: ids 0.. of every engine string table.\npub static CONSTANTS: &[&str] = &{constants:?};").unwrap();
    let root = env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let srcs: Vec<String> = sources
        .iter()
        .map(|(p, _)| format!("({p:?}, include_str!({:?}))", Path::new(&root).join(p).display()))
        .collect();
    writeln!(
        out,
        "/// The rule files, schema first: (repo path, text).\npub static RULE_SOURCES: &[(&str, &str)] = &[{}];",
        srcs.join(", ")
    )
    .unwrap();
    writeln!(
        out,
        "/// FNV-1a digest of the extraction and resolution code (and the data it includes).\npub const EXTRACT_DIGEST: u64 = {};",
        digest_dir("src/extract", "rs")
            ^ digest_dir("src/resolve", "rs").rotate_left(1)
            ^ digest_dir("src/resolve", "txt").rotate_left(2)
    )
    .unwrap();
    writeln!(
        out,
        "/// FNV-1a digest of the code that derives relations kept between runs (the engines, the rule\n/// language, the loop's scan).\npub const DERIVE_DIGEST: u64 = {};",
        digest_dir("src/datalog", "rs")
            ^ digest_dir("src/andon_loop", "rs").rotate_left(1)
            ^ digest_dir("src/dialect", "rs").rotate_left(2)
    )
    .unwrap();
    out
}

/// `pub mod vocab`: each closed vocabulary of the schema (`.enum`) as a Rust enum with `ALL`,
/// `as_str` (the token), `parse`, `FromStr`, `Display` and serde as the token (derived, so a
/// value outside the vocabulary reads as serde's `unknown variant` error, as a ledger line shows).
fn vocabularies(prog: &Program) -> String {
    let mut out =
        String::from("/// The closed vocabularies of `rules/schema.dl` (`.enum`), one enum each.\npub mod vocab {\n");
    for v in &prog.vocabs {
        let name = &v.name;
        let variants: Vec<String> = v.values.iter().map(|x| camel(x)).collect();
        let pairs: Vec<(&String, &String)> = variants.iter().zip(&v.values).collect();
        let list = |f: &dyn Fn(&String, &String) -> String| pairs.iter().map(|(a, b)| f(a, b)).collect::<Vec<_>>();
        writeln!(out, "    /// {}", v.doc).unwrap();
        writeln!(
            out,
            "    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]"
        )
        .unwrap();
        writeln!(
            out,
            "    pub enum {name} {{\n{}    }}",
            list(&|a, b| format!("        /// `{b}`\n        #[serde(rename = {b:?})]\n        {a},\n")).concat()
        )
        .unwrap();
        writeln!(out, "    impl {name} {{").unwrap();
        writeln!(out, "        /// Every value, in declaration order.").unwrap();
        writeln!(
            out,
            "        pub const ALL: &'static [{name}] = &[{}];",
            list(&|a, _| format!("{name}::{a}")).join(", ")
        )
        .unwrap();
        writeln!(out, "        /// The values as written in the schema.").unwrap();
        writeln!(out, "        pub const TOKENS: &'static [&'static str] = &{:?};", v.values).unwrap();
        writeln!(out, "        /// The token: the value as facts and rules write it.").unwrap();
        writeln!(
            out,
            "        pub const fn as_str(self) -> &'static str {{ match self {{ {} }} }}",
            list(&|a, b| format!("{name}::{a} => {b:?},")).join(" ")
        )
        .unwrap();
        writeln!(out, "        /// The value whose token is `s`.").unwrap();
        writeln!(
            out,
            "        pub fn parse(s: &str) -> Option<{name}> {{ match s {{ {} _ => None }} }}",
            list(&|a, b| format!("{b:?} => Some({name}::{a}),")).join(" ")
        )
        .unwrap();
        writeln!(out, "    }}").unwrap();
        writeln!(
            out,
            "    impl std::str::FromStr for {name} {{ type Err = crate::facts::Error; fn from_str(s: &str) -> Result<{name}, crate::facts::Error> {{ {name}::parse(s).ok_or_else(|| crate::facts::Error::UnknownValue {{ vocab: {name:?}, value: s.to_string(), allowed: {name}::TOKENS }}) }} }}"
        )
        .unwrap();
        writeln!(out, "    impl std::fmt::Display for {name} {{ fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {{ f.write_str(self.as_str()) }} }}").unwrap();
    }
    out.push_str("}\n");
    out
}

/// A vocabulary token as a variant name: `type_only` and `proof-strength` are `TypeOnly` and
/// `ProofStrength`; a `/` between alternatives reads "or": `broken/unproven` is `BrokenOrUnproven`.
fn camel(token: &str) -> String {
    let mut s = String::new();
    let token = token.replace('/', "_or_");
    for part in token.split(|c: char| !c.is_ascii_alphanumeric()).filter(|p| !p.is_empty()) {
        let mut cs = part.chars();
        if let Some(c) = cs.next() {
            s.push(c.to_ascii_uppercase());
            s.extend(cs);
        }
    }
    if !s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        s.insert(0, 'V');
    }
    s
}

/// The built-in rules as crepe programs, one module per rules file (in dependency order), each
/// with `run`, which feeds it a store's relations and returns the relations the file derives, sorted.
fn compiled(prog: &Program, constants: &[String]) -> String {
    let files: Vec<String> = {
        let mut f: Vec<String> =
            prog.rels.iter().filter(|r| r.kind != RelKind::Base).map(|r| r.source.clone()).collect();
        f.dedup();
        f
    };
    // A rule lives in the file that declares its head.
    for r in &prog.rules {
        let d = &prog.rels[r.head];
        if d.source != r.source {
            fail(&format!(
                "{}:{}:{}: a rule for `{}` belongs in {}, which declares it",
                r.source, r.span.line, r.span.col, d.name, d.source
            ));
        }
    }
    let reads = |file: &str| -> Vec<usize> {
        let mut u: Vec<usize> = prog
            .rules
            .iter()
            .filter(|r| r.source == file)
            .flat_map(|r| {
                r.body.iter().filter_map(|l| match l {
                    Lit::Pos(b, _) | Lit::Neg(b, _) => Some(*b),
                    Lit::Cmp(..) => None,
                })
            })
            .filter(|b| prog.rels[*b].source != file)
            .collect();
        u.sort();
        u.dedup();
        u
    };
    // Dependency order between files.
    let mut order: Vec<String> = Vec::new();
    while order.len() < files.len() {
        let next = files.iter().find(|f| {
            !order.contains(f)
                && reads(f).iter().all(|&b| prog.rels[b].kind == RelKind::Base || order.contains(&prog.rels[b].source))
        });
        match next {
            Some(f) => order.push(f.clone()),
            None => fail("rules files depend on each other in a cycle; move the shared relations into one file"),
        }
    }
    let mut out = String::from(
        "// generated from rules/*.dl by build.rs\n#[allow(clippy::all, unused, non_snake_case)]\npub mod compiled {\n",
    );
    let mut modules = String::new();
    for (mi, file) in order.iter().enumerate() {
        let inputs = reads(file);
        let derived: Vec<usize> = (0..prog.rels.len())
            .filter(|&i| prog.rels[i].kind == RelKind::Derived && prog.rels[i].source == *file)
            .collect();
        if derived.is_empty() {
            continue;
        }
        let rules: Vec<&dialect::CRule> = prog.rules.iter().filter(|r| r.source == *file).collect();
        write!(out, "{}", module(prog, constants, mi, &inputs, &derived, &rules)).unwrap();
        writeln!(modules, "        Module {{ source: {file:?}, run: m{mi}::run, outputs: &{derived:?} }},").unwrap();
    }
    writeln!(out, "    /// One compiled rules file: what it derives.\n    pub struct Module {{ pub source: &'static str, pub run: fn(&[crate::datalog::Rows]) -> Vec<(usize, Vec<u32>)>, pub outputs: &'static [usize] }}").unwrap();
    writeln!(out, "    /// Every compiled rules file, in dependency order.\n    pub static MODULES: &[Module] = &[\n{modules}    ];\n}}").unwrap();
    out
}

fn module(
    prog: &Program,
    constants: &[String],
    mi: usize,
    used: &[usize],
    derived: &[usize],
    rules: &[&dialect::CRule],
) -> String {
    let mut body = String::new();
    let fields = |n: usize| vec!["u32"; n].join(", ");
    for &i in used {
        writeln!(body, "        @input struct {}({});", prog.rels[i].name, fields(prog.rels[i].columns.len())).unwrap();
    }
    for &i in derived {
        writeln!(body, "        @output struct {}({});", prog.rels[i].name, fields(prog.rels[i].columns.len()))
            .unwrap();
    }
    let cid = |s: &str| constants.iter().position(|c| c == s).expect("constant collected");
    let val = |v: &Value| match v {
        Value::Int(n) => format!("{n}u32"),
        Value::Str(s) => format!("{}u32", cid(s)),
    };
    for r in rules {
        writeln!(body, "        // {}:{}: {}", r.source, r.span.line, r.text.replace('\n', " ")).unwrap();
        let term = |a: &Arg| match a {
            Arg::Var(v) => format!("v{v}"),
            Arg::Const(c) => val(c),
            Arg::Wild => "_".into(),
        };
        let head: Vec<String> = r.head_args.iter().map(term).collect();
        let mut clauses: Vec<String> = Vec::new();
        let mut bound = vec![false; r.var_names.len()];
        let mut extra = 0;
        for l in &r.body {
            if let Lit::Pos(rel, args) = l {
                let mut here: Vec<usize> = Vec::new();
                let mut checks = Vec::new();
                let a: Vec<String> = args
                    .iter()
                    .map(|a| match a {
                        Arg::Var(v) if here.contains(v) => {
                            extra += 1;
                            checks.push(format!("(v{v} == w{extra})"));
                            format!("w{extra}")
                        }
                        Arg::Var(v) => {
                            here.push(*v);
                            format!("v{v}")
                        }
                        other => term(other),
                    })
                    .collect();
                for v in here {
                    bound[v] = true;
                }
                clauses.push(format!("{}({})", prog.rels[*rel].name, a.join(", ")));
                clauses.extend(checks);
            }
        }
        // `x = <bound>` for an x no atom binds: a let, in dependency order.
        let mut lets: Vec<(usize, String)> = Vec::new();
        loop {
            let mut changed = false;
            for l in &r.body {
                if let Lit::Cmp(a, CmpOp::Eq, b) = l {
                    for (x, y) in [(a, b), (b, a)] {
                        let ybound = match y {
                            Arg::Var(v) => bound[*v],
                            _ => true,
                        };
                        if let Arg::Var(xv) = x
                            && !bound[*xv]
                            && ybound
                        {
                            bound[*xv] = true;
                            lets.push((*xv, term(y)));
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        for (v, e) in &lets {
            clauses.push(format!("let v{v} = {e}"));
        }
        for l in &r.body {
            match l {
                Lit::Neg(rel, args) => {
                    let a: Vec<String> = args.iter().map(term).collect();
                    clauses.push(format!("!{}({})", prog.rels[*rel].name, a.join(", ")));
                }
                Lit::Cmp(a, op, b) => {
                    let is_let = *op == CmpOp::Eq
                        && lets.iter().any(|(v, e)| {
                            (matches!(a, Arg::Var(x) if x == v) && term(b) == *e)
                                || (matches!(b, Arg::Var(x) if x == v) && term(a) == *e)
                        });
                    if !is_let {
                        let o = if *op == CmpOp::Eq { "==" } else { op.text() };
                        clauses.push(format!("({} {o} {})", term(a), term(b)));
                    }
                }
                Lit::Pos(..) => {}
            }
        }
        let head_rel = &prog.rels[r.head].name;
        if clauses.is_empty() {
            writeln!(body, "        {head_rel}({});", head.join(", ")).unwrap();
        } else {
            writeln!(body, "        {head_rel}({}) <- {};", head.join(", "), clauses.join(", ")).unwrap();
        }
    }
    let mut run = String::new();
    writeln!(run, "        pub fn run(rels: &[crate::datalog::Rows]) -> Vec<(usize, Vec<u32>)> {{").unwrap();
    writeln!(run, "            let mut rt = Crepe::new();").unwrap();
    for &i in used {
        let n = prog.rels[i].columns.len();
        let cols: Vec<String> = (0..n).map(|k| format!("r[{k}]")).collect();
        writeln!(
            run,
            "            rt.extend(rels[{i}].data.chunks_exact({n}).map(|r| {}({})));",
            prog.rels[i].name,
            cols.join(", ")
        )
        .unwrap();
    }
    let outs: Vec<String> = derived.iter().map(|i| format!("o{i}")).collect();
    writeln!(run, "            let ({},) = rt.run_with_hasher::<foldhash::fast::RandomState>();", outs.join(", "))
        .unwrap();
    writeln!(run, "            let mut out = Vec::new();").unwrap();
    for &i in derived {
        let n = prog.rels[i].columns.len();
        let vars: Vec<String> = (0..n).map(|k| format!("a{k}")).collect();
        writeln!(
            run,
            "            {{ let mut v: Vec<[u32; {n}]> = o{i}.into_iter().map(|{}({})| [{}]).collect(); v.sort_unstable(); out.push(({i}, v.concat())); }}",
            prog.rels[i].name,
            vars.join(", "),
            vars.join(", ")
        )
        .unwrap();
    }
    writeln!(run, "            out\n        }}").unwrap();
    format!("    pub mod m{mi} {{\n        use crepe::crepe;\n        crepe! {{\n{body}        }}\n{run}    }}\n")
}

fn digest_dir(dir: &str, ext: &str) -> u64 {
    println!("cargo::rerun-if-changed={dir}");
    let mut files: Vec<_> = fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == ext)).collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut h: u64 = 0xcbf29ce484222325;
    for f in files {
        for b in f.file_name().unwrap().to_string_lossy().bytes().chain(fs::read(&f).unwrap_or_default()) {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}

fn screaming(name: &str) -> String {
    let mut s = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            s.push('_');
        }
        s.push(c.to_ascii_uppercase());
    }
    s
}
