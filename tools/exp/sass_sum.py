#!/usr/bin/env python3
"""sass_sum.py SASS.csv [CHUNK] - Nsight Compute's SASS page (`ncu --import R --page source
--print-source sass --csv`, as dev_lib.sh's ncu_sass writes it) summed in runs of CHUNK
instructions (default 30) in address order: each run's share of the executed warp
instructions and of the stall samples, and its five most executed opcodes (thousands). The
regions of a kernel (a window step, a walk, a scan) are read off this table by their opcodes;
runs never executed are left out. Standard library only."""
import csv
import sys


def main():
    rows = list(csv.reader(open(sys.argv[1])))
    chunk = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    head = rows[1]
    data = rows[2:]
    src = head.index("Source")
    ex = head.index("Instructions Executed")
    st = head.index("Warp Stall Sampling (All Samples)")
    num = lambda r, i: int(r[i] or 0)
    tot = sum(num(r, ex) for r in data) or 1
    stalls = sum(num(r, st) for r in data) or 1
    print("%d warp instructions executed, %d stall samples, %d SASS instructions" % (tot, stalls, len(data)))
    for k in range(0, len(data), chunk):
        part = data[k:k + chunk]
        e = sum(num(r, ex) for r in part)
        s = sum(num(r, st) for r in part)
        if e == 0 and s == 0:
            continue
        ops = {}
        for r in part:
            words = r[src].split()
            if not words:
                continue
            op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
            ops[op] = ops.get(op, 0) + num(r, ex)
        top = sorted(ops.items(), key=lambda kv: -kv[1])[:5]
        print("%5d %5.1f%%  stalls %5.1f%%  %s" % (k, 100.0 * e / tot, 100.0 * s / stalls,
                                                  " ".join("%s:%d" % (o, c // 1000) for o, c in top)))


if __name__ == "__main__":
    main()
