#!/usr/bin/env python3
"""meas_side.py PREFIX GROUP:TAG,TAG ... - the tuner's medians of one sweep run several times, side
by side: PREFIX_TAG.csv (`redtune measurements --format csv`) per TAG, a row per (op, n, params)
with each GROUP's TAGs' medians, in µs (0.00: not measured in that run). Used by
tools/exp/dev_session20.sh (partial, icache): `meas_side.py $OUT/icache cold:cold,cold2
hot:hot,hot2`."""
import csv
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split("\n")[0])
    prefix = sys.argv[1]
    groups = [(g.split(":")[0], g.split(":")[1].split(",")) for g in sys.argv[2:]]
    t = {}
    for _, tags in groups:
        for v in tags:
            for r in csv.DictReader(open(f"{prefix}_{v}.csv")):
                t.setdefault((r["op"], int(r["n"]), r["params"]), {})[v] = float(r["median_us"])
    for (op, n, p), d in sorted(t.items()):
        cells = "  ".join(name + " " + " ".join(f"{d.get(v, 0):6.2f}" for v in tags)
                          for name, tags in groups)
        print(f"{op:9s} {n:7d} {p:20s} {cells}")


main()
