/*
 * data_check.c - results against data_ref.c's reference: exact or within the documented
 * bound, formatted for messages; user operators against their own reference; identities.
 */
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "../runtime/optype.h"
#include "data.h"
#include "data_int.h"

/* ---- the check ---- */

void data_format(const void *v, rt_type type, char *buf, size_t len)
{
    switch (optype_elem(type)) {
    case RT_F32: { float f; memcpy(&f, v, 4); snprintf(buf, len, "%.9g", f); break; }
    case RT_F64: { double f; memcpy(&f, v, 8); snprintf(buf, len, "%.17g", f); break; }
    case RT_I32: { int32_t x; memcpy(&x, v, 4); snprintf(buf, len, "%" PRId32, x); break; }
    case RT_U32: { uint32_t x; memcpy(&x, v, 4); snprintf(buf, len, "%" PRIu32, x); break; }
    case RT_I64: { int64_t x; memcpy(&x, v, 8); snprintf(buf, len, "%" PRId64, x); break; }
    case RT_U64: { uint64_t x; memcpy(&x, v, 8); snprintf(buf, len, "%" PRIu64, x); break; }
    case RT_F16: case RT_BF16: {
        uint16_t h;
        memcpy(&h, v, 2);
        snprintf(buf, len, "%.6g (0x%04x)", (double)data_load(v, type), h);
        break;
    }
    case RT_I8: snprintf(buf, len, "%d", *(const int8_t *)v); break;
    case RT_U8: snprintf(buf, len, "%u", *(const uint8_t *)v); break;
    default: snprintf(buf, len, "?"); break;
    }
}

/* One float result of type r against its reference. */
static int check_float(const void *got, const void *want, rt_type r, long double approx, double tol)
{
    long double g = data_load(got, r), w = data_load(want, r);
    if (isnan(approx) || isnan(w))
        return isnan(g);
    if (isnan(g))
        return 0;
    if (tol <= 0 || isinf(g) || isinf(w))
        return g == w;
    return fabsl(g - approx) <= tol;
}

int data_check(const void *got, const data_ref *ref, rt_type type, rt_op op,
               unsigned long long n, char *why, size_t len)
{
    optype_ts ts;
    if (optype_resolve(op, type, &ts, why, len))
        return 0;
    return data_check_ts(got, ref, &ts, type, op, n, why, len);
}

int data_check_ts(const void *got, const data_ref *ref, const optype_ts *tsp, rt_type type, rt_op op,
                  unsigned long long n, char *why, size_t len)
{
    const optype_ts ts = *tsp;
    char spec[96];   /* the pair's text, made for 'why' only when the check fails */
    int ok;
    if (optype_is_arg(op)) {
        long long gi, wi;
        memcpy(&gi, (const char *)got + 8, 8);
        memcpy(&wi, ref->value + 8, 8);
        ok = gi == wi;
        if (ok && optype_is_float(ts.elem)) {
            long double g = data_load(got, ts.elem), w = data_load(ref->value, ts.elem);
            ok = g == w || (isnan(g) && isnan(w));
        } else if (ok) {
            ok = memcmp(got, ref->value, optype_size(ts.elem)) == 0;
        }
        if (!ok && why) {
            optype_spec_text(op, type, spec, sizeof spec);
            char a[64], b[64];
            data_format(got, ts.elem, a, sizeof a);
            data_format(ref->value, ts.elem, b, sizeof b);
            snprintf(why, len, "%s over %llu %s: expected %s at index %lld, got %s at index %lld",
                     rt_op_name(op), n, spec, b, wi, a, gi);
        }
        return ok;
    }
    if (data_is_var(op)) {
        size_t rs = optype_size(ts.res);
        ok = check_float(got, ref->value, ts.res, ref->approx, ref->tolerance) &&
             check_float((const char *)got + rs, ref->value + rs, ts.res, ref->approx2,
                         ref->tolerance2);
        if (!ok && why) {
            optype_spec_text(op, type, spec, sizeof spec);
            char a[64], b[64], c[64], d[64];
            data_format(got, ts.res, a, sizeof a);
            data_format((const char *)got + rs, ts.res, b, sizeof b);
            data_format(ref->value, ts.res, c, sizeof c);
            data_format(ref->value + rs, ts.res, d, sizeof d);
            snprintf(why, len, "%s over %llu %s: expected {%s, mean %s} (tolerances %.3g, %.3g), "
                     "got {%s, mean %s}", rt_op_name(op), n, spec, c, d, ref->tolerance,
                     ref->tolerance2, a, b);
        }
        return ok;
    }
    if (optype_is_float(ts.res))
        ok = check_float(got, ref->value, ts.res, ref->approx, ref->tolerance);
    else
        ok = memcmp(got, ref->value, optype_size(ts.res)) == 0;
    if (!ok && why) {
        optype_spec_text(op, type, spec, sizeof spec);
        char a[64], b[64];
        data_format(got, ts.res, a, sizeof a);
        data_format(ref->value, ts.res, b, sizeof b);
        snprintf(why, len, "%s over %llu %s: expected %s%s, got %s", rt_op_name(op), n, spec, b,
                 ref->tolerance > 0 ? " (within tolerance)" : "", a);
        if (ref->tolerance > 0) {
            size_t used = strlen(why);
            snprintf(why + used, len - used, " (tolerance %.3g)", ref->tolerance);
        }
    }
    return ok;
}

int data_check_user(const void *got, const void *want, rt_type type, double tol,
                    const char *name, unsigned long long n, char *why, size_t len)
{
    int ok;
    if (optype_is_float(type)) {
        long double g = data_load(got, type), w = data_load(want, type);
        if (isnan(g) || isnan(w))
            ok = isnan(g) && isnan(w);
        else if (isinf(g) || isinf(w))
            ok = g == w;
        else
            ok = g == w || fabsl(g - w) <= tol * fmaxl(fabsl(g), fabsl(w));
    } else {
        ok = memcmp(got, want, optype_size(type)) == 0;
    }
    if (!ok && why) {
        char a[64], b[64];
        data_format(got, type, a, sizeof a);
        data_format(want, type, b, sizeof b);
        snprintf(why, len, "%s over %llu %s: expected %s, got %s", name, n, rt_type_name(type),
                 b, a);
        if (optype_is_float(type) && tol > 0) {
            size_t used = strlen(why);
            snprintf(why + used, len - used, " (relative tolerance %.3g)", tol);
        }
    }
    return ok;
}

void data_identity(rt_type type, rt_op op, void *out)
{
    optype_empty_result(op, type, out);
}
