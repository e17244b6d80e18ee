#!/bin/bash
# dev_session15.sh STEP - device runs of the fifteenth session (issue 16), one step a call on
# a warm H100; logs under $OUT/logs (packed into $OUT/logs.tgz), a summary ($OUT/sum.txt)
# printed last. Carried: build/c15.tar.xz (the stripped binaries below, unpacked into build/
# on the device; `bash tools/exp/dev_session15.sh pack` makes it here) and build/devlib.
#   fold   ax_fold's loads in batches (AX_FOLD_BATCH in templates/axis_common.cuh: 8 loads
#          in flight a lane for accumulators of up to 8 bytes, 4 up to 16, 2 above) against
#          the unrolled loop of four before it: the C axis GPU tests (build/tests/all, the
#          new template), then the split configs of tools/exp/axis_fence_space.lua timed by
#          build/redtune_old (the commit before) and build/redtune, A B A B, sum f32 and
#          bf16 over five split shapes, then redtune_bench --axis, the bench built before
#          (build/bench_before/redtune_bench) and after, db/tuned, A B A B.
#   split  (after fold: its change not kept) the split code compiled out of unsplit kernels
#          (`RT_CHUNK == 0 ||` before each family's gridDim.y == 1 test): the unsplit configs
#          of tools/exp/axis_unsplit_space.lua timed by build/redtune (the commit's templates)
#          and build/redtune_nofold, A B A B, sum f32 and bf16 over five unsplit shapes, then
#          redtune_bench --axis built from each (build/bench, build/bench_nofold), A B A B;
#          then the Python side with the commit's code (the package of build/python, carried
#          without its redtune.db, and build/pyt): bench/torch_axis.py and the Python axis
#          GPU tests (tools/exp/dev_cols_check.sh torch pytest).
#   kin    an operator with no winner of its own takes a sibling's (runtime/api_choose.c,
#          optype_siblings): the C GPU tests of the flat and axis lookups ('api_gpu*',
#          'axis_gpu*'), then redtune_bench --axis, min and max bf16 (min has no axis winner:
#          max's now; max the control), the bench of the commit before (build/bench_before)
#          and after, A B A B; then bench/torch_axis.py for every operator it has (sum, min,
#          max, argmax) with the package of build/python (carried without its redtune.db).
#   retune the axis cases where redtune was slower than PyTorch in kin's table, exhaustively over
#          the default space (the tenth session tuned these operators by a random sample and a
#          short local search): argmax f32 and bf16 on four row shapes and [16 x 2^22]
#          columns; max bf16 (min bf16 runs its winners), max f32 and min f32 on [4096 x 4096]
#          and [16 x 2^22] rows. Into build/retune.db, one process per operator, type and
#          shape group; the H100 winners to $OUT/retune_ship.db, every measurement to
#          $OUT/retune_meas.csv.gz.
#   final  after retune's winners were merged into db/tuned/h100.sql (each into the device row
#          the lookup takes for its operator): redtune_bench --axis, argmax, min and max, f32
#          and bf16, on the four row shapes retuned, with build/old_axis.db (the axis winners
#          of argmax, min and max of the commit before, alone, no CUBINs) and with db/tuned,
#          A B A B; then bench/torch_axis.py for min, max and argmax on the rows shapes.
# The five calls ran this script as committed in fa0c457 (a loop of its own per step); the
# shared loops became the functions below after the runs, unchanged in what they run.
step=${1:?step: pack, fold, split, kin, retune or final}
if [ "$step" = pack ]; then
    set -e
    rm -rf /tmp/c15 && mkdir -p /tmp/c15/bench /tmp/c15/bench_before /tmp/c15/tests
    for f in ${PACK:-redtune redtune_old tests/all bench/redtune_bench bench_before/redtune_bench}; do
        mkdir -p "/tmp/c15/$(dirname "$f")"
        cp "build/$f" "/tmp/c15/$f"
    done
    find /tmp/c15 -type f -exec strip {} \;
    tar -C /tmp/c15 -cJf build/c15.tar.xz .
    ls -la build/c15.tar.xz
    exit 0
fi
export LD_LIBRARY_PATH=$PWD/build/devlib
[ -f build/c15.tar.xz ] && tar -C build -xJf build/c15.tar.xz
L=$OUT/logs
mkdir -p "$L"
S=$OUT/sum.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader > "$S"
date -u +%Y-%m-%dT%H:%M:%SZ >> "$S"
# tests FILTER: the C GPU tests whose names match FILTER, a line in the summary.
tests() {
    local log=$L/tests_${1//\*/}.log t0
    t0=$(date +%s)
    REDTUNE_TEST_FILTER="$1" CMOCKA_MESSAGE_OUTPUT=TAP timeout 220 build/tests/all gpu > "$log" 2>&1
    echo "C GPU tests '$1': exit $? ($(( $(date +%s) - t0 )) s): $(grep -c '^ok' "$log") ok, $(grep '^not ok' "$log" | grep -vc SKIP) not ok" >> "$S"
    grep -A8 '^not ok' "$log" | grep -v SKIP | head -12 >> "$S"
}
# tune_ab NAME OLD NEW SHAPES SPACE: sum f32 and bf16 over SHAPES and SPACE by the tuner OLD
# and the tuner NEW, A B A B, each run into its own database; the measurements tagged
# old|new,round into $OUT/NAME_meas.csv.gz, the best per case and the pairs' ratios printed.
tune_ab() {
    local name=$1 old=$2 new=$3 shapes=$4 space=$5 M=$OUT/$1_meas.csv r v b ty db
    for r in 1 2; do
        for v in old new; do
            b=$new
            [ $v = old ] && b=$old
            for ty in f32 bf16; do
                db=/tmp/${name}_${v}_${r}_$ty.db
                rm -f "$db"
                timeout 200 "$b" --device 0 --axis --op sum --type $ty --db "$db" --shapes "$shapes" \
                    --space "$space" >> "$L/${name}_tune.log" 2>&1 || echo "tune $v $r $ty: exit $?" >> "$S"
                "$b" measurements --db "$db" --format csv | sed "s/\r\$//; s/\$/,$v,$r/" >> "$M"
            done
        done
    done
    python3 tools/exp/meas_best.py "$M" --tags 2 --pairs old,new >> "$S" 2>&1
    gzip -9 "$M"
}
# bench_ab A BENCH_A DB_A B BENCH_B DB_B ARGS...: redtune_bench --axis ARGS, A B A B, the
# table of tools/exp/bench_ab.py printed.
bench_ab() {
    local a=$1 ba=$2 da=$3 b=$4 bb=$5 db=$6 r v bin d
    shift 6
    for r in 1 2; do
        for v in "$a" "$b"; do
            bin=$bb d=$db
            [ "$v" = "$a" ] && bin=$ba d=$da
            timeout 100 "$bin" --db "$d" --axis "$@" --csv "$L/axis_${v}_$r.csv" \
                > "$L/axis_${v}_$r.log" 2>&1
            echo "bench $v run $r: exit $?" >> "$S"
        done
    done
    python3 tools/exp/bench_ab.py "$L" "$a" "$b" >> "$S" 2>&1
}
# torch_axis ARGS...: bench/torch_axis.py with the package of build/python and db/tuned.
torch_axis() {
    local t0
    cp build/redtune.db build/python/redtune/redtune.db
    t0=$(date +%s)
    PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/build/python timeout 280 python3 -P bench/torch_axis.py \
        --db build/redtune.db --csv "$OUT/torch_axis.csv" "$@" > "$L/torch_axis.log" 2> "$L/torch_axis.err"
    echo "torch_axis.py: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
}
T=build/redtune.db
build/redtune load --force -o "$T" db/tuned/*.sql > /dev/null
case $step in
fold)
    tests '*axis*'
    tune_ab fold build/redtune_old build/redtune \
        "16,4194304,1;1,32768,1024;1,65536,128;1,1048576,16;1,4096,4096" tools/exp/axis_fence_space.lua
    bench_ab before build/bench_before/redtune_bench "$T" after build/bench/redtune_bench "$T" \
        --ops sum --types f32,bf16 ;;
split)
    tune_ab split build/redtune build/redtune_nofold \
        "4096,4096,1;1048576,16,1;32768,1024,1;1,4096,4096;64,2048,512" tools/exp/axis_unsplit_space.lua
    bench_ab before build/bench/redtune_bench "$T" after build/bench_nofold/redtune_bench "$T" \
        --ops sum --types f32,bf16
    mkdir -p "$L/check"
    OUT=$L/check bash tools/exp/dev_cols_check.sh torch pytest > "$L/check/stdout.txt" 2>&1
    cat "$L/check/stdout.txt" >> "$S" ;;
kin)
    tests 'api_gpu*'
    tests 'axis_gpu*'
    bench_ab before build/bench_before/redtune_bench "$T" after build/bench/redtune_bench "$T" \
        --ops min,max --types bf16
    torch_axis --ops sum,min,max,argmax
    tail -n 60 "$L/torch_axis.log" >> "$S" ;;
retune)
    rm -f build/retune.db
    rows="1048576,16,1;65536,128,1;4096,4096,1;16,4194304,1"
    # limit (s), op, type, shapes: 540 s at most in all, inside a call's 600
    for c in "150 argmax f32 $rows;1,16,4194304" "150 argmax bf16 $rows;1,16,4194304" \
             "80 max bf16 4096,4096,1;16,4194304,1" "80 max f32 4096,4096,1;16,4194304,1" \
             "80 min f32 4096,4096,1;16,4194304,1"; do
        set -- $c
        lim=$1
        shift
        t0=$(date +%s)
        timeout "$lim" build/redtune --device 0 --axis --op "$1" --type "$2" \
            --db build/retune.db --shapes "$3" > "$L/tune_$1_$2.log" 2>&1
        echo "redtune --axis --op $1 --type $2 --shapes '$3': exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
        grep -E 'configs measured' "$L/tune_$1_$2.log" | tail -n 1 >> "$S"
    done
    build/redtune best --db build/retune.db 2>&1 | grep -E 'axis_(rows|cols)' | sed 's/  */ /g' >> "$S"
    build/redtune export --db build/retune.db --match H100 -o "$OUT/retune_ship.db" --force >> "$S" 2>&1
    build/redtune measurements --db build/retune.db --format csv | gzip -9 > "$OUT/retune_meas.csv.gz" ;;
final)
    bench_ab old build/bench/redtune_bench build/old_axis.db new build/bench/redtune_bench "$T" \
        --ops argmax,min,max --types f32,bf16 --shapes "1048576,16,1;65536,128,1;4096,4096,1;16,4194304,1"
    torch_axis --ops min,max,argmax --only rows
    sed -n '/^min along/,$p' "$L/torch_axis.log" >> "$S" ;;
*)
    echo "dev_session15.sh: no step '$step'" >&2; exit 2 ;;
esac
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$L"
cat "$S"
