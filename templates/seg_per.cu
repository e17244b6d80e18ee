// @family      seg_per
// @summary     segmented, offsets: a group of LANES threads (1..32, or B: a block) per segment, contiguous in-order chunks, ordered shuffle trees
// @plan        segmented
// @layout      offsets
// @balanced    no
// @commutative not-required
// @deterministic yes
// @param LAYOUT 2 1: keys, 2: offsets (this family implements offsets only)
// @param OFF64 0 offsets are 32-bit (0) or 64-bit (1)
// @param B 256 threads per block (multiple of 32, 32..1024)
// @param LANES 32 threads per segment: 1, 2, 4, 8, 16, 32 (a warp), or B (a block per segment, CUB's scheme)
// @param STAGE 0 1 (LANES = 1 only): each warp stages its 32 segments' elements in shared memory, 32*V at a time, with coalesced loads, and each lane reduces its own segment from there; 2 (LANES = 1 only): the warp copies its segments' whole span into a window of shared memory with cp.async (V elements of 4, 8 or 16 bytes a copy, other widths by plain loads; WIN kilobytes a block, 40 by default, shared by its warps), and each lane reduces its own segment from there in reads of V elements; 0: each lane loads its own segment
// @param LONG 64 (LANES < 32, STAGE = 0 or 2) a segment longer than LONG rounds of its group (LONG * LANES * V elements) is left by its group to the whole block, which reduces the block's long segments after its tile, up to 16 bytes a lane per round where `in` is aligned: under heavy-tailed lengths one long segment no longer holds one group for its whole length; 0: every segment stays with its group
// @param SPLIT 0 (LONG > 0) a segment longer than LONG rounds of its group is left to the grid instead of the block: its chunks of SPLIT elements (a power of two, 256..2^24) go to a list in the temporary storage, and a second launch (rt_seg_split, a resident grid) reduces each chunk with a warp, the last warp of a segment folding its chunks' results in order; 0: no list, such segments stay in their block (LONG)
// @param SEGS 1 (LANES = 1, STAGE = 0, SPLIT = 0) segments a lane takes per tile (1..8; a tile is B * SEGS segments, lane l's are l, l + B, ...): their offsets, then their first V elements each, are loaded before any is combined, so that a lane has SEGS segments' loads in flight where segments are a few elements long; the rest of a segment longer than V follows in rounds
// @param U 1 rounds a lane loads together (1, 2, 4; wherever a group loads its segment from global memory): each lane folds its own chunks of U rounds at a time, all U loads in flight before the first combine, and a group meets in its shuffle tree once a segment instead of once a round; with LANES > 1 that order needs a commutative operator (a non-commutative one keeps U = 1: a tree a round, lane order within each)
// @param WIN 40 (STAGE = 2) kilobytes of shared memory the block's windows take together (1..44; a warp's window is WIN * 1024 / (B / 32) bytes): fewer let more blocks share an SM (228 KB on sm_90, 1 KB of it reserved a block: 40 KB let five blocks in, 36 six, 27 eight), more let a warp's span fit one window
// @param GRID 0 (SEGS = 1, STAGE = 0 or 2, LANES < B) blocks an SM of a grid that loops over the tiles (1..32: at most GRID * SMs blocks), each thread loading its next tile's offsets before it reduces its current one, so that no block waits on its offsets after its first tile and no last wave runs half empty; 0: a block a tile
// @param NZ 0 (STAGE = 2) 1: a lane's segment folded from its first element on with the glue's rt_fold_nz where the operator has one (float min and max: fmin alone an element, no NaN test of the lift and no marker tests of the combine); 0 (or another operator): every element lifted and combined
// @param V 4 consecutive elements each lane loads per round (1..16); from the first multiple of V in the segment on, a lane's V elements are one aligned vector (16-byte loads where V * size allows), so V > 1 needs `in` aligned to the vector's load width (16 bytes suffices): the runtime library must pick V = 1 for pointers it cannot vouch for
//
// seg_per.cu - one group of threads per segment (unit 2: a tile is B / LANES segments), the
// simplest segmented reduction and the best one for segments of similar, moderate length.
//
// A group of L = LANES lanes reduces its segment in rounds of L*V elements: lane l takes the V
// consecutive elements l*V .. l*V+V-1 of the round and combines them in order, the L values
// meet in the left-storing shuffle tree (lane 0 of the group gets them in lane order), and lane
// 0 folds the round into its running value. Every combine has the lower indices on the left, so
// a non-commutative operator gets the in-order result. With L > 1 all lanes of a warp go through
// the same number of rounds (the warp's longest segment), so that the shuffles stay converged.
// With LANES = B the segment is cut into B/32 contiguous parts, warp w reduces part w as above,
// and the B/32 results meet in one more ordered tree. Empty segments give the identity. Every
// out[s] is written once (through rt_final); there are no carries.
//
// STAGE = 1 (LANES = 1): a lane that walks its own short segment makes the warp's loads touch
// 32 cache lines each. Staged, the warp copies the span of its 32 segments, [lo of lane 0,
// largest hi), into its shared buffer in chunks of 32*V elements, lane l taking elements
// l, l+32, ... (coalesced), and after a __syncwarp each lane folds the part of its segment that
// lies in the chunk, in index order; a second __syncwarp lets the next chunk overwrite the
// buffer. Reads of the buffer stay inside it for any offsets (each lane clips its segment to
// the chunk), and the loads stay inside [0, n) since sc_off clamps offsets to n.
//
// STAGE = 2 (LANES = 1): STAGE = 1's chunks of 32*V elements leave each lane idle wherever the
// chunk holds none of its segment, and a lane that loads its own segment (STAGE = 0) makes each
// load of the warp touch 32 cache lines. Here the warp copies the span of its 32 segments, from
// the multiple of V at or below lane 0's start to the largest end, into its window of shared
// memory (WIN KB / (B/32) bytes: 1280 f32 with B = 256 and WIN = 40, so the 32 segments of 10 to
// 50 elements fit at once) with cp.async, V elements (4, 8 or 16 bytes; other widths, such as
// V = 1 of a 2-byte type for an unaligned pointer, by plain loads) a copy, all in flight together
// and no registers held (the last part-vector at the span's end by plain loads); then each lane
// reduces its segment's part in the window in order: element by element up to a multiple of V,
// then V at a time in one shared-memory read, then the rest. A span longer than the window is
// copied a window at a time. Reads stay in [0, n): every copy is of whole V-vectors below the
// span's end (V > 1 needs `in` aligned to V elements, as for the other V), and a lane's part is
// clipped to the window. With LONG > 0, a warp any of whose segments is longer than LONG * V
// elements loads its segments directly, as with STAGE = 0, and leaves the long ones to the block
// (LONG): copied, a segment of 10^6 elements would hold its warp for hundreds of windows (13 ms at
// n = 30 * 2^20 on the heavy profile, H200).
//
// LONG > 0 (LANES < 32, STAGE = 0 or 2): in the block's last tile (its only one: the plan's grid
// is one block per tile), a group whose segment is longer than LONG rounds runs no rounds for
// it; the warp's ballot of such groups goes to shared memory, and after the loop one
// __syncthreads_or says whether the block has any. If so, the block reduces them one after the
// other as LANES = B does (B/32 contiguous parts, one per warp, the parts in one more ordered
// tree), a warp's lanes taking up to 16 bytes (4 values) each per round where `in` is aligned
// to that, one element otherwise, a round at a time. (A block given several tiles would leave
// the long segments of all but its last to their groups.) Where every segment is short this
// costs a ballot per tile and one barrier per block; where a few are long (a heavy tail: Pareto
// lengths with a mean of 5), the longest costs a block's read of it instead of a lane's walk
// of it (docs/segmented.md, "Heavy tails"). The walk runs after the loop, a round at a time,
// so that it adds few registers to the groups' loop; the kernel asks for a full SM (2048 / B
// blocks) where a lane's round is at most 32 bytes.

#ifndef RT_PRELUDE
#include "standalone.cuh"   /* sum on float, for nvcc -c on this file alone */
#endif

#ifndef RT_LAYOUT
#define RT_LAYOUT 2
#endif
#ifndef RT_OFF64
#define RT_OFF64 0
#endif
#ifndef RT_B
#define RT_B 256     /* threads per block; the generator's prelude sets it */
#endif
#ifndef RT_LANES
#define RT_LANES 32  /* threads per segment */
#endif
#ifndef RT_V
#define RT_V 4       /* elements per lane per round */
#endif
#ifndef RT_STAGE
#define RT_STAGE 0   /* LANES = 1: stage each warp's segments in shared memory */
#endif
#ifndef RT_LONG
#define RT_LONG 64   /* rounds after which a group leaves its segment to the block (0: never) */
#endif

#ifndef RT_SEGS
#define RT_SEGS 1    /* LANES = 1: segments a lane takes per tile, their loads in flight together */
#endif
#ifndef RT_SPLIT
#define RT_SPLIT 0   /* elements above which a segment is left to the grid's second launch (0: never) */
#endif
#ifndef RT_U
#define RT_U 1       /* rounds a lane loads together, one tree a segment (commutative operators) */
#endif
#ifndef RT_NZ
#define RT_NZ 0      /* STAGE = 2: fold from the first element with rt_fold_nz (float min, max) */
#endif
#ifndef RT_WIN
#define RT_WIN 40    /* STAGE = 2: kilobytes of shared memory the block's windows take */
#endif
#ifndef RT_GRID
#define RT_GRID 0    /* blocks an SM of a grid that loops over the tiles (0: a block a tile) */
#endif

#include "seg_common.cuh"

static_assert(RT_LAYOUT == 2, "seg_per: only the offsets layout (LAYOUT=2)");
static_assert(RT_B >= 32 && RT_B <= 1024 && RT_B % 32 == 0, "seg_per: B must be a multiple of 32 in 32..1024");
static_assert(RT_LANES == RT_B || (RT_LANES >= 1 && RT_LANES <= 32 && (RT_LANES & (RT_LANES - 1)) == 0),
              "seg_per: LANES must be 1, 2, 4, 8, 16, 32 or B");
static_assert(RT_V >= 1 && RT_V <= 16, "seg_per: V must be in 1..16");
static_assert(RT_STAGE == 0 || ((RT_STAGE == 1 || RT_STAGE == 2) && RT_LANES == 1),
              "seg_per: STAGE is 0, or 1 or 2 with LANES=1");
static_assert(RT_LONG >= 0 && RT_LONG <= (1 << 24), "seg_per: LONG must be in 0..2^24");
static_assert(RT_SEGS >= 1 && RT_SEGS <= 8, "seg_per: SEGS must be in 1..8");
static_assert(RT_SEGS == 1 || (RT_LANES == 1 && RT_STAGE == 0 && RT_SPLIT == 0),
              "seg_per: SEGS > 1 needs LANES=1, STAGE=0 and SPLIT=0");
static_assert(RT_U == 1 || RT_U == 2 || RT_U == 4, "seg_per: U must be 1, 2 or 4");
static_assert(RT_NZ == 0 || RT_NZ == 1, "seg_per: NZ must be 0 or 1");
static_assert(RT_WIN >= 1 && RT_WIN <= 44, "seg_per: WIN must be in 1..44 (kilobytes)");
static_assert(RT_SPLIT == 0 || (RT_SPLIT >= 256 && RT_SPLIT <= (1 << 24) && (RT_SPLIT & (RT_SPLIT - 1)) == 0),
              "seg_per: SPLIT must be 0 or a power of two in 256..2^24");

#define PER_BLOCK (RT_LANES == RT_B && RT_B > 32)        /* a block per segment */
#define PER_L (PER_BLOCK ? 32 : RT_LANES)                /* lanes that share a shuffle tree */
#define PER_SEGS (RT_B / RT_LANES * RT_SEGS)             /* segments per tile */
#define PER_ESC (RT_LONG > 0 && PER_L < 32 && RT_STAGE != 1) /* long segments go to the block */
#define PER_SPLIT (RT_SPLIT > 0 && PER_ESC)               /* the longest go to the grid (SPLIT) */
static_assert(RT_GRID >= 0 && RT_GRID <= 32, "seg_per: GRID must be in 0..32");
static_assert(RT_GRID == 0 || (RT_SEGS == 1 && RT_STAGE != 1 && !PER_BLOCK),
              "seg_per: GRID > 0 needs SEGS=1, STAGE 0 or 2 and LANES < B");
/* U: a lane alone keeps the order whatever U; a group's lanes folding several rounds each
 * before their tree reorder the combines, which only a commutative operator allows. */
#define PER_U ((PER_L == 1 || RT_COMMUTATIVE) ? RT_U : 1)
#if RT_STAGE == 2
/* elements a window */
#define PER_WIN (RT_WIN * 1024 / (RT_B / 32) / (RT_V * sizeof(rt_value_t)) * RT_V)
static_assert(PER_WIN >= RT_V, "seg_per: WIN is too small for a warp's window of one vector");
#endif
#if defined(RT_TYPE_F64) || defined(RT_TYPE_I64) || defined(RT_TYPE_U64)
#define PER_VSIZE 8                                       /* sizeof(rt_value_t), for #if */
#elif defined(RT_TYPE_F16) || defined(RT_TYPE_BF16)
#define PER_VSIZE 2
#elif defined(RT_TYPE_I8) || defined(RT_TYPE_U8)
#define PER_VSIZE 1
#else
#define PER_VSIZE 4
#endif
/* (B = 32: 64 blocks an SM would be past the 32 an SM holds, a bound ptxas ignores) */
#if PER_ESC && RT_V * PER_VSIZE <= 32 && RT_STAGE != 2 && RT_SEGS == 1 && RT_B >= 64
#define PER_BOUNDS __launch_bounds__(RT_B, 2048 / RT_B)   /* see LONG */
#else
#define PER_BOUNDS __launch_bounds__(RT_B)
#endif

extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, PER_SEGS, (unsigned int)RT_GRID, 2u };

/* co_warp_tree<N>: the left-storing tree over groups of N lanes; lane 0 of each group gets the
 * group's values combined in lane order (inlined by the generator). */
#include "collectives.cuh"

#if !PER_BLOCK
/* The largest of the warp's 64-bit values. */
static __device__ __forceinline__ unsigned long long per_warp_max(unsigned long long x)
{
#pragma unroll
    for (unsigned int d = 16; d >= 1; d /= 2) {
        const unsigned long long o = __shfl_xor_sync(SC_FULL, x, d);
        x = o > x ? o : x;
    }
    return x;
}
#endif

#if RT_STAGE != 1
/* A lane's VV consecutive elements base.. (those below hi) in order: one aligned vector load
 * (sc_ldv, base a multiple of VV; the streaming hint with STREAM) where all VV are there, else
 * one load each. */
template <unsigned int VV, bool STREAM>
static __device__ __forceinline__ rt_acc_t per_chunk(const rt_value_t *__restrict__ in, unsigned long long base,
                                                     unsigned long long hi)
{
    rt_acc_t v = rt_identity();
    if (base + VV <= hi) {
        rt_value_t x[VV];
        sc_ldv<rt_value_t, VV, STREAM>(in + base, x);
#pragma unroll
        for (unsigned int k = 0; k < VV; k++)
            v = rt_combine(v, rt_lift(x[k], base + k));
    } else {
#pragma unroll
        for (unsigned int k = 0; k < VV; k++)
            if (base + k < hi)
                v = rt_combine(v, rt_lift(in[base + k], base + k));
    }
    return v;
}

/* Elements [lo, hi) reduced in order by a group of PER_L lanes (g: the lane in the group);
 * the result is in lane 0 of the group. 'rounds' must be the same for all lanes of the warp
 * when PER_L > 1 (and at least the group's ceil((hi - lo) / (PER_L * V))). */
static __device__ __forceinline__ rt_acc_t per_group(const rt_value_t *__restrict__ in, unsigned long long lo,
                                                     unsigned long long hi, unsigned int g,
                                                     unsigned long long rounds)
{
    /* The head, up to the first index that is a multiple of V, element by element (lane 0,
     * fewer than V loads, all in flight together); then the rounds from there, whose full
     * chunks are aligned vector loads (sc_ldv). */
    rt_acc_t acc = rt_identity();
    if constexpr (RT_V > 1) {
        const unsigned long long al = (lo + RT_V - 1) / RT_V * RT_V;
        const unsigned long long he = al < hi ? al : hi;
        if (g == 0) {
#pragma unroll
            for (unsigned int k = 0; k + 1 < RT_V; k++)
                if (lo + k < he)
                    acc = rt_combine(acc, rt_lift(in[lo + k], lo + k));
        }
        lo = he;
    }
#if PER_U > 1
    /* U rounds at a time: the lane's U chunks loaded (aligned vectors where the last of them
     * is whole, so are the others), then folded in order into the lane's own value; the group
     * meets in one tree at the end (PER_L > 1: a commutative operator). */
    constexpr unsigned long long LV = PER_L * RT_V;
    rt_acc_t v = rt_identity();
    unsigned long long r = 0;
    for (; r + PER_U <= rounds; r += PER_U) {
        const unsigned long long b0 = lo + r * LV + g * RT_V;
        if (b0 + (PER_U - 1) * LV + RT_V <= hi) {
            rt_value_t x[PER_U][RT_V];
#pragma unroll
            for (unsigned int u = 0; u < PER_U; u++)
                sc_ldv<rt_value_t, RT_V, false>(in + b0 + u * LV, x[u]);
#pragma unroll
            for (unsigned int u = 0; u < PER_U; u++)
#pragma unroll
                for (unsigned int k = 0; k < RT_V; k++)
                    v = rt_combine(v, rt_lift(x[u][k], b0 + u * LV + k));
        } else {
#pragma unroll
            for (unsigned int u = 0; u < PER_U; u++)
                v = rt_combine(v, per_chunk<RT_V, false>(in, b0 + u * LV, hi));
        }
    }
    for (; r < rounds; r++)
        v = rt_combine(v, per_chunk<RT_V, false>(in, lo + r * LV + g * RT_V, hi));
    if (PER_L > 1)
        v = co_warp_tree<PER_L>(v);
    return rt_combine(acc, v);
#else
    for (unsigned long long r = 0; r < rounds; r++) {
        rt_acc_t v = per_chunk<RT_V, false>(in, lo + r * (PER_L * RT_V) + g * RT_V, hi);
        if (PER_L > 1)
            v = co_warp_tree<PER_L>(v);
        acc = rt_combine(acc, v);
    }
    return acc;
#endif
}
#endif

#if RT_STAGE == 2
/* RT_V values (VB bytes, both addresses aligned to VB) from global to shared memory: one
 * cp.async on sm_80 and later where VB is 4, 8 or 16 (16 bytes through L2 only), else plain
 * loads and stores, a value at a time (V = 1 of a 1- or 2-byte type: the runtime's V for an
 * unaligned pointer). */
template <unsigned int VB>
static __device__ __forceinline__ void per_copy(rt_value_t *dst, const rt_value_t *src)
{
#if __CUDA_ARCH__ >= 800
    if constexpr (VB == 16 || VB == 8 || VB == 4)
        sc_cp_async<VB, false>(dst, src, VB);
    else
#endif
    {
#pragma unroll
        for (unsigned int k = 0; k < RT_V; k++)
            dst[k] = src[k];
    }
}

/* Every cp.async this thread issued has landed (visible to the warp after a __syncwarp). */
static __device__ __forceinline__ void per_copy_wait()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" : : : "memory");
#endif
}

/* RT_V values from shared memory at p (aligned to VB bytes): one read where VB is 4, 8 or 16,
 * else a value at a time. */
template <unsigned int VB>
static __device__ __forceinline__ void per_read(const rt_value_t *p, rt_value_t (&x)[RT_V])
{
    if constexpr (VB == 16 || VB == 8 || VB == 4) {
        typedef typename sc_pick<VB == 16, uint4, typename sc_pick<VB == 8, uint2, unsigned int>::type>::type vt;
        const vt v = *(const vt *)p;
        memcpy(x, &v, VB);
    } else {
#pragma unroll
        for (unsigned int k = 0; k < RT_V; k++)
            x[k] = p[k];
    }
}

/* NZ: the operator's rt_fold_nz for an accumulator that holds an element (per_window's
 * sc_fold_step<PER_NZ>). */
#define PER_NZ (RT_NZ && RT_FOLD_NZ)

/* STAGE = 2: lane's segment [lo, hi) reduced from the warp's window 'win' of shared memory,
 * the warp's span [lane 0's lo rounded down to V, the largest hi) copied into it a window at
 * a time by cp.async. All 32 lanes of the warp call it. */
static __device__ __forceinline__ rt_acc_t per_window(const rt_value_t *__restrict__ in, unsigned long long lo,
                                                      unsigned long long hi, rt_value_t *win, unsigned int lane)
{
    constexpr unsigned int VB = RT_V * sizeof(rt_value_t);
    const unsigned long long wlo = __shfl_sync(SC_FULL, lo, 0) / RT_V * RT_V;
    const unsigned long long whi = per_warp_max(hi);
    rt_acc_t acc = rt_identity();
    for (unsigned long long w0 = wlo; w0 < whi; w0 += PER_WIN) {
        const unsigned int len = whi - w0 < PER_WIN ? (unsigned int)(whi - w0) : PER_WIN;
        const unsigned int nv = len / RT_V;                            /* whole vectors */
        for (unsigned int q = lane; q < nv; q += 32)
            per_copy<VB>(win + q * RT_V, in + w0 + q * RT_V);
        if (lane == 0)
            for (unsigned int i = nv * RT_V; i < len; i++)
                win[i] = in[w0 + i];
        per_copy_wait();
        __syncwarp();
        const unsigned long long a = max(lo, w0), b = min(hi, w0 + len);
        if (a < b) {
            unsigned int i = (unsigned int)(a - w0);
            const unsigned int e = (unsigned int)(b - w0);
#if PER_NZ
            if (rt_is_empty(acc)) {   /* the segment's first element, lifted; then rt_fold_nz */
                acc = rt_lift(win[i], w0 + i);
                i++;
            }
#endif
            const unsigned int h = min(e, (i + RT_V - 1) / RT_V * RT_V);
            for (; i < h; i++)
                acc = sc_fold_step<PER_NZ>(acc, win[i], w0 + i);
            for (; i + RT_V <= e; i += RT_V) {
                rt_value_t x[RT_V];
                per_read<VB>(win + i, x);
#pragma unroll
                for (unsigned int k = 0; k < RT_V; k++)
                    acc = sc_fold_step<PER_NZ>(acc, x[k], w0 + i + k);
            }
            for (; i < e; i++)
                acc = sc_fold_step<PER_NZ>(acc, win[i], w0 + i);
        }
        __syncwarp();   /* the next window overwrites this one */
    }
    return acc;
}
#endif

#if PER_ESC
/* Elements [lo, hi) reduced in order by one warp (the block's walk of a long segment; SPLIT's
 * chunk), in rounds of 32 * VV elements, lane l taking the VV consecutive elements l*VV.. of a
 * round, U rounds' loads in flight before their trees; the result in lane 0. VV > 1 needs
 * 'in' aligned to VV * sizeof(rt_value_t): lane 0 takes the head up to the first multiple of
 * VV element by element. */
template <unsigned int VV, unsigned int U = 1>
static __device__ __forceinline__ rt_acc_t per_walk(const rt_value_t *__restrict__ in, unsigned long long lo,
                                                    unsigned long long hi, unsigned int lane)
{
    rt_acc_t acc = rt_identity();
    if constexpr (VV > 1) {
        const unsigned long long he = min(hi, (lo + VV - 1) / VV * VV);
        if (lane == 0)
            for (unsigned long long i = lo; i < he; i++)
                acc = rt_combine(acc, rt_lift(in[i], i));
        lo = he;
    }
#pragma unroll 1
    for (unsigned long long base = lo + lane * VV; base - lane * VV < hi; base += U * 32 * VV) {
        rt_acc_t v[U];
#pragma unroll
        for (unsigned int u = 0; u < U; u++)
            v[u] = per_chunk<VV, SC_STREAM>(in, base + u * 32 * VV, hi);
#pragma unroll
        for (unsigned int u = 0; u < U; u++)
            acc = rt_combine(acc, co_warp_tree<32>(v[u]));
    }
    return acc;
}

/* Segment s reduced by the whole block into out[s]: warp w the contiguous part w of B/32, the
 * parts in warp order through part (B/32 accumulators). Every thread of the block calls it; it
 * ends with a barrier, so part can be used again. */
static __device__ __forceinline__ void per_long(const rt_value_t *__restrict__ in, const sc_off_t *offs,
                                                unsigned long long s, unsigned long long n,
                                                unsigned long long nseg, rt_acc_t *__restrict__ out,
                                                rt_acc_t *part)
{
    static_assert(sizeof(rt_value_t) == PER_VSIZE, "seg_per: PER_VSIZE is not the element's size");
    constexpr unsigned int W = RT_B / 32;
    /* Up to 16 bytes a lane, at most 4 values (8 halves lifted into argmin's 16-byte
     * accumulator spill). */
    constexpr unsigned int VW = 16 / sizeof(rt_value_t) > 4 ? 4 : 16 / sizeof(rt_value_t);
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const unsigned long long lo = sc_off(offs, s, n, nseg);
    const unsigned long long hi = max(lo, sc_off(offs, s + 1, n, nseg));
    const unsigned long long c = (hi - lo + W - 1) / W;
    const unsigned long long plo = min(hi, lo + warp * c), phi = min(hi, plo + c);
    rt_acc_t v;
    if (VW > 1 && (unsigned long long)in % (VW * sizeof(rt_value_t)) == 0)
        v = per_walk<VW>(in, plo, phi, lane);
    else
        v = per_walk<1>(in, plo, phi, lane);
    v = co_warps_tree<W, true>(v, part, lane, warp);
    if (threadIdx.x == 0)
        out[s] = rt_seg_out(v);
    __syncthreads();   /* part is written again by the next segment */
}
#endif

#if PER_SPLIT
/* SPLIT: what a group leaves to the list, more than PER_LONGE elements (LONG rounds of it),
 * and the chunk, SPLIT elements; for the host (runtime/plan.c sizes the list with them and
 * launches rt_seg_split when the unit has it). */
#define PER_LONGE ((unsigned long long)RT_LONG * (PER_L * RT_V) < (1ull << 31) \
                   ? (unsigned int)((unsigned long long)RT_LONG * (PER_L * RT_V)) : (1u << 31))
extern "C" __device__ const unsigned int rt_seg_split_chunk[2] = { RT_SPLIT, PER_LONGE };

/* The list in the temporary storage ('carry' of both launches; the host clears its first 8
 * bytes before rt_seg): [0, 8) the jobs taken so far; from 16, K jobs (a chunk of SPLIT
 * elements: its segment and the segment's first job); then K tickets (one per segment of
 * more than one chunk, at its first job); then, from a multiple of 64, K partials. K =
 * floor(n / SPLIT) + min(nseg, floor(n / PER_LONGE)) + 1 bounds the chunks of segments longer
 * than PER_LONGE whose lengths sum to at most n. */
struct per_job {
    unsigned long long seg, first;
};
struct per_list {
    unsigned long long *taken;
    per_job *jobs;
    unsigned int *tickets;
    rt_acc_t *partials;
    unsigned long long k;
};
static __device__ __forceinline__ per_list per_list_at(void *region, unsigned long long n,
                                                     unsigned long long nseg)
{
    per_list l;
    l.k = n / RT_SPLIT + min(nseg, n / PER_LONGE) + 1;
    l.taken = (unsigned long long *)region;
    l.jobs = (per_job *)((char *)region + 16);
    l.tickets = (unsigned int *)(l.jobs + l.k);
    l.partials = (rt_acc_t *)((char *)region + (16 + l.k * (sizeof(per_job) + 4) + 63) / 64 * 64);
    return l;
}

/* The segments of the warp's lanes with 'mine' set (lo, hi: theirs) put on the list: their
 * chunks counted in a warp scan and taken with one atomicAdd by lane 0; a lane writes the job
 * of a segment of one chunk, the warp together those of longer ones (one after the other),
 * and a segment of several chunks clears its ticket. Where invalid offsets (overlapping
 * segments) would take the list past K jobs, the jobs that fit name no segment (RT_SEG_NONE)
 * and the rest are not written. Every lane of the warp calls it. */
static __device__ __forceinline__ void per_split_put(const per_list &l, bool mine, unsigned long long s,
                                                     unsigned long long lo, unsigned long long hi,
                                                     unsigned int lane)
{
    if (!__any_sync(SC_FULL, mine))
        return;
    const unsigned long long nch = mine ? (hi - lo + RT_SPLIT - 1) / RT_SPLIT : 0;
    unsigned long long inc = nch;
#pragma unroll
    for (unsigned int d = 1; d < 32; d *= 2) {
        const unsigned long long o = __shfl_up_sync(SC_FULL, inc, d);
        if (lane >= d)
            inc += o;
    }
    unsigned long long base = 0;
    if (lane == 31)
        base = atomicAdd(l.taken, inc);
    const unsigned long long f = __shfl_sync(SC_FULL, base, 31) + inc - nch;
    const bool fits = f + nch <= l.k;
    if (mine && nch == 1 && f < l.k)
        l.jobs[f] = per_job{fits ? s : RT_SEG_NONE, f};
    if (mine && nch > 1 && f < l.k)
        l.tickets[f] = 0;
    for (unsigned int m = __ballot_sync(SC_FULL, nch > 1); m; m &= m - 1) {
        const unsigned int src = __ffs(m) - 1;
        const unsigned long long ss = __shfl_sync(SC_FULL, fits ? s : RT_SEG_NONE, src);
        const unsigned long long ff = __shfl_sync(SC_FULL, f, src), nn = __shfl_sync(SC_FULL, nch, src);
        for (unsigned long long c = lane; c < nn && ff + c < l.k; c += 32)
            l.jobs[ff + c] = per_job{ss, ff};
    }
}

#endif

extern "C" __global__ void PER_BOUNDS
rt_seg(const rt_value_t *__restrict__ in, const void *seg, unsigned long long n, unsigned long long nseg,
       rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry, unsigned long long ntiles)
{
    const sc_off_t *offs = (const sc_off_t *)seg;
    const unsigned int tid = threadIdx.x;
    (void)carry;   /* SPLIT: the list (per_list) */
#if PER_BLOCK
    __shared__ rt_acc_t s_part[RT_B / 32];
    const unsigned int lane = tid % 32, warp = tid / 32;
    for (unsigned long long s = blockIdx.x; s < ntiles && s < nseg; s += gridDim.x) {
        const unsigned long long lo = sc_off(offs, s, n, nseg);
        const unsigned long long hi = max(lo, sc_off(offs, s + 1, n, nseg));
        /* Warp w: the contiguous part [lo + w*c, lo + w*c + c) of the segment. */
        const unsigned long long c = (hi - lo + RT_B / 32 - 1) / (RT_B / 32);
        const unsigned long long plo = min(hi, lo + warp * c), phi = min(hi, plo + c);
        const rt_acc_t v = per_group(in, plo, phi, lane, (phi - plo + 32 * RT_V - 1) / (32 * RT_V));
        if (lane == 0)
            s_part[warp] = v;
        __syncthreads();
        if (warp == 0) {
            rt_acc_t w = lane < RT_B / 32 ? s_part[lane] : rt_identity();
            w = co_warp_tree<32>(w);
            if (lane == 0)
                out[s] = rt_seg_out(w);
        }
        __syncthreads();   /* s_part is rewritten by the next segment */
    }
#elif RT_STAGE == 1
    constexpr unsigned int CHUNK = 32 * RT_V;
    __shared__ rt_value_t s_buf[RT_B / 32][CHUNK];
    rt_value_t *buf = s_buf[tid / 32];
    const unsigned int lane = tid % 32;
    for (unsigned long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const unsigned long long s = t * PER_SEGS + tid;
        unsigned long long lo = 0, hi = 0;
        if (s < nseg) {
            lo = sc_off(offs, s, n, nseg);
            hi = max(lo, sc_off(offs, s + 1, n, nseg));
        }
        const unsigned long long wlo = __shfl_sync(SC_FULL, lo, 0);
        const unsigned long long whi = per_warp_max(hi);
        rt_acc_t acc = rt_identity();
        for (unsigned long long c = wlo; c < whi; c += CHUNK) {
#pragma unroll
            for (unsigned int k = 0; k < RT_V; k++) {
                const unsigned long long i = c + k * 32 + lane;
                if (i < whi)
                    buf[k * 32 + lane] = in[i];
            }
            __syncwarp();
            const unsigned long long a = max(lo, c), b = min(hi, c + CHUNK);
            for (unsigned long long i = a; i < b; i++)
                acc = rt_combine(acc, rt_lift(buf[i - c], i));
            __syncwarp();
        }
        if (s < nseg)
            out[s] = rt_seg_out(acc);
    }
#else
#if RT_SEGS > 1
    /* SEGS segments a lane (LANES = 1, STAGE = 0): all their offsets, then all their first V
     * elements, in flight before any is combined; the rest of a longer segment in rounds;
     * with LONG, the segments of the last tile longer than LONG * V elements to the block. */
#if PER_ESC
    __shared__ unsigned int s_long[RT_SEGS][RT_B / 32];
    __shared__ rt_acc_t s_part[RT_B / 32];
    bool last_lng = false;
#endif
    for (unsigned long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        unsigned long long lo[RT_SEGS], hi[RT_SEGS];
        bool lng[RT_SEGS];
#pragma unroll
        for (unsigned int k = 0; k < RT_SEGS; k++) {
            const unsigned long long s = t * PER_SEGS + k * RT_B + tid;
            lo[k] = hi[k] = 0;
            if (s < nseg) {
                lo[k] = sc_off(offs, s, n, nseg);
                hi[k] = max(lo[k], sc_off(offs, s + 1, n, nseg));
            }
        }
#pragma unroll
        for (unsigned int k = 0; k < RT_SEGS; k++) {
#if PER_ESC
            lng[k] = t + gridDim.x >= ntiles && hi[k] - lo[k] > (unsigned long long)RT_LONG * RT_V;
            const unsigned int bal = __ballot_sync(SC_FULL, lng[k]);
            if (tid % 32 == 0)
                s_long[k][tid / 32] = bal;
            if (lng[k])
                hi[k] = lo[k];
            last_lng = last_lng || lng[k];
#else
            lng[k] = false;
#endif
        }
        rt_value_t x[RT_SEGS][RT_V] = {};
#pragma unroll
        for (unsigned int k = 0; k < RT_SEGS; k++)
#pragma unroll
            for (unsigned int j = 0; j < RT_V; j++)
                if (lo[k] + j < hi[k])
                    x[k][j] = in[lo[k] + j];
#pragma unroll
        for (unsigned int k = 0; k < RT_SEGS; k++) {
            rt_acc_t acc = rt_identity();
#pragma unroll
            for (unsigned int j = 0; j < RT_V; j++)
                if (lo[k] + j < hi[k])
                    acc = rt_combine(acc, rt_lift(x[k][j], lo[k] + j));
            if (hi[k] - lo[k] > RT_V) {
                const unsigned long long a = lo[k] + RT_V;
                acc = rt_combine(acc, per_group(in, a, hi[k], 0, (hi[k] - a + RT_V - 1) / RT_V));
            }
            const unsigned long long s = t * PER_SEGS + k * RT_B + tid;
            if (s < nseg && !lng[k])
                out[s] = rt_seg_out(acc);
        }
    }
#if PER_ESC
    if (__syncthreads_or(last_lng)) {   /* the barrier also publishes s_long */
        const unsigned long long t = blockIdx.x + (ntiles - 1 - blockIdx.x) / gridDim.x * gridDim.x;
        for (unsigned int k = 0; k < RT_SEGS; k++)
            for (unsigned int w = 0; w < RT_B / 32; w++)
                for (unsigned int m = s_long[k][w]; m; m &= m - 1)
                    per_long(in, offs, t * PER_SEGS + k * RT_B + w * 32 + __ffs(m) - 1, n, nseg, out, s_part);
    }
#endif
#else
    const unsigned int g = tid % PER_L;
#if RT_STAGE == 2
    __shared__ __align__(16) rt_value_t s_win[RT_B / 32][PER_WIN];
#endif
#if PER_ESC
    __shared__ unsigned int s_long[RT_B / 32];   /* per warp: the lanes whose group left its segment */
    __shared__ rt_acc_t s_part[RT_B / 32];
    bool last_lng = false;                       /* this thread's group left its last tile's segment */
#endif
#if PER_SPLIT
    const per_list list = per_list_at((void *)carry, n, nseg);
#endif
#if RT_GRID
    /* A grid that loops over the tiles: a tile's two offsets as stored, loaded an iteration
     * ahead (clamped when used; a segment below nseg is in a tile below ntiles). */
    sc_off_t na = 0, nb = 0;
    const unsigned long long s0 = (unsigned long long)blockIdx.x * PER_SEGS + tid / PER_L;
    if (s0 < nseg) {
        na = sc_off_raw(offs, s0, nseg);
        nb = sc_off_raw(offs, s0 + 1, nseg);
    }
#endif
    for (unsigned long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const unsigned long long s = t * PER_SEGS + tid / PER_L;
        unsigned long long lo = 0, hi = 0;
#if RT_GRID
        if (s < nseg) {
            lo = sc_off_in(na, n);
            hi = max(lo, sc_off_in(nb, n));
        }
        const unsigned long long sn = s + (unsigned long long)gridDim.x * PER_SEGS;
        if (sn < nseg) {   /* the next tile's, in flight meanwhile */
            na = sc_off_raw(offs, sn, nseg);
            nb = sc_off_raw(offs, sn + 1, nseg);
        }
#else
        if (s < nseg) {
            lo = sc_off(offs, s, n, nseg);
            hi = max(lo, sc_off(offs, s + 1, n, nseg));
        }
#endif
#if PER_ESC
        /* In the block's last tile (its only one unless ntiles exceeds the grid), a segment of
         * more than LONG rounds is left to the block, after the loop. */
#if PER_SPLIT
        /* Longer than LONG rounds: to the list, for rt_seg_split (any tile). */
        const bool spl = hi - lo > PER_LONGE;
        per_split_put(list, spl && g == 0, s, lo, hi, tid % 32);
#else
        const bool spl = false;
#endif
        const bool lng = !spl && t + gridDim.x >= ntiles && hi - lo > (unsigned long long)RT_LONG * (PER_L * RT_V);
        const unsigned int lb = __ballot_sync(SC_FULL, lng && g == 0);
        if (tid % 32 == 0)
            s_long[tid / 32] = lb;
        /* The warps with a segment left to the block or the grid load directly (STAGE = 2). */
        const unsigned int bal = PER_SPLIT ? __ballot_sync(SC_FULL, (lng || spl) && g == 0) : lb;
        const bool esc = lng || spl;
        (void)bal;
        if (esc)
            hi = lo;
        last_lng = lng;
#else
        const bool esc = false;
        const unsigned int bal = 0;   /* STAGE = 2 takes the window for every warp */
        (void)bal;
#endif
#if RT_STAGE == 2
        if (bal == 0) {   /* no long segment in the warp: its span through the window */
            const rt_acc_t v = per_window(in, lo, hi, s_win[tid / 32], tid % 32);
            if (s < nseg)
                out[s] = rt_seg_out(v);
            continue;
        }
#endif
        unsigned long long rounds = (hi - lo + PER_L * RT_V - 1) / (PER_L * RT_V);
        if (PER_L > 1)
            rounds = per_warp_max(rounds);
        const rt_acc_t v = per_group(in, lo, hi, g, rounds);
        if (g == 0 && s < nseg && !esc)
            out[s] = rt_seg_out(v);
    }
#if PER_ESC
    if (__syncthreads_or(last_lng)) {   /* the barrier also publishes s_long */
        const unsigned long long t = blockIdx.x + (ntiles - 1 - blockIdx.x) / gridDim.x * gridDim.x;
        for (unsigned int w = 0; w < RT_B / 32; w++)
            for (unsigned int m = s_long[w]; m; m &= m - 1)
                per_long(in, offs, t * PER_SEGS + (w * 32 + __ffs(m) - 1) / PER_L, n, nseg, out, s_part);
    }
#endif
#endif   /* RT_SEGS > 1 */
#endif
}

#if PER_SPLIT
/* The second launch of SPLIT (a resident grid, after rt_seg): job c of the list, for c = the
 * warp's index in the grid, + the grid's warps, ..., reduced by the warp (rounds of up to 16
 * bytes a lane, four in flight, each through the ordered tree). A segment of one chunk goes
 * to out[seg] at once; otherwise lane 0 stores the chunk's value in partials[c] and takes the
 * segment's ticket (co_ticket: release, acquire; it wraps to 0 for the next call), and the
 * warp that takes the last one folds the segment's partials (read from L2), lane l the l-th
 * contiguous part of them, four loads in flight, the parts through the ordered tree, into
 * out[seg]. Jobs that name no segment (invalid offsets) are skipped. */
extern "C" __global__ void __launch_bounds__(RT_B)
rt_seg_split(const rt_value_t *__restrict__ in, const void *seg, unsigned long long n, unsigned long long nseg,
             rt_acc_t *__restrict__ out, void *region)
{
    constexpr unsigned int VW = 16 / sizeof(rt_value_t) > 4 ? 4 : 16 / sizeof(rt_value_t);
    const sc_off_t *offs = (const sc_off_t *)seg;
    const per_list l = per_list_at(region, n, nseg);
    const unsigned int lane = threadIdx.x % 32;
    const unsigned long long nc = min(*l.taken, l.k), nw = (unsigned long long)gridDim.x * (RT_B / 32);
    const bool aligned = VW > 1 && (unsigned long long)in % (VW * sizeof(rt_value_t)) == 0;
    for (unsigned long long c = (unsigned long long)blockIdx.x * (RT_B / 32) + threadIdx.x / 32; c < nc; c += nw) {
        const per_job j = l.jobs[c];
        if (j.seg >= nseg)
            continue;
        const unsigned long long lo = sc_off(offs, j.seg, n, nseg);
        const unsigned long long hi = max(lo, sc_off(offs, j.seg + 1, n, nseg));
        const unsigned long long nch = (hi - lo + RT_SPLIT - 1) / RT_SPLIT;
        const unsigned long long a = min(hi, lo + (c - j.first) * RT_SPLIT), b = min(hi, a + RT_SPLIT);
        const rt_acc_t v = aligned ? per_walk<VW, 4>(in, a, b, lane) : per_walk<1, 4>(in, a, b, lane);
        if (nch <= 1) {
            if (lane == 0)
                out[j.seg] = rt_seg_out(v);
            continue;
        }
        unsigned int last = 0;
        if (lane == 0) {
            l.partials[c] = v;
            last = co_ticket(l.tickets + j.first, (unsigned int)(nch - 1)) == nch - 1;
        }
        if (!__shfl_sync(SC_FULL, last, 0))
            continue;
        __syncwarp();   /* the other lanes' reads after lane 0's acquire */
        const unsigned long long m = (nch + 31) / 32, p0 = min(nch, lane * m), p1 = min(nch, p0 + m);
        const rt_acc_t *p = l.partials + j.first;
        rt_acc_t acc = rt_identity();
        unsigned long long i = p0;
        for (; i + 4 <= p1; i += 4) {
            rt_acc_t x[4];
#pragma unroll
            for (unsigned int u = 0; u < 4; u++)
                x[u] = co_load_partial(p + i + u);
#pragma unroll
            for (unsigned int u = 0; u < 4; u++)
                acc = rt_combine(acc, x[u]);
        }
        for (; i < p1; i++)
            acc = rt_combine(acc, co_load_partial(p + i));
        acc = co_warp_tree<32>(acc);
        if (lane == 0)
            out[j.seg] = rt_seg_out(acc);
    }
}
#endif
