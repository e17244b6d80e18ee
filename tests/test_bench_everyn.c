/*
 * test_bench_everyn.c - redtune_bench --every-n: the sizes (bench/everyn.c: every power of
 * two, the seeded log-uniform random sizes, sorted, without repeats, within bounds) and the
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "bench/everyn.h"

static int is_pow2(long long n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

static void random_sizes_bounded_sorted_distinct(void **state)
{
    (void)state;
    static long long r[BENCH_EVERYN_MAX_RANDOM];
    /* 17 holds 12 sizes that are not powers of two: all of them come back. */
    const long long maxes[] = {1LL << 31, 3000, 100, 1LL << 34, 17};
    const int counts[] = {16, 16, 16, 16, 12};
    for (size_t m = 0; m < sizeof maxes / sizeof *maxes; m++)
        for (uint64_t seed = 0; seed < 20; seed++) {
            int got = bench_everyn_random(maxes[m], 16, seed, r);
            assert_int_equal(got, counts[m]);
            for (int i = 0; i < got; i++) {
                assert_true(r[i] >= 1 && r[i] <= maxes[m]);
                assert_false(is_pow2(r[i]));
                if (i)
                    assert_true(r[i - 1] < r[i]);
            }
        }
}

static void random_sizes_seeded(void **state)
{
    (void)state;
    long long a[16], b[16], c[16];
    assert_int_equal(bench_everyn_random(1LL << 31, 16, 1, a), 16);
    assert_int_equal(bench_everyn_random(1LL << 31, 16, 1, b), 16);
    assert_memory_equal(a, b, sizeof a);
    assert_int_equal(bench_everyn_random(1LL << 31, 16, 2, c), 16);
    assert_memory_not_equal(a, c, sizeof a);
}

/* log2 n is uniform, the powers of two drawn again: of 16 sizes from each of 250 seeds in
 * [1, 2^31], about 7.8/28.8 lie below 2^10 (the powers take about 2.2 of the 31 octaves'
 * width, most of it there: 1 takes [0, 1), 2 takes [1, 1.58)), 10/28.8 at or above 2^21 and
 * 1/28.8 in the top octave (a uniform draw would put half there). */
static void random_sizes_log_uniform(void **state)
{
    (void)state;
    long long r[16];
    int low = 0, high = 0, top = 0;
    for (uint64_t seed = 0; seed < 250; seed++) {
        assert_int_equal(bench_everyn_random(1LL << 31, 16, seed, r), 16);
        for (int i = 0; i < 16; i++) {
            low += r[i] < (1LL << 10);
            high += r[i] >= (1LL << 21);
            top += r[i] >= (1LL << 30);
        }
    }
    if (low < 950 || low > 1200 || high < 1250 || high > 1550 || top < 90 || top > 190)
        fail_msg("of 4000 sizes, %d below 2^10, %d at or above 2^21, %d at or above 2^30", low,
                 high, top);
}

/* A range with fewer candidates than asked gives all of them; none, nothing. */
static void random_sizes_small_ranges(void **state)
{
    (void)state;
    long long r[64];
    assert_int_equal(bench_everyn_random(7, 16, 1, r), 4);
    const long long want[] = {3, 5, 6, 7};
    assert_memory_equal(r, want, sizeof want);
    assert_int_equal(bench_everyn_random(1, 16, 1, r), 0);
    assert_int_equal(bench_everyn_random(2, 16, 1, r), 0);
    assert_int_equal(bench_everyn_random(1LL << 31, 0, 1, r), 0);
    assert_int_equal(bench_everyn_random(0, 16, 1, r), 0);
}

static void sizes_powers_and_random(void **state)
{
    (void)state;
    static long long rnd[BENCH_EVERYN_MAX_RANDOM], all[BENCH_EVERYN_MAX_SIZES];
    /* Every power of two 2^0 .. 2^31, then the random ones among them. */
    int m = bench_everyn_sizes(1LL << 31, NULL, 0, all);
    assert_int_equal(m, 32);
    for (int k = 0; k < 32; k++)
        assert_int_equal(all[k], 1LL << k);
    int nr = bench_everyn_random(1LL << 31, 16, 1, rnd);
    m = bench_everyn_sizes(1LL << 31, rnd, nr, all);
    assert_int_equal(m, 48);
    int pows = 0;
    for (int i = 0; i < m; i++) {
        pows += is_pow2(all[i]);
        if (i)
            assert_true(all[i - 1] < all[i]);
    }
    assert_int_equal(pows, 32);
    /* A largest size that is no power of two: the powers below it; 2^34 at the top. */
    assert_int_equal(bench_everyn_sizes(3000, NULL, 0, all), 12);
    assert_int_equal(all[11], 2048);
    assert_int_equal(bench_everyn_sizes(1LL << 34, NULL, 0, all), 35);
    assert_int_equal(all[34], 1LL << 34);
    /* Repeats and sizes out of range are dropped. */
    const long long odd[] = {5, 5, 3, 9000, 0};
    assert_int_equal(bench_everyn_sizes(8, odd, 5, all), 6);
    const long long want[] = {1, 2, 3, 4, 5, 8};
    assert_memory_equal(all, want, sizeof want);
    /* The most there can be. */
    nr = bench_everyn_random(1LL << 34, BENCH_EVERYN_MAX_RANDOM, 3, rnd);
    assert_int_equal(nr, BENCH_EVERYN_MAX_RANDOM);
    assert_int_equal(bench_everyn_sizes(1LL << 34, rnd, nr, all), BENCH_EVERYN_MAX_SIZES);
}

int test_bench_everyn_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_sizes_bounded_sorted_distinct),
        cmocka_unit_test(random_sizes_seeded),
        cmocka_unit_test(random_sizes_log_uniform),
        cmocka_unit_test(random_sizes_small_ranges),
        cmocka_unit_test(sizes_powers_and_random),
    };
    return cmocka_run_group_tests_name("bench_everyn", tests, NULL, NULL);
}
