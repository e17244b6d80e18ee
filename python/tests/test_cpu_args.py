"""The CPU tests of argument checking and bad input (no GPU, no framework needed): the array
protocols with fake arrays (__cuda_array_interface__ objects, DLPack capsules made with
ctypes), operators, dims and axis shapes, out=, streams, user operators, explain and
temp_bytes along an axis, the operator file reader. tests/run.sh runs it in `ninja test`."""
import builtins
import ctypes
import itertools
import os
import random

import pytest

import redtune
from redtune import _arrays, _axes, _core, _opfile
from redtune import consts as C

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---------------------------------------------------------------- fake arrays

class CAI:
    """An object with only __cuda_array_interface__."""

    def __init__(self, shape=(10,), typestr="<f4", ptr=0x7000_0000, strides=None, **extra):
        self.__cuda_array_interface__ = dict(shape=shape, typestr=typestr, data=(ptr, False),
                                             strides=strides, version=3, **extra)


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class DLPack:
    """An object with __dlpack__ / __dlpack_device__ over a DLManagedTensor made with ctypes.
    'versioned' makes a DLManagedTensorVersioned capsule when max_version is asked for."""

    def __init__(self, shape=(8,), code=_arrays.kDLFloat, bits=32, device=(2, 0),
                 strides=None, versioned=True, major=1, flags=0, old=False):
        self.shape_c = (ctypes.c_int64 * len(shape))(*shape)
        self.strides_c = (ctypes.c_int64 * len(shape))(*strides) if strides else None
        self.dev, self.versioned, self.old = device, versioned, old
        t = _arrays.DLTensor(data=0x7000_0000, device=_arrays.DLDevice(*device),
                             ndim=len(shape), dtype=_arrays.DLDataType(code, bits, 1),
                             shape=ctypes.cast(self.shape_c, ctypes.POINTER(ctypes.c_int64)),
                             strides=ctypes.cast(self.strides_c, ctypes.POINTER(ctypes.c_int64))
                             if strides else None, byte_offset=64)
        self.m = _arrays.DLManagedTensor(dl_tensor=t)
        self.mv = _arrays.DLManagedTensorVersioned(version=_arrays.DLPackVersion(major, 0),
                                                   flags=flags, dl_tensor=t)
        self.calls = []

    def __dlpack_device__(self):
        return self.dev

    def __dlpack__(self, stream=None, max_version=None):
        if self.old and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        self.calls.append(dict(stream=stream, max_version=max_version))
        if self.versioned and max_version is not None:
            return _new_capsule(ctypes.addressof(self.mv), b"dltensor_versioned", None)
        return _new_capsule(ctypes.addressof(self.m), b"dltensor", None)


def test_cai_is_read():
    info = _arrays.describe(CAI(shape=(3, 4), typestr="<i8", ptr=4096), "x", "t")
    assert (info.ptr, info.shape, info.strides, info.type, info.size) == (
        4096, (3, 4), None, C.RT_I64, 12)
    assert info.device is None   # the interface names none: the driver is asked
    info = _arrays.describe(CAI(shape=(3, 4), strides=(16, 4)), "x", "t")
    assert info.strides is None   # C order, spelt out
    info = _arrays.describe(CAI(shape=(3, 4), strides=(4, 12)), "x", "t")
    assert info.strides == (1, 3)
    info = _arrays.describe(CAI(stream=7), "x", "t")
    assert info.stream == 7


@pytest.mark.parametrize("obj, exc, text", [
    (CAI(typestr="<c8"), TypeError,
     "t: x has typestr '<c8'; redtune reduces float32, float64, int32, uint32, int64, uint64, "
     "float16, bfloat16, int8 or uint8 (<f4 <f8 <i4 <u4 <i8 <u8 <f2 |i1 |u1)"),
    (CAI(typestr=">f4"), TypeError, "t: x has typestr '>f4'"),
    (CAI(strides=(6,)), ValueError,
     "t: x has strides (6,) that are no whole number of 4-byte elements for shape (10,)"),
    (CAI(mask=object()), TypeError, "t: x is a masked array; redtune reduces unmasked arrays"),
    (CAI(stream=0), ValueError, "t: x.__cuda_array_interface__ has stream 0, which the "
     "protocol disallows (1 is the legacy default stream)"),
    (CAI(ptr=0), ValueError, "t: x has a NULL data pointer"),
    (object(), TypeError, "t: x is a object, which offers neither __cuda_array_interface__ "
     "nor __dlpack__; a CUDA device array is expected"),
    (type("Host", (), {"__array_interface__": {}})(), TypeError,
     "t: x is a host array (Host); a CUDA device array is expected"),
])
def test_bad_arrays_are_refused_naming_the_argument(obj, exc, text):
    with pytest.raises(exc) as ei:
        _arrays.describe(obj, "x", "t")
    assert str(ei.value).startswith(text)


def test_cai_without_a_driver_names_the_argument():
    if os.path.exists("/dev/nvidia0"):
        pytest.skip("a GPU is present")
    with pytest.raises(TypeError, match=r"^redtune.sum: the device of x cannot be found"):
        redtune.sum(CAI())


def test_dlpack_versioned_is_read_and_borrowed():
    x = DLPack(shape=(2, 3), device=(2, 1))
    info = _arrays.describe(x, "x", "t", stream=5)
    assert (info.ptr, info.shape, info.strides, info.type, info.device) == (
        0x7000_0000 + 64, (2, 3), None, C.RT_F32, 1)
    assert x.calls == [dict(stream=5, max_version=(1, 0))]
    # borrowed: the capsule still has its name, so its producer's deleter runs when it goes
    assert _arrays._capsule_valid(info.keep, b"dltensor_versioned")


def test_dlpack_stream_default_and_old_producers():
    x = DLPack(versioned=False, old=True)
    info = _arrays.describe(x, "x", "t")
    assert x.calls == [dict(stream=1, max_version=None)]   # None: the legacy default, 1
    assert info.type == C.RT_F32 and not info.readonly
    x = DLPack(versioned=False)
    _arrays.describe(x, "x", "t")
    assert x.calls[0]["max_version"] == (1, 0)


def test_dlpack_strides_and_read_only():
    info = _arrays.describe(DLPack(shape=(4, 2), strides=(1, 4)), "x", "t")
    assert info.strides == (1, 4)
    info = _arrays.describe(DLPack(shape=(4, 2), strides=(2, 1)), "x", "t")
    assert info.strides is None
    info = _arrays.describe(DLPack(flags=_arrays.DLPACK_READ_ONLY), "x", "t")
    assert info.readonly


@pytest.mark.parametrize("obj, text", [
    (DLPack(device=(1, 0)), "t: x is on DLPack device cpu; a CUDA device array is expected"),
    (DLPack(device=(3, 0)), "t: x is on DLPack device cuda_host (pinned host memory); a CUDA "
     "device array is expected"),
    (DLPack(bits=8), "t: x has DLPack dtype (code 2, 8 bits, 1 lanes); redtune reduces "
     "float32, float64, int32, uint32, int64, uint64, float16, bfloat16, int8 or uint8"),
    (DLPack(major=2), "t: x is a DLPack 2.0 tensor; this reader knows major version 1"),
])
def test_bad_dlpack_is_refused(obj, text):
    with pytest.raises(TypeError) as ei:
        _arrays.describe(obj, "x", "t")
    assert str(ei.value) == text


def test_cpu_dlpack_is_refused_before_export():
    x = DLPack(device=(1, 0))
    with pytest.raises(TypeError):
        redtune.sum(x)
    assert x.calls == []


def test_non_contiguous_is_refused_before_anything():
    # rows with gaps between them (x[:, :2] of a 4 x 4): not one dense block
    with pytest.raises(redtune.InvalidArgumentError) as ei:
        redtune.max(DLPack(shape=(4, 2), strides=(4, 1)))
    assert ei.value.code == C.RT_EINVAL and isinstance(ei.value, ValueError)
    assert ei.value.message == (
        "redtune.max: x is not contiguous (shape (4, 2), strides (4, 1) in elements); redtune "
        "reads C-contiguous arrays: pass x.contiguous() (torch) or cupy.ascontiguousarray(x)")
    # a transpose is one dense block: an index over every element would be the memory's
    with pytest.raises(NotImplementedError, match=r"^redtune.argmax: x is a view of shape "
                       r"\(4, 2\) with strides \(1, 4\) in elements: the dims it reduces are "
                       r"in another order in memory"):
        redtune.argmax(DLPack(shape=(4, 2), strides=(1, 4)))
    with pytest.raises(redtune.InvalidArgumentError,
                       match="^RT_EINVAL: redtune.reduce_offsets: offsets is not contiguous"):
        redtune.reduce_offsets(DLPack(), DLPack(shape=(4, 2), strides=(1, 4),
                                                code=_arrays.kDLInt), "sum")


def test_segment_flags_are_checked_before_the_library():
    off = DLPack(shape=(5,), code=_arrays.kDLInt)
    with pytest.raises(ValueError, match="^redtune.reduce_offsets: skewed=True .* and "
                       "uniform=True .* contradict each other$"):
        redtune.reduce_offsets(DLPack(), off, "sum", skewed=True, uniform=True)
    with pytest.raises(TypeError, match="^redtune.reduce_offsets: uniform is 'yes'; True or "
                       "False is expected$"):
        redtune.reduce_offsets(DLPack(), off, "sum", uniform="yes")


def test_out_is_checked():
    x = DLPack(shape=(8,))
    with pytest.raises(ValueError, match=r"^redtune.sum: out must hold 1 element of f32; it "
                       r"has 2 of f32$"):
        redtune.sum(x, out=DLPack(shape=(2,)))
    with pytest.raises(ValueError, match=r"^redtune.sum: out is on device 1 and x on device 0$"):
        redtune.sum(x, out=DLPack(shape=(1,), device=(2, 1)))
    with pytest.raises(ValueError, match=r"^redtune.sum: out is read-only$"):
        redtune.sum(x, out=DLPack(shape=(1,), flags=_arrays.DLPACK_READ_ONLY))
    with pytest.raises(ValueError, match=r"^redtune.argmin: out for argmin/argmax must hold 2 "
                       r"int64 \(a \{value, index\} pair per result, the index second\); it "
                       r"has 1 of i64$"):
        redtune.argmin(x, out=DLPack(shape=(1,), code=_arrays.kDLInt, bits=64))


def test_an_unknown_framework_needs_out():
    with pytest.raises(TypeError, match=r"^redtune.sum: x is a DLPack, whose framework redtune "
                       r"cannot allocate in .*: pass out=, a device array for the result$"):
        redtune.sum(DLPack())


def test_a_valid_call_reaches_the_library():
    """Every check passes; with no GPU here, rt_open's error comes back as an exception."""
    if os.path.exists("/dev/nvidia0"):
        pytest.skip("a GPU is present")
    with pytest.raises(redtune.CUDAError) as ei:
        redtune.sum(DLPack(), out=DLPack(shape=()))
    assert ei.value.code == C.RT_ECUDA
    assert ei.value.message.startswith("no CUDA driver found")
    with pytest.raises(redtune.CUDAError):   # along an axis: the same
        redtune.sum(DLPack(shape=(4, 5)), dim=0, out=DLPack(shape=(5,)))


def test_ops_and_dims():
    x = DLPack(shape=(4, 5))
    with pytest.raises(ValueError, match=r"^redtune.reduce: op is 'median'; one of sum, prod, "
                       r"min, max, argmin, argmax, amax, asum, sumsq, norm2, mean, var_mean, "
                       r"var_mean_sample, std_mean, std_mean_sample, or a redtune.UserOp$"):
        redtune.reduce(x, "median")
    with pytest.raises(ValueError, match=r"op is 15"):
        redtune.reduce(x, 15)
    with pytest.raises(NotImplementedError) as ei:
        redtune.sum(DLPack(shape=(2, 3, 4)), dim=(0, 2))
    assert str(ei.value) == (
        "redtune.sum: dim=(0, 2) of an array of shape (2, 3, 4): redtune reduces along one "
        "axis, or along adjacent axes as one; these are not adjacent (move them together "
        "first: x.movedim(...).contiguous())")
    with pytest.raises(IndexError, match=r"^redtune.sum: dim 2 is out of range for 2 "
                       r"dimensions \(-2 to 1\)$"):
        redtune.sum(x, dim=2)
    with pytest.raises(IndexError, match=r"^redtune.argmax: dim -3 is out of range for 2 "
                       r"dimensions \(-2 to 1\)$"):
        redtune.argmax(x, dim=-3)
    with pytest.raises(ValueError, match=r"^redtune.sum: dim -1 appears twice in dim=\(1, -1\)$"):
        redtune.sum(x, dim=(1, -1))
    with pytest.raises(TypeError, match=r"^redtune.sum: dim is 1.5; an int or a tuple of ints"):
        redtune.sum(x, dim=1.5)
    with pytest.raises(TypeError, match=r"^redtune.sum: dim holds True; ints are expected$"):
        redtune.sum(x, dim=(True,))
    d = _axes._dims
    assert d(None, (4, 5), False, "t") == ()
    assert d(None, (4, 5), True, "t") == (1, 1)
    assert d((0, 1), (4, 5), False, "t") == ()
    assert d((-1, 0), (4, 5), True, "t") == (1, 1)
    assert d(1, (1, 5), False, "t") == (1,)
    assert d(0, (7,), False, "t") == ()
    assert d(0, (), False, "t") == ()


@pytest.mark.parametrize("shape, dim, keepdim, result, axis", [
    # rows, columns, negative dims, keepdim
    ((4, 5), 1, False, (4,), (4, 5, 1)),
    ((4, 5), -1, False, (4,), (4, 5, 1)),
    ((4, 5), 0, False, (5,), (1, 4, 5)),
    ((4, 5), -2, True, (1, 5), (1, 4, 5)),
    ((4, 5), 1, True, (4, 1), (4, 5, 1)),
    # the middle axis of 3-D, ragged, the shapes
    ((2, 3, 4), 1, False, (2, 4), (2, 3, 4)),
    ((2, 3, 4), -2, True, (2, 1, 4), (2, 3, 4)),
    ((3, 17), 1, False, (3,), (3, 17, 1)),
    ((3, 17), 0, False, (17,), (1, 3, 17)),
    ((1 << 20, 16), 1, False, (1 << 20,), (1 << 20, 16, 1)),
    ((64, 2048, 512), 1, False, (64, 512), (64, 2048, 512)),
    # len 1, len 0 (the identity per output), no output at all
    ((4, 1, 5), 1, False, (4, 5), (4, 1, 5)),
    ((4, 0, 5), 1, False, (4, 5), (4, 0, 5)),
    ((4, 0, 5), 1, True, (4, 1, 5), (4, 0, 5)),
    ((0, 5), 1, False, (0,), (0, 5, 1)),
    ((5, 0), 0, False, (0,), (1, 5, 0)),
    # adjacent dims as one axis; dim=() is every dim
    ((2, 3, 4, 5), (1, 2), False, (2, 5), (2, 12, 5)),
    ((2, 3, 4, 5), (-2, 1), True, (2, 1, 1, 5), (2, 12, 5)),
    ((2, 3, 4, 5), (0, 1, 2), False, (5,), (1, 24, 5)),
    ((4, 5), (), False, (), None),
    # one output: the flat call (the same reduction, flat-tuned)
    ((1, 5), 1, False, (1,), None),
    ((7,), 0, False, (), None),
    ((7,), -1, True, (1,), None),
    ((1, 1, 9), 2, False, (1, 1), None),
    ((), 0, False, (), None),
    ((), -1, True, (), None),
])
def test_axis_shapes(shape, dim, keepdim, result, axis):
    """outer = prod(shape[:dim]), len = shape[dim], inner = prod(shape[dim+1:]); the result
    is the shape without dim (1 there with keepdim), as torch's dim reductions."""
    assert _axes._axis(dim, shape, keepdim, "t") == (result, axis)


def test_user_op_type_must_match():
    op = redtune.register_op(name="satsum", type="u32", identity="0u",
                             combine="return a + b;", commutative=True)
    with pytest.raises(TypeError, match=r"^redtune.reduce: x has dtype f32 and operator "
                       r"'satsum' reduces u32$"):
        redtune.reduce(DLPack(), op)


def test_register_op_arguments():
    with pytest.raises(ValueError, match=r"type is 'f8'"):
        redtune.register_op(name="a", type="f8", identity="0", combine="return a;",
                            commutative=True)
    with pytest.raises(TypeError, match=r"^redtune.register_op: missing combine, commutative$"):
        redtune.register_op(dict(name="a", type="f32", identity="0"))
    with pytest.raises(TypeError, match=r"unknown field sample"):
        redtune.register_op(name="a", type="f32", identity="0", combine="return a;",
                            commutative=True, sample=1)


def test_stream_arguments():
    h = redtune.stream_handle
    assert h(0) == 0 and h(1234) == 1234
    assert h(type("TorchStream", (), {"cuda_stream": 77})()) == 77
    assert h(type("CupyStream", (), {"ptr": 78})()) == 78
    assert h(type("Proto", (), {"__cuda_stream__": lambda self: (0, 79)})()) == 79
    assert h(type("Numba", (), {"handle": ctypes.c_void_p(80)})()) == 80
    with pytest.raises(TypeError, match=r"^redtune: stream is a str; a stream handle"):
        h("s")


def test_axis_explain_and_temp_bytes(monkeypatch):
    """explain and temp_bytes with dim= go to rt_explain_axis / rt_axis_temp_bytes with
    (outer, len, inner); without dim, or with one output, to the flat ones."""
    import types
    seen = []
    fake = types.SimpleNamespace(
        explain_axis=lambda op, t, o, ln, i: seen.append(("axis", op, t, o, ln, i)) or "A",
        explain=lambda op, t, n: seen.append(("flat", op, t, n)) or "F",
        axis_temp_bytes=lambda op, t, o, ln, i: seen.append(("tbytes", op, t, o, ln, i)) or 7,
        temp_bytes=lambda op, t, n: seen.append(("fbytes", op, t, n)) or 3)
    monkeypatch.setattr(_core, "context", lambda device=None: fake)
    assert redtune.explain((4096, 4096), "sum", dim=0) == "A"
    assert redtune.explain((64, 2048, 512), "min", type="bf16", dim=1) == "A"
    assert redtune.explain(DLPack(shape=(3, 17)), "max", dim=-1) == "A"
    assert redtune.explain((1, 100), "sum", dim=1) == "F"
    assert redtune.explain(1000, "sum") == "F"
    assert redtune.temp_bytes(DLPack(shape=(16, 1 << 22)), "sum", dim=1) == 7
    assert redtune.temp_bytes(DLPack(shape=(16, 4)), "sum") == 3
    assert seen == [("axis", "sum", C.RT_F32, 1, 4096, 4096),
                    ("axis", "min", C.RT_BF16, 64, 2048, 512),
                    ("axis", "max", C.RT_F32, 3, 17, 1),
                    ("flat", "sum", C.RT_F32, 100), ("flat", "sum", C.RT_F32, 1000),
                    ("tbytes", "sum", C.RT_F32, 16, 1 << 22, 1),
                    ("fbytes", "sum", C.RT_F32, 64)]
    with pytest.raises(TypeError, match=r"^redtune.explain: x is a shape \(4, 4\); give dim="):
        redtune.explain((4, 4), "sum")



# ---------------------------------------------------------------- operator files

def test_op_files_of_the_project_are_read():
    op = _opfile.load(os.path.join(TOP, "lua", "ops", "affine.lua"))
    assert op["name"] == "affine" and op["type"] == "u64" and op["commutative"] is False
    assert op["identity"] == "0x100000000ULL"
    assert op["combine"].startswith("    unsigned int af = ")   # the long string's newline
    op = _opfile.load(os.path.join(TOP, "lua", "ops", "satsum.lua"))
    assert op["identity"] == "0ULL"   # a Lua number, written as the tuner writes it
    u = redtune.register_op(os.path.join(TOP, "lua", "ops", "satsum.lua"))
    assert (u.name, u.type, u.commutative) == ("satsum", "u32", True)


def test_op_file_identities(tmp_path):
    def one(typ, ident):
        p = tmp_path / "op.lua"
        p.write_text('return { name = "x", type = "%s", identity = %s, combine = "return a;",'
                     ' commutative = true }' % (typ, ident))
        return _opfile.load(str(p))["identity"]
    assert one("i32", "-5") == "(-5LL)"
    assert one("u64", "-1") == "18446744073709551615ULL"
    assert one("u32", "0x10") == "16ULL"
    assert one("f32", "0.1") == "0.10000000000000001"
    assert one("f64", "3") == "3"
    assert one("i64", "'-(1LL << 62)'") == "-(1LL << 62)"
    with pytest.raises(ValueError, match="must be an integer for i32, not 0.5"):
        one("i32", "0.5")


@pytest.mark.parametrize("name, text", [
    ("bad_field.lua", "unknown field 'commutes'"),
    ("bad_missing.lua", "field 'combine' is missing"),
    ("bad_syntax.lua", ":4: expected ',' or '}', found 'type'"),
    ("bad_io.lua", ":2: expected return, found 'local'"),
])
def test_bad_op_files(name, text):
    with pytest.raises(ValueError) as ei:
        _opfile.load(os.path.join(TOP, "tests", "ops", name))
    assert text in str(ei.value)


def test_op_file_escapes(tmp_path):
    p = tmp_path / "e.lua"
    p.write_text('-- comment\n--[==[ long\ncomment ]==]\nreturn {\n name = "e", type = "i32",'
                 ' identity = "0",\n combine = "return a\\tb\\65\\x41\\\n;",'
                 ' commutative = false, sample = function(i, r) if i then return r end end,'
                 ' tolerance = 1e-3; }\n')
    op = _opfile.load(str(p))
    assert op["combine"] == "return a\tbAA\n;"


def _view_sum(shape, strides, mem, red, keepdim):
    """The reference: the view's sums over the dims 'red', in the result's C order."""
    nd = len(shape)
    kept = [d for d in range(nd) if d not in red]
    out = []
    for kidx in itertools.product(*(range(shape[d]) for d in kept)):
        total = 0
        for ridx in itertools.product(*(range(shape[d]) for d in red)):
            idx = [0] * nd
            for d, i in zip(kept, kidx):
                idx[d] = i
            for d, i in zip(red, ridx):
                idx[d] = i
            total += mem[builtins.sum(i * s for i, s in zip(idx, strides))]
        out.append(total)
    return out


def _view_argmax(shape, strides, mem, red):
    """The view's argmax over 'red' (the index into the reduced dims flattened in C order)."""
    nd = len(shape)
    kept = [d for d in range(nd) if d not in red]
    out = []
    for kidx in itertools.product(*(range(shape[d]) for d in kept)):
        best, at = None, None
        for k, ridx in enumerate(itertools.product(*(range(shape[d]) for d in red))):
            idx = [0] * nd
            for d, i in zip(kept, kidx):
                idx[d] = i
            for d, i in zip(red, ridx):
                idx[d] = i
            v = mem[builtins.sum(i * s for i, s in zip(idx, strides))]
            if best is None or v > best:
                best, at = v, k
        out.append(at)
    return out


def test_views_in_another_order_reduce_in_place():
    """Every permutation of dense arrays of 2 to 4 dims (extents 1 to 4), every dim= (None,
    each dim, adjacent pairs, every dim) and keepdim: where _strided_axis takes the view, the
    library's reduction of the memory viewed as [outer, len, inner] gives the view's sums
    (and argmax its indices); where it refuses, the reason holds."""
    rng = random.Random(5)
    took = refused = 0
    for trial in range(600):
        nd = rng.randint(2, 4)
        base = [rng.randint(1, 4) for _ in range(nd)]
        base_strides = _arrays.contiguous_strides(base)
        perm = list(range(nd))
        rng.shuffle(perm)
        shape = tuple(base[p] for p in perm)
        strides = tuple(base_strides[p] for p in perm)
        n = _arrays._prod(shape)
        mem = rng.sample(range(10 * n + 10), n)   # distinct: argmax has no ties
        dims = [None] + list(range(nd)) + [(d, d + 1) for d in range(nd - 1)]
        for dim in dims:
            for keepdim in (False, True):
                for ordered in (False, True):
                    try:
                        r = _axes._strided_axis(dim, shape, strides, keepdim, "t", ordered)
                    except NotImplementedError as e:
                        refused += 1
                        assert "in another order in memory" in str(e) or "not adjacent" in str(e)
                        continue
                    took += 1
                    if _arrays.is_c_contiguous(shape, strides):
                        continue
                    assert r is not None
                    res, axis = r
                    red = list(range(nd)) if dim is None else sorted(
                        d % nd for d in ((dim,) if isinstance(dim, int) else dim))
                    want_shape = tuple(1 if d in red else shape[d] for d in range(nd)) \
                        if keepdim else tuple(shape[d] for d in range(nd) if d not in red)
                    assert res == (() if dim is None and not keepdim else want_shape)
                    want = _view_sum(shape, strides, mem, red, keepdim)
                    if axis is None:
                        assert want == [builtins.sum(mem)]
                        continue
                    outer, length, inner = axis
                    assert outer * length * inner == n
                    got = [builtins.sum(mem[(o * length + k) * inner + i] for k in range(length))
                           for o in range(outer) for i in range(inner)]
                    assert got == want, (shape, strides, dim)
                    if ordered:
                        arg = []
                        for o in range(outer):
                            for i in range(inner):
                                col = [mem[(o * length + k) * inner + i] for k in range(length)]
                                arg.append(col.index(max(col)))
                        assert arg == _view_argmax(shape, strides, mem, red), (shape, strides, dim)
    assert took > 1000 and refused > 100
    # the views people make: x.t() and x.mT take every dim= but argmax over all
    assert _axes._strided_axis(0, (5, 3), (1, 5), False, "t", True) == ((3,), (3, 5, 1))
    assert _axes._strided_axis(1, (5, 3), (1, 5), False, "t", True) == ((5,), (1, 3, 5))
    assert _axes._strided_axis(None, (5, 3), (1, 5), False, "t", False) == ((), None)
    assert _axes._strided_axis(-1, (2, 5, 3), (15, 1, 5), False, "t", True) == \
        ((2, 5), (2, 3, 5))
    assert _axes._strided_axis(1, (2, 5, 3), (15, 1, 5), True, "t", True) == \
        ((2, 1, 3), (6, 5, 1))
    # a slice with gaps, a broadcast, a negative stride: not one dense block
    for shape, strides in (((4, 2), (4, 1)), ((4, 3), (0, 1)), ((4, 3), (3, -1)),
                           ((3, 3), (1, 1))):
        assert _axes._strided_axis(0, shape, strides, False, "t", False) is None
