/*
 * test_api_gpu.c - libredtune's flat reductions on the GPU (runtime/api*.c), end to end.
 *
 * Group "api_gpu" (skipped, and counted, with no GPU): every operator and type at n = 0, 1,
 * 1000, 5000, 2^20 + 3 on inputs one element past an aligned address, through a database made
 * here for this GPU (tests/api_util.h) and through the built-in default, with rt_explain's
 * account of each; a stored kernel whose source was edited; the fallback levels;
 * caller-supplied temporary storage and bad pointers; more streams than the context keeps
 * blocks for; one context used by four threads at once and by a thread with no context; no
 * NVRTC (a child run); REDTUNE_CAPTURE's record of the sizes with no winner.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "include/redtune.h"
#include "runtime/capture.h"
#include "runtime/driver.h"
#include "runtime/nvrtc.h"
#include "runtime/optype.h"
#include "runtime/store.h"
#include "tuner/data.h"
#include "tuner/pool.h"
#include "tuner/store_tune.h"
#include "tests/api_util.h"

/* ---------------------------------------------------------------- GPU: checking results */

/* Device buffers for one checker: n_max + 1 elements of 8 bytes, a 16-byte result. */
typedef struct bufs {
    CUdeviceptr in, out;
    void *host;
    unsigned long long n_max;
    CUstream s;
    int threads;   /* host threads for data_fill / data_reference */
} bufs;

static int bufs_make(bufs *b, unsigned long long n_max, int threads, CUstream s)
{
    memset(b, 0, sizeof *b);
    b->n_max = n_max;
    b->threads = threads;
    b->s = s;
    b->host = malloc((n_max + 1) * 8);
    if (!b->host || cu.MemAlloc(&b->in, (n_max + 1) * 8) || cu.MemAlloc(&b->out, 16))
        return -1;
    return 0;
}

static void bufs_free(bufs *b)
{
    if (b->in)
        cu.MemFree(b->in);
    if (b->out)
        cu.MemFree(b->out);
    free(b->host);
}

/*
 * Reduce n elements (starting one element past an aligned address) with rt_reduce on b->s,
 * or with rt_reduce_temp when temp is non-zero, and check the result against the CPU
 * reference (n == 0: the identity). 0 when right; else 1 with 'why'.
 */
static int check_one(rt_ctx *ctx, bufs *b, rt_op op, rt_type type, unsigned long long n,
                     CUdeviceptr temp, size_t temp_bytes, char *why, size_t len)
{
    size_t es = optype_size(type), acc = optype_res_size(op, type);   /* bytes written */
    unsigned char got[32], want[32];
    data_ref ref;
    int rc;

    if (n) {
        data_fill(b->host, type, op, n + 1, 1000 + n + op * 7 + type, n / 2 + 1, b->threads);
        data_reference((char *)b->host + es, type, op, n, &ref, b->threads);
        if (cu.MemcpyHtoD(b->in, b->host, (n + 1) * es))
            return snprintf(why, len, "upload failed"), 1;
    } else {
        optype_empty_result(op, type, want);
    }
    /* Poison the result, and make sure the poison lands before the reduction (the stream
     * may be non-blocking, unordered with the legacy stream the memset runs on). */
    if (cu.MemsetD8(b->out, 0xa5, 16) || cu.CtxSynchronize())
        return snprintf(why, len, "poisoning the result failed"), 1;
    const void *in = (const void *)(uintptr_t)(b->in + es);
    void *out = (void *)(uintptr_t)b->out;
    rc = temp ? rt_reduce_temp(ctx, op, type, in, n, out, (void *)(uintptr_t)temp, temp_bytes,
                               b->s)
              : rt_reduce(ctx, op, type, in, n, out, b->s);
    if (rc)
        return snprintf(why, len, "%s %s n=%llu: %s: %s", rt_op_name(op), rt_type_name(type),
                        n, rt_strerror(rc), rt_errmsg(ctx)), 1;
    CUresult r = cu.StreamSynchronize(b->s);
    if (r == CUDA_SUCCESS)
        r = cu.MemcpyDtoH(got, b->out, acc);
    if (r != CUDA_SUCCESS)
        return snprintf(why, len, "%s %s n=%llu: CUDA error %d after the reduction",
                        rt_op_name(op), rt_type_name(type), n, (int)r), 1;
    if (n == 0) {
        if (memcmp(got, want, acc))
            return snprintf(why, len, "%s %s n=0: not the identity", rt_op_name(op),
                            rt_type_name(type)), 1;
        return 0;
    }
    char w[512];
    if (!data_check(got, &ref, type, op, n, w, sizeof w))
        return snprintf(why, len, "%s %s n=%llu: %s", rt_op_name(op), rt_type_name(type), n,
                        w), 1;
    return 0;
}

/* 1000: tree_sequential over two blocks, so its partials use the temporary storage that
 * gridstride's counter shares, on the same stream, right before a gridstride launch (5000,
 * more than four times the 1000 the database tuned tree_sequential at, takes 2^20's winner). */
static const unsigned long long sizes[] = {0, 1, 1000, 5000, (1u << 20) + 3};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

/* Every op x type x size on ctx, on a non-blocking stream. */
static void check_all(rt_ctx *ctx)
{
    CUstream s;
    bufs b;
    char why[1024];
    int failures = 0;
    assert_int_equal(cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(bufs_make(&b, API_UTIL_NMAX, pool_cores(), s), 0);
    for (int op = 0; op < RT_OP_COUNT; op++)
        for (int t = 0; t < RT_TYPE_COUNT; t++)
            for (int k = 0; k < NSIZES && api_util_defined(op, t); k++)
                if (check_one(ctx, &b, op, t, sizes[k], 0, 0, why, sizeof why)) {
                    print_error("%s\n", why);
                    failures++;
                }
    bufs_free(&b);
    cu.StreamDestroy(s);
    assert_int_equal(failures, 0);
}

static void expect_explain(rt_ctx *ctx, rt_op op, rt_type type, unsigned long long n,
                           const char *const *want)
{
    char buf[2048];
    int rc = rt_explain(ctx, op, type, n, buf, sizeof buf);
    if (rc)
        print_error("%s\n", rt_errmsg(ctx));
    assert_int_equal(rc, RT_OK);
    for (int i = 0; want[i]; i++)
        if (!strstr(buf, want[i])) {
            print_error("%s %s n=%llu: no \"%s\" in:\n%s", rt_op_name(op), rt_type_name(type),
                        n, want[i], buf);
            fail();
        }
}

/* ---------------------------------------------------------------- GPU: tests */

static void api_gpu_database(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    api_util_need_exact_db();
    rt_ctx *ctx = NULL;
    char msg[1024];
    int rc = rt_open_err(api_util_gpu.exact_db, 0, &ctx, msg, sizeof msg);
    if (rc)
        print_error("%s\n", msg);
    assert_int_equal(rc, RT_OK);
    check_all(ctx);
    char tuned_small[64], tuned_large[64], cubin_db[64];
    snprintf(tuned_small, sizeof tuned_small, "tuned n = 1000, median 4.00 us");
    snprintf(tuned_large, sizeof tuned_large, "tuned n = %d, median 9.00 us", 1 << 20);
    snprintf(cubin_db, sizeof cubin_db, "CUBIN: from the database (made by NVRTC %d.%d)",
             nvrtc_version() / 1000, nvrtc_version() % 1000 / 10);
    const char *small[] = {"kernel: tree_sequential " API_UTIL_TS_PARAMS " (multipass plan",
                           "fallback level: exact device", tuned_small, cubin_db,
                           api_util_gpu.dev.name, NULL};
    const char *large[] = {"kernel: gridstride " API_UTIL_GS_PARAMS " (onelaunch plan",
                           "fallback level: exact device", tuned_large,
                           "CUBIN: compiled here by NVRTC",
                           "from the template, for the database's config", NULL};
    for (int op = 0; op < RT_OP_COUNT; op++)
        for (int t = 0; t < RT_TYPE_COUNT; t++) {
            if (!api_util_defined(op, t))
                continue;
            expect_explain(ctx, op, t, 1, small);
            expect_explain(ctx, op, t, 1000, small);
            expect_explain(ctx, op, t, 2048, small);      /* 2^11: nearer 1000 than 2^20 */
            expect_explain(ctx, op, t, 3000, large);      /* past 4 x 1000: 2^20's winner */
            expect_explain(ctx, op, t, 5000, large);
            expect_explain(ctx, op, t, API_UTIL_NMAX, large);
            expect_explain(ctx, op, t, 1ULL << 34, large);
        }
    const char *zero[] = {"n = 0: no kernel", NULL};
    expect_explain(ctx, RT_SUM, RT_F32, 0, zero);
    rt_close(ctx);
    assert_true(api_util_same_bytes(api_util_gpu.exact_db, api_util_gpu.exact_bytes,
                                    api_util_gpu.exact_len));
}

/* A stored kernel whose source was edited after it was stored (its hash kept) is never run:
 * a winner of a known family runs as the library's own unit for its config; one of an
 * unknown family is refused, RT_EDB naming the hash. */
static void api_gpu_tampered(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    api_util_need_exact_db();
    char db[128], hash[RT_HASH_HEX] = "";
    sqlite3 *raw = NULL;
    sqlite3_stmt *st = NULL;
    snprintf(db, sizeof db, "%s/tampered.db", api_util_gpu.dir);
    api_util_copy_file(api_util_gpu.exact_db, db);
    assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(raw, "SELECT hash FROM kernels WHERE family = "
                                        "'gridstride' AND instr(source, 'op sum, type f32 */')",
                                        -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    snprintf(hash, sizeof hash, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_exec(raw, "UPDATE kernels SET source = source || '// edited' "
                                  "WHERE family = 'gridstride'", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);

    /* A family this library knows: the winner runs as the library's own unit for its
     * config, so the edited source is never compiled, and the CUBIN is taken only if it was
     * stored for exactly that unit. */
    rt_ctx *ctx = NULL;
    CUdeviceptr in, out;
    const unsigned long long n = 1 << 20;
    float *host = malloc(n * sizeof *host), got = 0;
    assert_non_null(host);
    for (unsigned long long i = 0; i < n; i++)
        host[i] = (float)(i % 7);   /* exact in f32: the sum is 3 * n minus a little */
    double want = 0;
    for (unsigned long long i = 0; i < n; i++)
        want += host[i];
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    assert_int_equal(cu.MemAlloc(&in, n * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyHtoD(in, host, n * 4), CUDA_SUCCESS);
    int rc = rt_reduce(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)in, n,
                       (void *)(uintptr_t)out, NULL);
    if (rc)
        print_error("%d %s\n", rc, rt_errmsg(ctx));
    assert_int_equal(rc, RT_OK);
    assert_int_equal(cu.StreamSynchronize(NULL), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyDtoH(&got, out, 4), CUDA_SUCCESS);
    assert_true(got == (float)want);
    rt_close(ctx);

    /* A family it does not know (a database of a newer redtune): only then is the stored
     * source run, and an edited one is refused, naming its hash. */
    assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "UPDATE kernels SET family = 'from_the_future' "
                                  "WHERE family = 'gridstride'", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    rc = rt_reduce(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)in, n, (void *)(uintptr_t)out,
                   NULL);
    if (rc != RT_EDB || !strstr(rt_errmsg(ctx), hash))
        print_error("%d %s\n", rc, rt_errmsg(ctx));
    assert_int_equal(rc, RT_EDB);
    assert_non_null(strstr(rt_errmsg(ctx), hash));
    assert_non_null(strstr(rt_errmsg(ctx), "the SHA-256 of its source is"));
    assert_int_equal(cu.StreamSynchronize(NULL), CUDA_SUCCESS);
    free(host);
    cu.MemFree(in);
    cu.MemFree(out);
    rt_close(ctx);
}

static void api_gpu_builtin_default(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    char db[128];
    rt_err e;
    store *s = NULL;
    snprintf(db, sizeof db, "%s/foreign_gpu.db", api_util_gpu.dir);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    /* A winner for another major architecture only: it must not answer for this GPU. */
    long long id = api_util_put_gpu(s, "Imaginary GPU", "00000000000000000000000000000001", 1, 0,
                                    0);
    api_util_entry en[] = {
        {id, RT_SUM, RT_F32, "gridstride", API_UTIL_GS_PARAMS, 1000, 0, NULL, 3.0}};
    api_util_put_entries(s, en, 1);
    store_close(s);
    size_t len;
    char *before = api_util_slurp(db, &len);
    assert_non_null(before);

    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    check_all(ctx);
    for (int op = 0; op < RT_OP_COUNT; op++)
        for (int t = 0; t < RT_TYPE_COUNT; t++) {
            if (!api_util_defined(op, t))
                continue;
            char params[64];
            int v = (int)(16 / optype_size(t));
            snprintf(params, sizeof params, "kernel: gridstride B=256 V=%d U=%d G=4 "
                     "(onelaunch plan", v, 16 / v < 4 ? 16 / v : 4);
            const char *want[] = {params, "fallback level: built-in default",
                                  "database entry: none", "compiled here by NVRTC",
                                  "from the built-in template", NULL};
            expect_explain(ctx, op, t, 1000, want);
            expect_explain(ctx, op, t, API_UTIL_NMAX, want);
        }
    rt_close(ctx);
    assert_true(api_util_same_bytes(db, before, len));
    free(before);
}

/* REDTUNE_CAPTURE: a reduction at a size this GPU has no winner at writes its case once;
 * one at the tuned size writes nothing. */
static void api_gpu_capture(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    char db[128], cap[160], want[512];
    rt_err e;
    store *s = NULL;
    snprintf(db, sizeof db, "%s/capture.db", api_util_gpu.dir);
    snprintf(cap, sizeof cap, "%s/capture.tsv", api_util_gpu.dir);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    long long me = api_util_put_gpu(s, NULL, NULL, 0, 0, 0);
    api_util_entry en[] = {
        {me, RT_SUM, RT_F32, "gridstride", API_UTIL_GS_PARAMS, 1000, 0, NULL, 3.0}};
    api_util_put_entries(s, en, 1);
    store_close(s);

    rt_ctx *ctx = NULL;
    CUdeviceptr in, out;
    setenv("REDTUNE_CAPTURE", cap, 1);
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    unsetenv("REDTUNE_CAPTURE");
    assert_int_equal(cu.MemAlloc(&in, 5000 * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 16), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(in, 0, 5000 * 4), CUDA_SUCCESS);
    unsigned long long ns[] = {1000, 5000, 5000, 1000};
    for (int i = 0; i < 4; i++)
        assert_int_equal(rt_reduce(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)in, ns[i],
                                   (void *)(uintptr_t)out, NULL), RT_OK);
    assert_int_equal(cu.StreamSynchronize(NULL), CUDA_SUCCESS);
    rt_close(ctx);
    cu.MemFree(in);
    cu.MemFree(out);
    size_t len;
    char *got = api_util_slurp(cap, &len);
    assert_non_null(got);
    snprintf(want, sizeof want, "%ssum\tf32\tflat\t5000\t0\tnearest\t-\t%s\n",
             CAPTURE_HEADER, api_util_gpu.dev.name);
    assert_string_equal(got, want);
    free(got);
}

static void api_gpu_levels(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    char db[128], label[16];
    rt_err e;
    store *s = NULL;
    snprintf(db, sizeof db, "%s/levels.db", api_util_gpu.dir);
    snprintf(label, sizeof label, "sm_%d%d", api_util_gpu.dev.cc_major,
             api_util_gpu.dev.cc_minor + 1);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    long long me = api_util_put_gpu(s, NULL, NULL, 0, 0, 0);
    long long cc = api_util_put_gpu(s, "Other GPU, same cc", "00000000000000000000000000000002",
                                    0, 0, 10);
    long long major = api_util_put_gpu(s, "Other GPU, same major",
                                       "00000000000000000000000000000003", 0, 1, 0);
    api_util_entry en[] = {
        {cc, RT_SUM, RT_F32, "tree_sequential", API_UTIL_TS_PARAMS, 1000, 1, NULL, 5.0},
        {major, RT_MAX, RT_I32, "tree_sequential", API_UTIL_TS_PARAMS, 1000, 3, label, 6.0},
        /* the exact device answers even where another has a nearer tuned size */
        {me, RT_ARGMIN, RT_U64, "gridstride", API_UTIL_GS_PARAMS, 1 << 20, 1, NULL, 7.0},
        {cc, RT_ARGMIN, RT_U64, "tree_sequential", API_UTIL_TS_PARAMS, 1000, 1, NULL, 1.0},
    };
    api_util_put_entries(s, en, (int)(sizeof en / sizeof en[0]));
    store_close(s);

    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(db, 0, &ctx), RT_OK);
    const char *want_cc[] = {"fallback level: same compute capability", "Other GPU, same cc",
                             "tree_sequential", "CUBIN: from the database", NULL};
    expect_explain(ctx, RT_SUM, RT_F32, 1000, want_cc);
    /* Its CUBIN is labelled for another arch: compiled here, the library's unit for the
     * winner's config. */
    const char *want_major[] = {"fallback level: same major architecture",
                                "Other GPU, same major", "compiled here by NVRTC",
                                "from the template, for the database's config", NULL};
    expect_explain(ctx, RT_MAX, RT_I32, 1000, want_major);
    const char *want_exact[] = {"fallback level: exact device", "gridstride", NULL};
    expect_explain(ctx, RT_ARGMIN, RT_U64, 1000, want_exact);
    const char *want_builtin[] = {"fallback level: built-in default", NULL};
    expect_explain(ctx, RT_PROD, RT_F64, 1000, want_builtin);
    /* argmax has no winner of its own: argmin's, its sibling of the same cost */
    const char *want_kin[] = {"fallback level: exact device", "gridstride",
                              "the winner of argmin, an operator of the same cost", NULL};
    expect_explain(ctx, RT_ARGMAX, RT_U64, 1000, want_kin);

    CUstream st;
    bufs b;
    char why[1024];
    assert_int_equal(cu.StreamCreate(&st, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(bufs_make(&b, API_UTIL_NMAX, pool_cores(), st), 0);
    const struct { rt_op op; rt_type t; } cases[] = {
        {RT_SUM, RT_F32}, {RT_MAX, RT_I32}, {RT_ARGMIN, RT_U64}, {RT_PROD, RT_F64},
        {RT_ARGMAX, RT_U64}};
    int failures = 0;
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < NSIZES; k++)
            if (check_one(ctx, &b, cases[i].op, cases[i].t, sizes[k], 0, 0, why, sizeof why)) {
                print_error("%s\n", why);
                failures++;
            }
    bufs_free(&b);
    cu.StreamDestroy(st);
    rt_close(ctx);
    assert_int_equal(failures, 0);
}

/* Caller-supplied temporary storage, garbage in it; bad pointers; the legacy stream. */
static void api_gpu_temp_and_pointers(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    api_util_need_exact_db();
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(api_util_gpu.exact_db, 0, &ctx), RT_OK);
    CUstream st;
    bufs b;
    char why[1024];
    int failures = 0;
    size_t bytes = 0, most = 0;
    assert_int_equal(cu.StreamCreate(&st, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(bufs_make(&b, API_UTIL_NMAX, pool_cores(), st), 0);
    for (int k = 0; k < NSIZES; k++) {
        assert_int_equal(rt_temp_bytes(ctx, RT_ARGMAX, RT_F64, sizes[k], &bytes), RT_OK);
        if (sizes[k] == 0 || sizes[k] == API_UTIL_NMAX)   /* gridstride, a one-launch plan */
            assert_true(sizes[k] ? bytes > 256 : bytes == 0);
        if (bytes > most)
            most = bytes;
    }
    CUdeviceptr temp;
    assert_int_equal(cu.MemAlloc(&temp, most + 4096), CUDA_SUCCESS);
    for (int round = 0; round < 2; round++)
        for (int op = 0; op < RT_OP_COUNT; op++)
            for (int k = 1; k < NSIZES; k++) {
                rt_type ty = (rt_type)((op + k) % RT_TYPE_COUNT);
                if (!api_util_defined(op, ty))
                    ty = RT_F32;
                assert_int_equal(rt_temp_bytes(ctx, op, ty, sizes[k], &bytes), RT_OK);
                assert_true(bytes <= most + 4096);
                /* garbage where the one-launch counter lives: the library clears it */
                assert_int_equal(cu.MemsetD8(temp, 0xff, most + 4096), CUDA_SUCCESS);
                if (check_one(ctx, &b, op, ty, sizes[k], temp, bytes, why, sizeof why)) {
                    print_error("caller temp: %s\n", why);
                    failures++;
                }
            }
    assert_int_equal(failures, 0);

    const void *in = (const void *)(uintptr_t)(b.in + 4);
    void *out = (void *)(uintptr_t)b.out, *t = (void *)(uintptr_t)temp;
    assert_int_equal(rt_temp_bytes(ctx, RT_SUM, RT_F32, API_UTIL_NMAX, &bytes), RT_OK);
    assert_true(bytes > 256);
    assert_int_equal(rt_reduce_temp(ctx, RT_SUM, RT_F32, in, API_UTIL_NMAX, out, t, bytes - 1, st),
                     RT_EINVAL);
    char need[128];
    snprintf(need, sizeof need, "rt_reduce_temp: sum f32 n = %u needs %zu bytes of temporary "
             "storage, %zu given", API_UTIL_NMAX, bytes, bytes - 1);
    assert_string_equal(rt_errmsg(ctx), need);
    assert_int_equal(rt_reduce_temp(ctx, RT_SUM, RT_F32, in, API_UTIL_NMAX, out,
                                    (char *)t + 16, bytes, st), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(ctx), "is not aligned to 256 bytes"));
    assert_int_equal(rt_reduce_temp(ctx, RT_SUM, RT_F32, in, 0, out, NULL, 0, st), RT_OK);
    assert_int_equal(rt_reduce(ctx, RT_SUM, RT_F32, (const char *)in + 1, 10, out, st),
                     RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(ctx), "is not aligned to its 4-byte f32 elements"));
    assert_int_equal(rt_reduce(ctx, RT_ARGMIN, RT_F32, in, 10, (char *)out + 4, st), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(ctx), "d_out"));
    assert_non_null(strstr(rt_errmsg(ctx), "is not aligned to 8 bytes (argmin f32)"));
    assert_int_equal(rt_reduce(ctx, RT_SUM, RT_F32, in, 10, NULL, st), RT_EINVAL);
    assert_string_equal(rt_errmsg(ctx), "rt_reduce: d_out is NULL");
    assert_int_equal(rt_reduce(ctx, RT_SUM, RT_F32, NULL, 10, out, st), RT_EINVAL);
    assert_string_equal(rt_errmsg(ctx), "rt_reduce: d_in is NULL with n = 10");
    assert_int_equal(rt_reduce(ctx, RT_SUM, RT_F32, NULL, 0, out, st), RT_OK);
    assert_string_equal(rt_errmsg(ctx), "");
    assert_int_equal(rt_temp_bytes(ctx, RT_SUM, RT_F32, 10, NULL), RT_EINVAL);
    char small[8];
    assert_int_equal(rt_explain(ctx, RT_SUM, RT_F32, 10, small, sizeof small), RT_OK);
    assert_int_equal(strlen(small), sizeof small - 1);   /* cut, NUL-terminated */
    assert_int_equal(cu.StreamSynchronize(st), CUDA_SUCCESS);

    /* The legacy default stream (NULL) and the per-thread default stream. */
    for (int k = 0; k < 2 * NSIZES; k++) {
        b.s = k < NSIZES ? NULL : CU_STREAM_PER_THREAD;
        if (check_one(ctx, &b, RT_MIN, RT_F32, sizes[k % NSIZES], 0, 0, why, sizeof why)) {
            print_error("%s stream: %s\n", k < NSIZES ? "legacy" : "per-thread", why);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
    cu.MemFree(temp);
    bufs_free(&b);
    cu.StreamDestroy(st);
    rt_close(ctx);
}

/* More streams than the context keeps temp blocks for: it recycles them; rt_release_temp. */
static void api_gpu_many_streams(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    api_util_need_exact_db();
    enum { NS = 70 };
    rt_ctx *ctx = NULL;
    CUstream st[NS];
    CUdeviceptr out;
    bufs b;
    char why[1024];
    assert_int_equal(rt_open(api_util_gpu.exact_db, 0, &ctx), RT_OK);
    assert_int_equal(bufs_make(&b, API_UTIL_NMAX, pool_cores(), NULL), 0);
    assert_int_equal(cu.MemAlloc(&out, NS * 16), CUDA_SUCCESS);
    data_ref ref;
    data_fill(b.host, RT_F32, RT_SUM, API_UTIL_NMAX, 77, 3, b.threads);
    data_reference(b.host, RT_F32, RT_SUM, API_UTIL_NMAX, &ref, b.threads);
    assert_int_equal(cu.MemcpyHtoD(b.in, b.host, (size_t)API_UTIL_NMAX * 4), CUDA_SUCCESS);
    for (int i = 0; i < NS; i++) {
        assert_int_equal(cu.StreamCreate(&st[i], CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
        int rc = rt_reduce(ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)b.in, API_UTIL_NMAX,
                           (void *)(uintptr_t)(out + 16 * i), st[i]);
        if (rc)
            print_error("%s\n", rt_errmsg(ctx));
        assert_int_equal(rc, RT_OK);
    }
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    for (int i = 0; i < NS; i++) {
        float got;
        assert_int_equal(cu.MemcpyDtoH(&got, out + 16 * i, 4), CUDA_SUCCESS);
        if (!data_check(&got, &ref, RT_F32, RT_SUM, API_UTIL_NMAX, why, sizeof why)) {
            print_error("stream %d: %s\n", i, why);
            fail();
        }
    }
    assert_int_equal(rt_release_temp(ctx), RT_OK);
    b.s = st[0];
    assert_int_equal(check_one(ctx, &b, RT_SUM, RT_F32, API_UTIL_NMAX, 0, 0, why, sizeof why), 0);
    for (int i = 0; i < NS; i++)
        cu.StreamDestroy(st[i]);
    cu.MemFree(out);
    bufs_free(&b);
    rt_close(ctx);
}

/* One context, four host threads, each on its own stream, racing for the first decisions. */
typedef struct worker_arg {
    rt_ctx *ctx;
    int index;
    int failures;
    char why[1024];
} worker_arg;

static void *worker(void *arg)
{
    worker_arg *w = arg;
    static const rt_op ops[] = {RT_SUM, RT_MIN, RT_ARGMAX};
    static const rt_type types[] = {RT_F32, RT_I64, RT_U32};
    CUstream s = NULL;
    bufs b;
    memset(&b, 0, sizeof b);
    if (cu.CtxSetCurrent(api_util_gpu.cuctx) || cu.StreamCreate(&s, CU_STREAM_NON_BLOCKING)
        || bufs_make(&b, API_UTIL_NMAX, 1, s)) {
        w->failures++;
        snprintf(w->why, sizeof w->why, "thread %d: setting up failed", w->index);
        goto done;
    }
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 9 * NSIZES; i++) {
            int j = (i + w->index * 5) % (9 * NSIZES);   /* each thread its own order */
            char why[1024];
            if (check_one(w->ctx, &b, ops[j / NSIZES % 3], types[j / NSIZES / 3],
                          sizes[j % NSIZES], 0, 0, why, sizeof why)) {
                if (!w->failures++)
                    snprintf(w->why, sizeof w->why, "thread %d: %s", w->index, why);
            }
        }
done:
    bufs_free(&b);
    if (s)
        cu.StreamDestroy(s);
    return NULL;
}

/* A thread with no current CUDA context: the library makes its own current for the call and
 * leaves the thread as it found it. */
typedef struct bare_arg {
    rt_ctx *ctx;
    CUdeviceptr in, out;
    int rc;
    int current_after;   /* 1: a context was current after the calls */
    char msg[1024];
} bare_arg;

static void *bare_thread(void *arg)
{
    bare_arg *a = arg;
    CUresult (*get_current)(CUcontext *) = NULL;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    CUcontext cur = NULL;
    char buf[1024];
    if (h)
        *(void **)&get_current = dlsym(h, "cuCtxGetCurrent");
    a->rc = rt_reduce(a->ctx, RT_SUM, RT_F32, (const void *)(uintptr_t)a->in, API_UTIL_NMAX,
                      (void *)(uintptr_t)a->out, NULL);
    if (a->rc == RT_OK)
        a->rc = rt_explain(a->ctx, RT_SUM, RT_F32, API_UTIL_NMAX, buf, sizeof buf);
    snprintf(a->msg, sizeof a->msg, "%s", rt_errmsg(a->ctx));
    a->current_after = !get_current || get_current(&cur) != CUDA_SUCCESS || cur != NULL;
    if (h)
        dlclose(h);
    return NULL;
}

static void api_gpu_threads(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    api_util_need_exact_db();
    rt_ctx *ctx = NULL;
    assert_int_equal(rt_open(api_util_gpu.exact_db, 0, &ctx), RT_OK);
    pthread_t t[4];
    worker_arg w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker_arg){ctx, i, 0, ""};
        assert_int_equal(pthread_create(&t[i], NULL, worker, &w[i]), 0);
    }
    int failures = 0;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        if (w[i].failures)
            print_error("%s (%d failures)\n", w[i].why, w[i].failures);
        failures += w[i].failures;
    }
    assert_int_equal(failures, 0);

    bufs b;
    char why[1024];
    data_ref ref;
    float got;
    assert_int_equal(bufs_make(&b, API_UTIL_NMAX, pool_cores(), NULL), 0);
    data_fill(b.host, RT_F32, RT_SUM, API_UTIL_NMAX, 99, 5, b.threads);
    data_reference(b.host, RT_F32, RT_SUM, API_UTIL_NMAX, &ref, b.threads);
    assert_int_equal(cu.MemcpyHtoD(b.in, b.host, (size_t)API_UTIL_NMAX * 4), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(b.out, 0xa5, 16), CUDA_SUCCESS);
    bare_arg a = {ctx, b.in, b.out, -1, -1, ""};
    pthread_t bt;
    assert_int_equal(pthread_create(&bt, NULL, bare_thread, &a), 0);
    assert_int_equal(pthread_join(bt, NULL), 0);
    if (a.rc)
        print_error("%s\n", a.msg);
    assert_int_equal(a.rc, RT_OK);
    assert_int_equal(a.current_after, 0);
    assert_int_equal(cu.CtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(cu.MemcpyDtoH(&got, b.out, 4), CUDA_SUCCESS);
    if (!data_check(&got, &ref, RT_F32, RT_SUM, API_UTIL_NMAX, why, sizeof why)) {
        print_error("thread with no context: %s\n", why);
        fail();
    }
    bufs_free(&b);
    rt_close(ctx);
    assert_true(api_util_same_bytes(api_util_gpu.exact_db, api_util_gpu.exact_bytes,
                                    api_util_gpu.exact_len));
}

/* Child "nonvrtc": REDTUNE_NVRTC=/nonexistent. A CUBIN that another NVRTC made is used; a
 * winner with only its source, whose built-in default in its place has no CUBIN either, gives
 * RT_ENVRTC naming both failures; so does the built-in default of a case with no winner. */
int test_api_child_nonvrtc(const char *db)
{
    rt_ctx *ctx = NULL;
    char msg[4096], buf[2048], why[1024];
    CUdevice d;
    CUcontext c;
    bufs b;
    int bad = 0;
    if (rt_open_err(db, 0, &ctx, msg, sizeof msg)) {
        printf("open: %s\n", msg);
        return 1;
    }
    if (cu.DeviceGet(&d, 0) || cu.DevicePrimaryCtxRetain(&c, d) || cu.CtxSetCurrent(c)
        || bufs_make(&b, 4096, 1, NULL)) {
        printf("no context\n");
        return 1;
    }
    for (int k = 0; k < 3; k++) {
        unsigned long long n = k == 0 ? 0 : k == 1 ? 1000 : 4095;
        if (check_one(ctx, &b, RT_SUM, RT_F32, n, 0, 0, why, sizeof why)) {
            printf("sum f32: %s\n", why);
            bad = 1;
        }
    }
    rt_explain(ctx, RT_SUM, RT_F32, 1000, buf, sizeof buf);
    printf("%s", buf);
    if (!strstr(buf, "CUBIN: from the database (made by NVRTC 11.8)")
        || !strstr(buf, "exact device"))
        bad = 1;
    int rc = rt_reduce(ctx, RT_MAX, RT_I32, (const void *)(uintptr_t)b.in, 1000,
                       (void *)(uintptr_t)b.out, NULL);
    printf("max i32: %d %s\n", rc, rt_errmsg(ctx));
    if (rc != RT_ENVRTC || !strstr(rt_errmsg(ctx), "holds no CUBIN for")
        || !strstr(rt_errmsg(ctx), "NVRTC not found: REDTUNE_NVRTC=/nonexistent")
        || !strstr(rt_errmsg(ctx), "neither the database's winner (tree_sequential ")
        || !strstr(rt_errmsg(ctx), "\nthe built-in default: max i32: "))
        bad = 1;
    rc = rt_reduce(ctx, RT_MIN, RT_F64, (const void *)(uintptr_t)b.in, 1000,
                   (void *)(uintptr_t)b.out, NULL);
    printf("min f64: %d %s\n", rc, rt_errmsg(ctx));
    if (rc != RT_ENVRTC || !strstr(rt_errmsg(ctx), "the built-in default (gridstride")
        || !strstr(rt_errmsg(ctx), "NVRTC not found"))
        bad = 1;
    cu.CtxSynchronize();
    bufs_free(&b);
    rt_close(ctx);
    cu.DevicePrimaryCtxRelease(d);
    return bad;
}

static void api_gpu_no_nvrtc(void **state)
{
    (void)state;
    API_UTIL_NEED_GPU();
    char db[128], out[16384];
    rt_err e;
    store *s = NULL;
    snprintf(db, sizeof db, "%s/nonvrtc.db", api_util_gpu.dir);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    long long id = api_util_put_gpu(s, NULL, NULL, 0, 0, 0);
    api_util_entry en[] = {
        {id, RT_SUM, RT_F32, "gridstride", API_UTIL_GS_PARAMS, 1000, 2, NULL, 3.0},
        {id, RT_MAX, RT_I32, "tree_sequential", API_UTIL_TS_PARAMS, 1000, 0, NULL, 3.0},
    };
    api_util_put_entries(s, en, 2);
    store_close(s);
    int st = api_util_run_child("nonvrtc", db, "REDTUNE_NVRTC", "/nonexistent", out, sizeof out);
    if (st)
        print_error("child exit %d:\n%s\n", st, out);
    assert_int_equal(st, 0);
}

int test_api_gpu_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_gpu_database),
        cmocka_unit_test(api_gpu_builtin_default),
        cmocka_unit_test(api_gpu_tampered),
        cmocka_unit_test(api_gpu_levels),
        cmocka_unit_test(api_gpu_temp_and_pointers),
        cmocka_unit_test(api_gpu_many_streams),
        cmocka_unit_test(api_gpu_threads),
        cmocka_unit_test(api_gpu_no_nvrtc),
        cmocka_unit_test(api_gpu_capture),
    };
    return cmocka_run_group_tests_name("api_gpu", tests, api_util_gpu_setup,
                                       api_util_gpu_teardown);
}
