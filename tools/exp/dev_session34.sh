#!/bin/bash
# dev_session34.sh STEP - device runs of the thirty-fourth session, the first since the
# twenty-first to be lent an H100; one step a call; logs under $OUT/logs, a summary
# ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the functions are
# tools/exp/dev_lib.sh's. Carried: build/c34.tar.xz (stripped binaries; `bash
# tools/exp/dev_session34.sh pack` makes it here), build/devlib, build/h100.sql.xz
# (db/tuned/h100.sql, xz'd, out of the tree for the 64 MiB limit).
#   h100k   (min and sum f32 ran in h100s, run 1 of the thirty-fourth session: the rest) the
#           H100's keys rows of max f32 and min, max, sum i32 (six profiles x 2^20, 30M) tuned
#           with the shipped space (KW = 2, R = 12, MINB, OST = 2 and the parallel rt_seg_fix
#           are new to the H100's row) and merged into its row; redtune_bench keys f32 A B A B,
#           the committed database against the merge (issue 14's keys goals last).
#   h100o   the H100's offsets rows of the short-segment profiles (len3, len1, rand10_50,
#           len1000 at 2^22 and 30M, min f32) with the shipped space (NZ, U, seg_pipe, seg_mark
#           are new to it), merged; redtune_bench over every offsets profile, A B A B.
#   h100s   (run 1 of the thirty-fourth session, DEV_CAP=270: the device time went on refusals)
#           the keys rows of min and sum f32 and their bench (heavy, len3), then the offsets
#           rows of len3 and rand10_50 at 30M (min f32) and their bench, A B A B.
#   h100k64 the keys rows of f64 as h100k, and the bench of f64.
#   mark    seg_mark's NZ (the thirty-third session's, not yet on a GPU) and MP (this session's:
#           the marks padded by 4 words after every 32 against the 4-way bank conflicts of a
#           thread's 16-byte mark words): the harness (--only seg_mark: two MP shapes), the GPU
#           tests of min/max f* (an NZ and an MP variant), all-NaN and sum f32, then
#           tools/exp/mark_nz_space.lua over offsets heavy at 2^22 and 30M (min f32, max f64),
#           NZ, MP and J (4 against 8) side by side per config (tools/exp/nz_sum.py).
#   mark2   mark shortened to about 300 s (the session's device time went on refusals): the
#           harness of seg_mark, the GPU tests of min/max f* and the space over heavy min f32.
step=${1:?step: pack, h100s, h100k, h100o, h100k64, mark, mark2}
. "$(dirname "$0")/dev_lib.sh"
# mark_steps HARNESS_S NAN OPS...: the harness of seg_mark, the GPU tests of min/max f* (and of
# all-NaN with NAN = 1), then mark_nz_space.lua over heavy at 2^22 and 30M for OPS, NZ, MP and
# J side by side.
mark_steps() {
    harness "$1" seg_mark
    tests 'seg_RT_MIN_RT_F*' 60
    tests 'seg_RT_MAX_RT_F*' 60
    [ "$2" = 1 ] && tests 'seg_all_nan*' 40
    shift 2
    fits 100 "mark space" && MARK_PROFILES=heavy MARK_SIZES=4M,30M \
        mark_tune marknz tools/exp/mark_nz_space.lua 110 "$@"
    local p
    for p in NZ MP J=4,8; do
        python3 tools/exp/nz_sum.py "$L/marknz.csv" "$p" >> "$S" 2>&1
    done
}
dev_start c34 "$step"
case $step in
h100k)
    h100_keys 55 max:f32 min:i32 sum:i32 max:i32
    fits 120 "bench keys f32" && bench_keys 35 ;;
h100s)
    h100_keys 50 min:f32 sum:f32
    fits 110 "bench keys f32" && seg_ab k shipped merged build/bench/redtune_bench "$T" \
        build/bench/redtune_bench build/merged.db 25 keys --profiles heavy,len3 --ops min,sum \
        --types f32 --sizes 30M
    fits 150 "offsets rows" && SHIP_PROFILES=len3,rand10_50 SHIP_LIMIT=90 ship_rand H100 \
        2e956071d0b02214c4c501b293bccefc 30M min:f32
    fits 60 "bench offsets" && seg_ab o shipped merged build/bench/redtune_bench "$T" \
        build/bench/redtune_bench build/merged.db 15 offsets --profiles rand10_50,len3 \
        --ops min --types f32 --sizes 30M ;;
h100k64)
    h100_keys 70 min:f64 sum:f64 max:f64
    fits 160 "bench keys f64" && bench_keys64 40 ;;
h100o)
    SHIP_PROFILES=len3,len1,rand10_50,len1000 SHIP_LIMIT=240 ship_rand H100 \
        2e956071d0b02214c4c501b293bccefc 2^22,30M min:f32
    python3 tools/exp/stage2_sum.py <(zcat "$OUT/ship_meas.csv.gz") >> "$S" 2>&1
    fits 200 "bench offsets" && bench_all 50 ;;
mark)
    mark_steps 60 1 min:f32 max:f64 ;;
mark2)
    mark_steps 50 0 min:f32 ;;
esac
dev_end
