#!/bin/bash
# dev_session33.sh STEP - device runs of the thirty-second session, one step a call on a lent
# GPU; logs under $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in
# $OUT/all.tgz; the functions are tools/exp/dev_lib.sh's. Carried: build/c33.tar.xz (stripped
# binaries; `bash tools/exp/dev_session33.sh pack` makes it here), build/c32.tar.xz (the
# binaries before, for `fix`), build/devlib, build/h100.sql.xz (db/tuned/h100.sql, xz'd, out of
# the tree for the 64 MiB limit).
#   fix     rt_seg_fix reads the out[key] of a thread's folds together before it stores any
#           (they were a read-modify-write each, one after the other: Nsight Compute put
#           rt_seg alone at 80 us of keys heavy sum f32's 96): the harness (--only seg_lb),
#           the GPU tests of sum f32 and min f*, then redtune_bench before (c32's) and after
#           A B A B over keys heavy, len3, rand10_50 (sum, min f32) and offsets heavy, len3,
#           rand10_50, one (min f32) at 30M, the same database (the H200's keys rows merged).
#   ncu     (fix's harness ran out of time at 1082 of 1694 checks, all passed) the harness
#           again, longer; then Nsight Compute's durations of rt_seg and rt_seg_fix, before and
#           after, for keys heavy sum f32 at 30M.
#   fix2    (ncu: rt_seg_fix took 14.2 us after fix, 19.7 before, beside rt_seg's 80: one
#           SM's random read-modify-writes of out[]) rt_seg_fix on a block per RT_B carries
#           (at most four an SM, chunks grid-strided, a run's earlier part by a walk back):
#           the GPU tests of sum f32 and min f* (every segmented family of the default
#           space verified), redtune_bench before (c32's) and after A B A B over keys heavy,
#           len3 (sum, min f32) and offsets heavy, len3 (min f32) at 30M, then the harness
#           (--only seg_mark, seg_matrix, seg_diffwarps, seg_lb: its fix now on the
#           runtime's grid and, every other run, on three blocks).
step=${1:?step: pack, fix, ncu, fix2}
if [ "$step" != pack ]; then
    rm -rf /tmp/c32o && mkdir -p /tmp/c32o build/bench_before && tar -C /tmp/c32o -xJf build/c32.tar.xz \
        && cp /tmp/c32o/bench/redtune_bench build/bench_before/
fi
. "$(dirname "$0")/dev_lib.sh"
dev_start c33 "$step"
case $step in
fix)
    harness 150 seg_lb
    tests 'seg_RT_SUM_RT_F32' 40
    tests 'seg_RT_MIN_RT_F*' 60
    fits 130 "keys before/after" && seg_ab keys before after build/bench_before/redtune_bench "$T" \
        build/bench/redtune_bench "$T" 30 keys --profiles heavy,len3,rand10_50 --ops sum,min \
        --types f32 --sizes 30M
    fits 120 "offsets before/after" && seg_ab offs before after build/bench_before/redtune_bench "$T" \
        build/bench/redtune_bench "$T" 25 offsets --profiles heavy,len3,rand10_50,one \
        --ops min --types f32 --sizes 30M ;;
ncu)
    harness 250 seg_lb
    for v in before after; do
        bin=build/bench/redtune_bench
        [ $v = before ] && bin=build/bench_before/redtune_bench
        timeout 120 ncu --clock-control none -k 'regex:^rt_seg' -s 4 -c 2 $bin --db "$T" \
            --segmented keys --profiles heavy --ops sum --types f32 --sizes 30M --regimes cold \
            > "$L/ncu_$v.log" 2>&1
        echo "ncu $v: exit $?" >> "$S"
        grep -E '^  rt_seg|Duration' "$L/ncu_$v.log" | sed 's/  */ /g' >> "$S"
    done ;;
fix2)
    tests 'seg_RT_SUM_RT_F32' 40
    tests 'seg_RT_MIN_RT_F*' 60
    seg_ab keys before after build/bench_before/redtune_bench "$T" build/bench/redtune_bench "$T" 30 \
        keys --profiles heavy,len3 --ops sum,min --types f32 --sizes 30M
    seg_ab offs before after build/bench_before/redtune_bench "$T" build/bench/redtune_bench "$T" 20 \
        offsets --profiles heavy,len3 --ops min --types f32 --sizes 30M
    for f in seg_mark seg_matrix seg_diffwarps; do
        fits 60 "harness $f" && harness 60 $f && cp "$L/harness.log" "$L/harness_$f.log"
    done
    fits 100 "harness seg_lb" && harness $(( 555 - $(date +%s) + DEV_T0 )) seg_lb ;;
esac
dev_end
