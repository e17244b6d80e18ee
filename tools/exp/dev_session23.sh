#!/bin/bash
# dev_session23.sh STEP - device runs of the twenty-third session, one step a call on the
# lent H200; logs under $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in
# $OUT/all.tgz; the functions are tools/exp/dev_lib.sh's. Carried: build/c23.tar.xz
# (stripped binaries; `bash tools/exp/dev_session23.sh pack` makes it here), build/devlib,
# build/h100.sql.xz (db/tuned/h100.sql, xz'd, out of the tree for the 64 MiB limit) and, for
# `ship`, build/ship_ship.db (`tar -xzf bench/results/session22-2026-11-28/run4/all.tgz -C
# build ./ship_ship.db`).
#   ship    the twenty-second session's H200 winners of the shipped space for offsets
#           rand10_50 (seg_per STAGE=2; run 4's ship_ship.db) put into the H200's row of the
#           committed database and merged, with the lookup that completes a row by mean
#           length (api_seg_pick): the C GPU tests 'seg_RT_MIN_RT_F*' (every variant, with STAGE=2 V=3, which no GPU had
#           run) and 'api_gpu_seg*', then redtune_bench --segmented offsets over every
#           profile (min, sum x f32, f64 at 30M), committed database against the merge,
#           A B A B; the merge is shipped when no profile is slower.
step=${1:?step: pack, ship}
. "$(dirname "$0")/dev_lib.sh"
if [ "$step" = pack ]; then
    dev_pack c23 "redtune tests/all bench/redtune_bench seg_harness ${BEFORE:+bench_before/redtune_bench}"
    exit 0
fi
[ -f db/tuned/h100.sql ] || xz -dc build/h100.sql.xz > db/tuned/h100.sql
dev_begin c23
export REDTUNE_BIN=$PWD/build/redtune
case $step in
ship)
    python3 tools/ship_into_row.py build/ship_ship.db "$T" 8b59dd2a77fc5356c5b5d639fc1cc192 \
        -o "$OUT/ship_into.db" >> "$S" 2>&1
    build/redtune merge "$T" "$OUT/ship_into.db" -o build/merged.db --force >> "$S" 2>&1
    cp build/merged.db "$OUT/merged.db"
    tests 'api_gpu_seg*' 80
    tests 'seg_RT_MIN_RT_F*' 60
    seg_ab m shipped merged build/bench/redtune_bench "$T" build/bench/redtune_bench build/merged.db \
        100 offsets --profiles rand10_50,len3,len1,len1000,heavy,one --ops min,sum --types f32,f64 --sizes 30M ;;
*)
    echo "dev_session23.sh: no step '$step'" >&2; exit 2 ;;
esac
dev_end
