#!/bin/bash
# dev_session17.sh STEP - device runs of the seventeenth session (issue 16: argmin/argmax and
# var_mean along an axis through the glue's run, co_lift_run, in axis_rows and axis_cols), one
# step a call on a warm H100; logs under $OUT/logs (packed into $OUT/logs.tgz), a summary
# ($OUT/sum.txt) printed last. Carried: build/c17.tar.xz (stripped binaries, unpacked into
# build/ on the device; `bash tools/exp/dev_session17.sh pack` makes it here; the shared
# functions are tools/exp/dev_lib.sh's:
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
#   rows   the row shapes where redtune stayed behind PyTorch in torch (0-5%), retuned
#          exhaustively with this session's templates (whose runs change bf16 min/max and
#          argmax): max bf16 (min bf16 runs its winners) on [4096 x 4096] and [16 x 2^22] rows,
#          argmax f32 on [4096 x 4096] rows, into build/retune.db; the winners merged into a
#          copy of db/tuned (tools/exp/split_merge.py, the rows the lookup takes: max bf16
#          c79d23a7..., argmax f32 5eb94c5c...), then redtune_bench --axis on those shapes,
#          db/tuned against the merge, A B A B, and bench/torch_axis.py --only rows with the
#          merge.
# The four calls ran this script as committed in 64d5cf4, its functions its own; they are
# tools/exp/dev_lib.sh's now, unchanged in what they run.
#   check  the code and db/tuned as committed last (rows' winners merged, CUBINs refreshed): the
#          C GPU tests '*axis*' (with `redtune reduce --result index`), 'api_gpu*' and
#          'gpu_types*', and the whole Python GPU suite.
#   meanvar bench/torch_axis.py for mean and var_mean (population), new in it this session:
#          the "every op" row for the two operators the axis families now reduce through the
#          glue's run too (no axis winners of their own: the built-in defaults by shape).
#   mvtune mean and var_mean along an axis had no winners (meanvar: up to 2.4x and 3.2x behind
#          PyTorch on [16 x 2^22] columns with the built-in defaults): local search, 12%,6,
#          from the similar cases' winners (sum's), f32 and bf16, on the shapes where they were
#          behind, 45 s a process (the shapes done by then are kept), merged into sum's axis
#          row of db/tuned (24f0a2f7...), then meanvar's bench with the merge.
step=${1:?step: pack, lift, cols, final, torch, rows, check, meanvar, mvtune}
. "$(dirname "$0")/dev_lib.sh"
if [ "$step" = pack ]; then
    dev_pack c17 "redtune tests/all bench/redtune_bench bench_before/redtune_bench"
    exit 0
fi
dev_begin c17
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
    retune 170 argmax f32 "1,16,4194304"
    retune 170 argmax bf16 "1,16,4194304"
    retune_ship ;;
final)
    tests '*axis*' 200
    tests 'gpu_types*' 100
    pytests axis 200 -k 'axis or arg'
    bench_ab before build/bench_before/redtune_bench build/old_argmax_axis.db after build/bench/redtune_bench "$T" \
        --ops argmax --types f32,bf16 ;;
torch)
    TORCH_LIMIT=400 torch_axis --ops sum,min,max,argmax
    sed -n '/^sum along/,$p' "$L/torch_axis.log" >> "$S" ;;
rows)
    rm -f build/retune.db
    retune 150 max bf16 "4096,4096,1;16,4194304,1"
    retune 150 argmax f32 "4096,4096,1"
    retune_ship
    python3 tools/exp/split_merge.py "$OUT/retune_ship.db" "$T" build/merged.db \
        max:bf16:c79d23a7f652bb845b00899966b2b58a argmax:f32:5eb94c5cfe31bce042975ba904d02a4d >> "$S" 2>&1
    bench_ab shipped build/bench/redtune_bench "$T" merged build/bench/redtune_bench build/merged.db \
        --ops argmax,min,max --types f32,bf16 --shapes "4096,4096,1;16,4194304,1"
    T=build/merged.db TORCH_LIMIT=200 torch_axis --ops sum,min,max,argmax --only rows
    sed -n '/^sum along/,$p' "$L/torch_axis.log" >> "$S" ;;
check)
    tests '*axis*' 200
    tests 'api_gpu*' 150
    tests 'gpu_types*' 60
    pytests gpu 240 ;;
meanvar)
    TORCH_LIMIT=400 torch_axis --ops mean,var_mean
    sed -n '/^mean along/,$p' "$L/torch_axis.log" >> "$S" ;;
mvtune)
    rm -f build/retune.db
    shapes="1,16,4194304;16,4194304,1;4096,4096,1;1048576,16,1;1,1048576,16;1,65536,128;65536,128,1;64,2048,512"
    for c in "var_mean f32" "var_mean bf16" "mean f32" "mean bf16"; do
        set -- $c
        t0=$(date +%s)
        timeout 45 build/redtune --device 0 --axis --op "$1" --type "$2" --db build/retune.db \
            --shapes "$shapes" --strategy local --budget 12%,6 > "$L/tune_$1_$2.log" 2>&1
        echo "redtune --axis --op $1 --type $2 (local 12%,6): exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    done
    retune_ship
    u=24f0a2f78c703d775ac5d2a008ce8735
    python3 tools/exp/split_merge.py "$OUT/retune_ship.db" "$T" build/merged.db \
        var_mean:f32:$u var_mean:bf16:$u mean:f32:$u mean:bf16:$u >> "$S" 2>&1
    T=build/merged.db TORCH_LIMIT=160 torch_axis --ops mean,var_mean
    sed -n '/^mean along/,$p' "$L/torch_axis.log" >> "$S" ;;
*)
    echo "dev_session17.sh: no step '$step'" >&2; exit 2 ;;
esac
dev_end
