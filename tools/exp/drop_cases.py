#!/usr/bin/env python3
"""drop_cases.py SHIPPED.db NEW.db -o OUT.db - SHIPPED.db without the winners that NEW.db has a
winner for (same device uuid, op, type, acc, result, layout, n, hot), so that
`redtune merge OUT.db NEW.db` puts NEW's winners in whatever their stored times (merge keeps
the faster stored entry, and times stored by runs of other days do not compare). For an A B
bench of winners tuned today against the shipped ones. Both inputs are read only. Standard
library only; exit 0, or 1 naming the problem."""
import argparse
import os
import sqlite3
import sys

KEY = "d.uuid, b.op, b.type, b.acc, b.result, b.layout, b.n, b.hot"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("shipped")
    ap.add_argument("new")
    ap.add_argument("-o", dest="output", required=True)
    a = ap.parse_args()
    for p in (a.shipped, a.new):
        if not os.path.isfile(p):
            sys.exit(f"drop_cases: {p}: no such database")
    if os.path.exists(a.output):
        sys.exit(f"drop_cases: {a.output}: exists; not overwritten")
    new = sqlite3.connect(f"file:{a.new}?mode=ro", uri=True)
    keys = new.execute(f"SELECT {KEY} FROM best b JOIN devices d ON d.id = b.device_id").fetchall()
    new.close()
    tmp = a.output + ".part"
    if os.path.exists(tmp):
        os.remove(tmp)
    src = sqlite3.connect(f"file:{a.shipped}?mode=ro", uri=True)
    out = sqlite3.connect(tmp)
    src.backup(out)
    src.close()
    out.execute("PRAGMA journal_mode = DELETE")
    gone = 0
    for k in keys:
        cur = out.execute(
            "DELETE FROM best WHERE device_id = (SELECT id FROM devices WHERE uuid = ?) AND op = ? "
            "AND type = ? AND acc = ? AND result = ? AND layout = ? AND n = ? AND hot = ?", k)
        gone += cur.rowcount
    out.commit()
    out.close()
    os.replace(tmp, a.output)
    print(f"{a.output}: {a.shipped} less {gone} winners of the {len(keys)} cases of {a.new}")


if __name__ == "__main__":
    main()
