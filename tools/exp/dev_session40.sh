#!/bin/bash
# dev_session40.sh STEP - device runs of the fortieth session; one step a call; logs under
# $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the
# functions are tools/exp/dev_lib.sh's. Carried: build/c40.tar.xz (`bash
# tools/exp/dev_session40.sh pack`), build/devlib, build/h100.sql.xz.
#   fine    (issue 16) tools/exp/axis_cols_fine_space.lua on the three column shapes that miss
#           their goals ([4096 x 4096], [65536 x 128], [64 x 2048 x 512]), sum f32 and bf16,
#           into build/fine.db: splits of 32-128 rows beside the shipped winners, one run; the
#           best per CHUNK and per TX of each case (tools/exp/meas_best.py); then the C GPU
#           tests 'api_gpu*' with the time left (the thirty-ninth session's type of the same
#           width was run only in part).
#   qf      (issue 12) the live quality run of local search (tools/strategy_quality.sh, CASES=wide,
#           local:12%,6) with the neighbourhood order of the thirty-ninth session (the steps
#           that helped first), then the C GPU tests 'seg_*' with the time left.
step=${1:?step: pack, fine, qf}
. "$(dirname "$0")/dev_lib.sh"
dev_start c40 "$step"
fine_tune() {
    local t0
    t0=$(date +%s)
    timeout "$1" build/redtune --device 0 --axis --op sum --type "$2" --db build/fine.db \
        --shapes '1,4096,4096;1,65536,128;64,2048,512' --space tools/exp/axis_cols_fine_space.lua \
        > "$L/fine_$2.log" 2>&1
    echo "redtune --axis --op sum --type $2 (fine space): exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    grep -E 'configs measured' "$L/fine_$2.log" | tail -n 1 >> "$S"
}
case $step in
fine)
    fine_tune 130 f32
    fine_tune 130 bf16
    build/redtune measurements --db build/fine.db --format csv > "$OUT/fine_meas.csv"
    for by in CHUNK TX CV; do
        echo "best per $by:" >> "$S"
        python3 tools/exp/meas_best.py "$OUT/fine_meas.csv" --by $by >> "$S" 2>&1
    done
    gzip -9 "$OUT/fine_meas.csv"
    build/redtune export --db build/fine.db --match H100 -o "$OUT/fine_ship.db" --force >> "$S" 2>&1
    fits 60 "api_gpu tests" && tests 'api_gpu*' $(( ${DEV_CAP:-560} - ($(date +%s) - DEV_T0) - 5 )) ;;
qf)
    t0=$(date +%s)
    OUT=$OUT/quality CASES=wide STRATEGIES="local:12%,6" timeout 330 bash tools/strategy_quality.sh \
        > "$L/quality.log" 2>&1
    echo "strategy_quality.sh wide local:12%,6: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    tail -n 45 "$L/quality.log" >> "$S"
    fits 60 "seg tests" && tests 'seg_*' $(( ${DEV_CAP:-560} - ($(date +%s) - DEV_T0) - 5 )) ;;
esac
dev_end
