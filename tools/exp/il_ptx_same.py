#!/usr/bin/env python3
"""il_ptx_same.py - axis_cols IL = 2 with CHUNK = 0 against IL = 1 with CHUNK = 0: the PTX (sm_90,
NVRTC in-process as tools/ptx_diff.py compiles, its normalizing) of each pair, for five configs x
sum f32, sum bf16, argmax f32, min f64 (fourteenth session: the template compiles IL = 2 unsplit
as IL = 1). Run from the repository root after `ninja build/redtune`; prints the pairs that
differ and "N identical, M differ"; exit 1 when any differs."""
import subprocess, sys
sys.path.insert(0, "tools")
import ptx_diff as P
cfgs = ["B=1024 TX=256 CV=2 U=1", "B=512 TX=256 CV=2 U=1", "B=512 TX=64 CV=2 U=4", "B=256 TX=32 CV=4 U=2", "B=1024 TX=16 CV=8 U=1"]
same = diff = 0
for op, ty in [("sum", "f32"), ("sum", "bf16"), ("argmax", "f32"), ("min", "f64")]:
    for c in cfgs:
        if "CV=8" in c and ty != "bf16" or "CV=4" in c and ty == "f64": continue
        ptx = []
        for il in (1, 2):
            src = subprocess.run(["build/redtune", "emit", "axis_cols"] + c.split() + ["CHUNK=0", f"IL={il}", "--op", op, "--type", ty],
                                 capture_output=True, text=True, check=True).stdout
            p, log = P.nvrtc(src, "compute_90", False)
            assert p, log
            ptx.append(P.level2(P.level1(p)))
        if ptx[0] == ptx[1]: same += 1
        else: diff += 1; print("differs:", op, ty, c)
print(f"{same} identical, {diff} differ")
sys.exit(1 if diff else 0)
