#!/bin/bash
# dev_split_finish.sh STEP - the fourteenth session's device calls 8-16 (issue 16): why split
# rows ([16 x 2^22]) ran ~2 us slower than the flat reduction of the same 256 MiB, and the
# change that came of it (the split finish without a fence per thread). One step a call, on an
# H100 (run there, 2026-11-27; docs/results.md, fourteenth session). Carried: build/redtune
# (stripped), build/devlib, and what a step names. Measurements (CSV, the step's tags in the
# last columns) and logs under $OUT; the best per case printed last.
#   pad     [16 x 2^22] against rows of 2^22 + 1024, + 4096, + 131072 elements (run 8)
#   chunk   split rows in chunks of 16384 .. 1048576, f32 and bf16 (run 9)
#   rows    [16 x 2^22] f32 and bf16 over the default space, exhaustively; winners exported to
#           $OUT/rows_ship.db (run 10)
#   minb    the register cap MINB (apply bench/results/session14-2026-11-27/axis_rows_minb.patch
#           and build first; run 12)
#   unsplit 256 MiB as 1024 and 4096 unsplit rows, as 16 split rows, and flat (run 13)
#   waves   2-8 waves of splits (apply .../axis_waves_experiment.patch and build first; run 14)
#   fence   the split finish before and after the fence's removal: build/redtune_old (built
#           with templates/axis_common.cuh of the commit before) and build/redtune, A B A B,
#           after the C axis GPU tests (build/tests/all; run 15)
#   bench   redtune_bench --axis, the bench built before the change (build/bench_before) and
#           after, db/tuned, A B A B (run 16)
export LD_LIBRARY_PATH=$PWD/build/devlib
step=${1:?step: pad, chunk, rows, minb, unsplit, waves, fence or bench}
mkdir -p "$OUT"
M=$OUT/${step}_meas.csv
# tune TAG BIN TYPE SHAPES SPACE [ENV...]: one tuning run into its own database, its
# measurements appended to $M with TAG (comma-separated) as the last columns.
tune() {
    local tag=$1 bin=$2 ty=$3 shapes=$4 space=$5; shift 5
    local db=/tmp/dsf_${tag//,/_}_$ty.db
    rm -f "$db"
    env "$@" timeout 200 "$bin" --device 0 --axis --op sum --type "$ty" --db "$db" \
        --shapes "$shapes" --space "$space" >> "$OUT/${step}.log" 2>&1 || echo "$tag $ty: exit $?"
    "$bin" measurements --db "$db" --format csv | sed "s/\r\$//; s/\$/,$tag/" >> "$M"
}
# flat TAG [ENV...]: gridstride near its 2^26 f32 winner, the same 256 MiB.
flat() {
    local tag=$1; shift
    local db=/tmp/dsf_flat_${tag//,/_}.db
    rm -f "$db"
    env "$@" timeout 100 build/redtune --device 0 --op sum --type f32 --db "$db" --sizes 67108864 \
        --space tools/exp/gridstride_loads_space.lua >> "$OUT/${step}.log" 2>&1 || echo "flat $tag: exit $?"
    build/redtune measurements --db "$db" --format csv | sed "s/\r\$//; s/\$/,$tag/" >> "$M"
}
# best NTAGS: the best median per case (layout, type) and tag (tools/exp/meas_best.py).
best() {
    python3 tools/exp/meas_best.py "$M" --tags "$1"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
case $step in
pad)
    for r in 1 2; do
        tune "p,$r" build/redtune f32 "16,4194304,1;16,4195328,1;16,4198400,1;16,4325376,1" \
            tools/exp/axis_rows_fronts_space.lua
    done
    best 2 ;;
chunk)
    for r in 1 2; do
        for ty in f32 bf16; do
            tune "c,$r" build/redtune $ty 16,4194304,1 tools/exp/axis_rows_chunk_space.lua
        done
    done
    best 2 ;;
rows)
    rm -f build/rows.db
    for ty in f32 bf16; do
        timeout 280 build/redtune --device 0 --axis --op sum --type $ty --db build/rows.db \
            --shapes 16,4194304,1 > "$OUT/tune_rows_$ty.log" 2>&1
        echo "$ty: exit $?"
    done
    build/redtune export --db build/rows.db --match H100 -o "$OUT/rows_ship.db" --force
    build/redtune measurements --db build/rows.db --format csv | gzip -9 > "$OUT/rows_meas.csv.gz" ;;
minb)
    for ty in f32 bf16; do
        tune "m" build/redtune $ty "16,4194304,1;4096,4096,1;1,67108864,1" \
            tools/exp/axis_rows_minb_space.lua
    done
    python3 tools/exp/meas_best.py "$M" --tags 1 --by MINB
    ;;
unsplit)
    for r in 1 2; do
        tune "u,$r" build/redtune f32 "1024,65536,1;4096,16384,1" tools/exp/axis_rows_unsplit_space.lua
        tune "s,$r" build/redtune f32 16,4194304,1 tools/exp/axis_rows_chunk_space.lua
        flat "f,$r"
    done
    best 2 ;;
waves)
    for r in 1 2; do
        for w in 1 2 4 8; do
            tune "$w,$r" build/redtune f32 16,4194304,1 tools/exp/axis_rows_waves_space.lua \
                REDTUNE_EXP_AXIS_WAVES=$w
        done
    done
    best 2 ;;
fence)
    t0=$(date +%s)
    REDTUNE_TEST_FILTER='*axis*' CMOCKA_MESSAGE_OUTPUT=TAP timeout 220 build/tests/all gpu \
        > "$OUT/axis_tests.log" 2>&1
    echo "C GPU tests '*axis*': exit $? ($(( $(date +%s) - t0 )) s): $(grep -c '^ok' "$OUT/axis_tests.log") ok, $(grep '^not ok' "$OUT/axis_tests.log" | grep -vc SKIP) not ok"
    for r in 1 2; do
        for v in old new; do
            b=build/redtune
            [ $v = old ] && b=build/redtune_old
            for ty in f32 bf16; do
                tune "$v,$r" $b $ty "16,4194304,1;1,32768,1024;1,65536,128;1,1048576,16" \
                    tools/exp/axis_fence_space.lua
            done
        done
    done
    python3 tools/exp/meas_best.py "$M" --tags 2 --pairs old,new ;;
bench)
    build/redtune load --force -o build/redtune.db db/tuned/*.sql > /dev/null
    for r in 1 2; do
        for v in before after; do
            b=build/bench/redtune_bench
            [ $v = before ] && b=build/bench_before/redtune_bench
            timeout 100 $b --db build/redtune.db --axis --ops sum --types f32,bf16 \
                --csv "$OUT/axis_${v}_$r.csv" > "$OUT/axis_${v}_$r.log" 2>&1
            echo "bench $v run $r: exit $?"
        done
    done ;;
*)
    echo "dev_split_finish.sh: no step '$step'" >&2; exit 2 ;;
esac
