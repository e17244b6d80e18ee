/*
 * data_ref.c - the CPU reference of a reduction over data.c's inputs: exact where the
 * arithmetic allows (integers, min/max, compensated float sums with their rounding bound),
 * per thread and merged; var/std_mean from two passes.
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

/* The least exponent of a set bit of x (x finite, nonzero). Where long double is x87's
 * 80-bit format (64-bit mantissa with its integer bit, 15-bit biased exponent) it is read off
 * the bits: frexpl and ldexpl per element took 40% of a sum's reference, which every
 * candidate's verification computes on ~1.5M fresh elements. */
static int low_bit(long double x)
{
#if defined(__x86_64__) && LDBL_MANT_DIG == 64
    unsigned char b[sizeof x];
    uint64_t mant;
    uint16_t se;
    memcpy(b, &x, sizeof x);
    memcpy(&mant, b, 8);
    memcpy(&se, b + 8, 2);
    int ex = se & 0x7fff;
    return (ex ? ex : 1) - 16383 - 63 + __builtin_ctzll(mant);
#else
    int e;
    long double m = frexpl(fabsl(x), &e);
    uint64_t k = (uint64_t)ldexpl(m, 64);   /* nonzero: m is in [0.5, 1) */
    return e - 64 + __builtin_ctzll(k);
#endif
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

int data_is_var(rt_op op)
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
    long double sum = j->sum, comp = j->comp, abs_sum = j->abs_sum;   /* see reduce_range */
    int lsb = j->lsb;
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
                add_comp(&sum, &comp, fv);
                abs_sum += fabsl(fv);
                if (fv != 0 && isfinite(fv)) {
                    int b = low_bit(fv);
                    if (b < lsb)
                        lsb = b;
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
    j->sum = sum;
    j->comp = comp;
    j->abs_sum = abs_sum;
    j->lsb = lsb;
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
    if (data_classic(t, op) && j->ts.canon == t) {
        classic_range(j);
        return NULL;
    }
    rt_type a = j->ts.acc;
    int width = optype_is_float(a) ? 64 : (int)optype_size(a) * 8;
    uint64_t mask = width == 64 ? ~0ULL : (1ULL << width) - 1;
    /* The sums in locals, stored back after the loop: through j the compiler kept every
     * long double in memory (half a sum's reference time). */
    long double sum = j->sum, comp = j->comp, abs_sum = j->abs_sum, maxabs = j->maxabs;
    int lsb = j->lsb;
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
            abs_sum += fabsl(x);
            if (fabsl(x) > maxabs)
                maxabs = fabsl(x);
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
        add_comp(&sum, &comp, y);
        abs_sum += fabsl(y);
        if (fabsl(x) > maxabs)
            maxabs = fabsl(x);
        if (y != 0) {
            int b = low_bit(y);
            if (b < lsb)
                lsb = b;
        }
    }
    j->sum = sum;
    j->comp = comp;
    j->abs_sum = abs_sum;
    j->maxabs = maxabs;
    j->lsb = lsb;
    return NULL;
}

/* ---- the reference ---- */

static int depth(unsigned long long n)
{
    int d = (int)ceill(log2l((long double)n));
    return d < 1 ? 1 : d;
}

static long double unit_roundoff(rt_type t) { return ldexpl(1.0L, -data_float_fmt(t).p); }

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
    int p = data_float_fmt(ts->acc).p;
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
        int k = data_run_jobs(jobs, threads, n, reduce_range);
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
    job jobs[DATA_MAX_THREADS];
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
        if (data_is_var(op))
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
    int k = data_run_jobs(jobs, threads, n, reduce_range);
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
    int classic_minmax = data_classic(t, op) && (op == RT_MIN || op == RT_MAX);
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
    } else if (data_is_var(op)) {
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

