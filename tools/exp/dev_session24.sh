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
#           Run 1, on fd963c9 with tools/exp/seg_stream_wp_mg.patch applied (WP and MG are
#           not kept); ncu_one caught the tuner's small check launch (a grid of 4), not the
#           timed one, so `prof` runs Nsight Compute over redtune_bench instead.
#   prof    Nsight Compute's full set over seg_stream's H200 heavy winner (B=256 R=32 V=4 PF=0
#           MINW=24) on offsets heavy, rand10_50 and one at 30M (min f32), each tuned alone
#           first and run by redtune_bench from that database: the report, its details page and
#           its SASS page with each instruction's counts and stall samples ($L/sass_*.csv).
#   walk    seg_stream's walk without branches (ranks instead of a slot table): the harness,
#           the C GPU tests 'seg_RT_MIN_RT_F*'; tools/exp/stream_space.lua tuned by the binary
#           before (build/before/redtune, HEAD's) and after, A B A B, for offsets heavy,
#           rand10_50, len3 and one at 30M (min f32, sum f64), tools/exp/stream_ab.py's table;
#           then the SASS page of the new heavy winner as in prof.
#   iter2   seg_stream's windows at file scope (no address rebuilt at each access) and a store
#           every element (a spare slot), and seg_lb's keys walk without branches: the harness for
#           both families, the C GPU tests 'seg_*'; stream_space.lua (heavy, rand10_50, len3)
#           before (build/before/redtune: 6617b1d) and after, A B A B, min f32 and sum f64;
#           tools/exp/keys_lb_space.lua (keys heavy, len3, rand10_50; min, sum f32) with KW 0
#           and 1, twice, each KW's best per case; the keys bench (redtune_bench --segmented
#           keys: against CUB's ReduceByKey).
#           (Run 4's keys part compared the binary before with one whose walk was KW = 1's
#           unconditionally; KW became a parameter afterwards, default 0, the old walk.)
#   final   the committed code: the harness for seg_stream and seg_lb (with KW=1 shapes), the
#           C GPU tests 'seg_RT_MIN_RT_F*' (a KW=1 variant) and 'api_gpu_seg*'; the H200's
#           first keys rows: lua/spaces/segmented_ship.lua (KW 0 and 1) for keys heavy and
#           len3 at 2^20 and 30M (min, sum f32) put into the H200's row and merged
#           ($OUT/keys_into.db, build/merged.db); redtune_bench over every offsets profile
#           (min, sum x f32, f64 at 30M) once, and over keys heavy, len3, rand10_50, one (min,
#           sum f32 at 30M), committed database against the merge, A B A B.
#   chunk   seg_stream CH (a block per CH tiles a warp, the grid as large as n needs, instead
#           of the resident grid): the harness (with CH shapes), 'seg_RT_MIN_RT_F*' (a CH
#           variant); tools/exp/stream_ch_space.lua (the shipped space's seg_stream, CH 0, 1,
#           2, 4) tuned for offsets heavy at 2^22 and 30M (min f32, sum f32, sum f64) into the
#           H200's row and merged ($OUT/ch_into.db, build/merged.db), each CH's best per case;
#           the same space for rand10_50, len3, one at 30M (min f32): each CH's best; then
#           redtune_bench over every offsets profile (min, sum x f32, f64 at 30M), committed
#           database against the merge, A B A B.
#   len3s   (build/ch_into.db: run 6's) the shipped space (now with CH 0 and 4) for offsets
#           len3 at 2^22 and 30M (sum f32) into the H200's row, so that the heavy sum f32 row
#           no longer serves len3 (mean 3 is within a factor of about 2 of heavy's 5: run 6's
#           bench had len3 sum f32 1.93x slower); merged with ch_into.db, then the offsets bench
#           over every profile, committed database against the merge, A B A B.
#   h100o   not run (no H100 lent): the shipped space (seg_per STAGE=2 and SEGS, seg_stream by
#           ranks with CH) for offsets rand10_50, len3, len1 and heavy at 2^20 and 30M (min f32,
#           sum f64) into the H100's row ($OUT/ship_into.db; bring it back as
#           build/ship_into.db for h100k).
#   h100k   not run: the shipped space (KW) for keys heavy and len3 at 2^20 and 30M (min, sum
#           f32) into the H100's row, merged with build/ship_into.db; the offsets bench over
#           every profile and the keys bench (heavy, len3, rand10_50, one), committed database
#           against the merge, A B A B.
#   tests   the C GPU tests 'seg_*' (every segmented test: the KW and CH variants among them)
#           and 'api_gpu_seg*' with the committed code and database.
step=${1:?step: pack, stream, prof, walk, iter2, final, chunk, len3s, h100o, h100k, tests}
. "$(dirname "$0")/dev_lib.sh"
dev_start c24 "$step"
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
    tune_ab walk tools/exp/stream_space.lua offsets heavy,rand10_50,len3,one min:f32 sum:f64
    printf 'return { { family = "seg_stream", params = { B = 256, R = 32, V = 4, PF = 0, MINW = 24, WS = 0 } } }\n' \
        > build/prof.lua
    rm -f build/prof_heavy.db
    timeout 40 build/redtune --device 0 --op min --type f32 --segmented offsets --space build/prof.lua \
        --profiles heavy --sizes 30M --seed 7 --db build/prof_heavy.db > "$L/prof_tune_heavy.log" 2>&1
    ncu_sass heavy build/prof_heavy.db heavy ;;
iter2)
    harness 70 seg_stream
    mv "$L/harness.log" "$L/harness_stream.log"
    harness 90 seg_lb
    tests 'seg_*' 150
    tune_ab ss tools/exp/stream_space.lua offsets heavy,rand10_50,len3 min:f32 sum:f64
    # KW = 0 against KW = 1 (run 4: the binary before against one with KW = 1's walk
    # unconditional), twice, each KW's best per case.
    for r in 1 2; do
        rm -f build/kk.db
        for ot in min:f32 sum:f32; do
            timeout 60 build/redtune --device 0 --op "${ot%:*}" --type "${ot#*:}" --segmented keys \
                --space tools/exp/keys_lb_space.lua --profiles heavy,len3,rand10_50 --sizes 30M --seed 7 \
                --db build/kk.db > "$L/kk_${r}_${ot%:*}.log" 2>&1
            echo "tune kk run $r $ot: exit $?" >> "$S"
        done
        build/redtune measurements --db build/kk.db --format csv > "$L/kk_$r.csv"
        python3 tools/exp/stage2_sum.py "$L/kk_$r.csv" >> "$S" 2>&1
    done
    bench_run keys 120 --db "$T" --segmented keys --profiles heavy,len3,rand10_50 --ops min,sum --types f32 \
        --sizes 30M --regimes cold ;;
final)
    harness 40 seg_stream
    mv "$L/harness.log" "$L/harness_stream.log"
    harness 100 seg_lb
    tests 'seg_RT_MIN_RT_F*' 40
    tests 'api_gpu_seg*' 80
    keys_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 min:f32 sum:f32
    build/redtune merge "$T" "$OUT/keys_into.db" -o build/merged.db --force >> "$S" 2>&1
    bench_run offsets 150 --db "$T" --segmented offsets --profiles rand10_50,len3,len1,len1000,heavy,one \
        --ops min,sum --types f32,f64 --sizes 30M --regimes cold
    bench_keys 60 ;;
chunk)
    harness 40 seg_stream
    tests 'seg_RT_MIN_RT_F*' 40
    rm -f build/ch.db build/chx.db
    for ot in min:f32 sum:f32 sum:f64; do
        t0=$(date +%s)
        timeout 100 build/redtune --device 0 --op "${ot%:*}" --type "${ot#*:}" --segmented offsets \
            --space tools/exp/stream_ch_space.lua --profiles heavy --sizes 2^22,30M --seed 7 \
            --db build/ch.db > "$L/ch_tune_${ot%:*}_${ot#*:}.log" 2>&1
        echo "redtune CH heavy $ot: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    done
    dship ch H200
    python3 tools/exp/stage2_sum.py <(zcat "$OUT/ch_meas.csv.gz") >> "$S" 2>&1
    python3 tools/ship_into_row.py "$OUT/ch_ship.db" "$T" 8b59dd2a77fc5356c5b5d639fc1cc192 \
        -o "$OUT/ch_into.db" >> "$S" 2>&1
    build/redtune merge "$T" "$OUT/ch_into.db" -o build/merged.db --force >> "$S" 2>&1
    t0=$(date +%s)
    timeout 60 build/redtune --device 0 --op min --type f32 --segmented offsets \
        --space tools/exp/stream_ch_space.lua --profiles rand10_50,len3,one --sizes 30M --seed 7 \
        --db build/chx.db > "$L/chx_tune.log" 2>&1
    echo "redtune CH rand10_50,len3,one min f32: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    build/redtune measurements --db build/chx.db --format csv | gzip -9 > "$OUT/chx_meas.csv.gz"
    python3 tools/exp/stage2_sum.py <(zcat "$OUT/chx_meas.csv.gz") >> "$S" 2>&1
    bench_all 60 ;;
len3s)
    SHIP_LIMIT=100 tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 len3 2^22,30M sum:f32
    build/redtune merge build/merged.db build/ch_into.db -o build/merged2.db --force >> "$S" 2>&1
    cp build/merged2.db build/merged.db
    bench_all 60 ;;
h100o)
    SHIP_LIMIT=250 tune_rows H100 2e956071d0b02214c4c501b293bccefc rand10_50,len3,len1,heavy 2^20,30M \
        min:f32 sum:f64 ;;
h100k)
    keys_rows H100 2e956071d0b02214c4c501b293bccefc min:f32 sum:f32
    build/redtune merge "$T" "$OUT/keys_into.db" ${SHIP_INTO:-build/ship_into.db} -o build/merged.db --force \
        >> "$S" 2>&1
    bench_all 60
    bench_keys 60 ;;
tests)
    tests 'seg_*' 200
    tests 'api_gpu_seg*' 60 ;;
*)
    echo "dev_session24.sh: no step '$step'" >&2; exit 2 ;;
esac
dev_end
