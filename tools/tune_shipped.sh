#!/usr/bin/env bash
# tune_shipped.sh - make the tuned database redtune ships (db/tuned/), on the GPU machine.
#
# On the H100 (no Lua, no sqlite3 CLI needed), from the repository root, with build/ carried
# from the development machine (`ninja` there; build/redtune is static):
#
#     bash tools/tune_shipped.sh          # again until it says "done" (each call <= ~9 min)
#
# It tunes f32, f64, i32 x min, max, sum (flat, L2 flushed, the default sizes and space) into
# build/shipped/tuned.db (ignored by git, so it stays on the machine between calls while the
# machine is held); a tuning run resumes where the last one stopped, and a finished case
# costs a second. Once every case is done it exports this GPU's entries (best rows, kernels,
# CUBINs; no measurements) and dumps them:
#
#     $OUT/h100.db    the exported database (well under 16 MiB)
#     $OUT/h100.sql   its dump (redtune dump), the file to commit
#     $OUT/tune_*.log, $OUT/best.txt
#
# Then, on the development machine, with the files fetched into FILES (the run's files_at):
#
#     cp FILES/h100.sql db/tuned/h100.sql
#     ninja                      # build/redtune.db is loaded from it
#     build/redtune best --db build/redtune.db | head
#     git add db/tuned/h100.sql && git commit -m "db/tuned: H100 tuned database"
#
# (Should only h100.db come back: build/redtune dump FILES/h100.db -o db/tuned/h100.sql.)
# BUDGET (seconds, default 480) stops it from starting a new case after that long.
set -u
out=${OUT:-out}
budget=${BUDGET:-480}
db=build/shipped/tuned.db
mkdir -p "$out" build/shipped
[ -x build/redtune ] || { echo "tune_shipped: build/redtune is missing: carry build/" >&2; exit 1; }
start=$(date +%s)
left=0
for type in f32 f64 i32; do
    for op in min max sum; do
        stamp=build/shipped/done_${op}_${type}
        [ -f "$stamp" ] && continue
        if [ $(( $(date +%s) - start )) -ge "$budget" ]; then
            left=$((left + 1))
            continue
        fi
        t0=$(date +%s)
        build/redtune --device 0 --op "$op" --type "$type" --db "$db" > "$out/tune_${op}_${type}.log" 2>&1
        rc=$?
        echo "tune $op $type: exit $rc ($(( $(date +%s) - t0 )) s), $(grep -c ': wrong: \|: fault: \|: timeout: ' "$out/tune_${op}_${type}.log") not ok"
        if [ $rc -eq 0 ]; then touch "$stamp"; else tail -n 5 "$out/tune_${op}_${type}.log"; left=$((left + 1)); fi
    done
done
if [ $left -gt 0 ]; then
    echo "tune_shipped: $left case(s) left: run it again"
    exit 0
fi
name=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -n 1)
build/redtune export --db "$db" --match "$name" -o "$out/h100.db" --force || exit 1
build/redtune dump "$out/h100.db" -o "$out/h100.sql" --force || exit 1
build/redtune best --db "$out/h100.db" > "$out/best.txt" 2>&1
ls -l "$out/h100.db" "$out/h100.sql"
echo "tune_shipped: done ($name)"
