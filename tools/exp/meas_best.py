#!/usr/bin/env python3
"""meas_best.py CSV [--tags N] [--by PARAM] [--pairs A,B] - the best median per case of `redtune measurements
--format csv` output, as the session scripts of tools/exp/ print it after a device run.

The CSV may be several runs' output concatenated (their header lines are skipped), each line
with N tag columns appended by the script (e.g. ",stream,1": the load hint and the run). A case
is (layout, type, the tags) and, with --by PARAM, the value of PARAM in the config's parameters
(e.g. MINB): one line per case, "layout type tags: median us, % of the read limit, family,
parameters". --pairs A,B (with --tags): per layout and type, each config timed under first tag
A and under B (the builds of an A B run, its other tags the rounds), the ratio of B's summed
medians to A's, and their geometric mean, range and count. Standard library only."""
import argparse
import csv
import math
import re
import sys
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--tags", type=int, default=0, help="tag columns appended to each line")
    ap.add_argument("--by", metavar="PARAM", help="a parameter whose values are cases apart")
    ap.add_argument("--pairs", metavar="A,B", help="configs timed under first tag A and B")
    a = ap.parse_args()
    rows = list(csv.reader(open(a.csv, newline="")))
    if not rows or rows[0][:1] != ["device"]:
        sys.exit(f"meas_best.py: {a.csv}: not the CSV of `redtune measurements`")
    width = max(len(r) for r in rows)            # a data line: the columns and the tags
    col = {name: i for i, name in enumerate(rows[0][:width - a.tags])}   # (header tagged or not)
    best = {}
    for r in rows:
        if len(r) != width or r[0] == "device" or r[col["status"]] != "ok":
            continue
        key = (r[col["layout"]], r[col["type"]]) + tuple(r[len(r) - a.tags:])
        if a.by:
            m = re.search(rf"\b{re.escape(a.by)}=(\S+)", r[col["params"]])
            key += (f"{a.by}={m.group(1) if m else '-'}",)
        if key not in best or float(r[col["median_us"]]) < float(best[key][col["median_us"]]):
            best[key] = r
    for k, r in sorted(best.items()):
        print(f"  {k[0]:>20} {' '.join(k[1:])}: {float(r[col['median_us']]):.2f} us "
              f"{float(r[col['read_pct']]):.1f}% {r[col['family']]} {r[col['params']]}")
    if a.pairs and a.tags:
        ta, tb = a.pairs.split(",")
        sums = defaultdict(lambda: defaultdict(float))   # (layout, type) -> (params, tag) -> us
        for r in rows:
            if len(r) == width and r[0] != "device" and r[col["status"]] == "ok":
                sums[(r[col["layout"]], r[col["type"]])][(r[col["params"]], r[-a.tags])] += \
                    float(r[col["median_us"]])
        for (layout, ty), d in sorted(sums.items()):
            q = [d[(p, tb)] / d[(p, ta)] for p, t in d if t == ta and (p, tb) in d]
            if q:
                g = math.exp(sum(map(math.log, q)) / len(q))
                print(f"  {layout:>20} {ty} {tb}/{ta}: geomean {g:.4f} ({min(q):.3f}-{max(q):.3f}, "
                      f"{len(q)} configs)")


if __name__ == "__main__":
    main()
