#!/bin/bash
# dev_evict.sh - device run of the eighth session (issue 16): the streaming load hint
# (__ldcs, evict-first) against the read-only loads it replaced, with the L2 flushed by a
# read (clean lines, the tuner's method) and by a write (dirty lines, PyTorch's method).
# Carried: build/redtune, build/bench/redtune_bench (this tree), build/old/redtune_bench
# (the same bench built from the commit before the hint), build/exp/evict
# (nvcc -O3 -arch=sm_90 -std=c++17 -o build/exp/evict tools/exp/evict.cu), build/pyc (the
# Python package without its database), build/devlib. Logs: $OUT/logs.tgz, summary last.
# Steps (arguments): micro axis flat small torch types seg keep, tests1 (the C GPU tests of the flat
# families and the library), tests2 (the segmented and axis ones, the Python GPU tests; build/pyt
# carried for pytest).
export LD_LIBRARY_PATH=$PWD/build/devlib REDTUNE_BIN=$PWD/build/redtune
if [ -d build/pyc ]; then rm -rf build/python && mv build/pyc build/python; fi
build/redtune load --force -o build/redtune.db db/tuned/*.sql > /dev/null
cp build/redtune.db build/python/redtune/redtune.db
L=$OUT/logs; mkdir -p "$L"; S=$L/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$L/smi.txt"
for step in "$@"; do
  t0=$(date +%s)
  case $step in
  micro)
    timeout 120 build/exp/evict > "$L/evict.txt" 2>&1; echo "== micro: exit $?" >> "$S"
    cat "$L/evict.txt" >> "$S" ;;
  axis)
    for b in new old; do for fl in read write; do
      bin=build/bench/redtune_bench; [ $b = old ] && bin=build/old/redtune_bench
      timeout 200 $bin --db build/redtune.db --axis --ops sum --types f32,bf16 --regimes cold \
        --flush $fl --csv "$L/axis_${b}_$fl.csv" > "$L/axis_${b}_$fl.log" 2>&1
      echo "== axis $b flush $fl: exit $?" >> "$S"
    done; done ;;
  flat)
    for b in new old; do for fl in read write; do
      bin=build/bench/redtune_bench; [ $b = old ] && bin=build/old/redtune_bench
      timeout 200 $bin --db build/redtune.db --sizes 2^20,2^22,2^24,2^26,2^28 --ops min,sum \
        --types f32 --regimes cold,hot --flush $fl --csv "$L/flat_${b}_$fl.csv" \
        > "$L/flat_${b}_$fl.log" 2>&1
      echo "== flat $b flush $fl: exit $?" >> "$S"
    done; done ;;
  torch)
    for fl in write read; do
      PYTHONPATH=$PWD/build/python timeout 280 python3 -P bench/torch_axis.py --flush $fl \
        --read-gbps "${READ_GBPS:-3205.4}" --csv "$L/torch_$fl.csv" > "$L/torch_$fl.log" 2> "$L/torch_$fl.err"
      echo "== torch_axis --flush $fl: exit $?" >> "$S"
      sed -n '/^sum along the axis/,$p' "$L/torch_$fl.log" >> "$S"
    done ;;
  keep)   # REDTUNE_LOADS=keep: the GPU tests under it, the bench with and without it
    for f in 'gpu_*' 'axis_RT_SUM_*' 'seg_RT_SUM_*'; do
      t1=$(date +%s); log="$L/keep_tests_$(echo "$f" | tr -d '*').log"
      REDTUNE_LOADS=keep REDTUNE_TEST_FILTER="$f" CMOCKA_MESSAGE_OUTPUT=TAP timeout 200 build/tests/all gpu > "$log" 2>&1
      echo "== keep: C GPU tests '$f': exit $? ($(( $(date +%s) - t1 )) s): $(grep -c '^ok' "$log") ok, $(grep '^not ok' "$log" | grep -vc SKIP) not ok" >> "$S"
      grep -A12 -E '^not ok' "$log" | grep -v SKIP | head -30 >> "$S"
    done
    for f in 'axis_RT_SUM_*' 'seg_RT_SUM_*'; do
      t1=$(date +%s); log="$L/stream_tests_$(echo "$f" | tr -d '*').log"
      REDTUNE_TEST_FILTER="$f" CMOCKA_MESSAGE_OUTPUT=TAP timeout 200 build/tests/all gpu > "$log" 2>&1
      echo "== stream: C GPU tests '$f': exit $? ($(( $(date +%s) - t1 )) s): $(grep -c '^ok' "$log") ok, $(grep '^not ok' "$log" | grep -vc SKIP) not ok" >> "$S"
      grep -A12 -E '^not ok' "$log" | grep -v SKIP | head -30 >> "$S"
    done
    for v in stream keep; do for fl in read write; do
      REDTUNE_LOADS=$v timeout 100 build/bench/redtune_bench --db build/redtune.db --sizes 2^22,2^24 \
        --ops min,sum --types f32 --regimes cold,hot --flush $fl --csv "$L/keep_${v}_$fl.csv" \
        > "$L/keep_${v}_$fl.log" 2>&1
      echo "== flat REDTUNE_LOADS=$v flush $fl: exit $?" >> "$S"
      grep -E "^ *(min|sum) " "$L/keep_${v}_$fl.log" | head -8 >> "$S"
    done; done
    REDTUNE_LOADS=Keep PYTHONPATH=$PWD/build/python python3 -c "
import torch, redtune
try:
    redtune.sum(torch.ones(1000, device='cuda')); print('python: no error')
except redtune.InvalidArgumentError as err:
    print('python: InvalidArgumentError:', err)" >> "$S" 2>&1 ;;
  small)
    for b in new old; do
      bin=build/bench/redtune_bench; [ $b = old ] && bin=build/old/redtune_bench
      timeout 150 $bin --db build/redtune.db --sizes 2^10,2^12,2^14,2^16 --ops min,sum \
        --types f32,f64,i32 --regimes cold --csv "$L/small_$b.csv" > "$L/small_$b.log" 2>&1
      echo "== flat small n $b: exit $?" >> "$S"
    done ;;
  seg)
    for b in new old; do for l in offsets keys; do
      bin=build/bench/redtune_bench; [ $b = old ] && bin=build/old/redtune_bench
      timeout 100 $bin --db build/redtune.db --segmented $l --ops min,sum --types f32 \
        --regimes cold --csv "$L/seg_${l}_$b.csv" > "$L/seg_${l}_$b.log" 2>&1
      echo "== seg $l $b: exit $?" >> "$S"
    done; done ;;
  tests1|tests2)
    pats="gpu_* api_gpu*"; [ $step = tests2 ] && pats="*seg* *axis*"
    pats=${PATS:-$pats}   # PATS="": the Python tests alone (tests2)
    for f in $pats; do
      [ "$f" = none ] && continue
      t1=$(date +%s); log="$L/tests_$(echo "$f" | tr -d '*').log"
      REDTUNE_TEST_FILTER="$f" CMOCKA_MESSAGE_OUTPUT=TAP timeout "${TEST_LIMIT:-250}" build/tests/all gpu > "$log" 2>&1
      echo "== C GPU tests '$f': exit $? ($(( $(date +%s) - t1 )) s): $(grep -c '^ok' "$log") ok, $(grep '^not ok' "$log" | grep -vc SKIP) not ok" >> "$S"
      grep -A12 -E '^not ok' "$log" | grep -v SKIP | head -30 >> "$S"
    done
    if [ $step = tests2 ]; then
      t1=$(date +%s)
      PYTHONPATH=$PWD/build/python:$PWD/python/tests:$PWD/build/pyt PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 \
        timeout "${PYTEST_LIMIT:-200}" python3 -P -m pytest -q -p no:cacheprovider python/tests/test_gpu.py \
        > "$L/pytest_gpu.log" 2>&1
      echo "== python GPU tests: exit $? ($(( $(date +%s) - t1 )) s): $(tail -n 1 "$L/pytest_gpu.log")" >> "$S"
      grep -E '^(FAILED|ERROR)' "$L/pytest_gpu.log" | head -10 >> "$S"
    fi ;;
  types)
    for b in new old; do for fl in read write; do
      bin=build/bench/redtune_bench; [ $b = old ] && bin=build/old/redtune_bench
      timeout 200 $bin --db build/redtune.db --type-cases --flush $fl \
        --csv "$L/types_${b}_$fl.csv" > "$L/types_${b}_$fl.log" 2>&1
      echo "== types $b flush $fl: exit $?" >> "$S"
    done; done ;;
  esac
  echo "   ($step: $(( $(date +%s) - t0 )) s)" >> "$S"
done
(cd "$L" && tar czf "$OUT/logs.tgz" .)
cp "$S" "$OUT/summary.txt"
cat "$S"
