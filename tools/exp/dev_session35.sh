#!/bin/bash
# dev_session35.sh STEP - device runs of the thirty-fifth session; one step a call; logs under
# $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the
# functions are tools/exp/dev_lib.sh's. Carried: build/c34.tar.xz (`bash
# tools/exp/dev_session34.sh pack`) or build/c35.tar.xz (below), build/devlib,
# build/h100.sql.xz.
#   h100h   the H100's offsets rows with the shipped space (seg_mark with NZ and MP = 1, J = 8,
#           seg_pipe, seg_per's U and NZ: new to its rows): min f32 over heavy, len3, len1,
#           rand10_50 and len1000 at 2^22 and 30M, then heavy at 30M for sum f32, min and sum
#           f64; merged into its row; redtune_bench over every offsets profile (min, sum x
#           f32, f64 at 30M), the committed database against the merge, A B A B.
#   h200h   the H200's heavy rows (2^22, 30M) of min and sum f32, min and sum f64 with the
#           shipped space (seg_mark's NZ and MP = 1 are new to them), merged into its row;
#           redtune_bench over every offsets profile as h100h's.
#   ost     seg_mark's OST (a tile's outputs through shared memory, stored coalesced; written
#           this session): the harness (--only seg_mark: three OST shapes), the GPU tests of
#           min/max f*, sum f32 and all-NaN (two OST variants), then
#           tools/exp/mark_ost_space.lua over heavy, len3 and rand10_50 at 2^22 and 30M (min
#           f32, sum f32, max f64), OST 0 against 1 per config (tools/exp/nz_sum.py).
#   h100x   (c35) ost's harness and GPU tests, then the H100's offsets rows with the shipped
#           space and OST = {0, 1} (build/ship_ost.lua): min f32 over heavy and len1 at 2^22 and 30M,
#           heavy at 30M for sum f32 and min f64; merged; OST 0 against 1 in those tunings
#           (nz_sum.py); redtune_bench over every offsets profile A B A B.
#   h200x   (c35) h100x on the H200: its heavy rows (min f32 at 2^22 and 30M, sum f32 and
#           min f64 at 30M) with OST in the shipped space, merged; bench as h100x's.
#   ostq    (c35) ost shortened to about 220 s (the session's device time went on refusals):
#           the harness of seg_mark, the GPU tests of min f* and sum f32, mark_ost_space.lua
#           over heavy at 2^22 and 30M (min f32, max f64), OST 0 against 1.
#   h100q   (c35) h100x shortened to about 250 s: the harness of seg_mark, the GPU tests of
#           min f* and sum f32, the H100's heavy rows of min f32 (2^22, 30M) with OST in the shipped space,
#           merged; OST 0 against 1; redtune_bench offsets heavy min f32 at 30M, A B A B.
step=${1:?step: pack, h100h, h200h, ost, h100x, h200x, ostq, h100q}
. "$(dirname "$0")/dev_lib.sh"
# h100h and h200h run the binaries of dev_session34.sh's pack (build/c34.tar.xz: before OST),
# or PK's (PK=c35: this script's, OST = 0 there); ost those of this script's (build/c35.tar.xz:
# `bash tools/exp/dev_session35.sh pack`).
pk=${PK:-c34}
case $step in ost|ostq|h100x|h200x|h100q|pack) pk=c35 ;; esac
dev_start $pk "$step"
# h100x, h200x, h100q: the shipped space with seg_mark's OST = {0, 1} (not in the shipped
# space until a GPU has run it)
sed 's/NZ = {0, 1}, MP = 1, MINW = {0, 32} },/NZ = {0, 1}, MP = 1, OST = {0, 1}, MINW = {0, 32} },/' \
    lua/spaces/segmented_ship.lua > build/ship_ost.lua
case $step in h100x|h200x|h100q) export SHIP_SPACE=build/ship_ost.lua ;; esac
# verify: the harness of seg_mark and the GPU tests of min f* and sum f32 (OST's shapes and
# variants among them)
verify() {
    harness 50 seg_mark
    tests 'seg_RT_MIN_RT_F*' 50
    tests 'seg_RT_SUM_RT_F32' 30
}
# ost_rows MATCH UUID PROFILES LIMIT: the device's rows of min f32 for PROFILES at 2^22 and
# 30M, then (time allowing) heavy at 30M for sum f32 and min f64, merged into its row; each
# tuning's configs by stage and OST 0 against 1
ost_rows() {
    SHIP_PROFILES=$3 SHIP_LIMIT=$4 ship_rand "$1" "$2" 2^22,30M min:f32
    fits 150 "heavy rows of sum f32, min f64" && SHIP_PROFILES=heavy SHIP_LIMIT=45 \
        ship_rand "$1" "$2" 30M sum:f32 min:f64
    zcat "$OUT/ship_meas.csv.gz" > "$L/ship_meas.csv"
    python3 tools/exp/stage2_sum.py "$L/ship_meas.csv" >> "$S" 2>&1
    python3 tools/exp/nz_sum.py "$L/ship_meas.csv" OST >> "$S" 2>&1
}
case $step in
h100h)
    h100_rows 230
    fits 110 "bench offsets" && bench_all 40 ;;
ost)
    harness 60 seg_mark
    tests 'seg_RT_MIN_RT_F*' 60
    tests 'seg_RT_MAX_RT_F*' 60
    tests 'seg_RT_SUM_RT_F32' 40
    tests 'seg_all_nan*' 40
    fits 150 "ost space" && MARK_PROFILES=heavy,len3,rand10_50 MARK_SIZES=4M,30M \
        mark_tune markost tools/exp/mark_ost_space.lua 90 min:f32 sum:f32 max:f64
    python3 tools/exp/nz_sum.py "$L/markost.csv" OST >> "$S" 2>&1 ;;
h100x)
    verify
    ost_rows H100 2e956071d0b02214c4c501b293bccefc heavy,len1 170
    fits 100 "bench offsets" && bench_all 40 ;;
h200x)
    verify
    ost_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 heavy 120
    fits 100 "bench offsets" && bench_all 40 ;;
ostq)
    verify
    # OSTQ_SIZES, OSTQ_OPS: fewer cases where the call has less time
    fits 60 "ost space" && MARK_PROFILES=heavy MARK_SIZES=${OSTQ_SIZES:-4M,30M} \
        mark_tune markost tools/exp/mark_ost_space.lua 70 ${OSTQ_OPS:-min:f32 max:f64}
    python3 tools/exp/nz_sum.py "$L/markost.csv" OST >> "$S" 2>&1 ;;
h100q)
    verify
    SHIP_PROFILES=heavy SHIP_LIMIT=110 ship_rand H100 2e956071d0b02214c4c501b293bccefc 2^22,30M min:f32
    zcat "$OUT/ship_meas.csv.gz" > "$L/ship_meas.csv"
    python3 tools/exp/nz_sum.py "$L/ship_meas.csv" OST >> "$S" 2>&1
    fits 60 "bench heavy" && bench_heavy 25 ;;
h200h)
    SHIP_LIMIT=90 tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 heavy 2^22,30M min:f32 sum:f32 \
        min:f64 sum:f64
    fits 110 "bench offsets" && bench_all 40 ;;
esac
dev_end
