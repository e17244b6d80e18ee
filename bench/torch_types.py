#!/usr/bin/env python3
"""torch_types.py - issue 15's performance cases through PyTorch eager, torch.compile and
libredtune, timed side by side in one process with one method (docs/bench.md, "Types and
fused operators"; redtune_bench --type-cases times the same cases against CUB).

    python3 bench/torch_types.py --db build/redtune.db [--read-gbps X] [--reps 30]
        [--lib build/libredtune.so] [--no-compile] [--only SUBSTR,...] [--csv FILE]

Cases: sum bf16->f32 (2^28, 2^20), amax bf16 (2^28), norm2 f16 and bf16 (2^24), var_mean f32
(population; 2^26), sumsq f32 (2^26), argmax f32 (2^26). For each:
  torch eager     the one-call PyTorch spelling (and the two-pass spellings the issue quotes);
  torch.compile   the same function, mode="max-autotune-no-cudagraphs", dynamic=False,
                  compiled (and autotuned) once before it is timed;
  redtune         rt_reduce through ctypes with the type spec of include/redtune.h, on
                  torch's current stream, result into a preallocated buffer; and
                  redtune.reduce (the Python package) when it is importable and its result
                  checks (PYTHONPATH=build/python after `ninja python`);
  limit           bytes / the read bandwidth: --read-gbps (give redtune_bench's yardstick,
                  "read bandwidth X GB/s", for the C bench's limit), else measured here.
Method (redtune_bench's): CUDA events around the call; 3 warm-ups; cold: before each timed
repetition the L2 is flushed by reading a 256 MiB buffer (--flush write: by writing it); the
median of --reps (default 30) repetitions. Every implementation's result is checked against
a float64 reference on the GPU before it is timed (a WRONG one is reported, not timed).
Prints the device, torch and CUDA versions, the date, then the details and a short table.
Exit 0 after a run (WRONG results are reported), 1 on an error, 2 on a usage error.
"""
import argparse
import ctypes
import datetime
import math
import os
import statistics
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# include/redtune.h (these values are the header's; gen_consts.py would give them too)
RT_F32, RT_F16, RT_BF16 = 0, 6, 7
RT_SUM, RT_ARGMAX, RT_AMAX, RT_SUMSQ, RT_NORM2, RT_VAR_MEAN = 0, 5, 6, 8, 9, 11


def bf16_from_bits(b):
    return struct.unpack("<f", struct.pack("<I", b << 16))[0]


def f16_from_bits(b):
    return struct.unpack("<e", struct.pack("<H", b))[0]


# ---------------------------------------------------------------- libredtune through ctypes

class Redtune:
    """The C API: rt_open_err on the device, rt_reduce into a 32-byte buffer."""

    def __init__(self, torch, path, db, device):
        self.torch = torch
        if path is None:
            try:   # the package's copy when it is importable: one library in the process
                from redtune import _lib
                self.lib = _lib.library()
                path = _lib.library_path()
            except Exception:   # noqa: BLE001 - fall back to the build tree's
                path = os.environ.get("REDTUNE_LIBRARY") or os.path.join(ROOT, "build",
                                                                         "libredtune.so")
                self.lib = ctypes.CDLL(path)
        else:
            self.lib = ctypes.CDLL(path)
        self.path = path
        L = self.lib
        L.rt_open_err.restype = ctypes.c_int
        L.rt_open_err.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                                  ctypes.c_char_p, ctypes.c_size_t]
        L.rt_errmsg.restype = ctypes.c_char_p
        L.rt_errmsg.argtypes = [ctypes.c_void_p]
        L.rt_reduce.restype = ctypes.c_int
        L.rt_reduce.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_void_p]
        L.rt_explain.restype = ctypes.c_int
        L.rt_explain.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_ulonglong,
                                 ctypes.c_char_p, ctypes.c_size_t]
        self.ctx = ctypes.c_void_p()
        msg = ctypes.create_string_buffer(4096)
        rc = L.rt_open_err(db.encode(), device, ctypes.byref(self.ctx), msg, len(msg))
        if rc != 0:
            raise RuntimeError("rt_open %s: %s" % (db, msg.value.decode(errors="replace")))
        self.out = torch.empty(32, dtype=torch.uint8, device="cuda:%d" % device)
        self.outp = self.out.data_ptr()

    def explain(self, op, spec, n):
        buf = ctypes.create_string_buffer(4096)
        if self.lib.rt_explain(self.ctx, op, spec, n, buf, len(buf)) != 0:
            return "rt_explain failed: " + self.errmsg()
        return buf.value.decode(errors="replace").split("\n")[0]

    def errmsg(self):
        m = self.lib.rt_errmsg(self.ctx)
        return m.decode(errors="replace") if m else ""

    def call(self, op, spec, x):
        """The timed call: rt_reduce on torch's current stream."""
        stream = self.torch.cuda.current_stream().cuda_stream
        rc = self.lib.rt_reduce(self.ctx, op, spec, x.data_ptr(), x.numel(), self.outp, stream)
        if rc != 0:
            raise RuntimeError("rt_reduce: %d: %s" % (rc, self.errmsg()))

    def result(self, kind):
        """The result bytes decoded: kind 'f32', 'bf16', 'var_mean_f32', 'arg_f32'."""
        b = bytes(self.out.cpu().tolist())
        if kind == "f32":
            return struct.unpack_from("<f", b)[0]
        if kind == "bf16":
            return bf16_from_bits(struct.unpack_from("<H", b)[0])
        if kind == "f16":
            return f16_from_bits(struct.unpack_from("<H", b)[0])
        if kind == "var_mean_f32":
            return struct.unpack_from("<ff", b)
        if kind == "arg_f32":
            v, i = struct.unpack_from("<f4xq", b)
            return (v, i)
        raise ValueError(kind)


# ---------------------------------------------------------------- cases

def make_cases(torch):
    """(label, dtype name, n, data maker, reference kind, [(impl label, fn, compile?)],
    redtune (op, spec, result kind), package op name)."""
    inf = float("inf")
    sum32 = ("torch.sum(x, dtype=torch.float32)", lambda x: torch.sum(x, dtype=torch.float32))
    amax2 = ("x.abs().amax() (= torch.amax(x.abs()))", lambda x: x.abs().amax())
    amax1 = ("torch.linalg.vector_norm(x, inf) (one pass)",
             lambda x: torch.linalg.vector_norm(x, inf))
    norm = ("torch.linalg.vector_norm(x)", lambda x: torch.linalg.vector_norm(x))
    varm = ("torch.var_mean(x, correction=0)", lambda x: torch.var_mean(x, correction=0))
    ssq = ("(x*x).sum()", lambda x: (x * x).sum())
    amx = ("torch.argmax(x)", lambda x: torch.argmax(x))
    return [
        ("sum bf16->f32", "bfloat16", 1 << 28, "sum", [sum32], (RT_SUM, RT_BF16, "f32"), "sum"),
        ("sum bf16->f32", "bfloat16", 1 << 20, "sum", [sum32], (RT_SUM, RT_BF16, "f32"), "sum"),
        ("amax bf16", "bfloat16", 1 << 28, "amax", [amax2, amax1], (RT_AMAX, RT_BF16, "bf16"),
         "amax"),
        ("norm2 f16->f32", "float16", 1 << 24, "norm2", [norm], (RT_NORM2, RT_F16, "f32"),
         "norm2"),
        ("norm2 bf16->f32", "bfloat16", 1 << 24, "norm2", [norm], (RT_NORM2, RT_BF16, "f32"),
         "norm2"),
        ("var_mean f32 (population)", "float32", 1 << 26, "var_mean", [varm],
         (RT_VAR_MEAN, RT_F32, "var_mean_f32"), "var_mean"),
        ("sumsq f32", "float32", 1 << 26, "sumsq", [ssq], (RT_SUMSQ, RT_F32, "f32"), "sumsq"),
        ("argmax f32", "float32", 1 << 26, "argmax", [amx], (RT_ARGMAX, RT_F32, "arg_f32"),
         "argmax"),
    ]


def make_data(torch, kind, dtype, n, dev, gen):
    """redtune_bench --type-cases' distributions (not its bits): see bench/types.cu."""
    dt = getattr(torch, dtype)
    if kind == "sum":
        return torch.randint(0, 17, (n,), device=dev, generator=gen).to(dt)
    if kind == "amax":   # |x| <= 511 of both signs and one -768: max(x) is not max|x|
        x = torch.randint(-511, 512, (n,), device=dev, generator=gen).to(dt)
        x[n // 3] = -768
        return x
    if kind == "norm2":
        return torch.randint(-8, 9, (n,), device=dev, generator=gen).to(dt)
    if kind == "var_mean":
        return 2.0 + 2.0 * torch.rand(n, device=dev, generator=gen, dtype=dt)
    if kind == "sumsq":
        return 2.0 * torch.rand(n, device=dev, generator=gen, dtype=dt) - 1.0
    x = torch.randint(-1000, 1000, (n,), device=dev, generator=gen).to(dt)   # argmax
    x[n // 5] = 1000
    x[n // 2] = 1000
    return x


def reference(torch, kind, x):
    """float64 reference on the GPU: a float, (var, mean), or (value, first index)."""
    if kind == "sum":
        return x.double().sum().item()
    if kind == "amax":
        return x.double().abs().max().item()
    if kind == "norm2":
        return x.double().square().sum().sqrt().item()
    if kind == "sumsq":
        return x.double().square().sum().item()
    if kind == "var_mean":
        v, m = torch.var_mean(x.double(), correction=0)
        return (v.item(), m.item())
    m = x.max()
    return (m.item(), int((x == m).nonzero()[0, 0].item()))


def check(kind, got, ref, tol):
    """None when 'got' matches the reference, else the message."""
    if kind == "argmax":
        if isinstance(got, tuple):
            ok = got[0] == ref[0] and got[1] == ref[1]
        else:   # torch.argmax: the index only
            ok = got == ref[1]
        return None if ok else "expected %r, got %r" % (ref, got)
    if kind == "amax":
        return None if got == ref else "expected %r, got %r" % (ref, got)
    if kind == "var_mean":
        v, m = got
        scale = abs(ref[1]) + math.sqrt(ref[0])
        ok = abs(v - ref[0]) <= tol * ref[0] and abs(m - ref[1]) <= tol * scale
        return None if ok else "expected (var, mean) %r, got %r" % (ref, (v, m))
    ok = abs(got - ref) <= tol * abs(ref)
    return None if ok else "expected %.9g, got %.9g (relative tolerance %g)" % (ref, got, tol)


def torch_value(torch, kind, r):
    """A torch result as check() takes it; the tolerance of its dtype."""
    if kind == "var_mean":
        v, m = r
        return (v.item(), m.item()), {torch.float32: 1e-4}.get(v.dtype, 1e-2)
    if kind == "argmax":
        return int(r.item()), 0
    tol = {torch.float32: 1e-4, torch.float64: 1e-4, torch.float16: 2e-3}.get(r.dtype, 1e-2)
    return r.item(), tol


# ---------------------------------------------------------------- timing

class Timer:
    def __init__(self, torch, dev, flush_mode, reps, warmup):
        self.torch = torch
        self.reps, self.warmup = reps, warmup
        # 256 MiB: five times an H100's 50 MiB L2. A read (a reduction over it) leaves no
        # dirty lines for the timed call to write back, as redtune_bench's rt_bw_read.
        self.buf = torch.ones(64 << 20, dtype=torch.int32, device=dev)
        self.flush = (lambda: self.buf.zero_()) if flush_mode == "write" else \
            (lambda: torch.amax(self.buf))
        self.start = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)

    def time(self, fn, reps=None):
        """Median, min and max in microseconds of 'reps' cold calls of fn."""
        torch = self.torch
        for _ in range(self.warmup):
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(reps or self.reps):
            self.flush()
            self.start.record()
            fn()
            self.stop.record()
            self.stop.synchronize()
            ts.append(self.start.elapsed_time(self.stop) * 1000.0)
        return statistics.median(ts), min(ts), max(ts)


def measure_read_gbps(torch, timer, dev):
    """A read-only reduction over 2 GiB in PyTorch, the best of three spellings: a lower
    bound of the read bandwidth (PyTorch's reductions are not at the limit)."""
    x = torch.ones(1 << 29, dtype=torch.int32, device=dev)
    best, how = 0.0, ""
    for name, fn in (("x.view(int32).amax()", lambda: torch.amax(x)),
                     ("x.view(int64).amax()", lambda: torch.amax(x.view(torch.int64))),
                     ("x.view(float32).sum()", lambda: torch.sum(x.view(torch.float32)))):
        med = timer.time(fn)[0]
        g = (1 << 31) / (med * 1e3)
        if g > best:
            best, how = g, name
    del x
    torch.cuda.empty_cache()
    return best, how


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", default=os.path.join(ROOT, "build", "redtune.db"),
                    help="the redtune database for rt_open (default build/redtune.db)")
    ap.add_argument("--lib", default=None, help="libredtune.so (default: the package's when "
                    "importable, else $REDTUNE_LIBRARY, else build/libredtune.so)")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--reps", type=int, default=30, help="timed repetitions (>= 20; default 30)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--read-gbps", type=float, default=None,
                    help="the read bandwidth for the limit (redtune_bench's yardstick); "
                    "default: measured here with PyTorch reductions (a lower bound)")
    ap.add_argument("--flush", choices=("read", "write"), default="read",
                    help="how the L2 is flushed before each repetition (default read)")
    ap.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    ap.add_argument("--no-redtune", action="store_true", help="leave libredtune out")
    ap.add_argument("--only", default=None,
                    help="comma-separated substrings of the case labels to run (e.g. bf16,argmax)")
    ap.add_argument("--csv", default=None, help="also write every row to FILE")
    args = ap.parse_args()
    if args.reps < 20:
        ap.error("--reps: at least 20 (the median of >= 20 repetitions)")

    import torch
    if not torch.cuda.is_available():
        print("torch_types.py: no CUDA device for torch", file=sys.stderr)
        return 1
    dev = torch.device("cuda", args.device)
    torch.cuda.set_device(dev)
    cmd = " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:])
    props = torch.cuda.get_device_properties(dev)
    print("torch_types.py: %s (sm_%d%d, %d SMs, %.1f GiB), torch %s, CUDA %s, %s UTC"
          % (props.name, props.major, props.minor, props.multi_processor_count,
             props.total_memory / 2**30, torch.__version__, torch.version.cuda,
             datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")))
    print("torch_types.py: command: %s" % cmd)
    print("torch_types.py: timing: CUDA events around the call, %d warm-ups, median of %d; "
          "cold: the L2 flushed by %s a 256 MiB buffer before each repetition"
          % (args.warmup, args.reps, "reading" if args.flush == "read" else "writing"))

    timer = Timer(torch, dev, args.flush, args.reps, args.warmup)
    if args.read_gbps:
        gbps, gsrc = args.read_gbps, "given (--read-gbps: redtune_bench's read yardstick)"
    else:
        gbps, how = measure_read_gbps(torch, timer, dev)
        gsrc = "measured here: %s over 2 GiB, the best of three torch reductions (a lower " \
               "bound: give --read-gbps from redtune_bench for its yardstick)" % how
    print("torch_types.py: read bandwidth %.1f GB/s, %s" % (gbps, gsrc))

    rt = None
    if not args.no_redtune:
        try:
            rt = Redtune(torch, args.lib, args.db, args.device)
            print("torch_types.py: libredtune %s, database %s" % (rt.path, args.db))
        except Exception as err:   # noqa: BLE001 - reported, the torch columns still run
            print("torch_types.py: redtune left out: %s" % err)
    pkg = None
    if rt is not None:
        try:
            import redtune as pkg
        except Exception as err:   # noqa: BLE001 - the package is optional
            print("torch_types.py: redtune.reduce left out: the package does not import (%s); "
                  "PYTHONPATH=build/python after `ninja python`" % err)

    cases = make_cases(torch)
    if args.only:
        keys = [k.strip() for k in args.only.split(",") if k.strip()]
        cases = [c for c in cases if any(k in c[0] for k in keys)]
        if not cases:
            ap.error("--only %s leaves no case" % args.only)

    gen = torch.Generator(device=dev)
    gen.manual_seed(1)
    results = []   # (case label, n, bytes, limit, impl, status, median, min, max, note)
    for label, dtype, n, kind, fns, (op, spec, rkind), pkg_op in cases:
        print("torch_types.py: [%s] n = 2^%d" % (label, n.bit_length() - 1), file=sys.stderr)
        x = make_data(torch, kind, dtype, n, dev, gen)
        nbytes = n * x.element_size()
        limit = nbytes / (gbps * 1e3)
        ref = reference(torch, kind, x)
        impls = []
        for name, fn in fns:
            impls.append(("torch eager: " + name, fn, "torch"))
            if not args.no_compile:
                impls.append(("torch.compile: " + name, None, "compile", fn))
        for item in impls:
            impl_name, fn, how = item[0], item[1], item[2]
            note = ""
            try:
                if how == "compile":
                    fn = torch.compile(item[3], mode="max-autotune-no-cudagraphs", dynamic=False)
                    fn(x)   # compile and autotune, untimed
                    torch.cuda.synchronize()
                got, tol = torch_value(torch, kind, fn(x))
                why = check(kind, got, ref, tol)
                if why:
                    results.append((label, n, nbytes, limit, impl_name, "WRONG", 0, 0, 0, why))
                    continue
                med, lo, hi = timer.time(lambda: fn(x))
                results.append((label, n, nbytes, limit, impl_name, "ok", med, lo, hi, note))
            except Exception as err:   # noqa: BLE001 - reported in the table
                results.append((label, n, nbytes, limit, impl_name, "ERROR", 0, 0, 0,
                                str(err).split("\n")[0][:300]))
        if rt is not None:
            name = "redtune: rt_reduce (ctypes)"
            try:
                pick = rt.explain(op, spec, n)
                rt.out.fill_(0xa5)
                rt.call(op, spec, x)
                torch.cuda.synchronize()
                got = rt.result(rkind)
                why = check(kind, got, ref, 1e-4)
                if why:
                    results.append((label, n, nbytes, limit, name, "WRONG", 0, 0, 0, why))
                else:
                    med, lo, hi = timer.time(lambda: rt.call(op, spec, x))
                    results.append((label, n, nbytes, limit, name, "ok", med, lo, hi, pick))
            except Exception as err:   # noqa: BLE001 - reported in the table
                results.append((label, n, nbytes, limit, name, "ERROR", 0, 0, 0, str(err)[:300]))
        if pkg is not None:
            name = "redtune.reduce(x, %r) (package)" % pkg_op
            try:
                r = pkg.reduce(x, pkg_op)
                torch.cuda.synchronize()
                if kind == "var_mean":
                    got = tuple(float(v) for v in r)
                elif kind == "argmax":
                    got = int(r.item())
                else:
                    got = float(r.item())
                why = check(kind, got, ref, 1e-4 if rkind == "f32" else 1e-2)
                if why:
                    results.append((label, n, nbytes, limit, name, "WRONG", 0, 0, 0, why))
                else:
                    med, lo, hi = timer.time(lambda: pkg.reduce(x, pkg_op))
                    results.append((label, n, nbytes, limit, name, "ok", med, lo, hi, ""))
            except Exception as err:   # noqa: BLE001 - not exposed yet, or refused
                results.append((label, n, nbytes, limit, name, "ERROR", 0, 0, 0,
                                str(err).split("\n")[0][:300]))
        del x
        torch.cuda.empty_cache()

    report(results, gbps, args)
    return 0


def report(results, gbps, args):
    def n_text(n):
        return "2^%d" % (n.bit_length() - 1)

    print("\nlimit = bytes / %.1f GB/s; medians in microseconds; %% = limit / time" % gbps)
    print("%-26s %5s %8s  %-58s %10s %7s  %s" % ("case", "n", "bytes", "implementation",
                                                  "median", "%limit", "min..max / note"))
    last = None
    for label, n, nbytes, limit, impl, st, med, lo, hi, note in results:
        key = (label, n)
        if key != last:
            print("%-26s %5s %8s  %-58s %10.2f" % (label, n_text(n), "%.0f MiB" % (nbytes / 2**20),
                                                    "limit", limit))
            last = key
        if st == "ok":
            print("%-26s %5s %8s  %-58s %10.2f %6.1f%%  %.2f..%.2f %s"
                  % ("", "", "", impl, med, 100 * limit / med, lo, hi, note))
        else:
            print("%-26s %5s %8s  %-58s %10s %7s  %s" % ("", "", "", impl, st, "", note))

    # The short table: the best eager and compile spellings, redtune's ctypes call.
    print("\nsummary (medians in us; best spelling per column; * redtune slower)")
    print("%-26s %5s %10s %10s %10s %10s %8s %9s %9s"
          % ("case", "n", "eager", "compile", "redtune", "limit", "rt%lim", "rt/eager",
             "rt/compile"))
    keys = []
    for r in results:
        if (r[0], r[1]) not in keys:
            keys.append((r[0], r[1]))
    for label, n in keys:
        rs = [r for r in results if (r[0], r[1]) == (label, n)]
        limit = rs[0][3]

        def best(prefix):
            ts = [r[6] for r in rs if r[4].startswith(prefix) and r[5] == "ok"]
            return min(ts) if ts else None

        e, c, t = best("torch eager"), best("torch.compile"), best("redtune: rt_reduce")

        def f(v):
            return "%10.2f" % v if v else "%10s" % "-"

        def q(a, b):
            if not a or not b:
                return "%9s" % "-"
            return "%8.2f%s" % (a / b, "*" if a > b else " ")
        print("%-26s %5s %s %s %s %10.2f %8s %s %s"
              % (label, n_text(n), f(e), f(c), f(t), limit,
                 ("%.1f%%" % (100 * limit / t)) if t else "-", q(t, e), q(t, c)))
    if args.csv:
        with open(args.csv, "w") as fh:
            fh.write("case,n,bytes,limit_us,read_gbps,implementation,status,median_us,min_us,"
                     "max_us,note\n")
            for label, n, nbytes, limit, impl, st, med, lo, hi, note in results:
                fh.write('"%s",%d,%d,%.4f,%.2f,"%s",%s,%.3f,%.3f,%.3f,"%s"\n'
                         % (label, n, nbytes, limit, gbps, impl.replace('"', "'"), st, med, lo,
                            hi, note.replace('"', "'")))


if __name__ == "__main__":
    sys.exit(main())
