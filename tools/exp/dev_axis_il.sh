#!/usr/bin/env bash
#
# dev_axis_il.sh - on the lent GPU (the device tool, from the repository root): issue 16's
# columns after axis_cols's interleaved rows (IL = 1), the finer split chunks and the grouped
# split fold. Steps:
#
#   tests        the axis GPU tests (plan level, order kept, libredtune's axis calls)
#   tune TYPES   tune the default shapes (or SHAPES) for sum on each type: the default space,
#                a seeded random sample of RANDOM_BUDGET then a local search of LOCAL_BUDGET,
#                into build/il.db (kept: carry build/il.db back to go on); $OUT/il_ship.db
#                is the export of the winners; the best IL = 0 and IL = 1 config of each case
#   bench        redtune_bench --axis with build/il.db against the shipped database, in one
#                run, and bench/torch_axis.py (eager, Inductor, redtune) with build/il.db
#   verify       the shipped database in the package, every axis GPU test, the Python axis
#                tests (pytest carried as build/pyt), the shipped CUBINs of axis winners
#
#   OUT=dir bash tools/exp/dev_axis_il.sh tests tune f32 bench
#   QUICK_TESTS=1: the order and sum tests only; bench without tune: build/il_ship.db carried
#
# Needs build/redtune, build/tests/all, build/devlib, build/bench/redtune_bench and, for
# bench, the Python package as build/pyc (build/python without its database) carried. Logs go
# into $OUT/logs.tgz, the summary to stdout and $OUT/summary.txt.

set -u
out=${OUT:-/tmp/axis_il}
logs=$out/logs
mkdir -p "$logs"
export LD_LIBRARY_PATH=$PWD/build/devlib REDTUNE_BIN=$PWD/build/redtune
if [ -d build/pyc ]; then rm -rf build/python && mv build/pyc build/python; fi
SH=${SHAPES:-'1048576,16,1;65536,128,1;4096,4096,1;16,4194304,1;32768,1024,1;1,1048576,16;1,65536,128;1,4096,4096;1,16,4194304;1,32768,1024;64,2048,512'}

exec > >(tee -a "$out/summary.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
date -u +%Y-%m-%dT%H:%M:%SZ

tests() {   # filter, limit in s, log name
    local t0=$(date +%s)
    REDTUNE_TEST_FILTER="$1" CMOCKA_MESSAGE_OUTPUT=TAP timeout "$2" build/tests/all gpu > "$logs/t_$3.log" 2>&1
    echo "C GPU tests '$1': exit $? ($(( $(date +%s) - t0 )) s): $(grep -c '^ok' "$logs/t_$3.log") ok, $(grep '^not ok' "$logs/t_$3.log" | grep -vc SKIP) not ok"
    grep -A10 '^not ok' "$logs/t_$3.log" | grep -v SKIP | head -20
}

while [ $# -gt 0 ]; do
    step=$1
    shift
    case $step in
    tests)
        tests 'axis_order_kept' 60 order
        tests 'axis_RT_SUM_*' 100 sum
        if [ -z "${QUICK_TESTS:-}" ]; then
            tests 'axis_RT_ARGMAX_*' 80 argmax
            tests 'axis_RT_MIN_RT_BF16' 30 min_bf16
            tests 'axis_RT_VAR_MEAN_RT_F32' 30 var_mean
            tests 'axis_gpu_*' 90 api_axis
        fi
        ;;
    tune)
        types=$1
        shift
        for ty in ${types//,/ }; do
            for st in "random --budget ${RANDOM_BUDGET:-80}" "local --budget ${LOCAL_BUDGET:-40}"; do
                t0=$(date +%s)
                # shellcheck disable=SC2086
                timeout "${TUNE_LIMIT:-280}" build/redtune --axis --op sum --type "$ty" --shapes "$SH" \
                    --db build/il.db --strategy $st --strategy-seed 1 > "$logs/tune_${ty}_${st%% *}.log" 2>&1
                echo "tune $ty ${st%% *}: exit $? ($(( $(date +%s) - t0 )) s)"
            done
        done
        build/redtune best --db build/il.db 2>&1 | sed 's/  */ /g' | cut -c1-170 > "$logs/best.txt"
        build/redtune measurements --db build/il.db --format csv > "$logs/il_meas.csv" 2>/dev/null
        python3 - "$logs/il_meas.csv" <<'EOF'
import csv, sys
best = {}
for r in csv.DictReader(open(sys.argv[1])):
    if r.get("status") != "ok":
        continue
    k = (r["type"], r["layout"], "IL=1" in r["params"])
    t = float(r["median_us"])
    if k not in best or t < best[k][0]:
        best[k] = (t, r["family"] + " " + r["params"])
for (ty, lay, il), (t, p) in sorted(best.items()):
    print("%-5s %-22s IL=%d %9.2f us  %s" % (ty, lay, il, t, p))
EOF
        build/redtune export --db build/il.db --match H100 -o "$out/il_ship.db" --force > /dev/null 2>&1
        ;;
    bench)
        build/redtune load --force -o build/ship.db db/tuned/*.sql > /dev/null 2>&1
        [ -f build/il.db ] || cp build/il_ship.db build/il.db   # the winners carried back
        for db in ship il; do
            t0=$(date +%s)
            timeout 100 build/bench/redtune_bench --db build/$db.db --axis --shapes "$SH" --ops sum \
                --types f32,bf16 --csv "$logs/axis_$db.csv" > "$logs/axis_$db.log" 2> "$logs/axis_$db.err"
            echo "bench --axis ($db): exit $? ($(( $(date +%s) - t0 )) s)"
            sed -n '/^reductions along an axis/,/^(\*/p' "$logs/axis_$db.log" | head -26
        done
        t0=$(date +%s)
        PYTHONPATH=$PWD/build/python timeout "${TORCH_LIMIT:-200}" python3 -P bench/torch_axis.py \
            --db build/il.db --read-gbps "${READ_GBPS:-3205.4}" --csv "$logs/torch_axis.csv" \
            > "$logs/torch_axis.log" 2> "$logs/torch_axis.err"
        echo "torch_axis.py: exit $? ($(( $(date +%s) - t0 )) s)"
        sed -n '/^sum along the axis/,$p' "$logs/torch_axis.log"
        tail -n 3 "$logs/torch_axis.err"
        ;;
    verify)
        # The shipped database (db/tuned/*.sql) in the package; every axis GPU test, the
        # Python axis tests, and the shipped CUBIN of two winners.
        build/redtune load --force -o build/redtune.db db/tuned/*.sql > /dev/null 2>&1
        cp build/redtune.db build/python/redtune/redtune.db
        tests '*axis*' "${AXIS_LIMIT:-220}" axis_all
        t0=$(date +%s)
        PYTHONPATH=$PWD/build/python:$PWD/python/tests:$PWD/build/pyt PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 \
            timeout "${PYTEST_LIMIT:-150}" python3 -P -m pytest -q -p no:cacheprovider \
            -k 'axis or dim or var_mean' python/tests/test_gpu.py > "$logs/pytest_axis.log" 2>&1
        echo "python axis GPU tests: exit $? ($(( $(date +%s) - t0 )) s): $(tail -n 1 "$logs/pytest_axis.log")"
        grep -E '^(FAILED|ERROR)' "$logs/pytest_axis.log" | head -10
        head -c $((2 * 16777216)) /dev/zero > /tmp/z.bin
        for sh in 1048576,16,1 1,65536,128 1,1048576,16; do
            build/redtune reduce --op sum --type bf16 --in /tmp/z.bin --shape $sh --explain \
                --db build/redtune.db -o /tmp/z.out --force 2>&1 | grep -E 'axis_|CUBIN' | head -3
        done
        ;;
    *)
        echo "dev_axis_il.sh: unknown step '$step'" >&2
        exit 2
        ;;
    esac
done
tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$logs"
