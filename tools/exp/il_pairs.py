#!/usr/bin/env python3
"""il_pairs.py MEAS.csv - the axis walks (IL) side by side from `redtune measurements --format csv`
of a dev_axis_walk.sh run: per shape and type, the best config of each IL value (median µs and
percent of the read limit) and, per IL value against the lowest IL of the case (0, or 1 for the
unsplit pairs), the geometric mean and range of the ratio over configs that differ in IL alone."""
import csv, gzip, math, re, sys
from collections import defaultdict

def main(path):
    f = gzip.open(path, "rt") if path.endswith(".gz") else open(path)
    rows = [r for r in csv.DictReader(f) if r["status"] == "ok"]
    cases = defaultdict(dict)      # (layout, type) -> {params: row}
    for r in rows:
        cases[(r["layout"], r["type"])][r["params"]] = r
    for (layout, ty), byp in sorted(cases.items()):
        print(f"{layout} {ty}: {len(byp)} configs")
        best = {}
        for p, r in byp.items():
            il = int(re.search(r"IL=(\d+)", p).group(1))
            if il not in best or float(r["median_us"]) < float(best[il]["median_us"]):
                best[il] = r
        for il in sorted(best):
            r = best[il]
            print(f"  best IL={il}: {float(r['median_us']):8.2f} us "
                  f"{float(r['read_pct']):5.1f}%  {r['params']}")
        base = min(best)
        for il in sorted(best):
            if il == base:
                continue
            ratios = []
            for p, r in byp.items():
                if f"IL={il}" not in p:
                    continue
                q = byp.get(p.replace(f"IL={il}", f"IL={base}"))
                if q:
                    ratios.append(float(r["median_us"]) / float(q["median_us"]))
            if ratios:
                g = math.exp(sum(map(math.log, ratios)) / len(ratios))
                print(f"  IL={il}/IL={base} over {len(ratios)} pairs: geomean {g:.3f} "
                      f"({min(ratios):.2f}-{max(ratios):.2f})")

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "il_meas.csv")
