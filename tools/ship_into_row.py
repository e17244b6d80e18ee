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

merge keeps the faster stored entry of a case, and times stored by runs of other days need
not compare (another machine of the model, another day's clocks). With --replace BASE.db it
also writes BASE.db, SHIPPED.db without that row's winners of the cases IN.db holds, so that

    build/redtune merge BASE.db OUT.db -o MERGED.db      # IN's winners in the row, whatever their times

(for an A B bench of today's winners against the shipped ones, or to ship what such a bench
chose). IN.db and SHIPPED.db are read only. Standard library only. Exit 0, or 1 naming the
problem."""
import argparse
import contextlib
import os
import sqlite3
import sys

MODEL = "name, cc_major, cc_minor, sm_count, mem_clock_khz, bus_width_bits"
# a case of the best table: what a winner is the winner of
CASE = "op, type, acc, result, layout, n, hot"


@contextlib.contextmanager
def copy_of(src, dst):
    """with copy_of(SRC, DST) as db: DST a copy of SRC as SQLite sees it (a -wal beside it
    included), in rollback-journal mode, changed by the block and committed, put in place
    whole (as DST.part, then renamed) or not at all."""
    tmp = dst + ".part"
    if os.path.exists(tmp):
        os.remove(tmp)
    s = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    db = sqlite3.connect(tmp)
    s.backup(db)
    s.close()
    db.execute("PRAGMA journal_mode = DELETE")
    try:
        yield db
        db.commit()
    except BaseException:
        db.close()
        os.remove(tmp)
        raise
    db.close()
    os.replace(tmp, dst)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("shipped")
    ap.add_argument("uuid")
    ap.add_argument("-o", dest="output", required=True)
    ap.add_argument("--replace", metavar="BASE")
    a = ap.parse_args()
    for p in (a.input, a.shipped):
        if not os.path.isfile(p):
            sys.exit(f"ship_into_row: {p}: no such database")
    if a.replace and os.path.abspath(a.replace) == os.path.abspath(a.output):
        sys.exit(f"ship_into_row: --replace {a.replace} is the output")
    for p in (a.output, a.replace):
        if p and os.path.exists(p):
            sys.exit(f"ship_into_row: {p}: exists; not overwritten")
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
    if a.replace:
        src = sqlite3.connect(f"file:{a.input}?mode=ro", uri=True)
        cases = src.execute(f"SELECT {CASE} FROM best").fetchall()
        src.close()
        marks = ", ".join("?" * len(CASE.split(",")))
        with copy_of(a.shipped, a.replace) as base:
            gone = sum(base.execute(f"DELETE FROM best WHERE device_id = (SELECT id FROM devices "
                                    f"WHERE uuid = ?) AND ({CASE}) = ({marks})",
                                    (a.uuid, *c)).rowcount for c in cases)
        print(f"{a.replace}: {a.shipped} without its {gone} winners (uuid {a.uuid}) of the "
              f"{len(cases)} cases of {a.input}")
    with copy_of(a.input, a.output) as out:
        out.execute("UPDATE devices SET uuid = ? WHERE id = ?", (a.uuid, devs[0][0]))
    print(f"{a.output}: {a.input}'s winners (GPU {devs[0][1]}) under uuid {a.uuid}")


if __name__ == "__main__":
    main()
