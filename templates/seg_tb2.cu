// @family      seg_tb2
// @summary     segmented, keys: paper's TB2 after Zhou et al., left-storing tree over (data, owner) pairs in padded shared memory, right children of other owners folded into out
// @plan        segmented
// @layout      keys
// @balanced    yes
// @commutative not-required
// @deterministic yes
// @param LAYOUT 1 1: keys, 2: offsets (this family implements keys only)
// @param OFF64 0 offsets are 32-bit (0) or 64-bit (1); ignored for keys
// @param B 256 threads per block (power of two, 32..1024)
// @param R 2 elements per thread: the data-block is R*B leaves (power of two, 1..8); the paper's TB2 is R=2
// @param PAD 1 1: one padding slot every 32 slots (the paper's ai += ai >> 5); 0: none
//
// seg_tb2.cu - Martin et al., section IV.A: Zhou et al.'s segmented tree (TB2, Algorithm 1
// with line 14 replaced). Block b loads the data-block of D = R*B elements b*D .. and their
// owners (keys) into shared memory (slots past n: the identity, owner "none"), then reduces it
// bottom-up, left-storing: at stride s the pair (i, i+s), i a multiple of 2s, is combined into
// slot i when both have the same owner; otherwise slot i+s is folded into global memory,
// out[ro] = combine(out[ro], s_data[i+s]) (the paper's g_output update), and slot i keeps its
// value. A slot's owner is its first leaf's. Slot 0 ends with the data-block's first run.
//
// Fitting docs/segmented.md: out[s] for every segment the block owns (those whose first
// element is in the data-block, and the empty ones it must fill) is first set to the identity,
// which the barrier after the load orders before the folds; after the tree the block applies
// rt_final to them (sc_finalize: float min/max only, where an empty segment's marker becomes
// +-inf). Each fold of a run is a right child
// whose first leaf is the first multiple of s at or after the run's start, so the folds of one
// run come at increasing strides and cover increasing index ranges: the read-modify-writes
// arrive left to right, one per barrier step, and the order is kept (no change to the paper
// needed). Slot 0's run has no folds: it is stored with a plain store, or goes to carry[b]
// when its segment began in an earlier data-block.

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
#define RT_R 2      /* leaves per thread */
#endif
#ifndef RT_PAD
#define RT_PAD 1    /* 1: a padding slot every 32 */
#endif

#include "seg_common.cuh"

#define T2_D (RT_R * RT_B)
#define T2_SLOTS (T2_D + (RT_PAD ? T2_D / 32 : 0))
#define T2_NONE 0xffffffffu   /* owner of the slots past n */

static_assert(RT_LAYOUT == 1, "seg_tb2: only the keys layout (LAYOUT=1)");
static_assert(RT_B >= 32 && RT_B <= 1024 && (RT_B & (RT_B - 1)) == 0, "seg_tb2: B must be a power of two in 32..1024");
static_assert(RT_R >= 1 && RT_R <= 8 && (RT_R & (RT_R - 1)) == 0, "seg_tb2: R must be a power of two in 1..8");
static_assert(RT_PAD == 0 || RT_PAD == 1, "seg_tb2: PAD is 0 or 1");
static_assert(T2_SLOTS * (sizeof(rt_acc_t) + 4) <= 44 * 1024,
              "seg_tb2: the R*B (data, owner) slots do not fit in 44 KB of shared memory");

extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, T2_D, 0u, 0u };

static __device__ __forceinline__ unsigned int t2_slot(unsigned int j) { return RT_PAD ? j + (j >> 5) : j; }

extern "C" __global__ void __launch_bounds__(RT_B)
rt_seg(const rt_value_t *__restrict__ in, const void *seg, unsigned long long n, unsigned long long nseg,
       rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry, unsigned long long ntiles)
{
    const unsigned int *keys = (const unsigned int *)seg;
    __shared__ rt_acc_t s_data[T2_SLOTS];
    __shared__ unsigned int s_owner[T2_SLOTS];
    const unsigned int tid = threadIdx.x;
    for (unsigned long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        if (t != blockIdx.x)
            __syncthreads();   /* the previous data-block's slot 0 has been read */
        const unsigned long long a = t * T2_D;
        const unsigned long long b = a + T2_D < n ? a + T2_D : n;
        const long long prevkey = a > 0 && a <= n ? (long long)sc_key(keys, a - 1, n, nseg) : -1;
        const bool first_carry = a < b && a > 0 && (long long)sc_key(keys, a, n, nseg) == prevkey;
        /* The segments this data-block owns: after the key before it, up to its last key (to
         * nseg for the last data-block). The identity first; the folds and stores come after
         * the barrier below. */
        const unsigned long long upper = b == n ? nseg : (unsigned long long)sc_key(keys, b - 1, n, nseg) + 1;
        sc_fill_with(out, (unsigned long long)(prevkey + 1), upper, rt_identity());   /* raw: folded into */
        if (tid == 0 && !first_carry) {
            rt_seg_carry c;
            c.key = RT_SEG_NONE;
            c.val = rt_identity();
            carry[t] = c;
        }
        for (unsigned int j = tid; j < T2_D; j += RT_B) {
            const unsigned long long i = a + j;
            const bool here = i < b;
            s_data[t2_slot(j)] = here ? rt_lift(in[i], i) : rt_identity();
            s_owner[t2_slot(j)] = here ? sc_key(keys, i, n, nseg) : T2_NONE;
        }
        /* The tree: the paper's loop, a barrier before each level. */
        for (unsigned int s = 1; s < T2_D; s *= 2) {
            __syncthreads();
            for (unsigned int p = tid; p < T2_D / (2 * s); p += RT_B) {
                const unsigned int ai = t2_slot(2 * s * p), bi = t2_slot(2 * s * p + s);
                const unsigned int lo = s_owner[ai], ro = s_owner[bi];
                if (lo != ro) {
                    if (ro < nseg)
                        out[ro] = rt_combine(out[ro], s_data[bi]);
                } else {
                    s_data[ai] = rt_combine(s_data[ai], s_data[bi]);
                }
            }
        }
        __syncthreads();
        /* The owned segments' results (empty ones: rt_final of the identity), but slot 0's run,
         * which thread 0 stores now. */
        sc_finalize(out, (unsigned long long)(prevkey + 1), upper, a < b ? s_owner[0] : RT_SEG_NONE);
        if (tid == 0 && a < b)
            sc_emit(out, carry, t, nseg, s_owner[0], s_data[0], true, first_carry);
    }
}
