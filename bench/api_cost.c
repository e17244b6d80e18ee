/*
 * api_cost.c - what a libredtune call costs the host, measured (issue 5's goals):
 *   - the first rt_reduce of a case whose CUBIN is in the database (lookup, module load, launch),
 *     and of a case that must be compiled by NVRTC (no entry for the type: built-in default);
 *   - a cached rt_reduce: CPU time per call over 10^5 calls (lookup + launch, no sync).
 *
 *   build/bench/api_cost DB [n]
 *
 * Device memory goes through runtime/driver.h (the driver, by dlopen).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "include/redtune.h"
#include "runtime/driver.h"

#define CALLS 100000
#define CHUNK 100   /* calls enqueued between syncs: far below the launch queue's depth, so
                       * no call waits for the GPU and the clock sees the host's work only */

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "api_cost: %s: %s\n", what, msg);
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: api_cost DB [n]\n");
        return 2;
    }
    unsigned long long n = argc > 2 ? strtoull(argv[2], NULL, 0) : 1u << 20;
    rt_err e;
    char msg[4096];
    rt_ctx *ctx;
    double t0 = now(CLOCK_MONOTONIC);
    if (rt_open_err(argv[1], 0, &ctx, msg, sizeof msg) != RT_OK)
        die("rt_open", msg);
    double t_open = now(CLOCK_MONOTONIC) - t0;
    if (driver_load(&e))
        die("driver", e.msg);
    CUdevice dev;
    CUcontext pctx;
    CUdeviceptr in, out;
    CUstream s;
    if (cu.DeviceGet(&dev, 0) || cu.DevicePrimaryCtxRetain(&pctx, dev) || cu.CtxSetCurrent(pctx))
        die("context", "driver call failed");
    if (cu.MemAlloc(&in, n * 8) || cu.MemAlloc(&out, 64) || cu.MemsetD8(in, 0, n * 8) ||
        cu.StreamCreate(&s, CU_STREAM_DEFAULT))
        die("allocating", "driver call failed");
    void *pin = (void *)(uintptr_t)in, *pout = (void *)(uintptr_t)out;

    /* First calls: min f32 (tuned: CUBIN in the database; the first kernel of the process),
     * max f32 (tuned too: a second kernel, once the process's one-time costs are paid), then
     * sum u64 (assumed untuned: the built-in default, compiled by NVRTC). Each timed to
     * completion. REDTUNE_TRACE=1 shows their steps. */
    struct { rt_op op; rt_type type; const char *name; } first[] = {
        {RT_MIN, RT_F32, "min f32"}, {RT_MAX, RT_F32, "max f32"}, {RT_SUM, RT_U64, "sum u64"}};
    for (int k = 0; k < 3; k++) {
        t0 = now(CLOCK_MONOTONIC);
        if (rt_reduce(ctx, first[k].op, first[k].type, pin, n, pout, s) != RT_OK)
            die("rt_reduce", rt_errmsg(ctx));
        cu.StreamSynchronize(s);
        double t = now(CLOCK_MONOTONIC) - t0;
        char why[2048];
        rt_explain(ctx, first[k].op, first[k].type, n, why, sizeof why);
        const char *src = strstr(why, "CUBIN:");
        printf("first call %s, n=%llu: %.2f ms   (%s)\n", first[k].name, n, t * 1e3,
               src ? src : "?");
    }

    /* Cached calls: the calling thread's CPU time for CALLS rt_reduce, in chunks of CHUNK
     * enqueued back to back; the synchronisation between chunks is outside the clock. */
    if (rt_reduce(ctx, RT_MIN, RT_F32, pin, 1024, pout, s) != RT_OK)   /* decide n=1024 once */
        die("rt_reduce", rt_errmsg(ctx));
    cu.StreamSynchronize(s);
    double cpu = 0, wall = 0;
    for (int c = 0; c < CALLS; c += CHUNK) {
        double c0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
        for (int i = 0; i < CHUNK; i++)
            if (rt_reduce(ctx, RT_MIN, RT_F32, pin, 1024, pout, s) != RT_OK)
                die("rt_reduce", rt_errmsg(ctx));
        cpu += now(CLOCK_THREAD_CPUTIME_ID) - c0;
        wall += now(CLOCK_MONOTONIC) - w0;
        cu.StreamSynchronize(s);
    }
    printf("cached rt_reduce (min f32, n=1024, %d calls): %.3f us CPU per call, %.3f us wall per call (enqueue only)\n",
           CALLS, cpu / CALLS * 1e6, wall / CALLS * 1e6);
    char why[2048];
    rt_explain(ctx, RT_MIN, RT_F32, 1024, why, sizeof why);
    const char *k = strstr(why, "kernel:");
    k = k ? k : why;
    printf("  %.*s\n", (int)strcspn(k, "\n"), k);
    printf("rt_open: %.2f ms\n", t_open * 1e3);
    rt_close(ctx);
    return 0;
}
