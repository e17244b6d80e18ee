/*
 * data.c - seeded test data, the CPU reference, and result checks.
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

uint64_t data_mix(uint64_t x)
{
    /* splitmix64's finaliser: a counter-based generator, so any chunk can be made alone. */
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* ---- float formats ---- */

/* Precision (bits, the implicit one included) and exponent range of a float type. */
typedef struct fmt {
    int p, emin, emax;
} fmt;

static fmt float_fmt(rt_type t)
{
    switch (t) {
    case RT_F16: return (fmt){11, -14, 15};
    case RT_BF16: return (fmt){8, -126, 127};
    case RT_F32: return (fmt){24, -126, 127};
    default: return (fmt){53, -1022, 1023};
    }
}

/* x rounded to nearest even in format f (infinity past the largest finite value). */
static long double round_to(long double x, fmt f)
{
    if (!isfinite(x) || x == 0)
        return x;
    int e;
    long double a = fabsl(x);
    frexpl(a, &e);   /* a = m 2^e, m in [0.5, 1): the leading bit is 2^(e-1) */
    int q = (e - 1 < f.emin ? f.emin : e - 1) - (f.p - 1);
    long double r = ldexpl(rintl(ldexpl(a, -q)), q);
    long double max = ldexpl(2.0L - ldexpl(1.0L, 1 - f.p), f.emax);
    if (r > max)
        r = INFINITY;
    return x < 0 ? -r : r;
}

static uint16_t f16_bits(long double x)
{
    /* x is already rounded to f16 */
    uint16_t s = signbit(x) ? 0x8000 : 0;
    long double a = fabsl(x);
    if (isnan(x))
        return 0x7e00;
    if (isinf(x))
        return s | 0x7c00;
    if (a < ldexpl(1.0L, -14))
        return s | (uint16_t)ldexpl(a, 24);
    int e;
    frexpl(a, &e);
    return s | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)(ldexpl(a, 11 - e) - 1024);
}

static long double f16_value(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    long double v = e == 0 ? ldexpl(m, -24)
                  : e == 31 ? (m ? NAN : INFINITY) : ldexpl(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

long double data_load(const void *v, rt_type type)
{
    switch (optype_elem(type)) {
    case RT_F32: { float f; memcpy(&f, v, 4); return f; }
    case RT_F64: { double f; memcpy(&f, v, 8); return f; }
    case RT_I32: { int32_t x; memcpy(&x, v, 4); return x; }
    case RT_U32: { uint32_t x; memcpy(&x, v, 4); return x; }
    case RT_I64: { int64_t x; memcpy(&x, v, 8); return x; }
    case RT_U64: { uint64_t x; memcpy(&x, v, 8); return x; }
    case RT_F16: { uint16_t h; memcpy(&h, v, 2); return f16_value(h); }
    case RT_BF16: {
        uint16_t h;
        memcpy(&h, v, 2);
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    case RT_I8: return *(const int8_t *)v;
    case RT_U8: return *(const uint8_t *)v;
    default: return 0;
    }
}

void data_store(void *v, rt_type type, long double x)
{
    rt_type t = optype_elem(type);
    switch (t) {
    case RT_F32: { float f = (float)x; memcpy(v, &f, 4); break; }
    case RT_F64: { double f = (double)x; memcpy(v, &f, 8); break; }
    case RT_I32: { int32_t y = (int32_t)x; memcpy(v, &y, 4); break; }
    case RT_U32: { uint32_t y = (uint32_t)x; memcpy(v, &y, 4); break; }
    case RT_I64: { int64_t y = (int64_t)x; memcpy(v, &y, 8); break; }
    case RT_U64: { uint64_t y = (uint64_t)x; memcpy(v, &y, 8); break; }
    case RT_F16: { uint16_t h = f16_bits(round_to(x, float_fmt(t))); memcpy(v, &h, 2); break; }
    case RT_BF16: {
        float f = (float)round_to(x, float_fmt(t));   /* exact: bf16 is inside f32 */
        uint32_t u;
        memcpy(&u, &f, 4);
        uint16_t h = isnan(f) ? 0x7fc0 : (uint16_t)(u >> 16);
        memcpy(v, &h, 2);
        break;
    }
    case RT_I8: *(int8_t *)v = (int8_t)x; break;
    case RT_U8: *(uint8_t *)v = (uint8_t)x; break;
    default: break;
    }
}

/* ---- generation ---- */

/* The planted extremes and the ranges the other values stay inside. */
#define I32_SPAN (1LL << 30)
#define I64_SPAN (1LL << 62)
#define U32_LO (1ULL << 20)
#define U64_LO (1ULL << 40)

static int ignores_nan(rt_op op)
{
    return op == RT_MIN || op == RT_MAX || op == RT_ARGMIN || op == RT_ARGMAX || op == RT_AMAX;
}

/* One NaN in about 4096 floats for the operators that ignore NaN. */
static int nan_here(rt_op op, uint64_t h, int planted)
{
    return !planted && ignores_nan(op) && (h >> 52) == 0;
}

/* The data the six original operators over the six 32/64-bit types always had. */
static void gen_classic(void *buf, rt_type t, rt_op op, unsigned long long i, uint64_t h, int planted)
{
    int is_max = op == RT_MAX;
    if (optype_is_arg(op)) {
        long long v = (long long)(h % 2001) - 1000;
        switch (t) {
        case RT_F32: ((float *)buf)[i] = nan_here(op, h, 0) ? NAN : (float)v; break;
        case RT_F64: ((double *)buf)[i] = nan_here(op, h, 0) ? NAN : (double)v; break;
        case RT_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
        case RT_U32: ((uint32_t *)buf)[i] = (uint32_t)(v + 1000); break;
        case RT_I64: ((int64_t *)buf)[i] = v; break;
        case RT_U64: ((uint64_t *)buf)[i] = (uint64_t)(v + 1000); break;
        default: break;
        }
        return;
    }
    switch (t) {
    case RT_F32: {
        float v;
        if (op == RT_MIN || op == RT_MAX)
            v = planted ? (is_max ? 2.0f : -2.0f)
                : nan_here(op, h, planted) ? NAN : (float)((h >> 40) * 0x1p-24 * 2.0 - 1.0);
        else if (op == RT_SUM)
            v = (float)((int)(h % 33) - 16);
        else
            v = (h & 1) ? -1.0f : 1.0f;
        ((float *)buf)[i] = v;
        break;
    }
    case RT_F64: {
        double v;
        if (op == RT_MIN || op == RT_MAX)
            v = planted ? (is_max ? 2.0 : -2.0)
                : nan_here(op, h, planted) ? NAN : (double)(h >> 11) * 0x1p-53 * 2.0 - 1.0;
        else if (op == RT_SUM)
            v = (double)((int)(h % 33) - 16);
        else
            v = (h & 1) ? -1.0 : 1.0;
        ((double *)buf)[i] = v;
        break;
    }
    case RT_I32: {
        int32_t v;
        if (op == RT_MIN || op == RT_MAX)
            v = planted ? (int32_t)(is_max ? I32_SPAN + 5 : -I32_SPAN - 5)
                        : (int32_t)((int64_t)(h % (2 * I32_SPAN)) - I32_SPAN);
        else
            v = (int32_t)(uint32_t)(op == RT_PROD ? (h | 1) : h);
        ((int32_t *)buf)[i] = v;
        break;
    }
    case RT_U32: {
        uint32_t v;
        if (op == RT_MIN || op == RT_MAX)
            v = planted ? (uint32_t)(is_max ? (1ULL << 31) + 2 * U32_LO : 7)
                        : (uint32_t)(U32_LO + h % (1ULL << 31));
        else
            v = (uint32_t)(op == RT_PROD ? (h | 1) : h);
        ((uint32_t *)buf)[i] = v;
        break;
    }
    case RT_I64: {
        int64_t v;
        if (op == RT_MIN || op == RT_MAX)
            v = planted ? (is_max ? I64_SPAN + 5 : -I64_SPAN - 5)
                        : (int64_t)(h % (2ULL * I64_SPAN)) - I64_SPAN;
        else
            v = (int64_t)(op == RT_PROD ? (h | 1) : h);
        ((int64_t *)buf)[i] = v;
        break;
    }
    case RT_U64: {
        uint64_t v;
        if (op == RT_MIN || op == RT_MAX)
            v = planted ? (is_max ? (1ULL << 63) + 2 * U64_LO : 7) : U64_LO + h % (1ULL << 63);
        else
            v = op == RT_PROD ? (h | 1) : h;
        ((uint64_t *)buf)[i] = v;
        break;
    }
    default:
        break;
    }
}

/* A random value in [-1, 1) of ~24 bits. */
static long double unit(uint64_t h) { return (long double)(h >> 40) * 0x1p-24L * 2 - 1; }

/* Everything else: the new types, and the new operators over every type. */
static void gen_wide(void *buf, rt_type t, rt_op op, unsigned long long i, uint64_t h, int planted)
{
    void *at = (char *)buf + i * optype_size(t);
    int fl = optype_is_float(t), sg = optype_is_signed(t);
    long double v = 0;
    if (optype_is_arg(op)) {
        if (fl && nan_here(op, h, 0))
            v = NAN;
        else if (t == RT_BF16)
            v = (long double)(h % 257) - 128;
        else if (t == RT_I8 || t == RT_U8)
            v = (long double)(h % 201) - (t == RT_I8 ? 100 : 0);
        else
            v = (long double)(h % 2001) - (sg ? 1000 : 0);
    } else if (op == RT_MIN || op == RT_MAX || op == RT_AMAX) {
        int hi = op != RT_MIN;
        if (fl)
            v = planted ? (op == RT_MAX ? 2 : -2) : nan_here(op, h, 0) ? NAN : unit(h);
        else if (t == RT_I8)
            v = planted ? (hi ? 120 : -120) : (long double)(h % 201) - 100;
        else if (t == RT_U8)
            v = planted ? (hi ? 250 : 3) : 10 + (long double)(h % 191);
        else {   /* only i8/u8 come here: the wide integers' min/max are classic */
            v = 0;
        }
    } else if (op == RT_PROD) {
        if (fl)
            v = (h & 1) ? -1 : 1;
        else
            v = sg ? (long double)(int8_t)(uint8_t)(h | 1) : (long double)(uint8_t)(h | 1);
    } else if (fl) {
        v = op == RT_SUMSQ || op == RT_NORM2 ? (long double)(h % 9) - 4 : (long double)(h % 33) - 16;
    } else {
        /* integer sums and means: full range (the store wraps) */
        switch (t) {
        case RT_I8: v = (int8_t)(uint8_t)h; break;
        case RT_U8: v = (uint8_t)h; break;
        case RT_I32: v = (int32_t)(uint32_t)h; break;
        case RT_U32: v = (uint32_t)h; break;
        case RT_I64: v = (int64_t)h; break;
        default: v = h; break;
        }
    }
    data_store(at, t, v);
}

static long double stress_value(rt_type t, rt_op op, int kind, unsigned long long i, uint64_t h,
                                uint64_t s, int all_nan)
{
    (void)op;
    long double sign = (h & 1) ? -1 : 1;
    switch (kind) {
    case DATA_STRESS_LARGE:
        if (t == RT_F16)
            return sign * (32768 + (long double)((h >> 8) % 32737));
        return sign * ldexpl(1 + (long double)(h >> 11) * 0x1p-53L, t == RT_F64 ? 400 : 50);
    case DATA_STRESS_SUBNORMAL: {
        long double k = (long double)((h >> 8) % 2001) - 1000;
        switch (t) {
        case RT_F16: return ldexpl(k, -24);   /* |k| < 1024: f16 subnormals */
        case RT_BF16: return ldexpl(k / 8, -133);   /* rounded to bf16's 7 fraction bits */
        case RT_F32: return ldexpl(k, -149);
        default: return ldexpl(k, -1074);
        }
    }
    case DATA_STRESS_NAN:
        return all_nan || (h >> 61) == 0 ? NAN : (long double)((h >> 8) % 33) - 16;
    case DATA_STRESS_ZEROS: {
        static const long double vals[5] = {0.0L, -0.0L, 1.0L, -1.0L, 0.5L};
        return vals[data_mix(s ^ (i >> 9)) % 5];
    }
    default: {   /* DATA_STRESS_MEANVAR */
        uint64_t k = (h >> 8) % 3;
        switch (t) {
        case RT_F16: return 1000 + 0.5L * k;
        case RT_BF16: return 10000 + 64.0L * k;
        case RT_F32: return 10000 + unit(h) * 0.017L;
        default: return 1e8L + unit(h) * 1e-4L;
        }
    }
    }
}

typedef struct job {
    void *buf;
    const void *cbuf;
    rt_type type;      /* the spec */
    rt_op op;
    unsigned long long lo, hi, plant;
    uint64_t seed;
    int kind;          /* -1: the plain data, else the stress kind */
    int all_nan;
    optype_ts ts;
    /* reference partials */
    long double sum, comp, abs_sum, maxabs;
    int lsb;            /* least exponent of a set bit among the float terms (INT_MAX: none) */
    int nan, pinf, ninf;
    __int128 isum;      /* integer mean: the exact sum */
    uint64_t bits;      /* integer sum/product, or min/max bits */
    double fext;        /* float min/max */
    long double lext;   /* min/max/amax of the new types, as a number */
    int seen;           /* float min/max: a non-NaN element was seen (else the result is NaN) */
    int64_t iext;
    uint64_t uext;
    /* argmin/argmax: the best element so far (index -1: none; nan: only NaN seen) */
    long long best;
    long double bestv;
    int best_nan;
    /* var/std_mean's second pass */
    int pass2;
    long double mean, m2;
} job;

static int classic(rt_type t, rt_op op)
{
    return t <= RT_U64 && op <= RT_ARGMAX;
}

static void *fill_range(void *arg)
{
    job *j = arg;
    uint64_t s = data_mix(j->seed);
    rt_type t = optype_elem(j->type);
    int extreme = j->op == RT_MIN || j->op == RT_MAX || j->op == RT_AMAX;
    if (j->kind >= 0) {
        size_t es = optype_size(t);
        for (unsigned long long i = j->lo; i < j->hi; i++)
            data_store((char *)j->buf + i * es, t,
                       stress_value(t, j->op, j->kind, i, data_mix(s ^ i), s, j->all_nan));
        return NULL;
    }
    for (unsigned long long i = j->lo; i < j->hi; i++) {
        if (classic(t, j->op))
            gen_classic(j->buf, t, j->op, i, data_mix(s ^ i), extreme && i == j->plant);
        else
            gen_wide(j->buf, t, j->op, i, data_mix(s ^ i), extreme && i == j->plant);
    }
    return NULL;
}

/* The least exponent of a set bit of x (x finite, nonzero). */
static int low_bit(long double x)
{
    int e;
    long double m = frexpl(fabsl(x), &e);
    uint64_t k = (uint64_t)ldexpl(m, 64);
    int tz = 0;
    while (!(k & 1)) {
        k >>= 1;
        tz++;
    }
    return e - 64 + tz;
}

/* Neumaier's compensated addition into (*s, *c). */
static void add_comp(long double *s, long double *c, long double y)
{
    long double t = *s + y;
    if (fabsl(*s) >= fabsl(y))
        *c += (*s - t) + y;
    else
        *c += (y - t) + *s;
    *s = t;
}

/* The term an element contributes to a float accumulation, as the kernel forms it in the
 * accumulator type 'a' (x*x rounded there). */
static long double term(rt_op op, rt_type a, long double x)
{
    if (op == RT_ASUM)
        return fabsl(x);
    if (op == RT_SUMSQ || op == RT_NORM2) {
        if (a == RT_F32) {
            float f = (float)x;
            return f * f;
        }
        double d = (double)x;
        return d * d;
    }
    return x;
}

static int is_var(rt_op op)
{
    return op == RT_VAR_MEAN || op == RT_VAR_MEAN_SAMPLE || op == RT_STD_MEAN ||
           op == RT_STD_MEAN_SAMPLE;
}

/* The classic reduction (unchanged arithmetic for the six original operators and types). */
static void classic_range(job *j)
{
    rt_type t = optype_elem(j->type);
    rt_op op = j->op;
    int fl = optype_is_float(t);
    int width = (int)optype_size(t) * 8;
    uint64_t mask = width == 64 ? ~0ULL : (1ULL << width) - 1;
    for (unsigned long long i = j->lo; i < j->hi; i++) {
        long double fv = 0;
        int64_t iv = 0;
        uint64_t uv = 0;
        switch (t) {
        case RT_F32: fv = ((const float *)j->cbuf)[i]; break;
        case RT_F64: fv = ((const double *)j->cbuf)[i]; break;
        case RT_I32: iv = ((const int32_t *)j->cbuf)[i]; uv = (uint32_t)iv; break;
        case RT_U32: uv = ((const uint32_t *)j->cbuf)[i]; iv = (int64_t)uv; break;
        case RT_I64: iv = ((const int64_t *)j->cbuf)[i]; uv = (uint64_t)iv; break;
        case RT_U64: uv = ((const uint64_t *)j->cbuf)[i]; iv = (int64_t)uv; break;
        default: break;
        }
        if (fl) {
            if (op == RT_SUM) {
                add_comp(&j->sum, &j->comp, fv);
                j->abs_sum += fabsl(fv);
                if (fv != 0 && isfinite(fv)) {
                    int b = low_bit(fv);
                    if (b < j->lsb)
                        j->lsb = b;
                }
                j->nan |= isnan(fv);
            } else if (op == RT_PROD) {
                j->bits ^= fv < 0;   /* the data are +-1: track the sign */
            } else if (!isnan(fv)) {
                j->seen = 1;
                if (op == RT_MIN ? (double)fv < j->fext : (double)fv > j->fext)
                    j->fext = (double)fv;
            }
        } else if (op == RT_SUM) {
            j->bits = (j->bits + uv) & mask;
        } else if (op == RT_PROD) {
            j->bits = (j->bits * uv) & mask;
        } else if (optype_is_signed(t)) {
            if (op == RT_MIN ? iv < j->iext : iv > j->iext)
                j->iext = iv;
        } else if (op == RT_MIN ? uv < j->uext : uv > j->uext) {
            j->uext = uv;
        }
    }
}

static void *reduce_range(void *arg)
{
    job *j = arg;
    rt_type t = optype_elem(j->type);
    rt_op op = j->op;
    int fl = optype_is_float(t);
    size_t es = optype_size(t);
    if (optype_is_arg(op)) {
        for (unsigned long long i = j->lo; i < j->hi; i++) {
            long double v = data_load((const char *)j->cbuf + i * es, t);
            int isnan_v = fl && isnan(v);
            /* (NaN last, value, index): indices only grow here, so ties keep the first */
            int better = j->best < 0 || (j->best_nan && !isnan_v) ||
                         (!j->best_nan && !isnan_v && (op == RT_ARGMIN ? v < j->bestv : v > j->bestv));
            if (better) {
                j->best = (long long)i;
                j->bestv = v;
                j->best_nan = isnan_v;
            }
        }
        return NULL;
    }
    if (classic(t, op) && j->ts.canon == t) {
        classic_range(j);
        return NULL;
    }
    rt_type a = j->ts.acc;
    int width = optype_is_float(a) ? 64 : (int)optype_size(a) * 8;
    uint64_t mask = width == 64 ? ~0ULL : (1ULL << width) - 1;
    for (unsigned long long i = j->lo; i < j->hi; i++) {
        long double x = data_load((const char *)j->cbuf + i * es, t);
        if (op == RT_MIN || op == RT_MAX || op == RT_AMAX) {
            long double y = op == RT_AMAX ? fabsl(x) : x;
            if (!isnan(y) && (!j->seen || (op == RT_MIN ? y < j->lext : y > j->lext))) {
                j->seen = 1;
                j->lext = y;
            }
            continue;
        }
        if (j->pass2) {   /* var/std_mean: the squared deviations from the mean */
            long double d = x - j->mean;
            j->m2 += d * d;
            continue;
        }
        if (!fl || !optype_is_float(a)) {
            /* integer elements: sums and products wrap in the accumulator, means are exact */
            uint64_t u = !optype_is_signed(t) || x >= 0 ? (uint64_t)x : (uint64_t)(int64_t)x;
            if (op == RT_PROD)
                j->bits = (j->bits * u) & mask;
            else
                j->bits = (j->bits + u) & mask;
            j->isum += optype_is_signed(t) ? (__int128)(int64_t)u : (__int128)u;
            j->abs_sum += fabsl(x);
            if (fabsl(x) > j->maxabs)
                j->maxabs = fabsl(x);
            continue;
        }
        if (op == RT_PROD) {
            j->bits ^= x < 0;
            continue;
        }
        long double y = term(op, a, x);
        if (isnan(y)) {
            j->nan = 1;
            continue;
        }
        if (isinf(y)) {
            j->pinf |= y > 0;
            j->ninf |= y < 0;
            continue;
        }
        add_comp(&j->sum, &j->comp, y);
        j->abs_sum += fabsl(y);
        if (fabsl(x) > j->maxabs)
            j->maxabs = fabsl(x);
        if (y != 0) {
            int b = low_bit(y);
            if (b < j->lsb)
                j->lsb = b;
        }
    }
    return NULL;
}

#define MAX_THREADS 64

static int run_jobs(job *jobs, int threads, unsigned long long n, void *(*fn)(void *))
{
    if (threads < 1)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if ((unsigned long long)threads > n / 65536 + 1)
        threads = (int)(n / 65536 + 1);
    for (int k = 0; k < threads; k++) {
        jobs[k] = jobs[0];
        jobs[k].lo = n * (unsigned long long)k / (unsigned long long)threads;
        jobs[k].hi = n * (unsigned long long)(k + 1) / (unsigned long long)threads;
    }
    pthread_t tid[MAX_THREADS];
    int started = 0;
    for (int k = 1; k < threads; k++, started++)
        if (pthread_create(&tid[k], NULL, fn, &jobs[k]) != 0)
            break;
    fn(&jobs[0]);
    for (int k = started + 1; k < threads; k++)   /* threads that failed to start: run here */
        fn(&jobs[k]);
    for (int k = 1; k <= started; k++)
        pthread_join(tid[k], NULL);
    return threads;
}

static void fill(void *buf, rt_type type, rt_op op, unsigned long long n, uint64_t seed,
                 unsigned long long plant, int kind, int threads)
{
    job jobs[MAX_THREADS];
    memset(&jobs[0], 0, sizeof jobs[0]);
    jobs[0].buf = buf;
    jobs[0].type = type;
    jobs[0].op = op;
    jobs[0].seed = seed;
    jobs[0].plant = n ? plant % n : 0;
    jobs[0].kind = kind;
    jobs[0].all_nan = (data_mix(seed ^ 0xa11a11) & 3) == 0;
    run_jobs(jobs, threads, n, fill_range);
}

void data_fill(void *buf, rt_type type, rt_op op, unsigned long long n, uint64_t seed,
               unsigned long long plant, int threads)
{
    fill(buf, type, op, n, seed, plant, -1, threads);
}

void data_fill_stress(void *buf, rt_type type, rt_op op, unsigned long long n, uint64_t seed,
                      int kind, int threads)
{
    int k = optype_is_float(type) && op != RT_PROD && kind >= 0 && kind < DATA_STRESS_KINDS;
    fill(buf, type, op, n, seed, seed, k ? kind : -1, threads);
}

const char *data_stress_name(int kind)
{
    static const char *const names[DATA_STRESS_KINDS] = {"large", "subnormal", "nan", "zeros",
                                                         "meanvar"};
    return kind >= 0 && kind < DATA_STRESS_KINDS ? names[kind] : "plain";
}

/* ---- the reference ---- */

static int depth(unsigned long long n)
{
    int d = (int)ceill(log2l((long double)n));
    return d < 1 ? 1 : d;
}

static long double unit_roundoff(rt_type t) { return ldexpl(1.0L, -float_fmt(t).p); }

/* Add the rounding of a result narrower than the accumulator to a bound. */
static double narrow(const optype_ts *ts, long double v, long double tol)
{
    if (tol > 0 && optype_is_float(ts->res) && optype_size(ts->res) < optype_size(ts->acc))
        tol += unit_roundoff(ts->res) * (fabsl(v) + tol);
    return (double)tol;
}

static void merge(job *jobs, int k, job *m)
{
    *m = jobs[0];
    m->sum = m->comp = 0;
    add_comp(&m->sum, &m->comp, jobs[0].sum + jobs[0].comp);
    for (int i = 1; i < k; i++) {
        const job *x = &jobs[i];
        rt_op op = m->op;
        add_comp(&m->sum, &m->comp, x->sum + x->comp);
        m->abs_sum += x->abs_sum;
        m->maxabs = fmaxl(m->maxabs, x->maxabs);
        m->lsb = x->lsb < m->lsb ? x->lsb : m->lsb;
        m->nan |= x->nan;
        m->pinf |= x->pinf;
        m->ninf |= x->ninf;
        m->isum += x->isum;
        m->m2 += x->m2;
        if (optype_is_float(m->ts.elem) && op == RT_PROD)
            m->bits ^= x->bits;
        else if (op == RT_PROD)
            m->bits *= x->bits;
        else
            m->bits += x->bits;
        if (op == RT_MIN ? x->fext < m->fext : x->fext > m->fext)
            m->fext = x->fext;
        if (op == RT_MIN ? x->iext < m->iext : x->iext > m->iext)
            m->iext = x->iext;
        if (op == RT_MIN ? x->uext < m->uext : x->uext > m->uext)
            m->uext = x->uext;
        if (x->seen && (!m->seen || (op == RT_MIN ? x->lext < m->lext : x->lext > m->lext)))
            m->lext = x->lext;
        m->seen |= x->seen;
    }
}

/* The float accumulations: sum, asum, sumsq, norm2, mean over float elements, and mean of
 * 64-bit integers (in f64). */
static void float_sum_ref(const job *m, unsigned long long n, data_ref *ref)
{
    const optype_ts *ts = &m->ts;
    rt_op op = m->op;
    int p = float_fmt(ts->acc).p;
    long double u = unit_roundoff(ts->acc), v, tol;
    long double t = m->sum + m->comp, s = m->abs_sum;
    ref->abs_sum = s;
    if (m->nan || (m->pinf && m->ninf)) {
        v = NAN;
        tol = 0;
    } else if (m->pinf || m->ninf) {
        v = m->pinf ? INFINITY : -INFINITY;
        tol = 0;
    } else {
        int exact = m->lsb == INT_MAX || s <= ldexpl(1.0L, p + m->lsb);
        long double tol_s = exact ? 0 : depth(n) * u * s;
        if (op == RT_NORM2) {
            v = sqrtl(t);
            tol = (t > 0 ? tol_s / (2 * v) : sqrtl(tol_s)) + 2 * u * v;
        } else if (op == RT_MEAN) {
            /* the quotient's rounding: relative, or half the least subnormal */
            long double den = ldexpl(1.0L, ts->acc == RT_F32 ? -149 : -1074);
            v = t / (long double)n;
            tol = tol_s / (long double)n + 2 * u * fabsl(v) + den;
        } else {
            v = t;
            tol = tol_s;
        }
    }
    data_store(ref->value, ts->res, v);
    ref->approx = v;
    ref->tolerance = narrow(ts, v, tol);
}

static void var_ref(job *jobs, int threads, const job *m, unsigned long long n, data_ref *ref)
{
    const optype_ts *ts = &m->ts;
    rt_op op = m->op;
    int ddof = op == RT_VAR_MEAN_SAMPLE || op == RT_STD_MEAN_SAMPLE;
    int sd = op == RT_STD_MEAN || op == RT_STD_MEAN_SAMPLE;
    size_t rs = optype_size(ts->res);
    long double mean = (m->sum + m->comp) / (long double)n, v = NAN, tol = 0, tol_m = 0;
    if (m->nan || m->pinf || m->ninf) {
        mean = NAN;
    } else {
        /* the second pass: M2 about the mean */
        jobs[0].pass2 = 1;
        jobs[0].mean = mean;
        jobs[0].m2 = 0;
        int k = run_jobs(jobs, threads, n, reduce_range);
        long double m2 = 0;
        for (int i = 0; i < k; i++)
            m2 += jobs[i].m2;
        long double u = unit_roundoff(ts->acc);
        long double den = ldexpl(1.0L, ts->acc == RT_F32 ? -149 : -1074);
        int d = depth(n) + 1;
        long double e = d * u * m->maxabs + d * den;
        tol_m = e + u * fabsl(mean);
        if (n > (unsigned long long)ddof) {
            long double var = m2 / (long double)(n - ddof), sdev = sqrtl(m2 / (long double)n);
            long double tv = (2 * d * u * var + 4 * d * e * (sdev + e)) * (long double)n /
                                 (long double)(n - ddof) + 4 * d * den;
            if (sd) {
                v = sqrtl(var);
                tol = fminl(sqrtl(tv), v > 0 ? tv / v : INFINITY) + 2 * u * v;
            } else {
                v = var;
                tol = tv;
            }
        }
    }
    data_store(ref->value, ts->res, v);
    data_store(ref->value + rs, ts->res, mean);
    ref->approx = v;
    ref->approx2 = mean;
    ref->abs_sum = m->abs_sum;
    ref->tolerance = isnan(v) ? 0 : narrow(ts, v, tol);
    ref->tolerance2 = isnan(mean) ? 0 : narrow(ts, mean, tol_m);
}

void data_reference(const void *buf, rt_type type, rt_op op, unsigned long long n,
                    data_ref *ref, int threads)
{
    job jobs[MAX_THREADS];
    memset(&jobs[0], 0, sizeof jobs[0]);
    memset(ref, 0, sizeof *ref);
    optype_ts ts;
    if (optype_resolve(op, type, &ts, NULL, 0))
        return;
    rt_type t = ts.elem;
    int fl = optype_is_float(t);
    if (n == 0) {
        data_identity(type, op, ref->value);
        ref->approx = optype_is_arg(op) ? data_load(ref->value, t) : data_load(ref->value, ts.res);
        if (is_var(op))
            ref->approx2 = data_load(ref->value + optype_size(ts.res), ts.res);
        return;
    }
    job *j = &jobs[0];
    j->cbuf = buf;
    j->type = type;
    j->op = op;
    j->ts = ts;
    j->lsb = INT_MAX;
    j->bits = op == RT_PROD && !fl ? 1 : 0;   /* float products track the sign parity */
    j->fext = op == RT_MIN ? INFINITY : -INFINITY;
    j->iext = op == RT_MIN ? INT64_MAX : INT64_MIN;
    j->uext = op == RT_MIN ? UINT64_MAX : 0;
    j->best = -1;
    int k = run_jobs(jobs, threads, n, reduce_range);
    if (optype_is_arg(op)) {
        /* The chunks are in index order: a later chunk wins only when strictly better. */
        int b = 0;
        for (int i = 1; i < k; i++) {
            const job *x = &jobs[i], *y = &jobs[b];
            if (x->best < 0)
                continue;
            if (y->best < 0 || (y->best_nan && !x->best_nan) ||
                (!y->best_nan && !x->best_nan &&
                 (op == RT_ARGMIN ? x->bestv < y->bestv : x->bestv > y->bestv)))
                b = i;
        }
        long long idx = jobs[b].best;
        size_t es = optype_size(t);
        memcpy(ref->value, (const char *)buf + (size_t)idx * es, es);
        memcpy(ref->value + 8, &idx, 8);
        ref->approx = jobs[b].bestv;
        return;
    }
    job m;
    merge(jobs, k, &m);
    int classic_minmax = classic(t, op) && (op == RT_MIN || op == RT_MAX);
    if (classic_minmax && fl) {
        /* min/max ignore NaN unless every element is NaN (n >= 1 here) */
        long double v = m.seen ? (long double)m.fext : NAN;
        data_store(ref->value, t, v);
        ref->approx = v;
    } else if (classic_minmax) {
        int64_t iv = m.iext;
        uint64_t uv = m.uext;
        if (optype_is_signed(t))
            memcpy(ref->value, &iv, optype_size(t));   /* little-endian: the low bytes */
        else
            memcpy(ref->value, &uv, optype_size(t));
        ref->approx = optype_is_signed(t) ? (long double)iv : (long double)uv;
    } else if (op == RT_MIN || op == RT_MAX || op == RT_AMAX) {
        long double v = m.seen ? m.lext : NAN;
        data_store(ref->value, t, v);
        ref->approx = v;
    } else if (is_var(op)) {
        var_ref(jobs, threads, &m, n, ref);
    } else if (op == RT_PROD && fl) {
        long double v = m.bits & 1 ? -1.0L : 1.0L;
        data_store(ref->value, ts.res, v);
        ref->approx = v;
    } else if (fl || (op == RT_MEAN && optype_is_float(ts.acc))) {
        if (!fl) {   /* mean of i64/u64 in f64: integers, exact while small */
            m.lsb = 0;
            m.sum = (long double)m.isum;
            m.comp = 0;
        }
        float_sum_ref(&m, n, ref);
    } else if (op == RT_MEAN) {
        /* integers in i64/u64: the exact sum, then an f64 quotient */
        long double v = (long double)m.isum / (long double)n;
        data_store(ref->value, ts.res, v);
        ref->approx = v;
        ref->tolerance = (double)(2 * unit_roundoff(RT_F64) * fabsl(v));
    } else {
        /* integer sums and products wrap in the accumulator; the result's low bytes */
        int width = (int)optype_size(ts.acc) * 8;
        uint64_t bits = m.bits & (width == 64 ? ~0ULL : (1ULL << width) - 1);
        memcpy(ref->value, &bits, optype_size(ts.res));
        ref->approx = data_load(ref->value, ts.res);
    }
}

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
    char spec[96];
    if (optype_resolve(op, type, &ts, why, len))
        return 0;
    optype_spec_text(op, type, spec, sizeof spec);
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
            char a[64], b[64];
            data_format(got, ts.elem, a, sizeof a);
            data_format(ref->value, ts.elem, b, sizeof b);
            snprintf(why, len, "%s over %llu %s: expected %s at index %lld, got %s at index %lld",
                     rt_op_name(op), n, spec, b, wi, a, gi);
        }
        return ok;
    }
    if (is_var(op)) {
        size_t rs = optype_size(ts.res);
        ok = check_float(got, ref->value, ts.res, ref->approx, ref->tolerance) &&
             check_float((const char *)got + rs, ref->value + rs, ts.res, ref->approx2,
                         ref->tolerance2);
        if (!ok && why) {
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
