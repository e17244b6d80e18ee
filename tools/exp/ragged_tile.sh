#!/bin/bash
# ragged_tile.sh build|run - issue 14's every n: what the ragged tile of 2^11's winner
# (tree_sequential B=256 R=4 LOAD_ADD=1 WARP=1 UNROLL=1) costs for min/max f64, against sum f64
# and min f32 with the same code, and with the ragged tile rewritten (tools/exp/ragged_variants.py:
# the combines as selects, 32-bit indices within the tile, both). build: here (nvcc), into
# build/ragged/; run: on the GPU, every variant (VARIANTS: those named; the forty-fifth
# session's run 5 had each kernel as emitted and _sel, before the result was checked).
set -eu
cd "$(dirname "$0")/../.."
d=build/ragged
cfg="tree_sequential B=256 R=4 LOAD_ADD=1 WARP=1 UNROLL=1"
if [ "${1:-}" = build ]; then
    mkdir -p $d
    for ot in min:f64 max:f64 sum:f64 min:f32; do
        k=$d/${ot%:*}_${ot#*:}
        build/redtune emit $cfg --op ${ot%:*} --type ${ot#*:} > $k.cu
        for v in sel off32 off32sel; do
            python3 tools/exp/ragged_variants.py $k.cu ${k}_$v.cu $v
        done
        for v in $k ${k}_sel ${k}_off32 ${k}_off32sel; do
            /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -I templates -include $v.cu \
                tools/exp/ragged_tile.cu -o $v
        done
    done
    exit 0
fi
all=
for k in min_f64 max_f64 sum_f64 min_f32; do
    all="$all $k ${k}_sel ${k}_off32 ${k}_off32sel"
done
for v in ${VARIANTS:-$all}; do
    echo "== $v"
    $d/$v 1024 1200 1390 1500 2047 2048
done
