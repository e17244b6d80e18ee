#!/usr/bin/env bash
# tune_shipped.sh - the unsegmented half of the shipped database (db/tuned/), on the GPU
# machine (no Lua, no sqlite3 CLI needed), from the repository root, with build/ carried from
# the development machine (`ninja` there; build/redtune is static):
#
#     OUT=dir bash tools/tune_shipped.sh        # CASES="min:f32 sum:i32 ..." to choose
#
# SIZES="2^20,2^24" tunes only those sizes (flat; default: the tuner's, every power of two
# 2^4 .. 2^14 and every second one to 2^30). TYPES=1 adds issue 15's operators and types,
# which db/tuned/h100.sql has too: sum bf16 and f16 (f32 accumulator and result), amax
# bf16, norm2 f16 and bf16, sumsq f32, argmax f32, var_mean f32, mean bf16.
# Tunes each (op, type) of CASES (default: min, max, sum x f32, f64, i32; flat, L2 flushed,
# the default sizes and space; with SEGMENTED=1, as tools/tune_shipped_seg.sh sets it, both
# segmented layouts instead) into a database made fresh in a scratch folder, so nothing
# has to survive between device calls. BUDGET seconds (default 480) stops it from starting a
# new case; the cases it did not reach are printed as "left: ...", to pass as CASES to the
# next call. It leaves three files in $OUT, within the device tool's eight:
#
#     $OUT/flat_ship.db   this GPU's entries (redtune export: best rows, kernels, CUBINs)
#     $OUT/logs.tar.gz    one tuning log per case
#     $OUT/best.txt       redtune best of flat_ship.db
#
# Then, on the development machine, with each call's files fetched into FILES1, FILES2, ...
# (tools/tune_shipped_seg.sh makes the segmented half the same way):
#
#     build/redtune merge FILES1/flat_ship.db FILES2/flat_ship.db ... -o /tmp/all.db
#     build/redtune dump /tmp/all.db -o db/tuned/h100.sql --force
#     ninja                      # build/redtune.db is loaded from it
#
# (merge keeps the faster verified entry where two agree on device, op, type, layout, size;
# merging into build/redtune.db instead keeps the entries already shipped.)
set -u
cd "$(dirname "$0")/.."
out=${OUT:-out}
budget=${BUDGET:-480}
cases=${CASES:-"min:f32 max:f32 sum:f32 min:f64 max:f64 sum:f64 min:i32 max:i32 sum:i32"}
if [ "${TYPES:-0}" = 1 ]; then
    cases="$cases sum:bf16 sum:f16 amax:bf16 norm2:f16 norm2:bf16 sumsq:f32 argmax:f32"
    cases="$cases var_mean:f32 mean:bf16"
fi
if [ "${SEGMENTED:-0}" = 1 ]; then   # tools/tune_shipped_seg.sh
    layouts="keys offsets"
    name=seg_ship
    seg_args="--space lua/spaces/segmented_ship.lua --seed 7
              --profiles ${SEG_PROFILES:-one,rand10_50,len3,len1,len1000,heavy}
              --sizes ${SEG_SIZES:-2^20,30M}"
else
    layouts=flat
    name=flat_ship
fi
mkdir -p "$out"
[ -x build/redtune ] || { echo "$(basename "$0"): build/redtune is missing: carry build/" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/tuned.db
start=$(date +%s)
left=""
for c in $cases; do
    op=${c%%:*}
    type=${c##*:}
    if [ $(( $(date +%s) - start )) -ge "$budget" ]; then
        left="$left $c"
        continue
    fi
    failed=0
    for layout in $layouts; do
        t0=$(date +%s)
        log=$work/tune_${op}_${type}_${layout}.log
        if [ "$layout" = flat ]; then
            # shellcheck disable=SC2086  # SIZES: one word
            build/redtune --device 0 --op "$op" --type "$type" ${SIZES:+--sizes $SIZES} \
                --db "$db" > "$log" 2>&1
        else
            # shellcheck disable=SC2086  # seg_args is a list of words
            build/redtune --device 0 --op "$op" --type "$type" --segmented "$layout" $seg_args \
                --db "$db" > "$log" 2>&1
        fi
        rc=$?
        echo "tune $op $type $layout: exit $rc ($(( $(date +%s) - t0 )) s)," \
             "$(grep -c ': wrong: \|: fault: \|: timeout: ' "$log") not ok"
        if [ $rc -ne 0 ]; then tail -n 5 "$log"; failed=1; fi
    done
    [ $failed -eq 0 ] || left="$left $c"
done
tar -czf "$out/logs.tar.gz" -C "$work" $(cd "$work" && ls *.log)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -n 1)
build/redtune export --db "$db" --match "$gpu" -o "$out/$name.db" --force || exit 1
build/redtune best --db "$out/$name.db" > "$out/best.txt" 2>&1
ls -l "$out/$name.db"
[ -z "$left" ] && echo "$(basename "$0"): done ($gpu)" || echo "$(basename "$0"): left:$left"
