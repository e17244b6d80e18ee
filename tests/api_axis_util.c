/*
 * api_axis_util.c - what the axis test files of the public API share
 * (tests/api_axis_util.h): a winner put into a test database; the GPU groups' fixture,
 * reference check, data and checked calls.
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
#include "runtime/codegen.h"
#include "runtime/driver.h"
#include "runtime/family.h"
#include "runtime/hash.h"
#include "runtime/nvrtc.h"
#include "runtime/optype.h"
#include "runtime/store.h"
#include "tuner/store_tune.h"
#include "tests/api_axis_util.h"
#include "tests/typeref.h"

void put_axis_best(store *s, long long dev, const char *hash, const char *family,
                   const char *params, const char *src, const char *op,
                   unsigned long long o, unsigned long long l, unsigned long long i,
                   const char *type, const char *acc, const char *res, double us)
{
    rt_err e;
    char layout[96];
    snprintf(layout, sizeof layout, "axis:%llux%llux%llu", o, l, i);
    assert_int_equal(store_put_kernel(s, hash, family, params, src, &e), RT_OK);
    store_measurement m = {dev, 0, hash, op, type, layout, (long long)(o * l * i), 0, "ok", "",
                           us, us, us, 10, 1.0, 0.5, 1, 1, (long long)(o * i), (double)l, 0,
                           acc, res};
    if (store_put_measurement(s, &m, &e))
        fail_msg("%s", e.msg);
    if (store_update_best_spec(s, dev, op, type, acc, res, layout, (long long)(o * l * i), 0, &e))
        fail_msg("%s", e.msg);
}

void put_axis_emitted(store *s, long long dev, rt_op op, rt_type type, const char *family,
                      const char *params, unsigned long long o, unsigned long long l,
                      unsigned long long i, char *fmt, size_t fmt_len)
{
    rt_err e;
    rt_config cfg;
    char *src = NULL, hash[RT_HASH_HEX];
    assert_int_equal(config_parse(family_find(family), params, &cfg, &e), RT_OK);
    config_format(&cfg, fmt, fmt_len);
    assert_int_equal(codegen_emit(&cfg, op, type, &src, &e), RT_OK);
    hash_hex(src, strlen(src), hash);
    put_axis_best(s, dev, hash, family, fmt, src, rt_op_name(op), o, l, i, rt_type_name(type),
                  rt_type_name(type), rt_type_name(type), 12.0);
    free(src);
}

char axis_gpu_empty_db[256];

int axis_gpu_setup(void **state)
{
    rt_err e;
    store *s = NULL;
    api_util_gpu_setup(state);
    if (api_util_gpu.have != 1)
        return 0;
    snprintf(axis_gpu_empty_db, sizeof axis_gpu_empty_db, "%s/empty.db", api_util_gpu.dir);
    if (store_open(axis_gpu_empty_db, STORE_WRITE, &s, &e)) {
        api_util_gpu_teardown(state);   /* its directory and context; then skip, saying why */
        api_util_gpu.have = 0;
        snprintf(api_util_gpu.why, sizeof api_util_gpu.why, "%s", e.msg);
        return 0;
    }
    store_close(s);
    return 0;
}

int axis_gpu_teardown(void **state)
{
    return api_util_gpu_teardown(state);
}

/* Check out[] of an [o, l, i] reduction of 'in' (host copy) against tests/typeref.h's
 * reference, output by output (the column gathered, the index along the axis). */
int axis_gpu_check(rt_op op, rt_type t, const unsigned char *in, unsigned long long o,
                   unsigned long long l, unsigned long long i, const unsigned char *out,
                   const char *what)
{
    size_t es = optype_size(t), rs = optype_res_size(op, t);
    unsigned char *col = malloc(l * es + 1);
    char why[256];
    int bad = 0;
    assert_non_null(col);
    for (unsigned long long a = 0; a < o && bad < 3; a++)
        for (unsigned long long c = 0; c < i && bad < 3; c++) {
            for (unsigned long long k = 0; k < l; k++)
                memcpy(col + k * es, in + ((a * l + k) * i + c) * es, es);
            if (!tr_check(op, t, col, l, 0, 0, out + (a * i + c) * rs, why, sizeof why)) {
                print_error("%s %s %s [%llu, %llu, %llu] output (%llu, %llu): %s\n", what,
                            rt_op_name(op), rt_type_name(t), o, l, i, a, c, why);
                bad++;
            }
        }
    free(col);
    return bad == 0;
}

/* Small exact values (k/8) for every type of the tests: tr_fill's for the halves and bytes,
 * written here for f32 and f64 (tr_put leaves those alone). */
void axis_gpu_fill(rt_type t, void *p, unsigned long long n, unsigned seed)
{
    if (t != RT_F32 && t != RT_F64) {
        tr_fill(t, TR_PLAIN, p, n, seed);
        return;
    }
    unsigned long long x = 0x9e3779b97f4a7c15ull ^ seed;
    for (unsigned long long i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        double v = ((int)((x >> 33) % 129) - 64) / 8.0;
        if (t == RT_F32) {
            float f = (float)v;
            memcpy((char *)p + 4 * i, &f, 4);
        } else {
            memcpy((char *)p + 8 * i, &v, 8);
        }
    }
}

const unsigned long long axis_gpu_shapes[AXIS_GPU_NSHAPES][3] = {
    {3, 1, 17}, {2, 4099, 3}, {5, 333, 1}, {1, 1000, 17}, {4, 0, 5}, {1, 70001, 1},
    {7, 513, 33}, {1000, 64, 1}, {1, 65536, 16}, {64, 2048, 4}, {8, 300000, 1},
    {1, 200000, 8}, {1, 1, 1}, {300, 7, 1},
};

/* One call of rt_reduce_axis (or _temp with 'temp') on 'in' one element past an aligned
 * address when 'shift', checked. */
void axis_gpu_call(rt_ctx *ctx, rt_op op, rt_type t, unsigned long long o,
                   unsigned long long l, unsigned long long i, int shift, int use_temp)
{
    size_t es = optype_size(t), rs = optype_res_size(op, t);
    unsigned long long n = o * l * i, m = o * i;
    unsigned char *h = malloc((n + 1) * es), *got = malloc(m * rs + 1);
    assert_non_null(h);
    assert_non_null(got);
    axis_gpu_fill(t, h, n + 1, (unsigned)(n + 31 * op));
    CUdeviceptr in, out, temp = 0;
    assert_int_equal(cu.MemAlloc(&in, (n + 1) * es), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, m * rs + 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(in, h, (n + 1) * es), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(out, 0xa5, m * rs + 16), CUDA_SUCCESS);
    const void *pin = (const void *)(uintptr_t)(in + (shift ? es : 0));
    int rc;
    if (use_temp) {
        size_t tb = 1;
        assert_int_equal(rt_axis_temp_bytes(ctx, op, t, o, l, i, &tb), RT_OK);
        assert_int_equal(cu.MemAlloc(&temp, tb + 256), CUDA_SUCCESS);
        /* set, so that the call must clear what it uses */
        assert_int_equal(cu.MemsetD8(temp, 0xff, tb + 256), CUDA_SUCCESS);
        rc = rt_reduce_axis_temp(ctx, op, t, pin, o, l, i, (void *)(uintptr_t)out,
                                 (void *)(uintptr_t)temp, tb, NULL);
        if (rc == RT_OK)   /* twice: the counters left zero, or cleared again */
            rc = rt_reduce_axis_temp(ctx, op, t, pin, o, l, i, (void *)(uintptr_t)out,
                                     (void *)(uintptr_t)temp, tb, NULL);
    } else {
        rc = rt_reduce_axis(ctx, op, t, pin, o, l, i, (void *)(uintptr_t)out, NULL);
    }
    if (rc)
        fail_msg("%s %s %llux%llux%llu: %s", rt_op_name(op), rt_type_name(t), o, l, i,
                 rt_errmsg(ctx));
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyDtoH(got, out, m * rs), CUDA_SUCCESS);
    unsigned char tail[16];
    assert_int_equal(cu.MemcpyDtoH(tail, out + m * rs, 16), CUDA_SUCCESS);
    for (int k = 0; k < 16; k++)
        if (tail[k] != 0xa5)
            fail_msg("%llux%llux%llu: written past the outputs", o, l, i);
    if (!axis_gpu_check(op, t, h + (shift ? es : 0), o, l, i, got, use_temp ? "temp" : "axis"))
        fail_msg("%s %s %llux%llux%llu (shift %d): wrong results", rt_op_name(op),
                 rt_type_name(t), o, l, i, shift);
    if (temp)
        cu.MemFree(temp);
    cu.MemFree(in);
    cu.MemFree(out);
    free(h);
    free(got);
}
