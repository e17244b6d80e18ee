#!/usr/bin/env python3
"""reduce_torch.py - libredtune from Python: ctypes, and a PyTorch tensor or a CuPy array.

    python3 examples/reduce_torch.py [DB]

Loads libredtune.so (REDTUNE_LIB, else build/libredtune.so beside this checkout, else the
system's), opens DB (default: none given, so rt_open(NULL) searches: $REDTUNE_DB, ./redtune.db,
beside the library, $prefix/share/redtune; docs/api.md), reduces device arrays of f32, f64 and
i32 with min, max, sum and argmin on the framework's current stream, and checks every result
against the framework's own reduction. Uses PyTorch when it imports with CUDA, else CuPy;
with neither it says so and exits 0 (skipped). Exit status 1 when a result is wrong.
"""
import ctypes
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RT_SUM, RT_PROD, RT_MIN, RT_MAX, RT_ARGMIN, RT_ARGMAX = range(6)
RT_F32, RT_F64, RT_I32, RT_U32, RT_I64, RT_U64 = range(6)


def load_library():
    names = [os.environ.get("REDTUNE_LIB"), os.path.join(HERE, "..", "build", "libredtune.so"),
             "libredtune.so.0"]
    for name in names:
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    else:
        sys.exit("reduce_torch: libredtune.so not found (run ninja, or set REDTUNE_LIB)")
    lib.rt_open_err.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                                ctypes.c_char_p, ctypes.c_size_t]
    lib.rt_reduce.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                              ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_void_p]
    lib.rt_explain.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_ulonglong,
                               ctypes.c_char_p, ctypes.c_size_t]
    lib.rt_errmsg.argtypes = [ctypes.c_void_p]
    lib.rt_errmsg.restype = ctypes.c_char_p
    lib.rt_close.argtypes = [ctypes.c_void_p]
    return lib


class Torch:
    """The framework calls the check needs, for PyTorch."""
    def __init__(self):
        import torch
        if not torch.cuda.is_available():
            raise ImportError("PyTorch has no CUDA device")
        self.t = torch
        self.name = "PyTorch " + torch.__version__
        self.dtypes = {RT_F32: torch.float32, RT_F64: torch.float64, RT_I32: torch.int32}

    def device(self):
        return self.t.cuda.current_device()

    def random(self, n, rt_type, seed):
        g = self.t.Generator(device="cuda").manual_seed(seed)
        if rt_type == RT_I32:
            return self.t.randint(-1000, 1000, (n,), generator=g, device="cuda", dtype=self.t.int32)
        return self.t.rand(n, generator=g, device="cuda", dtype=self.dtypes[rt_type]) - 0.5

    def empty(self, nbytes):
        return self.t.empty(nbytes // 8, dtype=self.t.int64, device="cuda")

    def ptr(self, a):
        return a.data_ptr()

    def stream(self):
        return self.t.cuda.current_stream().cuda_stream

    def sync(self):
        self.t.cuda.current_stream().synchronize()

    def reference(self, a, op):
        if op == RT_ARGMIN:
            return int(self.t.argmin(a).item())   # the first of equal least values
        return {RT_MIN: a.min, RT_MAX: a.max, RT_SUM: a.sum}[op]().item()

    def host_bytes(self, out):
        return out.cpu().numpy().tobytes()


class CuPy(Torch):
    """The same for CuPy (reference() is PyTorch's: the same calls work on CuPy arrays)."""
    def __init__(self):
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        self.t = cupy
        self.name = "CuPy " + cupy.__version__
        self.dtypes = {RT_F32: cupy.float32, RT_F64: cupy.float64, RT_I32: cupy.int32}

    def device(self):
        return self.t.cuda.Device().id

    def random(self, n, rt_type, seed):
        rs = self.t.random.RandomState(seed)
        if rt_type == RT_I32:
            return rs.randint(-1000, 1000, n, dtype=self.t.int32)
        return rs.random_sample(n, dtype=self.dtypes[rt_type]) - 0.5

    def empty(self, nbytes):
        return self.t.empty(nbytes // 8, dtype=self.t.int64)

    def ptr(self, a):
        return a.data.ptr

    def stream(self):
        return self.t.cuda.get_current_stream().ptr

    def sync(self):
        self.t.cuda.get_current_stream().synchronize()

    def host_bytes(self, out):
        return self.t.asnumpy(out).tobytes()


def result(raw, rt_type, op):
    """d_out's bytes as a Python value: the element, or argmin's index at offset 8."""
    if op == RT_ARGMIN:
        return int.from_bytes(raw[8:16], "little", signed=True)
    fmt = {RT_F32: "<f", RT_F64: "<d", RT_I32: "<i"}[rt_type]
    return struct.unpack_from(fmt, raw)[0]


def framework():
    for make in (Torch, CuPy):
        try:
            return make()
        except Exception as err:   # ImportError, no GPU, no driver
            why = err
    print("reduce_torch: skipped: neither PyTorch nor CuPy is importable with a CUDA device "
          "(last reason: %s)" % why)
    sys.exit(0)


def main():
    fw = framework()
    lib = load_library()
    db = sys.argv[1].encode() if len(sys.argv) > 1 else None
    ctx = ctypes.c_void_p()
    msg = ctypes.create_string_buffer(4096)
    if lib.rt_open_err(db, fw.device(), ctypes.byref(ctx), msg, len(msg)) != 0:
        sys.exit("reduce_torch: rt_open: " + msg.value.decode())
    print("reduce_torch: %s, libredtune from %s" % (fw.name, lib._name))
    bad = 0
    out = fw.empty(16)
    names = {RT_MIN: "min", RT_MAX: "max", RT_SUM: "sum", RT_ARGMIN: "argmin"}
    tnames = {RT_F32: "f32", RT_F64: "f64", RT_I32: "i32"}
    for rt_type in (RT_F32, RT_F64, RT_I32):
        for n in (1, 1000, (1 << 20) + 3, 1 << 24):
            a = fw.random(n, rt_type, seed=n + rt_type)
            for op in (RT_MIN, RT_MAX, RT_SUM, RT_ARGMIN):
                rc = lib.rt_reduce(ctx, op, rt_type, fw.ptr(a), n, fw.ptr(out), fw.stream())
                if rc != 0:
                    sys.exit("reduce_torch: rt_reduce: " + lib.rt_errmsg(ctx).decode())
                fw.sync()
                got, want = result(fw.host_bytes(out), rt_type, op), fw.reference(a, op)
                if rt_type != RT_I32 and op == RT_SUM:   # another order of additions
                    tol = (1e-4 if rt_type == RT_F32 else 1e-10) * max(1.0, n ** 0.5)
                    ok = abs(got - want) <= tol
                elif rt_type == RT_I32 and op == RT_SUM:  # libredtune wraps at 32 bits
                    ok = (got - want) % (1 << 32) == 0
                else:
                    ok = got == want
                bad += not ok
                print("%-6s %s n=%-9d redtune %-22r %s %-22r %s" % (
                    names[op], tnames[rt_type], n, got, fw.name.split()[0], want,
                    "ok" if ok else "WRONG"))
    why = ctypes.create_string_buffer(2048)
    lib.rt_explain(ctx, RT_MIN, RT_F32, 1 << 24, why, len(why))
    print(why.value.decode(), end="")
    lib.rt_close(ctx)
    print("reduce_torch: %s" % ("all results agree" if not bad else "%d WRONG" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
