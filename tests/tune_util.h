/*
 * tune_util.h - what test_tune.c, test_tune_strategy.c and test_devices.c share: a run
 * against the fake worker (this test binary as `all worker`, test_tune.c) with its output
 * captured, the fake run's options, and the database queried outside the store
 * (tune_util.c).
 */
#ifndef REDTUNE_TESTS_TUNE_UTIL_H
#define REDTUNE_TESTS_TUNE_UTIL_H

#include <stddef.h>
#include "tuner/tuner.h"

#define TU_TEXT (1 << 17)

/* The last tune_captured's stdout and stderr. */
extern char out_text[TU_TEXT], err_text[TU_TEXT];

/* fn(arg) with stdout and stderr captured into out_text and err_text; fn's value. */
int tu_capture(int (*fn)(void *), void *arg);
/* tune_run with stdout and stderr captured into out_text and err_text. */
int tune_captured(const tune_opts *o, rt_err *e);
/* sum f32 at 1000 and 4096 over tests/lua/mixed_small.lua into 'db', one job, verbose. */
tune_opts fake_opts(const char *db);
/* One text value of an SQL query on the database ("(null)" for NULL); an SQL statement
 * run on it. */
void db_text(const char *db, const char *sql, char *buf, size_t cap);
void db_exec(const char *db, const char *sql);
/* The query's one text value is 'want' (the query and what it gave printed when not). */
void db_is(const char *db, const char *sql, const char *want);
/* tune_captured succeeds and its run measured 'measured' configs (-1: any number). */
void tu_tune_ok(const tune_opts *o, int measured);
/* mkdtemp of the template 'dir' (asserted) and 'db' (cap bytes) its "t.db"; a scratch
 * directory removed with what it holds. */
void tu_scratch(char *dir, char *db, size_t cap);
void tu_remove(const char *dir);

#endif
