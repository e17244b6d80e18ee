#!/usr/bin/env python3
"""stage2_sum.py CSV - `redtune measurements --format csv` of a segmented tuning run, as one
table: per case (op, type, n, mean length), the fastest config of each variant (seg_per by
STAGE, SPLIT, SEGS, LANES with U where the run has U, STAGE = 2's WIN and GRID; seg_stream by
CH, WP, MG; seg_mark by CH and PF; seg_pipe by SEGS, RV and H; seg_lb over keys by B, R,
PERSIST, KW, OST, PF and MINB) and its median, the variant's best against the case's best."""
import csv
import re
import sys
from collections import defaultdict


def variant(fam, params):
    if fam == "seg_per":
        st = re.search(r"STAGE=(\d)", params)
        sp = re.search(r"SPLIT=(\d+)", params)
        sg = re.search(r"SEGS=(\d+)", params)
        u = re.search(r"\bU=(\d+)", params)
        ln = re.search(r"\bLANES=(\d+)", params)
        win = re.search(r"\bWIN=(\d+)", params)
        grid = re.search(r"\bGRID=(\d+)", params)
        return "seg_per STAGE=%s%s%s%s%s%s" % (st.group(1) if st else "0",
                                               " SPLIT" if sp and sp.group(1) != "0" else "",
                                               " SEGS" if sg and sg.group(1) != "1" else "",
                                               " LANES=%s U=%s" % (ln.group(1), u.group(1)) if u else "",
                                               " WIN=%s" % win.group(1) if win and st and st.group(1) == "2" else "",
                                               " GRID=%s" % grid.group(1) if grid and grid.group(1) != "0" else "")
    if fam == "seg_stream":   # by CH (and WP, MG: tools/exp/seg_stream_wp_mg.patch)
        return " ".join([fam] + re.findall(r"\b(?:WP|MG|CH)=\d+", params))
    if fam == "seg_pipe":   # by SEGS, RV and H
        return " ".join([fam] + re.findall(r"\b(?:SEGS|RV|H)=\d+", params))
    if fam == "seg_mark":   # by CH and PF
        return " ".join([fam] + re.findall(r"\b(?:CH|PF)=\d+", params))
    if fam == "seg_lb" and "LAYOUT=1" in params:   # keys: by B, R, PERSIST, KW, OST, PF, MINB
        return " ".join([fam] + re.findall(r"\b(?:B|R|PERSIST|KW|OST|PF|MINB)=\d+", params))
    return fam


def main():
    best = defaultdict(dict)
    for r in csv.DictReader(open(sys.argv[1])):
        if r["status"] != "ok" or not r["layout"]:
            continue
        case = (r["op"], r["type"], int(r["n"]), r["layout"], float(r["seg_mean"] or 0))
        v, us = variant(r["family"], r["params"]), float(r["median_us"])
        if v not in best[case] or us < best[case][v][0]:
            best[case][v] = (us, r["params"])
    for case in sorted(best):
        rows = best[case]
        top = min(u for u, _ in rows.values())
        print("%s %s n=%d %s mean %.1f:" % case)
        for v in sorted(rows, key=lambda k: rows[k][0]):
            u, p = rows[v]
            print("   %-16s %9.2f us  %5.3f  %s" % (v, u, u / top, p))


if __name__ == "__main__":
    main()
