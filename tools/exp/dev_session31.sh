#!/bin/bash
# dev_session31.sh STEP - device runs prepared at the end of the thirtieth session (whose
# device time was spent), one step a call on a lent GPU; logs under $OUT/logs, a summary
# ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the functions are
# tools/exp/dev_lib.sh's. Carried: build/c31.tar.xz (stripped binaries; `bash
# tools/exp/dev_session31.sh pack` makes it here), build/devlib, build/h100.sql.xz
# (db/tuned/h100.sql, xz'd, out of the tree for the 64 MiB limit).
#   minb    seg_lb's MINB (written after the thirtieth session's last GPU call; an experiment
#           build measured min f64 B=512 R=8 with 1536 threads an SM at 0.83-0.93x): the
#           harness (--only seg_lb: two MINB shapes), the GPU tests of f64 (the staging
#           variant takes MINB = 3), then the H200's keys rows of min, max, sum f64 (six
#           profiles, 2^20 and 30M) tuned in the shipped space (MINB = 3 offered for 8-byte
#           types at R = 8) into its row, and redtune_bench keys f64 A B A B against the
#           committed database. Before the rows: tools/exp/r12_space.lua (R = 12, 40 registers
#           with MINB = 3 and no spill) over keys heavy, len3, rand10_50 at 30M, min and sum f32,
#           min f64, each variant's best (stage2_sum.py: by R, KW, OST, MINB).
#   r12     (after minb, run 1: R = 12 with MINB = 3 won f32 keys len3 and heavy at 30M, 0.84x
#           and 0.96x R = 16's best) the harness (--only seg_lb: two R = 12 shapes), then the
#           H200's keys rows of min, max, sum f32 and i32 retuned in the shipped space (R = 12
#           added: 24 configs) and redtune_bench keys f32 A B A B against the committed database
#   final   every segmented GPU test (`seg_RT_*`: 36, about 220 s; the thirtieth session's run
#           5 reached 33 before its limit) and the Python GPU tests (about 220 s) with the
#           committed database: run it after merging minb's rows (keys_into.db, by
#           `build/redtune merge`, then tools/refresh_shipped.sh); carry build/python too (`ninja
#           python`, less build/python/redtune/redtune.db).
#   h100    on an H100 (none was lent in sessions 22-30): tools/exp/dev_session29.sh h100,
#           then the keys rows with KW = 2 and MINB: dev_session24.sh h100k.
step=${1:?step: pack, minb, r12, final}
. "$(dirname "$0")/dev_lib.sh"
dev_start c31 "$step"
case $step in
minb)
    harness 150 seg_lb
    tests 'seg_RT_*_RT_F64' 80
    # R = 12 with and without MINB = 3 beside R 8 and 16 (tools/exp/r12_space.lua)
    MARK_LAYOUT=keys MARK_PROFILES=heavy,len3,rand10_50 MARK_SIZES=30M \
        mark_tune r12 tools/exp/r12_space.lua 40 min:f32 sum:f32 min:f64
    h200_keys 100 min:f64 sum:f64 max:f64
    python3 tools/exp/stage2_sum.py <(build/redtune measurements --db build/keys.db --format csv) \
        >> "$S" 2>&1
    fits 90 "bench keys f64" && bench_keys64 40 ;;
r12)
    harness 150 seg_lb
    h200_keys 70 min:f32 sum:f32 max:f32 min:i32 sum:i32 max:i32
    fits 120 "bench keys f32" && bench_keys 35 ;;
final)
    tests 'seg_RT_*' 300
    fits 240 "python GPU tests" && pytests final 240 ;;
esac
dev_end
