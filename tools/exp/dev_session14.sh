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
#   c  after IL = 2 unsplit became IL = 1's code and the bf16 [2^20 x 16] winner was merged:
#      redtune_bench --axis with the axis winners of the session's start (build/old_axis.db)
#      against db/tuned, A B A B, and the C axis GPU tests (dev_cols_check.sh bench tests);
#      then 256 MiB of f32 as 1, 4, 16 and 64 split rows (tools/exp/axis_rows_fronts_space.lua,
#      the best per shape; measurements to $OUT/fronts_meas.csv).
#   d  the Python side: bench/torch_axis.py and the Python axis GPU tests (dev_cols_check.sh
#      torch pytest; build/python staged by `ninja python`, carried without its redtune.db,
#      build/pyt); then rt_seg_fix's __launch_bounds__(B, 1): the segmented C GPU tests.
#   e  rt_seg_fix's change: `seg_harness --quick`, then timed: redtune_bench --segmented offsets|keys, min and sum f32,
#      the build before it (build/bench_before/redtune_bench) and after, A B A B.
#   f  256 MiB of f32 by axis_rows (16 rows, 1 row) and by gridstride, and the 3-D bf16 shape
#      by axis_cols unsplit (tools/exp/axis_il_unsplit_space.lua), with the streaming hint and
#      without (REDTUNE_LOADS=keep), A B A B; measurements to $OUT/loads_meas.csv.
# Carried: build/redtune, build/tests/all, build/bench/redtune_bench, build/seg_harness
# (stripped), build/devlib, build/old_axis.db (a: all; later parts what they add: ignored build
# outputs stay on the warm machine between calls).
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
c)
  mkdir -p "$L/check"
  OUT=$L/check bash tools/exp/dev_cols_check.sh bench tests > /dev/null 2>&1
  cat "$L/check/sum.txt" >> "$S"
  t0=$(date +%s)
  timeout 240 build/redtune --device 0 --axis --op sum --type f32 --db "$L/fronts.db" \
    --shapes "1,67108864,1;4,16777216,1;16,4194304,1;64,1048576,1" \
    --space tools/exp/axis_rows_fronts_space.lua > "$L/fronts.log" 2>&1
  echo "fronts (256 MiB f32 as 1, 4, 16, 64 rows): exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
  build/redtune measurements --db "$L/fronts.db" --format csv > "$OUT/fronts_meas.csv"
  rm -f "$L/fronts.db"
  python3 tools/exp/meas_best.py "$OUT/fronts_meas.csv" >> "$S"
  ;;
d)
  mkdir -p "$L/check"
  OUT=$L/check PYTEST_TIMEOUT=240 bash tools/exp/dev_cols_check.sh torch pytest > /dev/null 2>&1
  cat "$L/check/sum.txt" >> "$S"
  t0=$(date +%s)
  REDTUNE_TEST_FILTER='seg_*' CMOCKA_MESSAGE_OUTPUT=TAP timeout 280 build/tests/all gpu > "$L/seg_tests.log" 2>&1
  echo "C GPU tests 'seg_*': exit $? ($(( $(date +%s) - t0 )) s): $(grep -c '^ok' "$L/seg_tests.log") ok, $(grep '^not ok' "$L/seg_tests.log" | grep -vc SKIP) not ok" >> "$S"
  grep -A12 '^not ok' "$L/seg_tests.log" | grep -v SKIP | head -20 >> "$S"
  ;;
e)
  t0=$(date +%s)
  timeout 150 build/seg_harness --quick > "$L/seg_harness_quick.log" 2>&1
  echo "seg_harness --quick: exit $? ($(( $(date +%s) - t0 )) s): $(tail -n 1 "$L/seg_harness_quick.log")" >> "$S"
  build/redtune load --force -o build/redtune.db db/tuned/*.sql > /dev/null
  # (run 6 had this loop written out here; the same runs, files seg_LAYOUT_V_R.csv)
  BENCH2_ROUNDS=2 BENCH2_API=0 OUT=$L bash tools/gpu_verify.sh bench2 >> "$S" 2>&1
  ;;
f)
  # The same 256 MiB of f32 read by axis_rows (16 rows and 1) and by gridstride (flat), and
  # the 3-D bf16 shape, each with the streaming hint (REDTUNE_LOADS=stream, the default) and
  # without (keep), A B A B.
  for r in 1 2; do
    for loads in stream keep; do
      REDTUNE_LOADS=$loads timeout 120 build/redtune --device 0 --axis --op sum --type f32 \
        --db "$L/rows_${loads}_$r.db" --shapes "16,4194304,1;1,67108864,1" \
        --space tools/exp/axis_rows_fronts_space.lua > "$L/rows_${loads}_$r.log" 2>&1
      echo "rows $loads run $r: exit $?" >> "$S"
      REDTUNE_LOADS=$loads timeout 120 build/redtune --device 0 --op sum --type f32 \
        --db "$L/flat_${loads}_$r.db" --sizes 67108864 \
        --space tools/exp/gridstride_loads_space.lua > "$L/flat_${loads}_$r.log" 2>&1
      echo "flat $loads run $r: exit $?" >> "$S"
      REDTUNE_LOADS=$loads timeout 120 build/redtune --device 0 --axis --op sum --type bf16 \
        --db "$L/cols_${loads}_$r.db" --shapes 64,2048,512 \
        --space tools/exp/axis_il_unsplit_space.lua > "$L/cols_${loads}_$r.log" 2>&1
      echo "3-D bf16 $loads run $r: exit $?" >> "$S"
      for d in rows flat cols; do
        build/redtune measurements --db "$L/${d}_${loads}_$r.db" --format csv \
          | sed "s/\r\$//; s/\$/,$loads,$r/" > "$L/${d}_${loads}_$r.csv"
        rm -f "$L/${d}_${loads}_$r.db"
      done
    done
  done
  cat "$L"/*.csv > "$OUT/loads_meas.csv"
  python3 tools/exp/meas_best.py "$OUT/loads_meas.csv" --tags 2 >> "$S"
  ;;
esac
tar czf "$OUT/logs_$part.tgz" -C "$L" .
rm -rf "$L"
cat "$S"
