"""The GPU half of the Python package's tests: every operator x dtype x shape against
PyTorch's and CuPy's own reductions, ragged sizes, empty arrays, the array protocols with real
device memory, non-contiguous inputs, streams, out=, temp=, the segmented calls, a user
operator, explain, the torch custom op under torch.compile. The reductions along an axis are
test_gpu_axis.py's. Skips without a GPU, or per framework without torch / CuPy. Run on the GPU
machine: tests/run.sh build gpu (or pytest)."""
import os
import re

import pytest

import redtune

np = pytest.importorskip("numpy")

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPS = ["sum", "prod", "min", "max", "argmin", "argmax"]
DTYPES = ["float32", "float64", "int32", "uint32", "int64", "uint64"]
SIZES = [1, 3, 31, 33, 255, 257, 1000, 1023, 4097, 65537, (1 << 20) + 7, 1 << 22]
SHAPES = [(), (0,), (7, 13), (3, 1, 1000), (1, 4096), (2, 3, 4, 5)]


def _torch():
    try:
        import torch
    except Exception as err:   # noqa: BLE001 - any import failure skips
        pytest.skip("no torch: %s" % err)
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    return torch


def _cupy():
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception as err:   # noqa: BLE001
        pytest.skip("no CuPy with a device: %s" % err)
    return cupy


class Torch:
    name = "torch"

    def __init__(self):
        self.t = _torch()

    def has(self, dtype):
        return getattr(self.t, dtype, None) is not None

    def from_numpy(self, a):
        if a.dtype in (np.uint32, np.uint64):   # torch builds few kernels for these: via bits
            b = self.t.from_numpy(a.view(np.int32 if a.dtype == np.uint32 else np.int64))
            return b.cuda().view(getattr(self.t, a.dtype.name))
        return self.t.from_numpy(a).cuda()

    def to_numpy(self, r):
        if str(r.dtype) in ("torch.uint32", "torch.uint64"):
            bits = self.t.int32 if str(r.dtype) == "torch.uint32" else self.t.int64
            return r.view(bits).cpu().numpy().view(np.uint32 if bits == self.t.int32 else np.uint64)
        return r.cpu().numpy()

    def own(self, x, op):
        """The framework's own result, where it has one for this dtype (else None)."""
        if str(x.dtype) in ("torch.uint32", "torch.uint64"):
            return None
        if op in ("sum", "prod") and not x.is_floating_point():
            return None   # torch promotes integer sums to int64; numpy wraps as redtune
        if op in ("argmin", "argmax") and x.numel() == 0:
            return None
        if op in ("min", "max") and x.numel() == 0:
            return None
        return getattr(self.t, op)(x).cpu().numpy()

    def sync(self):
        self.t.cuda.synchronize()


class CuPy:
    name = "cupy"

    def __init__(self):
        self.t = _cupy()

    def has(self, dtype):
        return True

    def from_numpy(self, a):
        return self.t.asarray(a)

    def to_numpy(self, r):
        return self.t.asnumpy(r)

    def own(self, x, op):
        if x.size == 0 and op not in ("sum", "prod"):
            return None
        if op in ("sum", "prod"):
            return self.t.asnumpy(getattr(self.t, op)(x, dtype=x.dtype))
        return self.t.asnumpy(getattr(self.t, op)(x))

    def sync(self):
        self.t.cuda.Device().synchronize()


@pytest.fixture(params=["torch", "cupy"])
def fw(request):
    return Torch() if request.param == "torch" else CuPy()


def data(n, dtype, op, seed):
    """Test data: products near 1 (floats) or of small values; no NaN (see test_nan)."""
    rs = np.random.RandomState(seed)
    if dtype.startswith("float"):
        if op == "prod":
            return (1 + (rs.random_sample(n) - 0.5) * 0.01).astype(dtype)
        return (rs.random_sample(n) - 0.5).astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = (max(info.min, -1000), min(info.max, 1000)) if op != "prod" else (1, 4)
    if op in ("min", "max", "argmin", "argmax"):
        lo, hi = info.min // 2, info.max // 2
    return rs.randint(lo, hi, size=n, dtype=np.int64 if dtype != "uint64" else np.uint64
                      ).astype(dtype)


def host_reference(a, op):
    """numpy's result with redtune's rules: integer sums and products wrap."""
    if a.size == 0:
        return None
    if op == "sum":
        return a.sum(dtype=np.float64) if a.dtype.kind == "f" else a.sum(dtype=a.dtype)
    if op == "prod":
        return a.prod(dtype=np.float64) if a.dtype.kind == "f" else a.prod(dtype=a.dtype)
    return getattr(np, op)(a)


def check(got, a, op, own):
    want = host_reference(a.reshape(-1), op)
    if a.dtype.kind == "f" and op in ("sum", "prod"):
        f32 = a.dtype == np.float32
        if op == "sum":   # another order of additions: a bound on the rounding of any order
            tol = (1e-5 if f32 else 1e-13) * (float(np.abs(a).astype(np.float64).sum()) + 1)
        else:
            tol = (2e-4 if f32 else 1e-12) * abs(float(want))
        assert abs(float(got) - float(want)) <= tol, (got, want)
        if own is not None:
            assert abs(float(got) - float(own)) <= 2 * tol, (got, own)
    else:
        assert got == want, (got, want)
        if own is not None:
            assert got == own, (got, own)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_every_op_dtype_and_ragged_size(fw, op, dtype):
    if not fw.has(dtype):
        pytest.skip("%s has no %s" % (fw.name, dtype))
    for n in SIZES:
        a = data(n, dtype, op, seed=n)
        x = fw.from_numpy(a)
        r = redtune.reduce(x, op)
        assert type(r) is type(x) and r.shape == ()
        got = fw.to_numpy(r)[()]
        check(got, a, op, fw.own(x, op))
        if op in ("argmin", "argmax"):
            assert str(r.dtype).endswith("int64")
        else:
            assert str(r.dtype) == str(x.dtype)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op", OPS)
def test_shapes(fw, op, shape):
    a = data(int(np.prod(shape)), "float32", op, seed=7).reshape(shape)
    x = fw.from_numpy(a)
    got = fw.to_numpy(getattr(redtune, op)(x))[()]
    if a.size == 0:
        want = {"sum": 0.0, "prod": 1.0, "min": np.inf, "max": -np.inf,
                "argmin": -1, "argmax": -1}[op]
        assert got == want
    else:
        check(got, a, op, fw.own(x, op))


def test_dim_and_keepdim(fw):
    a = data(1000, "float64", "sum", 1)
    x = fw.from_numpy(a)
    assert redtune.sum(x, dim=0).shape == ()
    assert redtune.sum(x, keepdim=True).shape == (1,)
    x2 = fw.from_numpy(a.reshape(1, 1000))
    r = redtune.max(x2, dim=1)
    assert r.shape == (1,) and fw.to_numpy(r)[0] == a.max()
    assert redtune.argmax(x2, dim=(0, 1), keepdim=True).shape == (1, 1)
    # Along an axis (issue 16): the framework's array of the result's shape.
    m = a.reshape(10, 100)
    for dim, keep in ((1, False), (0, False), (-1, True), (0, True)):
        r = redtune.sum(fw.from_numpy(m), dim=dim, keepdim=keep)
        want = m.sum(axis=dim, keepdims=keep)
        assert type(r) is type(x) and r.shape == want.shape
        assert np.allclose(fw.to_numpy(r), want, rtol=1e-12, atol=1e-12)
    r = redtune.argmin(fw.from_numpy(m), dim=0)
    assert (fw.to_numpy(r) == m.argmin(axis=0)).all()
    with pytest.raises(NotImplementedError, match="not adjacent"):
        redtune.sum(fw.from_numpy(a.reshape(10, 10, 10)), dim=(0, 2))


def test_nan(fw):
    a = np.array([3.0, np.nan, -1.0, np.nan], dtype=np.float32)
    x = fw.from_numpy(a)
    assert fw.to_numpy(redtune.min(x))[()] == -1.0
    assert fw.to_numpy(redtune.argmax(x))[()] == 0
    allnan = fw.from_numpy(np.full(5, np.nan, dtype=np.float32))
    assert np.isnan(fw.to_numpy(redtune.max(allnan))[()])
    assert fw.to_numpy(redtune.argmin(allnan))[()] == 0


def test_non_contiguous_is_refused(fw):
    x = fw.from_numpy(np.arange(100, dtype=np.float32).reshape(10, 10))
    for bad in (x[:, ::2], x[::3]):
        with pytest.raises(redtune.InvalidArgumentError,
                           match="^RT_EINVAL: redtune.sum: x is not contiguous"):
            redtune.sum(bad)
    # A transposed row, or a slice of dense rows, is contiguous: accepted.
    assert fw.to_numpy(redtune.sum(x[2:4]))[()] == np.arange(20, 40).sum()


def test_views_in_another_order(fw):
    """A transpose (x.T, x.swapaxes(1, 2)) is one dense block in another order: reduced in
    place, every element or along a dim, as the framework's own reduction of the view; the
    index over every element of it is refused (it would be the memory's)."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((37, 53)).astype(np.float32)
    x = fw.from_numpy(a).T                              # (53, 37), strides (1, 53)
    np.testing.assert_allclose(fw.to_numpy(redtune.sum(x))[()], a.sum(), rtol=1e-5)
    assert fw.to_numpy(redtune.max(x))[()] == a.max()
    for d in (0, 1, -1):
        np.testing.assert_allclose(fw.to_numpy(redtune.sum(x, dim=d)), a.T.sum(axis=d),
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(fw.to_numpy(redtune.argmax(x, dim=d)),
                                      a.T.argmax(axis=d))
        np.testing.assert_array_equal(fw.to_numpy(redtune.min(x, dim=d, keepdim=True)),
                                      a.T.min(axis=d, keepdims=True))
    with pytest.raises(NotImplementedError, match=r"^redtune.argmax: x is a view of shape "
                       r"\(53, 37\) with strides \(1, 53\) in elements: the dims it reduces "
                       r"are in another order in memory"):
        redtune.argmax(x)
    b = rng.standard_normal((4, 33, 65)).astype(np.float32)
    y = fw.from_numpy(b).swapaxes(1, 2)                 # (4, 65, 33), strides (2145, 1, 65)
    bt = b.swapaxes(1, 2)
    for d in (1, 2):
        np.testing.assert_allclose(fw.to_numpy(redtune.sum(y, dim=d)), bt.sum(axis=d),
                                   rtol=1e-5, atol=1e-4)
        v, m = redtune.var_mean(y, dim=d)
        np.testing.assert_allclose(fw.to_numpy(m), bt.mean(axis=d), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(fw.to_numpy(v), bt.var(axis=d, ddof=1), rtol=1e-4,
                                   atol=1e-5)
    # the dims kept would be in another order in memory than in the result: refused
    with pytest.raises(NotImplementedError, match=r"the dims it keeps are in another order"):
        redtune.sum(fw.from_numpy(b).swapaxes(0, 2), dim=1)


def test_bad_inputs(fw):
    if fw.name == "torch":
        cpu = fw.t.ones(4)
        with pytest.raises(TypeError, match=r"^redtune.sum: x is on device 'cpu'; a CUDA "
                           r"tensor is expected$"):
            redtune.sum(cpu)
        cplx = fw.t.ones(4, device="cuda", dtype=fw.t.complex64)
        with pytest.raises(TypeError, match=r"^redtune.sum: x has dtype torch.complex64; "):
            redtune.sum(cplx)
    else:
        with pytest.raises(TypeError, match=r"^redtune.sum: x is a host array"):
            redtune.sum(np.ones(4, dtype=np.float32))
        with pytest.raises(TypeError, match=r"^redtune.sum: x has dtype complex64"):
            redtune.sum(fw.t.ones(4, dtype=fw.t.complex64))


def test_out(fw):
    a = data(5000, "int32", "sum", 3)
    x = fw.from_numpy(a)
    out = fw.from_numpy(np.zeros(1, dtype=np.int32))
    assert redtune.sum(x, out=out) is out
    assert fw.to_numpy(out)[0] == a.sum(dtype=np.int32)
    pair = fw.from_numpy(np.zeros(2, dtype=np.int64))
    redtune.argmin(x, out=pair)
    assert fw.to_numpy(pair)[1] == a.argmin()
    with pytest.raises(ValueError, match=r"^redtune.sum: out must hold 1 element of i32; it "
                       r"has 1 of f32$"):
        redtune.sum(x, out=fw.from_numpy(np.zeros(1, dtype=np.float32)))


def test_streams_torch():
    torch = _torch()
    x = torch.rand(1 << 24, device="cuda")
    want = x.double().sum().item()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        redtune.sum(x)   # warm: the kernel loaded, the stream's temporary storage allocated
    s.synchronize()
    with torch.cuda.stream(s):
        # A long wait first: the reduction is enqueued behind it, and the call returns at once.
        torch.cuda._sleep(200_000_000)
        r = redtune.sum(x)
        ev = torch.cuda.Event()
        ev.record()
    assert not ev.query(), "the call waited for the stream"
    s.synchronize()
    assert abs(r.item() - want) < 1e-3 * abs(want)
    r2 = redtune.sum(x, stream=s)   # an explicit stream object
    r3 = redtune.sum(x, stream=s.cuda_stream)
    s.synchronize()
    assert r2.item() == r.item() == r3.item()


def test_streams_cupy():
    cupy = _cupy()
    x = cupy.random.random_sample(1 << 22, dtype=cupy.float32)
    s = cupy.cuda.Stream(non_blocking=True)
    s.wait_event(cupy.cuda.get_current_stream().record())
    with s:
        r = redtune.max(x)
    s.synchronize()
    assert r.item() == x.max().item()


def test_protocols_with_real_memory():
    torch = _torch()
    x = torch.arange(1000, device="cuda", dtype=torch.float64)

    class CAIOnly:
        __cuda_array_interface__ = x.__cuda_array_interface__

    class DLPackOnly:
        def __dlpack__(self, stream=None, max_version=None):
            return x.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return x.__dlpack_device__()

    for obj in (CAIOnly(), DLPackOnly()):
        out = torch.empty((), device="cuda", dtype=torch.float64)
        redtune.sum(obj, out=out)
        torch.cuda.synchronize()
        assert out.item() == 999 * 1000 / 2
    # Another producer stream named by the interface: the work waits for it.
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = torch.full((1 << 22,), 2.0, device="cuda")
        cai = dict(y.__cuda_array_interface__, stream=s.cuda_stream, version=3)
    obj = type("CAIStream", (), {"__cuda_array_interface__": cai})()
    out = torch.empty((), device="cuda")
    redtune.sum(obj, out=out, stream=torch.cuda.current_stream())
    torch.cuda.synchronize()
    assert out.item() == 2.0 * (1 << 22)


def test_temp(fw):
    a = data(1 << 20, "float32", "max", 5)
    x = fw.from_numpy(a)
    nbytes = redtune.temp_bytes(x, "max")
    if fw.name == "torch":
        temp = fw.t.empty(max(nbytes, 1), dtype=fw.t.uint8, device="cuda")
    else:
        temp = fw.t.empty(max(nbytes, 1), dtype=fw.t.uint8)
    r = redtune.reduce(x, "max", temp=temp)
    assert fw.to_numpy(r)[()] == a.max()
    if nbytes > 256:
        with pytest.raises(redtune.InvalidArgumentError):
            redtune.reduce(x, "max", temp=temp[:256])


def test_segmented(fw):
    rs = np.random.RandomState(11)
    n, nseg = 100_000, 777
    a = data(n, "float64", "sum", 9)
    cuts = np.sort(rs.randint(0, n, size=nseg - 1))
    offsets = np.concatenate([[0], cuts, [n]]).astype(np.int32)
    x, off = fw.from_numpy(a), fw.from_numpy(offsets)
    for op in ("sum", "min", "argmax"):
        r = fw.to_numpy(redtune.reduce_offsets(x, off, op))
        off64 = fw.to_numpy(redtune.reduce_offsets(x, fw.from_numpy(offsets.astype(np.int64)),
                                                   op))
        assert r.shape == (nseg,)
        for s in range(nseg):
            seg = a[offsets[s]:offsets[s + 1]]
            if seg.size == 0:
                want = {"sum": 0.0, "min": np.inf, "argmax": -1}[op]
            elif op == "argmax":
                want = offsets[s] + seg.argmax()
            else:
                want = getattr(seg, op)()
            assert r[s] == want or abs(r[s] - want) <= 1e-9 * max(1, abs(want)), (op, s)
            assert r[s] == off64[s] or abs(r[s] - off64[s]) <= 1e-9 * max(1, abs(want))
    keys = np.repeat(np.arange(nseg, dtype=np.uint32), np.diff(offsets))
    k = fw.from_numpy(keys.view(np.int32)) if fw.name == "torch" else fw.from_numpy(keys)
    r = fw.to_numpy(redtune.reduce_keys(x, k, "sum", nseg=nseg))
    rk = fw.to_numpy(redtune.reduce_keys(x, k, "sum"))   # nseg from the last key
    want = np.array([a[offsets[s]:offsets[s + 1]].sum() for s in range(nseg)])
    assert np.allclose(r, want) and np.allclose(rk[:keys[-1] + 1], want[:keys[-1] + 1])
    bad = fw.from_numpy(np.array([0, 5, 3, n], dtype=np.int32))
    with pytest.raises(redtune.InvalidArgumentError):
        redtune.reduce_offsets(x, bad, "sum", check=True)


def test_one_segment(fw):
    """One segment of offsets, anywhere in the input (docs/segmented.md, "One segment": the
    flat kernel reads its bounds on the GPU): the reduction of a[lo:hi], argmax's index in the
    whole input, an empty segment the identity, 32- and 64-bit offsets alike."""
    n = 200_003
    a = data(n, "float32", "sum", 4)
    x = fw.from_numpy(a)
    for lo, hi in ((0, n), (7, n - 3), (1001, 1002), (50, 50), (12345, 99999)):
        for dt in (np.int32, np.int64):
            off = fw.from_numpy(np.array([lo, hi], dtype=dt))
            for op in ("sum", "min", "argmax"):
                r = fw.to_numpy(redtune.reduce_offsets(x, off, op))
                assert r.shape == (1,)
                seg = a[lo:hi].astype(np.float64)
                if seg.size == 0:
                    want = {"sum": 0.0, "min": np.inf, "argmax": -1}[op]
                elif op == "argmax":
                    want = lo + int(np.argmax(a[lo:hi]))
                else:
                    want = getattr(seg, op)()
                tol = 1e-5 * max(1.0, float(np.abs(seg).sum())) if op == "sum" else 0
                assert r[0] == want or abs(float(r[0]) - want) <= tol, (lo, hi, dt, op, r[0], want)


def balanced_families():
    """The families whose templates say `@balanced yes` (the ones RT_SEG_SKEWED may run)."""
    names = set()
    for f in os.listdir(os.path.join(TOP, "templates")):
        if f.endswith(".cu"):
            with open(os.path.join(TOP, "templates", f)) as t:
                if re.search(r"^// @balanced\s+yes\b", t.read(), re.M):
                    names.add(f[:-3])
    assert "seg_lb" in names and "seg_per" not in names, names
    return names


def test_segmented_skewed(fw):
    """skewed=True (RT_SEG_SKEWED): a heavy-tailed set of lengths (runs of empty and
    one-element segments, a few of 10^5) reduced by a load-balanced kernel, the same results;
    explain names it; a skewed that is not a bool is refused."""
    rs = np.random.RandomState(5)
    lengths = rs.choice([0, 1, 2, 3, 100_000], size=4000, p=[0.3, 0.3, 0.2, 0.1995, 0.0005])
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    n, nseg = int(offsets[-1]), len(lengths)
    a = data(n, "float32", "min", 4)
    x, off = fw.from_numpy(a), fw.from_numpy(offsets)
    r = fw.to_numpy(redtune.reduce_offsets(x, off, "min", skewed=True))
    plain = fw.to_numpy(redtune.reduce_offsets(x, off, "min"))
    for s in range(nseg):
        seg = a[offsets[s]:offsets[s + 1]]
        want = seg.min() if seg.size else np.inf
        assert r[s] == want and plain[s] == want, s
    text = redtune.context(0).explain_segmented("offsets", "min", redtune.consts.RT_F32, n, nseg,
                                                skewed=True)
    assert "skewed (load-balanced kernels only)" in text, text
    kernel = text.split(": ", 1)[1].split()[0]   # the family of the kernel that serves it
    assert kernel in balanced_families(), (kernel, text)
    with pytest.raises(TypeError, match="skewed"):
        redtune.reduce_offsets(x, off, "min", skewed=1)
    # uniform=True (RT_SEG_UNIFORM), a promise this call breaks: the same results, slower
    uni = fw.to_numpy(redtune.reduce_offsets(x, off, "min", uniform=True))
    assert (uni == r).all()
    text = redtune.context(0).explain_segmented("offsets", "min", redtune.consts.RT_F32, n, nseg,
                                                uniform=True)
    assert "uniform (no long-segment list)" in text, text
    assert " seg_per " not in text or "LONG=0" in text, text
    with pytest.raises(ValueError, match="contradict"):
        redtune.reduce_offsets(x, off, "min", skewed=True, uniform=True)
    with pytest.raises(TypeError, match="uniform"):
        redtune.reduce_offsets(x, off, "min", uniform="yes")


CHECKED_SKEW = r"""
import sys, numpy as np, cupy, redtune
lengths = [0, 1, 2] * 700 + [50_000] if sys.argv[1] == "skewed" else [30] * 2000
off = cupy.asarray(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
x = cupy.ones(int(off[-1]), dtype=cupy.float32)
r = redtune.reduce_offsets(x, off, "sum", check=True)
assert float(r.sum()) == float(off[-1])
"""


def test_checked_offsets_find_skew():
    """RT_SEG_CHECK's kernel finds the longest segment: a checked call with a segment of
    50000 among ones of 0-2 is decided as RT_SEG_SKEWED (REDTUNE_LOG=info says so), one with
    equal lengths as RT_SEG_UNIFORM."""
    pytest.importorskip("cupy")
    import subprocess
    import sys
    env = dict(os.environ, REDTUNE_LOG="info")
    for kind in ("skewed", "even"):
        p = subprocess.run([sys.executable, "-P", "-c", CHECKED_SKEW, kind], env=env,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        said = "skewed lengths (load-balanced kernels only)" in p.stderr
        assert said == (kind == "skewed"), (kind, p.stderr)
        said = "uniform lengths (no long-segment list)" in p.stderr
        assert said == (kind == "even"), (kind, p.stderr)


def test_user_op(fw):
    if not fw.has("uint32"):
        pytest.skip("%s has no uint32" % fw.name)
    op = redtune.register_op(os.path.join(TOP, "lua", "ops", "satsum.lua"))
    a = np.full(1 << 20, 1 << 16, dtype=np.uint32)
    x = fw.from_numpy(a)
    assert int(fw.to_numpy(redtune.reduce(x, op))[()]) == 0xffffffff
    small = fw.from_numpy(np.arange(100, dtype=np.uint32))
    assert int(fw.to_numpy(redtune.reduce(small, op))[()]) == 4950
    assert "satsum" in redtune.explain(small, op)
    bad = redtune.register_op(name="nope", type="u32", identity="0u",
                              combine="return a + undefined_thing;", commutative=True)
    with pytest.raises(redtune.CompileError) as ei:
        redtune.reduce(small, bad)
    assert ei.value.code == redtune.consts.RT_ENVRTC


def test_explain(fw):
    x = fw.from_numpy(np.ones(1 << 20, dtype=np.float32))
    text = redtune.explain(x, "min")
    assert "database:" in text
    assert redtune.explain(1 << 20, "min", type="f32") == text


def test_torch_compile():
    torch = _torch()
    if not redtune.register_torch_ops():
        pytest.skip("torch %s has no torch.library.custom_op" % torch.__version__)
    x = torch.rand(100_000, device="cuda")
    assert torch.ops.redtune.reduce(x, "max").item() == x.max().item()

    def f(t):
        return redtune.sum(t) * 2 + redtune.argmin(t)

    g = torch.compile(f, fullgraph=True, backend="aot_eager")   # fullgraph: no graph break
    want = f(x)
    got = g(x)
    assert abs(got.item() - want.item()) < 1e-3
    if hasattr(torch.library, "opcheck"):   # schema, fake tensor and dispatch checks
        torch.library.opcheck(torch.ops.redtune.reduce.default, (x, "sum"))


def test_threads(fw):
    import threading
    a = data(1 << 18, "int64", "sum", 4)
    x = fw.from_numpy(a)
    want = a.sum(dtype=np.int64)
    errors = []

    def work():
        try:
            for _ in range(50):
                if int(fw.to_numpy(redtune.sum(x))[()]) != want:
                    errors.append("wrong")
        except Exception as err:   # noqa: BLE001
            errors.append(err)

    ts = [threading.Thread(target=work) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_cuda_graph_torch():
    """redtune.sum, the torch custom op and a segmented call captured in torch.cuda.graph
    after a warm-up, and replayed 100 times with new input: the results of direct calls. (The
    refusal of a case not loaded yet is api_gpu_graphs'; here every op and dtype has been
    loaded by the tests before, and prod f64 runs the built-in default that they loaded.)"""
    torch = _torch()
    custom = redtune.register_torch_ops()
    x = torch.rand(1 << 20, device="cuda")
    small = x[:1000]
    lens = torch.arange(200, device="cuda", dtype=torch.int64) % 17 * 300   # ragged, some 0
    offsets = torch.cat([lens.new_zeros(1), lens.cumsum(0)]).to(torch.int32)
    assert int(offsets[-1]) <= x.numel()

    def calls():
        r = [redtune.sum(x), redtune.min(small), redtune.reduce_offsets(x, offsets, "sum")]
        if custom:
            r.append(torch.ops.redtune.reduce(x, "max"))
        return r

    # Flat calls on a stream that never reduced before (no temporary storage of its own: the
    # package gives them torch's, from the graph's pool); the segmented call has no such
    # variant, so it is captured on the stream it was warmed up on.
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for _ in range(2):
            calls()
    torch.cuda.synchronize()
    flat, seg = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    with torch.cuda.graph(flat, stream=torch.cuda.Stream()):
        got = [redtune.sum(x), redtune.min(small)]
        if custom:
            got.append(torch.ops.redtune.reduce(x, "max"))
    with torch.cuda.graph(seg, stream=warm):
        got_seg = redtune.reduce_offsets(x, offsets, "sum")
    for i in range(100):
        x.copy_(torch.rand(x.shape, device="cuda") - i * 0.01)
        flat.replay()
        seg.replay()
        want = calls()
        torch.cuda.synchronize()
        assert got[0].item() == want[0].item(), i
        assert got[1].item() == want[1].item() == small.min().item(), i
        assert torch.equal(got_seg, want[2]), i
        if custom:
            assert got[2].item() == want[3].item() == x.max().item(), i


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 1000, (1 << 20) + 3])
def test_types_and_fused_ops_torch(dtype, n):
    """The new types and fused operators (docs/types.md) against torch's own, computed in
    float64 from the same elements: sums in f32 within n * 2^-23 * sum|x| (f64: 2^-50), amax
    and argmax exact, var_mean against the two-pass f64 reference."""
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(n)
    x = (torch.rand(n, device="cuda", generator=g) * 8 - 4).to(getattr(torch, dtype))
    x64 = x.double()
    eps = 2.0 ** -50 if dtype == "float64" else 2.0 ** -23
    tol = lambda ref: 4 * n * eps * ref + 1e-300   # noqa: E731
    acc = torch.float64 if dtype == "float64" else torch.float32
    s = redtune.sum(x)
    assert s.dtype == acc
    assert abs(s.item() - x64.sum().item()) <= tol(x64.abs().sum().item())
    assert redtune.asum(x).item() == pytest.approx(x64.abs().sum().item(),
                                                  abs=tol(x64.abs().sum().item()))
    ss = x64.square().sum().item()
    assert abs(redtune.sumsq(x).item() - ss) <= tol(ss)
    assert abs(redtune.norm2(x).item() - ss ** 0.5) <= tol(ss) ** 0.5 + tol(ss ** 0.5)
    assert redtune.amax(x).item() == x.abs().max().item()
    assert redtune.amax(x).dtype == x.dtype
    assert redtune.argmax(x).item() == torch.argmax(x64).item() or (
        x64[redtune.argmax(x)].item() == x64.max().item())
    assert abs(redtune.mean(x).item() - x64.mean().item()) <= tol(x64.abs().mean().item())
    if n > 1:
        v, m = redtune.var_mean(x)
        rv, rm = torch.var_mean(x64)
        assert abs(m.item() - rm.item()) <= tol(x64.abs().mean().item())
        assert abs(v.item() - rv.item()) <= 64 * eps * rv.item() * max(1.0, (rm.item() ** 2) / rv.item())
        sd, _ = redtune.std_mean(x, correction=0)
        assert abs(sd.item() - torch.std(x64, correction=0).item()) <= 1e-3 * sd.item() + 1e-12
    if dtype in ("float16", "bfloat16"):
        # f32 accumulation: no overflow where f16 would (65504)
        big = torch.full((4096,), 60000.0, device="cuda").to(x.dtype)
        assert redtune.sum(big).item() == pytest.approx(big.double().sum().item(), rel=1e-6)
        assert redtune.sum(x, dtype=torch.float64).dtype == torch.float64


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_narrow_integers_torch(dtype):
    torch = _torch()
    x = torch.randint(-128 if dtype == "int8" else 0, 128 if dtype == "int8" else 256,
                      (100_003,), device="cuda", dtype=getattr(torch, dtype))
    assert redtune.sum(x).item() == int(x.long().sum().item())
    assert redtune.min(x).item() == x.min().item()
    assert redtune.max(x).dtype == x.dtype
    assert redtune.mean(x).item() == pytest.approx(x.double().mean().item(), rel=1e-12)
    assert redtune.sum(x, dtype="i64" if dtype == "int8" else "u64").item() == \
        int(x.long().sum().item())
    bad = "u64" if dtype == "int8" else "i64"
    with pytest.raises(TypeError, match=r"accumulating in %s is not defined" % bad):
        redtune.sum(x, dtype=bad)
