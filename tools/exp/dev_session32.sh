#!/bin/bash
# dev_session32.sh STEP - device runs prepared at the end of the thirty-first session, one step a
# call on a lent GPU; logs under $OUT/logs, a summary ($OUT/sum.txt) printed last, everything
# else in $OUT/all.tgz; the functions are tools/exp/dev_lib.sh's. Carried: build/c32.tar.xz
# (stripped binaries; `bash tools/exp/dev_session32.sh pack` makes it here), build/devlib,
# build/h100.sql.xz (db/tuned/h100.sql, xz'd, out of the tree for the 64 MiB limit).
#   ost2    seg_lb's OST = 2 (the output stage prefilled with the empty segment's output, so
#           that the KW = 2 walk stores no empty key inside it; the thirty-first session's
#           `quick` call measured it on f32 heavy and len3 only, with one GPU test): the harness
#           (--only seg_lb: two OST = 2 shapes), the GPU tests of min and sum (the variant
#           B=128 R=3 OST=2 KW=2 PERSIST=1 among them), then tools/exp/ost2_space.lua over keys
#           heavy, len3, rand10_50, len1 at 30M, sum f32 and min f64, each variant's best
#           (stage2_sum.py: by R, OST, MINB). The shipped space offers OST = 2 already: then
#           `rows`.
#   rows    the H200's keys rows of min, max, sum x f32, i32 (six profiles x 2^20, 30M; about
#           45 s an operator with the shipped space's 28 configs) retuned into its row, then
#           redtune_bench keys f32 A B A B against the committed database (the goals of issue 14
#           last). rows64: those of f64, and the bench of f64. After each: merge keys_into.db by
#           `build/redtune merge` into a load of db/tuned/h200.sql, dump, then
#           tools/refresh_shipped.sh.
#   heavy   tools/exp/heavy_space.lua (B 256, 384, 512 at 1536 threads an SM, PERSIST 0 and 1,
#           OST 1 and 2; R = 12) over keys heavy, len3, rand10_50 at 30M, sum and min f32,
#           each variant's best (stage2_sum.py); the harness has no B = 384 shape: if one wins,
#           add one before shipping it.
#   prof    (after `rows` is merged and committed) Nsight Compute over the committed keys
#           winners of sum f32 heavy and len3 at 30M: heavy (6.3M segments, an empty one in
#           ten) took longer than len3 (10.5M) in every run of the thirty-first session (sum
#           f32 R=12 MINB=3: 96.1 us with OST = 2, against len3's 90.8 with OST = 1), though it
#           stores fewer outputs; where do its cycles go (the SASS page's stall samples)?
#   h100k, h100k64
#           on an H100 (none was lent in sessions 22-31): its keys rows, as `rows` and
#           `rows64` do the H200's (its row has none of KW = 2, R = 12, MINB, OST = 2); the
#           offsets rows of the short-segment families: tools/exp/dev_session29.sh h100.
#   quick   (the thirty-first session's last 250 s of device time) the GPU tests of min f32 and
#           ost2_space.lua over heavy and len3 at 30M, sum and min f32.
step=${1:?step: pack, ost2, rows, rows64, heavy, prof, h100k, h100k64, quick}
. "$(dirname "$0")/dev_lib.sh"
dev_start c32 "$step"
case $step in
ost2)
    harness 150 seg_lb
    tests 'seg_RT_MIN_RT_F*' 60
    tests 'seg_RT_SUM_RT_F32' 40
    MARK_LAYOUT=keys MARK_PROFILES=heavy,len3,rand10_50,len1 MARK_SIZES=30M \
        mark_tune ost2 tools/exp/ost2_space.lua 40 sum:f32 min:f64 ;;
quick)
    tests 'seg_RT_MIN_RT_F32' 30
    MARK_LAYOUT=keys MARK_PROFILES=heavy,len3 MARK_SIZES=30M \
        mark_tune ost2 tools/exp/ost2_space.lua 25 sum:f32 min:f32 ;;
heavy)
    MARK_LAYOUT=keys MARK_PROFILES=heavy,len3,rand10_50 MARK_SIZES=30M \
        mark_tune heavy tools/exp/heavy_space.lua 60 sum:f32 min:f32 ;;
prof)
    NCU_OP=sum ncu_sass kheavy "$T" heavy keys
    NCU_OP=sum ncu_sass klen3 "$T" len3 keys ;;
rows|rows64|h100k|h100k64)
    row=h200_keys
    [ "${step#h100}" != "$step" ] && row=h100_keys
    if [ "${step%64}" = "$step" ]; then
        $row 60 min:f32 sum:f32 max:f32 min:i32 sum:i32 max:i32
        fits 120 "bench keys f32" && bench_keys 35
    else
        $row 70 min:f64 sum:f64 max:f64
        fits 160 "bench keys f64" && bench_keys64 40
    fi ;;
esac
dev_end
