"""Loading libredtune.so and declaring its functions for ctypes; the exceptions.

The library is looked for in this order: the copy bundled in the package (beside this file,
put there by `ninja python`), the file named by $REDTUNE_LIBRARY, then the system's
(libredtune.so.0 through the dynamic loader, as `ninja install` puts it in $prefix/lib).
"""
import ctypes
import os
import platform
import sys
import threading

from . import _consts as C

HERE = os.path.dirname(os.path.abspath(__file__))

c_ctx = ctypes.c_void_p
c_size_p = ctypes.POINTER(ctypes.c_size_t)


class rt_op_desc(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_int),
                ("identity", ctypes.c_char_p), ("combine", ctypes.c_char_p),
                ("commutative", ctypes.c_int),
                # appended in include/redtune.h; None (NULL) is the default
                ("map", ctypes.c_char_p), ("acc", ctypes.c_char_p),
                ("finalize", ctypes.c_char_p), ("result", ctypes.c_char_p)]


# name: (restype, argtypes); the prototypes of include/redtune.h.
_PROTOS = {
    "rt_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "rt_op_name": (ctypes.c_char_p, [ctypes.c_int]),
    "rt_type_name": (ctypes.c_char_p, [ctypes.c_int]),
    "rt_open_err": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(c_ctx),
                                   ctypes.c_char_p, ctypes.c_size_t]),
    "rt_close": (None, [c_ctx]),
    "rt_errmsg": (ctypes.c_char_p, [c_ctx]),
    "rt_reduce": (ctypes.c_int, [c_ctx, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                 ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_void_p]),
    "rt_temp_bytes": (ctypes.c_int, [c_ctx, ctypes.c_int, ctypes.c_int, ctypes.c_ulonglong,
                                     c_size_p]),
    "rt_reduce_temp": (ctypes.c_int, [c_ctx, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                      ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_void_p,
                                      ctypes.c_size_t, ctypes.c_void_p]),
    "rt_release_temp": (ctypes.c_int, [c_ctx]),
    "rt_explain": (ctypes.c_int, [c_ctx, ctypes.c_int, ctypes.c_int, ctypes.c_ulonglong,
                                  ctypes.c_char_p, ctypes.c_size_t]),
    "rt_register_op": (ctypes.c_int, [c_ctx, ctypes.POINTER(rt_op_desc),
                                      ctypes.POINTER(ctypes.c_int)]),
    "rt_reduce_keys": (ctypes.c_int, [c_ctx, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                      ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_ulonglong,
                                      ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint]),
    "rt_reduce_offsets": (ctypes.c_int, [c_ctx, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                         ctypes.c_ulonglong, ctypes.c_void_p,
                                         ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_void_p,
                                         ctypes.c_uint]),
    "rt_explain_segmented": (ctypes.c_int, [c_ctx, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                            ctypes.c_ulonglong, ctypes.c_ulonglong,
                                            ctypes.c_uint, ctypes.c_char_p, ctypes.c_size_t]),
    # Reductions along an axis (issue 16); optional: a library before them loads without.
    "rt_reduce_axis": (ctypes.c_int, [c_ctx, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                      ctypes.c_ulonglong, ctypes.c_ulonglong,
                                      ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_void_p]),
    "rt_axis_temp_bytes": (ctypes.c_int, [c_ctx, ctypes.c_int, ctypes.c_int,
                                          ctypes.c_ulonglong, ctypes.c_ulonglong,
                                          ctypes.c_ulonglong, c_size_p]),
    "rt_reduce_axis_temp": (ctypes.c_int, [c_ctx, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                           ctypes.c_ulonglong, ctypes.c_ulonglong,
                                           ctypes.c_ulonglong, ctypes.c_void_p,
                                           ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]),
    "rt_explain_axis": (ctypes.c_int, [c_ctx, ctypes.c_int, ctypes.c_int, ctypes.c_ulonglong,
                                       ctypes.c_ulonglong, ctypes.c_ulonglong, ctypes.c_char_p,
                                       ctypes.c_size_t]),
}
OPTIONAL = ("rt_reduce_axis", "rt_axis_temp_bytes", "rt_reduce_axis_temp", "rt_explain_axis")


# ---------------------------------------------------------------- errors

class Error(Exception):
    """A libredtune call failed: 'code' is its RT_E* code (negative), 'name' its name
    ("RT_EDB"), 'message' the library's message (rt_errmsg)."""
    code = None

    def __init__(self, code, message):
        self.code = code
        self.name = C.ERROR_NAMES.get(code, "RT_E?%d" % code)
        self.message = message
        super().__init__("%s: %s" % (self.name, message) if message else self.name)


class NoMemoryError(Error, MemoryError):
    code = C.RT_ENOMEM


class FileError(Error, OSError):
    code = C.RT_EIO


class LuaError(Error):
    code = C.RT_ELUA


class CompileError(Error):
    code = C.RT_ENVRTC


class CUDAError(Error):
    code = C.RT_ECUDA


class DatabaseError(Error):
    code = C.RT_EDB


class NotFoundError(Error, LookupError):
    code = C.RT_ENOTFOUND


class InvalidArgumentError(Error, ValueError):
    code = C.RT_EINVAL


class VerifyError(Error):
    code = C.RT_EVERIFY


class KernelTimeoutError(Error, TimeoutError):
    code = C.RT_ETIMEOUT


class KernelFaultError(Error):
    code = C.RT_EFAULT


class CaptureError(Error):
    """The stream is capturing a CUDA graph and the call would have had to load a kernel,
    allocate or synchronise: make the same call once before the capture (a warm-up)."""
    code = C.RT_ECAPTURE


_BY_CODE = {cls.code: cls for cls in (NoMemoryError, FileError, LuaError, CompileError,
                                      CUDAError, DatabaseError, NotFoundError, InvalidArgumentError,
                                      VerifyError, KernelTimeoutError, KernelFaultError,
                                      CaptureError)}


def error(code, message):
    """The exception for a library code: its subclass, or Error for a code this package does
    not know (a newer library)."""
    return _BY_CODE.get(code, Error)(code, message)


# ---------------------------------------------------------------- loading

_lock = threading.Lock()
_lib = None
_lib_path = None


def _candidates():
    bundled = os.path.join(HERE, "libredtune.so")
    if os.path.exists(bundled):
        yield bundled
    env = os.environ.get("REDTUNE_LIBRARY")
    if env:
        yield env
    yield "libredtune.so.0"
    yield "libredtune.so"


def library():
    """The loaded libredtune (a ctypes.CDLL with prototypes), loading it the first time.
    Raises OSError naming every place tried when none loads."""
    global _lib, _lib_path
    lib = _lib
    if lib is not None:
        return lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            try:
                lib = ctypes.CDLL(path)
            except OSError as err:
                tried.append("%s (%s)" % (path, err))
                continue
            for name, (res, args) in _PROTOS.items():
                if name in OPTIONAL and not hasattr(lib, name):
                    continue   # require() names it when a call needs it
                fn = getattr(lib, name)
                fn.restype = res
                fn.argtypes = args
            _lib_path = path
            _lib = lib
            return lib
        raise OSError("redtune: libredtune not found; tried: %s. Install the package built by "
                      "`ninja python`, or set REDTUNE_LIBRARY to build/libredtune.so"
                      % "; ".join(tried))


# The hot call's second prototype: every argument one pointer-sized word. ctypes converts a
# c_void_p argument faster than a c_int or c_ulonglong one (0.42 against 0.62 us for
# rt_reduce's seven, python/bench_host_path.py's machine), and on the 64-bit ABIs CUDA runs on
# (x86-64 System V and Windows, AArch64 Linux: little-endian, each argument in its own 64-bit
# register or 8-byte stack slot) an int parameter reads the low 32 bits of its word, so the
# values arrive unchanged. Elsewhere the declared prototype is used.
WORD_ABI = (ctypes.sizeof(ctypes.c_void_p) == 8 and sys.byteorder == "little" and
            sys.platform != "darwin" and
            platform.machine().lower() in ("x86_64", "amd64", "aarch64", "arm64"))
_WORDS7 = ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_void_p] * 7)


def reduce_function(lib):
    """rt_reduce of 'lib' for the fast paths: called with seven ints (ctx, op, type, x, n,
    out, stream), returning the RT_E* code; the word prototype where WORD_ABI holds. A
    stand-in library (the tests', the benchmark's) gives its own rt_reduce."""
    if WORD_ABI and isinstance(lib, ctypes.CDLL):
        return _WORDS7(("rt_reduce", lib))
    return lib.rt_reduce


_WORDS9 = ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_void_p] * 9)


def require(lib, name, what):
    """lib's function 'name', or redtune.Error (RT_EINVAL) saying the loaded library
    predates it (an optional prototype above)."""
    fn = getattr(lib, name, None)
    if fn is None:
        raise error(C.RT_EINVAL, "%s: the loaded libredtune (%s) has no %s: it predates "
                    "reductions along an axis; install the package built with it"
                    % (what, _lib_path, name))
    return fn


def axis_function(lib):
    """rt_reduce_axis of 'lib' for the fast paths, as reduce_function: called with nine ints
    (ctx, op, type, x, outer, len, inner, out, stream)."""
    fn = require(lib, "rt_reduce_axis", "redtune")
    if WORD_ABI and isinstance(lib, ctypes.CDLL):
        return _WORDS9(("rt_reduce_axis", lib))
    return fn


def library_path():
    """The file the library was loaded from (loading it if needed)."""
    library()
    return _lib_path


def check(rc, ctx_handle):
    """Raise the Error of a failed call made on ctx_handle by this thread."""
    if rc != 0:
        msg = library().rt_errmsg(ctx_handle)
        raise error(rc, msg.decode("utf-8", "replace") if msg else "")
