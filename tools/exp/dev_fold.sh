#!/bin/bash
# dev_fold.sh - device run of the twelfth session (issue 15): the last block's fold with its
# loads in flight (bench/results/session12-2026-11-27/fold_batch.patch on
# templates/collectives.cuh; tried, not kept) against the fold one load at a time. Carried:
# build/redtune (built with the patch), build/before/redtune (without; both stripped),
# build/tests/all (with the patch), build/devlib. Each case is tuned over gridstride's configs
# by both binaries, alternated A B A B, into its own database; every config's median goes to
# $OUT/meas_{before,after}_{1,2}.csv (compared per config by the table in docs/results.md,
# twelfth session). Then the flat families' GPU tests (gpu_*, TESTS=pattern). Logs: $OUT.
export LD_LIBRARY_PATH=$PWD/build/devlib
L=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$L/smi.txt"
cases="sum:bf16:2^20,2^24,2^28 sum:f32:2^20,2^24,2^26 amax:bf16:2^28 var_mean:f32:2^26 argmax:f32:2^26"
for round in 1 2; do
  for b in before after; do
    bin=build/redtune; [ $b = before ] && bin=build/before/redtune
    for c in $cases; do
      IFS=: read -r op ty sizes <<< "$c"
      timeout 120 $bin --device 0 --op $op --type $ty --sizes $sizes --family gridstride \
        --db "$L/${b}_$round.db" >> "$L/tune_${b}_$round.log" 2>&1 || echo "tune $b $round $c: exit $?" >> "$L/sum.txt"
    done
  done
done
for b in before after; do for r in 1 2; do
  build/redtune measurements --db "$L/${b}_$r.db" --format csv > "$L/meas_${b}_$r.csv" 2>&1
done; done
rm -f "$L"/*.db
t0=$(date +%s)
REDTUNE_TEST_FILTER="${TESTS:-gpu_*}" CMOCKA_MESSAGE_OUTPUT=TAP timeout "${TEST_LIMIT:-200}" build/tests/all gpu > "$L/tests.txt" 2>&1
echo "tests '${TESTS:-gpu_*}': exit $? ($(( $(date +%s) - t0 )) s): $(grep -c '^ok' "$L/tests.txt") ok, $(grep '^not ok' "$L/tests.txt" | grep -vc SKIP) not ok" >> "$L/sum.txt"
grep -A8 '^not ok' "$L/tests.txt" | grep -v SKIP | head -20 >> "$L/sum.txt"
(cd "$L" && tar czf logs.tgz tune_*.log tests.txt && rm -f tune_*.log tests.txt)
cat "$L/sum.txt"
