#!/usr/bin/env bash
# run.sh [--long SECONDS] [TARGET ...] - run the fuzzing targets (tests/fuzz/README.md) from the
# repository root, a TAP line each ("ok N - fuzz_X ..."), which tests/run.sh counts.
#
# Default: the short deterministic run of `ninja test`: libFuzzer with -seed=1 for RUNS inputs
# (default 400, REDTUNE_FUZZ_RUNS) mutated from the seed corpus kept in the repository; new
# inputs go to a scratch folder, never into the repository. --long SECONDS: a time-bounded
# run per target that keeps its grown corpus in build/fuzz/corpus/TARGET for the next one.
# A crash, leak, sanitizer report or hang (-timeout) fails the target; its input is saved in
# build/fuzz/crashes/. Targets: space opfile load args (those built).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
long=0
if [ "${1:-}" = --long ]; then
    long=${2:?--long needs seconds}
    shift 2
fi
targets=${*:-space opfile load args}
runs=${REDTUNE_FUZZ_RUNS:-400}

seeds() {  # the seed corpus of a target: folders in the repository
    case $1 in
        space) echo tests/lua lua/spaces ;;
        opfile) echo tests/ops lua/ops tests/fuzz/corpus/opfile ;;
        load) echo tests/fuzz/corpus/load ;;
        args) echo tests/fuzz/corpus/args ;;
    esac
}

mkdir -p build/fuzz/crashes
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
i=0
status=0
for t in $targets; do
    bin=build/fuzz/fuzz_$t
    i=$((i + 1))
    if [ ! -x "$bin" ]; then
        echo "not ok $i # SKIP fuzz_$t: $bin not built (ninja fuzz)"
        continue
    fi
    dirs=
    for d in $(seeds "$t"); do
        [ -d "$d" ] && dirs="$dirs $d"
    done
    if [ "$long" -gt 0 ]; then
        work=build/fuzz/corpus/$t
        mkdir -p "$work"
        limit="-max_total_time=$long"
    else
        work=$scratch/$t
        mkdir -p "$work"
        limit="-runs=$runs -seed=1"
    fi
    log=$scratch/$t.log
    t0=$(date +%s)
    # shellcheck disable=SC2086
    "$bin" $limit -timeout=20 -rss_limit_mb=3000 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix=build/fuzz/crashes/"$t"- "$work" $dirs > "$log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - t0 ))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1)
    if [ $rc -eq 0 ]; then
        echo "ok $i - fuzz_$t: ${execs:-?} inputs, $cov, ${secs}s"
    else
        echo "not ok $i - fuzz_$t: exit $rc after ${secs}s; input in build/fuzz/crashes/$t-*"
        grep -E 'ERROR|SUMMARY|Assertion|runtime error|deadly signal|timeout' "$log" | head -n 8 | sed 's/^/# /'
        status=1
    fi
done
exit $status
