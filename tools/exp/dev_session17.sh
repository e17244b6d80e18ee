#!/bin/bash
# dev_session17.sh STEP - device runs of the seventeenth session (issue 16: argmin/argmax and
# var_mean along an axis through the glue's run, co_lift_run, in axis_rows and axis_cols), one
# step a call on a warm H100; logs under $OUT/logs (packed into $OUT/logs.tgz), a summary
# ($OUT/sum.txt) printed last. Carried: build/c17.tar.xz (stripped binaries, unpacked into
# build/ on the device; `bash tools/exp/dev_session17.sh pack` makes it here:
# build/bench_before/redtune_bench is the bench of a commit before, whose axis templates are
# those of cdc9fa0), build/devlib, build/python (without its redtune.db) and build/pyt.
#   lift   the C GPU tests of the axis kernels and calls ('*axis*', the new templates), then
#          redtune_bench --axis, argmax f32 and bf16 on every default shape, the bench before
#          (each round's U*V elements lifted one by one and combined in a tree) and after (the
#          run), db/tuned, A B A B; then bench/torch_axis.py --ops argmax with the package of
#          build/python (the new templates).
#   cols   after lift (argmax f32 [2^15 x 2^10] columns, B = 512: 72 registers, 1.58x): the
#          launch bound of axis_cols asks for 1024 threads an SM for argmin/argmax through the
#          run where a thread's loads are at most 32 bytes. The axis C GPU tests, redtune_bench
#          --axis argmax f32 and bf16 on the column shapes, before and after, A B A B; then
#          argmax f32 and bf16 on [16 x 2^22] columns (never retuned with the default space)
#          exhaustively into build/retune.db, the H100 winners to $OUT/retune_ship.db, every
#          measurement to $OUT/retune_meas.csv.gz.
#   final  after cols (the retuned winners of [16 x 2^22] columns merged into db/tuned/h100.sql,
#          CUBINs refreshed) and RT_RESULT_INDEX (argmin/argmax with the index alone, which
#          the Python package's argmax(x, dim) and the axis bench now run): the C GPU tests of
#          the axis calls and the flat and segmented index results ('*axis*'), the type tests
#          ('gpu_types*'), the Python axis and arg GPU tests; redtune_bench --axis argmax f32
#          and bf16 on every default shape, the bench before (build/bench_before, the {value,
#          index} pair, no run) with build/old_argmax_axis.db (db/tuned of cdc9fa0, its argmax
#          axis winners alone, no CUBINs) and after (build/bench, the index) with db/tuned,
#          A B A B.
#   torch  bench/torch_axis.py for sum, min, max and argmax (the package of build/python).
step=${1:?step: pack, lift, cols, final, torch}
if [ "$step" = pack ]; then
    set -e
    rm -rf /tmp/c17 && mkdir -p /tmp/c17
    for f in ${PACK:-redtune tests/all bench/redtune_bench bench_before/redtune_bench}; do
        mkdir -p "/tmp/c17/$(dirname "$f")"
        cp "build/$f" "/tmp/c17/$f"
    done
    find /tmp/c17 -type f -exec strip {} \;
    tar -C /tmp/c17 -cJf build/c17.tar.xz .
    ls -la build/c17.tar.xz
    exit 0
fi
export LD_LIBRARY_PATH=$PWD/build/devlib
[ -f build/c17.tar.xz ] && tar -C build -xJf build/c17.tar.xz
L=$OUT/logs
mkdir -p "$L"
S=$OUT/sum.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader > "$S"
date -u +%Y-%m-%dT%H:%M:%SZ >> "$S"
# tests FILTER [LIMIT]: the C GPU tests whose names match FILTER, a line in the summary.
tests() {
    local log=$L/tests_${1//\*/}.log t0
    t0=$(date +%s)
    REDTUNE_TEST_FILTER="$1" CMOCKA_MESSAGE_OUTPUT=TAP timeout "${2:-200}" build/tests/all gpu > "$log" 2>&1
    echo "C GPU tests '$1': exit $? ($(( $(date +%s) - t0 )) s): $(grep -c '^ok' "$log") ok, $(grep '^not ok' "$log" | grep -vc SKIP) not ok" >> "$S"
    grep -A8 '^not ok' "$log" | grep -v SKIP | head -12 >> "$S"
}
# bench_ab A BENCH_A DB_A B BENCH_B DB_B ARGS...: redtune_bench --axis ARGS, A B A B, the
# table of tools/exp/bench_ab.py printed.
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
# torch_axis ARGS...: bench/torch_axis.py with the package of build/python and db/tuned.
torch_axis() {
    local t0
    cp "$T" build/python/redtune/redtune.db
    t0=$(date +%s)
    PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/build/python timeout "${TORCH_LIMIT:-200}" python3 -P bench/torch_axis.py \
        --db "$T" --csv "$OUT/torch_axis.csv" "$@" > "$L/torch_axis.log" 2> "$L/torch_axis.err"
    echo "torch_axis.py: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
}
T=build/redtune.db
build/redtune load --force -o "$T" db/tuned/*.sql > /dev/null
case $step in
lift)
    tests '*axis*' 150
    bench_ab before build/bench_before/redtune_bench "$T" after build/bench/redtune_bench "$T" \
        --ops argmax --types f32,bf16
    torch_axis --ops argmax
    sed -n '/^argmax along/,$p' "$L/torch_axis.log" >> "$S" ;;
cols)
    tests '*axis*' 150
    bench_ab before build/bench_before/redtune_bench "$T" after build/bench/redtune_bench "$T" \
        --ops argmax --types f32,bf16 --shapes "1,1048576,16;1,65536,128;1,4096,4096;1,16,4194304;1,32768,1024;64,2048,512"
    rm -f build/retune.db
    for ty in f32 bf16; do
        t0=$(date +%s)
        timeout 170 build/redtune --device 0 --axis --op argmax --type $ty --db build/retune.db \
            --shapes "1,16,4194304" > "$L/tune_argmax_$ty.log" 2>&1
        echo "redtune --axis --op argmax --type $ty --shapes 1,16,4194304: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
        grep -E 'configs measured' "$L/tune_argmax_$ty.log" | tail -n 1 >> "$S"
    done
    build/redtune best --db build/retune.db 2>&1 | grep -E 'axis_(rows|cols)' | sed 's/  */ /g' >> "$S"
    build/redtune export --db build/retune.db --match H100 -o "$OUT/retune_ship.db" --force >> "$S" 2>&1
    build/redtune measurements --db build/retune.db --format csv | gzip -9 > "$OUT/retune_meas.csv.gz" ;;
final)
    tests '*axis*' 200
    tests 'gpu_types*' 100
    cp "$T" build/python/redtune/redtune.db
    t0=$(date +%s)
    PYTHONPATH=$PWD/build/python:$PWD/python/tests:$PWD/build/pyt PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 \
        timeout 200 python3 -P -m pytest -q -p no:cacheprovider -k 'axis or arg' python/tests/test_gpu.py \
        > "$L/pytest_axis.log" 2>&1
    echo "python GPU tests (-k 'axis or arg'): exit $? ($(( $(date +%s) - t0 )) s): $(tail -n 1 "$L/pytest_axis.log")" >> "$S"
    grep -E '^(FAILED|ERROR)' "$L/pytest_axis.log" | head -20 >> "$S"
    bench_ab before build/bench_before/redtune_bench build/old_argmax_axis.db after build/bench/redtune_bench "$T" \
        --ops argmax --types f32,bf16 ;;
torch)
    TORCH_LIMIT=400 torch_axis --ops sum,min,max,argmax
    sed -n '/^sum along/,$p' "$L/torch_axis.log" >> "$S" ;;
*)
    echo "dev_session17.sh: no step '$step'" >&2; exit 2 ;;
esac
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$L"
cat "$S"
