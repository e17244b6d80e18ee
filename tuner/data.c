/*
 * data.c - seeded test data, the CPU reference, and result checks.
 */
#include <inttypes.h>
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

/* The planted extremes and the ranges the other values stay inside. */
#define I32_SPAN (1LL << 30)
#define I64_SPAN (1LL << 62)
#define U32_LO (1ULL << 20)
#define U64_LO (1ULL << 40)

/* One NaN in about 4096 floats for the operators that ignore NaN. */
static int nan_here(rt_op op, uint64_t h, int planted)
{
    return !planted && op != RT_SUM && op != RT_PROD && (h >> 52) == 0;
}

static void gen_one(void *buf, rt_type t, rt_op op, unsigned long long i, uint64_t h, int planted)
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

typedef struct job {
    void *buf;
    const void *cbuf;
    rt_type type;
    rt_op op;
    unsigned long long lo, hi, plant;
    uint64_t seed;
    /* reference partials */
    long double sum, abs_sum;
    uint64_t bits;      /* integer sum/product, or min/max bits */
    double fext;        /* float min/max */
    int seen;           /* float min/max: a non-NaN element was seen (else the result is NaN) */
    int64_t iext;
    uint64_t uext;
    /* argmin/argmax: the best element so far (index -1: none; nan: only NaN seen) */
    long long best;
    long double bestv;
    int best_nan;
} job;

static void *fill_range(void *arg)
{
    job *j = arg;
    uint64_t s = data_mix(j->seed);
    int extreme = j->op == RT_MIN || j->op == RT_MAX;
    for (unsigned long long i = j->lo; i < j->hi; i++)
        gen_one(j->buf, j->type, j->op, i, data_mix(s ^ i), extreme && i == j->plant);
    return NULL;
}

static void *reduce_range(void *arg)
{
    job *j = arg;
    rt_type t = j->type;
    rt_op op = j->op;
    int fl = optype_is_float(t);
    int width = (int)optype_size(t) * 8;
    uint64_t mask = width == 64 ? ~0ULL : (1ULL << width) - 1;
    j->sum = 0;
    j->abs_sum = 0;
    j->bits = op == RT_PROD && !fl ? 1 : 0;   /* float products track the sign parity */
    j->fext = op == RT_MIN ? INFINITY : -INFINITY;
    j->iext = op == RT_MIN ? INT64_MAX : INT64_MIN;
    j->uext = op == RT_MIN ? UINT64_MAX : 0;
    j->best = -1;
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
        if (optype_is_arg(op)) {
            long double v = fl ? fv : optype_is_signed(t) ? (long double)iv : (long double)uv;
            int isnan_v = fl && isnan(fv);
            /* (NaN last, value, index): indices only grow here, so ties keep the first */
            int better = j->best < 0 || (j->best_nan && !isnan_v) ||
                         (!j->best_nan && !isnan_v && (op == RT_ARGMIN ? v < j->bestv : v > j->bestv));
            if (better) {
                j->best = (long long)i;
                j->bestv = v;
                j->best_nan = isnan_v;
            }
            continue;
        }
        if (fl) {
            if (op == RT_SUM) {
                j->sum += fv;
                j->abs_sum += fabsl(fv);
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

void data_fill(void *buf, rt_type type, rt_op op, unsigned long long n, uint64_t seed,
               unsigned long long plant, int threads)
{
    job jobs[MAX_THREADS];
    memset(&jobs[0], 0, sizeof jobs[0]);
    jobs[0].buf = buf;
    jobs[0].type = type;
    jobs[0].op = op;
    jobs[0].seed = seed;
    jobs[0].plant = n ? plant % n : 0;
    run_jobs(jobs, threads, n, fill_range);
}

static void store_value(rt_type t, void *out, long double f, uint64_t bits)
{
    switch (t) {
    case RT_F32: { float v = (float)f; memcpy(out, &v, 4); break; }
    case RT_F64: { double v = (double)f; memcpy(out, &v, 8); break; }
    case RT_I32: case RT_U32: { uint32_t v = (uint32_t)bits; memcpy(out, &v, 4); break; }
    default: memcpy(out, &bits, 8); break;
    }
}

void data_reference(const void *buf, rt_type type, rt_op op, unsigned long long n,
                    data_ref *ref, int threads)
{
    job jobs[MAX_THREADS];
    memset(&jobs[0], 0, sizeof jobs[0]);
    memset(ref, 0, sizeof *ref);
    jobs[0].cbuf = buf;
    jobs[0].type = type;
    jobs[0].op = op;
    int k = run_jobs(jobs, threads, n, reduce_range);
    int fl = optype_is_float(type);
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
        size_t es = optype_size(type);
        memcpy(ref->value, (const char *)buf + (size_t)idx * es, es);
        memcpy(ref->value + 8, &idx, 8);
        ref->approx = jobs[b].bestv;
        return;
    }
    int width = (int)optype_size(type) * 8;
    uint64_t mask = width == 64 ? ~0ULL : (1ULL << width) - 1;
    long double sum = 0, abs_sum = 0;
    uint64_t bits = op == RT_PROD ? (fl ? 0 : 1) : 0;
    double fext = jobs[0].fext;
    int seen = 0;
    int64_t iext = jobs[0].iext;
    uint64_t uext = jobs[0].uext;
    for (int i = 0; i < k; i++) {
        sum += jobs[i].sum;
        abs_sum += jobs[i].abs_sum;
        if (op == RT_SUM)
            bits = (bits + jobs[i].bits) & mask;
        else if (op == RT_PROD)
            bits = fl ? bits ^ jobs[i].bits : (bits * jobs[i].bits) & mask;
        if (op == RT_MIN ? jobs[i].fext < fext : jobs[i].fext > fext)
            fext = jobs[i].fext;
        seen |= jobs[i].seen;
        if (op == RT_MIN ? jobs[i].iext < iext : jobs[i].iext > iext)
            iext = jobs[i].iext;
        if (op == RT_MIN ? jobs[i].uext < uext : jobs[i].uext > uext)
            uext = jobs[i].uext;
    }
    if (fl) {
        /* min/max ignore NaN unless every element is NaN (n >= 1 here: n = 0 is the identity) */
        if ((op == RT_MIN || op == RT_MAX) && !seen)
            fext = NAN;
        long double v = op == RT_SUM ? sum : op == RT_PROD ? (bits ? -1.0L : 1.0L) : (long double)fext;
        store_value(type, ref->value, v, 0);
        ref->approx = v;
        ref->abs_sum = abs_sum;
        if (op == RT_SUM) {
            /* Integer data: every partial sum is exact while the magnitudes stay below
             * 2^mantissa, whatever the order; past that, allow log2(n) roundings of the
             * largest possible partial sum. */
            int digits = type == RT_F32 ? 24 : 53;
            if (abs_sum >= ldexpl(1.0L, digits))
                ref->tolerance = (double)(ceill(log2l((long double)n)) * ldexpl(abs_sum, -digits));
        }
    } else {
        uint64_t v = op == RT_MIN || op == RT_MAX
                         ? (optype_is_signed(type) ? (uint64_t)iext : uext)
                         : bits;
        store_value(type, ref->value, 0, v & mask);
        ref->approx = optype_is_signed(type) && (op == RT_MIN || op == RT_MAX)
                          ? (long double)iext
                          : (long double)(v & mask);
    }
}

void data_format(const void *v, rt_type type, char *buf, size_t len)
{
    switch (type) {
    case RT_F32: { float f; memcpy(&f, v, 4); snprintf(buf, len, "%.9g", f); break; }
    case RT_F64: { double f; memcpy(&f, v, 8); snprintf(buf, len, "%.17g", f); break; }
    case RT_I32: { int32_t x; memcpy(&x, v, 4); snprintf(buf, len, "%" PRId32, x); break; }
    case RT_U32: { uint32_t x; memcpy(&x, v, 4); snprintf(buf, len, "%" PRIu32, x); break; }
    case RT_I64: { int64_t x; memcpy(&x, v, 8); snprintf(buf, len, "%" PRId64, x); break; }
    case RT_U64: { uint64_t x; memcpy(&x, v, 8); snprintf(buf, len, "%" PRIu64, x); break; }
    default: snprintf(buf, len, "?"); break;
    }
}

/* Two float values of 'type' (f32 or f64) as doubles. */
static void float_pair(const void *x, const void *y, rt_type type, double *a, double *b)
{
    if (type == RT_F32) {
        float fx, fy;
        memcpy(&fx, x, 4);
        memcpy(&fy, y, 4);
        *a = fx;
        *b = fy;
    } else {
        memcpy(a, x, 8);
        memcpy(b, y, 8);
    }
}

int data_check(const void *got, const data_ref *ref, rt_type type, rt_op op,
               unsigned long long n, char *why, size_t len)
{
    int ok;
    if (optype_is_arg(op)) {
        long long gi, wi;
        memcpy(&gi, (const char *)got + 8, 8);
        memcpy(&wi, ref->value + 8, 8);
        ok = gi == wi;
        if (ok && optype_is_float(type)) {
            double g, w;
            float_pair(got, ref->value, type, &g, &w);
            ok = g == w || (isnan(g) && isnan(w));
        } else if (ok) {
            ok = memcmp(got, ref->value, optype_size(type)) == 0;
        }
        if (!ok && why) {
            char a[64], b[64];
            data_format(got, type, a, sizeof a);
            data_format(ref->value, type, b, sizeof b);
            snprintf(why, len, "%s over %llu %s: expected %s at index %lld, got %s at index %lld",
                     rt_op_name(op), n, rt_type_name(type), b, wi, a, gi);
        }
        return ok;
    }
    if (optype_is_float(type)) {
        double g, want;
        float_pair(got, ref->value, type, &g, &want);
        double diff = fabs(g - (op == RT_SUM ? (double)ref->approx : want));
        if (isnan(want))   /* min/max of elements that are all NaN */
            ok = isnan(g);
        else
            ok = !isnan(g) && (ref->tolerance > 0 ? diff <= ref->tolerance : g == want);
    } else {
        ok = memcmp(got, ref->value, optype_size(type)) == 0;
    }
    if (!ok && why) {
        char a[64], b[64];
        data_format(got, type, a, sizeof a);
        data_format(ref->value, type, b, sizeof b);
        snprintf(why, len, "%s over %llu %s: expected %s%s, got %s", rt_op_name(op), n,
                 rt_type_name(type), b, ref->tolerance > 0 ? " (within tolerance)" : "", a);
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
        double g, w;
        float_pair(got, want, type, &g, &w);
        if (isnan(g) || isnan(w))
            ok = isnan(g) && isnan(w);
        else if (isinf(g) || isinf(w))
            ok = g == w;
        else
            ok = g == w || fabs(g - w) <= tol * fmax(fabs(g), fabs(w));
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
    if (optype_is_arg(op)) {
        long long none = -1;
        memset(out, 0, 16);
        data_identity(type, op == RT_ARGMIN ? RT_MIN : RT_MAX, out);
        memcpy((char *)out + 8, &none, 8);
        return;
    }
    long double f = op == RT_SUM ? 0 : op == RT_PROD ? 1 : op == RT_MIN ? INFINITY : -INFINITY;
    uint64_t bits;
    int width = (int)optype_size(type) * 8;
    switch (op) {
    case RT_SUM: bits = 0; break;
    case RT_PROD: bits = 1; break;
    case RT_MIN:
        bits = optype_is_signed(type) ? (width == 64 ? (uint64_t)INT64_MAX : (uint64_t)INT32_MAX)
                                      : ~0ULL;
        break;
    default:
        bits = optype_is_signed(type) ? (width == 64 ? (uint64_t)INT64_MIN : (uint64_t)(uint32_t)INT32_MIN)
                                      : 0;
        break;
    }
    store_value(type, out, f, bits);
}
