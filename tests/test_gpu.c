/*
 * test_gpu.c - every family against the CPU reference on the GPU, for every op and type, at
 * n = 1, 2, 31, 1000, 4097, 2^20 + 3 and a large size, aligned and not; the tuner end to end;
 * a faulting kernel taking down only the worker; operator files (--op-file) tuned end to end.
 * Skipped, and counted, with no GPU.
 * argmin/argmax data have many ties and some NaN: the lowest index must win.
 * The new types and operators through rt_reduce: tests/test_gpu_types.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>
#include "runtime/codegen.h"
#include "runtime/driver.h"
#include "runtime/nvrtc.h"
#include "runtime/optype.h"
#include "runtime/plan.h"
#include "tuner/data.h"
#include "tuner/pool.h"
#include "tuner/proto.h"
#include "tuner/tuner.h"
#include "runtime/store.h"
#include "tuner/store_tune.h"
#include "tests/affine.h"
#include "tests/gpu_util.h"
#include "tests/typeref.h"

GPU_UTIL_TEST_STATE
#define NEED_GPU() GPU_UTIL_NEED(have_gpu, no_gpu_why)

/* The variants each op x type runs: every family, at several shapes. */
static const char *const variants[][6] = {
    {"tree_interleaved", "B=256", "DIVERGENT=1"},
    {"tree_interleaved", "B=128", "DIVERGENT=0"},
    {"tree_sequential", "B=256", "R=1", "LOAD_ADD=0", "WARP=0", "UNROLL=0"},
    {"tree_sequential", "B=512", "R=4", "LOAD_ADD=1", "WARP=1", "UNROLL=1"},
    {"tree_sequential", "B=64", "R=3", "LOAD_ADD=1", "WARP=1", "UNROLL=0"},
    {"gridstride", "B=256", "V=*", "U=4", "G=4"},
    {"gridstride", "B=128", "V=1", "U=3", "G=2"},
    {"gridstride", "B=1024", "V=*", "U=8", "G=1"},
    {"oneblock", "B=1024", "V=*", "U=1"},
    {"oneblock", "B=256", "V=1", "U=3"},
    {"tb2", "B=256", "R=2", "PAD=1", "PAD_PERIOD=32"},
    {"tb2", "B=128", "R=1", "PAD=0"},
    {"tb4warp", "B=256", "R=4"},
    {"tb4warp", "B=64", "R=3"},
    {"matrix", "B=256", "H=32", "W=32", "PAD=1"},
    {"matrix", "B=128", "H=64", "W=7", "PAD=0"},
    {"persistent_matrix", "B=256", "H=32", "W=32", "PAD=1"},
    {"persistent_matrix", "B=128", "H=64", "W=5", "PAD=0"},
    {"diffwarps", "P=8", "C=1", "W=32", "PAD=1"},
    {"diffwarps", "P=3", "C=2", "W=9", "PAD=0"},
    {"diffwarps_async", "P=1", "C=1", "W=32", "STAGES=4", "BULK=0"},
    {"diffwarps_async", "P=2", "C=1", "W=32", "STAGES=3", "BULK=1"},
};
#define NVARIANTS (int)(sizeof variants / sizeof variants[0])

static void make_config(int v, rt_type type, rt_config *c)
{
    config_default(family_find(variants[v][0]), c);
    for (int k = 1; k < 6 && variants[v][k]; k++) {
        char name[16];
        const char *eq = strchr(variants[v][k], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - variants[v][k]), variants[v][k]);
        long long val = eq[1] == '*' ? (long long)(16 / optype_size(type)) : atoll(eq + 1);
        if (val > 4 && !strcmp(name, "V"))
            val = 4;
        if (!strcmp(name, "V") && val * (long long)optype_size(type) < 2)
            val = 2;   /* a vector of one byte has no load (gridstride, oneblock) */
        rt_err e;
        assert_int_equal(config_set(c, name, val, &e), RT_OK);
    }
}

/* Every variant for (op, type): generated, compiled and loaded (c[] for cands_free). */
static void load_variants(rt_op op, rt_type type, cand **c, plan p[NVARIANTS])
{
    rt_err e;
    rt_config cfgs[NVARIANTS];
    for (int v = 0; v < NVARIANTS; v++)
        make_config(v, type, &cfgs[v]);
    int compiled, failed;
    assert_int_equal(cands_make(cfgs, NVARIANTS, op, type, c, &e), RT_OK);
    assert_int_equal(cands_compile(*c, NVARIANTS, arch, pool_cores(), NULL, &compiled, &failed, &e), RT_OK);
    assert_int_equal(failed, 0);
    for (int v = 0; v < NVARIANTS; v++) {
        int rc = plan_load(&p[v], (*c)[v].cubin, (*c)[v].cfg.family->plan, optype_acc_size(op, type),
                           dev.sm_count, &e);
        if (rc)
            print_error("%s\n", e.msg);
        assert_int_equal(rc, RT_OK);
    }
}

/* Every variant of (op, type) at every size, aligned and not, against the CPU reference: the
 * plain data, and with 'stress' (float elements) each kind of data_fill_stress too, up to
 * 2^20 + 3 (large values, subnormals, NaN, +-0 and runs of equal values, a large mean with a
 * small spread). */
static void check_op_type_data(rt_op op, rt_type type, int stress)
{
    NEED_GPU();
    rt_err e;
    cand *c;
    plan p[NVARIANTS];
    load_variants(op, type, &c, p);
    const unsigned long long sizes[] = {1, 2, 31, 1000, 4097, (1u << 20) + 3, (1u << 26) + 5};
    size_t es = optype_size(type);
    unsigned long long nmax = sizes[sizeof sizes / sizeof sizes[0] - 1] + 1;
    void *host = malloc(nmax * es);
    assert_non_null(host);
    CUdeviceptr in, out, temp;
    size_t temp_bytes = 64u << 20;
    assert_int_equal(cu.MemAlloc(&in, nmax * es), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&temp, temp_bytes), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(temp, 0, temp_bytes), CUDA_SUCCESS);
    int threads = pool_cores();
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        unsigned long long n = sizes[si];
        if (gpu_util_small() && n > 5000)
            continue;
        /* offset 1: the input starts one element past an aligned address */
        for (int offset = 0; offset <= 1; offset++) {
          for (int kind = -1; kind < (stress && n < (1u << 24) ? DATA_STRESS_KINDS : 0); kind++) {
            if (kind < 0)
                data_fill(host, type, op, n + offset, 1000 + si * 2 + offset, n / 2 + offset, threads);
            else
                data_fill_stress(host, type, op, n + offset, 77 + si * 2 + offset, kind, threads);
            data_ref ref;
            data_reference((char *)host + offset * es, type, op, n, &ref, threads);
            assert_int_equal(cu.MemcpyHtoD(in, host, (n + offset) * es), CUDA_SUCCESS);
            for (int v = 0; v < NVARIANTS; v++) {
                assert_true(plan_temp_bytes(&p[v], n) <= temp_bytes);
                assert_int_equal(cu.MemsetD8(out, 0xa5, 64), CUDA_SUCCESS);
                /* the multipass variants use the same storage for partials: clear the
                 * one-launch counter as a fresh allocation would have it */
                assert_int_equal(cu.MemsetD8(temp, 0, 256), CUDA_SUCCESS);
                int rc = plan_launch(&p[v], in + offset * es, out, n, temp, stream, &e);
                CUresult r = rc ? CUDA_SUCCESS : cu.StreamSynchronize(stream);
                if (rc || r != CUDA_SUCCESS) {
                    print_error("%s %s n=%llu: %s (%d)\n", c[v].cfg.family->name, c[v].params, n,
                                rc ? e.msg : "launch failed", (int)r);
                    fail();
                }
                unsigned char got[32];
                assert_true(optype_res_size(op, type) <= sizeof got);
                assert_int_equal(cu.MemcpyDtoH(got, out, optype_res_size(op, type)), CUDA_SUCCESS);
                char why[512];
                if (!data_check(got, &ref, type, op, n, why, sizeof why)) {
                    print_error("%s %s offset %d data %s: %s\n", c[v].cfg.family->name,
                                c[v].params, offset, data_stress_name(kind), why);
                    fail();
                }
            }
          }
        }
    }
    for (int v = 0; v < NVARIANTS; v++)
        plan_unload(&p[v]);
    cu.MemFree(in);
    cu.MemFree(out);
    cu.MemFree(temp);
    free(host);
    cands_free(c, NVARIANTS);
}

static void check_op_type(rt_op op, rt_type type) { check_op_type_data(op, type, 0); }

#define OPTYPE_TEST(op, type)                                                            \
    static void gpu_##op##_##type(void **state) { (void)state; check_op_type(op, type); }

/* The operators whose glue has an rt_lift_run (runtime/glue.c: the run of a thread's
 * elements reduced in registers, then lifted once), through every variant with the stress
 * data: var_mean's in-register two-pass, the scans of amax, min/max of halves, argmin/argmax,
 * mean's sum and count. */
#define FUSED_TEST(name, op, type)                                                      \
    static void gpu_run_##name(void **state) { (void)state; check_op_type_data(op, type, 1); }
FUSED_TEST(var_mean_f32, RT_VAR_MEAN, RT_F32)
FUSED_TEST(var_mean_sample_f64, RT_VAR_MEAN_SAMPLE, RT_F64)
FUSED_TEST(std_mean_bf16, RT_STD_MEAN, RT_BF16)
FUSED_TEST(var_mean_f16, RT_VAR_MEAN, RT_F16)
FUSED_TEST(amax_bf16, RT_AMAX, RT_BF16)
FUSED_TEST(amax_f32, RT_AMAX, RT_F32)
FUSED_TEST(max_f16, RT_MAX, RT_F16)
FUSED_TEST(min_bf16, RT_MIN, RT_BF16)
FUSED_TEST(argmax_bf16, RT_ARGMAX, RT_BF16)
FUSED_TEST(argmin_f16, RT_ARGMIN, RT_F16)
FUSED_TEST(argmax_f32, RT_ARGMAX, RT_F32)
FUSED_TEST(argmin_u8, RT_ARGMIN, RT_U8)
FUSED_TEST(mean_bf16, RT_MEAN, RT_BF16)
FUSED_TEST(mean_f64, RT_MEAN, RT_F64)
#define FOR_TYPES(op) OPTYPE_TEST(op, RT_F32) OPTYPE_TEST(op, RT_F64) OPTYPE_TEST(op, RT_I32) \
    OPTYPE_TEST(op, RT_U32) OPTYPE_TEST(op, RT_I64) OPTYPE_TEST(op, RT_U64)
FOR_TYPES(RT_SUM)
FOR_TYPES(RT_PROD)
FOR_TYPES(RT_MIN)
FOR_TYPES(RT_MAX)
FOR_TYPES(RT_ARGMIN)
FOR_TYPES(RT_ARGMAX)
/* The 8-bit integers through every variant: sums in i32/u32 and min/max widened to them, where
 * sm_80 and later reduce a warp with the glue's rt_warp_reduce (runtime/glue.c). */
OPTYPE_TEST(RT_SUM, RT_I8)
OPTYPE_TEST(RT_SUM, RT_U8)
OPTYPE_TEST(RT_MIN, RT_I8)
OPTYPE_TEST(RT_MAX, RT_U8)

/* Float min/max over inputs that are all NaN give NaN, not the identity (+-inf, which only the
 * empty input gives: the host's n = 0 path), in every family at every shape: the kernels'
 * accumulator starts from an empty marker that rt_final maps to +-inf (runtime/codegen.c).
 * NaN patterns: the quiet NaN, a negative one, and the empty marker's own bits (a signalling
 * NaN the lift must turn into an ordinary NaN: data cannot forge "empty"); then the same with
 * one number, at the end, which must win. */
static void check_all_nan(rt_op op, rt_type type)
{
    NEED_GPU();
    rt_err e;
    cand *c;
    plan p[NVARIANTS];
    load_variants(op, type, &c, p);
    const unsigned long long sizes[] = {1, 2, 31, 1000, 4097, (1u << 20) + 3, (1u << 24) + 1};
    const uint32_t pat32[3] = {0x7fc00000u, 0xffc00001u, 0x7fbfffffu};
    const uint64_t pat64[3] = {0x7ff8000000000000ull, 0xfff8000000000001ull, 0x7ff7ffffffffffffull};
    size_t es = optype_size(type);
    unsigned long long nmax = sizes[sizeof sizes / sizeof sizes[0] - 1];
    unsigned char *host = malloc(nmax * es);
    assert_non_null(host);
    CUdeviceptr in, out, temp;
    size_t temp_bytes = 64u << 20;
    assert_int_equal(cu.MemAlloc(&in, nmax * es), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&temp, temp_bytes), CUDA_SUCCESS);
    assert_int_equal(cu.MemsetD8(temp, 0, temp_bytes), CUDA_SUCCESS);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        unsigned long long n = sizes[si];
        for (int k = 0; k < 6; k++) {
            const uint32_t w32 = pat32[k % 3];
            const uint64_t w64 = pat64[k % 3];
            for (unsigned long long i = 0; i < n; i++)
                memcpy(host + i * es, type == RT_F32 ? (const void *)&w32 : (const void *)&w64, es);
            if (k >= 3) {   /* one number, last */
                float f = 0.25f;
                double d = -0.25;
                memcpy(host + (n - 1) * es, type == RT_F32 ? (const void *)&f : (const void *)&d, es);
            }
            data_ref ref;
            data_reference(host, type, op, n, &ref, pool_cores());
            assert_int_equal(cu.MemcpyHtoD(in, host, n * es), CUDA_SUCCESS);
            for (int v = 0; v < NVARIANTS; v++) {
                assert_int_equal(cu.MemsetD8(out, 0xa5, 64), CUDA_SUCCESS);
                assert_int_equal(cu.MemsetD8(temp, 0, 256), CUDA_SUCCESS);
                assert_int_equal(plan_launch(&p[v], in, out, n, temp, stream, &e), RT_OK);
                assert_int_equal(cu.StreamSynchronize(stream), CUDA_SUCCESS);
                unsigned char got[16];
                assert_int_equal(cu.MemcpyDtoH(got, out, es), CUDA_SUCCESS);
                char why[512];
                if (!data_check(got, &ref, type, op, n, why, sizeof why)) {
                    print_error("%s %s, all NaN (pattern %d%s): %s\n", c[v].cfg.family->name,
                                c[v].params, k % 3, k >= 3 ? ", one number last" : "", why);
                    fail();
                }
            }
        }
    }
    for (int v = 0; v < NVARIANTS; v++)
        plan_unload(&p[v]);
    cu.MemFree(in);
    cu.MemFree(out);
    cu.MemFree(temp);
    free(host);
    cands_free(c, NVARIANTS);
}

static void gpu_all_nan_min_f32(void **state) { (void)state; check_all_nan(RT_MIN, RT_F32); }
static void gpu_all_nan_max_f32(void **state) { (void)state; check_all_nan(RT_MAX, RT_F32); }
static void gpu_all_nan_min_f64(void **state) { (void)state; check_all_nan(RT_MIN, RT_F64); }
static void gpu_all_nan_max_f64(void **state) { (void)state; check_all_nan(RT_MAX, RT_F64); }

/* Order kept: every family that does not need a commutative operator, at each of its test
 * shapes, composes affine maps (tests/affine.h) exactly as a left-to-right loop does. */
static void gpu_order_kept(void **state)
{
    (void)state;
    NEED_GPU();
    rt_err e;
    int nv = 0;
    rt_config cfgs[NVARIANTS];
    for (int v = 0; v < NVARIANTS; v++) {
        rt_config c;
        make_config(v, RT_U64, &c);
        if (!c.family->needs_commutative)
            cfgs[nv++] = c;
    }
    assert_true(nv >= 12);
    plan p[NVARIANTS];
    char names[NVARIANTS][300];
    int threads = pool_cores();
    for (int v = 0; v < nv; v++) {
        char *src;
        nvrtc_output o;
        assert_int_equal(codegen_emit_user(&cfgs[v], &affine_op, &src, &e), RT_OK);
        int rc = nvrtc_compile(src, "affine.cu", arch, &o, &e);
        free(src);
        if (rc)
            print_error("%s\n", e.msg);
        assert_int_equal(rc, RT_OK);
        assert_int_equal(plan_load(&p[v], o.cubin, cfgs[v].family->plan, 8, dev.sm_count, &e), RT_OK);
        nvrtc_output_free(&o);
        char params[256];
        config_format(&cfgs[v], params, sizeof params);
        snprintf(names[v], sizeof names[v], "%s %s", cfgs[v].family->name, params);
    }
    const unsigned long long sizes[] = {1, 2, 31, 1000, 4097, 65537, (1u << 20) + 3, (1u << 24) + 1};
    unsigned long long nmax = (1u << 24) + 2;
    uint64_t *host = malloc(nmax * 8);
    CUdeviceptr in, out, temp;
    size_t temp_bytes = 64u << 20;
    assert_int_equal(cu.MemAlloc(&in, nmax * 8), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&out, 64), CUDA_SUCCESS);
    assert_int_equal(cu.MemAlloc(&temp, temp_bytes), CUDA_SUCCESS);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        unsigned long long n = sizes[si];
        data_fill(host, RT_U64, RT_SUM, n + 1, 77 + si, 0, threads);   /* full-range u64 */
        for (int offset = 0; offset <= 1; offset++) {
            uint64_t want = 0x100000000ULL;   /* the identity map */
            for (unsigned long long i = 0; i < n; i++)
                want = affine_combine(want, host[i + offset]);
            assert_int_equal(cu.MemcpyHtoD(in, host, (n + 1) * 8), CUDA_SUCCESS);
            for (int v = 0; v < nv; v++) {
                assert_true(plan_temp_bytes(&p[v], n) <= temp_bytes);
                assert_int_equal(cu.MemsetD8(out, 0xa5, 64), CUDA_SUCCESS);
                assert_int_equal(cu.MemsetD8(temp, 0, 256), CUDA_SUCCESS);
                assert_int_equal(plan_launch(&p[v], in + offset * 8, out, n, temp, stream, &e), RT_OK);
                assert_int_equal(cu.StreamSynchronize(stream), CUDA_SUCCESS);
                uint64_t got;
                assert_int_equal(cu.MemcpyDtoH(&got, out, 8), CUDA_SUCCESS);
                if (got != want) {
                    print_error("%s: affine composition of %llu maps (offset %d): expected %016llx, got %016llx\n",
                                names[v], n, offset, (unsigned long long)want, (unsigned long long)got);
                    fail();
                }
            }
        }
    }
    for (int v = 0; v < nv; v++)
        plan_unload(&p[v]);
    cu.MemFree(in);
    cu.MemFree(out);
    cu.MemFree(temp);
    free(host);
}

static char out[1 << 20];

static int run(const char *args)
{
    return gpu_util_run(args, out, sizeof out);
}

/* The tuner end to end, twice: the second run compiles and measures nothing. */
static void tuner_end_to_end(void **state)
{
    (void)state;
    NEED_GPU();
    char dir[] = "/tmp/redtune-gpu-XXXXXX", args[512];
    assert_non_null(mkdtemp(dir));
    snprintf(args, sizeof args, "--op max --type i32 --sizes 1000,2^20 --db %s/t.db", dir);
    int rc = run(args);
    if (rc)
        print_error("%s\n", out);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "reused 0 from the database"));
    assert_non_null(strstr(out, "best for max i32"));
    rc = run(args);
    assert_int_equal(rc, 0);
    if (!strstr(out, "compiled 0,") || !strstr(out, "0 configs measured in this run"))
        print_error("%s\n", out);
    assert_non_null(strstr(out, "compiled 0,"));
    assert_non_null(strstr(out, "0 configs measured in this run"));
    snprintf(args, sizeof args, "best --db %s/t.db --op max --n 1000", dir);
    assert_int_equal(run(args), 0);
    assert_non_null(strstr(out, "max"));
    /* A bad space on a GPU machine: file:line, exit 1, the database untouched. */
    snprintf(args, sizeof args, "--op min --space tests/lua/bad_runtime.lua --db %s/u.db", dir);
    assert_int_equal(run(args), 1);
    assert_non_null(strstr(out, "tests/lua/bad_runtime.lua:"));
    snprintf(args, sizeof args, "%s/u.db", dir);
    assert_int_equal(access(args, F_OK), -1);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    assert_int_equal(system(args), 0);
}

/* ---- operator files, end to end through the tuner and its worker ---- */

static int count_cb(void *arg, int ncols, char **vals, char **names)
{
    (void)ncols, (void)names;
    *(long long *)arg = vals[0] ? atoll(vals[0]) : -1;
    return 0;
}

/* The integer the query gives on the database 'db'. */
static long long query(const char *db, const char *sql)
{
    sqlite3 *h = NULL;
    long long v = -12345;
    char *msg = NULL;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    if (sqlite3_exec(h, sql, count_cb, &v, &msg) != SQLITE_OK)
        print_error("%s: %s\n", sql, msg ? msg : "?");
    sqlite3_free(msg);
    sqlite3_close(h);
    return v;
}

/* Run the tuner; print its output when the exit status is not the one expected. */
static void expect_run(const char *args, int code, const char *text)
{
    int rc = run(args);
    if (rc != code || (text && !strstr(out, text)))
        print_error("redtune %s -> %d:\n%s\n", args, rc, out);
    assert_int_equal(rc, code);
    if (text)
        assert_non_null(strstr(out, text));
}

/* Tune the operator of 'file' over 'space' at 'sizes' into 'db' (seed 7); expect_run. */
static void tune_op(const char *file, const char *space, const char *sizes, const char *db,
                    int code, const char *text)
{
    char args[1024];
    snprintf(args, sizeof args, "--op-file %s --space %s --sizes %s --seed 7 --db %s", file, space,
             sizes, db);
    expect_run(args, code, text);
}

/* A fresh directory for a test's database 'db' (dir: a mkdtemp template). */
static void temp_db(char *dir, char *db, size_t len, const char *name)
{
    assert_non_null(mkdtemp(dir));
    snprintf(db, len, "%s/%s", dir, name);
}

static void remove_dir(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* Affine maps (lua/ops/affine.lua, non-commutative) through every family that keeps the
 * order: every measurement verified against the worker's reference, best stored and shown.
 * Then another operator named 'affine' is refused by that database. */
static void gpu_opfile_affine(void **state)
{
    (void)state;
    NEED_GPU();
    char dir[] = "/tmp/redtune-gpu-XXXXXX", args[512], db[300];
    temp_db(dir, db, sizeof db, "affine.db");
    int families = dev.cc_major >= 8 ? 7 : 6;   /* diffwarps_async wants sm_80 */
    tune_op("lua/ops/affine.lua", "tests/lua/order_keeping.lua", "1000,4194305", db, 0,
            "best for affine u64");
    assert_int_equal(query(db, "SELECT count(*) FROM measurements WHERE op = 'affine'"),
                     2 * families);
    assert_int_equal(query(db, "SELECT count(*) FROM measurements WHERE status <> 'ok' "
                               "OR verified <> 1"), 0);
    assert_int_equal(query(db, "SELECT count(DISTINCT k.family) FROM measurements m JOIN "
                               "kernels k ON k.hash = m.kernel_hash"), families);
    assert_int_equal(query(db, "SELECT count(*) FROM best WHERE op = 'affine' AND type = 'u64'"),
                     2);
    assert_int_equal(query(db, "SELECT count(*) FROM kernels WHERE instr(source, "
                               "'#line 20 \"lua/ops/affine.lua\"') > 0"), families);
    snprintf(args, sizeof args, "best --db %s --op affine", db);
    expect_run(args, 0, "affine   u64");
    tune_op("tests/ops/affine_redefined.lua", "tests/lua/order_keeping.lua", "1000", db, 1,
            "holds measurements of another operator named 'affine'");
    assert_int_equal(query(db, "SELECT count(*) FROM measurements"), 2 * families);
    remove_dir(dir);
}

/* Products of 2x2 matrices claimed commutative: the families that combine out of order give
 * wrong results, stored as 'wrong' and never best; the order-keeping ones are verified. */
static void gpu_opfile_wrong_commutative(void **state)
{
    (void)state;
    NEED_GPU();
    char dir[] = "/tmp/redtune-gpu-XXXXXX", db[300];
    temp_db(dir, db, sizeof db, "claims.db");
    tune_op("tests/ops/wrong_commutative.lua", "tests/lua/mixed_small.lua", "1048576", db, 0,
            ": wrong: mat2_claims over ");
    const char *join = "FROM measurements m JOIN kernels k ON k.hash = m.kernel_hash WHERE ";
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT count(*) %s k.family IN ('gridstride', 'tree_sequential') "
             "AND m.status = 'wrong' AND m.verified = 0", join);
    assert_int_equal(query(db, sql), 2);
    snprintf(sql, sizeof sql, "SELECT count(*) %s k.family IN ('tb2', 'tb4warp') AND "
             "m.status = 'ok' AND m.verified = 1", join);
    assert_int_equal(query(db, sql), 2);
    assert_int_equal(query(db, "SELECT count(*) FROM best b JOIN kernels k ON k.hash = "
                               "b.kernel_hash WHERE b.op = 'mat2_claims' AND k.family IN "
                               "('tb2', 'tb4warp')"), 1);
    assert_int_equal(query(db, "SELECT count(*) FROM best"), 1);
    remove_dir(dir);
}

/* Commutative operators on every family of a small space: a saturating sum that saturates
 * at the larger size (a sample function), the f32 element of largest magnitude (a sample
 * function, tolerance 0), u64 xor (the tuner's own data). All verified. */
static void gpu_opfile_commutative(void **state)
{
    (void)state;
    NEED_GPU();
    static const char *const files[] = {"lua/ops/satsum.lua", "tests/ops/good_f32.lua",
                                        "tests/ops/bitxor.lua"};
    char dir[] = "/tmp/redtune-gpu-XXXXXX", db[300];
    temp_db(dir, db, sizeof db, "comm.db");
    for (int i = 0; i < 3; i++) {
        tune_op(files[i], "tests/lua/mixed_small.lua", "4097,4194304", db, 0, "best for ");
        assert_null(strstr(out, "left out"));
    }
    assert_int_equal(query(db, "SELECT count(*) FROM measurements"), 3 * 2 * 4);
    assert_int_equal(query(db, "SELECT count(*) FROM measurements WHERE status = 'ok' AND "
                               "verified = 1"), 3 * 2 * 4);
    assert_int_equal(query(db, "SELECT count(DISTINCT op) FROM best"), 3);
    remove_dir(dir);
}

/* A wrong identity, a sample function that fails, a combine that does not compile: the checks
 * before anything is stored say so, exit 1, and no database is created. */
static const struct {
    const char *file, *space, *msg;
} bad_ops[] = {
    {"tests/ops/bad_identity.lua", "tests/lua/order_keeping.lua",
     "tests/ops/bad_identity.lua: operator 'offbyone': the identity is not one: "
     "combine(identity, x) or combine(x, identity) differs from x"},
    {"tests/ops/bad_sample.lua", "tests/lua/mixed_small.lua",
     "tests/ops/bad_sample.lua:9: no sample for 100 (making element 100 of the test data)"},
    {"tests/ops/bad_compile.lua", "tests/lua/mixed_small.lua",
     "tests/ops/bad_compile.lua(10): error"},
};

static void gpu_opfile_bad_operator(void **state)
{
    (void)state;
    NEED_GPU();
    char dir[] = "/tmp/redtune-gpu-XXXXXX", db[300];
    temp_db(dir, db, sizeof db, "bad.db");
    for (size_t i = 0; i < sizeof bad_ops / sizeof bad_ops[0]; i++) {
        tune_op(bad_ops[i].file, bad_ops[i].space, "1000", db, 1, bad_ops[i].msg);
        assert_int_equal(access(db, F_OK), -1);
    }
    remove_dir(dir);
}

/* A kernel that writes through a null pointer: the worker answers "fault" and dies; a new
 * worker then runs a good kernel. This is the path the tuner takes for a bad candidate. */
static void worker_survives_fault(void **state)
{
    (void)state;
    NEED_GPU();
    const char *bad_src =
        "extern \"C\" __device__ const unsigned int rt_meta[4] = {32, 32, 0, 0};\n"
        "extern \"C\" __global__ void rt_one(const float *in, float *out, unsigned long long n,"
        " float *p, unsigned int *c) { *(volatile float *)(unsigned long long)(0x10) = in[0]; }\n";
    nvrtc_output o;
    rt_err e;
    assert_int_equal(nvrtc_compile(bad_src, "fault.cu", arch, &o, &e), RT_OK);
    const char *bin = getenv("REDTUNE_BIN");
    for (int round = 0; round < 2; round++) {
        int req[2], resp[2];
        assert_int_equal(pipe(req), 0);
        assert_int_equal(pipe(resp), 0);
        pid_t pid = fork();
        if (pid == 0) {
            dup2(req[0], 0);
            dup2(resp[1], 1);
            close(req[1]);
            close(resp[0]);
            execl(bin ? bin : "build/redtune", "redtune", "worker", (char *)NULL);
            _exit(127);
        }
        close(req[0]);
        close(resp[1]);
        signal(SIGPIPE, SIG_IGN);
        hello_req h = {0};
        uint32_t kind;
        void *buf;
        size_t len;
        assert_int_equal(proto_send(req[1], MSG_HELLO, &h, sizeof h, NULL, 0), 0);
        assert_int_equal(proto_recv(resp[0], &kind, &buf, &len, 60000), 0);
        assert_int_equal(((hello_resp *)buf)->h.code, RT_OK);
        free(buf);
        prepare_req pq = {RT_F32, RT_SUM, 5000, 1};
        assert_int_equal(proto_send(req[1], MSG_PREPARE, &pq, sizeof pq, NULL, 0), 0);
        assert_int_equal(proto_recv(resp[0], &kind, &buf, &len, 60000), 0);
        assert_int_equal(((resp_head *)buf)->code, RT_OK);
        free(buf);
        measure_req mq = {PLAN_ONELAUNCH, 0, 3, 5, 0.01, 7};
        const void *cubin = o.cubin;
        size_t size = o.size;
        cand *c = NULL;
        if (round == 1) {   /* a good kernel in the new worker */
            rt_config cfg;
            config_default(family_find("gridstride"), &cfg);
            int compiled, failed;
            assert_int_equal(cands_make(&cfg, 1, RT_SUM, RT_F32, &c, &e), RT_OK);
            assert_int_equal(cands_compile(c, 1, arch, 1, NULL, &compiled, &failed, &e), RT_OK);
            cubin = c->cubin;
            size = c->cubin_size;
        }
        assert_int_equal(proto_send(req[1], MSG_MEASURE, &mq, sizeof mq, cubin, size), 0);
        assert_int_equal(proto_recv(resp[0], &kind, &buf, &len, 60000), 0);
        measure_resp *m = buf;
        if (round == 0) {
            assert_string_equal(m->status, "fault");
            assert_non_null(strstr(m->h.msg, "CUDA_ERROR_"));
            int st;
            assert_int_equal(waitpid(pid, &st, 0), pid);   /* it exits by itself */
            assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 3);
        } else {
            if (strcmp(m->status, "ok"))
                print_error("%s\n", m->h.msg);
            assert_string_equal(m->status, "ok");
            assert_true(m->median_us > 0 && m->reps >= 3);
            proto_send(req[1], MSG_QUIT, NULL, 0, NULL, 0);
            waitpid(pid, NULL, 0);
        }
        free(buf);
        cands_free(c, 1);
        close(req[1]);
        close(resp[0]);
    }
    nvrtc_output_free(&o);
}

#define T(op) cmocka_unit_test(gpu_##op##_RT_F32), cmocka_unit_test(gpu_##op##_RT_F64), \
    cmocka_unit_test(gpu_##op##_RT_I32), cmocka_unit_test(gpu_##op##_RT_U32),          \
    cmocka_unit_test(gpu_##op##_RT_I64), cmocka_unit_test(gpu_##op##_RT_U64)

int test_gpu_group(void)
{
    const struct CMUnitTest tests[] = {
        T(RT_SUM), T(RT_PROD), T(RT_MIN), T(RT_MAX), T(RT_ARGMIN), T(RT_ARGMAX),
        cmocka_unit_test(gpu_RT_SUM_RT_I8), cmocka_unit_test(gpu_RT_SUM_RT_U8),
        cmocka_unit_test(gpu_RT_MIN_RT_I8), cmocka_unit_test(gpu_RT_MAX_RT_U8),
        cmocka_unit_test(gpu_run_var_mean_f32), cmocka_unit_test(gpu_run_var_mean_sample_f64),
        cmocka_unit_test(gpu_run_std_mean_bf16), cmocka_unit_test(gpu_run_var_mean_f16),
        cmocka_unit_test(gpu_run_amax_bf16), cmocka_unit_test(gpu_run_amax_f32),
        cmocka_unit_test(gpu_run_max_f16), cmocka_unit_test(gpu_run_min_bf16),
        cmocka_unit_test(gpu_run_argmax_bf16), cmocka_unit_test(gpu_run_argmin_f16),
        cmocka_unit_test(gpu_run_argmax_f32), cmocka_unit_test(gpu_run_argmin_u8),
        cmocka_unit_test(gpu_run_mean_bf16), cmocka_unit_test(gpu_run_mean_f64),
        cmocka_unit_test(gpu_all_nan_min_f32),
        cmocka_unit_test(gpu_all_nan_max_f32),
        cmocka_unit_test(gpu_all_nan_min_f64),
        cmocka_unit_test(gpu_all_nan_max_f64),
        cmocka_unit_test(gpu_order_kept),
        cmocka_unit_test(worker_survives_fault),
        cmocka_unit_test(tuner_end_to_end),
        cmocka_unit_test(gpu_opfile_affine),
        cmocka_unit_test(gpu_opfile_wrong_commutative),
        cmocka_unit_test(gpu_opfile_commutative),
        cmocka_unit_test(gpu_opfile_bad_operator),
    };
    return cmocka_run_group_tests_name("gpu", tests, gpu_setup, NULL);
}
