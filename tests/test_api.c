/*
 * test_api.c - libredtune's public API (runtime/api*.c): the argument checks, before any
 * database or GPU is looked at.
 *
 * Group "api" (CPU, runs everywhere): the public calls on a NULL context and their messages;
 * unknown operators and types; type specs (docs/types.md) the library does not define or that
 * are malformed, alike at every entry point; tests/typeref.h's half conversions; the alignment
 * of d_in and d_out; rt_register_op's checks of a user operator's description; messages kept
 * per thread.
 * The rest of the API's tests: test_api_db.c (databases, CPU), test_api_gpu.c (flat
 * reductions), test_api_gpu_seg.c (segmented), test_api_gpu_user.c (user operators),
 * test_api_gpu_graph.c (CUDA graphs), sharing tests/api_util.c; and test_api_axis.c
 * (reductions along an axis).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/redtune.h"
#include "runtime/api.h"
#include "runtime/optype.h"
#include "tests/typeref.h"

/* ---------------------------------------------------------------- CPU: arguments */

static void api_null_args(void **state)
{
    (void)state;
    rt_ctx *ctx = (rt_ctx *)&ctx;
    char msg[256] = "x", buf[64] = "x";
    size_t bytes = 7;
    int x = 0;

    assert_int_equal(rt_open("x.db", 0, NULL), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_open: out is NULL");
    assert_int_equal(rt_open_err(NULL, -1, &ctx, msg, sizeof msg), RT_EINVAL);
    assert_null(ctx);
    assert_string_equal(msg, "rt_open: device -1: a CUDA device ordinal is 0 or more");
    assert_string_equal(rt_errmsg(NULL), msg);
    assert_int_equal(rt_open_err(NULL, -1, NULL, NULL, 0), RT_EINVAL);   /* no buffer: fine */

    assert_int_equal(rt_reduce(NULL, RT_SUM, RT_F32, &x, 1, &x, NULL), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce: the context is NULL");
    assert_int_equal(rt_reduce_temp(NULL, RT_MIN, RT_I64, &x, 1, &x, NULL, 0, NULL), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce_temp: the context is NULL");
    assert_int_equal(rt_temp_bytes(NULL, RT_MAX, RT_U32, 10, &bytes), RT_EINVAL);
    assert_int_equal(bytes, 0);
    assert_string_equal(rt_errmsg(NULL), "rt_temp_bytes: the context is NULL");
    assert_int_equal(rt_explain(NULL, RT_ARGMIN, RT_F64, 10, buf, sizeof buf), RT_EINVAL);
    assert_string_equal(buf, "");
    assert_string_equal(rt_errmsg(NULL), "rt_explain: the context is NULL");
    assert_int_equal(rt_release_temp(NULL), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_release_temp: the context is NULL");
    unsigned keys[1] = {0};
    assert_int_equal(rt_reduce_keys(NULL, RT_SUM, RT_F32, &x, keys, 1, 1, &x, NULL, 0), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce_keys: the context is NULL");
    assert_int_equal(rt_reduce_offsets(NULL, RT_MIN, RT_I32, &x, 1, keys, 1, &x, NULL, 0),
                     RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce_offsets: the context is NULL");
    assert_int_equal(rt_explain_segmented(NULL, RT_LAYOUT_KEYS, RT_SUM, RT_F32, 10, 2, 0, buf,
                                          sizeof buf), RT_EINVAL);
    assert_string_equal(rt_strerror(RT_ECAPTURE), "RT_ECAPTURE");
    assert_string_equal(rt_strerror(RT_ECAPTURE - 1), "RT_E(unknown)");

    /* The message belongs to the call that failed: another context sees none, and the next
     * call (here rt_close, a harmless no-op on NULL) clears it. */
    assert_string_equal(rt_errmsg((const rt_ctx *)&x), "");
    rt_close(NULL);
    assert_string_equal(rt_errmsg(NULL), "");
}

static void api_unknown_op_type(void **state)
{
    (void)state;
    int x = 0;
    size_t bytes;
    char buf[64];

    assert_int_equal(rt_reduce(NULL, (rt_op)99, RT_F32, &x, 1, &x, NULL), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce: unknown operator 99 (known: sum, prod, "
                                         "min, max, argmin, argmax, amax, asum, sumsq, norm2, "
                                         "mean, var_mean, var_mean_sample, std_mean, "
                                         "std_mean_sample)");
    assert_int_equal(rt_reduce(NULL, RT_OP_COUNT, RT_F32, &x, 1, &x, NULL), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(NULL), "unknown operator 15"));
    assert_int_equal(rt_reduce(NULL, (rt_op)-1, RT_F32, &x, 1, &x, NULL), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(NULL), "unknown operator -1"));
    assert_int_equal(rt_reduce(NULL, RT_SUM, (rt_type)42, &x, 1, &x, NULL), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce: unknown type 42 (known: f32, f64, i32, "
                                         "u32, i64, u64, f16, bf16, i8, u8)");
    assert_int_equal(rt_reduce_temp(NULL, RT_SUM, RT_TYPE_COUNT, &x, 1, &x, NULL, 0, NULL),
                     RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(NULL), "rt_reduce_temp: unknown type 10"));
    assert_int_equal(rt_temp_bytes(NULL, (rt_op)17, RT_F32, 1, &bytes), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(NULL), "rt_temp_bytes: unknown operator 17"));
    assert_int_equal(rt_explain(NULL, RT_SUM, (rt_type)-3, 1, buf, sizeof buf), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(NULL), "rt_explain: unknown type -3"));
}

/* Type specs (docs/types.md): a pair the library does not define, or a spec with bits outside
 * its fields, is RT_EINVAL with the resolver's text before the context is looked at; a
 * defined spec gets as far as the NULL context. */
static void api_type_specs(void **state)
{
    (void)state;
    int x = 0;
    size_t bytes;
    char buf[64];
    unsigned keys[1] = {0};
    const struct {
        rt_op op;
        rt_type type;
        const char *expect;   /* after "FN: " */
    } bad[] = {
        {RT_VAR_MEAN, RT_U8, "var_mean of u8 is not defined: var_mean takes f16, bf16, f32, "
                             "f64"},
        {RT_NORM2, RT_I32, "norm2 of i32 is not defined: norm2 takes f16, bf16, f32, f64"},
        {RT_MEAN, RT_RESULT_ELEM(RT_I32), "mean of i32 to i32 is not defined: the mean of "
                                          "integers is f64"},
        {RT_MIN, RT_ACC(RT_F16, RT_F32), "min of f16 accumulating in f32 is not defined: min "
                                         "keeps the element type"},
        {RT_SUM, RT_ACC(RT_F64, RT_F32), "sum of f64 accumulating in f32 is not defined"},
        {RT_SUM, RT_ACC(RT_BF16, RT_I32), "sum of bf16 accumulating in i32 is not defined"},
        {RT_SUM, (rt_type)(RT_F32 | 0x40000), "type spec 0x40000 is malformed: bits 0..7 hold "
                                              "the element type, 8..15 RT_ACC's accumulator + 1 "
                                              "(at most 10), bit 16 RT_RESULT_ELEM, bit 17 "
                                              "RT_RESULT_INDEX, and no other bit is set"},
        {RT_SUM, RT_RESULT_INDEX(RT_F32), "RT_RESULT_INDEX is for argmin and argmax, not sum"},
        {RT_ARGMAX, RT_RESULT_INDEX(RT_RESULT_ELEM(RT_BF16)),
         "argmax: RT_RESULT_INDEX and RT_RESULT_ELEM exclude each other"},
        {RT_ARGMIN, RT_RESULT_INDEX(RT_ACC(RT_F32, RT_F64)), "argmin of f32 accumulating in f64 "
                                                            "is not defined"},
        {RT_SUM, (rt_type)(RT_F16 | (12 << 8)), "type spec 0xc06 is malformed"},
    };
    char want[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(rt_reduce(NULL, bad[i].op, bad[i].type, &x, 1, &x, NULL), RT_EINVAL);
        snprintf(want, sizeof want, "rt_reduce: %s", bad[i].expect);
        if (strncmp(rt_errmsg(NULL), want, strlen(want)))
            fail_msg("case %zu: '%s' is not '%s'", i, rt_errmsg(NULL), want);
        if (i < 4)   /* the resolver's whole text */
            assert_string_equal(rt_errmsg(NULL), want);
        /* every entry point checks alike */
        assert_int_equal(rt_reduce_temp(NULL, bad[i].op, bad[i].type, &x, 1, &x, NULL, 0,
                                        NULL), RT_EINVAL);
        assert_non_null(strstr(rt_errmsg(NULL), bad[i].expect));
        assert_int_equal(rt_temp_bytes(NULL, bad[i].op, bad[i].type, 10, &bytes), RT_EINVAL);
        assert_non_null(strstr(rt_errmsg(NULL), bad[i].expect));
        assert_int_equal(rt_explain(NULL, bad[i].op, bad[i].type, 10, buf, sizeof buf),
                         RT_EINVAL);
        assert_non_null(strstr(rt_errmsg(NULL), bad[i].expect));
        assert_int_equal(rt_reduce_keys(NULL, bad[i].op, bad[i].type, &x, keys, 1, 1, &x, NULL,
                                        0), RT_EINVAL);
        assert_non_null(strstr(rt_errmsg(NULL), "rt_reduce_keys: "));
        assert_non_null(strstr(rt_errmsg(NULL), bad[i].expect));
        assert_int_equal(rt_reduce_offsets(NULL, bad[i].op, bad[i].type, &x, 1, keys, 1, &x,
                                           NULL, 0), RT_EINVAL);
        assert_non_null(strstr(rt_errmsg(NULL), bad[i].expect));
        assert_int_equal(rt_explain_segmented(NULL, RT_LAYOUT_OFFSETS, bad[i].op, bad[i].type,
                                              10, 2, 0, buf, sizeof buf), RT_EINVAL);
        assert_non_null(strstr(rt_errmsg(NULL), bad[i].expect));
    }
    const struct {
        rt_op op;
        rt_type type;
    } good[] = {
        {RT_SUM, RT_F16}, {RT_SUM, RT_ACC(RT_BF16, RT_F64)}, {RT_SUM, RT_RESULT_ELEM(RT_BF16)},
        {RT_SUM, RT_RESULT_ELEM(RT_ACC(RT_F16, RT_F64))}, {RT_MIN, RT_U8}, {RT_ARGMAX, RT_I8},
        {RT_MEAN, RT_I32}, {RT_MEAN, RT_ACC(RT_I8, RT_F64)}, {RT_VAR_MEAN_SAMPLE, RT_BF16},
        {RT_STD_MEAN, RT_RESULT_ELEM(RT_F16)}, {RT_MIN, RT_ACC(RT_F16, RT_F16)},
        {RT_SUM, RT_ACC(RT_U8, RT_U64)}, {RT_ARGMAX, RT_RESULT_INDEX(RT_F32)},
        {RT_ARGMIN, RT_RESULT_INDEX(RT_BF16)}, {RT_ARGMAX, RT_RESULT_INDEX(RT_U64)},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        assert_int_equal(rt_reduce(NULL, good[i].op, good[i].type, &x, 1, &x, NULL), RT_EINVAL);
        if (strcmp(rt_errmsg(NULL), "rt_reduce: the context is NULL"))
            fail_msg("good case %zu: '%s'", i, rt_errmsg(NULL));
    }
}

/* RT_RESULT_INDEX: argmin/argmax give the 8-byte index alone; its own decision slot and
 * canonical spec, the {value, index} accumulator, -1 for an empty input. */
static void api_index_result(void **state)
{
    (void)state;
    const rt_type types[] = {RT_F32, RT_F64, RT_I64, RT_BF16, RT_U8};
    int slots[OPTYPE_SLOTS] = {0};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        rt_type t = types[i], ix = RT_RESULT_INDEX(t);
        optype_ts pair, idx;
        char text[64];
        assert_int_equal(optype_resolve(RT_ARGMAX, t, &pair, NULL, 0), 0);
        assert_int_equal(optype_resolve(RT_ARGMAX, ix, &idx, NULL, 0), 0);
        assert_true(optype_index_result(idx.canon));
        assert_false(optype_index_result(pair.canon));
        assert_int_equal(idx.elem, t);
        assert_int_equal(idx.res, RT_I64);
        assert_true(idx.slot != pair.slot && idx.slot >= 0 && idx.slot < OPTYPE_SLOTS);
        assert_int_equal(slots[idx.slot]++, 0);
        assert_int_equal(slots[pair.slot]++, 0);
        assert_int_equal(optype_res_size(RT_ARGMAX, ix), 8);
        assert_int_equal(optype_res_size(RT_ARGMAX, t), 16);
        assert_int_equal(optype_acc_size(RT_ARGMIN, ix), 16);
        long long got = 0;
        optype_empty_result(RT_ARGMIN, ix, &got);
        assert_int_equal(got, -1);
        optype_spec_text(RT_ARGMAX, ix, text, sizeof text);
        char want[64];
        snprintf(want, sizeof want, "%s (index result)", rt_type_name(t));
        assert_string_equal(text, want);
        /* argmin and argmax of the index stay siblings; neither is the pair's sibling */
        assert_true(optype_same_cost(RT_ARGMIN, RT_ARGMAX, ix));
    }
}

/* tests/typeref.h's host conversions, which the GPU tests of the halves trust: every half
 * survives the round trip through f32, and f32 rounds to nearest even, to inf from 65520 on
 * and through the subnormals. */
static void api_typeref_halves(void **state)
{
    (void)state;
    for (unsigned h = 0; h < 0x10000; h++) {
        float f = tr_f16_to_f32((uint16_t)h), b = tr_bf16_to_f32((uint16_t)h);
        if (f == f && tr_f32_to_f16(f) != h)
            fail_msg("f16 0x%04x -> %g -> 0x%04x", h, f, tr_f32_to_f16(f));
        if (b == b && tr_f32_to_bf16(b) != h)
            fail_msg("bf16 0x%04x -> %g -> 0x%04x", h, b, tr_f32_to_bf16(b));
    }
    assert_int_equal(tr_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(tr_f32_to_f16(65519.0f), 0x7bff);
    assert_int_equal(tr_f32_to_f16(65520.0f), 0x7c00);
    assert_int_equal(tr_f32_to_f16(-1e9f), 0xfc00);
    assert_int_equal(tr_f32_to_f16(0x1p-25f), 0);          /* a tie: to even, 0 */
    assert_int_equal(tr_f32_to_f16(0x1.8p-25f), 1);
    assert_int_equal(tr_f32_to_f16(0x1.8p-24f), 2);        /* 1.5 units: to even, 2 */
    assert_int_equal(tr_f32_to_f16(0x1.ffcp-15f), 0x400);  /* rounds up to the least normal */
    assert_int_equal(tr_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
    assert_int_equal(tr_f32_to_f16(1.0f + 0x1.8p-11f), 0x3c01);
    assert_true(tr_f16_to_f32(0x7e00) != tr_f16_to_f32(0x7e00));
    assert_int_equal(tr_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
    assert_int_equal(tr_f32_to_bf16(1.0f + 0x1.8p-8f), 0x3f81);
    assert_true(tr_f16_to_f32(0x8000) == 0 && signbit(tr_f16_to_f32(0x8000)));
}

/* Pointers: d_in aligned to the element, d_out to the result (its scalar; 8 for argmin and
 * argmax), whatever the accumulator. */
static void api_result_alignment(void **state)
{
    (void)state;
    static _Alignas(16) unsigned char mem[64];
    const struct {
        rt_op op;
        rt_type type;
        int in_off, out_off;
        const char *expect;   /* NULL: accepted */
    } cases[] = {
        {RT_SUM, RT_F16, 2, 4, NULL},
        {RT_SUM, RT_F16, 1, 4, "d_in %p is not aligned to its 2-byte f16 elements"},
        {RT_SUM, RT_F16, 2, 2, "d_out %p is not aligned to 4 bytes (sum f16)"},
        {RT_SUM, RT_RESULT_ELEM(RT_F16), 2, 2, NULL},
        {RT_SUM, RT_ACC(RT_BF16, RT_F64), 0, 4,
         "d_out %p is not aligned to 8 bytes (sum bf16 (f64 accumulator))"},
        {RT_MIN, RT_U8, 1, 1, NULL},
        {RT_MIN, RT_I8, 3, 3, NULL},
        {RT_SUM, RT_I8, 1, 2, "d_out %p is not aligned to 4 bytes (sum i8)"},
        {RT_AMAX, RT_BF16, 2, 2, NULL},
        {RT_ARGMAX, RT_U8, 1, 4, "d_out %p is not aligned to 8 bytes (argmax u8)"},
        {RT_ARGMIN, RT_F16, 2, 8, NULL},
        {RT_MEAN, RT_I32, 4, 4, "d_out %p is not aligned to 8 bytes (mean i32)"},
        {RT_MEAN, RT_F16, 2, 4, NULL},
        {RT_VAR_MEAN, RT_F32, 4, 4, NULL},
        {RT_VAR_MEAN, RT_F64, 8, 4, "d_out %p is not aligned to 8 bytes (var_mean f64)"},
        {RT_STD_MEAN, RT_RESULT_ELEM(RT_BF16), 2, 2, NULL},
        {RT_SUM, RT_F32, 4, 4, NULL},
        {RT_SUM, RT_F64, 8, 4, "d_out %p is not aligned to 8 bytes (sum f64)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rt_err e;
        rt_clearerr(&e);
        const void *in = mem + cases[i].in_off, *out = mem + 32 + cases[i].out_off;
        int rc = api_check_pointers("rt_reduce", NULL, cases[i].op, cases[i].type, in, 10, out,
                                    &e);
        if (!cases[i].expect) {
            if (rc)
                fail_msg("case %zu: %s", i, e.msg);
            continue;
        }
        char want[256], text[256];
        snprintf(text, sizeof text, "rt_reduce: %s", cases[i].expect);
        snprintf(want, sizeof want, text, strstr(cases[i].expect, "d_in") ? in : out);
        assert_int_equal(rc, RT_EINVAL);
        assert_string_equal(e.msg, want);
    }
}

/* rt_register_op checks the description before the context, so every bad field is reported
 * with no GPU; a user handle with a NULL context is reported as the NULL context. */
static void api_register_op_args(void **state)
{
    (void)state;
    rt_op op = (rt_op)-5;
    char long_combine[5000];
    memset(long_combine, 'x', sizeof long_combine - 1);
    long_combine[sizeof long_combine - 1] = '\0';
    const struct {
        rt_op_desc d;
        const char *expect;
    } bad[] = {
        {{NULL, RT_U32, "0", "return a ^ b;", 1}, "rt_register_op: desc->name is NULL"},
        {{"", RT_U32, "0", "return a ^ b;", 1}, "rt_register_op: desc->name is empty"},
        {{"Xor", RT_U32, "0", "return a ^ b;", 1}, "desc->name 'Xor': use a-z, 0-9 and _"},
        {{"min", RT_U32, "0", "return a ^ b;", 1}, "desc->name 'min' is a built-in operator"},
        {{"xor", (rt_type)42, "0", "return a ^ b;", 1}, "operator 'xor': desc->type 42 is not"},
        {{"xor", RT_U32, NULL, "return a ^ b;", 1}, "rt_register_op: desc->identity is NULL"},
        {{"xor", RT_U32, "0", "", 1}, "rt_register_op: desc->combine is empty"},
        {{"xor", RT_U32, "0", long_combine, 1}, "desc->combine is 4999 bytes long, at most 4095"},
        {{"xor", RT_U32, "0", "return a ^ b;", 2}, "desc->commutative is 2, not 0 or 1"},
        {{"a_name_much_longer_than_forty_seven_characters_in_all", RT_U32, "0", "return a;", 1},
         "desc->name is 53 bytes long, at most 47"},
        {{"xor", RT_U32, "0", "return a ^ b;\n#include \"/etc/passwd\"\n", 1},
         "rt_register_op: operator 'xor': desc->combine, line 2: a preprocessor directive ('#') "
         "is not allowed"},
        {{"xor", RT_U32, "0); } __global__ void k() { (0", "return a ^ b;", 1},
         "rt_register_op: operator 'xor': desc->identity, line 1: a ')' closes nothing open "
         "here"},
        {{"xor", RT_U32, "0", "return a ^ b; // xor", 1},
         "rt_register_op: operator 'xor': desc->combine, line 1: a // comment runs to the end of "
         "the text"},
        /* map, acc, finalize, result (docs/ops.md) */
        {{"xor", RT_U32, "0", "return a ^ b;", 1, "return x;\n#pragma once\n"},
         "rt_register_op: operator 'xor': desc->map, line 2: a preprocessor directive ('#') is "
         "not allowed"},
        {{"xor", RT_U32, "{0}", "return a;", 1, "rt_acc_t r = {x}; return r;",
          "struct { double a, b, c, d, e; }"},
         "rt_register_op: operator 'xor': desc->acc, line 1: the struct is 40 bytes long "
         "(8-byte aligned); at most 32"},
        {{"xor", RT_U32, "{0}", "return a;", 1, NULL, "struct { unsigned v; }"},
         "rt_register_op: operator 'xor': desc->map, line 1: missing: a struct accumulator "
         "needs a map from the element into it"},
        {{"xor", RT_U32, "0", "return a ^ b;", 1, NULL, NULL, NULL, "u64"},
         "rt_register_op: operator 'xor': desc->result, line 1: given without a finalize"},
        {{"xor", RT_U32, "0", "return a ^ b;", 1, NULL, NULL, "return a; } {"},
         "rt_register_op: operator 'xor': desc->finalize, line 1: a '}' closes nothing open "
         "here"},
        {{"xor", RT_BF16, "0", "return a ^ b;", 1},
         "rt_register_op: operator 'xor': desc->acc, line 1: a bf16 element needs an "
         "accumulator of 4 or 8 bytes"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(rt_register_op(NULL, &bad[i].d, &op), RT_EINVAL);
        if (!strstr(rt_errmsg(NULL), bad[i].expect))
            fail_msg("case %zu: '%s' lacks '%s'", i, rt_errmsg(NULL), bad[i].expect);
    }
    assert_int_equal(rt_register_op(NULL, NULL, &op), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_register_op: desc is NULL");
    rt_op_desc good = {"xor", RT_U32, "0", "return a ^ b;", 1};
    assert_int_equal(rt_register_op(NULL, &good, &op), RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_register_op: the context is NULL");
    assert_int_equal(op, (rt_op)-5);   /* untouched */

    int x = 0;
    assert_int_equal(rt_reduce(NULL, (rt_op)RT_OP_USER_FIRST, RT_U32, &x, 1, &x, NULL),
                     RT_EINVAL);
    assert_string_equal(rt_errmsg(NULL), "rt_reduce: the context is NULL");
    assert_int_equal(rt_reduce(NULL, (rt_op)(RT_OP_USER_FIRST + RT_USER_OPS_MAX), RT_U32, &x, 1,
                               &x, NULL), RT_EINVAL);
    assert_non_null(strstr(rt_errmsg(NULL), "unknown operator 272"));
}

/* Messages are per thread: a failure in one thread does not show in another. */
static void *other_thread(void *arg)
{
    char *seen = arg;
    int x = 0;
    rt_reduce(NULL, (rt_op)55, RT_F32, &x, 1, &x, NULL);
    snprintf(seen, 256, "%s", rt_errmsg(NULL));
    return NULL;
}

static void api_messages_per_thread(void **state)
{
    (void)state;
    int x = 0;
    char seen[256] = "";
    pthread_t t;

    assert_int_equal(rt_reduce(NULL, RT_SUM, (rt_type)77, &x, 1, &x, NULL), RT_EINVAL);
    assert_int_equal(pthread_create(&t, NULL, other_thread, seen), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_non_null(strstr(seen, "unknown operator 55"));
    assert_non_null(strstr(rt_errmsg(NULL), "unknown type 77"));
}

int test_api_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(api_null_args),
        cmocka_unit_test(api_unknown_op_type),
        cmocka_unit_test(api_register_op_args),
        cmocka_unit_test(api_type_specs),
        cmocka_unit_test(api_index_result),
        cmocka_unit_test(api_result_alignment),
        cmocka_unit_test(api_typeref_halves),
        cmocka_unit_test(api_messages_per_thread),
    };
    return cmocka_run_group_tests_name("api", tests, NULL, NULL);
}
