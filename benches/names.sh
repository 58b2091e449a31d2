#!/usr/bin/env bash
# Name-level precision on real code: per corpus, the files with a `ParseError` fact, the
# `MissingName` rows, and the `BrokenImportAt` rows by confidence (tier 1 rests on "exact"). Beside
# the TypeScript corpora, tsc's own count of files with a syntax diagnostic (npm `typescript`).
#
# Usage: benches/names.sh [CORPUS_DIR] [ANDON]
#   CORPUS_DIR  what benches/corpora.sh fetched (default: $ANDON_CORPUS_DIR, else target/bench-corpora)
#   ANDON       the binary to measure (default: target/release/andon)
# tsc: ANDON_TYPESCRIPT_NODE_MODULES names a node_modules holding typescript@5.9.3 (default
# ~/.cache/andon-ci/typescript/node_modules, where .ci/run installs it); without it the column reads "-".
# Each corpus is indexed in a scratch copy, so the corpora stay untouched.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${1:-${ANDON_CORPUS_DIR:-$HERE/../target/bench-corpora}}
ANDON=$(realpath "${2:-$HERE/../target/release/andon}")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# count QUERY REPO: the number of answer rows.
count() { "$ANDON" query -q --no-index "$2" "$1" --format csv | tail -n +2 | wc -l; }
# distinct_files QUERY REPO: the number of distinct first-column values.
distinct_files() { "$ANDON" query -q --no-index "$2" "$1" --format csv | tail -n +2 | cut -d, -f1 | sort -u | wc -l; }

# tsc_bad DIR: files tsc's parser reports a syntax diagnostic in, or "-" without typescript.
tsc_bad() {
  local modules=${ANDON_TYPESCRIPT_NODE_MODULES:-$HOME/.cache/andon-ci/typescript/node_modules}
  if [ -d "$modules/typescript" ] && command -v node > /dev/null; then
    NODE_PATH=$modules node "$HERE/ts-parse-oracle.js" "$1" 2>&1 >/dev/null \
      | sed -n 's/^\([0-9]*\) files, \([0-9]*\) with syntax.*/\2/p'
  else
    echo "-"
  fi
}

printf '%-12s %6s %11s %9s %11s %13s %13s %11s\n' \
  corpus files parse-error tsc-error missing-name broken-exact broken-heur broken-other
for c in effect rxjs rust-vendor django; do
  [ -d "$DIR/$c" ] || { echo "$c: missing (run benches/corpora.sh)" >&2; continue; }
  case $c in
    # the TypeScript packages as the acceptance reads them: src/ with the package.json
    effect|rxjs) mkdir -p "$WORK/$c" && cp -r "$DIR/$c/src" "$DIR/$c/package.json" "$WORK/$c/" ;;
    *) cp -r "$DIR/$c" "$WORK/$c" && rm -rf "$WORK/$c/.andon" ;;
  esac
  "$ANDON" index -q "$WORK/$c" > /dev/null
  files=$(count 'File(p, l)' "$WORK/$c")
  perr=$(distinct_files 'ParseError(p, l, c, el, ec, k)' "$WORK/$c")
  tsc="-"
  case $c in effect|rxjs) tsc=$(tsc_bad "$WORK/$c/src") ;; esac
  missing=$(count 'MissingName(p, l, n, t)' "$WORK/$c")
  exact=$(count 'BrokenImportAt(p, l, n, s, t, "exact")' "$WORK/$c")
  heur=$(count 'BrokenImportAt(p, l, n, s, t, "heuristic")' "$WORK/$c")
  all=$(count 'BrokenImportAt(p, l, n, s, t, c)' "$WORK/$c")
  printf '%-12s %6s %11s %9s %11s %13s %13s %11s\n' \
    "$c" "$files" "$perr" "$tsc" "$missing" "$exact" "$heur" "$((all - exact - heur))"
  rm -rf "${WORK:?}/$c"
done
