/*
 * test_api_gpu_user.c - libredtune's user operators on the GPU (rt_register_op in
 * runtime/api*.c, docs/ops.md), end to end.
 *
 * Group "api_gpu_user" (skipped, and counted, with no GPU): registering on a context (again,
 * clashing, not compiling); the built-in defaults for a non-commutative operator (affine maps,
 * tests/affine.h) and a commutative one (xor); flat and segmented results against loops, and
 * n = 0's identity; a database tuned with --op-file serving the same definition and not
 * another one of the same name.
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
#include "tuner/opfile.h"
#include "tuner/segdata.h"
#include "tests/affine.h"
#include "tests/api_util.h"

/* ---------------------------------------------------------------- GPU: user operators */

/* n affine maps with odd slopes, as lua/ops/affine.lua's sample makes them. */
static uint64_t *affine_data(unsigned long long n, uint64_t seed)
{
    uint64_t *h = malloc((n + 2) * sizeof *h);
    assert_non_null(h);
    for (unsigned long long i = 0; i < n + 2; i++) {
        uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        h[i] = (z ^ (z >> 31)) | (1ULL << 32);
    }
    return h;
}

static uint64_t affine_fold(const uint64_t *h, unsigned long long lo, unsigned long long hi)
{
    uint64_t acc = 0x100000000ULL;
    for (unsigned long long i = lo; i < hi; i++)
        acc = affine_combine(acc, h[i]);
    return acc;
}

/* rt_reduce with the registered affine operator 'op' over n maps starting 'shift' elements
 * past an aligned address, against a left-to-right loop. */
static void user_flat(rt_ctx *ctx, rt_op op, unsigned long long n, int shift)
{
    uint64_t *h = affine_data(n, 99 + n), got = 0;
    CUdeviceptr in, out;
    assert_int_equal(cu.MemAlloc(&in, (n + 2) * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(in, h, (n + 2) * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(out, 0xa5, 16), CUDA_SUCCESS);
    if (rt_reduce(ctx, op, RT_U64, (const void *)(uintptr_t)(in + 8 * shift), n,
                  (void *)(uintptr_t)out, NULL))
        fail_msg("n=%llu: %s", n, rt_errmsg(ctx));
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyDtoH(&got, out, 8), CUDA_SUCCESS);
    uint64_t want = affine_fold(h + shift, 0, n);
    if (got != want)
        fail_msg("affine n=%llu shift %d: got %016llx, want %016llx", n, shift,
                 (unsigned long long)got, (unsigned long long)want);
    cu.MemFree(in);
    cu.MemFree(out);
    free(h);
}

/* The segmented calls with the affine operator: every segment composed in order. */
static void user_seg(rt_ctx *ctx, rt_op op, int layout, int profile, unsigned long long n)
{
    seg_data d;
    size_t segbytes;
    assert_int_equal(segdata_make(profile, n, 5 + n + profile, &d), RT_OK);
    uint64_t *h = affine_data(n, 7 + profile);
    void *hseg = segdata_descriptor(&d, layout, 0, &segbytes);
    assert_non_null(hseg);
    CUdeviceptr in, seg, out;
    assert_int_equal(cu.MemAlloc(&in, (n + 2) * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&seg, segbytes), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, (d.nseg + 1) * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(in, h, (n + 2) * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(seg, hseg, segbytes), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(out, 0xa5, (d.nseg + 1) * 8), CUDA_SUCCESS);
    int rc = layout == RT_LAYOUT_KEYS
        ? rt_reduce_keys(ctx, op, RT_U64, (const void *)(uintptr_t)in,
                         (const unsigned *)(uintptr_t)seg, n, d.nseg, (void *)(uintptr_t)out,
                         NULL, RT_SEG_CHECK)
        : rt_reduce_offsets(ctx, op, RT_U64, (const void *)(uintptr_t)in, n,
                            (const void *)(uintptr_t)seg, d.nseg, (void *)(uintptr_t)out, NULL,
                            RT_SEG_CHECK);
    if (rc)
        fail_msg("%s", rt_errmsg(ctx));
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    uint64_t *got = malloc((d.nseg + 1) * 8);
    assert_non_null(got);
    assert_int_equal(cu.MemcpyDtoH(got, out, (d.nseg + 1) * 8), CUDA_SUCCESS);
    for (unsigned long long sg = 0; sg < d.nseg; sg++) {
        uint64_t want = affine_fold(h, d.off[sg], d.off[sg + 1]);
        if (got[sg] != want)
            fail_msg("affine %s %s n=%llu segment %llu [%llu, %llu): got %016llx, want %016llx",
                     layout == 1 ? "keys" : "offsets", segdata_profile_name(profile), n, sg,
                     d.off[sg], d.off[sg + 1], (unsigned long long)got[sg],
                     (unsigned long long)want);
    }
    assert_int_equal(got[d.nseg], 0xa5a5a5a5a5a5a5a5ULL);
    cu.MemFree(in);
    cu.MemFree(seg);
    cu.MemFree(out);
    free(got);
    free(hseg);
    free(h);
    segdata_free(&d);
}

static void expect_in(const char *text, const char *what)
{
    if (!strstr(text, what))
        fail_msg("'%s' not in:\n%s", what, text);
}

/* User operators on a context: registration (again, clashing, not compiling), the built-in
 * defaults (diffwarps when it does not commute, gridstride when it does), flat and segmented
 * results against loops, n = 0's identity; then a database tuned with --op-file serves the
 * same definition and not another one of the same name. */
static void api_gpu_user_ops(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    char db[128], buf[2048];
    snprintf(db, sizeof db, "%s/empty_user.db", api_util_gpu.dir);
    api_util_make_empty_db(db);
    rt_ctx *ctx = NULL;
    rt_op aff = (rt_op)0, again = (rt_op)0, xr = (rt_op)0, other = (rt_op)0;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    rt_op_desc d_aff = {affine_op.name, affine_op.type, affine_op.identity, affine_op.combine, 0};
    assert_int_equal(rt_register_op(ctx, &d_aff, &aff), RT_OK);
    assert_int_equal(aff, RT_OP_USER_FIRST);
    assert_int_equal(rt_register_op(ctx, &d_aff, &again), RT_OK);
    assert_int_equal(again, aff);
    rt_op_desc clash = {"affine", RT_U64, "0x100000000ULL", "return a;", 0};
    assert_int_equal(rt_register_op(ctx, &clash, &other), RT_EINVAL);
    expect_in(rt_errmsg(ctx), "registered on this context with another definition");
    rt_op_desc broken = {"broken", RT_U32, "0", "return undefined_variable;", 1};
    assert_int_equal(rt_register_op(ctx, &broken, &other), RT_ENVRTC);
    expect_in(rt_errmsg(ctx), "operator 'broken' does not compile");
    expect_in(rt_errmsg(ctx), "undefined_variable");
    rt_op_desc d_xor = {"xor", RT_U32, "0", "return a ^ b;", 1};
    assert_int_equal(rt_register_op(ctx, &d_xor, &xr), RT_OK);
    assert_int_equal(xr, RT_OP_USER_FIRST + 1);   /* the failed one took no handle */

    int x = 0;
    assert_int_equal(rt_reduce(ctx, aff, RT_U32, &x, 1, &x, NULL), RT_EINVAL);
    expect_in(rt_errmsg(ctx), "operator 'affine' is registered for u64, not u32");
    assert_int_equal(rt_reduce(ctx, (rt_op)(RT_OP_USER_FIRST + 2), RT_U32, &x, 1, &x, NULL),
                     RT_EINVAL);
    expect_in(rt_errmsg(ctx), "unknown operator 258");

    user_flat(ctx, aff, 0, 0);   /* the identity map */
    user_flat(ctx, aff, 1, 1);
    user_flat(ctx, aff, 1000, 1);
    user_flat(ctx, aff, (1u << 20) + 3, 1);
    user_flat(ctx, aff, 5u << 20, 0);
    assert_int_equal(rt_explain(ctx, aff, RT_U64, 1000, buf, sizeof buf), RT_OK);
    expect_in(buf, "affine u64 (user operator, definition ");
    expect_in(buf, "kernel: diffwarps");
    expect_in(buf, "built-in default");
    size_t bytes = 1;
    assert_int_equal(rt_temp_bytes(ctx, aff, RT_U64, 5u << 20, &bytes), RT_OK);

    /* xor, commutative: gridstride; n = 0 gives 0. */
    unsigned hx[4099], want = 0, got = 1;
    for (int i = 0; i < 4099; i++)
        want ^= hx[i] = (unsigned)i * 2654435761u;
    CUdeviceptr in, out;
    assert_int_equal(cu.MemAlloc(&in, sizeof hx), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(in, hx, sizeof hx), CUDA_SUCCESS);
    assert_int_equal(rt_reduce(ctx, xr, RT_U32, (void *)(uintptr_t)in, 4099,
                               (void *)(uintptr_t)out, NULL), RT_OK);
    assert_int_equal(cu.MemcpyDtoH(&got, out, 4), CUDA_SUCCESS);
    assert_int_equal(got, want);
    assert_int_equal(rt_reduce(ctx, xr, RT_U32, (void *)(uintptr_t)in, 0,
                               (void *)(uintptr_t)out, NULL), RT_OK);
    assert_int_equal(cu.MemcpyDtoH(&got, out, 4), CUDA_SUCCESS);
    assert_int_equal(got, 0);
    assert_int_equal(rt_explain(ctx, xr, RT_U32, 4099, buf, sizeof buf), RT_OK);
    expect_in(buf, "kernel: gridstride");
    cu.MemFree(in);
    cu.MemFree(out);

    for (int layout = RT_LAYOUT_KEYS; layout <= RT_LAYOUT_OFFSETS; layout++)
        for (int p = 0; p < segdata_profile_count(); p++) {
            user_seg(ctx, aff, layout, p, 100003);
            user_seg(ctx, aff, layout, p, 999);
            user_seg(ctx, aff, layout, p, 0);
        }
    assert_int_equal(rt_explain_segmented(ctx, RT_LAYOUT_KEYS, aff, RT_U64, 1000, 10, 0, buf,
                                          sizeof buf), RT_OK);
    expect_in(buf, "seg_lb");
    rt_close(ctx);

    /* Tuned with the operator file: the same definition takes the tuned winner. */
    char cmd[512];
    const char *bin = getenv("REDTUNE_BIN");
    snprintf(db, sizeof db, "%s/tuned_user.db", api_util_gpu.dir);
    snprintf(cmd, sizeof cmd, "%s --op-file lua/ops/affine.lua --space lua/spaces/paper.lua "
             "--family tb2 --sizes 100000 --db %s > /dev/null 2>&1",
             bin ? bin : "build/redtune", db);
    assert_int_equal(system(cmd), 0);
    opfile of;
    rt_err e;
    if (opfile_load("lua/ops/affine.lua", &of, &e))
        fail_msg("%s", e.msg);
    rt_op_desc d_file = {of.op.name, of.op.type, of.op.identity, of.op.combine,
                         of.op.commutative};
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    assert_int_equal(rt_register_op(ctx, &d_file, &aff), RT_OK);
    assert_int_equal(rt_explain(ctx, aff, RT_U64, 100000, buf, sizeof buf), RT_OK);
    expect_in(buf, "kernel: tb2");
    expect_in(buf, "exact device");
    user_flat(ctx, aff, 100000, 1);
    rt_close(ctx);
    opfile_free(&of);

    /* Another definition under the same name: the tuned winners are not used. */
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    assert_int_equal(rt_register_op(ctx, &d_aff, &aff), RT_OK);
    assert_int_equal(rt_explain(ctx, aff, RT_U64, 100000, buf, sizeof buf), RT_OK);
    expect_in(buf, "are of another definition than the registered one");
    expect_in(buf, "built-in default");
    user_flat(ctx, aff, 100000, 1);
    rt_close(ctx);
}

int test_api_gpu_user_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_gpu_user_ops),
    };
    return cmocka_run_group_tests_name("api_gpu_user", tests, api_util_gpu_setup,
                                       api_util_gpu_teardown);
}
