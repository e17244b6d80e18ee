"""The general path's arguments: stream= handles, the device of an array, contiguity, out=
checked, results allocated in x's framework, the dtype= accumulator and the spec it gives,
temp= buffers, and the wait on a producer stream that an array interface names."""
import sys

from . import _consts as C
from . import _cuda
from ._arrays import TYPE_NAMES, TYPE_TYPESTR, TYPESTR, describe, _prod
from . import _types
from ._lib import error

_modules = sys.modules


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
