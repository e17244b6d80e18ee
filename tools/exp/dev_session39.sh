#!/bin/bash
# dev_session39.sh STEP - device runs of the thirty-ninth session; one step a call; logs under
# $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the
# functions are tools/exp/dev_lib.sh's. Carried: build/c36.tar.xz (`bash
# tools/exp/dev_session36.sh pack`), build/devlib, build/h100.sql.xz.
#   qf      (an H100) issue 12's live quality run of local search (tools/strategy_quality.sh,
#           CASES=wide, local:12%,6), not run live since the twentieth session; then the H100's
#           offsets len1 min f64 row at 30M, which run 1's ship measured (seg_pipe 212.9 us
#           against the shipped seg_per's 255.9) but cut short before it was exported, merged;
#           the bench over len1 min f64, the committed database against the merge, A B A B.
#   len1    the len1 min f64 row alone, with 240 s (qf's 90 s ran out: seg_per LANES=256 takes
#           54-87 ms a run at 30M), merged; the bench as qf's.
#   final   the C GPU tests 'api_gpu*' and 'seg_*F64*' over the database as committed, then the bench
#           over every offsets profile, min and sum x f32 and f64 at 30M, the committed database
#           against build/merged.db (on a warm machine after len1: with its row), A B A B.
#   l1000   (final saw len1000 min f64 at 1.03x CUB's DeviceSegmentedReduce) the H100's len1000
#           rows of min and sum f64 at 30M with the shipped space (100 s each), merged; the bench
#           over len1000 f64, A B A B.
#   ints    redtune_bench over every offsets profile, min and sum x i32 and i64 at 30M, with
#           build/merged.db (each case against CUB's DeviceSegmentedReduce and the limit), once.
#   kin     (carried: build/c39.tar.xz, this tree's binaries, and build/c36.tar.xz, those before
#           the type of the same width) the library's choice for a type with no winner of its
#           own (i64, u64, u32): the bench before (build/bench_before) and after, the committed
#           database: offsets over every profile, min and sum x i64, u64, u32 at 30M, A B A B;
#           flat min and sum x i64, u64, u32 at 2^16, 2^20, 2^24, 2^28, cold, before and after
#           once each; then the C GPU tests 'api_gpu*'.
step=${1:?step: pack, qf, len1, final, l1000, ints, kin}
. "$(dirname "$0")/dev_lib.sh"
if [ "$step" = pack ]; then
    dev_start c39 pack
elif [ "$step" = kin ]; then
    rm -rf /tmp/c36o && mkdir -p /tmp/c36o build/bench_before && tar -C /tmp/c36o -xJf build/c36.tar.xz \
        && cp /tmp/c36o/bench/redtune_bench build/bench_before/
    dev_start c39 "$step"
else
    dev_start c36 "$step"
fi
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
*H200*) dev=H200 uuid=8b59dd2a77fc5356c5b5d639fc1cc192 ;;
*) dev=H100 uuid=2e956071d0b02214c4c501b293bccefc ;;
esac
len1_row() {
    SHIP_LIMIT=$1 tune_rows $dev $uuid len1 30M min:f64 \
        && fits 50 "bench len1" && seg_ab m shipped merged build/bench/redtune_bench "$T" \
        build/bench/redtune_bench build/merged.db 40 offsets \
        --profiles len1 --ops min --types f64 --sizes 30M
}
case $step in
qf)
    quality "local:12%,6"
    fits 150 "len1 min f64" && len1_row 90 ;;
len1)
    len1_row 240 ;;
final)
    tests 'api_gpu*' 90
    tests 'seg_*F64*' 60
    [ -f build/merged.db ] || cp "$T" build/merged.db
    fits 170 "bench offsets" && bench_all 40 ;;
l1000)
    SHIP_LIMIT=100 tune_rows $dev $uuid len1000 30M min:f64 sum:f64
    fits 60 "bench len1000" && seg_ab m shipped merged build/bench/redtune_bench "$T" \
        build/bench/redtune_bench build/merged.db 30 offsets \
        --profiles len1000 --ops min,sum --types f64 --sizes 30M ;;
ints)
    [ -f build/merged.db ] || cp "$T" build/merged.db
    bench_run ints 200 --db build/merged.db --segmented offsets \
        --profiles rand10_50,len3,len1,len1000,heavy,one --ops min,sum --types i32,i64 \
        --sizes 30M --regimes cold
    grep -i 'offsets' "$L/ints.log" | head -40 >> "$S" ;;
kin)
    seg_ab kin before after build/bench_before/redtune_bench "$T" build/bench/redtune_bench "$T" \
        40 offsets --profiles rand10_50,len3,len1,len1000,heavy,one --ops min,sum \
        --types i64,u64,u32 --sizes 30M
    for v in before after; do
        bin=build/bench/redtune_bench
        [ $v = before ] && bin=build/bench_before/redtune_bench
        t0=$(date +%s)
        timeout 40 $bin --db "$T" --ops min,sum --types i64,u64,u32 --sizes 2^16,2^20,2^24,2^28 \
            --regimes cold --csv "$OUT/flat_$v.csv" > "$L/flat_$v.log" 2>&1
        echo "flat bench $v: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
        sed -n '/^summary/,$p' "$L/flat_$v.log" | grep -v 'floor at n' >> "$S"
    done
    fits 100 "api_gpu tests" && tests 'api_gpu*' 95 ;;
esac
dev_end
