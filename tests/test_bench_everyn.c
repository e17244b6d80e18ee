/*
 * test_bench_everyn.c - redtune_bench --every-n: the sizes (bench/everyn_sizes.c: every
 * power of two, the seeded log-uniform random sizes, sorted, without repeats, within
 * bounds), the prefix rule of its inputs (tuner/data.c) and the mode's usage errors, with
 * their exact text. The usage errors need build/bench/redtune_bench (`ninja bench`, nvcc; no
 * GPU: the options are checked before the GPU is touched) and skip when it is not built.
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

#include "bench/everyn_sizes.h"
#include "include/redtune.h"
#include "tuner/data.h"

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

/* bench/everyn.cu's inputs are prefixes of one array: data_fill's array for n must be the
 * first n elements of the array of nmax + 1 (planted at nmax) with min's and max's planted
 * extreme moved to seed % n. */
static void data_prefixes(void **state)
{
    (void)state;
    const unsigned long long nmax = 20000;
    const uint64_t seed = 0x1234567890abcdefULL;
    const unsigned long long ns[] = {1, 2, 3, 1000, 4099, nmax};
    const rt_op ops[] = {RT_MIN, RT_MAX, RT_SUM};
    const rt_type types[] = {RT_F32, RT_F64, RT_I32, RT_U32, RT_I64, RT_U64};
    static unsigned char big[(20000 + 1) * 8], one[20000 * 8];
    for (size_t o = 0; o < 3; o++)
        for (size_t t = 0; t < 6; t++) {
            size_t es = types[t] == RT_F64 || types[t] == RT_I64 || types[t] == RT_U64 ? 8 : 4;
            data_fill(big, types[t], ops[o], nmax + 1, seed, nmax, 2);
            for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
                unsigned long long n = ns[k], q = seed % n;
                unsigned char saved[8];
                int extreme = ops[o] != RT_SUM;
                if (extreme) {
                    memcpy(saved, big + q * es, es);
                    memcpy(big + q * es, big + nmax * es, es);
                }
                data_fill(one, types[t], ops[o], n, seed, q, 2);
                if (memcmp(one, big, n * es))
                    fail_msg("%s %s n = %llu: not the prefix", rt_op_name(ops[o]),
                             rt_type_name(types[t]), n);
                if (extreme)
                    memcpy(big + q * es, saved, es);
            }
        }
}

/* ---- usage errors of build/bench/redtune_bench ---- */

static const char BENCH[] = "build/bench/redtune_bench";
static char out[1 << 16];

/* Run the bench with 'args', stdout and stderr into 'out'; the exit status. */
static int run_bench(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", BENCH, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Exit status 2 and exactly this message, then the --help hint. */
#define USAGE(args, text)                                                                \
    do {                                                                                 \
        const char *want_ = "redtune_bench: " text "\n(redtune_bench --help for the options)\n"; \
        int rc_ = run_bench(args);                                                       \
        if (rc_ != 2 || strcmp(out, want_))                                              \
            print_error("redtune_bench %s -> %d:\n%s\n", (args), rc_, out);              \
        assert_int_equal(rc_, 2);                                                        \
        assert_string_equal(out, want_);                                                 \
    } while (0)

static void everyn_usage_errors(void **state)
{
    (void)state;
    if (access(BENCH, X_OK) != 0) {
        print_message("%s is not built (ninja bench): usage errors not checked\n", BENCH);
        skip();
    }
    USAGE("--db x.db --every-n --sizes 1K", "--every-n makes its own sizes (--max-n, --random, "
          "--seed): not with --sizes");
    USAGE("--db x.db --sizes 1K --every-n", "--every-n makes its own sizes (--max-n, --random, "
          "--seed): not with --sizes");
    USAGE("--db x.db --every-n --segmented keys", "--every-n is a mode of its own: not with "
          "--segmented");
    USAGE("--db x.db --every-n --axis", "--every-n is a mode of its own: not with --axis");
    USAGE("--db x.db --every-n --shapes 1,2,3", "--every-n is a mode of its own: not with "
          "--shapes");
    USAGE("--db x.db --every-n --api", "--every-n is a mode of its own: not with --api");
    USAGE("--db x.db --every-n --type-cases --max-n 2^32", "--every-n with --type-cases goes "
          "up to --max-n 2^31 (CUB's 32-bit counts), not 4294967296");
    USAGE("--db x.db --type-cases --every-n --sizes 1K", "--every-n makes its own sizes "
          "(--max-n, --random, --seed): not with --sizes");
    USAGE("--every-n --paper-seg", "--every-n is a mode of its own: not with --paper-seg");
    USAGE("--db x.db --every-n --profiles one", "--every-n is a mode of its own: not with "
          "--profiles");
    USAGE("--db x.db --every-n --paper-m 16", "--every-n is a mode of its own: not with "
          "--paper-m");
    USAGE("--db x.db --every-n --paper-config 'seg_matrix H=32'", "--every-n is a mode of its "
          "own: not with --paper-config");
    USAGE("--db x.db --random 4", "--random goes with --every-n");
    USAGE("--db x.db --max-n 2^20", "--max-n goes with --every-n");
    USAGE("--db x.db --every-n --random -1", "--random wants a count in 0..10000, not '-1'");
    USAGE("--db x.db --every-n --random 10001", "--random wants a count in 0..10000, not '10001'");
    USAGE("--db x.db --every-n --random 4x", "--random wants a count in 0..10000, not '4x'");
    USAGE("--db x.db --every-n --random", "--random wants a value");
    USAGE("--db x.db --every-n --max-n 0", "--max-n wants a size in 1..2^34 (1000, 2^20, 4M), "
          "not '0'");
    USAGE("--db x.db --every-n --max-n 2^35", "--max-n wants a size in 1..2^34 (1000, 2^20, "
          "4M), not '2^35'");
    USAGE("--db x.db --every-n --max-n 17179869185", "--max-n wants a size in 1..2^34 (1000, "
          "2^20, 4M), not '17179869185'");
    USAGE("--db x.db --every-n --max-n big", "--max-n wants a size in 1..2^34 (1000, 2^20, "
          "4M), not 'big'");
    USAGE("--db x.db --every-n --seed -3", "--seed wants a non-negative integer, not '-3'");
    USAGE("--db x.db --every-n --ops prod", "--ops: 'prod' is not one of min, sum, max (CUB's "
          "DeviceReduce has those three)");
    USAGE("--db x.db --every-n --types bf16", "--types: 'bf16' is not one of f32, f64, i32, "
          "u32, i64, u64");
    USAGE("--every-n", "--db FILE is required: the redtune database whose picks are timed");
    /* The largest and smallest accepted values get as far as the database. */
    assert_int_equal(run_bench("--db /nonexistent/x.db --every-n --max-n 2^34 --random 10000 "
                               "--seed 0"), 1);
    assert_null(strstr(out, "help for the options"));
    assert_int_equal(run_bench("--db /nonexistent/x.db --every-n --max-n 1 --random 0"), 1);
    assert_null(strstr(out, "help for the options"));
    /* With --type-cases: any operator and type names, up to 2^31. */
    assert_int_equal(run_bench("--db /nonexistent/x.db --type-cases --every-n --max-n 2^31 "
                               "--ops sum,argmax --types bf16,f32"), 1);
    assert_null(strstr(out, "help for the options"));
}

int test_bench_everyn_group(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_sizes_bounded_sorted_distinct),
        cmocka_unit_test(random_sizes_seeded),
        cmocka_unit_test(random_sizes_log_uniform),
        cmocka_unit_test(random_sizes_small_ranges),
        cmocka_unit_test(sizes_powers_and_random),
        cmocka_unit_test(data_prefixes),
        cmocka_unit_test(everyn_usage_errors),
    };
    return cmocka_run_group_tests_name("bench_everyn", tests, NULL, NULL);
}
