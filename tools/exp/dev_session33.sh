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
#   last    (the session's last 220 s, refused: no device time left; the next session's
#           first) redtune_bench before and after over keys rand10_50 (sum, min f32 at 30M),
#           Nsight Compute's durations of rt_seg and rt_seg_fix for offsets heavy min f32
#           (seg_mark) and keys heavy sum f32, after; then its full set (details and SASS
#           pages, ncu_sass) over the committed winners of offsets heavy, rand10_50 (seg_per
#           STAGE=2) and len3 (seg_pipe), min f32 at 30M: 3.28x, 1.35x and 1.27x the limit,
#           where do they lose to a flat read?
#   (the next session's, prepared after the device time was spent)
#   (the thirty-third session's: `last` ran first; then sc_run_before took 8 carries a
#   thread a step, and build/c33h.tar.xz holds the bench of 1f032ef, the commit before)
#   tests   every segmented GPU test with the new rt_seg_fix and walk (`seg_*`: the 36
#           seg_RT_* and seg_order_kept, seg_all_nan_*, seg_per_long_unaligned,
#           seg_types_builtin; about 250 s), then the harness of seg_lb (its one-segment and
#           heavy-tail profiles over tiles of 32 elements walk back thousands of carries)
#   tests2  (tests ran 41 of its 43 in 320 s, all passed; the harness passed 1694 of 1694)
#           the last two tests (seg_per_long_unaligned, seg_types_builtin), the harness of
#           the families with carries not yet run with the parallel fix (seg_stream, seg_tb2,
#           seg_tb4warp) and seg_mark's, then redtune_bench 1f032ef's (c33h) and
#           this tree's A B A B over keys heavy, len3, rand10_50 (sum, min f32) and offsets
#           heavy (min f32) at 30M, the same database
#   walk    (tests2: every test and harness passed, but 8 carries a thread from the walk's
#           first step made keys heavy 1.6-2.1% slower, offsets heavy 1.1%) the first step
#           back to a carry a thread, 8 a thread after: the harness of seg_lb, the GPU tests of
#           sum f32 and min f*, then 1f032ef's bench (c33h) against this tree's A B A B over
#           keys heavy (sum, min) and len3 (min) and offsets heavy (min), f32 at 30M
#   marknz  (written after the thirty-third session's last GPU run) seg_mark's NZ: the harness
#           (--only seg_mark: NZ = 0, the walk NZ changes), 'seg_RT_MIN_RT_F*' and
#           'seg_RT_MAX_RT_F*' (the NZ variant of tests/test_gpu_seg.c), 'seg_all_nan*', then
#           tools/exp/mark_nz_space.lua for offsets heavy at 2^22 and 30M (min f32, max f64),
#           NZ 0 against 1 per config (tools/exp/nz_sum.py)
#   py      the Python GPU tests (about 220 s; carry build/python too: `ninja python`, less
#           build/python/redtune/redtune.db)
#   rows, rows64
#           the H200's keys rows retuned as dev_session32.sh's steps of those names do, now
#           that the fix's cost no longer grows with the tiles (smaller tiles may win); merge
#           each keys_into.db, then tools/refresh_shipped.sh
step=${1:?step: pack, fix, ncu, fix2, last, tests, tests2, walk, marknz, py, rows, rows64}
if [ "$step" != pack ]; then
    [ -f build/c32.tar.xz ] && rm -rf /tmp/c32o && mkdir -p /tmp/c32o build/bench_before \
        && tar -C /tmp/c32o -xJf build/c32.tar.xz && cp /tmp/c32o/bench/redtune_bench build/bench_before/
    [ -f build/c33h.tar.xz ] && rm -rf /tmp/c33h && mkdir -p /tmp/c33h build/bench_head \
        && tar -C /tmp/c33h -xJf build/c33h.tar.xz && cp /tmp/c33h/bench/redtune_bench build/bench_head/
fi
. "$(dirname "$0")/dev_lib.sh"
# head_new FITS PROFILES: 1f032ef's bench (c33h) against this tree's, A B A B, over keys
# PROFILES (sum, min f32) and offsets heavy (min f32) at 30M, the same database; the keys
# bench when FITS seconds are left in the call.
head_new() {
    fits "$1" "keys head/new" && seg_ab keys head new build/bench_head/redtune_bench "$T" \
        build/bench/redtune_bench "$T" 25 keys --profiles "$2" --ops sum,min --types f32 --sizes 30M
    fits 40 "offsets head/new" && seg_ab offs head new build/bench_head/redtune_bench "$T" \
        build/bench/redtune_bench "$T" 15 offsets --profiles heavy --ops min --types f32 --sizes 30M
}
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
    NCU_BIN=build/bench_before/redtune_bench ncu_durations before keys heavy sum
    ncu_durations after keys heavy sum ;;
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
last)
    seg_ab keys before after build/bench_before/redtune_bench "$T" build/bench/redtune_bench "$T" 15 \
        keys --profiles rand10_50 --ops sum,min --types f32 --sizes 30M
    ncu_durations offs_heavy offsets heavy min
    ncu_durations keys_heavy keys heavy sum
    ncu_sass oheavy "$T" heavy
    ncu_sass orand "$T" rand10_50
    ncu_sass olen3 "$T" len3 ;;
tests)
    tests 'seg_*' 320
    fits 60 "harness seg_lb" && harness $(( 570 - $(date +%s) + DEV_T0 )) seg_lb ;;
tests2)
    tests 'seg_per_long_unaligned' 60
    tests 'seg_types_builtin' 100
    for f in seg_stream seg_tb2 seg_tb4warp seg_mark; do
        fits 45 "harness $f" && harness 45 $f && cp "$L/harness.log" "$L/harness_$f.log"
    done
    head_new 120 heavy,len3,rand10_50 ;;
walk)
    harness 150 seg_lb
    tests 'seg_RT_SUM_RT_F32' 40
    tests 'seg_RT_MIN_RT_F*' 60
    head_new 100 heavy,len3 ;;
marknz)
    harness 60 seg_mark
    tests 'seg_RT_MIN_RT_F*' 60
    tests 'seg_RT_MAX_RT_F*' 60
    tests 'seg_all_nan*' 60
    MARK_PROFILES=heavy MARK_SIZES=4M,30M mark_tune marknz tools/exp/mark_nz_space.lua 100 min:f32 max:f64
    python3 tools/exp/nz_sum.py "$L/marknz.csv" >> "$S" 2>&1 ;;
py)
    pytests all 320 ;;
rows)
    h200_keys 60 min:f32 sum:f32 max:f32 min:i32 sum:i32 max:i32
    fits 120 "bench keys f32" && bench_keys 35 ;;
rows64)
    h200_keys 70 min:f64 sum:f64 max:f64
    fits 160 "bench keys f64" && bench_keys64 40 ;;
esac
dev_end
