/*
 * test_api_axis_gpu_db.c - libredtune's reductions along an axis on the GPU with winners of a
 * database (runtime/api_axis.c, docs/axis.md).
 *
 * Group "api_axis_gpu_db" (skipped, and counted, with no GPU): winners of this GPU of both
 * kinds (rows and columns) for the nearest tuned shape, named by rt_explain_axis; a database
 * of RT_RESULT_INDEX's winners alone; winners whose kernels NVRTC refuses, replaced by the
 * built-in defaults (said by rt_explain_axis, REDTUNE_LOG=warn and REDTUNE_CAPTURE). The
 * shared fixture and the checked call are tests/api_axis_util.c's.
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



/* A new database 'name' in the test directory (its path into db), open for writing, with this
 * GPU's device row (its id into *dev). */
static store *db_here(const char *name, char *db, size_t len, long long *dev)
{
    rt_err e;
    store *s = NULL;
    snprintf(db, len, "%s/%s", api_util_gpu.dir, name);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    assert_int_equal(store_put_device(s, &api_util_gpu.dev, 0, dev, &e), RT_OK);
    return s;
}

/* Winners of this GPU in a database made here: the nearest tuned shape of the same kind runs,
 * and rt_explain_axis names it. */
static void axis_gpu_database(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
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
            assert_int_equal(nvrtc_compile(src, "axis.cu", api_util_gpu.arch, &o, &e), RT_OK);
            store_binary b = {o.cubin, o.size, -1, -1, NULL};
            assert_int_equal(store_put_kernel(s, hash, win[k].family, params, src, &e), RT_OK);
            assert_int_equal(store_put_binary(s, hash, api_util_gpu.arch, nvrtc_version(), &b, &e),
                             RT_OK);
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
    axis_gpu_call(ctx, RT_SUMSQ, RT_F32, 3000, 5000, 1, 0, 0);
    axis_gpu_call(ctx, RT_SUMSQ, RT_F32, 4096, 4096, 2, 1, 0);
    for (size_t j = 0; j < AXIS_GPU_NSHAPES; j++) {
        const unsigned long long *sh = axis_gpu_shapes[j];
        axis_gpu_call(ctx, RT_SUM, RT_F32, sh[0], sh[1], sh[2], (int)j % 2, 0);
    }
    axis_gpu_call(ctx, RT_SUM, RT_F32, 4096, 4096, 1, 1, 0);
    rt_close(ctx);
}

/* RT_RESULT_INDEX with a database that holds only the {value, index} result's winners: the
 * axis lookup runs them for the index alone (and says so), its sibling too; the flat and the
 * segmented calls give the index of the pair, 8 bytes a result. */
static void axis_gpu_index_result(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    /* the database: argmax f32's winner of [65536 x 128] rows, the pair's, no CUBIN */
    char db[128], params[256];
    long long dev = 0;
    store *s = db_here("pair.db", db, sizeof db, &dev);
    put_axis_emitted(s, dev, RT_ARGMAX, RT_F32, "axis_rows", "L=4 CHUNK=0", 65536, 128, 1,
                         params, sizeof params);
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
    axis_gpu_call(ctx, RT_ARGMAX, RT_RESULT_INDEX(RT_F32), 50000, 100, 1, 0, 0);
    axis_gpu_call(ctx, RT_ARGMIN, RT_RESULT_INDEX(RT_F32), 4096, 333, 1, 1, 1);
    axis_gpu_call(ctx, RT_ARGMAX, RT_RESULT_INDEX(RT_F32), 3, 5000, 7, 0, 0);

    /* flat and offsets: the index of the pair */
    const unsigned long long n = 1000003, nseg = 1000;
    float *h = malloc(n * sizeof *h);
    unsigned *off = malloc((nseg + 1) * sizeof *off);
    assert_non_null(h);
    assert_non_null(off);
    axis_gpu_fill(RT_F32, h, n, 7);
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
 * calls still work, served by the built-in defaults of their axis_gpu_shapes (rt_reduce_axis and
 * rt_reduce_axis_temp against the reference); rt_explain_axis reports the built-in default's
 * level, the winner passed over and NVRTC's reason; REDTUNE_LOG=warn says it in one line a
 * decision, naming the winner, this GPU and the static_assert; REDTUNE_CAPTURE records the
 * calls with fallback builtin.
 */
static void axis_gpu_fallback(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    char db[128], rows[256], cols[256], cases[128], path[] = "/tmp/redtune_axisfb_errXXXXXX";
    long long dev = 0;
    store *s = db_here("fallback.db", db, sizeof db, &dev);
    put_axis_emitted(s, dev, RT_MIN, RT_F32, "axis_rows", "B=256 L=32 V=4 U=3 CHUNK=0",
                         1024, 4096, 1, rows, sizeof rows);
    put_axis_emitted(s, dev, RT_MIN, RT_F32, "axis_cols", "B=256 TX=32 CV=2 U=3 CHUNK=0", 1,
                         4096, 64, cols, sizeof cols);
    store_close(s);
    snprintf(cases, sizeof cases, "%s/fallback_cases.tsv", api_util_gpu.dir);
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
                 "class, %s %s (device \"%s\"", wfam[k], wparams[k], api_util_gpu.dev.name);
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
                 "NVRTC_ERROR_COMPILATION for %s", cls[k], wfam[k], wparams[k],
                 api_util_gpu.dev.name, api_util_gpu.dev.name, api_util_gpu.arch, wfam[k],
                 api_util_gpu.arch);
        snprintf(want, sizeof want, "; the built-in default %s runs instead", b);
        api_util_line_of(said, head, line, sizeof line);
        if (strncmp(line, head, strlen(head)) || !strstr(line, ": U must be 1, 2, 4 or 8")
            || strcmp(line + strlen(line) - strlen(want), want))
            fail_msg("no warning: %s\nstderr:\n%s", head, said);
    }
    free(said);

    /* The calls, served by the built-in defaults, against the reference: the classes the
     * explains decided (rows; columns one element off, and in the caller's storage). */
    axis_gpu_call(ctx, RT_MIN, RT_F32, 1000, 4096, 1, 0, 0);
    axis_gpu_call(ctx, RT_MIN, RT_F32, 1000, 4096, 1, 1, 0);
    axis_gpu_call(ctx, RT_MIN, RT_F32, 1, 4096, 64, 1, 0);
    axis_gpu_call(ctx, RT_MIN, RT_F32, 1, 4096, 64, 0, 1);
    rt_close(ctx);
    char want[1024], *got = NULL;
    size_t len;
    snprintf(want, sizeof want, "min\tf32\taxis:1000x4096x1\t4096000\t1000\tbuiltin\t-\t%s\n"
             "min\tf32\taxis:1x4096x64\t262144\t64\tbuiltin\t-\t%s\n", api_util_gpu.dev.name,
             api_util_gpu.dev.name);
    got = api_util_slurp(cases, &len);
    assert_non_null(got);
    if (!strstr(got, want))
        fail_msg("REDTUNE_CAPTURE:\n%s", got);
    free(got);
}

int test_api_axis_gpu_db_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(axis_gpu_database),
        cmocka_unit_test(axis_gpu_index_result),
        cmocka_unit_test(axis_gpu_fallback),
    };
    return cmocka_run_group_tests_name("api_axis_gpu_db", tests, axis_gpu_setup, axis_gpu_teardown);
}
