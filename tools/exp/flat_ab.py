#!/usr/bin/env python3
"""flat_ab.py DIR PREFIX V1 V2 ... - the table of redtune_bench runs (flat, --type-cases or
--every-n CSVs) taken as rounds of variants: DIR/PREFIX_V.csv and DIR/PREFIX_V2.csv for each
variant V (twenty-first session, tools/exp/dev_session21.sh). One row per case, type, n and
regime: each variant's two medians (µs), each variant's mean against V1's, the best % of the
read limit of V1 and of the last variant, CUB's median (first round of V1), and the last
variant's pick. A last line counts the rows where the last variant is faster or slower than V1
by more than 1%."""
import csv
import os
import sys


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__.split("\n")[0])
    d, prefix, vs = sys.argv[1], sys.argv[2], sys.argv[3:]
    rows = {}
    for v in vs:
        for r in ("", "2"):
            path = f"{d}/{prefix}_{v}{r}.csv"
            if not os.path.exists(path):
                continue
            for x in csv.DictReader(open(path)):
                if x.get("redtune_status") != "ok":
                    continue
                case = x.get("case") or f'{x["op"]} {x["type"]}'   # flat CSVs: op, type
                key = (case, x.get("type_spec", x.get("type")), int(x["n"]), x["regime"])
                rows.setdefault(key, {})[v + r] = x
    head = " | ".join(f"{v} 1 | {v} 2" for v in vs)
    ratios = " | ".join(f"{v}/{vs[0]}" for v in vs[1:])
    print(f"| case | n | regime | {head} | {ratios} | % limit {vs[0]}, {vs[-1]} | CUB | {vs[-1]} pick |")
    print("|" + " --- |" * (3 + 2 * len(vs) + len(vs) - 1 + 3))
    faster = slower = 0
    for key in sorted(rows, key=lambda k: (k[0], k[1], k[2], k[3])):
        x = rows[key]
        if any(v not in x or v + "2" not in x for v in vs):
            continue
        t = {k: float(x[k]["redtune_us"]) for k in x}
        mean = {v: (t[v] + t[v + "2"]) / 2 for v in vs}
        lim = float(x[vs[0]]["limit_us"])
        cells = " | ".join(f"{t[v]:.2f} | {t[v + '2']:.2f}" for v in vs)
        rat = " | ".join(f"{mean[v] / mean[vs[0]]:.3f}" for v in vs[1:])
        last = vs[-1]
        r = mean[last] / mean[vs[0]]
        faster += r < 0.99
        slower += r > 1.01
        cub = x[vs[0]].get("cub_us") or ""
        print(f"| {key[0]} | {key[2]} | {key[3]} | {cells} | {rat} | "
              f"{100 * lim / min(t[vs[0]], t[vs[0] + '2']):.1f}, {100 * lim / min(t[last], t[last + '2']):.1f} | "
              f"{cub} | {x[last]['family']} {x[last]['params']} |")
    print(f"\n{last} against {vs[0]}: {faster} rows faster by more than 1%, {slower} slower by more than 1%")


if __name__ == "__main__":
    main()
