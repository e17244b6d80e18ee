/*
 * test_api_db.c - libredtune's databases (runtime/api*.c) and its read-only queries (in
 * runtime/store.c), with no GPU.
 *
 * Group "api_db" (CPU, runs everywhere): databases refused (missing, foreign, not SQLite,
 * newer, corrupt, a broken page) and left byte-identical; the default database path and the
 * search order of rt_open(NULL, ...); no CUDA driver (a child run, tests/api_util.h). The
 * lookup's choices on made-up databases: tests/test_api_choose.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "include/redtune.h"
#include "runtime/api.h"
#include "runtime/api_int.h"
#include "runtime/store.h"
#include "tuner/store_tune.h"
#include "tests/api_util.h"

/* ---------------------------------------------------------------- CPU: databases */

/* The entries of 'dir' but . and .., or -1 when it cannot be opened. */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    if (!d)
        return -1;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* rt_open refuses 'path' with RT_EDB and 'expect' in the message, leaving it as it was. */
static void refused(const char *dir, const char *fixture, const char *expect)
{
    char path[256], msg[1024];
    size_t len = 0;
    char *before = NULL;
    rt_ctx *ctx = (rt_ctx *)&ctx;

    snprintf(path, sizeof path, "%s/%s", dir, fixture ? fixture : "missing.db");
    if (fixture) {
        char from[256];
        snprintf(from, sizeof from, "tests/db/%s", fixture);
        api_util_copy_file(from, path);
        before = api_util_slurp(path, &len);
        assert_non_null(before);
    }
    int entries = dir_entries(dir);
    int rc = rt_open_err(path, 0, &ctx, msg, sizeof msg);
    if (rc != RT_EDB || !strstr(msg, expect))
        print_error("%s: %d %s\n", path, rc, msg);
    assert_int_equal(rc, RT_EDB);
    assert_null(ctx);
    assert_non_null(strstr(msg, path));
    assert_non_null(strstr(msg, expect));
    assert_string_equal(rt_errmsg(NULL), msg);
    assert_int_equal(dir_entries(dir), entries);   /* no -wal, -shm or new file */
    if (fixture)
        assert_true(api_util_same_bytes(path, before, len));
    else
        assert_int_equal(access(path, F_OK), -1);
    free(before);
}

static void api_refuses_databases(void **state)
{
    (void)state;
    char dir[64];
    api_util_make_dir(dir);
    refused(dir, NULL, "No such file or directory");
    refused(dir, "foreign.db", ": not a redtune database (has no redtune tables)");
    refused(dir, "foreign_wal.db", ": not a redtune database (has no redtune tables)");
    refused(dir, "not_sqlite.db", ": not a redtune database (file is not SQLite)");
    refused(dir, "newer.db", ": schema version 99 is newer than this redtune");
    refused(dir, "corrupt.db", ": corrupt database (PRAGMA quick_check)");
    api_util_remove_dir(dir);
}

/* rt_open reads every page (PRAGMA quick_check): a database with a broken page is refused
 * with RT_EDB at open, not at the first query that happens to read that page. The broken
 * page is made here, by flipping bytes in a page of a real database (past its schema). */
static void api_refuses_corrupt_pages(void **state)
{
    (void)state;
    char dir[64], path[128], msg[1024];
    rt_err e;
    store *s = NULL;
    rt_ctx *ctx = NULL;

    api_util_make_dir(dir);
    snprintf(path, sizeof path, "%s/t.db", dir);
    assert_int_equal(store_open(path, STORE_WRITE, &s, &e), RT_OK);
    char src[2048];
    memset(src, 'x', sizeof src - 1);
    src[sizeof src - 1] = '\0';
    for (int i = 0; i < 64; i++) {
        char hash[16];
        snprintf(hash, sizeof hash, "k%d", i);
        assert_int_equal(store_put_kernel(s, hash, "gridstride", "B=256", src, &e), RT_OK);
    }
    store_close(s);   /* checkpointed: every page is in the file */
    size_t len = 0;
    char *bytes = api_util_slurp(path, &len);
    assert_non_null(bytes);
    assert_true(len > 16 * 4096);
    memset(bytes + len - 4096, 0xa5, 64);   /* the head of the last page */
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(bytes, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
    int rc = rt_open_err(path, 0, &ctx, msg, sizeof msg);
    if (rc != RT_EDB)
        print_error("%d %s\n", rc, msg);
    assert_int_equal(rc, RT_EDB);
    assert_null(ctx);
    assert_non_null(strstr(msg, path));
    assert_non_null(strstr(msg, ": corrupt database (PRAGMA quick_check)"));
    assert_true(api_util_same_bytes(path, bytes, len));
    assert_int_equal(dir_entries(dir), 1);
    free(bytes);
    api_util_remove_dir(dir);
}

/* db_path NULL: $REDTUNE_DB, else the first of the places api_find_db looks at. */
static void api_default_db_path(void **state)
{
    (void)state;
    char dir[64], path[128], cwd[4096];
    const char *old = getenv("REDTUNE_DB");
    char *saved = old ? strdup(old) : NULL;
    rt_ctx *ctx = NULL;

    api_util_make_dir(dir);
    snprintf(path, sizeof path, "%s/from_env.db", dir);
    setenv("REDTUNE_DB", path, 1);
    assert_int_equal(rt_open(NULL, 0, &ctx), RT_EDB);
    assert_null(ctx);
    assert_non_null(strstr(rt_errmsg(NULL), path));
    assert_int_equal(access(path, F_OK), -1);

    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    for (int k = 0; k < 2; k++) {
        if (k == 0)
            unsetenv("REDTUNE_DB");
        else
            setenv("REDTUNE_DB", "", 1);
        assert_int_equal(rt_open(NULL, 0, &ctx), RT_EDB);
        if (!strstr(rt_errmsg(NULL), "no database: REDTUNE_DB is unset and none of these "
                                     "exists: redtune.db, "))
            print_error("%s\n", rt_errmsg(NULL));
        assert_non_null(strstr(rt_errmsg(NULL), "no database: REDTUNE_DB is unset and none "
                                                "of these exists: redtune.db, "));
        assert_non_null(strstr(rt_errmsg(NULL), "/share/redtune/redtune.db"));
    }
    /* One in the working directory is found (and refused here: it is not a database). */
    FILE *fp = fopen("redtune.db", "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(rt_open(NULL, 0, &ctx), RT_EDB);
    assert_string_equal(rt_errmsg(NULL), "redtune.db: not a redtune database (empty file)");
    assert_int_equal(unlink("redtune.db"), 0);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(dir_entries(dir), 0);
    if (saved)
        setenv("REDTUNE_DB", saved, 1);
    else
        unsetenv("REDTUNE_DB");
    free(saved);
    api_util_remove_dir(dir);
}

/* The search order of rt_open(NULL, ...): $REDTUNE_DB, the working directory, beside the
 * library, ../share/redtune beside it, the configured datadir. */
static void api_find_db_order(void **state)
{
    (void)state;
    char dir[64], cwd[4096], mod[128], share[160], data[128], want[256], path[4096];
    const char *how;
    rt_err e;

    api_util_make_dir(dir);
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(mod, sizeof mod, "%s/lib", dir);
    snprintf(share, sizeof share, "%s/share/redtune", dir);
    snprintf(data, sizeof data, "%s/data", dir);
    assert_int_equal(mkdir(mod, 0755), 0);
    snprintf(want, sizeof want, "%s/share", dir);
    assert_int_equal(mkdir(want, 0755), 0);
    assert_int_equal(mkdir(share, 0755), 0);
    assert_int_equal(mkdir(data, 0755), 0);
    assert_int_equal(chdir(dir), 0);

    /* None there: every place is named. */
    rt_clearerr(&e);
    assert_int_equal(api_find_db(NULL, mod, data, path, sizeof path, &how, &e), RT_EDB);
    snprintf(want, sizeof want, "none of these exists: redtune.db, %s/redtune.db, "
             "%s/../share/redtune/redtune.db, %s/redtune.db", mod, mod, data);
    if (!strstr(e.msg, want))
        print_error("%s\n", e.msg);
    assert_non_null(strstr(e.msg, want));

    /* Filled from the last place to the first: each new one wins. */
    const char *places[4][2] = {{data, "installed"}, {share, "installed beside libredtune"},
                                {mod, "beside libredtune"}, {".", "the working directory"}};
    for (int i = 0; i < 4; i++) {
        snprintf(want, sizeof want, "%s/redtune.db", places[i][0]);
        api_util_make_empty_db(want);
        assert_int_equal(api_find_db("", mod, data, path, sizeof path, &how, &e), RT_OK);
        assert_string_equal(how, places[i][1]);
        if (i == 1)
            snprintf(want, sizeof want, "%s/../share/redtune/redtune.db", mod);
        if (i == 3)
            snprintf(want, sizeof want, "redtune.db");
        assert_string_equal(path, want);
    }
    /* $REDTUNE_DB wins, whether or not the file is there. */
    assert_int_equal(api_find_db("/nonexistent/x.db", mod, data, path, sizeof path, &how, &e),
                     RT_OK);
    assert_string_equal(path, "/nonexistent/x.db");
    assert_string_equal(how, "$REDTUNE_DB");
    /* No module directory: those places are skipped. */
    assert_int_equal(unlink("redtune.db"), 0);
    assert_int_equal(api_find_db(NULL, NULL, data, path, sizeof path, &how, &e), RT_OK);
    assert_string_equal(how, "installed");

    /* The module directory of this test binary is where it lies. */
    char here[4096], exe[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(k > 0);
    exe[k] = '\0';
    *strrchr(exe, '/') = '\0';
    api_module_dir(here, sizeof here);
    assert_string_equal(here, exe);

    assert_int_equal(chdir(cwd), 0);
    api_util_remove_dir(dir);
}

/* Child "nodriver": REDTUNE_LIBCUDA=/nonexistent, a valid database: RT_ECUDA. */
int test_api_child_nodriver(const char *db)
{
    rt_ctx *ctx = (rt_ctx *)&ctx;
    char msg[1024];
    int rc = rt_open_err(db, 0, &ctx, msg, sizeof msg);
    printf("rc=%d ctx=%s msg=%s\nerrmsg=%s\n", rc, ctx ? "set" : "NULL", msg, rt_errmsg(NULL));
    return rc == RT_ECUDA && !ctx && !strcmp(msg, rt_errmsg(NULL)) ? 0 : 1;
}

static void api_no_driver(void **state)
{
    (void)state;
    char dir[64], db[128], out[8192];
    size_t len;

    api_util_make_dir(dir);
    snprintf(db, sizeof db, "%s/t.db", dir);
    api_util_make_empty_db(db);
    char *before = api_util_slurp(db, &len);
    assert_non_null(before);
    int st = api_util_run_child("nodriver", db, "REDTUNE_LIBCUDA", "/nonexistent", out, sizeof out);
    if (st != 0 || !strstr(out, "msg=no CUDA driver found: /nonexistent"))
        print_error("child exit %d:\n%s\n", st, out);
    assert_int_equal(st, 0);
    assert_non_null(strstr(out, "rc=-5 ctx=NULL msg=no CUDA driver found: /nonexistent"));
    assert_true(api_util_same_bytes(db, before, len));
    assert_int_equal(dir_entries(dir), 1);   /* a WAL-mode file: no -wal, -shm left */
    free(before);
    api_util_remove_dir(dir);
}

int test_api_db_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_refuses_databases),
        cmocka_unit_test(api_refuses_corrupt_pages),
        cmocka_unit_test(api_default_db_path),
        cmocka_unit_test(api_find_db_order),
        cmocka_unit_test(api_no_driver),
    };
    return cmocka_run_group_tests_name("api_db", tests, NULL, NULL);
}
