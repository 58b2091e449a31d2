#!/usr/bin/env bash
# A seeded sample of the gaps the loop would walk on the bench corpora, for a person to classify:
# is each a gap a maintainer would agree is unfinished work? (docs/performance.md, "Gap precision")
# Each corpus is copied to a scratch directory first (andon writes `.andon/` into what it reads).
# Prints one block per corpus: `path:line  kind`, then the source line. Located gaps only: markers
# (StageMarker), stubs handed across a wire (StubHandoff, at the stub), broken imports, calls that
# do not fit their callee (ArityHandoff), undeclared imports (first site per package). Markers the
# rules call advisory (AdvisoryMarker) are no gaps: each corpus's header counts them.
# Usage: benches/gap_sample.sh [PER_CORPUS] [SEED] [CORPUS_DIR...]
#   (defaults: 10 per corpus, seed 39, every corpus fetched by benches/corpora.sh)
#   ANDON=path/to/andon uses that binary; otherwise a release build (CARGO_TARGET_DIR is honoured).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
per="${1:-10}"
seed="${2:-39}"
shift $(( $# > 2 ? 2 : $# ))
corpora_dir="${ANDON_CORPUS_DIR:-$here/../target/bench-corpora}"
if [ $# -gt 0 ]; then
  corpora=("$@")
else
  corpora=()
  for c in django effect rxjs rust-vendor "$corpora_dir"/sdists/*; do
    [ -d "$c" ] || c="$corpora_dir/$c"
    [ -d "$c" ] && corpora+=("$c")
  done
fi
[ ${#corpora[@]} -gt 0 ] || { echo "no corpus; run benches/corpora.sh first" >&2; exit 2; }
if [ -z "${ANDON:-}" ]; then
  cargo build --release --quiet --manifest-path "$here/../Cargo.toml"
  ANDON="${CARGO_TARGET_DIR:-$here/../target}/release/andon"
fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# rows `kind<TAB>path<TAB>line` of the located gaps of the index of $1
gaps() {
  local d="$1" q
  q() { "$ANDON" query -q "$d" --no-index --format csv "$1" | tail -n +2; }
  q 'StageMarker(s, p, l, k)' | awk -F, '{ print $4 "\t" $2 "\t" $3 }'
  q 'StubHandoff(a, b, n, p, l, k, c)' | awk -F, '{ print "stub-handoff(" $6 ")\t" $4 "\t" $5 }'
  q 'BrokenImport(p, l, n, s)' | awk -F, '{ print "broken-import\t" $1 "\t" $2 }'
  q 'ArityHandoff(a, b, p, l, n, w, x, c)' | awk -F, '{ print "arity\t" $3 "\t" $4 }'
  q 'UndeclaredImport(s, k, p, l)' | sort -t, -k1,2 -k3,3 -k4,4n | awk -F, '!seen[$1 FS $2]++ { print "undeclared-import\t" $3 "\t" $4 }'
}

for src in "${corpora[@]}"; do
  name="$(basename "$src")"
  d="$scratch/$name"
  rm -rf "$d"
  cp -r "$src" "$d"
  rm -rf "$d/.andon"
  "$ANDON" index -q "$d" >/dev/null 2>&1 || true
  all="$scratch/$name.gaps"
  gaps "$d" | sort -u > "$all"
  total=$(wc -l < "$all")
  advisory=$({ "$ANDON" query -q "$d" --no-index --format csv 'AdvisoryMarker(s, p, l, k, w)' 2>/dev/null || true; } | tail -n +2 | wc -l)
  echo "== $name: $total located gaps, sample of $(( total < per ? total : per )) (seed $seed); $advisory advisory markers (not gaps)"
  shuf -n "$per" --random-source=<(yes "$seed") "$all" | sort -t$'\t' -k2,2 -k3,3n | while IFS=$'\t' read -r kind path line; do
    # the line, and up to three more where a statement opens a parenthesis at its end
    text="$(awk -v l="$line" 'NR == l { print; if ($0 !~ /\($/) exit; next } NR > l && NR <= l + 3 { print; if ($0 ~ /\)/) exit } NR > l + 3 { exit }' "$d/$path" 2>/dev/null | sed 's/^[[:space:]]*/    /' | cut -c1-164)"
    printf '%s:%s  %s\n%s\n' "$path" "$line" "$kind" "$text"
  done
done
