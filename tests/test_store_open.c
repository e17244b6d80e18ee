/*
 * test_store_open.c - runtime/store.c's opening of a database: the files store_open must
 * refuse without touching them (the fixtures of tests/db/, tests/store_util.h), the
 * migrations of version 1 and 2 files, bad paths, read-only opens that never write, and
 * several handles and processes writing one file, racing to create it, or killed while
 * creating it.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "runtime/store.h"
#include "tuner/store_tune.h"
#include "tests/api_util.h"
#include "tests/store_util.h"

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

int test_store_open_group(void)
{
    const struct CMUnitTest tests[] = {
        STORE_TEST(test_refuse_not_sqlite),
        STORE_TEST(test_refuse_foreign),
        STORE_TEST(test_refuse_foreign_wal),
        STORE_TEST(test_refuse_newer),
        STORE_TEST(test_migrate_v1),
        STORE_TEST(test_read_and_migrate_v2),
        STORE_TEST(test_migrate_v2_atomic),
        STORE_TEST(test_refuse_partial),
        STORE_TEST(test_bad_paths),
        STORE_TEST(test_unwritable_dir),
        STORE_TEST(test_read_missing),
        STORE_TEST(test_read_never_writes),
        STORE_TEST(test_empty_sqlite_is_new),
        STORE_TEST(test_two_handles),
        STORE_TEST(test_concurrent_processes),
        STORE_TEST(test_racing_creators),
        STORE_TEST(test_killed_creation),
    };
    return cmocka_run_group_tests_name("store_open", tests, NULL, NULL);
}
