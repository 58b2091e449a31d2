#!/usr/bin/env bash
# What the `resolves` contract and the loop's tier-1 holds rest on, on real code: per corpus, the
# exact and heuristic missing names (`MissingNameAt`), the exact `BrokenImportAt` rows (the loop's
# tier-1 holds), the arity mismatches by confidence (`ArityMismatchAt`), the files with a
# `ParseError`, and the cold index time (median of runs). Run it with two binaries to compare.
#
# Usage: benches/resolves.sh [CORPUS_DIR] [ANDON...]
#   CORPUS_DIR  what benches/corpora.sh fetched (default: $ANDON_CORPUS_DIR, else target/bench-corpora);
#               the Python sdists (httpx, pydantic, sqlalchemy, celery) are fetched from PyPI into
#               CORPUS_DIR/sdists when missing
#   ANDON       the binaries to measure, in the same run (default: target/release/andon)
# ANDON_BENCH_RUNS: cold index runs per corpus and binary (default 3).
# `ANDON_BENCH_ROWS=1` also prints every exact row (to classify them by reading the code).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${1:-${ANDON_CORPUS_DIR:-$HERE/../target/bench-corpora}}
shift || true
BINS=("$@")
[ ${#BINS[@]} -gt 0 ] || BINS=("$HERE/../target/release/andon")
RUNS=${ANDON_BENCH_RUNS:-3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

SDISTS="httpx==0.28.1 pydantic==2.10.4 sqlalchemy==2.0.36 celery==5.4.0"
mkdir -p "$DIR/sdists"
for spec in $SDISTS; do
  name=${spec%%==*}
  version=${spec##*==}
  [ -d "$DIR/sdists/$name-$version" ] && continue
  python3 -m pip download -q --no-deps --no-binary :all: "$spec" -d "$DIR/sdists" > /dev/null
  tar xzf "$DIR/sdists/$name-$version.tar.gz" -C "$DIR/sdists"
done

# count BIN QUERY REPO: the number of answer rows.
count() { "$1" query -q --no-index "$3" "$2" --format csv | tail -n +2 | wc -l; }
# rows BIN QUERY REPO: the answer rows.
rows() { "$1" query -q --no-index "$3" "$2" --format csv | tail -n +2; }
# has BIN RELATION: whether the binary knows the relation (an older one may not).
has() { "$1" query -q --no-index "$3" "$2" --format csv > /dev/null 2>&1; }

# median of the numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

printf '%-10s %-16s %6s %6s %10s %10s %13s %11s %11s %9s\n' \
  binary corpus files perr miss-exact miss-heur broken-exact arity-exact arity-heur index-s
for c in effect rxjs rust-vendor django sdists/httpx-0.28.1 sdists/pydantic-2.10.4 sdists/sqlalchemy-2.0.36 sdists/celery-5.4.0; do
  [ -d "$DIR/$c" ] || { echo "$c: missing (run benches/corpora.sh)" >&2; continue; }
  for bin in "${BINS[@]}"; do
    bin=$(realpath "$bin")
    times=""
    for _ in $(seq "$RUNS"); do
      rm -rf "${WORK:?}/repo"
      cp -r "$DIR/$c" "$WORK/repo" && rm -rf "$WORK/repo/.andon" "$WORK/repo/andon.toml"
      start=$(date +%s.%N)
      "$bin" index -q "$WORK/repo" > /dev/null
      end=$(date +%s.%N)
      times="$times $(echo "$end - $start" | bc)"
    done
    secs=$(echo "$times" | tr ' ' '\n' | grep . | median)
    r="$WORK/repo"
    files=$(count "$bin" 'File(p, l)' "$r")
    perr=$(rows "$bin" 'ParseError(p, l, c, el, ec, k)' "$r" | cut -d, -f1 | sort -u | wc -l)
    if has "$bin" 'MissingNameAt(p, l, n, t, c)' "$r"; then
      me=$(count "$bin" 'MissingNameAt(p, l, n, t, "exact")' "$r")
      mh=$(count "$bin" 'MissingNameAt(p, l, n, t, "heuristic")' "$r")
      ae=$(count "$bin" 'ArityMismatchAt(p, l, f, t, w, a, "exact")' "$r")
      ah=$(count "$bin" 'ArityMismatchAt(p, l, f, t, w, a, "heuristic")' "$r")
    else
      # before the relation: a missing name's confidence is that of its import's resolution
      me=$(count "$bin" 'MissingName(p, l, n, t), Resolves(p, l, t, "exact"), !SurfaceOpen(t)' "$r")
      mh=$(($(count "$bin" 'MissingName(p, l, n, t)' "$r") - me))
      ae="-"
      ah="-"
    fi
    be=$(count "$bin" 'BrokenImportAt(p, l, n, s, t, "exact")' "$r")
    printf '%-10s %-16s %6s %6s %10s %10s %13s %11s %11s %9s\n' \
      "$(basename "$(dirname "$(dirname "$(dirname "$bin")")")")" "$(basename "$c")" \
      "$files" "$perr" "$me" "$mh" "$be" "$ae" "$ah" "$secs"
    if [ "${ANDON_BENCH_ROWS:-0}" = 1 ]; then
      rows "$bin" 'MissingNameAt(p, l, n, t, "exact")' "$r" 2> /dev/null | sed 's/^/    missing: /' || true
      rows "$bin" 'ArityMismatchAt(p, l, f, t, w, a, "exact")' "$r" 2> /dev/null | sed 's/^/    arity:   /' || true
    fi
  done
done
