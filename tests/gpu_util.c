/*
 * gpu_util.c - the GPU test groups' shared setup and program runner.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "tests/gpu_util.h"

int gpu_util_setup(rt_device *dev, char arch[16], CUstream *stream, char *why, size_t len)
{
    rt_err e;
    if (driver_device_query(0, dev, &e)) {
        snprintf(why, len, "%s", e.msg);
        return 0;
    }
    CUdevice d;
    CUcontext ctx;
    if (cu.DeviceGet(&d, 0) || cu.DevicePrimaryCtxRetain(&ctx, d) || cu.CtxSetCurrent(ctx) ||
        cu.StreamCreate(stream, CU_STREAM_DEFAULT)) {
        snprintf(why, len, "could not create a context on %s", dev->name);
        return 0;
    }
    device_arch(dev, arch);
    return 1;
}

int gpu_util_run(const char *args, char *out, size_t len)
{
    const char *bin = getenv("REDTUNE_BIN");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", bin ? bin : "build/redtune", args);
    FILE *p = popen(cmd, "r");
    if (!p) {
        snprintf(out, len, "popen failed");
        return 128;
    }
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int gpu_util_small(void)
{
    const char *v = getenv("REDTUNE_TEST_SMALL");
    return v && *v && strcmp(v, "0");
}
