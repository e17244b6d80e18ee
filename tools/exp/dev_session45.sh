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
#         2^10 to 2^11, min/max/sum f64 and min f32, as emitted and with the ragged tile
#         rewritten (build/ragged, carried; `ragged_tile.sh build` here; run 5 ran the first
#         two forms, as emitted and _sel); then h200r where the GPU is an H200.
#   tsfix (issue 14) tree_sequential's ragged tile in 32-bit tile indices (build/c46.tar.xz:
#         `bash tools/exp/dev_session45.sh pack46` with
#         bench/results/session45-2026-12-07/run6/tree_sequential_off32.patch applied, and
#         db/tuned/h100.sql refreshed, into build/h100.sql.xz): ragged_tile.sh's variants and
#         the bench at eight sizes from 2^10 to 2^11 twice (run 6 also ran seg_harness --only
#         tree_sequential, which holds none of it: 0 of 0, dropped). Not kept: no gain
#         (docs/results.md, forty-fifth).
step=${1:?step: h200r, auto, pyfix, ragged, tsfix, pack46}
pack=c45
case $step in pack46|tsfix) pack=c46 ;; esac
[ "$step" = pack46 ] && step=pack
on_h200() {
    nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200
}
if [ "$step" = auto ]; then
    if on_h200; then
        step=h200r
    else
        exec bash "$(dirname "$0")/dev_session44.sh" q44
    fi
fi
. "$(dirname "$0")/dev_lib.sh"
dev_start $pack "$step"
# the H200's heavy offsets rows tuned and merged into its row, then every offsets profile
# benched, committed against merged (h200r)
h200_rows() {
    SHIP_LIMIT=${SHIP_LIMIT:-100} tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 heavy 2^22,30M \
        min:f32 sum:f32 min:f64 sum:f64
    fits 100 "bench offsets" && bench_all 40
}
case $step in
tsfix)
    VARIANTS="min_f64 min_f64_off32 max_f64 max_f64_off32 sum_f64 sum_f64_off32 min_f32 min_f32_off32 min_f64" \
        bash tools/exp/ragged_tile.sh run > "$L/ragged.log" 2>&1
    echo "ragged_tile.sh run: exit $?" >> "$S"
    grep -E '^==|1390|2048' "$L/ragged.log" >> "$S"
    for r in 1 2; do
        bench_run ragged$r 40 --db "$T" --regimes cold --seed 1 \
            --sizes 1024,1200,1390,1500,1641,1800,2047,2048 --ops min,max,sum --types f64,f32
    done ;;
ragged)
    bash tools/exp/ragged_tile.sh run > "$L/ragged.log" 2>&1
    echo "ragged_tile.sh run: exit $?" >> "$S"
    cat "$L/ragged.log" >> "$S"
    on_h200 && h200_rows ;;
pyfix)
    pytests fix 120 -k "axis_out_streams_and_refusals or views_in_another_order"
    on_h200 && h200_rows ;;
h200r)
    h200_rows ;;
esac
dev_end
