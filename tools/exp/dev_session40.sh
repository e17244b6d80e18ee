#!/bin/bash
# dev_session40.sh STEP - device runs of the fortieth session; one step a call; logs under
# $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the
# functions are tools/exp/dev_lib.sh's. Carried: build/c40.tar.xz (`bash
# tools/exp/dev_session40.sh pack`), build/devlib, build/h100.sql.xz.
#   fine    (issue 16) tools/exp/axis_cols_fine_space.lua on the three column shapes that miss
#           their goals ([4096 x 4096], [65536 x 128], [64 x 2048 x 512]), sum f32 and bf16,
#           into build/fine.db: splits of 32-128 rows beside the shipped winners, one run; the
#           best per CHUNK and per TX of each case (tools/exp/meas_best.py); then the C GPU
#           tests 'api_gpu*' with the time left (the thirty-ninth session's type of the same
#           width was run only in part).
#   qf      (issue 12) the live quality run of local search (tools/strategy_quality.sh, CASES=wide,
#           local:12%,6) with the neighbourhood order of the thirty-ninth session (the steps
#           that helped first), then the C GPU tests 'seg_*' with the time left.
#   last    (issue 15) tools/exp/fixed_cost_space.lua for sum, sumsq, var_mean and argmax f32 at
#           2^16 .. 2^26 (tools/exp/fixed_cost.py: each operator's fixed part and time per MiB
#           with one kernel shape); (issue 16) bench/torch_axis.py for every operator it has
#           with the committed database (the "never slower than eager and Inductor" row, last
#           measured in the eighteenth session); then the Python GPU tests with the time left.
#           Carried also: build/python (`ninja python`, without its redtune.db) and build/pyt
#           (Debian's pytest, pluggy, iniconfig and py from /usr/lib/python3/dist-packages).
#   combine (issue 15; carried: build/c40.tar.xz, the binaries before, and build/c41.tar.xz,
#           `bash tools/exp/dev_session40.sh pack41`, after) argmin/argmax's and var_mean's
#           combines as one select instead of early returns (f32 var_mean: the fast division):
#           tools/exp/fixed_cost_space.lua for var_mean and argmax f32 at 2^16 .. 2^26, the
#           tuner before and after, A B A B (each run its own database), fixed_cost.py of each;
#           then the C GPU tests 'gpu_run_*', 'gpu_types*' and '*axis*' with the time left.
#   verify  (written for the next session: the device time ran out; carried as combine) issue
#           15's table through redtune_bench --type-cases, the goal's instrument, with the
#           bench before (c40) and after (c41) the select combines, the committed database
#           (its CUBINs refreshed for c41's units; c40's compiles its own at the first call,
#           outside the timing), A B A B; then the C GPU tests 'seg_types*' (the segmented
#           layouts of the issue 15 operators) and '*var*', which run 4 left out.
step=${1:?step: pack, pack41, fine, qf, last, combine, verify}
. "$(dirname "$0")/dev_lib.sh"
dev_start_pair c40 c41 "$step" combine verify
case $step in
fine)
    for t in f32 bf16; do
        RETUNE_DB=build/fine.db RETUNE_SPACE=tools/exp/axis_cols_fine_space.lua \
            retune 130 sum $t '1,4096,4096;1,65536,128;64,2048,512'
    done
    build/redtune measurements --db build/fine.db --format csv > "$OUT/fine_meas.csv"
    for by in CHUNK TX CV; do
        echo "best per $by:" >> "$S"
        python3 tools/exp/meas_best.py "$OUT/fine_meas.csv" --by $by >> "$S" 2>&1
    done
    gzip -9 "$OUT/fine_meas.csv"
    build/redtune export --db build/fine.db --match H100 -o "$OUT/fine_ship.db" --force >> "$S" 2>&1
    fits 60 "api_gpu tests" && tests 'api_gpu*' $(left) ;;
qf)
    quality "local:12%,6"
    fits 60 "seg tests" && tests 'seg_*' $(left) ;;
last)
    tune_each fixed 60 2^16,2^18,2^20,2^22,2^24,2^26 tools/exp/fixed_cost_space.lua \
        sum:f32 sumsq:f32 var_mean:f32 argmax:f32
    build/redtune measurements --db build/fixed.db --format csv > "$OUT/fixed_meas.csv"
    python3 tools/exp/fixed_cost.py "$OUT/fixed_meas.csv" >> "$S" 2>&1
    gzip -9 "$OUT/fixed_meas.csv"
    TORCH_LIMIT=300 torch_axis --ops sum,min,max,argmax,mean,var_mean
    sed -n '/^sum along/,$p' "$L/torch_axis.log" >> "$S"
    fits 60 "python GPU tests" && pytests all $(left) ;;
combine)
    for r in 1 2; do
        for v in old new; do
            bin=build/redtune
            [ $v = old ] && bin=build/old/redtune
            TUNE_BIN=$bin tune_each cmb_${v}_$r 60 2^16,2^18,2^20,2^22,2^24,2^26 \
                tools/exp/fixed_cost_space.lua var_mean:f32 argmax:f32
            build/redtune measurements --db build/cmb_${v}_$r.db --format csv > "$OUT/cmb_${v}_$r.csv"
            echo "== $v, run $r" >> "$S"
            python3 tools/exp/fixed_cost.py "$OUT/cmb_${v}_$r.csv" | sed -n '/^op: best/,$p' >> "$S" 2>&1
        done
    done
    gzip -9 "$OUT"/cmb_*.csv
    tests 'gpu_run_*' 60
    fits 60 "gpu_types tests" && tests 'gpu_types*' 120
    fits 60 "axis tests" && tests '*axis*' $(left) ;;
verify)
    tc_ab 90 'var_mean|argmax|sumsq|amax|sum '
    tests 'seg_types*' 120
    fits 60 "var tests" && tests '*var*' 100 ;;
esac
dev_end
