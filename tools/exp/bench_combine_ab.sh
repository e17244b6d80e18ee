#!/bin/bash
# bench_combine_ab.sh - (written in the fortieth session, not yet run: the session's device
# time ran out) issue 15's var_mean and argmax f32 at 2^26 through redtune_bench
# --type-cases, the goal's instrument, with the binaries before (build/c40.tar.xz) and after
# (build/c41.tar.xz) the select combines of runtime/glue.c, the committed database, A B A B,
# cold. The database's CUBINs were made before the change, so the build after compiles its
# units with NVRTC at their first call (outside the timing). Carried: build/c40.tar.xz,
# build/c41.tar.xz, build/devlib, build/h100.sql.xz; logs and CSVs under $OUT.
#   OUT=dir bash tools/exp/bench_combine_ab.sh
set -u
export LD_LIBRARY_PATH=$PWD/build/devlib
mkdir -p /tmp/o /tmp/n && tar -C /tmp/o -xJf build/c40.tar.xz && tar -C /tmp/n -xJf build/c41.tar.xz
[ -f db/tuned/h100.sql ] || xz -dc build/h100.sql.xz > db/tuned/h100.sql
/tmp/n/redtune load --force -o /tmp/t.db db/tuned/*.sql > /dev/null
for r in 1 2; do
    for v in o n; do
        timeout 40 /tmp/$v/bench/redtune_bench --db /tmp/t.db --type-cases --ops var_mean,argmax \
            --types f32 --sizes 2^26 --regimes cold --csv "$OUT/tc_${v}_$r.csv" > "$OUT/tc_${v}_$r.log" 2>&1
        echo "$v $r: exit $?"
        grep -iE "var_mean|argmax" "$OUT/tc_${v}_$r.log" | head -4
    done
done
