#!/bin/bash
# dev_session30.sh STEP - device runs prepared at the end of the twenty-ninth session (whose
# device time was spent), one step a call on a lent GPU; logs under $OUT/logs, a summary
# ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the functions are
# tools/exp/dev_lib.sh's. Carried: build/c30.tar.xz (stripped binaries; `bash
# tools/exp/dev_session30.sh pack` makes it here), build/devlib, build/h100.sql.xz
# (db/tuned/h100.sql, xz'd, out of the tree for the 64 MiB limit).
#   kw2     seg_lb's KW = 2 (keys, written after the twenty-ninth session's last GPU run): a
#           thread's elements after its first walked in 32-bit keys (the key before is the
#           register before), stores as predicated pairs, whole tiles without bound tests.
#           Nsight Compute found the keys winners issue-bound (len3 30M: about 89 warp
#           instructions a thread an element, 71% of issue slots, 46% of DRAM bandwidth).
#           The harness (--only seg_lb: three KW=2 shapes among the keys shapes, which come
#           first), 'seg_RT_MIN_RT_F*' (a KW=2 variant), then tools/exp/kw2_space.lua over keys
#           heavy, len3, rand10_50 at 2^20 and 30M for min and sum f32 (each variant's best:
#           tools/exp/stage2_sum.py), and Nsight Compute over KW = 2's best for len3 (min f32
#           30M; tools/exp/kw2_only.lua tuned alone into build/kw2only.db).
#           If KW = 2 wins: add 2 to lua/spaces/segmented_ship.lua's and segmented.lua's keys
#           entries (KW = {0, 1, 2}) and run `kship`.
#   kship   (on an H200: the rows go to its device row) the shipped space (with KW = 2) over
#           keys heavy and len3 at 2^20 and 30M, min and sum f32, into the H200's row
#           (keys_rows), then redtune_bench keys A B A B against the committed database
#           (bench_keys). On an H100: dev_session24.sh h100k's keys_rows with the H100's uuid
#           2e956071d0b02214c4c501b293bccefc instead.
#   kall    (on an H200) every keys case the H100's row holds (min, max, sum x f32, f64, i32 x
#           heavy, len1, len1000, len3, one, rand10_50 x 2^20, 30M) with KW = 2 into the H200's
#           row; bench A B A B at 30M, f32 min and sum, then f64 and i32.
#   kost    the harness over seg_lb (after OST's buffer went from 24 to 40 KiB), minb (above),
#           then kall.
#   h100    on an H100 (none was lent in sessions 22-29): see tools/exp/dev_session29.sh h100.
step=${1:?step: pack, kw2, kship, kall, kost}
# minb: tools/exp/kw2_only.lua (KW = 2, B 256 and 512, R 8 and 16, OST 0 and 1) tuned by the
# committed build and by build/exp/redtune (the same with tools/exp/minb.patch: seg_lb's keys
# kernel asks ptxas for 1536 threads an SM), keys len3, heavy, rand10_50 at 30M, min and sum
# f32, min f64; tools/exp/minb_ab.py's table.
minb() {
    local bin ot t0 exe log
    for bin in base exp; do
        rm -f "build/minb_$bin.db"
        for ot in min:f32 sum:f32 min:f64; do
            t0=$(date +%s)
            exe=build/redtune log=$L/minb_${bin}_${ot%:*}_${ot#*:}.log
            [ $bin = exp ] && exe=build/exp/redtune
            timeout 40 "$exe" --device 0 \
                --op "${ot%:*}" --type "${ot#*:}" --segmented keys --space tools/exp/kw2_only.lua \
                --profiles len3,heavy,rand10_50 --sizes 30M --seed 7 --db "build/minb_$bin.db" \
                > "$log" 2>&1
            echo "minb $bin $ot: exit $? ($(( $(date +%s) - t0 )) s)," \
                "$(grep -c ': wrong: \|: fault: ' "$log") not ok" >> "$S"
        done
        build/redtune measurements --db "build/minb_$bin.db" --format csv > "$L/minb_$bin.csv"
    done
    python3 tools/exp/minb_ab.py "$L/minb_base.csv" "$L/minb_exp.csv" >> "$S" 2>&1
}
. "$(dirname "$0")/dev_lib.sh"
dev_start c30 "$step"
case $step in
kw2)
    harness 150 seg_lb
    tests 'seg_RT_MIN_RT_F*' 60
    MARK_LAYOUT=keys MARK_PROFILES=heavy,len3,rand10_50 MARK_SIZES=2^20,30M \
        mark_tune kw2 tools/exp/kw2_space.lua 90 min:f32 sum:f32
    # KW = 2 alone for len3, so that redtune_bench runs its best under Nsight Compute
    MARK_LAYOUT=keys MARK_PROFILES=len3 mark_tune kw2only tools/exp/kw2_only.lua 60 min:f32
    fits 60 "ncu" && ncu_sass kw2len3 build/kw2only.db len3 keys ;;
kship)
    keys_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 min:f32 sum:f32
    python3 tools/exp/stage2_sum.py <(build/redtune measurements --db build/keys.db --format csv) \
        >> "$S" 2>&1
    build/redtune merge "$T" "$OUT/keys_into.db" -o build/merged.db --force >> "$S" 2>&1
    fits 150 "bench keys" && bench_keys 40 ;;
kost)
    # seg_lb's OST buffer at 40 KiB (was 24): the harness over seg_lb, minb, then kall's steps
    harness 140 seg_lb
    minb
    ;&
kall)
    # every shipped keys case (the H100 row's: min, max, sum x f32, f64, i32 x six profiles x
    # 2^20 and 30M) into the H200's row with KW = 2 in the space; bench A B A B at 30M
    KEYS_PROFILES=heavy,len1,len1000,len3,one,rand10_50 KEYS_LIMIT=100 \
        keys_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 min:f32 sum:f32 max:f32 min:f64 sum:f64 \
        max:f64 min:i32 sum:i32 max:i32
    build/redtune merge "$T" "$OUT/keys_into.db" -o build/merged.db --force >> "$S" 2>&1
    fits 40 "bench keys" && bench_keys 40
    fits 90 "bench keys, every type" && seg_ab t shipped merged build/bench/redtune_bench "$T" \
        build/bench/redtune_bench build/merged.db 40 keys \
        --profiles heavy,len3,rand10_50,len1,len1000 \
        --ops min,max,sum --types f64,i32 --sizes 30M ;;
esac
dev_end
