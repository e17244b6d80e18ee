/*
 * measure.h - how redtune times a kernel on the GPU, in one place for the tuner's worker
 * (tuner/worker.c) and for bench/ (redtune_bench): the GPU state (context, blocking stream, events,
 * L2 flush buffer, result and temporary storage), the step before each start event (L2
 * flush or busy-stream spin), the repetition loop (warm-ups, events, median/min/max) and the
 * read-bandwidth yardstick (templates/bandwidth.cu). docs/bench.md, "Method", describes it.
 *
 * Tuning-only: part of libtuner.a, not of libredtune. Plain C, also included by CUDA C++
 * (bench/common.h wraps it in extern "C").
 */
#ifndef RT_MEASURE_H
#define RT_MEASURE_H

#include <stdint.h>
#include "../runtime/driver.h"
#include "../runtime/nvrtc.h"

#define MEASURE_SPIN_CYCLES 20000ULL   /* hot: rt_spin before the start event, ~10 us on an H100 */
#define MEASURE_BW_SHAPES 7            /* shapes of the read yardstick */
#define MEASURE_BW_REPS 30             /* timed repetitions per shape */

/* One GPU, set up for timing. The process owns one for its whole life (nothing frees it). */
typedef struct measure_gpu {
    rt_device dev;          /* driver_device_query's record; filled by the caller */
    char arch[16];          /* "sm_90" */
    CUdevice cudev;
    CUcontext ctx;          /* the device's primary context, current on the calling thread */
    CUstream stream;        /* blocking (CU_STREAM_DEFAULT) */
    CUevent start, stop;
    CUdeviceptr flush;      /* 2 x L2, at least 64 MiB */
    size_t flush_bytes;
    CUmodule util;          /* the first bandwidth module: rt_bw_read flushes, rt_spin waits */
    CUfunction spin, flush_read;
    unsigned flush_threads, flush_grid;
    CUdeviceptr flush_out;
    CUdeviceptr out;        /* 256 bytes: a reduction's result */
    CUdeviceptr temp;       /* temporary storage; its first 256 bytes zero when allocated */
    size_t temp_bytes;
    int host_threads;       /* online CPUs */
    unsigned long long spin_cycles;   /* MEASURE_SPIN_CYCLES unless the caller changes it */
    int flush_write;        /* cold: flush with a memset of the buffer (the L2 left full of dirty
                             * lines, as after a kernel that wrote its output) instead of a read;
                             * 0 unless the caller sets it (redtune_bench --flush write) */
} measure_gpu;

/*
 * Set up g for timing on the device g->dev describes (the caller filled it with
 * driver_device_query): its primary context made current, the blocking stream, the two
 * events, the flush buffer, the 256-byte result buffer and 1 MiB of temporary storage.
 * Until measure_bw_load has run once, cold timings flush with a memset and hot ones do not
 * spin. RT_ECUDA / RT_EFAULT with the driver's text on failure.
 */
int measure_start(measure_gpu *g, rt_err *e);

/* Grow the temporary storage to at least 'bytes' (at least 1 MiB); its first 256 bytes (a
 * one-launch plan's counter) are zeroed when it is reallocated. */
int measure_ensure_temp(measure_gpu *g, size_t bytes, rt_err *e);

/* What measure_reps found, in microseconds. */
typedef struct measure_times {
    double median_us, min_us, max_us;
    int reps;
} measure_times;

/* Enqueues the whole launch sequence that is timed, on g->stream. */
typedef int (*measure_enqueue_fn)(void *arg, rt_err *e);

/*
 * Time fn(arg): two untimed warm-ups and a wait; then for each repetition the L2 flush
 * (!hot) or the spin (hot), the start event, fn, the stop event and a wait for it; between
 * min_reps and max_reps repetitions, stopping once budget_s seconds of timed GPU time are
 * reached. *m is written only on success. An error of fn is returned as fn set it.
 */
int measure_reps(measure_gpu *g, measure_enqueue_fn fn, void *arg, int hot, int min_reps,
                 int max_reps, double budget_s, measure_times *m, rt_err *e);

/* ---- the read yardstick: rt_bw_read of templates/bandwidth.cu ---- */

/* The shapes {B, U, G}: persistent grids, then one tile per block (G=0). The best is the
 * yardstick; the first (whichever is loaded first) stays loaded to flush the L2. */
extern const char *const measure_bw_shapes[MEASURE_BW_SHAPES][3];

/* Bytes the yardstick reads: 4 GiB, or a quarter of the device memory when that is less. */
uint64_t measure_bw_bytes(const rt_device *d);

/* Emit shape i of the yardstick and compile it with NVRTC for 'arch' into *o (the caller
 * frees it with nvrtc_output_free). Needs no GPU. */
int measure_bw_compile(int shape, const char *arch, nvrtc_output *o, rt_err *e);

/* A loaded yardstick kernel with its geometry for n16 16-byte words. */
typedef struct measure_bw {
    CUmodule mod;           /* NULL when g took it over to flush the L2 */
    CUfunction f;
    unsigned threads, grid;
    CUdeviceptr out;        /* one word per block */
} measure_bw;

/*
 * Load a compiled yardstick (cubin) for n16 words: the module, rt_bw_read and its rt_meta
 * geometry, and its output. The first one loaded on g stays loaded: from then on its
 * rt_bw_read flushes the L2 and its rt_spin keeps the stream busy, for every timing,
 * this one included. On error *k holds nothing to release.
 */
int measure_bw_load(measure_gpu *g, const void *cubin, unsigned long long n16, measure_bw *k,
                    rt_err *e);

/* Time k over buf[0..n16) 'reps' times exactly (measure_reps); median in us and GB/s. */
int measure_bw_time(measure_gpu *g, const measure_bw *k, CUdeviceptr buf,
                    unsigned long long n16, int hot, int reps, double *median_us, double *gbps,
                    rt_err *e);

/* Free k's output and unload its module unless g keeps it. */
void measure_bw_unload(measure_bw *k);

#endif
