#!/usr/bin/env python3
"""minb_ab.py BASE.csv EXP.csv - two `redtune measurements --format csv` of one space tuned by
two builds (tools/exp/dev_session30.sh `minb`: the committed seg_lb against one whose keys
register path asks ptxas for three blocks of 512 an SM): per config exp/base, and per case
(op, type, n, layout) each build's best and exp's best over base's best."""
import csv
import sys


def load(path):
    t = {}
    for r in csv.DictReader(open(path)):
        if r["status"] == "ok":
            t[(r["op"], r["type"], int(r["n"]), r["layout"], r["params"])] = float(r["median_us"])
    return t


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n")[0])
    base, exp = load(sys.argv[1]), load(sys.argv[2])
    cases = sorted({k[:4] for k in base} | {k[:4] for k in exp})
    print("| case | config | base (us) | exp (us) | exp/base |")
    print("| --- | --- | --- | --- | --- |")
    for c in cases:
        for k in sorted(k for k in base if k[:4] == c):
            if k in exp:
                p = " ".join(w for w in k[4].split() if w.split("=")[0] in ("B", "R", "OST", "KW"))
                print(f"| {' '.join(map(str, c))} | {p} | {base[k]:.2f} | {exp[k]:.2f} | "
                      f"{exp[k] / base[k]:.3f} |")
    print()
    print("| case | base best (us) | exp best (us) | exp best / base best |")
    print("| --- | --- | --- | --- |")
    for c in cases:
        b = min((v for k, v in base.items() if k[:4] == c), default=0)
        e = min((v for k, v in exp.items() if k[:4] == c), default=0)
        if b and e:
            print(f"| {' '.join(map(str, c))} | {b:.2f} | {e:.2f} | {e / b:.3f} |")


if __name__ == "__main__":
    main()
