"""The few CUDA driver calls the package makes itself, through ctypes on libcuda.so.1.

Only arrays that come through __cuda_array_interface__ need them: that interface names no
device (cuPointerGetAttribute finds it), and its 'stream' may differ from the stream the work
goes on (an event orders the two). torch, CuPy and DLPack inputs never load the driver here.
"""
import ctypes
import threading

CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2
CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
CU_MEMORYTYPE_HOST = 1
CU_EVENT_DISABLE_TIMING = 2

_lock = threading.Lock()
_cuda = None


def driver():
    """libcuda, initialised; OSError when there is no driver."""
    global _cuda
    if _cuda is not None:
        return _cuda
    with _lock:
        if _cuda is None:
            lib = ctypes.CDLL("libcuda.so.1")
            rc = lib.cuInit(0)
            if rc != 0:
                raise OSError("cuInit failed with CUDA error %d" % rc)
            _cuda = lib
    return _cuda


def _call(what, rc):
    if rc != 0:
        name = ctypes.c_char_p()
        driver().cuGetErrorName(rc, ctypes.byref(name))
        raise OSError("%s failed: %s" % (what, (name.value or b"CUDA error %d" % rc).decode()))


def pointer_device(ptr):
    """The CUDA ordinal of device pointer 'ptr', or None when it is host memory (or no
    memory the driver knows)."""
    lib = driver()
    mtype = ctypes.c_uint()
    if lib.cuPointerGetAttribute(ctypes.byref(mtype), CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 ctypes.c_uint64(ptr)) != 0:
        return None
    if mtype.value == CU_MEMORYTYPE_HOST:
        return None
    ordinal = ctypes.c_int()
    if lib.cuPointerGetAttribute(ctypes.byref(ordinal), CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 ctypes.c_uint64(ptr)) != 0:
        return None
    return ordinal.value


def stream_wait(device, consumer, producer):
    """Make stream 'consumer' wait for the work enqueued so far on 'producer' (both of
    device 'device's primary context), without blocking the host."""
    lib = driver()
    dev, ctx, ev = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p()
    _call("cuDeviceGet", lib.cuDeviceGet(ctypes.byref(dev), device))
    _call("cuDevicePrimaryCtxRetain", lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
    try:
        _call("cuCtxPushCurrent", lib.cuCtxPushCurrent_v2(ctx))
        try:
            _call("cuEventCreate", lib.cuEventCreate(ctypes.byref(ev), CU_EVENT_DISABLE_TIMING))
            try:
                _call("cuEventRecord", lib.cuEventRecord(ev, ctypes.c_void_p(producer or None)))
                _call("cuStreamWaitEvent", lib.cuStreamWaitEvent(
                    ctypes.c_void_p(consumer or None), ev, 0))
            finally:
                lib.cuEventDestroy_v2(ev)
        finally:
            lib.cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))
    finally:
        lib.cuDevicePrimaryCtxRelease_v2(dev)
