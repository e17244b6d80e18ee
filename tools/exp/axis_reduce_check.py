#!/usr/bin/env python3
"""axis_reduce_check.py DB - `redtune reduce --shape` against torch along an axis, with DB.

For argmax and max of f32 and bf16 over shapes of issue 16 (rows, columns, the 3-D middle
axis), seeded integer data in -128..127 (many ties, so argmax must give the first index):
redtune's values and indices against torch's (torch.max along dim 1 of [outer, len, inner]
gives the first index of the maximum). Prints what the library chose (--explain's kernel and
database entry lines) and one verdict line per case; exit 1 if any case differs. Needs
build/redtune and torch (the GPU machine)."""
import os
import subprocess
import sys
import tempfile

import torch

CASES = [("argmax", "f32", (1, 65536, 128)), ("argmax", "bf16", (1, 65536, 128)),
         ("argmax", "f32", (64, 2048, 512)), ("argmax", "bf16", (4096, 4096, 1)),
         ("argmax", "f32", (1, 16, 4194304)), ("max", "f32", (16, 4194304, 1)),
         ("max", "f32", (1, 32768, 1024))]


def main():
    db, bad = sys.argv[1], 0
    with tempfile.TemporaryDirectory() as tmp:
        for op, ty, (o, l, i) in CASES:
            dt = torch.float32 if ty == "f32" else torch.bfloat16
            g = torch.Generator().manual_seed(1)
            x = torch.randint(-128, 128, (o, l, i), generator=g).to(dt)
            path = os.path.join(tmp, "in.bin")
            raw = x.view(torch.int32 if ty == "f32" else torch.int16)
            raw.numpy().tofile(path)
            args = ["build/redtune", "reduce", "--op", op, "--type", ty, "--shape", f"{o},{l},{i}",
                    "--in", path, "--db", db]
            ex = subprocess.run(args + ["--explain"], capture_output=True, text=True)
            lines = [s for s in ex.stdout.splitlines() if "kernel:" in s or "database entry" in s]
            got = subprocess.run(args, capture_output=True, text=True)
            if got.returncode or ex.returncode:
                print(f"{op} {ty} {o}x{l}x{i}: redtune failed: {got.stderr.strip()[:300]}")
                bad += 1
                continue
            vals = [s.split() for s in got.stdout.splitlines() if s.strip()]
            want_v, want_i = torch.max(x.float(), dim=1)
            want_v, want_i = want_v.reshape(-1).tolist(), want_i.reshape(-1).tolist()
            ok = len(vals) == len(want_v)
            for k, w in enumerate(vals if ok else []):
                if float(w[0]) != want_v[k] or (op == "argmax" and int(w[1]) != want_i[k]):
                    ok = False
                    print(f"  output {k}: redtune {w}, torch {want_v[k]} {want_i[k]}")
                    break
            print(f"{op} {ty} {o}x{l}x{i}: {'ok' if ok else 'WRONG'} ({len(vals)} outputs)")
            for s in lines:
                print("   " + s.strip())
            bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
