#!/bin/bash
# dev_session27.sh STEP - device runs of the twenty-seventh session, one step a call on the
# lent H200; logs under $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in
# $OUT/all.tgz; the functions are tools/exp/dev_lib.sh's. Carried: build/c27.tar.xz
# (stripped binaries; `bash tools/exp/dev_session27.sh pack` makes it here), build/devlib,
# build/h100.sql.xz (db/tuned/h100.sql, xz'd, out of the tree for the 64 MiB limit).
#   lanes   seg_pipe's LANES (a group of threads a segment, written in the twenty-sixth
#           session, never run): the harness (three LANES shapes and the 64-bit-offsets shrunk
#           tile), 'seg_RT_MIN_RT_F*' (a LANES=4 variant), tools/exp/pipe_space.lua (with
#           LANES 2, 4, 8) for offsets rand10_50, len3 and len1 at 30M (min f32, sum f64);
#           then redtune_bench over every offsets profile with the committed database (the
#           twenty-sixth session's run-6 min f32 rows, never benched).
#   rows    rows the H200 lacked (it served them with the H100's): flat min f32 at 30M exactly
#           (offsets `one` at 30M runs the flat decision, which borrowed 2^26's G=4 winner:
#           1.257x the limit in run 1), offsets len1000 at 2^22 and 30M (min f32, sum f32, sum
#           f64; min f64, slower than CUB in run 1: 1.07x) and len3, len1 for min f64, the
#           shipped space, into the H200's row and merged ($OUT/ship_into.db,
#           build/merged.db); each variant's best; redtune_bench over every offsets profile,
#           committed database against the merge, A B A B.
#   peru    seg_per's U (rounds a lane loads together, one tree a segment; new): the harness
#           (--only seg_per, four U shapes), 'seg_RT_MIN_RT_F*' (two U variants);
#           tools/exp/per_u_space.lua for offsets len1000 and rand10_50 at 30M (min f32, min
#           f64); the shipped space (now with U for LANES 32 and B) for offsets len1000 at 2^22
#           and 30M (min f32, min f64, sum f32, sum f64) into the H200's row and merged; each
#           variant's best; redtune_bench over every offsets profile, committed database (with
#           run 2's rows) against the merge, A B A B.
#   final   with the committed code and database (seg_per U, the runtime's fallback to the
#           built-in default when a winner cannot be made): every segmented C GPU test
#           ('seg_RT_*': every operator x type over each family's variants, seg_per's U ones
#           among them; NaN, order, the built-in types, the tuner end to end, `redtune reduce`)
#           and every library GPU test ('api_gpu*': api_gpu_seg_fallback new).
#   retest  run 4's failures again after the fix of seg_decide's free of an unset pointer (a
#           decision already made jumped past `why`'s initialisation): 'seg_types*' and
#           'api_gpu*'; then 'seg_RT_MIN*' once more.
#   axis    the axis calls' fallback to the built-in default (merged after run 5): 'axis_gpu*'
#           (axis_gpu_fallback new), then 'api_gpu_seg*' with the merged code.
#   nz      not run (written after the session's last GPU run): NZ (float min and max fold a
#           segment from its first element by the glue's rt_fold_nz): the harness (seg_pipe
#           and seg_per: five NZ shapes), 'seg_RT_M*' and 'seg_all_nan*' (two NZ variants, the
#           marker's bits as data among the all-NaN segments), then tools/exp/nz_space.lua for
#           offsets len3, len1 and rand10_50 at 30M (min f32, max f64), NZ 0 against 1 per
#           config (tools/exp/nz_sum.py).
step=${1:?step: pack, lanes, rows, peru, final, retest, axis, nz}
. "$(dirname "$0")/dev_lib.sh"
dev_start c27 "$step"
case $step in
lanes)
    harness 150 seg_pipe
    tests 'seg_RT_MIN_RT_F*' 60
    MARK_PROFILES=rand10_50,len3,len1 mark_tune pl tools/exp/pipe_space.lua 150 min:f32 sum:f64
    bench_run committed 90 --db "$T" --segmented offsets --profiles rand10_50,len3,len1,len1000,heavy,one \
        --ops min,sum --types f32,f64 --sizes 30M --regimes cold
    sed -n '/^goals (offsets)/,/^goals (offsets): /p' "$L/committed.log" >> "$S" ;;
rows)
    rm -f build/ship.db
    t0=$(date +%s)
    timeout 60 build/redtune --device 0 --op min --type f32 --sizes 30M --db build/ship.db \
        > "$L/flat_min_f32.log" 2>&1
    echo "redtune --op min --type f32 --sizes 30M (flat): exit $? ($(( $(date +%s) - t0 )) s)" >> "$S"
    SHIP_PROFILES=len1000 SHIP_LIMIT=50 ship_rand H200 8b59dd2a77fc5356c5b5d639fc1cc192 2^22,30M \
        min:f32 sum:f32 sum:f64
    SHIP_PROFILES=len1000,len3,len1 SHIP_LIMIT=100 ship_rand H200 8b59dd2a77fc5356c5b5d639fc1cc192 \
        2^22,30M min:f64
    grep -i ' flat ' "$L/ship_best.txt" >> "$S"
    python3 tools/exp/stage2_sum.py <(zcat "$OUT/ship_meas.csv.gz") >> "$S" 2>&1
    bench_all 40 ;;
peru)
    harness 100 seg_per
    tests 'seg_RT_MIN_RT_F*' 60
    MARK_PROFILES=len1000,rand10_50 mark_tune pu tools/exp/per_u_space.lua 50 min:f32 min:f64
    SHIP_PROFILES=len1000 SHIP_LIMIT=45 ship_rand H200 8b59dd2a77fc5356c5b5d639fc1cc192 2^22,30M \
        min:f32 min:f64 sum:f32 sum:f64
    python3 tools/exp/stage2_sum.py <(zcat "$OUT/ship_meas.csv.gz") >> "$S" 2>&1
    bench_all 40 ;;
final)
    tests 'seg_RT_*' 260
    for f in 'seg_all_nan*' seg_order_kept 'seg_per_long*' 'seg_types*' 'seg_tuner*' 'seg_reduce*'; do
        tests "$f" 60
    done
    tests 'api_gpu*' 200 ;;
retest)
    tests 'seg_types*' 60
    tests 'api_gpu*' 200
    tests 'seg_RT_MIN*' 120 ;;
axis)
    tests 'axis_gpu*' 120
    tests 'api_gpu_seg*' 70 ;;
nz)
    harness 100 seg_pipe
    mv "$L/harness.log" "$L/harness_pipe.log"
    harness 100 seg_per
    tests 'seg_RT_M*' 120
    tests 'seg_all_nan*' 60
    MARK_PROFILES=len3,len1,rand10_50 mark_tune nz tools/exp/nz_space.lua 90 min:f32 max:f64
    python3 tools/exp/nz_sum.py "$L/nz.csv" >> "$S" 2>&1 ;;
esac
dev_end
