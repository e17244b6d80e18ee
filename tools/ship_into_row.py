#!/usr/bin/env python3
"""ship_into_row.py IN.db SHIPPED.db UUID -o OUT.db - winners tuned on one GPU, readied to go
into the row of another GPU of the same model in a shipped database.

libredtune runs a device row's own winner of a case before any identical GPU's
(runtime/store_lookup.c, docs/api.md), so winners tuned on another H100 than the one whose row
the lookup chooses are used only for cases that row lacks. To ship them where they are faster,
they must merge into that row: this copies IN.db (one device, from `redtune export`) to OUT.db
with the device's uuid set to UUID, after checking that SHIPPED.db has a row of that uuid and
that it is the same model (name, compute capability, SM count, memory clock, bus width). Then

    build/redtune merge SHIPPED.db OUT.db -o MERGED.db   # the faster verified entry per case

IN.db and SHIPPED.db are read only. Standard library only. Exit 0, or 1 naming the problem."""
import argparse
import os
import sqlite3
import sys

MODEL = "name, cc_major, cc_minor, sm_count, mem_clock_khz, bus_width_bits"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("shipped")
    ap.add_argument("uuid")
    ap.add_argument("-o", dest="output", required=True)
    a = ap.parse_args()
    for p in (a.input, a.shipped):
        if not os.path.isfile(p):
            sys.exit(f"ship_into_row: {p}: no such database")
    if os.path.exists(a.output):
        sys.exit(f"ship_into_row: {a.output}: exists; not overwritten")
    src = sqlite3.connect(f"file:{a.input}?mode=ro", uri=True)
    devs = src.execute(f"SELECT id, uuid, {MODEL} FROM devices").fetchall()
    src.close()
    if len(devs) != 1:
        sys.exit(f"ship_into_row: {a.input}: {len(devs)} devices; one expected (redtune export)")
    ship = sqlite3.connect(f"file:{a.shipped}?mode=ro", uri=True)
    row = ship.execute(f"SELECT {MODEL} FROM devices WHERE uuid = ?", (a.uuid,)).fetchone()
    ship.close()
    if row is None:
        sys.exit(f"ship_into_row: {a.shipped}: no device of uuid {a.uuid}")
    if tuple(row) != tuple(devs[0][2:]):
        sys.exit(f"ship_into_row: {a.uuid} in {a.shipped} is {tuple(row)}, "
                 f"{a.input}'s GPU {tuple(devs[0][2:])}: not the same model")
    tmp = a.output + ".part"
    if os.path.exists(tmp):
        os.remove(tmp)
    src = sqlite3.connect(f"file:{a.input}?mode=ro", uri=True)
    out = sqlite3.connect(tmp)
    src.backup(out)   # the database as SQLite sees it (a -wal beside it included)
    src.close()
    out.execute("PRAGMA journal_mode = DELETE")
    out.execute("UPDATE devices SET uuid = ? WHERE id = ?", (a.uuid, devs[0][0]))
    out.commit()
    out.close()
    os.replace(tmp, a.output)
    print(f"{a.output}: {a.input}'s winners (GPU {devs[0][1]}) under uuid {a.uuid}")


if __name__ == "__main__":
    main()
