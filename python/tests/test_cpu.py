"""The CPU half of the Python package's tests (no GPU, no framework needed): constants
against the header, argument checking, error mapping, the array protocols with fake arrays,
the operator file reader. tests/run.sh runs it in `ninja test`."""
import ctypes
import os
import re
import shutil
import subprocess

import pytest

import redtune
from redtune import _args, _arrays, _axes, _context, _core, _fastpath, _opfile, _segments
from redtune import consts as C

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = os.path.join(TOP, "include", "redtune.h")


# ---------------------------------------------------------------- constants

def header_text():
    with open(HEADER, encoding="utf-8") as f:
        return f.read()


def const_names():
    return [n for n in dir(C) if n.startswith("RT_") and isinstance(getattr(C, n), int)]


def test_every_define_of_the_header_is_a_constant():
    text = header_text()
    defines = re.findall(r"^#define (RT_[A-Z0-9_]+)\s+(-?\d+)u?\b", text, re.M)
    assert len(defines) >= 12
    for name, value in defines:
        assert getattr(C, name) == int(value), name
    assert C.RT_VERSION_STRING == re.search(r'RT_VERSION_STRING "([^"]+)"', text).group(1)
    assert redtune.__version__ == C.RT_VERSION_STRING


def test_every_enum_member_of_the_header_is_a_constant():
    text = header_text()
    for enum in re.findall(r"typedef enum \w+ \{(.*?)\}", text, re.S):
        for name in re.findall(r"\b(RT_[A-Z0-9_]+)\b", enum):
            assert hasattr(C, name), name


def test_constants_equal_the_compiled_header():
    """The C compiler's values of every constant, so no parsing is trusted."""
    cc = shutil.which(os.environ.get("CC", "cc"))
    if not cc:
        pytest.skip("no C compiler")
    names = const_names()
    body = "".join('    printf("%s %%lld\\n", (long long)(%s));\n' % (n, n) for n in names)
    src = '#include <stdio.h>\n#include "redtune.h"\nint main(void)\n{\n%s    return 0;\n}\n' % body
    tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), "redtune_consts_%d" % os.getpid())
    try:
        with open(tmp + ".c", "w") as f:
            f.write(src)
        subprocess.run([cc, "-I" + os.path.dirname(HEADER), "-o", tmp, tmp + ".c"], check=True)
        out = subprocess.run([tmp], check=True, capture_output=True, text=True).stdout
    finally:
        for p in (tmp, tmp + ".c"):
            if os.path.exists(p):
                os.remove(p)
    got = dict(line.split() for line in out.splitlines())
    for n in names:
        assert int(got[n]) == getattr(C, n), n


def test_constants_agree_with_the_library():
    lib = redtune.library()
    for name, value in C.OPS.items():
        assert lib.rt_op_name(value).decode() == name
    assert lib.rt_op_name(C.RT_OP_COUNT) is None
    for name, value in C.TYPES.items():
        assert lib.rt_type_name(value).decode() == name
    assert lib.rt_type_name(C.RT_TYPE_COUNT) is None
    for value, name in C.ERROR_NAMES.items():
        assert lib.rt_strerror(value).decode() == name
    assert sorted(C.OPS.values()) == list(range(C.RT_OP_COUNT))
    assert sorted(C.TYPES.values()) == list(range(C.RT_TYPE_COUNT))


def test_generator_refuses_what_it_cannot_read(tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_consts",
                                                  os.path.join(TOP, "python", "gen_consts.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with pytest.raises(ValueError, match=r"enum rt_op: RT_B = RT_A \+ 1 is not an integer"):
        gen.parse("typedef enum rt_op { RT_A = 0, RT_B = RT_A + 1 } rt_op;")
    bad = tmp_path / "h.h"
    bad.write_text("#define RT_OK 0\n")
    assert gen.main(["gen", str(bad), str(tmp_path / "out.py")]) == 1


# ---------------------------------------------------------------- errors

def test_each_code_has_its_exception():
    want = {C.RT_ENOMEM: redtune.NoMemoryError, C.RT_EIO: redtune.FileError,
            C.RT_ELUA: redtune.LuaError, C.RT_ENVRTC: redtune.CompileError,
            C.RT_ECUDA: redtune.CUDAError, C.RT_EDB: redtune.DatabaseError,
            C.RT_ENOTFOUND: redtune.NotFoundError, C.RT_EINVAL: redtune.InvalidArgumentError,
            C.RT_EVERIFY: redtune.VerifyError, C.RT_ETIMEOUT: redtune.KernelTimeoutError,
            C.RT_EFAULT: redtune.KernelFaultError, C.RT_ECAPTURE: redtune.CaptureError}
    assert set(want) == set(C.ERROR_NAMES) - {C.RT_OK}
    for code, cls in want.items():
        e = redtune.error(code, "what went wrong")
        assert type(e) is cls and isinstance(e, redtune.Error)
        assert e.code == code and e.message == "what went wrong"
        assert str(e) == "%s: what went wrong" % C.ERROR_NAMES[code]
    assert isinstance(redtune.error(C.RT_EINVAL, ""), ValueError)
    e = redtune.error(-99, "newer")
    assert type(e) is redtune.Error and e.code == -99 and "RT_E?-99" in str(e)


def test_open_errors_carry_the_library_code_and_message(tmp_path):
    with pytest.raises(redtune.DatabaseError) as ei:
        redtune.Context(0, db=str(tmp_path / "none.db"))
    assert ei.value.code == C.RT_EDB
    assert ei.value.message == "%s: No such file or directory" % (tmp_path / "none.db")
    with pytest.raises(redtune.InvalidArgumentError) as ei:
        redtune.Context(-1)
    assert ei.value.message == "rt_open: device -1: a CUDA device ordinal is 0 or more"


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
    with pytest.raises(redtune.InvalidArgumentError) as ei:
        redtune.max(DLPack(shape=(4, 2), strides=(1, 4)))
    assert ei.value.code == C.RT_EINVAL and isinstance(ei.value, ValueError)
    assert ei.value.message == (
        "redtune.max: x is not contiguous (shape (4, 2), strides (1, 4) in elements); redtune "
        "reads C-contiguous arrays: pass x.contiguous() (torch) or cupy.ascontiguousarray(x)")
    with pytest.raises(redtune.InvalidArgumentError,
                       match="^RT_EINVAL: redtune.reduce_offsets: offsets is not contiguous"):
        redtune.reduce_offsets(DLPack(), DLPack(shape=(4, 2), strides=(1, 4),
                                                code=_arrays.kDLInt), "sum")


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


def test_the_library_declares_the_axis_calls():
    lib = redtune.library()
    assert len(lib.rt_reduce_axis.argtypes) == 9
    assert len(lib.rt_reduce_axis_temp.argtypes) == 11
    assert len(lib.rt_axis_temp_bytes.argtypes) == 7
    assert len(lib.rt_explain_axis.argtypes) == 8


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


def test_types_table():
    from redtune import _types
    R = _types.resolve
    assert R(C.RT_SUM, C.RT_F16) == (C.RT_F16, C.RT_F32, 1)
    assert R(C.RT_SUM, C.RT_U8) == (C.RT_U8, C.RT_U32, 1)
    assert R(C.RT_SUM, C.RT_I8, C.RT_I64) == (C.RT_I8 | ((C.RT_I64 + 1) << 8), C.RT_I64, 1)
    assert R(C.RT_SUM, C.RT_F32, C.RT_F32) == (C.RT_F32, C.RT_F32, 1)
    assert R(C.RT_MEAN, C.RT_I32) == (C.RT_I32, C.RT_F64, 1)
    assert R(C.RT_MEAN, C.RT_U64) == (C.RT_U64, C.RT_F64, 1)
    assert R(C.RT_VAR_MEAN, C.RT_BF16) == (C.RT_BF16, C.RT_F32, 2)
    assert R(C.RT_ARGMAX, C.RT_F16) == (C.RT_F16, C.RT_F16, 1)
    assert R(C.RT_AMAX, C.RT_F64) == (C.RT_F64, C.RT_F64, 1)
    for op, t in ((C.RT_AMAX, C.RT_I32), (C.RT_NORM2, C.RT_U8), (C.RT_VAR_MEAN, C.RT_U8)):
        with pytest.raises(ValueError):
            R(op, t)


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
    r = redtune.argmax(T((3, 17), dtype="torch.int32"), dim=1)
    buf = faketorch.made[-1]
    assert buf.shape == (3, 2) and buf.dtype == "torch.int64"
    assert r == ("element", buf, (Ellipsis, 1))
    assert faketorch.calls[-1] == (0xC7, C.RT_ARGMAX, C.RT_I32, 0x1000, 3, 17, 1, buf.ptr,
                                   0x5000)
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


def test_a_library_without_axis_reductions_is_named():
    from redtune import _lib
    with pytest.raises(redtune.InvalidArgumentError, match=r"^RT_EINVAL: redtune.sum: the "
                       r"loaded libredtune \(.*\) has no rt_reduce_axis: it predates "
                       r"reductions along an axis"):
        _lib.require(object(), "rt_reduce_axis", "redtune.sum")


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


def test_the_word_prototype_delivers_every_argument(tmp_path):
    """The fast paths call rt_reduce with every argument a pointer-sized word (_lib's
    WORD_ABI): a C stand-in records what arrives, ints and 64-bit values alike."""
    from redtune import _lib
    cc = shutil.which(os.environ.get("CC", "cc"))
    if not cc or not _lib.WORD_ABI:
        pytest.skip("no C compiler" if not cc else "not a word-ABI platform")
    src = tmp_path / "stub.c"
    src.write_text(
        "void *g_h, *g_out, *g_stream; const void *g_x; int g_op, g_type;\n"
        "unsigned long long g_n;\n"
        "int rt_reduce(void *h, int op, int type, const void *x, unsigned long long n,\n"
        "              void *out, void *stream)\n"
        "{\n    g_h = h; g_op = op; g_type = type; g_x = x; g_n = n; g_out = out;\n"
        "    g_stream = stream;\n    return op == -7 ? -3 : 0;\n}\n"
        "unsigned long long g_o, g_l, g_i;\n"
        "int rt_reduce_axis(void *h, int op, int type, const void *x, unsigned long long o,\n"
        "                   unsigned long long l, unsigned long long i, void *out, void *s)\n"
        "{\n    g_h = h; g_op = op; g_type = type; g_x = x; g_o = o; g_l = l; g_i = i;\n"
        "    g_out = out; g_stream = s;\n    return 0;\n}\n")
    so = tmp_path / "libstub.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    lib = ctypes.CDLL(str(so))
    fn = _lib.reduce_function(lib)
    assert fn is not lib.rt_reduce
    big = 0xFFFF_8000_1234_5678
    assert fn(0x7F00_DEAD_BEE0, 5, 3, big, 1 << 40, 0x10, 0) == 0

    def val(ty, name):
        return ty.in_dll(lib, name).value
    assert val(ctypes.c_void_p, "g_h") == 0x7F00_DEAD_BEE0
    assert (val(ctypes.c_int, "g_op"), val(ctypes.c_int, "g_type")) == (5, 3)
    assert val(ctypes.c_void_p, "g_x") == big
    assert val(ctypes.c_ulonglong, "g_n") == 1 << 40
    assert val(ctypes.c_void_p, "g_out") == 0x10 and val(ctypes.c_void_p, "g_stream") is None
    assert fn(1, -7, 0, 0, 0, 0, 0) == -3      # a negative int arrives, the code comes back
    assert val(ctypes.c_int, "g_op") == -7
    ax = _lib.axis_function(lib)              # rt_reduce_axis: nine words
    assert ax is not lib.rt_reduce_axis
    assert ax(0x7F00_DEAD_BEE0, 6, 7, big, 1 << 33, 3, (1 << 40) + 1, 0x20, 0x30) == 0
    assert (val(ctypes.c_int, "g_op"), val(ctypes.c_int, "g_type")) == (6, 7)
    assert val(ctypes.c_void_p, "g_x") == big
    assert [val(ctypes.c_ulonglong, n) for n in ("g_o", "g_l", "g_i")] == [
        1 << 33, 3, (1 << 40) + 1]
    assert val(ctypes.c_void_p, "g_out") == 0x20 and val(ctypes.c_void_p, "g_stream") == 0x30


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
