#!/usr/bin/env bash
# gpu_verify.sh STEP - the GPU checks of one session, in steps that each fit one device call
# (10 minutes), from the repository root with the build carried (tools/device_prep.sh,
# `ninja seg_harness bench`, the bench of the commit before in build/bench_before/). Logs go
# to $OUT (or out/); a short table last.
#   tests     the GPU tests (tests/run.sh build gpu), then tools/seg_harness --quick
#   sanA      tools/sanitize.sh memcheck racecheck
#   sanB      tools/sanitize.sh synccheck initcheck
#   bench     redtune_bench before/after (same cases, interleaved A B A B), and the shipped
#             min/max f32 winners as today's generator makes them (bench/glue_cost_space.lua)
set -u
step=${1:?step: tests, sanA, sanB or bench}
out=${OUT:-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/devlib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
date -u +%Y-%m-%dT%H:%M:%SZ
case $step in
tests)
    t0=$(date +%s)
    tests/run.sh build gpu > "$out/gpu_tests.log" 2>&1
    echo "gpu tests: $(tail -n 1 "$out/gpu_tests.log") ($(( $(date +%s) - t0 )) s)"
    grep -E '^not ok' "$out/gpu_tests.log" | grep -v SKIP | head -20
    grep -B2 -A8 -E '^\[  (FAILED|ERROR) \]|Failure|error:' "$out/gpu_tests.log" | head -60
    t0=$(date +%s)
    timeout 240 build/seg_harness --quick > "$out/harness.log" 2>&1
    echo "seg_harness --quick: exit $? $(tail -n 1 "$out/harness.log") ($(( $(date +%s) - t0 )) s)"
    grep -E '^(FAIL|WRONG)' "$out/harness.log" | head -10
    ;;
sanA) tools/sanitize.sh "memcheck racecheck" ;;
sanB) tools/sanitize.sh "synccheck initcheck" ;;
bench)
    args="--db build/redtune.db --ops min,sum,max --types f32,i32 --regimes cold,hot --sizes 2^10,2^16,2^20,2^24,2^28,2^30"
    for r in 1 2; do
        for v in before after; do
            bin=build/bench/redtune_bench
            [ $v = before ] && bin=build/bench_before/redtune_bench
            t0=$(date +%s)
            # shellcheck disable=SC2086
            timeout 115 $bin $args --csv "$out/bench_${v}_$r.csv" > "$out/bench_${v}_$r.log" 2>&1
            echo "bench $v $r: exit $? ($(( $(date +%s) - t0 )) s)"
        done
    done
    t0=$(date +%s)
    for op in min max; do
        timeout 80 build/redtune --device 0 --op $op --type f32 --sizes 2^20,2^24,2^28 \
            --space bench/glue_cost_space.lua --db "$out/glue.db" > "$out/glue_$op.log" 2>&1
        echo "glue cost $op f32: exit $? ($(( $(date +%s) - t0 )) s)"
    done
    python3 - "$out/glue.db" > "$out/glue.txt" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for r in db.execute("SELECT m.op, m.n, k.family, k.params, round(m.median_us, 2) FROM measurements m "
                    "JOIN kernels k ON k.hash = m.kernel_hash WHERE m.status = 'ok' "
                    "ORDER BY m.op, m.n, k.family, k.params"):
    print(*r, sep="\t")
PY
    cat "$out/glue.txt" 2>/dev/null | head -40
    ;;
esac
