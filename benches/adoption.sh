#!/usr/bin/env bash
# A new team adopting andon in CI, on real projects nobody here wrote: per project, `andon init`,
# `andon check` (exit code), then one planted back-edge between two modules of the first layers
# contract `init` inferred inside a package (the bottom layer's module imports the top layer's),
# and `andon check` again. Prints one row per project: stages, support directories, layers
# contracts inferred, init exceptions, blocking findings for the planted edge (1 is the goal), the
# check's exit codes before and after the plant, and gaps (markers in stages).
#
# Usage: benches/adoption.sh [DIR] [ANDON]
#   DIR    where the projects are fetched (default: $ANDON_CORPUS_DIR/adoption, else
#          target/bench-corpora/adoption); what is there is kept
#   ANDON  the binary (default: target/release/andon)
# Fetches through the registries: httpx, pydantic, celery, sqlalchemy (PyPI sdists), zod (npm),
# and a ten-crate ripgrep workspace (ripgrep and its nine crates from crates.io, laid out as the
# repository lays them out: the root crate and `crates/*`).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${1:-${ANDON_CORPUS_DIR:-$HERE/../target/bench-corpora}/adoption}
BIN=$(realpath "${2:-$HERE/../target/release/andon}")
mkdir -p "$DIR/dl"
DIR=$(cd "$DIR" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

for spec in httpx==0.28.1 pydantic==2.10.4 celery==5.4.0 sqlalchemy==2.0.36; do
  name=${spec%%==*}
  [ -d "$DIR/$name" ] && continue
  (cd "$DIR/dl" && python3 -m pip download -q --no-deps --no-binary :all: "$spec" -d . > /dev/null)
  mkdir -p "$DIR/$name" && tar xzf "$DIR/dl/$name-${spec##*==}.tar.gz" -C "$DIR/$name" --strip-components=1
done
if [ ! -d "$DIR/zod" ]; then
  (cd "$DIR/dl" && npm pack zod@3.25.76 --silent > /dev/null)
  mkdir -p "$DIR/zod" && tar xzf "$DIR/dl/zod-3.25.76.tgz" -C "$DIR/zod" --strip-components=1
fi
if [ ! -d "$DIR/ripgrep" ]; then
  crate() { # crate NAME VERSION DEST
    curl -sSfL "https://static.crates.io/crates/$1/$1-$2.crate" -o "$DIR/dl/$1-$2.crate"
    mkdir -p "$3" && tar xzf "$DIR/dl/$1-$2.crate" -C "$3" --strip-components=1
  }
  rm -rf "$DIR/ripgrep.partial"
  crate ripgrep 14.1.1 "$DIR/ripgrep.partial"
  for c in grep:0.3.2:grep cli:0.1.11:grep-cli matcher:0.1.7:grep-matcher pcre2:0.1.8:grep-pcre2 \
    printer:0.2.2:grep-printer regex:0.1.13:grep-regex searcher:0.1.14:grep-searcher \
    globset:0.4.16:globset ignore:0.4.23:ignore; do
    IFS=: read -r dir version name <<< "$c"
    crate "$name" "$version" "$DIR/ripgrep.partial/crates/$dir"
  done
  printf '\n[workspace]\nmembers = ["crates/*"]\n' >> "$DIR/ripgrep.partial/Cargo.toml"
  mv "$DIR/ripgrep.partial" "$DIR/ripgrep"
fi

# plant REPO: adds to a file of the bottom layer of the first inner layers contract an import of
# the top layer's module; prints the file it changed, or nothing when there is no such contract.
plant() {
  python3 - "$1" "$BIN" <<'PY'
import json, os, re, subprocess, sys
repo, binary = sys.argv[1], sys.argv[2]
text = open(os.path.join(repo, "andon.toml")).read()
blocks = text.split("[[contract]]")[1:]
layers = None
for b in blocks:
    if 'kind = "layers"' in b and 'name = "layers in ' in b:
        body = b.split("layers = [", 1)[1].split("\n]\n", 1)[0]
        rows = [re.findall(r'"path:([^"]+)"', line) for line in re.split(r'\n  (?=[\["])', body)]
        layers = [r for r in rows if r]
        break
if not layers:
    sys.exit(0)
SRC = (".py", ".rs", ".ts", ".tsx", ".js", ".mjs")
FACADE = ("__init__.py", "mod.rs", "lib.rs", "index.ts", "index.js")
def a_file(p):
    full = os.path.join(repo, p)
    if os.path.isfile(full):
        return p
    names = sorted(n for n in os.listdir(full) if n.endswith(SRC))
    names.sort(key=lambda n: (n not in FACADE, n))
    return os.path.join(p, names[0]) if names else None
top, bottom = a_file(layers[0][0]), a_file(layers[-1][0])
if not top or not bottom:
    sys.exit(0)
if bottom.endswith(".py"):
    rows = subprocess.run([binary, "query", "-q", "--no-index", repo, f'Module("{top}", m)', "--format", "csv"],
                          capture_output=True, text=True).stdout.splitlines()[1:]
    line = f"import {rows[0]}\n" if rows else None
elif bottom.endswith(".rs"):
    unit = os.path.splitext(os.path.basename(layers[0][0]))[0]
    line = f"use crate::{unit} as _planted;\n"
else:
    rel = os.path.relpath(os.path.join(repo, top), os.path.dirname(os.path.join(repo, bottom)))
    rel = re.sub(r"\.(ts|tsx|mts)$", ".js", rel if rel.startswith(".") else "./" + rel)
    line = f'import "{rel}";\n'
if line:
    with open(os.path.join(repo, bottom), "a") as f:
        f.write("\n" + line)
    print(bottom)
PY
}

# blocking REPO: the blocking findings of `andon check` (its JSON document).
blocking() {
  { "$BIN" check -q "$1" --format json 2> /dev/null || true; } \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["verdict"]["blocking"])'
}

printf '%-11s %6s %7s %6s %10s %7s %7s %7s %6s\n' project stages support layers exceptions planted exit0 exit1 gaps
for p in httpx pydantic celery sqlalchemy zod ripgrep; do
  rm -rf "${WORK:?}/$p" && cp -r "$DIR/$p" "$WORK/$p" && r="$WORK/$p"
  rm -rf "$r/.andon" "$r/andon.toml"
  "$BIN" init -q "$r" > /dev/null 2>&1 || { echo "$p: andon init failed" >&2; continue; }
  set +e
  "$BIN" check -q "$r" > /dev/null 2>&1
  exit0=$?
  set -e
  doc=$("$BIN" stream -q "$r" --format json 2> /dev/null)
  stages=$(echo "$doc" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["stages"]))')
  support=$(echo "$doc" | python3 -c 'import json,sys; print(len(json.load(sys.stdin).get("support", [])))')
  layers=$(grep -c '^name = "layers' "$r/andon.toml" || true)
  exceptions=$(grep -c 'reason = ' "$r/andon.toml" || true)
  gaps=$("$BIN" query -q --no-index "$r" 'StageMarker(s, p, l, k)' --format csv | tail -n +2 | wc -l)
  planted_file=$(plant "$r")
  if [ -n "$planted_file" ]; then
    planted=$(blocking "$r")
    set +e
    "$BIN" check -q "$r" > /dev/null 2>&1
    exit1=$?
    set -e
  else
    planted="-"
    exit1="-"
  fi
  printf '%-11s %6s %7s %6s %10s %7s %7s %7s %6s\n' "$p" "$stages" "$support" "$layers" "$exceptions" "$planted" "$exit0" "$exit1" "$gaps"
  [ "${ANDON_BENCH_ROWS:-0}" = 1 ] && [ -n "$planted_file" ] && echo "    planted in $planted_file"
done
