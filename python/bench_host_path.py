#!/usr/bin/env python3
"""bench_host_path.py - the Python side of a cached redtune.sum(x) on a torch tensor, measured
without a GPU and without torch (issue 11's host cost; bench_host_cost.py is the GPU figure).

A stand-in 'torch' module is put in sys.modules: its Tensor's attributes are slots and its
methods bound built-ins (data_ptr, numel, is_contiguous, get_device), so reading them costs
about what torch's C getters do; torch.empty is a small Python function (its cost is printed on
its own line: torch's real allocation is not modelled). libredtune is replaced by a no-op
rt_reduce compiled with $CC into a temporary library and called through ctypes with the
package's own prototypes, so the ctypes conversions are counted; --stub python (or no C
compiler) uses a Python function returning 0 instead. The context of device 0 is faked.

    PYTHONPATH=build/python python3 python/bench_host_path.py [--calls 200000] [--stub c|python]

Prints microseconds of CPU time per call (best of 9 loops) for each call and the reference lines.
"""
import argparse
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import time
import timeit
import types

STUB_C = r"""
int rt_reduce(void *h, int op, int type, const void *x, unsigned long long n, void *out,
              void *stream)
{
    (void)h; (void)op; (void)type; (void)x; (void)n; (void)out; (void)stream;
    return 0;
}
const char *rt_errmsg(void *h) { (void)h; return ""; }
"""


def fake_torch():
    """A module with what redtune reads of torch, at roughly torch's attribute cost."""
    t = types.ModuleType("torch")

    class dtype:
        __slots__ = ("name",)

        def __init__(self, name):
            self.name = name

        def __repr__(self):
            return "torch." + self.name

    class device:
        __slots__ = ("type", "index")

        def __init__(self, kind, index=None):
            self.type, self.index = kind, index

    for name in ("float32", "float64", "int32", "uint32", "int64", "uint64", "uint8"):
        setattr(t, name, dtype(name))
    t.strided = "strided"
    t.device = device
    ptrs = iter(range(0x7f00_0000_0000, 1 << 62, 256))

    class Tensor:
        __slots__ = ("shape", "dtype", "device", "is_cuda", "layout", "data_ptr", "numel",
                     "is_contiguous", "get_device")

        def __init__(self, shape, dt, dev):
            n = 1
            for d in shape:
                n *= d
            self.shape, self.dtype, self.device = shape, dt, dev
            self.is_cuda, self.layout = True, "strided"
            self.data_ptr, self.numel = next(ptrs).__index__, n.__index__
            self.is_contiguous, self.get_device = True.__bool__, dev.index.__index__

        def __getitem__(self, i):
            return self

        def unbind(self):   # the fast path's batch of 0-d results (_fastpath._refill)
            return [Tensor((), self.dtype, self.device) for _ in range(self.shape[0])]

    def empty(size, dtype=None, device=None):
        return Tensor((size,) if size.__class__ is int else size, dtype, device)

    t.Tensor, t.empty = Tensor, empty
    t._C = types.SimpleNamespace(_cuda_getCurrentRawStream=(0x5000).__add__)
    t.jit = types.SimpleNamespace(is_scripting=lambda: False)

    def is_compiling():   # torch's: a Python function asking torch.jit first
        if t.jit.is_scripting():
            return False
        return False

    t.compiler = types.SimpleNamespace(is_compiling=is_compiling)
    return t


def stub_library(kind):
    """(a stand-in for the loaded libredtune, what it is)."""
    cc = shutil.which(os.environ.get("CC", "cc"))
    if kind == "c" and cc:
        tmp = tempfile.mkdtemp(prefix="redtune_stub_")
        src, so = os.path.join(tmp, "stub.c"), os.path.join(tmp, "libstub.so")
        with open(src, "w") as f:
            f.write(STUB_C)
        subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", so, src], check=True)
        lib = ctypes.CDLL(so)
        from redtune import _lib
        for name in ("rt_reduce", "rt_errmsg"):
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = _lib._PROTOS[name]
        return lib, "no-op C rt_reduce through ctypes"
    return types.SimpleNamespace(rt_reduce=lambda *a: 0, rt_errmsg=lambda h: b""), \
        "Python stub rt_reduce returning 0"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=200000, help="calls per loop")
    ap.add_argument("--stub", choices=("c", "python"), default="c")
    args = ap.parse_args()

    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0] or ".") == here:
        del sys.path[0]   # python/redtune lacks the generated _consts: use PYTHONPATH's
    torch = fake_torch()
    sys.modules["torch"] = torch
    import redtune
    from redtune import _core, _lib
    lib, what = stub_library(args.stub)
    _lib._lib, _lib._lib_path = lib, "stub"
    _core._contexts[0] = types.SimpleNamespace(_h=0xC7, device=0, _ops={})
    dev = torch.device("cuda", 0)
    x = torch.Tensor((1024,), torch.float32, dev)
    out = torch.Tensor((), torch.float32, dev)
    dt = torch.float32
    assert redtune.sum(x) is not None and redtune.sum(x, out=out) is out
    env = dict(redtune=redtune, torch=torch, x=x, out=out, dt=dt, dev=dev, lib=lib)
    rows = [("redtune.sum(x)", "redtune.sum(x)"),
            ("redtune.sum(x, out=out)", "redtune.sum(x, out=out)"),
            ("redtune.reduce(x, 'sum')", "redtune.reduce(x, 'sum')"),
            ("redtune.argmax(x)", "redtune.argmax(x)"),
            ("[ref] fake torch.empty((), ...)", "torch.empty((), dtype=dt, device=dev)"),
            ("[ref] stub rt_reduce call alone", "lib.rt_reduce(0xC7, 0, 0, 0x7f0000000000, "
             "1024, 0x7f0000001000, 0x5000)")]
    res = {}
    for name, stmt in rows:
        # CPU time of this process, so that the other programs of a shared machine count
        # less (it is the host cost in any case: nothing here waits).
        timer = timeit.Timer(stmt, timer=time.process_time, globals=env)
        timer.timeit(args.calls)   # warm: arenas, caches
        t = min(timer.repeat(number=args.calls, repeat=9)) / args.calls
        res[name] = t * 1e6
    print("# Python %s, %s, %d calls per loop, best of 9; redtune from %s"
          % (sys.version.split()[0], what, args.calls, os.path.dirname(redtune.__file__)))
    for name, _ in rows:
        print("%-34s %6.3f us/call" % (name, res[name]))
    print("%-34s %6.3f us/call" % ("redtune.sum(x) less fake empty",
                                   res["redtune.sum(x)"] - res[rows[4][0]]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
