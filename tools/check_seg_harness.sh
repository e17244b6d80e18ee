#!/usr/bin/env bash
# check_seg_harness.sh [BIN] - every configuration of tools/seg_harness.cu (the segmented
# families' shapes) through the real code generator and NVRTC for sm_90, for its three
# operators: `seg_harness --compile-only`, in which a warning fails a unit as an error does.
# No GPU needed: the binary (default build/seg_harness) loads libcuda.so.1, which the
# toolkit's stub library stands in for where no driver is installed. One TAP line, counted by
# tests/run.sh; a skip when the binary or a libcuda is missing.
set -u
cd "$(dirname "$0")/.." || exit 1
bin=${1:-build/seg_harness}
if [ ! -x "$bin" ]; then
    echo "not ok 1 # SKIP seg_harness --compile-only: $bin not built (ninja seg_harness)"
    exit 0
fi
stub=
if ! ldd "$bin" 2>/dev/null | grep -q 'libcuda\.so\.1 => /'; then
    for s in "${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so" \
             /usr/local/cuda/lib64/stubs/libcuda.so \
             /usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so; do
        if [ -f "$s" ]; then
            stub=$(mktemp -d)
            ln -s "$s" "$stub/libcuda.so.1"
            break
        fi
    done
    if [ -z "$stub" ]; then
        echo "not ok 1 # SKIP seg_harness --compile-only: no libcuda.so.1 and no stub of it"
        exit 0
    fi
fi
out=$(mktemp)
trap 'rm -rf "$out" ${stub:+"$stub"}' EXIT
LD_LIBRARY_PATH=${stub:+$stub:}${LD_LIBRARY_PATH:-} "$bin" --compile-only > "$out" 2>&1
status=$?
last=$(tail -n 1 "$out")
if [ "$status" = 0 ]; then
    echo "ok 1 - seg_harness --compile-only: $last"
else
    echo "not ok 1 - seg_harness --compile-only (exit $status): $last"
    grep -A6 '^FAIL' "$out" | head -60 | sed 's/^/#   /'
fi
