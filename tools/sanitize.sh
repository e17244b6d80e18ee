#!/usr/bin/env bash
# sanitize.sh - compute-sanitizer's four tools over every family, on the GPU, from the
# repository root with the build carried (tools/device_prep.sh; nvcc and compute-sanitizer on
# the machine). Logs into $OUT (or out/), a table last.
#
#   tools/sanitize.sh [TOOLS]        TOOLS: default "memcheck racecheck synccheck initcheck"
#
# - Unsegmented families: the GPU tests' op x type checks (tests/test_gpu.c: every family at
#   two or three shapes, aligned and unaligned input) at their sizes up to 4097
#   (REDTUNE_TEST_SMALL=1), for pairs that name every operator and every type once, plus float
#   min/max for the NaN paths. The same filter runs the segmented tests' op x type checks
#   (tests/test_gpu_seg.c: every segmented family, keys and offsets, every profile).
# - Segmented families again through tools/seg_harness --tiny (every configuration of the
#   harness, three operators, every profile at a few thousand elements; invalid input under
#   memcheck only, --valid-only for the other tools).
# - tools/namedbar_race.cu: the named-barrier handoff of the producer-consumer templates in
#   four schemes (arrive, namedsync, syncthreads, broken) under racecheck, to read a racecheck report on
#   those templates (docs/results.md).
# A tool's run counts as clean when compute-sanitizer reports 0 errors and the program passed.
set -u
out=${OUT:-out}
tools=${1:-memcheck racecheck synccheck initcheck}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/devlib:${LD_LIBRARY_PATH:-}
export REDTUNE_NVRTC_LINEINFO=1
cs=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
pairs="RT_SUM_RT_F32 RT_PROD_RT_F64 RT_MIN_RT_I32 RT_MAX_RT_U32 RT_ARGMIN_RT_I64 RT_ARGMAX_RT_U64 RT_MIN_RT_F32 RT_MAX_RT_F64"
table=$out/sanitize_table.txt
: > "$table"

# summary LOG STATUS: "N errors" from compute-sanitizer's last summary line, and the status.
summary() {
    local errs
    errs=$(grep -E '(ERROR|RACECHECK) SUMMARY' "$1" | tail -n 1 | sed -E 's/.*SUMMARY: //')
    printf '%s (exit %s)' "${errs:-no summary}" "$2"
}

row() {  # row TOOL TARGET LOG STATUS SECONDS
    printf '%-10s %-34s %s, %ss\n' "$1" "$2" "$(summary "$3" "$4")" "$5" | tee -a "$table"
}

"$nvcc" -O2 -lineinfo -arch=sm_90 -I. -o build/namedbar_race tools/namedbar_race.cu > "$out/nvcc.log" 2>&1 ||
    echo "namedbar_race: nvcc failed (see nvcc.log)" | tee -a "$table"

for tool in $tools; do
    log=$out/$tool.log
    : > "$log"
    for p in $pairs; do
        t0=$(date +%s)
        echo "=== tests $p" >> "$log"
        REDTUNE_TEST_SMALL=1 REDTUNE_TEST_FILTER="*_$p" timeout 900 \
            "$cs" --tool "$tool" --error-exitcode 99 build/tests/all gpu > "$out/one.log" 2>&1
        st=$?
        cat "$out/one.log" >> "$log"
        row "$tool" "tests $p" "$out/one.log" $st $(( $(date +%s) - t0 ))
    done
    # Invalid input (its result unspecified, only "no fault, no stray write" promised) under
    # memcheck alone: its write-write conflicts are real and allowed.
    harness="--tiny --valid-only"
    [ "$tool" = memcheck ] && harness="--tiny"
    t0=$(date +%s)
    echo "=== seg_harness $harness" >> "$log"
    timeout 900 "$cs" --tool "$tool" --error-exitcode 99 build/seg_harness $harness > "$out/one.log" 2>&1
    st=$?
    cat "$out/one.log" >> "$log"
    row "$tool" "seg_harness $harness" "$out/one.log" $st $(( $(date +%s) - t0 ))
done
if [ -x build/namedbar_race ]; then
    for s in arrive namedsync syncthreads broken; do
        t0=$(date +%s)
        timeout 120 "$cs" --tool racecheck --error-exitcode 99 build/namedbar_race $s > "$out/one.log" 2>&1
        st=$?
        { echo "=== namedbar_race $s"; cat "$out/one.log"; } >> "$out/namedbar.log"
        row racecheck "namedbar_race $s" "$out/one.log" $st $(( $(date +%s) - t0 ))
    done
fi
rm -f "$out/one.log"
echo "--- sanitize summary"
cat "$table"
