/*
 * test_api_choose.c - libredtune's choice of a winner (runtime/api_choose.c, api_seg.c) and the
 * read-only queries under it (runtime/store_lookup.c), with no GPU.
 *
 * Group "api_choose" (CPU, runs everywhere): the fallback chain's SQL on a database of
 * made-up devices (identical GPUs completing sizes, siblings of the same cost, a segmented
 * call's mean length completed from another row), whose row a winner is, and the choice among
 * a device's winners by size slot (tests/test_api_slots.c); a winner whose kernel cannot be made: NVRTC's reason in a
 * line, REDTUNE_LOG's warning, and with no NVRTC (a child run) the error naming the winner's
 * failure and the built-in default's, and no decision kept.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "include/redtune.h"
#include "runtime/api.h"
#include "runtime/api_int.h"
#include "runtime/store.h"
#include "tuner/store_tune.h"
#include "tests/api_util.h"

/* ---------------------------------------------------------------- CPU: the lookup queries */


/* A winner of (device, op, type) at n: kernel 'hash' (put if new) measured at 'us'. */
static void put_best(store *s, long long dev, const char *hash, const char *op,
                     const char *type, long long n, double us)
{
    rt_err e;
    char params[64];
    snprintf(params, sizeof params, "X=%lld", n);
    assert_int_equal(store_put_kernel(s, hash, "fake", params, "// @plan onelaunch\n", &e),
                     RT_OK);
    store_measurement m = {dev, 0, hash, op, type, "flat", n, 0, "ok", "", us, us, us, 10,
                           1.0, 0.5, 1, 1};
    assert_int_equal(store_put_measurement(s, &m, &e), RT_OK);
    assert_int_equal(store_update_best(s, dev, op, type, "flat", n, 0, &e), RT_OK);
}

typedef struct rows_seen {
    int count;
    long long n[8], dev[8];
    char hash[8][16];
} rows_seen;

static int see_row(const store_best_row *row, void *arg)
{
    rows_seen *r = arg;
    if (r->count < 8) {
        r->n[r->count] = row->n;
        r->dev[r->count] = row->device_id;
        snprintf(r->hash[r->count], sizeof r->hash[0], "%s", row->kernel_hash);
    }
    r->count++;
    return 0;
}

/* A new database t.db in a new directory, open for writing. */
static store *fresh_store(char *dir, char *db, size_t cap)
{
    rt_err e;
    store *s = NULL;
    api_util_make_dir(dir);
    snprintf(db, cap, "%s/t.db", dir);
    assert_int_equal(store_open(db, STORE_WRITE, &s, &e), RT_OK);
    return s;
}

static void api_store_lookup(void **state)
{
    (void)state;
    char dir[64], db[128];
    rt_err e;
    store *s = fresh_store(dir, db, sizeof db);
    long long a = api_util_put_device(s, "NVIDIA H100 80GB HBM3", "aa", 9, 0, 132);
    long long b = api_util_put_device(s, "NVIDIA H100 PCIe", "bb", 9, 0, 114);
    long long c = api_util_put_device(s, "NVIDIA GH200 480GB", "cc", 9, 0, 132);
    long long d = api_util_put_device(s, "Hypothetical 9.2", "dd", 9, 2, 100);
    long long f = api_util_put_device(s, "NVIDIA A100-SXM4-80GB", "ee", 8, 0, 108);
    put_best(s, a, "k_a_min_4096", "min", "f32", 4096, 3.0);
    put_best(s, a, "k_a_min_1024", "min", "f32", 1024, 2.0);
    put_best(s, b, "k_b_min", "min", "f32", 1024, 2.5);
    put_best(s, d, "k_d_min", "min", "f32", 1024, 2.5);
    put_best(s, f, "k_f_min", "min", "f32", 1024, 2.5);
    put_best(s, b, "k_b_sum", "sum", "f32", 1024, 2.5);
    put_best(s, c, "k_c_sum", "sum", "f32", 1024, 2.5);
    put_best(s, d, "k_d_sum", "sum", "f32", 1024, 2.5);
    put_best(s, d, "k_d_max", "max", "f32", 1024, 2.5);
    put_best(s, f, "k_f_prod", "prod", "f32", 1024, 2.5);
    /* Binaries: the newest NVRTC's CUBIN of this arch wins, whatever the insertion order. */
    const char *blobs[] = {"cubin-12.4", "cubin-13.0", "cubin-13.1-sm80"};
    store_binary bin = {(void *)blobs[0], strlen(blobs[0]) + 1, -1, -1, NULL};
    assert_int_equal(store_put_binary(s, "k_a_min_1024", "sm_90", 12040, &bin, &e), RT_OK);
    bin.cubin = (void *)blobs[1];
    bin.size = strlen(blobs[1]) + 1;
    assert_int_equal(store_put_binary(s, "k_a_min_1024", "sm_90", 13000, &bin, &e), RT_OK);
    bin.cubin = (void *)blobs[2];
    bin.size = strlen(blobs[2]) + 1;
    assert_int_equal(store_put_binary(s, "k_a_min_1024", "sm_80", 13010, &bin, &e), RT_OK);
    store_close(s);
    s = NULL;

    size_t len;
    char *before = api_util_slurp(db, &len);
    assert_non_null(before);
    assert_int_equal(store_open(db, STORE_READ, &s, &e), RT_OK);
    assert_non_null(store_db(s));
    const char *file = sqlite3_db_filename(store_db(s), "main");
    assert_non_null(file);
    assert_non_null(strstr(file, "/t.db"));

    rt_device me;
    memset(&me, 0, sizeof me);
    snprintf(me.name, sizeof me.name, "NVIDIA H100 80GB HBM3");
    me.cc_major = 9;
    me.cc_minor = 0;
    me.sm_count = 132;
    store_device_match m;
    assert_int_equal(store_find_device(s, &me, "min", "f32", "flat", 0, &m, &e), RT_OK);
    assert_int_equal(m.id, a);
    assert_int_equal(m.level, STORE_MATCH_EXACT);
    assert_int_equal(m.nbest, 2);
    assert_string_equal(m.name, "NVIDIA H100 80GB HBM3");
    /* Same compute capability: the nearest SM count wins (GH200's 132 over the PCIe 114). */
    assert_int_equal(store_find_device(s, &me, "sum", "f32", "flat", 0, &m, &e), RT_OK);
    assert_int_equal(m.id, c);
    assert_int_equal(m.level, STORE_MATCH_CC);
    assert_int_equal(store_find_device(s, &me, "max", "f32", "flat", 0, &m, &e), RT_OK);
    assert_int_equal(m.id, d);
    assert_int_equal(m.level, STORE_MATCH_MAJOR);
    assert_int_equal(m.cc_minor, 2);
    /* Another major architecture never answers. */
    assert_int_equal(store_find_device(s, &me, "prod", "f32", "flat", 0, &m, &e),
                     RT_ENOTFOUND);
    assert_non_null(strstr(e.msg, "no device of compute capability 9.x has a winner for "
                                  "prod f32 flat cold"));
    assert_int_equal(store_find_device(s, &me, "min", "f32", "flat", 1, &m, &e), RT_ENOTFOUND);
    /* A same-named GPU with fewer SMs (a cut-down part) is not the exact device. */
    me.sm_count = 114;
    snprintf(me.name, sizeof me.name, "NVIDIA H100 PCIe");
    assert_int_equal(store_find_device(s, &me, "min", "f32", "flat", 0, &m, &e), RT_OK);
    assert_int_equal(m.id, b);
    assert_int_equal(m.level, STORE_MATCH_EXACT);
    me.sm_count = 120;
    assert_int_equal(store_find_device(s, &me, "min", "f32", "flat", 0, &m, &e), RT_OK);
    assert_int_equal(m.level, STORE_MATCH_CC);
    assert_int_equal(m.id, b);   /* 114 SMs is nearer 120 than 132 */

    rows_seen r = {0};
    assert_int_equal(store_list_best_for_device(s, a, "min", "f32", "flat", 0, see_row, &r, &e),
                     RT_OK);
    assert_int_equal(r.count, 2);
    assert_int_equal(r.n[0], 1024);
    assert_string_equal(r.hash[0], "k_a_min_1024");
    assert_int_equal(r.n[1], 4096);
    memset(&r, 0, sizeof r);
    assert_int_equal(store_list_best_for_device(s, a, "sum", "f32", "flat", 0, see_row, &r, &e),
                     RT_OK);
    assert_int_equal(r.count, 0);

    int ver = -1;
    assert_int_equal(store_get_binary_any(s, "k_a_min_1024", "sm_90", &bin, &ver, &e), RT_OK);
    assert_int_equal(ver, 13000);
    assert_string_equal((const char *)bin.cubin, "cubin-13.0");
    store_binary_free(&bin);
    assert_int_equal(store_get_binary_any(s, "k_a_min_1024", "sm_86", &bin, &ver, &e),
                     RT_ENOTFOUND);
    assert_null(bin.cubin);
    assert_int_equal(ver, 0);
    assert_non_null(strstr(e.msg, "no binary of kernel k_a_min_1024 for sm_86"));
    store_close(s);
    assert_true(api_util_same_bytes(db, before, len));   /* the lookups never write */
    free(before);
    api_util_remove_dir(dir);
}

/* Identical GPUs (redtune --device all [--split]): a GPU takes its own device row (by UUID)
 * over a twin's with as many winners, a twin's with more winners over its own, and a size
 * the row lacks from a twin's row (the fastest twin's where several have it), never from a
 * GPU that differs in memory clock; the rows say whose they are. */
static void api_store_identical_gpus(void **state)
{
    (void)state;
    char dir[64], db[128];
    rt_err e;
    store *s = fresh_store(dir, db, sizeof db);
    long long g0 = api_util_put_device(s, "NVIDIA H200", "u0", 9, 0, 132);
    long long g1 = api_util_put_device(s, "NVIDIA H200", "u1", 9, 0, 132);
    long long g2 = api_util_put_device(s, "NVIDIA H200", "u2", 9, 0, 132);
    long long slow = api_util_put_device(s, "NVIDIA H200", "u3", 9, 0, 132);
    assert_int_equal(sqlite3_exec(store_db(s), "UPDATE devices SET mem_clock_khz = 1000 WHERE "
                                  "uuid = 'u3'", NULL, NULL, NULL), SQLITE_OK);
    /* seen at the same second: the lookup's last tie-break, d.last_seen, would otherwise
     * prefer u3 (as many winners as g0 and g1) whenever the clock ticked while they were made */
    assert_int_equal(sqlite3_exec(store_db(s), "UPDATE devices SET last_seen = "
                                  "(SELECT min(last_seen) FROM devices)", NULL, NULL, NULL),
                     SQLITE_OK);
    put_best(s, g0, "k0_1024", "min", "f32", 1024, 2.0);
    put_best(s, g0, "k0_4096", "min", "f32", 4096, 3.0);
    put_best(s, g1, "k1_4096", "min", "f32", 4096, 2.5);
    put_best(s, g1, "k1_16384", "min", "f32", 16384, 4.0);
    put_best(s, g2, "k2_16384", "min", "f32", 16384, 3.5);
    put_best(s, slow, "k3_65536", "min", "f32", 65536, 9.0);
    put_best(s, slow, "k3_1024", "min", "f32", 1024, 1.0);
    store_close(s);
    s = NULL;
    assert_int_equal(store_open(db, STORE_READ, &s, &e), RT_OK);

    rt_device me;
    memset(&me, 0, sizeof me);
    snprintf(me.name, sizeof me.name, "NVIDIA H200");
    me.cc_major = 9;
    me.sm_count = 132;
    store_device_match m;
    const char *uuid[] = {"u0", "u1"};
    const long long want[] = {g0, g1};
    for (int i = 0; i < 2; i++) {
        snprintf(me.uuid, sizeof me.uuid, "%s", uuid[i]);
        assert_int_equal(store_find_device(s, &me, "min", "f32", "flat", 0, &m, &e), RT_OK);
        assert_int_equal(m.id, want[i]);
        assert_int_equal(m.own, 1);
        assert_int_equal(m.level, STORE_MATCH_EXACT);
    }
    snprintf(me.uuid, sizeof me.uuid, "elsewhere");
    assert_int_equal(store_find_device(s, &me, "min", "f32", "flat", 0, &m, &e), RT_OK);
    assert_int_equal(m.own, 0);
    snprintf(me.uuid, sizeof me.uuid, "u2");   /* one winner: g0 and g1 have two */
    assert_int_equal(store_find_device(s, &me, "min", "f32", "flat", 0, &m, &e), RT_OK);
    assert_int_equal(m.own, 0);
    assert_true(m.id == g0 || m.id == g1);

    /* g0's own 1024 and 4096 (though g1's 4096 is faster), 16384 from g2 (faster than g1's);
     * nothing of u3, whose memory clock differs. */
    rows_seen r = {0};
    assert_int_equal(store_list_best_for_device(s, g0, "min", "f32", "flat", 0, see_row,
                                                &r, &e), RT_OK);
    assert_int_equal(r.count, 3);
    assert_int_equal(r.n[0], 1024);
    assert_string_equal(r.hash[0], "k0_1024");
    assert_int_equal(r.dev[0], g0);
    assert_string_equal(r.hash[1], "k0_4096");
    assert_int_equal(r.dev[1], g0);
    assert_int_equal(r.n[2], 16384);
    assert_string_equal(r.hash[2], "k2_16384");
    assert_int_equal(r.dev[2], g2);
    /* u3 differs: its own rows only. */
    memset(&r, 0, sizeof r);
    assert_int_equal(store_list_best_for_device(s, slow, "min", "f32", "flat", 0, see_row,
                                                &r, &e), RT_OK);
    assert_int_equal(r.count, 2);
    assert_string_equal(r.hash[0], "k3_1024");
    assert_string_equal(r.hash[1], "k3_65536");
    store_close(s);
    api_util_remove_dir(dir);
}

/* A winner of 'family' (known or not) for (op, element type, accumulator, result). */
static void put_spec_best(store *s, long long dev, const char *hash, const char *family,
                          const char *op, const char *type, const char *acc, const char *res,
                          long long n, double us)
{
    rt_err e;
    assert_int_equal(store_put_kernel(s, hash, family, "B=128 V=2 U=2 G=2",
                                      "// @plan onelaunch\n", &e), RT_OK);
    store_measurement m = {dev, 0, hash, op, type, "flat", n, 0, "ok", "", us, us, us, 10,
                           1.0, 0.5, 1, 1, 0, 0, 0, acc, res};
    assert_int_equal(store_put_measurement(s, &m, &e), RT_OK);
    assert_int_equal(store_update_best_spec(s, dev, op, type, acc, res, "flat", n, 0, &e), RT_OK);
}

/* The siblings (optype_siblings): a symmetric relation of built-in operators, each of the
 * same cost as the operator for every type both define (optype_same_cost), never prod, mean
 * or a user operator; the integer sums have none of the float-only fused ones. */
static void api_siblings_are_of_the_same_cost(void **state)
{
    (void)state;
    rt_op kin[4], back[4];
    for (int op = 0; op < RT_OP_COUNT; op++) {
        int k = optype_siblings((rt_op)op, kin, 4);
        if (op == RT_PROD || op == RT_MEAN)
            assert_int_equal(k, 0);
        else
            assert_true(k >= 1 && k <= 3);
        for (int i = 0; i < k; i++) {
            assert_int_not_equal(kin[i], op);
            int m = optype_siblings(kin[i], back, 4), found = 0;
            for (int j = 0; j < m; j++)
                found |= back[j] == (rt_op)op;
            if (!found)
                fail_msg("%s lists %s, not the other way", rt_op_name(op), rt_op_name(kin[i]));
            for (int t = 0; t < RT_TYPE_COUNT; t++) {
                optype_ts a, b;
                if (optype_resolve(op, t, &a, NULL, 0) || optype_resolve(kin[i], t, &b, NULL, 0))
                    continue;
                if (!optype_same_cost(op, kin[i], t))
                    fail_msg("%s and %s of %s differ", rt_op_name(op), rt_op_name(kin[i]),
                             rt_type_name(t));
            }
        }
    }
    assert_int_equal(optype_siblings(RT_MIN, kin, 4), 2);
    assert_int_equal(kin[0], RT_MAX);
    assert_int_equal(kin[1], RT_AMAX);
    assert_int_equal(optype_siblings(RT_NORM2, kin, 1), 1);   /* 'max' bounds the list */
    assert_int_equal(kin[0], RT_SUMSQ);
    assert_true(optype_same_cost(RT_SUM, RT_NORM2, RT_BF16));   /* both f32 accumulators */
    assert_false(optype_same_cost(RT_SUM, RT_ASUM, RT_I32));    /* asum is for floats */
    assert_false(optype_same_cost(RT_MIN, RT_AMAX, RT_I32));
    assert_false(optype_same_cost(RT_MIN, RT_MAX, RT_TYPE_COUNT));
    assert_false(optype_same_cost(RT_MIN, (rt_op)RT_OP_USER_FIRST, RT_F32));
}

/* A bare context (api_util_bare_ctx); the test fails if it cannot be made. */
static rt_ctx *bare_ctx(store *s, const char *name)
{
    rt_ctx *ctx = api_util_bare_ctx(s, name);
    assert_non_null(ctx);
    return ctx;
}

/* api_get_choice: an operator with no winner of its own for this GPU or a similar one takes
 * a sibling's (the nearest first that has one), leaving out winners of a family this library
 * does not know; one with winners of its own, or with no sibling that has any, does not. */
static void api_choice_takes_a_sibling(void **state)
{
    (void)state;
    char dir[64], db[128], note[512];
    rt_err e;
    store *s = fresh_store(dir, db, sizeof db);
    long long me = api_util_put_device(s, "NVIDIA H100 80GB HBM3", "u0", 9, 0, 132);
    long long old = api_util_put_device(s, "Tesla V100", "u9", 7, 0, 80);
    put_spec_best(s, me, "max1024", "gridstride", "max", "f32", "f32", "f32", 1024, 2.0);
    put_spec_best(s, me, "max4096", "from_the_future", "max", "f32", "f32", "f32", 4096, 3.0);
    put_spec_best(s, me, "amax1024", "gridstride", "amax", "f32", "f32", "f32", 1024, 2.5);
    put_spec_best(s, me, "argmax1024", "gridstride", "argmax", "f32", "f32", "f32", 1024, 2.0);
    put_spec_best(s, me, "sumsq1024", "gridstride", "sumsq", "f32", "f32", "f32", 1024, 2.0);
    put_spec_best(s, old, "sum1024", "gridstride", "sum", "f32", "f32", "f32", 1024, 9.0);
    store_close(s);
    s = NULL;
    assert_int_equal(store_open(db, STORE_READ, &s, &e), RT_OK);
    rt_ctx *ctx = bare_ctx(s, "NVIDIA H100 80GB HBM3");
    struct { rt_op op; int kin; int nrows; int level; } want[] = {
        {RT_MIN, RT_MAX, 1, STORE_MATCH_EXACT},       /* max's, its future family left out */
        {RT_MAX, -1, 2, STORE_MATCH_EXACT},           /* its own, both */
        {RT_AMAX, -1, 1, STORE_MATCH_EXACT},
        {RT_ARGMIN, RT_ARGMAX, 1, STORE_MATCH_EXACT},
        {RT_NORM2, RT_SUMSQ, 1, STORE_MATCH_EXACT},
        {RT_ASUM, RT_SUMSQ, 1, STORE_MATCH_EXACT},    /* sum's row is of another major arch */
        {RT_SUM, RT_SUMSQ, 1, STORE_MATCH_EXACT},
        {RT_PROD, -1, 0, LEVEL_BUILTIN},
        {RT_MEAN, -1, 0, LEVEL_BUILTIN},
        {RT_VAR_MEAN, -1, 0, LEVEL_BUILTIN},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        choice *c = NULL;
        assert_int_equal(api_get_choice(ctx, 0, want[i].op, RT_F32, &c, &e), RT_OK);
        if (c->has_kin != (want[i].kin >= 0) || (c->has_kin && (int)c->kin != want[i].kin)
            || c->nrows != want[i].nrows || c->level != want[i].level)
            fail_msg("%s f32: has_kin %d kin %s, %d rows, level %d", rt_op_name(want[i].op),
                     c->has_kin, c->has_kin ? rt_op_name(c->kin) : "-", c->nrows, c->level);
        const char *kn = api_kin_name(c, c->nrows ? &c->rows[0] : NULL);
        api_kin_note(ctx, c, c->nrows ? &c->rows[0] : NULL, want[i].op, note, sizeof note);
        if (want[i].kin >= 0) {
            assert_string_equal(kn, rt_op_name(want[i].kin));
            assert_non_null(strstr(note, "; the winner of "));
            assert_non_null(strstr(note, rt_op_name(want[i].kin)));
            assert_string_equal(c->rows[0].family, "gridstride");
        } else {
            assert_null(kn);
            assert_string_equal(note, "");
        }
    }
    /* i32: min has no winner and max none of i32; sum of i32 no sibling at all */
    choice *c = NULL;
    assert_int_equal(api_get_choice(ctx, 0, RT_MIN, RT_I32, &c, &e), RT_OK);
    assert_int_equal(c->level, LEVEL_BUILTIN);
    assert_int_equal(c->has_kin, 0);
    api_util_free_ctx(ctx);
    store_close(s);
    api_util_remove_dir(dir);
}

/* optype_type_kin: the plain types of the same element size for which the operator resolves
 * to accumulators and results of the same sizes, the same kind first, then the same
 * signedness; none for a type spec with an accumulator of its own, nor where no such type
 * defines the operator. */
static void api_type_kin_is_of_the_same_width(void **state)
{
    (void)state;
    rt_type k[4];
    assert_int_equal(optype_type_kin(RT_MIN, RT_I64, k, 4), 2);
    assert_int_equal(k[0], RT_U64);
    assert_int_equal(k[1], RT_F64);
    assert_int_equal(optype_type_kin(RT_SUM, RT_U64, k, 4), 2);
    assert_int_equal(k[0], RT_I64);
    assert_int_equal(k[1], RT_F64);
    assert_int_equal(optype_type_kin(RT_MAX, RT_F64, k, 4), 2);
    assert_int_equal(k[0], RT_I64);
    assert_int_equal(k[1], RT_U64);
    assert_int_equal(optype_type_kin(RT_SUM, RT_U32, k, 4), 2);
    assert_int_equal(k[0], RT_I32);
    assert_int_equal(k[1], RT_F32);
    assert_int_equal(optype_type_kin(RT_SUM, RT_U32, k, 1), 1);   /* 'max' bounds the list */
    assert_int_equal(k[0], RT_I32);
    assert_int_equal(optype_type_kin(RT_SUM, RT_F16, k, 4), 1);   /* both f32 accumulators */
    assert_int_equal(k[0], RT_BF16);
    assert_int_equal(optype_type_kin(RT_ASUM, RT_F32, k, 4), 0);  /* asum is for floats */
    assert_int_equal(optype_type_kin(RT_SUM, (rt_type)RT_ACC(RT_BF16, RT_F64), k, 4), 0);
    assert_int_equal(optype_type_kin((rt_op)RT_OP_USER_FIRST, RT_I64, k, 4), 0);
    for (int op = 0; op < RT_OP_COUNT; op++)
        for (int t = 0; t < RT_TYPE_COUNT; t++) {
            int n = optype_type_kin((rt_op)op, (rt_type)t, k, 4);
            for (int i = 0; i < n; i++)
                if (k[i] == (rt_type)t || optype_size(k[i]) != optype_size((rt_type)t)
                    || optype_acc_size((rt_op)op, k[i]) != optype_acc_size((rt_op)op, (rt_type)t)
                    || optype_res_size((rt_op)op, k[i]) != optype_res_size((rt_op)op, (rt_type)t))
                    fail_msg("%s %s lists %s", rt_op_name((rt_op)op), rt_type_name((rt_type)t),
                             rt_type_name(k[i]));
        }
}

/* api_get_choice: with no winner of its own type, nor of a sibling operator, an operator
 * takes its own winners of a type of the same width (min i64 those of min f64, sum u32 those
 * of sum i32), and says so; never two steps (max i64 does not take min f64's). */
static void api_choice_takes_a_type_of_the_same_width(void **state)
{
    (void)state;
    char dir[64], db[128], note[512];
    rt_err e;
    store *s = fresh_store(dir, db, sizeof db);
    long long me = api_util_put_device(s, "NVIDIA H100 80GB HBM3", "u0", 9, 0, 132);
    put_spec_best(s, me, "minf64", "gridstride", "min", "f64", "f64", "f64", 1 << 20, 9.0);
    put_spec_best(s, me, "sumi32", "gridstride", "sum", "i32", "i32", "i32", 1 << 20, 7.0);
    put_spec_best(s, me, "sumu64", "gridstride", "sum", "u64", "u64", "u64", 1 << 20, 8.0);
    store_close(s);
    s = NULL;
    assert_int_equal(store_open(db, STORE_READ, &s, &e), RT_OK);
    rt_ctx *ctx = bare_ctx(s, "NVIDIA H100 80GB HBM3");
    struct { rt_op op; rt_type type; int tkin; const char *name; int nrows; } want[] = {
        {RT_MIN, RT_I64, RT_F64, "min f64", 1},
        {RT_MIN, RT_U64, RT_F64, "min f64", 1},
        {RT_MAX, RT_I64, -1, NULL, 0},                /* min f64 would be two steps away */
        {RT_SUM, RT_U32, RT_I32, "sum i32", 1},
        {RT_SUM, RT_I64, RT_U64, "sum u64", 1},       /* the integer before the float */
        {RT_SUM, RT_F64, RT_U64, "sum u64", 1},       /* i64 has none, u64 is next */
        {RT_MIN, RT_F64, -1, NULL, 1},                /* its own */
        {RT_PROD, RT_I64, -1, NULL, 0},               /* nothing of prod anywhere */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        choice *c = NULL;
        assert_int_equal(api_get_choice(ctx, 0, want[i].op, want[i].type, &c, &e), RT_OK);
        const best_entry *r = c->nrows ? &c->rows[0] : NULL;
        const char *kn = api_kin_name(c, r);
        api_kin_note(ctx, c, r, want[i].op, note, sizeof note);
        if (c->has_tkin != (want[i].tkin >= 0) || (c->has_tkin && (int)c->tkin != want[i].tkin)
            || c->has_kin || c->nrows != want[i].nrows
            || c->level != (want[i].nrows ? STORE_MATCH_EXACT : LEVEL_BUILTIN))
            fail_msg("%s %s: has_tkin %d tkin %s has_kin %d, %d rows, level %d",
                     rt_op_name(want[i].op), rt_type_name(want[i].type), c->has_tkin,
                     c->has_tkin ? rt_type_name(c->tkin) : "-", c->has_kin, c->nrows, c->level);
        if (want[i].tkin < 0) {
            assert_null(kn);
            assert_string_equal(note, "");
            continue;
        }
        assert_string_equal(kn, want[i].name);
        assert_non_null(strstr(api_kin_desc(c, r), "(a type of the same width)"));
        char own[64], head[96];
        snprintf(own, sizeof own, "none of %s %s's own", rt_op_name(want[i].op),
                 rt_type_name(want[i].type));
        snprintf(head, sizeof head, "; the winner of %s, a type of the same width: ",
                 want[i].name);
        if (strncmp(note, head, strlen(head)) || !strstr(note, own))
            fail_msg("note: %s", note);
        /* the phrase of a winner that cannot be made (rt_explain's "none used") */
        char ph[128];
        api_kin_phrase(c, r, ph, sizeof ph);
        snprintf(head, sizeof head, "; a winner of %s, a type of the same width", want[i].name);
        assert_string_equal(ph, head);
    }
    api_util_free_ctx(ctx);
    store_close(s);
    api_util_remove_dir(dir);
}

/* A segmented winner of min f32 (seg_per) at n with mean segment length 'mean'. */
static void put_seg_best(store *s, long long dev, const char *hash, const char *layout,
                         long long n, double mean, double us)
{
    rt_err e;
    assert_int_equal(store_put_kernel(s, hash, "seg_per", "LAYOUT=2 B=256 LANES=1 V=4",
                                      "// @plan segmented\n", &e), RT_OK);
    store_measurement m = {dev, 0, hash, "min", "f32", layout, n, 0, "ok", "", us, us, us, 10,
                           1.0, 0.5, 1, 1, (long long)(n / mean), mean, 0, NULL, NULL};
    assert_int_equal(store_put_measurement(s, &m, &e), RT_OK);
    assert_int_equal(store_update_best(s, dev, "min", "f32", layout, n, 0, &e), RT_OK);
}

/* A segmented call whose mean length is far (more than a factor of about 2) from every
 * winner of the row nearest this GPU takes the nearest row that has a winner near it
 * (api_seg_pick): here this H200's row holds only rand10_50 (as after `redtune --segmented
 * offsets --profiles rand10_50` on it), and a mean of 3 or 1000 takes the H100's row; a mean
 * near 30 keeps this GPU's own winner, and a mean no row is near keeps the nearest. */
static void api_seg_completes_by_mean(void **state)
{
    (void)state;
    char dir[64], db[128];
    rt_err e;
    store *s = fresh_store(dir, db, sizeof db);
    long long me = api_util_put_device(s, "NVIDIA H200", "u0", 9, 0, 132);
    long long other = api_util_put_device(s, "NVIDIA H100 80GB HBM3", "u1", 9, 0, 132);
    put_seg_best(s, me, "h200_rand", "offsets:rand10_50", 1 << 20, 30.0, 5.0);
    put_seg_best(s, other, "h100_rand", "offsets:rand10_50", 1 << 20, 30.0, 8.0);
    put_seg_best(s, other, "h100_len3", "offsets:len3", 1 << 20, 3.0, 9.0);
    put_seg_best(s, other, "h100_long", "offsets:len1000", 1 << 20, 1000.0, 4.0);
    store_close(s);
    s = NULL;
    assert_int_equal(store_open(db, STORE_READ, &s, &e), RT_OK);
    rt_ctx *ctx = bare_ctx(s, "NVIDIA H200");
    struct { double mean; const char *hash; int by_mean, level; } want[] = {
        {30.0, "h200_rand", 0, STORE_MATCH_EXACT},
        {40.0, "h200_rand", 0, STORE_MATCH_EXACT},   /* within the band: its own */
        {3.0, "h100_len3", 1, STORE_MATCH_CC},
        {2.0, "h100_len3", 1, STORE_MATCH_CC},
        {1000.0, "h100_long", 1, STORE_MATCH_CC},
        {200.0, "h200_rand", 0, STORE_MATCH_EXACT},  /* no row near 200: the nearest stays */
        {3.0, "h100_len3", 1, STORE_MATCH_CC},       /* again: the answer kept */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const choice *c = NULL;
        const best_entry *row = NULL;
        int mb = want[i].mean > 1 ? (int)floor(2 * log2(want[i].mean)) : 0;
        assert_int_equal(api_seg_pick(ctx, 2, RT_MIN, RT_F32, 20, mb, 0, &c, &row, &e), RT_OK);
        assert_non_null(row);
        if (strcmp(row->hash, want[i].hash) || c->by_mean != want[i].by_mean
            || c->level != want[i].level)
            fail_msg("mean %.0f: %s (by mean %d, level %d), want %s", want[i].mean, row->hash,
                     c->by_mean, c->level, want[i].hash);
    }
    int kept = 0;
    for (mean_choice *m = ctx->mean_choices; m; m = m->next)
        kept++;
    assert_int_equal(kept, 4);   /* mean buckets of 3, 2, 1000 and 200, each read once */
    api_util_free_ctx(ctx);
    store_close(s);
    api_util_remove_dir(dir);
}

/* rt_explain's word on whose winner runs (api_row_owner): an identical GPU's row for a case
 * the chosen row lacks, else this GPU's own row, another GPU of this model, or another GPU
 * (a fallback level below the exact device). */
static void api_row_owner_says_whose(void **state)
{
    (void)state;
    choice c;
    best_entry b;
    memset(&c, 0, sizeof c);
    memset(&b, 0, sizeof b);
    c.dev.id = 7;
    c.dev.level = STORE_MATCH_EXACT;
    b.device_id = 7;
    assert_string_equal(api_row_owner(&c, &b), "the row of another GPU of this model");
    c.dev.own = 1;
    assert_string_equal(api_row_owner(&c, &b), "this GPU's own row");
    b.device_id = 8;
    assert_non_null(strstr(api_row_owner(&c, &b), "this size's winner on an identical GPU"));
    b.device_id = 7;
    c.dev.own = 0;
    c.dev.level = STORE_MATCH_CC;
    assert_string_equal(api_row_owner(&c, &b), "the row of another GPU");
}

/* ---------------------------------------------------------------- CPU: a winner not made */

/* What NVRTC said of a gridstride unit with G = 32 (the template's static_assert), as
 * get_kernel puts it after the winner's own words. */
#define GS_LOG "gridstride.cu: NVRTC_ERROR_COMPILATION for sm_90\n" \
    "templates/gridstride.cu(68): error: static assertion failed with \"gridstride: G must " \
    "be in 1..16\"\n  static_assert(RT_G >= 1 && RT_G <= 16, \"gridstride: G must be in " \
    "1..16\");\n  ^\n\n1 error detected in the compilation of \"gridstride.cu\".\n"

/* api_nvrtc_line: NVRTC's part of a winner's message in one line, its verdict and the log's
 * first error; why NVRTC could not be loaded as it is; a message of other words, its first
 * line; a verdict with no error in the log, alone. */
static void api_nvrtc_line_says_why(void **state)
{
    (void)state;
    char line[512];
    api_nvrtc_line("min f32: t.db holds no CUBIN for sm_90 of kernel 0123456789ab (gridstride "
                   "B=256 V=4 U=4 G=32) and it cannot be compiled here: " GS_LOG, line,
                   sizeof line);
    assert_string_equal(line, "gridstride.cu: NVRTC_ERROR_COMPILATION for sm_90: "
                        "templates/gridstride.cu(68): error: static assertion failed with "
                        "\"gridstride: G must be in 1..16\"");
    api_nvrtc_line("min f32: t.db holds no CUBIN for sm_90 of kernel 0123456789ab (gridstride "
                   "B=256 V=4 U=4 G=4) and it cannot be compiled here: NVRTC not found: "
                   "REDTUNE_NVRTC=/nonexistent: /nonexistent: cannot open shared object file",
                   line, sizeof line);
    assert_string_equal(line, "NVRTC not found: REDTUNE_NVRTC=/nonexistent: /nonexistent: "
                        "cannot open shared object file");
    api_nvrtc_line("first line\nsecond line", line, sizeof line);
    assert_string_equal(line, "first line");
    api_nvrtc_line("x.cu: NVRTC_ERROR_COMPILATION for sm_90\nwarning: something\n", line,
                   sizeof line);
    assert_string_equal(line, "x.cu: NVRTC_ERROR_COMPILATION for sm_90");
    api_nvrtc_line(GS_LOG, line, 24);   /* cut to fit, NUL-terminated */
    assert_string_equal(line, "gridstride.cu: NVRTC_ER");
}

/* REDTUNE_LOG=warn's line where the built-in default runs in place of a winner that cannot
 * be made: the case, the winner (family, parameters, its row and level; a sibling's says
 * whose), this GPU and NVRTC's reason, then what runs; one line each. */
static void api_log_instead_says_why(void **state)
{
    (void)state;
    rt_ctx *ctx = bare_ctx(NULL, "NVIDIA H100 80GB HBM3");
    snprintf(ctx->arch, sizeof ctx->arch, "sm_90");
    FILE *err = tmpfile();
    assert_non_null(err);
    ctx->cap.log = CAPTURE_LOG_WARN;
    ctx->cap.err = err;
    kernel k;
    memset(&k, 0, sizeof k);
    snprintf(k.family, sizeof k.family, "gridstride");
    snprintf(k.params, sizeof k.params, "B=256 V=4 U=4 G=4");
    char why[512];
    api_nvrtc_line(GS_LOG, why, sizeof why);
    api_log_instead(ctx, "min f32 n = 2^20", "gridstride", "B=256 V=4 U=4 G=32",
                    "NVIDIA H100 80GB HBM3", STORE_MATCH_EXACT, NULL, why, &k);
    api_log_instead(ctx, "min f32 n = 2^20", "gridstride", "B=256 V=4 U=4 G=32",
                    "NVIDIA H100 PCIe", STORE_MATCH_CC, "max (an operator of the same cost)", why,
                    &k);
    ctx->cap.log = CAPTURE_LOG_OFF;   /* silent: nothing more */
    api_log_instead(ctx, "min f32 n = 2^20", "gridstride", "B=256 V=4 U=4 G=32",
                    "NVIDIA H100 80GB HBM3", STORE_MATCH_EXACT, NULL, why, &k);
    char said[4096] = "";
    rewind(err);
    size_t got = fread(said, 1, sizeof said - 1, err);
    said[got] = '\0';
    fclose(err);
    assert_string_equal(said,
        "redtune: warn: min f32 n = 2^20: the database's winner gridstride B=256 V=4 U=4 G=32 "
        "(tuned on \"NVIDIA H100 80GB HBM3\", exact device) cannot be made for this GPU "
        "(\"NVIDIA H100 80GB HBM3\", sm_90): gridstride.cu: NVRTC_ERROR_COMPILATION for sm_90: "
        "templates/gridstride.cu(68): error: static assertion failed with \"gridstride: G must "
        "be in 1..16\"; the built-in default gridstride B=256 V=4 U=4 G=4 runs instead\n"
        "redtune: warn: min f32 n = 2^20: the database's winner gridstride B=256 V=4 U=4 G=32 "
        "(tuned on \"NVIDIA H100 PCIe\", same compute capability, a winner of max (an operator "
        "of the same cost)) cannot be made for this GPU (\"NVIDIA H100 80GB HBM3\", sm_90): "
        "gridstride.cu: NVRTC_ERROR_COMPILATION for sm_90: templates/gridstride.cu(68): error: "
        "static assertion failed with \"gridstride: G must be in 1..16\"; the built-in default "
        "gridstride B=256 V=4 U=4 G=4 runs instead\n");
    api_util_free_ctx(ctx);
}

/* Child "fallback": REDTUNE_NVRTC=/nonexistent, no GPU needed. min f32 has a winner at 2^20
 * with no CUBIN: it cannot be made, nor can the built-in default in its place, so the
 * decision fails with RT_ENVRTC naming both failures, is not kept (a second try fails the
 * same way, not from a cache) and logs nothing; prod f32, with no winner, fails as before. */
int test_api_child_fallback(const char *db)
{
    rt_err *e = malloc(sizeof *e);
    rt_ctx *ctx = e ? api_util_child_ctx(db) : NULL;
    int bad = 0;
    if (!ctx) {
        free(e);
        return 1;
    }
    const char *head = "min f32 n = 2^20: neither the database's winner (gridstride B=128 V=2 "
                       "U=2 G=2) nor the built-in default in its place (gridstride B=256 V=4 "
                       "U=4 G=4) can be made here\nthe winner: min f32: ";
    for (int round = 0; round < 2; round++) {
        decision *d = NULL;
        int rc = api_get_decision(ctx, RT_MIN, RT_F32, 1 << 20, &d, e);
        printf("min f32, try %d: %d %s\n", round + 1, rc, e->msg);
        if (rc != RT_ENVRTC || d || api_decided(ctx, RT_MIN, RT_F32, 1 << 20)
            || strncmp(e->msg, head, strlen(head))
            || !strstr(e->msg, "holds no CUBIN for sm_90 of kernel ")
            || !strstr(e->msg, "(gridstride B=128 V=2 U=2 G=2) and it cannot be compiled here: "
                       "NVRTC not found: REDTUNE_NVRTC=/nonexistent")
            || !strstr(e->msg, "\nthe built-in default: min f32: ")
            || !strstr(e->msg, "of the built-in default (gridstride B=256 V=4 U=4 G=4, kernel ")
            || !strstr(e->msg, "to run in place of the winner, and it cannot be compiled here: "
                       "NVRTC not found"))
            bad = 1;
    }
    decision *d = NULL;
    int rc = api_get_decision(ctx, RT_PROD, RT_F32, 1 << 20, &d, e);
    printf("prod f32: %d %s\n", rc, e->msg);
    if (rc != RT_ENVRTC || !strstr(e->msg, "has no winner for this GPU")
        || !strstr(e->msg, "the built-in default (gridstride"))
        bad = 1;
    free(e);
    return api_util_child_end(ctx, bad);
}

static void api_fallback_no_nvrtc(void **state)
{
    (void)state;
    char dir[64], db[128], out[32768];
    store *s = fresh_store(dir, db, sizeof db);
    long long me = api_util_put_device(s, "NVIDIA H100 80GB HBM3", "u0", 9, 0, 132);
    put_spec_best(s, me, "min1m", "gridstride", "min", "f32", "f32", "f32", 1 << 20, 5.0);
    store_close(s);
    int st = api_util_run_child("fallback", db, "REDTUNE_NVRTC", "/nonexistent", out,
                                sizeof out);
    if (st)
        print_error("child exit %d:\n%s\n", st, out);
    assert_int_equal(st, 0);
    api_util_remove_dir(dir);
}

int test_api_choose_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_store_lookup),
        cmocka_unit_test(api_store_identical_gpus),
        cmocka_unit_test(api_row_owner_says_whose),
        cmocka_unit_test(api_siblings_are_of_the_same_cost),
        cmocka_unit_test(api_choice_takes_a_sibling),
        cmocka_unit_test(api_type_kin_is_of_the_same_width),
        cmocka_unit_test(api_choice_takes_a_type_of_the_same_width),
        cmocka_unit_test(api_seg_completes_by_mean),
        cmocka_unit_test(api_nvrtc_line_says_why),
        cmocka_unit_test(api_log_instead_says_why),
        cmocka_unit_test(api_fallback_no_nvrtc),
    };
    return cmocka_run_group_tests_name("api_choose", tests, NULL, NULL);
}
