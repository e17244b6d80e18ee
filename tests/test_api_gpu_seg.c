/*
 * test_api_gpu_seg.c - libredtune's segmented reductions on the GPU (rt_reduce_keys,
 * rt_reduce_offsets, rt_explain_segmented in runtime/api*.c), end to end.
 *
 * Group "api_gpu_seg" (skipped, and counted, with no GPU): the built-in default for both
 * layouts, aligned and not, 32- and 64-bit offsets, every segment profile, against the
 * per-segment reference; bad keys and offsets caught by RT_SEG_CHECK with nothing written;
 * float min and max of only NaN, flat and segmented; n = 0 with d_in NULL; segmented and flat
 * calls sharing a stream's temporary storage; a database tuned with --segmented, and
 * RT_SEG_SKEWED; one segment anywhere in the input, served by the flat decision with its bounds
 * read on the GPU; winners whose kernels NVRTC refuses, replaced by the built-in defaults
 * (said by the explains and by REDTUNE_LOG=warn).
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
#include "runtime/codegen.h"
#include "runtime/driver.h"
#include "runtime/family.h"
#include "runtime/optype.h"
#include "tuner/data.h"
#include "tuner/segdata.h"
#include "tuner/store_tune.h"
#include "tests/api_util.h"

/* ---------------------------------------------------------------- GPU: segmented calls */

/* One segmented call through the library against the per-segment reference; 'shift' moves
 * the input one element off 16-byte alignment (the library then takes scalar loads). */
static void seg_call_flags(rt_ctx *ctx, int layout, int off64, rt_op op, rt_type type,
                           int profile, unsigned long long n, int shift, unsigned extra)
{
    seg_data d;
    seg_ref *refs;
    size_t es = optype_size(type), acc = optype_acc_size(op, type);
    assert_int_equal(segdata_make(profile, n, 11 + n + profile, &d), RT_OK);
    char *host = malloc((n + 2) * es);
    assert_non_null(host);
    data_fill(host, type, op, n + 1, 5 + profile, n / 2, 2);
    assert_int_equal(segdata_reference(host + shift * es, type, op, &d, &refs, 2), RT_OK);
    size_t segbytes;
    void *hseg = segdata_descriptor(&d, layout, off64, &segbytes);
    assert_non_null(hseg);
    CUdeviceptr in, seg, out;
    assert_int_equal(cu.MemAlloc(&in, (n + 2) * es), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&seg, segbytes + 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, (d.nseg + 1) * acc), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(in, host, (n + 1) * es), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(seg, hseg, segbytes), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(out, 0xa5, (d.nseg + 1) * acc), CUDA_SUCCESS);
    const void *pin = (const void *)(uintptr_t)(in + shift * es);
    int rc = layout == RT_LAYOUT_KEYS
        ? rt_reduce_keys(ctx, op, type, pin, (const unsigned *)(uintptr_t)seg, n, d.nseg,
                         (void *)(uintptr_t)out, NULL, RT_SEG_CHECK | extra)
        : rt_reduce_offsets(ctx, op, type, pin, n, (const void *)(uintptr_t)seg, d.nseg,
                            (void *)(uintptr_t)out, NULL,
                            RT_SEG_CHECK | extra | (off64 ? RT_SEG_OFF64 : 0));
    if (rc)
        fail_msg("%s", rt_errmsg(ctx));
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    unsigned char *got = malloc((d.nseg + 1) * acc);
    assert_int_equal(cu.MemcpyDtoH(got, out, (d.nseg + 1) * acc), CUDA_SUCCESS);
    char why[1024];
    if (!segdata_check(got, refs, type, op, &d, why, sizeof why))
        fail_msg("%s %s %s %s n=%llu shift %d: %s", layout == 1 ? "keys" : "offsets",
                 rt_op_name(op), rt_type_name(type), segdata_profile_name(profile), n, shift, why);
    for (size_t b = d.nseg * acc; b < (d.nseg + 1) * acc; b++)
        assert_int_equal(got[b], 0xa5);
    cu.MemFree(in);
    cu.MemFree(seg);
    cu.MemFree(out);
    free(got);
    free(hseg);
    free(host);
    free(refs);
    segdata_free(&d);
}

static void seg_call(rt_ctx *ctx, int layout, int off64, rt_op op, rt_type type, int profile,
                     unsigned long long n, int shift)
{
    seg_call_flags(ctx, layout, off64, op, type, profile, n, shift, 0);
}

/* The built-in default (no database entry), both layouts, aligned and not, 32- and 64-bit
 * offsets, every profile; bad keys and offsets caught by RT_SEG_CHECK with nothing written;
 * nseg = 0 writes nothing. */
static void api_gpu_segmented(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    char db[128];
    snprintf(db, sizeof db, "%s/empty_seg.db", api_util_gpu.dir);
    api_util_make_empty_db(db);
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    const rt_op ops[] = {RT_MIN, RT_SUM, RT_ARGMAX};
    const rt_type types[] = {RT_F32, RT_I64};
    for (int layout = RT_LAYOUT_KEYS; layout <= RT_LAYOUT_OFFSETS; layout++)
        for (int oi = 0; oi < 3; oi++)
            for (int ti = 0; ti < 2; ti++)
                for (int p = 0; p < segdata_profile_count(); p++) {
                    seg_call(ctx, layout, 0, ops[oi], types[ti], p, 100003, 0);
                    seg_call(ctx, layout, layout == 2, ops[oi], types[ti], p, 1000, 1);
                    seg_call(ctx, layout, 0, ops[oi], types[ti], p, 0, 0);
                }
    char buf[1024];
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F32, 1000, 10, 0,
                                          buf, sizeof buf), RT_OK);
    assert_non_null(strstr(buf, "seg_lb"));
    assert_non_null(strstr(buf, "built-in default"));

    /* Bad input, checked: RT_EINVAL naming the first bad index, the output untouched. */
    unsigned hkeys[8] = {0, 1, 1, 3, 2, 4, 4, 4};      /* index 4 goes down */
    int hoff[4] = {0, 5, 3, 8};                           /* index 2 goes down */
    CUdeviceptr in, keys, offs, out;
    assert_int_equal(cu.MemAlloc(&in, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&keys, sizeof hkeys), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&offs, sizeof hoff), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(in, 0, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(keys, hkeys, sizeof hkeys), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(offs, hoff, sizeof hoff), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(out, 0xa5, 64), CUDA_SUCCESS);
    void *pin = (void *)(uintptr_t)in, *pout = (void *)(uintptr_t)out;
    assert_int_equal(rt_reduce_keys(ctx, RT_SUM, RT_F32, pin, (const unsigned *)(uintptr_t)keys,
                                    8, 5, pout, NULL, RT_SEG_CHECK), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(ctx), "the first at index 4"));
    assert_int_equal(rt_reduce_keys(ctx, RT_SUM, RT_F32, pin, (const unsigned *)(uintptr_t)keys,
                                    8, 4, pout, NULL, RT_SEG_CHECK), RT_EINVAL);   /* key 4 >= nseg */
    assert_int_equal(rt_reduce_offsets(ctx, RT_SUM, RT_F32, pin, 8, (void *)(uintptr_t)offs, 3,
                                       pout, NULL, RT_SEG_CHECK), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(ctx), "the first at index 2"));
    assert_int_equal(rt_reduce_offsets(ctx, RT_SUM, RT_F32, pin, 7, (void *)(uintptr_t)offs, 1,
                                       pout, NULL, RT_SEG_CHECK), RT_OK);   /* 0..5 is fine */
    assert_int_equal(cu.MemsetD8(out, 0xa5, 64), CUDA_SUCCESS);
    assert_int_equal(rt_reduce_offsets(ctx, RT_SUM, RT_F32, pin, 8, (void *)(uintptr_t)offs, 0,
                                       pout, NULL, 0), RT_OK);   /* nseg 0: nothing */
    assert_int_equal(rt_reduce_keys(ctx, RT_SUM, RT_F32, pin, NULL, 8, 4, pout, NULL, 0), RT_EINVAL);
    assert_int_equal(rt_reduce_keys(ctx, RT_SUM, RT_F32, pin, (const unsigned *)(uintptr_t)keys,
                                    8, 4, pout, NULL, RT_SEG_OFF64), RT_EINVAL);
    assert_int_equal(rt_reduce_keys(ctx, RT_SUM, RT_F32, pin, (const unsigned *)(uintptr_t)keys,
                                    8, 4, pout, NULL, 0x80), RT_EINVAL);
    /* Unchecked bad input: no fault, nothing written past out[nseg). */
    assert_int_equal(rt_reduce_keys(ctx, RT_SUM, RT_F32, pin, (const unsigned *)(uintptr_t)keys,
                                    8, 2, pout, NULL, 0), RT_OK);
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    unsigned char hout[64];
    assert_int_equal(cu.MemcpyDtoH(hout, out, 64), CUDA_SUCCESS);
    for (int b = 8; b < 64; b++)
        assert_int_equal(hout[b], 0xa5);
    cu.MemFree(in);
    cu.MemFree(keys);
    cu.MemFree(offs);
    cu.MemFree(out);
    rt_close(ctx);
}

/* n = 0 with d_in NULL (allowed: nothing is read) and segments: every segment is empty and
 * gets the identity, through the shipped winners and the built-in default alike (seg_lb
 * used to load in[0] for its ragged tile, a fault with NULL). */
static void api_gpu_seg_empty_null(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    char db[128];
    snprintf(db, sizeof db, "%s/empty_null.db", api_util_gpu.dir);
    api_util_make_empty_db(db);
    /* The shipped database (segmented winners for min i32), when built, and an empty one. */
    const char *dbs[2] = {db, access("build/redtune.db", R_OK) == 0 ? "build/redtune.db" : db};
    CUdeviceptr out, offs;
    const unsigned nseg = 5;
    const int ho[6] = {0, 0, 0, 0, 0, 0};
    assert_int_equal(cu.MemAlloc(&out, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&offs, sizeof ho), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(offs, ho, sizeof ho), CUDA_SUCCESS);
    for (int d = 0; d < 2; d++) {
        rt_ctx *ctx = NULL;
        assert_int_equal(rt_open(dbs[d], 0, &ctx), RT_OK);
        for (int layout = RT_LAYOUT_KEYS; layout <= RT_LAYOUT_OFFSETS; layout++) {
            int got[8];
            assert_int_equal(cu.MemsetD8(out, 0xa5, 64), CUDA_SUCCESS);
            int rc = layout == RT_LAYOUT_KEYS
                ? rt_reduce_keys(ctx, RT_MIN, RT_I32, NULL, NULL, 0, nseg,
                                 (void *)(uintptr_t)out, NULL, 0)
                : rt_reduce_offsets(ctx, RT_MIN, RT_I32, NULL, 0, (const void *)(uintptr_t)offs,
                                    nseg, (void *)(uintptr_t)out, NULL, 0);
            if (rc)
                print_error("%s\n", rt_errmsg(ctx));
            assert_int_equal(rc, RT_OK);
            assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
            assert_int_equal(cu.MemcpyDtoH(got, out, sizeof got), CUDA_SUCCESS);
            for (unsigned s = 0; s < nseg; s++)
                assert_int_equal(got[s], 0x7fffffff);
            assert_int_equal(got[nseg], (int)0xa5a5a5a5);   /* nothing past nseg */
        }
        rt_close(ctx);
    }
    cu.MemFree(out);
    cu.MemFree(offs);
}

/* Segmented and flat calls on one stream share its temporary block: the segmented carries
 * must leave the one-launch counter at its start alone, or every later one-launch rt_reduce
 * on that stream finishes early or never (found by the Python GPU tests: a reduce_offsets
 * before a flat reduction gave the flat one uninitialised memory). */
static void api_gpu_seg_then_flat(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    char db[128];
    snprintf(db, sizeof db, "%s/seg_then_flat.db", api_util_gpu.dir);
    api_util_make_empty_db(db);
    const char *dbs[2] = {db, access("build/redtune.db", R_OK) == 0 ? "build/redtune.db" : db};
    const unsigned long long n = 1ULL << 20;
    const unsigned nseg = 1000;
    float *hx = malloc(n * sizeof *hx);
    unsigned *hk = malloc(n * sizeof *hk);
    int *ho = malloc((nseg + 1) * sizeof *ho);
    assert_non_null(hx);
    assert_non_null(hk);
    assert_non_null(ho);
    for (unsigned long long i = 0; i < n; i++) {
        hx[i] = 1.0f;
        hk[i] = (unsigned)(i * nseg / n);
    }
    for (unsigned s = 0; s <= nseg; s++)
        ho[s] = (int)((unsigned long long)s * n / nseg);
    CUdeviceptr x, keys, offs, out, segout;
    assert_int_equal(cu.MemAlloc(&x, n * sizeof *hx), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&keys, n * sizeof *hk), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&offs, (nseg + 1) * sizeof *ho), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&segout, nseg * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(x, hx, n * sizeof *hx), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(keys, hk, n * sizeof *hk), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(offs, ho, (nseg + 1) * sizeof *ho), CUDA_SUCCESS);
    for (int d = 0; d < 2; d++) {
        rt_ctx *ctx = NULL;
        assert_int_equal(rt_open(dbs[d], 0, &ctx), RT_OK);
        for (int round = 0; round < 3; round++) {
            for (int layout = RT_LAYOUT_KEYS; layout <= RT_LAYOUT_OFFSETS; layout++) {
                int rc = layout == RT_LAYOUT_KEYS
                    ? rt_reduce_keys(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)x,
                                     (const unsigned *)(uintptr_t)keys, n, nseg,
                                     (void *)(uintptr_t)segout, NULL, 0)
                    : rt_reduce_offsets(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)x, n,
                                        (const void *)(uintptr_t)offs, nseg,
                                        (void *)(uintptr_t)segout, NULL, 0);
                if (rc)
                    print_error("%s\n", rt_errmsg(ctx));
                assert_int_equal(rc, RT_OK);
                /* Flat sizes whose picks are one-launch and multipass alike. */
                const unsigned long long ns[3] = {n, 65536, 1000};
                for (int i = 0; i < 3; i++) {
                    float got = -1.0f;
                    assert_int_equal(cu.MemsetD8(out, 0xa5, 64), CUDA_SUCCESS);
                    rc = rt_reduce(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)x, ns[i],
                                   (void *)(uintptr_t)out, NULL);
                    if (rc)
                        print_error("%s\n", rt_errmsg(ctx));
                    assert_int_equal(rc, RT_OK);
                    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
                    assert_int_equal(cu.MemcpyDtoH(&got, out, sizeof got), CUDA_SUCCESS);
                    if (got != (float)ns[i])
                        print_error("db %d round %d layout %d: sum of %llu ones gave %g\n", d,
                                    round, layout, ns[i], (double)got);
                    assert_true(got == (float)ns[i]);
                }
            }
        }
        rt_close(ctx);
    }
    cu.MemFree(x);
    cu.MemFree(keys);
    cu.MemFree(offs);
    cu.MemFree(out);
    cu.MemFree(segout);
    free(hx);
    free(hk);
    free(ho);
}

/* Float min/max through the public API: an input (or a segment) of only NaN gives NaN; only
 * an empty input (n = 0, written by the host) or an empty segment gives +-inf. Built-in
 * default kernels (an empty database), so what is checked is the current templates. */
static void api_gpu_all_nan(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    char db[128];
    snprintf(db, sizeof db, "%s/empty_nan.db", api_util_gpu.dir);
    api_util_make_empty_db(db);
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    const unsigned long long n = 100000;
    float *hf = malloc(n * sizeof *hf);
    double *hd = malloc(n * sizeof *hd);
    assert_non_null(hf);
    assert_non_null(hd);
    for (unsigned long long i = 0; i < n; i++) {
        hf[i] = NAN;
        hd[i] = NAN;
    }
    CUdeviceptr inf, ind, out, keys, offs;
    assert_int_equal(cu.MemAlloc(&inf, n * sizeof *hf), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&ind, n * sizeof *hd), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&keys, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&offs, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(inf, hf, n * sizeof *hf), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(ind, hd, n * sizeof *hd), CUDA_SUCCESS);
    void *pf = (void *)(uintptr_t)inf, *pd = (void *)(uintptr_t)ind, *po = (void *)(uintptr_t)out;
    for (int op = RT_MIN; op <= RT_MAX; op++) {
        const double empty = op == RT_MIN ? INFINITY : -INFINITY;
        float f;
        double d;
        assert_int_equal(rt_reduce(ctx, (rt_op)op, RT_F32, pf, n, po, NULL), RT_OK);
        assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyDtoH(&f, out, 4), CUDA_SUCCESS);
        assert_true(isnan(f));
        assert_int_equal(rt_reduce(ctx, (rt_op)op, RT_F64, pd, n, po, NULL), RT_OK);
        assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyDtoH(&d, out, 8), CUDA_SUCCESS);
        assert_true(isnan(d));
        assert_int_equal(rt_reduce(ctx, (rt_op)op, RT_F32, pf, 0, po, NULL), RT_OK);
        assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyDtoH(&f, out, 4), CUDA_SUCCESS);
        assert_true(f == (float)empty);

        /* Segments: 0 all NaN, 1 empty, 2 holds NaN and 0.5, 3 empty (keys after the last). */
        const float hv[4] = {NAN, NAN, NAN, 0.5f};
        const unsigned hk[4] = {0, 0, 2, 2};
        const int ho[5] = {0, 2, 2, 4, 4};
        assert_int_equal(cu.MemcpyHtoD(inf, hv, sizeof hv), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyHtoD(keys, hk, sizeof hk), CUDA_SUCCESS);
        assert_int_equal(cu.MemcpyHtoD(offs, ho, sizeof ho), CUDA_SUCCESS);
        for (int layout = RT_LAYOUT_KEYS; layout <= RT_LAYOUT_OFFSETS; layout++) {
            float g[4];
            assert_int_equal(cu.MemsetD8(out, 0xa5, 64), CUDA_SUCCESS);
            int rc = layout == RT_LAYOUT_KEYS
                ? rt_reduce_keys(ctx, (rt_op)op, RT_F32, pf, (const unsigned *)(uintptr_t)keys, 4, 4,
                                 po, NULL, RT_SEG_CHECK)
                : rt_reduce_offsets(ctx, (rt_op)op, RT_F32, pf, 4, (const void *)(uintptr_t)offs, 4,
                                    po, NULL, RT_SEG_CHECK);
            assert_int_equal(rc, RT_OK);
            assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
            assert_int_equal(cu.MemcpyDtoH(g, out, sizeof g), CUDA_SUCCESS);
            assert_true(isnan(g[0]));
            assert_true(g[1] == (float)empty);
            assert_true(g[2] == 0.5f);
            assert_true(g[3] == (float)empty);
        }
        assert_int_equal(cu.MemcpyHtoD(inf, hf, n * sizeof *hf), CUDA_SUCCESS);
    }
    cu.MemFree(inf);
    cu.MemFree(ind);
    cu.MemFree(out);
    cu.MemFree(keys);
    cu.MemFree(offs);
    free(hf);
    free(hd);
    rt_close(ctx);
}

/* A database tuned with --segmented: the library takes its winner (exact device). */
static void api_gpu_segmented_tuned(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    char db[128], cmd[512];
    snprintf(db, sizeof db, "%s/tuned_seg.db", api_util_gpu.dir);
    const char *bin = getenv("REDTUNE_BIN");
    snprintf(cmd, sizeof cmd, "%s --op min --segmented offsets --profiles len3,one --sizes 100000 "
             "--db %s > /dev/null 2>&1", bin ? bin : "build/redtune", db);
    assert_int_equal(system(cmd), 0);
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    char buf[1024];
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F32, 100000, 33333,
                                          0, buf, sizeof buf), RT_OK);
    if (!strstr(buf, "exact device") || !strstr(buf, "mean segment length 3.0"))
        fail_msg("%s", buf);
    /* One segment is the flat decision's (none tuned here: the built-in gridstride); two of
     * about 50000 elements take the tuned "one" profile's winner. */
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F32, 100000, 1, 0,
                                          buf, sizeof buf), RT_OK);
    if (!strstr(buf, "one segment") || !strstr(buf, "the built-in default"))
        fail_msg("%s", buf);
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F32, 100000, 2, 0,
                                          buf, sizeof buf), RT_OK);
    if (!strstr(buf, "mean segment length 100000.0"))
        fail_msg("%s", buf);
    for (int p = 0; p < segdata_profile_count(); p++) {
        seg_call(ctx, RT_LAYOUT_OFFSETS, 0, RT_MIN, RT_F32, p, 100000, 0);
        seg_call(ctx, RT_LAYOUT_OFFSETS, 1, RT_MIN, RT_F32, p, 100000, 1);
        seg_call_flags(ctx, RT_LAYOUT_OFFSETS, 0, RT_MIN, RT_F32, p, 100000, 0, RT_SEG_SKEWED);
        seg_call_flags(ctx, RT_LAYOUT_KEYS, 0, RT_MIN, RT_F32, p, 100000, 0, RT_SEG_SKEWED);
        /* RT_SEG_UNIFORM with the check, which decides from the offsets (heavy: skewed) */
        seg_call_flags(ctx, RT_LAYOUT_OFFSETS, 0, RT_MIN, RT_F32, p, 100000, 0, RT_SEG_UNIFORM);
    }
    /* RT_SEG_UNIFORM: the group-per-segment winner without its long-segment list (LONG=0),
     * said by explain; with RT_SEG_SKEWED, RT_EINVAL. */
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F32, 100000, 33333,
                                          RT_SEG_UNIFORM, buf, sizeof buf), RT_OK);
    if (!strstr(buf, "uniform (no long-segment list)")
        || (strstr(buf, ": seg_per ") && !strstr(buf, "LONG=0")))
        fail_msg("%s", buf);
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F32, 100000, 33333,
                                          RT_SEG_UNIFORM | RT_SEG_SKEWED, buf, sizeof buf),
                     RT_EINVAL);
    /* RT_SEG_SKEWED: the mean length 3 winner of this database is a group per segment
     * (seg_per) unless the tuner found otherwise; with the flag, only a balanced family
     * serves (the tuned "one" profile's, or the built-in seg_lb), and explain says so. */
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F32, 100000, 33333,
                                          RT_SEG_SKEWED, buf, sizeof buf), RT_OK);
    if (!strstr(buf, "skewed (load-balanced kernels only): seg_lb "))
        fail_msg("%s", buf);
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F32, 100000, 33333,
                                          16u, buf, sizeof buf), RT_EINVAL);
    rt_close(ctx);
}

/* One segment [a, b) of offsets (docs/segmented.md, "One segment"): the flat decision for n
 * (gridstride, generated with RT_BOUNDS) reads a and b on the GPU. Against the reference of
 * the middle one of the segments {0, a, b, n}: bounds at either end, empty, one element, odd
 * starts (off 16-byte alignment), 32- and 64-bit offsets, an operator with an index (argmax:
 * the index in the whole input), a struct accumulator (var_mean) and narrow types, through
 * the shipped database (when built) and the built-in default; explained as one segment;
 * offsets out of order or out of range, unchecked, read and write nothing outside the input
 * and out[0]; with RT_SEG_CHECK they are refused as before. One segment of keys: the flat
 * reduction of the whole input (a bad key, unchecked, changes nothing outside out[0]). */
static void api_gpu_seg_one(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    char db[128];
    snprintf(db, sizeof db, "%s/empty_one.db", api_util_gpu.dir);
    api_util_make_empty_db(db);
    const char *dbs[2] = {db, access("build/redtune.db", R_OK) == 0 ? "build/redtune.db" : db};
    static const struct { rt_op op; rt_type t; } cases[] = {
        {RT_SUM, RT_F32}, {RT_MIN, RT_F64}, {RT_ARGMAX, RT_F32}, {RT_VAR_MEAN, RT_F32},
        {RT_SUM, RT_BF16}, {RT_AMAX, RT_BF16}, {RT_MAX, RT_I8}, {RT_SUM, RT_I32},
    };
    const unsigned long long n = 300007;
    const unsigned long long ab[][2] = {
        {0, n}, {3, n - 5}, {17, 17}, {n - 1, n}, {1234, 1235}, {5, 70001}, {0, 0}, {n, n},
    };
    for (int di = 0; di < 2; di++) {
        rt_ctx *ctx = NULL;
        assert_int_equal(rt_open(dbs[di], 0, &ctx), RT_OK);
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            rt_op op = cases[k].op;
            rt_type type = cases[k].t;
            size_t es = optype_size(type), rs = optype_res_size(op, type);
            char *host = malloc(n * es);
            assert_non_null(host);
            data_fill(host, type, op, n, 77 + k, n / 3, 2);
            CUdeviceptr in, offs, out;
            assert_int_equal(cu.MemAlloc(&in, n * es), CUDA_SUCCESS);
            assert_int_equal(cu.MemAlloc(&offs, 16), CUDA_SUCCESS);
            assert_int_equal(cu.MemAlloc(&out, 2 * rs), CUDA_SUCCESS);
            assert_int_equal(cu.MemcpyHtoD(in, host, n * es), CUDA_SUCCESS);
            for (size_t j = 0; j < sizeof ab / sizeof ab[0]; j++)
                for (int off64 = 0; off64 < 2; off64++) {
                    unsigned long long off[4] = {0, ab[j][0], ab[j][1], n};
                    seg_data d = {n, 3, off, 0, 0}, d1 = {n, 1, off + 1, 0, 0};
                    seg_ref *refs;
                    assert_int_equal(segdata_reference(host, type, op, &d, &refs, 2), RT_OK);
                    long long h64[2] = {(long long)ab[j][0], (long long)ab[j][1]};
                    int h32[2] = {(int)ab[j][0], (int)ab[j][1]};
                    assert_int_equal(cu.MemcpyHtoD(offs, off64 ? (void *)h64 : (void *)h32,
                                                   off64 ? 16 : 8), CUDA_SUCCESS);
                    assert_int_equal(cu.MemsetD8(out, 0xa5, 2 * rs), CUDA_SUCCESS);
                    int rc = rt_reduce_offsets(ctx, op, type, (const void *)(uintptr_t)in, n,
                                               (const void *)(uintptr_t)offs, 1,
                                               (void *)(uintptr_t)out, NULL,
                                               (off64 ? RT_SEG_OFF64 : 0) | (j & 1 ? RT_SEG_CHECK : 0));
                    if (rc)
                        fail_msg("%s", rt_errmsg(ctx));
                    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
                    unsigned char got[64];
                    assert_int_equal(cu.MemcpyDtoH(got, out, 2 * rs), CUDA_SUCCESS);
                    char why[1024];
                    if (!segdata_check(got, refs + 1, type, op, &d1, why, sizeof why))
                        fail_msg("%s: one segment %s %s [%llu, %llu) of %llu, %d-bit offsets: %s",
                                 dbs[di], rt_op_name(op), rt_type_name(type), ab[j][0], ab[j][1],
                                 n, off64 ? 64 : 32, why);
                    for (size_t b = rs; b < 2 * rs; b++)
                        assert_int_equal(got[b], 0xa5);
                    free(refs);
                }
            /* One segment of keys (all 0): the flat reduction of the whole input, the keys
             * unread; checked, and unchecked with a bad key (no fault, out[0] only). */
            CUdeviceptr keys;
            assert_int_equal(cu.MemAlloc(&keys, n * 4), CUDA_SUCCESS);
            for (int kk = 0; kk < 2; kk++) {
                unsigned long long off[4] = {0, 0, n, n};
                seg_data d = {n, 3, off, 0, 0}, d1 = {n, 1, off + 1, 0, 0};
                seg_ref *refs;
                assert_int_equal(segdata_reference(host, type, op, &d, &refs, 2), RT_OK);
                const unsigned seven = 7;
                assert_int_equal(cu.MemsetD8(keys, 0, n * 4), CUDA_SUCCESS);
                if (kk)
                    assert_int_equal(cu.MemcpyHtoD(keys + 4 * (n / 2), &seven, 4), CUDA_SUCCESS);
                assert_int_equal(cu.MemsetD8(out, 0xa5, 2 * rs), CUDA_SUCCESS);
                assert_int_equal(rt_reduce_keys(ctx, op, type, (const void *)(uintptr_t)in,
                                                (const unsigned *)(uintptr_t)keys, n, 1,
                                                (void *)(uintptr_t)out, NULL,
                                                kk ? 0 : RT_SEG_CHECK), RT_OK);
                assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
                unsigned char got[64];
                assert_int_equal(cu.MemcpyDtoH(got, out, 2 * rs), CUDA_SUCCESS);
                char why[1024];
                if (!kk && !segdata_check(got, refs + 1, type, op, &d1, why, sizeof why))
                    fail_msg("%s: one segment of keys %s %s, n = %llu: %s", dbs[di],
                             rt_op_name(op), rt_type_name(type), n, why);
                for (size_t b = rs; b < 2 * rs; b++)
                    assert_int_equal(got[b], 0xa5);
                free(refs);
            }
            assert_int_equal(rt_reduce_keys(ctx, op, type, (const void *)(uintptr_t)in,
                                            (const unsigned *)(uintptr_t)keys, n, 1,
                                            (void *)(uintptr_t)out, NULL, RT_SEG_CHECK), RT_EINVAL);
            cu.MemFree(keys);
            char buf[1024];
            assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_KEYS, op, type, n, 1, 0, buf,
                                                  sizeof buf), RT_OK);
            if (!strstr(buf, "one segment, the flat reduction of in[0..n)"))
                fail_msg("explain: %s", buf);
            assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, op, type, n, 1, 0, buf,
                                                  sizeof buf), RT_OK);
            if (!strstr(buf, "one segment") || !strstr(buf, "gridstride"))
                fail_msg("explain: %s", buf);
            /* Unchecked offsets out of range or out of order: no fault, out[0] only. */
            const long long bad[][2] = {{-5, (long long)n + 100}, {50, 10}, {(long long)n + 7, (long long)n + 9}};
            for (size_t j = 0; j < sizeof bad / sizeof bad[0]; j++) {
                assert_int_equal(cu.MemcpyHtoD(offs, bad[j], 16), CUDA_SUCCESS);
                assert_int_equal(cu.MemsetD8(out, 0xa5, 2 * rs), CUDA_SUCCESS);
                assert_int_equal(rt_reduce_offsets(ctx, op, type, (const void *)(uintptr_t)in, n,
                                                   (const void *)(uintptr_t)offs, 1,
                                                   (void *)(uintptr_t)out, NULL, RT_SEG_OFF64), RT_OK);
                assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
                unsigned char got[64];
                assert_int_equal(cu.MemcpyDtoH(got, out, 2 * rs), CUDA_SUCCESS);
                for (size_t b = rs; b < 2 * rs; b++)
                    assert_int_equal(got[b], 0xa5);
                assert_int_equal(rt_reduce_offsets(ctx, op, type, (const void *)(uintptr_t)in, n,
                                                   (const void *)(uintptr_t)offs, 1,
                                                   (void *)(uintptr_t)out, NULL,
                                                   RT_SEG_OFF64 | RT_SEG_CHECK), RT_EINVAL);
            }
            cu.MemFree(in);
            cu.MemFree(offs);
            cu.MemFree(out);
            free(host);
        }
        /* The shipped H100 rows serve min f64 at 2^28 with tree_sequential (multipass, no
         * @bounds): one segment takes the gridstride winner nearest to n instead. */
        char buf[1024];
        assert_int_equal(rt_explain(ctx, RT_MIN, RT_F64, 1ull << 28, buf, sizeof buf), RT_OK);
        if (strstr(buf, "tree_sequential")) {
            assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F64,
                                                  1ull << 28, 1, 0, buf, sizeof buf), RT_OK);
            if (!strstr(buf, "one segment") || !strstr(buf, ": gridstride ")
                || !strstr(buf, "nearest to n") || !strstr(buf, "cannot read its bounds"))
                fail_msg("explain: %s", buf);
        }
        rt_close(ctx);
    }
}

/* A winner of 'layout' ("offsets:len3") for (op, type) at n with nseg segments: the unit this
 * library generates for family and params with LAYOUT=2, stored as source only (no CUBIN). */
static void put_seg_winner(store *s, long long dev, rt_op op, rt_type type, const char *family,
                           const char *params, const char *layout, long long n, long long nseg)
{
    rt_err e;
    rt_config cfg;
    char fmt[256], hash[RT_HASH_HEX], *src = NULL;
    assert_int_equal(config_parse(family_find(family), params, &cfg, &e), RT_OK);
    assert_int_equal(config_set(&cfg, "LAYOUT", 2, &e), RT_OK);
    config_format(&cfg, fmt, sizeof fmt);
    assert_int_equal(codegen_emit(&cfg, op, type, &src, &e), RT_OK);
    hash_hex(src, strlen(src), hash);
    assert_int_equal(store_put_kernel(s, hash, family, fmt, src, &e), RT_OK);
    const double us = 20.0, mean = (double)n / (double)nseg;
    store_measurement m = {dev, 0, hash, rt_op_name(op), rt_type_name(type), layout, n, 0, "ok",
                           "", us, us, us, 10, 1.0, 0.5, 1, 1, nseg, mean, 0, NULL, NULL};
    assert_int_equal(store_put_measurement(s, &m, &e), RT_OK);
    assert_int_equal(store_update_best(s, dev, rt_op_name(op), rt_type_name(type), layout, n, 0,
                                       &e), RT_OK);
    free(src);
}

/*
 * Winners whose kernels cannot be made here (runtime/api_kernel.c, api_builtin_instead): the
 * flat winner of min f32 at 2^20 and the offsets winner of min f32 (len3) at 2^20 have
 * parameters that config_parse takes but their templates' static_asserts refuse (gridstride
 * G = 32: "G must be in 1..16"; seg_pipe KB = 24: "KB is 1..20"), stored with no CUBIN, so
 * NVRTC fails on each, as it would on a variant of a winner (OFF64=1, V=1, LONG=0) that the
 * tuner never compiled. The calls still work, served by the built-in defaults: gridstride for
 * the flat call, seg_lb for 32- and 64-bit offsets, and for one segment the flat decision's
 * gridstride with its bounds. rt_explain and rt_explain_segmented report the built-in
 * default's level and the winner passed over with NVRTC's reason; REDTUNE_LOG=warn says it in
 * one line a decision, naming the winner, this GPU and the static_assert.
 */
static void api_gpu_seg_fallback(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    char db[128], path[] = "/tmp/redtune_fallback_errXXXXXX", line[2048], want[512];
    rt_err e;
    store *s = NULL;
    const unsigned long long n = 1ULL << 20;
    snprintf(db, sizeof db, "%s/fallback.db", api_util_gpu.dir);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    long long id = api_util_put_gpu(s, NULL, NULL, 0, 0, 0);
    api_util_entry en[] = {
        {id, RT_MIN, RT_F32, "gridstride", "B=256 V=4 U=4 G=32", 1 << 20, 0, NULL, 5.0},
    };
    api_util_put_entries(s, en, 1);
    put_seg_winner(s, id, RT_MIN, RT_F32, "seg_pipe",
                   "B=256 SEGS=2 LANES=1 V=4 RV=1 KB=24 H=0 LONG=128", "offsets:len3",
                   (long long)n, (long long)(n / 3));
    store_close(s);
    int len3 = -1;
    for (int p = 0; p < segdata_profile_count(); p++)
        if (!strcmp(segdata_profile_name(p), "len3"))
            len3 = p;
    assert_true(len3 >= 0);

    setenv("REDTUNE_LOG", "warn", 1);
    rt_ctx *ctx = NULL;
    int rc = rt_open(db, 0, &ctx);
    unsetenv("REDTUNE_LOG");
    assert_int_equal(rc, RT_OK);

    /* The decisions, made by the explains (the calls below share them: aligned pointers,
     * RT_SEG_CHECK finding len3's lengths uniform), with stderr caught. */
    char fx[4096], sx[2][4096], ox[4096], fmsg[1024] = "", smsg[2][1024] = {"", ""},
         omsg[1024] = "";
    int saved = api_util_stderr_into(path);
    int rf = rt_explain(ctx, RT_MIN, RT_F32, n, fx, sizeof fx);
    if (rf)
        snprintf(fmsg, sizeof fmsg, "%s", rt_errmsg(ctx));
    int rs[2];
    for (int w = 0; w < 2; w++) {
        rs[w] = rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F32, n, n / 3,
                                     RT_SEG_UNIFORM | (w ? RT_SEG_OFF64 : 0), sx[w],
                                     sizeof sx[w]);
        if (rs[w])
            snprintf(smsg[w], sizeof smsg[w], "%s", rt_errmsg(ctx));
    }
    int ro = rt_explain_segmented(ctx, RT_LAYOUT_OFFSETS, RT_MIN, RT_F32, n, 1, 0, ox, sizeof ox);
    if (ro)
        snprintf(omsg, sizeof omsg, "%s", rt_errmsg(ctx));
    char *said = api_util_stderr_back(path, saved);
    if (rf || rs[0] || rs[1] || ro)
        fail_msg("explains: %s | %s | %s | %s\n%s", fmsg, smsg[0], smsg[1], omsg, said);

    /* rt_explain: the built-in default, the winner passed over and why. */
    if (!strstr(fx, "kernel: gridstride B=256 V=4 U=4 G=4 ")
        || !strstr(fx, "database entry: none used: the winner for this size, gridstride B=256 "
                   "V=4 U=4 G=32 (device \"")
        || !strstr(fx, "cannot be made here: gridstride.cu: NVRTC_ERROR_COMPILATION for ")
        || !strstr(fx, "G must be in 1..16")
        || !strstr(fx, "fallback level: built-in default (this GPU"))
        fail_msg("rt_explain:\n%s", fx);
    for (int w = 0; w < 2; w++)
        if (!strstr(sx[w], " uniform (no long-segment list): seg_lb ")
            || !strstr(sx[w], "from: no tuned entry used: the winner tuned on ")
            || !strstr(sx[w], "(seg_pipe LAYOUT=2 OFF64=0 B=256 ")
            || !strstr(sx[w], "KB=24")
            || !strstr(sx[w], "KB is 1..20")
            || !strstr(sx[w], "\nlevel: built-in default\n"))
            fail_msg("rt_explain_segmented (%d-bit offsets):\n%s", w ? 64 : 32, sx[w]);
    if (!strstr(ox, "nseg=1: one segment") || !strstr(ox, ": gridstride B=256 V=4 U=4 G=4 ")
        || !strstr(ox, "from: no tuned flat entry used: the flat winner for n, gridstride "
                   "B=256 V=4 U=4 G=32")
        || !strstr(ox, "G must be in 1..16") || !strstr(ox, "\nlevel: built-in default\n"))
        fail_msg("rt_explain_segmented (one segment):\n%s", ox);

    /* REDTUNE_LOG=warn: one line a decision, the winner, this GPU and NVRTC's reason. */
    snprintf(want, sizeof want, "redtune: warn: min f32 n = 2^20: the database's winner "
             "gridstride B=256 V=4 U=4 G=32 (tuned on \"%s\", exact device) cannot be made for "
             "this GPU (\"%s\", %s): ", api_util_gpu.dev.name, api_util_gpu.dev.name,
             api_util_gpu.arch);
    api_util_line_of(said, want, line, sizeof line);
    if (strncmp(line, want, strlen(want)) || !strstr(line, "G must be in 1..16")
        || !strstr(line, "; the built-in default gridstride B=256 V=4 U=4 G=4 runs instead"))
        fail_msg("no warning: %s\nstderr:\n%s", want, said);
    const char *head = "redtune: warn: offsets min f32 n in [2^20, 2^21), mean segment length "
                       "in [2^1.5, 2^2.0), uniform lengths ";
    for (int w = 0; w < 2; w++) {
        snprintf(want, sizeof want, "(no long-segment list): the database's winner seg_pipe "
                 "LAYOUT=2 OFF64=%d B=256 ", w);
        api_util_line_of(said, want, line, sizeof line);
        if (strncmp(line, head, strlen(head))
            || !strstr(line, "KB=24") || !strstr(line, "LONG=0 (re-specialised for this call)")
            || !strstr(line, "cannot be made for this GPU") || !strstr(line, "KB is 1..20")
            || !strstr(line, "; the built-in default seg_lb "))
            fail_msg("no warning for %d-bit offsets; stderr:\n%s", w ? 64 : 32, said);
    }
    free(said);

    /* The calls, served by the built-in defaults: the flat minimum, every len3 segment against
     * the reference (32- and 64-bit offsets), and one segment with its bounds on the GPU. */
    float *hx = malloc(n * sizeof *hx), got = 0.0f;
    assert_non_null(hx);
    for (unsigned long long i = 0; i < n; i++)
        hx[i] = (float)((i * 7919u) % 100003u) - 500.0f;
    hx[n / 3] = -1.0e6f;
    hx[5] = -2.0e6f;   /* outside the one segment below */
    CUdeviceptr in, out, offs;
    assert_int_equal(cu.MemAlloc(&in, n * sizeof *hx), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&offs, 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(in, hx, n * sizeof *hx), CUDA_SUCCESS);
    rc = rt_reduce(ctx, RT_MIN, RT_F32, (const void *)(uintptr_t)in, n, (void *)(uintptr_t)out,
                   NULL);
    if (rc)
        fail_msg("rt_reduce: %s", rt_errmsg(ctx));
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyDtoH(&got, out, sizeof got), CUDA_SUCCESS);
    assert_true(got == -2.0e6f);
    const int ab[2] = {6, (int)n - 7};
    assert_int_equal(cu.MemcpyHtoD(offs, ab, sizeof ab), CUDA_SUCCESS);
    rc = rt_reduce_offsets(ctx, RT_MIN, RT_F32, (const void *)(uintptr_t)in, n,
                           (const void *)(uintptr_t)offs, 1, (void *)(uintptr_t)out, NULL, 0);
    if (rc)
        fail_msg("rt_reduce_offsets, one segment: %s", rt_errmsg(ctx));
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyDtoH(&got, out, sizeof got), CUDA_SUCCESS);
    assert_true(got == -1.0e6f);
    seg_call(ctx, RT_LAYOUT_OFFSETS, 0, RT_MIN, RT_F32, len3, n, 0);
    seg_call(ctx, RT_LAYOUT_OFFSETS, 1, RT_MIN, RT_F32, len3, n, 0);
    cu.MemFree(in);
    cu.MemFree(out);
    cu.MemFree(offs);
    free(hx);
    rt_close(ctx);
}

int test_api_gpu_seg_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_gpu_segmented),
        cmocka_unit_test(api_gpu_all_nan),
        cmocka_unit_test(api_gpu_seg_empty_null),
        cmocka_unit_test(api_gpu_seg_then_flat),
        cmocka_unit_test(api_gpu_segmented_tuned),
        cmocka_unit_test(api_gpu_seg_one),
        cmocka_unit_test(api_gpu_seg_fallback),
    };
    return cmocka_run_group_tests_name("api_gpu_seg", tests, api_util_gpu_setup,
                                       api_util_gpu_teardown);
}
