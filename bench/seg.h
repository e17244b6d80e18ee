/*
 * seg.h - what the two segmented modes (seg.cu: --segmented keys|offsets; paper_seg.cu:
 * --paper-seg) share, in seg_cases.cu (docs/bench.md, "Segmented"):
 *
 * One case is (n, profile, op, type): the segmentation from segdata_make (seeded, the same
 * for every op and type at this n), the values from data_fill (NaNs scrubbed for min/max),
 * the per-segment references from segdata_reference. Every implementation is verified
 * against them on poisoned outputs before it is timed, and again after.
 *
 *   redtune                rt_reduce_keys / rt_reduce_offsets on the bench's stream: the
 *                          kernel the library picks for n and the mean segment length (of
 *                          any profile tuned for the layout, on this GPU or by the library's
 *                          fallback), as rt_explain_segmented tells it; its outputs followed
 *                          by SEG_GUARD poisoned accumulators that must stay untouched;
 *   CUB, keys              cub::DeviceReduce::ReduceByKey over the u32 keys: unique keys,
 *                          aggregates and the run count out; its runs are the non-empty
 *                          segments in order, checked segment by segment;
 *   CUB, offsets           cub::DeviceSegmentedReduce with begin = offsets, end = offsets + 1
 *                          (32-bit): Sum for sum; for min and max ::Reduce with
 *                          cuda::minimum<> / cuda::maximum<> and redtune's identity as the
 *                          initial value (what ::Min / ::Max instantiate, except that an
 *                          empty float segment gives +inf, redtune's identity, not FLT_MAX);
 *   limit                  segdata_bytes (values + keys or 32-bit offsets + one output per
 *                          segment) / the measured read bandwidth.
 */
#ifndef BENCH_SEG_H
#define BENCH_SEG_H

#include "common.h"

#include <functional>

#define SEG_GUARD 64
#define SEG_POISON 0xa5

/* A device buffer that only grows. */
struct dbuf {
    CUdeviceptr p = 0;
    size_t bytes = 0;
};

int grow(dbuf &b, size_t want, const char *what, rt_err *e);

struct seg_buffers {
    dbuf in, keys, off32, off64, out, unique, aggr, nruns, cub_temp;
};
extern seg_buffers SB;

template <typename T>
T *dptr(CUdeviceptr p)
{
    return reinterpret_cast<T *>(static_cast<uintptr_t>(p));
}

/* One case, shared by every implementation timed on it. */
struct seg_case {
    int layout = SEG_LAYOUT_KEYS;
    int profile = 0;
    rt_op op = RT_MIN;
    rt_type type = RT_F32;
    seg_data d;
    seg_ref *refs = NULL;
    size_t esize = 4, acc = 4;
    unsigned long long nonempty = 0;    /* the runs ReduceByKey must find */
    bool off64_ready = false;           /* SB.off64 holds this case's 64-bit offsets */
    std::vector<unsigned char> host_out;
};

typedef std::function<int(rt_err *)> seg_enqueue_fn;
typedef std::function<int(rt_err *)> seg_poison_fn;
typedef std::function<int(std::string *why, int *ok, rt_err *)> seg_check_fn;

/* SB.off64 filled with the case's 64-bit offsets (once per case). */
int upload_off64(seg_case &c, rt_err *e);

/* Poison redtune's (and DeviceSegmentedReduce's) outputs and the guard after them; check
 * them: the guard untouched, every segment right (*ok 0 and *why otherwise). */
int poison_out(const seg_case &c, rt_err *e);
int check_direct(seg_case &c, std::string *why, int *ok, rt_err *e);

/* Poison, run once, check; time; check the last repetition's outputs again. */
void seg_verify_and_time(const seg_enqueue_fn &enqueue, const seg_poison_fn &poison,
                         const seg_check_fn &check, int hot, const options &o, impl_result *res);

/* CUB's segmented reduction of the case's layout, verified and timed; its temp bytes. */
const char *cub_seg_name(int layout);
void run_cub_seg(seg_case &c, int hot, const options &o, impl_result *res, size_t *temp_bytes);

/* The library's pick and rt_reduce_keys / rt_reduce_offsets' timing on a case. */
struct seg_redtune {
    lib_pick pick;                  /* pick.have 0: rt_explain_segmented failed (res says) */
    int off64 = 0;                  /* 64-bit offsets passed (RT_SEG_OFF64) */
    impl_result res;
};

void run_seg_lib(rt_ctx *ctx, seg_case &c, int layout, int hot, const options &o,
                 seg_redtune *out);

/* Walk the cases: for each n and profile the segmentation (uploaded for each of 'layouts'),
 * for each op and type the values and references; 'fn(c, skip_why)' runs the
 * implementations (skip_why non-empty: the case does not fit on this GPU). */
void seg_walk(const options &o, const std::vector<int> &layouts,
              const std::function<void(seg_case &, const std::string &)> &fn);

#endif
