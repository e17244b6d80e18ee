/*
 * test_api_gpu_graph.c - libredtune's calls captured into CUDA graphs (runtime/api*.c).
 *
 * Group "api_gpu_graph" (skipped, and counted, with no GPU, or with a driver that lacks the
 * graph entry points): flat calls of multipass and one-launch plans, one with the caller's
 * storage, a segmented one, and one segment of offsets and of keys (flat kernels: the
 * bounds read on the GPU, the keys unread), captured after a warm-up through the database of this GPU
 * (tests/api_util.h), and replayed on new input against the same calls made directly; calls
 * refused with RT_ECAPTURE during a capture (a kernel not loaded, a stream with no temporary
 * storage, RT_SEG_CHECK, the legacy stream) leaving the capture valid; rt_release_temp
 * leaving the graph's storage alone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/redtune.h"
#include "runtime/driver.h"
#include "tests/api_util.h"

/* ---------------------------------------------------------------- GPU: CUDA graphs */


/* What the graph test captures: flat calls (tree_sequential, a multipass plan, at 1000 and
 * 5000; gridstride, a one-launch plan, at API_UTIL_NMAX, once with the caller's storage) and a
 * segmented one by ragged offsets. */
enum { GC_FLAT = 5, GC_NSEG = 1000, GC_SEGN = 100000 };
static const struct { rt_op op; unsigned long long n; int own; } gcases[GC_FLAT] = {
    {RT_MIN, 1000, 0}, {RT_SUM, 5000, 0}, {RT_SUM, API_UTIL_NMAX, 0},
    {RT_MIN, API_UTIL_NMAX, 0}, {RT_SUM, API_UTIL_NMAX, 1},
};

/* One segment [17, GC_SEGN - 5) of offsets, and GC_SEGN keys of 0 (one segment of keys). */
static CUdeviceptr g_one_off, g_keys0;
#define GC_ONE_AT (16 * GC_FLAT + 4 * GC_NSEG + 64)   /* out's bytes: the two results */

/* Enqueue every case on 's' into out[i * 16] (the segmented one at out + GC_FLAT * 16, the
 * one-segment ones at out + GC_ONE_AT and 4 bytes further). */
static int graph_calls(rt_ctx *ctx, CUdeviceptr in, CUdeviceptr offsets, CUdeviceptr out,
                       CUdeviceptr temp, size_t temp_bytes, CUstream s)
{
    for (int i = 0; i < GC_FLAT; i++) {
        void *o = (void *)(uintptr_t)(out + 16 * i);
        const void *x = (const void *)(uintptr_t)in;
        int rc = gcases[i].own
            ? rt_reduce_temp(ctx, gcases[i].op, RT_F32, x, gcases[i].n, o,
                             (void *)(uintptr_t)temp, temp_bytes, s)
            : rt_reduce(ctx, gcases[i].op, RT_F32, x, gcases[i].n, o, s);
        if (rc) {
            print_error("case %d: %s: %s\n", i, rt_strerror(rc), rt_errmsg(ctx));
            return rc;
        }
    }
    int rc = rt_reduce_offsets(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)in, GC_SEGN,
                               (const void *)(uintptr_t)offsets, GC_NSEG,
                               (void *)(uintptr_t)(out + 16 * GC_FLAT), s, 0);
    if (rc)
        print_error("offsets: %s: %s\n", rt_strerror(rc), rt_errmsg(ctx));
    if (rc == RT_OK
        && (rc = rt_reduce_offsets(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)in, GC_SEGN,
                                   (const void *)(uintptr_t)g_one_off, 1,
                                   (void *)(uintptr_t)(out + GC_ONE_AT), s, 0)) != RT_OK)
        print_error("one offsets segment: %s: %s\n", rt_strerror(rc), rt_errmsg(ctx));
    if (rc == RT_OK
        && (rc = rt_reduce_keys(ctx, RT_MIN, RT_F32, (const void *)(uintptr_t)in,
                                (const unsigned *)(uintptr_t)g_keys0, GC_SEGN, 1,
                                (void *)(uintptr_t)(out + GC_ONE_AT + 4), s, 0)) != RT_OK)
        print_error("one keys segment: %s: %s\n", rt_strerror(rc), rt_errmsg(ctx));
    return rc;
}

/*
 * Warm up, capture the calls above on a non-blocking stream, replay the graph 100 times with
 * new input each time: its results equal those of the same calls made directly. During the
 * capture, calls that would load a kernel, allocate or synchronise fail with RT_ECAPTURE and
 * leave the capture valid. rt_release_temp does not free what the graph uses.
 */
static void api_gpu_graphs(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    if (!api_util_graph_syms()) {
        print_message("# SKIP reason: the driver lacks the CUDA graph entry points\n");
        skip();
    }
    api_util_need_exact_db();
    rt_ctx *ctx = NULL;
    CUstream st, other, blocking;
    CUdeviceptr in, offsets, out_graph, out_direct, temp;
    CUgraph graph = NULL, empty = NULL;
    CUgraphExec exec = NULL;
    size_t temp_bytes = 0, outb = 16 * (GC_FLAT + GC_NSEG);
    float *host = malloc((size_t)API_UTIL_NMAX * 4);
    int *hoff = malloc((GC_NSEG + 1) * sizeof *hoff);
    unsigned char *got = malloc(outb), *want = malloc(outb);
    assert_true(host && hoff && got && want);

    assert_int_equal(rt_open(api_util_gpu.exact_db, 0, &ctx), RT_OK);
    assert_int_equal(cu.StreamCreate(&st, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cu.StreamCreate(&other, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cu.StreamCreate(&blocking, CU_STREAM_DEFAULT), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&in, (size_t)API_UTIL_NMAX * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&offsets, (GC_NSEG + 1) * sizeof *hoff), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out_graph, outb), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out_direct, outb), CUDA_SUCCESS);
    for (int s = 0; s <= GC_NSEG; s++)   /* ragged: lengths grow with s, the first ones empty */
        hoff[s] = (int)((long long)GC_SEGN * s / GC_NSEG * s / GC_NSEG);
    assert_int_equal(cu.MemcpyHtoD(offsets, hoff, (GC_NSEG + 1) * sizeof *hoff), CUDA_SUCCESS);
    const int one[2] = {17, GC_SEGN - 5};
    assert_int_equal(cu.MemAlloc(&g_one_off, sizeof one), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(g_one_off, one, sizeof one), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&g_keys0, 4 * GC_SEGN), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(g_keys0, 0, 4 * GC_SEGN), CUDA_SUCCESS);
    assert_int_equal(rt_temp_bytes(ctx, RT_SUM, RT_F32, API_UTIL_NMAX, &temp_bytes), RT_OK);
    assert_int_equal(cu.MemAlloc(&temp, temp_bytes), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(temp, 0xff, temp_bytes), CUDA_SUCCESS);   /* the library clears it */

    /* Warm-up on the stream to capture: kernels loaded, its temporary storage grown. */
    assert_int_equal(graph_calls(ctx, in, offsets, out_direct, temp, temp_bytes, st), RT_OK);
    assert_int_equal(cu.StreamSynchronize(st), CUDA_SUCCESS);

    assert_int_equal(api_util_graph.BeginCapture(st, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_int_equal(graph_calls(ctx, in, offsets, out_graph, temp, temp_bytes, st), RT_OK);
    /* A case not loaded yet: refused, nothing enqueued. */
    void *o = (void *)(uintptr_t)out_graph;
    const void *x = (const void *)(uintptr_t)in;
    assert_int_equal(rt_reduce(ctx, RT_MAX, RT_F64, x, 777, o, st), RT_ECAPTURE);
    assert_string_equal(rt_errmsg(ctx), "rt_reduce: max f64 n = 777: the stream is capturing "
                        "a CUDA graph, and the kernel for n in (2^9, 2^10) is not loaded yet "
                        "(loading it is synchronous and would break the capture): make one "
                        "call of this case before the capture (a warm-up), or call "
                        "rt_temp_bytes for it");
    assert_int_equal(rt_reduce_temp(ctx, RT_PROD, RT_F32, x, 100, o, (void *)(uintptr_t)temp,
                                    temp_bytes, st), RT_ECAPTURE);
    assert_int_equal(rt_reduce_offsets(ctx, RT_MAX, RT_F32, x, GC_SEGN,
                                       (const void *)(uintptr_t)offsets, GC_NSEG, o, st, 0),
                     RT_ECAPTURE);
    assert_non_null(strstr(rt_errmsg(ctx), "make one call of this case before the capture"));
    assert_int_equal(rt_reduce_offsets(ctx, RT_SUM, RT_F32, x, GC_SEGN,
                                       (const void *)(uintptr_t)offsets, GC_NSEG, o, st,
                                       RT_SEG_CHECK), RT_ECAPTURE);
    assert_non_null(strstr(rt_errmsg(ctx), "RT_SEG_CHECK waits for its check kernel"));
    assert_int_equal(api_util_graph.EndCapture(st, &graph), CUDA_SUCCESS);   /* still valid */
    assert_int_equal(api_util_graph.Instantiate(&exec, graph, 0), CUDA_SUCCESS);

    /* A stream with no temporary storage yet: loaded kernels, but no block to use. */
    assert_int_equal(api_util_graph.BeginCapture(other, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_int_equal(rt_reduce(ctx, RT_SUM, RT_F32, x, 5000, o, other), RT_ECAPTURE);
    assert_non_null(strstr(rt_errmsg(ctx), "rt_reduce: the stream is capturing a CUDA graph, "
                           "and its temporary storage (0 bytes) is smaller than the "));
    assert_non_null(strstr(rt_errmsg(ctx), "or give rt_reduce_temp storage of rt_temp_bytes "
                           "bytes"));
    /* The caller's storage needs none of the stream's: the graph owns it. */
    assert_int_equal(rt_reduce_temp(ctx, RT_SUM, RT_F32, x, API_UTIL_NMAX, o,
                                    (void *)(uintptr_t)temp, temp_bytes, other), RT_OK);
    assert_int_equal(api_util_graph.EndCapture(other, &empty), CUDA_SUCCESS);
    api_util_graph.Destroy(empty);
    empty = NULL;

    /* The legacy stream while a blocking stream captures: refused, that capture intact. */
    assert_int_equal(api_util_graph.BeginCapture(blocking, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_int_equal(rt_reduce(ctx, RT_SUM, RT_F32, x, 5000, o, NULL), RT_ECAPTURE);
    assert_non_null(strstr(rt_errmsg(ctx), "the legacy default stream"));
    assert_int_equal(api_util_graph.EndCapture(blocking, &empty), CUDA_SUCCESS);
    api_util_graph.Destroy(empty);

    int bad = 0;
    for (int r = 0; r < 110 && !bad; r++) {
        for (unsigned i = 0; i < API_UTIL_NMAX; i++)
            host[i] = (float)((i * 2654435761u + 977u * (unsigned)r) % 2001u) - 1000.0f;
        assert_int_equal(cu.MemcpyHtoD(in, host, (size_t)API_UTIL_NMAX * 4), CUDA_SUCCESS);
        if (r == 100)   /* the graph's block survives; direct calls allocate again */
            assert_int_equal(rt_release_temp(ctx), RT_OK);
        assert_int_equal(cu.MemsetD8(out_graph, 0xa5, outb), CUDA_SUCCESS);
        /* The copy and the memset run on the legacy stream, which a non-blocking stream does
         * not wait for (a replay once read 0xa5a5a5a5 where its result was). */
        assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
        assert_int_equal(api_util_graph.Launch(exec, st), CUDA_SUCCESS);
        assert_int_equal(graph_calls(ctx, in, offsets, out_direct, temp, temp_bytes, st), RT_OK);
        assert_int_equal(cu.StreamSynchronize(st), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyDtoH(got, out_graph, outb), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyDtoH(want, out_direct, outb), CUDA_SUCCESS);
        for (int i = 0; i < GC_FLAT; i++)
            if (memcmp(got + 16 * i, want + 16 * i, 4)) {
                float g, w;
                memcpy(&g, got + 16 * i, 4);
                memcpy(&w, want + 16 * i, 4);
                print_error("replay %d, case %d (%s n=%llu): graph %g, direct %g\n", r, i,
                            rt_op_name(gcases[i].op), gcases[i].n, g, w);
                bad = 1;
            }
        if (memcmp(got + 16 * GC_FLAT, want + 16 * GC_FLAT, 4 * GC_NSEG)) {
            print_error("replay %d: the segmented results differ\n", r);
            bad = 1;
        }
        if (memcmp(got + GC_ONE_AT, want + GC_ONE_AT, 8)) {
            print_error("replay %d: the one-segment results differ\n", r);
            bad = 1;
        }
        if (r == 0) {   /* and the direct calls are right: the min of 1000, by hand */
            float m = host[0];
            for (int i = 1; i < 1000; i++)
                m = host[i] < m ? host[i] : m;
            assert_memory_equal(want, &m, 4);
            m = host[0];   /* one keys segment: the min of all GC_SEGN */
            for (int i = 1; i < GC_SEGN; i++)
                m = host[i] < m ? host[i] : m;
            assert_memory_equal(want + GC_ONE_AT + 4, &m, 4);
            double sum = 0;   /* one offsets segment: integers, exact in f32 at this size */
            for (int i = 17; i < GC_SEGN - 5; i++)
                sum += host[i];
            float fs = (float)sum;
            assert_memory_equal(want + GC_ONE_AT, &fs, 4);
        }
    }
    assert_false(bad);
    api_util_graph.ExecDestroy(exec);
    api_util_graph.Destroy(graph);
    cu.MemFree(in);
    cu.MemFree(offsets);
    cu.MemFree(g_one_off);
    cu.MemFree(g_keys0);
    cu.MemFree(out_graph);
    cu.MemFree(out_direct);
    cu.MemFree(temp);
    cu.StreamDestroy(st);
    cu.StreamDestroy(other);
    cu.StreamDestroy(blocking);
    rt_close(ctx);
    free(host);
    free(hoff);
    free(got);
    free(want);
}

int test_api_gpu_graph_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_gpu_graphs),
    };
    return cmocka_run_group_tests_name("api_gpu_graph", tests, api_util_gpu_setup,
                                       api_util_gpu_teardown);
}
