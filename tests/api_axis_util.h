/*
 * api_axis_util.h - what the test files of libredtune's reductions along an axis
 * (tests/test_api_axis*.c) share: a winner of an axis shape put into a test database; the
 * GPU groups' (test_api_axis_gpu*.c) fixture, CPU reference check, data and checked calls.
 */
#ifndef RT_TESTS_API_AXIS_UTIL_H
#define RT_TESTS_API_AXIS_UTIL_H

#include "include/redtune.h"
#include "runtime/driver.h"
#include "runtime/store.h"
#include "tests/api_util.h"

/* A winner of (device, op, type, layout axis:OxLxI) with kernel 'hash' (put if new; its
 * source 'src'), its measurement 'us' (the test fails if the store refuses it; cmocka.h
 * first). */
void put_axis_best(store *s, long long dev, const char *hash, const char *family,
                   const char *params, const char *src, const char *op,
                   unsigned long long o, unsigned long long l, unsigned long long i,
                   const char *type, const char *acc, const char *res, double us);

/* A winner of (op, type) for [o x l x i] with family and params (config_parse's: the rest
 * default), put into s as this library's unit for them with no CUBIN (12 us; the type's name
 * for the accumulator and the result); its params as config_format writes them into fmt. */
void put_axis_emitted(store *s, long long dev, rt_op op, rt_type type, const char *family,
                      const char *params, unsigned long long o, unsigned long long l,
                      unsigned long long i, char *fmt, size_t fmt_len);

/* The GPU groups' fixture: api_util_gpu's (device 0's context, NVRTC, a test directory,
 * api_util_gpu.have and .why; its tests skip with API_UTIL_NEED_GPU), with an empty database
 * in the directory (axis_gpu_empty_db). */
extern char axis_gpu_empty_db[256];
int axis_gpu_setup(void **state);
int axis_gpu_teardown(void **state);

/* Check out[] of an [o, l, i] reduction of 'in' (host copy) against tests/typeref.h's
 * reference, output by output; 1 when all agree, else 0 after printing up to three. */
int axis_gpu_check(rt_op op, rt_type t, const unsigned char *in, unsigned long long o,
                   unsigned long long l, unsigned long long i, const unsigned char *out,
                   const char *what);

/* Small exact values (k/8) for every type of the tests. */
void axis_gpu_fill(rt_type t, void *p, unsigned long long n, unsigned seed);

/* The shapes every GPU group runs: ragged ones, split and unsplit, len == 0, 1 x 1 x 1. */
#define AXIS_GPU_NSHAPES 14
extern const unsigned long long axis_gpu_shapes[AXIS_GPU_NSHAPES][3];

/* One call of rt_reduce_axis (or _temp with 'use_temp') on [o x l x i] of axis_gpu_fill's
 * data, one element past an aligned address when 'shift', checked (nothing written past the
 * outputs; the test fails otherwise). */
void axis_gpu_call(rt_ctx *ctx, rt_op op, rt_type t, unsigned long long o,
                   unsigned long long l, unsigned long long i, int shift, int use_temp);

#endif
