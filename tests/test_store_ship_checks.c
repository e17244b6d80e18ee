/*
 * test_store_ship_checks.c - what the shipping commands (tuner/ship*.c) refuse: an input
 * that fails PRAGMA foreign_key_check, rows that fail their checks (a kernel's hash, positive
 * finite times, a best row's layout and the measurement behind it), text holding a NUL
 * byte, a dump too large or binary, and an output that is an input, a symbolic link or not a
 * regular file.
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
#include <unistd.h>

#include <sqlite3.h>

#include "runtime/store.h"
#include "tuner/ship.h"
#include "tuner/store_tune.h"
#include "tests/api_util.h"
#include "tests/store_util.h"

/* ---------------------------------------------------------------- what shipping refuses */

/* Run SQL on a database outside the store, foreign keys off (as a hand edit would). */
static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    sqlite3_close(db);
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

int test_store_ship_checks_group(void)
{
    const struct CMUnitTest tests[] = {
        STORE_TEST(test_ship_refuses_inconsistent),
        STORE_TEST(test_ship_checks_rows),
        STORE_TEST(test_load_refuses_nul_text),
        STORE_TEST(test_load_bounds),
        STORE_TEST(test_output_checks),
    };
    return cmocka_run_group_tests_name("store_ship_checks", tests, NULL, NULL);
}
