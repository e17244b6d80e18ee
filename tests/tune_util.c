/*
 * tune_util.c - what the tuning runs' tests share (tune_util.h): a run with stdout and stderr
 * captured, the fake run's options, and the database queried outside the store.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>

#include "tuner/segdata.h"
#include "tuner/tuner.h"

#include "tests/tune_util.h"

char out_text[TU_TEXT], err_text[TU_TEXT];

/* Read a whole small file into 'buf'. */
static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* fn(arg) with stdout and stderr captured into out_text and err_text. */
int tu_capture(int (*fn)(void *), void *arg)
{
    char out_path[] = "/tmp/redtune_tune_outXXXXXX", err_path[] = "/tmp/redtune_tune_errXXXXXX";
    int fo = mkstemp(out_path), fe = mkstemp(err_path);
    assert_true(fo >= 0 && fe >= 0);
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    dup2(fo, 1);
    dup2(fe, 2);
    int rc = fn(arg);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    close(fo);
    close(fe);
    slurp(out_path, out_text, sizeof out_text);
    slurp(err_path, err_text, sizeof err_text);
    unlink(out_path);
    unlink(err_path);
    return rc;
}

typedef struct {
    const tune_opts *o;
    rt_err *e;
} run_args;

static int run_tune(void *arg)
{
    run_args *a = arg;
    return tune_run(a->o, a->e);
}

int tune_captured(const tune_opts *o, rt_err *e)
{
    run_args a = {o, e};
    return tu_capture(run_tune, &a);
}

static const long long tune_sizes[] = {1000, 4096};

tune_opts fake_opts(const char *db)
{
    tune_opts o;
    memset(&o, 0, sizeof o);
    o.op = RT_SUM;
    o.type = RT_F32;
    o.sizes = tune_sizes;
    o.nsizes = 2;
    o.space_path = "tests/lua/mixed_small.lua";
    o.db_path = db;
    o.jobs = 1;
    o.verbose = 1;
    o.seed = 1;
    o.cmdline = "redtune --op sum (test_tune)";
    o.self_exe = "/proc/self/exe";
    o.layout = SEG_LAYOUT_FLAT;
    return o;
}

void db_exec(const char *db, const char *sql)
{
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
}

/* One text value of an SQL query on the database. */
void db_text(const char *db, const char *sql, char *buf, size_t cap)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    const unsigned char *t = sqlite3_column_text(st, 0);
    snprintf(buf, cap, "%s", t ? (const char *)t : "(null)");
    sqlite3_finalize(st);
    sqlite3_close(h);
}

void db_is(const char *db, const char *sql, const char *want)
{
    char got[1024];
    db_text(db, sql, got, sizeof got);
    if (strcmp(got, want))
        print_error("%s\n-> '%s', not '%s'\n", sql, got, want);
    assert_string_equal(got, want);
}

void tu_tune_ok(const tune_opts *o, int measured)
{
    rt_err e;
    rt_clearerr(&e);
    int rc = tune_captured(o, &e);
    if (rc)
        print_error("%s\n%s%s", e.msg, out_text, err_text);
    assert_int_equal(rc, RT_OK);
    if (measured < 0)
        return;
    char want[64];
    snprintf(want, sizeof want, "%d configs measured in this run", measured);
    if (!strstr(out_text, want))
        print_error("no '%s' in:\n%s\n", want, out_text);
    assert_non_null(strstr(out_text, want));
}

void tu_scratch(char *dir, char *db, size_t cap)
{
    assert_non_null(mkdtemp(dir));
    snprintf(db, cap, "%s/t.db", dir);
}

void tu_remove(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}
