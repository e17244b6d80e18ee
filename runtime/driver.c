/*
 * driver.c - dlopen of libcuda.so.1 and the device query.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "driver.h"

driver_api cu;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_code = RT_OK;
static char load_msg[1024];

/* Symbols by their exported names (cuda.h maps the API names to these versions). */
static const struct { const char *name, *fallback; size_t off; } syms[] = {
#define SYM(field, name, fb) {name, fb, offsetof(driver_api, field)}
    SYM(Init, "cuInit", NULL),
    SYM(DriverGetVersion, "cuDriverGetVersion", NULL),
    SYM(DeviceGetCount, "cuDeviceGetCount", NULL),
    SYM(DeviceGet, "cuDeviceGet", NULL),
    SYM(DeviceGetName, "cuDeviceGetName", NULL),
    SYM(DeviceGetAttribute, "cuDeviceGetAttribute", NULL),
    SYM(DeviceTotalMem, "cuDeviceTotalMem_v2", NULL),
    SYM(DeviceGetUuid, "cuDeviceGetUuid_v2", "cuDeviceGetUuid"),
    SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL),
    SYM(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", NULL),
    SYM(CtxSetCurrent, "cuCtxSetCurrent", NULL),
    SYM(CtxSynchronize, "cuCtxSynchronize", NULL),
    SYM(ModuleLoadData, "cuModuleLoadData", NULL),
    SYM(ModuleUnload, "cuModuleUnload", NULL),
    SYM(ModuleGetFunction, "cuModuleGetFunction", NULL),
    SYM(ModuleGetGlobal, "cuModuleGetGlobal_v2", NULL),
    SYM(LaunchKernel, "cuLaunchKernel", NULL),
    SYM(MemAlloc, "cuMemAlloc_v2", NULL),
    SYM(MemFree, "cuMemFree_v2", NULL),
    SYM(MemGetInfo, "cuMemGetInfo_v2", NULL),
    SYM(MemcpyHtoD, "cuMemcpyHtoD_v2", NULL),
    SYM(MemcpyDtoH, "cuMemcpyDtoH_v2", NULL),
    SYM(MemsetD8, "cuMemsetD8_v2", NULL),
    SYM(MemsetD32Async, "cuMemsetD32Async", NULL),
    SYM(StreamCreate, "cuStreamCreate", NULL),
    SYM(StreamDestroy, "cuStreamDestroy_v2", NULL),
    SYM(StreamSynchronize, "cuStreamSynchronize", NULL),
    SYM(StreamQuery, "cuStreamQuery", NULL),
    SYM(StreamIsCapturing, "cuStreamIsCapturing", NULL),
    SYM(EventCreate, "cuEventCreate", NULL),
    SYM(EventDestroy, "cuEventDestroy_v2", NULL),
    SYM(EventRecord, "cuEventRecord", NULL),
    SYM(EventSynchronize, "cuEventSynchronize", NULL),
    SYM(EventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
    SYM(GetErrorString, "cuGetErrorString", NULL),
    SYM(GetErrorName, "cuGetErrorName", NULL),
    SYM(OccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor", NULL),
    SYM(FuncGetAttribute, "cuFuncGetAttribute", NULL),
#undef SYM
};

static void load(void)
{
    const char *file = getenv("REDTUNE_LIBCUDA");
    if (!file || !*file)
        file = "libcuda.so.1";
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        load_code = RT_ECUDA;
        snprintf(load_msg, sizeof load_msg, "no CUDA driver found: %s", dlerror());
        return;
    }
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(h, syms[i].name);
        if (!p && syms[i].fallback)
            p = dlsym(h, syms[i].fallback);
        if (!p) {
            load_code = RT_ECUDA;
            snprintf(load_msg, sizeof load_msg, "%s: the CUDA driver lacks %s (driver too old)",
                     file, syms[i].name);
            return;
        }
        memcpy((char *)&cu + syms[i].off, &p, sizeof p);
    }
    CUresult r = cu.Init(0);
    if (r != CUDA_SUCCESS) {
        const char *name = "?", *text = "?";
        cu.GetErrorName(r, &name);
        cu.GetErrorString(r, &text);
        load_code = RT_ECUDA;
        snprintf(load_msg, sizeof load_msg, "cuInit: %s: %s", name, text);
    }
}

int driver_load(rt_err *e)
{
    pthread_once(&once, load);
    if (load_code != RT_OK)
        return rt_seterr(e, load_code, "%s", load_msg);
    return RT_OK;
}

int driver_sticky(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
        return 1;
    default:
        return 0;
    }
}

int driver_fail(CUresult r, const char *what, rt_err *e)
{
    const char *name = "CUDA_ERROR_UNKNOWN", *text = "unknown error";
    if (cu.GetErrorName) {
        cu.GetErrorName(r, &name);
        cu.GetErrorString(r, &text);
    }
    return rt_seterr(e, driver_sticky(r) ? RT_EFAULT : RT_ECUDA, "%s: %s: %s", what, name, text);
}

int driver_device_count(int *count, rt_err *e)
{
    *count = 0;
    int rc = driver_load(e);
    if (rc)
        return rc;
    CUresult r = cu.DeviceGetCount(count);
    if (r != CUDA_SUCCESS)
        return driver_fail(r, "cuDeviceGetCount", e);
    if (*count == 0)
        return rt_seterr(e, RT_ECUDA, "no CUDA-capable GPU found");
    return RT_OK;
}

int driver_device_query(int ordinal, rt_device *d, rt_err *e)
{
    int count, rc = driver_device_count(&count, e);
    if (rc)
        return rc;
    if (ordinal < 0 || ordinal >= count)
        return rt_seterr(e, RT_EINVAL, "device %d does not exist (this machine has %d GPU%s)",
                         ordinal, count, count == 1 ? "" : "s");
    CUdevice dev;
    CUresult r = cu.DeviceGet(&dev, ordinal);
    if (r != CUDA_SUCCESS)
        return driver_fail(r, "cuDeviceGet", e);
    memset(d, 0, sizeof *d);
    d->ordinal = ordinal;
    if ((r = cu.DeviceGetName(d->name, (int)sizeof d->name, dev)) != CUDA_SUCCESS)
        return driver_fail(r, "cuDeviceGetName", e);
    static const struct { CUdevice_attribute a; size_t off; } attrs[] = {
#define A(attr, field) {CU_DEVICE_ATTRIBUTE_##attr, offsetof(rt_device, field)}
        A(COMPUTE_CAPABILITY_MAJOR, cc_major),
        A(COMPUTE_CAPABILITY_MINOR, cc_minor),
        A(MULTIPROCESSOR_COUNT, sm_count),
        A(WARP_SIZE, warp_size),
        A(MAX_THREADS_PER_BLOCK, max_threads_per_block),
        A(MAX_THREADS_PER_MULTIPROCESSOR, max_threads_per_sm),
        A(MAX_BLOCKS_PER_MULTIPROCESSOR, max_blocks_per_sm),
        A(MAX_SHARED_MEMORY_PER_BLOCK, smem_per_block),
        A(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, smem_per_block_optin),
        A(MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, smem_per_sm),
        A(MAX_REGISTERS_PER_BLOCK, regs_per_block),
        A(MAX_REGISTERS_PER_MULTIPROCESSOR, regs_per_sm),
        A(L2_CACHE_SIZE, l2_bytes),
        A(MEMORY_CLOCK_RATE, mem_clock_khz),
        A(GLOBAL_MEMORY_BUS_WIDTH, bus_width_bits),
#undef A
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        int v = 0;
        if ((r = cu.DeviceGetAttribute(&v, attrs[i].a, dev)) != CUDA_SUCCESS)
            return driver_fail(r, "cuDeviceGetAttribute", e);
        memcpy((char *)d + attrs[i].off, &v, sizeof v);
    }
    size_t mem = 0;
    if ((r = cu.DeviceTotalMem(&mem, dev)) != CUDA_SUCCESS)
        return driver_fail(r, "cuDeviceTotalMem", e);
    d->total_mem = (long long)mem;
    cu.DriverGetVersion(&d->driver_version);
    CUuuid u;
    if (cu.DeviceGetUuid(&u, dev) == CUDA_SUCCESS)
        for (int i = 0; i < 16; i++)
            snprintf(d->uuid + 2 * i, 3, "%02x", (unsigned char)u.bytes[i]);
    return RT_OK;
}
