#!/usr/bin/env bash
# gpu_verify.sh STEP - the GPU checks of one session, in steps that each fit one device call
# (10 minutes), from the repository root with the build carried (tools/device_prep.sh,
# `ninja seg_harness bench`, the bench of the commit before in build/bench_before/). Logs go
# to $OUT (or out/); a short table last.
#   tests     the GPU tests (tests/run.sh build gpu), then tools/seg_harness --quick
#   sanA      tools/sanitize.sh memcheck racecheck
#   sanB      tools/sanitize.sh synccheck initcheck
#   bench     redtune_bench before/after, flat (same cases, interleaved A B A B)
#   bench2    redtune_bench before/after, segmented offsets and keys (A B), then --api
#             (BENCH2_ROUNDS=N: A B N times, files seg_LAYOUT_V_R.csv; BENCH2_API=0: no --api)
#   python    the Python package's host cost against torch.sum (python/bench_host_cost.py)
#   types     issue 15's cases: redtune_bench --type-cases (CUB, the limit), then
#             bench/torch_types.py (PyTorch eager, torch.compile, libredtune) at the same
#             read bandwidth
#   devall    `redtune --device all` on the lent machine, and a GPU that is not there
#   axis      issue 16: `redtune --axis` for sum f32 and bf16 over the default shapes into
#             build/axis.db (random sample of 64, then local search of 32 from its best), its
#             winners exported to $OUT/axis_ship.db, then redtune_bench --axis (rt_reduce_axis,
#             CUB, the limit) with it
#   axisops  issue 16's other operators along an axis: argmax f32/bf16 and max f32 tuned over
#             the default shapes (random 48, then local 24), benched with the shipped database
#             alone and merged with them
#   cols     issue 16: the column shapes that split len, sum f32 and bf16, the default space
#             exhaustively (IL = 2 in it) into build/cols.db, its H100 winners to
#             $OUT/cols_ship.db, the measurements to $OUT/cols_meas.csv.gz
#   axischeck the axis GPU tests (C and Python), then bench/torch_axis.py (eager,
#             torch.compile, redtune) with build/axis.db (or a carried build/axis_ship.db)
#   everyn    issue 14: redtune_bench --every-n, min and sum f32 cold, every power of two
#             2^0 .. 2^31 and 16 random sizes (seed 1) against CUB and the floor; the summary
#   quick     one call for a session short of device time: the Python host cost, everyn,
#             the library's GPU tests (*_gpu_*), the tuner end to end (flat, offsets, axis:
#             a few random configs each), the Python GPU tests
#   final1    the C GPU tests in three filtered runs under their own limits (families incl.
#             oneblock, the library's, the segmented ones incl. seg_lb FAST)
#   final2    the axis GPU tests, seg_harness --quick, tuning min/sum f32 at small n (oneblock)
#             and offsets f32 min at 30M with seg_lb (FAST 0/1) and seg_per, then the benches: --every-n
#             with the shipped database and with the small-n tuning, offsets with the shipped
#             database and the new tuning, --axis (with its flat column)
#   final3    the axis GPU tests, then tools/strategy_quality.sh (its default strategies,
#             random:20% local:20% halving)
#   runs      issue 15's rt_lift_run (session 6): the C GPU tests of every variant with the
#             stress data for the operators that have one (gpu_run_*), the classic argmin/
#             argmax and the halves through the built-in default, then redtune_bench
#             --type-cases and bench/torch_types.py (step types) with the shipped database;
#             with RUNS_TUNE="op:type ..." those cases are first tuned at RUNS_SIZES
#             (tools/tune_shipped.sh: $out/flat_ship.db) and benched with the shipped
#             database merged with them
#   stream    issue 14: seg_stream (offsets streamed by a resident grid): seg_harness --only
#             seg_stream, its GPU tests (STREAM_TESTS), then f32 min over the four goal profiles
#             at 30M tuned with seg_stream alone ($out/stream.db) and benched (rt_reduce_segmented,
#             CUB, the limit) with the shipped database and with stream.db
#             ($out: 2 CSVs, stream.db, stream_logs.tar.gz; the device tool brings back at most
#             8 files, so run streamship with another OUT or in its own call)
#   segncu    Nsight Compute (--clock-control none: the clocks are left alone) on rt_seg as
#             redtune_bench runs it, f32 min at 30M, for each of STREAM_PROFILES with the
#             database NCU_DB (default: the shipped one): speed of light, occupancy, warp
#             state, instruction counts; the key lines into $out/segncu.txt
#   streamship seg_stream in the shipped space (lua/spaces/segmented_ship.lua) for the shipped
#             offsets cases (STREAM_CASES, default min, max, sum x f32, f64, i32) over
#             STREAM_PROFILES at 30M into $out/stream_ship.db (exported: best rows, kernels,
#             CUBINs), to merge into db/tuned (merge keeps the faster verified entry)
#   pergpu    issue 14's "does tuning per GPU pay?" on a GPU the shipped database was not
#             tuned on (the lent H200): tools/tune_shipped.sh for PERGPU_CASES into
#             $out/flat_ship.db, then redtune_bench, cold, on the same cases and sizes, per case
#             one run after the other: with the shipped database alone (the H100's entries, served
#             by the library's same-compute-capability fallback) and with this GPU's entries
#             alone; CSVs $out/pergpu_h100.csv and $out/pergpu_self.csv (CUB in both)
# The GPU machines have no pytest: where build/pyt holds a copy of Debian's (pytest, pluggy,
# iniconfig, py), it goes on PYTHONPATH. build/python (`ninja python`) may travel without its
# redtune.db (the carry limit): build/redtune.db is put there.
set -u
step=${1:?step: tests, stream, streamship, segncu, sanA, sanB, bench, bench2, python, types, devall, axis, axisops, cols, axischeck, everyn, quick, runs, pergpu, final1, final2 or final3}
out=${OUT:-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/devlib:${LD_LIBRARY_PATH:-}
[ -d build/pyt ] && export PYTHONPATH=$PWD/build/pyt${PYTHONPATH:+:$PYTHONPATH}
if [ -d build/python/redtune ] && [ ! -f build/python/redtune/redtune.db ] && [ -f build/redtune.db ]; then
    cp build/redtune.db build/python/redtune/redtune.db
fi
# filtered_tests PATTERN LIMIT LOG: the C GPU tests whose names match PATTERN (cmocka's * and ?)
# under a time limit, TAP into LOG; one line of counts, then the failures.
filtered_tests() {
    local t0=$(date +%s) rc
    REDTUNE_TEST_FILTER="$1" CMOCKA_MESSAGE_OUTPUT=TAP timeout "$2" build/tests/all gpu > "$3" 2>&1
    rc=$?
    echo "C GPU tests '$1': exit $rc ($(( $(date +%s) - t0 )) s): $(grep -c '^ok' "$3") ok, $(grep '^not ok' "$3" | grep -vc SKIP) not ok"
    grep -A12 -E '^not ok' "$3" | grep -v SKIP | head -30
}
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
    ;;
bench2)
    rounds=${BENCH2_ROUNDS:-1}
    for r in $(seq 1 "$rounds"); do
        for v in before after; do
            bin=build/bench/redtune_bench
            [ $v = before ] && bin=build/bench_before/redtune_bench
            sfx=$v
            [ "$rounds" -gt 1 ] && sfx=${v}_$r
            for l in offsets keys; do
                t0=$(date +%s)
                timeout 100 $bin --db build/redtune.db --segmented $l --ops min,sum --types f32 \
                    --csv "$out/seg_${l}_$sfx.csv" > "$out/seg_${l}_$sfx.log" 2>&1
                echo "bench $l $sfx: exit $? ($(( $(date +%s) - t0 )) s)"
            done
        done
    done
    if [ "${BENCH2_API:-1}" != 0 ]; then
        t0=$(date +%s)
        timeout 200 build/bench/redtune_bench --db build/redtune.db --api > "$out/api.log" 2>&1
        echo "bench --api: exit $? ($(( $(date +%s) - t0 )) s)"
        grep -E 'PASS|MISS' "$out/api.log" | head -20
    fi
    ;;
python)
    # -P: not python/ (the script's folder, the sources without _consts.py) but build/python.
    t0=$(date +%s)
    PYTHONPATH=$PWD/build/python:$PWD/python/tests${PYTHONPATH:+:$PYTHONPATH} \
        PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 timeout 240 python3 -P -m pytest -q -p no:cacheprovider \
        python/tests/test_gpu.py python/tests/test_gpu_axis.py > "$out/pytest_gpu.log" 2>&1
    echo "python GPU tests: exit $? ($(( $(date +%s) - t0 )) s): $(tail -n 1 "$out/pytest_gpu.log")"
    grep -E '^(FAILED|ERROR)' "$out/pytest_gpu.log" | head -20
    PYTHONPATH=$PWD/build/python${PYTHONPATH:+:$PYTHONPATH} timeout 200 python3 -P \
        python/bench_host_cost.py > "$out/host_cost.log" 2>&1
    echo "python host cost: exit $?"
    tail -n 15 "$out/host_cost.log"
    ;;
types)
    # TYPES_DB: the database to bench (default build/redtune.db); the Python package gets it.
    db=${TYPES_DB:-build/redtune.db}
    t0=$(date +%s)
    timeout 200 build/bench/redtune_bench --db "$db" --type-cases \
        --csv "$out/types.csv" > "$out/types.log" 2> "$out/types.err"
    echo "bench --type-cases: exit $? ($(( $(date +%s) - t0 )) s)"
    gbps=$(sed -n 's/^redtune_bench: read bandwidth \([0-9.]*\) GB\/s.*/\1/p' "$out/types.log")
    sed -n '/^case /,$p' "$out/types.log" | head -30
    if [ -d build/python/redtune ]; then
        [ "$db" = build/python/redtune/redtune.db ] || cp "$db" build/python/redtune/redtune.db
        t0=$(date +%s)
        PYTHONPATH=$PWD/build/python${PYTHONPATH:+:$PYTHONPATH} timeout ${TORCH_TIMEOUT:-400} \
            python3 -P bench/torch_types.py --db "$db" ${gbps:+--read-gbps $gbps} \
            --csv "$out/torch_types.csv" > "$out/torch_types.log" 2> "$out/torch_types.err"
        echo "torch_types.py: exit $? ($(( $(date +%s) - t0 )) s)"
        tail -n 14 "$out/torch_types.log"
    fi
    ;;
axis)
    # Tuning the default shapes: a seeded random sample, then a local search from its best.
    rm -f build/axis.db
    for ty in ${AXIS_TYPES:-f32 bf16}; do
        for st in "random --budget ${AXIS_RANDOM:-64}" "local --budget ${AXIS_LOCAL:-32}"; do
            t0=$(date +%s)
            # shellcheck disable=SC2086
            timeout 250 build/redtune --axis --op sum --type $ty --db build/axis.db \
                --strategy $st --strategy-seed 1 > "$out/tune_axis_${ty}_${st%% *}.log" 2>&1
            echo "redtune --axis --op sum --type $ty --strategy $st: exit $? ($(( $(date +%s) - t0 )) s)"
        done
    done
    build/redtune best --db build/axis.db 2>&1 | sed 's/  */ /g' | cut -c1-160
    build/redtune export --db build/axis.db --match H100 -o "$out/axis_ship.db" --force
    t0=$(date +%s)
    timeout 150 build/bench/redtune_bench --db build/axis.db --axis --ops sum --types f32,bf16 \
        --csv "$out/axis.csv" > "$out/axis.log" 2> "$out/axis.err"
    echo "bench --axis: exit $? ($(( $(date +%s) - t0 )) s)"
    sed -n '/^reductions along an axis/,$p' "$out/axis.log" | head -40
    tail -n 3 "$out/axis.err"
    ;;
axisops)
    # Issue 16's "every op": the axis shapes of the operators the shipped database has no axis
    # winner for (AXIS_OPS, default argmax:f32 argmax:bf16 max:f32), each a seeded random
    # sample then a local search from its best, into build/axis_ops.db; its H100 winners to
    # $out/axis_ops_ship.db; then redtune_bench --axis for those operators with the shipped
    # database alone (built-in defaults) and merged with the new winners.
    rm -f build/axis_ops.db /tmp/ship.db /tmp/merged.db
    axis_ops=${AXIS_OPS:-argmax:f32 argmax:bf16 max:f32}
    build/redtune load db/tuned/h100.sql db/tuned/h200.sql -o /tmp/ship.db > /dev/null
    for c in $axis_ops; do
        for st in "random --budget ${AXIS_RANDOM:-48}" "local --budget ${AXIS_LOCAL:-24}"; do
            t0=$(date +%s)
            # shellcheck disable=SC2086
            timeout 200 build/redtune --axis --op "${c%%:*}" --type "${c#*:}" --db build/axis_ops.db \
                --strategy $st --strategy-seed 1 > "$out/tune_axis_${c%%:*}_${c#*:}_${st%% *}.log" 2>&1
            echo "redtune --axis --op ${c%%:*} --type ${c#*:} --strategy $st: exit $? ($(( $(date +%s) - t0 )) s)"
        done
    done
    build/redtune export --db build/axis_ops.db --match H100 -o "$out/axis_ops_ship.db" --force
    build/redtune merge /tmp/ship.db build/axis_ops.db -o /tmp/merged.db --force > /dev/null
    ops=$(for c in $axis_ops; do echo "${c%%:*}"; done | sort -u | paste -sd, -)
    types=$(for c in $axis_ops; do echo "${c#*:}"; done | sort -u | paste -sd, -)
    for db in /tmp/ship.db /tmp/merged.db; do
        t0=$(date +%s)
        timeout 150 build/bench/redtune_bench --db "$db" --axis --ops "$ops" --types "$types" \
            --csv "$out/axis_ops_$(basename "$db" .db).csv" > "$out/axis_ops_$(basename "$db" .db).log" 2>&1
        echo "bench --axis with $(basename "$db"): exit $? ($(( $(date +%s) - t0 )) s)"
        sed -n '/^reductions along an axis/,/^(\*/p' "$out/axis_ops_$(basename "$db" .db).log"
    done
    ;;
cols)
    # Issue 16 (thirteenth session): the column shapes whose len the plan splits (COLS_SHAPES),
    # sum f32 and bf16 (COLS_TYPES), every config of the default space (its IL = 2 walk among
    # them) into build/cols.db; its H100 winners to $out/cols_ship.db, every measurement to
    # $out/cols_meas.csv.gz. On an H100 f32 takes 215 s and bf16 more than its 270 s
    # (COLS_TIMEOUT): run COLS_TYPES=bf16 in a call of its own to finish every shape.
    rm -f build/cols.db
    for ty in ${COLS_TYPES:-f32 bf16}; do
        t0=$(date +%s)
        timeout "${COLS_TIMEOUT:-270}" build/redtune --axis --op sum --type "$ty" --db build/cols.db \
            --shapes "${COLS_SHAPES:-1,32768,1024;1,4096,4096;64,2048,512;1,65536,128;1,1048576,16}" \
            > "$out/tune_cols_$ty.log" 2>&1
        echo "redtune --axis --op sum --type $ty (columns): exit $? ($(( $(date +%s) - t0 )) s)"
        grep -E 'configs (from|measured)' "$out/tune_cols_$ty.log" | tail -n 4
    done
    build/redtune best --db build/cols.db 2>&1 | sed 's/  */ /g' | cut -c1-160
    # Winners alone (with every measurement the database is past what a device call brings
    # back); the measurements as compressed CSV.
    build/redtune export --db build/cols.db --match H100 -o "$out/cols_ship.db" --force
    build/redtune measurements --db build/cols.db --format csv | gzip -9 > "$out/cols_meas.csv.gz"
    ;;
axischeck)
    # After `axis`: build/axis.db (or build/axis_ship.db carried back) for the PyTorch side.
    db=build/axis.db
    [ -f "$db" ] || db=build/axis_ship.db
    filtered_tests '*axis*' 200 "$out/axis_tests.log"
    t0=$(date +%s)
    PYTHONPATH=$PWD/build/python:$PWD/python/tests${PYTHONPATH:+:$PYTHONPATH} \
        PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 timeout 150 python3 -P -m pytest -q -p no:cacheprovider \
        -k 'axis or dim or var_mean' python/tests/test_gpu.py python/tests/test_gpu_axis.py \
        > "$out/pytest_axis.log" 2>&1
    echo "python axis GPU tests: exit $? ($(( $(date +%s) - t0 )) s): $(tail -n 1 "$out/pytest_axis.log")"
    grep -E '^(FAILED|ERROR)' "$out/pytest_axis.log" | head -20
    gbps=${READ_GBPS:-}   # redtune_bench --axis's yardstick of the same machine kind, if given
    t0=$(date +%s)
    PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/build/python${PYTHONPATH:+:$PYTHONPATH} timeout ${TORCH_TIMEOUT:-240} \
        python3 -P bench/torch_axis.py --db $db ${gbps:+--read-gbps $gbps} \
        --csv "$out/torch_axis.csv" > "$out/torch_axis.log" 2> "$out/torch_axis.err"
    echo "torch_axis.py: exit $? ($(( $(date +%s) - t0 )) s)"
    tail -n 30 "$out/torch_axis.log"
    tail -n 3 "$out/torch_axis.err"
    ;;
everyn)
    # Most of the time is the host's: the data once per operator (8 GiB at 2^31), the CPU
    # reference of every size (f32 sum's in long double: about 2.6 x 2^31 elements in all).
    t0=$(date +%s)
    timeout "${EVERYN_TIMEOUT:-120}" build/bench/redtune_bench --db build/redtune.db --every-n \
        --ops min,sum --types f32 --regimes cold --seed 1 \
        --csv "$out/everyn.csv" > "$out/everyn.log" 2> "$out/everyn.err"
    echo "bench --every-n: exit $? ($(( $(date +%s) - t0 )) s)"
    grep -E '^redtune_bench: (read bandwidth|every n|floor)' "$out/everyn.log"
    sed -n '/^summary:/,$p' "$out/everyn.log"
    tail -n 3 "$out/everyn.err"
    ;;
quick)
    # One device call of a session short of device time (about 8 minutes): the Python host
    # cost, --every-n, the library's GPU tests (api_gpu, api_axis_gpu) and the tuner end to
    # end, each candidate kind through the worker (flat, offsets, axis), the Python GPU tests.
    t0=$(date +%s)
    PYTHONPATH=$PWD/build/python${PYTHONPATH:+:$PYTHONPATH} timeout 60 python3 -P \
        python/bench_host_cost.py > "$out/host_cost.log" 2>&1
    echo "python host cost: exit $? ($(( $(date +%s) - t0 )) s)"
    tail -n 12 "$out/host_cost.log"
    bash "$0" everyn
    filtered_tests '*_gpu_*' 130 "$out/lib_gpu_tests.log"
    t0=$(date +%s)
    rm -f /tmp/q.db
    { timeout 40 build/redtune --device 0 --op min --type f32 --sizes 2^20 --db /tmp/q.db \
          --strategy random --budget 12
      echo "flat: exit $?"
      timeout 30 build/redtune --device 0 --op sum --type f32 --segmented offsets --profiles one \
          --sizes 2^20 --db /tmp/q.db --strategy random --budget 8
      echo "offsets: exit $?"
      timeout 30 build/redtune --device 0 --axis --op sum --type f32 --shapes 4096,4096,1 \
          --db /tmp/q.db --strategy random --budget 8
      echo "axis: exit $?"; } > "$out/tune_smoke.log" 2>&1
    echo "tuner end to end ($(( $(date +%s) - t0 )) s): $(grep -E '^(flat|offsets|axis): exit' "$out/tune_smoke.log" | tr '\n' ' ')"
    build/redtune measurements --db /tmp/q.db --format csv 2>/dev/null \
        | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "status") c = i; next }
                   { s[$c == "ok" ? "ok" : "other"]++ }
                   END { print "measurements:", s["ok"] + 0, "ok,", s["other"] + 0, "other" }'
    t0=$(date +%s)
    PYTHONPATH=$PWD/build/python:$PWD/python/tests${PYTHONPATH:+:$PYTHONPATH} \
        PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 timeout ${PYTEST_TIMEOUT:-300} python3 -P -m pytest -q -p no:cacheprovider \
        python/tests/test_gpu.py python/tests/test_gpu_axis.py > "$out/pytest_gpu.log" 2>&1
    echo "python GPU tests: exit $? ($(( $(date +%s) - t0 )) s): $(tail -n 1 "$out/pytest_gpu.log")"
    grep -E '^(FAILED|ERROR)' "$out/pytest_gpu.log" | head -20
    ;;
final1)
    for f in 'gpu_*' 'api_gpu*' '*seg*'; do
        filtered_tests "$f" ${FINAL1_LIMIT:-250} "$out/tests_$(echo "$f" | tr -d '*').log"
    done
    ;;
final2)
    # The segmented tests final1's '*seg*' run leaves for its limit (the per-type ones come
    # first); the axis ones are final3's.
    for f in 'seg_all_nan_RT_M*_RT_F64' 'seg_o*' 'seg_ty*' 'seg_tu*' 'seg_re*'; do
        filtered_tests "$f" 200 "$out/tests_$(echo "$f" | tr -d '*').log"
    done
    t0=$(date +%s)
    timeout 100 build/seg_harness --quick > "$out/harness.log" 2>&1
    echo "seg_harness --quick: exit $? $(tail -n 1 "$out/harness.log") ($(( $(date +%s) - t0 )) s)"
    grep -E '^(FAIL|WRONG)' "$out/harness.log" | head -10
    small=2^10,2^11,2^12,2^13,2^14,2^15,2^16,2^17,2^18,5907,17597
    for op in min sum; do
        t0=$(date +%s)
        timeout 60 build/redtune --device 0 --op $op --type f32 --sizes $small --db "$out/small.db" \
            > "$out/tune_small_$op.log" 2>&1
        echo "tune $op f32 small n: exit $? ($(( $(date +%s) - t0 )) s), $(grep -c ': wrong: \|: fault: ' "$out/tune_small_$op.log") not ok"
    done
    build/redtune best --db "$out/small.db" 2>&1 | cut -c1-150 | grep -E "min|sum"
    t0=$(date +%s)
    timeout 150 build/redtune --device 0 --op min --type f32 --segmented offsets \
        --profiles one,rand10_50,len3,heavy --sizes 30M --family seg_lb,seg_per --seed 7 --db "$out/seg.db" \
        > "$out/tune_seg.log" 2>&1
    echo "tune offsets seg_lb,seg_per: exit $? ($(( $(date +%s) - t0 )) s), $(grep -c ': wrong: \|: fault: ' "$out/tune_seg.log") not ok"
    build/redtune best --db "$out/seg.db" 2>&1 | cut -c1-170 | grep offsets
    for which in shipped small; do
        db=build/redtune.db; extra=""
        [ $which = small ] && { db=$out/small.db; extra="--max-n 2^18"; }
        t0=$(date +%s)
        # shellcheck disable=SC2086
        timeout 100 build/bench/redtune_bench --db "$db" --every-n $extra --ops min,sum --types f32 \
            --regimes cold --seed 1 --csv "$out/everyn_$which.csv" > "$out/everyn_$which.log" 2>&1
        echo "every-n with the $which database: exit $? ($(( $(date +%s) - t0 )) s)"
        grep -A4 '^summary' "$out/everyn_$which.log"
    done
    for which in shipped seg; do
        db=build/redtune.db
        [ $which = seg ] && db=$out/seg.db
        t0=$(date +%s)
        timeout 90 build/bench/redtune_bench --db "$db" --segmented offsets \
            --profiles one,rand10_50,len3,heavy --sizes 30M --ops min --types f32 --regimes cold \
            --csv "$out/offsets_$which.csv" > "$out/offsets_$which.log" 2>&1
        echo "offsets bench with the $which database: exit $? ($(( $(date +%s) - t0 )) s)"
    done
    t0=$(date +%s)
    timeout 90 build/bench/redtune_bench --db build/redtune.db --axis --ops sum --types f32,bf16 \
        --regimes cold --csv "$out/axis_flat.csv" > "$out/axis_flat.log" 2>&1
    echo "axis bench (flat column): exit $? ($(( $(date +%s) - t0 )) s)"
    ;;
final3)
    # The shipped database (not carried: final2's benches of it need it too; run final3 after
    # final2, or load it first), then what final2 left for it, the axis tests and
    # strategy_quality.sh; the logs in one archive (the device tool brings back few files).
    [ -f build/redtune.db ] || build/redtune load --force -o build/redtune.db db/tuned/*.sql > /dev/null
    export REDTUNE_BIN=$PWD/build/redtune
    logs=$(mktemp -d)
    filtered_tests 'seg_re*' 60 "$logs/tests_seg_re.log"   # REDTUNE_BIN set, the database loaded
    t0=$(date +%s)
    timeout 100 build/bench/redtune_bench --db build/redtune.db --every-n --ops min,sum --types f32 \
        --regimes cold --seed 1 --csv "$out/everyn_shipped.csv" > "$logs/everyn_shipped.log" 2>&1
    echo "every-n with the shipped database: exit $? ($(( $(date +%s) - t0 )) s)"
    grep -A4 '^summary' "$logs/everyn_shipped.log"
    timeout 90 build/bench/redtune_bench --db build/redtune.db --axis --ops sum --types f32,bf16 \
        --regimes cold --csv "$out/axis_flat.csv" > "$logs/axis_flat.log" 2>&1
    echo "axis bench (flat column): exit $?"
    timeout 90 build/bench/redtune_bench --db build/redtune.db --segmented offsets \
        --profiles one,rand10_50,len3,heavy --sizes 30M --ops min --types f32 --regimes cold \
        --csv "$out/offsets_shipped.csv" > "$logs/offsets_shipped.log" 2>&1
    echo "offsets bench with the shipped database: exit $?"
    grep '^GOAL' "$logs/offsets_shipped.log"
    filtered_tests '*axis*' 150 "$logs/tests_axis.log"
    t0=$(date +%s)
    OUT=$logs/quality timeout ${QUALITY_LIMIT:-200} bash tools/strategy_quality.sh > "$logs/quality.log" 2>&1
    echo "strategy_quality.sh: exit $? ($(( $(date +%s) - t0 )) s)"
    tail -n 8 "$logs/quality.log"
    tar -czf "$out/final3_logs.tar.gz" -C "$logs" .
    ;;
runs)
    [ -f build/redtune.db ] || build/redtune load --force -o build/redtune.db db/tuned/*.sql > /dev/null
    if [ -z "${RUNS_TUNE:-}" ]; then
        filtered_tests 'gpu_run_*' ${RUNS_LIMIT:-200} "$out/tests_runs.log"
        filtered_tests 'gpu_RT_ARGM*' 150 "$out/tests_arg.log"
        filtered_tests 'gpu_types_builtin' 60 "$out/tests_types.log"
    fi
    db=build/redtune.db
    if [ -n "${RUNS_TUNE:-}" ]; then
        OUT=$out CASES=$RUNS_TUNE SIZES=${RUNS_SIZES:-2^20,2^24,2^26,2^28} BUDGET=${RUNS_BUDGET:-400} \
            bash tools/tune_shipped.sh
        build/redtune merge build/redtune.db "$out/flat_ship.db" -o /tmp/runs_merged.db --force > /dev/null
        db=/tmp/runs_merged.db
    fi
    TYPES_DB=$db bash "$0" types
    ;;
pergpu)
    cases=${PERGPU_CASES:-"min:f32 sum:f32 max:f64 sum:i32"}
    sizes=${PERGPU_SIZES:-2^10,2^12,2^14,2^16,2^18,2^20,2^22,2^24,2^26,2^28,2^30}
    t0=$(date +%s)
    OUT=$out CASES=$cases SIZES=$sizes BUDGET=${PERGPU_BUDGET:-300} bash tools/tune_shipped.sh
    echo "tune_shipped.sh: $(( $(date +%s) - t0 )) s"
    build/redtune load --force -o /tmp/shipped.db db/tuned/*.sql > /dev/null || exit 1
    for c in $cases; do
        for which in h100 self; do
            db=/tmp/shipped.db
            [ $which = self ] && db=$out/flat_ship.db
            t0=$(date +%s)
            timeout 200 build/bench/redtune_bench --db "$db" --ops "${c%%:*}" --types "${c##*:}" \
                --sizes "$sizes" --regimes cold --csv "$out/pergpu_${which}_${c%%:*}_${c##*:}.csv" \
                > "$out/pergpu_${which}_${c%%:*}_${c##*:}.log" 2>&1
            echo "bench $c with the $which entries: exit $? ($(( $(date +%s) - t0 )) s)"
        done
    done
    for which in h100 self; do
        head -n 1 "$out/pergpu_${which}_$(echo "${cases%% *}" | tr : _).csv" > "$out/pergpu_$which.csv"
        for f in "$out"/pergpu_${which}_*_*.csv; do tail -n +2 "$f"; done >> "$out/pergpu_$which.csv"
        rm -f "$out"/pergpu_${which}_*_*.csv
    done
    tar -czf "$out/pergpu_logs.tar.gz" -C "$out" $(cd "$out" && ls pergpu_*.log) && rm -f "$out"/pergpu_*.log
    ;;
devall)
    rm -f /tmp/all.db /tmp/none.db
    timeout 200 build/redtune --device all --op sum --type f32 --sizes 2^20,2^24 --db /tmp/all.db \
        > "$out/devall.log" 2>&1
    echo "--device all: exit $?"
    tail -n 5 "$out/devall.log"
    build/redtune best --db /tmp/all.db 2>&1 | head -8
    build/redtune --device 1 --op sum --db /tmp/none.db > "$out/devnone.log" 2>&1
    echo "--device 1: exit $? ($(head -c 200 "$out/devnone.log")); db: $(ls /tmp/none.db 2>&1)"
    ;;
stream)
    t0=$(date +%s)
    timeout 150 build/seg_harness --only seg_stream > "$out/harness_stream.log" 2>&1
    echo "seg_harness --only seg_stream: exit $? $(tail -n 1 "$out/harness_stream.log") ($(( $(date +%s) - t0 )) s)"
    grep -E '^(FAIL|WRONG)' "$out/harness_stream.log" | head -10
    for f in ${STREAM_TESTS:-seg_RT_MIN_RT_F32 seg_RT_SUM_RT_U64 seg_order_kept}; do
        filtered_tests "$f" 150 "$out/tests_$f.log"
    done
    t0=$(date +%s)
    timeout 200 build/redtune --device 0 --op min --type f32 --segmented offsets \
        --profiles ${STREAM_PROFILES:-one,rand10_50,len3,heavy} --sizes 30M --family seg_stream \
        --seed 7 --db "$out/stream.db" > "$out/tune_stream.log" 2>&1
    echo "tune offsets seg_stream: exit $? ($(( $(date +%s) - t0 )) s), $(grep -c ': wrong: \|: fault: ' "$out/tune_stream.log") not ok"
    build/redtune best --db "$out/stream.db" 2>&1 | cut -c1-170 | grep offsets
    build/redtune load --force -o /tmp/shipped.db db/tuned/*.sql > /dev/null || exit 1
    for which in shipped stream; do
        db=/tmp/shipped.db
        [ $which = stream ] && db=$out/stream.db
        t0=$(date +%s)
        timeout 120 build/bench/redtune_bench --db "$db" --segmented offsets \
            --profiles ${STREAM_PROFILES:-one,rand10_50,len3,heavy} --sizes 30M --ops min --types f32 \
            --regimes cold --csv "$out/offsets_$which.csv" > "$out/offsets_$which.log" 2>&1
        echo "offsets bench with the $which database: exit $? ($(( $(date +%s) - t0 )) s)"
    done
    # The device tool brings back at most 8 files from $OUT: the logs as one archive.
    tar -czf "$out/stream_logs.tar.gz" -C "$out" $(cd "$out" && ls *.log) && rm -f "$out"/*.log
    ;;
streamship)
    t0=$(date +%s)
    for c in ${STREAM_CASES:-min:f32 max:f32 sum:f32 min:f64 max:f64 sum:f64 min:i32 max:i32 sum:i32}; do
        timeout 120 build/redtune --device 0 --op "${c%%:*}" --type "${c##*:}" --segmented offsets \
            --profiles ${STREAM_PROFILES:-one,rand10_50,len3,heavy} --sizes 30M --family seg_stream \
            --space lua/spaces/segmented_ship.lua --seed 7 --db /tmp/stream_ship.db \
            > "$out/ship_${c%%:*}_${c##*:}.log" 2>&1
        echo "tune $c: exit $? ($(( $(date +%s) - t0 )) s), $(grep -c ': wrong: \|: fault: ' "$out/ship_${c%%:*}_${c##*:}.log") not ok"
    done
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -n 1)
    build/redtune export --db /tmp/stream_ship.db --match "$gpu" -o "$out/stream_ship.db" --force || exit 1
    build/redtune best --db /tmp/stream_ship.db 2>&1 | cut -c1-170 | grep offsets > "$out/stream_ship_best.txt"
    tar -czf "$out/ship_logs.tar.gz" -C "$out" $(cd "$out" && ls ship_*.log) && rm -f "$out"/ship_*.log
    ;;
segncu)
    db=${NCU_DB:-/tmp/shipped.db}
    [ "$db" != /tmp/shipped.db ] || build/redtune load --force -o /tmp/shipped.db db/tuned/*.sql > /dev/null || exit 1
    for prof in $(echo "${STREAM_PROFILES:-one,rand10_50,len3,heavy}" | tr , ' '); do
        echo "=== $prof ($db)"
        timeout 120 ncu --clock-control none -k rt_seg -s 3 -c 1 --section SpeedOfLight \
            --section Occupancy --section WarpStateStats --section LaunchStats \
            --section ComputeWorkloadAnalysis --section InstructionStats \
            build/bench/redtune_bench --db "$db" --segmented offsets --profiles "$prof" --sizes 30M \
            --ops min --types f32 --regimes cold 2>&1 |
            grep -E "redtune_bench: \[|Duration|DRAM Throughput|Compute \(SM\)|Registers Per|Grid Size|Theoretical Occ|Achieved Occ|Block Limit (Reg|Shared)|Warp Cycles Per Issued|Active Threads Per Warp|Executed Instructions  |Issue Slots Busy"
    done > "$out/segncu.txt" 2>&1
    cat "$out/segncu.txt"
    ;;
esac
