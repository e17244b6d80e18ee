/*
 * test_store_ship.c - shipping databases (tuner/ship*.c): export of some devices' winners,
 * merge of several databases into one, dump to SQL text and load back; and the read-only
 * opening they rely on, which makes nothing beside a database (one a writer has open, a
 * -wal without its -shm).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "runtime/store.h"
#include "tuner/ship.h"
#include "tuner/store_tune.h"
#include "tests/api_util.h"
#include "tests/store_util.h"

/* ---------------------------------------------------------------- shipping: export, merge,
 * dump, load */

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

int test_store_ship_group(void)
{
    const struct CMUnitTest tests[] = {
        STORE_TEST(test_read_no_side_files),
        STORE_TEST(test_export),
        STORE_TEST(test_merge),
        STORE_TEST(test_dump_load),
        STORE_TEST(test_read_wal_without_shm),
    };
    return cmocka_run_group_tests_name("store_ship", tests, NULL, NULL);
}
