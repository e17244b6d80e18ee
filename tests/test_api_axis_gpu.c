/*
 * test_api_api_util_gpu.c - libredtune's reductions along an axis on the GPU (runtime/api_axis.c,
 * docs/axis.md) with the built-in defaults.
 *
 * Group "api_axis_gpu" (skipped, and counted, with no GPU): rt_reduce_axis over rows,
 * columns and 3-D shapes (the ragged shapes of the tuner's checks, split and unsplit ones,
 * len == 0, outer * inner == 0) for several operators and types and a non-commutative user
 * operator, against a CPU reference (tests/typeref.h); rt_reduce_axis_temp with garbage in
 * the caller's storage; rt_explain_axis for the built-in default; a CUDA graph capture
 * replayed; REDTUNE_CAPTURE; redtune reduce --shape. The calls with database winners are in
 * test_api_axis_gpu_db.c, the CPU group in test_api_axis.c.
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
#include "runtime/api.h"
#include "runtime/codegen.h"
#include "runtime/driver.h"
#include "runtime/family.h"
#include "runtime/hash.h"
#include "runtime/nvrtc.h"
#include "runtime/optype.h"
#include "runtime/store.h"
#include "tuner/store_tune.h"
#include "tests/affine.h"
#include "tests/api_axis_util.h"
#include "tests/api_util.h"
#include "tests/gpu_util.h"
#include "tests/typeref.h"


static const struct { rt_op op; rt_type type; } optypes[] = {
    {RT_SUM, RT_F32}, {RT_MAX, RT_F32}, {RT_ARGMAX, RT_F32}, {RT_ARGMIN, RT_BF16},
    {RT_SUM, RT_BF16}, {RT_MEAN, RT_F16}, {RT_VAR_MEAN, RT_F64}, {RT_MIN, RT_I8},
    {RT_ARGMAX, RT_RESULT_INDEX(RT_F32)}, {RT_ARGMIN, RT_RESULT_INDEX(RT_BF16)},
    {RT_ARGMAX, RT_RESULT_INDEX(RT_I8)}, {RT_ARGMIN, RT_RESULT_INDEX(RT_F64)},
};

/* The built-in defaults (an empty database) over every shape, op and type. */
static void axis_gpu_builtin(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(axis_gpu_empty_db, 0, &ctx), RT_OK);
    for (size_t k = 0; k < sizeof optypes / sizeof optypes[0]; k++)
        for (size_t s = 0; s < AXIS_GPU_NSHAPES; s++) {
            const unsigned long long *sh = axis_gpu_shapes[s];
            axis_gpu_call(ctx, optypes[k].op, optypes[k].type, sh[0], sh[1], sh[2],
                          (int)(s + k) % 2, 0);
        }
    /* outer * inner == 0: nothing launched, no pointer needed */
    assert_int_equal(rt_reduce_axis(ctx, RT_SUM, RT_F32, NULL, 0, 100, 3, NULL, NULL), RT_OK);
    assert_int_equal(rt_reduce_axis(ctx, RT_SUM, RT_F32, NULL, 4, 100, 0, NULL, NULL), RT_OK);
    char buf[2048];
    assert_int_equal(rt_explain_axis(ctx, RT_SUM, RT_F32, 0, 100, 3, buf, sizeof buf), RT_OK);
    assert_non_null(strstr(buf, "no outputs, no kernel; nothing is written"));
    assert_int_equal(rt_explain_axis(ctx, RT_SUM, RT_F32, 16, 4194304, 1, buf, sizeof buf), RT_OK);
    if (!strstr(buf, "kernel: axis_rows B=256 L=256 V=4 U=2 CHUNK=8192")
        || !strstr(buf, "fallback level: built-in default")
        || !strstr(buf, "decided for outer [2^4, 2^5), len [2^22, 2^23), inner 1")
        || !strstr(buf, "CUBIN: compiled here by NVRTC"))
        fail_msg("%s", buf);
    assert_int_equal(rt_explain_axis(ctx, RT_SUM, RT_F32, 1, 65536, 16, buf, sizeof buf), RT_OK);
    if (!strstr(buf, "kernel: axis_cols B=256 TX=4 CV=4 U=2 CHUNK=512"))
        fail_msg("%s", buf);
    rt_close(ctx);
}

/* rt_reduce_axis_temp: the counters of a split launch cleared in the caller's storage; too
 * little storage refused. */
static void axis_gpu_temp(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(axis_gpu_empty_db, 0, &ctx), RT_OK);
    size_t tb = 0;
    assert_int_equal(rt_axis_temp_bytes(ctx, RT_SUM, RT_F32, 8, 300000, 1, &tb), RT_OK);
    assert_true(tb > 0);   /* 8 tiles of 300000: split */
    assert_int_equal(rt_axis_temp_bytes(ctx, RT_SUM, RT_F32, 0, 300000, 1, &tb), RT_OK);
    assert_int_equal(tb, 0);
    for (size_t s = 0; s < AXIS_GPU_NSHAPES; s++) {
        const unsigned long long *sh = axis_gpu_shapes[s];
        axis_gpu_call(ctx, RT_SUM, RT_F32, sh[0], sh[1], sh[2], 0, 1);
    }
    axis_gpu_call(ctx, RT_ARGMAX, RT_F32, 8, 300000, 1, 1, 1);
    axis_gpu_call(ctx, RT_VAR_MEAN, RT_F64, 1, 200000, 8, 0, 1);
    assert_int_equal(rt_axis_temp_bytes(ctx, RT_SUM, RT_F32, 8, 300000, 1, &tb), RT_OK);
    CUdeviceptr in, out, temp;
    assert_int_equal(cu.MemAlloc(&in, 8 * 300000 * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&temp, tb + 512), CUDA_SUCCESS);
    char want[256];
    assert_int_equal(rt_reduce_axis_temp(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)in, 8,
                                         300000, 1, (void *)(uintptr_t)out,
                                         (void *)(uintptr_t)temp, tb - 1, NULL), RT_EINVAL);
    snprintf(want, sizeof want, "rt_reduce_axis_temp: sum f32 outer = 8 len = 300000 inner = 1 "
             "needs %zu bytes of temporary storage, %zu given", tb, tb - 1);
    assert_string_equal(rt_errmsg(ctx), want);
    assert_int_equal(rt_reduce_axis_temp(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)in, 8,
                                         300000, 1, (void *)(uintptr_t)out,
                                         (void *)(uintptr_t)(temp + 16), tb, NULL), RT_EINVAL);
    snprintf(want, sizeof want, "rt_reduce_axis_temp: d_temp %p is not aligned to 256 bytes",
             (void *)(uintptr_t)(temp + 16));
    assert_string_equal(rt_errmsg(ctx), want);
    cu.MemFree(in);
    cu.MemFree(out);
    cu.MemFree(temp);
    rt_close(ctx);
}

/* A non-commutative user operator along rows and columns: every output composed in order. */
static void axis_gpu_user_op(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    rt_ctx *ctx = NULL;
    rt_op aff;
    assert_int_equal(rt_open(axis_gpu_empty_db, 0, &ctx), RT_OK);
    rt_op_desc d = {affine_op.name, affine_op.type, affine_op.identity, affine_op.combine, 0};
    assert_int_equal(rt_register_op(ctx, &d, &aff), RT_OK);
    for (size_t s = 0; s < AXIS_GPU_NSHAPES; s++) {
        const unsigned long long *sh = axis_gpu_shapes[s];
        unsigned long long o = sh[0], l = sh[1], i = sh[2], m = o * i;
        uint64_t *h = malloc((o * l * i + 1) * 8), *got = malloc(m * 8 + 8);
        assert_non_null(h);
        assert_non_null(got);
        uint64_t x = 1234 + s;
        for (unsigned long long k = 0; k < o * l * i + 1; k++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            h[k] = (x ^ (x >> 29)) | (1ULL << 32);
        }
        CUdeviceptr in, out;
        assert_int_equal(cu.MemAlloc(&in, (o * l * i + 1) * 8), CUDA_SUCCESS);
        assert_int_equal(cu.MemAlloc(&out, m * 8 + 8), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyHtoD(in, h, (o * l * i + 1) * 8), CUDA_SUCCESS);
        if (rt_reduce_axis(ctx, aff, RT_U64, (const void *)(uintptr_t)in, o, l, i,
                           (void *)(uintptr_t)out, NULL))
            fail_msg("affine %llux%llux%llu: %s", o, l, i, rt_errmsg(ctx));
        assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyDtoH(got, out, m * 8), CUDA_SUCCESS);
        for (unsigned long long a = 0; a < o; a++)
            for (unsigned long long c = 0; c < i; c++) {
                uint64_t acc = 0x100000000ULL;
                for (unsigned long long k = 0; k < l; k++)
                    acc = affine_combine(acc, h[(a * l + k) * i + c]);
                if (got[a * i + c] != acc)
                    fail_msg("affine %llux%llux%llu output (%llu, %llu): got %016llx, want "
                             "%016llx", o, l, i, a, c, (unsigned long long)got[a * i + c],
                             (unsigned long long)acc);
            }
        cu.MemFree(in);
        cu.MemFree(out);
        free(h);
        free(got);
    }
    char buf[2048];
    assert_int_equal(rt_explain_axis(ctx, aff, RT_U64, 4096, 4096, 1, buf, sizeof buf), RT_OK);
    if (!strstr(buf, "kernel: axis_cols B=256 TX=1 CV=1"))
        fail_msg("%s", buf);
    rt_close(ctx);
}

/* ---------------------------------------------------------------- GPU: CUDA graphs */


/* A split axis launch captured after a warm-up, replayed with new data: the counters in the
 * stream's block stay zero between replays; a class not warmed up is RT_ECAPTURE. */
static void axis_gpu_graph(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    if (!api_util_graph_syms())
        fail_msg("the driver lacks the graph entry points");
    enum { O = 8, L = 300000 };
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(axis_gpu_empty_db, 0, &ctx), RT_OK);
    CUstream st;
    CUgraph graph;
    CUgraphExec exec;
    CUdeviceptr in, out;
    float *h = malloc((size_t)O * L * 4), got[O];
    assert_non_null(h);
    assert_int_equal(cu.StreamCreate(&st, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&in, (size_t)O * L * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, sizeof got), CUDA_SUCCESS);
    const void *x = (const void *)(uintptr_t)in;
    void *y = (void *)(uintptr_t)out;
    assert_int_equal(rt_reduce_axis(ctx, RT_SUM, RT_F32, x, O, L, 1, y, st), RT_OK);   /* warm-up */
    assert_int_equal(cu.StreamSynchronize(st), CUDA_SUCCESS);
    assert_int_equal(api_util_graph.BeginCapture(st, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_int_equal(rt_reduce_axis(ctx, RT_SUM, RT_F32, x, O, L, 1, y, st), RT_OK);
    assert_int_equal(rt_reduce_axis(ctx, RT_MAX, RT_F32, x, O, L, 1, y, st), RT_ECAPTURE);
    assert_non_null(strstr(rt_errmsg(ctx), "rt_reduce_axis: max f32 outer = 8 len = 300000 "
                           "inner = 1: the stream is capturing a CUDA graph, and the kernel for "
                           "this shape class (outer [2^3, 2^4), len [2^18, 2^19), inner 1) is "
                           "not loaded yet"));
    assert_int_equal(api_util_graph.EndCapture(st, &graph), CUDA_SUCCESS);
    assert_int_equal(api_util_graph.Instantiate(&exec, graph, 0), CUDA_SUCCESS);
    for (int r = 0; r < 5; r++) {
        for (size_t k = 0; k < (size_t)O * L; k++)
            h[k] = (float)((k * 2654435761u + 977u * (unsigned)r) % 17u) - 8.0f;
        assert_int_equal(cu.MemcpyHtoD(in, h, (size_t)O * L * 4), CUDA_SUCCESS);
        assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
        assert_int_equal(api_util_graph.Launch(exec, st), CUDA_SUCCESS);
        assert_int_equal(cu.StreamSynchronize(st), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyDtoH(got, out, sizeof got), CUDA_SUCCESS);
        for (int o = 0; o < O; o++) {
            double s = 0;
            for (int l = 0; l < L; l++)
                s += h[(size_t)o * L + l];
            if (got[o] != (float)s)   /* small integers: exact */
                fail_msg("replay %d row %d: got %g, want %g", r, o, got[o], s);
        }
    }
    api_util_graph.ExecDestroy(exec);
    api_util_graph.Destroy(graph);
    cu.MemFree(in);
    cu.MemFree(out);
    cu.StreamDestroy(st);
    rt_close(ctx);
    free(h);
}

/* REDTUNE_CAPTURE: one line per distinct axis shape without an exact entry (layout
 * axis:OxLxI, n the elements, nseg the outputs); len == 0 and empty outputs not recorded. */
static void axis_gpu_capture(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    char path[128], want[1024];
    snprintf(path, sizeof path, "%s/cases.tsv", api_util_gpu.dir);
    setenv("REDTUNE_CAPTURE", path, 1);
    rt_ctx *ctx = NULL;
    int rc = rt_open(axis_gpu_empty_db, 0, &ctx);
    unsetenv("REDTUNE_CAPTURE");
    assert_int_equal(rc, RT_OK);
    CUdeviceptr in, out;
    assert_int_equal(cu.MemAlloc(&in, 5 * 333 * 4 * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 4096), CUDA_SUCCESS);
    const void *x = (const void *)(uintptr_t)in;
    void *y = (void *)(uintptr_t)out;
    assert_int_equal(rt_reduce_axis(ctx, RT_SUM, RT_F32, x, 5, 333, 1, y, NULL), RT_OK);
    assert_int_equal(rt_reduce_axis(ctx, RT_SUM, RT_F32, x, 5, 333, 1, y, NULL), RT_OK);
    assert_int_equal(rt_reduce_axis(ctx, RT_SUM, RT_F32, x, 5, 330, 1, y, NULL), RT_OK);
    assert_int_equal(rt_reduce_axis(ctx, RT_ARGMAX, RT_BF16, x, 1, 333, 4, y, NULL), RT_OK);
    assert_int_equal(rt_reduce_axis(ctx, RT_SUM, RT_F32, x, 4, 0, 5, y, NULL), RT_OK);
    assert_int_equal(rt_reduce_axis(ctx, RT_SUM, RT_F32, NULL, 0, 7, 5, NULL, NULL), RT_OK);
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    rt_close(ctx);
    snprintf(want, sizeof want, "# redtune capture v1\n"
             "# op\ttype\tlayout\tn\tnseg\tfallback\tfingerprint\tdevice\n"
             "sum\tf32\taxis:5x333x1\t1665\t5\tbuiltin\t-\t%s\n"
             "sum\tf32\taxis:5x330x1\t1650\t5\tbuiltin\t-\t%s\n"
             "argmax\tbf16\taxis:1x333x4\t1332\t4\tbuiltin\t-\t%s\n",
             api_util_gpu.dev.name, api_util_gpu.dev.name, api_util_gpu.dev.name);
    char got[2048] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t len = fread(got, 1, sizeof got - 1, f);
    got[len] = '\0';
    fclose(f);
    assert_string_equal(got, want);
    cu.MemFree(in);
    cu.MemFree(out);
}

/* redtune reduce --shape: text and raw results of rt_reduce_axis, --explain's text. */
static void axis_gpu_cli(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    char in[128], outp[128], args[1024], out[8192], want[512] = "";
    float v[24];
    for (int k = 0; k < 24; k++)
        v[k] = (float)((k * 7) % 24);
    snprintf(in, sizeof in, "%s/v.bin", api_util_gpu.dir);
    snprintf(outp, sizeof outp, "%s/out.bin", api_util_gpu.dir);
    FILE *f = fopen(in, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(v, 4, 24, f), 24);
    fclose(f);
    snprintf(args, sizeof args, "reduce --op sum --in %s --shape 3,4,2 --db %s", in,
             axis_gpu_empty_db);
    if (gpu_util_run(args, out, sizeof out))
        fail_msg("%s", out);
    for (int o = 0; o < 3; o++)
        for (int i = 0; i < 2; i++) {
            float s = 0;
            for (int l = 0; l < 4; l++)
                s += v[(o * 4 + l) * 2 + i];
            snprintf(want + strlen(want), sizeof want - strlen(want), "%.9g\n", s);
        }
    assert_string_equal(out, want);
    snprintf(args, sizeof args, "reduce --op argmax --in %s --shape 4,6,1 --db %s -o %s --force "
             "--explain", in, axis_gpu_empty_db, outp);
    if (gpu_util_run(args, out, sizeof out))
        fail_msg("%s", out);
    if (!strstr(out, "axis argmax f32, outer = 4 len = 6 inner = 1"))
        fail_msg("%s", out);
    unsigned char raw[4 * 16];
    f = fopen(outp, "rb");
    assert_non_null(f);
    assert_int_equal(fread(raw, 1, sizeof raw + 1, f), sizeof raw);
    fclose(f);
    for (int o = 0; o < 4; o++) {
        long long idx, best = 0;
        memcpy(&idx, raw + 16 * o + 8, 8);
        for (int l = 1; l < 6; l++)
            if (v[o * 6 + l] > v[o * 6 + best])
                best = l;
        if (idx != best || memcmp(raw + 16 * o, &v[o * 6 + best], 4))
            fail_msg("row %d: index %lld, want %lld", o, idx, best);
    }
    /* --result index: one index a line on stdout (RT_RESULT_INDEX) */
    snprintf(args, sizeof args, "reduce --op argmax --result index --in %s --shape 4,6,1 --db %s",
             in, axis_gpu_empty_db);
    if (gpu_util_run(args, out, sizeof out))
        fail_msg("%s", out);
    want[0] = '\0';
    for (int o = 0; o < 4; o++) {
        long long best = 0;
        for (int l = 1; l < 6; l++)
            if (v[o * 6 + l] > v[o * 6 + best])
                best = l;
        snprintf(want + strlen(want), sizeof want - strlen(want), "%lld\n", best);
    }
    assert_string_equal(out, want);
}

int test_api_axis_gpu_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(axis_gpu_builtin),
        cmocka_unit_test(axis_gpu_temp),
        cmocka_unit_test(axis_gpu_user_op),
        cmocka_unit_test(axis_gpu_graph),
        cmocka_unit_test(axis_gpu_capture),
        cmocka_unit_test(axis_gpu_cli),
    };
    return cmocka_run_group_tests_name("api_axis_gpu", tests, axis_gpu_setup, axis_gpu_teardown);
}
