#!/usr/bin/env bash
# Work that hostile or huge input must keep bounded, timed as whole processes with hyperfine.
#
# Usage: benches/hostile.sh
# Environment:
#   ANDON_BIN=/path/to/andon   the binary to time (default: `cargo build --release`, then
#                              ${CARGO_TARGET_DIR:-target}/release/andon)
#   ANDON_BENCH_RUNS=5         timed runs per command (medians are reported)
#   ANDON_CORPUS_DIR           where benches/corpora.sh fetches django (default target/bench-corpora)
#   ANDON_BENCH_WORK           scratch directory (default ${TMPDIR:-/tmp}/andon-bench-hostile)
# Needs: hyperfine, python3; network access to PyPI on the first run (django).
#
# What it measures (medians):
#   contracts: `andon check` on django's package with 1,000 and with 4,000 trivial `acyclic`
#              contracts, warm index. Target: 4,000 cost at most 6x 1,000 (linear, not quadratic).
#   cartesian: `andon query 'File(a,x), File(b,y), File(c,z), File(d,w)'` on the django sdist
#              (about 2,800 files: 6e13 rows) must end on a budget with exit 2. Target: under 30 s.
#   nesting:   `andon index` of a 100,000-deep Python call and 40,000 nested TypeScript `if`
#              blocks, cold. Target: exit 0 under 30 s.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
RUNS=${ANDON_BENCH_RUNS:-5}
WORK=${ANDON_BENCH_WORK:-${TMPDIR:-/tmp}/andon-bench-hostile}
CORPORA=${ANDON_CORPUS_DIR:-$ROOT/target/bench-corpora}
if [ -z "${ANDON_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --release --quiet)
  ANDON_BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/andon
fi
[ -d "$CORPORA/django/django" ] || "$HERE/corpora.sh" "$CORPORA" >/dev/null
rm -rf "$WORK" && mkdir -p "$WORK"

median() { python3 -c "import json,sys; print(f\"{json.load(open(sys.argv[1]))['results'][0]['median']:.3f}\")" "$1"; }

# contracts: 1,000 vs 4,000 on the django package
for n in 1000 4000; do
  d="$WORK/contracts-$n"
  mkdir -p "$d" && cp -R "$CORPORA/django/django" "$d/django"
  python3 - "$d/andon.toml" "$n" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    for i in range(n):
        f.write(f'[[contract]]\nname = "c{i}"\nkind = "acyclic"\nmembers = ["django/db", "django/core"]\n\n')
PY
  (cd "$d" && "$ANDON_BIN" index -q >/dev/null)
  hyperfine -N -w 1 -r "$RUNS" -i --export-json "$WORK/contracts-$n.json" \
    "$ANDON_BIN check -q $d" >/dev/null 2>&1
done
a=$(median "$WORK/contracts-1000.json"); b=$(median "$WORK/contracts-4000.json")
echo "contracts: check with 1,000: ${a}s, with 4,000: ${b}s, ratio $(python3 -c "print(f'{$b/$a:.2f}')") (target <= 6)"

# cartesian: a four-way File product on the django sdist ends on a budget
(cd "$CORPORA/django" && "$ANDON_BIN" index -q >/dev/null)
start=$(date +%s.%N)
set +e
(cd "$CORPORA/django" && timeout 120 "$ANDON_BIN" query -q 'File(a,x), File(b,y), File(c,z), File(d,w)' >/dev/null 2>"$WORK/cartesian.err")
rc=$?
set -e
end=$(date +%s.%N)
echo "cartesian: exit $rc in $(python3 -c "print(f'{$end-$start:.1f}')")s (target: exit 2 under 30 s): $(head -c 160 "$WORK/cartesian.err")"

# nesting: a 100,000-deep call and 40,000 nested blocks
d="$WORK/nesting"
mkdir -p "$d"
python3 -c "print('x = ' + 'f(' * 100000 + ')' * 100000)" >"$d/deep.py"
python3 -c "print('if (a) {' * 40000 + '}' * 40000)" >"$d/deep.ts"
hyperfine -N -w 0 -r "$RUNS" --prepare "rm -rf $d/.andon" --export-json "$WORK/nesting.json" \
  "$ANDON_BIN index -q $d" >/dev/null 2>&1 || echo "nesting: andon index failed" >&2
echo "nesting: index of both files: $(median "$WORK/nesting.json")s median (target: under 30 s)"
