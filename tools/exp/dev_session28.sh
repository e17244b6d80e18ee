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
step=${1:?step: pack, nz}
. "$(dirname "$0")/dev_lib.sh"
dev_start c28 "$step"
T0=$(date +%s)
# fits LIMIT: 0 when LIMIT more seconds end within the call's 560, else a line in the summary
fits() {
    (( $(date +%s) - T0 + $1 <= 560 )) && return 0
    echo "skipped (no time left in the call): $2" >> "$S"
    return 1
}
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
    fits 60 "python GPU tests" && pytests all $(( 560 - ($(date +%s) - T0) )) ;;
esac
dev_end
