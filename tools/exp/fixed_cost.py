#!/usr/bin/env python3
"""fixed_cost.py CSV - what each operator adds to a launch, from `redtune measurements --format
csv` of tools/exp/fixed_cost_space.lua's runs (fortieth session): per operator and config the
median at each size, then per operator a least-squares line time = a + b * bytes over the
sizes of 2^20 and more (a: the fixed part, us; b: us per MiB) for its best config at each size.
MiB are of 4-byte elements: the f32 runs the space is for. Standard library only."""
import csv
import sys
from collections import defaultdict


def main():
    rows = [r for r in csv.DictReader(open(sys.argv[1], newline=""))
            if r["status"] == "ok" and r["layout"] == "flat"]
    t = defaultdict(dict)   # (op, params) -> n -> median
    for r in rows:
        t[(r["op"], r["params"])][int(r["n"])] = float(r["median_us"])
    sizes = sorted({int(r["n"]) for r in rows})
    print("op config " + " ".join(f"2^{n.bit_length() - 1}" for n in sizes))
    for (op, params), by in sorted(t.items()):
        print(f"{op} {params.replace(' ', ',')} " + " ".join(f"{by.get(n, float('nan')):.2f}" for n in sizes))
    print("op: best per size (us); fit over n >= 2^20: fixed us + us per MiB")
    for op in sorted({k[0] for k in t}):
        best = {}
        for (o, _), by in t.items():
            for n, v in by.items():
                if o == op and v < best.get(n, float("inf")):
                    best[n] = v
        pts = [(n * 4 / 2**20, best[n]) for n in sizes if n >= 2**20 and n in best]
        if len(pts) >= 2:
            mx = sum(x for x, _ in pts) / len(pts)
            my = sum(y for _, y in pts) / len(pts)
            b = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
            fit = f"{my - b * mx:.2f} + {b:.4f}/MiB"
        else:
            fit = "-"
        print(f"{op} " + " ".join(f"{best.get(n, float('nan')):.2f}" for n in sizes) + f"; {fit}")


if __name__ == "__main__":
    main()
