/*
 * test_api_axis.c - libredtune's reductions along an axis (runtime/api_axis.c, docs/axis.md).
 *
 * Group "api_axis" (CPU): the argument checks and their exact messages, the public calls on a
 * NULL context, the built-in default by shape, and the store's lookups by axis kind on a
 * database of made-up devices.
 * Group "api_axis_gpu" (skipped, and counted, with no GPU): rt_reduce_axis over rows,
 * columns and 3-D shapes (the ragged shapes of the tuner's checks, split and unsplit ones,
 * len == 0, outer * inner == 0) for several operators and types and a non-commutative user
 * operator, against a CPU reference (tests/typeref.h); rt_reduce_axis_temp with garbage in
 * the caller's storage; rt_explain_axis for the built-in default and for database winners of
 * both kinds; a CUDA graph capture replayed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
#include "tests/api_util.h"
#include "tests/gpu_util.h"
#include "tests/typeref.h"

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void make_dir(char dir[64])
{
    strcpy(dir, "/tmp/redtune-axis-XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void remove_dir(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---------------------------------------------------------------- CPU: arguments */

static void axis_check(rt_op op, rt_type type, const void *in, unsigned long long o,
                       unsigned long long l, unsigned long long i, const void *out,
                       const char *want)
{
    rt_err e;
    char full[512];
    rt_clearerr(&e);
    int rc = api_check_axis("rt_reduce_axis", NULL, op, type, in, o, l, i, out, &e);
    if (!want) {
        if (rc)
            fail_msg("%llux%llux%llu: %s", o, l, i, e.msg);
        return;
    }
    assert_int_equal(rc, RT_EINVAL);
    snprintf(full, sizeof full, "rt_reduce_axis: %s", want);
    assert_string_equal(e.msg, full);
}

static void axis_args(void **state)
{
    (void)state;
    static _Alignas(16) unsigned char mem[64];
    const void *in = mem, *out = mem + 32;
    char want[256];

    axis_check(RT_SUM, RT_F32, in, 3, 5, 7, out, NULL);
    axis_check(RT_SUM, RT_F32, in, 1ULL << 32, 1, 1ULL << 32, out,
               "outer * inner = 4294967296 * 4294967296 overflows 64 bits");
    axis_check(RT_SUM, RT_F32, in, 1ULL << 32, 1ULL << 31, 1ULL << 31, out,
               "outer * len * inner = 4294967296 * 2147483648 * 2147483648 overflows 64 bits");
    axis_check(RT_SUM, RT_F32, in, 3, 1ULL << 63, 1, out,
               "outer * len * inner = 3 * 9223372036854775808 * 1 overflows 64 bits");
    /* a zero extent makes the product 0, whatever the others */
    axis_check(RT_SUM, RT_F32, NULL, 0, ~0ULL, ~0ULL, NULL, NULL);
    axis_check(RT_SUM, RT_F32, NULL, 4, 5, 6, out, "d_in is NULL with outer * len * inner = 120");
    axis_check(RT_SUM, RT_F32, NULL, 4, 0, 6, out, NULL);   /* len == 0: no element is read */
    axis_check(RT_SUM, RT_F32, in, 4, 5, 6, NULL, "d_out is NULL with outer * inner = 24 outputs");
    axis_check(RT_SUM, RT_F32, NULL, 4, 0, 6, NULL, "d_out is NULL with outer * inner = 24 outputs");
    axis_check(RT_SUM, RT_F32, NULL, 0, 5, 6, NULL, NULL);  /* no outputs: nothing written */
    axis_check(RT_SUM, RT_F32, in, 4, 5, 0, NULL, NULL);
    snprintf(want, sizeof want, "d_in %p is not aligned to its 4-byte f32 elements",
             (const void *)(mem + 2));
    axis_check(RT_SUM, RT_F32, mem + 2, 4, 5, 6, out, want);
    snprintf(want, sizeof want, "d_in %p is not aligned to its 2-byte bf16 elements",
             (const void *)(mem + 1));
    axis_check(RT_MAX, RT_BF16, mem + 1, 4, 5, 6, out, want);
    axis_check(RT_MAX, RT_BF16, mem + 2, 4, 5, 6, mem + 34, NULL);
    snprintf(want, sizeof want, "d_out %p is not aligned to 4 bytes (sum bf16)",
             (const void *)(mem + 34));
    axis_check(RT_SUM, RT_BF16, mem + 2, 4, 5, 6, mem + 34, want);
    snprintf(want, sizeof want, "d_out %p is not aligned to 8 bytes (argmax f32)",
             (const void *)(mem + 36));
    axis_check(RT_ARGMAX, RT_F32, in, 4, 5, 6, mem + 36, want);
    snprintf(want, sizeof want, "d_out %p is not aligned to 8 bytes (sum f64)",
             (const void *)(mem + 36));
    axis_check(RT_SUM, RT_F64, in, 4, 5, 6, mem + 36, want);
}

/* The public calls: operator and type first, then the context, before any argument. */
static void axis_null_ctx(void **state)
{
    (void)state;
    int x = 0;
    size_t bytes = 7;
    char buf[64] = "x";

    assert_int_equal(rt_reduce_axis(NULL, RT_SUM, RT_F32, &x, 1, 1, 1, &x, NULL), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce_axis: the context is NULL");
    assert_int_equal(rt_reduce_axis_temp(NULL, RT_SUM, RT_F32, &x, 1, 1, 1, &x, NULL, 0, NULL),
                     RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce_axis_temp: the context is NULL");
    assert_int_equal(rt_axis_temp_bytes(NULL, RT_SUM, RT_F32, 1, 1, 1, &bytes), RT_EINVAL);
    assert_int_equal(bytes, 0);
    assert_string_equal(rt_errmsg(NULL), "rt_axis_temp_bytes: the context is NULL");
    assert_int_equal(rt_explain_axis(NULL, RT_SUM, RT_F32, 1, 1, 1, buf, sizeof buf), RT_EINVAL);
    assert_string_equal(buf, "");
    assert_string_equal(rt_errmsg(NULL), "rt_explain_axis: the context is NULL");
    assert_int_equal(rt_reduce_axis(NULL, (rt_op)99, RT_F32, &x, 1, 1, 1, &x, NULL), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(NULL), "rt_reduce_axis: unknown operator 99"));
    assert_int_equal(rt_reduce_axis(NULL, RT_VAR_MEAN, RT_U8, &x, 1, 1, 1, &x, NULL), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce_axis: var_mean of u8 is not defined: "
                                         "var_mean takes f16, bf16, f32, f64");
}

static void want_builtin(int commutative, size_t es, unsigned long long o, unsigned long long l,
                         unsigned long long i, const char *family, const char *params)
{
    char f[64], p[128];
    api_axis_builtin(commutative, es, o, l, i, f, sizeof f, p, sizeof p);
    if (strcmp(f, family) || strcmp(p, params))
        fail_msg("%llux%llux%llu (size %zu%s): %s %s, want %s %s", o, l, i, es,
                 commutative ? "" : ", in order", f, p, family, params);
}

/* The built-in default follows the shape: rows get a group of lanes sized by len and 16-byte
 * loads, columns TX x CV columns a block by inner; long rows and tall columns may split. */
static void axis_builtin(void **state)
{
    (void)state;
    want_builtin(1, 4, 1048576, 16, 1, "axis_rows", "B=256 L=1 V=4 U=2 CHUNK=0");
    want_builtin(1, 4, 65536, 128, 1, "axis_rows", "B=256 L=8 V=4 U=2 CHUNK=0");
    want_builtin(1, 4, 32768, 1024, 1, "axis_rows", "B=256 L=64 V=4 U=2 CHUNK=0");
    want_builtin(1, 4, 4096, 4096, 1, "axis_rows", "B=256 L=256 V=4 U=2 CHUNK=0");
    want_builtin(1, 4, 16, 4194304, 1, "axis_rows", "B=256 L=256 V=4 U=2 CHUNK=8192");
    want_builtin(1, 2, 65536, 128, 1, "axis_rows", "B=256 L=4 V=8 U=2 CHUNK=0");
    want_builtin(1, 8, 65536, 128, 1, "axis_rows", "B=256 L=16 V=2 U=2 CHUNK=0");
    want_builtin(1, 1, 5, 3, 1, "axis_rows", "B=256 L=1 V=16 U=2 CHUNK=0");
    want_builtin(1, 4, 4, 0, 1, "axis_rows", "B=256 L=1 V=4 U=2 CHUNK=0");
    want_builtin(1, 4, 1, 1048576, 16, "axis_cols", "B=256 TX=4 CV=4 U=2 CHUNK=512");
    want_builtin(1, 4, 1, 65536, 128, "axis_cols", "B=256 TX=32 CV=4 U=2 CHUNK=512");
    want_builtin(1, 4, 1, 16, 4194304, "axis_cols", "B=256 TX=32 CV=4 U=2 CHUNK=0");
    want_builtin(1, 4, 64, 2048, 512, "axis_cols", "B=256 TX=32 CV=4 U=2 CHUNK=512");
    want_builtin(1, 2, 1, 1000, 17, "axis_cols", "B=256 TX=4 CV=8 U=2 CHUNK=0");
    want_builtin(1, 8, 3, 1, 17, "axis_cols", "B=256 TX=16 CV=2 U=2 CHUNK=0");
    want_builtin(1, 4, 2, 4099, 3, "axis_cols", "B=256 TX=2 CV=2 U=2 CHUNK=512");
    /* an operator that does not commute: columns, and rows as a block per row */
    want_builtin(0, 8, 4096, 4096, 1, "axis_cols", "B=256 TX=1 CV=1 U=2 CHUNK=512");
    want_builtin(0, 8, 1, 4096, 64, "axis_cols", "B=256 TX=32 CV=2 U=2 CHUNK=512");
}

/* The built-in defaults compile under NVRTC (no GPU needed) for the shapes of the default
 * profile set and the tuner's ragged checks, several operators and types, and an operator
 * that does not commute. Skipped when NVRTC cannot be loaded. */
static void axis_builtin_compiles(void **state)
{
    (void)state;
    rt_err e;
    if (nvrtc_load(&e) != RT_OK) {
        print_message("# SKIP reason: %s\n", e.msg);
        skip();
    }
    static const unsigned long long sh[][3] = {
        {1048576, 16, 1}, {4096, 4096, 1}, {16, 4194304, 1}, {1, 65536, 128}, {1, 16, 4194304},
        {64, 2048, 512}, {3, 1, 17}, {7, 513, 33},
    };
    static const struct { rt_op op; rt_type type; } ot[] = {
        {RT_SUM, RT_F32}, {RT_ARGMAX, RT_BF16}, {RT_VAR_MEAN, RT_F64}, {RT_MIN, RT_U8},
        {RT_MEAN, RT_F16},
    };
    for (size_t k = 0; k < sizeof sh / sizeof sh[0]; k++)
        for (int u = 0; u < 2; u++) {
            rt_op op = ot[k % (sizeof ot / sizeof ot[0])].op;
            rt_type t = u ? RT_U64 : ot[k % (sizeof ot / sizeof ot[0])].type;
            char fam[64], params[128], buf[128], *src = NULL, *save = NULL;
            api_axis_builtin(!u, optype_size(t), sh[k][0], sh[k][1], sh[k][2], fam, sizeof fam,
                             params, sizeof params);
            const rt_family *f = family_find(fam);
            if (!f)
                fail_msg("family %s is not built in", fam);
            rt_config cfg;
            config_default(f, &cfg);
            snprintf(buf, sizeof buf, "%s", params);
            for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
                char *eq = strchr(tok, '=');
                *eq = '\0';
                if (config_set(&cfg, tok, atoll(eq + 1), &e))
                    fail_msg("%s", e.msg);
            }
            int rc = u ? codegen_emit_user(&cfg, &affine_op, &src, &e)
                       : codegen_emit(&cfg, op, t, &src, &e);
            if (rc)
                fail_msg("%s %s: %s", fam, params, e.msg);
            nvrtc_output o;
            memset(&o, 0, sizeof o);
            if (nvrtc_compile(src, "axis.cu", "sm_90", &o, &e))
                fail_msg("%s %s (%s %s): %s", fam, params, u ? "affine" : rt_op_name(op),
                         rt_type_name(t), e.msg);
            nvrtc_output_free(&o);
            free(src);
        }
}

/* ---------------------------------------------------------------- CPU: the store by kind */


/* A winner of (device, op, f32, layout) with kernel 'hash' (put if new; its source 'src'). */
static void put_axis_best(store *s, long long dev, const char *hash, const char *family,
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

typedef struct seen {
    int count;
    char layout[8][64];
} seen;

static int see(const store_best_row *row, void *arg)
{
    seen *r = arg;
    if (r->count < 8)
        snprintf(r->layout[r->count], sizeof r->layout[0], "%s", row->layout);
    r->count++;
    return 0;
}

/* plan.c's split layout: the splits fill the resident blocks within the chunk; more than
 * PLAN_AXIS_GROUP_FROM of them are folded in groups of PLAN_AXIS_GROUP, with a counter per
 * group and per tile, unless those counters would not fit in PLAN_AXIS_MAX_TILES (the
 * kernels' ax_grouped rule); storage by an area puts the partials right after it. */
static void axis_plan_counters(void **state)
{
    (void)state;
    plan p = {.kind = PLAN_AXIS, .unit = PLAN_AXIS_TILE_INNER, .tile = 128, .axis_chunk = 512,
              .axis_fit = 528, .acc_size = 4};
    /* 1 x 65536 x 128: one tile, 128 splits, one level: one counter. */
    assert_int_equal(plan_axis_splits(&p, 1, 65536, 128), 128);
    assert_int_equal(plan_axis_counter_bytes(&p, 1, 65536, 128), 256);
    assert_int_equal(plan_axis_temp_bytes(&p, 1, 65536, 128), 256 + 128 * 128 * 4);
    assert_int_equal(plan_axis_area_bytes(&p, 1, 65536, 128), PLAN_AXIS_COUNTER_AREA + 128 * 128 * 4);
    /* 10 tiles x 300 splits: 10 groups of 32 (the last of 12) a tile: 10 * 11 counters. */
    p.axis_chunk = 16;
    p.axis_fit = 3000;
    assert_int_equal(plan_axis_splits(&p, 1, 300 * 16, 10 * 128), 300);
    assert_int_equal(plan_axis_counter_bytes(&p, 1, 300 * 16, 10 * 128), 512);   /* 440 up */
    assert_true(plan_axis_grouped(&p, 1, 300 * 16, 10 * 128));
    /* 400 tiles x 300 splits: 4400 grouped counters would not fit: one level, 400. */
    p.axis_fit = 400 * 300;
    assert_int_equal(plan_axis_splits(&p, 1, 300 * 16, 400 * 128), 300);
    assert_int_equal(plan_axis_counter_bytes(&p, 1, 300 * 16, 400 * 128), 1792);  /* 1600 up */
    assert_false(plan_axis_grouped(&p, 1, 300 * 16, 400 * 128));
    assert_int_equal(plan_axis_temp_in_area(&p, 1 << 20, 1, 300 * 16, 400 * 128),
                     (1 << 20) + PLAN_AXIS_COUNTER_AREA - 1792);
    /* 256 splits: one level. */
    p.axis_fit = 256;
    assert_int_equal(plan_axis_splits(&p, 1, 300 * 16, 128), 256);
    assert_int_equal(plan_axis_counter_bytes(&p, 1, 300 * 16, 128), 256);
    /* No split: no counters. */
    assert_int_equal(plan_axis_counter_bytes(&p, 1, 16, 400 * 128), 0);
}

/* Rows of inner == 1 and of inner > 1 are apart: a device with winners of one kind only is
 * not the answer for the other kind. */
static void axis_store_kind(void **state)
{
    (void)state;
    char dir[64], db[128];
    rt_err e;
    store *s = NULL;
    make_dir(dir);
    snprintf(db, sizeof db, "%s/t.db", dir);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    long long a = api_util_put_device(s, "NVIDIA H100 80GB HBM3", "aa", 9, 0, 132);
    long long b = api_util_put_device(s, "NVIDIA H100 PCIe", "bb", 9, 0, 114);
    put_axis_best(s, a, "k_rows", "fake", "X=1", "// @plan axis\n", "sum", 4096, 4096, 1, "f32",
                  "f32", "f32", 3.0);
    put_axis_best(s, a, "k_rows2", "fake", "X=2", "// @plan axis\n", "sum", 16, 4194304, 1,
                  "f32", "f32", "f32", 3.0);
    put_axis_best(s, b, "k_cols", "fake", "X=3", "// @plan axis\n", "sum", 1, 65536, 11, "f32",
                  "f32", "f32", 3.0);
    put_axis_best(s, b, "k_3d", "fake", "X=4", "// @plan axis\n", "sum", 64, 2048, 512, "f32",
                  "f32", "f32", 3.0);
    store_close(s);
    s = NULL;
    assert_int_equal(store_open(db, STORE_READ, &s, &e), RT_OK);
    rt_device me;
    memset(&me, 0, sizeof me);
    snprintf(me.name, sizeof me.name, "NVIDIA H100 80GB HBM3");
    me.cc_major = 9;
    me.sm_count = 132;
    store_device_match m;
    assert_int_equal(store_find_device_kind(s, &me, "sum", "f32", "f32", "f32", "axis", 1, 0,
                                            &m, &e), RT_OK);
    assert_int_equal(m.id, a);
    assert_int_equal(m.level, STORE_MATCH_EXACT);
    assert_int_equal(m.nbest, 2);
    /* inner > 1: only the PCIe part has winners ("x11" is not "x1") */
    assert_int_equal(store_find_device_kind(s, &me, "sum", "f32", "f32", "f32", "axis", 0, 0,
                                            &m, &e), RT_OK);
    assert_int_equal(m.id, b);
    assert_int_equal(m.level, STORE_MATCH_CC);
    assert_int_equal(m.nbest, 2);
    /* any kind: the layout and its profiles, as before */
    assert_int_equal(store_find_device_spec(s, &me, "sum", "f32", "f32", "f32", "axis", 0, &m,
                                            &e), RT_OK);
    assert_int_equal(m.id, a);
    assert_int_equal(store_find_device_kind(s, &me, "max", "f32", "f32", "f32", "axis", 0, 0,
                                            &m, &e), RT_ENOTFOUND);
    assert_string_equal(e.msg + strlen(db), ": no device of compute capability 9.x has a "
                        "winner for max f32 axis (inner > 1) cold");
    assert_int_equal(store_find_device_kind(s, &me, "sum", "f32", "f32", "f32", "flat", -1, 0,
                                            &m, &e), RT_ENOTFOUND);

    seen r = {0};
    assert_int_equal(store_list_best_for_device_kind(s, b, "sum", "f32", "f32", "f32", "axis", 0,
                                                     0, see, &r, &e), RT_OK);
    assert_int_equal(r.count, 2);
    assert_string_equal(r.layout[0], "axis:1x65536x11");
    assert_string_equal(r.layout[1], "axis:64x2048x512");
    memset(&r, 0, sizeof r);
    assert_int_equal(store_list_best_for_device_kind(s, b, "sum", "f32", "f32", "f32", "axis", 1,
                                                     0, see, &r, &e), RT_OK);
    assert_int_equal(r.count, 0);
    memset(&r, 0, sizeof r);
    assert_int_equal(store_list_best_for_device_kind(s, a, "sum", "f32", "f32", "f32", "axis", 1,
                                                     0, see, &r, &e), RT_OK);
    assert_int_equal(r.count, 2);
    assert_string_equal(r.layout[0], "axis:4096x4096x1");   /* by n */
    assert_string_equal(r.layout[1], "axis:16x4194304x1");
    store_close(s);
    remove_dir(dir);
}

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
        remove_dir(G.dir);
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

/* Winners of this GPU in a database made here: the nearest tuned shape of the same kind runs,
 * and rt_explain_axis names it. */
static void axis_gpu_database(void **state)
{
    (void)state;
    NEED_GPU();
    char db[128];
    rt_err e;
    store *s = NULL;
    snprintf(db, sizeof db, "%s/tuned.db", G.dir);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    long long dev = 0;
    assert_int_equal(store_put_device(s, &G.dev, 0, &dev, &e), RT_OK);
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
    for (size_t sh = 0; sh < NSHAPES; sh++)
        axis_call(ctx, RT_SUM, RT_F32, shapes[sh][0], shapes[sh][1], shapes[sh][2], (int)sh % 2,
                  0);
    axis_call(ctx, RT_SUM, RT_F32, 4096, 4096, 1, 1, 0);
    rt_close(ctx);
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
}

int test_api_axis_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(axis_args),
        cmocka_unit_test(axis_null_ctx),
        cmocka_unit_test(axis_builtin),
        cmocka_unit_test(axis_builtin_compiles),
        cmocka_unit_test(axis_store_kind),
        cmocka_unit_test(axis_plan_counters),
    };
    return cmocka_run_group_tests_name("api_axis", tests, NULL, NULL);
}

int test_api_axis_gpu_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(axis_gpu_builtin),
        cmocka_unit_test(axis_gpu_temp),
        cmocka_unit_test(axis_gpu_user_op),
        cmocka_unit_test(axis_gpu_database),
        cmocka_unit_test(axis_gpu_graph),
        cmocka_unit_test(axis_gpu_capture),
        cmocka_unit_test(axis_gpu_cli),
    };
    return cmocka_run_group_tests_name("api_axis_gpu", tests, gpu_setup, gpu_teardown);
}
