// @family      seg_pipe
// @summary     segmented, offsets: a thread (or a group of LANES) per segment (SEGS a group, B/LANES*SEGS a tile) reducing from shared memory, into which a resident block copies each tile's whole span of elements with cp.async one tile ahead (the offsets two tiles ahead), so that the next tile's loads are in flight while this one is reduced
// @plan        segmented
// @layout      offsets
// @balanced    no
// @commutative not-required
// @deterministic yes
// @param LAYOUT 2 1: keys, 2: offsets (this family implements offsets only)
// @param OFF64 0 offsets are 32-bit (0) or 64-bit (1)
// @param B 256 threads per block (multiple of 32, 32..1024)
// @param SEGS 2 segments a group in a tile (1..8): group i takes the tile's segments i, i + B/LANES, ..., so that loads of offsets and stores of results are coalesced
// @param LANES 1 threads per segment (1, 2, 4, 8, 16, 32): lane l of a group folds the l-th contiguous part of its segment, and the parts meet in the group's ordered shuffle tree (segments of tens of elements: a warp waits for its longest part, not its longest segment)
// @param V 4 elements a copy from global to shared memory (1, 2, 4, 8, 16): one cp.async where V elements are 4, 8 or 16 bytes, else plain loads; V > 1 needs `in` aligned to V elements, so the runtime library must pick V = 1 for pointers it cannot vouch for
// @param RV 1 elements a thread reads from shared memory at once in its segment (1, 2, 4; RV elements at most 16 bytes): its head up to a multiple of RV one by one, then RV at a time
// @param KB 16 kilobytes of elements a stage (two stages: the tile being reduced, the next one in flight; less where two stages and three slots of B*SEGS+1 offsets would pass 48 KB); the part of a tile's span past its stage is read from global memory by the threads whose segments lie there
// @param H 0 elements at the start of a thread's segment folded without a branch (0..8; reads of the stage clamped into it, a select keeps what lies in the segment): a segment of up to H elements costs no loop, so that short segments of unequal length do not diverge
// @param NZ 0 1: a segment's elements in the stage folded from its first element on with the glue's rt_fold_nz where the operator has one (float min and max: fmin alone an element, no NaN test of the lift and no marker tests of the combine; H = 0 only); 0 (or another operator): every element lifted and combined
// @param LONG 128 a segment of more than LONG elements is reduced by the whole block after the tile's others (warps over contiguous parts, ordered trees), not by its thread; 0: every segment by its thread
//
// seg_pipe.cu - segmented reduction over offsets for short segments (a few to a few hundred
// elements): a thread per segment, as seg_per LANES = 1, but reading its segment from shared
// memory that the block fills a tile ahead (docs/templates_segmented.md, "seg_pipe").
//
// Tiles are B/LANES*SEGS consecutive segments, a group of LANES threads each (1: a thread);
// the grid is resident (as many blocks as fit, from the
// occupancy of the compiled kernel: shared memory decides it) and block g takes tiles g,
// g + grid, ... A tile's elements are one span [offsets[s0], offsets[s0 + cnt]) of memory. Each
// block runs a three-step pipeline with cp.async groups, all of it in shared memory and none
// in registers:
//   - the offsets of tile j + 2 (cnt + 1 entries, coalesced) are in flight,
//   - the span of tile j + 1 (V elements a copy, from the multiple of V at or below its start,
//     at most KB kilobytes) is in flight,
//   - tile j is reduced: group i folds its segments' elements from the stage in order (rt_lift
//     with each element's index, rt_combine with the lower index on the left; with LANES > 1
//     lane l the l-th contiguous part, the parts through the group's ordered shuffle tree) and
//     stores out[s0 + i + k*B/LANES] (coalesced), the identity for an empty segment.
// One barrier a tile at its top (with LONG > 0 a second, LONG's __syncthreads_or), after the
// wait for the copies of tile j (issued during tile j - 1), which also covers the offsets of
// tile j + 1; the copies for j + 1 and j + 2 are then issued into the stage and the offsets
// slot that tile j - 1 used. Offsets are kept raw in shared memory (three slots: tiles j,
// j + 1, j + 2; 16-byte copies where aligned) and clamped where read: the tile's first and last
// into [0, n], a segment's bounds into the tile's span, as positions relative to the stage's
// start (32-bit with 32-bit offsets).
//
// A span longer than a stage (a tile with a long segment, or whose segments are long on
// average) has only its first KB kilobytes in the stage; a thread whose segment lies past them
// reads that part from global memory itself. With LONG > 0 a segment of more than LONG
// elements is left by its thread (a ballot a warp, one __syncthreads_or a tile) to the whole
// block, after the tile's others: warp w reduces the w-th contiguous part of it in rounds of 32
// elements through the ordered warp tree, and the parts meet in warp 0's tree. So a long
// segment costs a block's read of it, not one thread's walk, and its rounding error grows with
// its length over the block rather than with its length (a serial sum of 987 f64 near 1e8
// missed the tuner's bound by 1.55x, which scaled by the square root of the length leaves
// 256 at the bound: LONG is 128 by default; the H200's rows were tuned with 256). The family is for short segments all the same: a block reads a
// long segment at eight loads in flight a thread, with the pipeline stalled meanwhile.
//
// Reads stay in [0, n): a span ends at a clamped offset, and a copy whose V elements pass n
// takes only those below it (cp.async's source size: the rest of the vector is zero in shared
// memory and never read). Unsorted offsets fault nothing: each segment is clipped to its
// tile's span [start, end] (its value is then unspecified), and only out[0 .. nseg) is written.

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
#ifndef RT_SEGS
#define RT_SEGS 2    /* segments a group in a tile */
#endif
#ifndef RT_LANES
#define RT_LANES 1   /* threads per segment */
#endif
#ifndef RT_V
#define RT_V 4       /* elements a copy */
#endif
#ifndef RT_RV
#define RT_RV 1      /* elements a read of the stage */
#endif
#ifndef RT_KB
#define RT_KB 16     /* kilobytes of elements a stage */
#endif
#ifndef RT_LONG
#define RT_LONG 128  /* longer segments to the whole block; 0: none */
#endif
#ifndef RT_H
#define RT_H 0       /* elements folded without a branch first */
#endif
#ifndef RT_NZ
#define RT_NZ 0      /* fold from the first element with rt_fold_nz (float min, max) */
#endif

#include "seg_common.cuh"
/* co_warp_tree: LONG's and LANES' ordered trees (inlined by the generator). */
#include "collectives.cuh"

static_assert(RT_LAYOUT == 2, "seg_pipe: offsets only (LAYOUT = 2)");
static_assert(RT_B >= 32 && RT_B <= 1024 && RT_B % 32 == 0, "seg_pipe: B must be a multiple of 32 in 32..1024");
static_assert(RT_SEGS >= 1 && RT_SEGS <= 8, "seg_pipe: SEGS is 1..8");
static_assert(RT_LANES == 1 || RT_LANES == 2 || RT_LANES == 4 || RT_LANES == 8 || RT_LANES == 16 || RT_LANES == 32,
              "seg_pipe: LANES is 1, 2, 4, 8, 16 or 32");
static_assert(RT_V == 1 || RT_V == 2 || RT_V == 4 || RT_V == 8 || RT_V == 16, "seg_pipe: V is 1, 2, 4, 8 or 16");
static_assert(RT_RV == 1 || RT_RV == 2 || RT_RV == 4, "seg_pipe: RV is 1, 2 or 4");
static_assert(RT_LONG >= 0, "seg_pipe: LONG is 0 or more");
static_assert(RT_H >= 0 && RT_H <= 8, "seg_pipe: H is 0..8");
static_assert(RT_KB >= 1 && RT_KB <= 20, "seg_pipe: KB is 1..20");
static_assert(RT_NZ == 0 || RT_NZ == 1, "seg_pipe: NZ is 0 or 1");

#define SP_NG (RT_B / RT_LANES)   /* groups a block */
#define SP_EPV (16u / (unsigned int)sizeof(sc_off_t))   /* offsets a 16-byte copy */
/* The smallest stage: 16 copies of V, and at least 64 elements. */
#define SP_MINSTAGE ((16u * RT_V > 64u ? 16u * RT_V : 64u) * (unsigned int)sizeof(rt_value_t))
/* Segments a group in a tile: SEGS, or fewer where three slots of offsets would leave less
 * than two of the smallest stage (and 1 KB for the rest) in 48 KB: 64-bit offsets for a config
 * tuned with 32-bit ones (the runtime sets OFF64 from the call; B = 256, SEGS = 8 takes 7). The
 * tile's size in rt_meta follows, so the host's tiles do too. */
static constexpr unsigned int sp_segs_fit()
{
    unsigned int s = RT_SEGS;
    while (s > 1u && 3u * ((SP_NG * s + SP_EPV) / SP_EPV * SP_EPV) * (unsigned int)sizeof(sc_off_t)
                         + 1024u + 2u * SP_MINSTAGE > 48u * 1024u)
        s--;
    return s;
}
static constexpr unsigned int sp_segs = sp_segs_fit();
#define SP_SEGS sp_segs
#define SP_S (SP_NG * SP_SEGS)     /* segments a tile */
/* A slot of offsets: B/LANES*SEGS+1 entries, padded to whole 16-byte vectors. */
#define SP_SLOT ((SP_S + 1u + SP_EPV - 1u) / SP_EPV * SP_EPV)
/* Bytes a stage: KB kilobytes, or less where the two stages, the three slots of offsets and
 * 1 KB for the rest (LONG's ballots and parts) would pass the 48 KB of static shared memory
 * (64-bit offsets for a config tuned with 32-bit ones: the runtime sets OFF64 from the call). */
#define SP_OFFB (3u * SP_SLOT * (unsigned int)sizeof(sc_off_t) + 1024u)
#define SP_AVAIL (SP_OFFB < 48u * 1024u ? (48u * 1024u - SP_OFFB) / 2u : 0u)
#define SP_STAGEB (RT_KB * 1024u < SP_AVAIL ? RT_KB * 1024u : SP_AVAIL)
/* Elements a stage: whole copies of V. */
#define SP_CAP ((SP_STAGEB / (unsigned int)sizeof(rt_value_t)) / RT_V * RT_V)
static_assert(SP_CAP >= 16 * RT_V && SP_CAP >= 64,
              "seg_pipe: three slots of B*SEGS+1 offsets leave too little of 48 KB for two stages");

/* rt_meta: a tile of B*SEGS segments (unit 2: every out[s] stored once, no carries); a resident
 * grid, its blocks per SM from the occupancy of the compiled kernel. */
extern "C" __device__ const unsigned int rt_meta[4] = {RT_B, SP_S, 0xffffffffu, 2u};

static __shared__ __align__(16) rt_value_t sp_val[2][SP_CAP];   /* the stages */
static __shared__ __align__(16) sc_off_t sp_off[3][SP_SLOT];    /* the offsets' slots */

/* A position in a tile's span, relative to its first window: 32-bit with 32-bit offsets (n <
 * 2^31, the caller's rule), so that a segment's bounds cost no 64-bit compares. */
#if RT_OFF64
typedef unsigned long long sp_rel_t;
#else
typedef unsigned int sp_rel_t;
#endif

#if __CUDA_ARCH__ >= 800
#define SP_ASYNC 1
#else
#define SP_ASYNC 0   /* before sm_80: plain loads and stores, the pipeline's waits are no-ops */
#endif

/* NB bytes from global to shared memory (NB = 4, 8 or 16; both addresses aligned to NB), of
 * which the first `have` are read and the rest zero-filled: one cp.async (16 bytes through L2
 * only). */
template <unsigned int NB>
static __device__ __forceinline__ void sp_cp(void *dst, const void *src, unsigned int have)
{
#if SP_ASYNC
    sc_cp_async<NB, true>(dst, src, have);
#else
    for (unsigned int k = 0; k < NB; k++)
        ((unsigned char *)dst)[k] = k < have ? ((const unsigned char *)src)[k] : 0;
#endif
}

/* The copies issued since the last commit are one group. */
static __device__ __forceinline__ void sp_commit()
{
#if SP_ASYNC
    asm volatile("cp.async.commit_group;" : : : "memory");
#endif
}

/* Every group this thread committed has landed (visible to the block after a barrier). */
static __device__ __forceinline__ void sp_wait()
{
#if SP_ASYNC
    asm volatile("cp.async.wait_group 0;" : : : "memory");
#endif
}

/* Tile t's offsets (entries s0 .. s0 + cnt, cnt = its segments below nseg) into a slot:
 * 16-byte copies where the first is aligned (then the rest one by one); nothing past the last
 * tile. */
static __device__ __forceinline__ void sp_issue_off(const sc_off_t *offs, unsigned long long t, unsigned long long ntiles,
                                                    unsigned long long nseg, sc_off_t *slot)
{
    if (t >= ntiles)
        return;
    const unsigned long long s0 = t * SP_S;   /* <= nseg (t < ntiles) */
    const unsigned int m = (nseg - s0 < SP_S ? (unsigned int)(nseg - s0) : SP_S) + 1u;   /* entries */
    const sc_off_t *src = offs + s0;
    unsigned int e = 0;
    if (((unsigned long long)src & 15u) == 0) {
        const unsigned int full = m / SP_EPV;
#pragma unroll
        for (unsigned int r = 0; r < (SP_SLOT / SP_EPV + RT_B - 1) / RT_B; r++) {
            const unsigned int q = threadIdx.x + r * RT_B;
            if (q < full)
                sp_cp<16>(slot + q * SP_EPV, src + q * SP_EPV, 16u);
        }
        e = full * SP_EPV;
    }
    for (e += threadIdx.x; e < m; e += RT_B)
        sp_cp<sizeof(sc_off_t)>(slot + e, src + e, (unsigned int)sizeof(sc_off_t));
}

/* in[w0 .. w0 + len) into a stage (w0 a multiple of V, len <= SP_CAP, w0 + len <= n), by all
 * threads, a copy of V elements each, the last copy cut at n. */
static __device__ __forceinline__ void sp_issue_val(const rt_value_t *__restrict__ in, unsigned long long w0,
                                                    unsigned int len, unsigned long long n, rt_value_t *stage)
{
    constexpr unsigned int VB = RT_V * sizeof(rt_value_t);
    const unsigned int nv = (len + RT_V - 1) / RT_V;
    const unsigned int rem = n - w0 < 0xffffffffull ? (unsigned int)(n - w0) : 0xffffffffu;   /* >= len */
    const rt_value_t *src = in + w0;
    /* At most SP_CAP / V copies: a fixed number of rounds of B, each predicated. */
#pragma unroll
    for (unsigned int r = 0; r < (SP_CAP / RT_V + RT_B - 1) / RT_B; r++) {
        const unsigned int q = threadIdx.x + r * RT_B, e = q * RT_V;   /* e < len <= rem */
        if (q < nv) {
            const unsigned int have = rem - e < RT_V ? rem - e : RT_V;
            if constexpr (VB == 4 || VB == 8 || VB == 16) {
                sp_cp<VB>(stage + e, src + e, have * (unsigned int)sizeof(rt_value_t));
            } else {
                for (unsigned int k = 0; k < have; k++)
                    stage[e + k] = src[e + k];
            }
        }
    }
}

/* A tile as every thread of the block sees it (read from its offsets' slot after the barrier
 * that follows their copy). */
struct sp_tile {
    unsigned long long s0;    /* its first segment */
    unsigned long long base;  /* its span's start rounded down to a multiple of V: the first window */
    sp_rel_t span;            /* its span's end, relative to base */
    unsigned int cnt;         /* its segments (below nseg) */
    unsigned int len;         /* the first window's elements: min(span, SP_CAP) */
};

static __device__ __forceinline__ unsigned long long sp_clamp(sc_off_t o, unsigned long long n)
{
    return o < 0 ? 0ull : (unsigned long long)o > n ? n : (unsigned long long)o;
}

/* An offset relative to g.base, clamped into [0, g.span]. */
static __device__ __forceinline__ sp_rel_t sp_rel(sc_off_t o, const sp_tile &g)
{
    const sc_off_t b = (sc_off_t)g.base;   /* <= n: fits (32-bit offsets: n < 2^31) */
    const sp_rel_t d = o > b ? (sp_rel_t)(o - b) : (sp_rel_t)0;
    return d < g.span ? d : g.span;
}

static __device__ __forceinline__ sp_tile sp_geometry(const sc_off_t *slot, unsigned long long t, unsigned long long n,
                                                      unsigned long long nseg)
{
    sp_tile g;
    g.s0 = t * SP_S;
    const unsigned long long left = nseg - g.s0;   /* t < ntiles: s0 < nseg, or nseg = 0 */
    g.cnt = nseg > g.s0 ? (left < SP_S ? (unsigned int)left : SP_S) : 0u;
    const unsigned long long lo = g.cnt ? sp_clamp(slot[0], n) : 0ull;
    const unsigned long long end = g.cnt ? sp_clamp(slot[g.cnt], n) : 0ull;
    g.base = lo / RT_V * RT_V;
    g.span = (sp_rel_t)((end > lo ? end : lo) - g.base);
    g.len = g.span < SP_CAP ? (unsigned int)g.span : SP_CAP;
    return g;
}

/* Elements a read of the stage: RV, at most 16 bytes (fewer for wide types). */
#define SP_RV ((unsigned int)(RT_RV * sizeof(rt_value_t) <= 16 ? RT_RV : 16 / sizeof(rt_value_t) > 0 ? 16 / sizeof(rt_value_t) : 1))

/* NZ applies: the operator's glue has rt_fold_nz, and no head of H is folded first. */
#define SP_NZ (RT_NZ && RT_FOLD_NZ && RT_H == 0)   /* sc_fold_step<SP_NZ> */

/* acc folded with stage[i .. e) in order (element k of the stage is in[w0 + k], i < e): with
 * NZ the first element lifted (acc is the identity here: sp_reduce's start of a segment or of
 * a lane's part) and the others folded into it by rt_fold_nz; else the first H without a
 * branch; then one by one up to a multiple of SP_RV, SP_RV at a time in one read, and the
 * rest. */
static __device__ __forceinline__ rt_acc_t sp_fold(rt_acc_t acc, const rt_value_t *stage, unsigned long long w0,
                                                   unsigned int i, unsigned int e)
{
#if SP_NZ
    acc = rt_lift(stage[i], w0 + i);
    i++;
#endif
#if RT_H > 0
    /* The first H without a branch: every read inside the stage, a select keeps those below e. */
#pragma unroll
    for (unsigned int j = 0; j < RT_H; j++) {
        const unsigned int p = i + j;
        const rt_value_t x = stage[p < SP_CAP ? p : SP_CAP - 1];
        const rt_acc_t c = rt_combine(acc, rt_lift(x, w0 + p));
        acc = p < e ? c : acc;
    }
    i = e - i < RT_H ? e : i + RT_H;
#endif
    if constexpr (SP_RV > 1) {
        constexpr unsigned int RB = SP_RV * sizeof(rt_value_t);
        typedef typename sc_pick<RB == 16, uint4, typename sc_pick<RB == 8, uint2, unsigned int>::type>::type vt;
        const unsigned int h = min(e, (i + SP_RV - 1) / SP_RV * SP_RV);
        for (; i < h; i++)
            acc = sc_fold_step<SP_NZ>(acc, stage[i], w0 + i);
        for (; i + SP_RV <= e; i += SP_RV) {
            rt_value_t x[SP_RV];
            if constexpr (RB == 4 || RB == 8 || RB == 16) {
                const vt v = *(const vt *)(stage + i);
                memcpy(x, &v, RB);
            } else {
#pragma unroll
                for (unsigned int k = 0; k < SP_RV; k++)
                    x[k] = stage[i + k];
            }
#pragma unroll
            for (unsigned int k = 0; k < SP_RV; k++)
                acc = sc_fold_step<SP_NZ>(acc, x[k], w0 + i + k);
        }
    }
    for (; i < e; i++)
        acc = sc_fold_step<SP_NZ>(acc, stage[i], w0 + i);
    return acc;
}

#if RT_LONG > 0
/* Per tile: each warp's ballot of the threads whose k-th segment is long (more than LONG
 * elements), and the warps' parts of one long segment. */
static __shared__ unsigned int sp_long[SP_SEGS][RT_B / 32];
static __shared__ rt_acc_t sp_part[RT_B / 32];

/* out[s] = in[a .. b) reduced in order by the whole block (every thread calls it): warp w
 * takes the w-th of B/32 contiguous parts, in rounds of 32 elements (eight rounds' loads in
 * flight), each round through the ordered warp tree and folded by lane 0; the parts meet in
 * warp 0's ordered tree. */
static __device__ __forceinline__ void sp_long_seg(const rt_value_t *__restrict__ in, unsigned long long a,
                                                   unsigned long long b, rt_acc_t *__restrict__ dst)
{
    constexpr unsigned int NW = RT_B / 32, U = 8;
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const unsigned long long c = (b - a + NW - 1) / NW;
    const unsigned long long lo = a + warp * c < b ? a + warp * c : b, hi = lo + c < b ? lo + c : b;
    rt_acc_t acc = rt_identity();
    for (unsigned long long p = lo; p < hi; p += 32 * U) {
        rt_value_t x[U];
#pragma unroll
        for (unsigned int u = 0; u < U; u++) {
            const unsigned long long i = p + u * 32 + lane;
            x[u] = i < hi ? in[i] : (rt_value_t)0;
        }
#pragma unroll
        for (unsigned int u = 0; u < U; u++) {
            const unsigned long long i = p + u * 32 + lane;
            acc = rt_combine(acc, co_warp_tree<32>(i < hi ? rt_lift(x[u], i) : rt_identity()));
        }
    }
    if (lane == 0)
        sp_part[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        const rt_acc_t v = co_warp_tree<32>(lane < NW ? sp_part[lane] : rt_identity());
        if (lane == 0)
            *dst = rt_seg_out(v);
    }
    __syncthreads();   /* sp_part is rewritten by the next long segment */
}
#endif

/* Tile g (offsets in slot, its first window in stage): every thread's SEGS segments reduced
 * in order and stored; the part of a segment past the stage from global memory by its
 * thread; with LONG, segments of more than LONG elements by the whole block after the others
 * (uniform across the block: g is). */
static __device__ __forceinline__ void sp_reduce(const rt_value_t *__restrict__ in, rt_acc_t *__restrict__ out,
                                                 const sp_tile &g, const sc_off_t *slot, const rt_value_t *stage)
{
    const rt_value_t *src = in + g.base;
    const unsigned int grp = threadIdx.x / RT_LANES, lane = threadIdx.x % RT_LANES;
#if RT_LONG > 0
    bool any_long = false;
#endif
    (void)grp;
    (void)lane;
#pragma unroll
    for (unsigned int k = 0; k < SP_SEGS; k++) {
#if RT_LANES == 1
        const unsigned int e = threadIdx.x + k * RT_B;
#else
        const unsigned int e = grp + k * SP_NG;
#endif
        sp_rel_t a = 0, b = 0;
        if (e < g.cnt) {
            /* Clipped to the span: only unsorted offsets leave it. */
            a = sp_rel(slot[e], g);
            b = sp_rel(slot[e + 1], g);
            b = b < a ? a : b;
        }
#if RT_LONG > 0
        const bool lng = b - a > RT_LONG;
        const unsigned int bal = __ballot_sync(SC_FULL, lng && lane == 0);
        if (threadIdx.x % 32 == 0)
            sp_long[k][threadIdx.x / 32] = bal;
        any_long = any_long || lng;
#if RT_LANES == 1
        if (lng)
            continue;
#else
        if (lng)
            b = a;   /* the group still meets in the tree below */
#endif
#else
        const bool lng = false;
        (void)lng;
#endif
#if RT_LANES > 1
        /* Lane l's contiguous part of the segment. */
        const sp_rel_t c = (b - a + RT_LANES - 1) / RT_LANES;
        const sp_rel_t pa = a + lane * c < b ? a + lane * c : b;
        b = pa + c < b ? pa + c : b;
        a = pa;
#endif
        rt_acc_t acc = rt_identity();
        const sp_rel_t m = b < g.len ? b : g.len;
        if (a < m)
            acc = sp_fold(acc, stage, g.base, (unsigned int)a, (unsigned int)m);
        for (sp_rel_t i = a > g.len ? a : g.len; i < b; i++)   /* past the stage */
            acc = rt_combine(acc, rt_lift(src[i], g.base + i));
#if RT_LANES > 1
        acc = co_warp_tree<RT_LANES>(acc);   /* every lane of the warp, converged */
        if (lane == 0 && e < g.cnt && !lng)
            out[g.s0 + e] = rt_seg_out(acc);
#else
        if (e < g.cnt)
            out[g.s0 + e] = rt_seg_out(acc);
#endif
    }
#if RT_LONG > 0
    if (__syncthreads_or(any_long)) {   /* the barrier also publishes sp_long */
        for (unsigned int k = 0; k < SP_SEGS; k++)
            for (unsigned int w = 0; w < RT_B / 32; w++)
                for (unsigned int bits = sp_long[k][w]; bits; bits &= bits - 1) {
#if RT_LANES == 1
                    const unsigned int e = k * RT_B + w * 32 + __ffs(bits) - 1;
#else
                    const unsigned int e = k * SP_NG + (w * 32 + __ffs(bits) - 1) / RT_LANES;
#endif
                    const sp_rel_t a = sp_rel(slot[e], g), b = sp_rel(slot[e + 1], g);
                    sp_long_seg(in, g.base + a, g.base + (b < a ? a : b), out + g.s0 + e);
                }
    }
#endif
}

extern "C" __global__ void __launch_bounds__(RT_B)
rt_seg(const rt_value_t *__restrict__ in, const void *seg, unsigned long long n, unsigned long long nseg,
       rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry, unsigned long long ntiles)
{
    (void)carry;   /* unit 2: no carries */
    const sc_off_t *offs = (const sc_off_t *)seg;
    unsigned long long t = blockIdx.x;
    if (t >= ntiles)
        return;   /* the whole block: the grid is at most ntiles */
    const unsigned long long step = gridDim.x;
    /* The prologue: tile t's offsets, then its first window and the next tile's offsets. */
    sp_issue_off(offs, t, ntiles, nseg, sp_off[0]);
    sp_commit();
    sp_wait();
    __syncthreads();
    sp_tile g = sp_geometry(sp_off[0], t, n, nseg);
    sp_issue_val(in, g.base, g.len, n, sp_val[0]);
    sp_commit();
    sp_issue_off(offs, t + step, ntiles, nseg, sp_off[1]);
    sp_commit();
    for (unsigned int j = 0; t < ntiles; t += step, j++) {
        /* Tile j's window and tile j + 1's offsets have landed; everyone is done with tile
         * j - 1's stage and slot, which the copies below reuse. */
        sp_wait();
        __syncthreads();
        const unsigned int os = j % 3, vs = j & 1;
        sp_tile gn = g;
        if (t + step < ntiles) {
            gn = sp_geometry(sp_off[(j + 1) % 3], t + step, n, nseg);
            sp_issue_val(in, gn.base, gn.len, n, sp_val[vs ^ 1]);
        }
        sp_commit();
        sp_issue_off(offs, t + 2 * step, ntiles, nseg, sp_off[(j + 2) % 3]);
        sp_commit();
        sp_reduce(in, out, g, sp_off[os], sp_val[vs]);
        g = gn;
    }
}
