#!/bin/bash
# dev_session29.sh STEP - device runs prepared at the end of the twenty-eighth session (whose
# device time was spent), one step a call on a lent GPU; logs under $OUT/logs, a summary
# ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the functions are
# tools/exp/dev_lib.sh's. Carried: build/c29.tar.xz (stripped binaries; `bash
# tools/exp/dev_session29.sh pack` makes it here), build/devlib, build/h100.sql.xz
# (db/tuned/h100.sql, xz'd, out of the tree for the 64 MiB limit).
#   win     seg_per STAGE = 2's WIN (kilobytes of shared memory a block's windows take, 40
#           until now) and GRID (blocks an SM of a grid that loops over the tiles, the next
#           tile's offsets loaded ahead; 0 until now), both written after the twenty-eighth
#           session's last GPU run: the harness (--only seg_per: two WIN and three GRID
#           shapes), 'seg_RT_M*' and 'seg_RT_SUM*' (a WIN=1 variant: a span in many windows;
#           a GRID=1 one), then tools/exp/win_space.lua for offsets rand10_50 at 2^22 and 30M
#           (min f32, sum f32, min f64), each WIN x GRID's best (tools/exp/stage2_sum.py). If
#           one beats WIN=40 GRID=0 by more than the noise (1%), add it to
#           lua/spaces/segmented_ship.lua's STAGE = 2 entry and tune the H200's rand10_50 rows
#           again (`ship` of dev_session28.sh). Then, while the call's time lasts,
#           'axis_gpu*' (their fixture and put_axis_emitted changed after the last GPU run).
#   h100    on an H100 (none was lent in sessions 22-28): the H100's rows of the
#           short-segment profiles with the shipped space (NZ, U, seg_pipe, seg_mark are new
#           to it): offsets len3, len1, rand10_50, len1000 at 2^22 and 30M for min f32 into
#           the H100's row 2e956071d0b02214c4c501b293bccefc and merged; redtune_bench over
#           every offsets profile, committed database against the merge, A B A B.
#   ship    after `win` (run 1: WIN = 24 0.97x WIN = 40 for f32 at 2^22, WIN = 36 0.96x for min
#           f64 at 30M, GRID = 5 0.96x for min f64 at 2^22): the shipped space's STAGE = 2 entry
#           with WIN {24, 36, 40} x GRID {0, 5}; the H200's rand10_50 rows of the float
#           operators at 2^22 and 30M tuned again and merged; redtune_bench over every offsets
#           profile, committed database against the merge, A B A B.
#   final   the Python GPU tests, both files (test_gpu_axis.py has not run whole since the
#           twenty-eighth session's split), with the database of `ship`'s merge (carry
#           build/python too); then 'seg_RT*' while the call's time lasts.
#   kpf     (run 4; needs `git apply tools/exp/seg_lb_pf.patch`: PF was not kept)
#           seg_lb's PF (keys, written this session after run 3): a resident grid whose blocks
#           load their next tile into a second set of registers before they walk this one
#           (the H200's keys len3 takes 134 us, 47% of the read bandwidth, rand10_50 105).
#           The harness (--only seg_lb: three PF shapes), 'seg_RT_MIN_RT_F*' (a PF variant),
#           then the shipped space, now with 16 PF configs beside the 8 before, over keys heavy
#           and len3 at 2^20 and 30M for min and sum f32 into the H200's row, each variant's
#           best (tools/exp/stage2_sum.py), and redtune_bench keys A B A B against the
#           committed database.
#   kncu    Nsight Compute's full set over redtune_bench running the committed database's keys
#           winners (len3, rand10_50; min f32, 30M) and, beside them, offsets rand10_50's
#           (seg_per STAGE=2): where keys' time goes at 47% of the read bandwidth.
step=${1:?step: pack, win, ship, final, kpf, kncu, h100}
. "$(dirname "$0")/dev_lib.sh"
dev_start c29 "$step"
case $step in
win)
    harness 120 seg_per
    tests 'seg_RT_M*' 80
    tests 'seg_RT_SUM*' 50
    MARK_PROFILES=rand10_50 MARK_SIZES=2^22,30M mark_tune win tools/exp/win_space.lua 90 \
        min:f32 sum:f32 min:f64
    # the axis groups' fixture and put_axis_emitted, changed after the last GPU run
    fits 90 "axis_gpu*" && tests 'axis_gpu*' 90 ;;
ship)
    SHIP_LIMIT=70 ship_rand H200 8b59dd2a77fc5356c5b5d639fc1cc192 2^22,30M \
        min:f32 sum:f32 min:f64 max:f32 max:f64 sum:f64
    python3 tools/exp/stage2_sum.py <(zcat "$OUT/ship_meas.csv.gz") >> "$S" 2>&1
    fits 200 "bench" && bench_all 40 ;;
final)
    pytests all 330
    fits 120 "seg_RT*" && tests 'seg_RT*' $(( 560 - ($(date +%s) - DEV_T0) )) ;;
kpf)
    harness 100 seg_lb
    tests 'seg_RT_MIN_RT_F*' 60
    keys_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 min:f32 sum:f32
    python3 tools/exp/stage2_sum.py <(build/redtune measurements --db build/keys.db --format csv) >> "$S" 2>&1
    build/redtune merge "$T" "$OUT/keys_into.db" -o build/merged.db --force >> "$S" 2>&1
    fits 150 "bench keys" && bench_keys 40 ;;
kncu)
    ncu_sass klen3 "$T" len3 keys
    ncu_sass krand "$T" rand10_50 keys
    fits 60 "offsets ncu" && ncu_sass orand "$T" rand10_50 offsets ;;
h100)
    SHIP_PROFILES=len3,len1,rand10_50,len1000 SHIP_LIMIT=240 ship_rand H100 \
        2e956071d0b02214c4c501b293bccefc 2^22,30M min:f32
    python3 tools/exp/stage2_sum.py <(zcat "$OUT/ship_meas.csv.gz") >> "$S" 2>&1
    bench_all 60 ;;
esac
dev_end
