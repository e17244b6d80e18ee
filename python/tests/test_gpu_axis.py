"""The GPU tests of the Python package's reductions along an axis (issue 16, dim=): every
operator x dtype x shape against torch's own dim reductions, out=, streams, refusals, the
torch custom op under torch.compile and opcheck. Skips without a GPU or torch. Run on the GPU
machine: tests/run.sh build gpu (or pytest)."""
import pytest

import redtune

from test_gpu import _torch

AXIS_SHAPES = [((7, 13), 1), ((7, 13), 0), ((3, 17), 1), ((3, 17), -2), ((4, 5, 6), 1),
               ((2, 4099, 3), 1), ((5, 333), -1), ((1000, 17), 0), ((7, 513, 33), 1),
               ((4, 1, 5), 1), ((6, 1), 1), ((3, 70001), 1), ((4, 0, 5), 1), ((0, 5), 1)]
AXIS_OPS = ["sum", "prod", "min", "max", "argmin", "argmax", "amax", "asum", "sumsq", "norm2",
            "mean", "var_mean", "std_mean"]
FLOAT_ONLY = ("amax", "asum", "sumsq", "norm2", "var_mean", "std_mean")


def _axis_data(torch, shape, dtype, op, seed):
    """Small integers (ties for argmin/argmax; exact in every dtype), near 1 for prod."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    if op == "prod":
        if dtype.is_floating_point:
            x = 1 + (torch.rand(shape, device="cuda", generator=g) - 0.5) * 0.02
        else:
            x = torch.randint(1, 3, shape, device="cuda", generator=g)
        return x.to(dtype)
    return torch.randint(-8, 9, shape, device="cuda", generator=g).to(dtype)


def _axis_reference(torch, op, x, dim):
    """torch's own dim reduction in float64 (int64 for integer sums and products, wrapped
    to 32 bits as redtune's i32 accumulator)."""
    if not x.is_floating_point() and op in ("sum", "prod"):
        r = getattr(torch, op)(x.long(), dim)
        return ((r + (1 << 31)) % (1 << 32)) - (1 << 31)
    x64 = x.double()
    if op in ("min", "max"):
        return getattr(torch, "a" + op)(x64, dim)
    if op in ("argmin", "argmax"):
        return getattr(torch, op)(x64, dim)   # ties: the first index, as redtune's
    if op == "amax":
        return x64.abs().amax(dim)
    if op == "asum":
        return x64.abs().sum(dim)
    if op == "sumsq":
        return (x64 * x64).sum(dim)
    if op == "norm2":
        return torch.linalg.vector_norm(x64, dim=dim)
    if op == "mean":
        return x64.mean(dim)
    # reduce(x, "var_mean") is RT_VAR_MEAN, the population variance (correction=0);
    # redtune.var_mean(x) defaults to torch's correction=1 (RT_VAR_MEAN_SAMPLE).
    if op == "var_mean":
        return torch.var_mean(x64, dim, correction=0)
    if op == "std_mean":
        return torch.std_mean(x64, dim, correction=0)
    return getattr(torch, op)(x64, dim)


def _close(got, want, scale, what):
    got, want = got.double().cpu(), want.double().cpu()
    assert got.shape == want.shape, (what, got.shape, want.shape)
    both_nan = torch_isnan(got) & torch_isnan(want)
    diff = (got - want).abs()
    bad = ~both_nan & (got != want) & ~(diff <= scale.cpu())   # inf == inf: not bad
    assert not bool(bad.any()), (what, got[bad][:5].tolist(), want[bad][:5].tolist())


def torch_isnan(t):
    return t != t


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "int32", "float64"])
@pytest.mark.parametrize("op", AXIS_OPS)
def test_axis_every_op_dtype_and_shape(op, dtype):
    """Every operator x dtype x shape (rows, columns, the 3-D middle axis, ragged 3x17, len
    1, len 0, no output) against torch's own dim reduction; argmin/argmax exactly (the first
    index of the extreme, as torch's); len 0 gives each output the flat call's empty result
    (the identity)."""
    torch = _torch()
    dt = getattr(torch, dtype)
    if op in FLOAT_ONLY and not dt.is_floating_point:
        with pytest.raises(TypeError, match="is not defined"):
            redtune.reduce(torch.ones(3, 4, device="cuda", dtype=dt), op, dim=1)
        return
    for k, (shape, dim) in enumerate(AXIS_SHAPES):
        x = _axis_data(torch, shape, dt, op, k)
        r = redtune.reduce(x, op, dim=dim)
        d = dim % len(shape)
        rshape = shape[:d] + shape[d + 1:]
        pair = op in ("var_mean", "std_mean")
        for t in (r if pair else (r,)):
            assert tuple(t.shape) == rshape, (op, shape, dim)
        torch.cuda.synchronize()
        if x.numel() == 0 and shape[d] == 0 and len(rshape) and 0 not in rshape:
            empty = redtune.reduce(x.new_empty(0), op)   # the flat n == 0 result
            for t, e in zip(r if pair else (r,), empty if pair else (empty,)):
                _close(t, e.expand(rshape), torch.zeros(rshape, dtype=torch.float64),
                       (op, dtype, shape, "len 0"))
            continue
        if 0 in rshape:
            continue
        want = _axis_reference(torch, op, x, dim)
        if op in ("argmin", "argmax"):
            # the index alone (RT_RESULT_INDEX), written by the kernel: a tensor of its own
            assert r.dtype == torch.int64 and r.is_contiguous() and r._base is None
            assert torch.equal(r.cpu(), want.cpu()), (op, dtype, shape, dim)
            continue
        if op in ("min", "max", "amax"):
            assert r.dtype == dt
            assert torch.equal(r.double().cpu(), want.cpu()), (op, dtype, shape, dim)
            continue
        if not dt.is_floating_point and op in ("sum", "prod"):
            assert r.dtype == dt
            assert torch.equal(r.long().cpu(), want.cpu()), (op, dtype, shape, dim)
            continue
        ln = shape[d]
        eps = 2.0 ** -50 if dtype == "float64" else 2.0 ** -22
        mag = x.double().abs().sum(dim) + 1
        if op == "prod":
            scale = 4 * ln * eps * want.abs() + 1e-300
        elif op in ("sumsq", "norm2"):
            scale = 4 * ln * eps * (x.double() ** 2).sum(dim) + 1e-12
            if op == "norm2":
                scale = scale.sqrt() + 4 * ln * eps * want
        elif op == "mean":
            scale = 4 * eps * mag
        elif pair:
            # var/std: a tolerance relative to the spread; mean as mean
            scale = 64 * ln * eps * (want[0].abs() + mag / ln) + 1e-9
            _close(r[1], want[1], 4 * eps * mag, (op, dtype, shape, dim, "mean"))
            _close(r[0], want[0], scale, (op, dtype, shape, dim, "var/std"))
            continue
        else:
            scale = 4 * ln * eps * mag
        _close(r, want, scale, (op, dtype, shape, dim))


def test_axis_out_streams_and_refusals():
    torch = _torch()
    x = torch.randint(-8, 9, (64, 1000), device="cuda").float()
    out = torch.empty(64, device="cuda")
    assert redtune.sum(x, dim=1, out=out) is out
    torch.cuda.synchronize()
    assert torch.equal(out, x.sum(1))
    pair = torch.empty(1000, 2, device="cuda", dtype=torch.int64)
    assert redtune.argmax(x, dim=0, out=pair) is pair
    torch.cuda.synchronize()
    assert torch.equal(pair[:, 1], torch.argmax(x, 0))
    vm = torch.empty(64, 2, device="cuda")
    redtune.var_mean(x, dim=1, out=vm)
    torch.cuda.synchronize()
    v, m = torch.var_mean(x, 1)
    assert torch.allclose(vm[:, 0], v, rtol=1e-5) and torch.allclose(vm[:, 1], m, atol=1e-5)
    with pytest.raises(ValueError, match=r"^redtune.sum: out has shape \(1000,\) of f32; "
                       r"shape \(64,\) of f32 is expected$"):
        redtune.sum(x, dim=1, out=torch.empty(1000, device="cuda"))
    # A transposed view is reduced in place (its memory is x's); a slice with gaps is refused.
    t = redtune.sum(x.t(), dim=0)
    torch.cuda.synchronize()
    assert torch.equal(t, x.sum(1))
    with pytest.raises(redtune.InvalidArgumentError,
                       match=r"^RT_EINVAL: redtune.sum: x is not contiguous \(shape \(64, "
                       r"500\), strides \(1000, 2\) in elements\)"):
        redtune.sum(x[:, ::2], dim=1)
    with pytest.raises(IndexError, match=r"^redtune.max: dim 2 is out of range"):
        redtune.max(x, dim=2)
    # Streams: enqueued behind a long wait, the call returns at once.
    big = torch.rand(4096, 4096, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        redtune.sum(big, dim=0)       # warm
    s.synchronize()
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)
        r = redtune.sum(big, dim=0)
        ev = torch.cuda.Event()
        ev.record()
    assert not ev.query(), "the call waited for the stream"
    s.synchronize()
    assert torch.allclose(r, big.double().sum(0).float(), rtol=1e-5)
    r2 = redtune.sum(big, dim=1, stream=s)
    s.synchronize()
    assert torch.allclose(r2, big.double().sum(1).float(), rtol=1e-5)
    text = redtune.explain(big, "sum", dim=0)
    assert "axis" in text and "kernel:" in text
    assert redtune.explain((4096, 4096), "sum", dim=0) == text


def test_axis_torch_compile():
    torch = _torch()
    if not redtune.register_torch_ops():
        pytest.skip("torch %s has no torch.library.custom_op" % torch.__version__)
    x = torch.randint(-8, 9, (96, 130), device="cuda").float()
    assert torch.equal(torch.ops.redtune.reduce(x, "max", 1), x.amax(1))

    def f(t):
        v, m = redtune.var_mean(t, dim=0)
        return (redtune.sum(t, dim=1) * 2, redtune.argmax(t, dim=-1),
                redtune.max(t, dim=0, keepdim=True), v, m,
                redtune.sum(t.reshape(4, 24, 130), dim=(1, 2)))

    g = torch.compile(f, fullgraph=True, backend="aot_eager")   # fullgraph: no graph break
    for a, b in zip(f(x), g(x)):
        assert a.shape == b.shape and torch.allclose(a.double(), b.double(), rtol=1e-6)
    if hasattr(torch.library, "opcheck"):
        torch.library.opcheck(torch.ops.redtune.reduce.default, (x, "sum", 0))
        torch.library.opcheck(torch.ops.redtune.reduce.default, (x, "var_mean", 1))
