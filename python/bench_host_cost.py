#!/usr/bin/env python3
"""bench_host_cost.py - the host cost of a cached Python reduction, side by side with the
framework's own: calls per second of redtune.sum(x) and torch.sum(x) (and, when CuPy is
there, cupy.sum) on a 1K-element float32 tensor, each in one loop of N calls, with the
stream synchronised once at the end (docs/results.md records the figures).

    PYTHONPATH=build/python python3 python/bench_host_cost.py [--n 1024] [--calls 100000]

Prints one line per call and the ratio; exit 0. Needs a GPU and torch (CuPy optional).
"""
import argparse
import time


def rate(fn, calls, sync, repeats=5):
    """The best of 'repeats' loops of 'calls' calls, as calls per second."""
    for _ in range(max(calls // 10, 100)):   # warm: the kernel chosen and loaded, caches hot
        fn()
    sync()
    best = 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        best = max(best, calls / (time.perf_counter() - t0))
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1024, help="elements (default 1024)")
    ap.add_argument("--calls", type=int, default=100000, help="calls per loop")
    args = ap.parse_args()

    import torch
    import redtune
    x = torch.rand(args.n, device="cuda")
    sync = torch.cuda.synchronize
    assert abs(redtune.sum(x).item() - torch.sum(x).item()) < 1e-3
    rows = [("torch.sum(x)", rate(lambda: torch.sum(x), args.calls, sync)),
            ("redtune.sum(x)", rate(lambda: redtune.sum(x), args.calls, sync))]
    out = torch.empty((), device="cuda")
    rows.append(("redtune.sum(x, out=out)", rate(lambda: redtune.sum(x, out=out), args.calls,
                                                 sync)))
    try:
        import cupy
        y = cupy.asarray(x)
        csync = cupy.cuda.Device().synchronize
        rows.append(("cupy.sum(y)", rate(lambda: cupy.sum(y), args.calls, csync)))
        rows.append(("redtune.sum(y) [CuPy]", rate(lambda: redtune.sum(y), args.calls, csync)))
    except Exception as err:   # noqa: BLE001 - CuPy is optional
        print("# CuPy: %s" % err)
    print("# %s, torch %s, redtune %s (%s), n = %d, %d calls per loop, best of 5"
          % (torch.cuda.get_device_name(), torch.__version__, redtune.__version__,
             redtune.library_path(), args.n, args.calls))
    for name, r in rows:
        print("%-26s %10.0f calls/s  %6.2f us/call" % (name, r, 1e6 / r))
    print("redtune.sum / torch.sum: %.2f (above 1: redtune's call is cheaper)"
          % (rows[1][1] / rows[0][1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
