// @family      seg_lb
// @summary     segmented, load-balanced: B*R-element tiles (keys) or merge-path tiles of elements and segment ends (offsets), per-thread runs, block segmented scan
// @plan        segmented
// @layout      keys offsets
// @commutative not-required
// @deterministic yes
// @param LAYOUT 1 1: keys, 2: offsets (the tuner sets it from --segmented)
// @param OFF64 0 offsets are 32-bit (0) or 64-bit (1); ignored for keys
// @param B 256 threads per block (multiple of 32, 128..1024)
// @param R 8 items per thread: elements (keys) or merge-path items (offsets), 1..32
// @param STAGE 1 1: the tile's elements (and keys) are copied coalesced into shared memory first; 0: each thread reads its own from global memory
// @param PERSIST 0 1: a resident grid (SMs x occupancy) loops over the tiles; 0: one block per tile
//
// seg_lb.cu - the modern segmented reduction (reduce-by-key as in CUB and ModernGPU), after
// docs/segmented.md. Every tile has the same amount of work whatever the segment lengths.
//
// Keys (unit 0): tile t is elements t*B*R .. +B*R-1; thread r walks its R consecutive ones in
// order, storing each run of equal keys that begins and ends inside it, and keeps the run
// before its first key change (head) and the one after its last (tail). A block-wide
// segmented scan of (changed?, tail) over the threads gives each thread the run open at its
// start, which completes its head. The tile's first run goes to carry[t] when its segment began
// in an earlier tile. Keys skipped between two elements are empty segments: the identity.
//
// Offsets (unit 1): merge path. The tile is B*R items of the merge of the elements
// offsets[0] .. offsets[nseg]-1 with the nseg segment ends offsets[1..nseg] (an end comes
// before the element at its offset). Two threads find the tile's two diagonals by binary
// search in the offsets, the tile's ends are copied into shared memory, every thread finds its
// own diagonal there and walks R items: an element is combined, an end emits the segment (the
// identity for an empty one). One segment of 30M elements and 30M empty segments are both
// B*R items per tile.

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
#define RT_B 256     /* threads per block; the generator's prelude sets it */
#endif
#ifndef RT_R
#define RT_R 8       /* items per thread */
#endif
#ifndef RT_STAGE
#define RT_STAGE 1   /* 1: stage the tile in shared memory */
#endif
#ifndef RT_PERSIST
#define RT_PERSIST 0 /* 1: occupancy grid, blocks loop over the tiles */
#endif

#include "seg_common.cuh"

#define LB_T (RT_B * RT_R)   /* items per tile */

static_assert(RT_B >= 128 && RT_B <= 1024 && RT_B % 32 == 0, "seg_lb: B must be a multiple of 32 in 128..1024");
static_assert(RT_R >= 1 && RT_R <= 32, "seg_lb: R must be in 1..32");
static_assert(RT_STAGE == 0 || RT_STAGE == 1, "seg_lb: STAGE is 0 or 1");
static_assert(RT_PERSIST == 0 || RT_PERSIST == 1, "seg_lb: PERSIST is 0 or 1");

extern "C" __device__ const unsigned int rt_meta[4] = {
    RT_B, LB_T, RT_PERSIST ? 0xffffffffu : 0u, RT_LAYOUT == 1 ? 0u : 1u };

#if RT_LAYOUT == 1

typedef sc_keys<RT_B, RT_B, RT_R, 32, 1, RT_STAGE == 1> lb_keys;
static_assert(!RT_STAGE || lb_keys::SLOTS * (sizeof(rt_value_t) + 4) <= 44 * 1024,
              "seg_lb: the staged tile (B*R elements and keys) does not fit in 44 KB of shared memory");

extern "C" __global__ void __launch_bounds__(RT_B)
rt_seg(const rt_value_t *__restrict__ in, const void *seg, unsigned long long n, unsigned long long nseg,
       rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry, unsigned long long ntiles)
{
    const unsigned int *keys = (const unsigned int *)seg;
#if RT_STAGE
    __shared__ rt_value_t s_v[lb_keys::SLOTS];
    __shared__ unsigned int s_k[lb_keys::SLOTS];
#else
    rt_value_t *s_v = 0;
    unsigned int *s_k = 0;
#endif
    for (unsigned long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        if (t != blockIdx.x)
            __syncthreads();   /* the previous tile's shared data has been read */
        lb_keys::tile(in, keys, n, nseg, out, carry, t, s_v, s_k);
    }
}

#else   /* offsets */

#if RT_OFF64
typedef unsigned long long lb_end_t;
#else
typedef unsigned int lb_end_t;   /* clamped offsets, below 2^31 */
#endif

static_assert(LB_T * (sizeof(lb_end_t) + (RT_STAGE ? sizeof(rt_value_t) : 0)) <= 44 * 1024,
              "seg_lb: the tile's segment ends (and staged elements) do not fit in 44 KB of shared memory");

/* The merge-path split of diagonal d (0 <= d <= m + nseg) over all the input: the number of
 * segment ends among the first d items. End y (at offset offsets[y+1]) comes before element
 * x when offsets[y+1] <= x. */
static __device__ __forceinline__ unsigned long long lb_search(const sc_off_t *offs, unsigned long long n,
                                                               unsigned long long nseg, unsigned long long e0,
                                                               unsigned long long m, unsigned long long d)
{
    unsigned long long lo = d > m ? d - m : 0, hi = d < nseg ? d : nseg;
    while (lo < hi) {
        const unsigned long long mid = (lo + hi) / 2;
        if (sc_off(offs, mid + 1, n, nseg) <= e0 + d - mid - 1)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

extern "C" __global__ void __launch_bounds__(RT_B)
rt_seg(const rt_value_t *__restrict__ in, const void *seg, unsigned long long n, unsigned long long nseg,
       rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry, unsigned long long ntiles)
{
    const sc_off_t *offs = (const sc_off_t *)seg;
    __shared__ lb_end_t s_end[LB_T];
#if RT_STAGE
    __shared__ rt_value_t s_v[LB_T];
#endif
    __shared__ unsigned long long s_split[2];
    const unsigned int tid = threadIdx.x;

    /* The elements in segments: [e0, e1). */
    const unsigned long long e0 = sc_off(offs, 0, n, nseg);
    const unsigned long long e1 = max(e0, sc_off(offs, nseg, n, nseg));
    const unsigned long long m = e1 - e0, items = m + nseg;

    for (unsigned long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        if (t != blockIdx.x)
            __syncthreads();   /* the previous tile's shared data has been read */
        const unsigned long long d0 = t * LB_T < items ? t * LB_T : items;
        const unsigned long long d1 = d0 + LB_T < items ? d0 + LB_T : items;
        if (tid == 0)
            s_split[0] = lb_search(offs, n, nseg, e0, m, d0);
        if (tid == 32)
            s_split[1] = lb_search(offs, n, nseg, e0, m, d1);
        __syncthreads();
        const unsigned long long y0 = s_split[0], y1 = s_split[1];
        const unsigned long long x0 = e0 + d0 - y0, x1 = e0 + d1 - y1;
        const unsigned int ny = (unsigned int)(y1 - y0), nx = (unsigned int)(x1 - x0);

        /* Segment y0 began before the tile: its piece here is the carry. */
        const bool first_carry = d0 < d1 && y0 < nseg && sc_off(offs, y0, n, nseg) < x0;
        if (tid == 0 && !first_carry) {
            rt_seg_carry c;
            c.key = RT_SEG_NONE;
            c.val = rt_identity();
            carry[t] = c;
        }
        for (unsigned int k = tid; k < ny; k += RT_B)
            s_end[k] = (lb_end_t)sc_off(offs, y0 + 1 + k, n, nseg);
#if RT_STAGE
        for (unsigned int j = tid; j < nx; j += RT_B)
            s_v[j] = in[x0 + j];
#endif
        __syncthreads();

        /* This thread's diagonal in the tile, then its R items. */
        const unsigned int dl = tid * RT_R < d1 - d0 ? tid * RT_R : (unsigned int)(d1 - d0);
        const unsigned int dend = dl + RT_R < d1 - d0 ? dl + RT_R : (unsigned int)(d1 - d0);
        unsigned int lo = dl > nx ? dl - nx : 0, hi = dl < ny ? dl : ny;
        while (lo < hi) {
            const unsigned int mid = (lo + hi) / 2;
            if ((unsigned long long)s_end[mid] <= x0 + dl - mid - 1)
                lo = mid + 1;
            else
                hi = mid;
        }
        unsigned int yl = lo, xl = dl - lo;
        bool flag = false;
        rt_acc_t head = rt_identity(), acc = rt_identity();
        unsigned long long hk = 0;
#pragma unroll
        for (unsigned int k = 0; k < RT_R; k++) {
            if (dl + k >= dend)
                break;
            const bool end = yl < ny && (xl >= nx || (unsigned long long)s_end[yl] <= x0 + xl);
            if (end) {
                if (!flag) {
                    flag = true;
                    head = acc;
                    hk = y0 + yl;
                } else {
                    sc_emit(out, carry, t, nseg, y0 + yl, acc, false, first_carry);
                }
                acc = rt_identity();
                yl++;
            } else {
                if (xl >= nx)
                    break;   /* only for offsets that are not sorted */
#if RT_STAGE
                const rt_value_t v = s_v[xl];
#else
                const rt_value_t v = in[x0 + xl];
#endif
                acc = rt_combine(acc, rt_lift(v, x0 + xl));
                xl++;
            }
        }

        bool before, total_f;
        rt_acc_t total;
        const rt_acc_t excl = sc_block_scan<RT_B>(flag, acc, rt_identity(), before, total, total_f);
        if (flag)
            sc_emit(out, carry, t, nseg, hk, rt_combine(excl, head), !before, first_carry);
        /* The run open at the tile's end, segment y1: stored here if it has elements here. */
        if (tid == RT_B - 1 && d0 < d1 && y1 < nseg) {
            const bool first = !total_f;
            if ((first && first_carry) || sc_off(offs, y1, n, nseg) < x1)
                sc_emit(out, carry, t, nseg, y1, total, first, first_carry);
        }
    }
}

#endif
