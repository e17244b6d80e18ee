// @family      seg_lb
// @summary     segmented, load-balanced: B*R-element tiles (keys) or merge-path tiles of elements and segment ends (offsets), per-thread runs, block segmented scan
// @plan        segmented
// @layout      keys offsets
// @balanced    yes
// @commutative not-required
// @deterministic yes
// @param LAYOUT 1 1: keys, 2: offsets (the tuner sets it from --segmented)
// @param OFF64 0 offsets are 32-bit (0) or 64-bit (1); ignored for keys
// @param B 256 threads per block (multiple of 32, 128..1024)
// @param R 8 items per thread: elements (keys) or merge-path items (offsets), 1..32
// @param V 1 elements per vector load (1, 2, 4; R a multiple of V): V > 1 loads values and keys in 16-byte (or 8-byte) vectors and needs in/keys aligned to V elements (16 bytes for keys); the runtime library must pick V = 1 for pointers it cannot vouch for
// @param STAGE 1 1: the tile's elements (and keys) are copied coalesced into shared memory first; 0: each thread reads its own from global memory
// @param PERSIST 0 1: a resident grid (SMs x occupancy) loops over the tiles; 0: one block per tile
// @param OST 0 keys, STAGE = 0 only: 1: the tile's outputs (keys key(a-1)+1 .. key(b-1), when at most LB_OC of them) are collected in shared memory and written coalesced at the end of the tile (many small segments); 0: each run is stored by its thread
// @param MP 1 offsets only: 1: merge-path tiles of B*R elements and segment ends (unit 1, best for tiny segments); 0: tiles of B*R elements (unit 0) with register/vector loads as for keys, the tile's segment starts found by two warp searches (best for long segments)
// @param FAST 0 offsets only: 1: a tile that lies inside one segment skips the segmented machinery: its elements are loaded straight into registers (coalesced V-element vectors, all in flight, for a commutative operator; else each thread's consecutive ones) and reduced by a block tree; MP = 0 then loads every tile coalesced and re-reads a tile with segment starts in the walk's layout; 0: every tile takes the general path
// @param KW 0 keys, STAGE = 0: 1: the walk has no branch at a key change (predicated stores; fewer instructions where keys change every few elements: len3, heavy tails); 2: as 1, a thread's elements after its first in 32-bit keys (the key before is the register before: no 64-bit compares, no test of the tile's first element), stores as predicated pairs, and whole tiles without bound tests; 0: a branch at each change (fewer where they change seldom)
// @param MINB 0 keys, STAGE = 0: N > 0 asks ptxas (the second __launch_bounds__ argument) for N blocks of B threads an SM, so at most 65536 / (N * B) registers a thread: more warps in flight where the walk waits on memory (H200, f64 B=512 R=8 with N = 3: 0.83-0.93x at 30M), spills where R is large (R=16: 1.1-2.4x slower); 0: ptxas picks
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
//
// FAST = 1 (offsets): a tile inside one segment (no segment end among its items with MP = 1;
// no segment start among its elements with MP = 0, both known to the whole block from the
// tile's searches) is reduced as a flat reduction does it: its elements straight from global
// memory into registers, all loads in flight, combined in the thread, then a block tree
// (collectives.cuh) instead of the staging, the walk and the segmented scan; thread 0 stores
// the result where the general path would (the carry, or out[s] through sc_emit). With a
// commutative operator the loads are coalesced vectors (thread r: vectors r, r+B, .. of the
// tile) and the trees halve; without, each thread takes its consecutive elements and the
// trees keep the order. The decision is uniform, so no barrier is divergent.

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
#ifndef RT_V
#define RT_V 1       /* elements per vector load */
#endif
#ifndef RT_STAGE
#define RT_STAGE 1   /* 1: stage the tile in shared memory */
#endif
#ifndef RT_PERSIST
#define RT_PERSIST 0 /* 1: occupancy grid, blocks loop over the tiles */
#endif
#ifndef RT_OST
#define RT_OST 0     /* keys, STAGE = 0: 1 outputs staged in shared memory, coalesced stores;
                        2 that with the stage prefilled: empty segments need no store */
#endif
#ifndef RT_MP
#define RT_MP 1      /* offsets: 1 merge path (unit 1), 0 element tiles (unit 0) */
#endif
#ifndef RT_FAST
#define RT_FAST 0    /* offsets: 1 the fast path for a tile inside one segment */
#endif
#ifndef RT_KW
#define RT_KW 0      /* keys, STAGE = 0: 1 no branch at a key change; 2 that in 32 bits */
#endif
#ifndef RT_MINB
#define RT_MINB 0    /* keys, STAGE = 0: blocks an SM asked of ptxas; 0 its own choice */
#endif

#include "seg_common.cuh"
#if RT_LAYOUT == 2
#include "seg_search.cuh"   /* the warp searches of both offsets tilings */
#endif

#define LB_T (RT_B * RT_R)   /* items per tile */

static_assert(RT_B >= 128 && RT_B <= 1024 && RT_B % 32 == 0, "seg_lb: B must be a multiple of 32 in 128..1024");
static_assert(RT_R >= 1 && RT_R <= 32, "seg_lb: R must be in 1..32");
static_assert((RT_V == 1 || RT_V == 2 || RT_V == 4) && RT_R % RT_V == 0, "seg_lb: V is 1, 2 or 4 and divides R");
static_assert(RT_STAGE == 0 || RT_STAGE == 1, "seg_lb: STAGE is 0 or 1");
static_assert(RT_PERSIST == 0 || RT_PERSIST == 1, "seg_lb: PERSIST is 0 or 1");
static_assert(RT_MP == 0 || RT_MP == 1, "seg_lb: MP is 0 or 1");
static_assert(RT_OST >= 0 && RT_OST <= 2, "seg_lb: OST is 0, 1 or 2");
static_assert(RT_OST < 2 || RT_KW == 2, "seg_lb: OST = 2 needs KW = 2");
static_assert(RT_FAST == 0 || RT_FAST == 1, "seg_lb: FAST is 0 or 1");
static_assert(RT_KW >= 0 && RT_KW <= 2, "seg_lb: KW is 0, 1 or 2");
static_assert(RT_MINB >= 0 && RT_MINB * RT_B <= 2048, "seg_lb: MINB blocks of B threads must fit on an SM (MINB * B <= 2048)");

extern "C" __device__ const unsigned int rt_meta[4] = {
    RT_B, LB_T, RT_PERSIST ? 0xffffffffu : 0u, RT_LAYOUT == 1 || !RT_MP ? 0u : 1u };

#if RT_LAYOUT == 1

typedef sc_keys<RT_B, RT_B, RT_R, 32, 1, RT_STAGE == 1> lb_keys;

#include "seg_lb_keys.cuh"   /* the register path: lb_keys_load, lb_keys_walk, lb_keys_reg */

static_assert(!RT_OST || !RT_STAGE, "seg_lb: OST needs STAGE = 0");
static_assert(!RT_STAGE || lb_keys::SLOTS * (sizeof(rt_value_t) + 4) <= 44 * 1024,
              "seg_lb: the staged tile (B*R elements and keys) does not fit in 44 KB of shared memory");

/* MINB = 0 leaves the register target to ptxas (no second argument: not the same as 1). */
#if RT_MINB && !RT_STAGE
#define LB_KEYS_BOUNDS __launch_bounds__(RT_B, RT_MINB)
#else
#define LB_KEYS_BOUNDS __launch_bounds__(RT_B)
#endif
extern "C" __global__ void LB_KEYS_BOUNDS
rt_seg(const rt_value_t *__restrict__ in, const void *seg, unsigned long long n, unsigned long long nseg,
       rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry, unsigned long long ntiles)
{
    const unsigned int *keys = (const unsigned int *)seg;
#if RT_STAGE
    __shared__ rt_value_t s_v[lb_keys::SLOTS];
    __shared__ unsigned int s_k[lb_keys::SLOTS];
#endif
    for (unsigned long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        if (t != blockIdx.x)
            __syncthreads();   /* the previous tile's shared data has been read */
#if RT_STAGE
        lb_keys::tile(in, keys, n, nseg, out, carry, t, s_v, s_k);
#else
        lb_keys_reg(in, keys, n, nseg, out, carry, t);
#endif
    }
}

#else   /* offsets */

#if RT_OFF64
typedef unsigned long long lb_end_t;
#else
typedef unsigned int lb_end_t;   /* clamped offsets, below 2^31 */
#endif

#if RT_FAST
/* The fast path's block tree (FAST = 1): out of order (halving) for a commutative operator,
 * in thread order otherwise. */
#include "collectives.cuh"
#define LB_ORD (!RT_COMMUTATIVE)
#endif

#if RT_MP

/* The tile in shared memory, always (STAGE is ignored for offsets): its nx elements at slots
 * 0 .. and its ny segment ends after them, in one array of LB_SLOT-byte slots (nx + ny <= B*R),
 * element or end j at j + j/32 (a pad slot every 32: thread r's R consecutive items do not
 * all fall in one bank). */
#define LB_SLOT (sizeof(rt_value_t) > sizeof(lb_end_t) ? sizeof(rt_value_t) : sizeof(lb_end_t))
#define LB_SLOTS (LB_T + LB_T / 32 + 2)
#define LB_VQ ((LB_T / RT_V + 1 + RT_B - 1) / RT_B)    /* vector loads per thread for the values */
#define LB_EQ ((LB_T + RT_B - 1) / RT_B)               /* end loads per thread */

static_assert(LB_SLOTS * LB_SLOT <= 44 * 1024,
              "seg_lb: the tile's elements and segment ends do not fit in 44 KB of shared memory");

static __device__ __forceinline__ unsigned int lb_slot(unsigned int j) { return j + j / 32; }

/* The merge-path split of diagonal d (0 <= d <= m + nseg) over all the input: the number of
 * segment ends among the first d items (end y, at offset offsets[y+1], comes before element
 * x when offsets[y+1] <= x). One warp's 32-way search (sc_warp_search): about log32(nseg)
 * steps of one memory latency each (5 at 10M segments) instead of log2(nseg). All 32 lanes
 * call it converged; every lane gets the answer. */
static __device__ __forceinline__ unsigned long long lb_search(const sc_off_t *offs, unsigned long long n,
                                                               unsigned long long nseg, unsigned long long e0,
                                                               unsigned long long m, unsigned long long d)
{
    return sc_warp_search(d > m ? d - m : 0, d < nseg ? d : nseg, [&](unsigned long long mid) {
        return sc_off(offs, mid + 1, n, nseg) <= e0 + d - mid - 1;
    });
}

extern "C" __global__ void __launch_bounds__(RT_B)
rt_seg(const rt_value_t *__restrict__ in, const void *seg, unsigned long long n, unsigned long long nseg,
       rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry, unsigned long long ntiles)
{
    const sc_off_t *offs = (const sc_off_t *)seg;
    __shared__ unsigned long long s_raw[(LB_SLOTS * LB_SLOT + 7) / 8];
    rt_value_t *s_v = reinterpret_cast<rt_value_t *>(s_raw);
    __shared__ unsigned long long s_split[2];
    __shared__ unsigned int s_flag[2];
    const unsigned int tid = threadIdx.x, warp = tid / 32;
#if RT_FAST
    __shared__ rt_acc_t s_part[RT_B / 32];   /* the fast path's block tree */
#endif

    /* The elements in segments: [e0, e1). */
    const unsigned long long e0 = sc_off(offs, 0, n, nseg);
    const unsigned long long e1 = max(e0, sc_off(offs, nseg, n, nseg));
    const unsigned long long m = e1 - e0, items = m + nseg;

    for (unsigned long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        if (t != blockIdx.x)
            __syncthreads();   /* the previous tile's shared data has been read */
        const unsigned long long d0 = t * LB_T < items ? t * LB_T : items;
        const unsigned long long d1 = d0 + LB_T < items ? d0 + LB_T : items;
        /* Warp 0 splits at d0 (and says whether segment y0 began before the tile), warp 1
         * at d1 (and whether segment y1 has elements in the tile), at the same time. */
        if (warp < 2) {
            const unsigned long long d = warp == 0 ? d0 : d1;
            const unsigned long long y = lb_search(offs, n, nseg, e0, m, d);
            if (tid % 32 == 0) {
                const unsigned long long x = e0 + d - y;
                s_split[warp] = y;
                s_flag[warp] = d0 < d1 && y < nseg && sc_off(offs, y, n, nseg) < x;
            }
        }
        __syncthreads();
        const unsigned long long y0 = s_split[0], y1 = s_split[1];
        const unsigned long long x0 = e0 + d0 - y0, x1 = e0 + d1 - y1;
        const unsigned int ny = (unsigned int)(y1 - y0), nx = (unsigned int)(x1 - x0);
        /* Segment y0 began before the tile: its piece here is the carry. */
        const bool first_carry = s_flag[0] != 0;
        if (tid == 0 && !first_carry) {
            rt_seg_carry c;
            c.key = RT_SEG_NONE;
            c.val = rt_identity();
            carry[t] = c;
        }
#if RT_FAST
        if (ny == 0) {
            /* FAST: no segment ends in the tile, so its nx items are all elements of segment
             * y0 = y1: reduced in registers and by a block tree, no staging, walk or scan. */
            rt_acc_t acc = rt_identity();
#if LB_ORD
            /* Thread r: its R consecutive elements, in order (ordered trees below). */
            {
                const unsigned int j0 = tid * RT_R;
                rt_value_t xr[RT_R];
#pragma unroll
                for (unsigned int k = 0; k < RT_R; k++)
                    if (j0 + k < nx)
                        xr[k] = in[x0 + j0 + k];
#pragma unroll
                for (unsigned int k = 0; k < RT_R; k++)
                    if (j0 + k < nx)
                        acc = rt_combine(acc, rt_lift(xr[k], x0 + j0 + k));
            }
#else
            /* The staging's loads (vectors r, r+B, .. aligned to V in the whole input; the
             * head's and the tail's element by element), all in flight, then combined. */
            {
                const unsigned long long vb = x0 / RT_V * RT_V;
                const unsigned int nvec = nx ? (unsigned int)((x1 - vb + RT_V - 1) / RT_V) : 0u;
                rt_value_t xv[LB_VQ][RT_V];
#pragma unroll
                for (unsigned int q = 0; q < LB_VQ; q++) {
                    const unsigned int vi = q * RT_B + tid;
                    const unsigned long long g = vb + (unsigned long long)vi * RT_V;
                    if (vi < nvec) {
                        if (g >= x0 && g + RT_V <= x1) {
                            sc_ldv<rt_value_t, RT_V, SC_STREAM>(in + g, xv[q]);
                        } else {
#pragma unroll
                            for (unsigned int k = 0; k < RT_V; k++)
                                if (g + k >= x0 && g + k < x1)
                                    xv[q][k] = in[g + k];
                        }
                    }
                }
#pragma unroll
                for (unsigned int q = 0; q < LB_VQ; q++) {
                    const unsigned int vi = q * RT_B + tid;
                    const unsigned long long g = vb + (unsigned long long)vi * RT_V;
                    if (vi < nvec) {
#pragma unroll
                        for (unsigned int k = 0; k < RT_V; k++)
                            if (g + k >= x0 && g + k < x1)
                                acc = rt_combine(acc, rt_lift(xv[q][k], g + k));
                    }
                }
            }
#endif
            /* Thread 0 gets the tile's total; stored as the general path stores the run open
             * at the tile's end (its first run, no boundary before it). The next tile's first
             * barrier ends warp 0's reads of s_part. */
            const rt_acc_t total = co_block_tree<RT_B / 32, LB_ORD>(acc, s_part);
            if (tid == 0 && d0 < d1 && y1 < nseg && (first_carry || s_flag[1]))
                sc_emit(out, carry, t, nseg, y1, total, true, first_carry);
            continue;
        }
#endif

        /* Stage the tile: every load in flight before the first store. Values: the vectors
         * of V elements (aligned to V in the whole input) that meet [x0, x1); a vector wholly
         * inside is one load, the head's and tail's are loaded element by element. */
        {
            const unsigned long long vb = x0 / RT_V * RT_V;
            const unsigned int nvec = nx ? (unsigned int)((x1 - vb + RT_V - 1) / RT_V) : 0u;
            rt_value_t xv[LB_VQ][RT_V];
            lb_end_t ev[LB_EQ];
#pragma unroll
            for (unsigned int q = 0; q < LB_VQ; q++) {
                const unsigned int vi = q * RT_B + tid;
                const unsigned long long g = vb + (unsigned long long)vi * RT_V;
                if (vi < nvec) {
                    if (g >= x0 && g + RT_V <= x1) {
                        sc_ldv<rt_value_t, RT_V, SC_STREAM>(in + g, xv[q]);
                    } else {
#pragma unroll
                        for (unsigned int k = 0; k < RT_V; k++)
                            if (g + k >= x0 && g + k < x1)
                                xv[q][k] = in[g + k];
                    }
                }
            }
#pragma unroll
            for (unsigned int q = 0; q < LB_EQ; q++) {
                const unsigned int k = q * RT_B + tid;
                if (k < ny)
                    ev[q] = (lb_end_t)sc_off(offs, y0 + 1 + k, n, nseg);
            }
#pragma unroll
            for (unsigned int q = 0; q < LB_VQ; q++) {
                const unsigned int vi = q * RT_B + tid;
                const unsigned long long g = vb + (unsigned long long)vi * RT_V;
                if (vi < nvec) {
#pragma unroll
                    for (unsigned int k = 0; k < RT_V; k++)
                        if (g + k >= x0 && g + k < x1)
                            s_v[lb_slot((unsigned int)(g + k - x0))] = xv[q][k];
                }
            }
            lb_end_t *s_e = reinterpret_cast<lb_end_t *>(s_raw);
            const unsigned int eb = (unsigned int)((lb_slot(nx) + 1) * LB_SLOT / sizeof(lb_end_t));
#pragma unroll
            for (unsigned int q = 0; q < LB_EQ; q++) {
                const unsigned int k = q * RT_B + tid;
                if (k < ny)
                    s_e[eb + lb_slot(k)] = ev[q];
            }
        }
        __syncthreads();
        const lb_end_t *s_end0 = reinterpret_cast<const lb_end_t *>(s_raw)
                               + (lb_slot(nx) + 1) * LB_SLOT / sizeof(lb_end_t);
#define LB_END(j) ((unsigned long long)s_end0[lb_slot(j)])

        /* This thread's diagonal in the tile, then its R items. */
        const unsigned int dl = tid * RT_R < d1 - d0 ? tid * RT_R : (unsigned int)(d1 - d0);
        const unsigned int dend = dl + RT_R < d1 - d0 ? dl + RT_R : (unsigned int)(d1 - d0);
        unsigned int lo = dl > nx ? dl - nx : 0, hi = dl < ny ? dl : ny;
        while (lo < hi) {
            const unsigned int mid = (lo + hi) / 2;
            if (LB_END(mid) <= x0 + dl - mid - 1)
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
            if (dl + k < dend) {
                const bool end = yl < ny && (xl >= nx || LB_END(yl) <= x0 + xl);
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
                } else if (xl < nx) {   /* xl >= nx only for offsets that are not sorted */
                    acc = rt_combine(acc, rt_lift(s_v[lb_slot(xl)], x0 + xl));
                    xl++;
                }
            }
        }
#undef LB_END

        bool before, total_f;
        rt_acc_t total;
        const rt_acc_t excl = sc_block_scan<RT_B>(flag, acc, rt_identity(), before, total, total_f);
        if (flag)
            sc_emit(out, carry, t, nseg, hk, rt_combine(excl, head), !before, first_carry);
        /* The run open at the tile's end, segment y1: stored here if it has elements here. */
        if (tid == RT_B - 1 && d0 < d1 && y1 < nseg) {
            const bool first = !total_f;
            if ((first && first_carry) || s_flag[1])
                sc_emit(out, carry, t, nseg, y1, total, first, first_carry);
        }
    }
}

#else   /* offsets, MP = 0: element tiles (unit 0) */

/* Tile t is the elements [a, b) = [t*B*R, ..) of the whole input, loaded into registers as in
 * the keys path (thread r: a + r*R .., R/V aligned vector loads, all in flight before anything
 * else). An element's segment is its key: key(i) = (the number of s in 0..nseg with
 * offsets[s] <= i) - 1, so -1 before offsets[0] and nseg from offsets[nseg] on (both pseudo
 * keys, never stored or carried), and an empty segment is a key no element has. Warps 0 and 1
 * find L0 = key(a-1)+1 and L1 = key(b-1)+1 by 32-way searches (lower bounds of a and b in
 * offsets[0..nseg]) while the loads are in flight; the tile's segment starts are offsets[L0 ..
 * L1-1], all in [a, b).
 *  - none (a tile inside one segment): a plain in-order reduction and a block reduction; the
 *    result is the carry (or nothing for a pseudo key). FAST = 1: a block tree instead of the
 *    block scan and, for a commutative operator, the tile loaded as a flat reduction loads it
 *    (thread r: vectors r, r+B, ..), which the walk below then re-reads in its own layout.
 *  - else the starts are staged in shared memory (when at most LB_NB; else read from global
 *    memory, slowly but correctly), each thread finds the key before its first element by a
 *    binary search there and walks its R elements as the keys path does (runs, block
 *    segmented scan, plain stores and the carry).
 * Empty segments: the block stores the identity into every s in [L0, L1) with offsets[s] ==
 * offsets[s+1] (coalesced; the segments that start in the tile), and the last tile also into
 * [L1, nseg) (the segments at n). */
#define LB_NB (LB_T / 2 < 4096 ? LB_T / 2 : 4096)   /* segment starts staged per tile */
#define LB_CO (RT_FAST && RT_COMMUTATIVE)   /* 1: the tile is loaded coalesced first */

static_assert(LB_NB * sizeof(lb_end_t) <= 32 * 1024, "seg_lb: the staged segment starts exceed 32 KB");

extern "C" __global__ void __launch_bounds__(RT_B)
rt_seg(const rt_value_t *__restrict__ in, const void *seg, unsigned long long n, unsigned long long nseg,
       rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry, unsigned long long ntiles)
{
    const sc_off_t *offs = (const sc_off_t *)seg;
    __shared__ lb_end_t s_b[LB_NB];
    __shared__ unsigned long long s_L[2];
    const unsigned int tid = threadIdx.x, warp = tid / 32;
#if RT_FAST
    __shared__ rt_acc_t s_part[RT_B / 32];   /* the fast path's block tree */
#endif

    for (unsigned long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        if (t != blockIdx.x)
            __syncthreads();   /* the previous tile's shared data has been read */
        const unsigned long long a = t * LB_T < n ? t * LB_T : n;
        const unsigned long long b = a + LB_T < n ? a + LB_T : n;
        const unsigned long long p = a + (unsigned long long)tid * RT_R;
        rt_value_t x[RT_R];
#if LB_CO
        /* FAST, commutative: the tile as a flat reduction loads it, thread r vectors r, r+B,
         * .. (element a + (q*B + r)*V + k in x[q*V + k]); a tile with segment starts re-reads
         * its elements in the walk's layout below. */
        if (b - a == LB_T) {
#pragma unroll
            for (unsigned int q = 0; q < RT_R / RT_V; q++)
                sc_ldv<rt_value_t, RT_V, SC_STREAM>(in + a + ((unsigned long long)q * RT_B + tid) * RT_V, x + q * RT_V);
        } else {
#pragma unroll
            for (unsigned int q = 0; q < RT_R / RT_V; q++)
#pragma unroll
                for (unsigned int k = 0; k < RT_V; k++) {
                    const unsigned long long g = a + ((unsigned long long)q * RT_B + tid) * RT_V + k;
                    if (g < b)
                        x[q * RT_V + k] = in[g];
                }
        }
#else
        if (b - a == LB_T) {
#pragma unroll
            for (unsigned int q = 0; q < RT_R / RT_V; q++)
                sc_ldv<rt_value_t, RT_V, SC_STREAM>(in + p + q * RT_V, x + q * RT_V);
        } else {
#pragma unroll
            for (unsigned int k = 0; k < RT_R; k++)
                if (p + k < b)
                    x[k] = in[p + k];
        }
#endif
        if (warp < 2) {
            const unsigned long long L = sc_lower(offs, n, nseg, warp == 0 ? a : b);
            if (tid % 32 == 0)
                s_L[warp] = L;
        }
        __syncthreads();
        const unsigned long long L0 = s_L[0], L1 = s_L[1];
        const unsigned long long nbl = L1 > L0 ? L1 - L0 : 0;   /* 0 unless sorted: garbage in */
        const bool staged = nbl <= LB_NB;
        const unsigned int nb = staged ? (unsigned int)nbl : 0u;
        if (staged)
            for (unsigned int j = tid; j < nb; j += RT_B)
                s_b[j] = (lb_end_t)sc_off(offs, L0 + j, n, nseg);
        /* Empty segments that start in the tile (and, in the last tile, those at n). */
        {
            const unsigned long long fe = b == n ? nseg : L1 < nseg ? L1 : nseg;
            const rt_acc_t id = rt_seg_out(rt_identity());
            for (unsigned long long s = L0 + tid; s < fe; s += RT_B)
                if (sc_off(offs, s, n, nseg) >= sc_off(offs, s + 1, n, nseg))
                    out[s] = id;
        }
        /* key(a-1) = L0 - 1; the first run is a carry when the tile starts inside a real
         * segment: key(a) == key(a-1), i.e. no segment starts at a. */
        const long long prevkey = (long long)L0 - 1;
        const bool starts_at_a = nbl > 0 && sc_off(offs, L0, n, nseg) <= a;
        const bool first_carry = a < b && a > 0 && prevkey >= 0 && (unsigned long long)prevkey < nseg
                                 && !starts_at_a;
        if (tid == 0 && !first_carry) {
            rt_seg_carry c;
            c.key = RT_SEG_NONE;
            c.val = rt_identity();
            carry[t] = c;
        }

        if (nbl == 0) {
            /* The whole tile is one run of key L0 - 1: reduce it. */
            rt_acc_t acc = rt_identity();
#if LB_CO
#pragma unroll
            for (unsigned int q = 0; q < RT_R / RT_V; q++)
#pragma unroll
                for (unsigned int k = 0; k < RT_V; k++) {
                    const unsigned long long g = a + ((unsigned long long)q * RT_B + tid) * RT_V + k;
                    if (g < b)
                        acc = rt_combine(acc, rt_lift(x[q * RT_V + k], g));
                }
#else
#pragma unroll
            for (unsigned int k = 0; k < RT_R; k++)
                if (p + k < b)
                    acc = rt_combine(acc, rt_lift(x[k], p + k));
#endif
#if RT_FAST
            /* FAST: a block tree (one barrier) for the scan; thread 0 has the total. The next
             * tile's first barrier ends warp 0's reads of s_part. */
            const rt_acc_t total = co_block_tree<RT_B / 32, LB_ORD>(acc, s_part);
            if (tid == 0 && a < b)
                sc_emit(out, carry, t, nseg, (unsigned long long)prevkey, total, true, first_carry);
#else
            bool before, total_f;
            rt_acc_t total;
            (void)sc_block_scan<RT_B>(false, acc, rt_identity(), before, total, total_f);
            if (tid == RT_B - 1 && a < b)
                sc_emit(out, carry, t, nseg, (unsigned long long)prevkey, total, true, first_carry);
#endif
            continue;
        }
#if LB_CO
        /* The walk's layout: thread r's R consecutive elements from p (read again; the block
         * has just read them, so from L1 or L2), in flight across the barrier. */
        if (b - a == LB_T) {
#pragma unroll
            for (unsigned int q = 0; q < RT_R / RT_V; q++)
                sc_ldv<rt_value_t, RT_V, SC_STREAM>(in + p + q * RT_V, x + q * RT_V);
        } else {
#pragma unroll
            for (unsigned int k = 0; k < RT_R; k++)
                if (p + k < b)
                    x[k] = in[p + k];
        }
#endif
        __syncthreads();   /* s_b is staged */
#define LB_BND(j) (staged ? (unsigned long long)s_b[j] : sc_off(offs, L0 + (j), n, nseg))
        /* jn: the starts before p (binary search); key(p-1) = L0 - 1 + jn. */
        unsigned int jn;
        {
            unsigned int lo = 0, hi = (unsigned int)(nbl < 0xffffffffull ? nbl : 0xffffffffull);
            while (lo < hi) {
                const unsigned int mid = lo + (hi - lo) / 2;
                if (LB_BND(mid) < p)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            jn = lo;
        }
        const unsigned long long nbq = nbl;
        unsigned long long nextb = jn < nbq ? LB_BND(jn) : ~0ull;
        bool flag = false;
        rt_acc_t head = rt_identity(), acc = rt_identity();
        unsigned long long hk = 0;
        long long pk = prevkey + jn;
#pragma unroll
        for (unsigned int k = 0; k < RT_R; k++) {
            const unsigned long long i = p + k;
            if (i < b) {
                const rt_acc_t v = rt_lift(x[k], i);
                if (nextb <= i) {
                    do {
                        jn++;
                        nextb = jn < nbq ? LB_BND(jn) : ~0ull;
                    } while (nextb <= i);
                    if (i != a) {   /* the run of key pk ends at i-1 */
                        if (!flag) {
                            flag = true;
                            head = acc;
                            hk = (unsigned long long)pk;
                        } else {
                            sc_emit(out, carry, t, nseg, (unsigned long long)pk, acc, false, first_carry);
                        }
                    }
                    acc = v;
                    pk = prevkey + jn;
                } else {
                    acc = rt_combine(acc, v);
                }
            }
        }
#undef LB_BND
        bool before, total_f;
        rt_acc_t total;
        const rt_acc_t excl = sc_block_scan<RT_B>(flag, acc, rt_identity(), before, total, total_f);
        if (flag)
            sc_emit(out, carry, t, nseg, hk, rt_combine(excl, head), !before, first_carry);
        /* The tile's last run: key(b-1), in the thread that holds b-1. */
        if (a < b && p < b && p + RT_R >= b)
            sc_emit(out, carry, t, nseg, (unsigned long long)pk, total, !total_f, first_carry);
    }
}

#endif   /* MP */
#endif
