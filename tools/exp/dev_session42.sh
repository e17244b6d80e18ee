#!/bin/bash
# dev_session42.sh STEP - device runs of the forty-second session; one step a call; logs under
# $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the
# functions are tools/exp/dev_lib.sh's. Carried: build/c42.tar.xz (`bash
# tools/exp/dev_session42.sh pack` at this commit), build/devlib, build/h100.sql.xz,
# build/python (`ninja python`, without its redtune.db), build/pyt (Debian's pytest, pluggy,
# iniconfig and py).
#   py      (issues 16, 15) bench/torch_axis.py for every operator with the committed database
#           (the first run with both the select combines and the forty-first session's retuned
#           mean and var_mean bf16 rows), then the Python GPU tests with the time left.
#   rows    (issue 16) the f32 rows cells that trailed PyTorch (fortieth and forty-first
#           sessions: min, max, mean and var_mean at [4096 x 4096] and [16 x 2^22]) retuned
#           with the default axis space, merged into the row that holds the H100's axis winners
#           (the faster verified entry per case), then torch_axis.py over those cells with the
#           merge.
step=${1:?step: pack, py, rows}
. "$(dirname "$0")/dev_lib.sh"
dev_start c42 "$step"
axis_uuid=24f0a2f78c703d775ac5d2a008ce8735   # the H100 row whose axis winners the lookup takes
case $step in
py)
    TORCH_LIMIT=${PY_TORCH_LIMIT:-240} torch_axis --ops sum,min,max,argmax,mean,var_mean
    sed -n '/along/,$p' "$L/torch_axis.log" >> "$S"
    fits 60 "python GPU tests" && pytests all $(left) ;;
rows)
    shapes='4096,4096,1;16,4194304,1'
    for op in ${ROWS_OPS:-min max mean var_mean}; do
        fits 90 "$op f32 retune" && retune ${ROWS_LIMIT:-80} "$op" f32 "$shapes"
    done
    retune_ship H100
    python3 tools/ship_into_row.py "$OUT/retune_ship.db" "$T" "$axis_uuid" -o "$OUT/retune_into.db" >> "$S" 2>&1
    build/redtune merge "$T" "$OUT/retune_into.db" -o build/merged.db --force >> "$S" 2>&1
    ops=$(echo ${ROWS_OPS:-min max mean var_mean} | tr ' ' ,)
    T=build/merged.db TORCH_LIMIT=$(left) torch_axis --ops "$ops" --dtypes float32 \
        --only '[4096 x 4096] rows,[16 x 2^22] rows'
    sed -n '/along/,$p' "$L/torch_axis.log" >> "$S" ;;
esac
dev_end
