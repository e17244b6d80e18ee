#!/usr/bin/env python3
"""stream_ab.py A1 B1 A2 B2 - `redtune measurements --format csv` of the same space tuned by two
binaries (A: before, B: after), twice each: per case and config the four medians and B/A (the
mean of each pair), then per case the best of A against the best of B."""
import csv
import sys
from collections import defaultdict


def load(path):
    out = {}
    for r in csv.DictReader(open(path)):
        if r["status"] != "ok":
            continue
        case = "%s %s n=%s %s" % (r["op"], r["type"], r["n"], r["layout"])
        out[(case, r["params"])] = float(r["median_us"])
    return out


def main():
    a1, b1, a2, b2 = (load(p) for p in sys.argv[1:5])
    best = defaultdict(lambda: [None, None])
    for key in sorted(set(a1) | set(b1)):
        case, params = key
        va = [d[key] for d in (a1, a2) if key in d]
        vb = [d[key] for d in (b1, b2) if key in d]
        if not va or not vb:
            print("%s  %s: missing (A %d, B %d)" % (case, params, len(va), len(vb)))
            continue
        ma, mb = sum(va) / len(va), sum(vb) / len(vb)
        print("%-40s %-46s A %s  B %s  B/A %.3f" % (case, params, "/".join("%.2f" % v for v in va),
                                                  "/".join("%.2f" % v for v in vb), mb / ma))
        bc = best[case]
        bc[0] = ma if bc[0] is None else min(bc[0], ma)
        bc[1] = mb if bc[1] is None else min(bc[1], mb)
    for case, (ma, mb) in sorted(best.items()):
        print("best %-40s A %.2f  B %.2f  B/A %.3f" % (case, ma, mb, mb / ma))


if __name__ == "__main__":
    main()
