#!/usr/bin/env bash
# replay_corpora.sh [BUDGET...] - `redtune replay` over every exhaustive corpus the
# repository stores (the sweeps docs/tuning.md and docs/results.md weigh local search on: the
# ninth and tenth sessions' four quality sweeps, the twentieth session's two, the nineteenth
# session's small-n sweep, 2026-11-22's measurements, the thirteenth session's three axis
# sweeps, the thirty-ninth, fortieth, forty-fourth and forty-fifth sessions' live runs over
# the spaces of that day; 347 cases), no GPU needed. For each budget (default: 12%,6 15%,6 18%,6) a line per corpus
# (cases, how many meet issue 12's goal, the worst quality) and the total; the cases that
# miss go to $OUT/misses_BUDGET.txt when OUT is set (written afresh each run). The strategy
# is $STRATEGY (default local).
#
#   bash tools/replay_corpora.sh                      # local at the three budgets
#   STRATEGY=random bash tools/replay_corpora.sh 20%  # another strategy
set -u
cd "$(dirname "$0")/.."
bin=${REDTUNE:-build/redtune}
strategy=${STRATEGY:-local}
r=bench/results
corpora=(
    "$r/session9-2026-11-27/run1_exhaustive.db"
    "$r/session9-2026-11-27/run2_exhaustive.db"
    "$r/session10-2026-11-27/quality/exhaustive.db"
    "$r/session10-2026-11-27/quality2/exhaustive.db"
    "$r/session20-2026-11-28/run2/quality/exhaustive.db"
    "$r/session20-2026-11-28/run3/quality/exhaustive.db"
    "$r/session19-2026-11-28/run3_dense_meas.csv.gz"
    "$r/h100_2026-11-22_measurements.csv"
    "$r/session13-2026-11-27/walk_rows_meas.csv.gz"
    "$r/session13-2026-11-27/walk_cols_meas.csv.gz"
    "$r/session13-2026-11-27/retune_cols_meas.csv.gz"
    "$r/session39-2026-12-07/run2/quality/exhaustive.db"
    "$r/session40-2026-12-07/run2/quality/exhaustive.db"
    "$r/session44-2026-12-07/run2/quality/exhaustive.db"
    "$r/session45-2026-12-07/run1/quality/exhaustive.db"
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ $# -gt 0 ] || set -- 12%,6 15%,6 18%,6
files=()   # the corpora as redtune replay reads them: the gzipped CSVs unpacked once
for c in "${corpora[@]}"; do
    f=$c
    if [ "${c%.gz}" != "$c" ]; then
        f=$tmp/$(basename "${c%.gz}")
        zcat "$c" > "$f"
    fi
    files+=("$f")
done
[ -n "${OUT:-}" ] && mkdir -p "$OUT"
for budget; do
    total=0 meet=0
    misses=/dev/null
    if [ -n "${OUT:-}" ]; then
        misses=$OUT/misses_${budget//[%,]/_}.txt
        : > "$misses"
    fi
    for i in "${!corpora[@]}"; do
        c=${corpora[$i]#"$r"/}
        if ! "$bin" replay "${files[$i]}" --strategy "$strategy" --budget "$budget" \
                --format csv > "$tmp/out.csv" 2> "$tmp/err.txt"; then
            echo "replay $c failed:"
            cat "$tmp/err.txt"
            exit 1
        fi
        # cases, how many meet the goal, the worst quality; the misses appended to $misses
        read -r n m worst <<< "$(python3 - "$tmp/out.csv" "$c" "$misses" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
with open(sys.argv[3], "a") as out:
    for r in rows:
        if r["meets"] != "1":
            print(sys.argv[2], r["op"], r["type"], r["layout"], r["n"], "share", r["share"],
                  "quality", r["quality"], r["chosen_family"], r["chosen_params"], file=out)
print(len(rows), sum(r["meets"] == "1" for r in rows),
      max((float(r["quality"]) for r in rows), default=0))
PY
)"
        total=$((total + n)) meet=$((meet + m))
        printf '%-8s %-58s %3d cases, %3d meet, worst %.3f\n' "$budget" "$c" "$n" "$m" "$worst"
    done
    echo "$budget: $meet of $total cases meet the goal"
done
