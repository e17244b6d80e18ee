#!/bin/bash
# dev_session24.sh STEP - device runs of the twenty-fourth session, one step a call on the
# lent H200; logs under $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in
# $OUT/all.tgz; the functions are tools/exp/dev_lib.sh's. Carried: build/c24.tar.xz
# (stripped binaries; `bash tools/exp/dev_session24.sh pack` makes it here), build/devlib,
# build/h100.sql.xz (db/tuned/h100.sql, xz'd, out of the tree for the 64 MiB limit).
#   stream  seg_stream WP (the window's loads 32*WP a round trip, the next tile's window
#           prefetched) and MG (a lane's mask bits OR-ed by shuffles): build/seg_harness
#           --quick --only seg_stream; tools/exp/stream_wp_space.lua tuned for offsets heavy,
#           len3, rand10_50 and one at 30M (min f32), each variant's best per case
#           (tools/exp/stage2_sum.py); Nsight Compute (SpeedOfLight, WarpStateStats,
#           Occupancy) over the H200's heavy winner without and with WP=8 MG=1.
#           (Run 1; WP and MG are not kept: the template is back as it was, this step no longer
#           builds.)
#   prof    Nsight Compute's full set over seg_stream's H200 heavy winner (B=256 R=32 V=4 PF=0
#           MINW=24) on offsets heavy, rand10_50 and one at 30M (min f32), each tuned alone
#           first and run by redtune_bench from that database: the report, its details page and
#           its SASS page with each instruction's counts and stall samples ($L/sass_*.csv).
#   walk    seg_stream's walk without branches (ranks instead of a slot table): the harness,
#           the C GPU tests 'seg_RT_MIN_RT_F*'; tools/exp/stream_space.lua tuned by the binary
#           before (build/before/redtune, HEAD's) and after, A B A B, for offsets heavy,
#           rand10_50, len3 and one at 30M (min f32, sum f64), tools/exp/stream_ab.py's table;
#           then the SASS page of the new heavy winner as in prof.
step=${1:?step: pack, stream, prof, walk}
. "$(dirname "$0")/dev_lib.sh"
if [ "$step" = pack ]; then
    dev_pack c24 "redtune tests/all bench/redtune_bench seg_harness ${BEFORE:+before/redtune}"
    exit 0
fi
[ -f db/tuned/h100.sql ] || xz -dc build/h100.sql.xz > db/tuned/h100.sql
dev_begin c24
export REDTUNE_BIN=$PWD/build/redtune
# ncu_one TAG PARAMS: Nsight Compute over the tuner running seg_stream PARAMS alone on offsets
# heavy at 30M (min f32): the verification launch and the first timed one.
ncu_one() {
    printf 'return { { family = "seg_stream", params = { %s } } }\n' "$2" > "build/ncu_$1.lua"
    timeout 60 ncu --clock-control none -k regex:rt_seg -c 2 --section SpeedOfLight --section WarpStateStats \
        --section Occupancy --section LaunchStats build/redtune --device 0 --op min --type f32 \
        --segmented offsets --space "build/ncu_$1.lua" --profiles heavy --sizes 30M --seed 7 \
        --db "build/ncu_$1.db" > "$L/ncu_$1.log" 2>&1
    echo "ncu $1 ($2): exit $?" >> "$S"
    grep -E '^  rt_seg|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Stall|Issued Warp|Warp Cycles Per Issued' \
        "$L/ncu_$1.log" | sed 's/  */ /g' >> "$S"
}
case $step in
stream)
    harness 110 seg_stream
    rm -f build/ss.db
    t0=$(date +%s)
    timeout 250 build/redtune --device 0 --op min --type f32 --segmented offsets \
        --space tools/exp/stream_wp_space.lua --profiles heavy,len3,rand10_50,one --sizes 30M --seed 7 \
        --db build/ss.db > "$L/tune_ss.log" 2>&1
    echo "redtune stream_wp_space: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    build/redtune measurements --db build/ss.db --format csv | gzip -9 > "$OUT/ss_meas.csv.gz"
    python3 tools/exp/stage2_sum.py <(zcat "$OUT/ss_meas.csv.gz") >> "$S" 2>&1
    ncu_one wp0 "B = 256, R = 32, V = 4, PF = 0, MINW = 24, WS = 0"
    ncu_one wp8 "B = 256, R = 32, V = 4, PF = 0, MINW = 24, WS = 0, WP = 8, MG = 1" ;;
prof)
    printf 'return { { family = "seg_stream", params = { B = 256, R = 32, V = 4, PF = 0, MINW = 24, WS = 0 } } }\n' \
        > build/prof.lua
    for p in heavy rand10_50 one; do
        rm -f "build/prof_$p.db"
        timeout 40 build/redtune --device 0 --op min --type f32 --segmented offsets --space build/prof.lua \
            --profiles "$p" --sizes 30M --seed 7 --db "build/prof_$p.db" > "$L/prof_tune_$p.log" 2>&1
        echo "tune $p: exit $?" >> "$S"
        timeout 120 ncu --clock-control none -k 'regex:^rt_seg$' -s 2 -c 1 --set full -o "$OUT/prof_$p" \
            build/bench/redtune_bench --db "build/prof_$p.db" --segmented offsets --profiles "$p" --ops min \
            --types f32 --sizes 30M --regimes cold > "$L/prof_ncu_$p.log" 2>&1
        echo "ncu $p: exit $?" >> "$S"
        ncu --import "$OUT/prof_$p.ncu-rep" --page details > "$L/details_$p.txt" 2>&1
        ncu --import "$OUT/prof_$p.ncu-rep" --page source --print-source sass --csv > "$L/sass_$p.csv" 2>&1
        grep -E 'Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Executed Ipc A|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Executed Instructions  ' \
            "$L/details_$p.txt" | sed 's/  */ /g' >> "$S"
    done ;;
walk)
    harness 80 seg_stream
    tests 'seg_RT_MIN_RT_F*' 60
    for r in 1 2; do
        for v in before after; do
            bin=build/redtune
            [ $v = before ] && bin=build/before/redtune
            rm -f "build/walk_$v.db"
            for ot in min:f32 sum:f64; do
                timeout 60 $bin --device 0 --op "${ot%:*}" --type "${ot#*:}" --segmented offsets \
                    --space tools/exp/stream_space.lua --profiles heavy,rand10_50,len3,one --sizes 30M --seed 7 \
                    --db "build/walk_$v.db" > "$L/walk_${v}_${r}_${ot%:*}.log" 2>&1
                echo "tune $v run $r $ot: exit $?" >> "$S"
            done
            build/redtune measurements --db "build/walk_$v.db" --format csv > "$L/walk_${v}_$r.csv"
        done
    done
    python3 tools/exp/stream_ab.py "$L"/walk_before_1.csv "$L"/walk_after_1.csv "$L"/walk_before_2.csv \
        "$L"/walk_after_2.csv >> "$S" 2>&1
    printf 'return { { family = "seg_stream", params = { B = 256, R = 32, V = 4, PF = 0, MINW = 24, WS = 0 } } }\n' \
        > build/prof.lua
    rm -f build/prof_heavy.db
    timeout 40 build/redtune --device 0 --op min --type f32 --segmented offsets --space build/prof.lua \
        --profiles heavy --sizes 30M --seed 7 --db build/prof_heavy.db > "$L/prof_tune_heavy.log" 2>&1
    timeout 120 ncu --clock-control none -k 'regex:^rt_seg$' -s 2 -c 1 --set full -o "$L/prof_heavy" \
        build/bench/redtune_bench --db build/prof_heavy.db --segmented offsets --profiles heavy --ops min \
        --types f32 --sizes 30M --regimes cold > "$L/prof_ncu_heavy.log" 2>&1
    echo "ncu heavy: exit $?" >> "$S"
    ncu --import "$L/prof_heavy.ncu-rep" --page details > "$L/details_heavy.txt" 2>&1
    ncu --import "$L/prof_heavy.ncu-rep" --page source --print-source sass --csv > "$L/sass_heavy.csv" 2>&1
    rm -f "$L/prof_heavy.ncu-rep"
    grep -E 'Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Instructions  ' \
        "$L/details_heavy.txt" | sed 's/  */ /g' >> "$S" ;;
*)
    echo "dev_session24.sh: no step '$step'" >&2; exit 2 ;;
esac
dev_end
