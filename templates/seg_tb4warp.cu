// @family      seg_tb4warp
// @summary     segmented, keys: paper's TB4-warp, left-storing intra-warp trees with shuffles over (data, owner) pairs, right children of other owners folded into out
// @plan        segmented
// @layout      keys
// @balanced    yes
// @commutative not-required
// @deterministic yes
// @param LAYOUT 1 1: keys, 2: offsets (this family implements keys only)
// @param OFF64 0 offsets are 32-bit (0) or 64-bit (1); ignored for keys
// @param B 256 threads per block (multiple of 32, 32..1024)
// @param R 4 data-warps per warp (elements per thread), 1..32; the paper's TB4-warp is R=4
//
// seg_tb4warp.cu - Martin et al., section IV.A: the intra-warp tree of Algorithm 2 made
// segmented by s_reducePair_toTheLeft. Block b owns the data-block of D = R*B elements, cut
// into data-warps of 32; warp w takes data-warps wR .. wR+R-1 (contiguous, as in tb4warp.cu;
// the paper interleaves them, which changes nothing here). A lane holds (value, owner) of one
// element; at step d = 1, 2, 4, 8, 16 lane l (a multiple of 2d) takes lane l+d's pair by
// shuffle and, as s_reducePair_toTheLeft, combines it into its own when the owners are equal
// and otherwise folds it into global memory, out[ro] = combine(out[ro], value). Lane 0 ends
// with the data-warp's first run, which goes to shared memory with its owner; the R*B/32
// results are reduced again by the same trees (32 per warp) until one is left: the data-
// block's first run, stored to out (or carry[b] when its segment began in an earlier
// data-block).
//
// Fitting docs/segmented.md as seg_tb2 does: every segment the block owns is set to the
// identity before the barrier that precedes the trees, and finalized after them. The folds of one run arrive left to
// right: inside a data-warp they come at increasing d (a __syncwarp between the steps orders
// one lane's read-modify-write after another's: lanes of a warp are not in lockstep since
// Volta), a run's pieces in later data-warps are those data-warps' first runs, folded only in
// a later pass, after a barrier. The paper's volatile shared-memory steps are shuffles here.

#ifndef RT_PRELUDE
#include "standalone.cuh"   /* sum on float, for nvcc -c on this file alone */
#endif

#ifndef RT_LAYOUT
#define RT_LAYOUT 1
#endif
#ifndef RT_OFF64
#define RT_OFF64 0
#endif
#ifndef RT_B
#define RT_B 256    /* threads per block; the generator's prelude sets it */
#endif
#ifndef RT_R
#define RT_R 4      /* data-warps per warp */
#endif

#include "seg_common.cuh"

#define T4_D (RT_R * RT_B)
#define T4_NW (RT_B / 32)
#define T4_NDW (RT_R * T4_NW)   /* data-warps per data-block */
#define T4_NONE 0xffffffffu     /* owner of the lanes past n */

static_assert(RT_LAYOUT == 1, "seg_tb4warp: only the keys layout (LAYOUT=1)");
static_assert(RT_B >= 32 && RT_B <= 1024 && RT_B % 32 == 0, "seg_tb4warp: B must be a multiple of 32 in 32..1024");
static_assert(RT_R >= 1 && RT_R <= 32, "seg_tb4warp: R must be in 1..32");

extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, T4_D, 0u, 0u };

/* The segmented left-storing warp tree (tb_s_reduceWarp): lane 0 gets the first run of the
 * 32 pairs, the other runs are folded into out. All 32 lanes call it, converged. */
static __device__ __forceinline__ void t4_tree(rt_acc_t &v, unsigned int &o, rt_acc_t *out,
                                               unsigned long long nseg)
{
    const unsigned int lane = threadIdx.x % 32;
#pragma unroll
    for (unsigned int d = 1; d < 32; d *= 2) {
        const rt_acc_t rv = rt_shfl_down(v, d);
        const unsigned int ro = __shfl_down_sync(SC_FULL, o, d);
        if ((lane & (2 * d - 1)) == 0) {
            if (o != ro) {   /* s_reducePair_toTheLeft */
                if (ro < nseg)
                    out[ro] = rt_combine(out[ro], rv);
            } else {
                v = rt_combine(v, rv);
            }
        }
        __syncwarp();
    }
}

extern "C" __global__ void __launch_bounds__(RT_B)
rt_seg(const rt_value_t *__restrict__ in, const void *seg, unsigned long long n, unsigned long long nseg,
       rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry, unsigned long long ntiles)
{
    const unsigned int *keys = (const unsigned int *)seg;
    __shared__ rt_acc_t s_v[T4_NDW];
    __shared__ unsigned int s_o[T4_NDW];
    const unsigned int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    for (unsigned long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        if (t != blockIdx.x)
            __syncthreads();   /* the previous data-block's result has been read */
        const unsigned long long a = t * T4_D;
        const unsigned long long b = a + T4_D < n ? a + T4_D : n;
        const long long prevkey = a > 0 && a <= n ? (long long)sc_key(keys, a - 1, n, nseg) : -1;
        const bool first_carry = a < b && a > 0 && (long long)sc_key(keys, a, n, nseg) == prevkey;
        const unsigned long long upper = b == n ? nseg : (unsigned long long)sc_key(keys, b - 1, n, nseg) + 1;
        sc_fill_with(out, (unsigned long long)(prevkey + 1), upper, rt_identity());   /* raw: folded into */
        if (tid == 0 && !first_carry) {
            rt_seg_carry c;
            c.key = RT_SEG_NONE;
            c.val = rt_identity();
            carry[t] = c;
        }
        /* All of this warp's loads in flight before the trees; then the barrier that orders
         * the identity stores above before any fold. */
        rt_acc_t v[RT_R];
        unsigned int o[RT_R];
#pragma unroll
        for (unsigned int q = 0; q < RT_R; q++) {
            const unsigned long long i = a + (unsigned long long)(warp * RT_R + q) * 32 + lane;
            const bool here = i < b;
            v[q] = here ? rt_lift(in[i], i) : rt_identity();
            o[q] = here ? sc_key(keys, i, n, nseg) : T4_NONE;
        }
        __syncthreads();
#pragma unroll
        for (unsigned int q = 0; q < RT_R; q++) {
            t4_tree(v[q], o[q], out, nseg);
            if (lane == 0) {
                s_v[warp * RT_R + q] = v[q];
                s_o[warp * RT_R + q] = o[q];
            }
        }
        /* The data-warps' first runs, in order, through the same trees until one is left. At
         * most NDW / 32 <= NW groups per pass: each warp takes one. */
        for (unsigned int m = T4_NDW; m > 1; m = (m + 31) / 32) {
            __syncthreads();
            rt_acc_t x = rt_identity();
            unsigned int xo = T4_NONE;
            const unsigned int e = warp * 32 + lane;
            if (e < m) {
                x = s_v[e];
                xo = s_o[e];
            }
            __syncthreads();   /* every group read before any result is written */
            if (warp < (m + 31) / 32) {
                t4_tree(x, xo, out, nseg);
                if (lane == 0) {
                    s_v[warp] = x;
                    s_o[warp] = xo;
                }
            }
        }
        __syncthreads();
        /* The owned segments' results (empty ones: rt_final of the identity), but the
         * data-block's first run, which thread 0 stores now. */
        sc_finalize(out, (unsigned long long)(prevkey + 1), upper, a < b ? s_o[0] : RT_SEG_NONE);
        if (tid == 0 && a < b)
            sc_emit(out, carry, t, nseg, s_o[0], s_v[0], true, first_carry);
    }
}
