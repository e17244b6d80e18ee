/*
 * test_gpu_types.c - the types and operators of issue 15 (f16, bf16, i8, u8; amax, norm2,
 * mean, var_mean, ...) through rt_reduce with the built-in default, against
 * tests/typeref.h's reference in double; the specs other than the default (RT_ACC,
 * RT_RESULT_ELEM) and their rt_explain text. Skipped, and counted, with no GPU. (Every
 * family's variants over these operators: tests/test_gpu.c, gpu_run_*.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "include/redtune.h"
#include "runtime/driver.h"
#include "runtime/optype.h"
#include "runtime/store.h"
#include "tuner/store_tune.h"
#include "tests/gpu_util.h"
#include "tests/typeref.h"

GPU_UTIL_TEST_STATE
#define NEED_GPU() GPU_UTIL_NEED(have_gpu, no_gpu_why)

/* An empty database in a fresh directory: every case runs the built-in default. */
static void types_db(char *dir, char *db, size_t len)
{
    rt_err e;
    store *s = NULL;
    snprintf(dir, 64, "/tmp/redtune_types_XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(db, len, "%s/empty.db", dir);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    store_close(s);
}

/* One flat case: 'kind' data (tests/typeref.h) of n elements, one element past an aligned
 * address when 'offset', through rt_reduce; 0 when right, else 1 (printed). */
static int types_one(rt_ctx *ctx, rt_op op, rt_type spec, int kind, unsigned long long n,
                     int offset, unsigned char *host, CUdeviceptr in, CUdeviceptr out)
{
    size_t es = optype_size(spec), rs = optype_res_size(op, spec);
    unsigned char got[32];
    char why[512], tn[96];
    optype_spec_text(op, spec, tn, sizeof tn);
    tr_fill(optype_elem(spec), kind, host, n + offset, (unsigned)(n * 31 + op * 7 + kind));
    if (n + offset && cu.MemcpyHtoD(in, host, (n + offset) * es) != CUDA_SUCCESS)
        return print_error("upload failed\n"), 1;
    if (cu.MemsetD8(out, 0xa5, 32) != CUDA_SUCCESS || cu.CtxSynchronize() != CUDA_SUCCESS)
        return print_error("poisoning failed\n"), 1;
    int rc = rt_reduce(ctx, op, spec, (const void *)(uintptr_t)(in + offset * es), n,
                       (void *)(uintptr_t)out, stream);
    if (rc) {
        print_error("%s %s n=%llu: %s: %s\n", rt_op_name(op), tn, n, rt_strerror(rc),
                    rt_errmsg(ctx));
        return 1;
    }
    if (cu.StreamSynchronize(stream) != CUDA_SUCCESS || cu.MemcpyDtoH(got, out, rs) != CUDA_SUCCESS)
        return print_error("%s %s n=%llu: CUDA error after the reduction\n", rt_op_name(op), tn,
                           n), 1;
    if (!tr_check(op, spec, host + offset * es, n, 0, 1, got, why, sizeof why)) {
        print_error("%s %s n=%llu data %d offset %d: %s\n", rt_op_name(op), tn, n, kind, offset,
                    why);
        return 1;
    }
    return 0;
}

/* The operators of issue 15 over f16/bf16 (sum, amax, norm2, mean, var_mean, argmax) and
 * i8/u8 (sum, min, mean), n = 0, 1, 1000, 2^20 + 3, aligned and not, with values near f16's
 * largest (their f32 sum is finite), subnormal halves, +-0, and NaN for amax/argmax; then
 * two specs: RT_RESULT_ELEM(RT_F16) of a sum past 65504 is inf, RT_ACC(RT_BF16, RT_F64)
 * holds f64's tolerance. */
static void gpu_types_builtin(void **state)
{
    (void)state;
    NEED_GPU();
    char dir[64], db[128];
    types_db(dir, db, sizeof db);
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    const unsigned long long sizes[] = {0, 1, 1000, (1u << 20) + 3};
    unsigned long long nmax = (1u << 20) + 4;
    unsigned char *host = malloc(nmax * 2);
    CUdeviceptr in, out;
    assert_non_null(host);
    assert_int_equal(cu.MemAlloc(&in, nmax * 2), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 32), CUDA_SUCCESS);
    const rt_op half_ops[] = {RT_SUM, RT_AMAX, RT_NORM2, RT_MEAN, RT_VAR_MEAN, RT_ARGMAX};
    const rt_op byte_ops[] = {RT_SUM, RT_MIN, RT_MEAN};
    const rt_type types[] = {RT_F16, RT_BF16, RT_I8, RT_U8};
    int failures = 0;
    for (int ti = 0; ti < 4; ti++) {
        rt_type t = types[ti];
        int half = optype_is_half(t);
        const rt_op *ops = half ? half_ops : byte_ops;
        int nops = half ? 6 : 3;
        for (int oi = 0; oi < nops; oi++) {
            rt_op op = ops[oi];
            for (int kind = TR_PLAIN; kind <= TR_ZEROS; kind++) {
                if (!half && kind != TR_PLAIN)
                    continue;
                if (kind == TR_BIG && t != RT_F16)
                    continue;   /* bf16's largest overflows f32 too */
                if ((kind == TR_NAN || kind == TR_ALL_NAN) && op != RT_AMAX && op != RT_ARGMAX)
                    continue;
                if (kind == TR_SUBNORMAL && t == RT_BF16 && (op == RT_NORM2 || op == RT_VAR_MEAN))
                    continue;   /* their squares underflow f32: the double reference differs */
                for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                    if (gpu_util_small() && sizes[si] > 5000)
                        continue;
                    for (int offset = 0; offset <= 1; offset++)
                        failures += types_one(ctx, op, t, kind, sizes[si], offset, host, in, out);
                }
            }
        }
    }
    for (int oi = 0; oi < 2; oi++)   /* a spec other than the default */
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            failures += types_one(ctx, oi ? RT_MEAN : RT_SUM, RT_ACC(RT_BF16, RT_F64), TR_PLAIN,
                                  sizes[si], 1, host, in, out);
    /* The f16 result of a sum past 65504: inf (the f32 accumulator did not overflow). */
    tr_fill(RT_F16, TR_BIG, host, 1000, 5);
    assert_int_equal(cu.MemcpyHtoD(in, host, 2000), CUDA_SUCCESS);
    assert_int_equal(rt_reduce(ctx, RT_SUM, RT_RESULT_ELEM(RT_F16), (const void *)(uintptr_t)in,
                               1000, (void *)(uintptr_t)out, stream), RT_OK);
    uint16_t h = 0;
    assert_int_equal(cu.StreamSynchronize(stream), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyDtoH(&h, out, 2), CUDA_SUCCESS);
    assert_int_equal(h, 0x7c00);
    float f = 0;
    assert_int_equal(rt_reduce(ctx, RT_SUM, RT_F16, (const void *)(uintptr_t)in, 1000,
                               (void *)(uintptr_t)out, stream), RT_OK);
    assert_int_equal(cu.StreamSynchronize(stream), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyDtoH(&f, out, 4), CUDA_SUCCESS);
    assert_true(isfinite(f) && f > 65504.0f * 900);
    /* n = 0 at a 2-byte boundary: the two f16 NaN of var_mean by 16-bit memsets */
    uint16_t two[2] = {0, 0};
    assert_int_equal(rt_reduce(ctx, RT_VAR_MEAN, RT_RESULT_ELEM(RT_F16), NULL, 0,
                               (void *)(uintptr_t)(out + 2), stream), RT_OK);
    assert_int_equal(cu.StreamSynchronize(stream), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyDtoH(two, out + 2, 4), CUDA_SUCCESS);
    assert_int_equal(two[0], 0x7e00);
    assert_int_equal(two[1], 0x7e00);
    /* rt_explain names the spec and its types */
    char buf[2048];
    assert_int_equal(rt_explain(ctx, RT_VAR_MEAN, RT_ACC(RT_BF16, RT_F64), 1000, buf, sizeof buf),
                     RT_OK);
    assert_non_null(strstr(buf, "var_mean bf16 (f64 accumulator), n = 1000"));
    assert_non_null(strstr(buf, "types: element bf16, accumulator f64 (24-byte partials), "
                                "result f64 (16 bytes)"));
    assert_non_null(strstr(buf, "holds no winner for var_mean bf16 (f64 accumulator)"));
    assert_non_null(strstr(buf, "fallback level: built-in default"));
    rt_close(ctx);
    cu.MemFree(in);
    cu.MemFree(out);
    free(host);
    unlink(db);
    rmdir(dir);
    assert_int_equal(failures, 0);
}

int test_gpu_types_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_types_builtin),
    };
    return cmocka_run_group_tests_name("gpu_types", tests, gpu_setup, NULL);
}
