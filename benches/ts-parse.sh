#!/usr/bin/env bash
# TypeScript parsing against tsc's parser: for effect's and rxjs's src/ (each with its package.json),
# the files tsc parses without a syntax diagnostic, the files andon records a ParseError for, and
# the files in both (each one a grammar gap). Also the MissingName rows andon derives there.
#
# Usage: benches/ts-parse.sh [CORPUS_DIR]   (default: $ANDON_CORPUS_DIR, else target/bench-corpora)
# Environment:
#   ANDON_BIN=/path/to/andon   the binary to run (default: `cargo build --release`, then
#                              ${CARGO_TARGET_DIR:-target}/release/andon)
#   ANDON_TYPESCRIPT_NODE_MODULES  a node_modules directory holding npm typescript (default:
#                              ~/.cache/andon-ci/typescript/node_modules, installed there if missing)
#   ANDON_BENCH_WORK           scratch directory (default ${TMPDIR:-/tmp}/andon-bench-ts-parse)
# Needs: node and npm (typescript@5.9.3); benches/corpora.sh fetches the corpora if missing.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
CORPORA=${1:-${ANDON_CORPUS_DIR:-$ROOT/target/bench-corpora}}
WORK=${ANDON_BENCH_WORK:-${TMPDIR:-/tmp}/andon-bench-ts-parse}
MODULES=${ANDON_TYPESCRIPT_NODE_MODULES:-$HOME/.cache/andon-ci/typescript/node_modules}
if [ ! -f "$MODULES/typescript/package.json" ]; then
  npm install --silent --prefix "$(dirname "$MODULES")" typescript@5.9.3 >/dev/null
fi
if [ -z "${ANDON_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --release --quiet)
  ANDON_BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/andon
fi
[ -d "$CORPORA/effect/src" ] && [ -d "$CORPORA/rxjs/src" ] || "$HERE/corpora.sh" "$CORPORA" >/dev/null
rm -rf "$WORK" && mkdir -p "$WORK"

for name in effect rxjs; do
  repo="$WORK/$name"
  mkdir -p "$repo" && cp -R "$CORPORA/$name/src" "$repo/src" && cp "$CORPORA/$name/package.json" "$repo/"
  NODE_PATH="$MODULES" node "$HERE/ts-parse-oracle.js" "$repo" 2>/dev/null | sort > "$WORK/$name.tsc-clean"
  "$ANDON_BIN" index --quiet "$repo" >/dev/null
  "$ANDON_BIN" query --quiet --no-index "$repo" 'ParseError(p, l, c, el, ec, k)' --format csv \
    | tail -n +2 | cut -d, -f1 | sort -u > "$WORK/$name.parse-errors"
  missing=$("$ANDON_BIN" query --quiet --no-index "$repo" 'MissingName(p, l, n, t)' --format csv | tail -n +2 | wc -l)
  both=$(comm -12 "$WORK/$name.tsc-clean" "$WORK/$name.parse-errors")
  files=$(find "$repo/src" -name '*.ts' -o -name '*.tsx' -o -name '*.mts' -o -name '*.cts' | grep -vc '\.d\.ts$' || true)
  echo "$name: $files files; tsc clean $(wc -l < "$WORK/$name.tsc-clean"); andon ParseError $(wc -l < "$WORK/$name.parse-errors") files; both $(printf '%s' "$both" | grep -c . || true); MissingName $missing rows"
  if [ -n "$both" ]; then echo "  tsc parses cleanly, andon records a ParseError:"; printf '    %s\n' $both; fi
done
