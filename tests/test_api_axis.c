/*
 * test_api_axis.c - libredtune's reductions along an axis (runtime/api_axis.c, docs/axis.md).
 *
 * Group "api_axis" (CPU): the argument checks and their exact messages, the public calls on a
 * NULL context, the built-in default by shape, the store's lookups by axis kind on a
 * database of made-up devices, and with no NVRTC (a child run) a winner that cannot be made
 * whose built-in default cannot be made either: the error naming both, no decision kept. The
 * GPU group is in test_api_axis_gpu.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/redtune.h"
#include "runtime/api.h"
#include "runtime/api_int.h"
#include "runtime/codegen.h"
#include "runtime/family.h"
#include "runtime/nvrtc.h"
#include "runtime/optype.h"
#include "runtime/store.h"
#include "tuner/store_tune.h"
#include "tests/affine.h"
#include "tests/api_axis_util.h"
#include "tests/api_util.h"

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

static void want_builtin_acc(int commutative, size_t es, size_t acc, unsigned long long o,
                             unsigned long long l, unsigned long long i, const char *family,
                             const char *params)
{
    char f[64], p[128];
    api_axis_builtin(commutative, es, acc, o, l, i, f, sizeof f, p, sizeof p);
    if (strcmp(f, family) || strcmp(p, params))
        fail_msg("%llux%llux%llu (size %zu, accumulator %zu%s): %s %s, want %s %s", o, l, i,
                 es, acc, commutative ? "" : ", in order", f, p, family, params);
}

static void want_builtin(int commutative, size_t es, unsigned long long o, unsigned long long l,
                         unsigned long long i, const char *family, const char *params)
{
    want_builtin_acc(commutative, es, 0, o, l, i, family, params);
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
    /* short columns: one row group per column tile, up to 32 bytes in flight a thread; a
     * wide accumulator (argmax's 16 bytes) one column a thread */
    want_builtin(1, 4, 1, 16, 4194304, "axis_cols", "B=256 TX=256 CV=4 U=2 CHUNK=0");
    want_builtin_acc(1, 4, 16, 1, 16, 4194304, "axis_cols", "B=256 TX=256 CV=1 U=4 CHUNK=0");
    want_builtin_acc(1, 2, 16, 1, 16, 4194304, "axis_cols", "B=256 TX=256 CV=1 U=4 CHUNK=0");
    want_builtin_acc(1, 2, 4, 1, 16, 4194304, "axis_cols", "B=256 TX=256 CV=4 U=4 CHUNK=0");
    want_builtin_acc(1, 4, 16, 1, 64, 4096, "axis_cols", "B=256 TX=64 CV=1 U=4 CHUNK=0");
    want_builtin_acc(1, 4, 24, 1, 100, 4096, "axis_cols", "B=256 TX=64 CV=1 U=4 CHUNK=0");
    want_builtin(1, 4, 64, 2048, 512, "axis_cols", "B=256 TX=32 CV=4 U=2 CHUNK=512");
    want_builtin(1, 2, 1, 1000, 17, "axis_cols", "B=256 TX=4 CV=8 U=2 CHUNK=0");
    want_builtin(1, 8, 3, 1, 17, "axis_cols", "B=128 TX=16 CV=2 U=2 CHUNK=0");
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
            api_axis_builtin(!u, optype_size(t), u ? 0 : optype_acc_size(op, t), sh[k][0],
                             sh[k][1], sh[k][2], fam, sizeof fam, params, sizeof params);
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

/* ---------------------------------------------------------------- CPU: a winner not made */

/* Child "axisfallback": REDTUNE_NVRTC=/nonexistent, no GPU needed. min f32 has a rows winner
 * of [1024 x 4096 x 1] with no CUBIN: it cannot be made, nor can the built-in default of the
 * shape in its place, so the decision fails with RT_ENVRTC naming both failures, is not kept
 * (a second try fails the same way, not from the list) and logs nothing; prod f32's rows (no
 * sibling: max would take min's winner) and min f32's columns, with no winner, fail as
 * before, naming the built-in default. */
int test_api_child_axis_fallback(const char *db)
{
    rt_err *e = malloc(sizeof *e);
    rt_ctx *ctx = e ? api_util_child_ctx(db) : NULL;
    int bad = 0;
    if (!ctx) {
        free(e);
        return 1;
    }
    const char *head = "axis min f32 outer [2^9, 2^10), len [2^12, 2^13), inner 1: neither the "
                       "database's winner (axis_rows B=256 L=32 V=4 U=2 CHUNK=0 IL=0) nor the "
                       "built-in default in its place (axis_rows B=256 L=256 V=4 U=2 CHUNK=0 "
                       "IL=0) can be made here\nthe winner: min f32: ";
    for (int round = 0; round < 2; round++) {
        axis_decision *d = NULL;
        int rc = api_axis_decide(ctx, RT_MIN, RT_F32, 1000, 4096, 1, NULL, &d, e);
        printf("min f32 rows, try %d: %d %s\n", round + 1, rc, e->msg);
        if (rc != RT_ENVRTC || d || atomic_load(&ctx->axis_decisions)
            || strncmp(e->msg, head, strlen(head))
            || !strstr(e->msg, "holds no CUBIN for sm_90 of kernel ")
            || !strstr(e->msg, "(axis_rows B=256 L=32 V=4 U=2 CHUNK=0 IL=0) and it cannot be "
                       "compiled here: NVRTC not found: REDTUNE_NVRTC=/nonexistent")
            || !strstr(e->msg, "\nthe built-in default: min f32: ")
            || !strstr(e->msg, "of the built-in default (axis_rows B=256 L=256 V=4 U=2 CHUNK=0 "
                       "IL=0, kernel ")
            || !strstr(e->msg, "to run in place of the winner, and it cannot be compiled here: "
                       "NVRTC not found"))
            bad = 1;
    }
    const struct { rt_op op; unsigned long long o, l, i; const char *builtin; } none[] = {
        {RT_PROD, 1000, 4096, 1, "the built-in default (axis_rows B=256 L=256 V=4 U=2 CHUNK=0 "},
        {RT_MIN, 1, 4096, 64, "the built-in default (axis_cols B=256 TX=16 CV=4 U=2 CHUNK=512 "},
    };
    for (int k = 0; k < 2; k++) {
        axis_decision *d = NULL;
        int rc = api_axis_decide(ctx, none[k].op, RT_F32, none[k].o, none[k].l, none[k].i, NULL,
                                 &d, e);
        printf("%s f32 %llux%llux%llu: %d %s\n", rt_op_name(none[k].op), none[k].o, none[k].l,
               none[k].i, rc, e->msg);
        if (rc != RT_ENVRTC || d || !strstr(e->msg, "has no winner for this GPU")
            || !strstr(e->msg, none[k].builtin) || strstr(e->msg, "neither"))
            bad = 1;
    }
    free(e);
    return api_util_child_end(ctx, bad);
}

/* A winner whose kernel cannot be made, and no NVRTC for the built-in default either: the
 * axis call fails naming both (the child above), as the flat one does. */
static void axis_fallback_no_nvrtc(void **state)
{
    (void)state;
    char dir[64], db[128], out[32768], params[256];
    rt_err e;
    store *s = NULL;
    make_dir(dir);
    snprintf(db, sizeof db, "%s/t.db", dir);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    long long me = api_util_put_device(s, "NVIDIA H100 80GB HBM3", "u0", 9, 0, 132);
    put_axis_emitted(s, me, RT_MIN, RT_F32, "axis_rows", "B=256 L=32 V=4 U=2 CHUNK=0", 1024, 4096,
                     1, params, sizeof params);
    store_close(s);
    int st = api_util_run_child("axisfallback", db, "REDTUNE_NVRTC", "/nonexistent", out,
                                sizeof out);
    if (st)
        print_error("child exit %d:\n%s\n", st, out);
    assert_int_equal(st, 0);
    remove_dir(dir);
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
        cmocka_unit_test(axis_fallback_no_nvrtc),
    };
    return cmocka_run_group_tests_name("api_axis", tests, NULL, NULL);
}

