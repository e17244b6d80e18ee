/*
 * test_store.c - runtime/store.c: the schema, every put and get, the winner per case, and
 * the files store_open must refuse without touching them.
 *
 * Fixtures in tests/db/ (the tests run from the repository root), made with the sqlite3 CLI
 * from tests/db/ (page size 512 keeps them small):
 *   not_sqlite.db   printf 'This is a plain text file, not an SQLite database.\n' > not_sqlite.db
 *   foreign.db      sqlite3 foreign.db "PRAGMA page_size = 512; CREATE TABLE people
 *                       (name TEXT, age INTEGER); INSERT INTO people VALUES ('ada', 36);"
 *   foreign_wal.db  sqlite3 foreign_wal.db "PRAGMA page_size = 512; PRAGMA journal_mode = WAL;
 *                       CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hello');"
 *   newer.db        sqlite3 newer.db "PRAGMA page_size = 512;" ".read ../../db/schema.sql"
 *                       "PRAGMA user_version = 99;"
 *   partial.db      sqlite3 partial.db "PRAGMA page_size = 512;" ".read ../../db/schema.sql"
 *                       "DROP TABLE best;"
 *   v2.db           a version 2 file (before acc and result), made by the redtune of that
 *                   schema: sqlite3 v2.db "PRAGMA page_size = 512;" ".read SCHEMA_V2" and
 *                   INSERTs of 1 device, 1 run, 2 kernels (hashes the SHA-256 of their
 *                   sources "// v2 fixture kernel 1" and "... 2"), 1 CUBIN, 3 measurements
 *                   (one segmented) and 2 best rows; SCHEMA_V2 is db/schema.sql of commit
 *                   9466524. v2.sql is its `redtune dump` by that redtune.
 *   corrupt.db      sqlite3 corrupt.db "PRAGMA page_size = 512;" ".read ../../db/schema.sql"
 *                       "WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i
 *                       WHERE x < 40) INSERT INTO kernels (hash, family, params, source)
 *                       SELECT 'k' || x, 'f', 'p', printf('%.200c', 'x') FROM i;"
 *                   then the first 64 bytes of its last page overwritten with 0xa5 (its
 *                   schema reads fine; PRAGMA quick_check finds the page broken)
 * Each test copies the fixture it needs into its own mkdtemp directory first, so that a
 * store.c that wrongly writes can never damage the originals.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "runtime/hash.h"
#include "runtime/store.h"
#include "tuner/ship.h"
#include "tuner/store_tune.h"
#include "tests/api_util.h"

/* ---------------------------------------------------------------- helpers */

typedef struct fixture {
    char dir[64];
    char db[128];     /* dir/t.db, not created */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    strcpy(f->dir, "/tmp/redtune-store-XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->db, sizeof f->db, "%s/t.db", f->dir);
    *state = f;
    return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    fixture *f = *state;
    int rc = nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return rc;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Number of entries in a directory, besides . and .. */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static rt_device make_device(const char *name, const char *uuid, int ordinal, int major,
                             int minor)
{
    rt_device d;
    memset(&d, 0, sizeof d);
    d.ordinal = ordinal;
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.uuid, sizeof d.uuid, "%s", uuid);
    d.cc_major = major;
    d.cc_minor = minor;
    d.sm_count = 132;
    d.warp_size = 32;
    d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048;
    d.max_blocks_per_sm = 32;
    d.smem_per_block = 49152;
    d.smem_per_block_optin = 232448;
    d.smem_per_sm = 233472;
    d.regs_per_block = 65536;
    d.regs_per_sm = 65536;
    d.l2_bytes = 52428800;
    d.mem_clock_khz = 2619000;
    d.bus_width_bits = 5120;
    d.driver_version = 12080;
    d.total_mem = 85045346304LL;
    return d;
}

static store *open_ok(const char *path, int mode)
{
    rt_err e;
    store *s = NULL;
    rt_clearerr(&e);
    int rc = store_open(path, mode, &s, &e);
    if (rc != RT_OK)
        fail_msg("store_open(%s): %s", path, e.msg);
    assert_non_null(s);
    return s;
}

static void put_kernel(store *s, const char *hash, const char *family, const char *params)
{
    rt_err e;
    char src[128];
    snprintf(src, sizeof src, "// %s %s\n__global__ void k(void) {}\n", family, params);
    if (store_put_kernel(s, hash, family, params, src, &e) != RT_OK)
        fail_msg("store_put_kernel: %s", e.msg);
}

static store_measurement meas(long long dev, const char *hash, const char *status,
                              double median, int verified)
{
    store_measurement m = {
        .device_id = dev, .run_id = 0, .kernel_hash = hash, .op = "min", .type = "f32",
        .layout = "flat", .n = 1 << 20, .hot = 0, .status = status,
        .message = strcmp(status, "ok") == 0 ? "" : "it went wrong",
        .median_us = median, .min_us = median * 0.9, .max_us = median * 1.2, .reps = 50,
        .gbps = 4.0 * (1 << 20) / (median * 1e3), .frac_bw = 0.5, .verified = verified,
        .deterministic = 1,
    };
    return m;
}

static void put_meas(store *s, const store_measurement *m)
{
    rt_err e;
    if (store_put_measurement(s, m, &e) != RT_OK)
        fail_msg("store_put_measurement: %s", e.msg);
}

/* Run one query returning one integer on an existing file, outside the store. Read-write, so
 * that closing removes the -wal and -shm a read-only connection would leave. */
static long long raw_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    long long v = -12345;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* ---------------------------------------------------------------- round trips */

typedef struct collected {
    int count, stop_after;
    char lines[16][256];
} collected;

static int collect(const store_best_row *r, void *arg)
{
    collected *c = arg;
    if (c->count < 16)
        snprintf(c->lines[c->count], sizeof c->lines[0],
                 "%s|%s|%s|%s|%s|%lld|%d|%s|%s|%s|%.3f|%.3f|%.3f|%.3f|%.3f|%d", r->device_name,
                 r->arch, r->op, r->type, r->layout, r->n, r->hot, r->kernel_hash, r->family,
                 r->params, r->median_us, r->min_us, r->max_us, r->gbps, r->frac_bw,
                 r->deterministic);
    c->count++;
    return c->stop_after && c->count >= c->stop_after;
}

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

/* ---------------------------------------------------------------- what must be refused */

/* Open a copy of a fixture in both modes; each must fail with 'phrase' and the path, and
 * leave the copy byte-identical with nothing beside it. */
static void refuse(fixture *f, const char *name, const char *phrase)
{
    char fixture_path[128], copy[160];
    size_t want_len = 0, got_len = 0;

    snprintf(fixture_path, sizeof fixture_path, "tests/db/%s", name);
    snprintf(copy, sizeof copy, "%s/%s", f->dir, name);
    char *want = api_util_slurp(fixture_path, &want_len);
    if (!want)
        fail_msg("cannot read %s (run the tests from the repository root)", fixture_path);
    api_util_copy_file(fixture_path, copy);

    for (int mode = STORE_READ; mode <= STORE_WRITE; mode++) {
        rt_err e;
        store *s = (store *)&e;   /* not NULL: store_open must clear it */
        rt_clearerr(&e);
        assert_int_equal(store_open(copy, mode, &s, &e), RT_EDB);
        assert_null(s);
        if (!strstr(e.msg, phrase) || strncmp(e.msg, copy, strlen(copy)) != 0)
            fail_msg("%s: message '%s' lacks '%s' or the path", name, e.msg, phrase);
        char *got = api_util_slurp(copy, &got_len);
        assert_non_null(got);
        assert_int_equal(got_len, want_len);
        assert_memory_equal(got, want, want_len);
        free(got);
        assert_int_equal(dir_entries(f->dir), 1);   /* no -wal, -shm or -journal */
    }
    free(want);
}

static void test_refuse_not_sqlite(void **state)
{
    refuse(*state, "not_sqlite.db", ": not a redtune database (file is not SQLite)");
}

static void test_refuse_foreign(void **state)
{
    refuse(*state, "foreign.db", ": not a redtune database (has no redtune tables)");
}

static void test_refuse_foreign_wal(void **state)
{
    refuse(*state, "foreign_wal.db", ": not a redtune database (has no redtune tables)");
}

static void test_refuse_newer(void **state)
{
    char phrase[128];
    snprintf(phrase, sizeof phrase, ": schema version 99 is newer than this redtune (%d): "
             "upgrade redtune", STORE_SCHEMA_VERSION);
    refuse(*state, "newer.db", phrase);
}

/* A version 1 file (before the segmented columns): tests/db/v2.db without them. It is
 * refused read-only (libredtune reads version 2 and later) and migrated in place, through
 * version 2, when opened for writing; its rows are kept and the segmentation of a segmented
 * measurement reaches table best. */
static void test_migrate_v1(void **state)
{
    fixture *f = *state;
    rt_err e;
    store *s = NULL;
    api_util_copy_file("tests/db/v2.db", f->db);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    static const char *const cols[] = {"nseg", "seg_mean", "seg_spread"};
    char sql[128];
    for (int t = 0; t < 2; t++)
        for (int c = 0; c < 3; c++) {
            snprintf(sql, sizeof sql, "ALTER TABLE %s DROP COLUMN %s",
                     t ? "best" : "measurements", cols[c]);
            assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
        }
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 1", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);

    rt_clearerr(&e);
    assert_int_equal(store_open(f->db, STORE_READ, &s, &e), RT_EDB);
    assert_null(s);
    assert_non_null(strstr(e.msg, ": schema version 1 is older than this redtune (3): open it "
                                  "for writing once to migrate it"));

    s = open_ok(f->db, STORE_WRITE);
    assert_int_equal(store_version(s), STORE_SCHEMA_VERSION);
    assert_int_equal(raw_int(f->db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM measurements WHERE nseg = 0 "
                                    "AND acc = type AND result = type"), 3);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM best WHERE nseg = 0"), 2);
    store_measurement m = meas(1, "ed310f81c58e626766d849dc48547e02e42ce523617ed4c8f9562af83c7f47c7",
                               "ok", 5.0, 1);
    m.layout = "keys:len3";
    m.nseg = 1000;
    m.seg_mean = 3.0;
    put_meas(s, &m);
    assert_int_equal(store_update_best(s, 1, "min", "f32", "keys:len3", 1 << 20, 0, &e), RT_OK);
    assert_int_equal(raw_int(f->db, "SELECT nseg FROM best WHERE op = 'min' AND layout = "
                                    "'keys:len3'"), 1000);
    assert_int_equal(raw_int(f->db, "SELECT seg_mean FROM best WHERE op = 'min' AND layout = "
                                    "'keys:len3'"), 3);
    store_close(s);
}

/* The best rows of a store as "op type acc result layout n" lines. */
static int collect_spec(const store_best_row *r, void *arg)
{
    collected *c = arg;
    if (c->count < (int)(sizeof c->lines / sizeof c->lines[0]))
        snprintf(c->lines[c->count], sizeof c->lines[0], "%s %s %s %s %s %lld", r->op, r->type,
                 r->acc, r->result, r->layout, r->n);
    c->count++;
    return 0;
}

/*
 * tests/db/v2.db, a version 2 file made by the redtune before acc and result (the fixture's
 * rows: 1 device, 1 run, 2 kernels, 1 CUBIN, 3 measurements, 2 best rows). libredtune reads
 * it as it is, read-only, its rows with acc = result = type, and leaves it byte-identical
 * with nothing beside it; opened for writing it is migrated to version 3 in one transaction,
 * every row kept with acc = result = type.
 */
static void test_read_and_migrate_v2(void **state)
{
    fixture *f = *state;
    rt_err e;
    size_t want_len = 0, got_len = 0;
    char *want = api_util_slurp("tests/db/v2.db", &want_len);
    assert_non_null(want);
    api_util_copy_file("tests/db/v2.db", f->db);

    /* Read-only by the tuner (best, measurements, report, shipping: views). */
    store *s = NULL;
    assert_int_equal(store_open(f->db, STORE_READ, &s, &e), RT_OK);
    assert_int_equal(store_version(s), 2);
    collected c = {0};
    assert_int_equal(store_list_best(s, NULL, NULL, NULL, 0, collect_spec, &c, &e), RT_OK);
    assert_int_equal(c.count, 2);
    assert_string_equal(c.lines[0], "min f32 f32 f32 flat 1048576");
    assert_string_equal(c.lines[1], "sum f64 f64 f64 keys:len3 16384");
    store_close(s);

    /* Read-only as libredtune opens it: the lookup's queries read acc = result = type. */
    assert_int_equal(store_open_read(f->db, &s, &e), RT_OK);
    assert_int_equal(store_version(s), 2);
    rt_device me = make_device("NVIDIA H100 80GB HBM3", "zz", 0, 9, 0);
    store_device_match dm;
    assert_int_equal(store_find_device_spec(s, &me, "min", "f32", "f32", "f32", "flat", 0, &dm,
                                            &e), RT_OK);
    assert_int_equal(dm.id, 1);
    assert_int_equal(store_find_device_spec(s, &me, "min", "f32", NULL, NULL, "flat", 0, &dm,
                                            &e), RT_OK);
    assert_int_equal(store_find_device_spec(s, &me, "min", "f32", "f64", "f64", "flat", 0, &dm,
                                            &e), RT_ENOTFOUND);
    assert_non_null(strstr(e.msg, "has a winner for min f32 acc=f64 result=f64 flat cold"));
    memset(&c, 0, sizeof c);
    assert_int_equal(store_list_best_for_device_spec(s, 1, "sum", "f64", NULL, "f64", "keys", 0,
                                                     collect_spec, &c, &e), RT_OK);
    assert_int_equal(c.count, 1);
    assert_string_equal(c.lines[0], "sum f64 f64 f64 keys:len3 16384");
    store_close(s);
    char *got = api_util_slurp(f->db, &got_len);
    assert_non_null(got);
    assert_int_equal(got_len, want_len);
    assert_memory_equal(got, want, want_len);
    free(got);
    assert_int_equal(dir_entries(f->dir), 1);

    /* For writing: migrated, every row kept. */
    s = open_ok(f->db, STORE_WRITE);
    assert_int_equal(store_version(s), 3);
    assert_int_equal(raw_int(f->db, "PRAGMA user_version"), 3);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM devices"), 1);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM runs"), 1);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM kernels"), 2);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM binaries"), 1);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM measurements WHERE acc = type AND "
                                    "result = type"), 3);
    assert_int_equal(raw_int(f->db, "SELECT sum(id) FROM measurements"), 6);
    assert_int_equal(raw_int(f->db, "SELECT nseg FROM measurements WHERE id = 3"), 5461);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM best WHERE acc = type AND "
                                    "result = type"), 2);
    assert_int_equal(raw_int(f->db, "SELECT seg_spread * 10 FROM best WHERE op = 'sum'"), 5);
    /* The same tables and indexes as a new file's. */
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM sqlite_master WHERE name IN "
                                    "('measurements_case', 'measurements_kernel', "
                                    "'measurements_run', 'best_kernel')"), 4);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM sqlite_master WHERE name LIKE "
                                    "'%_v3'"), 0);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    memset(&c, 0, sizeof c);
    assert_int_equal(store_list_best(s, NULL, NULL, NULL, 0, collect_spec, &c, &e), RT_OK);
    assert_int_equal(c.count, 2);
    assert_string_equal(c.lines[0], "min f32 f32 f32 flat 1048576");
    store_close(s);
    free(want);
}

/* A migration that fails halfway (here a table of the step's name is there already) leaves
 * the file at version 2 with its rows: the step runs in one transaction. */
static void test_migrate_v2_atomic(void **state)
{
    fixture *f = *state;
    rt_err e;
    store *s = NULL;
    api_util_copy_file("tests/db/v2.db", f->db);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE best_v3 (x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    rt_clearerr(&e);
    assert_int_equal(store_open(f->db, STORE_WRITE, &s, &e), RT_EDB);
    assert_null(s);
    assert_non_null(strstr(e.msg, "migrate schema version 2 to 3: table best_v3 already "
                                  "exists"));
    assert_int_equal(raw_int(f->db, "PRAGMA user_version"), 2);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM measurements"), 3);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM pragma_table_info('measurements') "
                                    "WHERE name = 'acc'"), 0);
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

static void test_refuse_partial(void **state)
{
    refuse(*state, "partial.db", ": not a redtune database (table 'best' is missing)");
}

static void test_bad_paths(void **state)
{
    fixture *f = *state;
    rt_err e;
    store *s = NULL;
    char path[256];

    rt_clearerr(&e);
    assert_int_equal(store_open("/nonexistent-dir/x.db", STORE_WRITE, &s, &e), RT_EIO);
    assert_null(s);
    assert_non_null(strstr(e.msg, "/nonexistent-dir/x.db: cannot create"));
    assert_false(exists("/nonexistent-dir"));

    /* A directory is not a database, in either mode; nothing appears inside or beside it. */
    for (int mode = STORE_READ; mode <= STORE_WRITE; mode++) {
        rt_clearerr(&e);
        assert_true(store_open(f->dir, mode, &s, &e) < 0);
        assert_null(s);
        snprintf(path, sizeof path, "%s: is a directory", f->dir);
        assert_non_null(strstr(e.msg, path));
        assert_int_equal(dir_entries(f->dir), 0);
        snprintf(path, sizeof path, "%s-wal", f->dir);
        assert_false(exists(path));
    }

    /* A path under a regular file. */
    snprintf(path, sizeof path, "%s/plain", f->dir);
    api_util_copy_file("tests/db/not_sqlite.db", path);
    snprintf(path, sizeof path, "%s/plain/x.db", f->dir);
    rt_clearerr(&e);
    assert_true(store_open(path, STORE_WRITE, &s, &e) < 0);
    assert_null(s);
    assert_non_null(strstr(e.msg, path));
    assert_int_equal(dir_entries(f->dir), 1);

    rt_clearerr(&e);
    assert_int_equal(store_open("", STORE_WRITE, &s, &e), RT_EINVAL);
    assert_int_equal(store_open(f->db, 7, &s, &e), RT_EINVAL);
    assert_int_equal(dir_entries(f->dir), 1);
}

/* Permissions do not stop root, so this one runs only as another user. */
static void test_unwritable_dir(void **state)
{
    fixture *f = *state;
    rt_err e;
    store *s = NULL;
    char dir[128], path[160];

    if (geteuid() == 0)
        skip();
    snprintf(dir, sizeof dir, "%s/ro", f->dir);
    snprintf(path, sizeof path, "%s/x.db", dir);
    assert_int_equal(mkdir(dir, 0555), 0);
    rt_clearerr(&e);
    assert_int_equal(store_open(path, STORE_WRITE, &s, &e), RT_EIO);
    assert_null(s);
    assert_non_null(strstr(e.msg, path));
    assert_non_null(strstr(e.msg, "Permission denied"));
    assert_int_equal(dir_entries(dir), 0);
    assert_int_equal(chmod(dir, 0755), 0);
}

static void test_read_missing(void **state)
{
    fixture *f = *state;
    rt_err e;
    store *s = (store *)&e;

    rt_clearerr(&e);
    assert_int_equal(store_open(f->db, STORE_READ, &s, &e), RT_EDB);
    assert_null(s);
    assert_non_null(strstr(e.msg, f->db));
    assert_non_null(strstr(e.msg, "No such file"));
    assert_int_equal(dir_entries(f->dir), 0);
}

static void test_read_never_writes(void **state)
{
    fixture *f = *state;
    rt_err e;
    store *s = open_ok(f->db, STORE_WRITE);
    store_close(s);
    size_t len1 = 0, len2 = 0;
    char *before = api_util_slurp(f->db, &len1);

    s = open_ok(f->db, STORE_READ);
    rt_clearerr(&e);
    assert_int_equal(store_put_kernel(s, "k", "f", "p", "src", &e), RT_EDB);
    assert_non_null(strstr(e.msg, f->db));
    store_close(s);
    char *after = api_util_slurp(f->db, &len2);
    assert_int_equal(len1, len2);
    assert_memory_equal(before, after, len1);
    free(before);
    free(after);

    /* An empty file is a new database only to STORE_WRITE. */
    FILE *fp = fopen(f->db, "w");
    assert_non_null(fp);
    fclose(fp);
    rt_clearerr(&e);
    assert_int_equal(store_open(f->db, STORE_READ, &s, &e), RT_EDB);
    assert_non_null(strstr(e.msg, ": not a redtune database (empty file)"));
    s = open_ok(f->db, STORE_WRITE);
    store_close(s);
    assert_int_equal(raw_int(f->db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
}

static void test_empty_sqlite_is_new(void **state)
{
    fixture *f = *state;
    sqlite3 *db = NULL;

    /* An SQLite file whose only table was dropped: no tables, user_version 0. */
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE x (y); DROP TABLE x;", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM sqlite_master"), 0);
    store *s = open_ok(f->db, STORE_WRITE);
    store_close(s);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM sqlite_master WHERE name = 'best'"),
                     1);
}

/* ---------------------------------------------------------------- several writers */

static void test_two_handles(void **state)
{
    fixture *f = *state;
    rt_err e;
    rt_device d = make_device("GPU", "u1", 0, 9, 0);
    long long dev;
    store *a = open_ok(f->db, STORE_WRITE);
    store *b = open_ok(f->db, STORE_WRITE);

    assert_int_equal(store_put_device(a, &d, 0, &dev, &e), RT_OK);
    put_kernel(b, "kk", "fam", "P=1");
    for (int i = 0; i < 50; i++) {
        store_measurement m = meas(dev, "kk", "ok", 1.0 + i, 1);
        m.n = 1 + i;
        put_meas(i % 2 ? a : b, &m);
    }
    store_close(a);
    store_close(b);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM measurements"), 50);
}

/* Wait for every child, so that none outlives a failed test and its scratch directory;
 * how many did not exit with status 0. */
static int wait_all(const pid_t *pids, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int status = 0;
        if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status)
            || WEXITSTATUS(status) != 0)
            bad++;
    }
    return bad;
}

enum { WRITERS = 4, PER_WRITER = 100 };

/* A tuner process: opens the (maybe not yet existing) file and writes its measurements. */
static int writer(const char *path, int id)
{
    rt_err e;
    store *s = NULL;
    rt_device d = make_device("GPU", "", id, 9, 0);
    long long dev;
    char hash[32];

    if (store_open(path, STORE_WRITE, &s, &e) != RT_OK) {
        fprintf(stderr, "writer %d: %s\n", id, e.msg);
        return 1;
    }
    snprintf(hash, sizeof hash, "k%d", id);
    int rc = store_put_device(s, &d, 0, &dev, &e);
    if (rc == RT_OK)
        rc = store_put_kernel(s, "shared", "fam", "P=0", "src", &e);
    if (rc == RT_OK)
        rc = store_put_kernel(s, hash, "fam", "P=1", hash, &e);
    for (int i = 0; rc == RT_OK && i < PER_WRITER; i++) {
        store_measurement m = meas(dev, i % 2 ? hash : "shared", "ok", 1.0 + i, 1);
        m.n = 1 + i;
        rc = store_put_measurement(s, &m, &e);
        if (rc == RT_OK && i % 10 == 9)
            rc = store_update_best(s, dev, m.op, m.type, m.layout, m.n, m.hot, &e);
    }
    if (rc != RT_OK)
        fprintf(stderr, "writer %d: %s\n", id, e.msg);
    store_close(s);
    return rc != RT_OK;
}

static void test_concurrent_processes(void **state)
{
    fixture *f = *state;
    pid_t pids[WRITERS];
    int go[2];
    char byte;

    /* The writers wait on a pipe, so that they all open the new file at the same moment. */
    assert_int_equal(pipe(go), 0);
    for (int i = 0; i < WRITERS; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            close(go[1]);
            _exit(read(go[0], &byte, 1) != 0 || writer(f->db, i));
        }
    }
    close(go[0]);
    close(go[1]);
    assert_int_equal(wait_all(pids, WRITERS), 0);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM measurements"),
                     WRITERS * PER_WRITER);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM devices"), WRITERS);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM kernels"), WRITERS + 1);
    assert_int_equal(raw_int(f->db, "SELECT count(*) FROM best"), WRITERS * PER_WRITER / 10);
}

/*
 * Tuner processes started together on a new file (--device all): they race to create it, to
 * switch it to WAL and to read its schema while another writes it. Every one must open it.
 */
static void test_racing_creators(void **state)
{
    enum { ROUNDS = 15, OPENERS = 6 };
    fixture *f = *state;
    char path[160], byte;

    for (int round = 0; round < ROUNDS; round++) {
        pid_t pids[OPENERS];
        int go[2];
        snprintf(path, sizeof path, "%s/race%d.db", f->dir, round);
        assert_int_equal(pipe(go), 0);
        for (int i = 0; i < OPENERS; i++) {
            pids[i] = fork();
            assert_true(pids[i] >= 0);
            if (pids[i] == 0) {
                rt_err e;
                store *s = NULL;
                close(go[1]);
                if (read(go[0], &byte, 1) != 0)
                    _exit(2);
                if (store_open(path, STORE_WRITE, &s, &e) != RT_OK) {
                    fprintf(stderr, "opener %d: %s\n", i, e.msg);
                    _exit(1);
                }
                store_close(s);
                _exit(0);
            }
        }
        close(go[0]);
        close(go[1]);
        assert_int_equal(wait_all(pids, OPENERS), 0);
    }
}

/*
 * Kill a process while it creates databases, again and again: every file it leaves must open
 * (a half-made schema would be refused as "table ... is missing").
 */
static void test_killed_creation(void **state)
{
    enum { ROUNDS = 12 };
    fixture *f = *state;
    char path[160];

    for (int round = 0; round < ROUNDS; round++) {
        int ready[2];
        char byte;
        assert_int_equal(pipe(ready), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(ready[0]);
            for (int i = 0;; i++) {
                rt_err e;
                store *s = NULL;
                snprintf(path, sizeof path, "%s/r%d_%d.db", f->dir, round, i);
                if (store_open(path, STORE_WRITE, &s, &e) != RT_OK)
                    _exit(1);
                store_close(s);
                if (i == 0 && write(ready[1], "", 1) != 1)   /* one file made: kill me */
                    _exit(1);
            }
        }
        close(ready[1]);
        assert_int_equal(read(ready[0], &byte, 1), 1);
        close(ready[0]);
        struct timespec ts = { 0, 500000L + round * 1000000L };
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status));
    }
    int opened = 0;
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0;; i++) {
            snprintf(path, sizeof path, "%s/r%d_%d.db", f->dir, round, i);
            if (!exists(path))
                break;
            store *s = open_ok(path, STORE_WRITE);
            store_close(s);
            assert_int_equal(raw_int(path, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
            opened++;
        }
    }
    assert_true(opened >= ROUNDS);
}


/* ---------------------------------------------------------------- shipping: export, merge,
 * dump, load */

/* The kernels of the shipping tests go by a label: their source is "// LABEL\n..." and
 * their hash its SHA-256, as the shipping commands check. ship_hash(label) is that hash
 * (kept in a small table, valid for the whole test run). */
static void ship_src(const char *label, char *src, size_t len)
{
    snprintf(src, len, "// %s\n__global__ void k(void) {}\n", label);
}

static const char *ship_hash(const char *label)
{
    static char labels[32][32], hashes[32][RT_HASH_HEX];
    static int n;
    char src[128];
    for (int i = 0; i < n; i++)
        if (!strcmp(labels[i], label))
            return hashes[i];
    assert_true(n < 32);
    snprintf(labels[n], sizeof labels[n], "%s", label);
    ship_src(label, src, sizeof src);
    hash_hex(src, strlen(src), hashes[n]);
    return hashes[n++];
}

static void ship_kernel(store *s, const char *label, const char *family, const char *params)
{
    rt_err e;
    char src[128];
    ship_src(label, src, sizeof src);
    if (store_put_kernel(s, ship_hash(label), family, params, src, &e) != RT_OK)
        fail_msg("store_put_kernel: %s", e.msg);
}

/* A database at 'path' with one device (uuid) and one case, min f32 n=2^20, measured for
 * 'kernel' at 'median' (verified or not), best updated, a CUBIN for sm_90. */
static void ship_db(const char *path, const char *name, const char *uuid, const char *kernel,
                    double median, int verified)
{
    rt_err e;
    store *s = open_ok(path, STORE_WRITE);
    rt_device d = make_device(name, uuid, 0, 9, 0);
    long long id = 0;
    unsigned char cubin[4] = {0xde, 0xad, 0x00, 0x01};
    store_binary b = {cubin, sizeof cubin, 32, 0, NULL};
    assert_int_equal(store_put_device(s, &d, 3000.5, &id, &e), RT_OK);
    ship_kernel(s, kernel, "gridstride", "B=256");
    assert_int_equal(store_put_binary(s, ship_hash(kernel), "sm_90", 13000, &b, &e), RT_OK);
    store_measurement m = meas(id, ship_hash(kernel), "ok", median, verified);
    put_meas(s, &m);
    store_update_best(s, id, "min", "f32", "flat", 1 << 20, 0, &e);
    store_close(s);
}

/* The label of the kernel of the best row of min f32 2^20 on 'uuid' in 'path' ("" when
 * none). */
static void best_kernel(const char *path, const char *uuid, char out[64])
{
    store *s = open_ok(path, STORE_READ);
    sqlite3_stmt *st = NULL;
    out[0] = '\0';
    assert_int_equal(sqlite3_prepare_v2(store_db(s), "SELECT substr(k.source, 4, instr(k.source, "
                                        "char(10)) - 4) FROM best b JOIN devices d ON d.id = "
                                        "b.device_id JOIN kernels k ON k.hash = "
                                        "b.kernel_hash WHERE d.uuid = ?1",
                                        -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        snprintf(out, 64, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    store_close(s);
}

/* A STORE_READ open of a WAL-mode database leaves nothing beside it, and reads what a writer
 * that still has it open committed. */
static void test_read_no_side_files(void **state)
{
    fixture *f = *state;
    rt_err e;
    size_t len1, len2;
    ship_db(f->db, "NVIDIA H100 80GB HBM3", "aa", "k1", 5.0, 1);
    assert_int_equal(dir_entries(f->dir), 1);
    char *before = api_util_slurp(f->db, &len1);
    store *s = open_ok(f->db, STORE_READ);
    collected c = {0};
    assert_int_equal(store_list_best(s, NULL, NULL, NULL, 0, collect, &c, &e), RT_OK);
    assert_int_equal(c.count, 1);
    assert_int_equal(dir_entries(f->dir), 1);
    store_close(s);
    assert_int_equal(dir_entries(f->dir), 1);
    char *after = api_util_slurp(f->db, &len2);
    assert_int_equal(len1, len2);
    assert_memory_equal(before, after, len1);
    free(before);
    free(after);

    /* A writer has it open: its -wal is read, and nothing new is made. */
    store *w = open_ok(f->db, STORE_WRITE);
    put_kernel(w, "k2", "tb2", "B=128");
    int entries = dir_entries(f->dir);
    s = open_ok(f->db, STORE_READ);
    char *src = NULL;
    assert_int_equal(store_get_kernel_source(s, "k2", &src, &e), RT_OK);
    free(src);
    assert_int_equal(dir_entries(f->dir), entries);
    store_close(s);
    store_close(w);
}

static void test_export(void **state)
{
    fixture *f = *state;
    char a[160], out[160], k[64];
    const char *h100[] = {"h100"}, *none[] = {"A100", "v100"};
    store_ship_stats st;
    rt_err e;

    snprintf(a, sizeof a, "%s/a.db", f->dir);
    snprintf(out, sizeof out, "%s/out.db", f->dir);
    ship_db(a, "NVIDIA H100 80GB HBM3", "aa", "k1", 5.0, 1);
    ship_db(a, "NVIDIA L4", "bb", "k2", 7.0, 1);
    store *s = open_ok(a, STORE_WRITE);
    ship_kernel(s, "k_unused", "tb2", "B=64");
    store_close(s);

    /* No match: the message names what the database holds; nothing is written. */
    assert_int_equal(store_export(a, none, 2, 0, out, 0, &st, &e), RT_ENOTFOUND);
    assert_non_null(strstr(e.msg, "no device matches 'A100' or 'v100' (it holds: NVIDIA H100 "
                                  "80GB HBM3, NVIDIA L4)"));
    assert_null(st.refused);
    assert_int_equal(dir_entries(f->dir), 1);

    assert_int_equal(store_export(a, h100, 1, 0, out, 0, &st, &e), RT_OK);
    assert_int_equal(st.devices, 1);
    assert_int_equal(st.best, 1);
    assert_int_equal(st.kernels, 1);
    assert_int_equal(st.binaries, 1);
    assert_int_equal(st.measurements, 0);
    best_kernel(out, "aa", k);
    assert_string_equal(k, "k1");
    size_t hl;
    char *head = api_util_slurp(out, &hl);   /* a rollback-journal file: readers make no -wal */
    assert_true(hl > 100 && head[18] == 1 && head[19] == 1);
    free(head);
    assert_int_equal(dir_entries(f->dir), 2);   /* no temporary file left */

    /* An existing output is refused, unless forced. */
    assert_int_equal(store_export(a, h100, 1, 1, out, 0, &st, &e), RT_EIO);
    assert_non_null(strstr(e.msg, "out.db: exists (--force overwrites it)"));
    assert_int_equal(store_export(a, h100, 1, 1, out, 1, &st, &e), RT_OK);
    assert_int_equal(st.measurements, 1);
    assert_int_equal(dir_entries(f->dir), 2);

    /* Bad inputs: named, nothing written. */
    char miss[160];
    snprintf(miss, sizeof miss, "%s/missing.db", f->dir);
    snprintf(out, sizeof out, "%s/out2.db", f->dir);
    assert_int_equal(store_export(miss, h100, 1, 0, out, 0, &st, &e), RT_EDB);
    assert_ptr_equal(st.refused, miss);
    assert_int_equal(store_export("tests/db/corrupt.db", h100, 1, 0, out, 0, &st, &e), RT_EDB);
    assert_non_null(strstr(e.msg, "tests/db/corrupt.db: corrupt database"));
    assert_int_equal(dir_entries(f->dir), 2);
}

static void test_merge(void **state)
{
    fixture *f = *state;
    char a[160], b[160], c[160], out[160], k[64];
    store_ship_stats st;
    rt_err e;
    size_t la, lb;

    snprintf(a, sizeof a, "%s/a.db", f->dir);
    snprintf(b, sizeof b, "%s/b.db", f->dir);
    snprintf(c, sizeof c, "%s/c.db", f->dir);
    snprintf(out, sizeof out, "%s/all.db", f->dir);
    /* The same GPU (uuid aa) tuned in a and b: b's kernel is faster. c's is faster still but
     * unverified, and its best row was written by hand. */
    ship_db(a, "NVIDIA H100 80GB HBM3", "aa", "k_a", 5.0, 1);
    ship_db(b, "NVIDIA H100 80GB HBM3", "aa", "k_b", 4.0, 1);
    ship_db(b, "NVIDIA L4", "bb", "k_l4", 9.0, 1);
    ship_db(c, "NVIDIA H100 80GB HBM3", "aa", "k_c", 1.0, 0);
    store *s = open_ok(c, STORE_WRITE);
    char sql[512];
    snprintf(sql, sizeof sql, "INSERT INTO best (device_id, op, type, acc, result, layout, n, "
             "hot, kernel_hash, median_us, min_us, max_us, reps, gbps, frac_bw, deterministic) "
             "VALUES (1, 'min', 'f32', 'f32', 'f32', 'flat', 1048576, 0, '%s', 1.0, 1.0, 1.0, 9, "
             "1.0, 0.5, 1)", ship_hash("k_c"));
    assert_int_equal(sqlite3_exec(store_db(s), sql, NULL, NULL, NULL), SQLITE_OK);
    store_close(s);
    char *ba = api_util_slurp(a, &la), *bb = api_util_slurp(b, &lb);
    const char *in[] = {c, a, b};

    assert_int_equal(store_merge(in, 3, out, 0, &st, &e), RT_OK);
    assert_int_equal(st.devices, 2);
    assert_int_equal(st.best, 2);
    assert_int_equal(st.kernels, 4);
    assert_int_equal(st.binaries, 4);
    assert_int_equal(st.measurements, 4);
    best_kernel(out, "aa", k);
    assert_string_equal(k, "k_b");
    best_kernel(out, "bb", k);
    assert_string_equal(k, "k_l4");
    assert_int_equal(raw_int(out, "SELECT count(*) FROM measurements WHERE verified = 0"), 1);

    /* The inputs: byte for byte as they were, nothing beside them. */
    size_t n;
    char *now = api_util_slurp(a, &n);
    assert_true(n == la && !memcmp(now, ba, n));
    free(now);
    now = api_util_slurp(b, &n);
    assert_true(n == lb && !memcmp(now, bb, n));
    free(now);
    free(ba);
    free(bb);
    assert_int_equal(dir_entries(f->dir), 4);

    /* Merging the result again with an input changes nothing. */
    const char *again[] = {out, a};
    char out2[160];
    snprintf(out2, sizeof out2, "%s/again.db", f->dir);
    assert_int_equal(store_merge(again, 2, out2, 0, &st, &e), RT_OK);
    assert_int_equal(st.best, 2);
    assert_int_equal(st.measurements, 4);
    best_kernel(out2, "aa", k);
    assert_string_equal(k, "k_b");

    /* Refused inputs: named, no output. */
    char out3[160];
    snprintf(out3, sizeof out3, "%s/never.db", f->dir);
    const char *bad[][2] = {{"tests/db/foreign.db", "not a redtune database"},
                            {"tests/db/newer.db", "is newer than this redtune"},
                            {"tests/db/corrupt.db", "corrupt database"},
                            {"tests/db/not_sqlite.db", "file is not SQLite"}};
    for (int i = 0; i < 4; i++) {
        const char *two[] = {a, bad[i][0]};
        assert_int_equal(store_merge(two, 2, out3, 0, &st, &e), RT_EDB);
        assert_ptr_equal(st.refused, bad[i][0]);
        assert_non_null(strstr(e.msg, bad[i][0]));
        assert_non_null(strstr(e.msg, bad[i][1]));
    }
    assert_int_equal(dir_entries(f->dir), 5);
}

static void test_dump_load(void **state)
{
    fixture *f = *state;
    char a[160], db2[160], sql[160], bad[160];
    char *t1 = NULL, *t2 = NULL;
    size_t l1, l2;
    store_ship_stats st;
    rt_err e;

    snprintf(a, sizeof a, "%s/a.db", f->dir);
    snprintf(db2, sizeof db2, "%s/b.db", f->dir);
    snprintf(sql, sizeof sql, "%s/a.sql", f->dir);
    ship_db(a, "NVIDIA H100 80GB HBM3", "aa", "k1", 5.123456789, 1);
    ship_db(a, "Quote's GPU", "", "k2", 1.0 / 3.0, 0);
    store *s = open_ok(a, STORE_WRITE);
    unsigned char bin[300];
    for (int i = 0; i < 300; i++)
        bin[i] = (unsigned char)(i * 7);
    store_binary b = {bin, sizeof bin, -1, -1, "log\nwith 'quotes'"};
    assert_int_equal(store_put_binary(s, ship_hash("k2"), "sm_90", 12040, &b, &e), RT_OK);
    store_close(s);

    assert_int_equal(store_dump(a, &t1, &l1, &st, &e), RT_OK);
    {
        char head[64];
        snprintf(head, sizeof head, "-- redtune dump: schema version %d\n", STORE_SCHEMA_VERSION);
        assert_non_null(strstr(t1, head));
    }
    assert_non_null(strstr(t1, "'Quote''s GPU'"));
    assert_non_null(strstr(t1, "X'dead0001'"));
    assert_non_null(strstr(t1, "X'00070e15"));
    assert_int_equal(store_write_file(sql, t1, l1, 0, &e), RT_OK);
    const char *in[] = {sql};
    assert_int_equal(store_load(in, 1, db2, 0, &st, &e), RT_OK);
    assert_int_equal(st.devices, 2);
    assert_int_equal(store_dump(db2, &t2, &l2, &st, &e), RT_OK);
    assert_int_equal(l1, l2);
    assert_memory_equal(t1, t2, l1);
    free(t2);

    /* No dump: an empty database. */
    assert_int_equal(store_load(NULL, 0, db2, 1, &st, &e), RT_OK);
    assert_int_equal(st.devices + st.best + st.kernels, 0);
    assert_int_equal(raw_int(db2, "PRAGMA user_version"), STORE_SCHEMA_VERSION);

    /* Two dumps: merged. */
    const char *twice[] = {sql, sql};
    assert_int_equal(store_load(twice, 2, db2, 1, &st, &e), RT_OK);
    assert_int_equal(st.devices, 2);
    assert_int_equal(st.measurements, 2);

    /* A dump holds INSERTs into redtune's tables only; not a dump; newer. */
    snprintf(bad, sizeof bad, "%s/bad.sql", f->dir);
    const char *texts[][2] = {
        {"-- redtune dump: schema version 1\n\nDROP TABLE best;\n", "bad.sql:3: not authorized"},
        {"-- redtune dump: schema version 1\nINSERT INTO sqlite_master VALUES (1);\n",
         "bad.sql:2:"},
        {"-- redtune dump: schema version 1\nATTACH 'x.db' AS x;\n", "bad.sql:2: not authorized"},
        {"CREATE TABLE x (y);\n", "bad.sql: not a redtune dump"},
        {"-- redtune dump: schema version 7\n", "bad.sql: schema version 7 is newer"}};
    for (int i = 0; i < 5; i++) {
        FILE *fp = fopen(bad, "w");
        assert_non_null(fp);
        fputs(texts[i][0], fp);
        fclose(fp);
        const char *one[] = {bad};
        int rc = store_load(one, 1, db2, 1, &st, &e);
        if (rc != RT_EDB || !strstr(e.msg, texts[i][1]))
            print_error("%d: %s\n", rc, e.msg);
        assert_int_equal(rc, RT_EDB);
        assert_ptr_equal(st.refused, bad);
        assert_non_null(strstr(e.msg, texts[i][1]));
    }
    free(t1);
}

/* Run SQL on a database outside the store, foreign keys off (as a hand edit would). */
static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_close(db);
}

/* A WAL-mode database with a -wal but no -shm (a copy of a database and its -wal made while
 * a writer had it open) is read with what its -wal holds, and nothing is made beside it, nor
 * left in $TMPDIR. */
static void test_read_wal_without_shm(void **state)
{
    fixture *f = *state;
    char copy[160], side[200], from[200], tmp[160];
    rt_err e;
    size_t l1, l2, w1, w2;

    ship_db(f->db, "NVIDIA H100 80GB HBM3", "aa", "k1", 5.0, 1);
    store *w = open_ok(f->db, STORE_WRITE);
    ship_kernel(w, "k2", "tb2", "B=128");   /* committed into the -wal only */
    snprintf(copy, sizeof copy, "%s/copy.db", f->dir);
    api_util_copy_file(f->db, copy);
    snprintf(from, sizeof from, "%s-wal", f->db);
    snprintf(side, sizeof side, "%s-wal", copy);
    api_util_copy_file(from, side);
    store_close(w);
    snprintf(tmp, sizeof tmp, "%s/tmp", f->dir);
    assert_int_equal(mkdir(tmp, 0700), 0);
    char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
    setenv("TMPDIR", tmp, 1);

    char *db_before = api_util_slurp(copy, &l1), *wal_before = api_util_slurp(side, &w1);
    int entries = dir_entries(f->dir);
    store *s = open_ok(copy, STORE_READ);
    char *src = NULL;
    assert_int_equal(store_get_kernel_source(s, ship_hash("k2"), &src, &e), RT_OK);
    free(src);
    assert_int_equal(store_quick_check(s, &e), RT_OK);
    store_close(s);
    snprintf(from, sizeof from, "%s-shm", copy);
    assert_false(exists(from));
    assert_int_equal(dir_entries(f->dir), entries);
    assert_int_equal(dir_entries(tmp), 0);
    char *db_after = api_util_slurp(copy, &l2), *wal_after = api_util_slurp(side, &w2);
    assert_true(l1 == l2 && !memcmp(db_before, db_after, l1));
    assert_true(w1 == w2 && !memcmp(wal_before, wal_after, w1));

    /* The shipping commands read it the same way. */
    char *text = NULL;
    size_t len = 0;
    store_ship_stats st;
    assert_int_equal(store_dump(copy, &text, &len, &st, &e), RT_OK);
    assert_int_equal(st.kernels, 2);
    free(text);
    assert_false(exists(from));
    assert_int_equal(dir_entries(tmp), 0);
    if (old)
        setenv("TMPDIR", old, 1);
    else
        unsetenv("TMPDIR");
    free(old);
    free(db_before);
    free(db_after);
    free(wal_before);
    free(wal_after);
}

/* Export, merge and dump refuse (RT_EDB, the input named in st.refused) an input that fails
 * PRAGMA foreign_key_check, and load a dump whose rows do. */
static void test_ship_refuses_inconsistent(void **state)
{
    fixture *f = *state;
    char a[160], b[160], out[160], sql[160];
    const char *h100[] = {"H100"};
    store_ship_stats st;
    rt_err e;
    char *text = NULL;
    size_t len = 0;

    snprintf(a, sizeof a, "%s/a.db", f->dir);
    snprintf(b, sizeof b, "%s/b.db", f->dir);
    snprintf(out, sizeof out, "%s/out.db", f->dir);
    snprintf(sql, sizeof sql, "%s/a.sql", f->dir);
    ship_db(a, "NVIDIA H100 80GB HBM3", "aa", "k1", 5.0, 1);
    ship_db(b, "NVIDIA H100 80GB HBM3", "aa", "k2", 6.0, 1);
    assert_int_equal(store_dump(a, &text, &len, &st, &e), RT_OK);
    /* The best row's kernel (and its measurement's, and its CUBIN's) removed. */
    raw_exec(a, "PRAGMA foreign_keys = OFF; DELETE FROM kernels");

    assert_int_equal(store_export(a, h100, 1, 0, out, 0, &st, &e), RT_EDB);
    assert_ptr_equal(st.refused, a);
    assert_non_null(strstr(e.msg, "a.db: inconsistent database (PRAGMA foreign_key_check): "
                                  "row 1 of table "));
    assert_non_null(strstr(e.msg, "refers to a row of table kernels that is not there"));
    const char *two[] = {b, a};
    assert_int_equal(store_merge(two, 2, out, 0, &st, &e), RT_EDB);
    assert_ptr_equal(st.refused, a);
    assert_non_null(strstr(e.msg, "a.db: inconsistent database (PRAGMA foreign_key_check)"));
    char *t2 = NULL;
    assert_int_equal(store_dump(a, &t2, &len, &st, &e), RT_EDB);
    assert_ptr_equal(st.refused, a);
    assert_null(t2);
    assert_false(exists(out));

    /* A dump without its kernels' rows. */
    char *k = strstr(text, "INSERT INTO kernels");
    assert_non_null(k);
    char *end = strstr(k, ");\nINSERT");
    assert_non_null(end);
    memmove(k, end + 3, strlen(end + 3) + 1);   /* the statement cut out */
    assert_int_equal(store_write_file(sql, text, strlen(text), 0, &e), RT_OK);
    const char *one[] = {sql};
    assert_int_equal(store_load(one, 1, out, 0, &st, &e), RT_EDB);
    assert_ptr_equal(st.refused, sql);
    if (!strstr(e.msg, "a.sql: inconsistent database (PRAGMA foreign_key_check)"))
        print_error("%s\n", e.msg);
    assert_non_null(strstr(e.msg, "a.sql: inconsistent database (PRAGMA foreign_key_check)"));
    assert_false(exists(out));
    free(text);
}

/* Merge, export and load check what they take: a kernel's hash is its source's SHA-256; the
 * medians are positive and finite; a best row's kernel fits its layout; a best row is backed
 * by a verified measurement of its case in its own input (or its input has none at all). */
static void test_ship_checks_rows(void **state)
{
    fixture *f = *state;
    char a[160], h[160], out[160], sql[400];
    const char *h100[] = {"H100"};
    store_ship_stats st;
    rt_err e;
    char k[64];

    snprintf(a, sizeof a, "%s/a.db", f->dir);
    snprintf(h, sizeof h, "%s/h.db", f->dir);
    snprintf(out, sizeof out, "%s/out.db", f->dir);
    ship_db(a, "NVIDIA H100 80GB HBM3", "aa", "k_real", 5.0, 1);
    const char *two[] = {a, h};

    /* A best row at -1 us for a segmented kernel, no measurement behind it. */
    ship_db(h, "NVIDIA H100 80GB HBM3", "aa", "k_h", 6.0, 1);
    store *s = open_ok(h, STORE_WRITE);
    ship_kernel(s, "k_seg", "seg_per", "LAYOUT=2");
    store_close(s);
    snprintf(sql, sizeof sql, "UPDATE best SET kernel_hash = '%s', median_us = -1",
             ship_hash("k_seg"));
    raw_exec(h, sql);
    assert_int_equal(store_merge(two, 2, out, 0, &st, &e), RT_EDB);
    assert_ptr_equal(st.refused, h);
    assert_non_null(strstr(e.msg, "h.db: time check: best row of device 1, min f32 flat "
                                  "n=1048576: median_us -1.0 is not a positive finite time"));
    /* At a plausible time, with no measurement in its input: the layout check. */
    raw_exec(h, "DELETE FROM measurements; UPDATE best SET median_us = 0.5");
    assert_int_equal(store_merge(two, 2, out, 0, &st, &e), RT_EDB);
    assert_non_null(strstr(e.msg, "h.db: layout check: best row of device 1, min f32 flat "
                                  "n=1048576: kernel "));
    assert_non_null(strstr(e.msg, "is of the segmented plan"));
    assert_false(exists(out));
    /* An axis kernel: refused under "flat", taken under an axis:OxLxI layout. */
    s = open_ok(h, STORE_WRITE);
    ship_kernel(s, "k_ax", "axis_rows", "B=256");
    store_close(s);
    snprintf(sql, sizeof sql, "UPDATE best SET kernel_hash = '%s'", ship_hash("k_ax"));
    raw_exec(h, sql);
    assert_int_equal(store_merge(two, 2, out, 0, &st, &e), RT_EDB);
    assert_non_null(strstr(e.msg, "h.db: layout check: best row of device 1, min f32 flat "
                                  "n=1048576: kernel "));
    assert_non_null(strstr(e.msg, "is of the axis plan"));
    raw_exec(h, "UPDATE best SET layout = 'axis:4096x256x1'");
    if (store_merge(two, 2, out, 0, &st, &e) != RT_OK)
        fail_msg("%s", e.msg);
    unlink(out);

    /* A flat kernel with measurements in its input, none of which backs the best row. */
    unlink(h);
    ship_db(h, "NVIDIA H100 80GB HBM3", "aa", "k_h", 6.0, 1);
    s = open_ok(h, STORE_WRITE);
    ship_kernel(s, "k_fake", "gridstride", "B=64");
    store_close(s);
    snprintf(sql, sizeof sql, "UPDATE best SET kernel_hash = '%s', median_us = 0.5",
             ship_hash("k_fake"));
    raw_exec(h, sql);
    assert_int_equal(store_merge(two, 2, out, 0, &st, &e), RT_OK);
    assert_int_equal(st.left_out, 1);
    best_kernel(out, "aa", k);
    assert_string_equal(k, "k_real");
    unlink(out);

    /* A measurement at 0 us that would have won the merge of measurements. */
    raw_exec(h, "UPDATE measurements SET median_us = 0");
    assert_int_equal(store_merge(two, 2, out, 0, &st, &e), RT_EDB);
    assert_non_null(strstr(e.msg, "h.db: time check: measurement 1 (kernel "));
    assert_non_null(strstr(e.msg, "median_us 0.0 is not a positive finite time"));

    /* A kernel whose source was edited, its hash kept: refused by merge, export and load,
     * and by the run-time read of its source. */
    unlink(h);
    ship_db(h, "NVIDIA H100 80GB HBM3", "aa", "k_h", 6.0, 1);
    raw_exec(h, "UPDATE kernels SET source = source || '/* edited */'");
    char want[200];
    snprintf(want, sizeof want, "h.db: kernel hash check: kernel %s: the SHA-256 of its source "
             "is ", ship_hash("k_h"));
    assert_int_equal(store_merge(two, 2, out, 0, &st, &e), RT_EDB);
    assert_ptr_equal(st.refused, h);
    assert_non_null(strstr(e.msg, want));
    assert_non_null(strstr(e.msg, "not its hash (the kernel row was altered)"));
    assert_int_equal(store_export(h, h100, 1, 0, out, 0, &st, &e), RT_EDB);
    assert_non_null(strstr(e.msg, want));
    s = open_ok(h, STORE_READ);
    char *src = NULL;
    assert_int_equal(store_get_checked_source(s, ship_hash("k_h"), &src, &e), RT_EDB);
    assert_null(src);
    snprintf(want, sizeof want, "h.db: kernel %s: the SHA-256 of its source is ",
             ship_hash("k_h"));
    assert_non_null(strstr(e.msg, want));
    store_close(s);
    s = open_ok(a, STORE_READ);
    assert_int_equal(store_get_checked_source(s, ship_hash("k_real"), &src, &e), RT_OK);
    free(src);
    store_close(s);
    assert_false(exists(out));

    /* load: the same checks, the dump named. */
    char *text = NULL;
    size_t len = 0;
    char dump[160], good[160];
    snprintf(dump, sizeof dump, "%s/h.sql", f->dir);
    snprintf(good, sizeof good, "%s/a.sql", f->dir);
    assert_int_equal(store_dump(a, &text, &len, &st, &e), RT_OK);
    assert_int_equal(store_write_file(good, text, len, 0, &e), RT_OK);
    free(text);
    unlink(h);
    ship_db(h, "NVIDIA H100 80GB HBM3", "aa", "k_h", 6.0, 1);
    assert_int_equal(store_dump(h, &text, &len, &st, &e), RT_OK);
    char *at = strstr(text, "__global__ void k(void) {}");
    assert_non_null(at);
    at[0] = '/';   /* the source edited, the hash kept */
    assert_int_equal(store_write_file(dump, text, len, 0, &e), RT_OK);
    const char *one[] = {dump}, *after[] = {good, dump};
    for (int i = 1; i <= 2; i++) {
        assert_int_equal(store_load(i == 1 ? one : after, i, out, 0, &st, &e), RT_EDB);
        assert_ptr_equal(st.refused, dump);
        assert_non_null(strstr(e.msg, "h.sql: kernel hash check: kernel "));
    }
    assert_false(exists(out));
    free(text);
}

/* Text holding a NUL byte cannot travel through a dump: load refuses it, and so does dump. */
static void test_load_refuses_nul_text(void **state)
{
    fixture *f = *state;
    char a[160], sql[160], out[160];
    store_ship_stats st;
    rt_err e;
    char *text = NULL, *t2 = NULL;
    size_t len = 0;

    snprintf(a, sizeof a, "%s/a.db", f->dir);
    snprintf(sql, sizeof sql, "%s/a.sql", f->dir);
    snprintf(out, sizeof out, "%s/out.db", f->dir);
    ship_db(a, "NVIDIA H100 80GB HBM3", "aa", "k1", 5.0, 1);
    assert_int_equal(store_dump(a, &text, &len, &st, &e), RT_OK);
    char *name = strstr(text, "'NVIDIA H100 80GB HBM3'");
    assert_non_null(name);
    size_t head = (size_t)(name - text);
    const char *nul = "CAST(X'410042' AS TEXT)";
    char *bad = malloc(len + 64);
    assert_non_null(bad);
    memcpy(bad, text, head);
    strcpy(bad + head, nul);
    strcat(bad, name + strlen("'NVIDIA H100 80GB HBM3'"));
    assert_int_equal(store_write_file(sql, bad, strlen(bad), 0, &e), RT_OK);
    const char *one[] = {sql};
    assert_int_equal(store_load(one, 1, out, 0, &st, &e), RT_EDB);
    assert_ptr_equal(st.refused, sql);
    assert_non_null(strstr(e.msg, "a.sql: text check: table devices, row 1, column name: "
                                  "text holding a NUL byte"));
    assert_false(exists(out));
    raw_exec(a, "UPDATE devices SET name = CAST(X'410042' AS TEXT)");
    assert_int_equal(store_dump(a, &t2, &len, &st, &e), RT_EDB);
    assert_non_null(strstr(e.msg, "a.db: text check: table devices, row 1, column name"));
    free(bad);
    free(text);
}

/* load stops at the first failure: a NUL byte (binary data, /dev/zero at once), a dump
 * larger than STORE_DUMP_MAX (by its size, before it is read). */
static void test_load_bounds(void **state)
{
    fixture *f = *state;
    char big[160], out[160];
    store_ship_stats st;
    rt_err e;

    snprintf(big, sizeof big, "%s/big.sql", f->dir);
    snprintf(out, sizeof out, "%s/out.db", f->dir);
    FILE *fp = fopen(big, "w");
    assert_non_null(fp);
    fputs("-- redtune dump: schema version 2\n", fp);
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(truncate(big, (off_t)STORE_DUMP_MAX + 1), 0);   /* sparse */
    const char *one[] = {big};
    assert_int_equal(store_load(one, 1, out, 0, &st, &e), RT_EDB);
    assert_ptr_equal(st.refused, big);
    assert_non_null(strstr(e.msg, "big.sql: larger than a dump may be (512 MiB)"));
    const char *zero[] = {"/dev/zero"};
    assert_int_equal(store_load(zero, 1, out, 0, &st, &e), RT_EDB);
    assert_string_equal(e.msg, "/dev/zero: not a redtune dump (binary data: a NUL byte at "
                               "byte 0)");
    assert_false(exists(out));
}

/* An output may not be one of the inputs (whatever the path), nor a symbolic link or a file
 * that is not regular, --force or not: dump X -o X --force would replace the database with
 * its text, and a rename over a link replaces the link. */
static void test_output_checks(void **state)
{
    fixture *f = *state;
    char a[160], hard[160], link_in[160], link_out[160], target[160];
    store_ship_stats st;
    rt_err e;
    size_t la, n;

    snprintf(a, sizeof a, "%s/a.db", f->dir);
    snprintf(hard, sizeof hard, "%s/hard.db", f->dir);
    snprintf(link_in, sizeof link_in, "%s/link_in.db", f->dir);
    snprintf(link_out, sizeof link_out, "%s/link_out.db", f->dir);
    snprintf(target, sizeof target, "%s/target.db", f->dir);
    ship_db(a, "NVIDIA H100 80GB HBM3", "aa", "k1", 5.0, 1);
    assert_int_equal(link(a, hard), 0);
    assert_int_equal(symlink("a.db", link_in), 0);
    char *before = api_util_slurp(a, &la);
    const char *in[] = {a};

    const char *same[] = {a, hard};
    for (int i = 0; i < 2; i++) {
        const char *sin[] = {same[i]};
        assert_int_equal(store_check_output(a, 1, sin, 1, &e), RT_EIO);
        assert_non_null(strstr(e.msg, "a.db: is the input "));
        assert_non_null(strstr(e.msg, "(the same file): write the output elsewhere"));
        assert_int_equal(store_merge(sin, 1, hard, 1, &st, &e), RT_EIO);
        assert_non_null(strstr(e.msg, "hard.db: is the input "));
    }
    assert_int_equal(store_write_output(hard, "x", 1, 1, in, 1, &e), RT_EIO);
    assert_non_null(strstr(e.msg, "hard.db: is the input "));
    const char *via_link[] = {link_in};
    assert_int_equal(store_load(via_link, 1, a, 1, &st, &e), RT_EIO);
    assert_non_null(strstr(e.msg, "a.db: is the input "));
    char *now = api_util_slurp(a, &n);
    assert_true(n == la && !memcmp(now, before, n));
    free(now);

    /* A symbolic link as the output, to a file or to /dev/stdout: refused, left as it is. */
    api_util_copy_file(a, target);
    assert_int_equal(symlink("target.db", link_out), 0);
    assert_int_equal(store_merge(in, 1, link_out, 1, &st, &e), RT_EIO);
    assert_non_null(strstr(e.msg, "link_out.db: is a symbolic link: an output is not written "
                                  "through one (name the file it points to, or remove the "
                                  "link)"));
    assert_int_equal(store_write_file(link_out, "x", 1, 1, &e), RT_EIO);
    struct stat sb;
    assert_int_equal(lstat(link_out, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    unlink(link_out);
    assert_int_equal(symlink("/dev/stdout", link_out), 0);
    assert_int_equal(store_write_file(link_out, "x", 1, 1, &e), RT_EIO);
    assert_int_equal(lstat(link_out, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    assert_int_equal(store_check_output("/dev/null", 1, NULL, 0, &e), RT_EIO);
    assert_non_null(strstr(e.msg, "/dev/null: not a regular file"));
    /* A regular file that is no input is replaced with --force. */
    assert_int_equal(store_merge(in, 1, target, 1, &st, &e), RT_OK);
    free(before);
}

int test_store_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_schema_version_and_wal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kernel_put_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_binary_blob, setup, teardown),
        cmocka_unit_test_setup_teardown(test_measurement_replace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_measurement_constraints, setup, teardown),
        cmocka_unit_test_setup_teardown(test_has_measurement, setup, teardown),
        cmocka_unit_test_setup_teardown(test_update_best, setup, teardown),
        cmocka_unit_test_setup_teardown(test_user_op_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_best, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuse_not_sqlite, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuse_foreign, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuse_foreign_wal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuse_newer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_v1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_and_migrate_v2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_v2_atomic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_best_by_spec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuse_partial, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_never_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_sqlite_is_new, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_handles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_processes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_racing_creators, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_creation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_no_side_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_export, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dump_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_wal_without_shm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ship_refuses_inconsistent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ship_checks_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_refuses_nul_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_checks, setup, teardown),
    };
    return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
