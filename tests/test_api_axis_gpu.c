/*
 * test_api_axis_gpu.c - libredtune's reductions along an axis on the GPU (runtime/api_axis.c,
 * docs/axis.md).
 *
 * Group "api_axis_gpu" (skipped, and counted, with no GPU): rt_reduce_axis over rows,
 * columns and 3-D shapes (the ragged shapes of the tuner's checks, split and unsplit ones,
 * len == 0, outer * inner == 0) for several operators and types and a non-commutative user
 * operator, against a CPU reference (tests/typeref.h); rt_reduce_axis_temp with garbage in
 * the caller's storage; rt_explain_axis for the built-in default and for database winners of
 * both kinds; winners whose kernels NVRTC refuses, replaced by the built-in defaults (said by
 * rt_explain_axis, REDTUNE_LOG=warn and REDTUNE_CAPTURE); a CUDA graph capture replayed;
 * REDTUNE_CAPTURE; redtune reduce --shape. The CPU group is in test_api_axis.c.
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

/* ---------------------------------------------------------------- GPU: fixtures */

static struct {
    int have;
    char why[RT_ERRMSG_MAX];
    rt_device dev;
    char arch[16];
    CUdevice cudev;
    CUcontext cuctx;
    char dir[64];
    char empty_db[128];
} G = {-1};

static int gpu_setup(void **state)
{
    (void)state;
    rt_err e;
    if (G.have >= 0)
        return 0;
    G.have = 0;
    if (driver_device_query(0, &G.dev, &e)) {
        snprintf(G.why, sizeof G.why, "%s", e.msg);
        return 0;
    }
    if (cu.DeviceGet(&G.cudev, 0) || cu.DevicePrimaryCtxRetain(&G.cuctx, G.cudev)
        || cu.CtxSetCurrent(G.cuctx)) {
        snprintf(G.why, sizeof G.why, "could not create a context on %s", G.dev.name);
        return 0;
    }
    if (nvrtc_load(&e)) {
        snprintf(G.why, sizeof G.why, "%s", e.msg);
        return 0;
    }
    device_arch(&G.dev, G.arch);
    strcpy(G.dir, "/tmp/redtune-axis-gpu-XXXXXX");
    if (!mkdtemp(G.dir)) {
        snprintf(G.why, sizeof G.why, "mkdtemp failed");
        return 0;
    }
    snprintf(G.empty_db, sizeof G.empty_db, "%s/empty.db", G.dir);
    store *s = NULL;
    if (store_open(G.empty_db, STORE_WRITE, &s, &e)) {
        snprintf(G.why, sizeof G.why, "%s", e.msg);
        return 0;
    }
    store_close(s);
    G.have = 1;
    return 0;
}

static int gpu_teardown(void **state)
{
    (void)state;
    if (G.have == 1) {
        api_util_remove_dir(G.dir);
        cu.DevicePrimaryCtxRelease(G.cudev);
    }
    return 0;
}

#define NEED_GPU() GPU_UTIL_NEED(G.have, G.why)

/* ---------------------------------------------------------------- GPU: results */

/* Check out[] of an [o, l, i] reduction of 'in' (host copy) against tests/typeref.h's
 * reference, output by output (the column gathered, the index along the axis). */
static int check_axis(rt_op op, rt_type t, const unsigned char *in, unsigned long long o,
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
static void fill(rt_type t, void *p, unsigned long long n, unsigned seed)
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

static const unsigned long long shapes[][3] = {
    {3, 1, 17}, {2, 4099, 3}, {5, 333, 1}, {1, 1000, 17}, {4, 0, 5}, {1, 70001, 1},
    {7, 513, 33}, {1000, 64, 1}, {1, 65536, 16}, {64, 2048, 4}, {8, 300000, 1},
    {1, 200000, 8}, {1, 1, 1}, {300, 7, 1},
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

/* One call of rt_reduce_axis (or _temp with 'temp') on 'in' one element past an aligned
 * address when 'shift', checked. */
static void axis_call(rt_ctx *ctx, rt_op op, rt_type t, unsigned long long o,
                      unsigned long long l, unsigned long long i, int shift, int use_temp)
{
    size_t es = optype_size(t), rs = optype_res_size(op, t);
    unsigned long long n = o * l * i, m = o * i;
    unsigned char *h = malloc((n + 1) * es), *got = malloc(m * rs + 1);
    assert_non_null(h);
    assert_non_null(got);
    fill(t, h, n + 1, (unsigned)(n + 31 * op));
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
        assert_int_equal(cu.MemsetD8(temp, 0xff, tb + 256), CUDA_SUCCESS);   /* cleared by the call */
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
    if (!check_axis(op, t, h + (shift ? es : 0), o, l, i, got, use_temp ? "temp" : "axis"))
        fail_msg("%s %s %llux%llux%llu (shift %d): wrong results", rt_op_name(op),
                 rt_type_name(t), o, l, i, shift);
    if (temp)
        cu.MemFree(temp);
    cu.MemFree(in);
    cu.MemFree(out);
    free(h);
    free(got);
}

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
    NEED_GPU();
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(G.empty_db, 0, &ctx), RT_OK);
    for (size_t k = 0; k < sizeof optypes / sizeof optypes[0]; k++)
        for (size_t s = 0; s < NSHAPES; s++)
            axis_call(ctx, optypes[k].op, optypes[k].type, shapes[s][0], shapes[s][1],
                      shapes[s][2], (int)(s + k) % 2, 0);
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
    NEED_GPU();
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(G.empty_db, 0, &ctx), RT_OK);
    size_t tb = 0;
    assert_int_equal(rt_axis_temp_bytes(ctx, RT_SUM, RT_F32, 8, 300000, 1, &tb), RT_OK);
    assert_true(tb > 0);   /* 8 tiles of 300000: split */
    assert_int_equal(rt_axis_temp_bytes(ctx, RT_SUM, RT_F32, 0, 300000, 1, &tb), RT_OK);
    assert_int_equal(tb, 0);
    for (size_t s = 0; s < NSHAPES; s++)
        axis_call(ctx, RT_SUM, RT_F32, shapes[s][0], shapes[s][1], shapes[s][2], 0, 1);
    axis_call(ctx, RT_ARGMAX, RT_F32, 8, 300000, 1, 1, 1);
    axis_call(ctx, RT_VAR_MEAN, RT_F64, 1, 200000, 8, 0, 1);
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
    NEED_GPU();
    rt_ctx *ctx = NULL;
    rt_op aff;
    assert_int_equal(rt_open(G.empty_db, 0, &ctx), RT_OK);
    rt_op_desc d = {affine_op.name, affine_op.type, affine_op.identity, affine_op.combine, 0};
    assert_int_equal(rt_register_op(ctx, &d, &aff), RT_OK);
    for (size_t s = 0; s < NSHAPES; s++) {
        unsigned long long o = shapes[s][0], l = shapes[s][1], i = shapes[s][2], m = o * i;
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

/* A new database 'name' in the test directory (its path into db), open for writing, with this
 * GPU's device row (its id into *dev). */
static store *db_here(const char *name, char *db, size_t len, long long *dev)
{
    rt_err e;
    store *s = NULL;
    snprintf(db, len, "%s/%s", G.dir, name);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    assert_int_equal(store_put_device(s, &G.dev, 0, dev, &e), RT_OK);
    return s;
}

/* Winners of this GPU in a database made here: the nearest tuned shape of the same kind runs,
 * and rt_explain_axis names it. */
static void axis_gpu_database(void **state)
{
    (void)state;
    NEED_GPU();
    char db[128];
    rt_err e;
    long long dev = 0;
    store *s = db_here("tuned.db", db, sizeof db, &dev);
    const struct {
        const char *family, *params;
        unsigned long long o, l, i;
        int cubin;
    } win[] = {
        {"axis_rows", "B=128 L=32 V=4 U=1 CHUNK=0", 4096, 4096, 1, 1},
        {"axis_rows", "B=256 L=4 V=2 U=2 CHUNK=0", 65536, 128, 1, 0},
        {"axis_cols", "B=128 TX=16 CV=2 U=1 CHUNK=1024", 1, 65536, 128, 1},
    };
    for (size_t k = 0; k < sizeof win / sizeof win[0]; k++) {
        rt_config cfg;
        char *src = NULL, hash[RT_HASH_HEX], params[256];
        const rt_family *f = family_find(win[k].family);
        assert_non_null(f);
        config_default(f, &cfg);
        char buf[128], *save = NULL;
        snprintf(buf, sizeof buf, "%s", win[k].params);
        for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
            char *eq = strchr(tok, '=');
            *eq = '\0';
            assert_int_equal(config_set(&cfg, tok, atoll(eq + 1), &e), RT_OK);
        }
        config_format(&cfg, params, sizeof params);
        assert_int_equal(codegen_emit(&cfg, RT_SUM, RT_F32, &src, &e), RT_OK);
        hash_hex(src, strlen(src), hash);
        if (win[k].cubin) {
            nvrtc_output o;
            memset(&o, 0, sizeof o);
            assert_int_equal(nvrtc_compile(src, "axis.cu", G.arch, &o, &e), RT_OK);
            store_binary b = {o.cubin, o.size, -1, -1, NULL};
            assert_int_equal(store_put_kernel(s, hash, win[k].family, params, src, &e), RT_OK);
            assert_int_equal(store_put_binary(s, hash, G.arch, nvrtc_version(), &b, &e), RT_OK);
            nvrtc_output_free(&o);
        }
        put_axis_best(s, dev, hash, win[k].family, params, src, "sum", win[k].o, win[k].l,
                      win[k].i, "f32", "f32", "f32", 10.0 + (double)k);
        free(src);
    }
    store_close(s);
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    char buf[2048];
    assert_int_equal(rt_explain_axis(ctx, RT_SUM, RT_F32, 3000, 5000, 1, buf, sizeof buf), RT_OK);
    if (!strstr(buf, "kernel: axis_rows B=128 L=32 V=4 U=1 CHUNK=0")
        || !strstr(buf, "tuned shape axis:4096x4096x1, median 10.00 us")
        || !strstr(buf, "fallback level: exact device")
        || !strstr(buf, "CUBIN: from the database"))
        fail_msg("%s", buf);
    assert_int_equal(rt_explain_axis(ctx, RT_SUM, RT_F32, 50000, 100, 1, buf, sizeof buf), RT_OK);
    if (!strstr(buf, "tuned shape axis:65536x128x1") || !strstr(buf, "CUBIN: compiled here"))
        fail_msg("%s", buf);
    /* inner > 1 takes the columns winner, whatever the rows' */
    assert_int_equal(rt_explain_axis(ctx, RT_SUM, RT_F32, 4096, 4096, 2, buf, sizeof buf), RT_OK);
    if (!strstr(buf, "kernel: axis_cols B=128 TX=16 CV=2 U=1 CHUNK=1024")
        || !strstr(buf, "tuned shape axis:1x65536x128"))
        fail_msg("%s", buf);
    /* another op: nothing tuned, the built-in default */
    assert_int_equal(rt_explain_axis(ctx, RT_MAX, RT_F32, 4096, 4096, 1, buf, sizeof buf), RT_OK);
    if (!strstr(buf, "fallback level: built-in default"))
        fail_msg("%s", buf);
    /* an operator of the same cost with no winner of its own runs sum's (optype_siblings) */
    assert_int_equal(rt_explain_axis(ctx, RT_SUMSQ, RT_F32, 3000, 5000, 1, buf, sizeof buf),
                     RT_OK);
    if (!strstr(buf, "kernel: axis_rows B=128 L=32 V=4 U=1 CHUNK=0")
        || !strstr(buf, "the winner of sum, an operator of the same cost")
        || !strstr(buf, "fallback level: exact device"))
        fail_msg("%s", buf);
    axis_call(ctx, RT_SUMSQ, RT_F32, 3000, 5000, 1, 0, 0);
    axis_call(ctx, RT_SUMSQ, RT_F32, 4096, 4096, 2, 1, 0);
    for (size_t sh = 0; sh < NSHAPES; sh++)
        axis_call(ctx, RT_SUM, RT_F32, shapes[sh][0], shapes[sh][1], shapes[sh][2], (int)sh % 2,
                  0);
    axis_call(ctx, RT_SUM, RT_F32, 4096, 4096, 1, 1, 0);
    rt_close(ctx);
}

/* RT_RESULT_INDEX with a database that holds only the {value, index} result's winners: the
 * axis lookup runs them for the index alone (and says so), its sibling too; the flat and the
 * segmented calls give the index of the pair, 8 bytes a result. */
static void axis_gpu_index_result(void **state)
{
    (void)state;
    NEED_GPU();
    /* the database: argmax f32's winner of [65536 x 128] rows, the pair's, no CUBIN */
    char db[128], *src = NULL, hash[RT_HASH_HEX], params[256];
    long long dev = 0;
    store *s = db_here("pair.db", db, sizeof db, &dev);
    rt_err e;
    rt_config cfg;
    const rt_family *f = family_find("axis_rows");
    assert_non_null(f);
    config_default(f, &cfg);
    assert_int_equal(config_set(&cfg, "L", 4, &e), RT_OK);
    assert_int_equal(config_set(&cfg, "CHUNK", 0, &e), RT_OK);
    config_format(&cfg, params, sizeof params);
    assert_int_equal(codegen_emit(&cfg, RT_ARGMAX, RT_F32, &src, &e), RT_OK);
    hash_hex(src, strlen(src), hash);
    put_axis_best(s, dev, hash, "axis_rows", params, src, "argmax", 65536, 128, 1, "f32", "f32",
                  "f32", 12.0);
    free(src);
    store_close(s);
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    char buf[2048], want[128];
    snprintf(want, sizeof want, "kernel: axis_rows %s", params);
    assert_int_equal(rt_explain_axis(ctx, RT_ARGMAX, RT_RESULT_INDEX(RT_F32), 50000, 100, 1, buf,
                                     sizeof buf), RT_OK);
    if (!strstr(buf, want) || !strstr(buf, "tuned shape axis:65536x128x1")
        || !strstr(buf, "the winner of the {value, index} result, run for the index alone")
        || !strstr(buf, "f32 (index result)"))
        fail_msg("%s", buf);
    assert_int_equal(rt_explain_axis(ctx, RT_ARGMIN, RT_RESULT_INDEX(RT_F32), 50000, 100, 1, buf,
                                     sizeof buf), RT_OK);
    if (!strstr(buf, want) || !strstr(buf, "the winner of argmax's {value, index} result"))
        fail_msg("%s", buf);
    axis_call(ctx, RT_ARGMAX, RT_RESULT_INDEX(RT_F32), 50000, 100, 1, 0, 0);
    axis_call(ctx, RT_ARGMIN, RT_RESULT_INDEX(RT_F32), 4096, 333, 1, 1, 1);
    axis_call(ctx, RT_ARGMAX, RT_RESULT_INDEX(RT_F32), 3, 5000, 7, 0, 0);

    /* flat and offsets: the index of the pair */
    const unsigned long long n = 1000003, nseg = 1000;
    float *h = malloc(n * sizeof *h);
    unsigned *off = malloc((nseg + 1) * sizeof *off);
    assert_non_null(h);
    assert_non_null(off);
    fill(RT_F32, h, n, 7);
    for (unsigned long long k = 0; k <= nseg; k++)
        off[k] = (unsigned)(k * (n / nseg) + (k == nseg ? n % nseg : 0));
    CUdeviceptr in, doff, out;
    assert_int_equal(cu.MemAlloc(&in, n * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&doff, (nseg + 1) * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, nseg * 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(in, h, n * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(doff, off, (nseg + 1) * 4), CUDA_SUCCESS);
    long long idx[1000], pair[2];
    char why[256];
    for (int op = RT_ARGMIN; op <= RT_ARGMAX; op++) {
        assert_int_equal(rt_reduce(ctx, (rt_op)op, RT_RESULT_INDEX(RT_F32),
                                   (const void *)(uintptr_t)in, n, (void *)(uintptr_t)out, NULL),
                         RT_OK);
        assert_int_equal(cu.MemcpyDtoH(idx, out, 8), CUDA_SUCCESS);
        assert_int_equal(rt_reduce(ctx, (rt_op)op, RT_F32, (const void *)(uintptr_t)in, n,
                                   (void *)(uintptr_t)out, NULL), RT_OK);
        assert_int_equal(cu.MemcpyDtoH(pair, out, 16), CUDA_SUCCESS);
        assert_int_equal(idx[0], pair[1]);
        if (!tr_check((rt_op)op, RT_RESULT_INDEX(RT_F32), h, n, 0, 1, (unsigned char *)idx, why,
                      sizeof why))
            fail_msg("flat: %s", why);
        assert_int_equal(cu.MemsetD8(out, 0xa5, nseg * 16), CUDA_SUCCESS);
        assert_int_equal(rt_reduce_offsets(ctx, (rt_op)op, RT_RESULT_INDEX(RT_F32),
                                           (const void *)(uintptr_t)in, n,
                                           (const void *)(uintptr_t)doff, nseg,
                                           (void *)(uintptr_t)out, NULL, 0), RT_OK);
        assert_int_equal(cu.MemcpyDtoH(idx, out, nseg * 8), CUDA_SUCCESS);
        for (unsigned long long k = 0; k < nseg; k++)
            if (!tr_check((rt_op)op, RT_RESULT_INDEX(RT_F32), h + off[k], off[k + 1] - off[k],
                          off[k], 0, (unsigned char *)&idx[k], why, sizeof why))
                fail_msg("offsets, segment %llu: %s", k, why);
        unsigned char tail[8];
        assert_int_equal(cu.MemcpyDtoH(tail, out + nseg * 8, 8), CUDA_SUCCESS);
        for (int k = 0; k < 8; k++)
            assert_int_equal(tail[k], 0xa5);   /* 8 bytes a segment, no more */
    }
    /* an empty input: -1, with no kernel */
    assert_int_equal(rt_reduce(ctx, RT_ARGMAX, RT_RESULT_INDEX(RT_BF16), NULL, 0,
                               (void *)(uintptr_t)out, NULL), RT_OK);
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyDtoH(idx, out, 8), CUDA_SUCCESS);
    assert_int_equal(idx[0], -1);
    cu.MemFree(in);
    cu.MemFree(doff);
    cu.MemFree(out);
    free(h);
    free(off);
    rt_close(ctx);
}

/* A winner of (op, type) for [o x l x i] with family and params, put into s as this
 * library's unit for them (config_parse's config, formatted) with no CUBIN; its params
 * (formatted) into fmt. */
static void put_axis_source_only(store *s, long long dev, rt_op op, rt_type type,
                                 const char *family, const char *params, unsigned long long o,
                                 unsigned long long l, unsigned long long i, char *fmt,
                                 size_t fmt_len)
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

/* The built-in default for (op, type) on [o x l x i] as the kernel line and the warning name
 * it: family and params, formatted as config_format writes them. */
static void builtin_text(rt_op op, rt_type type, unsigned long long o, unsigned long long l,
                         unsigned long long i, char *buf, size_t len)
{
    rt_err e;
    rt_config cfg;
    char fam[64], params[128], fmt[256];
    api_axis_builtin(1, optype_size(type), optype_acc_size(op, type), o, l, i, fam, sizeof fam,
                     params, sizeof params);
    assert_int_equal(config_parse(family_find(fam), params, &cfg, &e), RT_OK);
    config_format(&cfg, fmt, sizeof fmt);
    snprintf(buf, len, "%s %s", fam, fmt);
}

/*
 * Winners whose kernels cannot be made here (runtime/api_axis.c's api_axis_decide, through
 * api_kernel.c's api_builtin_instead): min f32's rows winner of [1024 x 4096 x 1], axis_rows
 * U = 3, and its columns winner of [1 x 4096 x 64], axis_cols U = 3, parameters config_parse
 * takes but the templates' static_asserts refuse ("U must be 1, 2, 4 or 8"), stored with no
 * CUBIN, so NVRTC fails on each, as it would on a config another generator accepted. The
 * calls still work, served by the built-in defaults of their shapes (rt_reduce_axis and
 * rt_reduce_axis_temp against the reference); rt_explain_axis reports the built-in default's
 * level, the winner passed over and NVRTC's reason; REDTUNE_LOG=warn says it in one line a
 * decision, naming the winner, this GPU and the static_assert; REDTUNE_CAPTURE records the
 * calls with fallback builtin.
 */
static void axis_gpu_fallback(void **state)
{
    (void)state;
    NEED_GPU();
    char db[128], rows[256], cols[256], cases[128], path[] = "/tmp/redtune_axisfb_errXXXXXX";
    long long dev = 0;
    store *s = db_here("fallback.db", db, sizeof db, &dev);
    put_axis_source_only(s, dev, RT_MIN, RT_F32, "axis_rows", "B=256 L=32 V=4 U=3 CHUNK=0",
                         1024, 4096, 1, rows, sizeof rows);
    put_axis_source_only(s, dev, RT_MIN, RT_F32, "axis_cols", "B=256 TX=32 CV=2 U=3 CHUNK=0", 1,
                         4096, 64, cols, sizeof cols);
    store_close(s);
    snprintf(cases, sizeof cases, "%s/fallback_cases.tsv", G.dir);
    setenv("REDTUNE_LOG", "warn", 1);
    setenv("REDTUNE_CAPTURE", cases, 1);
    rt_ctx *ctx = NULL;
    int rc = rt_open(db, 0, &ctx);
    unsetenv("REDTUNE_LOG");
    unsetenv("REDTUNE_CAPTURE");
    assert_int_equal(rc, RT_OK);

    /* The decisions, made by the explains (the calls below share them), stderr caught. */
    const unsigned long long shape[2][3] = {{1000, 4096, 1}, {1, 4096, 64}};
    char x[2][4096], msg[2][1024] = {"", ""};
    int rx[2];
    int saved = api_util_stderr_into(path);
    for (int k = 0; k < 2; k++) {
        rx[k] = rt_explain_axis(ctx, RT_MIN, RT_F32, shape[k][0], shape[k][1], shape[k][2],
                                x[k], sizeof x[k]);
        if (rx[k])
            snprintf(msg[k], sizeof msg[k], "%s", rt_errmsg(ctx));
    }
    char *said = api_util_stderr_back(path, saved);
    if (rx[0] || rx[1])
        fail_msg("explains: %s | %s\n%s", msg[0], msg[1], said);

    /* rt_explain_axis: the built-in default, the winner passed over and why. */
    const char *const wfam[2] = {"axis_rows", "axis_cols"}, *const wparams[2] = {rows, cols};
    const char *const tuned[2] = {"tuned shape axis:1024x4096x1, median 12.00 us",
                                  "tuned shape axis:1x4096x64, median 12.00 us"};
    const char *const cls[2] = {"outer [2^9, 2^10), len [2^12, 2^13), inner 1",
                                "outer 1, len [2^12, 2^13), inner [2^6, 2^7)"};
    for (int k = 0; k < 2; k++) {
        char b[256], want[512], line[2048], head[512];
        builtin_text(RT_MIN, RT_F32, shape[k][0], shape[k][1], shape[k][2], b, sizeof b);
        snprintf(want, sizeof want, "database entry: none used: the winner for this shape "
                 "class, %s %s (device \"%s\"", wfam[k], wparams[k], G.dev.name);
        char kline[300];
        snprintf(kline, sizeof kline, "kernel: %s (axis plan, hash ", b);
        if (!strstr(x[k], kline) || !strstr(x[k], want) || !strstr(x[k], tuned[k])
            || !strstr(x[k], "this GPU's own row), cannot be made here: ")
            || !strstr(x[k], ".cu: NVRTC_ERROR_COMPILATION for ")
            || !strstr(x[k], ": U must be 1, 2, 4 or 8")
            || !strstr(x[k], "; the built-in default runs in its place\n")
            || !strstr(x[k], "fallback level: built-in default (this GPU")
            || !strstr(x[k], "CUBIN: compiled here by NVRTC ")
            || !strstr(x[k], " from the built-in template\n"))
            fail_msg("rt_explain_axis (%s):\n%s", wfam[k], x[k]);
        /* REDTUNE_LOG=warn: one line a decision, the winner, this GPU and NVRTC's reason. */
        snprintf(head, sizeof head, "redtune: warn: axis min f32 %s: the database's winner %s %s "
                 "(tuned on \"%s\", exact device) cannot be made for this GPU (\"%s\", %s): %s.cu: "
                 "NVRTC_ERROR_COMPILATION for %s", cls[k], wfam[k], wparams[k], G.dev.name,
                 G.dev.name, G.arch, wfam[k], G.arch);
        snprintf(want, sizeof want, "; the built-in default %s runs instead", b);
        api_util_line_of(said, head, line, sizeof line);
        if (strncmp(line, head, strlen(head)) || !strstr(line, ": U must be 1, 2, 4 or 8")
            || strcmp(line + strlen(line) - strlen(want), want))
            fail_msg("no warning: %s\nstderr:\n%s", head, said);
    }
    free(said);

    /* The calls, served by the built-in defaults, against the reference: the classes the
     * explains decided (rows; columns one element off, and in the caller's storage). */
    axis_call(ctx, RT_MIN, RT_F32, 1000, 4096, 1, 0, 0);
    axis_call(ctx, RT_MIN, RT_F32, 1000, 4096, 1, 1, 0);
    axis_call(ctx, RT_MIN, RT_F32, 1, 4096, 64, 1, 0);
    axis_call(ctx, RT_MIN, RT_F32, 1, 4096, 64, 0, 1);
    rt_close(ctx);
    char want[1024], *got = NULL;
    size_t len;
    snprintf(want, sizeof want, "min\tf32\taxis:1000x4096x1\t4096000\t1000\tbuiltin\t-\t%s\n"
             "min\tf32\taxis:1x4096x64\t262144\t64\tbuiltin\t-\t%s\n", G.dev.name,
             G.dev.name);
    got = api_util_slurp(cases, &len);
    assert_non_null(got);
    if (!strstr(got, want))
        fail_msg("REDTUNE_CAPTURE:\n%s", got);
    free(got);
}

/* ---------------------------------------------------------------- GPU: CUDA graphs */


/* A split axis launch captured after a warm-up, replayed with new data: the counters in the
 * stream's block stay zero between replays; a class not warmed up is RT_ECAPTURE. */
static void axis_gpu_graph(void **state)
{
    (void)state;
    NEED_GPU();
    if (!api_util_graph_syms())
        fail_msg("the driver lacks the graph entry points");
    enum { O = 8, L = 300000 };
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(G.empty_db, 0, &ctx), RT_OK);
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
    NEED_GPU();
    char path[128], want[1024];
    snprintf(path, sizeof path, "%s/cases.tsv", G.dir);
    setenv("REDTUNE_CAPTURE", path, 1);
    rt_ctx *ctx = NULL;
    int rc = rt_open(G.empty_db, 0, &ctx);
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
             G.dev.name, G.dev.name, G.dev.name);
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
    NEED_GPU();
    char in[128], outp[128], args[1024], out[8192], want[512] = "";
    float v[24];
    for (int k = 0; k < 24; k++)
        v[k] = (float)((k * 7) % 24);
    snprintf(in, sizeof in, "%s/v.bin", G.dir);
    snprintf(outp, sizeof outp, "%s/out.bin", G.dir);
    FILE *f = fopen(in, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(v, 4, 24, f), 24);
    fclose(f);
    snprintf(args, sizeof args, "reduce --op sum --in %s --shape 3,4,2 --db %s", in, G.empty_db);
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
             "--explain", in, G.empty_db, outp);
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
             in, G.empty_db);
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
        cmocka_unit_test(axis_gpu_database),
        cmocka_unit_test(axis_gpu_index_result),
        cmocka_unit_test(axis_gpu_fallback),
        cmocka_unit_test(axis_gpu_graph),
        cmocka_unit_test(axis_gpu_capture),
        cmocka_unit_test(axis_gpu_cli),
    };
    return cmocka_run_group_tests_name("api_axis_gpu", tests, gpu_setup, gpu_teardown);
}
