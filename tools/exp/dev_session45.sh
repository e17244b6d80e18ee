#!/bin/bash
# dev_session45.sh STEP - device runs of the forty-fifth session; one step a call; logs under
# $OUT/logs, a summary ($OUT/sum.txt) printed last. Carried: build/c45.tar.xz (`bash
# tools/exp/dev_session44.sh pack`), build/devlib, build/h100.sql.xz, build/python, build/pyt.
#   h200r (issue 14; an H200) its offsets heavy rows with the shipped space (min and sum, f32
#         and f64, at 2^22 and 30M, 100 s an operator), merged into its row; redtune_bench over
#         every offsets profile, the committed database against the merge, A B A B.
#   auto  h200r where the GPU is an H200, else dev_session44.sh q44 (a call that may get either).
#   pyfix (issue 16) the Python GPU test that expected x.t() refused (now reduced in place) and
#         the views test; then h200r where the GPU is an H200.
#   ragged (issue 14) tools/exp/ragged_tile.sh run: 2^11's winner timed alone at six sizes from
#         2^10 to 2^11, min/max/sum f64 and min f32, as emitted and with the ragged tile's
#         combines as selects (build/ragged, carried; `ragged_tile.sh build` here); then h200r
#         where the GPU is an H200.
step=${1:?step: h200r, auto, pyfix, ragged}
if [ "$step" = auto ]; then
    if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
        step=h200r
    else
        exec bash "$(dirname "$0")/dev_session44.sh" q44
    fi
fi
. "$(dirname "$0")/dev_lib.sh"
dev_start c45 "$step"
case $step in
ragged)
    bash tools/exp/ragged_tile.sh run > "$L/ragged.log" 2>&1
    echo "ragged_tile.sh run: exit $?" >> "$S"
    cat "$L/ragged.log" >> "$S"
    if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
        SHIP_LIMIT=${SHIP_LIMIT:-100} tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 heavy 2^22,30M min:f32 sum:f32 min:f64 sum:f64
        fits 100 "bench offsets" && bench_all 40
    fi ;;
pyfix)
    pytests fix 120 -k "axis_out_streams_and_refusals or views_in_another_order"
    if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
        SHIP_LIMIT=${SHIP_LIMIT:-100} tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 heavy 2^22,30M min:f32 sum:f32 min:f64 sum:f64
        fits 100 "bench offsets" && bench_all 40
    fi ;;
h200r)
    SHIP_LIMIT=${SHIP_LIMIT:-100} tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 heavy 2^22,30M min:f32 sum:f32 min:f64 sum:f64
    fits 100 "bench offsets" && bench_all 40 ;;
esac
dev_end
