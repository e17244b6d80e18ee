#!/bin/bash
# dev_session20.sh STEP - device runs of the twentieth session, one step a call on an H100;
# logs under $OUT/logs (packed into $OUT/logs.tgz), a summary ($OUT/sum.txt) printed last; the
# functions are tools/exp/dev_lib.sh's. Carried: build/c20.tar.xz (stripped binaries; `bash
# tools/exp/dev_session20.sh pack` makes it here), build/devlib, build/h100.sql.xz
# (db/tuned/h100.sql, xz'd, moved out of the tree so that the call stays under 64 MiB).
#   check   the C GPU tests 'api_gpu*' (the nineteenth session changed api_gpu_database's
#           expectations: a winner serves sizes up to four times its own); issue 14's small n
#           with oneblock at 64 and 128 threads (tools/exp/small_space.lua): argmax f32 at 2^4
#           .. 2^12, min, max, sum x f32, f64, i32 at 2^8 .. 2^12, tuned into build/small.db,
#           merged into the rows the lookup takes (tools/exp/split_merge.py, build/merged.db),
#           then redtune_bench at those sizes and between them, the committed database
#           against the merge, A B A B.
#   quality issue 12's live quality run of local search (tools/strategy_quality.sh,
#           CASES=wide, $STRATEGIES, default local:12%,6), with the nineteenth session's step
#           into a family (run 2), then with a segmented case's start at a like profile's
#           winner (run 3, STRATEGIES="local:12%,6 local:15%,7").
#   h200    (on an H200) issue 14's H200 rows at the small sizes they lack: min f32, sum f32,
#           max f64, sum i32 at 16 .. 512, 2048, 8192 over the default space, merged into the
#           H200 row of db/tuned/h200.sql (build/merged.db); redtune_bench --every-n to 2^16
#           before and after.
#   tiny    (run 5) n <= 1024 with tree_sequential at 32 and 64 threads and oneblock at 64
#           and 128 (tools/exp/tiny_space.lua): min, sum x f32, i32, max f64, argmax f32 at 16,
#           64, 256, 512, 1024, merged into the rows the lookup takes; redtune_bench --every-n
#           to 2^10 (and argmax to 2^11), the committed database against the merge, A B A B.
#   wideu   (run 6) gridstride with 16-byte vectors, U = 4 or 8 in flight (up to 128 bytes;
#           tools/exp/wide_u_space.lua): argmax, var_mean, sumsq f32 at 2^26 and sum, amax bf16
#           at 2^28, merged into the rows the lookup takes; redtune_bench --type-cases, the
#           committed database against the merge, A B A B.
#   ragged  (run 8; the template change it measured is f196c9e, reverted in 2100903: run it
#           at f196c9e) gridstride's partial tile as runs (rt_lift_run per vector, as the whole
#           tiles): the C GPU tests of the operators with a run ('gpu_run_*', 'gpu_all_nan*',
#           min/max f32 and f64) with this tree's binaries (build/c20.tar.xz, packed after the
#           change); then, A B A B, redtune_bench --every-n to 2^14 for argmax and var_mean f32
#           (--type-cases) and min, max f32, with the binaries and database before the change
#           (build/c20old.tar.xz, build/h100.sql.xz) against those after it
#           (build/h100_new.sql.xz: tools/refresh_shipped.sh's CUBINs).
#   partial (run 9; gs_partial is 350784b, reverted in b7e0c89: run it at 350784b) gridstride's
#           partial tile loaded with the whole tiles' hint and combined by a tree of selects:
#           the C GPU tests 'gpu_run_*', 'gpu_RT_*', 'gpu_all_nan*' with this tree's binaries; then tools/exp/partial_space.lua (three configs) timed by
#           the tuner for argmax, var_mean, sum, min f32 at 878, 1024, 5554, 8192, 100003,
#           131072, the binaries before the change (build/c20old.tar.xz) against these, A B A B.
#   icache  (run 10) the partial tile's cost, cold against hot: tools/exp/partial_space.lua
#           timed by the tuner for argmax and var_mean f32 at 878, 1024, 5554, 8192, with the L2
#           flushed (data and instructions fetched from DRAM) and hot (both in the L2), twice.
step=${1:?step: pack, check, quality, h200, tiny, wideu, ragged, partial, icache}
. "$(dirname "$0")/dev_lib.sh"
if [ "$step" = pack ]; then
    dev_pack c20 "redtune tests/all bench/redtune_bench"
    exit 0
fi
# flat and argmax benches of DB, tagged TAG: the CSVs to $OUT, the summaries to $S.
smallbench() {
    bench_run "flat_$2" 60 --db "$1" --ops min,max,sum --types f32,f64,i32 \
        --sizes 256,384,512,768,1024,1500,2048,3000,4096,6000 --regimes cold
    bench_run "argmax_$2" 60 --db "$1" --type-cases --every-n --max-n 2^13 --random 6 --seed 1 \
        --ops argmax --types f32
}
if [ "$step" = ragged ] || [ "$step" = partial ]; then
    xz -dc build/h100_new.sql.xz > db/tuned/h100.sql
else
    [ -f db/tuned/h100.sql ] || xz -dc build/h100.sql.xz > db/tuned/h100.sql
fi
dev_begin c20
case $step in
check)
    tests 'api_gpu*' 200
    r1=d1eab1107317a29f534f626ae991c0a5 r2=f10e2dcb19c42310befa3c626c47065a
    r7=0eeddf9cd5971aaa0b69144449955a6b r8=041de41587225a3906d82066169a497e
    small=256,512,1024,2048,4096
    tune_each small 40 16,32,64,128,256,512,1024,2048,4096 tools/exp/small_space.lua argmax:f32
    tune_each small 25 $small tools/exp/small_space.lua min:f32 max:f32 sum:f32 min:f64 max:f64 \
        sum:f64 min:i32 max:i32 sum:i32
    dship small
    python3 tools/exp/split_merge.py "$OUT/small_ship.db" "$T" build/merged.db \
        min:f64:$r1 max:f64:$r1 sum:f64:$r1 min:i32:$r1 max:i32:$r1 sum:i32:$r2 \
        min:f32:$r7 sum:f32:$r7 max:f32:$r1 argmax:f32:$r8 > "$L/merge.log" 2>&1
    echo "split_merge.py: exit $?" >> "$S"
    smallbench "$T" old
    smallbench build/merged.db new
    smallbench "$T" old2
    smallbench build/merged.db new2 ;;
quality)
    t0=$(date +%s)
    OUT=$OUT/quality CASES=wide STRATEGIES=${STRATEGIES:-"local:12%,6"} timeout 400 bash tools/strategy_quality.sh \
        > "$L/quality.log" 2>&1
    echo "strategy_quality.sh wide local:12%,6: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    tail -n 45 "$L/quality.log" >> "$S" ;;
h200)
    r=8b59dd2a77fc5356c5b5d639fc1cc192
    hsweep() {   # DB TAG
        bench_run "h200_everyn_$2" 120 --db "$1" --every-n --max-n 2^16 --random 8 --seed 1 \
            --ops min,sum,max --types f32,f64,i32 --regimes cold
    }
    hsweep "$T" before
    tune_each h200small 50 16,32,64,128,256,512,2048,8192 "" min:f32 sum:f32 max:f64 sum:i32
    dship h200small H200
    python3 tools/exp/split_merge.py "$OUT/h200small_ship.db" "$T" build/merged.db \
        min:f32:$r sum:f32:$r max:f64:$r sum:i32:$r > "$L/merge.log" 2>&1
    echo "split_merge.py: exit $?" >> "$S"
    hsweep build/merged.db after ;;
tiny)
    r1=d1eab1107317a29f534f626ae991c0a5 r2=f10e2dcb19c42310befa3c626c47065a
    r7=0eeddf9cd5971aaa0b69144449955a6b r8=041de41587225a3906d82066169a497e
    tune_each tiny 40 16,64,256,512,1024 tools/exp/tiny_space.lua min:f32 sum:f32 min:i32 sum:i32 \
        max:f64 argmax:f32
    dship tiny
    cat "$L/tiny_best.txt" >> "$S"
    python3 tools/exp/split_merge.py "$OUT/tiny_ship.db" "$T" build/merged.db \
        min:f32:$r7 sum:f32:$r7 min:i32:$r1 sum:i32:$r2 max:f64:$r1 argmax:f32:$r8 > "$L/merge.log" 2>&1
    echo "split_merge.py: exit $?" >> "$S"
    tsweep() {   # DB TAG
        bench_run "tiny_everyn_$2" 60 --db "$1" --every-n --max-n 2^10 --random 6 --seed 1 \
            --ops min,sum,max --types f32,f64,i32 --regimes cold
        bench_run "tiny_argmax_$2" 60 --db "$1" --type-cases --every-n --max-n 2^11 --random 6 \
            --seed 1 --ops argmax --types f32
    }
    tsweep "$T" old
    tsweep build/merged.db new
    tsweep "$T" old2
    tsweep build/merged.db new2 ;;
wideu)
    r5=d3f87696063a1345e8ae0a683dc688e1 r8=041de41587225a3906d82066169a497e
    tune_each wideu 60 "" tools/exp/wide_u_space.lua argmax:f32:2^26 var_mean:f32:2^26 \
        sumsq:f32:2^26 sum:bf16:2^28 amax:bf16:2^28
    dship wideu
    cat "$L/wideu_best.txt" >> "$S"
    python3 tools/exp/split_merge.py "$OUT/wideu_ship.db" "$T" build/merged.db \
        argmax:f32:$r8 var_mean:f32:$r8 sumsq:f32:$r5 sum:bf16:$r5 amax:bf16:$r8 > "$L/merge.log" 2>&1
    echo "split_merge.py: exit $?" >> "$S"
    for v in old new old2 new2; do
        d=$T; [ "${v#new}" != "$v" ] && d=build/merged.db
        bench_run "wideu_types_$v" 80 --db "$d" --type-cases
    done
    python3 - "$OUT" >> "$S" <<'PY'
import csv, sys
rows = {}
for v in ("old", "new", "old2", "new2"):
    for r in csv.DictReader(open(f"{sys.argv[1]}/wideu_types_{v}.csv")):
        rows.setdefault((r["case"], r["n"]), {})[v] = r
for (case, n), d in rows.items():
    t = {v: float(d[v]["redtune_us"]) for v in d}
    lim = float(d["old"]["limit_us"])
    print(f"{case:24s} n={n:>10s} old {t['old']:8.2f} {t['old2']:8.2f}  new {t['new']:8.2f} {t['new2']:8.2f}"
          f"  % of limit old {100*lim/min(t['old'],t['old2']):5.1f} new {100*lim/min(t['new'],t['new2']):5.1f}"
          f"  new: {d['new']['family']} {d['new']['params']}")
PY
    ;;
ragged)
    tests 'gpu_run_*' 300
    tests 'gpu_all_nan*' 120
    tests 'gpu_RT_MIN_RT_F32' 120
    tests 'gpu_RT_MAX_RT_F64' 120
    mkdir -p build/old && tar -C build/old -xJf build/c20old.tar.xz
    cp db/tuned/h200.sql build/old_h200.sql && xz -dc build/h100.sql.xz > build/old_h100.sql
    build/old/redtune load --force -o build/old.db build/old_h100.sql build/old_h200.sql > /dev/null
    for v in old new old2 new2; do
        d=$T bin=build/bench/redtune_bench
        [ "${v#old}" != "$v" ] && d=build/old.db bin=build/old/bench/redtune_bench
        t0=$(date +%s)
        timeout 60 $bin --db "$d" --type-cases --every-n --max-n 2^14 --random 8 --seed 3 \
            --ops argmax,var_mean --types f32 --csv "$OUT/ragged_types_$v.csv" > "$L/ragged_types_$v.log" 2>&1
        echo "types every n ($v): exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
        sed -n '/^summary/,$p' "$L/ragged_types_$v.log" >> "$S"
        t0=$(date +%s)
        timeout 60 $bin --db "$d" --every-n --max-n 2^14 --random 8 --seed 3 --ops min,max \
            --types f32 --regimes cold --csv "$OUT/ragged_flat_$v.csv" > "$L/ragged_flat_$v.log" 2>&1
        echo "flat every n ($v): exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
        sed -n '/^summary/,$p' "$L/ragged_flat_$v.log" | grep -v 'floor at n' >> "$S"
    done ;;
partial)
    tests 'gpu_run_*' 300
    tests 'gpu_RT_*' 300
    tests 'gpu_all_nan*' 120
    mkdir -p build/old && tar -C build/old -xJf build/c20old.tar.xz
    for v in old new old2 new2; do
        bin=build/redtune
        [ "${v#old}" != "$v" ] && bin=build/old/redtune
        t0=$(date +%s)
        for op in argmax var_mean sum min; do
            timeout 60 $bin --device 0 --op $op --type f32 --space tools/exp/partial_space.lua \
                --sizes 878,1024,5554,8192,100003,131072 --db "build/partial_$v.db" \
                > "$L/partial_${v}_$op.log" 2>&1 || echo "$v $op: exit $?" >> "$S"
        done
        echo "partial ($v): $(( $(date +%s) - t0 )) s" >> "$S"
        $bin measurements --db "build/partial_$v.db" --format csv > "$OUT/partial_$v.csv"
    done
    python3 tools/exp/meas_side.py "$OUT/partial" old:old,old2 new:new,new2 >> "$S"
    ;;
icache)
    for v in cold hot cold2 hot2; do
        hot=; [ "${v#hot}" != "$v" ] && hot=--hot
        for op in argmax var_mean; do
            timeout 60 build/redtune --device 0 --op $op --type f32 $hot \
                --space tools/exp/partial_space.lua --sizes 878,1024,5554,8192 \
                --db "build/icache_$v.db" > "$L/icache_${v}_$op.log" 2>&1 || echo "$v $op: exit $?" >> "$S"
        done
        build/redtune measurements --db "build/icache_$v.db" --format csv > "$OUT/icache_$v.csv"
    done
    python3 tools/exp/meas_side.py "$OUT/icache" cold:cold,cold2 hot:hot,hot2 >> "$S"
    ;;
*)
    echo "dev_session20.sh: no step '$step'" >&2; exit 2 ;;
esac
dev_end
