#!/usr/bin/env bash
# Wire precision and recall of `andon stream` on the vendored tokio + serde + clap tree (42 crates):
# every derived wire must be a dependency the consumer's Cargo.toml declares (precision), and every
# declared dependency between crates of the tree should be a wire (recall).
# Usage: benches/stream_precision.sh [DIR]   (default: the corpus fetched by benches/corpora.sh)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-$here/../target/bench-corpora/rust-vendor}"
[ -d "$dir" ] || { echo "no corpus at $dir; run benches/corpora.sh first" >&2; exit 2; }
cargo build --release --quiet --manifest-path "$here/../Cargo.toml"
andon="$here/../target/release/andon"
count() { "$andon" query -q "$dir" --rules "$here/stream_precision.dl" "$1" --format csv | tail -n +2 | wc -l; }
wires=$(count 'Wire(p, c)')
declared=$(count 'ManifestWire(p, c)')
pairs=$(count 'Pair(p, c)')
found=$(count 'Pair(p, c), Wire(p, c)')
echo "wires: $wires, of which declared dependencies: $declared (precision $(awk "BEGIN{printf \"%.1f\", 100*$declared/$wires}") %)"
echo "declared dependencies between crates of the tree: $pairs, derived as wires: $found (recall $(awk "BEGIN{printf \"%.1f\", 100*$found/$pairs}") %)"
echo "undeclared wires:"; "$andon" query -q "$dir" --rules "$here/stream_precision.dl" 'UndeclaredWire(p, c)' --format csv | tail -n +2
echo "declared, not derived (kind):"; "$andon" query -q "$dir" --rules "$here/stream_precision.dl" 'Pair(p, c), !Wire(p, c), StageManifest(c, m), DeclaresDependency(m, p, k)' --format csv | tail -n +2
