/*
 * api_axis_util.c - what the axis test files of the public API share
 * (tests/api_axis_util.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include "runtime/store.h"
#include "tuner/store_tune.h"
#include "tests/api_axis_util.h"

void put_axis_best(store *s, long long dev, const char *hash, const char *family,
                   const char *params, const char *src, const char *op,
                   unsigned long long o, unsigned long long l, unsigned long long i,
                   const char *type, const char *acc, const char *res, double us)
{
    rt_err e;
    char layout[96];
    snprintf(layout, sizeof layout, "axis:%llux%llux%llu", o, l, i);
    assert_int_equal(store_put_kernel(s, hash, family, params, src, &e), RT_OK);
    store_measurement m = {dev, 0, hash, op, type, layout, (long long)(o * l * i), 0, "ok", "",
                           us, us, us, 10, 1.0, 0.5, 1, 1, (long long)(o * i), (double)l, 0,
                           acc, res};
    if (store_put_measurement(s, &m, &e))
        fail_msg("%s", e.msg);
    if (store_update_best_spec(s, dev, op, type, acc, res, layout, (long long)(o * l * i), 0, &e))
        fail_msg("%s", e.msg);
}
