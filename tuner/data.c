/*
 * data.c - seeded test data: float formats, the generators (plain and stress inputs), the
 * threaded fill. The CPU reference is data_ref.c, the checks data_check.c.
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

uint64_t data_mix(uint64_t x)
{
    /* splitmix64's finaliser: a counter-based generator, so any chunk can be made alone. */
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* ---- float formats ---- */

fmt data_float_fmt(rt_type t)
{
    switch (t) {
    case RT_F16: return (fmt){11, -14, 15};
    case RT_BF16: return (fmt){8, -126, 127};
    case RT_F32: return (fmt){24, -126, 127};
    default: return (fmt){53, -1022, 1023};
    }
}

/* x rounded to nearest even in format f (infinity past the largest finite value). */
long double data_round_to(long double x, fmt f)
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
    /* every f16 is a float: its bits made directly (no ldexpl: the references load each
     * element through this) */
    uint32_t e = (h >> 10) & 31, m = h & 1023, u;
    float f;
    if (e == 0) {
        f = (float)m * 0x1p-24f;   /* exact: m < 1024 */
        return (h & 0x8000) ? -(long double)f : f;
    }
    u = e == 31 ? (m ? 0x7fc00000u : 0x7f800000u) : (e + 112) << 23 | m << 13;
    memcpy(&f, &u, 4);
    return (h & 0x8000) ? -(long double)f : f;
}

uint16_t data_half_bits(long double x, rt_type t)
{
    if (t == RT_F16)
        return f16_bits(data_round_to(x, data_float_fmt(t)));
    float f = (float)data_round_to(x, data_float_fmt(t));   /* exact: bf16 is inside f32 */
    uint32_t u;
    memcpy(&u, &f, 4);
    return isnan(f) ? 0x7fc0 : (uint16_t)(u >> 16);
}

/* x rounded into f16 or bf16 bits (*bits) without long double arithmetic, where x is a finite
 * float or an infinity and, for bf16, not below the smallest normal float: the same bits as
 * data_round_to and f16_bits give, at a tenth of the cost (16-bit fills of 2^24 elements took
 * a second). 0: not one of those, the caller rounds the slow way. */
static int half_bits_fast(long double x, rt_type t, uint16_t *bits)
{
    float f = (float)x;
    if ((long double)f != x)   /* not a float (or NaN) */
        return 0;
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t s = (uint16_t)(u >> 16 & 0x8000);
    uint32_t a = u & 0x7fffffffu;
    int e = (int)(a >> 23) - 127;   /* a = 1.m 2^e for a normal float */
    if (a == 0x7f800000u) {
        *bits = s | (t == RT_F16 ? 0x7c00 : 0x7f80);
        return 1;
    }
    if (t == RT_BF16) {
        if (e < -120)   /* zero, a subnormal, or 2^(7 - e) would not be a float: the slow way */
            return 0;
        /* 8 significant bits: m in [128, 256], 256 carrying into the exponent (to infinity
         * past the largest finite value, as data_round_to) */
        uint32_t sc = (uint32_t)(127 + 7 - e) << 23, v;
        float scale;
        memcpy(&scale, &sc, 4);
        uint32_t m = (uint32_t)rintf(fabsf(f) * scale);
        v = ((uint32_t)(e + 127) << 23) + ((m - 128) << 16);
        *bits = s | (uint16_t)(v >> 16);
        return 1;
    }
    float af = fabsf(f);
    if (af >= 65520.0f) {   /* rounds past 65504: infinity */
        *bits = s | 0x7c00;
        return 1;
    }
    if (af < 0x1p-14f) {    /* a subnormal f16 (or 2^-14 when it rounds up), or zero */
        *bits = s | (uint16_t)rintf(af * 0x1p24f);
        return 1;
    }
    /* 11 significant bits: m in [1024, 2048], 2048 carrying into the exponent */
    uint32_t sc = (uint32_t)(127 + 10 - e) << 23;
    float scale;
    memcpy(&scale, &sc, 4);
    uint32_t m = (uint32_t)rintf(af * scale);
    *bits = s | (uint16_t)(((uint32_t)(e + 15) << 10) + (m - 1024));
    return 1;
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
    case RT_F16:
    case RT_BF16: {
        uint16_t h;
        if (!half_bits_fast(x, t, &h))
            h = data_half_bits(x, t);
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

int data_ignores_nan(rt_op op)
{
    return op == RT_MIN || op == RT_MAX || op == RT_ARGMIN || op == RT_ARGMAX || op == RT_AMAX;
}

/* One NaN in about 4096 floats for the operators that ignore NaN. */
static int nan_here(rt_op op, uint64_t h, int planted)
{
    return !planted && data_ignores_nan(op) && (h >> 52) == 0;
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


int data_classic(rt_type t, rt_op op)
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
        if (data_classic(t, j->op))
            gen_classic(j->buf, t, j->op, i, data_mix(s ^ i), extreme && i == j->plant);
        else
            gen_wide(j->buf, t, j->op, i, data_mix(s ^ i), extreme && i == j->plant);
    }
    return NULL;
}


int data_run_jobs(job *jobs, int threads, unsigned long long n, void *(*fn)(void *))
{
    if (threads < 1)
        threads = 1;
    if (threads > DATA_MAX_THREADS)
        threads = DATA_MAX_THREADS;
    if ((unsigned long long)threads > n / 65536 + 1)
        threads = (int)(n / 65536 + 1);
    for (int k = 0; k < threads; k++) {
        jobs[k] = jobs[0];
        jobs[k].lo = n * (unsigned long long)k / (unsigned long long)threads;
        jobs[k].hi = n * (unsigned long long)(k + 1) / (unsigned long long)threads;
    }
    pthread_t tid[DATA_MAX_THREADS];
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
    job jobs[DATA_MAX_THREADS];
    memset(&jobs[0], 0, sizeof jobs[0]);
    jobs[0].buf = buf;
    jobs[0].type = type;
    jobs[0].op = op;
    jobs[0].seed = seed;
    jobs[0].plant = n ? plant % n : 0;
    jobs[0].kind = kind;
    jobs[0].all_nan = (data_mix(seed ^ 0xa11a11) & 3) == 0;
    data_run_jobs(jobs, threads, n, fill_range);
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

