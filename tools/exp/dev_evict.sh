#!/bin/bash
# dev_evict.sh - device run of the eighth session (issue 16): the streaming load hint
# (__ldcs, evict-first) against the read-only loads it replaced, with the L2 flushed by a
# read (clean lines, the tuner's method) and by a write (dirty lines, PyTorch's method).
# Carried: build/redtune, build/bench/redtune_bench (this tree), build/old/redtune_bench
# (the same bench built from the commit before the hint), build/exp/evict
# (nvcc -O3 -arch=sm_90 -std=c++17 -o build/exp/evict tools/exp/evict.cu), build/pyc (the
# Python package without its database), build/devlib. Logs: $OUT/logs.tgz, summary last.
# Steps (arguments): micro axis flat torch types.
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
  types)
    for fl in read write; do
      timeout 200 build/bench/redtune_bench --db build/redtune.db --type-cases --flush $fl \
        --csv "$L/types_$fl.csv" > "$L/types_$fl.log" 2>&1
      echo "== types flush $fl: exit $?" >> "$S"
    done ;;
  esac
  echo "   ($step: $(( $(date +%s) - t0 )) s)" >> "$S"
done
(cd "$L" && tar czf "$OUT/logs.tgz" .)
cp "$S" "$OUT/summary.txt"
cat "$S"
