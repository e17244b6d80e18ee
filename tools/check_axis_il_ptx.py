#!/usr/bin/env python3
"""check_axis_il_ptx.py [REDTUNE] - axis_cols with IL = 2 and CHUNK = 0 must compile to the code of
IL = 1 and CHUNK = 0 (templates/axis_cols.cu: without splits the rows interleaved over the splits
are IL = 1's rows, and lua/spaces/axis.lua offers IL = 2 alone on that ground; the general walk's
run-time step made IL = 2 unsplit up to 2.35x slower, docs/axis.md). For five configs x sum f32,
sum bf16, argmax f32 and min f64, each pair of units is emitted by REDTUNE (default
build/redtune) and compiled to PTX (compute_90) by NVRTC in-process, as tools/ptx_diff.py does,
and compared after its normalizing. One TAP line per pair ("# SKIP" for all when NVRTC cannot be
loaded); exit 1 when a pair differs or a unit does not compile. Run from the repository root."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
import ptx_diff  # noqa: E402  (tools/ptx_diff.py: nvrtc(), level1(), level2())

CONFIGS = ["B=1024 TX=256 CV=2 U=1", "B=512 TX=256 CV=2 U=1", "B=512 TX=64 CV=2 U=4",
           "B=256 TX=32 CV=4 U=2", "B=1024 TX=16 CV=8 U=1"]
CASES = [("sum", "f32", 4), ("sum", "bf16", 2), ("argmax", "f32", 4), ("min", "f64", 8)]


def pairs():
    for op, ty, size in CASES:
        for c in CONFIGS:
            cv = int(c.split("CV=")[1].split()[0])
            if cv * size <= 16:      # a vector is at most 16 bytes
                yield op, ty, c


def main():
    redtune = sys.argv[1] if len(sys.argv) > 1 else "build/redtune"
    todo = list(pairs())
    try:
        ptx_diff.LIB = ptx_diff.load_nvrtc()
    except SystemExit as e:
        for k, (op, ty, c) in enumerate(todo, 1):
            print(f"not ok {k} - axis_cols IL=2 CHUNK=0 is IL=1's PTX: {op} {ty} {c} # SKIP {e}")
        return 0
    bad = 0
    for k, (op, ty, c) in enumerate(todo, 1):
        ptx, why = [], ""
        for il in (1, 2):
            r = subprocess.run([redtune, "emit", "axis_cols"] + c.split()
                               + ["CHUNK=0", f"IL={il}", "--op", op, "--type", ty],
                               capture_output=True, text=True)
            if r.returncode != 0:
                why = f"emit IL={il}: {r.stderr.strip()[:200]}"
                break
            p, log = ptx_diff.nvrtc(r.stdout, "compute_90", False)
            if p is None:
                why = f"NVRTC IL={il}: {log.strip()[:200]}"
                break
            ptx.append(ptx_diff.level2(ptx_diff.level1(p)))
        if not why and ptx[0] != ptx[1]:
            why = "the PTX differs"
        bad += bool(why)
        print(f"{'not ok' if why else 'ok'} {k} - axis_cols IL=2 CHUNK=0 is IL=1's PTX: "
              f"{op} {ty} {c}{': ' + why if why else ''}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
