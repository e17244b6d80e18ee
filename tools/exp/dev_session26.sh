#!/bin/bash
# dev_session26.sh STEP - device runs of the twenty-sixth session, one step a call on the
# lent H200; logs under $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in
# $OUT/all.tgz; the functions are tools/exp/dev_lib.sh's. Carried: build/c26.tar.xz
# (stripped binaries; `bash tools/exp/dev_session26.sh pack` makes it here), build/devlib,
# build/h100.sql.xz (db/tuned/h100.sql, xz'd, out of the tree for the 64 MiB limit).
#   pipe    the new family seg_pipe (templates/seg_pipe.cu): build/seg_harness --quick --only
#           seg_pipe, the C GPU tests 'seg_RT_MIN_RT_F*' (two seg_pipe variants);
#           tools/exp/pipe_space.lua (seg_pipe beside seg_per's short-segment winners) tuned
#           for offsets len3, rand10_50, len1 and heavy at 30M (min f32, sum f64), each
#           variant's best per case (tools/exp/stage2_sum.py).
#   pipe2   the same with the template's second version (LONG: long segments to the block; no
#           windows after the first, a thread reads its segment's part past the stage itself);
#           then seg_pipe alone (tools/exp/pipe_only.lua) for len3 and rand10_50 (min f32) and
#           its winners under Nsight Compute (ncu_sass).
#   pipe3   pipe2 with the third version: a segment's bounds as 32-bit positions relative to the
#           tile's first window (32-bit offsets), the offsets copied 16 bytes at a time; KB 12 in
#           pipe_space.lua, RV 1 only.
#   ship    the fourth version (the first H elements of a segment folded without a branch, the
#           copy loops unrolled): the harness, 'seg_RT_MIN_RT_F*'; the shipped space (now with
#           seg_pipe: B 128, 256, SEGS 2, 4, 8, KB 8, 12, 16) for offsets len3 and len1 at 2^22
#           and 30M (min f32, sum f32, sum f64) into the H200's row and merged
#           ($OUT/ship_into.db, build/merged.db), each variant's best; redtune_bench over every
#           offsets profile (min, sum x f32, f64 at 30M), committed database against the merge,
#           A B A B.
#   final   with the committed code and database (the H200's len3 and len1 rows of run 4): every
#           segmented C GPU test ('seg_RT_*', each family's variants, seg_pipe's two among them;
#           NaN, order, the built-in types, the tuner end to end, `redtune reduce`) and
#           'api_gpu_seg*'; then tools/exp/pipe_h.lua (H 0, 2, 4 at the shipped shapes) for
#           offsets len3 and len1 at 30M (min f32, sum f32).
#   shipmin the shipped space (now with H 0 and 4) for offsets len3 and len1 at 2^22 and 30M (min
#           f32: H = 0 was 0.91 and 0.73x the shipped H = 4 in `final`) into the H200's row
#           ($OUT/ship_into.db); no bench (the session's device time was spent).
#   h100    not run (no H100 lent): the shipped space (with seg_pipe) for offsets len3 and len1
#           at 2^20 and 30M (min f32, sum f32, sum f64, min f64) into the H100's row and merged
#           ($OUT/ship_into.db: bring it back and merge it into db/tuned/h100.sql); the offsets
#           bench over every profile, committed database against the merge, A B A B. Run it
#           with dev_session25.sh `h100` (seg_mark's heavy rows) when an H100 is lent.
#   lanes   not run (the session's device time was spent): seg_pipe's LANES (a group of threads a
#           segment, written after run 6): the harness (three LANES shapes), 'seg_RT_MIN_RT_F*'
#           (a LANES=4 variant), then tools/exp/pipe_space.lua (with LANES 2, 4, 8) for offsets
#           rand10_50, len3 and len1 at 30M (min f32, sum f64).
step=${1:?step: pack, pipe, pipe2, pipe3, ship, final, shipmin, h100, lanes}
. "$(dirname "$0")/dev_lib.sh"
dev_start c26 "$step"
case $step in
pipe | pipe2 | pipe3)
    harness 150 seg_pipe
    tests 'seg_RT_MIN_RT_F*' 60
    MARK_PROFILES=len3,rand10_50,len1,heavy mark_tune pp tools/exp/pipe_space.lua 170 min:f32 sum:f64
    [ "$step" = pipe ] && { dev_end; exit 0; }
    MARK_PROFILES=len3,rand10_50 mark_tune po tools/exp/pipe_only.lua 60 min:f32
    ncu_sass len3 build/po.db len3
    ncu_sass rand build/po.db rand10_50 ;;
ship)
    harness 150 seg_pipe
    tests 'seg_RT_MIN_RT_F*' 60
    SHIP_LIMIT=100 tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 len3,len1 2^22,30M min:f32 sum:f32 sum:f64
    bench_all 50 ;;
final)
    tests 'seg_RT_*' 280
    for f in 'seg_all_nan*' seg_order_kept 'seg_per_long*' 'seg_types*' 'seg_tuner*' 'seg_reduce*'; do
        tests "$f" 60
    done
    tests 'api_gpu_seg*' 60
    MARK_PROFILES=len3,len1 mark_tune ph tools/exp/pipe_h.lua 60 min:f32 sum:f32 ;;
lanes)
    harness 150 seg_pipe
    tests 'seg_RT_MIN_RT_F*' 60
    MARK_PROFILES=rand10_50,len3,len1 mark_tune pl tools/exp/pipe_space.lua 170 min:f32 sum:f64 ;;
h100)
    SHIP_LIMIT=120 tune_rows H100 2e956071d0b02214c4c501b293bccefc len3,len1 2^20,30M \
        min:f32 sum:f32 sum:f64 min:f64
    bench_all 50 ;;
shipmin)
    SHIP_LIMIT=115 tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 len3,len1 2^22,30M min:f32 ;;
esac
dev_end
