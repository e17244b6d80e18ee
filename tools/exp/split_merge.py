#!/usr/bin/env python3
"""split_merge.py RETUNE.db SHIPPED.db OUT.db OP:TYPE:UUID ... - retuned winners into the device
rows the lookup takes for each operator and type (tools/ship_into_row.py, then `redtune merge`:
the faster stored entry per case), one OP:TYPE at a time, each into the row of UUID. RETUNE.db
holds one device (`redtune export`); an OP:TYPE it has no winner of is skipped, said so.
SHIPPED.db and RETUNE.db are read only. Needs build/redtune.
Exit 0, or 1 naming what failed."""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile


def run(*args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        sys.exit("split_merge.py: %s: %s" % (" ".join(args), r.stderr.strip() or r.stdout.strip()))
    print(r.stdout.strip())


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__.split("\n")[0])
    retune, shipped, out = sys.argv[1:4]
    work = tempfile.mkdtemp()
    try:
        cur = os.path.join(work, "cur.db")
        shutil.copy(shipped, cur)
        for k, spec in enumerate(sys.argv[4:]):
            op, typ, uuid = spec.split(":")
            part = os.path.join(work, "part%d.db" % k)
            shutil.copy(retune, part)
            db = sqlite3.connect(part)
            db.execute("DELETE FROM best WHERE NOT (op = ? AND type = ?)", (op, typ))
            n = db.execute("SELECT count(*) FROM best").fetchone()[0]
            db.commit()
            db.close()
            if n == 0:   # a tuning cut short before its first case: nothing to merge
                print("split_merge.py: %s holds no winner of %s %s: skipped" % (retune, op, typ))
                continue
            into = os.path.join(work, "into%d.db" % k)
            run(sys.executable, "tools/ship_into_row.py", part, cur, uuid, "-o", into)
            nxt = os.path.join(work, "merged%d.db" % k)
            run("build/redtune", "merge", cur, into, "-o", nxt)
            cur = nxt
        shutil.copy(cur, out)
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
