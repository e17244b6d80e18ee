#!/bin/bash
# dev_session25.sh STEP - device runs of the twenty-fifth session, one step a call on the
# lent H200; logs under $OUT/logs, a summary ($OUT/sum.txt) printed last, everything else in
# $OUT/all.tgz; the functions are tools/exp/dev_lib.sh's. Carried: build/c25.tar.xz
# (stripped binaries; `bash tools/exp/dev_session25.sh pack` makes it here), build/devlib,
# build/h100.sql.xz (db/tuned/h100.sql, xz'd, out of the tree for the 64 MiB limit).
#   mark    the new family seg_mark (templates/seg_mark.cu): build/seg_harness --quick --only
#           seg_mark, the C GPU tests 'seg_RT_MIN_RT_F*' (two seg_mark variants);
#           tools/exp/mark_space.lua (seg_mark beside seg_stream's and seg_per's offsets
#           shapes) tuned for offsets heavy, len3, rand10_50 and one at 30M (min f32, sum f64),
#           each variant's best per case (tools/exp/stage2_sum.py); then seg_mark alone
#           (tools/exp/mark_only.lua) tuned for heavy (min f32) and its winner run by
#           redtune_bench under Nsight Compute (the full set, the SASS page). (Runs 1-4 ran
#           the harness and the bench binaries of the first version, built before `pack`
#           rebuilt them: their harness lines and profiles are of run 1's code.)
#   prof    the harness and the profile of `mark` alone.
#   ship    the harness and the C GPU tests 'seg_RT_MIN_RT_F*' with the code as it is; the
#           shipped space (now with seg_mark) for offsets heavy at 2^22 and 30M (min f32, sum
#           f32, sum f64) into the H200's row and merged ($OUT/ship_into.db, build/merged.db),
#           each variant's best; redtune_bench over offsets heavy, len3, rand10_50, one (min,
#           sum x f32, f64 at 30M), committed database against the merge, A B A B.
#   tests   the C GPU tests of every segmented operator and type ('seg_RT_*': each family's
#           variants, seg_mark's two among them), the other segmented GPU tests (the order of a
#           non-commutative operator, all-NaN segments, the built-in types, the tuner end to
#           end, `redtune reduce`) and 'api_gpu_seg*', with the committed code and database.
#   f64     the shipped space for offsets heavy and len3 at 2^22 and 30M (min f64: the H200
#           had no row of either) into the H200's row and merged; redtune_bench over every
#           offsets profile (min, sum x f32, f64 at 30M), committed against the merge, A B A B;
#           first tools/exp/mark_sweep.lua (seg_mark's heavy winner and its neighbours: B, CH,
#           J, MINW) for offsets heavy at 30M (min f32).
#   final   seg_mark's window rounds cut at the warp's first round past the tile, and PF = 0 with
#           one set of element registers: the harness, 'seg_RT_MIN_RT_F*';
#           tools/exp/mark_ship.lua (the shipped space's seg_mark entry, PF and MINW varied)
#           tuned by the binary before (build/before/redtune: BEFORE=1 pack) and after, A B A B,
#           for offsets heavy and len3 at 30M (min f32, sum f32, sum f64), tools/exp/stream_ab.py's
#           table; the second "after" database's winners exported ($OUT/fin_ship.db).
#   h100    not run (no H100 lent): the shipped space (with seg_mark) for offsets heavy and len3
#           (len3 so that a new heavy row does not serve it: the lookup's band of mean lengths)
#           at 2^20 and 30M (min f32, sum f32, sum f64, min f64) into the H100's row and merged
#           ($OUT/ship_into.db: bring it back and merge it into db/tuned/h100.sql); the offsets
#           bench over every profile, committed database against the merge, A B A B.
step=${1:?step: pack, mark, prof, ship, tests, f64, final, h100}
. "$(dirname "$0")/dev_lib.sh"
dev_start c25 "$step"
case $step in
mark)
    harness 100 seg_mark
    tests 'seg_RT_MIN_RT_F*' 60
    mark_tune mk tools/exp/mark_space.lua 170 min:f32 sum:f64 ;&
prof)
    [ "$step" = prof ] && harness 100 seg_mark
    MARK_PROFILES=heavy mark_tune mko tools/exp/mark_only.lua 60 min:f32
    ncu_sass heavy build/mko.db heavy ;;
ship)
    harness 100 seg_mark
    tests 'seg_RT_MIN_RT_F*' 60
    SHIP_LIMIT=100 tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 heavy 2^22,30M min:f32 sum:f32 sum:f64
    seg_ab m shipped merged build/bench/redtune_bench "$T" build/bench/redtune_bench build/merged.db 50 \
        offsets --profiles heavy,len3,rand10_50,one --ops min,sum --types f32,f64 --sizes 30M
    sed -n '/^goals (offsets)/,/^goals (offsets): /p' "$L/segm_merged_2.log" >> "$S" ;;
tests)
    tests 'seg_RT_*' 280
    for f in 'seg_all_nan*' seg_order_kept 'seg_per_long*' 'seg_types*' 'seg_tuner*' 'seg_reduce*'; do
        tests "$f" 60
    done
    tests 'api_gpu_seg*' 60 ;;
f64)
    MARK_PROFILES=heavy mark_tune sw tools/exp/mark_sweep.lua 60 min:f32
    SHIP_LIMIT=100 tune_rows H200 8b59dd2a77fc5356c5b5d639fc1cc192 heavy,len3 2^22,30M min:f64
    bench_all 50 ;;
final)
    harness 100 seg_mark
    tests 'seg_RT_MIN_RT_F*' 60
    tune_ab fin tools/exp/mark_ship.lua offsets heavy,len3 min:f32 sum:f32 sum:f64
    build/redtune export --db build/fin_after.db --match H200 -o "$OUT/fin_ship.db" --force >> "$S" 2>&1 ;;
h100)
    SHIP_LIMIT=120 tune_rows H100 2e956071d0b02214c4c501b293bccefc heavy,len3 2^20,30M \
        min:f32 sum:f32 sum:f64 min:f64
    bench_all 50 ;;
esac
dev_end
