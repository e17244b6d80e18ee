#!/usr/bin/env bash
# seg_tune_session.sh - on the GPU machine (binaries carried in build/): tune the segmented
# layouts for f32 min at the paper's size and one smaller, over the profiles the goals and the
# paper name plus two more, into $OUT/seg.db; logs under $OUT. Usage: OUT=dir tools/seg_tune_session.sh
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/build/devlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
out=${OUT:-/tmp/seg-out}
mkdir -p "$out"
profiles=${SEG_PROFILES:-one,rand10_50,len3,len1000,heavy}
sizes=${SEG_SIZES:-2^20,30M}
for layout in keys offsets; do
    timeout "${SEG_TUNE_LIMIT:-170}" build/redtune --device 0 --op min --type f32 --segmented "$layout" \
        --profiles "$profiles" --sizes "$sizes" --seed 7 --db "$out/seg.db" \
        > "$out/tune_$layout.log" 2>&1
    echo "tune $layout: exit $?"
    grep -E "wrong|fault|timeout" "$out/tune_$layout.log" | head -5
done
for layout in keys offsets; do
    sed -n '/^best for/,$p' "$out/tune_$layout.log"
done
