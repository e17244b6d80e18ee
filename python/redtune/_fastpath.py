"""The fast paths and what they read, looked up once per framework: the common call of a
torch.Tensor or cupy.ndarray straight to the library (whole array or one int dim), the batch
pool of the torch path's new 0-d results, the current stream of x's framework (torch's raw
stream getter), whether torch is compiling, and the retry of a call refused during a CUDA
graph capture. The state is module globals rebound at the first array of each framework;
other modules read the rebound ones as attributes of this module."""
import ctypes
import sys

from . import _consts as C
from ._arrays import TYPE_TYPESTR, TYPESTR, ArrayInfo
from . import _types
from ._args import _torch_dtype
from ._context import ARG_OPS, _contexts
from ._lib import check, library


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


_compiling = None


def _torch_compiling():
    global _compiling
    if _compiling is None:
        torch = sys.modules["torch"]
        comp = getattr(torch, "compiler", None)
        _compiling = getattr(comp, "is_compiling", None) or (lambda: False)
    return _compiling()


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
        else:
            # the index alone (RT_RESULT_INDEX), as torch.argmax: a contiguous int64 tensor
            result = _empty(rshape, dtype=_int64, device=dv)
            rt |= _types.RESULT_INDEX
        optr = result.data_ptr()
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
