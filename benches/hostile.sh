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
#   brackets:  `andon index` of a Python file of 200,000 and of 400,000 unclosed `(` (tree-sitter's
#              query cursor is quadratic on it; the per-file budget makes it `too-complex`).
#              Target: seconds, the 2x ratio near 1 (the budget, not the input, bounds it).
#   rules:     `andon check` with a `rule` contract of 500,000 and of 1,000,000 `(` (a syntax
#              error). Target: under a second, ratio <= 2.5 (linear).
#   unwired:   `andon init` then `andon check` on 1,000 and on 2,000 unwired Python packages (the
#              independence and acyclic contracts init writes). Target: seconds, ratio <= 2.5.
#   swapped:   `andon index` while a changed file is swapped for a FIFO after the walk (strace
#              holds its open for 1.5 s). Target: exit 0 in about 1.5 s, never a hang. Skipped
#              without strace.
#   damaged:   a flipped byte in a pack, then 22 runs of an edit and `andon index`: the packs left
#              and `andon index --check`'s exit. Target: exit 0, packs bounded (at most 16).
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

ratio() { python3 -c "print(f'{$2/$1:.2f}')"; }

# brackets: 200,000 and 400,000 unclosed brackets in one Python file, cold
for n in 200000 400000; do
  d="$WORK/brackets-$n"
  mkdir -p "$d/pkg"
  python3 -c "print('(' * $n)" >"$d/pkg/parens.py"
  hyperfine -N -w 0 -r "$RUNS" --prepare "rm -rf $d/.andon" --export-json "$WORK/brackets-$n.json" \
    "$ANDON_BIN index -q $d" >/dev/null 2>&1 || echo "brackets: andon index failed" >&2
done
a=$(median "$WORK/brackets-200000.json"); b=$(median "$WORK/brackets-400000.json")
echo "brackets: index of 200,000 (: ${a}s, of 400,000: ${b}s, ratio $(ratio "$a" "$b") (target: seconds)"

# rules: a rules file of unclosed brackets
for n in 500000 1000000; do
  d="$WORK/rules-$n"
  mkdir -p "$d/pkg" && echo "X = 1" >"$d/pkg/__init__.py"
  python3 -c "print('Violation(x) :- ' + '(' * $n)" >"$d/r.dl"
  printf '[[contract]]\nname = "r"\nkind = "rule"\nrules = "r.dl"\n' >"$d/andon.toml"
  (cd "$d" && "$ANDON_BIN" index -q >/dev/null)
  hyperfine -N -w 1 -r "$RUNS" -i --export-json "$WORK/rules-$n.json" "$ANDON_BIN check -q $d" >/dev/null 2>&1
done
a=$(median "$WORK/rules-500000.json"); b=$(median "$WORK/rules-1000000.json")
echo "rules: check of 500,000 (: ${a}s, of 1,000,000: ${b}s, ratio $(ratio "$a" "$b") (target: under 1 s, <= 2.5)"

# unwired: init and check on many packages with no wire
for n in 1000 2000; do
  d="$WORK/unwired-$n"
  python3 - "$d" "$n" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    p = f"{d}/pkgs/p{i}"
    os.makedirs(f"{p}/src/p{i}", exist_ok=True)
    open(f"{p}/pyproject.toml", "w").write(f'[project]\nname = "p{i}"\nversion = "0.1.0"\n')
    open(f"{p}/src/p{i}/__init__.py", "w").write(f"def f{i}():\n    return {i}\n")
PY
  (cd "$d" && "$ANDON_BIN" index -q >/dev/null)
  hyperfine -N -w 0 -r "$RUNS" --prepare "rm -f $d/andon.toml" --export-json "$WORK/init-$n.json" \
    "$ANDON_BIN init -q $d" >/dev/null 2>&1
  (cd "$d" && "$ANDON_BIN" init -q >/dev/null 2>&1 || true)
  hyperfine -N -w 1 -r "$RUNS" -i --export-json "$WORK/check-$n.json" "$ANDON_BIN check -q $d" >/dev/null 2>&1
done
a=$(median "$WORK/init-1000.json"); b=$(median "$WORK/init-2000.json")
echo "unwired: init on 1,000: ${a}s, on 2,000: ${b}s, ratio $(ratio "$a" "$b") (target: seconds, <= 2.5)"
a=$(median "$WORK/check-1000.json"); b=$(median "$WORK/check-2000.json")
echo "unwired: check on 1,000: ${a}s, on 2,000: ${b}s, ratio $(ratio "$a" "$b") (target: seconds, <= 2.5)"

# swapped: a changed file swapped for a FIFO after the walk saw it
if command -v strace >/dev/null 2>&1 && strace -q -o /dev/null true 2>/dev/null; then
  d="$WORK/swapped"
  mkdir -p "$d/pkg" && echo "X = 1" >"$d/pkg/a.py" && (cd "$d" && "$ANDON_BIN" index -q >/dev/null)
  echo "X = 2" >"$d/pkg/a.py"
  start=$(date +%s.%N)
  (cd "$d" && timeout 60 strace -f -q -o /dev/null -P ./pkg/a.py -e trace=openat \
    -e inject=openat:delay_enter=1500000 "$ANDON_BIN" index -q >/dev/null 2>&1) &
  sleep 0.7 && rm "$d/pkg/a.py" && mkfifo "$d/pkg/a.py"
  set +e; wait $!; rc=$?; set -e
  end=$(date +%s.%N)
  echo "swapped: exit $rc in $(python3 -c "print(f'{$end-$start:.1f}')")s (target: exit 0 in about 1.5 s)"
else
  echo "swapped: skipped (no strace)"
fi

# damaged: a flipped pack byte, then edits and index runs
d="$WORK/damaged"
mkdir -p "$d/pkg" && for i in $(seq 1 40); do echo "def f$i(): return $i" >"$d/pkg/m$i.py"; done
(cd "$d" && "$ANDON_BIN" index -q >/dev/null)
python3 - "$d/.andon" <<'PY'
import glob, sys
p = sorted(glob.glob(sys.argv[1] + "/pack-*.bin"))[0]
b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 0xFF; open(p, "wb").write(bytes(b))
PY
for i in $(seq 1 22); do echo "# edit $i" >>"$d/pkg/m$((i % 40 + 1)).py"; (cd "$d" && "$ANDON_BIN" index -q >/dev/null); done
set +e; (cd "$d" && "$ANDON_BIN" index --check -q >/dev/null 2>&1); rc=$?; set -e
echo "damaged: $(ls "$d/.andon" | grep -c '^pack-') pack(s) after 22 runs, index --check exit $rc (target: exit 0; packs bounded by compaction, at most 16)"
