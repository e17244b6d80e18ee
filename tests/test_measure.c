/*
 * test_measure.c - tuner/measure.c, the timing method of the worker and of bench/. Without a
 * GPU: the yardstick's size and shapes, their NVRTC compile, and the repetition loop's error
 * path (it calls the enqueue first, before any CUDA call). With a GPU (skipped otherwise):
 * the GPU state, the repetition counts and the statistics, the flush kernels' adoption.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include "runtime/nvrtc.h"
#include "tuner/measure.h"
#include "tests/gpu_util.h"

static void yardstick_bytes(void **state)
{
    (void)state;
    rt_device d;
    memset(&d, 0, sizeof d);
    d.total_mem = 80LL << 30;   /* an H100: 4 GiB */
    assert_int_equal(measure_bw_bytes(&d), 4ULL << 30);
    d.total_mem = 16LL << 30;   /* a quarter is 4 GiB: 4 GiB */
    assert_int_equal(measure_bw_bytes(&d), 4ULL << 30);
    d.total_mem = 8LL << 30;    /* a quarter of the memory */
    assert_int_equal(measure_bw_bytes(&d), 2ULL << 30);
    d.total_mem = 1000;         /* a quarter, rounded down to 16-byte words */
    assert_int_equal(measure_bw_bytes(&d), 240);
}

/* The shapes session.c and bench/ measure, in order: persistent grids first (the first one
 * flushes the L2), then one tile per block. */
static void yardstick_shapes(void **state)
{
    (void)state;
    static const char *const want[MEASURE_BW_SHAPES] = {
        "B=512 U=4 G=4", "B=256 U=8 G=8", "B=1024 U=4 G=2", "B=512 U=8 G=4",
        "B=512 U=4 G=0", "B=256 U=2 G=0", "B=512 U=1 G=0"};
    for (int i = 0; i < MEASURE_BW_SHAPES; i++) {
        char got[64];
        snprintf(got, sizeof got, "%s %s %s", measure_bw_shapes[i][0], measure_bw_shapes[i][1],
                 measure_bw_shapes[i][2]);
        assert_string_equal(got, want[i]);
    }
    assert_int_equal(MEASURE_BW_REPS, 30);
    assert_int_equal(MEASURE_SPIN_CYCLES, 20000);
}

static void yardstick_compiles(void **state)
{
    (void)state;
    for (int i = 0; i < MEASURE_BW_SHAPES; i++) {
        nvrtc_output o;
        rt_err e;
        rt_clearerr(&e);
        int rc = measure_bw_compile(i, "sm_90", &o, &e);
        if (rc)
            print_error("shape %d: %s\n", i, e.msg);
        assert_int_equal(rc, RT_OK);
        assert_true(o.size > 4 && memcmp(o.cubin, "\177ELF", 4) == 0);
        nvrtc_output_free(&o);
    }
    nvrtc_output o;
    rt_err e;
    rt_clearerr(&e);
    assert_int_equal(measure_bw_compile(MEASURE_BW_SHAPES, "sm_90", &o, &e), RT_EINVAL);
    assert_string_equal(e.msg, "no yardstick shape 7");
    assert_null(o.cubin);
}

typedef struct fail_arg {
    int calls;
} fail_arg;

static int enqueue_fails(void *arg, rt_err *e)
{
    ((fail_arg *)arg)->calls++;
    return rt_seterr(e, RT_EINVAL, "the launch was refused");
}

/* An enqueue that fails in the first warm-up: its error, as it set it, and nothing timed. */
static void reps_enqueue_error(void **state)
{
    (void)state;
    measure_gpu g;
    memset(&g, 0, sizeof g);
    measure_times m = {-1, -1, -1, -1};
    fail_arg a = {0};
    rt_err e;
    rt_clearerr(&e);
    assert_int_equal(measure_reps(&g, enqueue_fails, &a, 0, 10, 200, 0.25, &m, &e), RT_EINVAL);
    assert_string_equal(e.msg, "the launch was refused");
    assert_int_equal(a.calls, 1);
    assert_int_equal(m.reps, -1);
    assert_true(m.median_us == -1);
}

int test_measure_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(yardstick_bytes),
        cmocka_unit_test(yardstick_shapes),
        cmocka_unit_test(yardstick_compiles),
        cmocka_unit_test(reps_enqueue_error),
    };
    return cmocka_run_group_tests_name("measure", tests, NULL, NULL);
}

/* ---- on a GPU ---- */

static measure_gpu G;
static int have_gpu = -1;
static char no_gpu_why[RT_ERRMSG_MAX];
static CUdeviceptr scratch;   /* 1 MiB that the enqueue below clears */

static int gpu_setup(void **state)
{
    (void)state;
    if (have_gpu >= 0)
        return 0;
    rt_err e;
    rt_clearerr(&e);
    CUresult r;
    have_gpu = 0;
    if (driver_device_query(0, &G.dev, &e) || measure_start(&G, &e))
        snprintf(no_gpu_why, sizeof no_gpu_why, "%s", e.msg);
    else if ((r = cu.MemAlloc(&scratch, 1u << 20)) != CUDA_SUCCESS)
        snprintf(no_gpu_why, sizeof no_gpu_why, "allocating 1 MiB failed (%d)", (int)r);
    else
        have_gpu = 1;
    return 0;
}

#define NEED_GPU() GPU_UTIL_NEED(have_gpu, no_gpu_why)

static int enqueue_clear(void *arg, rt_err *e)
{
    int *calls = arg;
    (*calls)++;
    CUresult r = cu.MemsetD32Async(scratch, 0, (1u << 20) / 4, G.stream);
    return r == CUDA_SUCCESS ? RT_OK : driver_fail(r, "clearing", e);
}

static void gpu_state(void **state)
{
    (void)state;
    NEED_GPU();
    char arch[16];
    device_arch(&G.dev, arch);
    assert_string_equal(G.arch, arch);
    assert_true(G.flush_bytes >= (64u << 20) && G.flush_bytes >= 2 * (size_t)G.dev.l2_bytes);
    assert_true(G.stream && G.start && G.stop && G.flush && G.out);
    assert_int_equal(G.temp_bytes, 1u << 20);
    assert_true(G.host_threads >= 1);
    assert_true(G.spin_cycles == MEASURE_SPIN_CYCLES);
    rt_err e;
    assert_int_equal(measure_ensure_temp(&G, 1000, &e), RT_OK);
    assert_int_equal(G.temp_bytes, 1u << 20);
    assert_int_equal(measure_ensure_temp(&G, (3u << 20) + 5, &e), RT_OK);
    assert_int_equal(G.temp_bytes, (3u << 20) + 5);
    unsigned char counter[256], zero[256] = {0};
    assert_int_equal(cu.MemcpyDtoH(counter, G.temp, sizeof counter), CUDA_SUCCESS);
    assert_memory_equal(counter, zero, sizeof zero);
}

/* Two warm-ups, then min_reps..max_reps repetitions until the budget is reached. */
static void gpu_reps(void **state)
{
    (void)state;
    NEED_GPU();
    for (int hot = 0; hot < 2; hot++) {
        measure_times m;
        int calls = 0;
        rt_err e;
        assert_int_equal(measure_reps(&G, enqueue_clear, &calls, hot, 5, 5, 0, &m, &e), RT_OK);
        assert_int_equal(m.reps, 5);
        assert_int_equal(calls, 2 + 5);
        assert_true(m.min_us >= 0 && m.min_us <= m.median_us && m.median_us <= m.max_us);
        calls = 0;
        assert_int_equal(measure_reps(&G, enqueue_clear, &calls, hot, 3, 200, 0, &m, &e), RT_OK);
        assert_int_equal(m.reps, 3);
        calls = 0;
        assert_int_equal(measure_reps(&G, enqueue_clear, &calls, hot, 1, 9, 1e9, &m, &e), RT_OK);
        assert_int_equal(m.reps, 9);
        assert_int_equal(calls, 2 + 9);
    }
}

/* The first yardstick loaded becomes the flush; later ones stay the caller's. */
static void gpu_yardstick(void **state)
{
    (void)state;
    NEED_GPU();
    unsigned long long n16 = (64u << 20) / 16;
    CUdeviceptr buf;
    assert_int_equal(cu.MemAlloc(&buf, n16 * 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(buf, 0x3c, n16 * 16), CUDA_SUCCESS);
    for (int i = 0; i < 2; i++) {
        nvrtc_output o;
        measure_bw k;
        rt_err e;
        int rc = measure_bw_compile(i, G.arch, &o, &e);
        if (rc == RT_OK)
            rc = measure_bw_load(&G, o.cubin, n16, &k, &e);
        nvrtc_output_free(&o);
        if (rc)
            print_error("%s\n", e.msg);
        assert_int_equal(rc, RT_OK);
        assert_non_null(G.util);
        assert_non_null(G.spin);
        if (i == 0) {
            assert_null(k.mod);
            assert_ptr_equal(G.flush_read, k.f);
            assert_int_equal(G.flush_grid, k.grid);
        } else {
            assert_non_null(k.mod);
            assert_ptr_not_equal(G.flush_read, k.f);
        }
        double us, gbps;
        for (int hot = 0; hot < 2; hot++) {
            assert_int_equal(measure_bw_time(&G, &k, buf, n16, hot, 5, &us, &gbps, &e), RT_OK);
            assert_true(us > 0 && gbps > 1);
        }
        measure_bw_unload(&k);
        assert_null(k.mod);
    }
    cu.MemFree(buf);
}

int test_measure_gpu_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_state),
        cmocka_unit_test(gpu_reps),
        cmocka_unit_test(gpu_yardstick),
    };
    return cmocka_run_group_tests_name("measure_gpu", tests, gpu_setup, NULL);
}
