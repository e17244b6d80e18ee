/*
 * everyn_sizes.h - the sizes of redtune_bench --every-n (docs/bench.md, "Every n"): every
 * power of two up to the largest size, and random sizes drawn log-uniformly from
 * [1, largest] by a seeded generator, so that a run can be repeated size for size. Plain C:
 * the CPU tests (tests/test_bench_everyn.c) check it.
 */
#ifndef BENCH_EVERYN_SIZES_H
#define BENCH_EVERYN_SIZES_H

#include <stdint.h>

#define BENCH_EVERYN_MAX_LOG2 34        /* --max-n is at most 2^34 */
#define BENCH_EVERYN_MAX_RANDOM 10000   /* --random is at most this */
/* The most sizes bench_everyn_sizes writes: every power of two and every random size. */
#define BENCH_EVERYN_MAX_SIZES (BENCH_EVERYN_MAX_LOG2 + 1 + BENCH_EVERYN_MAX_RANDOM)

/*
 * Draw up to k distinct sizes in [1, max_n] that are not powers of two, log-uniformly
 * (log2 n uniform in [0, log2(max_n + 1))), from 'seed' (splitmix64), into out[0..), sorted
 * ascending; returns how many. A draw that repeats a size or hits a power of two is drawn
 * again, a bounded number of times: fewer than k come back only when [1, max_n] holds fewer
 * such sizes (or nearly all of them are wanted). The same (max_n, k, seed) gives the same
 * sizes. k <= 0 or max_n < 1: none.
 */
int bench_everyn_random(long long max_n, int k, uint64_t seed, long long *out);

/*
 * Every power of two 2^0 .. 2^floor(log2 max_n) merged with rnd[0..nrnd) (sizes that are not
 * powers of two, as bench_everyn_random draws them), sorted ascending without repeats, into
 * out (room for BENCH_EVERYN_MAX_SIZES); returns how many.
 */
int bench_everyn_sizes(long long max_n, const long long *rnd, int nrnd, long long *out);

#endif
