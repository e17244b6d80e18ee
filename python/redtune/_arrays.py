"""What an argument array is: its device pointer, shape, element type, device and producer.

Read from, in this order: a torch.Tensor or a cupy.ndarray directly (their attributes are the
cheapest way, and the frameworks' own reductions are what a call is compared with), else
__cuda_array_interface__ (version 3: Numba, CuPy, PyTorch, JAX), else the DLPack protocol
(__dlpack_device__, then __dlpack__(stream=...) and the capsule's DLManagedTensor, read
through ctypes). Every refusal is a TypeError or ValueError that names the argument and says
what is expected; nothing has been enqueued when one is raised.
"""
import ctypes
import sys

from . import _consts as C

# Element types by array-interface typestr (numpy's dtype.str). '=' and '|' are native order,
# which is little-endian on every platform CUDA runs on.
TYPESTR = {"<f4": C.RT_F32, "<f8": C.RT_F64, "<i4": C.RT_I32, "<u4": C.RT_U32,
           "<i8": C.RT_I64, "<u8": C.RT_U64, "<f2": C.RT_F16, "|i1": C.RT_I8, "|u1": C.RT_U8}
for _k, _v in list(TYPESTR.items()):
    TYPESTR["=" + _k[1:]] = _v
TYPE_TYPESTR = {C.RT_F32: "<f4", C.RT_F64: "<f8", C.RT_I32: "<i4", C.RT_U32: "<u4",
                C.RT_I64: "<i8", C.RT_U64: "<u8", C.RT_F16: "<f2", C.RT_I8: "|i1",
                C.RT_U8: "|u1"}
TYPE_NAMES = {v: k for k, v in C.TYPES.items()}
ITEMSIZE = {C.RT_F32: 4, C.RT_F64: 8, C.RT_I32: 4, C.RT_U32: 4, C.RT_I64: 8, C.RT_U64: 8,
            C.RT_F16: 2, C.RT_BF16: 2, C.RT_I8: 1, C.RT_U8: 1}
SUPPORTED = ("float32, float64, int32, uint32, int64, uint64, float16, bfloat16, int8 or "
             "uint8")

# DLPack (dlpack.h): device types and type codes.
kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged = 1, 2, 3, 13
kDLInt, kDLUInt, kDLFloat, kDLBfloat = 0, 1, 2, 4
DLPACK_TYPES = {(kDLFloat, 32): C.RT_F32, (kDLFloat, 64): C.RT_F64, (kDLInt, 32): C.RT_I32,
                (kDLUInt, 32): C.RT_U32, (kDLInt, 64): C.RT_I64, (kDLUInt, 64): C.RT_U64,
                (kDLFloat, 16): C.RT_F16, (kDLBfloat, 16): C.RT_BF16, (kDLInt, 8): C.RT_I8,
                (kDLUInt, 8): C.RT_U8}
DLPACK_READ_ONLY = 1 << 0
DEVICE_NAMES = {kDLCPU: "cpu", kDLCUDA: "cuda", kDLCUDAHost: "cuda_host (pinned host memory)",
                kDLCUDAManaged: "cuda_managed"}


class ArrayInfo:
    """One argument: 'ptr' (int, the first element), 'shape' (tuple), 'strides' (in elements,
    or None when C-contiguous), 'type' (RT_F32 ...), 'device' (CUDA ordinal, None while
    unknown), 'framework' ("torch", "cupy", "numba" or None), 'stream' (the producer's stream
    from the array interface, None when there is nothing to wait for), 'readonly', 'obj'
    (the object itself) and 'keep' (what must stay alive while the pointer is used)."""
    __slots__ = ("ptr", "shape", "strides", "type", "device", "framework", "stream",
                 "readonly", "obj", "keep", "size")

    def __init__(self, obj, ptr, shape, strides, rtype, device, framework, size,
                 stream=None, readonly=False, keep=None):
        self.obj, self.ptr, self.shape, self.strides = obj, ptr, shape, strides
        self.type, self.device, self.framework, self.size = rtype, device, framework, size
        self.stream, self.readonly, self.keep = stream, readonly, keep


def contiguous_strides(shape):
    """The C-order strides of 'shape', in elements."""
    out, step = [], 1
    for dim in reversed(shape):
        out.append(step)
        step *= dim
    return tuple(reversed(out))


def is_c_contiguous(shape, strides):
    """Whether strides (elements) lay shape out densely in C order; dimensions of one element
    may have any stride, and an empty array is contiguous."""
    if strides is None:
        return True
    if any(d == 0 for d in shape):
        return True
    step = 1
    for dim, st in zip(reversed(shape), reversed(strides)):
        if dim != 1 and st != step:
            return False
        step *= dim
    return True


def _prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# ---------------------------------------------------------------- the frameworks directly

_TORCH_TYPES = {}


def _torch_types(torch):
    if not _TORCH_TYPES:
        for name, rt in (("float32", C.RT_F32), ("float64", C.RT_F64), ("int32", C.RT_I32),
                         ("uint32", C.RT_U32), ("int64", C.RT_I64), ("uint64", C.RT_U64),
                         ("float16", C.RT_F16), ("bfloat16", C.RT_BF16), ("int8", C.RT_I8),
                         ("uint8", C.RT_U8)):
            dt = getattr(torch, name, None)   # uint32/uint64 since PyTorch 2.3
            if dt is not None:
                _TORCH_TYPES[dt] = rt
    return _TORCH_TYPES


def _from_torch(torch, x, name, what):
    if x.layout is not torch.strided:
        raise TypeError("%s: %s is a %s tensor; a dense (strided) CUDA tensor is expected"
                        % (what, name, x.layout))
    if not x.is_cuda:
        raise TypeError("%s: %s is on device '%s'; a CUDA tensor is expected"
                        % (what, name, x.device))
    rt = _torch_types(torch).get(x.dtype)
    if rt is None:
        raise TypeError("%s: %s has dtype %s; redtune reduces %s" % (what, name, x.dtype,
                                                                     SUPPORTED))
    strides = None if x.is_contiguous() else tuple(x.stride())
    return ArrayInfo(x, x.data_ptr(), tuple(x.shape), strides, rt, x.get_device(), "torch",
                     x.numel())


def _from_cupy(x, name, what):
    rt = TYPESTR.get(x.dtype.str)
    if rt is None:
        raise TypeError("%s: %s has dtype %s; redtune reduces %s" % (what, name, x.dtype,
                                                                     SUPPORTED))
    isz = x.itemsize
    strides = None if x.flags.c_contiguous else tuple(s // isz for s in x.strides)
    return ArrayInfo(x, x.data.ptr, tuple(x.shape), strides, rt, x.device.id, "cupy", x.size)


# ---------------------------------------------------------------- __cuda_array_interface__

def from_cai(x, cai, name, what, framework=None):
    """ArrayInfo of a __cuda_array_interface__ dict (version 3 and earlier). The device is
    left None: the interface does not carry it (the caller asks the driver)."""
    if not isinstance(cai, dict):
        raise TypeError("%s: %s.__cuda_array_interface__ is a %s, not a dict"
                        % (what, name, type(cai).__name__))
    try:
        shape = tuple(int(d) for d in cai["shape"])
        typestr = cai["typestr"]
        ptr, readonly = cai["data"]
    except (KeyError, TypeError, ValueError) as err:
        raise TypeError("%s: %s.__cuda_array_interface__ lacks a valid %s (needs shape, "
                        "typestr and data)" % (what, name, err))
    if cai.get("mask") is not None:
        raise TypeError("%s: %s is a masked array; redtune reduces unmasked arrays"
                        % (what, name))
    rt = TYPESTR.get(typestr)
    if rt is None:
        raise TypeError("%s: %s has typestr %r; redtune reduces %s "
                        "(<f4 <f8 <i4 <u4 <i8 <u8 <f2 |i1 |u1)" % (what, name, typestr, SUPPORTED))
    size = _prod(shape)
    strides = cai.get("strides")
    if strides is not None:
        isz = ITEMSIZE[rt]
        if len(strides) != len(shape) or any(int(s) % isz for s in strides):
            raise ValueError("%s: %s has strides %r that are no whole number of %d-byte "
                             "elements for shape %r" % (what, name, tuple(strides), isz, shape))
        strides = tuple(int(s) // isz for s in strides)
        if is_c_contiguous(shape, strides):
            strides = None
    if ptr is None or (ptr == 0 and size > 0):
        raise ValueError("%s: %s has a NULL data pointer" % (what, name))
    stream = cai.get("stream") if int(cai.get("version", 0)) >= 3 else None
    if stream == 0:
        raise ValueError("%s: %s.__cuda_array_interface__ has stream 0, which the protocol "
                         "disallows (1 is the legacy default stream)" % (what, name))
    return ArrayInfo(x, int(ptr), shape, strides, rt, None, framework, size,
                     stream=stream, readonly=bool(readonly))


# ---------------------------------------------------------------- DLPack

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


DLDeleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


DLPACK_MAJOR = 1   # the newest major version this reader understands

_capsule_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_valid.restype = ctypes.c_int
_capsule_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_ptr = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_ptr.restype = ctypes.c_void_p
_capsule_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]


def dlpack_device(x, name, what):
    """(device_type, device_id) from __dlpack_device__, checked to be CUDA memory."""
    try:
        dtype, did = x.__dlpack_device__()
    except Exception as err:
        raise TypeError("%s: %s.__dlpack_device__() failed: %s" % (what, name, err))
    dtype, did = int(dtype), int(did)
    if dtype not in (kDLCUDA, kDLCUDAManaged):
        raise TypeError("%s: %s is on DLPack device %s; a CUDA device array is expected"
                        % (what, name, DEVICE_NAMES.get(dtype, "type %d" % dtype)))
    return dtype, did


def from_capsule(x, capsule, name, what):
    """ArrayInfo of a DLPack capsule, versioned ("dltensor_versioned") or not ("dltensor").
    The capsule is borrowed, not consumed: its name is left as it is, so its own destructor
    calls the producer's deleter when the capsule is dropped; ArrayInfo.keep holds it until
    then (the array 'x' owns the memory in any case)."""
    if _capsule_valid(capsule, b"dltensor_versioned"):
        m = DLManagedTensorVersioned.from_address(_capsule_ptr(capsule, b"dltensor_versioned"))
        if m.version.major > DLPACK_MAJOR:
            raise TypeError("%s: %s is a DLPack %d.%d tensor; this reader knows major "
                            "version %d" % (what, name, m.version.major, m.version.minor,
                                             DLPACK_MAJOR))
        t, readonly = m.dl_tensor, bool(m.flags & DLPACK_READ_ONLY)
    elif _capsule_valid(capsule, b"dltensor"):
        m = DLManagedTensor.from_address(_capsule_ptr(capsule, b"dltensor"))
        t, readonly = m.dl_tensor, False
    else:
        raise TypeError("%s: %s.__dlpack__() returned %r, not an unconsumed DLPack capsule"
                        % (what, name, type(capsule).__name__))
    dev = t.device.device_type
    if dev not in (kDLCUDA, kDLCUDAManaged):
        raise TypeError("%s: %s is on DLPack device %s; a CUDA device array is expected"
                        % (what, name, DEVICE_NAMES.get(dev, "type %d" % dev)))
    key = (t.dtype.code, t.dtype.bits)
    rt = DLPACK_TYPES.get(key) if t.dtype.lanes == 1 else None
    if rt is None:
        raise TypeError("%s: %s has DLPack dtype (code %d, %d bits, %d lanes); redtune reduces "
                        "%s" % (what, name, t.dtype.code, t.dtype.bits, t.dtype.lanes,
                                SUPPORTED))
    if t.ndim < 0:
        raise ValueError("%s: %s has ndim %d" % (what, name, t.ndim))
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if any(d < 0 for d in shape):
        raise ValueError("%s: %s has a negative extent in shape %r" % (what, name, shape))
    strides = None
    if t.ndim and t.strides:   # NULL strides: compact row-major
        strides = tuple(t.strides[i] for i in range(t.ndim))
        if is_c_contiguous(shape, strides):
            strides = None
    size = _prod(shape)
    ptr = (t.data or 0) + t.byte_offset
    if ptr == 0 and size > 0:
        raise ValueError("%s: %s has a NULL data pointer" % (what, name))
    return ArrayInfo(x, ptr, shape, strides, rt, t.device.device_id, None, size,
                     readonly=readonly, keep=capsule)


def from_dlpack(x, name, what, stream):
    """ArrayInfo through x.__dlpack__(stream=...), asking for a versioned capsule first.
    'stream' is the stream the work goes on (the protocol's meaning: the producer makes it
    wait for the data); None or 0 is passed as 1, the legacy default stream."""
    dlpack_device(x, name, what)
    s = stream if stream else 1
    try:
        capsule = x.__dlpack__(stream=s, max_version=(DLPACK_MAJOR, 0))
    except TypeError:   # a producer of the protocol before max_version
        capsule = x.__dlpack__(stream=s)
    return from_capsule(x, capsule, name, what)


# ---------------------------------------------------------------- entry point

def describe(x, name, what, stream=None):
    """The ArrayInfo of argument 'name' of call 'what' (for messages), or TypeError.
    'stream' is the work stream, for DLPack's producer synchronisation."""
    mods = sys.modules
    torch = mods.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return _from_torch(torch, x, name, what)
    cupy = mods.get("cupy")
    if cupy is not None and isinstance(x, cupy.ndarray):
        return _from_cupy(x, name, what)
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        mod = type(x).__module__.split(".")[0]
        return from_cai(x, cai, name, what, "numba" if mod == "numba" else None)
    if hasattr(x, "__array_interface__"):   # numpy (which also offers DLPack, of the CPU)
        raise TypeError("%s: %s is a host array (%s); a CUDA device array is expected"
                        % (what, name, type(x).__name__))
    if hasattr(x, "__dlpack__"):
        return from_dlpack(x, name, what, stream)
    if hasattr(x, "__array__"):
        raise TypeError("%s: %s is a host array (%s); a CUDA device array is expected"
                        % (what, name, type(x).__name__))
    raise TypeError("%s: %s is a %s, which offers neither __cuda_array_interface__ nor "
                    "__dlpack__; a CUDA device array is expected"
                    % (what, name, type(x).__name__))
