#!/usr/bin/env python3
"""ch_sum.py CSV - `redtune measurements --format csv` of seg_stream tuned with CH: per case (op,
type, n, layout), the fastest config of each CH and its median against the case's best."""
import csv
import re
import sys
from collections import defaultdict


def main():
    best = defaultdict(dict)
    for r in csv.DictReader(open(sys.argv[1])):
        if r["status"] != "ok" or not r["layout"]:
            continue
        case = (r["op"], r["type"], int(r["n"]), r["layout"])
        m = re.search(r"CH=(\d+)", r["params"])
        ch = int(m.group(1)) if m else 0
        us = float(r["median_us"])
        if ch not in best[case] or us < best[case][ch][0]:
            best[case][ch] = (us, r["params"])
    for case in sorted(best):
        rows = best[case]
        top = min(u for u, _ in rows.values())
        print("%s %s n=%d %s:" % case)
        for ch in sorted(rows):
            u, p = rows[ch]
            print("   CH=%d %9.2f us  %5.3f  %s" % (ch, u, u / top, p))


if __name__ == "__main__":
    main()
