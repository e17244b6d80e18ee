#!/usr/bin/env bash
# gpu_session.sh [quick|full] - what one lease of the H100 runs, from the repository root, with
# the build carried from the development machine (build/ plus build/devlib/libcmocka.so.0,
# copied by tools/device_prep.sh). Logs go to $OUT (or out/ when unset); a short table last.
#   quick: GPU tests, then a two-size tuning run with every measurement printed
#   full:  GPU tests, then `redtune --device 0 --op min` twice on one database
set -u
mode=${1:-full}
out=${OUT:-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/devlib:${LD_LIBRARY_PATH:-}
{
    date -u +%Y-%m-%dT%H:%M:%SZ
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total,temperature.gpu,power.draw --format=csv
    ls /usr/local/cuda/lib64/ | grep -E '^libnvrtc\.so' || true
} > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
t0=$(date +%s)
tests/run.sh build gpu > "$out/gpu_tests.log" 2>&1
echo "gpu tests: $(tail -n 1 "$out/gpu_tests.log") ($(( $(date +%s) - t0 )) s)"
grep -E '^not ok|error|Failure' "$out/gpu_tests.log" | grep -v SKIP | head -30
if [ "$mode" = quick ]; then
    t0=$(date +%s)
    build/redtune --device 0 --op min --sizes 2^20,2^28 --db "$out/quick.db" -v > "$out/quick.log" 2>&1
    echo "quick tune: exit $? ($(( $(date +%s) - t0 )) s)"
    tail -n 40 "$out/quick.log"
    exit 0
fi
for run in 1 2; do
    t0=$(date +%s)
    build/redtune --device 0 --op min --db "$out/redtune.db" > "$out/tune$run.log" 2>&1
    echo "tune run $run: exit $? ($(( $(date +%s) - t0 )) s)"
done
# More cases into the same database: other operators and types, and the hot regime.
for args in "--op sum --type f32" "--op max --type i32" "--op min --type f64" "--op min --hot"; do
    t0=$(date +%s)
    build/redtune --device 0 $args --db "$out/redtune.db" > "$out/tune.tmp" 2>&1
    echo "tune $args: exit $? ($(( $(date +%s) - t0 )) s), $(grep -c ': wrong: \|: fault: \|: timeout: ' "$out/tune.tmp") not ok"
    { echo "=== redtune $args"; cat "$out/tune.tmp"; } >> "$out/tune_more.log"
    rm -f "$out/tune.tmp"
done
echo "min f32 run 1: $(grep -c ': wrong: \|: fault: \|: timeout: ' "$out/tune1.log") not ok"
grep -E '^redtune:' "$out/tune2.log"
tail -n 16 "$out/tune1.log"
