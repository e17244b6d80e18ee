/*
 * driver.h - the CUDA driver API, loaded at run time with dlopen("libcuda.so.1"), never
 * linked: redtune's commands that need no GPU work on a machine with no driver, and the
 * others fail with "no CUDA driver found: ...".
 */
#ifndef RT_DRIVER_H
#define RT_DRIVER_H

#include <cuda.h>
#include "device.h"
#include "err.h"

typedef struct driver_api {
    CUresult (*Init)(unsigned int);
    CUresult (*DriverGetVersion)(int *);
    CUresult (*DeviceGetCount)(int *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*DeviceTotalMem)(size_t *, CUdevice);
    CUresult (*DeviceGetUuid)(CUuuid *, CUdevice);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*ModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule, const char *);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemGetInfo)(size_t *, size_t *);
    CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*MemsetD32Async)(CUdeviceptr, unsigned int, size_t, CUstream);
    CUresult (*StreamCreate)(CUstream *, unsigned int);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*StreamQuery)(CUstream);
    CUresult (*StreamIsCapturing)(CUstream, CUstreamCaptureStatus *);
    CUresult (*EventCreate)(CUevent *, unsigned int);
    CUresult (*EventDestroy)(CUevent);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventSynchronize)(CUevent);
    CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*GetErrorString)(CUresult, const char **);
    CUresult (*GetErrorName)(CUresult, const char **);
    CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
    CUresult (*FuncGetAttribute)(int *, CUfunction_attribute, CUfunction);
} driver_api;

/* The loaded entry points; valid after driver_load() succeeded. */
extern driver_api cu;

/* dlopen the driver (REDTUNE_LIBCUDA overrides the file name) and call cuInit(0), once;
 * RT_ECUDA "no CUDA driver found: <dlerror>" or the driver's own error text. Thread-safe. */
int driver_load(rt_err *e);

/* Format a failed driver call: "<what>: CUDA_ERROR_X: <text>". Returns RT_ECUDA, or
 * RT_EFAULT for errors that leave the context unusable (illegal address, launch failure...). */
int driver_fail(CUresult r, const char *what, rt_err *e);

/* 1 when 'r' is a sticky error: the context is lost and the process must start over. */
int driver_sticky(CUresult r);

/* Number of devices; RT_ECUDA "no CUDA-capable GPU" when zero. */
int driver_device_count(int *count, rt_err *e);

/* Fill 'd' from the driver's attributes of device 'ordinal'. */
int driver_device_query(int ordinal, rt_device *d, rt_err *e);

#endif
