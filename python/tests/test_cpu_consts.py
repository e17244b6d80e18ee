"""The CPU tests of the package against the header and the library (no GPU needed): the
constants against include/redtune.h, the error mapping, the library's declarations, the
word-sized call prototype of the fast paths, the result-type table. tests/run.sh runs it in
`ninja test`."""
import ctypes
import os
import re
import shutil
import subprocess

import pytest

import redtune
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



# ---------------------------------------------------------------- library calls, types

def test_the_library_declares_the_axis_calls():
    lib = redtune.library()
    assert len(lib.rt_reduce_axis.argtypes) == 9
    assert len(lib.rt_reduce_axis_temp.argtypes) == 11
    assert len(lib.rt_axis_temp_bytes.argtypes) == 7
    assert len(lib.rt_explain_axis.argtypes) == 8


def test_a_library_without_axis_reductions_is_named():
    from redtune import _lib
    with pytest.raises(redtune.InvalidArgumentError, match=r"^RT_EINVAL: redtune.sum: the "
                       r"loaded libredtune \(.*\) has no rt_reduce_axis: it predates "
                       r"reductions along an axis"):
        _lib.require(object(), "rt_reduce_axis", "redtune.sum")


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
