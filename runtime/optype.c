/*
 * optype.c - operators and types: names, sizes, properties, and type specs.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "optype.h"

static const char *const op_names[RT_OP_COUNT] = {
    "sum", "prod", "min", "max", "argmin", "argmax", "amax", "asum", "sumsq", "norm2", "mean",
    "var_mean", "var_mean_sample", "std_mean", "std_mean_sample"};
static const char *const type_names[RT_TYPE_COUNT] = {
    "f32", "f64", "i32", "u32", "i64", "u64", "f16", "bf16", "i8", "u8"};
static const char *const cuda_types[RT_TYPE_COUNT] = {
    "float", "double", "int", "unsigned int", "long long", "unsigned long long",
    "unsigned short", "unsigned short", "signed char", "unsigned char"};
static const size_t sizes[RT_TYPE_COUNT] = {4, 8, 4, 4, 8, 8, 2, 2, 1, 1};

#define SPEC_ACC(s) ((((unsigned)(s)) >> 8) & 0xffu)     /* the type + 1, or 0 */
#define SPEC_RES_ELEM 0x10000u
#define SPEC_RES_INDEX 0x20000u

const char *rt_op_name(rt_op op)
{
    return (unsigned)op < RT_OP_COUNT ? op_names[op] : NULL;
}

const char *rt_type_name(rt_type t)
{
    return (unsigned)t < RT_TYPE_COUNT ? type_names[t] : NULL;
}

int optype_parse_op(const char *name)
{
    for (int i = 0; name && i < RT_OP_COUNT; i++)
        if (strcmp(name, op_names[i]) == 0)
            return i;
    return -1;
}

int optype_parse_type(const char *name)
{
    for (int i = 0; name && i < RT_TYPE_COUNT; i++)
        if (strcmp(name, type_names[i]) == 0)
            return i;
    return -1;
}

rt_type optype_elem(rt_type spec)
{
    unsigned s = (unsigned)spec;
    if (s & ~(SPEC_RES_ELEM | SPEC_RES_INDEX | 0xffffu) || (s & 0xffu) >= RT_TYPE_COUNT ||
        SPEC_ACC(s) > RT_TYPE_COUNT)
        return RT_TYPE_COUNT;
    return (rt_type)(s & 0xffu);
}

size_t optype_size(rt_type spec)
{
    rt_type t = optype_elem(spec);
    return t < RT_TYPE_COUNT ? sizes[t] : 0;
}

int optype_is_float(rt_type spec)
{
    rt_type t = optype_elem(spec);
    return t == RT_F32 || t == RT_F64 || t == RT_F16 || t == RT_BF16;
}

int optype_is_signed(rt_type spec)
{
    rt_type t = optype_elem(spec);
    return optype_is_float(t) || t == RT_I32 || t == RT_I64 || t == RT_I8;
}

int optype_is_half(rt_type spec)
{
    rt_type t = optype_elem(spec);
    return t == RT_F16 || t == RT_BF16;
}

int optype_commutes(rt_op op) { (void)op; return 1; }

const char *optype_cuda_type(rt_type spec)
{
    rt_type t = optype_elem(spec);
    return t < RT_TYPE_COUNT ? cuda_types[t] : NULL;
}

const char *optype_op_list(void)
{
    return "sum, prod, min, max, argmin, argmax, amax, asum, sumsq, norm2, mean, var_mean, "
           "var_mean_sample, std_mean, std_mean_sample";
}

const char *optype_type_list(void) { return "f32, f64, i32, u32, i64, u64, f16, bf16, i8, u8"; }

int optype_is_arg(rt_op op) { return op == RT_ARGMIN || op == RT_ARGMAX; }

static int is_var(rt_op op)
{
    return op == RT_VAR_MEAN || op == RT_VAR_MEAN_SAMPLE || op == RT_STD_MEAN ||
           op == RT_STD_MEAN_SAMPLE;
}

int optype_is_struct(rt_op op) { return op == RT_MEAN || is_var(op); }

int optype_widens(rt_op op)
{
    return op == RT_SUM || op == RT_PROD || op == RT_ASUM || op == RT_SUMSQ || op == RT_NORM2 ||
           op == RT_MEAN || is_var(op);
}

/* Operators defined for float elements only. */
static int float_only(rt_op op)
{
    return op == RT_AMAX || op == RT_ASUM || op == RT_SUMSQ || op == RT_NORM2 || is_var(op);
}

/* The default accumulator of a widening operator over 't'. */
static rt_type default_acc(rt_op op, rt_type t)
{
    if (op == RT_MEAN && !optype_is_float(t))
        return t == RT_I64 || t == RT_U64 ? RT_F64 : optype_is_signed(t) ? RT_I64 : RT_U64;
    switch (t) {
    case RT_F16: case RT_BF16: return RT_F32;
    case RT_I8: return RT_I32;
    case RT_U8: return RT_U32;
    default: return t;
    }
}

/* Accumulators a caller may ask for over 't' (besides the default). */
static int acc_allowed(rt_op op, rt_type t, rt_type acc)
{
    if (op == RT_MEAN && !optype_is_float(t))
        return acc == RT_F64;
    switch (t) {
    case RT_F16: case RT_BF16: case RT_F32: return acc == RT_F32 || acc == RT_F64;
    case RT_F64: return acc == RT_F64;
    case RT_I8: case RT_I32: return acc == RT_I32 || acc == RT_I64;
    case RT_U8: case RT_U32: return acc == RT_U32 || acc == RT_U64;
    default: return acc == t;
    }
}

int optype_resolve(rt_op op, rt_type spec, optype_ts *ts, char *why, size_t len)
{
    const char *on = rt_op_name(op) ? rt_op_name(op) : "this operator";
    rt_type t = optype_elem(spec);
    if (why && len)
        why[0] = '\0';
    if (t >= RT_TYPE_COUNT) {
        if (why)
            snprintf(why, len, "unknown type %d", (int)spec);
        return -1;
    }
    unsigned acc_bits = SPEC_ACC(spec), res_elem = ((unsigned)spec & SPEC_RES_ELEM) != 0,
             res_index = ((unsigned)spec & SPEC_RES_INDEX) != 0;
    rt_type want_acc = acc_bits ? (rt_type)(acc_bits - 1) : RT_TYPE_COUNT;
    memset(ts, 0, sizeof *ts);
    ts->elem = t;
    if ((unsigned)op >= RT_OP_COUNT) {
        /* a user operator: element, accumulator and result share the type */
        if (acc_bits || res_elem || res_index) {
            if (why)
                snprintf(why, len, "a user operator takes its own type, not a type spec");
            return -1;
        }
        ts->acc = ts->res = ts->canon = t;
        ts->slot = (int)t;
        return 0;
    }
    if (res_index && !optype_is_arg(op)) {
        if (why)
            snprintf(why, len, "RT_RESULT_INDEX is for argmin and argmax, not %s", on);
        return -1;
    }
    if (res_index && res_elem) {
        if (why)
            snprintf(why, len, "%s: RT_RESULT_INDEX and RT_RESULT_ELEM exclude each other", on);
        return -1;
    }
    if (float_only(op) && !optype_is_float(t)) {
        if (why)
            snprintf(why, len, "%s of %s is not defined: %s takes f16, bf16, f32, f64", on,
                     type_names[t], on);
        return -1;
    }
    int acc_alt = 0, res_alt = 0;
    if (optype_widens(op)) {
        rt_type dacc = default_acc(op, t);
        ts->acc = dacc;
        if (acc_bits && want_acc != dacc) {
            if (!acc_allowed(op, t, want_acc)) {
                if (why)
                    snprintf(why, len, "%s of %s accumulating in %s is not defined", on,
                             type_names[t], type_names[want_acc]);
                return -1;
            }
            ts->acc = want_acc;
            acc_alt = 1;
        }
        rt_type dres = op == RT_MEAN && !optype_is_float(t) ? RT_F64 : ts->acc;
        ts->res = dres;
        if (res_elem && dres != t) {
            if (op == RT_MEAN && !optype_is_float(t)) {
                if (why)
                    snprintf(why, len, "mean of %s to %s is not defined: the mean of integers "
                             "is f64", type_names[t], type_names[t]);
                return -1;
            }
            ts->res = t;
            res_alt = 1;
        }
    } else {
        if (acc_bits && want_acc != t) {
            if (why)
                snprintf(why, len, "%s of %s accumulating in %s is not defined: %s keeps the "
                         "element type", on, type_names[t], type_names[want_acc], on);
            return -1;
        }
        ts->acc = ts->res = t;
        if (res_index) {
            /* argmin/argmax with the index alone: the slot of an alternative result, which
             * these operators (no RT_RESULT_ELEM: the result is the element's) never take */
            ts->res = RT_I64;
            res_alt = 1;
        }
    }
    ts->canon = (rt_type)((unsigned)t | (acc_alt ? ((unsigned)ts->acc + 1) << 8 : 0u) |
                          (res_alt ? (res_index ? SPEC_RES_INDEX : SPEC_RES_ELEM) : 0u));
    ts->slot = (int)t + RT_TYPE_COUNT * (acc_alt + 2 * res_alt);
    return 0;
}

size_t optype_acc_size(rt_op op, rt_type spec)
{
    optype_ts ts;
    if (optype_resolve(op, spec, &ts, NULL, 0))
        return 0;
    if (optype_is_arg(op) || op == RT_MEAN)
        return 16;
    if (is_var(op))
        return 8 + 2 * sizes[ts.acc];
    if (sizes[ts.acc] < 4)
        return 4;   /* min/max/amax of f16, bf16, i8, u8 accumulate in a 32-bit value */
    return sizes[ts.acc];
}

size_t optype_res_size(rt_op op, rt_type spec)
{
    optype_ts ts;
    if (optype_resolve(op, spec, &ts, NULL, 0))
        return 0;
    if (optype_is_arg(op))
        return optype_index_result(ts.canon) ? 8 : 16;
    return (is_var(op) ? 2 : 1) * sizes[ts.res];
}

/* Store 'v' (0, 1, +-inf, NaN or an integer's bounds) as one value of 't'. */
static void put_value(rt_type t, double v, void *out)
{
    switch (t) {
    case RT_F32: { float f = (float)v; memcpy(out, &f, 4); break; }
    case RT_F64: memcpy(out, &v, 8); break;
    case RT_F16: case RT_BF16: {
        /* only the values put_value is given: 0, 1, +-inf, NaN */
        int bf = t == RT_BF16;
        uint16_t h = isnan(v) ? (bf ? 0x7fc0 : 0x7e00)
                   : isinf(v) ? (uint16_t)((v < 0 ? 0x8000 : 0) | (bf ? 0x7f80 : 0x7c00))
                   : v == 1.0 ? (bf ? 0x3f80 : 0x3c00) : 0;
        memcpy(out, &h, 2);
        break;
    }
    default:
        break;
    }
}

/* The identity of min (least = 0) or max (least = 1) as bytes of 't'. */
static void put_extreme(rt_type t, int least, void *out)
{
    switch (t) {
    case RT_I32: { int32_t x = least ? INT32_MIN : INT32_MAX; memcpy(out, &x, 4); break; }
    case RT_U32: { uint32_t x = least ? 0 : UINT32_MAX; memcpy(out, &x, 4); break; }
    case RT_I64: { int64_t x = least ? INT64_MIN : INT64_MAX; memcpy(out, &x, 8); break; }
    case RT_U64: { uint64_t x = least ? 0 : UINT64_MAX; memcpy(out, &x, 8); break; }
    case RT_I8: { int8_t x = least ? INT8_MIN : INT8_MAX; memcpy(out, &x, 1); break; }
    case RT_U8: { uint8_t x = least ? 0 : UINT8_MAX; memcpy(out, &x, 1); break; }
    default: put_value(t, least ? -INFINITY : INFINITY, out); break;
    }
}

void optype_empty_result(rt_op op, rt_type spec, void *out)
{
    optype_ts ts;
    size_t bytes = optype_res_size(op, spec);
    if (!bytes || optype_resolve(op, spec, &ts, NULL, 0))
        return;
    memset(out, 0, bytes);
    switch (op) {
    case RT_PROD:
        if (optype_is_float(ts.res))
            put_value(ts.res, 1.0, out);
        else
            memset(out, 0, bytes), ((unsigned char *)out)[0] = 1;   /* little-endian 1 */
        break;
    case RT_MIN: case RT_ARGMIN:
        put_extreme(ts.elem, 0, out);
        break;
    case RT_MAX: case RT_ARGMAX:
        put_extreme(ts.elem, 1, out);
        break;
    case RT_MEAN:
        put_value(ts.res, NAN, out);
        break;
    case RT_VAR_MEAN: case RT_VAR_MEAN_SAMPLE: case RT_STD_MEAN: case RT_STD_MEAN_SAMPLE:
        put_value(ts.res, NAN, out);
        put_value(ts.res, NAN, (char *)out + sizes[ts.res]);
        break;
    default:
        break;   /* sum, amax, asum, sumsq, norm2: 0 */
    }
    if (optype_is_arg(op)) {
        long long idx = -1;
        memcpy((char *)out + (optype_index_result(ts.canon) ? 0 : 8), &idx, 8);
    }
}

int optype_index_result(rt_type spec) { return ((unsigned)spec & SPEC_RES_INDEX) != 0; }

void optype_spec_text(rt_op op, rt_type spec, char *buf, size_t len)
{
    optype_ts ts;
    if (optype_resolve(op, spec, &ts, NULL, 0)) {
        snprintf(buf, len, "spec 0x%x", (unsigned)spec);
        return;
    }
    unsigned c = (unsigned)ts.canon;
    int acc_alt = SPEC_ACC(c) != 0, res_alt = (c & SPEC_RES_ELEM) != 0;
    if (c & SPEC_RES_INDEX)
        snprintf(buf, len, "%s (index result)", type_names[ts.elem]);
    else if (!acc_alt && !res_alt)
        snprintf(buf, len, "%s", type_names[ts.elem]);
    else if (!res_alt)
        snprintf(buf, len, "%s (%s accumulator)", type_names[ts.elem], type_names[ts.acc]);
    else
        snprintf(buf, len, "%s (%s accumulator, %s result)", type_names[ts.elem],
                 type_names[ts.acc], type_names[ts.res]);
}

int optype_siblings(rt_op op, rt_op *out, int max)
{
    static const rt_op kin[][4] = {
        {RT_MIN, RT_MAX, RT_AMAX, RT_OP_COUNT},
        {RT_MAX, RT_MIN, RT_AMAX, RT_OP_COUNT},
        {RT_AMAX, RT_MAX, RT_MIN, RT_OP_COUNT},
        {RT_ARGMIN, RT_ARGMAX, RT_OP_COUNT, RT_OP_COUNT},
        {RT_ARGMAX, RT_ARGMIN, RT_OP_COUNT, RT_OP_COUNT},
        {RT_SUM, RT_ASUM, RT_SUMSQ, RT_NORM2},
        {RT_ASUM, RT_SUM, RT_SUMSQ, RT_NORM2},
        {RT_SUMSQ, RT_NORM2, RT_SUM, RT_ASUM},
        {RT_NORM2, RT_SUMSQ, RT_SUM, RT_ASUM},
        {RT_VAR_MEAN, RT_VAR_MEAN_SAMPLE, RT_STD_MEAN, RT_STD_MEAN_SAMPLE},
        {RT_VAR_MEAN_SAMPLE, RT_VAR_MEAN, RT_STD_MEAN_SAMPLE, RT_STD_MEAN},
        {RT_STD_MEAN, RT_STD_MEAN_SAMPLE, RT_VAR_MEAN, RT_VAR_MEAN_SAMPLE},
        {RT_STD_MEAN_SAMPLE, RT_STD_MEAN, RT_VAR_MEAN_SAMPLE, RT_VAR_MEAN},
    };
    int k = 0;
    for (size_t i = 0; i < sizeof kin / sizeof kin[0]; i++)
        if (kin[i][0] == op)
            for (int j = 1; j < 4 && kin[i][j] != RT_OP_COUNT && k < max; j++)
                out[k++] = kin[i][j];
    return k;
}

int optype_type_kin(rt_op op, rt_type spec, rt_type *out, int max)
{
    optype_ts a, b;
    int k = 0;
    if ((int)op >= RT_OP_COUNT || optype_elem(spec) != spec
        || optype_resolve(op, spec, &a, NULL, 0))
        return 0;
    /* two passes: the same kind (float or integer) first, then the other */
    for (int pass = 0; pass < 2; pass++)
        for (int m = 0; m < 2; m++)   /* the same signedness first within a kind */
            for (int t = 0; t < RT_TYPE_COUNT && k < max; t++) {
                rt_type u = (rt_type)t;
                if (u == spec || optype_size(u) != optype_size(spec)
                    || (optype_is_float(u) != optype_is_float(spec)) != pass
                    || (optype_is_signed(u) != optype_is_signed(spec)) != m
                    || optype_resolve(op, u, &b, NULL, 0)
                    || optype_acc_size(op, u) != optype_acc_size(op, spec)
                    || optype_res_size(op, u) != optype_res_size(op, spec))
                    continue;
                out[k++] = u;
            }
    return k;
}

int optype_same_cost(rt_op op, rt_op sib, rt_type spec)
{
    optype_ts a, b;
    if ((int)op >= RT_OP_COUNT || (int)sib >= RT_OP_COUNT || optype_resolve(op, spec, &a, NULL, 0)
        || optype_resolve(sib, spec, &b, NULL, 0))
        return 0;
    return a.elem == b.elem && a.acc == b.acc && a.res == b.res
           && optype_acc_size(op, spec) == optype_acc_size(sib, spec)
           && optype_res_size(op, spec) == optype_res_size(sib, spec);
}
