#!/usr/bin/env python3
"""identical_rows.py DB - what libredtune's completion of a device row by identical GPUs'
rows (runtime/store_lookup.c) adds in DB, per (device model, op, types, layout kind, L2).

For each group with winners in several rows of identical devices (same name, compute
capability, SM count, memory clock and bus width), the row the lookup chooses first (the
most winners, then the most recently seen, then the lowest id; this GPU's own row counts
only on a tie, so it is left out here) and the cases (layout, n) the other rows hold that it
lacks. Prints one line per group and a total; with `--fail` exits 1 when any case is added.
Standard library only: python3 tools/exp/identical_rows.py build/redtune.db"""
import sqlite3
import sys
from collections import defaultdict


def main():
    db = sqlite3.connect(sys.argv[1])
    groups = defaultdict(lambda: defaultdict(set))
    seen = {}
    for dev, model, op, typ, acc, res, layout, n, hot, last in db.execute(
            "SELECT d.id, d.name || '/' || d.cc_major || d.cc_minor || '/' || d.sm_count || '/' "
            "|| d.mem_clock_khz || '/' || d.bus_width_bits, b.op, b.type, b.acc, b.result, "
            "b.layout, b.n, b.hot, d.last_seen FROM best b JOIN devices d ON d.id = b.device_id"):
        groups[(model, op, typ, acc, res, layout.split(":")[0], hot)][dev].add((layout, n))
        seen[dev] = last
    added = 0
    for key, rows in sorted(groups.items()):
        if len(rows) < 2:
            continue
        first = sorted(rows, key=lambda d: (-len(rows[d]), tuple(-ord(ch) for ch in seen[d]), d))[0]
        more = set().union(*(rows[d] for d in rows if d != first)) - rows[first]
        added += len(more)
        print(f"{' '.join(map(str, key))}: rows {sorted((d, len(rows[d])) for d in rows)}, "
              f"chosen {first}, cases added {len(more)}")
    print(f"cases added by identical rows: {added}")
    return 1 if added and "--fail" in sys.argv else 0


if __name__ == "__main__":
    sys.exit(main())
