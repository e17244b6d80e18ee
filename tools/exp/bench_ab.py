#!/usr/bin/env python3
"""bench_ab.py DIR A B - the table of an A B A B run of `redtune_bench --axis` (tools/exp/
dev_cols_check.sh bench: A = old, B = new; tools/exp/dev_split_finish.sh bench: before, after):
DIR/axis_A_1.csv, axis_B_1.csv, axis_A_2.csv, axis_B_2.csv. One Markdown row per shape and type:
the four medians (µs) per shape, operator and type, B/A of the sums, B's % of the limit in both rounds, CUB's and the flat
reduction's time in B's first round, and B's pick (marked where it differs from A's)."""
import csv
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n")[0])
    d, a, b = sys.argv[1:]
    runs = {}
    for v in (a, b):
        for r in (1, 2):
            for row in csv.DictReader(open(f"{d}/axis_{v}_{r}.csv")):
                runs.setdefault((row["case"], row["op"], row["type"]), {})[f"{v}{r}"] = row
    print(f"| shape | op type | {a} 1 | {b} 1 | {a} 2 | {b} 2 | {b}/{a} | {b}, % of limit | CUB | flat | pick |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for (case, op, ty), x in runs.items():
        t = {k: float(x[k]["redtune_us"]) for k in (f"{a}1", f"{b}1", f"{a}2", f"{b}2")}
        n1 = x[f"{b}1"]
        pick = n1["pick"] + (" (changed)" if n1["pick"] != x[f"{a}1"]["pick"] else "")
        print(f"| {case} | {op} {ty} | {t[a + '1']:.2f} | {t[b + '1']:.2f} | {t[a + '2']:.2f} | "
              f"{t[b + '2']:.2f} | {(t[b + '1'] + t[b + '2']) / (t[a + '1'] + t[a + '2']):.3f} | "
              f"{100 * float(n1['redtune_frac_limit']):.1f}, "
              f"{100 * float(x[b + '2']['redtune_frac_limit']):.1f} | "
              f"{float(n1['cub_us'] or 0):.2f} | {float(n1['flat_us'] or 0):.2f} | {pick} |")


if __name__ == "__main__":
    main()
