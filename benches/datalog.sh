#!/usr/bin/env bash
# Runs the Datalog benchmarks on generated fact sets and on the real corpora (fetched by
# benches/corpora.sh), then prints criterion's medians and the run-time / compiled engine ratio.
# Usage: benches/datalog.sh [CORPUS_NAME ...]   (default: django rust-vendor)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
corpora=("${@:-django rust-vendor}")
cd "$root"
cargo bench --bench datalog -- --warm-up-time 1 --measurement-time 3 generated > /dev/null
for c in ${corpora[@]}; do
  ANDON_BENCH_DIR="$root/target/bench-corpora/$c" cargo bench --bench datalog -- --warm-up-time 1 --measurement-time 3 corpus > /dev/null
done
python3 - "$root/target/criterion" <<'PY'
import json, pathlib, sys
base = pathlib.Path(sys.argv[1])
med = {}
for est in sorted(base.glob("**/new/estimates.json")):
    bench = json.loads((est.parent / "benchmark.json").read_text())
    med[(bench["group_id"], bench.get("function_id") or "", bench.get("value_str") or "")] = json.loads(est.read_text())["median"]["point_estimate"] / 1e6
for (g, f, v), ms in sorted(med.items()):
    print(f"{g:28} {f:28} {v:>8} {ms:10.2f} ms (median)")
print()
for (g, f, v), ms in sorted(med.items()):
    if f == "rules runtime" and (g, "rules compiled", v) in med:
        print(f"{g} {v}: run-time engine / crepe-compiled = {ms / med[(g, 'rules compiled', v)]:.2f}")
PY
