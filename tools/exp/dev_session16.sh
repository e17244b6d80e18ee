#!/bin/bash
# dev_session16.sh STEP - device runs of the sixteenth session (issue 14: seg_per's long
# segments walked by the block, LONG), one step a call on a warm H100; logs under $OUT/logs
# (packed into $OUT/logs.tgz), a summary ($OUT/sum.txt) printed last. Carried: build/c16.tar.xz
# (stripped binaries, unpacked into build/ on the device; `bash tools/exp/dev_session16.sh
# pack` makes it here: build/bench_before/redtune_bench is the bench of the commit before,
# built in a worktree) and build/devlib.
#   long   the C GPU tests of the segmented kernels that LONG touches (the variants with LONG =
#          1 and 3 in every test of tests/test_gpu_seg.c that is run, the unaligned walk), then
#          redtune_bench --segmented offsets, the bench before (templates without LONG) and
#          after, A B A B, over every offsets profile at 2^20 and 30 * 2^20, min and sum, f32
#          and f64, cold, with db/tuned; then the heavy profile with a copy of db/tuned without
#          its offsets:heavy rows (the lookup by mean length then takes a group per segment at
#          30 * 2^20 too), before and after.
#   final  after the CUBINs of db/tuned were refreshed for LONG: the C GPU tests of the
#          segmented library calls ('api_gpu_seg*': RT_SEG_UNIFORM's calls, explain and
#          RT_EINVAL), the seg_per kernels ('seg_per_long*', 'seg_order_kept', 'seg_RT_SUM_RT_I32')
#          and `redtune reduce` ('seg_reduce*'), the Python segmented GPU tests, then
#          redtune_bench --segmented offsets before, after, and after with --uniform, A B C A B C,
#          heavy, len1, len3 and rand10_50 at 2^20 and 30 * 2^20, min and sum f32, cold.
#   check  after final's two failures were fixed (a test's unknown flag 8 is RT_SEG_UNIFORM
#          now; seg_decide logged an unset type name): the C GPU tests 'api_gpu*', two seg_*
#          groups, and the whole Python GPU suite.
#   cap    the launch bound's share of the list's cost on short segments: the bench before,
#          after (LONG with __launch_bounds__(B, 2048 / B)) and v3 (build/bench_v3: the same
#          template without the bound), A B C A B C, len1, len3, rand10_50, f32 min and sum at
#          2^20 and 30 * 2^20; then f64 min at 30 * 2^20, one round.
#   tile   the list's mechanics: after (a shared counter, a barrier at the start) against v4
#          (build/bench_v4: only the block's last tile, in practice its only one, leaves long
#          segments, per-warp ballot masks, no counter, no first barrier; the launch bound) and
#          v5 (v4 without the bound), A B C D A B C D, the cases of cap.
#   final2 v4 taken (templates/seg_per.cu; CUBINs refreshed): the segmented C GPU tests of
#          final and two seg_* groups, the Python segmented GPU tests, then long's benches
#          (every profile, min and sum, f32 and f64, 2^20 and 30 * 2^20, A B A B; heavy
#          without the heavy rows, f32 and f64, one round).
# The calls ran this script as committed before 7cf475d's successor: the Python tests and the
# copy without the heavy rows were inlined per step; they are the functions pytests and noheavy
# now, unchanged in what they run; tests, pytests and the prelude are tools/exp/dev_lib.sh's.
step=${1:?step: pack, long, final, check, cap, tile or final2}
. "$(dirname "$0")/dev_lib.sh"
if [ "$step" = pack ]; then
    dev_pack c16 "redtune tests/all bench/redtune_bench bench_before/redtune_bench"
    exit 0
fi
dev_begin c16
# seg_ab TAG DB ARGS...: redtune_bench --segmented offsets ARGS, before and after (and
# after with --uniform when VARIANTS says so), A B A B (ROUNDS=1: A B), the tables of
# tools/exp/seg_ab.py printed.
seg_ab() {
    local tag=$1 db=$2 r v bin extra
    shift 2
    for r in $(seq 1 "${ROUNDS:-2}"); do
        for v in ${VARIANTS:-before after}; do
            bin=build/bench/redtune_bench extra=
            [ -x build/bench_$v/redtune_bench ] && bin=build/bench_$v/redtune_bench
            [ $v = uniform ] && extra=--uniform
            timeout 200 "$bin" --db "$db" --segmented offsets "$@" $extra \
                --csv "$L/seg${tag}_${v}_$r.csv" > "$L/seg${tag}_${v}_$r.log" 2>&1
            echo "bench $tag $v run $r: exit $?" >> "$S"
        done
    done
    for v in ${VARIANTS:-before after}; do
        [ $v = before ] || python3 tools/exp/seg_ab.py "$L" before $v "$tag" >> "$S" 2>&1
    done
}
# noheavy DB: a copy of db/tuned without its offsets:heavy rows.
noheavy() {
    cp "$T" "$1"
    python3 - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("delete from best where layout = 'offsets:heavy'")
c.commit()
PY
}
case $step in
long)
    tests 'seg_per_long*' 120
    tests 'seg_order_kept' 120
    tests 'seg_RT_MIN_RT_F32' 120
    tests 'seg_RT_ARGMAX_RT_F64' 120
    tests 'seg_all_nan_RT_MAX_RT_F32' 120
    seg_ab "" "$T" --profiles one,rand10_50,len3,len1,len1000,heavy --sizes 2^20,30M \
        --ops min,sum --types f32,f64 --regimes cold
    noheavy build/noheavy.db
    ROUNDS=1 seg_ab _noheavy build/noheavy.db --profiles heavy --sizes 2^20,30M --ops min --types f32 \
        --regimes cold --reps 20 ;;
final)
    tests 'api_gpu_seg*' 150
    tests 'seg_per_long*' 60
    tests 'seg_order_kept' 60
    tests 'seg_RT_SUM_RT_I32' 60
    tests 'seg_reduce*' 120
    pytests seg 150 -k 'segment or offsets or skew'
    VARIANTS="before after uniform" seg_ab _final "$T" --profiles heavy,len1,len3,rand10_50 \
        --sizes 2^20,30M --ops min,sum --types f32 --regimes cold ;;
check)
    tests 'api_gpu*' 200
    tests 'seg_RT_ARGMIN_RT_F32' 60
    tests 'seg_all_nan_RT_MIN_RT_F64' 60
    pytests gpu 240 ;;
cap)
    VARIANTS="before after v3" seg_ab _cap "$T" --profiles len1,len3,rand10_50 \
        --sizes 2^20,30M --ops min,sum --types f32 --regimes cold
    VARIANTS="before after v3" ROUNDS=1 seg_ab _cap64 "$T" --profiles len1,len3,rand10_50 \
        --sizes 30M --ops min --types f64 --regimes cold ;;
tile)
    VARIANTS="before after v4 v5" seg_ab _tile "$T" --profiles len1,len3,rand10_50 \
        --sizes 2^20,30M --ops min,sum --types f32 --regimes cold ;;
final2)
    tests 'api_gpu_seg*' 150
    tests 'seg_per_long*' 60
    tests 'seg_order_kept' 60
    tests 'seg_RT_MIN_RT_F32' 60
    tests 'seg_RT_ARGMAX_RT_F64' 60
    tests 'seg_reduce*' 120
    pytests seg 150 -k 'segment or offsets or skew'
    seg_ab _final2 "$T" --profiles one,rand10_50,len3,len1,len1000,heavy --sizes 2^20,30M \
        --ops min,sum --types f32,f64 --regimes cold
    noheavy build/noheavy.db
    ROUNDS=1 seg_ab _final2_noheavy build/noheavy.db --profiles heavy --sizes 2^20,30M \
        --ops min --types f32,f64 --regimes cold --reps 20 ;;
*)
    echo "dev_session16.sh: no step '$step'" >&2; exit 2 ;;
esac
dev_end
