#!/usr/bin/env bash
#
# dev_axis_il.sh - on the lent GPU (the device tool, from the repository root): axis_cols's
# interleaved rows (IL = 1) and the finer split chunks (issue 16's columns). The axis GPU tests
# that cover axis_cols, a tune of the column shapes (f32, bf16; the default space, a seeded
# random sample then a local search) into build/il.db, redtune_bench --axis on those shapes
# against the shipped database in the same run, and bench/torch_axis.py (eager, Inductor,
# redtune with build/il.db) on them.
#
#   OUT=dir RANDOM_BUDGET=80 LOCAL_BUDGET=40 bash tools/exp/dev_axis_il.sh
#
# Needs build/redtune, build/tests/all, build/devlib, build/bench/redtune_bench and the
# Python package as build/pyc (build/python without its database) carried.

set -u
out=${OUT:-/tmp/axis_il}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/devlib REDTUNE_BIN=$PWD/build/redtune
if [ -d build/pyc ]; then rm -rf build/python && mv build/pyc build/python; fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
date -u +%Y-%m-%dT%H:%M:%SZ

tests() {   # filter, limit in s, log name
    local t0=$(date +%s)
    REDTUNE_TEST_FILTER="$1" CMOCKA_MESSAGE_OUTPUT=TAP timeout "$2" build/tests/all gpu > "$out/t_$3.log" 2>&1
    echo "C GPU tests '$1': exit $? ($(( $(date +%s) - t0 )) s): $(grep -c '^ok' "$out/t_$3.log") ok, $(grep '^not ok' "$out/t_$3.log" | grep -vc SKIP) not ok"
    grep -A10 '^not ok' "$out/t_$3.log" | grep -v SKIP | head -20
}
tests 'axis_sum_*' 100 sum
tests 'axis_order_kept' 40 order
tests 'axis_argmax_RT_F32' 30 argmax
tests 'axis_min_RT_BF16' 30 min_bf16
tests 'seg_re*' 40 seg_re
tests 'api_gpu_seg*' 60 api_seg

SH=${SHAPES:-'1,1048576,16;1,65536,128;1,4096,4096;1,32768,1024;64,2048,512'}
rm -f build/il.db
for ty in ${TYPES:-f32 bf16}; do
    for st in "random --budget ${RANDOM_BUDGET:-80}" "local --budget ${LOCAL_BUDGET:-40}"; do
        t0=$(date +%s)
        # shellcheck disable=SC2086
        timeout 150 build/redtune --axis --op sum --type "$ty" --shapes "$SH" --db build/il.db \
            --strategy $st --strategy-seed 1 > "$out/tune_${ty}_${st%% *}.log" 2>&1
        echo "tune $ty ${st%% *}: exit $? ($(( $(date +%s) - t0 )) s)"
    done
done
build/redtune best --db build/il.db 2>&1 | sed 's/  */ /g' | cut -c1-170 | tee "$out/best.txt"
# The best IL = 0 and IL = 1 config each case measured.
build/redtune measurements --db build/il.db --format csv > "$out/il_meas.csv" 2>/dev/null
python3 - "$out/il_meas.csv" <<'EOF' | tee "$out/il_split.txt"
import csv, sys
best = {}
for r in csv.DictReader(open(sys.argv[1])):
    if r.get("status") != "ok":
        continue
    il = "IL=1" in r["params"]
    k = (r["type"], r["layout"], il)
    t = float(r["median_us"])
    if k not in best or t < best[k][0]:
        best[k] = (t, r["params"])
for (ty, lay, il), (t, p) in sorted(best.items()):
    print("%-5s %-22s IL=%d %9.2f us  %s" % (ty, lay, il, t, p))
EOF
build/redtune export --db build/il.db --match H100 -o "$out/il_ship.db" --force > /dev/null 2>&1

build/redtune load --force -o build/ship.db db/tuned/*.sql > /dev/null 2>&1
for db in ship il; do
    t0=$(date +%s)
    timeout 100 build/bench/redtune_bench --db build/$db.db --axis --shapes "$SH" --ops sum \
        --types f32,bf16 --csv "$out/axis_$db.csv" > "$out/axis_$db.log" 2> "$out/axis_$db.err"
    echo "bench --axis ($db): exit $? ($(( $(date +%s) - t0 )) s)"
    sed -n '/^reductions along an axis/,$p' "$out/axis_$db.log" | head -30
done
t0=$(date +%s)
PYTHONPATH=$PWD/build/python timeout ${TORCH_LIMIT:-200} python3 -P bench/torch_axis.py --db build/il.db \
    --only "columns,dim 1" --read-gbps "${READ_GBPS:-3205.4}" --csv "$out/torch_axis.csv" \
    > "$out/torch_axis.log" 2> "$out/torch_axis.err"
echo "torch_axis.py: exit $? ($(( $(date +%s) - t0 )) s)"
tail -n 20 "$out/torch_axis.log"
tail -n 3 "$out/torch_axis.err"
