#!/bin/bash
# dev_session44.sh STEP - device runs of the forty-fourth session; one step a call; logs under
# $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the
# functions are tools/exp/dev_lib.sh's. Carried: build/c45.tar.xz (`bash
# tools/exp/dev_session44.sh pack` at this commit: the 16-bit stores from a float's bits and the
# sweep's time breakdown), build/devlib, build/h100.sql.xz, build/python, build/pyt.
#   q44   (issue 12) the live quality run at local:12%,6 (tools/strategy_quality.sh, CASES=wide)
#         with the 16-bit fills made directly, each case's breakdown of its sweep time
#         (exhaustive's and the strategy's) in the summary; then (issue 14, every n) min, max
#         and sum of f64 and f32 at ragged sizes between 2^10 and 2^11 against CUB (min and
#         max f64 at 1390 and 1641 took 0.5 us longer than at 2^11 with the same kernel).
#   q44p  (issue 12) the same live run with the shipped H100 rows as PRIOR (strategy_quality.sh):
#         local search starting from the same GPU model's winners, as a user's retuning does
#         (the replays: 18 of 19 in each live sweep at 12%,6).
#   py44  (issue 16) the Python GPU tests, the new views-in-another-order test first (x.T,
#         swapaxes: reduced in place), then all of them with the time left.
step=${1:?step: pack, q44, q44p, py44}
. "$(dirname "$0")/dev_lib.sh"
dev_start c45 "$step"
case $step in
q44)
    t0=$(date +%s)
    OUT=$OUT/quality CASES=wide STRATEGIES="local:12%,6" timeout 330 bash tools/strategy_quality.sh \
        > "$L/quality.log" 2>&1
    echo "strategy_quality.sh wide local:12%,6: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    tail -n 24 "$L/quality.log" >> "$S"
    mkdir -p "$L/ql" && tar -C "$L/ql" -xzf "$OUT/quality/logs.tar.gz" 2>/dev/null
    for f in "$L"/ql/logs/exhaustive_*.log "$L"/ql/logs/local_*.log; do
        [ -f "$f" ] || continue
        echo "$(basename "$f" .log): $(grep -h 'redtune: of the' "$f" | sed 's/redtune: of the //')" >> "$S"
    done
    fits 60 "ragged f64" && bench_run ragged 50 --db "$T" --regimes cold --seed 1 \
        --sizes 1024,1200,1390,1500,1641,1800,2047,2048 --ops min,max,sum --types f64,f32 ;;
q44p)
    build/redtune export --db "$T" --match H100 -o build/prior.db --force >> "$S" 2>&1
    t0=$(date +%s)
    PRIOR=build/prior.db OUT=$OUT/quality CASES=wide STRATEGIES="local:12%,6" timeout 400 \
        bash tools/strategy_quality.sh > "$L/quality.log" 2>&1
    echo "strategy_quality.sh wide local:12%,6 PRIOR=H100 rows: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    tail -n 24 "$L/quality.log" >> "$S" ;;
py44)
    pytests views 90 -k views_in_another_order
    fits 120 "python GPU tests" && pytests all $(left) ;;
esac
dev_end
