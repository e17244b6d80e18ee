/*
 * test_data.c - seeded data, the CPU reference and the result check.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/optype.h"
#include "tuner/data.h"

#define N 100003

static void fill_is_deterministic_and_thread_independent(void **state)
{
    (void)state;
    for (int t = 0; t < RT_TYPE_COUNT; t++) {
        size_t sz = optype_size((rt_type)t);
        unsigned char *a = malloc(N * sz), *b = malloc(N * sz), *c = malloc(N * sz);
        data_fill(a, (rt_type)t, RT_SUM, N, 42, 0, 1);
        data_fill(b, (rt_type)t, RT_SUM, N, 42, 0, 7);
        data_fill(c, (rt_type)t, RT_SUM, N, 43, 0, 7);
        assert_memory_equal(a, b, N * sz);
        assert_memory_not_equal(a, c, N * sz);
        free(a);
        free(b);
        free(c);
    }
}

static void planted_extreme_is_unique_winner(void **state)
{
    (void)state;
    float *f = malloc(N * sizeof *f);
    data_fill(f, RT_F32, RT_MIN, N, 7, 12345, 4);
    assert_true(f[12345] == -2.0f);
    int nans = 0;
    for (int i = 0; i < N; i++)
        if (isnan(f[i]))
            nans++;
        else if (i != 12345)
            assert_true(f[i] >= -1.0f && f[i] < 1.0f);
    assert_true(nans > 0 && nans < N / 1000);   /* some NaN, which min ignores */
    data_ref ref;
    data_reference(f, RT_F32, RT_MIN, N, &ref, 3);
    float got = -2.0f;
    assert_true(data_check(&got, &ref, RT_F32, RT_MIN, N, NULL, 0));
    got = f[0];
    char why[256];
    assert_false(data_check(&got, &ref, RT_F32, RT_MIN, N, why, sizeof why));
    assert_non_null(strstr(why, "expected -2"));
    free(f);

    uint32_t *u = malloc(N * sizeof *u);
    data_fill(u, RT_U32, RT_MAX, N, 7, N - 1, 4);
    data_reference(u, RT_U32, RT_MAX, N, &ref, 2);
    uint32_t want = u[N - 1];
    for (int i = 0; i < N - 1; i++)
        assert_true(u[i] < want);
    assert_memory_equal(ref.value, &want, 4);
    free(u);
}

/* The reference against a plain loop for every integer op: sums and products wrap. */
static void integer_reference_matches_loop(void **state)
{
    (void)state;
    int32_t *v = malloc(N * sizeof *v);
    for (int op = 0; op <= RT_MAX; op++) {
        data_fill(v, RT_I32, (rt_op)op, N, 99, 5, 4);
        uint32_t acc = op == RT_SUM ? 0 : 1;
        int32_t ext = v[0];
        for (int i = 0; i < N; i++) {
            if (op == RT_SUM) acc += (uint32_t)v[i];
            if (op == RT_PROD) acc *= (uint32_t)v[i];
            if (op == RT_MIN && v[i] < ext) ext = v[i];
            if (op == RT_MAX && v[i] > ext) ext = v[i];
        }
        int32_t want = op == RT_SUM || op == RT_PROD ? (int32_t)acc : ext;
        data_ref ref;
        data_reference(v, RT_I32, (rt_op)op, N, &ref, 5);
        assert_memory_equal(ref.value, &want, 4);
        assert_true(ref.tolerance == 0);
        int32_t off = want + 1;
        assert_false(data_check(&off, &ref, RT_I32, (rt_op)op, N, NULL, 0));
    }
    free(v);
}

static void float_sum_exact_then_bounded(void **state)
{
    (void)state;
    double *d = malloc(N * sizeof *d);
    data_fill(d, RT_F64, RT_SUM, N, 3, 0, 4);
    long double s = 0;
    for (int i = 0; i < N; i++) {
        assert_true(d[i] == floor(d[i]) && fabs(d[i]) <= 16);
        s += d[i];
    }
    data_ref ref;
    data_reference(d, RT_F64, RT_SUM, N, &ref, 4);
    assert_true(ref.tolerance == 0);   /* integer data, small sum of magnitudes: exact */
    double want = (double)s, off = want + 1;
    assert_true(data_check(&want, &ref, RT_F64, RT_SUM, N, NULL, 0));
    assert_false(data_check(&off, &ref, RT_F64, RT_SUM, N, NULL, 0));
    free(d);

    /* Past 2^24 of magnitude, f32 gets a tolerance that grows with the data. */
    unsigned long long big = 3000000;
    float *f = malloc(big * sizeof *f);
    data_fill(f, RT_F32, RT_SUM, big, 3, 0, 4);
    data_reference(f, RT_F32, RT_SUM, big, &ref, 4);
    assert_true(ref.abs_sum > 16777216.0L);
    assert_true(ref.tolerance > 0 && ref.tolerance < 1e-5 * (double)ref.abs_sum);
    float got = (float)ref.approx;
    assert_true(data_check(&got, &ref, RT_F32, RT_SUM, big, NULL, 0));
    got = (float)(ref.approx + 10 * ref.tolerance);
    assert_false(data_check(&got, &ref, RT_F32, RT_SUM, big, NULL, 0));
    float nan = NAN;
    assert_false(data_check(&nan, &ref, RT_F32, RT_SUM, big, NULL, 0));
    free(f);
}

/* Float products: the data are +-1, the reference tracks the sign over any split. */
static void float_prod_sign(void **state)
{
    (void)state;
    for (unsigned long long n = 1; n <= 300000; n = n * 7 + 1) {
        float *f = malloc(n * sizeof *f);
        data_fill(f, RT_F32, RT_PROD, n, n, 0, 8);
        float want = 1;
        for (unsigned long long i = 0; i < n; i++)
            want *= f[i];
        data_ref ref;
        data_reference(f, RT_F32, RT_PROD, n, &ref, 8);
        assert_true(want == 1 || want == -1);
        assert_memory_equal(ref.value, &want, 4);
        free(f);
    }
}

/* argmin/argmax against a plain loop: many ties (the lowest index wins), NaN ignored. */
static void arg_reference_matches_loop(void **state)
{
    (void)state;
    for (int op = RT_ARGMIN; op <= RT_ARGMAX; op++) {
        double *d = malloc(N * sizeof *d);
        data_fill(d, RT_F64, (rt_op)op, N, 5, 0, 4);
        long long best = -1, nans = 0, ties = 0;
        for (long long i = 0; i < N; i++) {
            if (isnan(d[i])) {
                nans++;
                continue;
            }
            if (best < 0 || (op == RT_ARGMIN ? d[i] < d[best] : d[i] > d[best]))
                best = i;
        }
        for (long long i = 0; i < N; i++)
            ties += d[i] == d[best];
        assert_true(nans > 0 && ties > 1);   /* the data test what they claim to */
        data_ref ref;
        data_reference(d, RT_F64, (rt_op)op, N, &ref, 7);
        long long idx;
        memcpy(&idx, ref.value + 8, 8);
        assert_int_equal(idx, best);
        unsigned char got[16];
        memcpy(got, ref.value, 16);
        assert_true(data_check(got, &ref, RT_F64, (rt_op)op, N, NULL, 0));
        idx++;   /* the same value at another index is wrong */
        memcpy(got + 8, &idx, 8);
        char why[256];
        assert_false(data_check(got, &ref, RT_F64, (rt_op)op, N, why, sizeof why));
        assert_non_null(strstr(why, "at index"));
        free(d);
    }
    /* only NaN: the first NaN */
    float f[5] = {NAN, NAN, NAN, NAN, NAN};
    data_ref ref;
    data_reference(f, RT_F32, RT_ARGMIN, 5, &ref, 1);
    long long idx;
    memcpy(&idx, ref.value + 8, 8);
    assert_int_equal(idx, 0);
    /* unsigned types are compared as unsigned */
    uint64_t u[3] = {5, UINT64_MAX, 5};
    data_reference(u, RT_U64, RT_ARGMAX, 3, &ref, 1);
    memcpy(&idx, ref.value + 8, 8);
    assert_int_equal(idx, 1);
    data_reference(u, RT_U64, RT_ARGMIN, 3, &ref, 1);
    memcpy(&idx, ref.value + 8, 8);
    assert_int_equal(idx, 0);
}

/* min/max of floats ignore NaN unless every element is NaN: then the result is NaN (as fmin
 * and numpy.nanmin give), on any split into threads; +-inf is only the empty input's. */
static void all_nan_min_max(void **state)
{
    (void)state;
    const unsigned long long n = 300000;   /* several reference threads */
    float *f = malloc(n * sizeof *f);
    double *d = malloc(n * sizeof *d);
    assert_non_null(f);
    assert_non_null(d);
    for (unsigned long long i = 0; i < n; i++) {
        f[i] = NAN;
        d[i] = -NAN;
    }
    for (int op = RT_MIN; op <= RT_MAX; op++) {
        data_ref ref;
        data_reference(f, RT_F32, (rt_op)op, n, &ref, 8);
        float fv;
        memcpy(&fv, ref.value, 4);
        assert_true(isnan(fv));
        float got = NAN, inf = op == RT_MIN ? INFINITY : -INFINITY;
        assert_true(data_check(&got, &ref, RT_F32, (rt_op)op, n, NULL, 0));
        char why[256];
        assert_false(data_check(&inf, &ref, RT_F32, (rt_op)op, n, why, sizeof why));
        assert_non_null(strstr(why, "expected nan, got "));

        data_reference(d, RT_F64, (rt_op)op, n, &ref, 8);
        double dv;
        memcpy(&dv, ref.value, 8);
        assert_true(isnan(dv));
        double dgot = NAN, dinf = inf;
        assert_true(data_check(&dgot, &ref, RT_F64, (rt_op)op, n, NULL, 0));
        assert_false(data_check(&dinf, &ref, RT_F64, (rt_op)op, n, NULL, 0));

        /* one number among the NaN (in the last thread's part) wins */
        f[n - 3] = 0.5f;
        data_reference(f, RT_F32, (rt_op)op, n, &ref, 8);
        memcpy(&fv, ref.value, 4);
        assert_true(fv == 0.5f);
        assert_false(data_check(&got, &ref, RT_F32, (rt_op)op, n, NULL, 0));
        f[n - 3] = NAN;
    }
    free(f);
    free(d);
}

static void identities(void **state)
{
    (void)state;
    float f;
    data_identity(RT_F32, RT_MIN, &f);
    assert_true(isinf(f) && f > 0);
    int64_t i;
    data_identity(RT_I64, RT_MAX, &i);
    assert_true(i == INT64_MIN);
    unsigned char arg[16];
    long long none;
    data_identity(RT_F32, RT_ARGMIN, arg);
    memcpy(&none, arg + 8, 8);
    assert_int_equal(none, -1);
    uint32_t u;
    data_identity(RT_U32, RT_MIN, &u);
    assert_true(u == UINT32_MAX);
    data_identity(RT_U32, RT_PROD, &u);
    assert_true(u == 1);
}

int test_data_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fill_is_deterministic_and_thread_independent),
        cmocka_unit_test(planted_extreme_is_unique_winner),
        cmocka_unit_test(integer_reference_matches_loop),
        cmocka_unit_test(float_sum_exact_then_bounded),
        cmocka_unit_test(float_prod_sign),
        cmocka_unit_test(arg_reference_matches_loop),
        cmocka_unit_test(all_nan_min_max),
        cmocka_unit_test(identities),
    };
    return cmocka_run_group_tests_name("data", tests, NULL, NULL);
}
