#!/bin/bash
# tools/multigpu_run.sh - issue 13: `redtune --device all` on a machine of several GPUs.
#
#   OUT=dir bash tools/multigpu_run.sh        (on the lent machine; carry build/redtune)
#
# Steps, each into its own database under $OUT/mg (logs beside them):
#   one    `--device 0 --op min`, the wall time of one GPU alone
#   all    `--device all --op min`, then one segmented case (offsets rand10_50, sum f32,
#          2^22) with `--device all`: every GPU concurrently into all.db
#   split  `--device all --split --op min` into split.db, then `redtune reduce --explain` on
#          each GPU with it (which entry each GPU's rt_reduce takes)
#   kill   `--device all --op min` into kill.db; after KILL_AFTER s (default 20) the tuning
#          process of the last GPU is killed with SIGKILL; then the same command again
#          (the rerun: only what is missing is measured)
# Per database: PRAGMA integrity_check, rows per device (measurements by status, best rows,
# runs open/closed); per log: "database is locked" lines and each GPU's progress lines.
# A table last. MG_SIZES (e.g. 2^16,2^24) narrows every `--op min` run for a short call;
# MG_STEPS (default "one all split kill") runs only the steps named.
set -u
out=${OUT:-out}/mg
mkdir -p "$out"
rt=build/redtune
sizes=${MG_SIZES:+--sizes $MG_SIZES}
kill_after=${KILL_AFTER:-20}
steps=" ${MG_STEPS:-one all split kill} "
ngpu=$(nvidia-smi -L | wc -l)
nvidia-smi -L
nvidia-smi --query-gpu=index,name,uuid,clocks.mem,memory.total --format=csv,noheader
date -u +%Y-%m-%dT%H:%M:%SZ
declare -A wall

# db_summary DB: integrity and rows per device, one line each
db_summary() {
    python3 - "$1" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("  integrity_check:", db.execute("PRAGMA integrity_check").fetchone()[0])
for dev, name, ordinal, uuid in db.execute("SELECT id, name, ordinal, uuid FROM devices ORDER BY id"):
    st = dict(db.execute("SELECT status, count(*) FROM measurements WHERE device_id = ? GROUP BY status", (dev,)).fetchall())
    cases = db.execute("SELECT count(DISTINCT op || type || layout || n) FROM measurements WHERE device_id = ?", (dev,)).fetchone()[0]
    best = db.execute("SELECT count(*) FROM best WHERE device_id = ?", (dev,)).fetchone()[0]
    runs = db.execute("SELECT count(*), sum(ended_at IS NULL) FROM runs WHERE device_id = ?", (dev,)).fetchone()
    print(f"  device {dev} (ordinal {ordinal}, {name}, uuid {str(uuid)[:12]}): measurements {st}, "
          f"cases {cases}, best rows {best}, runs {runs[0]} ({runs[1] or 0} open)")
EOF
}

# timed NAME LOG CMD...: runs CMD, its output into LOG, the wall seconds into wall[NAME]
timed() {
    local name=$1 log=$2 t0 rc
    shift 2
    t0=$(date +%s.%N)
    "$@" > "$log" 2>&1
    rc=$?
    wall[$name]=$(python3 -c "import time; print(f'{time.time() - $t0:.1f}')")
    echo "$name: exit $rc, ${wall[$name]} s wall: $*"
    tail -n 3 "$log" | sed 's/^/  | /'
    return $rc
}

log_summary() {
    echo "  'database is locked' lines: $(grep -ci 'database is locked' "$1")"
    for g in $(seq 0 $((ngpu - 1))); do
        echo "  [gpu $g] lines: $(grep -c "^\[gpu $g\]" "$1"), progress lines: $(grep -c "^\[gpu $g\] \[.*elapsed" "$1")"
    done
}

# explain_each DB: `redtune reduce --explain` of min f32 over 2^20 floats on every GPU with
# DB, and numpy's min of the same floats
explain_each() {
    [ -f "$out/x.bin" ] || python3 -c "import numpy as np; np.random.default_rng(1).random(1 << 20, dtype=np.float32).tofile('$out/x.bin')"
    echo "  numpy's min: $(python3 -c "import numpy as np; print(np.fromfile('$out/x.bin', dtype=np.float32).min())")"
    for g in $(seq 0 $((ngpu - 1))); do
        echo "  reduce --explain on GPU $g with $(basename "$1"):"
        $rt reduce --op min --in "$out/x.bin" --db "$1" --device "$g" --explain 2>&1 | sed 's/^/    /' | head -12
    done
}

rm -f "$out"/*.db*
seg="--op sum --type f32 --segmented offsets --profiles rand10_50 --sizes 2^22"

if [[ $steps == *" one "* ]]; then
echo "== one: GPU 0 alone"
# shellcheck disable=SC2086
timed one "$out/one.log" $rt --device 0 --op min $sizes --db "$out/one.db"
# shellcheck disable=SC2086
timed one_seg "$out/one_seg.log" $rt --device 0 $seg --db "$out/one.db"
db_summary "$out/one.db"

fi

if [[ $steps == *" all "* ]]; then
echo "== all: every GPU at once"
# shellcheck disable=SC2086
timed all "$out/all.log" $rt --device all --op min $sizes --db "$out/all.db"
log_summary "$out/all.log"
# shellcheck disable=SC2086
timed all_seg "$out/all_seg.log" $rt --device all $seg --db "$out/all.db"
log_summary "$out/all_seg.log"
db_summary "$out/all.db"
grep -m3 "^\[gpu 1\] \[.*elapsed" "$out/all.log" | sed 's/^/  progress: /'
explain_each "$out/all.db"
fi

if [[ $steps == *" split "* ]]; then
echo "== split: identical GPUs share the cases"
# shellcheck disable=SC2086
timed split "$out/split.log" $rt --device all --split --op min $sizes --db "$out/split.db"
log_summary "$out/split.log"
db_summary "$out/split.db"
grep -h -- "--split:" "$out/split.log" | sed 's/^/  /'
python3 - "$out/split.db" <<'EOF2'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for o, ns in db.execute("SELECT d.ordinal, group_concat(b.n, ' ') FROM best b JOIN devices d "
                        "ON d.id = b.device_id GROUP BY d.ordinal ORDER BY d.ordinal"):
    print(f"  best rows of GPU {o}: n = {ns}")
EOF2
explain_each "$out/split.db"
fi

if [[ $steps == *" kill "* ]]; then
echo "== kill: the last GPU's tuner killed mid-run, then the rerun"
# shellcheck disable=SC2086
$rt --device all --op min $sizes --db "$out/kill.db" > "$out/kill.log" 2>&1 &
parent=$!
t0=$(date +%s.%N)
sleep "$kill_after"
# The parent's children in fork order are the GPUs in the order listed; each child's own
# children are its workers.
children=$(ps -o pid= --ppid "$parent" | sort -n | tr '\n' ' ')
victim=$(echo "$children" | awk '{print $NF}')
echo "  parent $parent, children $children; killing $victim (the last GPU's tuner) with SIGKILL"
ps -o pid,ppid,etime,args --ppid "$victim" | sed 's/^/    worker: /'
kill -9 "$victim"
wait "$parent"
rc=$?
wall[kill]=$(python3 -c "import time; print(f'{time.time() - $t0:.1f}')")
echo "kill: exit $rc, ${wall[kill]} s wall"
tail -n 4 "$out/kill.log" | sed 's/^/  | /'
sleep 2
echo "  processes of redtune left: $(pgrep -c -f "$rt" || true)"
db_summary "$out/kill.db"
# shellcheck disable=SC2086
timed rerun "$out/rerun.log" $rt --device all --op min $sizes --db "$out/kill.db"
grep -E "measured in this run|reused|compiled" "$out/rerun.log" | sed 's/^/  /' | head -8
db_summary "$out/kill.db"
fi

echo
echo "| step | wall (s) |"
echo "| --- | --- |"
for k in one one_seg all all_seg split kill rerun; do
    echo "| $k | ${wall[$k]:-} |"
done
