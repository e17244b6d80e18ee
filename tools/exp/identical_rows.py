#!/usr/bin/env python3
"""identical_rows.py DB - what libredtune's completion of a device row by identical GPUs'
rows (runtime/store_lookup.c) adds in DB, and what it hides, per (device model, op, types,
layout kind, L2).

For each group with winners in several rows of identical devices (same name, compute
capability, SM count, memory clock and bus width), the row the lookup chooses first (the
most winners, then the most recently seen, then the lowest id; this GPU's own row counts
only on a tie, so it is left out here), the cases (layout, n) the other rows hold that it
lacks (added: their winners run) and those it holds too (shadowed: the chosen row's winner
runs; "faster" counts those whose stored median is lower in another row, a sign of winners
shipped where the lookup never takes them; stored times of different sessions may differ
in method too). Prints one line per group and the totals; with `--fail` exits 1 when any
case is added. Standard library only: python3 tools/exp/identical_rows.py build/redtune.db"""
import sqlite3
import sys
from collections import defaultdict


def main():
    db = sqlite3.connect(sys.argv[1])
    groups = defaultdict(lambda: defaultdict(dict))
    seen = {}
    for dev, model, op, typ, acc, res, layout, n, hot, last, med in db.execute(
            "SELECT d.id, d.name || '/' || d.cc_major || d.cc_minor || '/' || d.sm_count || '/' "
            "|| d.mem_clock_khz || '/' || d.bus_width_bits, b.op, b.type, b.acc, b.result, "
            "b.layout, b.n, b.hot, d.last_seen, b.median_us FROM best b "
            "JOIN devices d ON d.id = b.device_id"):
        groups[(model, op, typ, acc, res, layout.split(":")[0], hot)][dev][(layout, n)] = med
        seen[dev] = last
    added = shadowed = faster = 0
    for key, rows in sorted(groups.items()):
        if len(rows) < 2:
            continue
        first = sorted(rows, key=lambda d: (-len(rows[d]), tuple(-ord(ch) for ch in seen[d]), d))[0]
        others = [d for d in rows if d != first]
        more = set().union(*(rows[d].keys() for d in others)) - rows[first].keys()
        hid = [(d, c) for d in others for c in rows[d] if c in rows[first]]
        quick = [(d, c) for d, c in hid if rows[d][c] < rows[first][c]]
        added += len(more)
        shadowed += len(hid)
        faster += len(quick)
        print(f"{' '.join(map(str, key))}: rows {sorted((d, len(rows[d])) for d in rows)}, "
              f"chosen {first}, cases added {len(more)}, shadowed {len(hid)} "
              f"(faster elsewhere {len(quick)}"
              + (f", best {min(rows[d][c] / rows[first][c] for d, c in quick):.3f}x"
                 if quick else "")
              + ")")
    print(f"cases added by identical rows: {added}; shadowed: {shadowed}, "
          f"faster in the row not taken: {faster}")
    return 1 if added and "--fail" in sys.argv else 0


if __name__ == "__main__":
    sys.exit(main())
