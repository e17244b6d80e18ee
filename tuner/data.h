/*
 * data.h - test data, the CPU reference, and the check of a GPU result against it.
 *
 * 'type' is a type spec (include/redtune.h: element, accumulator, result); the reference
 * and the check follow optype_resolve: the accumulator ts.acc, the result ts.res, and the
 * result's bytes (optype_res_size: f16/bf16 results are their bits; argmin/argmax {value in
 * the element type, index at 8}; var/std_mean {var or std, mean}).
 *
 * Data is a pure function of (type, op, n, seed, planted position[, stress kind]): the same
 * seed gives the same array on any machine, so a failure can be reproduced. Values are chosen
 * so that a wrong kernel shows:
 * - min/max: random values with one planted extreme (the unique winner), never the identity;
 *   amax the same with a negative planted extreme (-2: a max that forgot |x| misses it);
 * - integer sums and products: full-range values (sums wrap modulo 2^bits of the
 *   accumulator) and odd factors; mean of integers: full-range values;
 * - float sums, asum, mean, var/std_mean: small integers in [-16, 16]; sumsq and norm2 in
 *   [-4, 4]; so every partial sum is exact while the sum of magnitudes stays under 2^p;
 * - float products: +-1, so the product is exact;
 * - argmin/argmax: integer values in [-1000, 1000] (unsigned: [0, 2000]; bf16 [-128, 128];
 *   i8 [-100, 100]; u8 [0, 200]), so the winning value occurs many times and the lowest
 *   index must be found;
 * - floats for min, max, amax, argmin, argmax: about one element in 4096 is NaN (never the
 *   planted extreme), which the operators ignore; the reference of an input that is all NaN
 *   is NaN (argmin/argmax: the first NaN), and a NaN result matches only a NaN.
 * The six original operators over the six 32/64-bit types keep exactly the data they had.
 *
 * Stress inputs (data_fill_stress, float elements; prod keeps its +-1 data): large values
 * (f16 in +-[32768, 65504], whose sum overflows an f16 accumulator but not f32; bf16 and
 * f32 +-2^50..2^51; f64 +-2^400..), subnormals, NaN (one in 8, or every element), runs of
 * 512 equal values from {+0, -0, 1, -1, 0.5}, and a large mean with a small spread (f32
 * 1e4 +- 1.7e-2, f64 1e8 +- 1e-4, f16 1000 + {0, 0.5, 1}, bf16 1e4 + {0, 64, 128}).
 *
 * The reference is computed in long double (64-bit mantissa), sums with Neumaier's
 * compensation (about double-double for f64 sums), var/std_mean by two passes (the mean,
 * then the sum of squared deviations). The bounds of data_check, with p the accumulator's
 * precision (u = 2^-p: f32 2^-24, f64 2^-53), S the sum of the magnitudes of the mapped
 * terms (x, |x|, or x*x rounded to the accumulator as the kernel does), and
 * D = max(1, ceil(log2 n)):
 * - bitwise (value ==, NaN only against NaN) for min, max, amax, argmin/argmax (index
 *   equal too), integer sums and products, float products, and float sum, asum, sumsq when
 *   every term is a multiple of 2^k and S <= 2^(p+k) (every partial sum is then exact in any
 *   order); a result narrower than the accumulator is then the single rounding of the exact
 *   value (round to nearest even), also bitwise;
 * - float sum, asum, sumsq otherwise: |got - ref| <= D u S (a reduction tree of depth D; the
 *   data keep partial sums of random sign small, which per-thread chains rely on);
 * - norm2: tol_s / (2 sqrt(s)) + 2 u sqrt(s) (sqrt(tol_s) when s is 0), tol_s that of sumsq;
 * - mean: tol_s / n + 2 u |mean| + 2^-149 (f64 2^-1074: the count rounded to the
 *   accumulator, the quotient's rounding, subnormal quotients);
 *   integer means (exact i64/u64 sum, f64 quotient): 2 u64 |mean|;
 * - var/std_mean, against the two-pass reference var = M2 / (n - ddof), sd its root, with
 *   D' = D + 1, the mean's bound e = D' u max|x| + D' * 2^-149 (f64: 2^-1074):
 *   mean: e + u |mean|; var: (2 D' u var + 4 D' e (sd + e)) n / (n - ddof) + 4 D' denorm;
 *   std: min(sqrt(tol_var), tol_var / std) + 2 u std;
 * - a result narrower than the accumulator (RT_RESULT_ELEM) adds u_r (|ref| + tol) with u_r
 *   the result's 2^-11 (f16) or 2^-8 (bf16); a result that rounds to infinity must be it.
 * NaN in the data: NaN results (sum-like, mean, var) only against NaN.
 */
#ifndef RT_DATA_H
#define RT_DATA_H

#include <stddef.h>
#include <stdint.h>
#include "../include/redtune.h"

/* splitmix64's finaliser: the counter-based generator behind every test value. */
uint64_t data_mix(uint64_t x);

/* Fill buf[0..n) for 'op' over 'type'. 'plant' is where min/max put their extreme
 * (taken modulo n). Uses up to 'threads' threads. */
void data_fill(void *buf, rt_type type, rt_op op, unsigned long long n, uint64_t seed,
               unsigned long long plant, int threads);

/* The stress inputs (see above), for float elements; other types get data_fill's data. */
enum { DATA_STRESS_LARGE, DATA_STRESS_SUBNORMAL, DATA_STRESS_NAN, DATA_STRESS_ZEROS,
       DATA_STRESS_MEANVAR, DATA_STRESS_KINDS };
void data_fill_stress(void *buf, rt_type type, rt_op op, unsigned long long n, uint64_t seed,
                      int kind, int threads);
const char *data_stress_name(int kind);   /* "large", "subnormal", "nan", "zeros", "meanvar" */

typedef struct data_ref {
    unsigned char value[16];  /* the exact or best result, in the result's layout, rounded
                               * to the result type (argmin/argmax: the element, then the
                               * index at offset 8; var/std_mean: {var or std, mean}) */
    long double approx;       /* the result as a number (var/std_mean: var or std) */
    long double approx2;      /* var/std_mean: the mean */
    long double abs_sum;      /* sum of magnitudes of the mapped terms (float sums) */
    double tolerance;         /* allowed |got - approx|; 0 means bitwise equal */
    double tolerance2;        /* var/std_mean: the mean's */
} data_ref;

/* Compute the reference of buf[0..n); n == 0 gives the empty result (optype_empty_result). */
void data_reference(const void *buf, rt_type type, rt_op op, unsigned long long n,
                    data_ref *ref, int threads);

/* 1 when 'got' (the result bytes from the GPU, optype_res_size of them) is acceptable;
 * otherwise 0 and 'why' says what was expected and what came ("expected -2, got -0.99"). */
int data_check(const void *got, const data_ref *ref, rt_type type, rt_op op,
               unsigned long long n, char *why, size_t len);
/* data_check with the pair already resolved (optype_resolve into *ts): the check of many
 * results of one case (segdata_check), the pair's text made only for a failure's 'why'. */
struct optype_ts;
int data_check_ts(const void *got, const data_ref *ref, const struct optype_ts *ts, rt_type type, rt_op op,
                  unsigned long long n, char *why, size_t len);

/* The check of a user operator's result 'got' against the reference 'want' (both of
 * 'type'): bit for bit for integers; for floats |got - want| <= tol * max(|got|, |want|),
 * equal infinities, NaN only against NaN (tol 0: ==). 'name' names the operator in 'why'. */
int data_check_user(const void *got, const void *want, rt_type type, double tol,
                    const char *name, unsigned long long n, char *why, size_t len);

/* The result of an empty input (n == 0) as result bytes: optype_empty_result (argmin/argmax
 * the min/max identity and index -1; mean and var NaN). */
void data_identity(rt_type type, rt_op op, void *out);

/* Format one value of 'type' for people ("-2", "4294967295", "0.5"). */
void data_format(const void *v, rt_type type, char *buf, size_t len);

/* One element of 'type' (f16/bf16 bits decoded) as a number, and a number rounded to nearest
 * even into 'type' (integers: converted). */
long double data_load(const void *v, rt_type type);
void data_store(void *v, rt_type type, long double x);

#endif
