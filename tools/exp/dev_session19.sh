#!/bin/bash
# dev_session19.sh STEP - device runs of the nineteenth session (the GPU tests the eighteenth
# session's limits cut short; issue 14's every n over every operator and type of the shipped
# database), one step a call on an H100; logs under $OUT/logs (packed into $OUT/logs.tgz), a
# summary ($OUT/sum.txt) printed last; the functions are tools/exp/dev_lib.sh's.
# Carried: build/c19.tar.xz (stripped binaries; `bash tools/exp/dev_session19.sh pack` makes it
# here), build/devlib, build/python (without its redtune.db), build/pyt, build/h100.sql.xz
# (db/tuned/h100.sql, xz'd, moved out of the tree so that the call stays under 64 MiB).
#   check   the C GPU tests '*seg*' (the eighteenth session's run stopped at its 200 s limit
#           after 25), then `redtune_bench --every-n` for min, sum and max, f32, cold.
#   python  the whole Python GPU suite (the eighteenth session ran 64 before its limit), then
#           `redtune_bench --every-n` for min, sum and max, f64 and i32, cold.
#   dense   (run 3) the small sizes where the first two runs found rt_reduce slower than CUB,
#           tuned over the default space (oneblock included, which the f64 and i32 winners
#           predate): min, max, sum f64 and i32 at every power of two 2^4, 2^6, 2^8 .. 2^16;
#           f32 at 2^4, 2^6, 2^8, 2^9, 2^12 (max f32 at 2^11, 2^13, 2^15 too); the H100 rows to
#           $OUT/dense_ship.db, merged into the rows the lookup takes (tools/exp/split_merge.py,
#           build/merged.db); then `redtune_bench --every-n` for the nine with it.
#   types   (run 4) issue 15's operators and types at every n up to 2^18 (`redtune_bench
#           --type-cases --every-n`, new this session) with db/tuned as committed after run 3;
#           the same nine at 16 .. 2^18 (every other power of two) tuned over the default space
#           (their shipped winners start at 2^20), merged into the rows the lookup takes; the
#           sweep again with the merge; then max and min, f32 and f64, at 76072 and 2^19 (run 3
#           saw min f64 76072 and max f32 2^19 1.1-1.2x CUB with the configs of runs 1 and 2).
#   types2  (run 5) the sizes run 4's 30 s limits cut off (sum bf16 and f16, amax bf16, norm2
#           f16 and bf16, mean bf16; 2^12 .. 2^18) and argmax f32 at 2^9, 2^11, 2^13 (between
#           tuned sizes it lost to CUB by 1.2-1.3x), tuned as in run 4 (carried: run 4's
#           build/dense2_ship.db); both merged as in run 4; the sweep of run 4 with them.
step=${1:?step: pack, check, python, dense, types, types2}
. "$(dirname "$0")/dev_lib.sh"
if [ "$step" = pack ]; then
    dev_pack c19 "redtune tests/all bench/redtune_bench"
    exit 0
fi
# redtune_bench --every-n OPS TYPES: the summary lines, the CSV to $OUT.
everyn() {
    local t0 tag=${1//,/}_${2//,/}
    t0=$(date +%s)
    timeout "${EVERYN_LIMIT:-200}" build/bench/redtune_bench --db "$T" --every-n --ops "$1" --types "$2" \
        --regimes cold --seed 1 --csv "$OUT/everyn_$tag.csv" > "$L/everyn_$tag.log" 2>&1
    echo "redtune_bench --every-n --ops $1 --types $2: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    grep -E ': floor, ' "$L/everyn_$tag.log" >> "$S"
    sed -n '/^summary/,$p' "$L/everyn_$tag.log" | head -40 >> "$S"
}
[ -f db/tuned/h100.sql ] || xz -dc build/h100.sql.xz > db/tuned/h100.sql
dev_begin c19
case $step in
check)
    tests '*seg*' 430
    EVERYN_LIMIT=140 everyn min,sum,max f32 ;;
python)
    pytests all 330
    EVERYN_LIMIT=230 everyn min,sum,max f64,i32 ;;
dense)
    # The device rows the lookup takes for each (db/tuned/h100.sql): the most winners.
    r1=d1eab1107317a29f534f626ae991c0a5 r2=f10e2dcb19c42310befa3c626c47065a
    r7=0eeddf9cd5971aaa0b69144449955a6b
    small=16,64,256,512,1024,2048,4096,8192,16384,32768,65536
    t0=$(date +%s)
    dtune() {   # OP TYPE SIZES LIMIT
        timeout "$4" build/redtune --device 0 --op "$1" --type "$2" --sizes "$3" \
            --db build/dense.db > "$L/dense_$1_$2.log" 2>&1
        echo "redtune --op $1 --type $2 --sizes $3: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    }
    for ty in f64 i32; do
        for op in min max sum; do dtune $op $ty $small 50; done
    done
    dtune min f32 16,64,256,512,4096 30
    dtune sum f32 16,64,256,512,4096 30
    dtune max f32 16,64,256,512,2048,4096,8192,32768 40
    dship dense
    python3 tools/exp/split_merge.py "$OUT/dense_ship.db" "$T" build/merged.db \
        min:f64:$r1 max:f64:$r1 sum:f64:$r1 min:i32:$r1 max:i32:$r1 sum:i32:$r2 \
        min:f32:$r7 sum:f32:$r7 max:f32:$r1 > "$L/merge.log" 2>&1
    echo "split_merge.py: exit $?" >> "$S"
    T=build/merged.db EVERYN_LIMIT=250 everyn min,sum,max f32,f64,i32 ;;
types)
    r5=d3f87696063a1345e8ae0a683dc688e1 r8=041de41587225a3906d82066169a497e
    tsweep() {   # DB TAG
        local t0=$(date +%s)
        timeout 100 build/bench/redtune_bench --db "$1" --type-cases --every-n --max-n 2^18 \
            --random 8 --seed 1 --csv "$OUT/types_everyn_$2.csv" > "$L/types_everyn_$2.log" 2>&1
        echo "redtune_bench --type-cases --every-n --max-n 2^18 ($2): exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
        sed -n '/^summary/,$p' "$L/types_everyn_$2.log" >> "$S"
    }
    tsweep "$T" before
    t0=$(date +%s)
    for c in sum:bf16 sum:f16 amax:bf16 norm2:f16 norm2:bf16 sumsq:f32 argmax:f32 var_mean:f32 mean:bf16; do
        set -- ${c/:/ }
        timeout 30 build/redtune --device 0 --op "$1" --type "$2" --sizes 16,64,256,1024,4096,16384,65536,262144 \
            --db build/dense2.db > "$L/dense2_$1_$2.log" 2>&1
        echo "redtune --op $1 --type $2: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    done
    dship dense2
    python3 tools/exp/split_merge.py "$OUT/dense2_ship.db" "$T" build/merged.db \
        sum:bf16:$r5 sum:f16:$r5 norm2:f16:$r5 norm2:bf16:$r5 sumsq:f32:$r5 \
        amax:bf16:$r8 argmax:f32:$r8 var_mean:f32:$r8 mean:bf16:$r8 > "$L/merge2.log" 2>&1
    echo "split_merge.py: exit $?" >> "$S"
    tsweep build/merged.db after
    timeout 60 build/bench/redtune_bench --db build/merged.db --ops max,min --types f32,f64 \
        --sizes 76072,524288 --regimes cold --csv "$OUT/flat_recheck.csv" > "$L/flat_recheck.log" 2>&1
    echo "redtune_bench --ops max,min --types f32,f64 --sizes 76072,524288: exit $?" >> "$S"
    grep -vE "^redtune_bench: \\[" "$L/flat_recheck.log" | tail -n 30 >> "$S" ;;
types2)
    r5=d3f87696063a1345e8ae0a683dc688e1 r8=041de41587225a3906d82066169a497e
    t0=$(date +%s)
    for c in sum:bf16:65536,262144 sum:f16:4096,16384,65536,262144 amax:bf16:65536,262144 \
             norm2:f16:16384,65536,262144 norm2:bf16:65536,262144 mean:bf16:16384,65536,262144 \
             argmax:f32:512,2048,8192; do
        set -- ${c//:/ }
        timeout 40 build/redtune --device 0 --op "$1" --type "$2" --sizes "$3" \
            --db build/dense3.db > "$L/dense3_$1_$2.log" 2>&1
        echo "redtune --op $1 --type $2 --sizes $3: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    done
    dship dense3
    m="sum:bf16:$r5 sum:f16:$r5 norm2:f16:$r5 norm2:bf16:$r5 sumsq:f32:$r5 amax:bf16:$r8 argmax:f32:$r8 var_mean:f32:$r8 mean:bf16:$r8"
    python3 tools/exp/split_merge.py build/dense2_ship.db "$T" build/merged2.db $m > "$L/merge2.log" 2>&1 &&
        python3 tools/exp/split_merge.py "$OUT/dense3_ship.db" build/merged2.db build/merged.db $m > "$L/merge3.log" 2>&1
    echo "split_merge.py (run 4's, then run 5's): exit $?" >> "$S"
    t0=$(date +%s)
    timeout 60 build/bench/redtune_bench --db build/merged.db --type-cases --every-n --max-n 2^18 \
        --random 8 --seed 1 --csv "$OUT/types_everyn_final.csv" > "$L/types_everyn_final.log" 2>&1
    echo "redtune_bench --type-cases --every-n --max-n 2^18 (final): exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    sed -n '/^summary/,$p' "$L/types_everyn_final.log" >> "$S" ;;
*)
    echo "dev_session19.sh: no step '$step'" >&2; exit 2 ;;
esac
dev_end
