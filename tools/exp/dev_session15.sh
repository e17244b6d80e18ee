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
# shared loops became the functions below after the runs, unchanged in what they run (tests,
# bench_ab, torch_axis and the prelude are tools/exp/dev_lib.sh's now).
step=${1:?step: pack, fold, split, kin, retune or final}
. "$(dirname "$0")/dev_lib.sh"
if [ "$step" = pack ]; then
    dev_pack c15 "redtune redtune_old tests/all bench/redtune_bench bench_before/redtune_bench"
    exit 0
fi
dev_begin c15
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
case $step in
fold)
    tests '*axis*' 220
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
    tests 'api_gpu*' 220
    tests 'axis_gpu*' 220
    bench_ab before build/bench_before/redtune_bench "$T" after build/bench/redtune_bench "$T" \
        --ops min,max --types bf16
    TORCH_LIMIT=280 torch_axis --ops sum,min,max,argmax
    tail -n 60 "$L/torch_axis.log" >> "$S" ;;
retune)
    rm -f build/retune.db
    rows="1048576,16,1;65536,128,1;4096,4096,1;16,4194304,1"
    # limit (s), op, type, shapes: 540 s at most in all, inside a call's 600
    for c in "150 argmax f32 $rows;1,16,4194304" "150 argmax bf16 $rows;1,16,4194304" \
             "80 max bf16 4096,4096,1;16,4194304,1" "80 max f32 4096,4096,1;16,4194304,1" \
             "80 min f32 4096,4096,1;16,4194304,1"; do
        set -- $c
        retune "$@"
    done
    retune_ship ;;
final)
    bench_ab old build/bench/redtune_bench build/old_axis.db new build/bench/redtune_bench "$T" \
        --ops argmax,min,max --types f32,bf16 --shapes "1048576,16,1;65536,128,1;4096,4096,1;16,4194304,1"
    TORCH_LIMIT=280 torch_axis --ops min,max,argmax --only rows
    sed -n '/^min along/,$p' "$L/torch_axis.log" >> "$S" ;;
*)
    echo "dev_session15.sh: no step '$step'" >&2; exit 2 ;;
esac
dev_end
