#!/usr/bin/env python3
"""check_ship_into_row.py [REDTUNE] - tools/ship_into_row.py end to end (TAP lines, counted by
tests/run.sh), with REDTUNE (default build/redtune) and db/tuned/h200.sql as the shipped
database:
  1  winners of another GPU of the model, faster in one case and slower in another, go into
     the shipped row by `redtune merge`: the faster one replaces the row's winner, the slower
     one does not, no device row is added; the inputs are left byte for byte;
  2  refused, exit 1, nothing written: a uuid the shipped database lacks, a GPU of another
     model (SM count), an input of two devices, an existing output, --replace naming an
     existing file or the output;
  3  with --replace BASE.db, merging BASE.db with the output puts both winners in the row, the
     slower one too, every other entry as shipped; the inputs are left byte for byte."""
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
redtune = sys.argv[1] if len(sys.argv) > 1 else os.path.join(top, "build", "redtune")
tool = os.path.join(top, "tools", "ship_into_row.py")


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def tap(n, ok, what, detail=""):
    print(f"{'ok' if ok else 'not ok'} {n} - ship_into_row: {what}")
    for line in detail.splitlines():
        print(f"#   {line}")
    return ok


def main():
    w = tempfile.mkdtemp()
    try:
        ship = os.path.join(w, "ship.db")
        r = run(redtune, "load", os.path.join(top, "db", "tuned", "h200.sql"), "-o", ship)
        if r.returncode:
            tap(1, False, "load db/tuned/h200.sql", r.stderr)
            tap(2, False, "refusals (not run)")
            return 1
        db = sqlite3.connect(ship)
        dev, uuid = db.execute("SELECT b.device_id, d.uuid FROM best b JOIN devices d "
                               "ON d.id = b.device_id GROUP BY b.device_id "
                               "ORDER BY count(*) DESC LIMIT 1").fetchone()
        cases = db.execute("SELECT op, type, acc, result, layout, n, hot, median_us FROM best "
                           "WHERE device_id = ? ORDER BY op, type, layout, n LIMIT 2",
                           (dev,)).fetchall()
        ndev = db.execute("SELECT count(*) FROM devices").fetchone()[0]
        db.close()
        # Another GPU of the model: the row alone, its uuid new, one case 10% faster, one
        # 10% slower.
        new = os.path.join(w, "new.db")
        shutil.copyfile(ship, new)
        db = sqlite3.connect(new)
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("DELETE FROM best WHERE device_id <> ?", (dev,))
        db.execute("DELETE FROM devices WHERE id <> ?", (dev,))
        db.execute("UPDATE devices SET uuid = 'another-gpu-of-the-model'")
        key = "op = ? AND type = ? AND acc = ? AND result = ? AND layout = ? AND n = ? AND hot = ?"
        for c, f in zip(cases, (0.9, 1.1)):
            db.execute(f"UPDATE best SET median_us = median_us * ?, min_us = min_us * ?, "
                       f"max_us = max_us * ? WHERE {key}", (f, f, f, *c[:7]))
        db.commit()
        db.close()
        before = (sha(new), sha(ship))
        out, merged = os.path.join(w, "out.db"), os.path.join(w, "merged.db")
        r1 = run(sys.executable, tool, new, ship, uuid, "-o", out)
        r2 = run(redtune, "merge", ship, out, "-o", merged)
        ok, detail = r1.returncode == 0 and r2.returncode == 0, r1.stderr + r2.stderr
        if ok:
            db = sqlite3.connect(merged)
            got = [db.execute(f"SELECT median_us FROM best b JOIN devices d ON d.id = b.device_id "
                              f"WHERE d.uuid = ? AND {key}", (uuid, *c[:7])).fetchone()[0]
                   for c in cases]
            n2 = db.execute("SELECT count(*) FROM devices").fetchone()[0]
            db.close()
            want = [cases[0][7] * 0.9, cases[1][7]]
            ok = all(abs(g - e) <= 1e-9 * e for g, e in zip(got, want)) and n2 == ndev \
                and before == (sha(new), sha(ship))
            detail = f"medians {got}, expected {want}; devices {n2}, expected {ndev}"
        status = 0 if tap(1, ok, "the faster winner goes into the shipped row, the slower does not",
                          detail) else 1
        # Refusals.
        other = os.path.join(w, "other.db")
        shutil.copyfile(new, other)
        db = sqlite3.connect(other)
        db.execute("UPDATE devices SET sm_count = sm_count + 1")
        db.commit()
        db.close()
        two = os.path.join(w, "two.db")     # the shipped row and the other GPU's
        r = run(redtune, "merge", ship, new, "-o", two)
        bad = [f"merge into two.db: exit {r.returncode}, {r.stderr.strip()}"] \
            if r.returncode else []
        for args, says in (((new, ship, "no-such-uuid", "-o", os.path.join(w, "r1.db")),
                            "no device of uuid no-such-uuid"),
                           ((other, ship, uuid, "-o", os.path.join(w, "r2.db")),
                            "not the same model"),
                           ((two, ship, uuid, "-o", os.path.join(w, "r3.db")),
                            "2 devices; one expected"),
                           ((new, ship, uuid, "-o", out), "exists; not overwritten"),
                           ((new, ship, uuid, "-o", os.path.join(w, "r4.db"), "--replace", new),
                            "exists; not overwritten"),
                           ((new, ship, uuid, "--replace", os.path.join(w, "r5.db"), "-o",
                             os.path.join(w, "r5.db")), "is the output")):
            made = os.path.exists(args[-1])
            r = run(sys.executable, tool, *args)
            if r.returncode != 1 or says not in r.stderr \
                    or (not made and os.path.exists(args[-1])):
                bad.append(f"expected '{says}': exit {r.returncode}, {r.stderr.strip()}")
        if not tap(2, not bad, "a wrong uuid, another model, two devices, an existing output "
                   "or --replace file are refused (exit 1, nothing written)", "\n".join(bad)):
            status = 1
        # --replace: both winners go in, whatever their times.
        out2, base = os.path.join(w, "out2.db"), os.path.join(w, "base.db")
        merged2 = os.path.join(w, "merged2.db")
        r1 = run(sys.executable, tool, new, ship, uuid, "-o", out2, "--replace", base)
        r2 = run(redtune, "merge", base, out2, "-o", merged2)
        ok, detail = r1.returncode == 0 and r2.returncode == 0, r1.stderr + r2.stderr
        if ok:
            def entries(path):
                db = sqlite3.connect(path)
                e = dict(((r[0], *r[1:8]), r[8]) for r in db.execute(
                    "SELECT d.uuid, op, type, acc, result, layout, n, hot, median_us FROM best b "
                    "JOIN devices d ON d.id = b.device_id"))
                db.close()
                return e
            got, shipped = entries(merged2), entries(ship)
            changed = {k for k in shipped if abs(got.get(k, -1) - shipped[k]) > 1e-9 * shipped[k]}
            want = {(uuid, *c[:7]) for c in cases}
            exp = [cases[0][7] * 0.9, cases[1][7] * 1.1]
            med = [got.get((uuid, *c[:7])) for c in cases]
            ok = changed == want and set(got) == set(shipped) and before == (sha(new), sha(ship)) \
                and all(g is not None and abs(g - e) <= 1e-9 * e for g, e in zip(med, exp))
            detail = f"changed {sorted(changed)}, expected {sorted(want)}; medians {med}, " \
                     f"expected {exp}; entries {len(got)}, shipped {len(shipped)}"
        if not tap(3, ok, "--replace: both winners go into the row, the slower one too", detail):
            status = 1
        return status
    finally:
        shutil.rmtree(w, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
