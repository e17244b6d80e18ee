/*
 * data.h - test data, the CPU reference, and the check of a GPU result against it.
 *
 * Data is a pure function of (type, op, n, seed, planted position): the same seed gives the
 * same array on any machine, so a failure can be reproduced. Values are chosen so that a
 * wrong kernel shows:
 * - min/max: random values with one planted extreme (the unique winner), never the identity;
 * - integer sums and products: full-range values (sums wrap modulo 2^bits) and odd factors;
 * - float sums: small integers in [-16, 16], so every partial sum is exact while the sum of
 *   magnitudes stays under 2^mantissa, and the check is then exact;
 * - float products: +-1, so the product is exact;
 * - argmin/argmax: integer values in [-1000, 1000] (unsigned: [0, 2000]), so the winning value
 *   occurs many times and the lowest index must be found;
 * - floats for min, max, argmin, argmax: about one element in 4096 is NaN (never the planted
 *   extreme), which the operators ignore; the reference of an input that is all NaN is NaN
 *   (argmin/argmax: the first NaN), and a NaN result matches only a NaN.
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

typedef struct data_ref {
    unsigned char value[16];  /* the exact or best result, in the accumulator's layout
                               * (argmin/argmax: value, then the index at offset 8) */
    long double approx;       /* the result as a number, for messages */
    long double abs_sum;      /* sum of magnitudes (float sums) */
    double tolerance;         /* allowed |got - value|; 0 means bitwise equal */
} data_ref;

/* Compute the reference of buf[0..n), n >= 1. */
void data_reference(const void *buf, rt_type type, rt_op op, unsigned long long n,
                    data_ref *ref, int threads);

/* 1 when 'got' (the accumulator bytes from the GPU) is acceptable; otherwise 0 and 'why'
 * says what was expected and what came ("expected -2 (0xc0000000), got -0.99 ..."). */
int data_check(const void *got, const data_ref *ref, rt_type type, rt_op op,
               unsigned long long n, char *why, size_t len);

/* The check of a user operator's result 'got' against the reference 'want' (both of
 * 'type'): bit for bit for integers; for floats |got - want| <= tol * max(|got|, |want|),
 * equal infinities, NaN only against NaN (tol 0: ==). 'name' names the operator in 'why'. */
int data_check_user(const void *got, const void *want, rt_type type, double tol,
                    const char *name, unsigned long long n, char *why, size_t len);

/* The identity of 'op' over 'type', as accumulator bytes (the result for n == 0; for
 * argmin/argmax index -1). */
void data_identity(rt_type type, rt_op op, void *out);

/* Format one value of 'type' for people ("-2", "4294967295", "0.5"). */
void data_format(const void *v, rt_type type, char *buf, size_t len);

#endif
