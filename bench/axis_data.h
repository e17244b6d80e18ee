/*
 * axis_data.h - redtune_bench --axis's inputs, CPU references and output checks
 * (axis_data.cu), for axis.cu.
 */
#ifndef RT_BENCH_AXIS_DATA_H
#define RT_BENCH_AXIS_DATA_H

#include "common.h"

#include <string>
#include <vector>

namespace axis_data {

struct axis_ref {
    std::vector<double> v;        /* per output: the sum, min or max (argmax: the max) */
    std::vector<long long> idx;   /* argmax: the first index along len of the max, -1 if empty */
};

/* How an implementation's outputs are laid out: 'stride' bytes per output, the value of
 * type 'res' first; the index (argmax) at 'idx_off' with 'idx_bytes' (8: redtune's long
 * long; 4: CUB's KeyValuePair<int, T> key, first, so idx_off 0 and the value after it).
 * has_val false: no value, the index alone (redtune's RT_RESULT_INDEX, stride 8). */
struct out_layout {
    size_t stride = 4, val_off = 0, idx_off = 0, idx_bytes = 0;
    rt_type res = RT_F32;
    bool has_val = true;
};

/* n elements of type t for op at buf: seeded small integers, on 'threads' host threads. */
void fill(void *buf, rt_op op, rt_type t, unsigned long long n, uint64_t seed, int threads);
/* The reference of every output of shape s (sum, min, max; argmax: max and first index). */
axis_ref compute_reference(const void *buf, rt_op op, rt_type t, const axis_shape &s,
                           int threads);
/* Every output of 'got' (laid out as L) against ref; false with *why naming the first wrong. */
bool check_all(const unsigned char *got, const out_layout &L, rt_op op, const axis_ref &ref,
               const axis_shape &s, std::string *why);

}  // namespace axis_data

#endif
