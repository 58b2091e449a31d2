//! Build script: reads `rules/schema.dl` and generates the relation catalog (`$OUT_DIR/catalog.rs`).
//! A malformed declaration fails the build with the `.dl` file and line.

use std::{env, fmt::Write as _, fs, path::Path};

fn main() {
    println!("cargo::rerun-if-changed=rules");
    println!("cargo::rerun-if-changed=grammars");
    let schema_path = Path::new("rules/schema.dl");
    let text = fs::read_to_string(schema_path).expect("rules/schema.dl is readable");
    let mut doc: Option<String> = None;
    let mut out = String::from("// generated from rules/schema.dl by build.rs\n");
    let mut consts = String::new();
    let mut entries = String::new();
    let mut seen = Vec::<String>::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let at = format!("rules/schema.dl:{}", i + 1);
        if let Some(d) = line.strip_prefix("///") {
            doc = Some(d.trim().to_string());
            continue;
        }
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        let Some(decl) = line.strip_prefix(".decl ") else {
            fail(&at, "expected `.decl Name(col: type, ...)`, a `///` doc line or a `//` comment");
        };
        let Some(doc_line) = doc.take() else { fail(&at, "declaration has no `///` doc line above it") };
        let (name, rest) = decl.split_once('(').unwrap_or_else(|| fail(&at, "missing `(`"));
        let name = name.trim();
        if !name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            || !name.chars().all(|c| c.is_ascii_alphanumeric())
        {
            fail(&at, "relation names are CamelCase");
        }
        if seen.iter().any(|s| s == name) {
            fail(&at, &format!("relation `{name}` is declared twice"));
        }
        seen.push(name.to_string());
        let cols = rest.trim_end().strip_suffix(')').unwrap_or_else(|| fail(&at, "declaration must end with `)`"));
        let mut colsrc = String::new();
        for col in cols.split(',') {
            let (cname, cty) = col.split_once(':').unwrap_or_else(|| fail(&at, "columns are `name: type`"));
            let ty = match cty.trim() {
                "path" => "Path",
                "sym" => "Sym",
                "int" => "Int",
                other => fail(&at, &format!("unknown column type `{other}` (path, sym, int)")),
            };
            write!(colsrc, "Column {{ name: {:?}, ty: ColType::{ty} }}, ", cname.trim()).unwrap();
        }
        let id = seen.len() - 1;
        writeln!(consts, "    pub const {}: RelId = RelId({id});", screaming(name)).unwrap();
        writeln!(entries, "    RelationInfo {{ name: {name:?}, doc: {doc_line:?}, columns: &[{colsrc}] }},").unwrap();
    }
    writeln!(out, "/// Relation ids, in declaration order.\npub mod rel {{\n    use super::RelId;\n{consts}}}")
        .unwrap();
    writeln!(out, "/// Every base relation, in declaration order (index = `RelId`).\npub static RELATIONS: &[RelationInfo] = &[\n{entries}];").unwrap();
    // Digests for the index fingerprint: the rules and the extraction code.
    writeln!(
        out,
        "/// FNV-1a digest of every `rules/*.dl` file.\npub const RULES_DIGEST: u64 = {};",
        digest_dir("rules", "dl")
    )
    .unwrap();
    writeln!(
        out,
        "/// FNV-1a digest of the extraction and resolution code.\npub const EXTRACT_DIGEST: u64 = {};",
        digest_dir("src/extract", "rs") ^ digest_dir("src/resolve", "rs").rotate_left(1)
    )
    .unwrap();
    let dest = Path::new(&env::var("OUT_DIR").unwrap()).join("catalog.rs");
    fs::write(dest, out).unwrap();
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

fn fail(at: &str, msg: &str) -> ! {
    panic!("{at}: {msg}");
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
