#!/bin/bash
# dev_session28.sh STEP - device runs of the twenty-eighth session, one step a call on the
# lent H200; logs under $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in
# $OUT/all.tgz; the functions are tools/exp/dev_lib.sh's. Carried: build/c28.tar.xz
# (stripped binaries; `bash tools/exp/dev_session28.sh pack` makes it here), build/devlib,
# build/h100.sql.xz (db/tuned/h100.sql, xz'd, out of the tree for the 64 MiB limit) and, for
# the Python tests, build/python (`ninja python`, without its redtune.db).
#   nz      NZ (float min and max fold a segment from its first element by the glue's
#           rt_fold_nz; written after the twenty-seventh session's last GPU run): the harness
#           (seg_pipe and seg_per: five NZ shapes), 'seg_RT_M*' and 'seg_all_nan*' (two NZ
#           variants, the marker's bits as data among the all-NaN segments), then
#           tools/exp/nz_space.lua for offsets len3, len1 and rand10_50 at 30M (min f32,
#           max f64), NZ 0 against 1 per config (tools/exp/nz_sum.py); then, while the call's
#           time lasts, the axis GPU tests split into two groups ('axis_gpu*') and the Python
#           GPU tests (not run since libredtune's fallback to the built-in default).
#   ship    the shipped space with NZ (lua/spaces/segmented_ship.lua: seg_pipe H = 0 and seg_per
#           STAGE = 2 for float min and max) for the H200's rows of the short-segment profiles
#           (offsets len3, len1, rand10_50 at 2^22 and 30M: min f32, min f64; len3, rand10_50:
#           max f32) into the H200's row and merged (build/merged.db, $OUT/ship_into.db);
#           redtune_bench over every offsets profile, committed database against the merge,
#           A B A B; then, while the call's time lasts, the seg_per harness again (run 1 ran
#           out of its 60 s after 603 passed, 0 failed, every NZ shape among them).
#   f64     (run 3) min f64's rows that run 2's 150 s did not reach (offsets rand10_50 at 2^22
#           and 30M, len1 at 30M), the shipped space with NZ, into the H200's row (which holds
#           run 2's rows now) and merged; redtune_bench over every offsets profile, committed
#           database against the merge, A B A B; the Python GPU tests of segments (run 1's two
#           failures were the test's: it named seg_lb where the shipped seg_mark serves).
#   pyaxis  (run 4) the Python GPU tests along an axis after their split into
#           python/tests/test_gpu_axis.py (-k 'axis or dim or var_mean' over both files).
step=${1:?step: pack, nz, ship, f64, pyaxis}
. "$(dirname "$0")/dev_lib.sh"
dev_start c28 "$step"
case $step in
nz)
    harness 60 seg_pipe
    mv "$L/harness.log" "$L/harness_pipe.log"
    harness 60 seg_per
    tests 'seg_RT_M*' 80
    tests 'seg_all_nan*' 40
    MARK_PROFILES=len3,len1,rand10_50 mark_tune nz tools/exp/nz_space.lua 80 min:f32 max:f64
    python3 tools/exp/nz_sum.py "$L/nz.csv" >> "$S" 2>&1
    fits 90 "axis_gpu*" && tests 'axis_gpu*' 90
    fits 60 "python GPU tests" && pytests all $(( 560 - ($(date +%s) - DEV_T0) )) ;;
ship)
    SHIP_PROFILES=len3,len1,rand10_50 SHIP_LIMIT=150 ship_rand H200 8b59dd2a77fc5356c5b5d639fc1cc192 \
        2^22,30M min:f32 min:f64
    SHIP_PROFILES=len3,rand10_50 SHIP_LIMIT=90 ship_rand H200 8b59dd2a77fc5356c5b5d639fc1cc192 \
        2^22,30M max:f32
    python3 tools/exp/stage2_sum.py <(zcat "$OUT/ship_meas.csv.gz") >> "$S" 2>&1
    bench_all 40
    fits 100 "seg_per harness" && harness 100 seg_per ;;
f64)
    SHIP_PROFILES=rand10_50 SHIP_LIMIT=90 ship_rand H200 8b59dd2a77fc5356c5b5d639fc1cc192 2^22,30M min:f64
    SHIP_PROFILES=len1 SHIP_LIMIT=60 ship_rand H200 8b59dd2a77fc5356c5b5d639fc1cc192 30M min:f64
    python3 tools/exp/stage2_sum.py <(zcat "$OUT/ship_meas.csv.gz") | grep -A4 '^min f64' >> "$S" 2>&1
    bench_all 40
    fits 60 "python GPU tests" && pytests seg $(( 560 - ($(date +%s) - DEV_T0) )) -k 'segment or offsets or keys' ;;
pyaxis)
    pytests axis 170 -k 'axis or dim or var_mean' ;;
esac
dev_end
