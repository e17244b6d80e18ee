#!/usr/bin/env python3
"""seg_ab.py DIR A B [TAG] - the table of an A B A B run of `redtune_bench --segmented`
(tools/exp/dev_session16.sh): DIR/seg[TAG]_A_1.csv, seg[TAG]_B_1.csv, seg[TAG]_A_2.csv,
seg[TAG]_B_2.csv (a round missing is left out). One Markdown row per profile, n, operator
and type: the medians (µs), B/A of the sums, B over the limit, CUB's time (B's first round),
B/CUB, and B's pick (marked where it differs from A's); the geometric mean and the range of
B/A last."""
import csv
import math
import os
import sys


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__.split("\n")[0])
    d, a, b = sys.argv[1:4]
    tag = sys.argv[4] if len(sys.argv) == 5 else ""
    runs, rounds = {}, []
    for r in (1, 2):
        if all(os.path.exists(f"{d}/seg{tag}_{v}_{r}.csv") for v in (a, b)):
            rounds.append(r)
    for v in (a, b):
        for r in rounds:
            for row in csv.DictReader(open(f"{d}/seg{tag}_{v}_{r}.csv")):
                key = (row["profile"], int(row["n"]), row["op"], row["type"], row["regime"])
                runs.setdefault(key, {})[f"{v}{r}"] = row
    cols = " | ".join(f"{v} {r}" for r in rounds for v in (a, b))
    print(f"| profile | n | op type | {cols} | {b}/{a} | {b} / limit | CUB | {b}/CUB | pick |")
    print("| --- | --- | --- | " + " | ".join("---" for _ in rounds for _ in (a, b)) + " | --- | --- | --- | --- | --- |")
    ratios = []
    for (prof, n, op, ty, reg), x in sorted(runs.items()):
        if any(f"{v}{r}" not in x for v in (a, b) for r in rounds):
            continue
        t = {k: float(x[k]["redtune_us"] or "nan") for k in x}
        sa = sum(t[f"{a}{r}"] for r in rounds)
        sb = sum(t[f"{b}{r}"] for r in rounds)
        q = sb / sa
        ratios.append(q)
        n1 = x[f"{b}{rounds[0]}"]
        cub = float(n1["cub_us"] or "nan")
        pick = n1["family"] + " " + n1["params"].replace("LAYOUT=2 OFF64=0 ", "")
        if (x[f"{a}{rounds[0]}"]["params"].replace(" LONG=64", "") != n1["params"].replace(" LONG=64", "")):
            pick += " (changed)"
        vals = " | ".join(f"{t[f'{v}{r}']:.2f}" for r in rounds for v in (a, b))
        print(f"| {prof} | {n} | {op} {ty} | {vals} | {q:.3f} | {float(n1['redtune_over_limit']):.2f} | "
              f"{cub:.2f} | {t[f'{b}{rounds[0]}'] / cub:.3f} | {pick} |")
    if ratios:
        g = math.exp(sum(math.log(q) for q in ratios) / len(ratios))
        print(f"\n{b}/{a}: geometric mean {g:.3f}, range {min(ratios):.3f}-{max(ratios):.3f} over {len(ratios)} cases")


if __name__ == "__main__":
    main()
