/*
 * space_util.h - what the test files of the Lua search spaces (tests/test_space*.c) share:
 * the cases they expand, the error of the last expansion, a fake H100, expanding a script's
 * text or a file of tests/lua/ (the tests run from the source top), the configs' parameters
 * and families, and an expansion that must fail with its exact message.
 */
#ifndef RT_TESTS_SPACE_UTIL_H
#define RT_TESTS_SPACE_UTIL_H

#include "tuner/space.h"

/* sum f32 and f64; a non-commutative operator on f32. */
extern const space_case F32, F64, NONCOMM;

/* The error of the last expand_text or expand_file (16 KiB: not on a test's stack). */
extern rt_err space_err;

/* An H100 SXM as the driver describes it. */
rt_device h100(void);

/* space_expand of 'text' (named 'name') on 'dev', into space_err; the file at 'path' on h100(). */
int expand_text(const char *text, const char *name, const rt_device *dev,
                const space_case *cs, rt_config **v, int *n);
int expand_file(const char *path, const space_case *cs, rt_config **v, int *n);

/* The value of parameter 'name' in c; the test fails when the family has none. */
long long get(const rt_config *c, const char *name);

/* Whether c is of family 'name'; how many of v[0..n) are. */
int is_family(const rt_config *c, const char *name);
int count_family(const rt_config *v, int n, const char *name);

/* Expanding 'text' (named 'name') for F32 on h100() fails with 'code' and exactly 'msg',
 * no configs returned (cmocka.h first). */
void expect_text_error(const char *text, const char *name, int code, const char *msg);

#endif
