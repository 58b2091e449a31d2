#!/usr/bin/env bash
# andon's indexing benchmarks on real corpora, and andon side by side with its peers.
#
# Usage: benches/index.sh [CORPUS_DIR]
#   CORPUS_DIR   where benches/corpora.sh fetches the corpora
#                (default: $ANDON_CORPUS_DIR, else <repo>/target/bench-corpora)
# Environment:
#   ANDON_BENCH_RUNS=5        timed runs per measurement (medians are reported)
#   ANDON_BENCH_PEERS=0       skip the peers (grimp, dependency-cruiser)
#   ANDON_BENCH_CORPORA="django/django rust-vendor effect/src rxjs/src"   which corpora
#   ANDON_BENCH_EXCLUDE="glob,glob"   excluded from every corpus (andon index --exclude), e.g. to
#                             leave out files a given andon version cannot index
#   CARGO_TARGET_DIR          honoured for the andon build
#
# Steps: (a) fetch the corpora through the registries (benches/corpora.sh); (b) build andon
# (release); (c) for each corpus run the in-process benchmark (benches/index.rs: raw parse, full
# index, no-change and one-file-change re-index), then time whole processes with hyperfine if it
# is installed (else a loop that alternates the commands, medians of $ANDON_BENCH_RUNS):
#   django:  grimp 3.20 cold/warm/one file edited  vs  andon index --rebuild / no change / one file
#   effect:  dependency-cruiser 17.4.3 (cold, and warm with --cache)  vs  andon index
#   others:  andon index cold / no change / one file
# and peak memory with /usr/bin/time -v where present. Peers are installed under
# target/bench-peers (a virtualenv and an npm prefix); a peer that cannot be installed is skipped.
# Corpora are copied to target/bench-work before anything writes to them. Never commit target/.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
cd "$ROOT"

RUNS=${ANDON_BENCH_RUNS:-5}
CORPORA=${1:-${ANDON_CORPUS_DIR:-$ROOT/target/bench-corpora}}
PEERS=$ROOT/target/bench-peers
WORK=$ROOT/target/bench-work
RESULTS=$ROOT/target/bench-results
LIST=${ANDON_BENCH_CORPORA:-django/django rust-vendor effect/src rxjs/src}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
case $TARGET in /*) ;; *) TARGET=$ROOT/$TARGET ;; esac
ANDON=$TARGET/release/andon
EXCLUDE=""   # --exclude flags for andon, from $ANDON_BENCH_EXCLUDE
IFS=, read -r -a _globs <<< "${ANDON_BENCH_EXCLUDE:-}"
for g in "${_globs[@]}"; do
  g=$(echo "$g" | xargs)
  [ -n "$g" ] && EXCLUDE+=" --exclude '$g'"
done

have() { command -v "$1" > /dev/null 2>&1; }
say() { printf '\n== %s\n' "$*"; }
note() { printf '   %s\n' "$*"; }
mkdir -p "$PEERS" "$WORK" "$RESULTS"
rm -f "$RESULTS/medians.tsv"

# ---------------------------------------------------------------------------------------------
# Timing whole processes.
declare -A MED=()   # label -> median in ms

# measure DIR LABEL PREPARE COMMAND [LABEL PREPARE COMMAND ...]
# Times the commands in one go, in DIR (hyperfine, or a loop that alternates them), and records
# their medians in MED. Commands are run without a shell (hyperfine -N), so that runs of a few
# milliseconds are measured, not the shell; quote with '' and "". PREPARE runs untimed before every
# run of its command ("" for none), also without a shell.
measure() {
  local cwd=$1; shift
  local -a names=() preps=() cmds=()
  while [ $# -ge 3 ]; do names+=("$1"); preps+=("${2:-true}"); cmds+=("$3"); shift 3; done
  local i n=${#names[@]}
  for ((i = 0; i < n; i++)); do   # every command must work before it is timed
    if ! (cd "$cwd" && eval "${preps[i]}" && eval "${cmds[i]}") > /dev/null 2> "$RESULTS/last.err"; then
      note "${names[i]}: the command failed, not timed:"; sed 's/^/     /' "$RESULTS/last.err" | tail -5
      return 1
    fi
  done
  if have hyperfine; then
    local -a args=()
    for ((i = 0; i < n; i++)); do args+=(-n "${names[i]}" --prepare "${preps[i]}" "${cmds[i]}"); done
    local json=$RESULTS/hyperfine-$$.json
    (cd "$cwd" && hyperfine -N --style basic --warmup 1 --runs "$RUNS" --export-json "$json" "${args[@]}") \
      | grep -E '^Benchmark|Time \(mean|Range' | sed 's/^/   /'
    while IFS=$'\t' read -r med label; do MED[$label]=$med; done < <(python3 - "$json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("%.1f\t%s" % (r["median"] * 1000, r["command"]))
PY
)
    rm -f "$json"
  else
    local -a times=()
    local r t0 t1
    for ((i = 0; i < n; i++)); do (cd "$cwd" && eval "${preps[i]}" && eval "${cmds[i]}") > /dev/null 2>&1; done   # warm-up
    for ((r = 0; r < RUNS; r++)); do   # alternate the commands run by run
      for ((i = 0; i < n; i++)); do
        (cd "$cwd" && eval "${preps[i]}") > /dev/null 2>&1
        t0=$(date +%s%N); (cd "$cwd" && eval "${cmds[i]}") > /dev/null 2>&1; t1=$(date +%s%N)
        times[i]+="$(((t1 - t0) / 1000)) "
      done
    done
    for ((i = 0; i < n; i++)); do
      MED[${names[i]}]=$(printf '%s\n' ${times[i]} | sort -n | awk '{a[NR]=$1} END {m = NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.1f", m / 1000}')
    done
  fi
  for ((i = 0; i < n; i++)); do printf '   %-32s median %9.1f ms\n' "${names[i]}" "${MED[${names[i]}]}"; done
}

# ratio A B: how many times longer A takes than B
ratio() {
  if [ -n "${MED[$1]:-}" ] && [ -n "${MED[$2]:-}" ]; then
    awk -v a="${MED[$1]}" -v b="${MED[$2]}" -v na="$1" -v nb="$2" \
      'BEGIN { printf "   %-32s / %-32s = %6.2f\n", na, nb, (b > 0 ? a / b : 0) }'
  fi
}

# peak LABEL COMMAND: peak resident memory of one run, with /usr/bin/time -v
peak() {
  [ -x /usr/bin/time ] || { note "$1: /usr/bin/time not installed, no peak memory"; return 0; }
  local kb
  kb=$(/usr/bin/time -v bash -c "$2" 2>&1 > /dev/null | awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}')
  if [ -n "$kb" ]; then
    printf '   %-32s peak RSS %7.1f MiB\n' "$1" "$(awk -v k="$kb" 'BEGIN { print k / 1024 }')"
  fi
}

# A mid-sized file (median size) with extension EXT under DIR, not excluded by $ANDON_BENCH_EXCLUDE.
mid_file() {
  local -a files=()
  local size rel g ok
  while read -r size rel; do
    ok=1
    for g in "${_globs[@]}"; do
      g=$(echo "$g" | xargs)
      # shellcheck disable=SC2053
      [ -n "$g" ] && [[ $rel == $g || $rel == ${g#\*\*/} ]] && ok=0
    done
    [ "$ok" = 1 ] && files+=("$rel")
  done < <(cd "$1" && find . -name ".*" ! -name . -prune -o -type f -name "*.$2" -printf '%s %P\n' | sort -n -k1,1 -k2)
  if [ ${#files[@]} -gt 0 ]; then echo "$1/${files[$(((${#files[@]} - 1) / 2))]}"; fi
}

# A fresh writable copy of a corpus under target/bench-work (the fetched corpora stay pristine).
work_copy() {
  rm -rf "${WORK:?}/$1"
  mkdir -p "$WORK/$(dirname "$1")"
  cp -a "$CORPORA/$1" "$WORK/$1"
}

# ---------------------------------------------------------------------------------------------
say "corpora"
"$HERE/corpora.sh" "$CORPORA"

say "build"
cargo build --release
cargo bench --bench index --no-run
note "andon: $ANDON ($("$ANDON" --version 2>/dev/null || echo '?'))"
note "hyperfine: $(hyperfine --version 2>/dev/null || echo 'not installed: alternating runs, bash timing')"
note "machine: $(nproc) cores; runs: $RUNS"
[ -n "$EXCLUDE" ] && note "excluded from every corpus:$EXCLUDE"

# ---------------------------------------------------------------------------------------------
# Peers.
PY=""
if [ "${ANDON_BENCH_PEERS:-1}" != 0 ]; then
  say "peers"
  VENV=$PEERS/venv
  if { [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"; } \
    && { "$VENV/bin/python" -c 'import grimp, importlib.metadata as m; assert m.version("grimp") == "3.20"' 2> /dev/null \
      || "$VENV/bin/python" -m pip install -q --disable-pip-version-check grimp==3.20; }; then
    PY=$VENV/bin/python
    note "grimp $("$PY" -c 'import importlib.metadata as m; print(m.version("grimp"))')"
  else
    note "grimp: cannot be installed (python3 -m venv, pip install grimp==3.20); skipped"
  fi
  NODE=$PEERS/node
  DEPCRUISE=$NODE/node_modules/.bin/depcruise
  if [ ! -x "$DEPCRUISE" ]; then
    if have npm && mkdir -p "$NODE" && (cd "$NODE" && { [ -f package.json ] || echo '{"private": true}' > package.json; } \
      && npm install --silent --no-audit --no-fund dependency-cruiser@17.4.3 typescript@5.9.3 > /dev/null); then :; else
      note "dependency-cruiser: cannot be installed (npm install dependency-cruiser@17.4.3); skipped"
    fi
  fi
  if [ -x "$DEPCRUISE" ]; then note "dependency-cruiser $("$DEPCRUISE" --version)"; else DEPCRUISE=""; fi
else
  DEPCRUISE=""
fi

# ---------------------------------------------------------------------------------------------
for c in $LIST; do
  if [ ! -d "$CORPORA/$c" ]; then note "$c: not in $CORPORA; skipped"; continue; fi
  key=${c%%/*}
  say "$c: in-process (benches/index.rs)"
  note "load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
  ANDON_BENCH_RUNS=$RUNS cargo bench -q --bench index -- "$CORPORA/$c" 2>&1 | tee "$RESULTS/bench-$key.txt" | sed 's/^/   /' \
    || note "$c: the in-process benchmark failed (log: ${RESULTS#"$ROOT"/}/bench-$key.txt)"

  say "$c: whole processes (load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?'))"
  # The peers need the package around the directory andon indexes: copy the whole corpus.
  work_copy "$key"
  dir=$WORK/$c
  case $c in
    django/*) ext=py ;; effect/* | rxjs/*) ext=ts ;; *) ext=rs ;;
  esac
  edit=$(mid_file "$dir" "$ext")
  comment='//'; [ "$ext" = py ] && comment='#'
  # The edit: a new comment line each time (no shell: a script).
  printf '#!/usr/bin/env bash\necho "%s andon bench edit $RANDOM$RANDOM" >> %q\n' "$comment" "$edit" > "$RESULTS/edit-$key.sh"
  bump="bash '$RESULTS/edit-$key.sh'"
  note "one-file edits append a comment line to ${edit#"$WORK"/}"
  A="'$ANDON' index --quiet$EXCLUDE '$dir'"
  AR="'$ANDON' index --quiet --rebuild$EXCLUDE '$dir'"
  if ! eval "$A" > /dev/null 2> "$RESULTS/last.err"; then
    note "$c: andon index failed; no whole-process timings:"; tail -5 "$RESULTS/last.err" | sed 's/^/     /'
    continue
  fi

  if [ "$key" = django ] && [ -n "$PY" ]; then
    sdist=$WORK/django   # grimp imports the package from the sdist root
    cold=$RESULTS/grimp-cache-cold warm=$RESULTS/grimp-cache-warm
    rm -rf "$warm"
    G="'$PY' -c \"import sys; sys.path.insert(0, '$sdist'); import grimp; grimp.build_graph('django', cache_dir='%s')\""
    # shellcheck disable=SC2059
    GC=$(printf "$G" "$cold") GW=$(printf "$G" "$warm")
    measure "$sdist" "grimp cold" "rm -rf '$cold'" "$GC" "andon cold (--rebuild)" "" "$AR" || true
    measure "$sdist" "grimp warm" "" "$GW" "andon warm (no change)" "" "$A" || true
    measure "$sdist" "grimp one file edited" "$bump" "$GW" "andon one file edited" "$bump" "$A" || true
    say "django: ratios (peer / andon: above 1 means andon is faster)"
    ratio "grimp cold" "andon cold (--rebuild)"
    ratio "grimp warm" "andon warm (no change)"
    ratio "grimp one file edited" "andon one file edited"
    peak "grimp cold" "rm -rf '$cold'; cd '$sdist' && $GC"
  elif [ "$key" = effect ] && [ -n "$DEPCRUISE" ]; then
    root=$WORK/effect
    cache=$RESULTS/depcruise-cache
    DC="'$DEPCRUISE' --no-config --output-type err src"
    # --cache-strategy content: the corpus is not a git checkout
    DCW="'$DEPCRUISE' --no-config --cache '$cache' --cache-strategy content --output-type err src"
    rm -rf "$cache"
    measure "$root" "depcruise cold" "" "$DC" "andon cold (--rebuild)" "" "$AR" || true
    measure "$root" "depcruise warm (--cache)" "" "$DCW" "andon warm (no change)" "" "$A" || true
    measure "$root" "depcruise one file (--cache)" "$bump" "$DCW" "andon one file edited" "$bump" "$A" || true
    say "effect: ratios (peer / andon: above 1 means andon is faster)"
    ratio "depcruise cold" "andon cold (--rebuild)"
    ratio "depcruise warm (--cache)" "andon warm (no change)"
    ratio "depcruise one file (--cache)" "andon one file edited"
    peak "depcruise cold" "cd '$root' && $DC"
  else
    measure "$dir" "andon cold (--rebuild)" "" "$AR" "andon warm (no change)" "" "$A" \
      "andon one file edited" "$bump" "$A" || true
  fi
  peak "andon index --rebuild ($c)" "$AR"
  for l in "${!MED[@]}"; do echo "$c	$l	${MED[$l]}"; done >> "$RESULTS/medians.tsv"
  MED=()
done

say "done"
note "logs and medians in ${RESULTS#"$ROOT"/} (medians.tsv: corpus, measurement, ms)"
