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
#   split   seg_per SPLIT (segments longer than SPLIT left to rt_seg_split, a second launch
#           that reduces them in chunks over the grid): build/seg_harness --quick --only
#           seg_per, the C GPU tests 'seg_RT_MIN_RT_F*' and 'seg_per_long_unaligned'; then the
#           shipped space (with SPLIT) for offsets heavy and len3 at 2^22 and 30M (min f32,
#           sum f64) into the H200's row (build/merged.db, $OUT/ship_into.db), each variant's
#           best per case, and redtune_bench --segmented offsets over every profile (min, sum x
#           f32, f64 at 30M), committed database against the merge, A B A B. Run 2 (SPLIT's
#           chunks a block each, segments of more than SPLIT only) and run 3 (a warp a chunk,
#           every segment of more than LONG rounds).
#   splitbench  (build/ship_into.db: run 2's) the merge against the committed database over
#           every offsets profile (min, sum x f32, f64 at 30M), A B A B, and 'api_gpu_seg*'.
#   ncu     Nsight Compute over the tuner running tools/exp/split_one.lua (seg_per SPLIT) on
#           heavy at 30M: duration, throughput and occupancy of rt_seg and rt_seg_split.
#   segs    seg_per SEGS (two or four segments a lane, their loads in flight together):
#           the harness and 'seg_RT_MIN_RT_F*', the shipped space (with SEGS) for len3 and len1
#           at 2^22 and 30M (min f32, sum f64) into the H200's row, each variant's best, and
#           the bench over every offsets profile, committed database against the merge.
#   final   the committed database: 'api_gpu_seg*' and the offsets bench once (min f32 at 30M).
#   h100    not run (no H100 lent): the shipped space (STAGE=2, SEGS) for rand10_50, len3 and
#           len1 at 2^20 and 30M (min f32, sum f64) into the H100's offsets row
#           ($OUT/ship_into.db), each variant's best; then, with that file as
#           build/ship_into.db, `splitbench` benches every offsets profile against it.
step=${1:?step: pack, ship, split, splitbench, ncu, segs, final, h100}
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
    bench_all 100 ;;
split)
    harness 150 seg_per
    tests 'seg_RT_MIN_RT_F*' 60
    tests 'seg_per_long_unaligned' 40
    tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 heavy,len3 2^22,30M min:f32 sum:f64
    bench_all 80 ;;
splitbench)
    build/redtune merge "$T" build/ship_into.db -o build/merged.db --force >> "$S" 2>&1
    tests 'api_gpu_seg*' 80
    bench_all 100 ;;
segs)
    harness 150 seg_per
    tests 'seg_RT_MIN_RT_F*' 60
    tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 len3,len1 2^22,30M min:f32 sum:f64
    bench_all 80 ;;
final)
    # The committed database on the GPU: the lookup tests, then the offsets bench once.
    tests 'api_gpu_seg*' 80
    bench_run final 80 --db "$T" --segmented offsets --profiles len3,len1,rand10_50,heavy --ops min --types f32 \
        --sizes 30M --regimes cold ;;
h100)
    # For the next lent H100: the shipped space (STAGE=2, SEGS) for rand10_50, len3 and len1 at
    # the H100 rows' sizes into its offsets row; `splitbench` then benches $OUT/ship_into.db.
    SHIP_LIMIT=250 tune_rows H100 2e956071d0b02214c4c501b293bccefc rand10_50,len3,len1 2^20,30M \
        min:f32 sum:f64 ;;
ncu)
    # Where seg_per SPLIT's time goes on heavy at 30M: both launches under Nsight Compute
    # (the tuner's verification run, then its first timed run).
    timeout 200 ncu --clock-control none -k regex:rt_seg -c 24 --section SpeedOfLight --section LaunchStats \
        --section Occupancy build/redtune --device 0 --op min --type f32 --segmented offsets \
        --space tools/exp/split_one.lua --profiles heavy --sizes 30M --seed 7 --db build/ncu.db \
        > "$L/ncu.log" 2>&1
    echo "ncu: exit $?" >> "$S"
    grep -E '^  rt_seg|Duration|DRAM Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Grid Size|Block Size' \
        "$L/ncu.log" >> "$S" ;;
*)
    echo "dev_session23.sh: no step '$step'" >&2; exit 2 ;;
esac
dev_end
