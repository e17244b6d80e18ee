/*
 * typeref.h - what the GPU tests of the new types (test_gpu.c, test_gpu_seg.c) share: f16 and
 * bf16 on the host, test data with the awkward values (near f16's largest, subnormal halves,
 * NaN, +-0), and a CPU reference in double with the tolerance each operator is held to.
 *
 * Tolerances (docs/types.md): a float accumulator of n values (f32 for f16/bf16) is held to
 *     |got - ref| <= n * 2^-23 * sum |x|      (sum; sumsq and norm2 likewise over x^2)
 * which is loose (the pairwise trees of the kernels do far better) but needs no knowledge of
 * the tree; mean divides that by n; var_mean is compared with a two-pass f64 variance within
 *     |var_got - var_ref| <= n * 2^-23 * (var_ref + mean_ref^2) (+ the same for the mean),
 * the bound of a sum of squares about the mean, again loose. Integers and min, max, amax,
 * argmin, argmax are exact (their result is one of the elements, or an exact integer sum).
 */
#ifndef RT_TESTS_TYPEREF_H
#define RT_TESTS_TYPEREF_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "include/redtune.h"
#include "runtime/optype.h"

static inline float tr_bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint32_t tr_float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* bf16 is the top half of an f32. */
static inline float tr_bf16_to_f32(uint16_t h) { return tr_bits_float((uint32_t)h << 16); }

/* Round to nearest even; NaN stays a (quiet) NaN. */
static inline uint16_t tr_f32_to_bf16(float f)
{
    uint32_t u = tr_float_bits(f);
    if (f != f)
        return (uint16_t)((u >> 16) | 0x40);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

/* IEEE binary16: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits. */
static inline float tr_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0x1f)
        return tr_bits_float(sign | 0x7f800000u | (m << 13));        /* inf, NaN */
    if (e == 0) {
        float v = (float)m * 0x1p-24f;                               /* subnormal or 0 */
        return sign ? -v : v;
    }
    return tr_bits_float(sign | ((e + 112) << 23) | (m << 13));
}

/* Round to nearest even, through double (exact for every f32). */
static inline uint16_t tr_f32_to_f16(float f)
{
    uint16_t sign = (uint16_t)(tr_float_bits(f) >> 16 & 0x8000);
    double a = fabs((double)f);
    if (f != f)
        return 0x7e00;
    if (a >= 65520.0)                                                /* rounds to inf */
        return sign | 0x7c00;
    if (a < 0x1p-14) {                                               /* subnormal range */
        double q = a * 0x1p24;                                       /* in units of 2^-24 */
        return sign | (uint16_t)nearbyint(q);                        /* may round to 0x400 */
    }
    int e;
    double fr = frexp(a, &e);                                        /* a = fr * 2^e, fr in [0.5, 1) */
    double q = nearbyint(fr * 2048.0);                               /* 11 significant bits */
    if (q == 2048.0) {
        q = 1024.0;
        e++;
    }
    if (e - 1 + 15 >= 31)
        return sign | 0x7c00;
    return sign | (uint16_t)(((e - 1 + 15) << 10) | ((unsigned)q - 1024));
}

/* Element i of 'p' (type t) as a double. */
static inline double tr_elem(rt_type t, const void *p, unsigned long long i)
{
    const unsigned char *b = (const unsigned char *)p;
    switch (t) {
    case RT_F16: { uint16_t h; memcpy(&h, b + 2 * i, 2); return tr_f16_to_f32(h); }
    case RT_BF16: { uint16_t h; memcpy(&h, b + 2 * i, 2); return tr_bf16_to_f32(h); }
    case RT_I8: return (double)((const int8_t *)p)[i];
    case RT_U8: return (double)((const uint8_t *)p)[i];
    case RT_F32: { float f; memcpy(&f, b + 4 * i, 4); return f; }
    case RT_F64: { double d; memcpy(&d, b + 8 * i, 8); return d; }
    default: return NAN;
    }
}

/* A scalar of type t at p as a double (the result's scalars). */
static inline double tr_scalar(rt_type t, const void *p)
{
    switch (t) {
    case RT_I32: { int32_t x; memcpy(&x, p, 4); return x; }
    case RT_U32: { uint32_t x; memcpy(&x, p, 4); return x; }
    case RT_I64: { int64_t x; memcpy(&x, p, 8); return (double)x; }
    case RT_U64: { uint64_t x; memcpy(&x, p, 8); return (double)x; }
    default: return tr_elem(t, p, 0);
    }
}

/* Store v (exactly representable, or rounded) as element i of type t. */
static inline void tr_put(rt_type t, void *p, unsigned long long i, double v)
{
    unsigned char *b = (unsigned char *)p;
    switch (t) {
    case RT_F16: { uint16_t h = tr_f32_to_f16((float)v); memcpy(b + 2 * i, &h, 2); break; }
    case RT_BF16: { uint16_t h = tr_f32_to_bf16((float)v); memcpy(b + 2 * i, &h, 2); break; }
    case RT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case RT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    default: break;
    }
}

/* Data kinds: TR_PLAIN small exact values (k/8 for halves, the whole range for bytes);
 * TR_BIG f16 values near 65504; TR_SUBNORMAL halves below the least normal; TR_NAN plain
 * with NaN sprinkled in (a third of them at most); TR_ALL_NAN; TR_ZEROS +0 and -0 only. */
enum { TR_PLAIN, TR_BIG, TR_SUBNORMAL, TR_NAN, TR_ALL_NAN, TR_ZEROS };

static inline void tr_fill(rt_type t, int kind, void *p, unsigned long long n, unsigned seed)
{
    unsigned long long x = 0x9e3779b97f4a7c15ull ^ seed;
    for (unsigned long long i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        unsigned r = (unsigned)(x >> 33);
        uint16_t h;
        switch (kind) {
        case TR_BIG:
            tr_put(t, p, i, r % 2 ? 65504.0 : 60000.0 + 32 * (r % 64));
            break;
        case TR_SUBNORMAL:
            h = (uint16_t)(1 + r % (t == RT_F16 ? 0x3ff : 0x7f));    /* exponent 0 */
            if (r & 0x100000)
                h |= 0x8000;
            memcpy((char *)p + 2 * i, &h, 2);
            break;
        case TR_ALL_NAN:
            h = t == RT_F16 ? 0x7e00 : 0x7fc0;
            memcpy((char *)p + 2 * i, &h, 2);
            break;
        case TR_ZEROS:
            h = r % 2 ? 0x8000 : 0;
            memcpy((char *)p + 2 * i, &h, 2);
            break;
        default:
            if (t == RT_I8)
                tr_put(t, p, i, (double)((int)(r % 256) - 128));
            else if (t == RT_U8)
                tr_put(t, p, i, (double)(r % 256));
            else if (kind == TR_NAN && r % 7 == 0)
                tr_put(t, p, i, NAN);
            else
                tr_put(t, p, i, ((int)(r % 129) - 64) / 8.0);        /* exact in f16 and bf16 */
            break;
        }
    }
}

/* Whether two results of (op, spec) are the same values, NaN equal to NaN (the kernels'
 * NaN of 0 / 0 is not the host's bit pattern). */
static inline int tr_same(rt_op op, rt_type spec, const unsigned char *a, const unsigned char *b)
{
    optype_ts ts;
    optype_resolve(op, spec, &ts, NULL, 0);
    size_t rs = optype_res_size(op, spec), k = optype_is_arg(op) ? 1 : rs / optype_size(ts.res);
    rt_type t = optype_is_arg(op) ? ts.elem : ts.res;
    if (optype_is_arg(op) && rs == 8)   /* RT_RESULT_INDEX: the index alone */
        return !memcmp(a, b, 8);
    for (size_t i = 0; i < k; i++) {
        double x = tr_scalar(t, a + i * optype_size(t)), y = tr_scalar(t, b + i * optype_size(t));
        if (!(x == y || (x != x && y != y)))
            return 0;
    }
    return !optype_is_arg(op) || !memcmp(a + 8, b + 8, 8);
}

/* Check got[0 .. optype_res_size(op, t)) for n elements of in[], the first of which has index
 * 'base' in the whole input; 1 when right, else 0 with 'why'. n == 0: the bytes of
 * optype_empty_result ('strict', what the host writes), or the same values (an empty
 * segment, which a kernel finalizes). */
static inline int tr_check(rt_op op, rt_type spec, const void *in, unsigned long long n,
                           unsigned long long base, int strict, const unsigned char *got,
                           char *why, size_t len)
{
    optype_ts ts;
    if (optype_resolve(op, spec, &ts, NULL, 0))
        return snprintf(why, len, "spec does not resolve"), 0;
    rt_type t = ts.elem;
    size_t rs = optype_res_size(op, spec);
    if (n == 0) {
        unsigned char want[32];
        optype_empty_result(op, spec, want);
        if (strict ? memcmp(got, want, rs) != 0 : !tr_same(op, spec, got, want))
            return snprintf(why, len, "n = 0: not the empty input's result"), 0;
        return 1;
    }
    double s = 0, sa = 0, sq = 0, best = NAN, eps = ts.acc == RT_F64 ? 0x1p-52 : 0x1p-23;
    long long bi = -1, nn = 0;
    for (unsigned long long i = 0; i < n; i++) {
        double v = tr_elem(t, in, i);
        if (v != v)
            continue;
        nn++;
        s += v;
        sa += fabs(v);
        sq += v * v;
        double key = op == RT_AMAX ? fabs(v) : v;
        int better = op == RT_MIN || op == RT_ARGMIN ? key < best : key > best;
        if (bi < 0 || better) {
            best = key;
            bi = (long long)i;
        }
    }
    double fn = (double)n, g = tr_scalar(ts.res, got);
    switch (op) {
    case RT_SUM: {
        double tol = fn * eps * sa;
        if (!optype_is_float(t) ? g != s : !(fabs(g - s) <= tol))
            return snprintf(why, len, "sum: got %.17g, want %.17g (tolerance %.3g)", g, s, tol), 0;
        return 1;
    }
    case RT_SUMSQ: case RT_NORM2: {
        double want = op == RT_NORM2 ? sqrt(sq) : sq, tol = fn * eps * want + 1e-300;
        if (!(fabs(g - want) <= tol))
            return snprintf(why, len, "%s: got %.17g, want %.17g", rt_op_name(op), g, want), 0;
        return 1;
    }
    case RT_MEAN: {
        double want = s / fn, tol = optype_is_float(t) ? (fn + 2) * eps * sa / fn
                                                       : 1e-15 * fabs(want) + 1e-300;
        if (!(fabs(g - want) <= tol))
            return snprintf(why, len, "mean: got %.17g, want %.17g", g, want), 0;
        return 1;
    }
    case RT_VAR_MEAN: case RT_VAR_MEAN_SAMPLE: case RT_STD_MEAN: case RT_STD_MEAN_SAMPLE: {
        int ddof = op == RT_VAR_MEAN_SAMPLE || op == RT_STD_MEAN_SAMPLE;
        int sd = op == RT_STD_MEAN || op == RT_STD_MEAN_SAMPLE;
        double m = s / fn, q = 0;
        for (unsigned long long i = 0; i < n; i++) {
            double d = tr_elem(t, in, i) - m;
            q += d * d;
        }
        double var = fn > ddof ? q / (fn - ddof) : NAN, want = sd ? sqrt(var) : var;
        double gm = tr_scalar(ts.res, got + rs / 2);
        double tol = fn * eps * (var + m * m) + 1e-300;
        if (sd)
            tol = sqrt(tol);   /* |sqrt(a) - sqrt(b)| <= sqrt(|a - b|) */
        if (var != var ? g == g : !(fabs(g - want) <= tol))
            return snprintf(why, len, "%s: variance part got %.17g, want %.17g", rt_op_name(op),
                            g, want), 0;
        if (!(fabs(gm - m) <= (fn + 2) * eps * sa / fn + 1e-300))
            return snprintf(why, len, "%s: mean part got %.17g, want %.17g", rt_op_name(op), gm,
                            m), 0;
        return 1;
    }
    case RT_MIN: case RT_MAX: case RT_AMAX:
        if (nn == 0 ? g == g : g != best)
            return snprintf(why, len, "%s: got %.17g, want %.17g", rt_op_name(op), g,
                            nn ? best : NAN), 0;
        return 1;
    case RT_ARGMIN: case RT_ARGMAX: {
        long long idx;
        size_t es = optype_size(t);
        if (rs == 8) {   /* RT_RESULT_INDEX: the index alone (all NaN: the first NaN's) */
            memcpy(&idx, got, 8);
            if (idx != (long long)base + (nn == 0 ? 0 : bi))
                return snprintf(why, len, "%s (index result): got index %lld, want %lld",
                                rt_op_name(op), idx, (long long)base + (nn == 0 ? 0 : bi)), 0;
            return 1;
        }
        memcpy(&idx, got + 8, 8);
        if (nn == 0) {   /* all NaN: the first NaN (its payload may change) */
            if (idx != (long long)base || tr_elem(t, got, 0) == tr_elem(t, got, 0))
                return snprintf(why, len, "%s of NaN only: got index %lld, want %llu and NaN",
                                rt_op_name(op), idx, base), 0;
            return 1;
        }
        if (idx != (long long)base + bi || memcmp(got, (const char *)in + es * (size_t)bi, es))
            return snprintf(why, len, "%s: got index %lld, want %lld (or the value's bits differ)",
                            rt_op_name(op), idx, (long long)base + bi), 0;
        return 1;
    }
    default:
        return snprintf(why, len, "no reference for %s", rt_op_name(op)), 0;
    }
}

#endif
