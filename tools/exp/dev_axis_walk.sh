#!/bin/bash
# dev_axis_walk.sh rows|cols|unsplit - device runs of the twelfth and thirteenth sessions
# (issue 16): the order in which the blocks of an axis reduction read len, the walks timed side
# by side in one run, then the axis GPU tests of the operators that take the walk. Carried:
# build/redtune, build/tests/all (stripped), build/devlib. Logs, the tunings' il_meas.csv and
# sum.txt: $OUT.
#   rows  axis_rows IL = 0 (contiguous parts) against IL = 1 (interleaved rounds) over
#         tools/exp/axis_il_space.lua on [16 x 2^22] rows, sum f32 and bf16 (run on the H100,
#         2026-11-27; docs/results.md, twelfth session)
#   cols  axis_cols IL = 0, 1 and 2 (rows interleaved over the splits) over
#         tools/exp/axis_cols_il_space.lua on the column shapes that split len (run on the
#         H100, 2026-11-27, thirteenth session)
#   unsplit axis_cols IL = 1 against IL = 2 without splits (tools/exp/axis_il_unsplit_space.lua,
#         the 3-D shape; run on the H100, 2026-11-27, fourteenth session: the best equal,
#         U = 1 pairs up to 2.35x slower with IL = 2, since compiled as IL = 1 when CHUNK = 0)
# `python3 tools/exp/il_pairs.py $OUT/il_meas.csv` prints the pairs.
export LD_LIBRARY_PATH=$PWD/build/devlib
L=$OUT
case ${1:-} in
rows) space=tools/exp/axis_il_space.lua; shapes="16,4194304,1"
      tests="axis_RT_SUM_* axis_RT_ARGMAX_RT_F32 axis_order_kept" ;;
cols) space=tools/exp/axis_cols_il_space.lua; shapes="1,32768,1024 1,65536,128 1,4096,4096"
      tests="axis_RT_SUM_* axis_RT_ARGMAX_* axis_RT_MIN_RT_F32 axis_order_kept" ;;
unsplit) space=tools/exp/axis_il_unsplit_space.lua; shapes="64,2048,512"
      tests="axis_RT_SUM_*" ;;
*) echo "usage: dev_axis_walk.sh rows|cols|unsplit" >&2; exit 2 ;;
esac
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$L/smi.txt"
for ty in f32 bf16; do
  for sh in $shapes; do
    timeout 150 build/redtune --device 0 --axis --shapes "$sh" --op sum --type $ty \
      --space $space --db "$L/il.db" >> "$L/tune_$ty.log" 2>&1
    echo "tune $ty $sh: exit $?" >> "$L/sum.txt"
  done
done
build/redtune measurements --db "$L/il.db" --format csv > "$L/il_meas.csv" 2>&1
rm -f "$L/il.db"
for f in $tests; do
  REDTUNE_TEST_FILTER="$f" CMOCKA_MESSAGE_OUTPUT=TAP timeout 150 build/tests/all gpu > "$L/t.log" 2>&1
  echo "tests '$f': exit $?: $(grep -c '^ok' "$L/t.log") ok, $(grep '^not ok' "$L/t.log" | grep -vc SKIP) not ok" >> "$L/sum.txt"
  grep -A8 '^not ok' "$L/t.log" | grep -v SKIP | head -12 >> "$L/sum.txt"
  cat "$L/t.log" >> "$L/tests.log"
done
rm -f "$L/t.log"
cat "$L/sum.txt"
