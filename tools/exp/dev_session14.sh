#!/bin/bash
# dev_session14.sh a|b - device runs of the fourteenth session (issues 14, 16, 12), each part a
# call of its own on one warm H100; everything under $OUT/logs, packed into one tarball, a
# summary ($OUT/sum.txt) printed last.
#   a  seg_stream's no-start tile folded by co_warp_tree<32> (thirteenth session, compiled
#      only): `seg_harness --only seg_stream` and the segmented C GPU tests ('seg_*'); then
#      axis_cols IL = 1 against IL = 2 without splits (tools/exp/dev_axis_walk.sh unsplit);
#      then redtune_bench --axis with the axis winners of the commit before the thirteenth
#      session's merge (build/old_axis.db) against db/tuned, A B A B (dev_cols_check.sh bench):
#      the rows' IL = 1 winners through the library for the first time.
#   b  bf16 [2^20 x 16] columns, the default space exhaustively (the thirteenth session's
#      retune stopped there by its limit): tools/gpu_verify.sh cols, winners to cols_ship.db.
# Carried: build/redtune, build/tests/all, build/bench/redtune_bench, build/seg_harness
# (stripped), build/devlib, build/old_axis.db.
part=${1:?part: a or b}
export LD_LIBRARY_PATH=$PWD/build/devlib
L=$OUT/logs
mkdir -p "$L"
S=$OUT/sum.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader > "$S"
date -u +%Y-%m-%dT%H:%M:%SZ >> "$S"
case $part in
a)
  t0=$(date +%s)
  timeout 120 build/seg_harness --only seg_stream > "$L/seg_harness.log" 2>&1
  echo "seg_harness --only seg_stream: exit $? ($(( $(date +%s) - t0 )) s): $(tail -n 1 "$L/seg_harness.log")" >> "$S"
  t0=$(date +%s)
  REDTUNE_TEST_FILTER='seg_*' CMOCKA_MESSAGE_OUTPUT=TAP timeout 150 build/tests/all gpu > "$L/seg_tests.log" 2>&1
  echo "C GPU tests 'seg_*': exit $? ($(( $(date +%s) - t0 )) s): $(grep -c '^ok' "$L/seg_tests.log") ok, $(grep '^not ok' "$L/seg_tests.log" | grep -vc SKIP) not ok" >> "$S"
  grep -A12 '^not ok' "$L/seg_tests.log" | grep -v SKIP | head -20 >> "$S"
  mkdir -p "$L/walk"
  t0=$(date +%s)
  OUT=$L/walk bash tools/exp/dev_axis_walk.sh unsplit > /dev/null 2>&1
  echo "dev_axis_walk.sh unsplit: ($(( $(date +%s) - t0 )) s)" >> "$S"
  cat "$L/walk/sum.txt" >> "$S"
  mkdir -p "$L/check"
  OUT=$L/check bash tools/exp/dev_cols_check.sh bench > /dev/null 2>&1
  cat "$L/check/sum.txt" >> "$S"
  ;;
b)
  COLS_TYPES=bf16 COLS_SHAPES=1,1048576,16 OUT=$L bash tools/gpu_verify.sh cols > "$L/cols.txt" 2>&1
  cat "$L/cols.txt" >> "$S"
  mv "$L/cols_ship.db" "$L/cols_meas.csv.gz" "$OUT/" 2>/dev/null
  ;;
esac
tar czf "$OUT/logs_$part.tgz" -C "$L" .
rm -rf "$L"
cat "$S"
