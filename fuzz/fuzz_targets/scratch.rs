//! The scratch directory of a fuzz target that needs files: one per process and target, under
//! $ANDON_FUZZ_SCRATCH, else /dev/shm when it exists, else the temp dir. Included by the targets
//! with `#[path = "scratch.rs"] mod scratch;`.

use std::path::PathBuf;

/// `andon-fuzz-<name>-<pid>` under the scratch base (not created).
pub fn dir(name: &str) -> PathBuf {
    let shm = PathBuf::from("/dev/shm");
    let base = match std::env::var_os("ANDON_FUZZ_SCRATCH") {
        Some(d) => PathBuf::from(d),
        None if shm.is_dir() => shm,
        None => std::env::temp_dir(),
    };
    base.join(format!("andon-fuzz-{name}-{}", std::process::id()))
}
