#!/usr/bin/env python3
"""check_variants.py [--family F] [--same-ptx OLD_REDTUNE] SQL... - the shipped dumps'
(db/tuned/*.sql) segmented winners, written by build/redtune emit and compiled by nvcc for each
row's architecture; no GPU.

Without --same-ptx: every winner in the variants the runtime library makes of it for a call
(runtime/api_seg.c seg_config): V=1 for pointers it cannot vouch for, LONG=0 for
RT_SEG_UNIFORM, OFF64=1 for RT_SEG_OFF64 and all three together (OFF64 for offsets winners;
V and LONG where the family has them), compiled to a CUBIN. A failure would be the call's
error (RT_ENVRTC), not a fallback.

With --same-ptx OLD_REDTUNE: each winner as it is, emitted by OLD_REDTUNE (the binary that
measured it, e.g. unpacked from a device session's pack) and by build/redtune (the committed
templates), both compiled to PTX under the same file name (internal names follow it) and
compared: after the shipped CUBINs are re-keyed to new template text, "same" says the shipped
kernels are the ones measured.

Prints one line per failure (or difference) and a count; exit 1 on any, 2 on a usage error.

    python3 tools/check_variants.py db/tuned/h100.sql db/tuned/h200.sql
    python3 tools/check_variants.py --same-ptx /tmp/c26/redtune --family seg_pipe db/tuned/h200.sql
    REDTUNE=build/redtune NVCC=/usr/local/cuda/bin/nvcc JOBS=2 python3 tools/check_variants.py F

The twenty-sixth session found seg_pipe's shipped len1 winners failing with 64-bit offsets
(docs/results.md); the first form is the check that would have caught it.
"""
import argparse
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


def rows(sql, tmp, family):
    """(arch, op, type, family, params, layout) of each segmented winner of a dump."""
    db = os.path.join(tmp, os.path.basename(sql) + ".db")
    subprocess.run([REDTUNE, "load", sql, "-o", db, "--force"], check=True, capture_output=True)
    out = subprocess.run([REDTUNE, "best", "--db", db, "--format", "csv"], check=True,
                         capture_output=True, text=True).stdout
    for r in csv.DictReader(io.StringIO(out)):
        if r["layout"].startswith(("offsets", "keys")) and family in (None, r["family"]):
            yield r["arch"], r["op"], r["type"], r["family"], r["params"], r["layout"]


def variants(rs):
    """The distinct (arch, op, type, family, params) units of the runtime's variants."""
    for arch, op, ty, fam, params, layout in rs:
        base = dict(kv.split("=", 1) for kv in params.split())
        for var in VARIANTS:
            if "OFF64" in var and not layout.startswith("offsets"):
                continue
            d = dict(base)
            for k, v in var.items():
                if k in d or k == "OFF64":
                    d[k] = v
            yield arch, op, ty, fam, " ".join("%s=%s" % kv for kv in d.items())


def compile_unit(redtune, unit, out):
    """out (a .cubin or .ptx path) from the unit as redtune emits it; None, or the error."""
    arch, op, ty, fam, params = unit
    e = subprocess.run([redtune, "emit", fam, *params.split(), "--op", op, "--type", ty],
                       capture_output=True, text=True)
    if e.returncode:
        return "emit: " + e.stderr.strip()[:300]
    src = os.path.join(os.path.dirname(out), "unit.cu")
    with open(src, "w") as f:
        f.write(e.stdout)
    kind = "-ptx" if out.endswith(".ptx") else "-cubin"
    c = subprocess.run([NVCC, "-arch=" + arch, kind, src, "-o", out], capture_output=True, text=True)
    return None if c.returncode == 0 else c.stderr.strip()[:300]


def check(unit, tmp, old):
    """None when the unit compiles (and, with old, gives old's PTX), else what went wrong."""
    d = tempfile.mkdtemp(dir=tmp)
    if old is None:
        return compile_unit(REDTUNE, unit, os.path.join(d, "unit.cubin"))
    outs = []
    for tag, bin_ in (("old", old), ("new", REDTUNE)):
        out = os.path.join(d, "unit.ptx")   # one path for both: internal names follow it
        err = compile_unit(bin_, unit, out)
        if err:
            return "%s: %s" % (tag, err)
        with open(out, "rb") as f:
            outs.append(f.read())
        os.remove(out)
    return None if outs[0] == outs[1] else "the PTX differs"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--family", help="only this family's winners")
    ap.add_argument("--same-ptx", metavar="OLD_REDTUNE",
                    help="compare each winner's PTX as OLD_REDTUNE and build/redtune emit it")
    ap.add_argument("sql", nargs="+")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rs = [r for sql in a.sql for r in rows(sql, tmp, a.family)]
        if a.same_ptx:
            us = sorted({r[:5] for r in rs})
        else:
            us = sorted(set(variants(rs)))
        with ThreadPoolExecutor(JOBS) as ex:
            res = list(ex.map(lambda u: (u, check(u, tmp, a.same_ptx)), us))
    bad = [(u, err) for u, err in res if err]
    for (arch, op, ty, fam, params), err in bad:
        print("FAILED %s %s %s %s %s\n  %s" % (arch, op, ty, fam, params, err.replace("\n", "\n  ")))
    what = "units with the same PTX" if a.same_ptx else "variant units compiled"
    print("%d segmented winners, %d distinct units: %d %s, %d failed"
          % (len(rs), len(us), len(res) - len(bad), what, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
