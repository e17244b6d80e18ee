/*
 * measure.c - the timing method of the tuner's worker and of bench/: one copy, so that a fix
 * to the method reaches both (docs/bench.md, "Method").
 *
 * CUDA events around the whole launch sequence, after two warm-ups; the median of the
 * repetitions. Before each start event the stream is kept busy, so the event does not time
 * the host's launch latency: cold flushes the L2 by reading 2 x L2 with rt_bw_read, hot runs
 * a short rt_spin instead.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../runtime/codegen.h"
#include "measure.h"

int measure_ensure_temp(measure_gpu *g, size_t bytes, rt_err *e)
{
    if (bytes <= g->temp_bytes)
        return RT_OK;
    if (g->temp)
        cu.MemFree(g->temp);
    g->temp = 0;
    g->temp_bytes = 0;
    size_t want = bytes < (1u << 20) ? (1u << 20) : bytes;
    CUresult r = cu.MemAlloc(&g->temp, want);
    if (r != CUDA_SUCCESS)
        return driver_fail(r, "allocating temporary storage", e);
    g->temp_bytes = want;
    /* A one-launch plan keeps its counter in the first bytes: zero before the first launch. */
    if ((r = cu.MemsetD8(g->temp, 0, 256)) != CUDA_SUCCESS)
        return driver_fail(r, "clearing temporary storage", e);
    return RT_OK;
}

int measure_start(measure_gpu *g, rt_err *e)
{
    CUresult r;
    device_arch(&g->dev, g->arch);
    g->spin_cycles = MEASURE_SPIN_CYCLES;
    if ((r = cu.DeviceGet(&g->cudev, g->dev.ordinal)) != CUDA_SUCCESS ||
        (r = cu.DevicePrimaryCtxRetain(&g->ctx, g->cudev)) != CUDA_SUCCESS ||
        (r = cu.CtxSetCurrent(g->ctx)) != CUDA_SUCCESS)
        return driver_fail(r, "retaining the primary context", e);
    /* A blocking stream: the synchronous copies and memsets (legacy default stream) that
     * poison outputs and upload inputs are then ordered with the kernels. With a
     * non-blocking stream a poison memset could land after the kernel wrote its result. */
    if ((r = cu.StreamCreate(&g->stream, CU_STREAM_DEFAULT)) != CUDA_SUCCESS ||
        (r = cu.EventCreate(&g->start, CU_EVENT_DEFAULT)) != CUDA_SUCCESS ||
        (r = cu.EventCreate(&g->stop, CU_EVENT_DEFAULT)) != CUDA_SUCCESS)
        return driver_fail(r, "creating the stream and events", e);
    /* Twice the L2, and at least 64 MiB: reading it evicts everything a kernel read. */
    g->flush_bytes = (size_t)g->dev.l2_bytes * 2;
    if (g->flush_bytes < (64u << 20))
        g->flush_bytes = 64u << 20;
    if ((r = cu.MemAlloc(&g->flush, g->flush_bytes)) != CUDA_SUCCESS ||
        (r = cu.MemAlloc(&g->out, 256)) != CUDA_SUCCESS)
        return driver_fail(r, "allocating the flush and result buffers", e);
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    g->host_threads = nc > 0 ? (int)nc : 1;
    return measure_ensure_temp(g, 1u << 20, e);
}

/* Before the start event: flush the L2 (cold) or spin (hot), so the stream is busy.
 * The flush reads a buffer of twice the L2 size, leaving the L2 full of clean lines of it:
 * the timed kernel then finds none of its data there, and no dirty line that its reads would
 * have to write back first (a memset flush leaves 2 x L2 of dirty data, which costs a small
 * kernel several microseconds of write-back). The memset is the fallback before the first
 * yardstick kernel is loaded, and the flush when the caller asks for dirty lines
 * (flush_write: the state after a kernel that wrote its output, the flush PyTorch's and
 * Triton's benchmarks use). */
static CUresult pre_rep(measure_gpu *g, int hot)
{
    if (!hot && g->flush_read && !g->flush_write) {
        unsigned long long n16 = g->flush_bytes / 16;
        void *args[] = {&g->flush, &n16, &g->flush_out};
        return cu.LaunchKernel(g->flush_read, g->flush_grid, 1, 1, g->flush_threads, 1, 1, 0,
                               g->stream, args, NULL);
    }
    if (!hot)
        return cu.MemsetD32Async(g->flush, 0x5a5a5a5a, g->flush_bytes / 4, g->stream);
    if (!g->spin)
        return CUDA_SUCCESS;
    unsigned long long cycles = g->spin_cycles;
    void *args[] = {&cycles};
    return cu.LaunchKernel(g->spin, 1, 1, 1, 1, 1, 1, 0, g->stream, args, NULL);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

int measure_reps(measure_gpu *g, measure_enqueue_fn fn, void *arg, int hot, int min_reps,
                 int max_reps, double budget_s, measure_times *m, rt_err *e)
{
    float *t = malloc(sizeof(float) * (size_t)max_reps);
    if (!t)
        return rt_seterr(e, RT_ENOMEM, "out of memory for %d timings", max_reps);
    int rc = RT_OK, k = 0;
    double total = 0;
    CUresult r;
    for (int w = 0; w < 2 && rc == RT_OK; w++)   /* warm-up: module load, caches, clocks */
        rc = fn(arg, e);
    if (rc == RT_OK && (r = cu.StreamSynchronize(g->stream)) != CUDA_SUCCESS)
        rc = driver_fail(r, "warm-up", e);
    for (; rc == RT_OK && k < max_reps; k++) {
        if (k >= min_reps && total >= budget_s)
            break;
        if ((r = pre_rep(g, hot)) != CUDA_SUCCESS ||
            (r = cu.EventRecord(g->start, g->stream)) != CUDA_SUCCESS) {
            rc = driver_fail(r, "before the timed region", e);
            break;
        }
        if ((rc = fn(arg, e)) != RT_OK)
            break;
        if ((r = cu.EventRecord(g->stop, g->stream)) != CUDA_SUCCESS ||
            (r = cu.EventSynchronize(g->stop)) != CUDA_SUCCESS ||
            (r = cu.EventElapsedTime(&t[k], g->start, g->stop)) != CUDA_SUCCESS) {
            rc = driver_fail(r, "timed launch", e);
            break;
        }
        total += t[k] * 1e-3;
    }
    if (rc == RT_OK) {
        qsort(t, (size_t)k, sizeof *t, cmp_float);
        m->reps = k;
        m->min_us = t[0] * 1e3;
        m->max_us = t[k - 1] * 1e3;
        m->median_us = (k % 2 ? t[k / 2] : 0.5f * (t[k / 2 - 1] + t[k / 2])) * 1e3;
    }
    free(t);
    return rc;
}

/* ---- the read yardstick ---- */

const char *const measure_bw_shapes[MEASURE_BW_SHAPES][3] = {
    {"B=512", "U=4", "G=4"}, {"B=256", "U=8", "G=8"}, {"B=1024", "U=4", "G=2"},
    {"B=512", "U=8", "G=4"}, {"B=512", "U=4", "G=0"}, {"B=256", "U=2", "G=0"},
    {"B=512", "U=1", "G=0"}};

uint64_t measure_bw_bytes(const rt_device *d)
{
    uint64_t bytes = 4ULL << 30;
    if ((uint64_t)d->total_mem / 4 < bytes)
        bytes = (uint64_t)d->total_mem / 4 / 16 * 16;
    return bytes;
}

int measure_bw_compile(int shape, const char *arch, nvrtc_output *o, rt_err *e)
{
    char *src = NULL;
    memset(o, 0, sizeof *o);
    if (shape < 0 || shape >= MEASURE_BW_SHAPES)
        return rt_seterr(e, RT_EINVAL, "no yardstick shape %d", shape);
    int rc = codegen_emit_helper("templates/bandwidth.cu", measure_bw_shapes[shape], 3, &src, e);
    if (rc)
        return rc;
    rc = nvrtc_compile(src, "bandwidth.cu", arch, o, e);
    free(src);
    if (rc)
        nvrtc_output_free(o);
    return rc;
}

int measure_bw_load(measure_gpu *g, const void *cubin, unsigned long long n16, measure_bw *k,
                    rt_err *e)
{
    int rc = RT_OK;
    CUresult r;
    CUdeviceptr meta;
    size_t mlen;
    unsigned int m[4];
    memset(k, 0, sizeof *k);
    if ((r = cu.ModuleLoadData(&k->mod, cubin)) != CUDA_SUCCESS ||
        (r = cu.ModuleGetFunction(&k->f, k->mod, "rt_bw_read")) != CUDA_SUCCESS ||
        (r = cu.ModuleGetGlobal(&meta, &mlen, k->mod, "rt_meta")) != CUDA_SUCCESS ||
        (r = cu.MemcpyDtoH(m, meta, sizeof m)) != CUDA_SUCCESS) {
        rc = driver_fail(r, "loading the bandwidth kernel", e);
        goto done;
    }
    k->threads = m[0];
    unsigned long long tiles = (n16 + m[1] - 1) / m[1];
    k->grid = m[2] && tiles > m[2] * (unsigned long long)g->dev.sm_count
                  ? m[2] * (unsigned)g->dev.sm_count : (unsigned)tiles;
    /* The first bandwidth module stays loaded: its kernels flush the L2 and keep the stream
     * busy for every timing that follows, this one included. */
    if (!g->util) {
        CUfunction spin;
        CUdeviceptr fout = 0;
        if ((r = cu.ModuleGetFunction(&spin, k->mod, "rt_spin")) != CUDA_SUCCESS ||
            (r = cu.MemAlloc(&fout, (size_t)k->grid * 4)) != CUDA_SUCCESS ||
            (r = cu.MemsetD8(g->flush, 0x3c, g->flush_bytes)) != CUDA_SUCCESS) {
            if (fout)
                cu.MemFree(fout);
            rc = driver_fail(r, "loading the flush kernels", e);
            goto done;
        }
        g->spin = spin;
        g->flush_out = fout;
        g->util = k->mod;
        g->flush_read = k->f;
        g->flush_threads = k->threads;
        g->flush_grid = k->grid;
        k->mod = NULL;
    }
    if ((r = cu.MemAlloc(&k->out, (size_t)k->grid * 4)) != CUDA_SUCCESS)
        rc = driver_fail(r, "allocating the bandwidth output", e);
done:
    if (rc)
        measure_bw_unload(k);
    return rc;
}

typedef struct bw_arg {
    measure_gpu *g;
    const measure_bw *k;
    CUdeviceptr buf;
    unsigned long long n16;
} bw_arg;

static int bw_enqueue(void *arg, rt_err *e)
{
    bw_arg *a = arg;
    CUdeviceptr out = a->k->out;
    void *args[] = {&a->buf, &a->n16, &out};
    CUresult r = cu.LaunchKernel(a->k->f, a->k->grid, 1, 1, a->k->threads, 1, 1, 0,
                                 a->g->stream, args, NULL);
    return r == CUDA_SUCCESS ? RT_OK : driver_fail(r, "rt_bw_read", e);
}

int measure_bw_time(measure_gpu *g, const measure_bw *k, CUdeviceptr buf,
                    unsigned long long n16, int hot, int reps, double *median_us, double *gbps,
                    rt_err *e)
{
    bw_arg a = {g, k, buf, n16};
    measure_times t;
    int rc = measure_reps(g, bw_enqueue, &a, hot, reps, reps, 0, &t, e);
    if (rc)
        return rc;
    *median_us = t.median_us;
    *gbps = n16 * 16 / (t.median_us * 1e-6) / 1e9;
    return RT_OK;
}

void measure_bw_unload(measure_bw *k)
{
    if (k->out)
        cu.MemFree(k->out);
    if (k->mod)
        cu.ModuleUnload(k->mod);
    memset(k, 0, sizeof *k);
}
