#!/usr/bin/env python3
"""bal_sum.py - the table of an axis experiment (tools/exp/axis_balance_space.lua) timed in
several passes: per case (type, shape), the configs by the mean of their passes' medians, the
shipped winner's config (from `redtune best --format csv` of the shipped database) beside them,
and the best config of each split count len // CHUNK (0: unsplit).

    bal_sum.py SHIPPED_BEST.csv PASS1.csv [PASS2.csv ...]
"""
import csv
import re
import sys
from collections import defaultdict


def rows(path):
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["layout"].startswith("axis:") and r["status"] == "ok":
                yield r


def splits(params, length):
    """len // CHUNK of a config's parameters (0: unsplit)."""
    m = re.search(r"CHUNK=(\d+)", params)
    return length // int(m.group(1)) if m and int(m.group(1)) else 0


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    times = defaultdict(list)
    devices = set()
    for p in sys.argv[2:]:
        for r in rows(p):
            devices.add(r["device"])
            times[(r["op"], r["type"], r["layout"], r["family"], r["params"])].append(
                float(r["median_us"]))
    # every winner of the passes' GPU (several rows of it may hold one: each is shown)
    shipped = defaultdict(set)
    for r in rows(sys.argv[1]):
        if r["device"] in devices:
            shipped[(r["op"], r["type"], r["layout"])].add((r["family"], r["params"]))
    cases = defaultdict(list)
    for (op, t, lay, fam, par), v in times.items():
        cases[(op, t, lay)].append((sum(v) / len(v), min(v), max(v), len(v), fam, par))
    for key in sorted(cases):
        op, t, lay = key
        length = int(lay[5:].split("x")[1])
        lst = sorted(cases[key])
        best = lst[0][0]
        print(f"== {op} {t} {lay}: {len(lst)} configs")

        def line(tag, e):
            print(f"  {tag:8} {e[0]:8.2f} us ({e[1]:.2f}-{e[2]:.2f}, {e[3]} passes) "
                  f"{e[0] / best:6.3f}  S={splits(e[5], length):<4} {e[4]} {e[5]}")

        for e in lst[:6]:
            line("top", e)
        for ship in sorted(shipped.get(key, ())):
            for e in lst:
                if e[4] == ship[0] and e[5] == ship[1]:
                    line("shipped", e)
                    break
            else:
                print(f"  shipped  {ship[0]} {ship[1]}: not in this space")
        per_s = {}
        for e in lst:
            per_s.setdefault(splits(e[5], length), e)
        for s in sorted(per_s):
            line(f"S={s}", per_s[s])


if __name__ == "__main__":
    main()
