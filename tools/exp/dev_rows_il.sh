#!/bin/bash
# dev_rows_il.sh - device run of the twelfth session (issue 16): axis_rows's interleaved splits
# (IL = 1) against contiguous parts (IL = 0), in pairs over tools/exp/axis_il_space.lua, on
# [16 x 2^22] rows, sum f32 and bf16; then the axis GPU tests of the operators that take
# axis_rows. Carried: build/redtune, build/tests/all (stripped), build/devlib. Logs: $OUT.
export LD_LIBRARY_PATH=$PWD/build/devlib
L=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$L/smi.txt"
for ty in f32 bf16; do
  timeout 150 build/redtune --device 0 --axis --shapes 16,4194304,1 --op sum --type $ty \
    --space tools/exp/axis_il_space.lua --db "$L/il.db" > "$L/tune_$ty.log" 2>&1
  echo "tune $ty: exit $?" >> "$L/sum.txt"
done
build/redtune measurements --db "$L/il.db" --format csv > "$L/il_meas.csv" 2>&1
rm -f "$L/il.db"
for f in 'axis_RT_SUM_*' 'axis_RT_ARGMAX_RT_F32' 'axis_RT_MAX_RT_BF16' 'axis_order_kept'; do
  REDTUNE_TEST_FILTER="$f" CMOCKA_MESSAGE_OUTPUT=TAP timeout 100 build/tests/all gpu > "$L/t.log" 2>&1
  echo "tests '$f': exit $?: $(grep -c '^ok' "$L/t.log") ok, $(grep '^not ok' "$L/t.log" | grep -vc SKIP) not ok" >> "$L/sum.txt"
  grep -A8 '^not ok' "$L/t.log" | grep -v SKIP | head -12 >> "$L/sum.txt"
  cat "$L/t.log" >> "$L/tests.log"
done
rm -f "$L/t.log"
cat "$L/sum.txt"
