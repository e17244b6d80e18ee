#!/usr/bin/env python3
"""torch_axis.py - issue 16's reductions along an axis through PyTorch eager, torch.compile
and redtune (the Python package), timed side by side in one process with one method on the
same torch tensors (docs/bench.md, "Along an axis"; redtune_bench --axis times the same
shapes against CUB).

    PYTHONPATH=build/python python3 bench/torch_axis.py [--db build/redtune.db]
        [--ops sum,min,max,argmax,mean,var_mean] [--dtypes float32,bfloat16] [--only SUBSTR,...]
        [--reps 30] [--read-gbps X] [--no-compile] [--csv FILE]

Cases (the issue's table): rows (dim 1) of [2^20 x 16], [65536 x 128], [4096 x 4096],
[16 x 2^22], [32768 x 1024]; the same matrices' columns (dim 0); [64 x 2048 x 512] along
dim 1; each in float32 and bfloat16 (sums of bfloat16 accumulate and give float32 on every
side: torch.sum(x, dim, dtype=torch.float32), redtune's default). For each:
  torch eager     torch.sum(x, dim[, dtype=float32]) / torch.amin / torch.amax /
                  torch.argmax(x, dim) / torch.mean(x, dim[, dtype=float32]) /
                  torch.var_mean(x, dim, correction=0) (for bfloat16 its results are
                  bfloat16, redtune's float32: the limit counts float32's bytes);
  torch.compile   the same function, mode="max-autotune-no-cudagraphs", dynamic=False,
                  compiled (and autotuned) once before it is timed (Inductor's Triton
                  reductions);
  redtune         redtune.sum(x, dim=...) (redtune.min, .max, .argmax, .mean,
                  .var_mean(correction=0)): the package, on
                  torch's current stream, rt_reduce_axis through ctypes;
  limit           (bytes in + bytes out) / the read bandwidth: --read-gbps (give
                  redtune_bench's "read bandwidth X GB/s" for the C bench's limit), else the
                  yardstick measured here (the best of torch.amax and torch.sum over 2 GiB,
                  named in the output: a lower bound of the read bandwidth).
Method: CUDA events around the call; 3 warm-ups; cold: before each timed repetition the L2
is flushed by writing a buffer of 2 x L2 (at least 64 MiB; --flush read: by reading it, which
leaves clean lines, as redtune_bench does), then torch.cuda._sleep keeps the
stream busy (--spin-cycles) so that the call's host work is done before its start event
fires; the median of --reps (default 30, at least 20). Every result is checked against a
float64 reference (exact for min, max and argmax: the first index of the extreme, as
torch's) before it is timed; a WRONG one is reported, not timed. Prints the device, torch
and CUDA versions, the date and the command, the details, then the issue's table.
Exit 0 after a run (WRONG results are reported), 1 on an error, 2 on a usage error.
"""
import argparse
import csv
import datetime
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (label, shape, dim): issue 16's "Performance" table.
SHAPES = [
    ("[2^20 x 16] rows", (1 << 20, 16), 1),
    ("[65536 x 128] rows", (65536, 128), 1),
    ("[4096 x 4096] rows", (4096, 4096), 1),
    ("[16 x 2^22] rows", (16, 1 << 22), 1),
    ("[32768 x 1024] rows", (32768, 1024), 1),
    ("[2^20 x 16] columns", (1 << 20, 16), 0),
    ("[65536 x 128] columns", (65536, 128), 0),
    ("[4096 x 4096] columns", (4096, 4096), 0),
    ("[16 x 2^22] columns", (16, 1 << 22), 0),
    ("[32768 x 1024] columns", (32768, 1024), 0),
    ("[64 x 2048 x 512] dim 1", (64, 2048, 512), 1),
]
OPS = ("sum", "min", "max", "argmax", "mean", "var_mean")
WIDE = ("sum", "mean", "var_mean")   # data 0..16; half-precision inputs give float32


def eager_fn(torch, op, dim, dtype):
    """(spelling, function) of torch's own reduction along dim."""
    if op in ("sum", "mean"):   # halves accumulate and give float32, as redtune's
        f = getattr(torch, op)
        if dtype in (torch.bfloat16, torch.float16):
            return ("torch.%s(x, %d, dtype=torch.float32)" % (op, dim),
                    lambda x: f(x, dim, dtype=torch.float32))
        return "torch.%s(x, %d)" % (op, dim), lambda x: f(x, dim)
    if op == "min":
        return "torch.amin(x, %d)" % dim, lambda x: torch.amin(x, dim)
    if op == "max":
        return "torch.amax(x, %d)" % dim, lambda x: torch.amax(x, dim)
    if op == "var_mean":
        return ("torch.var_mean(x, %d, correction=0)" % dim,
                lambda x: torch.var_mean(x, dim, correction=0))
    return "torch.argmax(x, %d)" % dim, lambda x: torch.argmax(x, dim)


def make_data(torch, op, shape, dtype, dev, gen):
    """redtune_bench --axis' distributions (not its bits): sums of 0..16, the rest -128..127
    (exact in every dtype; long rows hold many ties, so argmax must give the first)."""
    lo, hi = (0, 17) if op in WIDE else (-128, 128)
    return torch.randint(lo, hi, shape, device=dev, generator=gen).to(dtype)


def reference(torch, op, x, dim):
    """The float64 reference (argmax: torch's first index of the max, on float64)."""
    x64 = x.double()
    if op == "sum":
        return x64.sum(dim)
    if op == "min":
        return x64.amin(dim)
    if op == "max":
        return x64.amax(dim)
    if op == "mean":
        return x64.mean(dim)
    if op == "var_mean":
        return torch.var_mean(x64, dim, correction=0)
    return torch.argmax(x64, dim)


def check(torch, op, got, ref):
    """None when 'got' matches the reference, else what differs (the first output)."""
    if op == "var_mean":   # (var, mean): each within its output dtype's rounding
        for g, r, what in ((got[0], ref[0], "var"), (got[1], ref[1], "mean")):
            why = check(torch, "mean", g, r)
            if why:
                return "%s: %s" % (what, why)
        return None
    if tuple(got.shape) != tuple(ref.shape):
        return "shape %r, expected %r" % (tuple(got.shape), tuple(ref.shape))
    if op == "mean":
        rel = 2.0 ** -7 if got.dtype in (torch.bfloat16, torch.float16) else 1e-5
        bad = (got.double() - ref).abs() > rel * ref.abs() + 1e-5
    elif op == "sum":
        g = got.double()
        bad = (g - ref).abs() > 1e-6 * ref.abs() + 1e-6
    elif op == "argmax":
        bad = got.long() != ref
    else:
        bad = got.double() != ref
    if not bool(bad.any()):
        return None
    k = int(bad.reshape(-1).nonzero()[0, 0])
    return "%d outputs differ; output %d: expected %r, got %r" % (
        int(bad.sum()), k, ref.reshape(-1)[k].item(), got.reshape(-1)[k].item())


class Timer:
    def __init__(self, torch, dev, reps, warmup, spin, flush="write"):
        self.torch = torch
        self.reps, self.warmup, self.spin, self.flush = reps, warmup, spin, flush
        l2 = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 50 << 20)
        nbytes = max(2 * l2, 64 << 20)
        self.flush_bytes = nbytes
        self.buf = torch.empty(nbytes // 4, dtype=torch.int32, device=dev)
        self.start = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)

    def time(self, fn):
        """Median, min and max in microseconds of 'reps' cold calls of fn."""
        torch = self.torch
        for _ in range(self.warmup):
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(self.reps):
            if self.flush == "write":
                self.buf.fill_(1)          # the L2 flush: a write of 2 x L2 (dirty lines)
            else:
                self.sink = self.buf.amax()   # a read of 2 x L2 (clean lines)
            if self.spin:
                torch.cuda._sleep(self.spin)   # the stream busy while the call is enqueued
            self.start.record()
            fn()
            self.stop.record()
            self.stop.synchronize()
            ts.append(self.start.elapsed_time(self.stop) * 1000.0)
        return statistics.median(ts), min(ts), max(ts)


def measure_read_gbps(torch, timer, dev):
    """A read-only reduction over 2 GiB in PyTorch, the best of three spellings: a lower
    bound of the read bandwidth."""
    x = torch.ones(1 << 29, dtype=torch.int32, device=dev)
    best, how = 0.0, ""
    for name, fn in (("torch.amax(int32)", lambda: torch.amax(x)),
                     ("torch.amax(int64 view)", lambda: torch.amax(x.view(torch.int64))),
                     ("torch.sum(float32 view)", lambda: torch.sum(x.view(torch.float32)))):
        med = timer.time(fn)[0]
        g = (1 << 31) / (med * 1e3)
        if g > best:
            best, how = g, name
    del x
    torch.cuda.empty_cache()
    return best, how


def kernel_line(text):
    """The "kernel: ..." line of redtune.explain's text (else its first line)."""
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("kernel: "):
            k = s[len("kernel: "):]
            tuned = [w for w in text.replace(",", " ").split() if w.startswith("axis:")]
            return k + (" [tuned %s]" % tuned[0] if tuned else " [built-in default]"
                        if "database entry: none" in text else "")
    return text.splitlines()[0] if text else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", default=None, help="the redtune database (redtune.set_database; "
                    "default: the package's search)")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--ops", default="sum", help="comma-separated: sum, min, max, argmax, "
                    "mean, var_mean (default sum)")
    ap.add_argument("--dtypes", default="float32,bfloat16",
                    help="comma-separated torch dtypes (default float32,bfloat16)")
    ap.add_argument("--only", default=None,
                    help="comma-separated substrings of the shape labels to run")
    ap.add_argument("--reps", type=int, default=30, help="timed repetitions (>= 20; default 30)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--spin-cycles", type=int, default=200000,
                    help="torch.cuda._sleep cycles after each flush (default 200000; 0: none)")
    ap.add_argument("--flush", choices=("write", "read"), default="write",
                    help="the L2 flush before each repetition: write 2 x L2 (default; the L2 "
                    "left full of dirty lines, as after a kernel that wrote its output) or "
                    "read 2 x L2 (clean lines, as redtune_bench's flush)")
    ap.add_argument("--read-gbps", type=float, default=None,
                    help="the read bandwidth for the limit (redtune_bench's yardstick); "
                    "default: measured here with torch reductions")
    ap.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    ap.add_argument("--no-redtune", action="store_true", help="leave redtune out")
    ap.add_argument("--csv", default=None, help="also write every row to FILE")
    args = ap.parse_args()
    if args.reps < 20:
        ap.error("--reps: at least 20 (the median of >= 20 repetitions)")
    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    for o in ops:
        if o not in OPS:
            ap.error("--ops: %r is not one of %s" % (o, ", ".join(OPS)))
    shapes = SHAPES
    if args.only:
        keys = [k.strip() for k in args.only.split(",") if k.strip()]
        shapes = [s for s in SHAPES if any(k in s[0] for k in keys)]
        if not shapes:
            ap.error("--only %s leaves no shape" % args.only)

    import torch
    if not torch.cuda.is_available():
        print("torch_axis.py: no CUDA device for torch", file=sys.stderr)
        return 1
    dtypes = []
    for name in (d.strip() for d in args.dtypes.split(",") if d.strip()):
        dt = getattr(torch, name, None)
        if not isinstance(dt, torch.dtype):
            ap.error("--dtypes: %r is not a torch dtype" % name)
        dtypes.append(dt)
    dev = torch.device("cuda", args.device)
    args.device_name = torch.cuda.get_device_name(dev)   # the CSV's device column
    torch.cuda.set_device(dev)
    cmd = " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:])
    props = torch.cuda.get_device_properties(dev)
    print("torch_axis.py: %s (sm_%d%d, %d SMs, %.1f GiB), torch %s, CUDA %s, %s UTC"
          % (props.name, props.major, props.minor, props.multi_processor_count,
             props.total_memory / 2**30, torch.__version__, torch.version.cuda,
             datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")))
    print("torch_axis.py: command: %s" % cmd)
    timer = Timer(torch, dev, args.reps, args.warmup, args.spin_cycles, args.flush)
    print("torch_axis.py: timing: CUDA events around the call, %d warm-ups, median of %d; "
          "cold: before each repetition the L2 flushed by %s %.0f MiB (2 x L2), then "
          "torch.cuda._sleep(%d) keeps the stream busy"
          % (args.warmup, args.reps, "writing" if args.flush == "write" else "reading",
             timer.flush_bytes / 2**20, args.spin_cycles))
    if args.read_gbps:
        gbps, gsrc = args.read_gbps, "given (--read-gbps: redtune_bench's read yardstick)"
    else:
        gbps, how = measure_read_gbps(torch, timer, dev)
        gsrc = ("measured here: %s over 2 GiB, the best of three torch reductions (a lower "
                "bound; give --read-gbps from redtune_bench for its yardstick)" % how)
    print("torch_axis.py: read bandwidth %.1f GB/s, %s" % (gbps, gsrc))

    rt = None
    if not args.no_redtune:
        try:
            import redtune as rt
            if args.db:
                rt.set_database(args.db)
            print("torch_axis.py: redtune %s, libredtune %s" % (rt.__version__,
                                                                rt.library_path()))
        except Exception as err:   # noqa: BLE001 - reported, the torch columns still run
            print("torch_axis.py: redtune left out: %s (PYTHONPATH=build/python after "
                  "`ninja python`)" % err)
            rt = None

    gen = torch.Generator(device=dev)
    gen.manual_seed(1)
    results = []   # dicts: label, shape, dim, dtype, op, bytes, limit, impl, status, med ...
    for label, shape, dim in shapes:
        for op in ops:
            for dtype in dtypes:
                dname = str(dtype).replace("torch.", "")
                print("torch_axis.py: [%s] %s %s" % (label, op, dname), file=sys.stderr)
                x = make_data(torch, op, shape, dtype, dev, gen)
                ref = reference(torch, op, x, dim)
                nout = (ref[0] if op == "var_mean" else ref).numel()
                out_size = 8 if op == "argmax" else (4 if op in WIDE and x.element_size() == 2
                                                     else x.element_size())
                if op == "var_mean":
                    out_size *= 2
                nbytes = x.numel() * x.element_size() + nout * out_size
                limit = nbytes / (gbps * 1e3)
                spelling, efn = eager_fn(torch, op, dim, dtype)
                impls = [("eager", spelling, efn, False)]
                if not args.no_compile:
                    impls.append(("Inductor", "torch.compile(%s)" % spelling, efn, True))
                if rt is not None and op == "var_mean":
                    impls.append(("redtune", "redtune.var_mean(x, dim=%d, correction=0)" % dim,
                                  lambda t: rt.var_mean(t, dim=dim, correction=0), False))
                elif rt is not None:
                    rfn = getattr(rt, op)
                    impls.append(("redtune", "redtune.%s(x, dim=%d)" % (op, dim),
                                  lambda t, f=rfn: f(t, dim=dim), False))
                for who, spell, fn, comp in impls:
                    row = dict(label=label, shape=shape, dim=dim, dtype=dname, op=op,
                               bytes=nbytes, limit=limit, who=who, impl=spell, status="ok",
                               med=0.0, lo=0.0, hi=0.0, note="")
                    try:
                        if comp:
                            fn = torch.compile(fn, mode="max-autotune-no-cudagraphs",
                                               dynamic=False)
                            fn(x)   # compiled and autotuned, untimed
                            torch.cuda.synchronize()
                        got = fn(x)
                        torch.cuda.synchronize()
                        why = check(torch, op, got, ref)
                        if why:
                            row.update(status="WRONG", note=why)
                        else:
                            row["med"], row["lo"], row["hi"] = timer.time(lambda: fn(x))
                            if who == "redtune":
                                row["note"] = kernel_line(rt.explain(x, op, dim=dim))
                    except Exception as err:   # noqa: BLE001 - reported in the table
                        row.update(status="ERROR", note=str(err).split("\n")[0][:300])
                    results.append(row)
                del x, ref
                torch.cuda.empty_cache()
    report(results, gbps, gsrc, dtypes, ops, args)
    return 0


def report(results, gbps, gsrc, dtypes, ops, args):
    print("\nlimit = (bytes in + bytes out) / %.1f GB/s (%s); medians in microseconds; "
          "%% = limit / time" % (gbps, gsrc))
    print("%-26s %-6s %-8s %-52s %10s %7s  %s" % ("shape", "op", "dtype", "implementation",
                                                  "median", "%limit", "min..max / note"))
    last = None
    for r in results:
        key = (r["label"], r["op"], r["dtype"])
        if key != last:
            print("%-26s %-6s %-8s %-52s %10.2f" % (r["label"], r["op"], r["dtype"], "limit",
                                                    r["limit"]))
            last = key
        if r["status"] == "ok":
            print("%-26s %-6s %-8s %-52s %10.2f %6.1f%%  %.2f..%.2f %s"
                  % ("", "", "", r["impl"], r["med"], 100 * r["limit"] / r["med"], r["lo"],
                     r["hi"], r["note"]))
        else:
            print("%-26s %-6s %-8s %-52s %10s %7s  %s" % ("", "", "", r["impl"], r["status"],
                                                          "", r["note"]))

    def cell(rows, who):
        for r in rows:
            if r["who"] == who:
                if r["status"] != "ok":
                    return r["status"]
                return "%.1f us (%.0f%%)" % (r["med"], 100 * r["limit"] / r["med"])
        return "-"

    # The table: per shape and op, eager / Inductor / redtune per dtype, each with
    # its % of the limit; '*' where redtune is slower than the better of eager and Inductor.
    for op in ops:
        print("\n%s along the axis (us, %% of the read limit; * redtune slower than the better "
              "of eager and Inductor)" % op)
        head = "| shape, reduce |"
        for dt in dtypes:
            d = str(dt).replace("torch.", "")
            head += " eager %s | Inductor %s | redtune %s |" % (d, d, d)
        print(head)
        print("|" + " --- |" * (1 + 3 * len(dtypes)))
        labels = []
        for r in results:
            if r["op"] == op and r["label"] not in labels:
                labels.append(r["label"])
        for label in labels:
            line = "| %s |" % label
            for dt in dtypes:
                d = str(dt).replace("torch.", "")
                rows = [r for r in results if (r["label"], r["op"], r["dtype"]) == (label, op, d)]
                peers = [r["med"] for r in rows if r["who"] != "redtune" and r["status"] == "ok"]
                mine = [r["med"] for r in rows if r["who"] == "redtune" and r["status"] == "ok"]
                slow = "*" if peers and mine and mine[0] > min(peers) else ""
                line += " %s | %s | %s%s |" % (cell(rows, "eager"), cell(rows, "Inductor"),
                                               cell(rows, "redtune"), slow)
            print(line)
    if args.csv:
        # The device column lets `redtune report --peers` put the rows on the right charts.
        with open(args.csv, "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(["device", "shape_label", "shape", "dim", "dtype", "op", "bytes",
                        "limit_us", "read_gbps", "who", "implementation", "status",
                        "median_us", "min_us", "max_us", "note"])
            for r in results:
                w.writerow([args.device_name, r["label"],
                            "x".join(str(s) for s in r["shape"]), r["dim"], r["dtype"],
                            r["op"], r["bytes"], "%.4f" % r["limit"], "%.2f" % gbps, r["who"],
                            r["impl"], r["status"], "%.3f" % r["med"], "%.3f" % r["lo"],
                            "%.3f" % r["hi"], r["note"]])


if __name__ == "__main__":
    sys.exit(main())
