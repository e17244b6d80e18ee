/*
 * test_axisdata.c - axis shapes and references (tuner/axisdata.c): the shape text read and
 * written, one reference per output over its elements in order (the argmin/argmax index is
 * the position along the axis), an empty axis, and the check naming a wrong output.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/optype.h"
#include "tuner/axisdata.h"

static void shapes_text(void **state)
{
    (void)state;
    axis_shape s;
    char buf[96];
    assert_int_equal(axisdata_parse_shape("1048576x16x1", &s), 0);
    assert_true(s.outer == 1048576 && s.len == 16 && s.inner == 1);
    assert_int_equal(axisdata_parse_shape("7,513,33", &s), 0);
    assert_true(s.outer == 7 && s.len == 513 && s.inner == 33);
    axisdata_layout(&s, buf, sizeof buf);
    assert_string_equal(buf, "axis:7x513x33");
    assert_int_equal(axisdata_parse_layout(buf, &s), 0);
    assert_true(axisdata_n(&s) == 7ULL * 513 * 33 && axisdata_outputs(&s) == 7 * 33);
    static const char *const bad[] = {"", "1x2", "1x2x", "x1x2x3", "1x2x3x", "0x1x1", "1x0x1",
                                      "1x1x0", "1x2,3", "+1x2x3", "1 x2x3", "1x2x3 ", "a,b,c",
                                      "18446744073709551616x1x1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (axisdata_parse_shape(bad[i], &s) != -1)
            fail_msg("'%s' was taken", bad[i]);
    assert_int_equal(axisdata_parse_shape("2097152x2097152x2097152", &s), -2);
    assert_int_equal(axisdata_parse_shape("4294967296,4294967296,1", &s), -2);
    assert_int_equal(axisdata_parse_shape("1x4611686018427387904x1", &s), 0);   /* 2^62 */
    assert_int_equal(axisdata_parse_layout("axis:1,2,3", &s), -1);   /* the stored text is OxLxI */
    assert_int_equal(axisdata_parse_layout("keys:one", &s), -1);
    assert_int_equal(axisdata_parse_layout("1x2x3", &s), -1);
}

/* in[(o * len + l) * inner + i]: the output (o, i)'s maximum planted at l = (o + i) % len. */
static int32_t value(const axis_shape *s, unsigned long long o, unsigned long long l,
                     unsigned long long i)
{
    return l == (o + i) % s->len ? 1000 + (int32_t)(o * 3 + i) : (int32_t)(l * 7) - (int32_t)i;
}

static void references_per_output(void **state)
{
    (void)state;
    static const axis_shape shapes[] = {{2, 5, 3}, {3, 70, 1}, {1, 9, 40}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        const axis_shape *s = &shapes[k];
        unsigned long long n = axisdata_n(s), nout = axisdata_outputs(s);
        int32_t *in = malloc(n * sizeof *in);
        assert_non_null(in);
        for (unsigned long long o = 0; o < s->outer; o++)
            for (unsigned long long l = 0; l < s->len; l++)
                for (unsigned long long i = 0; i < s->inner; i++)
                    in[(o * s->len + l) * s->inner + i] = value(s, o, l, i);
        for (int threads = 1; threads <= 8; threads *= 8) {
            seg_ref *sum = NULL, *arg = NULL;
            assert_int_equal(axisdata_reference(in, RT_I32, RT_SUM, s, &sum, threads), RT_OK);
            assert_int_equal(axisdata_reference(in, RT_I32, RT_ARGMAX, s, &arg, threads), RT_OK);
            size_t rs = optype_res_size(RT_SUM, RT_I32);
            unsigned char *got = calloc(nout, rs);
            unsigned char *got_arg = calloc(nout, 16);
            assert_true(got && got_arg);
            for (unsigned long long m = 0; m < nout; m++) {
                unsigned long long o = m / s->inner, i = m % s->inner;
                int64_t want = 0;
                for (unsigned long long l = 0; l < s->len; l++)
                    want += value(s, o, l, i);
                int64_t r = 0;
                memcpy(&r, sum[m].value, rs);   /* the result's bytes (sign-extended below) */
                if (rs == 4)
                    r = (int32_t)r;
                assert_int_equal(r, want);
                memcpy(got + m * rs, sum[m].value, rs);
                int32_t v;
                long long at;
                memcpy(&v, arg[m].value, 4);
                memcpy(&at, arg[m].value + 8, 8);
                assert_int_equal(v, value(s, o, (o + i) % s->len, i));
                assert_int_equal(at, (long long)((o + i) % s->len));   /* the position l */
                memcpy(got_arg + 16 * m, arg[m].value, 16);
            }
            char why[1024] = "";
            assert_int_equal(axisdata_check(got, sum, RT_I32, RT_SUM, s, why, sizeof why), 1);
            assert_int_equal(axisdata_check(got_arg, arg, RT_I32, RT_ARGMAX, s, why, sizeof why), 1);
            free(got);
            free(got_arg);
            free(sum);
            free(arg);
        }
        free(in);
    }
}

/* An empty axis: every output is the empty result (a sum 0, argmax index -1). */
static void empty_axis(void **state)
{
    (void)state;
    axis_shape s = {4, 0, 5};
    seg_ref *refs = NULL;
    int32_t none = 0;
    assert_int_equal(axisdata_reference(&none, RT_I32, RT_ARGMAX, &s, &refs, 4), RT_OK);
    for (int m = 0; m < 20; m++) {
        long long at;
        memcpy(&at, refs[m].value + 8, 8);
        assert_int_equal(at, -1);
    }
    free(refs);
    assert_int_equal(axisdata_reference(&none, RT_I32, RT_SUM, &s, &refs, 4), RT_OK);
    int64_t zeros[20] = {0};   /* 8 bytes a result at most */
    assert_int_equal(axisdata_check(zeros, refs, RT_I32, RT_SUM, &s, NULL, 0), 1);
    free(refs);
}

/* A wrong output is named by (o, i), with the shape and both values. */
static void check_names_the_output(void **state)
{
    (void)state;
    axis_shape s = {2, 4, 3};
    float in[24];
    for (int k = 0; k < 24; k++)
        in[k] = (float)(k + 1);
    seg_ref *refs = NULL;
    assert_int_equal(axisdata_reference(in, RT_F32, RT_SUM, &s, &refs, 2), RT_OK);
    float got[6];
    for (int m = 0; m < 6; m++) {
        int o = m / 3, i = m % 3;
        got[m] = 0;
        for (int l = 0; l < 4; l++)
            got[m] += in[(o * 4 + l) * 3 + i];
    }
    char why[1024];
    assert_int_equal(axisdata_check(got, refs, RT_F32, RT_SUM, &s, why, sizeof why), 1);
    got[5] += 1;   /* output (1, 2): 15 + 18 + 21 + 24 = 78 */
    assert_int_equal(axisdata_check(got, refs, RT_F32, RT_SUM, &s, why, sizeof why), 0);
    assert_string_equal(why, "output (1, 2) of 2x4x3 (outer, inner; 4 elements along the "
                        "axis): sum over 4 f32: expected 78, got 79");
    free(refs);
}

int test_axisdata_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shapes_text),
        cmocka_unit_test(references_per_output),
        cmocka_unit_test(empty_axis),
        cmocka_unit_test(check_names_the_output),
    };
    return cmocka_run_group_tests_name("axisdata", tests, NULL, NULL);
}
