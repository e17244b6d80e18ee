#!/usr/bin/env bash
# seg_bench_session.sh DB [redtune_bench options for the two --segmented runs ...] - what one
# lease of the GPU machine runs for the segmented bench (docs/bench.md, "Segmented"): redtune's
# segmented winners from the database DB against CUB and the bandwidth limit, keys then
# offsets, then the paper's Fig. 5 experiment (--paper-seg, no database needed; DB's keys
# winners get a column). Run from the repository root with build/ carried
# (build/bench/redtune_bench made by `ninja bench` on the development machine); no Lua, no
# sqlite3 CLI needed.
#
# Budget: the three runs share SEG_BENCH_BUDGET seconds (default 320, under 6 minutes with the
# GPU's start); each gets a time limit from what is left, the keys run first. Every run puts
# the f32 min cold n = 30*2^20 cases (the goals) first (--sizes 30M,2^24,2^20) and prints each
# GOAL line as soon as it is measured, and every row goes to the CSV as it is timed, so a run
# cut short by its limit still leaves its goals and rows.
#
# Files in $OUT (or out/ when unset):
#   gpu.txt                              the GPU, driver, clocks and the NVRTC found
#   seg_keys.log / .csv / .err           --segmented keys (tables, summary, goals / rows / progress)
#   seg_offsets.log / .csv / .err        --segmented offsets
#   paper_seg.log / .csv / .err          --paper-seg (the Fig. 5 tables, ms)
# Last on stdout: the summaries, the paper tables at a few m, and the GOAL lines.
set -u
if [ $# -lt 1 ]; then
    echo "usage: tools/seg_bench_session.sh DB [redtune_bench options for the --segmented runs ...]" >&2
    exit 2
fi
db=$1
shift
out=${OUT:-out}
bin=build/bench/redtune_bench
budget=${SEG_BENCH_BUDGET:-320}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/devlib:${LD_LIBRARY_PATH:-}
if [ ! -x "$bin" ]; then
    echo "seg_bench_session: $bin is missing: run 'ninja bench' on the development machine and carry build/" >&2
    exit 1
fi
if [ ! -f "$db" ]; then
    echo "seg_bench_session: database '$db' not found" >&2
    exit 1
fi
{
    date -u +%Y-%m-%dT%H:%M:%SZ
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total,temperature.gpu,power.draw --format=csv
    ls /usr/local/cuda/lib64/ 2>/dev/null | grep -E '^libnvrtc\.so' || true
    echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), database $db"
} > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"

start=$(date +%s)
deadline=$(( start + budget ))
status=0

# run NAME RESERVE CAP ARGS...: the bench with a limit of min(CAP, time left - RESERVE), which
# leaves RESERVE seconds for the runs after it.
run() {
    local name=$1 reserve=$2 cap=$3
    shift 3
    local now left lim t0 rc
    now=$(date +%s)
    left=$(( deadline - now - reserve ))
    lim=$(( left < cap ? left : cap ))
    if [ "$lim" -lt 20 ]; then
        echo "=== $name: skipped, no time left in the budget of $budget s"
        status=1
        return
    fi
    echo "=== $name: redtune_bench $* (limit $lim s)"
    t0=$(date +%s)
    timeout --signal=TERM --kill-after=10 "$lim" "$bin" "$@" --csv "$out/$name.csv" \
        > "$out/$name.log" 2> "$out/$name.err"
    rc=$?
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "$name: CUT SHORT at its limit of $lim s: the tables and summary are missing; rows so far in $name.csv, GOAL lines so far below"
        status=1
    elif [ "$rc" -ne 0 ]; then
        echo "$name: exit $rc"
        status=1
    fi
    echo "$name: $(( $(date +%s) - t0 )) s, $(( $(wc -l < "$out/$name.csv" 2>/dev/null || echo 1) - 1 )) CSV rows"
    # Errors and warnings (not the progress lines) from stderr.
    grep -v '^redtune_bench: \[\|^redtune_bench: n = ' "$out/$name.err" | tail -n 10
}

# keys: leave 150 s for offsets and the paper run; offsets: leave 70 s for the paper run.
run seg_keys 150 170 --db "$db" --segmented keys --sizes 30M,2^24,2^20 --reps 50 "$@"
run seg_offsets 70 150 --db "$db" --segmented offsets --sizes 30M,2^24,2^20 --reps 50 "$@"
run paper_seg 0 240 --paper-seg --db "$db" --reps 30 --paper-m 16,20,24,28,30,31

echo
echo "=== total $(( $(date +%s) - start )) s (budget $budget s)"
for name in seg_keys seg_offsets; do
    [ -f "$out/$name.log" ] || continue
    sed -n '/^summary (/,/^  redtune slower/p' "$out/$name.log"
done
if [ -f "$out/paper_seg.log" ]; then
    # The Fig. 5 tables: title, header and rows (ms), without the per-row notes.
    grep -E '^paper Fig. 5|^ +m +nseg|^ +[0-9]+ +[0-9]+ ' "$out/paper_seg.log"
fi
echo "=== goals"
for name in seg_keys seg_offsets; do
    [ -f "$out/$name.log" ] || continue
    # Each GOAL line is printed when measured and again at the end: once each here.
    grep '^GOAL' "$out/$name.log" | awk '!seen[$0]++'
    grep '^goals (.*PASS' "$out/$name.log"
done
exit "$status"
