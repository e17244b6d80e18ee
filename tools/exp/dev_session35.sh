#!/bin/bash
# dev_session35.sh STEP - device runs of the thirty-fifth session; one step a call; logs under
# $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the
# functions are tools/exp/dev_lib.sh's. Carried as dev_session34.sh's: build/c34.tar.xz
# (`bash tools/exp/dev_session34.sh pack`), build/devlib, build/h100.sql.xz.
#   h100h   the H100's offsets rows with the shipped space (seg_mark with NZ and MP = 1, J = 8,
#           seg_pipe, seg_per's U and NZ: new to its rows): min f32 over heavy, len3, len1,
#           rand10_50 and len1000 at 2^22 and 30M, then heavy at 30M for sum f32, min and sum
#           f64; merged into its row; redtune_bench over every offsets profile (min, sum x
#           f32, f64 at 30M), the committed database against the merge, A B A B.
#   h200h   the H200's heavy rows (2^22, 30M) of min and sum f32, min and sum f64 with the
#           shipped space (seg_mark's NZ and MP = 1 are new to them), merged into its row;
#           redtune_bench over every offsets profile as h100h's.
step=${1:?step: pack, h100h, h200h}
. "$(dirname "$0")/dev_lib.sh"
[ "$step" = pack ] && { bash "$(dirname "$0")/dev_session34.sh" pack; exit; }
dev_start c34 "$step"
case $step in
h100h)
    SHIP_PROFILES=heavy,len3,len1,rand10_50,len1000 SHIP_LIMIT=230 ship_rand H100 \
        2e956071d0b02214c4c501b293bccefc 2^22,30M min:f32
    fits 200 "heavy rows of sum f32, min and sum f64" && SHIP_PROFILES=heavy SHIP_LIMIT=45 \
        ship_rand H100 2e956071d0b02214c4c501b293bccefc 30M sum:f32 min:f64 sum:f64
    python3 tools/exp/stage2_sum.py <(zcat "$OUT/ship_meas.csv.gz") >> "$S" 2>&1
    fits 110 "bench offsets" && bench_all 40 ;;
h200h)
    SHIP_LIMIT=90 tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 heavy 2^22,30M min:f32 sum:f32 \
        min:f64 sum:f64
    fits 110 "bench offsets" && bench_all 40 ;;
esac
dev_end
