/*
 * store_util.c - what the database's test files share (tests/store_util.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "runtime/hash.h"
#include "runtime/store.h"
#include "tuner/store_tune.h"
#include "tests/store_util.h"

/* ---------------------------------------------------------------- helpers */

int store_util_setup(void **state)
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

int store_util_teardown(void **state)
{
    fixture *f = *state;
    int rc = nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return rc;
}

int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Number of entries in a directory, besides . and .. */
int dir_entries(const char *dir)
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

rt_device make_device(const char *name, const char *uuid, int ordinal, int major,
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

store *open_ok(const char *path, int mode)
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

void put_kernel(store *s, const char *hash, const char *family, const char *params)
{
    rt_err e;
    char src[128];
    snprintf(src, sizeof src, "// %s %s\n__global__ void k(void) {}\n", family, params);
    if (store_put_kernel(s, hash, family, params, src, &e) != RT_OK)
        fail_msg("store_put_kernel: %s", e.msg);
}

store_measurement meas(long long dev, const char *hash, const char *status,
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

void put_meas(store *s, const store_measurement *m)
{
    rt_err e;
    if (store_put_measurement(s, m, &e) != RT_OK)
        fail_msg("store_put_measurement: %s", e.msg);
}

/* Run one query returning one integer on an existing file, outside the store. Read-write, so
 * that closing removes the -wal and -shm a read-only connection would leave. */
long long raw_int(const char *path, const char *sql)
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

/* ---------------------------------------------------------------- the winners as text */

int collect(const store_best_row *r, void *arg)
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

/* The best rows of a store as "op type acc result layout n" lines. */
int collect_spec(const store_best_row *r, void *arg)
{
    collected *c = arg;
    if (c->count < (int)(sizeof c->lines / sizeof c->lines[0]))
        snprintf(c->lines[c->count], sizeof c->lines[0], "%s %s %s %s %s %lld", r->op, r->type,
                 r->acc, r->result, r->layout, r->n);
    c->count++;
    return 0;
}

/* ---------------------------------------------------------------- the shipping tests */

/* The kernels of the shipping tests go by a label: their source is "// LABEL\n..." and
 * their hash its SHA-256, as the shipping commands check. ship_hash(label) is that hash
 * (kept in a small table, valid for the whole test run). */
static void ship_src(const char *label, char *src, size_t len)
{
    snprintf(src, len, "// %s\n__global__ void k(void) {}\n", label);
}

const char *ship_hash(const char *label)
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

void ship_kernel(store *s, const char *label, const char *family, const char *params)
{
    rt_err e;
    char src[128];
    ship_src(label, src, sizeof src);
    if (store_put_kernel(s, ship_hash(label), family, params, src, &e) != RT_OK)
        fail_msg("store_put_kernel: %s", e.msg);
}

/* A database at 'path' with one device (uuid) and one case, min f32 n=2^20, measured for
 * 'kernel' at 'median' (verified or not), best updated, a CUBIN for sm_90. */
void ship_db(const char *path, const char *name, const char *uuid, const char *kernel,
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
void best_kernel(const char *path, const char *uuid, char out[64])
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
