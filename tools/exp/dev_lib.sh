#!/bin/bash
# dev_lib.sh - what the device scripts of tools/exp share (dev_session15.sh, 16 and 17):
# sourced by them, not run. Each script takes a STEP; `pack` runs here, the others on a lent
# GPU machine over a copy of the working tree, logs under $OUT/logs (packed into
# $OUT/logs.tgz) and a summary in $OUT/sum.txt, printed last.
#   dev_pack NAME DEFAULT   build (ninja, then the bench and seg_harness, which plain ninja
#                           leaves stale), strip the binaries of build/ named by $PACK (else
#                           DEFAULT) and pack them into build/NAME.tar.xz, which the device
#                           calls carry
#   dev_start NAME STEP     STEP pack: dev_pack NAME with the tuner, the C tests, the bench and
#                           seg_harness (and build/before/redtune with BEFORE=1), then exit;
#                           else on the device db/tuned/h100.sql from build/h100.sql.xz,
#                           dev_begin NAME and REDTUNE_BIN (dev_session24.sh and later)
#   dev_begin NAME          on the device: build/devlib on the library path, build/NAME.tar.xz
#                           unpacked into build/, $L and $S, the GPU and the time first in $S,
#                           $T = build/redtune.db loaded from db/tuned
#   dev_end                 the logs packed, then everything under $OUT but sum.txt packed
#                           into $OUT/all.tgz, the summary printed
#   fits LIMIT WHAT         whether LIMIT more seconds end within the call's first 560 (from
#                           dev_begin); if not, a line in the summary says WHAT was skipped
#   tests FILTER [LIMIT]    the C GPU tests whose names match FILTER (LIMIT s, default 200), a
#                           line in the summary (and the first failures)
#   before NAME             build/NAME.tar.xz (binaries packed at an earlier commit) unpacked
#                           into /tmp/NAMEo; its tuner to build/old/redtune, its bench to
#                           build/bench_before/redtune_bench
#   tc_ab LIMIT PATTERN ARGS...
#                           redtune_bench --type-cases ARGS with build/bench_before's bench and
#                           build/bench's, A B A B (LIMIT s each), the CSVs as
#                           $OUT/tc_{before,after}_R.csv; a line each and the log lines
#                           matching PATTERN in the summary
#   bench_ab A BENCH_A DB_A B BENCH_B DB_B ARGS...
#                           redtune_bench --axis ARGS, A B A B ($BENCH_LIMIT s each, default
#                           100), the table of tools/exp/bench_ab.py in the summary
#   torch_axis ARGS...      bench/torch_axis.py ARGS with the package of build/python and $T
#                           ($TORCH_LIMIT s, default 200), its CSV to $OUT/torch_axis.csv
#   pytests NAME LIMIT [PYTEST ARGS...]
#                           the Python GPU tests with the package of build/python and $T
#   left                    the seconds left of the call's first 560 (DEV_CAP when set), less 5:
#                           the LIMIT of a last step that takes what is left
#   quality STRATEGIES      issue 12's live quality run (tools/strategy_quality.sh, CASES=wide,
#                           up to 330 s) into $OUT/quality, its table in the summary
#   retune LIMIT OP TYPE SHAPES
#                           build/redtune --axis over the default space (or $RETUNE_SPACE) for
#                           SHAPES into build/retune.db (or $RETUNE_DB) (LIMIT s), a line in
#                           the summary
#   retune_ship [MATCH]     build/retune.db's axis winners in the summary, those of the GPUs
#                           named MATCH (default H100) to $OUT/retune_ship.db, every
#                           measurement to $OUT/retune_meas.csv.gz
#   tune_each NAME LIMIT SIZES SPACE OP:TYPE[:SIZES]...
#                           build/redtune over each OP:TYPE (at its SIZES, else SIZES; SPACE a
#                           space file, or "" for the default) into build/NAME.db, LIMIT s
#                           each, a line each in the summary; the tuner is $TUNE_BIN when set
#   dship NAME [MATCH]      build/NAME.db's winners: `redtune best` to $L/NAME_best.txt, the
#                           rows of the GPUs named MATCH (default H100; redtune export) to
#                           $OUT/NAME_ship.db, every measurement to $OUT/NAME_meas.csv.gz
#   harness LIMIT FAMILY    build/seg_harness --quick --only FAMILY (LIMIT s), a line and the
#                           first failures in the summary
#   tune_ab TAG SPACE LAYOUT PROFILES OP:TYPE...
#                           SPACE tuned (at 30M, 60 s an operator) by build/before/redtune and
#                           build/redtune, A B A B, into build/TAG_{before,after}.db; the
#                           CSVs as $L/TAG_{before,after}_{1,2}.csv, tools/exp/stream_ab.py's
#                           table in the summary
#   ncu_sass TAG DB PROFILE [LAYOUT]
#                           Nsight Compute's full set over redtune_bench running DB's winner of
#                           LAYOUT (default offsets) PROFILE at 30M ($NCU_OP, default min, f32):
#                           the details page and the SASS page (each instruction's counts and
#                           stall samples) as $L/details_TAG.txt and $L/sass_TAG.csv, the main
#                           lines in the summary
#   ncu_durations TAG LAYOUT PROFILE OP
#                           Nsight Compute's durations of rt_seg and rt_seg_fix in redtune_bench's
#                           ($NCU_BIN's, default build/bench's) LAYOUT PROFILE OP f32 at 30M, DB
#                           $T's pick, after the first two launches of each
#   seg_ab TAG A B BIN_A DB_A BIN_B DB_B LIMIT ARGS...
#                           redtune_bench --segmented ARGS --regimes cold with the bench binary
#                           and database of A and of B, A B A B (LIMIT s each), the CSVs and
#                           logs as $L/segTAG_{A,B}_R, tools/exp/seg_ab.py's table in the summary
#   seg_one LIMIT ARGS...   seg_ab of the bench before (build/bench_before) and after, same $T
#   ship_rand MATCH UUID SIZES OP:TYPE...
#                           lua/spaces/segmented_ship.lua for offsets rand10_50 (or the
#                           profiles $SHIP_PROFILES; $SHIP_LIMIT s each, default 45) at SIZES into
#                           build/ship.db, its MATCH rows put into device row UUID of $T
#                           (tools/ship_into_row.py) and merged into build/merged.db
#   tune_rows MATCH UUID PROFILES SIZES OP:TYPE...
#                           ship_rand for offsets PROFILES ($SHIP_LIMIT s an operator, default
#                           100), then each variant's best (tools/exp/stage2_sum.py) in the
#                           summary
#   keys_rows MATCH UUID OP:TYPE...
#                           lua/spaces/segmented_ship.lua for keys $KEYS_PROFILES (default
#                           heavy, len3) at 2^20 and 30M into build/keys.db ($KEYS_LIMIT s an
#                           operator, default 80), its MATCH rows put into device row UUID of
#                           $T as $OUT/keys_into.db
#   h200_keys LIMIT OP:TYPE...
#                           keys_rows for the H200's row over six profiles (LIMIT s an
#                           operator), merged with $T into build/merged.db (row_keys MATCH
#                           UUID LIMIT OP:TYPE...; h100_keys the same for the H100's row)
#   bench_all LIMIT         redtune_bench --segmented offsets over every profile (min, sum x
#                           f32, f64 at 30M), $T against build/merged.db, A B A B, then the
#                           merge's goal lines
#   bench_keys LIMIT        redtune_bench --segmented keys over heavy, len3, rand10_50, one
#                           (min, sum f32 at 30M), $T against build/merged.db, A B A B, then the
#                           merge's goal lines
#   bench_keys64 LIMIT      the same for f64 (min, max, sum; heavy, len3, rand10_50, len1,
#                           len1000), without goal lines
#   mark_tune NAME SPACE LIMIT OP:TYPE...
#                           SPACE over $MARK_LAYOUT (default offsets) $MARK_PROFILES (default
#                           heavy, len3, rand10_50, one) at $MARK_SIZES (default 30M) into
#                           build/NAME.db, LIMIT s an operator, then each variant's best per
#                           case (tools/exp/stage2_sum.py) in the summary (dev_session25.sh and
#                           26)
#   bench_run TAG LIMIT ARGS...
#                           build/bench/redtune_bench ARGS (LIMIT s), its CSV to $OUT/TAG.csv,
#                           its log to $L/TAG.log, a line and its summary (less the floor
#                           lines) in the summary
dev_pack() {
    local name=$1 f
    set -e
    # Plain ninja leaves bench/redtune_bench and seg_harness as they were (their templates
    # embedded at their last build): the twenty-fifth session's runs 2-4 ran a stale harness.
    ninja > /dev/null
    ninja bench seg_harness > /dev/null
    rm -rf "/tmp/$name" && mkdir -p "/tmp/$name"
    for f in ${PACK:-$2}; do
        mkdir -p "/tmp/$name/$(dirname "$f")"
        cp "build/$f" "/tmp/$name/$f"
    done
    find "/tmp/$name" -type f -exec strip {} \;
    tar -C "/tmp/$name" -cJf "build/$name.tar.xz" .
    ls -la "build/$name.tar.xz"
}
dev_start() {
    if [ "$2" = pack ]; then
        dev_pack "$1" "redtune tests/all bench/redtune_bench seg_harness ${BEFORE:+before/redtune}"
        exit 0
    fi
    [ -f db/tuned/h100.sql ] || xz -dc build/h100.sql.xz > db/tuned/h100.sql
    dev_begin "$1"
    export REDTUNE_BIN=$PWD/build/redtune
}
# dev_start_pair OLD NEW STEP AB_STEP...: a script's two packs, OLD (the code before) and NEW
# (after): STEP "packN" (NEW = cN) packs NEW and exits; a STEP among the AB_STEPs unpacks OLD
# as the bench before (`before`) and runs NEW's binaries; any other STEP runs OLD's (STEP
# "pack" packs OLD).
dev_start_pair() {
    local old=$1 new=$2 step=$3 s
    shift 3
    [ "$step" = "pack${new#c}" ] && dev_start "$new" pack
    for s; do
        if [ "$step" = "$s" ]; then
            before "$old"
            dev_start "$new" "$step"
            return
        fi
    done
    dev_start "$old" "$step"
}
dev_begin() {
    DEV_T0=$(date +%s)
    export LD_LIBRARY_PATH=$PWD/build/devlib
    [ -f "build/$1.tar.xz" ] && tar -C build -xJf "build/$1.tar.xz"
    L=$OUT/logs
    mkdir -p "$L"
    S=$OUT/sum.txt
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader > "$S"
    date -u +%Y-%m-%dT%H:%M:%SZ >> "$S"
    T=build/redtune.db
    build/redtune load --force -o "$T" db/tuned/*.sql > /dev/null
}
dev_end() {
    local d
    tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$L"
    # The device tool brings back only so many files: all but the summary in one archive.
    d=$(mktemp -d)
    tar -C "$OUT" --exclude=./sum.txt -czf "$d/all.tgz" . && find "$OUT" -mindepth 1 ! -name sum.txt -delete \
        && mv "$d/all.tgz" "$OUT/all.tgz"
    rmdir "$d"
    cat "$S"
}
# fits LIMIT WHAT: 0 when LIMIT more seconds end within the call's first 560 (DEV_CAP when set),
# else 1 after a line in the summary saying WHAT was skipped
fits() {
    (( $(date +%s) - DEV_T0 + $1 <= ${DEV_CAP:-560} )) && return 0
    echo "skipped (no time left in the call): $2" >> "$S"
    return 1
}
tests() {
    local log=$L/tests_${1//\*/}.log t0
    t0=$(date +%s)
    REDTUNE_TEST_FILTER="$1" CMOCKA_MESSAGE_OUTPUT=TAP timeout "${2:-200}" build/tests/all gpu > "$log" 2>&1
    echo "C GPU tests '$1': exit $? ($(( $(date +%s) - t0 )) s): $(grep -c '^ok' "$log") ok, $(grep '^not ok' "$log" | grep -vc SKIP) not ok" >> "$S"
    grep -A8 '^not ok' "$log" | grep -v SKIP | head -12 >> "$S"
}
before() {
    rm -rf "/tmp/$1o" && mkdir -p "/tmp/$1o" build/old build/bench_before \
        && tar -C "/tmp/$1o" -xJf "build/$1.tar.xz" && cp "/tmp/$1o/redtune" build/old/redtune \
        && cp "/tmp/$1o/bench/redtune_bench" build/bench_before/
}
tc_ab() {
    local limit=$1 pat=$2 r v bin t0
    shift 2
    for r in 1 2; do
        for v in before after; do
            bin=build/bench/redtune_bench
            [ $v = before ] && bin=build/bench_before/redtune_bench
            t0=$(date +%s)
            timeout "$limit" $bin --db "$T" --type-cases "$@" --csv "$OUT/tc_${v}_$r.csv" \
                > "$L/tc_${v}_$r.log" 2>&1
            echo "redtune_bench --type-cases${*:+ $*}, $v, run $r: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
            grep -iE "$pat" "$L/tc_${v}_$r.log" | head -12 >> "$S"
        done
    done
}
bench_ab() {
    local a=$1 ba=$2 da=$3 b=$4 bb=$5 db=$6 r v bin d t0
    shift 6
    for r in 1 2; do
        for v in "$a" "$b"; do
            bin=$bb d=$db
            [ "$v" = "$a" ] && bin=$ba d=$da
            t0=$(date +%s)
            timeout "${BENCH_LIMIT:-100}" "$bin" --db "$d" --axis "$@" --csv "$L/axis_${v}_$r.csv" \
                > "$L/axis_${v}_$r.log" 2>&1
            echo "bench $v run $r: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
        done
    done
    python3 tools/exp/bench_ab.py "$L" "$a" "$b" >> "$S" 2>&1
}
torch_axis() {
    local t0
    cp "$T" build/python/redtune/redtune.db
    t0=$(date +%s)
    PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/build/python timeout "${TORCH_LIMIT:-200}" python3 -P bench/torch_axis.py \
        --db "$T" --csv "$OUT/torch_axis.csv" "$@" > "$L/torch_axis.log" 2> "$L/torch_axis.err"
    echo "torch_axis.py: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
}
pytests() {
    local name=$1 limit=$2 t0
    shift 2
    cp "$T" build/python/redtune/redtune.db
    t0=$(date +%s)
    PYTHONPATH=$PWD/build/python:$PWD/python/tests:$PWD/build/pyt PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 \
        timeout "$limit" python3 -P -m pytest -q -p no:cacheprovider "$@" \
        python/tests/test_gpu.py python/tests/test_gpu_axis.py \
        > "$L/pytest_$name.log" 2>&1
    echo "python GPU tests ($name): exit $? ($(( $(date +%s) - t0 )) s): $(tail -n 1 "$L/pytest_$name.log")" >> "$S"
    grep -E '^(FAILED|ERROR)' "$L/pytest_$name.log" | head -20 >> "$S"
}
left() {
    echo $(( ${DEV_CAP:-560} - ($(date +%s) - DEV_T0) - 5 ))
}
quality() {
    local t0
    t0=$(date +%s)
    OUT=$OUT/quality CASES=wide STRATEGIES="$1" timeout 330 bash tools/strategy_quality.sh \
        > "$L/quality.log" 2>&1
    echo "strategy_quality.sh wide $1: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    tail -n 45 "$L/quality.log" >> "$S"
}
retune() {
    local t0
    t0=$(date +%s)
    timeout "$1" build/redtune --device 0 --axis --op "$2" --type "$3" --db "${RETUNE_DB:-build/retune.db}" \
        ${RETUNE_SPACE:+--space "$RETUNE_SPACE"} --shapes "$4" > "$L/tune_$2_$3.log" 2>&1
    echo "redtune --axis --op $2 --type $3 --shapes '$4': exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    grep -E 'configs measured' "$L/tune_$2_$3.log" | tail -n 1 >> "$S"
}
retune_ship() {
    build/redtune best --db build/retune.db 2>&1 | grep -E 'axis_(rows|cols)' | sed 's/  */ /g' >> "$S"
    build/redtune export --db build/retune.db --match "${1:-H100}" -o "$OUT/retune_ship.db" --force >> "$S" 2>&1
    build/redtune measurements --db build/retune.db --format csv | gzip -9 > "$OUT/retune_meas.csv.gz"
}
tune_each() {
    local name=$1 limit=$2 sizes=$3 space=$4 c t0
    shift 4
    t0=$(date +%s)
    for c; do
        set -- ${c//:/ }
        timeout "$limit" "${TUNE_BIN:-build/redtune}" --device 0 --op "$1" --type "$2" \
            --sizes "${3:-$sizes}" ${space:+--space "$space"} --db "build/$name.db" \
            > "$L/${name}_$1_$2.log" 2>&1
        echo "redtune --op $1 --type $2 --sizes ${3:-$sizes}: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    done
}
dship() {
    build/redtune best --db "build/$1.db" 2>&1 | sed 's/  */ /g' > "$L/$1_best.txt"
    build/redtune export --db "build/$1.db" --match "${2:-H100}" -o "$OUT/$1_ship.db" --force >> "$S" 2>&1
    build/redtune measurements --db "build/$1.db" --format csv | gzip -9 > "$OUT/$1_meas.csv.gz"
}
bench_run() {
    local tag=$1 limit=$2 t0
    shift 2
    t0=$(date +%s)
    timeout "$limit" build/bench/redtune_bench "$@" --csv "$OUT/$tag.csv" > "$L/$tag.log" 2>&1
    echo "redtune_bench $* ($tag): exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    sed -n '/^summary/,$p' "$L/$tag.log" | grep -v 'floor at n' >> "$S"
}
# harness LIMIT FAMILY [TEXTS]: seg_harness --quick over FAMILY's configurations (those whose
# parameters hold one of the comma-separated TEXTS, e.g. "B=32,IL=2", when given)
harness() {
    local t0
    t0=$(date +%s)
    timeout "$1" build/seg_harness --quick --only "$2" ${3:+--with "$3"} > "$L/harness.log" 2>&1
    echo "seg_harness --quick --only $2${3:+ --with $3}: exit $? ($(( $(date +%s) - t0 )) s): $(tail -n 1 "$L/harness.log")" >> "$S"
    grep -m 8 -i 'fail\|wrong' "$L/harness.log" >> "$S"
}
tune_ab() {
    local tag=$1 space=$2 layout=$3 prof=$4 r v bin ot
    shift 4
    for r in 1 2; do
        for v in before after; do
            bin=build/redtune
            [ $v = before ] && bin=build/before/redtune
            rm -f "build/${tag}_$v.db"
            for ot; do
                timeout 60 $bin --device 0 --op "${ot%:*}" --type "${ot#*:}" --segmented "$layout" \
                    --space "$space" --profiles "$prof" --sizes 30M --seed 7 --db "build/${tag}_$v.db" \
                    > "$L/${tag}_${v}_${r}_${ot%:*}.log" 2>&1
                echo "tune $tag $v run $r $ot: exit $?" >> "$S"
            done
            build/redtune measurements --db "build/${tag}_$v.db" --format csv > "$L/${tag}_${v}_$r.csv"
        done
    done
    python3 tools/exp/stream_ab.py "$L/${tag}_before_1.csv" "$L/${tag}_after_1.csv" "$L/${tag}_before_2.csv" \
        "$L/${tag}_after_2.csv" >> "$S" 2>&1
}
ncu_sass() {
    local tag=$1 db=$2 prof=$3 layout=${4:-offsets}
    timeout 120 ncu --clock-control none -k 'regex:^rt_seg$' -s 2 -c 1 --set full -o "$L/prof_$tag" \
        build/bench/redtune_bench --db "$db" --segmented "$layout" --profiles "$prof" \
        --ops "${NCU_OP:-min}" \
        --types f32 --sizes 30M --regimes cold > "$L/prof_ncu_$tag.log" 2>&1
    echo "ncu $tag: exit $?" >> "$S"
    ncu --import "$L/prof_$tag.ncu-rep" --page details > "$L/details_$tag.txt" 2>&1
    ncu --import "$L/prof_$tag.ncu-rep" --page source --print-source sass --csv > "$L/sass_$tag.csv" 2>&1
    rm -f "$L/prof_$tag.ncu-rep"
    grep -E 'Duration|DRAM Throughput|L1/TEX Hit Rate|L2 Hit Rate|Mem Busy|Max Bandwidth|Registers Per|Achieved Occupancy|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Executed Instructions  |Block Limit|Shared Memory Configuration Size|Waves Per SM' \
        "$L/details_$tag.txt" | sed 's/  */ /g' >> "$S"
}
ncu_durations() {
    timeout 120 ncu --clock-control none -k 'regex:^rt_seg' -s 4 -c 2 \
        "${NCU_BIN:-build/bench/redtune_bench}" --db "$T" --segmented "$2" --profiles "$3" \
        --ops "$4" --types f32 --sizes 30M --regimes cold > "$L/ncu_$1.log" 2>&1
    echo "ncu $1: exit $?" >> "$S"
    grep -E '^  rt_seg|Duration|DRAM Throughput' "$L/ncu_$1.log" | sed 's/  */ /g' >> "$S"
}
seg_ab() {
    local tag=$1 a=$2 b=$3 ba=$4 da=$5 bb=$6 db=$7 limit=$8 r v bin d
    shift 8
    for r in 1 2; do
        for v in "$a" "$b"; do
            bin=$bb d=$db
            [ "$v" = "$a" ] && bin=$ba d=$da
            timeout "$limit" "$bin" --db "$d" --segmented "$@" --regimes cold \
                --csv "$L/seg${tag}_${v}_$r.csv" > "$L/seg${tag}_${v}_$r.log" 2>&1
            echo "bench $1 $v run $r: exit $?" >> "$S"
        done
    done
    python3 tools/exp/seg_ab.py "$L" "$a" "$b" "$tag" >> "$S" 2>&1
}
seg_one() {
    local limit=$1
    shift
    seg_ab one before after build/bench_before/redtune_bench "$T" build/bench/redtune_bench "$T" \
        "$limit" "$@"
}
ship_rand() {
    local match=$1 uuid=$2 sizes=$3 c t0
    shift 3
    for c; do
        set -- ${c//:/ }
        t0=$(date +%s)
        timeout "${SHIP_LIMIT:-45}" build/redtune --device 0 --op "$1" --type "$2" --segmented offsets \
            --space "${SHIP_SPACE:-lua/spaces/segmented_ship.lua}" --profiles "${SHIP_PROFILES:-rand10_50}" --sizes "$sizes" \
            --seed 7 --db build/ship.db > "$L/ship_$1_$2.log" 2>&1
        echo "redtune ship ${SHIP_PROFILES:-rand10_50} --op $1 --type $2: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    done
    dship ship "$match"
    grep -i 'offsets' "$L/ship_best.txt" >> "$S"
    rm -f "$OUT/ship_into.db"   # a second call in one run: its rows and the first's (build/ship.db)
    python3 tools/ship_into_row.py "$OUT/ship_ship.db" "$T" "$uuid" -o "$OUT/ship_into.db" >> "$S" 2>&1
    build/redtune merge "$T" "$OUT/ship_into.db" -o build/merged.db --force >> "$S" 2>&1
}
tune_rows() {
    local match=$1 uuid=$2 prof=$3 sizes=$4
    shift 4
    SHIP_PROFILES=$prof SHIP_LIMIT=${SHIP_LIMIT:-100} ship_rand "$match" "$uuid" "$sizes" "$@"
    python3 tools/exp/stage2_sum.py <(zcat "$OUT/ship_meas.csv.gz") >> "$S" 2>&1
}
keys_rows() {
    local match=$1 uuid=$2 ot t0
    shift 2
    rm -f build/keys.db
    for ot; do
        t0=$(date +%s)
        timeout "${KEYS_LIMIT:-80}" build/redtune --device 0 --op "${ot%:*}" --type "${ot#*:}" \
            --segmented keys --space lua/spaces/segmented_ship.lua \
            --profiles "${KEYS_PROFILES:-heavy,len3}" --sizes 2^20,30M --seed 7 \
            --db build/keys.db > "$L/keys_tune_${ot%:*}_${ot#*:}.log" 2>&1
        echo "redtune keys ${KEYS_PROFILES:-heavy,len3} $ot: exit $?" \
            "($(( $(date +%s) - t0 )) s)" >> "$S"
    done
    dship keys "$match"
    grep -i 'keys' "$L/keys_best.txt" >> "$S"
    python3 tools/ship_into_row.py "$OUT/keys_ship.db" "$T" "$uuid" -o "$OUT/keys_into.db" >> "$S" 2>&1
}
row_keys() {
    local match=$1 uuid=$2 limit=$3
    shift 3
    KEYS_PROFILES=heavy,len1,len1000,len3,one,rand10_50 KEYS_LIMIT=$limit \
        keys_rows "$match" "$uuid" "$@"
    build/redtune merge "$T" "$OUT/keys_into.db" -o build/merged.db --force >> "$S" 2>&1
}
h200_keys() {
    row_keys H200 8b59dd2a77fc5356c5b5d639fc1cc192 "$@"
}
h100_keys() {
    row_keys H100 2e956071d0b02214c4c501b293bccefc "$@"
}
bench_keys64() {
    seg_ab t shipped merged build/bench/redtune_bench "$T" build/bench/redtune_bench \
        build/merged.db "$1" keys --profiles heavy,len3,rand10_50,len1,len1000 \
        --ops min,max,sum --types f64 --sizes 30M
}
# h100_rows LIMIT: the H100's offsets rows with the shipped space (SHIP_SPACE): min f32 over
# heavy, len3, len1, rand10_50 and len1000 at 2^22 and 30M (LIMIT s), then, time allowing,
# heavy at 30M for sum f32, min and sum f64; merged into its row (build/merged.db)
h100_rows() {
    SHIP_PROFILES=heavy,len3,len1,rand10_50,len1000 SHIP_LIMIT=$1 ship_rand H100 \
        2e956071d0b02214c4c501b293bccefc 2^22,30M min:f32
    fits 200 "heavy rows of sum f32, min and sum f64" && SHIP_PROFILES=heavy SHIP_LIMIT=45 \
        ship_rand H100 2e956071d0b02214c4c501b293bccefc 30M sum:f32 min:f64 sum:f64
    python3 tools/exp/stage2_sum.py <(zcat "$OUT/ship_meas.csv.gz") >> "$S" 2>&1
}
# bench_heavy LIMIT: redtune_bench offsets heavy min f32 at 30M, the committed database
# against build/merged.db, A B A B
bench_heavy() {
    seg_ab m shipped merged build/bench/redtune_bench "$T" build/bench/redtune_bench build/merged.db \
        "$1" offsets --profiles heavy --ops min --types f32 --sizes 30M
}
bench_all() {
    seg_ab m shipped merged build/bench/redtune_bench "$T" build/bench/redtune_bench build/merged.db \
        "$1" offsets --profiles rand10_50,len3,len1,len1000,heavy,one --ops min,sum --types f32,f64 --sizes 30M
    sed -n '/^goals (offsets)/,/^goals (offsets): /p' "$L/segm_merged_2.log" >> "$S"
}
bench_keys() {
    seg_ab k shipped merged build/bench/redtune_bench "$T" build/bench/redtune_bench build/merged.db \
        "$1" keys --profiles heavy,len3,rand10_50,one --ops min,sum --types f32 --sizes 30M
    sed -n '/^goals (keys)/,/^goals (keys): /p' "$L/segk_merged_2.log" >> "$S"
}
mark_tune() {
    local name=$1 space=$2 limit=$3 ot t0 log
    shift 3
    rm -f "build/$name.db"
    for ot; do
        t0=$(date +%s)
        log=$L/${name}_${ot%:*}_${ot#*:}.log
        timeout "$limit" build/redtune --device 0 --op "${ot%:*}" --type "${ot#*:}" \
            --segmented "${MARK_LAYOUT:-offsets}" --space "$space" \
            --profiles ${MARK_PROFILES:-heavy,len3,rand10_50,one} --sizes ${MARK_SIZES:-30M} \
            --seed 7 --db "build/$name.db" > "$log" 2>&1
        echo "tune $name $ot: exit $? ($(( $(date +%s) - t0 )) s)," \
            "$(grep -c ': wrong: \|: fault: ' "$log") not ok" >> "$S"
        grep -m 4 ': wrong: \|: fault: ' "$log" >> "$S"
    done
    build/redtune measurements --db "build/$name.db" --format csv > "$L/$name.csv"
    python3 tools/exp/stage2_sum.py "$L/$name.csv" >> "$S" 2>&1
}
