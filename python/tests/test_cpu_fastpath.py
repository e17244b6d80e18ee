"""The CPU tests of the torch and CuPy paths with stand-in frameworks and a stand-in library
call (no GPU, torch or CuPy needed): the fast paths' wiring, result batches, types and fused
operators, reductions along an axis, refusals, torch.compile, CUDA graph capture.
tests/run.sh runs it in `ninja test`."""
import pytest

import redtune
from redtune import _args, _arrays, _axes, _context, _core, _fastpath, _segments
from redtune import consts as C


# ---------------------------------------------------------------- the torch paths, faked

def patch_calls(monkeypatch, name, value):
    """Replace 'name' (library, describe, _allocate) in each module of the calls that holds
    it: the modules _core was split into, each of which imports it for itself."""
    mods = [m for m in (_core, _context, _args, _axes, _fastpath, _segments) if hasattr(m, name)]
    assert mods, name
    for mod in mods:
        monkeypatch.setattr(mod, name, value)


class FakeTorch:
    """A stand-in torch module (only what redtune reads) and a stand-in library call, so the
    torch paths' wiring is checked without torch or a GPU."""

    def __init__(self, monkeypatch):
        import sys
        import types
        t = types.ModuleType("torch")
        t.strided, t.sparse_coo = "strided", "sparse_coo"
        for name in ("float32", "float64", "int32", "uint32", "int64", "uint64", "float16",
                     "bfloat16", "int8", "uint8"):
            setattr(t, name, "torch." + name)
        made = self.made = []

        class Tensor:
            def __init__(s, shape, dtype="torch.float32", cuda=True, ptr=0x1000, contig=True,
                         layout="strided", device=0):
                s.shape, s.dtype, s.is_cuda, s.ptr = tuple(shape), dtype, cuda, ptr
                s.contig, s.layout, s.dev = contig, layout, device
                s.device = "cuda:%d" % device if cuda else "cpu"

            def is_contiguous(s):
                return s.contig

            def stride(s):
                return (1,) * len(s.shape)

            def data_ptr(s):
                return s.ptr

            def get_device(s):
                return s.dev if s.is_cuda else -1

            def numel(s):
                n = 1
                for d in s.shape:
                    n *= d
                return n

            def __getitem__(s, i):
                return ("element", s, i)

            def unbind(s):
                size = 8 if s.dtype in ("torch.float64", "torch.int64", "torch.uint64") else 4
                return tuple(Tensor((), s.dtype, ptr=s.ptr + size * k) for k in range(s.shape[0]))

        def empty(shape, dtype=None, device=None):
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            e = Tensor(shape, dtype, ptr=0x9000 + 0x100 * len(made))
            made.append(e)
            return e

        t.Tensor, t.empty = Tensor, empty
        t._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda d: 0x5000 + d)
        self.compiling = False
        t.compiler = types.SimpleNamespace(is_compiling=lambda: self.compiling)
        t.library = types.SimpleNamespace()   # no custom_op: the operator is not defined
        self.torch = t
        self.calls = []
        calls = self.calls

        class Lib:
            def rt_reduce(self, *args):
                calls.append(args)
                return 0

            def rt_reduce_axis(self, *args):   # nine arguments: told apart by the count
                calls.append(args)
                return 0

        monkeypatch.setitem(sys.modules, "torch", t)
        for mod, name, value in ((_fastpath, "_fast", None), (_fastpath, "_raw_stream", None),
                                 (_fastpath, "_rt_axis", _fastpath._first_axis),
                                 (_fastpath, "_compiling", None), (_args, "_TORCH_DTYPES", {}),
                                 (_arrays, "_TORCH_TYPES", {}),
                                 (_fastpath, "_tensor", _fastpath._Unseen)):
            monkeypatch.setattr(mod, name, value)
        patch_calls(monkeypatch, "library", lambda: Lib())
        ctx = types.SimpleNamespace(_h=0xC7, device=0)
        monkeypatch.setitem(_context._contexts, 0, ctx)


@pytest.fixture
def faketorch(monkeypatch):
    return FakeTorch(monkeypatch)


def test_torch_fast_path_wiring(faketorch):
    T = faketorch.torch.Tensor
    x = T((1024,))
    r = redtune.sum(x)
    assert faketorch.calls == [(0xC7, C.RT_SUM, C.RT_F32, 0x1000, 1024, r.ptr, 0x5000)]
    assert r.shape == () and r.dtype == "torch.float32"
    r = redtune.reduce(T((4, 8), dtype="torch.int64", device=0), "argmax")
    buf = faketorch.made[-1]
    assert buf.shape == (2,) and buf.dtype == "torch.int64" and r == ("element", buf, 1)
    assert faketorch.calls[-1] == (0xC7, C.RT_ARGMAX, C.RT_I64, 0x1000, 32, buf.ptr, 0x5000)


def test_torch_fast_path_results_come_in_batches(faketorch, monkeypatch):
    """New 0-d results are views of a batch allocated once per (dtype, stream): each call a
    distinct value, one allocation for _BATCH calls, a new batch for another stream."""
    T = faketorch.torch.Tensor
    x = T((1024,))
    rs = [redtune.sum(x) for _ in range(_fastpath._BATCH + 1)]
    assert len({r.ptr for r in rs}) == len(rs)
    batches = [m for m in faketorch.made if m.shape == (_fastpath._BATCH,)]
    assert len(batches) == 2 and all(m.dtype == "torch.float32" for m in batches)
    assert {c[5] for c in faketorch.calls} == {r.ptr for r in rs}
    monkeypatch.setattr(_fastpath, "_raw_stream", lambda d: 0x7000)
    r = redtune.sum(x)
    assert faketorch.calls[-1][6] == 0x7000 and len(faketorch.made) == len(batches) + 1
    assert r.ptr == faketorch.made[-1].ptr + 4 * (_fastpath._BATCH - 1)


def test_types_and_fused_ops_wiring(faketorch):
    """The result type and the spec of the new types and operators (docs/types.md): a bf16
    sum gives float32 and passes the plain type; dtype= passes RT_ACC's spec; var_mean gives
    the pair as two views of one {var, mean} buffer; undefined pairs are refused before
    anything is enqueued."""
    T = faketorch.torch.Tensor
    x = T((1024,), dtype="torch.bfloat16")
    r = redtune.sum(x)
    assert r.dtype == "torch.float32"
    assert faketorch.calls[-1] == (0xC7, C.RT_SUM, C.RT_BF16, 0x1000, 1024, r.ptr, 0x5000)
    r = redtune.sum(x)                       # the fast path, once set up
    assert r.dtype == "torch.float32" and faketorch.calls[-1][2] == C.RT_BF16
    r = redtune.sum(x, dtype="float64")
    assert r.dtype == "torch.float64"
    assert faketorch.calls[-1][1:3] == (C.RT_SUM, C.RT_BF16 | ((C.RT_F64 + 1) << 8))
    assert redtune.amax(x).dtype == "torch.bfloat16"
    assert redtune.norm2(T((8,), dtype="torch.float16")).dtype == "torch.float32"
    assert redtune.mean(T((8,), dtype="torch.int8")).dtype == "torch.float64"
    assert faketorch.calls[-1][1:3] == (C.RT_MEAN, C.RT_I8)
    v, m = redtune.var_mean(T((8,)))
    buf = faketorch.made[-1]
    assert buf.shape == (2,) and buf.dtype == "torch.float32"
    assert v == ("element", buf, (Ellipsis, 0)) and m == ("element", buf, (Ellipsis, 1))
    assert faketorch.calls[-1][1:3] == (C.RT_VAR_MEAN_SAMPLE, C.RT_F32)
    redtune.std_mean(T((8,)), correction=0)
    assert faketorch.calls[-1][1] == C.RT_STD_MEAN
    n = len(faketorch.calls)
    with pytest.raises(TypeError, match=r"^redtune.var_mean: var_mean_sample of i8 is not "
                       r"defined: var_mean_sample takes f16, bf16, f32, f64$"):
        redtune.var_mean(T((8,), dtype="torch.int8"))
    with pytest.raises(TypeError, match=r"^redtune.max: x has dtype"):
        redtune.max(T((8,), dtype="torch.complex64"))
    with pytest.raises(TypeError, match=r"^redtune.sum: sum of f64 accumulating in f32 is not "
                       r"defined$"):
        redtune.sum(T((8,), dtype="torch.float64"), dtype="f32")
    with pytest.raises(TypeError, match=r"^redtune.reduce: min of bf16 accumulating in f32 is "
                       r"not defined: min keeps the element type$"):
        redtune.reduce(x, "min", dtype="f32")
    with pytest.raises(TypeError, match=r"^redtune.sum: dtype is 'f128'"):
        redtune.sum(x, dtype="f128")
    with pytest.raises(ValueError, match=r"^redtune.var_mean: correction is 2; 0 "):
        redtune.var_mean(x, correction=2)
    with pytest.raises(ValueError, match=r"^redtune.sum: out must hold 1 element of f32; it "
                       r"has 1 of bf16$"):
        redtune.sum(x, out=T((), dtype="torch.bfloat16"))
    assert len(faketorch.calls) == n


def test_torch_axis_wiring(faketorch, monkeypatch):
    """dim= calls rt_reduce_axis(ctx, op, type, x, outer, len, inner, out, stream) with the
    result allocated by torch in the shape without dim (1 there with keepdim), of the flat
    call's result dtype; an int dim of a plain tensor takes the fast path (no _reduce)."""
    T = faketorch.torch.Tensor
    redtune.sum(T((4,)))                  # the fast path set up
    del faketorch.calls[:]
    general = []
    real = _core._reduce
    monkeypatch.setattr(_core, "_reduce", lambda *a, **k: general.append(a[1:4]) or real(*a, **k))
    x = T((4, 5))
    r = redtune.sum(x, dim=1)
    assert r.shape == (4,) and r.dtype == "torch.float32"
    assert faketorch.calls[-1] == (0xC7, C.RT_SUM, C.RT_F32, 0x1000, 4, 5, 1, r.ptr, 0x5000)
    r = redtune.max(x, dim=0, keepdim=True)
    assert r.shape == (1, 5)
    assert faketorch.calls[-1] == (0xC7, C.RT_MAX, C.RT_F32, 0x1000, 1, 4, 5, r.ptr, 0x5000)
    r = redtune.reduce(T((64, 2048, 512), dtype="torch.bfloat16"), "sum", dim=-2)
    assert r.shape == (64, 512) and r.dtype == "torch.float32"
    assert faketorch.calls[-1][1:7] == (C.RT_SUM, C.RT_BF16, 0x1000, 64, 2048, 512)
    # argmax along an axis: the index alone (RT_RESULT_INDEX), a contiguous int64 result
    r = redtune.argmax(T((3, 17), dtype="torch.int32"), dim=1)
    assert r is faketorch.made[-1]
    assert r.shape == (3,) and r.dtype == "torch.int64"
    assert faketorch.calls[-1] == (0xC7, C.RT_ARGMAX, C.RT_I32 | 0x20000, 0x1000, 3, 17, 1,
                                   r.ptr, 0x5000)
    out = T((5,), ptr=0x4242)
    assert redtune.min(x, dim=0, out=out) is out
    assert faketorch.calls[-1] == (0xC7, C.RT_MIN, C.RT_F32, 0x1000, 1, 4, 5, 0x4242, 0x5000)
    assert general == []                 # every call above took the fast path
    # The general path: var/std_mean (two tensors), stream=, tuple dims, out= of argmax.
    v, m = redtune.var_mean(x, dim=1)
    buf = faketorch.made[-1]
    assert buf.shape == (4, 2) and buf.dtype == "torch.float32"
    assert v == ("element", buf, (Ellipsis, 0)) and m == ("element", buf, (Ellipsis, 1))
    assert faketorch.calls[-1] == (0xC7, C.RT_VAR_MEAN_SAMPLE, C.RT_F32, 0x1000, 4, 5, 1,
                                   buf.ptr, 0x5000)
    s, _ = redtune.std_mean(x, dim=0, keepdim=True, correction=0)
    assert faketorch.made[-1].shape == (1, 5, 2)
    assert faketorch.calls[-1][1] == C.RT_STD_MEAN
    r = redtune.sum(x, dim=1, stream=77)
    assert faketorch.calls[-1] == (0xC7, C.RT_SUM, C.RT_F32, 0x1000, 4, 5, 1, r.ptr, 77)
    r = redtune.sum(T((2, 3, 4, 5)), dim=(1, 2), keepdim=True)
    assert r.shape == (2, 1, 1, 5)
    assert faketorch.calls[-1][4:7] == (2, 12, 5)
    pair = T((4, 2), dtype="torch.int64", ptr=0x4343)
    assert redtune.argmin(x, dim=1, out=pair) is pair
    assert faketorch.calls[-1][1:] == (C.RT_ARGMIN, C.RT_F32, 0x1000, 4, 5, 1, 0x4343, 0x5000)
    r = redtune.sum(x, dim=1, dtype="f64")
    assert r.dtype == "torch.float64"
    assert faketorch.calls[-1][2] == C.RT_F32 | ((C.RT_F64 + 1) << 8)
    assert len(general) == 6
    # One output: the flat call (rt_reduce, seven arguments); no output: no call at all.
    r = redtune.sum(T((1, 5)), dim=1)
    assert r.shape == (1,) and faketorch.calls[-1] == (0xC7, C.RT_SUM, C.RT_F32, 0x1000, 5,
                                                       r.ptr, 0x5000)
    n = len(faketorch.calls)
    r = redtune.sum(T((0, 5)), dim=1)
    assert r.shape == (0,) and len(faketorch.calls) == n
    r = redtune.sum(T((4, 0, 5)), dim=1)    # len 0: the identity per output, by the library
    assert r.shape == (4, 5) and faketorch.calls[-1][4:7] == (4, 0, 5)


def test_torch_axis_refusals(faketorch):
    """Bad dims, out= and non-contiguous inputs along an axis: the general path's errors,
    nothing enqueued."""
    T = faketorch.torch.Tensor
    redtune.sum(T((4,)))
    del faketorch.calls[:]
    x = T((4, 5))
    with pytest.raises(IndexError, match=r"^redtune.sum: dim 2 is out of range for 2 "
                       r"dimensions \(-2 to 1\)$"):
        redtune.sum(x, dim=2)
    with pytest.raises(ValueError, match=r"^redtune.sum: out has shape \(5,\) of f32; shape "
                       r"\(4,\) of f32 is expected$"):
        redtune.sum(x, dim=1, out=T((5,)))
    with pytest.raises(ValueError, match=r"^redtune.sum: out has shape \(4,\) of f64; shape "
                       r"\(4,\) of f32 is expected$"):
        redtune.sum(x, dim=1, out=T((4,), dtype="torch.float64"))
    with pytest.raises(ValueError, match=r"^redtune.sum: out has shape \(4,\) of f32; shape "
                       r"\(4, 1\) of f32 is expected$"):
        redtune.sum(x, dim=1, keepdim=True, out=T((4,)))
    with pytest.raises(ValueError, match=r"^redtune.argmax: out has shape \(4,\) of i64; "
                       r"shape \(4, 2\) of i64 \(a \{value, index\} pair per result\) is "
                       r"expected$"):
        redtune.argmax(x, dim=1, out=T((4,), dtype="torch.int64"))
    with pytest.raises(ValueError, match=r"^redtune.var_mean: out has shape \(4,\) of f32; "
                       r"shape \(4, 2\) of f32 is expected$"):
        redtune.var_mean(x, dim=1, out=T((4,)))
    with pytest.raises(ValueError, match=r"^redtune.sum: out is on device 1 and x on device 0$"):
        redtune.sum(x, dim=1, out=T((4,), device=1))
    with pytest.raises(redtune.InvalidArgumentError) as ei:
        redtune.sum(T((4, 5), contig=False), dim=0)
    assert ei.value.code == C.RT_EINVAL and ei.value.message == (
        "redtune.sum: x is not contiguous (shape (4, 5), strides (1, 1) in elements); redtune "
        "reads C-contiguous arrays: pass x.contiguous() (torch) or cupy.ascontiguousarray(x)")
    with pytest.raises(TypeError, match=r"^redtune.amax: amax of i32 is not defined"):
        redtune.amax(T((4, 5), dtype="torch.int32"), dim=1)
    assert faketorch.calls == []


def test_torch_general_path_wiring(faketorch):
    T = faketorch.torch.Tensor
    x = T((1, 100), dtype="torch.uint32")
    r = redtune.min(x, dim=1, stream=77)
    assert r.shape == (1,)
    assert faketorch.calls == [(0xC7, C.RT_MIN, C.RT_U32, 0x1000, 100, r.ptr, 77)]
    out = T((), dtype="torch.uint32", ptr=0x4242)
    assert redtune.max(x, out=out) is out
    assert faketorch.calls[-1] == (0xC7, C.RT_MAX, C.RT_U32, 0x1000, 100, 0x4242, 0x5000)


def test_torch_refusals(faketorch):
    T = faketorch.torch.Tensor
    with pytest.raises(TypeError, match=r"^redtune.sum: x is on device 'cpu'; a CUDA tensor is "
                       r"expected$"):
        redtune.sum(T((4,), cuda=False))
    with pytest.raises(TypeError, match=r"^redtune.sum: x has dtype torch.complex64; redtune "
                       r"reduces float32, float64, int32, uint32, int64, uint64, float16, "
                       r"bfloat16, int8 or uint8$"):
        redtune.sum(T((4,), dtype="torch.complex64"))
    with pytest.raises(redtune.InvalidArgumentError,
                       match=r"^RT_EINVAL: redtune.prod: x is not contiguous"):
        redtune.prod(T((4, 4), contig=False))
    with pytest.raises(TypeError, match=r"^redtune.sum: x is a sparse_coo tensor"):
        redtune.sum(T((4,), layout="sparse_coo"))
    with pytest.raises(ValueError, match=r"^redtune.sum: out is on device 1 and x on device 0$"):
        redtune.sum(T((4,)), out=T((), device=1))
    assert faketorch.calls == []


def test_torch_compile_routes_to_the_custom_op(faketorch):
    faketorch.compiling = True
    with pytest.raises(RuntimeError, match=r"^redtune.sum under torch.compile: "
                       r"torch.ops.redtune.reduce is not defined"):
        redtune.sum(faketorch.torch.Tensor((4,)))
    with pytest.raises(NotImplementedError, match=r"^redtune.sum under torch.compile: a "
                       r"built-in op with no out=, stream=, temp= or dtype="):
        redtune.sum(faketorch.torch.Tensor((4,)), stream=3)


def test_torch_capture_gets_torch_storage(faketorch, monkeypatch):
    """Under a CUDA graph capture, a call the library refuses (RT_ECAPTURE) for want of
    temporary storage is made again on storage torch allocates (rt_reduce_temp, sized by
    rt_temp_bytes); one refused because its kernel is not loaded raises CaptureError."""
    import types
    calls, state = [], {"loaded": True}

    class Lib:
        def rt_reduce(self, *args):
            calls.append(("reduce",) + args)
            return C.RT_ECAPTURE

        def rt_reduce_temp(self, *args):
            calls.append(("temp",) + args)
            if not state["loaded"]:
                return C.RT_ECAPTURE
            return 0 if args[6] and args[7] >= 512 else C.RT_EINVAL

        def rt_temp_bytes(self, h, code, rtype, n, ref):
            calls.append(("bytes", h, code, rtype, n))
            ref._obj.value = 512
            return 0

    patch_calls(monkeypatch, "library", lambda: Lib())
    t = faketorch.torch
    t.uint8 = "torch.uint8"
    t.cuda = types.SimpleNamespace(
        current_stream=lambda d: types.SimpleNamespace(cuda_stream=0x5000))
    x = t.Tensor((1024,))
    r = redtune.sum(x)
    tmp = faketorch.made[-1]
    assert tmp.shape == (512,) and tmp.dtype == "torch.uint8"
    head = (0xC7, C.RT_SUM, C.RT_F32, 0x1000, 1024, r.ptr)
    assert calls == [("reduce",) + head + (0x5000,), ("temp",) + head + (None, 0, 0x5000),
                     ("bytes", 0xC7, C.RT_SUM, C.RT_F32, 1024),
                     ("temp",) + head + (tmp.ptr, 512, 0x5000)]
    state["loaded"] = False
    del calls[:]
    with pytest.raises(redtune.CaptureError) as ei:
        redtune.sum(x)
    assert ei.value.code == C.RT_ECAPTURE
    assert [c[0] for c in calls] == ["reduce", "temp"]


def test_torch_fast_path_takes_the_common_calls(faketorch, monkeypatch):
    """Once torch has been seen, a plain torch.Tensor with no dim, stream or temp goes from
    the shortcut (or reduce) straight to the library: _reduce and describe are not run."""
    T = faketorch.torch.Tensor
    x = T((1024,))
    redtune.sum(x)                        # the first call sets the fast path up
    del faketorch.calls[:]

    def boom(*a, **k):
        raise AssertionError("the general path ran")
    monkeypatch.setattr(_core, "_reduce", boom)
    patch_calls(monkeypatch, "describe", boom)
    r = redtune.sum(x)
    assert faketorch.calls[-1] == (0xC7, C.RT_SUM, C.RT_F32, 0x1000, 1024, r.ptr, 0x5000)
    assert r.shape == () and r.dtype == "torch.float32"
    for op, code in (("max", C.RT_MAX), (C.RT_PROD, C.RT_PROD)):
        r = redtune.reduce(x, op)
        assert faketorch.calls[-1] == (0xC7, code, C.RT_F32, 0x1000, 1024, r.ptr, 0x5000)
    r = redtune.argmin(T((8,), dtype="torch.uint64"))
    buf = faketorch.made[-1]
    assert buf.shape == (2,) and buf.dtype == "torch.int64" and r == ("element", buf, 1)
    assert faketorch.calls[-1] == (0xC7, C.RT_ARGMIN, C.RT_U64, 0x1000, 8, buf.ptr, 0x5000)
    out = T((), ptr=0x4242)
    assert redtune.min(x, out=out) is out
    assert faketorch.calls[-1] == (0xC7, C.RT_MIN, C.RT_F32, 0x1000, 1024, 0x4242, 0x5000)
    pair = T((2,), dtype="torch.int64", ptr=0x4343)
    assert redtune.reduce(x, "argmax", out=pair) is pair
    assert faketorch.calls[-1] == (0xC7, C.RT_ARGMAX, C.RT_F32, 0x1000, 1024, 0x4343, 0x5000)
    assert len(faketorch.calls) == 6


def test_torch_fast_path_passes_refusals_on(faketorch):
    """Every call the fast path does not take reaches the general path's checks, with their
    messages, and nothing is enqueued."""
    T = faketorch.torch.Tensor
    redtune.sum(T((4,)))                  # the fast path set up
    del faketorch.calls[:]
    cases = [
        (lambda: redtune.sum(T((4,), cuda=False)), TypeError,
         r"^redtune.sum: x is on device 'cpu'; a CUDA tensor is expected$"),
        (lambda: redtune.max(T((4,), dtype="torch.complex64")), TypeError,
         r"^redtune.max: x has dtype torch.complex64; redtune reduces float32, float64, int32, "
         r"uint32, int64, uint64, float16, bfloat16, int8 or uint8$"),
        (lambda: redtune.reduce(T((4, 4), contig=False), "sum"), redtune.InvalidArgumentError,
         r"^RT_EINVAL: redtune.reduce: x is not contiguous"),
        (lambda: redtune.argmax(T((4,), layout="sparse_coo")), TypeError,
         r"^redtune.argmax: x is a sparse_coo tensor"),
        (lambda: redtune.sum(T((4,)), out=T((), device=1)), ValueError,
         r"^redtune.sum: out is on device 1 and x on device 0$"),
        (lambda: redtune.sum(T((4,)), out=T((), dtype="torch.float64")), ValueError,
         r"^redtune.sum: out must hold 1 element of f32; it has 1 of f64$"),
        (lambda: redtune.sum(T((4,)), out=T((2,))), ValueError,
         r"^redtune.sum: out must hold 1 element of f32; it has 2 of f32$"),
        (lambda: redtune.sum(T((4,)), out=T((), contig=False)), redtune.InvalidArgumentError,
         r"^RT_EINVAL: redtune.sum: out is not contiguous"),
        (lambda: redtune.argmin(T((4,)), out=T((2,))), ValueError,
         r"^redtune.argmin: out for argmin/argmax must hold 2 int64"),
        (lambda: redtune.reduce(T((4,)), True), ValueError, r"^redtune.reduce: op is True"),
        (lambda: redtune.reduce(T((4,)), ["sum"]), ValueError,
         r"^redtune.reduce: op is \['sum'\]"),
        (lambda: redtune.reduce(T((4,)), C.RT_OP_COUNT), ValueError,
         r"^redtune.reduce: op is %d" % C.RT_OP_COUNT),
    ]
    for call, exc, text in cases:
        with pytest.raises(exc, match=text):
            call()
    assert faketorch.calls == []


def test_torch_fast_path_opens_a_context_through_the_general_path(faketorch, monkeypatch):
    """A device whose context is not open yet: the general path opens it, later calls take
    the fast path with it."""
    import types
    opened = []

    def fake_context(device, db):
        opened.append(device)
        return types.SimpleNamespace(_h=0xD0 + device, device=device)
    monkeypatch.setattr(_context, "Context", fake_context)
    monkeypatch.delitem(_context._contexts, 3, raising=False)
    T = faketorch.torch.Tensor
    x = T((16,), device=3)
    r1, r2 = redtune.sum(x), redtune.sum(x)
    assert opened == [3]
    assert faketorch.calls == [(0xD3, C.RT_SUM, C.RT_F32, 0x1000, 16, r.ptr, 0x5003)
                               for r in (r1, r2)]
    monkeypatch.delitem(_context._contexts, 3)



# ---------------------------------------------------------------- the CuPy fast path, faked

class FakeCupy:
    """A stand-in cupy module (what redtune reads) and library call."""

    def __init__(self, monkeypatch):
        import sys
        import types
        made = self.made = []
        state = self.state = {"device": 0}

        class ndarray:
            def __init__(s, shape, dtype="<f4", ptr=0x2000, contig=True, device=0):
                s.shape, s.ptr = tuple(shape), ptr
                s.dtype = types.SimpleNamespace(str=dtype)
                s.itemsize = int(dtype[2:])
                s.flags = types.SimpleNamespace(c_contiguous=contig)
                s.strides = tuple(s.itemsize * 2 for _ in shape)
                s.device = types.SimpleNamespace(id=device)
                s.data = types.SimpleNamespace(ptr=ptr)
                s.size = 1
                for d in shape:
                    s.size *= d

            def __getitem__(s, i):
                return ("element", s, i)

            def unbind(s):
                size = 8 if s.dtype in ("torch.float64", "torch.int64", "torch.uint64") else 4
                return tuple(Tensor((), s.dtype, ptr=s.ptr + size * k) for k in range(s.shape[0]))

        def empty(shape, dtype="<f4"):
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            dt = dtype.str if hasattr(dtype, "str") else dtype
            e = ndarray(shape, dt, ptr=0xA000 + 0x100 * len(made), device=state["device"])
            made.append(e)
            return e

        class Device:
            def __init__(s, i):
                s.i = i

            def __enter__(s):
                s.old, state["device"] = state["device"], s.i

            def __exit__(s, *a):
                state["device"] = s.old

        m = types.ModuleType("cupy")
        m.ndarray, m.empty = ndarray, empty
        m.cuda = types.SimpleNamespace(
            runtime=types.SimpleNamespace(getDevice=lambda: state["device"]),
            get_current_stream=lambda: types.SimpleNamespace(ptr=0x6000 + state["device"]),
            Device=Device)
        self.cupy = m
        calls = self.calls = []

        class Lib:
            def rt_reduce(self, *args):
                calls.append(args)
                return 0

        monkeypatch.setitem(sys.modules, "cupy", m)
        monkeypatch.delitem(sys.modules, "torch", raising=False)
        monkeypatch.setattr(_fastpath, "_cparray", _fastpath._Unseen)
        monkeypatch.setattr(_fastpath, "_cupy", None)
        patch_calls(monkeypatch, "library", lambda: Lib())
        for dev in (0, 1):
            monkeypatch.setitem(_context._contexts, dev, types.SimpleNamespace(_h=0xE0 + dev))


def test_cupy_fast_path(monkeypatch):
    fc = FakeCupy(monkeypatch)
    A = fc.cupy.ndarray
    x = A((64,))
    r = redtune.sum(x)                    # the general path, which sets the fast one up
    assert fc.calls == [(0xE0, C.RT_SUM, C.RT_F32, 0x2000, 64, r.ptr, 0x6000)]
    assert r.shape == () and r.dtype.str == "<f4"

    def boom(*a, **k):
        raise AssertionError("the general path ran")
    with monkeypatch.context() as m:
        patch_calls(m, "describe", boom)
        patch_calls(m, "_allocate", boom)
        r = redtune.max(A((4, 8), dtype="<i8"))
        assert fc.calls[-1] == (0xE0, C.RT_MAX, C.RT_I64, 0x2000, 32, r.ptr, 0x6000)
        assert r.dtype.str == "<i8"
        r = redtune.reduce(x, "argmin")
        buf = fc.made[-1]
        assert buf.shape == (2,) and buf.dtype.str == "<i8" and r == ("element", buf, 1)
        assert fc.calls[-1] == (0xE0, C.RT_ARGMIN, C.RT_F32, 0x2000, 64, buf.ptr, 0x6000)
        out = A((), ptr=0x4444)
        assert redtune.prod(x, out=out) is out
        assert fc.calls[-1] == (0xE0, C.RT_PROD, C.RT_F32, 0x2000, 64, 0x4444, 0x6000)
    n = len(fc.calls)
    # not on the current device: the general path, which switches to x's device
    y = A((8,), device=1)
    r = redtune.sum(y)
    assert fc.calls[-1] == (0xE1, C.RT_SUM, C.RT_F32, 0x2000, 8, r.ptr, 0x6001)
    assert r.device.id == 1 and fc.state["device"] == 0
    # refusals, with the general path's messages, nothing enqueued
    with pytest.raises(redtune.InvalidArgumentError,
                       match=r"^RT_EINVAL: redtune.sum: x is not contiguous"):
        redtune.sum(A((4, 4), contig=False))
    with pytest.raises(TypeError, match=r"^redtune.min: x has dtype .*; redtune reduces"):
        redtune.min(A((4,), dtype="<c8"))
    with pytest.raises(ValueError, match=r"^redtune.sum: out must hold 1 element of f32; it "
                       r"has 1 of f64$"):
        redtune.sum(x, out=A((), dtype="<f8"))
    with pytest.raises(ValueError, match=r"^redtune.sum: out is on device 1 and x on device 0$"):
        redtune.sum(x, out=A((), device=1))
    assert len(fc.calls) == n + 1


def test_fast_paths_set_up_without_the_library(faketorch, monkeypatch):
    """Meeting a framework's first array loads nothing: a refusal is the argument check's,
    not the library's absence; the library is looked up at the first fast call."""
    def no_library():
        raise OSError("redtune: libredtune not found")
    patch_calls(monkeypatch, "library", no_library)
    T = faketorch.torch.Tensor
    with pytest.raises(redtune.InvalidArgumentError,
                       match=r"^RT_EINVAL: redtune.prod: x is not contiguous"):
        redtune.prod(T((4, 4), contig=False))
    fc = FakeCupy(monkeypatch)
    patch_calls(monkeypatch, "library", no_library)
    with pytest.raises(redtune.InvalidArgumentError,
                       match=r"^RT_EINVAL: redtune.sum: x is not contiguous"):
        redtune.sum(fc.cupy.ndarray((4, 4), contig=False))
