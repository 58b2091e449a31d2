#!/usr/bin/env bash
# Fuzz andon's parsers with cargo-fuzz (libFuzzer; needs a nightly toolchain).
#
#   benches/fuzz.sh                     every target, 60 s each
#   FUZZ_SECONDS=300 benches/fuzz.sh    longer
#   benches/fuzz.sh ledger_reader ...   only the named targets
#
# Each target starts from a scratch corpus seeded with fuzz/seeds/<target>/ (the committed seeds are
# never modified). Reports per target the runs executed and every crash artifact; exits 1 when any
# target crashed (or timed out, or ran out of memory), 2 on a setup or build failure.
# Env: FUZZ_SECONDS (60), FUZZ_TIMEOUT (per input, 10 s), FUZZ_SCRATCH (a scratch dir to use and
# keep; default a fresh temp dir, removed unless something crashed), FUZZ_TOOLCHAIN (nightly),
# FUZZ_SANITIZER (none: the code under test is safe Rust and libFuzzer runs ~20x faster without
# ASan here; `address` turns it on), CARGO_TARGET_DIR (honoured by cargo as usual).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seconds="${FUZZ_SECONDS:-60}"
timeout="${FUZZ_TIMEOUT:-10}"
toolchain="${FUZZ_TOOLCHAIN:-nightly}"
sanitizer="${FUZZ_SANITIZER:-none}"
all_targets=(ledger_reader brief_parser proposal_json config_toml datalog_query panel_output request_json index_reader file_names text_escaping)
if (($# > 0)); then targets=("$@"); else targets=("${all_targets[@]}"); fi

if ! cargo "+$toolchain" --version >/dev/null 2>&1; then
    echo "fuzz.sh: the $toolchain toolchain is missing (rustup toolchain install $toolchain)" >&2
    exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi

if [[ -n "${FUZZ_SCRATCH:-}" ]]; then
    scratch="$FUZZ_SCRATCH"; keep=1
    mkdir -p "$scratch"
else
    scratch="$(mktemp -d "${TMPDIR:-/tmp}/andon-fuzz.XXXXXX")"; keep=0
fi

echo "fuzz.sh: building ${targets[*]} (cargo +$toolchain fuzz build -s $sanitizer)" >&2
for t in "${targets[@]}"; do
    if ! cargo "+$toolchain" fuzz build -s "$sanitizer" "$t" >"$scratch/build-$t.log" 2>&1; then
        cat "$scratch/build-$t.log" >&2
        echo "fuzz.sh: building $t failed" >&2
        exit 2
    fi
done

crashed=0
summary=()
for t in "${targets[@]}"; do
    corpus="$scratch/corpus/$t"
    artifacts="$scratch/artifacts/$t"
    mkdir -p "$corpus" "$artifacts" "$scratch/tmp/$t"
    if [[ -d "fuzz/seeds/$t" ]]; then cp -R "fuzz/seeds/$t/." "$corpus/"; fi
    log="$scratch/$t.log"
    echo "fuzz.sh: $t for ${seconds}s (log: $log)" >&2
    rc=0
    ANDON_FUZZ_SCRATCH="$scratch/tmp/$t" cargo "+$toolchain" fuzz run -s "$sanitizer" "$t" "$corpus" -- \
        -max_total_time="$seconds" -timeout="$timeout" -artifact_prefix="$artifacts/" \
        -print_final_stats=1 >"$log" 2>&1 || rc=$?
    runs="$(sed -n 's/^Done \([0-9][0-9]*\) runs in.*/\1/p' "$log" | tail -n 1)"
    if [[ -z "$runs" ]]; then
        runs="$(sed -n 's/^stat::number_of_executed_units: *\([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)"
    fi
    mapfile -t found < <(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log")
    if ((rc != 0)) || ((${#found[@]} > 0)); then
        crashed=1
        summary+=("$t: ${runs:-?} runs, CRASH (exit $rc)")
        for f in "${found[@]}"; do summary+=("    artifact: $f"); done
        panic="$(grep -m1 -E "panicked at|ERROR: libFuzzer|SUMMARY: " "$log" || true)"
        [[ -n "$panic" ]] && summary+=("    $panic")
        summary+=("    reproduce: cargo +$toolchain fuzz run -s $sanitizer $t <artifact>; minimize: cargo +$toolchain fuzz tmin -s $sanitizer $t <artifact>")
    else
        summary+=("$t: ${runs:-?} runs, no crash")
    fi
done

echo
echo "fuzz summary (${seconds}s per target):"
printf '  %s\n' "${summary[@]}"
if ((crashed)); then
    echo "scratch kept: $scratch (corpora, artifacts, logs)"
    exit 1
fi
if ((keep)); then
    echo "scratch kept: $scratch"
else
    rm -rf "$scratch"
fi
