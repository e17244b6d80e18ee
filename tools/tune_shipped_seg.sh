#!/usr/bin/env bash
# tune_shipped_seg.sh - the segmented half of the shipped database (db/tuned/), on the GPU
# machine, with build/ carried from the development machine (see tools/tune_shipped.sh).
#
#     OUT=dir bash tools/tune_shipped_seg.sh      # CASES="min:f32 max:f64 ..." to choose
#
# Tunes every (op, type) of CASES (default: min, max, sum x f32, f64, i32) for both layouts
# in lua/spaces/segmented_ship.lua, over the profiles one, rand10_50, len3, len1, len1000 and
# heavy at 2^20 and 30M elements, into a database made fresh in a scratch folder (nothing
# needs to survive between device calls). BUDGET seconds (default 480) stops it from starting
# a new case; the cases it did not reach are printed as "left: ...", to pass as CASES to the
# next call. It leaves three files in $OUT, within the device tool's eight:
#
#     $OUT/seg_ship.db    this GPU's entries (redtune export: best rows, kernels, CUBINs)
#     $OUT/logs.tar.gz    one tuning log per case
#     $OUT/best.txt       redtune best of seg_ship.db
#
# Then, on the development machine, merged into the shipped dump (merge keeps the faster
# verified entry where two agree on device, op, type, layout and size):
#
#     build/redtune merge build/redtune.db FILES/seg_ship.db -o /tmp/all.db
#     build/redtune dump /tmp/all.db -o db/tuned/h100.sql --force && ninja
set -u
cd "$(dirname "$0")/.."
out=${OUT:-out}
budget=${BUDGET:-480}
cases=${CASES:-"min:f32 max:f32 sum:f32 min:f64 max:f64 sum:f64 min:i32 max:i32 sum:i32"}
profiles=${SEG_PROFILES:-one,rand10_50,len3,len1,len1000,heavy}
sizes=${SEG_SIZES:-2^20,30M}
mkdir -p "$out"
[ -x build/redtune ] || { echo "tune_shipped_seg: build/redtune is missing: carry build/" >&2; exit 1; }
work=$(mktemp -d)
db=$work/seg.db
start=$(date +%s)
left=""
for c in $cases; do
    op=${c%%:*}
    type=${c##*:}
    if [ $(( $(date +%s) - start )) -ge "$budget" ]; then
        left="$left $c"
        continue
    fi
    for layout in keys offsets; do
        t0=$(date +%s)
        log=$work/tune_${op}_${type}_${layout}.log
        build/redtune --device 0 --op "$op" --type "$type" --segmented "$layout" \
            --space lua/spaces/segmented_ship.lua --profiles "$profiles" --sizes "$sizes" \
            --seed 7 --db "$db" > "$log" 2>&1
        rc=$?
        echo "tune $op $type $layout: exit $rc ($(( $(date +%s) - t0 )) s)," \
             "$(grep -c ': wrong: \|: fault: \|: timeout: ' "$log") not ok"
        [ $rc -eq 0 ] || tail -n 5 "$log"
    done
done
tar -czf "$out/logs.tar.gz" -C "$work" $(cd "$work" && ls *.log)
name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -n 1)
build/redtune export --db "$db" --match "$name" -o "$out/seg_ship.db" --force || exit 1
build/redtune best --db "$out/seg_ship.db" > "$out/best.txt" 2>&1
ls -l "$out/seg_ship.db"
rm -rf "$work"
[ -z "$left" ] && echo "tune_shipped_seg: done ($name)" || echo "tune_shipped_seg: left:$left"
