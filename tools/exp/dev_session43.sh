#!/bin/bash
# dev_session43.sh STEP - device runs of the forty-third session; one step a call; logs under
# $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the
# functions are tools/exp/dev_lib.sh's. Carried: build/c43.tar.xz (`bash
# tools/exp/dev_session43.sh pack` at 9f7c501: argmin/argmax's warp select, before the integer
# warp reduction), build/c44.tar.xz (`... pack44` with it), build/devlib, build/h100.sql.xz,
# build/python (`ninja python`, without its redtune.db), build/pyt (Debian's pytest, pluggy,
# iniconfig and py).
#   intab   (issue 14) sum, min and max in a 32-bit integer accumulator by one redux.sync a
#           warp (runtime/glue.c rt_warp_reduce): the C GPU tests of the integer sums, min and
#           max (i32, u32, i64, u64, i8, u8; every variant), then redtune_bench --every-n to
#           2^16 for min, sum, max of i32 and u32 (cold), before and after, A B A B
#           (tools/exp/flat_ab.py's table); the segmented GPU tests ('seg_*': seg_per's group
#           tree takes the warp reduction) with the time left; the large sizes (2^20, 2^24,
#           2^28) A B A B where a call has time for them.
#   tests2  (issues 14, 15, 16) the GPU tests the change touches beyond intab's: the types,
#           the segmented ones (seg_per's group tree: argmin/argmax's warp select of the
#           forty-second session and the integer reduction), along an axis; the Python GPU
#           tests with the time left.
#   h200r   (issue 14; an H200) its offsets heavy rows with the shipped space (min and sum, f32
#           and f64, at 2^22 and 30M, 100 s an operator), merged into its row; redtune_bench over
#           every offsets profile, the committed database against the merge, A B A B.
step=${1:?step: pack, pack44, intab, tests2, h200r}
. "$(dirname "$0")/dev_lib.sh"
dev_start_pair c43 c44 "$step" intab tests2 h200r
# flat_ab TAG LIMIT ARGS...: redtune_bench ARGS (cold) with the bench before and after, A B A B
# (LIMIT s each, same database), tools/exp/flat_ab.py's table in the summary
flat_ab() {
    local tag=$1 limit=$2 r v bin t0
    shift 2
    for r in "" 2; do
        for v in before after; do
            bin=build/bench/redtune_bench
            [ $v = before ] && bin=build/bench_before/redtune_bench
            t0=$(date +%s)
            timeout "$limit" $bin --db "$T" --regimes cold --seed 1 "$@" --csv "$L/${tag}_$v$r.csv" \
                > "$L/${tag}_$v$r.log" 2>&1
            echo "redtune_bench $* ($v${r:+ $r}): exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
        done
    done
    python3 tools/exp/flat_ab.py "$L" "$tag" before after >> "$S" 2>&1
}
case $step in
intab)
    tests 'gpu_RT_SUM_RT_I*' 80
    tests 'gpu_RT_SUM_RT_U*' 80
    fits 90 "min/max i tests" && tests 'gpu_RT_M*_RT_I*' 90
    fits 90 "min/max u tests" && tests 'gpu_RT_M*_RT_U*' 90
    fits 200 "every n" && flat_ab en 45 --every-n --max-n 2^16 --random 8 --ops min,sum,max --types i32,u32
    fits 100 "seg tests" && tests 'seg_*' $(left)
    fits 100 "large n" && flat_ab big 25 --sizes 2^20,2^24,2^28 --ops min,sum,max --types i32 ;;
tests2)
    tests 'gpu_types*' 60
    fits 100 "seg tests" && tests 'seg_*' 200
    fits 100 "axis tests" && tests '*axis*' 150
    fits 60 "python GPU tests" && pytests all $(left) ;;
h200r)
    SHIP_LIMIT=100 tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 heavy 2^22,30M min:f32 sum:f32 min:f64 sum:f64
    fits 100 "bench offsets" && bench_all 40 ;;
esac
dev_end
