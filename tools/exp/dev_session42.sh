#!/bin/bash
# dev_session42.sh STEP - device runs of the forty-second session; one step a call; logs under
# $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the
# functions are tools/exp/dev_lib.sh's. Carried: build/c42.tar.xz (`bash
# tools/exp/dev_session42.sh pack` at this commit), build/devlib, build/h100.sql.xz,
# build/python (`ninja python`, without its redtune.db), build/pyt (Debian's pytest, pluggy,
# iniconfig and py).
#   py      (issues 16, 15) bench/torch_axis.py for every operator with the committed database
#           (the first run with both the select combines and the forty-first session's retuned
#           mean and var_mean bf16 rows), then the Python GPU tests with the time left.
#   sel     (issue 15; carried also build/c43.tar.xz, `bash tools/exp/dev_session42.sh pack43`
#           with argmin/argmax's warp select, c42 the binaries before it) argmax f32 2^26 through
#           redtune_bench --type-cases before and after, A B A B; the C GPU tests of argmin and
#           argmax (flat over every family and type, the narrow types, every family of the
#           issue 15 operators, segmented, along an axis) with the time left.
#   selab   (issue 15, 16; as sel, carried the same) the warp select before and after, A B A B:
#           argmax f32 through redtune_bench --type-cases (2^26), and argmax f32 and bf16
#           along every axis shape of redtune_bench --axis (argmin and argmax's split rows
#           trailed the forty-first session's torch_axis run by 2.7-4.5%, as much as mean's
#           did, which the change does not touch).
#   one     (issues 15, 16; for when machines are scarce) rows' argmax part (retune, merge,
#           bench A B A B), then py with the committed database.
#   rows    (issues 16, 15) argmax f32 at 2^26 retuned flat with the select combines (its
#           winner was tuned before them) into the row of the flat type cases (041de415); the
#           f32 rows cells that trailed PyTorch (fortieth and forty-first sessions: min, max,
#           mean and var_mean at [4096 x 4096] and [16 x 2^22]) retuned with the default axis
#           space, each into the row the lookup takes for it (24f0a2f7 for mean and var_mean;
#           min's and max's rows are others); all merged (the faster verified
#           entry per case); torch_axis.py over those cells with the merge; redtune_bench
#           --type-cases --ops argmax, the committed database against the merge, A B A B.
#   h200r   (issue 14; an H200) its offsets heavy rows with the shipped space (min and sum, f32
#           and f64, at 2^22 and 30M, 100 s an operator), merged into its row; redtune_bench over
#           every offsets profile, the committed database against the merge, A B A B (as
#           dev_session41.sh's h200r, with this session's binaries).
step=${1:?step: pack, pack43, sel, selab, one, py, rows, h200r}
. "$(dirname "$0")/dev_lib.sh"
dev_start_pair c42 c43 "$step" sel selab
# Machines are scarce: a call for py or rows that gets an H200 does the H200's step instead.
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
*H200*) [ "$step" != h200r ] && echo "an H200: step h200r instead of $step" >> "$S" && step=h200r ;;
esac
axis_uuid=24f0a2f78c703d775ac5d2a008ce8735   # the H100 row whose axis winners the lookup takes
# argmax f32 at 2^26 retuned flat (the default space) into the row of the flat type cases
argmax_tune() {
    tune_each flatam ${ARGMAX_LIMIT:-120} 67108864 "" argmax:f32
    dship flatam H100
    grep -E 'argmax' "$L/flatam_best.txt" >> "$S"
    python3 tools/ship_into_row.py "$OUT/flatam_ship.db" "$T" 041de41587225a3906d82066169a497e \
        -o "$OUT/flatam_into.db" >> "$S" 2>&1
}
# issue 15's argmax row through the bench: the committed database ($T) against build/merged.db
argmax_ab() {
    local r d
    for r in 1 2; do
        for d in "$T" build/merged.db; do
            timeout 40 build/bench/redtune_bench --db "$d" --type-cases --ops argmax \
                > "$L/tc_$(basename "$d")_$r.log" 2>&1
            echo "redtune_bench --type-cases --ops argmax, $d, run $r: exit $?" >> "$S"
            grep -iE 'argmax' "$L/tc_$(basename "$d")_$r.log" | head -4 >> "$S"
        done
    done
}
# every operator along an axis against PyTorch (LIMIT s unless PY_TORCH_LIMIT), then the Python
# GPU tests with the time left
py_step() {
    TORCH_LIMIT=${PY_TORCH_LIMIT:-$1} torch_axis --ops sum,min,max,argmax,mean,var_mean
    sed -n '/along/,$p' "$L/torch_axis.log" >> "$S"
    fits 60 "python GPU tests" && pytests all $(left)
}
case $step in
sel)
    tc_ab 45 'argmax' --ops argmax
    fits 100 "argmin/argmax tests" && tests 'gpu_RT_ARG*' 150
    fits 40 "narrow tests" && tests 'gpu_run_arg*' 60
    fits 30 "types tests" && tests 'gpu_types*' 40
    fits 40 "seg types tests" && tests 'seg_types*' 60
    fits 60 "axis tests" && tests '*axis*' $(left) ;;
selab)
    # (run 4 asked --type-cases for --sizes 2^16,2^20,2^24, which its fixed cases refuse)
    tc_ab 45 'argmax' --ops argmax
    BENCH_LIMIT=80 bench_ab before build/bench_before/redtune_bench "$T" after build/bench/redtune_bench "$T" \
        --ops argmax --types f32,bf16 ;;
h200r)
    SHIP_LIMIT=100 tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 heavy 2^22,30M min:f32 sum:f32 min:f64 sum:f64
    fits 100 "bench offsets" && bench_all 40 ;;
one)
    argmax_tune
    build/redtune merge "$T" "$OUT/flatam_into.db" -o build/merged.db --force >> "$S" 2>&1
    argmax_ab
    py_step 220 ;;
py)
    py_step 240 ;;
rows)
    [ -z "${SKIP_ARGMAX:-}" ] && argmax_tune
    shapes='4096,4096,1;16,4194304,1'
    ops= intos=
    for op in ${ROWS_OPS:-max mean var_mean min}; do
        fits 150 "$op f32 retune" || continue
        RETUNE_DB=build/rt_$op.db retune ${ROWS_LIMIT:-70} "$op" f32 "$shapes"
        build/redtune best --db build/rt_$op.db 2>&1 | grep -E 'axis_rows' | sed 's/  */ /g' >> "$S"
        build/redtune export --db build/rt_$op.db --match H100 -o "$OUT/rt_${op}_ship.db" --force >> "$S" 2>&1
        build/redtune measurements --db build/rt_$op.db --format csv | gzip -9 > "$OUT/rt_${op}_meas.csv.gz"
        # The row the lookup takes for the operator's f32 rows (the H100 row with the most of
        # them: runtime/store_lookup.c): min's and max's are not the axis winners' row.
        row=$(python3 -c 'import sqlite3, sys
r = sqlite3.connect(sys.argv[1]).execute("SELECT d.uuid FROM best b JOIN devices d ON d.id = b.device_id WHERE d.name LIKE ? AND b.op = ? AND b.type = ? AND b.hot = 0 AND b.layout GLOB ? GROUP BY d.id ORDER BY count(*) DESC LIMIT 1", ("%H100%", sys.argv[2], "f32", "axis:*x1")).fetchone()
print(r[0] if r else "")' "$T" "$op")
        python3 tools/ship_into_row.py "$OUT/rt_${op}_ship.db" "$T" "${row:-$axis_uuid}" \
            -o "$OUT/rt_${op}_into.db" >> "$S" 2>&1 && intos="$intos $OUT/rt_${op}_into.db"
        ops=$ops${ops:+,}$op
    done
    [ -f "$OUT/flatam_into.db" ] && intos="$OUT/flatam_into.db $intos"
    build/redtune merge "$T" $intos -o build/merged.db --force >> "$S" 2>&1
    [ -f "$OUT/flatam_into.db" ] && argmax_ab
    [ -n "$ops" ] && T=build/merged.db TORCH_LIMIT=$(left) torch_axis --ops "$ops" --dtypes float32 \
        --only '[4096 x 4096] rows,[16 x 2^22] rows'
    sed -n '/along/,$p' "$L/torch_axis.log" >> "$S" ;;
esac
dev_end
