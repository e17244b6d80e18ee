#!/bin/bash
# dev_session46.sh STEP - device runs of the forty-sixth session; one step a call; logs under
# $OUT/logs, a summary ($OUT/sum.txt) printed last. Carried: build/c45.tar.xz (`bash
# tools/exp/dev_session44.sh pack` at this session's HEAD), build/devlib, build/h100.sql.xz.
#   bal   (issue 16) tools/exp/axis_balance_space.lua (split counts that fill the GPU evenly,
#         beside the shipped winners' configs) on [16 x 2^22] rows f32 and bf16, [65536 x 128]
#         and [4096 x 4096] columns f32 and bf16, [64 x 2048 x 512] bf16, sum, cold, in PASSES
#         passes (default 2) into build/bal1.db, bal2.db; tools/exp/bal_sum.py's table in the
#         summary; the last pass's winners (H100) put into the H100's axis row
#         (24f0a2f7...) in place of the shipped ones (tools/ship_into_row.py --replace,
#         then merge: build/merged.db; run 1 ran it as tools/exp/drop_cases.py, since folded
#         into ship_into_row.py), then
#         redtune_bench --axis on the four shapes, sum, f32 and bf16, shipped against merged,
#         A B A B (tools/exp/bench_ab.py's table).
#   rec   (issues 16, 15) the record on today's machine: redtune_bench --axis over issue 16's
#         shapes (sum, min; f32, bf16) and --type-cases (issue 15's cases), each twice (their
#         tables, with each case's read-only ceiling since 830528d's bench, in the summary), with
#         the committed database (build/h100.sql.xz packed after the [4096 x 4096] and
#         [65536 x 128] bf16 column winners of run 1 were shipped); bench/torch_axis.py for
#         every operator (PyTorch eager and Inductor beside redtune, build/python carried);
#         the Python GPU tests (build/pyt carried) with what time is left.
#   recq  (issues 16, 15, 12) rec's benches and torch_axis without the Python tests, then
#         issue 12's live quality run at local:12%,6 (tools/strategy_quality.sh, CASES=wide)
#         with the budget's last pick on the steps that helped (6df9cb7; c45 packed there).
step=${1:?step: bal, rec, recq}
. "$(dirname "$0")/dev_lib.sh"
dev_start c45 "$step"
bal() {
    local p sh t t0
    for p in $(seq 1 "${PASSES:-2}"); do
        for sh in "16,4194304,1" "1,65536,128" "1,4096,4096" "64,2048,512"; do
            for t in f32 bf16; do
                [ "$sh" = "64,2048,512" ] && [ "$t" = f32 ] && continue
                fits 30 "bal pass $p $sh $t" || continue
                t0=$(date +%s)
                timeout 120 build/redtune --device 0 --axis --op sum --type "$t" --shapes "$sh" \
                    --space tools/exp/axis_balance_space.lua --db "build/bal$p.db" \
                    > "$L/bal${p}_${sh//,/x}_$t.log" 2>&1
                echo "pass $p $sh $t: exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
            done
        done
        build/redtune measurements --db "build/bal$p.db" --format csv > "$OUT/bal$p.csv"
    done
    build/redtune best --db "$T" --op sum --format csv > "$OUT/shipped_best.csv"
    python3 tools/exp/bal_sum.py "$OUT/shipped_best.csv" "$OUT"/bal[0-9].csv >> "$S" 2>&1
    p=${PASSES:-2}
    build/redtune export --db "build/bal$p.db" --match H100 -o build/bal_ship.db --force >> "$S" 2>&1
    rm -f build/bal_base.db
    python3 tools/ship_into_row.py build/bal_ship.db "$T" 24f0a2f78c703d775ac5d2a008ce8735 \
        -o "$OUT/bal_into.db" --replace build/bal_base.db >> "$S" 2>&1
    build/redtune merge build/bal_base.db "$OUT/bal_into.db" -o build/merged.db --force >> "$S" 2>&1
    fits 160 "bench shipped against merged" && BENCH_LIMIT=40 bench_ab shipped build/bench/redtune_bench "$T" \
        merged build/bench/redtune_bench build/merged.db --ops sum --types f32,bf16 \
        --shapes '16,4194304,1;1,65536,128;1,4096,4096;64,2048,512'
}
rec() {
    local r tl=${REC_TORCH_LIMIT:-0}
    for r in 1 2; do
        bench_run axis$r 60 --db "$T" --axis --ops sum,min --types f32,bf16
        sed -n '/^reductions along an axis/,/^(\*/p' "$L/axis$r.log" >> "$S"
        bench_run tc$r 60 --db "$T" --type-cases
        sed -n '/^types and fused operators/,/^(\*/p' "$L/tc$r.log" >> "$S"
    done
    (( tl > 0 )) || tl=$(( $(left) - 200 ))
    TORCH_LIMIT=$tl torch_axis --ops sum,min,max,argmax,mean,var_mean
    sed -n '/along/,$p' "$L/torch_axis.log" >> "$S"
    [ -n "${REC_NO_PY:-}" ] && return
    fits 150 "python GPU tests" && pytests all $(left)
}
case $step in
rec)
    rec ;;
recq)
    REC_NO_PY=1 REC_TORCH_LIMIT=230 rec
    fits 200 "quality" && quality "local:12%,6" ;;
bal)
    bal
    ;;
esac
dev_end
