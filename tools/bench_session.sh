#!/usr/bin/env bash
# bench_session.sh DB [redtune_bench options ...] - what one lease of the GPU machine runs to put
# what libredtune picks from the database DB (rt_reduce, with its fallback to another GPU's
# winners) side by side with cub::DeviceReduce and the read-bandwidth limit (docs/bench.md). Run from the repository root with build/ carried
# (build/bench/redtune_bench made by `ninja bench` on the development machine). Extra options
# go to redtune_bench (e.g. --sizes 2^20,2^24 --ops min --types f32); with --api it runs
# libredtune's checks instead (host cost, picks between tuned sizes, end to end; a PASS/MISS
# line per goal, docs/bench.md), in about 2 to 3 minutes with the default ops and types.
#
# Files in $OUT (or out/ when unset), four of them:
#   gpu.txt     the GPU, driver, clocks and the NVRTC found
#   bench.log   the tables and the summary (also on stdout)
#   bench.csv   every row
#   bench.err   progress lines and any error message
# The summary is printed once more at the very end, so it is in the tail of the output.
set -u
if [ $# -lt 1 ]; then
    echo "usage: tools/bench_session.sh DB [redtune_bench options ...]" >&2
    exit 2
fi
db=$1
shift
out=${OUT:-out}
bin=build/bench/redtune_bench
mkdir -p "$out"
if [ ! -x "$bin" ]; then
    echo "bench_session: $bin is missing: run 'ninja bench' on the development machine and carry build/" >&2
    exit 1
fi
if [ ! -f "$db" ]; then
    echo "bench_session: database '$db' not found" >&2
    exit 1
fi
{
    date -u +%Y-%m-%dT%H:%M:%SZ
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total,temperature.gpu,power.draw --format=csv
    ls /usr/local/cuda/lib64/ 2>/dev/null | grep -E '^libnvrtc\.so' || true
} > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
t0=$(date +%s)
"$bin" --db "$db" --csv "$out/bench.csv" "$@" 2> "$out/bench.err" | tee "$out/bench.log"
rc=${PIPESTATUS[0]}
echo "redtune_bench: exit $rc ($(( $(date +%s) - t0 )) s)"
# Errors and warnings (not the progress lines) from stderr.
grep -v '^redtune_bench: \[' "$out/bench.err" | tail -n 20
echo "=== summary (from $out/bench.log)"
sed -n '/^summary:/,$p' "$out/bench.log"
exit "$rc"
