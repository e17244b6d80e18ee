/*
 * data_int.h - what data.c (generation), data_ref.c (the CPU reference) and data_check.c (the
 * checks) share: float formats, the per-thread job of a fill or a reference pass, and running
 * jobs on threads.
 */
#ifndef REDTUNE_DATA_INT_H
#define REDTUNE_DATA_INT_H

#include <stdint.h>
#include "../runtime/optype.h"
#include "data.h"

/* Precision (bits, the implicit one included) and exponent range of a float type. */
typedef struct fmt {
    int p, emin, emax;
} fmt;

fmt data_float_fmt(rt_type t);
long double data_round_to(long double x, fmt f);
/* x rounded to nearest even into f16 or bf16 (t) bits by long double arithmetic: any x, the
 * reference of the direct rounding data_store takes where x is a float. */
uint16_t data_half_bits(long double x, rt_type t);

/* One thread's share [lo, hi) of a fill or a reference pass, and its partials. */
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

#define DATA_MAX_THREADS 64

/* Run fn on 'threads' copies of jobs[0] (at most DATA_MAX_THREADS, fewer for small n), each
 * over its share of [0, n); returns the number of jobs used. */
int data_run_jobs(job *jobs, int threads, unsigned long long n, void *(*fn)(void *));
int data_classic(rt_type t, rt_op op);
int data_ignores_nan(rt_op op);
int data_is_var(rt_op op);   /* var_mean, std_mean and their sample forms */

#endif
