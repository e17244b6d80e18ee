#!/bin/bash
# dev_session39.sh STEP - device runs of the thirty-ninth session; one step a call; logs under
# $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the
# functions are tools/exp/dev_lib.sh's. Carried: build/c36.tar.xz (`bash
# tools/exp/dev_session36.sh pack`), build/devlib, build/h100.sql.xz.
#   qf      (an H100) issue 12's live quality run of local search (tools/strategy_quality.sh,
#           CASES=wide, local:12%,6), not run live since the twentieth session; then the H100's
#           offsets len1 min f64 row at 30M, which run 1's ship measured (seg_pipe 212.9 us
#           against the shipped seg_per's 255.9) but cut short before it was exported, merged;
#           the bench over len1 min f64, the committed database against the merge, A B A B.
step=${1:?step: qf}
. "$(dirname "$0")/dev_lib.sh"
dev_start c36 "$step"
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
*H200*) dev=H200 uuid=8b59dd2a77fc5356c5b5d639fc1cc192 ;;
*) dev=H100 uuid=2e956071d0b02214c4c501b293bccefc ;;
esac
case $step in
qf)
    t0=$(date +%s)
    OUT=$OUT/quality CASES=wide STRATEGIES="local:12%,6" timeout 330 bash tools/strategy_quality.sh \
        > "$L/quality.log" 2>&1
    echo "strategy_quality.sh wide local:12%,6: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    tail -n 45 "$L/quality.log" >> "$S"
    fits 150 "len1 min f64" && SHIP_LIMIT=90 tune_rows $dev $uuid len1 30M min:f64 \
        && fits 50 "bench len1" && seg_ab m shipped merged build/bench/redtune_bench "$T" \
        build/bench/redtune_bench build/merged.db 40 offsets \
        --profiles len1 --ops min --types f64 --sizes 30M ;;
esac
dev_end
