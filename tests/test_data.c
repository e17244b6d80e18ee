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
#include "tuner/data_int.h"

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

/* ---- the new types and operators (issue 15) ---- */

#define NW 20011

/* The float value of 'r' after v (one ulp up; -0 counts as +0). */
static void ulp_up(unsigned char *v, rt_type r)
{
    if (r == RT_F32) {
        float f;
        memcpy(&f, v, 4);
        f = nextafterf(f == 0 ? 0.0f : f, INFINITY);
        memcpy(v, &f, 4);
    } else if (r == RT_F64) {
        double f;
        memcpy(&f, v, 8);
        f = nextafter(f == 0 ? 0.0 : f, INFINITY);
        memcpy(v, &f, 8);
    } else {
        uint16_t h;
        memcpy(&h, v, 2);
        if (h == 0x8000)
            h = 0;
        h = (h & 0x8000) ? (uint16_t)(h - 1) : (uint16_t)(h + 1);
        memcpy(v, &h, 2);
    }
}

/* The largest value of 'r' at most x (x finite). */
static void at_most(unsigned char *v, rt_type r, long double x)
{
    data_store(v, r, x);
    if (data_load(v, r) > x) {
        /* one ulp down: the ulp up of the negation, negated */
        data_store(v, r, -data_load(v, r));
        ulp_up(v, r);
        data_store(v, r, -data_load(v, r));
    }
}

/* Every defined pair: the fill is deterministic and thread-independent, the reference too,
 * and its own value passes its check; plain data and every stress kind. */
static void new_pairs_reference_is_stable(void **state)
{
    (void)state;
    unsigned char *a = malloc(NW * 8), *b = malloc(NW * 8);
    assert_non_null(a);
    assert_non_null(b);
    int pairs = 0;
    for (int op = 0; op < RT_OP_COUNT; op++)
        for (int t = 0; t < RT_TYPE_COUNT; t++) {
            optype_ts ts;
            if (optype_resolve((rt_op)op, (rt_type)t, &ts, NULL, 0))
                continue;
            for (int kind = -1; kind < DATA_STRESS_KINDS; kind++) {
                if (kind < 0) {
                    data_fill(a, (rt_type)t, (rt_op)op, NW, 11, 77, 1);
                    data_fill(b, (rt_type)t, (rt_op)op, NW, 11, 77, 5);
                } else {
                    data_fill_stress(a, (rt_type)t, (rt_op)op, NW, 11 + kind, kind, 1);
                    data_fill_stress(b, (rt_type)t, (rt_op)op, NW, 11 + kind, kind, 5);
                }
                assert_memory_equal(a, b, NW * optype_size((rt_type)t));
                data_ref r1, r5;
                data_reference(a, (rt_type)t, (rt_op)op, NW, &r1, 1);
                data_reference(a, (rt_type)t, (rt_op)op, NW, &r5, 5);
                size_t rs = optype_res_size((rt_op)op, (rt_type)t);
                assert_memory_equal(r1.value, r5.value, rs);
                char why[512] = "";
                if (!data_check(r1.value, &r1, (rt_type)t, (rt_op)op, NW, why, sizeof why))
                    print_error("%s %s kind %d: %s\n", rt_op_name((rt_op)op),
                                rt_type_name((rt_type)t), kind, why);
                assert_true(data_check(r1.value, &r1, (rt_type)t, (rt_op)op, NW, why, sizeof why));
                assert_true(fabs(r1.tolerance - r5.tolerance) <= 1e-6 * r1.tolerance);
                pairs++;
            }
        }
    assert_true(pairs > 100);
    free(a);
    free(b);
}

/* One op over one spec: the exact ops refuse a result one ulp off; the bounded ones accept
 * the largest value within the bound and refuse the next one up (both fields of var/std). */
static void bound_edges(rt_op op, rt_type spec, int kind)
{
    optype_ts ts;
    assert_int_equal(optype_resolve(op, spec, &ts, NULL, 0), 0);
    size_t es = optype_size(spec);
    unsigned char *buf = malloc(NW * es);
    assert_non_null(buf);
    if (kind < 0)
        data_fill(buf, spec, op, NW, 5, 123, 2);
    else
        data_fill_stress(buf, spec, op, NW, 6, kind, 2);
    data_ref ref;
    data_reference(buf, spec, op, NW, &ref, 2);
    unsigned char got[16];
    char why[512];
    int fields = op >= RT_VAR_MEAN ? 2 : 1;
    size_t rs = optype_size(ts.res);
    for (int f = 0; f < fields; f++) {
        long double approx = f ? ref.approx2 : ref.approx;
        double tol = f ? ref.tolerance2 : ref.tolerance;
        if (isnan(approx))
            continue;
        memcpy(got, ref.value, 16);
        unsigned char *v = got + f * rs;
        if (isinf(data_load(v, ts.res))) {   /* the result overflows its type: only inf */
            assert_true(data_check(got, &ref, spec, op, NW, NULL, 0));
            data_store(v, ts.res, 0);
            assert_false(data_check(got, &ref, spec, op, NW, NULL, 0));
            continue;
        }
        if (tol > 0)
            at_most(v, ts.res, approx + tol);
        if (!data_check(got, &ref, spec, op, NW, why, sizeof why))
            print_error("%s (kind %d): %s\n", rt_op_name(op), kind, why);
        assert_true(data_check(got, &ref, spec, op, NW, NULL, 0));
        ulp_up(v, ts.res);
        assert_false(data_check(got, &ref, spec, op, NW, why, sizeof why));
        assert_non_null(strstr(why, rt_op_name(op)));
        if (tol > 0) {   /* the lower edge too */
            memcpy(got, ref.value, 16);
            data_store(v, ts.res, -(approx - tol));
            at_most(v, ts.res, -(approx - tol));
            data_store(v, ts.res, -data_load(v, ts.res));   /* the least value >= approx - tol */
            assert_true(data_check(got, &ref, spec, op, NW, NULL, 0));
            data_store(v, ts.res, -data_load(v, ts.res));
            ulp_up(v, ts.res);
            data_store(v, ts.res, -data_load(v, ts.res));
            assert_false(data_check(got, &ref, spec, op, NW, NULL, 0));
        }
    }
    free(buf);
}

static void new_ops_bounds(void **state)
{
    (void)state;
    const rt_type floats[] = {RT_F16, RT_BF16, RT_F32, RT_F64};
    const rt_op ops[] = {RT_AMAX, RT_ASUM, RT_SUMSQ, RT_NORM2, RT_MEAN, RT_VAR_MEAN,
                         RT_VAR_MEAN_SAMPLE, RT_STD_MEAN, RT_STD_MEAN_SAMPLE};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t t = 0; t < 4; t++) {
            bound_edges(ops[o], floats[t], -1);
            bound_edges(ops[o], floats[t], DATA_STRESS_LARGE);
            bound_edges(ops[o], floats[t], DATA_STRESS_MEANVAR);
            bound_edges(ops[o], RT_RESULT_ELEM(floats[t]), DATA_STRESS_LARGE);
        }
    /* the new types through the original operators, and integer means */
    const rt_type narrow[] = {RT_F16, RT_BF16, RT_I8, RT_U8};
    for (int op = RT_SUM; op <= RT_ARGMAX; op++)
        for (size_t t = 0; t < 4; t++)
            bound_edges((rt_op)op, narrow[t], -1);
    for (int t = 0; t < RT_TYPE_COUNT; t++)
        bound_edges(RT_MEAN, (rt_type)t, -1);
    bound_edges(RT_SUM, RT_ACC(RT_BF16, RT_F64), DATA_STRESS_LARGE);
    bound_edges(RT_SUM, RT_RESULT_ELEM(RT_F16), -1);
}

/* The stress inputs catch what they are for: an f16 accumulator overflows on the large
 * halves (the f32 sum is exact, inf is refused); the one-pass textbook variance of a large
 * mean with a small spread (f32) is refused, the exact one passes. */
static void stress_inputs_catch(void **state)
{
    (void)state;
    uint16_t *h = malloc(NW * 2);
    float *f = malloc(NW * 4);
    assert_non_null(h);
    assert_non_null(f);
    data_fill_stress(h, RT_F16, RT_SUM, NW, 3, DATA_STRESS_LARGE, 2);
    long double run = 0;
    int overflow = 0;
    for (int i = 0; i < NW; i++) {
        long double x = data_load(&h[i], RT_F16);
        assert_true(fabsl(x) >= 32768 && fabsl(x) <= 65504);
        run += x;
        overflow |= fabsl(run) > 65504;
    }
    assert_true(overflow);
    data_ref ref;
    data_reference(h, RT_F16, RT_SUM, NW, &ref, 2);
    float inf = INFINITY;
    assert_false(data_check(&inf, &ref, RT_F16, RT_SUM, NW, NULL, 0));
    float want = (float)run;
    assert_true(data_check(&want, &ref, RT_F16, RT_SUM, NW, NULL, 0));

    data_fill_stress(f, RT_F32, RT_VAR_MEAN, NW, 4, DATA_STRESS_MEANVAR, 2);
    data_reference(f, RT_F32, RT_VAR_MEAN, NW, &ref, 2);
    assert_true(ref.approx > 1e-5 && ref.approx < 1e-3 && fabsl(ref.approx2 - 1e4) < 1);
    float s = 0, q = 0;
    for (int i = 0; i < NW; i++) {
        s += f[i];
        q += f[i] * f[i];
    }
    float naive[2] = {q / NW - (s / NW) * (s / NW), s / NW};
    char why[512];
    assert_false(data_check(naive, &ref, RT_F32, RT_VAR_MEAN, NW, why, sizeof why));
    assert_non_null(strstr(why, "var_mean over 20011 f32: expected {"));
    float good[2] = {(float)ref.approx, (float)ref.approx2};
    assert_true(data_check(good, &ref, RT_F32, RT_VAR_MEAN, NW, NULL, 0));
    free(h);
    free(f);
}

/* NaN: amax ignores it unless every element is NaN; sums and var_mean give NaN. The empty
 * input's result is optype_empty_result's (mean NaN, amax 0). */
static void new_ops_nan_and_empty(void **state)
{
    (void)state;
    uint16_t h[4] = {0x7e00, 0xbc00 /* -1 */, 0x7e00, 0x3800 /* 0.5 */};
    data_ref ref;
    data_reference(h, RT_F16, RT_AMAX, 4, &ref, 1);
    uint16_t one = 0x3c00, nan = 0x7e00;
    assert_true(data_check(&one, &ref, RT_F16, RT_AMAX, 4, NULL, 0));
    assert_false(data_check(&nan, &ref, RT_F16, RT_AMAX, 4, NULL, 0));
    uint16_t all[3] = {0x7fc0, 0xffc0, 0x7fc1}, bnan = 0x7fc0, bone = 0x3f80;
    data_reference(all, RT_BF16, RT_AMAX, 3, &ref, 1);
    assert_true(data_check(&bnan, &ref, RT_BF16, RT_AMAX, 3, NULL, 0));
    assert_false(data_check(&bone, &ref, RT_BF16, RT_AMAX, 3, NULL, 0));
    data_reference(h, RT_F16, RT_SUMSQ, 4, &ref, 1);
    float fnan = NAN, fone = 1;
    assert_true(data_check(&fnan, &ref, RT_F16, RT_SUMSQ, 4, NULL, 0));
    assert_false(data_check(&fone, &ref, RT_F16, RT_SUMSQ, 4, NULL, 0));
    data_reference(NULL, RT_F32, RT_MEAN, 0, &ref, 1);
    assert_true(data_check(&fnan, &ref, RT_F32, RT_MEAN, 0, NULL, 0));
    float zero = 0;
    data_reference(NULL, RT_F32, RT_AMAX, 0, &ref, 1);
    assert_true(data_check(&zero, &ref, RT_F32, RT_AMAX, 0, NULL, 0));
    double vm[2] = {NAN, NAN};
    data_reference(NULL, RT_F64, RT_VAR_MEAN_SAMPLE, 0, &ref, 1);
    assert_true(data_check(vm, &ref, RT_F64, RT_VAR_MEAN_SAMPLE, 0, NULL, 0));
    /* one element: the sample variance is NaN, the mean the element */
    double x = 3, vm1[2] = {NAN, 3};
    data_reference(&x, RT_F64, RT_VAR_MEAN_SAMPLE, 1, &ref, 1);
    assert_true(data_check(vm1, &ref, RT_F64, RT_VAR_MEAN_SAMPLE, 1, NULL, 0));
    vm1[0] = 0;
    assert_false(data_check(vm1, &ref, RT_F64, RT_VAR_MEAN_SAMPLE, 1, NULL, 0));
}

/* i8/u8 sums and products wrap in their 32-bit accumulators; RT_RESULT_ELEM keeps the low
 * byte; min/max results are one byte. */
static void narrow_integers(void **state)
{
    (void)state;
    int8_t *v = malloc(NW);
    assert_non_null(v);
    for (int op = RT_SUM; op <= RT_MAX; op++) {
        data_fill(v, RT_I8, (rt_op)op, NW, 9, 17, 2);
        uint32_t acc = op == RT_SUM ? 0 : 1;
        int ext = v[0];
        for (int i = 0; i < NW; i++) {
            if (op == RT_SUM) acc += (uint32_t)(int32_t)v[i];
            if (op == RT_PROD) acc *= (uint32_t)(int32_t)v[i];
            if (op == RT_MIN && v[i] < ext) ext = v[i];
            if (op == RT_MAX && v[i] > ext) ext = v[i];
        }
        data_ref ref;
        data_reference(v, RT_I8, (rt_op)op, NW, &ref, 3);
        if (op <= RT_PROD) {
            assert_memory_equal(ref.value, &acc, 4);
            uint32_t off = acc + 1;
            assert_false(data_check(&off, &ref, RT_I8, (rt_op)op, NW, NULL, 0));
            data_reference(v, RT_RESULT_ELEM(RT_I8), (rt_op)op, NW, &ref, 3);
            int8_t low = (int8_t)acc;
            assert_true(data_check(&low, &ref, RT_RESULT_ELEM(RT_I8), (rt_op)op, NW, NULL, 0));
        } else {
            int8_t want = (int8_t)ext, off = (int8_t)(ext + 1);
            assert_true(want == (op == RT_MIN ? -120 : 120) && v[17] == want);
            assert_true(data_check(&want, &ref, RT_I8, (rt_op)op, NW, NULL, 0));
            assert_false(data_check(&off, &ref, RT_I8, (rt_op)op, NW, NULL, 0));
        }
    }
    free(v);
}

/* The f16 value of h as the long-double code made it (ldexpl), the reference of the direct
 * one of data_load. */
static long double slow_f16_value(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    long double v = e == 0 ? ldexpl(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpl(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

static void half_store_is(long double x, rt_type t)
{
    uint16_t got;
    data_store(&got, t, x);
    uint16_t want = data_half_bits(x, t);
    if (got != want)
        fail_msg("%s of %.21Lg: 0x%04x, the long-double rounding gives 0x%04x", rt_type_name(t), x,
                 got, want);
}

/* f16 and bf16 stores (the fills' and the checks' rounding) give the bits the long-double
 * rounding gives, for every 16-bit value, the midpoints between neighbours and just either
 * side of them (ties to even, carries into the exponent, overflow to infinity, subnormals),
 * and random floats and doubles over the whole range; f16 loads give every value exactly. */
static void half_stores_round_as_before(void **state)
{
    (void)state;
    rt_type types[2] = {RT_F16, RT_BF16};
    for (int k = 0; k < 2; k++) {
        rt_type t = types[k];
        for (uint32_t h = 0; h < 65536; h++) {
            long double v = t == RT_F16 ? slow_f16_value((uint16_t)h) : data_load(&h, RT_BF16);
            uint16_t hh = (uint16_t)h;
            if (t == RT_F16) {
                long double got = data_load(&hh, RT_F16);
                assert_true(isnan(v) ? isnan(got) : got == v && signbit(got) == signbit(v));
            }
            if (isnan(v))
                continue;
            half_store_is(v, t);
            uint16_t up = (uint16_t)(h + 1);
            long double w = t == RT_F16 ? slow_f16_value(up) : data_load(&up, RT_BF16);
            if (isnan(w) || isinf(v) || (h & 0x7fff) == 0x7fff)
                continue;
            long double mid = (v + w) / 2;   /* exact in long double */
            half_store_is(mid, t);
            half_store_is(nextafterl(mid, -INFINITY), t);
            half_store_is(nextafterl(mid, INFINITY), t);
            half_store_is((float)nextafterf((float)mid, -INFINITY), t);
            half_store_is((float)nextafterf((float)mid, INFINITY), t);
        }
        uint64_t r = 12345;
        for (int i = 0; i < 400000; i++) {
            r = data_mix(r);
            uint32_t u = (uint32_t)r;
            float f;
            memcpy(&f, &u, 4);
            if (!isnan(f))
                half_store_is(f, t);
            double d;
            memcpy(&d, &r, 8);
            if (!isnan(d))
                half_store_is(d, t);
            half_store_is((long double)(int32_t)(r >> 32) * 0x1p-20L, t);
        }
        half_store_is(65520.0L, t);
        half_store_is(nextafterl(65520.0L, 0), t);
        half_store_is(0x1p-14L, t);
        half_store_is(0x1p-25L, t);
        half_store_is(-0x1p-25L, t);
        half_store_is(0x1.8p-25L, t);
        half_store_is(-0.0L, t);
        half_store_is(INFINITY, t);
        half_store_is(-INFINITY, t);
        half_store_is(0x1.ff8p127L, t);
        half_store_is(0x1.fe8p127L, t);
    }
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
        cmocka_unit_test(new_pairs_reference_is_stable),
        cmocka_unit_test(new_ops_bounds),
        cmocka_unit_test(stress_inputs_catch),
        cmocka_unit_test(new_ops_nan_and_empty),
        cmocka_unit_test(narrow_integers),
        cmocka_unit_test(half_stores_round_as_before),
    };
    return cmocka_run_group_tests_name("data", tests, NULL, NULL);
}
