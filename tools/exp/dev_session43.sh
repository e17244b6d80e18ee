#!/bin/bash
# dev_session43.sh STEP - device runs of the forty-third session; one step a call; logs under
# $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the
# functions are tools/exp/dev_lib.sh's. Carried: build/c43.tar.xz (`bash
# tools/exp/dev_session43.sh pack` at 9f7c501: argmin/argmax's warp select, before the integer
# warp reduction), build/c44.tar.xz (`... pack44` with it), build/devlib, build/h100.sql.xz,
# build/python (`ninja python`, without its redtune.db), build/pyt (Debian's pytest, pluggy,
# iniconfig and py).
#   intab   (issue 14) sum, min and max in a 32-bit integer accumulator by one redux.sync a
#           warp (runtime/glue.c rt_warp_reduce): the C GPU tests of the integer sums, min and
#           max (i32, u32, i64, u64, i8, u8; every variant), then redtune_bench --every-n to
#           2^16 for min, sum, max of i32 and u32 (cold), before and after, A B A B
#           (tools/exp/flat_ab.py's table); the segmented GPU tests ('seg_*': seg_per's group
#           tree takes the warp reduction) with the time left; the large sizes (2^20, 2^24,
#           2^28) A B A B where a call has time for them.
#   tests2  (issues 14, 15, 16) the GPU tests the change touches beyond intab's: the types,
#           the segmented ones (seg_per's group tree: argmin/argmax's warp select of the
#           forty-second session and the integer reduction), along an axis; the Python GPU
#           tests with the time left.
#   i32re   (issue 14; for the next session) min, sum and max i32 at 256 .. 8192 retuned with
#           the integer reduction (their winners were chosen before it: oneblock at 512 and
#           gridstride at 4096 trail CUB by 2-5%), into the row the lookup takes for flat i32
#           (the H100 row with the most of them), merged; then redtune_bench --every-n to 2^14
#           for i32 and u32, the committed database against the merge, A B A B. RE_TYPE=f64
#           (or f32) does the same for that type (the twentieth session's f64 cells at 2^8 ..
#           2^11 trailed CUB by 2-4%), its every n for that type alone.
#   qlive   (issue 12; for the next session) the live quality run (tools/strategy_quality.sh,
#           CASES=wide) with local search's restart from the other centres, local:12%,6 and
#           local:15%,6.
#   h200r   (issue 14; an H200) its offsets heavy rows with the shipped space (min and sum, f32
#           and f64, at 2^22 and 30M, 100 s an operator), merged into its row; redtune_bench over
#           every offsets profile, the committed database against the merge, A B A B.
step=${1:?step: pack, pack44, intab, tests2, i32re, qlive, h200r}
. "$(dirname "$0")/dev_lib.sh"
dev_start_pair c43 c44 "$step" intab tests2 i32re qlive h200r
# pair_ab TAG LIMIT A BIN_A DB_A B BIN_B DB_B ARGS...: redtune_bench ARGS (cold) with A's bench
# and database and with B's, A B A B (LIMIT s each), the CSVs as $L/TAG_{A,B}{,2}.csv,
# tools/exp/flat_ab.py's table in the summary
pair_ab() {
    local tag=$1 limit=$2 a=$3 ba=$4 da=$5 b=$6 bb=$7 db=$8 r v bin d t0
    shift 8
    for r in "" 2; do
        for v in "$a" "$b"; do
            bin=$bb d=$db
            [ "$v" = "$a" ] && bin=$ba d=$da
            t0=$(date +%s)
            timeout "$limit" "$bin" --db "$d" --regimes cold --seed 1 "$@" --csv "$L/${tag}_$v$r.csv" \
                > "$L/${tag}_$v$r.log" 2>&1
            echo "redtune_bench $* ($v${r:+ $r}): exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
        done
    done
    python3 tools/exp/flat_ab.py "$L" "$tag" "$a" "$b" >> "$S" 2>&1
}
# flat_ab TAG LIMIT ARGS...: the bench before and after, same database ($T)
flat_ab() {
    local tag=$1 limit=$2
    shift 2
    pair_ab "$tag" "$limit" before build/bench_before/redtune_bench "$T" \
        after build/bench/redtune_bench "$T" "$@"
}
# db_ab TAG LIMIT ARGS...: build/bench's, with $T and with build/merged.db
db_ab() {
    local tag=$1 limit=$2
    shift 2
    pair_ab "$tag" "$limit" committed build/bench/redtune_bench "$T" \
        merged build/bench/redtune_bench build/merged.db "$@"
}
case $step in
i32re)
    t=${RE_TYPE:-i32}
    tune_each re ${RE_LIMIT:-60} 256,512,1024,2048,4096,8192 "" min:$t sum:$t max:$t
    dship re H100
    grep -E " $t " "$L/re_best.txt" >> "$S"
    row=$(python3 -c 'import sqlite3, sys
r = sqlite3.connect(sys.argv[1]).execute("SELECT d.uuid FROM best b JOIN devices d ON d.id = b.device_id WHERE d.name LIKE ? AND b.type = ? AND b.hot = 0 AND b.layout = ? GROUP BY d.id ORDER BY count(*) DESC LIMIT 1", ("%H100%", sys.argv[2], "flat")).fetchone()
print(r[0] if r else "")' "$T" "$t")
    echo "flat $t row: $row" >> "$S"
    python3 tools/ship_into_row.py "$OUT/re_ship.db" "$T" "$row" -o "$OUT/re_into.db" >> "$S" 2>&1
    build/redtune merge "$T" "$OUT/re_into.db" -o build/merged.db --force >> "$S" 2>&1
    types=$t
    [ "$t" = i32 ] && types=i32,u32
    fits 120 "every n" && db_ab en 40 --every-n --max-n 2^14 --random 8 --ops min,sum,max --types $types ;;
qlive)
    quality "local:12%,6 local:15%,6" ;;
intab)
    tests 'gpu_RT_SUM_RT_I*' 80
    tests 'gpu_RT_SUM_RT_U*' 80
    fits 90 "min/max i tests" && tests 'gpu_RT_M*_RT_I*' 90
    fits 90 "min/max u tests" && tests 'gpu_RT_M*_RT_U*' 90
    fits 200 "every n" && flat_ab en 45 --every-n --max-n 2^16 --random 8 --ops min,sum,max --types i32,u32
    fits 100 "seg tests" && tests 'seg_*' $(left)
    fits 100 "large n" && flat_ab big 25 --sizes 2^20,2^24,2^28 --ops min,sum,max --types i32 ;;
tests2)
    tests 'gpu_types*' 60
    fits 100 "seg tests" && tests 'seg_*' 200
    fits 100 "axis tests" && tests '*axis*' 150
    fits 60 "python GPU tests" && pytests all $(left) ;;
h200r)
    SHIP_LIMIT=100 tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 heavy 2^22,30M min:f32 sum:f32 min:f64 sum:f64
    fits 100 "bench offsets" && bench_all 40 ;;
esac
dev_end
