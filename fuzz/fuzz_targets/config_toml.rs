//! Settings: `Config::load` and `settings::disabled` read files from a directory, so the input
//! bytes (raw: a file that is not UTF-8 must be an error, never a fallback) are written, per iteration, as `andon.toml`, as `pyproject.toml` (the
//! `[tool.andon]` table) and as the legacy `.claude/andon.local.md`, each in its own scratch
//! directory (one set per process, under $ANDON_FUZZ_SCRATCH, else /dev/shm when it exists, else
//! the temp dir). The pure front-matter parser `settings::front_matter` runs on the text too.
#![no_main]

#[path = "scratch.rs"]
mod scratch;

use std::path::PathBuf;
use std::sync::OnceLock;

use andon::config::{settings, Config};
use libfuzzer_sys::fuzz_target;

struct Dirs {
    andon: PathBuf,
    py: PathBuf,
    legacy: PathBuf,
}

fn dirs() -> &'static Dirs {
    static DIRS: OnceLock<Dirs> = OnceLock::new();
    DIRS.get_or_init(|| {
        let base = scratch::dir("config");
        let d = Dirs { andon: base.join("andon"), py: base.join("py"), legacy: base.join("legacy") };
        for p in [&d.andon, &d.py, &d.legacy.join(".claude")] {
            std::fs::create_dir_all(p).expect("scratch dir");
        }
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = settings::front_matter(&text);
    let d = dirs();
    for (dir, file) in [(&d.andon, "andon.toml"), (&d.py, "pyproject.toml"), (&d.legacy, settings::LEGACY_FILE)] {
        std::fs::write(dir.join(file), data).expect("write scratch settings");
        let loaded = Config::load(dir);
        if let Ok(cfg) = &loaded {
            let _ = cfg.settings.rows();
            let _ = cfg.settings.output_path(dir);
        }
        let _ = settings::disabled(dir);
        // andon.toml that is not UTF-8 is refused, never read as no settings
        if file == "andon.toml" && std::str::from_utf8(data).is_err() {
            assert!(loaded.is_err(), "an andon.toml that is not UTF-8 loaded");
        }
    }
});
