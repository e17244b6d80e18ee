#!/bin/bash
# dev_session21.sh STEP - device runs of the twenty-first session, one step a call on an H100;
# logs under $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in $OUT/all.tgz;
# the functions are tools/exp/dev_lib.sh's. Carried: build/c21.tar.xz (stripped binaries; `bash
# tools/exp/dev_session21.sh pack` makes it here), build/devlib, build/h100.sql.xz
# (db/tuned/h100.sql, xz'd, moved out of the tree so that the call stays under 64 MiB).
#   grid    runtime/plan.c's balanced grid (grid_for: a capped grid of R rounds over T tiles
#           takes ceil(T / R) blocks, so that fewer than R blocks idle in the last round;
#           REDTUNE_GRID=cap restores the old grid of G * SMs): issue 15's --type-cases and
#           the flat cases at 2^22 .. 2^28 and odd sizes between, cap against balanced with the
#           committed database, A B A B; issue 15's large cases retuned under the balanced grid
#           over tools/exp/grid_space.lua, merged into the rows the lookup takes, and benched
#           (balanced); then the C GPU tests of the families the grid reaches. Not kept
#           (docs/results.md, twenty-first session): run it on a tree with that grid_for.
#   one     one segment of offsets served by the flat decision with its bounds read on the
#           GPU (runtime/api_seg.c, seg_one_decide; gridstride's RT_BOUNDS): the C GPU tests
#           'api_gpu_seg*' (api_gpu_seg_one new), then redtune_bench --segmented offsets for
#           one, len3 and rand10_50, min and sum, f32 and f64, the bench of the commit before
#           (build/bench_before/redtune_bench, built in a worktree of 44c848d) against this
#           one, A B A B (tools/exp/seg_ab.py).
#   one2    (run 3) the same code with the flat decision's fallback (the @bounds winner nearest
#           to n, else the built-in gridstride) and the tests that run 2 found wrong: the C GPU
#           tests 'api_gpu*', the Python GPU tests of segments (carried: build/python
#           without its redtune.db), one segment before and after for min, sum, max x f32,
#           f64, i32, A B A B, then the bench's whole segmented table (keys and offsets, every
#           profile) with this code, once.
#   one3    (run 4) run 3's bench binary was built before the fallback (05:28 against the
#           library's 05:32), so its f64 rows at 30 * 2^20 still took seg_lb: one segment
#           before and after again for min, sum x f32, f64, A B A B, with the bench rebuilt;
#           the Python GPU tests of segments with test_one_segment's comparison fixed (an
#           empty segment's inf - inf is NaN).
#   one4    (run 5) one segment of keys served by rt_reduce's flat decision (the keys unread):
#           the C GPU tests 'api_gpu*', the Python GPU tests of segments, then
#           redtune_bench --segmented keys for the one profile, min and sum x f32, f64,
#           before and after, A B A B, and the keys goal lines.
#   final   (run 6) the graph test with one segment of offsets and of keys captured
#           ('api_gpu_graphs'), 'api_gpu_seg*', and the Python GPU tests but the axis ones
#           (rt_reduce's body moved into api_flat_run).
#   temp    (run 7) the stream's temporary block taken in one place (api_stream_temp,
#           runtime/api_temp.c) by the flat, segmented, one-segment and axis calls: the C
#           GPU tests 'api_gpu*' and 'axis_gpu*', the Python GPU tests but the axis ones.
step=${1:?step: pack, grid, one, one2, one3, one4, final, temp}
. "$(dirname "$0")/dev_lib.sh"
if [ "$step" = pack ]; then
    dev_pack c21 "redtune tests/all bench/redtune_bench ${BEFORE:+bench_before/redtune_bench}"
    exit 0
fi
[ -f db/tuned/h100.sql ] || xz -dc build/h100.sql.xz > db/tuned/h100.sql
dev_begin c21
export REDTUNE_BIN=$PWD/build/redtune
case $step in
grid)
    r5=d3f87696063a1345e8ae0a683dc688e1 r8=041de41587225a3906d82066169a497e
    large=4194304,16777216,33554432,67108864,134217728,268435456,30000001,100000007
    for v in cap bal cap2 bal2; do
        g=balanced; [ "${v#cap}" != "$v" ] && g=cap
        REDTUNE_GRID=$g bench_run "types_$v" 60 --db "$T" --type-cases
        REDTUNE_GRID=$g bench_run "flat_$v" 120 --db "$T" --ops min,sum,max --types f32,i32,f64 \
            --sizes $large --regimes cold
    done
    python3 tools/exp/flat_ab.py "$OUT" types cap bal >> "$S"
    python3 tools/exp/flat_ab.py "$OUT" flat cap bal >> "$S"
    tune_each grid 60 "" tools/exp/grid_space.lua argmax:f32:2^26 var_mean:f32:2^26 \
        sumsq:f32:2^26 sum:bf16:2^28 amax:bf16:2^28
    dship grid
    cat "$L/grid_best.txt" >> "$S"
    python3 tools/exp/split_merge.py "$OUT/grid_ship.db" "$T" build/merged.db \
        argmax:f32:$r8 var_mean:f32:$r8 sumsq:f32:$r5 sum:bf16:$r5 amax:bf16:$r8 > "$L/merge.log" 2>&1
    echo "split_merge.py: exit $?" >> "$S"
    for v in new new2; do
        bench_run "types_$v" 60 --db build/merged.db --type-cases
    done
    python3 tools/exp/flat_ab.py "$OUT" types cap bal new >> "$S"
    tests 'gpu_RT_*' 100
    tests 'api_gpu*' 100
    tests 'gpu_run_*' 70 ;;
one)
    tests 'api_gpu_seg*' 240
    seg_one 150 offsets --profiles one,len3,rand10_50 --ops min,sum --types f32,f64 ;;
one2)
    tests 'api_gpu*' 300
    pytests seg 150 -k 'segment or offsets'
    seg_one 150 offsets --profiles one --ops min,sum,max --types f32,f64,i32
    for lay in offsets keys; do
        bench_run "seg_$lay" 200 --db "$T" --segmented $lay --regimes cold
    done ;;
one3)
    pytests seg 100 -k 'segment or offsets'
    seg_one 100 offsets --profiles one --ops min,sum --types f32,f64
    sed -n '/^goals (offsets)/,/^goals (offsets): /p' "$L/segone_after_2.log" >> "$S" ;;
one4)
    tests 'api_gpu*' 300
    pytests seg 100 -k 'segment or offsets or keys'
    seg_one 100 keys --profiles one --ops min,sum --types f32,f64
    sed -n '/^goals (keys)/,/^goals (keys): /p' "$L/segone_after_2.log" >> "$S" ;;
final)
    tests 'api_gpu_graphs' 90
    tests 'api_gpu_seg*' 120
    pytests notaxis 200 -k 'not axis' ;;
temp)
    tests 'api_gpu*' 110
    tests 'axis_gpu*' 110
    pytests notaxis 70 -k 'not axis' ;;
*)
    echo "dev_session21.sh: no step '$step'" >&2; exit 2 ;;
esac
dev_end
