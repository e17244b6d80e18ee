#!/bin/bash
# dev_cols_check.sh - device run of the thirteenth session (issue 16), after the column shapes'
# retune (`tools/gpu_verify.sh cols`) was merged into db/tuned/h100.sql: redtune_bench --axis
# (sum f32 and bf16, cold) with the database before the merge and after it, A B A B in one
# call; bench/torch_axis.py (eager, Inductor, redtune) with the new one; the C axis GPU tests;
# the Python axis GPU tests. The old database: build/old_axis.db where carried (the commit
# before's axis winners alone: `redtune load` of its h100.sql, then every best row but the
# axis ones, the kernels no row needs and every CUBIN deleted), else the new one less the rows
# of the device NEW_UUID (for a merge that added a row of its own; tools/ship_into_row.py
# merges into the shipped row instead). Carried: build/redtune, build/bench/redtune_bench,
# build/tests/all (stripped), build/devlib, build/python (without its redtune.db: `ninja
# python` first), build/pyt for pytest. Arguments: the steps to run (bench torch tests pytest;
# default all). Logs and CSVs: $OUT (a tarball and sum.txt).
export LD_LIBRARY_PATH=$PWD/build/devlib
[ -d build/pyt ] && export PYTHONPATH=$PWD/build/pyt
steps="$*"   # any of bench torch tests pytest (default: all)
L=$OUT/logs
mkdir -p "$L"
build/redtune load --force -o build/redtune.db db/tuned/*.sql > /dev/null
cp build/redtune.db /tmp/new.db
if [ -n "$steps" ] && [[ " $steps " != *" bench "* ]]; then
  :   # no bench: no old database
elif [ -f build/old_axis.db ]; then
  # The axis winners of the commit before, alone (no CUBINs: compiled at the first call).
  cp build/old_axis.db /tmp/old.db
else
  cp build/redtune.db /tmp/old.db
  python3 - "${NEW_UUID:?the uuid of the device row the merge added}" <<'PY'
import sqlite3, sys
db = sqlite3.connect("/tmp/old.db")
n = db.execute("DELETE FROM best WHERE device_id = (SELECT id FROM devices WHERE uuid = ?)",
               (sys.argv[1],)).rowcount
db.commit()
print(f"old.db: {n} best rows of {sys.argv[1]} deleted")
PY
fi
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ -z "$steps" ] || [[ " $steps " == *" bench "* ]]; then
  for r in 1 2; do
    for v in old new; do
      t0=$(date +%s)
      timeout 100 build/bench/redtune_bench --db /tmp/$v.db --axis --ops sum --types f32,bf16 \
        --csv "$L/axis_${v}_$r.csv" > "$L/axis_${v}_$r.log" 2>&1
      echo "bench --axis $v run $r: exit $? ($(( $(date +%s) - t0 )) s)"
    done
  done
fi
if [ -z "$steps" ] || [[ " $steps " == *" torch "* ]]; then
  cp build/redtune.db build/python/redtune/redtune.db
  t0=$(date +%s)
  PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/build/python timeout 200 python3 -P bench/torch_axis.py \
    --db /tmp/new.db --csv "$L/torch_axis.csv" > "$L/torch_axis.log" 2> "$L/torch_axis.err"
  echo "torch_axis.py: exit $? ($(( $(date +%s) - t0 )) s)"
fi
if [ -z "$steps" ] || [[ " $steps " == *" tests "* ]]; then
  t0=$(date +%s)
  REDTUNE_TEST_FILTER='*axis*' CMOCKA_MESSAGE_OUTPUT=TAP timeout 200 build/tests/all gpu > "$L/axis_tests.log" 2>&1
  echo "C GPU tests '*axis*': exit $? ($(( $(date +%s) - t0 )) s): $(grep -c '^ok' "$L/axis_tests.log") ok, $(grep '^not ok' "$L/axis_tests.log" | grep -vc SKIP) not ok"
  grep -A8 '^not ok' "$L/axis_tests.log" | grep -v SKIP | head -12
fi
if [ -z "$steps" ] || [[ " $steps " == *" pytest "* ]]; then
  cp build/redtune.db build/python/redtune/redtune.db
  t0=$(date +%s)
  PYTHONPATH=$PWD/build/python:$PWD/python/tests${PYTHONPATH:+:$PYTHONPATH} \
    PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 timeout "${PYTEST_TIMEOUT:-150}" python3 -P -m pytest -q \
    -p no:cacheprovider -k 'axis or dim' python/tests/test_gpu.py > "$L/pytest_axis.log" 2>&1
  echo "python axis GPU tests: exit $? ($(( $(date +%s) - t0 )) s): $(tail -n 1 "$L/pytest_axis.log")"
  grep -E '^(FAILED|ERROR)' "$L/pytest_axis.log" | head -20
fi
} > "$OUT/sum.txt" 2>&1
tar czf "$OUT/cols_check.tgz" -C "$L" .
rm -rf "$L"
cat "$OUT/sum.txt"
