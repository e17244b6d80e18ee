/*
 * split.h - `redtune --split`: a run's cases divided among the identical GPUs that share
 * them, by their estimated cost, so that the shares end at about the same time.
 */
#ifndef RT_SPLIT_H
#define RT_SPLIT_H

/* What timing one config of a case costs besides reading its input, in bytes read: the
 * launches, the verification and the repetitions of a small case. Measured on an H200
 * (`redtune --device all --op min`, 2026-11-27): cases of 2^10 to 2^26 floats took about
 * 1.9 s each for ~88 configs, 2^30 (4 GiB) about ten times as long. */
#define SPLIT_CONFIG_BYTES (256.0 * 1024 * 1024)

/* The estimated cost of a case: 'configs' timings of a case that reads 'bytes'. */
static inline double split_case_cost(long configs, double bytes)
{
    return (double)configs * (SPLIT_CONFIG_BYTES + bytes);
}

/* owner[i] = the share (0 .. k-1) that tunes case i: the costliest case first, each to the
 * share with the least cost so far (the lowest share on a tie; cases of equal cost in
 * order), so every process that runs it with the same costs gets the same answer. 0, or -1
 * when out of memory. */
int split_assign(const double *cost, int ncases, int k, int *owner);

#endif
