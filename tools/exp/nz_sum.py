#!/usr/bin/env python3
"""nz_sum.py CSV [PARAM[=A,B]] - `redtune measurements --format csv` of a run of
tools/exp/nz_space.lua (or mark_nz_space.lua): per case (op, type, n, mean length) each config
with PARAM=A and PARAM=B (NZ, 0 and 1 unless named: mark_nz_space.lua's MP, J=4,8) side by side
(µs) and their ratio, then the best of each and their ratio."""
import csv
import re
import sys
from collections import defaultdict


def main():
    p, _, ab = (sys.argv[2] if len(sys.argv) > 2 else "NZ").partition("=")
    a, b = ab.split(",") if ab else ("0", "1")
    t = defaultdict(dict)
    for r in csv.DictReader(open(sys.argv[1])):
        if r["status"] != "ok" or not r["layout"]:
            continue
        m = re.search(r"\b%s=(\d+)" % p, r["params"])
        if not m:
            continue
        case = (r["op"], r["type"], int(r["n"]), r["layout"], float(r["seg_mean"] or 0))
        shape = r["family"] + " " + re.sub(r"\s*\b%s=\d+" % p, "", r["params"])
        t[case].setdefault(shape, {})[m.group(1)] = float(r["median_us"])
    for case in sorted(t):
        print("%s %s n=%d %s mean %.1f:" % case)
        best = {}
        for shape, v in sorted(t[case].items(), key=lambda kv: kv[1].get(a, 1e30)):
            for k, us in v.items():
                best[k] = min(best.get(k, 1e30), us)
            if a in v and b in v:
                print("   %9.2f %9.2f  %5.3f  %s" % (v[a], v[b], v[b] / v[a], shape))
        if a in best and b in best:
            print("   best: %s=%s %.2f, %s=%s %.2f us (%.3f)"
                  % (p, a, best[a], p, b, best[b], best[b] / best[a]))


if __name__ == "__main__":
    main()
