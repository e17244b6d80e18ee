#!/usr/bin/env bash
# tune_shipped_seg.sh - the segmented half of the shipped database (db/tuned/), on the GPU
# machine, with build/ carried from the development machine (see tools/tune_shipped.sh).
#
#     OUT=dir bash tools/tune_shipped_seg.sh      # CASES="min:f32 max:f64 ..." to choose
#
# Tunes every (op, type) of CASES (default: min, max, sum x f32, f64, i32) for both layouts
# in lua/spaces/segmented_ship.lua, over the profiles one, rand10_50, len3, len1, len1000 and
# heavy at 2^20 and 30M elements (SEG_PROFILES, SEG_SIZES), into a database made fresh in a
# scratch folder (nothing needs to survive between device calls): tools/tune_shipped.sh with
# SEGMENTED=1. BUDGET seconds (default 480) stops it from starting
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
exec env SEGMENTED=1 bash "$(dirname "$0")/tune_shipped.sh" "$@"
