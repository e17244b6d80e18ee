#!/bin/bash
# dev_session36.sh STEP - device runs of the thirty-sixth session; one step a call; logs under
# $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the
# functions are tools/exp/dev_lib.sh's. Carried: build/c36.tar.xz (`bash
# tools/exp/dev_session36.sh pack`), build/devlib, build/h100.sql.xz.
#   all     (either GPU) the harness of seg_mark's shapes with B = 32, B = 64 or IL = 2, the GPU
#           tests of min and sum f32, then b, then il, then xd, then (time allowing) the device's heavy
#           rows of min f32 at 2^22 and 30M with the shipped space, merged, and
#           redtune_bench offsets heavy min f32 at 30M, the committed database against the
#           merge, A B A B.
#   short   all in a shorter call: b, xd, the harness, the GPU tests of min f32.
#   b       seg_mark with blocks of one and two warps: tools/exp/mark_b_space.lua (B = 32, 64,
#           128) over offsets heavy, len3 and rand10_50 at 30M, min and sum f32, each case's
#           best by B (tools/exp/nz_sum.py).
#   il      seg_mark's walk in two halves side by side: tools/exp/mark_il_space.lua (IL = 1, 2 at
#           B = 128 R = 16 J = 8, B = 128 R = 8 J = 4, B = 32 R = 16 J = 8) over offsets heavy
#           and len3 at 30M, min and sum f32, each config by IL (tools/exp/nz_sum.py).
#   xd      what seg_mark's stages cost on the heavy tail: tools/exp/mark_xd_space.lua (the
#           scan, the window's entries, both done twice; XD = 0..3) over offsets heavy and len3
#           at 30M, min and sum f32, each XD against XD = 0 (tools/exp/nz_sum.py).
#   h100hx  xd, then dev_session35.sh's h100h with this pack: the H100's offsets rows with the
#           shipped space (min f32 over heavy, len3, len1, rand10_50, len1000 at 2^22 and 30M;
#           heavy at 30M for sum f32, min and sum f64), merged into its row; redtune_bench
#           over every offsets profile, the committed database against the merge, A B A B.
#   h200hx  xd on the H200, then its heavy rows (min and sum f32, min and sum f64 at 2^22 and
#           30M) with the shipped space, merged; the bench as h100hx's.
#   h200r   (the thirty-eighth session's xd done) the H200's heavy rows as h200hx's, without xd,
#           then the bench as h100hx's.
#   h100f64 the H100's f64 offsets rows the thirty-eighth session's runs cut short: min f64 over
#           heavy, rand10_50, len1 and len3, sum f64 over len3, at 30M (150 s an operator),
#           merged; the bench over those profiles, min and sum f64, A B A B.
step=${1:?step: pack, all, short, b, il, xd, h100hx, h200hx, h200r, h100f64}
. "$(dirname "$0")/dev_lib.sh"
dev_start c36 "$step"
xd() {
    MARK_PROFILES=heavy,len3 MARK_SIZES=30M mark_tune markxd tools/exp/mark_xd_space.lua 60 \
        min:f32 sum:f32
    for v in 1 2 3; do
        echo "XD 0 against $v:" >> "$S"
        python3 tools/exp/nz_sum.py "$L/markxd.csv" XD=0,$v >> "$S" 2>&1
    done
}
il() {
    MARK_PROFILES=heavy,len3 MARK_SIZES=30M mark_tune markil tools/exp/mark_il_space.lua 60 \
        min:f32 sum:f32
    echo "IL 1 against 2:" >> "$S"
    python3 tools/exp/nz_sum.py "$L/markil.csv" IL=1,2 >> "$S" 2>&1
}
b() {
    MARK_PROFILES=${B_PROFILES:-heavy,len3,rand10_50} MARK_SIZES=30M mark_tune markb \
        tools/exp/mark_b_space.lua ${B_LIMIT:-80} ${B_OPS:-min:f32 sum:f32}
    for v in 32 64; do
        echo "B 128 against $v:" >> "$S"
        python3 tools/exp/nz_sum.py "$L/markb.csv" B=128,$v | grep '^[a-z]\|best' >> "$S" 2>&1
    done
}
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
*H200*) dev=H200 uuid=8b59dd2a77fc5356c5b5d639fc1cc192 ;;
*) dev=H100 uuid=2e956071d0b02214c4c501b293bccefc ;;
esac
case $step in
all)
    harness 70 seg_mark B=32,B=64,IL=2
    tests 'seg_RT_MIN_RT_F32' 40
    tests 'seg_RT_SUM_RT_F32' 40
    B_LIMIT=70 b
    fits 100 "il" && il
    fits 120 "xd" && xd
    fits 200 "heavy rows" && SHIP_PROFILES=heavy SHIP_LIMIT=100 ship_rand $dev $uuid 2^22,30M min:f32
    fits 70 "bench heavy" && bench_heavy 25 ;;
short)
    # a call with little device time: the timings first (the tuner verifies every config
    # before it times it), then the harness and the tests of B = 32 and 64
    B_LIMIT=70 b
    fits 100 "il" && il
    fits 100 "xd" && xd
    fits 90 "harness" && harness 85 seg_mark B=32,B=64,IL=2
    fits 30 "tests" && tests 'seg_RT_MIN_RT_F32' 30 ;;
b)
    b ;;
il)
    il ;;
xd)
    xd ;;
h100hx)
    xd
    fits 300 "H100 rows" && h100_rows 180
    fits 100 "bench offsets" && bench_all 40 ;;
h200hx)
    xd
    SHIP_LIMIT=80 tune_rows $dev $uuid heavy 2^22,30M min:f32 sum:f32 \
        min:f64 sum:f64
    fits 100 "bench offsets" && bench_all 40 ;;
h200r)
    SHIP_LIMIT=100 tune_rows $dev $uuid heavy 2^22,30M min:f32 sum:f32 \
        min:f64 sum:f64
    fits 100 "bench offsets" && bench_all 40 ;;
h100f64)
    SHIP_LIMIT=150 tune_rows $dev $uuid heavy,rand10_50,len1,len3 30M min:f64
    fits 120 "sum f64 len3" && SHIP_LIMIT=100 tune_rows $dev $uuid len3 30M sum:f64
    fits 80 "bench f64" && seg_ab m shipped merged build/bench/redtune_bench "$T" \
        build/bench/redtune_bench build/merged.db 40 offsets \
        --profiles heavy,rand10_50,len1,len3 --ops min,sum --types f64 --sizes 30M ;;
esac
dev_end
