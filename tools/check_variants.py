#!/usr/bin/env python3
"""check_variants.py SQL... - compile every segmented winner of the shipped dumps (db/tuned/*.sql)
in the variants the runtime library makes of it for a call (runtime/api_seg.c seg_config):
V=1 for pointers it cannot vouch for, LONG=0 for RT_SEG_UNIFORM, OFF64=1 for RT_SEG_OFF64 and
all three together; offsets winners take OFF64, every winner V and LONG where its family has
them. Each unit is written by build/redtune emit and compiled by nvcc -cubin for the row's
architecture; a failure would be the call's error (RT_ENVRTC), not a fallback. Prints one line
per failure and a count; exit 1 on any failure, 2 on a usage error.

    python3 tools/check_variants.py db/tuned/h100.sql db/tuned/h200.sql
    REDTUNE=build/redtune NVCC=/usr/local/cuda/bin/nvcc JOBS=2 python3 tools/check_variants.py F

The twenty-sixth session found seg_pipe's shipped len1 winners failing with 64-bit offsets
(docs/results.md); this is the check that would have caught it.
"""
import csv
import io
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

REDTUNE = os.environ.get("REDTUNE", "build/redtune")
NVCC = os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")
JOBS = int(os.environ.get("JOBS", os.cpu_count() or 2))
VARIANTS = [{"V": "1"}, {"LONG": "0"}, {"OFF64": "1"}, {"OFF64": "1", "V": "1", "LONG": "0"}]


def rows(sql, tmp):
    db = os.path.join(tmp, os.path.basename(sql) + ".db")
    subprocess.run([REDTUNE, "load", sql, "-o", db, "--force"], check=True, capture_output=True)
    out = subprocess.run([REDTUNE, "best", "--db", db, "--format", "csv"], check=True,
                         capture_output=True, text=True).stdout
    for r in csv.DictReader(io.StringIO(out)):
        if r["layout"].startswith(("offsets", "keys")):
            yield r["arch"], r["op"], r["type"], r["family"], r["params"], r["layout"]


def units(rs):
    seen = set()
    for arch, op, ty, fam, params, layout in rs:
        base = dict(kv.split("=", 1) for kv in params.split())
        for var in VARIANTS:
            if "OFF64" in var and not layout.startswith("offsets"):
                continue
            d = dict(base)
            for k, v in var.items():
                if k in d or k == "OFF64":
                    d[k] = v
            key = (arch, op, ty, fam, " ".join("%s=%s" % kv for kv in d.items()))
            if key not in seen:
                seen.add(key)
                yield key


def build(unit, tmp):
    arch, op, ty, fam, params = unit
    fd, src = tempfile.mkstemp(suffix=".cu", dir=tmp)
    os.close(fd)
    e = subprocess.run([REDTUNE, "emit", fam, *params.split(), "--op", op, "--type", ty],
                       capture_output=True, text=True)
    if e.returncode:
        return unit, "emit: " + e.stderr.strip()[:300]
    with open(src, "w") as f:
        f.write(e.stdout)
    c = subprocess.run([NVCC, "-arch=" + arch, "-cubin", src, "-o", src + ".cubin"],
                       capture_output=True, text=True)
    return unit, None if c.returncode == 0 else c.stderr.strip()[:300]


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        sys.stderr.write(__doc__)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        rs = []
        for sql in sys.argv[1:]:
            rs.extend(rows(sql, tmp))
        us = sorted(set(units(rs)))
        with ThreadPoolExecutor(JOBS) as ex:
            res = list(ex.map(lambda u: build(u, tmp), us))
    bad = [(u, err) for u, err in res if err]
    for (arch, op, ty, fam, params), err in bad:
        print("FAILED %s %s %s %s %s\n  %s" % (arch, op, ty, fam, params, err.replace("\n", "\n  ")))
    print("%d segmented winners, %d distinct variant units: %d compiled, %d failed"
          % (len(rs), len(us), len(res) - len(bad), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
