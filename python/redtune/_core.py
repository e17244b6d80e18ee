"""Contexts per device and the calls: reduce and its shortcuts, the segmented reductions,
user operators, explain."""
import ctypes
import os
import sys
import threading

from . import _consts as C
from . import _cuda
from ._arrays import TYPE_NAMES, TYPE_TYPESTR, TYPESTR, ArrayInfo, describe, _prod
from . import _types
from ._lib import check, error, library, require, rt_op_desc


ARG_OPS = (C.RT_ARGMIN, C.RT_ARGMAX)
OP_NAMES = {v: k for k, v in C.OPS.items()}

# ---------------------------------------------------------------- contexts

_db = None            # set_database(); None: the library's search (docs/api.md)
_contexts = {}        # device ordinal -> Context
_contexts_lock = threading.Lock()


class Context:
    """libredtune opened on one GPU (rt_open): the tuned database, the kernels loaded so far,
    the registered operators. One per device is made and cached by the calls (context());
    make one yourself for another database, and close() it when done. Thread-safe: the
    library is, and this object locks only around registering operators."""

    def __init__(self, device=0, db=None):
        lib = library()
        h = ctypes.c_void_p()
        msg = ctypes.create_string_buffer(4096)
        rc = lib.rt_open_err(os.fsencode(db) if db else None, int(device), ctypes.byref(h),
                             msg, len(msg))
        if rc != 0:
            raise error(rc, msg.value.decode("utf-8", "replace"))
        self.device = int(device)
        self.db = db
        self._h = h.value
        self._lock = threading.Lock()
        self._ops = {}   # UserOp -> handle on this context

    @property
    def handle(self):
        """The rt_ctx pointer, as an int (for calling libredtune directly)."""
        if self._h is None:
            raise ValueError("redtune: the context of device %d is closed" % self.device)
        return self._h

    def close(self):
        """rt_close: waits for the device's work, frees what the context holds."""
        with _contexts_lock:
            if _contexts.get(self.device) is self:   # context() opens a new one next time
                del _contexts[self.device]
        h, self._h = self._h, None
        if h is not None:
            library().rt_close(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def op_handle(self, op):
        """The rt_op value of 'op' (a name, an rt_op value or a UserOp) on this context,
        registering a UserOp the first time."""
        if isinstance(op, UserOp):
            h = self._ops.get(op)
            if h is None:
                with self._lock:
                    h = self._ops.get(op)
                    if h is None:
                        h = op._register(self)
                        self._ops[op] = h
            return h
        return _builtin_op(op, "redtune")[0]

    def temp_bytes(self, op, rtype, n):
        """rt_temp_bytes: the temporary storage a reduce(..., temp=) of n elements needs."""
        size = ctypes.c_size_t()
        check(library().rt_temp_bytes(self.handle, self.op_handle(op), rtype, n,
                                      ctypes.byref(size)), self._h)
        return size.value

    def release_temp(self):
        """rt_release_temp: free the temporary storage the context keeps per stream."""
        check(library().rt_release_temp(self.handle), self._h)

    def explain(self, op, rtype, n):
        """rt_explain: which kernel serves (op, type, n) and why, as text."""
        buf = ctypes.create_string_buffer(8192)
        check(library().rt_explain(self.handle, self.op_handle(op), rtype, n, buf, len(buf)),
              self._h)
        return buf.value.decode("utf-8", "replace")

    def axis_temp_bytes(self, op, rtype, outer, len_, inner):
        """rt_axis_temp_bytes: the temporary storage of reduce(..., dim=, temp=)."""
        size = ctypes.c_size_t()
        fn = require(library(), "rt_axis_temp_bytes", "redtune.temp_bytes")
        check(fn(self.handle, self.op_handle(op), rtype, outer, len_, inner, ctypes.byref(size)),
              self._h)
        return size.value

    def explain_axis(self, op, rtype, outer, len_, inner):
        """rt_explain_axis: which kernel reduces [outer, len, inner] along len, and why."""
        buf = ctypes.create_string_buffer(8192)
        fn = require(library(), "rt_explain_axis", "redtune.explain")
        check(fn(self.handle, self.op_handle(op), rtype, outer, len_, inner, buf, len(buf)),
              self._h)
        return buf.value.decode("utf-8", "replace")

    def explain_segmented(self, layout, op, rtype, n, nseg, off64=False):
        """rt_explain_segmented; layout "keys" or "offsets"."""
        lay = {"keys": C.RT_LAYOUT_KEYS, "offsets": C.RT_LAYOUT_OFFSETS}.get(layout)
        if lay is None:
            raise ValueError("redtune.explain_segmented: layout is %r; 'keys' or 'offsets'"
                             % (layout,))
        buf = ctypes.create_string_buffer(8192)
        check(library().rt_explain_segmented(
            self.handle, lay, self.op_handle(op), rtype, n, nseg,
            C.RT_SEG_OFF64 if off64 else 0, buf, len(buf)), self._h)
        return buf.value.decode("utf-8", "replace")


def set_database(path):
    """The database the contexts opened from now on use (None: the library's search:
    $REDTUNE_DB, ./redtune.db, the one beside libredtune, which is the package's own, the
    installed one). Contexts already open keep theirs: call this before the first reduction."""
    global _db
    _db = path


def context(device=None):
    """The cached Context of CUDA device 'device' (default: 0), opened the first time."""
    dev = 0 if device is None else int(device)
    ctx = _contexts.get(dev)
    if ctx is None:
        with _contexts_lock:
            ctx = _contexts.get(dev)
            if ctx is None:
                ctx = Context(dev, _db)
                _contexts[dev] = ctx
    return ctx


# ---------------------------------------------------------------- operators

class UserOp:
    """An operator of your own (docs/ops.md): name, type, identity, combine, commutative.
    Made by register_op; registered on each device's context at its first use there (or at
    once, with register_op(..., device=N)). Pass it as the 'op' of any call."""

    def __init__(self, name, type, identity, combine, commutative):
        if type not in C.TYPES:
            raise ValueError("redtune.register_op: type is %r; one of %s"
                             % (type, ", ".join(C.TYPES)))
        self.name, self.type, self.identity = str(name), type, str(identity)
        self.combine, self.commutative = str(combine), bool(commutative)
        self.rt_type = C.TYPES[type]

    def __repr__(self):
        return "redtune.UserOp(%r, %r, commutative=%r)" % (self.name, self.type,
                                                            self.commutative)

    def _register(self, ctx):
        desc = rt_op_desc(self.name.encode(), self.rt_type, self.identity.encode(),
                          self.combine.encode(), int(self.commutative))
        h = ctypes.c_int()
        check(library().rt_register_op(ctx.handle, ctypes.byref(desc), ctypes.byref(h)),
              ctx.handle)
        return h.value


def register_op(desc=None, device=None, **fields):
    """A user operator from an operator file's path (the Lua file of `redtune --op-file`,
    read as described in docs/python.md), a dict, or keywords (name, type, identity,
    combine, commutative). With 'device' it is registered on that device's context now, so
    that a bad definition (or one NVRTC refuses) raises here."""
    if isinstance(desc, (str, bytes, os.PathLike)):
        from . import _opfile
        fields = dict(_opfile.load(os.fsdecode(desc)), **fields)
    elif isinstance(desc, dict):
        fields = dict(desc, **fields)
    elif desc is not None:
        raise TypeError("redtune.register_op: desc is a %s; an operator file path or a dict"
                        % type(desc).__name__)
    missing = [k for k in ("name", "type", "identity", "combine", "commutative")
               if k not in fields]
    if missing:
        raise TypeError("redtune.register_op: missing %s" % ", ".join(missing))
    unknown = set(fields) - {"name", "type", "identity", "combine", "commutative"}
    if unknown:
        raise TypeError("redtune.register_op: unknown field %s" % ", ".join(sorted(unknown)))
    op = UserOp(**fields)
    if device is not None:
        context(device).op_handle(op)
    return op


def _builtin_op(op, what):
    """(rt_op, name) of a built-in operator given by name or value."""
    if isinstance(op, str):
        v = C.OPS.get(op)
        if v is None:
            raise ValueError("%s: op is %r; one of %s, or a redtune.UserOp"
                             % (what, op, ", ".join(C.OPS)))
        return v, op
    if isinstance(op, int) and not isinstance(op, bool) and op in OP_NAMES:
        return op, OP_NAMES[op]
    raise ValueError("%s: op is %r; one of %s, or a redtune.UserOp"
                     % (what, op, ", ".join(C.OPS)))


# ---------------------------------------------------------------- streams and outputs

def stream_handle(stream, what="redtune"):
    """The CUstream of a 'stream=' argument: an int (a cudaStream_t; 0 the legacy default), a
    torch.cuda.Stream (.cuda_stream), a cupy Stream (.ptr), a Numba stream (.handle), or an
    object with __cuda_stream__ (the CUDA stream protocol)."""
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        return int(proto()[1])
    for attr in ("cuda_stream", "ptr"):
        v = getattr(stream, attr, None)
        if isinstance(v, int):
            return v
    h = getattr(stream, "handle", None)
    if h is not None:
        return int(getattr(h, "value", h) or 0)
    raise TypeError("%s: stream is a %s; a stream handle (int), a torch or CuPy stream, or "
                    "an object with __cuda_stream__" % (what, type(stream).__name__))


_raw_stream = None


def _current_stream(info):
    """The stream the framework of 'info' enqueues on now, for its device."""
    global _raw_stream
    fw = info.framework
    if fw == "torch":
        if _raw_stream is None:   # the first torch tensor: also define the custom op
            torch = sys.modules["torch"]
            from . import _torch
            _torch.register(torch)
            _raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
                lambda d: torch.cuda.current_stream(d).cuda_stream)
        return _raw_stream(info.device)
    if fw == "cupy":
        cupy = sys.modules["cupy"]
        if cupy.cuda.runtime.getDevice() != info.device:
            with cupy.cuda.Device(info.device):
                return cupy.cuda.get_current_stream().ptr
        return cupy.cuda.get_current_stream().ptr
    if info.stream is not None:   # __cuda_array_interface__'s producer stream
        return info.stream
    return 0                      # the legacy default stream (Numba's default, DLPack's 1)


_TORCH_DTYPES = {}


def _torch_dtype(torch, rtype):
    if not _TORCH_DTYPES:
        for rt, name in ((C.RT_F32, "float32"), (C.RT_F64, "float64"), (C.RT_I32, "int32"),
                         (C.RT_U32, "uint32"), (C.RT_I64, "int64"), (C.RT_U64, "uint64"),
                         (C.RT_F16, "float16"), (C.RT_BF16, "bfloat16"), (C.RT_I8, "int8"),
                         (C.RT_U8, "uint8")):
            _TORCH_DTYPES[rt] = getattr(torch, name, None)
    return _TORCH_DTYPES[rtype]


def _allocate(info, shape, rtype, what, stream):
    """(result, its pointer) allocated by the framework of 'info' on its device."""
    fw = info.framework
    if fw == "torch":
        torch = sys.modules["torch"]
        t = torch.empty(shape, dtype=_torch_dtype(torch, rtype), device=info.obj.device)
        return t, t.data_ptr()
    if fw == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(info.device):
            a = cupy.empty(shape, dtype=TYPE_TYPESTR[rtype])
        return a, a.data.ptr
    if fw == "numba":
        from numba import cuda
        with cuda.gpus[info.device]:
            a = cuda.device_array(shape, dtype=TYPE_TYPESTR[rtype])
        return a, a.__cuda_array_interface__["data"][0]
    raise TypeError("%s: x is a %s, whose framework redtune cannot allocate in (it does for "
                    "torch, CuPy and Numba): pass out=, a device array for the result"
                    % (what, type(info.obj).__name__))


def _resolve_device(info, name, what):
    if info.device is None:
        try:
            info.device = _cuda.pointer_device(info.ptr)
        except OSError as err:
            raise TypeError("%s: the device of %s cannot be found (%s)" % (what, name, err))
        if info.device is None:
            raise TypeError("%s: %s is not CUDA device memory; a CUDA device array is "
                            "expected" % (what, name))
    return info.device


def _check_contiguous(info, name, what):
    """A non-contiguous array is refused with redtune.InvalidArgumentError (RT_EINVAL; also a
    ValueError) naming its shape and strides."""
    if info.strides is not None:
        raise error(C.RT_EINVAL, "%s: %s is not contiguous (shape %r, strides %r in "
                    "elements); redtune reads C-contiguous arrays: pass x.contiguous() "
                    "(torch) or cupy.ascontiguousarray(x)"
                    % (what, name, info.shape, info.strides))


def _out(out, device, rtype, count, what, stream, arg, shape=None):
    """The pointer of a given out=, checked: 'count' elements of 'rtype' (argmin/argmax:
    'count' pairs of int64, {value bits, index}); with 'shape' (along an axis) exactly that
    shape."""
    o = describe(out, "out", what, stream)
    _resolve_device(o, "out", what)
    if o.device != device:
        raise ValueError("%s: out is on device %d and x on device %d" % (what, o.device,
                                                                          device))
    _check_contiguous(o, "out", what)
    if o.readonly:
        raise ValueError("%s: out is read-only" % what)
    if shape is not None:
        want = TYPE_NAMES[rtype] if not arg else "i64 (a {value, index} pair per result)"
        ok = (o.type in (C.RT_I64, C.RT_U64)) if arg else o.type == rtype
        if tuple(o.shape) != tuple(shape) or not ok:
            raise ValueError("%s: out has shape %r of %s; shape %r of %s is expected"
                             % (what, tuple(o.shape), TYPE_NAMES[o.type], tuple(shape), want))
        return o
    if arg:
        if o.type not in (C.RT_I64, C.RT_U64) or o.size != 2 * count:
            raise ValueError("%s: out for argmin/argmax must hold %d int64 (a {value, index} "
                             "pair per result, the index second); it has %d of %s"
                             % (what, 2 * count, o.size, TYPE_NAMES[o.type]))
    elif o.type != rtype or o.size != count:
        raise ValueError("%s: out must hold %d element%s of %s; it has %d of %s"
                         % (what, count, "" if count == 1 else "s", TYPE_NAMES[rtype], o.size,
                            TYPE_NAMES[o.type]))
    return o


_ACC_NAMES = {"float32": C.RT_F32, "float64": C.RT_F64, "int32": C.RT_I32, "int64": C.RT_I64,
              "uint32": C.RT_U32, "uint64": C.RT_U64}


def _acc_of(dtype, what):
    """The rt_type of a dtype= argument: a torch dtype, a NumPy/CuPy dtype or its name, or
    redtune's type name ("f64")."""
    if dtype.__class__ is str:
        if dtype in C.TYPES:
            return C.TYPES[dtype]
        if dtype in _ACC_NAMES:
            return _ACC_NAMES[dtype]
    else:
        torch = _modules.get("torch")
        tdt = getattr(torch, "dtype", None)
        if tdt is not None and isinstance(dtype, tdt):
            rt = _torch_types_of(torch).get(dtype)
            if rt is not None:
                return rt
        st = getattr(dtype, "str", None)
        if st is None and isinstance(dtype, type):
            st = getattr(getattr(dtype, "dtype", None), "str", None)
        if st in TYPESTR:
            return TYPESTR[st]
    raise TypeError("%s: dtype is %r; the accumulator and result type: float32, float64, "
                    "int32, int64, uint32 or uint64 (a torch dtype, a NumPy dtype or a name)"
                    % (what, dtype))


def _torch_types_of(torch):
    from ._arrays import _torch_types
    return _torch_types(torch)


def _spec(code, rtype, dtype, what):
    """(spec, result type, values per result) of built-in 'code' over 'rtype' with dtype=
    (the accumulator, which is also the result, as torch's dtype=)."""
    acc = None if dtype is None else _acc_of(dtype, what)
    try:
        return _types.resolve(code, rtype, acc)
    except ValueError as err:
        raise TypeError("%s: %s" % (what, err)) from None


def _wait_producer(info, device, work):
    """Order the work after the producer stream an array interface named."""
    if info.stream is not None and info.stream != work and not (
            info.stream in (1, 0) and work in (0, 1)):
        _cuda.stream_wait(device, work, info.stream)


# ---------------------------------------------------------------- reduce

def _axis(dim, shape, keepdim, what):
    """(the result's shape, the axis): the axis is (outer, len, inner), the contiguous array
    of 'shape' viewed as [outer, len, inner] reduced along len (docs/python.md, "Along an
    axis"), or None for a reduction of every element (dim=None, or dims that leave only
    extents of 1). 'dim' is an int (negative counts from the end) or a tuple of adjacent
    dims, which reduce as one axis."""
    nd = len(shape)
    if dim is None:
        return ((1,) * nd if keepdim else ()), None
    if isinstance(dim, int) and not isinstance(dim, bool):
        dims = (dim,)
    else:
        try:
            dims = tuple(dim)
        except TypeError:
            raise TypeError("%s: dim is %r; an int or a tuple of ints is expected"
                            % (what, dim)) from None
    red = []
    lim = nd if nd else 1
    for d in dims:
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError("%s: dim holds %r; ints are expected" % (what, d))
        if not -lim <= d < lim:
            raise IndexError("%s: dim %d is out of range for %d dimension%s (%d to %d)"
                             % (what, d, nd, "" if nd == 1 else "s", -lim, lim - 1))
        if d % lim in red:
            raise ValueError("%s: dim %d appears twice in dim=%r" % (what, d, dim))
        red.append(d % lim)
    if not red:   # dim=(): every dim, as torch's
        red = list(range(nd))
    red.sort()
    if keepdim:
        res = tuple(1 if i in red else shape[i] for i in range(nd))
    else:
        res = tuple(shape[i] for i in range(nd) if i not in red)
    if _prod(shape[i] for i in range(nd) if i not in red) == 1:
        return res, None
    lo, hi = red[0], red[-1]
    if hi - lo + 1 != len(red):
        raise NotImplementedError(
            "%s: dim=%r of an array of shape %r: redtune reduces along one axis, or along "
            "adjacent axes as one; these are not adjacent (move them together first: "
            "x.movedim(...).contiguous())" % (what, dim, tuple(shape)))
    return res, (_prod(shape[:lo]), _prod(shape[lo:hi + 1]), _prod(shape[hi + 1:]))


def _dims(dim, shape, keepdim, what):
    """The result's shape (see _axis)."""
    return _axis(dim, shape, keepdim, what)[0]


_compiling = None


def _torch_compiling():
    global _compiling
    if _compiling is None:
        torch = sys.modules["torch"]
        comp = getattr(torch, "compiler", None)
        _compiling = getattr(comp, "is_compiling", None) or (lambda: False)
    return _compiling()


def reduce(x, op, dim=None, keepdim=False, out=None, stream=None, temp=None, dtype=None):
    """Reduce the CUDA array 'x' with 'op' ("sum", "prod", "min", "max", "argmin", "argmax",
    or a UserOp), asynchronously on 'stream' (default: the framework's current stream).

    dim=None reduces every element (so do dims that leave only extents of 1). An int dim
    (negative counts from the end), or a tuple of adjacent dims, reduces the contiguous x
    along that axis (rt_reduce_axis: x viewed as [outer, len, inner]); the result has x's
    shape without dim (with 1 there for keepdim), as torch.sum(x, dim). The result is an
    array of x's framework on x's device, of the op's result dtype (argmin/argmax: the int64
    index into the flattened x, or along dim), shaped as the framework's own reduction with
    that dim and keepdim; or it is written to 'out' (for argmin/argmax: two int64 per
    result, the value's bits then the index; along an axis 'out' must have exactly the
    result's shape, with a last extent of 2 for argmin/argmax and var/std_mean).
    'temp' gives the temporary storage (temp_bytes(x, op) bytes, 256-byte aligned) instead
    of the context's (rt_reduce_temp)."""
    if type(x) is _tensor and stream is None and temp is None and dtype is None:
        cls = op.__class__
        code = _FAST_OPS.get(op) if cls is str or cls is int else None
        if code is not None:
            r = (_torch_call(x, code, out) if dim is None and not keepdim else
                 _torch_axis_call(x, code, dim, keepdim, out))
            if r is not None:
                return r
    return _reduce(x, op, dim, keepdim, out, stream, temp, "redtune.reduce", dtype)


_modules = sys.modules


class _Unseen:
    """What _tensor and _cparray are until torch and CuPy have been seen: a class no argument
    is an instance of."""


# The fast paths: the common call (the whole dense array into a new result or a given out=,
# on the current stream) of a torch.Tensor (tried first, by the shortcuts and reduce) or a
# cupy.ndarray (tried first in _reduce), found by the argument's exact class: an identity
# test, which torch.compile's tracer follows too (then _torch_call declines). _torch_fast and
# _cupy_fast set the classes when the general path first meets the framework's array;
# neither module is imported here.
_tensor = _Unseen    # torch.Tensor
_cparray = _Unseen   # cupy.ndarray
# The torch path's constants, set once by _torch_fast; _fast is the marker that they are.
_fast = None
_strided = _int64 = None
_ttypes = {}        # torch dtype -> rt_type
_tres = {}          # (rt_op, rt_type) -> the torch dtype of its one-value result
_tdevice = {}       # device ordinal -> torch.device("cuda", ordinal), made once
_empty = _rt_reduce = None
# The op codes the fast path takes from reduce(x, op): names and rt_op values.
_FAST_OPS = {**C.OPS, **{v: v for v in C.OPS.values()}}


def _first_reduce(*args):
    """_rt_reduce until the first fast call, which finds the library's function then (a
    context is open, so the library is loaded; a missing library is reported by the general
    path, after the arguments' checks)."""
    global _rt_reduce
    from ._lib import reduce_function
    _rt_reduce = reduce_function(library())
    return _rt_reduce(*args)


def _first_axis(*args):
    """_rt_axis until the first call along an axis, as _first_reduce."""
    global _rt_axis
    from ._lib import axis_function
    _rt_axis = axis_function(library())
    return _rt_axis(*args)


_rt_axis = _first_axis


def _torch_fast(torch):
    """The torch path's constants, looked up once."""
    global _fast, _tensor, _strided, _int64, _ttypes, _tdevice, _empty, _rt_reduce, _rt_axis
    from ._arrays import _torch_types
    _current_stream(ArrayInfo(None, 0, (), None, 0, 0, "torch", 0))   # sets _raw_stream
    _torch_compiling()                                               # sets _compiling
    _strided, _int64, _ttypes, _tdevice = torch.strided, torch.int64, _torch_types(torch), {}
    _tres.clear()
    _rpool.clear()
    for dt, rt in _ttypes.items():
        for code in C.OPS.values():
            try:
                spec, res, k = _types.resolve(code, rt)
            except ValueError:
                continue
            if k == 1 and code not in ARG_OPS:
                _tres[(code, rt)] = _torch_dtype(torch, res)
    _empty, _rt_reduce, _rt_axis = torch.empty, _first_reduce, _first_axis
    _tensor = torch.Tensor
    _fast = True
    return _fast


# New 0-d results of the torch fast path, made in batches (issue 11: torch.empty from Python
# costs ~3.6 us a call on the H100 machines, more than the reduction's launch): a batch is one
# allocation of _BATCH values on the stream that will write them, handed out as its 0-d views
# (Tensor.unbind, one C++ call), so each result is a tensor of its own value, alive as long as
# the caller keeps it (the batch's memory goes back to torch's allocator when its last view
# dies). Keyed by the result dtype and the raw stream, as torch's allocator keys its blocks,
# so that no view is written on a stream other than its block's.
_BATCH = 128
_rpool = {}         # (torch dtype, raw stream) -> list of unused 0-d views


def _refill(rd, d, work):
    """A fresh batch of results for (dtype rd, device d, stream work)."""
    if len(_rpool) > 64:
        _rpool.clear()    # many streams over time: drop the unused views of the old ones
    pool = _rpool[(rd, work)] = list(_empty(_BATCH, dtype=rd, device=d).unbind())
    return pool


def _torch_call(x, code, out):
    """The common torch call in as few Python steps as possible (issue 11: its host cost is
    compared with torch.sum's): the whole dense CUDA tensor 'x' reduced by built-in op 'code'
    into a new 0-d result, or into 'out' (a tensor of the result's dtype and size on x's
    device), on the current stream, with device's context open already. Returns the result,
    or None for anything else, and for every refusal: the general path (_reduce) then checks
    the call and raises its exceptions. Called only once _torch_fast has run."""
    if _compiling():
        return None
    rt = _ttypes.get(x.dtype)
    if rt is None or not x.is_cuda or x.layout is not _strided or not x.is_contiguous():
        return None
    dev = x.get_device()
    ctx = _contexts.get(dev)
    if ctx is None:
        return None
    work = _raw_stream(dev)
    if out is None:
        d = _tdevice.get(dev)
        if d is None:
            d = _tdevice[dev] = x.device
        if code not in ARG_OPS:
            rd = _tres.get((code, rt))
            if rd is None:
                return None
            pool = _rpool.get((rd, work))
            if not pool:
                pool = _refill(rd, d, work)
            result = pool.pop()
            optr = result.data_ptr()
        else:
            buf = _empty(2, dtype=_int64, device=d)   # {value bits, index}
            optr, result = buf.data_ptr(), buf[1]
    else:
        if (out.__class__ is not _tensor or not out.is_cuda or out.layout is not _strided or
                out.get_device() != dev or not out.is_contiguous()):
            return None
        if code not in ARG_OPS:
            if out.dtype != _tres.get((code, rt)) or out.numel() != 1:
                return None
        elif _ttypes.get(out.dtype) not in (C.RT_I64, C.RT_U64) or out.numel() != 2:
            return None
        result, optr = out, out.data_ptr()
    rc = _rt_reduce(ctx._h, code, rt, x.data_ptr(), x.numel(), optr, work)
    if rc:
        if rc == C.RT_ECAPTURE:
            rc = _capture_retry(ctx, code, rt, x.data_ptr(), x.numel(), optr, work, x)
        if rc:
            check(rc, ctx._h)
    return result


def _torch_axis_call(x, code, dim, keepdim, out):
    """_torch_call along one axis: an int 'dim' of a dense CUDA tensor with more than one
    output, a built-in op of one result value (argmin/argmax: no out=), into a new result or
    an 'out' of exactly the result's shape and dtype; rt_reduce_axis through the same word
    prototype. None for anything else (the general path checks it and raises)."""
    if _compiling() or dim.__class__ is not int:
        return None
    rt = _ttypes.get(x.dtype)
    if rt is None or not x.is_cuda or x.layout is not _strided or not x.is_contiguous():
        return None
    shape = tuple(x.shape)
    nd = len(shape)
    if not -nd <= dim < nd:
        return None
    d = dim % nd
    outer = inner = 1
    for e in shape[:d]:
        outer *= e
    for e in shape[d + 1:]:
        inner *= e
    if outer * inner <= 1:   # one output (the flat call) or none
        return None
    dev = x.get_device()
    ctx = _contexts.get(dev)
    if ctx is None:
        return None
    rshape = shape[:d] + (1,) + shape[d + 1:] if keepdim else shape[:d] + shape[d + 1:]
    if out is None:
        dv = _tdevice.get(dev)
        if dv is None:
            dv = _tdevice[dev] = x.device
        if code not in ARG_OPS:
            rd = _tres.get((code, rt))
            if rd is None:
                return None
            result = _empty(rshape, dtype=rd, device=dv)
            optr = result.data_ptr()
        else:
            buf = _empty(rshape + (2,), dtype=_int64, device=dv)   # {value bits, index}
            optr, result = buf.data_ptr(), buf[..., 1]
    else:
        if (code in ARG_OPS or out.__class__ is not _tensor or not out.is_cuda or
                out.layout is not _strided or out.get_device() != dev or
                not out.is_contiguous() or out.dtype != _tres.get((code, rt)) or
                tuple(out.shape) != rshape):
            return None
        result, optr = out, out.data_ptr()
    work = _raw_stream(dev)
    rc = _rt_axis(ctx._h, code, rt, x.data_ptr(), outer, shape[d], inner, optr, work)
    if rc:
        if rc == C.RT_ECAPTURE:
            rc = _capture_retry(ctx, code, rt, x.data_ptr(), x.numel(), optr, work, x,
                                (outer, shape[d], inner))
        if rc:
            check(rc, ctx._h)
    return result


_cupy = None   # (cupy.ndarray, cupy.empty, getDevice, get_current_stream) once CuPy is seen


def _cupy_fast(cupy):
    """The CuPy path's constants, looked up once."""
    global _cupy, _cparray, _rt_reduce
    _rt_reduce = _first_reduce
    _cupy = (cupy.ndarray, cupy.empty, cupy.cuda.runtime.getDevice,
             cupy.cuda.get_current_stream)
    _cparray = cupy.ndarray


def _cupy_call(x, code, out):
    """_torch_call's counterpart for a cupy.ndarray on the current device (CuPy allocates
    there and its current stream is that device's): None for anything else."""
    rt = TYPESTR.get(x.dtype.str)
    if rt is None or not x.flags.c_contiguous:
        return None
    dev = x.device.id
    ctx = _contexts.get(dev)
    if ctx is None or _cupy[2]() != dev:
        return None
    if code not in ARG_OPS:
        try:
            spec, res, k = _types.resolve(code, rt)
        except ValueError:
            return None
        if k != 1 or spec != rt:
            return None
    if out is None:
        if code not in ARG_OPS:
            result = _cupy[1]((), dtype=TYPE_TYPESTR[res])
            optr = result.data.ptr
        else:
            buf = _cupy[1](2, dtype="<i8")   # {value bits, index}
            optr, result = buf.data.ptr, buf[1]
    else:
        if (out.__class__ is not _cupy[0] or out.device.id != dev or
                not out.flags.c_contiguous):
            return None
        ort = TYPESTR.get(out.dtype.str)
        if code not in ARG_OPS:
            if ort != res or out.size != 1:
                return None
        elif ort not in (C.RT_I64, C.RT_U64) or out.size != 2:
            return None
        result, optr = out, out.data.ptr
    rc = _rt_reduce(ctx._h, code, rt, x.data.ptr, x.size, optr, _cupy[3]().ptr)
    if rc:
        check(rc, ctx._h)
    return result


def _fast_code(op):
    """The rt_op of a built-in 'op' given by name or value, None for anything else."""
    cls = op.__class__
    return _FAST_OPS.get(op) if cls is str or cls is int else None


def _reduce(x, op, dim, keepdim, out, stream, temp, what, dtype=None, raw_pair=False):
    if (type(x) is _cparray and stream is None and temp is None and dim is None and not keepdim
            and dtype is None and not raw_pair):
        code = _fast_code(op)
        if code is not None:
            r = _cupy_call(x, code, out)
            if r is not None:
                return r
    torch = _modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        if _torch_compiling():
            return _torch_route(x, op, dim, keepdim, out, stream, temp, what, dtype)
        # The calls try _torch_call before coming here for a torch.Tensor once torch has
        # been seen: try it for the first tensor and for subclasses (torch.nn.Parameter).
        fresh = _fast is None or _tensor is not torch.Tensor
        if fresh:
            _torch_fast(torch)
        if ((fresh or type(x) is not _tensor) and stream is None and temp is None and
                dim is None and not keepdim and dtype is None and not raw_pair):
            code = _fast_code(op)
            if code is not None:
                r = _torch_call(x, code, out)
                if r is not None:
                    return r
    else:
        cupy = _modules.get("cupy")
        if cupy is not None and type(x) is cupy.ndarray and _cparray is not cupy.ndarray:
            _cupy_fast(cupy)    # the first CuPy array
            code = _fast_code(op)
            if (code is not None and stream is None and temp is None and dim is None and
                    not keepdim and dtype is None and not raw_pair):
                r = _cupy_call(x, code, out)
                if r is not None:
                    return r
    if isinstance(op, UserOp):
        code, uop = None, op
        if dtype is not None:
            raise ValueError("%s: dtype= is for the built-in operators; a UserOp reduces its "
                             "own type" % what)
    else:
        code, name = _builtin_op(op, what)
        uop = None
    s = None if stream is None else stream_handle(stream, what)
    info = describe(x, "x", what, s)
    if info.strides is not None:
        _check_contiguous(info, "x", what)
    rtype = info.type
    if uop is not None and uop.rt_type != rtype:
        raise TypeError("%s: x has dtype %s and operator %r reduces %s"
                        % (what, TYPE_NAMES[rtype], uop.name, uop.type))
    spec, res, k = rtype, rtype, 1
    if uop is None:
        spec, res, k = _spec(code, rtype, dtype, what)
    shape, axis = _axis(dim, info.shape, keepdim, what) if (dim is not None or keepdim) else (
        (), None)
    device = info.device
    if device is None:
        device = _resolve_device(info, "x", what)
    arg = code in ARG_OPS
    work = s if s is not None else _current_stream(info)
    if out is not None:
        if axis is None:
            o = _out(out, device, res, k, what, work, arg)
        else:
            o = _out(out, device, res, None, what, work, arg,
                     shape + ((2,) if arg or k == 2 else ()))
        result, optr = out, o.ptr
    elif arg:
        buf, optr = _allocate(info, shape + (2,), C.RT_I64, what, work)
        result = buf[..., 1]
    elif k == 2:
        buf, optr = _allocate(info, shape + (2,), res, what, work)
        result = buf if raw_pair else (buf[..., 0], buf[..., 1])
    else:
        result, optr = _allocate(info, shape, res, what, work)
    ctx = _contexts.get(device) or context(device)
    if uop is not None:
        code = ctx.op_handle(uop)
    if info.stream is not None:
        _wait_producer(info, device, work)
    lib = library()
    if axis is not None:
        if axis[0] * axis[2] == 0:
            return result   # no output: nothing to write (nor does the library)
        if temp is None:
            rc = _rt_axis(ctx._h, code, spec, info.ptr, axis[0], axis[1], axis[2], optr, work)
            if rc == C.RT_ECAPTURE and info.framework == "torch":
                rc = _capture_retry(ctx, code, spec, info.ptr, info.size, optr, work, info.obj,
                                    axis)
        else:
            t = _raw(temp, "temp", what, device)
            rc = require(lib, "rt_reduce_axis_temp", what)(
                ctx._h, code, spec, info.ptr, axis[0], axis[1], axis[2], optr, t[0], t[1],
                work)
    elif temp is None:
        rc = lib.rt_reduce(ctx._h, code, spec, info.ptr, info.size, optr, work)
        if rc == C.RT_ECAPTURE and info.framework == "torch":
            rc = _capture_retry(ctx, code, spec, info.ptr, info.size, optr, work, info.obj)
    else:
        t = _raw(temp, "temp", what, device)
        rc = lib.rt_reduce_temp(ctx._h, code, spec, info.ptr, info.size, optr, t[0], t[1],
                                work)
    if rc != 0:
        check(rc, ctx._h)
    return result


def _capture_retry(ctx, code, rtype, ptr, n, optr, work, x, axis=None):
    """rt_reduce refused (RT_ECAPTURE): stream 'work' is capturing a CUDA graph. When the
    kernel is loaded and only the stream's temporary storage is missing (torch captures on a
    stream of its own, not the warm-up's), the call gets storage allocated by torch: during
    a capture that comes from the graph's private memory pool, which the graph keeps for its
    replays. rt_reduce_temp with none says which case it is: RT_EINVAL, storage needed (the
    arguments passed rt_reduce's checks already), or RT_ECAPTURE, the kernel not loaded.
    Returns the library's code. Along an axis ('axis' = (outer, len, inner)) the same with
    rt_reduce_axis_temp and rt_axis_temp_bytes."""
    lib = library()
    if axis is None:
        call = lambda p, b: lib.rt_reduce_temp(ctx._h, code, rtype, ptr, n, optr, p, b, work)  # noqa: E731
        sizer = lambda r: lib.rt_temp_bytes(ctx._h, code, rtype, n, r)  # noqa: E731
    else:
        o, ln, i = axis
        call = lambda p, b: lib.rt_reduce_axis_temp(ctx._h, code, rtype, ptr, o, ln, i, optr,  # noqa: E731
                                                    p, b, work)
        sizer = lambda r: lib.rt_axis_temp_bytes(ctx._h, code, rtype, o, ln, i, r)  # noqa: E731
    rc = call(None, 0)
    if rc != C.RT_EINVAL:
        return rc
    size = ctypes.c_size_t()
    rc = sizer(ctypes.byref(size))   # a lookup now
    if rc != 0:
        return rc
    torch = sys.modules["torch"]
    tmp = torch.empty(size.value, dtype=torch.uint8, device=x.device)
    if work != torch.cuda.current_stream(x.device).cuda_stream:
        tmp.record_stream(torch.cuda.ExternalStream(work, device=x.device))
    return call(tmp.data_ptr(), size.value)


def _raw(buf, name, what, device):
    """(pointer, bytes) of a device buffer of any dtype (temporary storage)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(buf, torch.Tensor):
        if not buf.is_cuda or buf.get_device() != device:
            raise ValueError("%s: %s is on %s; device cuda:%d is expected"
                             % (what, name, buf.device, device))
        if not buf.is_contiguous():
            raise ValueError("%s: %s is not contiguous" % (what, name))
        return buf.data_ptr(), buf.numel() * buf.element_size()
    cai = getattr(buf, "__cuda_array_interface__", None)
    if cai is None:
        raise TypeError("%s: %s is a %s; a torch CUDA tensor or an object with "
                        "__cuda_array_interface__ is expected" % (what, name,
                                                                   type(buf).__name__))
    shape, typestr = tuple(cai["shape"]), cai["typestr"]
    if cai.get("strides") is not None and cai["strides"] != tuple(
            s * int(typestr[2:]) for s in _contiguous(shape)):
        raise ValueError("%s: %s is not contiguous" % (what, name))
    ptr = int(cai["data"][0])
    d = _cuda.pointer_device(ptr) if ptr else device
    if d != device:
        raise ValueError("%s: %s is not memory of device %d" % (what, name, device))
    return ptr, _prod(shape) * int(typestr[2:])


def _contiguous(shape):
    from ._arrays import contiguous_strides
    return contiguous_strides(shape)


def _torch_route(x, op, dim, keepdim, out, stream, temp, what, dtype=None):
    """Inside torch.compile: the custom op, which the graph records (no graph break)."""
    if (isinstance(op, UserOp) or out is not None or stream is not None or temp is not None
            or dtype is not None):
        raise NotImplementedError("%s under torch.compile: a built-in op with no out=, "
                                  "stream=, temp= or dtype= (they are eager-mode only)" % what)
    torch = sys.modules["torch"]
    name = _builtin_op(op, what)[1]
    if not _torch_registered():
        raise RuntimeError("%s under torch.compile: torch.ops.redtune.reduce is not defined: "
                           "import torch before redtune, or call redtune.register_torch_ops() "
                           "before compiling (it needs PyTorch 2.4+)" % what)
    shape, axis = _axis(dim, tuple(x.shape), keepdim, what) if (
        dim is not None or keepdim) else ((), None)
    pair = name in _PAIR_NAMES
    if axis is None:
        r = torch.ops.redtune.reduce(x, name)
    elif isinstance(dim, int):
        r = torch.ops.redtune.reduce(x, name, dim)
    else:   # adjacent dims: one axis of the [outer, len, inner] view
        r = torch.ops.redtune.reduce(x.reshape(axis), name, 1)
    if dim is not None or keepdim:
        r = r.reshape(shape + ((2,) if pair else ()))
    if pair:   # var/std_mean: the pair
        return r[..., 0], r[..., 1]
    return r


_PAIR_NAMES = ("var_mean", "var_mean_sample", "std_mean", "std_mean_sample")


def _torch_registered():
    from . import _torch
    return _torch._done


def temp_bytes(x, op, dim=None):
    """The bytes of temporary storage reduce(x, op, dim=dim, temp=...) needs (rt_temp_bytes;
    along an axis rt_axis_temp_bytes)."""
    what = "redtune.temp_bytes"
    info = describe(x, "x", what)
    axis = None if dim is None else _axis(dim, info.shape, False, what)[1]
    dev = _resolve_device(info, "x", what)
    if axis is not None:
        return context(dev).axis_temp_bytes(op, info.type, *axis)
    return context(dev).temp_bytes(op, info.type, info.size)


def sum(x, dim=None, keepdim=False, out=None, stream=None, dtype=None):
    """The sum of x's elements (integer sums wrap modulo 2^bits of the accumulator, as the
    library's): float16/bfloat16 accumulate in float32, int8 in int32, uint8 in uint32, and
    the result has the accumulator's type; dtype= chooses another accumulator (float64)."""
    if type(x) is _tensor and stream is None and dtype is None:
        r = (_torch_call(x, C.RT_SUM, out) if dim is None and not keepdim else
             _torch_axis_call(x, C.RT_SUM, dim, keepdim, out))
        if r is not None:
            return r
    return _reduce(x, C.RT_SUM, dim, keepdim, out, stream, None, "redtune.sum", dtype)


def prod(x, dim=None, keepdim=False, out=None, stream=None, dtype=None):
    """The product of x's elements (integer products wrap; accumulator as sum)."""
    if type(x) is _tensor and stream is None and dtype is None:
        r = (_torch_call(x, C.RT_PROD, out) if dim is None and not keepdim else
             _torch_axis_call(x, C.RT_PROD, dim, keepdim, out))
        if r is not None:
            return r
    return _reduce(x, C.RT_PROD, dim, keepdim, out, stream, None, "redtune.prod", dtype)


def min(x, dim=None, keepdim=False, out=None, stream=None):
    """The least element (floats: NaN ignored unless every element is NaN, as nanmin)."""
    if type(x) is _tensor and stream is None:
        r = (_torch_call(x, C.RT_MIN, out) if dim is None and not keepdim else
             _torch_axis_call(x, C.RT_MIN, dim, keepdim, out))
        if r is not None:
            return r
    return _reduce(x, C.RT_MIN, dim, keepdim, out, stream, None, "redtune.min")


def max(x, dim=None, keepdim=False, out=None, stream=None):
    """The greatest element (floats: NaN ignored unless every element is NaN, as nanmax)."""
    if type(x) is _tensor and stream is None:
        r = (_torch_call(x, C.RT_MAX, out) if dim is None and not keepdim else
             _torch_axis_call(x, C.RT_MAX, dim, keepdim, out))
        if r is not None:
            return r
    return _reduce(x, C.RT_MAX, dim, keepdim, out, stream, None, "redtune.max")


def argmin(x, dim=None, keepdim=False, out=None, stream=None):
    """The flat index of the least element (ties: the lowest index; n == 0: -1); with dim,
    the index along dim per output, as torch.argmin(x, dim)."""
    if type(x) is _tensor and stream is None:
        r = (_torch_call(x, C.RT_ARGMIN, out) if dim is None and not keepdim else
             _torch_axis_call(x, C.RT_ARGMIN, dim, keepdim, out))
        if r is not None:
            return r
    return _reduce(x, C.RT_ARGMIN, dim, keepdim, out, stream, None, "redtune.argmin")


def argmax(x, dim=None, keepdim=False, out=None, stream=None):
    """The flat index of the greatest element (ties: the lowest index; n == 0: -1); with dim,
    the index along dim per output, as torch.argmax(x, dim)."""
    if type(x) is _tensor and stream is None:
        r = (_torch_call(x, C.RT_ARGMAX, out) if dim is None and not keepdim else
             _torch_axis_call(x, C.RT_ARGMAX, dim, keepdim, out))
        if r is not None:
            return r
    return _reduce(x, C.RT_ARGMAX, dim, keepdim, out, stream, None, "redtune.argmax")


def _shortcut(x, code, dim, keepdim, out, stream, dtype, what):
    if type(x) is _tensor and stream is None and dtype is None:
        r = (_torch_call(x, code, out) if dim is None and not keepdim else
             _torch_axis_call(x, code, dim, keepdim, out))
        if r is not None:
            return r
    return _reduce(x, code, dim, keepdim, out, stream, None, what, dtype)


def amax(x, dim=None, keepdim=False, out=None, stream=None):
    """The greatest |x| of a float array, in x's dtype (the FP8/INT8 scaling reduction; NaN
    ignored unless every element is NaN; 0 for an empty array)."""
    return _shortcut(x, C.RT_AMAX, dim, keepdim, out, stream, None, "redtune.amax")


def asum(x, dim=None, keepdim=False, out=None, stream=None, dtype=None):
    """The sum of |x| of a float array, accumulated in float32 for float16/bfloat16 (or
    dtype=)."""
    return _shortcut(x, C.RT_ASUM, dim, keepdim, out, stream, dtype, "redtune.asum")


def sumsq(x, dim=None, keepdim=False, out=None, stream=None, dtype=None):
    """The sum of x*x of a float array in one pass (accumulator as asum)."""
    return _shortcut(x, C.RT_SUMSQ, dim, keepdim, out, stream, dtype, "redtune.sumsq")


def norm2(x, dim=None, keepdim=False, out=None, stream=None, dtype=None):
    """The Euclidean norm sqrt(sum(x*x)) of a float array in one pass, in the accumulator
    (float32 for float16/bfloat16, or dtype=), as torch.linalg.vector_norm."""
    return _shortcut(x, C.RT_NORM2, dim, keepdim, out, stream, dtype, "redtune.norm2")


def mean(x, dim=None, keepdim=False, out=None, stream=None, dtype=None):
    """The mean, in the accumulator (float32 for float16/bfloat16; float64 for integer
    arrays); NaN for an empty array."""
    return _shortcut(x, C.RT_MEAN, dim, keepdim, out, stream, dtype, "redtune.mean")


def _correction(correction, what):
    # isinstance, not __class__: torch.compile's tracer (Dynamo) answers isinstance on a
    # constant but not a comparison of its __class__ with int.
    if isinstance(correction, bool) or not isinstance(correction, int) or correction not in (0, 1):
        raise ValueError("%s: correction is %r; 0 (population) or 1 (sample, the default as "
                         "torch's)" % (what, correction))
    return correction


def var_mean(x, dim=None, keepdim=False, correction=1, out=None, stream=None, dtype=None):
    """(variance, mean) in one pass (Chan's pairwise merge), as torch.var_mean: correction=1
    divides by n - 1, correction=0 by n. With out=, one array of two values {var, mean}
    (along an axis: of the result's shape + (2,)); with dim, two arrays of the result's
    shape (views of one {var, mean} buffer), as torch.var_mean(x, dim)."""
    code = C.RT_VAR_MEAN_SAMPLE if _correction(correction, "redtune.var_mean") else C.RT_VAR_MEAN
    return _reduce(x, code, dim, keepdim, out, stream, None, "redtune.var_mean", dtype)


def std_mean(x, dim=None, keepdim=False, correction=1, out=None, stream=None, dtype=None):
    """(standard deviation, mean) in one pass, as torch.std_mean."""
    code = C.RT_STD_MEAN_SAMPLE if _correction(correction, "redtune.std_mean") else C.RT_STD_MEAN
    return _reduce(x, code, dim, keepdim, out, stream, None, "redtune.std_mean", dtype)


# ---------------------------------------------------------------- segmented

def _segmented(what, x, seg, segname, op, out, stream, validate, nseg, layout):
    if isinstance(op, UserOp):
        code, uop = None, op
    else:
        code, uop = _builtin_op(op, what)[0], None
    s = None if stream is None else stream_handle(stream, what)
    info = describe(x, "x", what, s)
    _check_contiguous(info, "x", what)
    sinfo = describe(seg, segname, what, s)
    _check_contiguous(sinfo, segname, what)
    if len(sinfo.shape) != 1:
        raise ValueError("%s: %s has shape %r; a 1-D array is expected"
                         % (what, segname, sinfo.shape))
    rtype = info.type
    if uop is not None and uop.rt_type != rtype:
        raise TypeError("%s: x has dtype %s and operator %r reduces %s"
                        % (what, TYPE_NAMES[rtype], uop.name, uop.type))
    flags = C.RT_SEG_CHECK if validate else 0
    if layout == C.RT_LAYOUT_OFFSETS:
        if sinfo.type not in (C.RT_I32, C.RT_I64):
            raise TypeError("%s: offsets has dtype %s; int32 or int64 is expected"
                            % (what, TYPE_NAMES[sinfo.type]))
        if sinfo.size == 0:
            raise ValueError("%s: offsets is empty; nseg + 1 begin offsets are expected "
                             "(the last one the end of the last segment)" % what)
        if sinfo.type == C.RT_I64:
            flags |= C.RT_SEG_OFF64
        nseg = sinfo.size - 1
    else:
        if sinfo.type not in (C.RT_U32, C.RT_I32):
            raise TypeError("%s: keys has dtype %s; uint32 (or int32 holding keys below "
                            "2^31) is expected" % (what, TYPE_NAMES[sinfo.type]))
        if sinfo.size != info.size:
            raise ValueError("%s: keys has %d entries and x %d; one key per element"
                             % (what, sinfo.size, info.size))
        if nseg is None:
            if info.framework not in ("torch", "cupy"):
                raise TypeError("%s: pass nseg (it is found from the keys only for torch "
                                "and CuPy arrays)" % what)
            # The keys are sorted: the last is the largest. Reading it waits for the stream.
            nseg = int(seg[-1]) + 1 if sinfo.size else 0
        nseg = int(nseg)
        if nseg < 0:
            raise ValueError("%s: nseg is %d" % (what, nseg))
    device = _resolve_device(info, "x", what)
    sdev = _resolve_device(sinfo, segname, what)
    if sdev != device:
        raise ValueError("%s: %s is on device %d and x on device %d"
                         % (what, segname, sdev, device))
    arg = code in ARG_OPS
    spec, res, k = rtype, rtype, 1
    if uop is None:
        spec, res, k = _spec(code, rtype, None, what)
    work = s if s is not None else _current_stream(info)
    if out is not None:
        o = _out(out, device, res, nseg * k, what, work, arg)
        result, optr = out, o.ptr
    elif arg:
        buf, optr = _allocate(info, (nseg, 2), C.RT_I64, what, work)
        result = buf[:, 1]
    elif k == 2:
        buf, optr = _allocate(info, (nseg, 2), res, what, work)
        result = buf[:, 0], buf[:, 1]
    else:
        result, optr = _allocate(info, (nseg,), res, what, work)
    ctx = context(device)
    if uop is not None:
        code = ctx.op_handle(uop)
    for i in (info, sinfo):
        if i.stream is not None:
            _wait_producer(i, device, work)
    lib = library()
    if layout == C.RT_LAYOUT_OFFSETS:
        rc = lib.rt_reduce_offsets(ctx._h, code, spec, info.ptr, info.size, sinfo.ptr, nseg,
                                   optr, work, flags)
    else:
        rc = lib.rt_reduce_keys(ctx._h, code, spec, info.ptr, sinfo.ptr, info.size, nseg,
                                optr, work, flags)
    if rc != 0:
        check(rc, ctx._h)
    return result


def reduce_offsets(x, offsets, op, out=None, stream=None, check=False):
    """Segmented reduction of x (flattened) by CSR begin offsets (int32 or int64, nseg + 1 of
    them): result[s] reduces x[offsets[s]:offsets[s+1]], the identity when empty
    (argmin/argmax: the index into x, -1 when empty). check=True validates the offsets on
    the GPU first (synchronous) and raises InvalidArgumentError for bad ones."""
    return _segmented("redtune.reduce_offsets", x, offsets, "offsets", op, out, stream, check,
                      None, C.RT_LAYOUT_OFFSETS)


def reduce_keys(x, keys, op, nseg=None, out=None, stream=None, check=False):
    """Segmented reduction of x (flattened) by sorted segment keys (uint32, one per element):
    result[s] reduces the elements whose key is s. nseg defaults to the last key + 1 (read
    back from the device: that waits for the stream)."""
    return _segmented("redtune.reduce_keys", x, keys, "keys", op, out, stream, check, nseg,
                      C.RT_LAYOUT_KEYS)


# ---------------------------------------------------------------- explain

def explain(x, op="sum", type=None, device=None, dim=None):
    """rt_explain: which kernel reduces 'x' with 'op', and why (the database entry, the
    fallback level, where the CUBIN came from). 'x' is an array, an element count, or (with
    dim=) a shape; for a count or a shape type= ("f32", ...; default that of a UserOp, else
    "f32") and device= (default 0). With dim= the reduction along that axis
    (rt_explain_axis, which names the tuned shape the kernel comes from)."""
    what = "redtune.explain"
    if isinstance(x, tuple) or (isinstance(x, int) and not isinstance(x, bool)):
        if isinstance(x, tuple) and dim is None:
            raise TypeError("%s: x is a shape %r; give dim= (or an element count without "
                            "it)" % (what, x))
        tname = type or (op.type if isinstance(op, UserOp) else "f32")
        if tname not in C.TYPES:
            raise ValueError("%s: type is %r; one of %s" % (what, tname, ", ".join(C.TYPES)))
        shape, rtype, ctx = (x if isinstance(x, tuple) else (x,)), C.TYPES[tname], None
    else:
        info = describe(x, "x", what)
        shape, rtype = info.shape, info.type
        ctx = context(_resolve_device(info, "x", what))
    axis = None if dim is None else _axis(dim, shape, False, what)[1]
    ctx = ctx or context(device)
    if axis is not None:
        return ctx.explain_axis(op, rtype, *axis)
    return ctx.explain(op, rtype, _prod(shape))
