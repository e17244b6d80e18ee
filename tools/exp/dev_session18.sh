#!/bin/bash
# dev_session18.sh STEP - device runs of the eighteenth session (issue 16, "every op": mean and
# var_mean along an axis), one step a call on an H100; logs under $OUT/logs (packed into
# $OUT/logs.tgz), a summary ($OUT/sum.txt) printed last; the functions are tools/exp/dev_lib.sh's.
# Carried: build/c18.tar.xz (stripped binaries; `bash tools/exp/dev_session18.sh pack` makes it
# here), build/devlib, build/python (without its redtune.db), build/pyt, and for the tuning
# steps build/mvseed.db.xz: the CUBINs of the default axis space for mean and var_mean, f32
# and bf16, on the eleven shapes of bench/torch_axis.py, compiled here (`redtune compile --arch
# sm_90 --axis --shapes "$SHAPES" --op OP --type T --db FILE`, 2109 configs each), so that the
# tuner on the device compiles nothing; merged there with db/tuned (`redtune merge`), whose H100
# axis winners of sum are the similar cases the local search starts from. With the seed the
# tree would pass the 64 MiB a call carries: db/tuned/h100.sql is moved out of it and carried
# as build/h100.sql.xz.
#   check   the C GPU tests of the code no GPU ran since the seventeenth session's run 7 (the
#           axis built-in default for short columns, `axis_gpu_builtin`; seg_per's per_chunk;
#           axis_cols' named estimate; read_choice_or_pair): '*axis*', 'api_gpu*', '*seg*',
#           'gpu_types*'; then bench/torch_axis.py --ops mean,var_mean with db/tuned (no axis
#           winners of either operator: the built-in defaults, short columns new).
#   tune    (run 2) mean and var_mean, f32 and bf16, along an axis, local search (12%,6) from the
#           similar cases' winners (sum's), the shapes where redtune was behind in check first,
#           each process TUNE_LIMIT s (default 100; the shapes done by then are kept); the lent
#           GPU's winners to $OUT/retune_ship_tune.db, merged into a copy of db/tuned
#           (tools/exp/split_merge.py, into sum's axis row 24f0a2f7..., build/merged.db); then
#           bench/torch_axis.py --ops mean,var_mean with it.
#   final   (run 3) db/tuned as committed (run 2's winners merged, CUBINs refreshed): the Python
#           GPU tests of the axis calls and the means ('axis or mean or var or dim'), then
#           bench/torch_axis.py for every operator it has (sum, min, max, argmax, mean,
#           var_mean): the "every op" row of issue 16 in one run.
#   lazy    (run 4) a39b930's compile-as-picked on the GPU: `redtune compile --axis` of the
#           union of three shapes' spaces for mean f32 (what an exhaustive or an earlier local
#           run compiled first), then `redtune --axis --strategy local --budget 12%,6` on the
#           same shapes into a fresh database, which compiles what it picks.
SHAPES="16,4194304,1;4096,4096,1;64,2048,512;1,1048576,16;1,65536,128;1048576,16,1;65536,128,1;1,16,4194304;1,4096,4096;32768,1024,1;1,32768,1024"
step=${1:?step: pack, check, tune, final, lazy}
. "$(dirname "$0")/dev_lib.sh"
if [ "$step" = pack ]; then
    dev_pack c18 "redtune tests/all bench/redtune_bench"
    exit 0
fi
mvtune() {
    local c t0
    if [ ! -f build/retune.db ]; then
        xz -dc build/mvseed.db.xz > build/mvseed.db
        build/redtune merge build/mvseed.db "$T" -o build/retune.db --force | tail -n 1 >> "$S"
        rm -f build/mvseed.db
    fi
    for c in "$@"; do
        set -- ${c/:/ }
        t0=$(date +%s)
        timeout "${TUNE_LIMIT:-100}" build/redtune --device 0 --axis --op "$1" --type "$2" \
            --db build/retune.db --shapes "$SHAPES" --strategy local --budget 12%,6 \
            > "$L/tune_$1_$2.log" 2>&1
        echo "redtune --axis --op $1 --type $2 (local 12%,6): exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
        grep -E 'configs (from|measured)' "$L/tune_$1_$2.log" | tail -n 2 >> "$S"
    done
    # The lent GPU's rows alone (the device of the last run), without db/tuned's.
    python3 - build/retune.db build/retune_own.db <<'PY'
import shutil, sqlite3, sys
shutil.copy(sys.argv[1], sys.argv[2])
db = sqlite3.connect(sys.argv[2])
d = db.execute("SELECT device_id FROM runs ORDER BY id DESC LIMIT 1").fetchone()[0]
for t in ("best", "measurements", "runs"):
    db.execute("DELETE FROM %s WHERE device_id != ?" % t, (d,))
db.execute("DELETE FROM devices WHERE id != ?", (d,))
db.commit()
PY
    build/redtune best --db build/retune_own.db 2>&1 | grep -E 'axis_(rows|cols)' | sed 's/  */ /g' >> "$S"
    build/redtune export --db build/retune_own.db --match H100 -o "$OUT/retune_ship_$step.db" --force >> "$S" 2>&1
    build/redtune measurements --db build/retune_own.db --format csv | gzip -9 > "$OUT/retune_meas_$step.csv.gz"
    rm -f build/retune_own.db
}
# db/tuned/h100.sql travels xz'd (build/h100.sql.xz) where the seed would not fit beside it.
[ -f db/tuned/h100.sql ] || xz -dc build/h100.sql.xz > db/tuned/h100.sql
dev_begin c18
case $step in
check)
    tests '*axis*' 200
    tests 'api_gpu*' 150
    tests '*seg*' 200
    tests 'gpu_types*' 60
    TORCH_LIMIT=200 torch_axis --ops mean,var_mean
    sed -n '/^mean along/,$p' "$L/torch_axis.log" >> "$S" ;;
tune)
    mvtune mean:f32 mean:bf16 var_mean:f32 var_mean:bf16
    u=24f0a2f78c703d775ac5d2a008ce8735
    python3 tools/exp/split_merge.py "$OUT/retune_ship_tune.db" "$T" build/merged.db \
        mean:f32:$u mean:bf16:$u var_mean:f32:$u var_mean:bf16:$u >> "$S" 2>&1
    T=build/merged.db TORCH_LIMIT=${TORCH_LIMIT:-150} torch_axis --ops mean,var_mean
    sed -n '/^mean along/,$p' "$L/torch_axis.log" >> "$S" ;;
final)
    pytests axis 170 -k 'axis or mean or var or dim'
    TORCH_LIMIT=${TORCH_LIMIT:-360} torch_axis --ops sum,min,max,argmax,mean,var_mean
    sed -n '/^sum along/,$p' "$L/torch_axis.log" >> "$S" ;;
lazy)
    sh3="16,4194304,1;1,65536,128;4096,4096,1"
    t0=$(date +%s)
    build/redtune compile --axis --shapes "$sh3" --op mean --type f32 --db build/eager.db \
        > "$L/eager.log" 2>&1
    echo "redtune compile (the union): exit $? ($(( $(date +%s) - t0 )) s): $(tail -n 1 "$L/eager.log")" >> "$S"
    t0=$(date +%s)
    timeout 200 build/redtune --device 0 --axis --shapes "$sh3" --op mean --type f32 \
        --db build/lazy.db --strategy local --budget 12%,6 > "$L/lazy.log" 2>&1
    echo "redtune --strategy local (lazy): exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    grep -E '^redtune: [0-9]+ configs from|compiled .* as the search|configs measured' "$L/lazy.log" >> "$S"
    grep -E 'axis_(rows|cols)' "$L/lazy.log" | grep -v '^redtune: n=' | head -n 3 >> "$S" ;;
*)
    echo "dev_session18.sh: no step '$step'" >&2; exit 2 ;;
esac
dev_end
