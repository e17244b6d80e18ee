#!/bin/bash
# dev_session41.sh STEP - device runs of the forty-first session; one step a call; logs under
# $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz; the
# functions are tools/exp/dev_lib.sh's. Carried: build/c41.tar.xz (`bash
# tools/exp/dev_session40.sh pack41` at this commit), build/devlib, build/h100.sql.xz.
#   (issue 15's bench before and after the select combines is dev_session40.sh's verify.)
#   py      (written for the next session; issues 15, 16) bench/torch_axis.py for mean,
#           var_mean and argmax with the committed database (run 1 of this session ran the
#           mean and var_mean bf16 rows it retuned with their old winners: the merge went into
#           a row the lookup does not take), then the Python GPU tests with the time left (not
#           run with the select combines). Carried also: build/python (`ninja python`, without
#           its redtune.db) and build/pyt (Debian's pytest, pluggy, iniconfig and py).
#   h200r   (issue 14; an H200) its offsets heavy rows with the shipped space (min and sum, f32
#           and f64, at 2^22 and 30M, 100 s an operator), merged into its row; redtune_bench over
#           every offsets profile, the committed database against the merge, A B A B. As
#           dev_session36.sh's h200r with this session's binaries.
#   mean    (issue 16) the rows where mean and var_mean trail PyTorch most (fortieth session, run
#           3: mean bf16 [65536 x 128] and [4096 x 4096] rows 1.076-1.078, whose shipped winners
#           are 5% and 14% slower than sum bf16's at the same shapes) retuned with the default axis
#           space: mean bf16 and var_mean bf16 at [65536 x 128] and [4096 x 4096]
#           rows, mean f32 at [4096 x 4096] and [16 x 2^22] rows; merged into the row that
#           holds the device's axis winners (the faster verified entry per case); then bench/torch_axis.py for mean, var_mean
#           and argmax (the fortieth session's select combines) with the merge.
#   all     (most of what is owed in one call, for when machines are scarce; carried also
#           build/c40.tar.xz (the fortieth session's binaries before the select combines),
#           build/python) issue 15's var_mean and argmax rows through
#           redtune_bench --type-cases with the bench before (c40) and after, A B A B; mean's
#           retune (60 s a tune) and torch_axis (as mean, 110 s); the C GPU tests '*var*' and
#           'seg_types*' with the time left.
#   pyt     the Python GPU tests alone (after all, on the machine still warm), with build/python
#           and build/pyt carried.
step=${1:?step: py, h200r, mean, all, pyt}
. "$(dirname "$0")/dev_lib.sh"
[ "$step" = all ] && before c40
dev_start c41 "$step"
case $(nvidia-smi --query-gpu=name --format=csv,noheader) in
*H200*) dev=H200 uuid=8b59dd2a77fc5356c5b5d639fc1cc192 axis_uuid=$uuid ;;
*) dev=H100 uuid=2e956071d0b02214c4c501b293bccefc axis_uuid=24f0a2f78c703d775ac5d2a008ce8735 ;;
esac
# The H100's axis winners are those of row 24f0a2f7 (the lookup ran them in run 1, where a
# merge into 2e956071, the offsets rows' GPU, was not taken); the H200 has one row.
mean_step() {
    rows='65536,128,1;4096,4096,1'
    retune ${MEAN_LIMIT:-90} mean bf16 "$rows"
    fits 150 "var_mean bf16 retune" && retune ${MEAN_LIMIT:-90} var_mean bf16 "$rows"
    fits 200 "mean f32 retune" && retune ${MEAN_LIMIT:-90} mean f32 '4096,4096,1;16,4194304,1'
    retune_ship $dev
    python3 tools/ship_into_row.py "$OUT/retune_ship.db" "$T" "$axis_uuid" -o "$OUT/retune_into.db" >> "$S" 2>&1
    build/redtune merge "$T" "$OUT/retune_into.db" -o build/merged.db --force >> "$S" 2>&1
    local tl=$(left)
    [ -n "${MEAN_TORCH_LIMIT:-}" ] && [ "$MEAN_TORCH_LIMIT" -lt "$tl" ] && tl=$MEAN_TORCH_LIMIT
    T=build/merged.db TORCH_LIMIT=$tl torch_axis --ops mean,var_mean,argmax
    sed -n '/along/,$p' "$L/torch_axis.log" >> "$S"
}
case $step in
py)
    TORCH_LIMIT=150 torch_axis --ops mean,var_mean,argmax
    sed -n '/along/,$p' "$L/torch_axis.log" >> "$S"
    fits 60 "python GPU tests" && pytests all $(left) ;;
h200r)
    SHIP_LIMIT=100 tune_rows $dev $uuid heavy 2^22,30M min:f32 sum:f32 min:f64 sum:f64
    fits 100 "bench offsets" && bench_all 40 ;;
all)
    tc_ab 60 'var_mean|argmax' --ops var_mean,argmax
    MEAN_LIMIT=60 MEAN_TORCH_LIMIT=110 mean_step
    fits 60 "var tests" && tests '*var*' 90
    fits 40 "seg_types tests" && tests 'seg_types*' $(left) ;;
mean)
    mean_step ;;
pyt)
    pytests all $(left) ;;
esac
dev_end
