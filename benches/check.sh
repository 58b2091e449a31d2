#!/usr/bin/env bash
# `andon check` side by side with its peers, timed as whole processes with hyperfine.
#
# Usage: benches/check.sh
# Environment:
#   ANDON_BIN=/path/to/andon   the andon binary to time (default: `cargo build --release` in this
#                              repository, then ${CARGO_TARGET_DIR:-target}/release/andon)
#   ANDON_BENCH_RUNS=5         timed runs per command (hyperfine --runs; medians are reported)
#   ANDON_CORPUS_DIR           where benches/corpora.sh fetches the corpora (default target/bench-corpora)
#   ANDON_BENCH_WORK           scratch directory (default ${TMPDIR:-/tmp}/andon-bench-check), wiped
#                              and rebuilt on every run; outside any git checkout on purpose, so that
#                              no .gitignore above it hides files from andon's walk
# Needs: hyperfine, python3 (venv + pip), npm; network access to PyPI and npm on the first run.
#
# What it measures (medians of $ANDON_BENCH_RUNS runs, 1 warm-up; exit codes are ignored: 0 and 1
# are both a finished check):
#   django 5.2.19, the package alone (django/, 885 .py files; the sdist's tests/docs/js are left out)
#     cold: lint-imports --no-cache (import-linter 2.17, ONE forbidden contract)
#           vs andon check with FIVE contracts, .andon/ removed before every run
#           target: andon <= 2.5x import-linter
#     warm: lint-imports with its cache present vs andon check with its index present, no file changed
#           target: andon (five contracts) <= 1/3 of import-linter (one contract)
#   effect 4.1.0 (npm), src/ (572 .ts files) and package.json
#     cold: depcruise (dependency-cruiser 17.4.3, one forbidden rule, no cache)
#           vs andon check with the equivalent forbidden contract, .andon/ removed before every run
#           target: andon >= 10x faster (ratio <= 0.1)
#   Information only (no target): andon with the ONE contract equivalent to import-linter's, cold
#   and warm; depcruise --cache vs andon warm.
# Both tools of a job run in the same directory on exactly the same files: andon.toml excludes the
# 87 .js files shipped inside django/ (import-linter reads only .py), and the file counts each tool
# reports are printed before timing. Each job is one hyperfine invocation holding all its commands.
#
# Peers are installed under target/bench-peers (a virtualenv and an npm prefix); hyperfine JSON and
# the medians table go to target/bench-results/check. Nothing else in the repository is written.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)

RUNS=${ANDON_BENCH_RUNS:-5}
CORPORA=${ANDON_CORPUS_DIR:-$ROOT/target/bench-corpora}
PEERS=$ROOT/target/bench-peers
RESULTS=$ROOT/target/bench-results/check
WORK=${ANDON_BENCH_WORK:-${TMPDIR:-/tmp}/andon-bench-check}

IMPORT_LINTER=2.17
DEPCRUISER=17.4.3
TYPESCRIPT=5.9.3   # dependency-cruiser parses .ts with the TypeScript compiler

say() { printf '\n== %s\n' "$*"; }
note() { printf '   %s\n' "$*"; }
die() { printf 'check.sh: %s\n' "$*" >&2; exit 1; }
load() { cut -d' ' -f1-3 /proc/loadavg 2> /dev/null || echo '?'; }
command -v hyperfine > /dev/null || die "hyperfine is not installed"
mkdir -p "$PEERS" "$RESULTS"

# ---------------------------------------------------------------------------------------------
say "corpora"
if [ ! -d "$CORPORA/django/django" ] || [ ! -d "$CORPORA/effect/src" ]; then
  "$HERE/corpora.sh" "$CORPORA"
fi
note "django: $(find "$CORPORA/django/django" -name '*.py' | wc -l) .py files; effect: $(find "$CORPORA/effect/src" -name '*.ts' | wc -l) .ts files in src/"

say "andon"
if [ -n "${ANDON_BIN:-}" ]; then
  ANDON=$ANDON_BIN
else
  (cd "$ROOT" && cargo build --release)
  TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
  case $TARGET in /*) ;; *) TARGET=$ROOT/$TARGET ;; esac
  ANDON=$TARGET/release/andon
fi
[ -x "$ANDON" ] || die "no andon binary at $ANDON"
note "$ANDON ($("$ANDON" --version))"

say "peers"
VENV=$PEERS/venv
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
if ! "$VENV/bin/python" -c "import importlib.metadata as m; assert m.version('import-linter') == '$IMPORT_LINTER'" 2> /dev/null; then
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "import-linter==$IMPORT_LINTER"
fi
LINT=$VENV/bin/lint-imports
note "import-linter $("$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('import-linter'), '(grimp', m.version('grimp') + ')')")"
NODE=$PEERS/node
DEPCRUISE=$NODE/node_modules/.bin/depcruise
if [ "$("$DEPCRUISE" --version 2> /dev/null)" != "$DEPCRUISER" ]; then
  mkdir -p "$NODE"
  (cd "$NODE" && { [ -f package.json ] || echo '{"private": true}' > package.json; } \
    && npm install --silent --no-audit --no-fund "dependency-cruiser@$DEPCRUISER" "typescript@$TYPESCRIPT" > /dev/null)
fi
note "dependency-cruiser $("$DEPCRUISE" --version), node $(node --version)"
note "hyperfine: $(hyperfine --version); machine: $(nproc) cores; runs: $RUNS (+1 warm-up)"

# ---------------------------------------------------------------------------------------------
say "scratch trees in $WORK"
rm -rf "$WORK"
mkdir -p "$WORK"
DJ=$WORK/django       # the django package alone, five andon contracts, one import-linter contract
DJ1=$WORK/django-one  # the same files, andon with only the contract import-linter checks (info)
EF=$WORK/effect       # effect's src/ and package.json, one rule for each tool

# Python: import-linter imports the package (PYTHONPATH=.), andon walks the directory. Both see the
# 885 .py files of django/; andon also indexes .js, so those are excluded.
ANDON_INDEX='[index]
# import-linter reads only the .py files of the package: leave out the .js django/ ships.
exclude = ["**/*.js"]
'
FORBIDDEN='[[contract]]
name = "db does not import forms"
kind = "forbidden"
from = ["django/db/**"]
to = ["django/forms/**"]
'
IMPORTLINTER='[importlinter]
root_package = django

[importlinter:contract:db-not-forms]
name = db does not import forms
type = forbidden
source_modules =
    django.db
forbidden_modules =
    django.forms
'
for d in "$DJ" "$DJ1"; do
  mkdir -p "$d"
  cp -a "$CORPORA/django/django" "$d/django"
  printf '%s' "$IMPORTLINTER" > "$d/.importlinter"
done
printf '%s\n%s' "$ANDON_INDEX" "$FORBIDDEN" > "$DJ1/andon.toml"
cat > "$DJ/andon.toml" <<EOF
$ANDON_INDEX
# Five contracts, one of each structural kind.
$FORBIDDEN
[[contract]]
name = "contrib over core over utils"
kind = "layers"
layers = ["django/contrib", "django/core", "django/utils"]

[[contract]]
name = "db and template are independent"
kind = "independence"
members = ["django/db", "django/template"]

[[contract]]
name = "forms and template have no cycle"
kind = "acyclic"
members = ["django/forms", "django/template"]

[[contract]]
name = "only db reaches the database backends"
kind = "protected"
target = ["django/db/backends/**"]
allowed = ["django/db/**"]
EOF

# TypeScript: depcruise cruises src/; andon walks the directory (src/ + package.json).
mkdir -p "$EF"
cp -a "$CORPORA/effect/src" "$EF/src"
cp "$CORPORA/effect/package.json" "$EF/package.json"
cat > "$EF/.dependency-cruiser.cjs" << 'EOF'
module.exports = {
  forbidden: [
    {
      name: "ai-not-to-rpc",
      comment: "the AI modules do not import the RPC modules (direct imports)",
      severity: "error",
      from: { path: "^src/ai/" },
      to: { path: "^src/rpc/" },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
  },
};
EOF
cat > "$EF/andon.toml" << 'EOF'
# dependency-cruiser's forbidden rules judge direct imports: transitive = false.
[[contract]]
name = "ai does not import rpc"
kind = "forbidden"
from = ["src/ai/**"]
to = ["src/rpc/**"]
transitive = false
EOF

# ---------------------------------------------------------------------------------------------
# Every command once, untimed: it must finish (andon: exit 0 or 1), and both tools of a job must
# see the same files.
say "sanity runs"
andon_once() {   # DIR: andon check, cold, once; prints its verdict lines, fails on exit 2/3
  local rc=0
  rm -rf "$1/.andon"
  (cd "$1" && "$ANDON" check --quiet .) > "$RESULTS/last.out" 2> "$RESULTS/last.err" || rc=$?
  if [ "$rc" -gt 1 ]; then
    note "andon check $1 exited $rc:"; sed 's/^/     /' "$RESULTS/last.err" | tail -20
    die "andon check failed (exit $rc); nothing timed"
  fi
  note "andon check $(basename "$1") (exit $rc, $("$ANDON" index --quiet --format json "$1" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["files"]["total"])') files):"
  grep -E '^(contracts|findings):' "$RESULTS/last.out" | sed 's/^/     /'
}
andon_once "$DJ"
andon_once "$DJ1"
andon_once "$EF"
rc=0
(cd "$DJ" && rm -rf .import_linter_cache && PYTHONPATH=. "$LINT" --no-cache) > "$RESULTS/last.out" 2>&1 || rc=$?
[ "$rc" -le 1 ] || { tail -20 "$RESULTS/last.out"; die "lint-imports exited $rc"; }
note "lint-imports (exit $rc): $(grep -E '^Analyzed' "$RESULTS/last.out"); $(grep -E '^Contracts:' "$RESULTS/last.out")"
rc=0
(cd "$EF" && "$DEPCRUISE" --config .dependency-cruiser.cjs --output-type err src) > "$RESULTS/last.out" 2>&1 || rc=$?
grep -qE 'modules, .* dependencies cruised' "$RESULTS/last.out" || { tail -20 "$RESULTS/last.out"; die "depcruise failed (exit $rc)"; }
note "depcruise (exit $rc = violations): $(grep -E 'dependencies cruised' "$RESULTS/last.out" | sed 's/^[^0-9]*//')"

# ---------------------------------------------------------------------------------------------
# bench JOB DIR NAME PREPARE COMMAND [NAME PREPARE COMMAND ...]
# One hyperfine invocation in DIR with every command of the job (no shell: -N; quote with '').
# hyperfine runs each command's runs in a block, one command after the other.
declare -A MED=()   # "JOB/NAME" -> median ms
bench() {
  local job=$1 dir=$2; shift 2
  local -a args=()
  while [ $# -ge 3 ]; do args+=(-n "$1" --prepare "$2" "$3"); shift 3; done
  local json=$RESULTS/$job.json
  say "$job (load average before: $(load))"
  (cd "$dir" && PYTHONPATH=. hyperfine -N -i --style basic --warmup 1 --runs "$RUNS" \
    --export-json "$json" "${args[@]}") > "$RESULTS/$job.log" 2>&1 \
    || { tail -20 "$RESULTS/$job.log"; die "hyperfine failed in $job"; }
  grep -E '^Benchmark|Time \(mean|Range' "$RESULTS/$job.log" | sed 's/^/   /'
  while IFS=$'\t' read -r name med; do MED[$job/$name]=$med; done < <(python3 - "$json" << 'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("%s\t%.1f" % (r["command"], r["median"] * 1000))
PY
)
  note "load average after: $(load)"
}

A="'$ANDON' check --quiet ."
LI="'$LINT'"
DC="'$DEPCRUISE' --config .dependency-cruiser.cjs --output-type err src"
# depcruise's cache needs a strategy that works outside a git checkout
DCW="'$DEPCRUISE' --config .dependency-cruiser.cjs --cache '$EF/.depcruise-cache' --cache-strategy content --output-type err src"
A1="'$ANDON' check --quiet '$DJ1'"

bench django-cold "$DJ" \
  "lint-imports" "rm -rf .import_linter_cache" "$LI --no-cache" \
  "andon" "rm -rf .andon" "$A" \
  "andon-one" "rm -rf '$DJ1/.andon'" "$A1"
(cd "$DJ" && PYTHONPATH=. "$LINT" > /dev/null 2>&1) || true   # fill import-linter's cache
bench django-warm "$DJ" \
  "lint-imports" "true" "$LI" \
  "andon" "true" "$A" \
  "andon-one" "true" "$A1"
bench effect-cold "$EF" \
  "depcruise" "true" "$DC" \
  "andon" "rm -rf .andon" "$A"
bench effect-warm "$EF" \
  "depcruise" "true" "$DCW" \
  "andon" "true" "$A"

# ---------------------------------------------------------------------------------------------
say "medians (ratio = andon / peer; below 1 means andon is faster)"
# job, andon command, peer command, what is compared, target ratio ("" = information only)
rows="django-cold	andon	lint-imports	django cold: andon 5 contracts vs import-linter 1	2.5
django-warm	andon	lint-imports	django warm: andon 5 contracts vs import-linter 1	1/3
effect-cold	andon	depcruise	effect cold: andon vs dependency-cruiser, 1 rule	0.1
django-cold	andon-one	lint-imports	(info) django cold: andon 1 contract vs import-linter 1	
django-warm	andon-one	lint-imports	(info) django warm: andon 1 contract vs import-linter 1	
effect-warm	andon	depcruise	(info) effect warm: andon vs depcruise --cache	"
TABLE=$RESULTS/table.txt
{
  printf '%-56s %10s %10s %7s %8s %5s\n' job "andon ms" "peer ms" ratio target "met?"
  while IFS=$'\t' read -r job a p label target; do
    awk -v l="$label" -v a="${MED[$job/$a]:-}" -v p="${MED[$job/$p]:-}" -v t="$target" 'BEGIN {
      if (a == "" || p == "") { printf "%-56s %10s %10s\n", l, "?", "?"; exit }
      r = p > 0 ? a / p : 0
      tv = t == "1/3" ? 1 / 3 : t + 0
      tt = t == "" ? "-" : "<= " t
      met = t == "" ? "-" : (r <= tv ? "yes" : "NO")
      printf "%-56s %10.1f %10.1f %7.3f %8s %5s\n", l, a, p, r, tt, met
    }'
  done <<< "$rows"
} | tee "$TABLE"
note "hyperfine JSON and this table: ${RESULTS#"$ROOT"/}/ ; scratch trees: $WORK"
