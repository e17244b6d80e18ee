/*
 * segdata.h - segment profiles for the segmented layouts: seeded segmentations of n elements,
 * their keys and offsets arrays, and the per-segment CPU reference and check.
 *
 * A profile is a distribution of segment lengths (docs/segmented.md lists them); the same
 * (profile, n, seed) gives the same segmentation on any machine. Lengths are drawn until they
 * cover n; the last segment is cut to fit, and profiles with empty segments may end with
 * some (they then cover n exactly with the empties after the last element).
 */
#ifndef RT_SEGDATA_H
#define RT_SEGDATA_H

#include <stddef.h>
#include <stdint.h>
#include "../include/redtune.h"
#include "data.h"

#define SEG_LAYOUT_FLAT    0
#define SEG_LAYOUT_KEYS    1
#define SEG_LAYOUT_OFFSETS 2
#define SEG_LAYOUT_AXIS    3   /* reductions along an axis (axisdata.h): "axis:OxLxI" */

/* "flat", "keys", "offsets" (not "axis": its layout text carries the shape, axisdata.h);
 * -1 when unknown. The name of SEG_LAYOUT_AXIS is "axis". */
int segdata_parse_layout(const char *name);
const char *segdata_layout_name(int layout);

/* Profiles by index; -1 when the name is unknown. */
int segdata_profile_count(void);
const char *segdata_profile_name(int profile);
const char *segdata_profile_summary(int profile);
int segdata_parse_profile(const char *name);
const char *segdata_profile_list(void);   /* "one, rand10_50, ..." */

typedef struct seg_data {
    unsigned long long n, nseg;
    unsigned long long *off;   /* nseg + 1 begin offsets, off[0] = 0, off[nseg] = n */
    double mean, spread;       /* mean segment length and its standard deviation */
} seg_data;

/* Make the segmentation of n elements (n may be 0) for 'profile'. RT_ENOMEM on failure. */
int segdata_make(int profile, unsigned long long n, uint64_t seed, seg_data *d);
void segdata_free(seg_data *d);

/* The mean segment length of a segmented layout's text ("offsets:len3", "keys:heavy") at n
 * elements: its profile's lengths drawn with seed 1 over n, or over the first 2^20 segments
 * when n holds more; what orders profiles by likeness (sweep.c, replay.c), not the exact mean
 * of a run's data. 0 when the text names no keys or offsets profile, or n is 0. */
double segdata_layout_mean(const char *layout, unsigned long long n);

/* 1 when layout texts a and b are the same segmented kind ("offsets", "keys") over different
 * profiles ("offsets:len3" and "offsets:rand10_50"); 0 otherwise. */
int segdata_other_profile(const char *a, const char *b);

/* Two profiles whose mean lengths are within this factor are alike enough that one's winner
 * is where local search starts on the other (sweep.c, replay.c): rand10_50 (30) and len3 (3)
 * share seg_per LANES=1's basin; one segment of 2^22 (one) lies 2^17 times from rand10_50,
 * whose seg_per winner takes 140 times the best there (2110 against 15 us). */
#define SEG_LIKE 16.0

/* The keys (owner) array, n entries, and the offsets array, nseg + 1 entries of 4 or 8 bytes
 * (4 only when n < 2^31). */
void segdata_keys(const seg_data *d, uint32_t *keys);
void segdata_offsets(const seg_data *d, void *off, int off64);

/* The layout's descriptor array of 'd' (keys, or offsets of 4 or 8 bytes), malloc'd, with its
 * size in *bytes (at least 4: n = 0 keys still get a valid pointer); NULL when out of memory. */
void *segdata_descriptor(const seg_data *d, int layout, int off64, size_t *bytes);

/* The reference of one segment, compact (data_ref's fields): the result bytes, the value as
 * a number (var/std_mean: and the mean), and the tolerances rounded up to floats (0:
 * bitwise). */
typedef struct seg_ref {
    unsigned char value[16];
    double approx, approx2;
    float tolerance, tolerance2;
} seg_ref;

/* References of every segment of 'vals' (*refs malloc'd, nseg entries), on 'threads' threads. */
int segdata_reference(const void *vals, rt_type type, rt_op op, const seg_data *d,
                      seg_ref **refs, int threads);

/* Check nseg results 'got' (optype_res_size each: the segmented plan finalizes them)
 * against the references; 1 when all match,
 * else 0 and 'why' names the first wrong segment, its elements and both values. */
int segdata_check(const void *got, const seg_ref *refs, rt_type type, rt_op op,
                  const seg_data *d, char *why, size_t len);

/* The check of segdata_check and axisdata_check: 'count' results 'got' (optype_res_size
 * bytes each) against their compact references, the pair resolved once; result i reduced
 * off[i + 1] - off[i] elements (off NULL: n each), for the message. 1 when all pass, else 0,
 * *bad the first that fails and 'why' data_check's message for it. */
int segdata_check_all(const void *got, const seg_ref *refs, rt_type type, rt_op op,
                      unsigned long long count, const unsigned long long *off, unsigned long long n,
                      unsigned long long *bad, char *why, size_t len);

/* Bytes a segmented reduction must move: values, keys or offsets, and outputs (res_size
 * each). */
double segdata_bytes(const seg_data *d, int layout, int off64, size_t esize, size_t res_size);

#endif
