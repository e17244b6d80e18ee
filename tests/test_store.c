/*
 * test_store.c - runtime/store.c: the schema, every put and get, and the winner per case
 * (one per op, type, acc, result, layout, n and hot). What store_open refuses, migrates and
 * does with several writers is in test_store_open.c; export, merge, dump and load in
 * test_store_ship.c and test_store_ship_checks.c; their shared helpers and the fixtures of
 * tests/db/ in tests/store_util.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/hash.h"
#include "runtime/store.h"
#include "tuner/store_tune.h"
#include "tests/api_util.h"
#include "tests/store_util.h"

/* ---------------------------------------------------------------- round trips */

static void test_roundtrip(void **state)
{
    fixture *f = *state;
    rt_err e;
    rt_device d = make_device("NVIDIA H100 80GB HBM3", "0123456789abcdef0123456789abcdef", 0,
                              9, 0);
    long long dev = 0, dev2 = 0, run = 0;
    unsigned char cubin[300];

    for (size_t i = 0; i < sizeof cubin; i++)
        cubin[i] = (unsigned char)(i * 7);

    store *s = open_ok(f->db, STORE_WRITE);
    assert_string_equal(store_path(s), f->db);
    assert_int_equal(store_put_device(s, &d, 3000.5, &dev, &e), RT_OK);
    assert_true(dev > 0);
    assert_int_equal(store_begin_run(s, dev, "redtune tune --op min", 12080, &run, &e), RT_OK);
    assert_true(run > 0);
    put_kernel(s, "aaaa", "tree_sequential", "B=256 V=4");
    store_binary b = { cubin, sizeof cubin, 32, 2048, "ptxas info: 32 registers" };
    assert_int_equal(store_put_binary(s, "aaaa", "sm_90", 12080, &b, &e), RT_OK);
    store_measurement m = meas(dev, "aaaa", "ok", 12.5, 1);
    m.run_id = run;
    put_meas(s, &m);
    assert_int_equal(store_update_best(s, dev, "min", "f32", "flat", 1 << 20, 0, &e), RT_OK);
    assert_int_equal(store_end_run(s, run, &e), RT_OK);
    store_close(s);

    /* Everything comes back from a fresh handle, the read-only one included. */
    s = open_ok(f->db, STORE_WRITE);
    assert_int_equal(store_put_device(s, &d, 0, &dev2, &e), RT_OK);
    assert_int_equal(dev2, dev);
    store_close(s);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM devices"), 1);
    assert_int_equal(raw_int(f->db, "SELECT read_gbps * 10 FROM devices"), 30005);
    assert_int_equal(raw_int(f->db, "SELECT sm_count + l2_bytes FROM devices"), 52428932);
    assert_int_equal(raw_int(f->db, "SELECT total_mem FROM devices"), 85045346304LL);
    assert_int_equal(raw_int(f->db, "SELECT nvrtc_version FROM runs"), 12080);
    assert_int_equal(raw_int(f->db, "SELECT redtune_version = '" RT_VERSION_STRING "' AND "
                                    "cmdline = 'redtune tune --op min' AND ended_at IS NOT "
                                    "NULL FROM runs"), 1);
    assert_int_equal(raw_int(f->db, "SELECT run_id FROM measurements"), run);

    s = open_ok(f->db, STORE_READ);
    char *src = NULL;
    assert_int_equal(store_get_kernel_source(s, "aaaa", &src, &e), RT_OK);
    assert_string_equal(src, "// tree_sequential B=256 V=4\n__global__ void k(void) {}\n");
    free(src);
    store_binary got;
    assert_int_equal(store_get_binary(s, "aaaa", "sm_90", 12080, &got, &e), RT_OK);
    assert_int_equal(got.size, sizeof cubin);
    assert_memory_equal(got.cubin, cubin, sizeof cubin);
    assert_int_equal(got.registers, 32);
    assert_int_equal(got.smem_bytes, 2048);
    assert_string_equal(got.log, "ptxas info: 32 registers");
    store_binary_free(&got);
    int found = 0;
    assert_int_equal(store_has_measurement(s, dev, "aaaa", "min", "f32", NULL, NULL, "flat",
                                           1 << 20, 0, &found, &e), RT_OK);
    assert_int_equal(found, 1);
    collected c = { 0 };
    assert_int_equal(store_list_best(s, NULL, NULL, NULL, 0, collect, &c, &e), RT_OK);
    assert_int_equal(c.count, 1);
    assert_string_equal(c.lines[0], "NVIDIA H100 80GB HBM3|sm_90|min|f32|flat|1048576|0|aaaa|"
                                    "tree_sequential|B=256 V=4|12.500|11.250|15.000|335.544|"
                                    "0.500|1");
    store_close(s);
}

static void test_schema_version_and_wal(void **state)
{
    fixture *f = *state;
    store *s = open_ok(f->db, STORE_WRITE);
    store_close(s);
    /* Closing the last connection checkpoints and removes the -wal and -shm. */
    assert_int_equal(dir_entries(f->dir), 1);
    assert_int_equal(raw_int(f->db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                                    "AND name IN ('devices', 'runs', 'kernels', 'binaries', "
                                    "'measurements', 'best')"), 6);
    /* WAL is a property of the file: the header's read and write versions are 2. */
    size_t len = 0;
    char *h = api_util_slurp(f->db, &len);
    assert_non_null(h);
    assert_true(len >= 100);
    assert_int_equal(h[18], 2);
    assert_int_equal(h[19], 2);
    free(h);
    assert_int_equal(raw_int(f->db, "SELECT journal_mode = 'wal' FROM pragma_journal_mode"), 1);
}

static void test_kernel_put_get(void **state)
{
    fixture *f = *state;
    rt_err e;
    char *src = (char *)"unchanged";
    store *s = open_ok(f->db, STORE_WRITE);

    assert_int_equal(store_put_kernel(s, "k1", "gridstride", "B=128", "first", &e), RT_OK);
    assert_int_equal(store_put_kernel(s, "k1", "gridstride", "B=128", "second", &e), RT_OK);
    assert_int_equal(store_get_kernel_source(s, "k1", &src, &e), RT_OK);
    assert_string_equal(src, "first");
    free(src);
    rt_clearerr(&e);
    assert_int_equal(store_get_kernel_source(s, "nope", &src, &e), RT_ENOTFOUND);
    assert_null(src);
    assert_non_null(strstr(e.msg, "no kernel nope"));
    assert_non_null(strstr(e.msg, f->db));
    store_close(s);
}

static void test_binary_blob(void **state)
{
    fixture *f = *state;
    rt_err e;
    unsigned char cubin[4099];
    store_binary got;

    srand(7);
    for (size_t i = 0; i < sizeof cubin; i++)
        cubin[i] = (unsigned char)rand();
    cubin[0] = 0, cubin[1] = 0xff, cubin[sizeof cubin - 1] = 0;

    store *s = open_ok(f->db, STORE_WRITE);
    put_kernel(s, "bbbb", "gridstride", "B=512");
    store_binary b = { cubin, sizeof cubin, -1, -1, NULL };
    assert_int_equal(store_put_binary(s, "bbbb", "sm_80", 12040, &b, &e), RT_OK);
    store_close(s);

    s = open_ok(f->db, STORE_READ);
    assert_int_equal(store_get_binary(s, "bbbb", "sm_80", 12040, &got, &e), RT_OK);
    assert_int_equal(got.size, sizeof cubin);
    assert_memory_equal(got.cubin, cubin, sizeof cubin);
    assert_int_equal(got.registers, -1);
    assert_int_equal(got.smem_bytes, -1);
    assert_null(got.log);
    store_binary_free(&got);
    assert_null(got.cubin);
    store_binary_free(NULL);
    /* Another arch or NVRTC version is another binary. */
    rt_clearerr(&e);
    assert_int_equal(store_get_binary(s, "bbbb", "sm_90", 12040, &got, &e), RT_ENOTFOUND);
    assert_null(got.cubin);
    assert_non_null(strstr(e.msg, "no binary of kernel bbbb for sm_90"));
    assert_int_equal(store_get_binary(s, "bbbb", "sm_80", 12050, &got, &e), RT_ENOTFOUND);
    store_close(s);

    /* A binary belongs to a kernel. */
    s = open_ok(f->db, STORE_WRITE);
    rt_clearerr(&e);
    assert_int_equal(store_put_binary(s, "cccc", "sm_80", 12040, &b, &e), RT_EDB);
    assert_non_null(strstr(e.msg, "no kernel cccc"));
    store_close(s);
}

static void test_measurement_replace(void **state)
{
    fixture *f = *state;
    rt_err e;
    rt_device d = make_device("NVIDIA A100-SXM4-40GB", "", 1, 8, 0);
    long long dev;
    store *s = open_ok(f->db, STORE_WRITE);

    assert_int_equal(store_put_device(s, &d, 0, &dev, &e), RT_OK);
    put_kernel(s, "aaaa", "gridstride", "B=256");
    store_measurement m = meas(dev, "aaaa", "ok", 10.0, 1);
    put_meas(s, &m);
    m.median_us = 20.0;
    put_meas(s, &m);
    store_close(s);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM measurements"), 1);
    assert_int_equal(raw_int(f->db, "SELECT median_us FROM measurements"), 20);

    /* Any other key field makes another row. */
    s = open_ok(f->db, STORE_WRITE);
    m.hot = 1;
    put_meas(s, &m);
    m.n = 4096;
    put_meas(s, &m);
    m.layout = "seg_uniform_1024";
    put_meas(s, &m);
    m.status = "fault";
    m.median_us = 0;
    put_meas(s, &m);   /* replaces the last one */
    store_close(s);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM measurements"), 4);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM measurements WHERE status = 'fault' "
                                    "AND layout = 'seg_uniform_1024'"), 1);
    /* A device with no uuid is found again by name and ordinal. */
    long long dev2;
    s = open_ok(f->db, STORE_WRITE);
    assert_int_equal(store_put_device(s, &d, 1500, &dev2, &e), RT_OK);
    assert_int_equal(dev2, dev);
    d.ordinal = 2;
    assert_int_equal(store_put_device(s, &d, 0, &dev2, &e), RT_OK);
    assert_true(dev2 != dev);
    store_close(s);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM devices WHERE uuid IS NULL"), 2);
    assert_int_equal(raw_int(f->db, "SELECT read_gbps FROM devices WHERE ordinal = 1"), 1500);
}

static void test_measurement_constraints(void **state)
{
    fixture *f = *state;
    rt_err e;
    rt_device d = make_device("GPU", "u1", 0, 9, 0);
    long long dev;
    store *s = open_ok(f->db, STORE_WRITE);

    assert_int_equal(store_put_device(s, &d, 0, &dev, &e), RT_OK);
    put_kernel(s, "aaaa", "gridstride", "B=256");
    store_measurement m = meas(dev, "aaaa", "great", 10.0, 1);
    rt_clearerr(&e);
    assert_int_equal(store_put_measurement(s, &m, &e), RT_EDB);
    assert_non_null(strstr(e.msg, "status_valid"));
    assert_non_null(strstr(e.msg, f->db));
    m = meas(dev, "aaaa", "ok", 10.0, 1);
    m.hot = 2;
    rt_clearerr(&e);
    assert_int_equal(store_put_measurement(s, &m, &e), RT_EDB);
    assert_non_null(strstr(e.msg, "CHECK constraint failed"));
    m = meas(dev, "zzzz", "ok", 10.0, 1);   /* no such kernel */
    assert_int_equal(store_put_measurement(s, &m, &e), RT_EDB);
    assert_non_null(strstr(e.msg, "FOREIGN KEY"));
    store_close(s);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM measurements"), 0);
}

static void test_has_measurement(void **state)
{
    fixture *f = *state;
    rt_err e;
    rt_device d = make_device("GPU", "u1", 0, 9, 0);
    long long dev;
    int found = 7;
    store *s = open_ok(f->db, STORE_WRITE);

    assert_int_equal(store_put_device(s, &d, 0, &dev, &e), RT_OK);
    put_kernel(s, "aaaa", "gridstride", "B=256");
    assert_int_equal(store_has_measurement(s, dev, "aaaa", "min", "f32", NULL, NULL, "flat",
                                           1 << 20, 0, &found, &e), RT_OK);
    assert_int_equal(found, 0);
    store_measurement m = meas(dev, "aaaa", "timeout", 0, 0);   /* any status counts */
    put_meas(s, &m);
    assert_int_equal(store_has_measurement(s, dev, "aaaa", "min", "f32", NULL, NULL, "flat",
                                           1 << 20, 0, &found, &e), RT_OK);
    assert_int_equal(found, 1);
    assert_int_equal(store_has_measurement(s, dev, "aaaa", "min", "f32", "f32", "f32", "flat",
                                           1 << 20, 0, &found, &e), RT_OK);
    assert_int_equal(found, 1);   /* NULL acc and result are the type's */
    struct { long long dev; const char *k, *op, *type, *acc, *res, *layout; long long n; int hot; }
    miss[] = {
        { dev + 1, "aaaa", "min", "f32", NULL, NULL, "flat", 1 << 20, 0 },
        { dev, "bbbb", "min", "f32", NULL, NULL, "flat", 1 << 20, 0 },
        { dev, "aaaa", "max", "f32", NULL, NULL, "flat", 1 << 20, 0 },
        { dev, "aaaa", "min", "f64", NULL, NULL, "flat", 1 << 20, 0 },
        { dev, "aaaa", "min", "f32", "f64", NULL, "flat", 1 << 20, 0 },
        { dev, "aaaa", "min", "f32", NULL, "f64", "flat", 1 << 20, 0 },
        { dev, "aaaa", "min", "f32", NULL, NULL, "seg", 1 << 20, 0 },
        { dev, "aaaa", "min", "f32", NULL, NULL, "flat", 1 << 21, 0 },
        { dev, "aaaa", "min", "f32", NULL, NULL, "flat", 1 << 20, 1 },
    };
    for (size_t i = 0; i < sizeof miss / sizeof miss[0]; i++) {
        found = 7;
        assert_int_equal(store_has_measurement(s, miss[i].dev, miss[i].k, miss[i].op,
                                               miss[i].type, miss[i].acc, miss[i].res,
                                               miss[i].layout, miss[i].n, miss[i].hot, &found,
                                               &e), RT_OK);
        assert_int_equal(found, 0);
    }
    store_close(s);
}

/* The kernel that store_update_best chose for the default case, or "" when none. */
static const char *best_of(store *s)
{
    static collected c;
    rt_err e;
    char *k;

    memset(&c, 0, sizeof c);
    assert_int_equal(store_list_best(s, NULL, "min", "f32", 1 << 20, collect, &c, &e), RT_OK);
    if (c.count == 0)
        return "";
    assert_int_equal(c.count, 1);
    k = c.lines[0];
    for (int field = 0; field < 7; field++)   /* device|arch|op|type|layout|n|hot|kernel */
        k = strchr(k, '|') + 1;
    *strchr(k, '|') = '\0';
    return k;
}

/* A user operator's rows: stored under its name, listed as best, and a kernel of another
 * definition of the same name found by its missing fingerprint. */
static void test_user_op_rows(void **state)
{
    fixture *f = *state;
    store *s = open_ok(f->db, STORE_WRITE);
    long long dev = 0;
    rt_err e;
    rt_device gpu = make_device("GPU", "u1", 0, 9, 0);
    assert_int_equal(store_put_device(s, &gpu, 0, &dev, &e), RT_OK);
    const char *mine = "/* redtune: user operator affine, definition 0123456789abcdef */";
    char src[256];
    snprintf(src, sizeof src, "%s\n__global__ void k(void) {}\n", mine);
    assert_int_equal(store_put_kernel(s, "k_affine", "tb2", "B=256", src, &e), RT_OK);
    store_measurement m = meas(dev, "k_affine", "ok", 5.0, 1);
    m.op = "affine";
    m.type = "u64";
    put_meas(s, &m);
    assert_int_equal(store_update_best(s, dev, "affine", "u64", "flat", 1 << 20, 0, &e), RT_OK);
    collected c = {0};
    assert_int_equal(store_list_best(s, NULL, "affine", NULL, 0, collect, &c, &e), RT_OK);
    assert_int_equal(c.count, 1);
    assert_non_null(strstr(c.lines[0], "|affine|u64|flat|"));

    char hash[RT_HASH_HEX];
    int found = -1;
    assert_int_equal(store_op_kernel_without(s, "affine", mine, hash, &found, &e), RT_OK);
    assert_int_equal(found, 0);
    assert_int_equal(store_op_kernel_without(s, "affine",
                                             "/* redtune: user operator affine, definition "
                                             "fedcba9876543210 */", hash, &found, &e), RT_OK);
    assert_int_equal(found, 1);
    assert_string_equal(hash, "k_affine");
    assert_int_equal(store_op_kernel_without(s, "other", "x", hash, &found, &e), RT_OK);
    assert_int_equal(found, 0);
    store_close(s);
}

static void test_update_best(void **state)
{
    fixture *f = *state;
    rt_err e;
    rt_device d = make_device("GPU", "u1", 0, 9, 0);
    long long dev;
    store *s = open_ok(f->db, STORE_WRITE);

    assert_int_equal(store_put_device(s, &d, 0, &dev, &e), RT_OK);
    rt_clearerr(&e);
    assert_int_equal(store_update_best(s, dev, "min", "f32", "flat", 1 << 20, 0, &e),
                     RT_ENOTFOUND);
    assert_non_null(strstr(e.msg, "no verified ok measurement"));

    const char *k[] = { "k_slow", "k_fast", "k_wrong", "k_fault", "k_unverified", "k_hot" };
    for (int i = 0; i < 6; i++)
        put_kernel(s, k[i], "fam", "P=1");
    store_measurement m[] = {
        meas(dev, "k_slow", "ok", 10.0, 1),
        meas(dev, "k_fast", "ok", 8.0, 1),
        meas(dev, "k_wrong", "wrong", 1.0, 0),
        meas(dev, "k_fault", "fault", 0.0, 0),
        meas(dev, "k_unverified", "ok", 2.0, 0),
        meas(dev, "k_hot", "ok", 0.5, 1),
    };
    m[5].hot = 1;                  /* another case */
    m[2].verified = 1;             /* even a "verified" wrong row does not count */
    for (int i = 0; i < 6; i++)
        put_meas(s, &m[i]);
    assert_int_equal(store_update_best(s, dev, "min", "f32", "flat", 1 << 20, 0, &e), RT_OK);
    assert_string_equal(best_of(s), "k_fast");

    /* Re-measured wrong: the next verified one wins. */
    m[1].status = "wrong";
    m[1].verified = 0;
    put_meas(s, &m[1]);
    assert_int_equal(store_update_best(s, dev, "min", "f32", "flat", 1 << 20, 0, &e), RT_OK);
    assert_string_equal(best_of(s), "k_slow");
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM best"), 1);

    /* None left: not found, and the stale winner is gone. */
    m[0].status = "timeout";
    m[0].verified = 0;
    put_meas(s, &m[0]);
    assert_int_equal(store_update_best(s, dev, "min", "f32", "flat", 1 << 20, 0, &e),
                     RT_ENOTFOUND);
    assert_string_equal(best_of(s), "");
    assert_int_equal(store_update_best(s, dev, "min", "f32", "flat", 1 << 20, 1, &e), RT_OK);
    store_close(s);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM best WHERE hot = 1 AND "
                                    "kernel_hash = 'k_hot'"), 1);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM best"), 1);
}

static void test_list_best(void **state)
{
    fixture *f = *state;
    rt_err e;
    rt_device h100 = make_device("NVIDIA H100 80GB HBM3", "h100", 0, 9, 0);
    rt_device a100 = make_device("NVIDIA A100-SXM4-40GB", "a100", 1, 8, 0);
    long long dh, da;
    store *s = open_ok(f->db, STORE_WRITE);

    assert_int_equal(store_put_device(s, &h100, 0, &dh, &e), RT_OK);
    assert_int_equal(store_put_device(s, &a100, 0, &da, &e), RT_OK);
    put_kernel(s, "kk", "tree", "B=64");
    struct { long long dev; const char *op, *type; long long n; } cases[] = {
        { dh, "sum", "f64", 4096 }, { dh, "min", "f32", 4096 }, { dh, "min", "f32", 1024 },
        { da, "min", "f32", 4096 }, { da, "sum", "f32", 1024 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        store_measurement m = meas(cases[i].dev, "kk", "ok", 5.0, 1);
        m.op = cases[i].op;
        m.type = cases[i].type;
        m.n = cases[i].n;
        put_meas(s, &m);
        assert_int_equal(store_update_best(s, cases[i].dev, m.op, m.type, "flat", m.n, 0, &e),
                         RT_OK);
    }
    store_close(s);

    s = open_ok(f->db, STORE_READ);
    collected c = { 0 };
    assert_int_equal(store_list_best(s, NULL, NULL, NULL, 0, collect, &c, &e), RT_OK);
    assert_int_equal(c.count, 5);
    /* Ordered by device, op, type, layout, hot, n. */
    const char *order[] = { "NVIDIA A100-SXM4-40GB|sm_80|min|f32|flat|4096|",
                            "NVIDIA A100-SXM4-40GB|sm_80|sum|f32|flat|1024|",
                            "NVIDIA H100 80GB HBM3|sm_90|min|f32|flat|1024|",
                            "NVIDIA H100 80GB HBM3|sm_90|min|f32|flat|4096|",
                            "NVIDIA H100 80GB HBM3|sm_90|sum|f64|flat|4096|" };
    for (int i = 0; i < 5; i++)
        assert_memory_equal(c.lines[i], order[i], strlen(order[i]));

    memset(&c, 0, sizeof c);
    assert_int_equal(store_list_best(s, "h100", NULL, NULL, 0, collect, &c, &e), RT_OK);
    assert_int_equal(c.count, 3);
    memset(&c, 0, sizeof c);
    assert_int_equal(store_list_best(s, "SXM4", "min", NULL, 0, collect, &c, &e), RT_OK);
    assert_int_equal(c.count, 1);
    memset(&c, 0, sizeof c);
    assert_int_equal(store_list_best(s, NULL, "min", "f32", 0, collect, &c, &e), RT_OK);
    assert_int_equal(c.count, 3);
    memset(&c, 0, sizeof c);
    assert_int_equal(store_list_best(s, NULL, NULL, "f32", 4096, collect, &c, &e), RT_OK);
    assert_int_equal(c.count, 2);
    memset(&c, 0, sizeof c);
    assert_int_equal(store_list_best(s, NULL, "sum", "f64", 4096, collect, &c, &e), RT_OK);
    assert_int_equal(c.count, 1);
    memset(&c, 0, sizeof c);
    assert_int_equal(store_list_best(s, "V100", NULL, NULL, 0, collect, &c, &e), RT_OK);
    assert_int_equal(c.count, 0);
    memset(&c, 0, sizeof c);
    assert_int_equal(store_list_best(s, NULL, "max", NULL, -1, collect, &c, &e), RT_OK);
    assert_int_equal(c.count, 0);

    /* A non-zero return stops the walk. */
    memset(&c, 0, sizeof c);
    c.stop_after = 2;
    assert_int_equal(store_list_best(s, NULL, NULL, NULL, 0, collect, &c, &e), RT_OK);
    assert_int_equal(c.count, 2);
    store_close(s);
}

/* Rows of one case that differ in acc or result are apart: each has its own winner. */
static void test_best_by_spec(void **state)
{
    fixture *f = *state;
    rt_err e;
    rt_device d = make_device("GPU", "u1", 0, 9, 0);
    long long dev;
    store *s = open_ok(f->db, STORE_WRITE);
    assert_int_equal(store_put_device(s, &d, 0, &dev, &e), RT_OK);
    put_kernel(s, "k1", "gridstride", "B=256");
    put_kernel(s, "k2", "gridstride", "B=512");
    store_measurement m = meas(dev, "k1", "ok", 5.0, 1);
    m.op = "sum";
    m.type = "bf16";
    m.acc = "f32";
    m.result = "f32";
    put_meas(s, &m);
    m.kernel_hash = "k2";
    m.acc = "f64";
    m.result = "f64";
    m.median_us = 4.0;   /* faster, but another spec */
    put_meas(s, &m);
    m.result = "bf16";
    m.median_us = 3.0;
    put_meas(s, &m);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM measurements"), 3);
    int found = 0;
    assert_int_equal(store_has_measurement(s, dev, "k1", "sum", "bf16", "f32", "f32", "flat",
                                           1 << 20, 0, &found, &e), RT_OK);
    assert_int_equal(found, 1);
    assert_int_equal(store_has_measurement(s, dev, "k1", "sum", "bf16", NULL, NULL, "flat",
                                           1 << 20, 0, &found, &e), RT_OK);
    assert_int_equal(found, 0);
    assert_int_equal(store_update_best_spec(s, dev, "sum", "bf16", "f32", "f32", "flat",
                                            1 << 20, 0, &e), RT_OK);
    assert_int_equal(store_update_best_spec(s, dev, "sum", "bf16", "f64", "f64", "flat",
                                            1 << 20, 0, &e), RT_OK);
    assert_int_equal(store_update_best_spec(s, dev, "sum", "bf16", "f64", "bf16", "flat",
                                            1 << 20, 0, &e), RT_OK);
    assert_int_equal(store_update_best(s, dev, "sum", "bf16", "flat", 1 << 20, 0, &e),
                     RT_ENOTFOUND);
    assert_non_null(strstr(e.msg, "no verified ok measurement of sum bf16 flat n=1048576"));
    assert_int_equal(store_update_best_spec(s, dev, "sum", "bf16", "f16", "f16", "flat",
                                            1 << 20, 0, &e), RT_ENOTFOUND);
    assert_non_null(strstr(e.msg, "no verified ok measurement of sum bf16 acc=f16 result=f16 "
                                  "flat n=1048576"));
    collected c = {0};
    assert_int_equal(store_list_best(s, NULL, NULL, NULL, 0, collect_spec, &c, &e), RT_OK);
    assert_int_equal(c.count, 3);
    assert_string_equal(c.lines[0], "sum bf16 f32 f32 flat 1048576");
    assert_string_equal(c.lines[1], "sum bf16 f64 bf16 flat 1048576");
    assert_string_equal(c.lines[2], "sum bf16 f64 f64 flat 1048576");
    memset(&c, 0, sizeof c);
    assert_int_equal(store_list_best_for_device_spec(s, dev, "sum", "bf16", "f32", "f32", "flat",
                                                     0, collect_spec, &c, &e), RT_OK);
    assert_int_equal(c.count, 1);
    memset(&c, 0, sizeof c);
    assert_int_equal(store_list_best_for_device(s, dev, "sum", "bf16", "flat", 0, collect_spec,
                                                &c, &e), RT_OK);
    assert_int_equal(c.count, 0);   /* acc = result = bf16: none */
    store_close(s);
}

int test_store_group(void)
{
    const struct CMUnitTest tests[] = {
        STORE_TEST(test_roundtrip),
        STORE_TEST(test_schema_version_and_wal),
        STORE_TEST(test_kernel_put_get),
        STORE_TEST(test_binary_blob),
        STORE_TEST(test_measurement_replace),
        STORE_TEST(test_measurement_constraints),
        STORE_TEST(test_has_measurement),
        STORE_TEST(test_update_best),
        STORE_TEST(test_user_op_rows),
        STORE_TEST(test_list_best),
        STORE_TEST(test_best_by_spec),
    };
    return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
