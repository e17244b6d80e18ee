/*
 * everyn_sizes.c - the sizes of redtune_bench --every-n (everyn_sizes.h).
 */
#include "everyn_sizes.h"

#include <math.h>
#include <stdlib.h>

/* splitmix64: the sizes are a function of the seed alone. */
static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int is_pow2(long long n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static int log2_floor(long long n)
{
    return 63 - __builtin_clzll((unsigned long long)n);
}

int bench_everyn_random(long long max_n, int k, uint64_t seed, long long *out)
{
    if (max_n < 1 || k <= 0)
        return 0;
    if (k > BENCH_EVERYN_MAX_RANDOM)
        k = BENCH_EVERYN_MAX_RANDOM;
    /* Sizes in [1, max_n] that are not powers of two: never ask for more. */
    long long avail = max_n - (log2_floor(max_n) + 1);
    if (avail < k)
        k = (int)avail;
    double span = log2((double)max_n + 1.0);
    uint64_t s = seed;
    int got = 0;
    /* Redraws are bounded so that a k close to avail ends; the bound depends only on k. */
    for (long tries = 0; got < k && tries < 64L * k + 4096; tries++) {
        double u = (double)(next(&s) >> 11) * 0x1p-53;   /* [0, 1) */
        long long n = (long long)exp2(u * span);
        if (n < 1)
            n = 1;
        if (n > max_n)
            n = max_n;
        if (is_pow2(n))
            continue;
        int dup = 0;
        for (int i = 0; i < got && !dup; i++)
            dup = out[i] == n;
        if (!dup)
            out[got++] = n;
    }
    qsort(out, (size_t)got, sizeof *out, cmp_ll);
    return got;
}

int bench_everyn_sizes(long long max_n, const long long *rnd, int nrnd, long long *out)
{
    int m = 0;
    if (max_n >= 1)
        for (int k = 0; k <= log2_floor(max_n) && k <= BENCH_EVERYN_MAX_LOG2; k++)
            out[m++] = 1LL << k;
    for (int i = 0; i < nrnd && i < BENCH_EVERYN_MAX_RANDOM; i++)
        if (rnd[i] >= 1 && rnd[i] <= max_n)
            out[m++] = rnd[i];
    qsort(out, (size_t)m, sizeof *out, cmp_ll);
    int w = 0;
    for (int i = 0; i < m; i++)
        if (!w || out[i] != out[w - 1])
            out[w++] = out[i];
    return w;
}
