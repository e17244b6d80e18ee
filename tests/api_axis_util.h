/*
 * api_axis_util.h - what the test files of libredtune's reductions along an axis
 * (tests/test_api_axis*.c) share: a winner of an axis shape put into a test database.
 */
#ifndef RT_TESTS_API_AXIS_UTIL_H
#define RT_TESTS_API_AXIS_UTIL_H

#include "runtime/store.h"

/* A winner of (device, op, type, layout axis:OxLxI) with kernel 'hash' (put if new; its
 * source 'src'), its measurement 'us' (the test fails if the store refuses it; cmocka.h
 * first). */
void put_axis_best(store *s, long long dev, const char *hash, const char *family,
                   const char *params, const char *src, const char *op,
                   unsigned long long o, unsigned long long l, unsigned long long i,
                   const char *type, const char *acc, const char *res, double us);

#endif
