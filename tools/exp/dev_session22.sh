#!/bin/bash
# dev_session22.sh STEP - device runs of the twenty-second session, one step a call on the
# lent H200; logs under $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in
# $OUT/all.tgz; the functions are tools/exp/dev_lib.sh's. Carried: build/c22.tar.xz
# (stripped binaries; `bash tools/exp/dev_session22.sh pack` makes it here), build/devlib,
# build/h100.sql.xz (db/tuned/h100.sql, xz'd, moved out of the tree so that the call stays
# under 64 MiB).
#   stage2  seg_per STAGE=2 (the warp's chunk split evenly between its lanes): the C GPU
#           tests of the segmented families ('seg_*', with three STAGE=2 shapes) and
#           build/seg_harness --quick --only seg_per; the tests that no GPU had run
#           ('api_gpu_seg*', 'pick_gpu*'); then tools/exp/stage2_space.lua tuned for min f32 and
#           f64 offsets over the profiles at 30 * 2^20 (tools/exp/stage2_sum.py: each variant's
#           best per case). Run 1; STAGE=2 was not kept.
#   batch   seg_per with a lane per segment loading four rounds before it folds them
#           (PER_U): build/seg_harness --quick --only seg_per, then redtune_bench --segmented
#           offsets for rand10_50, len3 and len1, min and sum, f32 and f64, at 2^24 and 30M,
#           the bench of cc73405 (build/bench_before, a worktree's build) against this one,
#           A B A B (tools/exp/seg_ab.py). Run 2; 1.08x slower (spills under LONG's launch
#           bounds), not kept.
#   win     seg_per STAGE=2 as kept: the warp's span copied into a shared window by cp.async,
#           each lane reading its segment from there: build/seg_harness --quick --only
#           seg_per, the C GPU tests 'seg_RT_MIN_RT_F*' and 'seg_order_kept', then
#           tools/exp/stage2_space.lua tuned for min f32 (rand10_50, len3, len1, heavy,
#           len1000 at 30M), each variant's best per case. Run 3.
#   win2    the same with LONG (a warp with a long segment loads directly, the block takes
#           the long ones): the harness, the C GPU tests 'seg_RT_MIN_*', 'seg_order_kept',
#           'seg_per_long_unaligned', 'seg_types_builtin'; stage2_space.lua for rand10_50 and
#           heavy (min f32); the shipped space for rand10_50 at 2^22 and 30M (min, sum, max
#           f32; min, sum f64; min i32) into build/ship.db, its H200 rows merged into the
#           committed database (redtune merge), then redtune_bench --segmented offsets for
#           rand10_50 and len3 (min, sum x f32, f64 at 30M) with the committed database and
#           the merge, A B A B. Run 4.
#   final   the shipped database refreshed for the new template text: 'api_gpu_seg*', then
#           the C GPU tests of the segmented families that run 4 left out ('seg_RT_*' for
#           sum, argmax, max, argmin, prod; 'seg_all_nan*'). Run 5.
#   shiph100  not run (no H100 was lent): the shipped space for rand10_50 tuned on an H100,
#           merged into the H100's offsets row, and benched against the committed database
#           (rand10_50, len3, one, len1000; min, sum x f32, f64 at 2^20 and 30M), A B A B.
#   h200ship  not run (no device time left): run 4's H200 winners merged into the H200's row
#           with the lookup that completes a row by mean length, 'api_gpu_seg*', and the
#           bench's offsets profiles against the committed database, A B A B.
step=${1:?step: pack, stage2, batch, win, win2, final, shiph100, h200ship}
. "$(dirname "$0")/dev_lib.sh"
if [ "$step" = pack ]; then
    dev_pack c22 "redtune tests/all bench/redtune_bench seg_harness ${BEFORE:+bench_before/redtune_bench}"
    exit 0
fi
[ -f db/tuned/h100.sql ] || xz -dc build/h100.sql.xz > db/tuned/h100.sql
dev_begin c22
export REDTUNE_BIN=$PWD/build/redtune
# seg_tune NAME LIMIT SPACE PROFILES OP:TYPE...: redtune --segmented offsets over SPACE at
# 30 * 2^20 into build/NAME.db, then each variant's best per case in the summary.
seg_tune() {
    local name=$1 limit=$2 space=$3 prof=$4 c t0
    shift 4
    for c; do
        set -- ${c//:/ }
        t0=$(date +%s)
        timeout "$limit" build/redtune --device 0 --op "$1" --type "$2" --segmented offsets \
            --space "$space" --profiles "$prof" --sizes 30M --seed 7 --db "build/$name.db" \
            > "$L/${name}_$1_$2.log" 2>&1
        echo "redtune --segmented offsets --op $1 --type $2 ($prof): exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
        grep -E 'wrong|fault' "$L/${name}_$1_$2.log" | tail -n 2 >> "$S"
    done
    build/redtune measurements --db "build/$name.db" --format csv > "$OUT/${name}_meas.csv"
    python3 tools/exp/stage2_sum.py "$OUT/${name}_meas.csv" >> "$S" 2>&1
    dship "$name" H200
}
case $step in
batch)
    harness 100 seg_per
    seg_one 110 offsets --profiles rand10_50,len3,len1 --ops min,sum --types f32,f64 --sizes 2^24,30M ;;
win)
    harness 100 seg_per
    tests 'seg_RT_MIN_RT_F*' 60
    tests 'seg_order_kept' 60
    seg_tune st3 240 tools/exp/stage2_space.lua rand10_50,len3,len1,heavy,len1000 min:f32 ;;
win2)
    harness 100 seg_per
    tests 'seg_RT_MIN_*' 90
    tests 'seg_order_kept' 40
    tests 'seg_per_long_unaligned' 30
    tests 'seg_types_builtin' 60
    seg_tune st4 70 tools/exp/stage2_space.lua rand10_50,heavy min:f32
    # The shipped space (with STAGE=2) for rand10_50 at 2^22 and 30M, merged into the
    # database the bench reads: the committed database against the merge, A B A B.
    ship_rand H200 8b59dd2a77fc5356c5b5d639fc1cc192 2^22,30M min:f32 sum:f32 max:f32 min:f64 \
        sum:f64 min:i32
    seg_ab m shipped merged build/bench/redtune_bench "$T" build/bench/redtune_bench build/merged.db \
        60 offsets --profiles rand10_50,len3 --ops min,sum --types f32,f64 --sizes 30M
    sed -n '/^goals (offsets)/,/^goals (offsets): /p' "$L/segm_merged_2.log" >> "$S" ;;
final)
    tests 'api_gpu_seg*' 80
    for f in SUM ARGMAX MAX ARGMIN PROD; do
        tests "seg_RT_${f}_*" 70
    done
    tests 'seg_all_nan*' 40 ;;
shiph100)
    # For the next H100: the shipped space (with STAGE=2) for rand10_50 at the sizes the H100's
    # offsets row holds (2^20, 30M), every operator and type it holds, into that row
    # (uuid 2e956071..., the row with every offsets profile), then the bench's offsets table,
    # committed database against the merge, A B A B, and the goal lines.
    ship_rand H100 2e956071d0b02214c4c501b293bccefc 2^20,30M min:f32 max:f32 sum:f32 min:f64 \
        max:f64 sum:f64 min:i32 max:i32 sum:i32
    seg_ab m shipped merged build/bench/redtune_bench "$T" build/bench/redtune_bench build/merged.db \
        90 offsets --profiles rand10_50,len3,one,len1000 --ops min,sum --types f32,f64 --sizes 2^20,30M
    sed -n '/^goals (offsets)/,/^goals (offsets): /p' "$L/segm_merged_2.log" >> "$S" ;;
h200ship)
    # For the next H200: run 4's winners (build/ship_ship.db: `tar -xzf
    # bench/results/session22-2026-11-28/run4/all.tgz -C build ./ship_ship.db` before the
    # call) in the H200's row, with the lookup that completes a row by mean length
    # (api_seg_pick): 'api_gpu_seg*', then the bench's offsets profiles, committed database
    # against the merge, A B A B; ship when no profile is slower.
    python3 tools/ship_into_row.py build/ship_ship.db "$T" 8b59dd2a77fc5356c5b5d639fc1cc192 \
        -o "$OUT/ship_into.db" >> "$S" 2>&1
    build/redtune merge "$T" "$OUT/ship_into.db" -o build/merged.db --force >> "$S" 2>&1
    tests 'api_gpu_seg*' 80
    seg_ab m shipped merged build/bench/redtune_bench "$T" build/bench/redtune_bench build/merged.db \
        110 offsets --profiles rand10_50,len3,len1,len1000,heavy --ops min,sum --types f32,f64 --sizes 30M ;;
stage2)
    tests 'seg_*' 200
    harness 100 seg_per
    tests 'api_gpu_seg*' 100
    tests 'pick_gpu*' 40
    seg_tune st2 120 tools/exp/stage2_space.lua rand10_50,len3,len1,one,len1000,heavy min:f32 ;;
*)
    echo "dev_session22.sh: no step '$step'" >&2; exit 2 ;;
esac
dev_end
