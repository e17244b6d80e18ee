// @family      seg_stream
// @summary     segmented, offsets: a resident grid, each warp streaming its own contiguous chunk of the elements in 32*R-element tiles (PF: the next tile's elements in flight during the walk); a tile's starts come from a window of the offsets that follows the previous tile's (no search per tile), its outputs are staged and stored coalesced; no block barrier but one at the end, where the warps' runs are stitched (one carry per block)
// @plan        segmented
// @layout      offsets
// @balanced    yes
// @commutative not-required
// @deterministic yes
// @param LAYOUT 2 1: keys, 2: offsets (this family implements offsets only)
// @param OFF64 0 offsets are 32-bit (0) or 64-bit (1)
// @param B 256 threads per block (multiple of 32, 128..1024)
// @param R 16 consecutive elements per thread in a tile (1..32)
// @param V 4 elements per vector load (1, 2, 4; R a multiple of V): V > 1 needs `in` aligned to V elements; the runtime library must pick V = 1 for pointers it cannot vouch for
// @param PF 1 1: the next tile's elements are loaded (into a second set of registers) before a tile is walked, so memory stays busy during the walk; 0: after it (fewer registers)
// @param MINW 0 warps per SM the kernel asks the register allocator to make room for (__launch_bounds__: 32 gives at most 64 registers, 24 at most 80, 16 at most 128; 0: no bound): occupancy against spills
// @param WS 0 the window: a warp keeps up to (32*R >> WS) segment starts of a tile in shared memory (fewer where the block's 44 KB do not hold them with their outputs); a tile with more reads its starts from global memory (correct, slow: runs of empty segments, segments of one element)
// @param CH 0 0: the resident grid (SMs x occupancy), each block one contiguous chunk of n; k = 1..64: as many blocks as n has chunks of k tiles a warp (k*32*R elements), scheduled by the hardware as blocks finish, so a block whose chunk is dense in segments holds up its SM and not the whole grid's end (heavy tails); small n leave SMs idle
//
// seg_stream.cu - segmented reduction over offsets with the elements streamed as a flat
// reduction streams them (docs/segmented.md, "seg_stream").
//
// The grid is the resident one (SMs x occupancy; CH > 0: a block per CH tiles a warp, as many
// as n needs). Block g owns the elements [g*n/G, (g+1)*n/G) (cut at multiples of V), and each
// of its NW = B/32 warps a contiguous NW-th of that, which it walks in order in tiles of
// 32*R: lane l holds the R consecutive elements a + l*R .. (R/V aligned vectors). A tile's
// segment starts are offsets[s_lo ..] where s_lo,
// the number of offsets below the tile's first element, is found once per warp (a 32-way
// search at its first element) and then advanced by the starts each tile had. The warp keeps
// a window of the offsets from s_lo in its part of shared memory; c, the starts in the tile
// [a, b), comes from a binary search there. As soon as c is known the warp issues the loads
// of the next tile's elements into a second set of registers (PF = 1), so that memory is busy
// while the tile is walked. A tile with no start is reduced as one run (an ordered tree).
// Otherwise each distinct start position (the last of equal starts: the segment with
// elements; the others are empty) sets a bit in the mask of the lane that holds it and gets a
// rank (its order among the tile's distinct starts), and every lane walks its R elements with
// one bit test each and no branch: at a start the run before it is complete and goes to its
// rank's slot (the lane's first such run waits for the warp's segmented scan).
//
// Outputs: the tile owns the segments that start in it, s_lo .. s_lo + c - 1, and stores them
// coalesced, each from its rank's slot (the identity for an empty one, through the table of
// ranks). The last of them is open at the tile's end: its value (the scan's total) goes on
// in registers as the next tile's scan init, and is stored when a later start closes it. The
// warp's first run (elements before its first start) is kept for the end: there the block
// stitches its warps in order (one barrier; thread 0 walks NW records), storing the runs that
// cross warps, and the block's first run, when its segment began before the block, is the
// block's carry (carry[g]); rt_seg_fix folds the G carries (the others, up to the host's tile
// count, are RT_SEG_NONE). The block that owns n also writes the segments that start at n.
//
// A tile with more than W starts (W = 32*R >> WS, capped by shared memory) reads them from
// global memory instead and stores every output directly: the same walk, slower, and correct
// for any number of empty segments. Unsorted offsets end every search and loop (all reads are
// clamped, all counts bounded) and store only into out[0 .. nseg).

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
#ifndef RT_R
#define RT_R 16      /* consecutive elements per thread in a tile */
#endif
#ifndef RT_V
#define RT_V 4       /* elements per vector load */
#endif
#ifndef RT_WS
#define RT_WS 0      /* window: 32*R >> WS starts per warp in shared memory */
#endif
#ifndef RT_PF
#define RT_PF 1      /* 1: the next tile's elements are loaded before a tile is walked */
#endif
#ifndef RT_MINW
#define RT_MINW 0    /* warps per SM asked of the register allocator; 0: none */
#endif
#ifndef RT_CH
#define RT_CH 0      /* 0: the resident grid; k: a block per k tiles a warp, as many as n needs */
#endif

#include "seg_common.cuh"
#include "seg_search.cuh"
/* co_warp_tree<32>: the ordered warp tree of a tile without a segment start (lane 0 gets the
 * lanes combined in order; inlined by the generator). */
#include "collectives.cuh"

static_assert(RT_LAYOUT == 2, "seg_stream: offsets only (LAYOUT = 2)");
static_assert(RT_B >= 128 && RT_B <= 1024 && RT_B % 32 == 0, "seg_stream: B must be a multiple of 32 in 128..1024");
static_assert(RT_R >= 1 && RT_R <= 32, "seg_stream: R must be in 1..32");
static_assert((RT_V == 1 || RT_V == 2 || RT_V == 4) && RT_R % RT_V == 0, "seg_stream: V is 1, 2 or 4 and divides R");
static_assert(RT_WS >= 0 && RT_WS <= 4, "seg_stream: WS is 0..4");
static_assert(RT_PF == 0 || RT_PF == 1, "seg_stream: PF is 0 or 1");
static_assert(RT_MINW >= 0 && RT_MINW <= 64, "seg_stream: MINW is 0..64");
static_assert(RT_CH >= 0 && RT_CH <= 64, "seg_stream: CH is 0..64");

#define SS_NW (RT_B / 32)     /* warps per block */
#define SS_T (32 * RT_R)       /* elements per warp tile */
/* __launch_bounds__' blocks per SM: MINW warps (registers: 64 for 32, 80 for 24, 128 for 16) */
#define SS_MINB (RT_MINW * 32 / RT_B > 1 ? RT_MINW * 32 / RT_B : 1)

#if RT_OFF64
typedef unsigned long long ss_pos_t;
#else
typedef unsigned int ss_pos_t;   /* clamped offsets: below 2^31 */
#endif

/* A warp's window: W starts, W outputs (by rank) and the rank of each start (2 bytes),
 * plus one start (to see the first one past the tile), the 32 lanes' boundary masks (128
 * bytes) and its stitch record (two accumulators, two keys, a flag; 8 bytes of slack for
 * alignment); the block's NW of them in at most 44 KB. */
#define SS_FIT (((44 * 1024 - 16) / SS_NW - 128 - 3 * sizeof(rt_acc_t) - 20 - 8) \
                / (sizeof(ss_pos_t) + sizeof(rt_acc_t) + 2) - 1)
#define SS_W ((SS_T >> RT_WS) < SS_FIT ? (SS_T >> RT_WS) : SS_FIT)
static_assert(SS_W >= 32, "seg_stream: the accumulator is too large for a window of 32 starts per warp");

/* The warps' windows, at file scope so that the helpers index them by name (a constant shared
 * address plus the warp's offset; through a pointer the compiler rebuilt the address at every
 * access where registers were short): starts, outputs by rank (one spare slot: the walk's
 * stores that keep nothing), the rank of each start, the lanes' masks. */
static __shared__ ss_pos_t ss_sw[SS_NW][SS_W + 1];
static __shared__ rt_acc_t ss_so[SS_NW][SS_W + 1];
static __shared__ unsigned short ss_rk[SS_NW][SS_W];
static __shared__ unsigned int ss_msk[SS_NW][32];

/* rt_meta: a "tile" of B*R elements, so that the host's carry array (one per tile) holds one
 * carry per block of the resident grid; with CH, a tile of CH*B*R elements and no cap on the
 * grid: a block per tile, each warp CH tiles of its own, the blocks scheduled by the hardware
 * as earlier ones finish (the grid cuts n the same way: block g owns [g*n/G, (g+1)*n/G)). */
#if RT_CH
extern "C" __device__ const unsigned int rt_meta[4] = {RT_B, RT_B * RT_R * RT_CH, 0u, 0u};
#else
extern "C" __device__ const unsigned int rt_meta[4] = {RT_B, RT_B * RT_R, 0xffffffffu, 0u};
#endif

/* A tile's starts in global memory (the tile with more than the window holds): st(w) =
 * offsets[s_lo + w] (clamped), w <= nseg - s_lo. (The window's are counted by ss_below.) */
struct ss_starts {
    const sc_off_t *offs;
    unsigned long long n, nseg, s_lo;
    __device__ __forceinline__ unsigned long long st(unsigned long long w) const
    {
        return sc_off(offs, s_lo + w, n, nseg);
    }
    /* The first w in [lo, hi) with st(w) >= x (hi when none). */
    __device__ __forceinline__ unsigned long long lower(unsigned long long lo, unsigned long long hi,
                                                        unsigned long long x) const
    {
        while (lo < hi) {
            const unsigned long long mid = lo + (hi - lo) / 2;
            if (st(mid) < x)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo;
    }
    /* The first w in [lo, hi) with st(w) > x (hi when none). */
    __device__ __forceinline__ unsigned long long upper(unsigned long long lo, unsigned long long hi,
                                                        unsigned long long x) const
    {
        while (lo < hi) {
            const unsigned long long mid = lo + (hi - lo) / 2;
            if (st(mid) <= x)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo;
    }
};

/* What a warp carries from tile to tile; the same in every lane. */
struct ss_state {
    unsigned long long s_lo;   /* offsets below the tile's first element */
    rt_acc_t run;              /* the run open at the previous tile's end (key s_lo - 1) */
    bool open_first;           /* no start yet in the warp's chunk: the open run is its first */
};

/* The window: ss_sw[wp][0 ..] = offsets[s_lo ..], at least want entries, more until the last entry
 * loaded is at or past b, all offsets are in, or the window is full. Returns the entries
 * loaded. The warp calls it converged. */
static __device__ __forceinline__ unsigned int ss_window(unsigned int wp, const sc_off_t *offs, unsigned long long n,
                                                         unsigned long long nseg, unsigned long long s_lo,
                                                         unsigned long long b, unsigned int want)
{
    const unsigned int lane = threadIdx.x % 32;
    const unsigned long long avail = s_lo <= nseg ? nseg + 1 - s_lo : 0;
    const unsigned int cap = avail < SS_W + 1 ? (unsigned int)avail : SS_W + 1;
    unsigned int have = 0;
    for (;;) {
        want = want < cap ? want : cap;
        for (unsigned int w = have + lane; w < want; w += 32)
            ss_sw[wp][w] = (ss_pos_t)sc_off(offs, s_lo + w, n, nseg);
        __syncwarp();
        if (want == cap || (want > 0 && (unsigned long long)ss_sw[wp][want - 1] >= b))
            return want;
        have = want;
        want = 2 * want > 32 ? 2 * want : 32;
    }
}

/* The first w < loaded with ss_sw[wp][w] >= x (loaded when none): a binary search in 32 bits (x
 * <= n fits ss_pos_t). */
static __device__ __forceinline__ unsigned int ss_below(unsigned int wp, unsigned int loaded, unsigned long long x)
{
    const ss_pos_t xx = (ss_pos_t)x;
    unsigned int lo = 0, hi = loaded;
    while (lo < hi) {
        const unsigned int mid = (lo + hi) / 2;
        if (ss_sw[wp][mid] < xx)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* One tile [a, b) of the warp's chunk with more starts (c) than the window holds, its
 * elements in x (element a + lane*R + k in x[k]): the starts are read from global memory,
 * each lane walks its elements and binary-searches past runs of equal starts (empty
 * segments), every output is stored directly. Updates st. The warp's first run, when it
 * closes here, goes to *first (shared memory) for the block's stitch. */
static __device__ __forceinline__ void ss_tile_global(const ss_starts &sv, const rt_value_t (&x)[RT_R],
                                               unsigned long long a, unsigned long long b, unsigned long long c,
                                               rt_acc_t *__restrict__ out, rt_acc_t *first,
                                               unsigned long long nseg, ss_state &st)
{
    const unsigned int lane = threadIdx.x % 32;
    const unsigned long long s_lo = st.s_lo;
    /* A closed run of a segment that starts in the tile (key - s_lo < c - 1). */
#define SS_PUT(K_, V_)                                                          \
    do {                                                                       \
        const unsigned long long k_ = (K_);                                    \
        if (k_ - s_lo < c && k_ < nseg)                                        \
            out[k_] = rt_seg_out(V_);                                          \
    } while (0)

    /* Positions relative to a (32-bit; a start before a, only in unsorted input, reads as
     * 0, none as ~0u); j: the starts before the element. */
    const unsigned int pr = lane * RT_R, len = (unsigned int)(b - a);
    const unsigned long long p = a + pr;
#define SS_REL(S_) ((S_) < a ? 0u : (S_) - a < 0xffffffffull ? (unsigned int)((S_) - a) : 0xffffffffu)
    unsigned long long j = pr < len ? sv.lower(0, c, p) : c;
    unsigned int nxt = j < c ? SS_REL(sv.st(j)) : ~0u;   /* the next start */
    bool flag = false;
    rt_acc_t head = rt_identity(), acc = rt_identity();
    unsigned long long hk = 0;
#pragma unroll
    for (unsigned int k = 0; k < RT_R; k++) {
        const unsigned int ir = pr + k;
        if (ir < len) {
            const rt_acc_t v = rt_lift(x[k], a + ir);
            if (ir == nxt) {   /* the run of key s_lo - 1 + j ends at ir - 1 */
                const unsigned long long cur = s_lo - 1 + j;
                if (!flag) {
                    flag = true;
                    head = acc;
                    hk = cur;
                } else {
                    SS_PUT(cur, acc);
                }
                acc = v;
                j++;
                if (j < c && SS_REL(sv.st(j)) <= ir)   /* empty segments start at ir too */
                    j = sv.upper(j, c, a + ir);
                nxt = j < c ? SS_REL(sv.st(j)) : ~0u;
            } else {
                acc = rt_combine(acc, v);
            }
        }
    }
#undef SS_REL

    bool before, total_f;
    rt_acc_t total;
    const rt_acc_t excl = sc_block_scan<32>(flag, acc, st.run, before, total, total_f);
    if (flag) {
        const rt_acc_t hv = rt_combine(excl, head);
        if (before)
            SS_PUT(hk, hv);
        else if (st.open_first)
            *first = hv;                      /* the warp's first run: stitched at the end */
        else if (hk < nseg)
            out[hk] = rt_seg_out(hv);         /* hk == s_lo - 1: begun in an earlier tile */
    }
#undef SS_PUT
    /* The empty segments that start in the tile (start c - 1 is the open run's). */
    const rt_acc_t id = rt_seg_out(rt_identity());
    for (unsigned long long w = lane; w + 1 < c; w += 32)
        if (s_lo + w < nseg && sv.st(w) >= sv.st(w + 1))
            out[s_lo + w] = id;
    st.run = total;   /* the run open at b: key s_lo + c - 1 */
    st.open_first = st.open_first && !total_f;
    st.s_lo = s_lo + c;
}

/* One tile [a, b) from the window (c <= SS_W starts in it, ss_sw[wp][0 .. c] loaded, sorted
 * unless the input breaks the rules): the same results as ss_tile_global, with the walk cut to
 * a bit test per element and the outputs staged in ss_so[wp] and stored coalesced. Each
 * distinct start position in the tile (the last of equal starts: the segment that has
 * elements; the others are empty) sets a bit in the mask of the lane that holds it and gets a
 * rank, its order among the tile's distinct starts; ss_rk[wp] maps each window index to its
 * rank (SS_RK_EMPTY for an empty segment). The run that begins at the start of rank r goes to
 * ss_so[wp][r] when the walk meets the start of rank r + 1 (the lane's first start: after the
 * warp's scan), so the walk needs no table: a lane's ranks are consecutive from the popcounts
 * of the lanes before it. Every element stores (to the spare slot SS_W when nothing ends
 * there), so the walk has no branch. */
#define SS_RK_EMPTY 0xffffu
template <bool FULL>
static __device__ __forceinline__ void ss_walk(const rt_value_t (&x)[RT_R], unsigned long long a, unsigned int len,
                                               unsigned int m, unsigned int ord, unsigned int wp, bool &flag,
                                               rt_acc_t &head, rt_acc_t &acc)
{
    const unsigned int pr = (threadIdx.x % 32) * RT_R;
#pragma unroll
    for (unsigned int k = 0; k < RT_R; k++) {
        if (FULL || pr + k < len) {
            const rt_acc_t v = rt_lift(x[k], a + pr + k);
            const bool s = (m >> k) & 1u;   /* a segment starts here: the run of rank ord - 1 ends */
            ss_so[wp][s && flag ? ord - 1 : SS_W] = acc;   /* the spare slot: nothing kept */
            if (s && !flag)
                head = acc;
            flag = flag || s;
            ord += s;
            acc = s ? v : rt_combine(acc, v);
        }
    }
}

static __device__ __forceinline__ void ss_tile_mask(unsigned int wp, const rt_value_t (&x)[RT_R],
                                                    unsigned long long a, unsigned long long b, unsigned int c,
                                                    rt_acc_t *__restrict__ out, rt_acc_t *first,
                                                    unsigned long long nseg, ss_state &st)
{
    const unsigned int lane = threadIdx.x % 32, len = (unsigned int)(b - a);
    const unsigned long long s_lo = st.s_lo;
    const ss_pos_t a0 = (ss_pos_t)a;   /* positions fit ss_pos_t (32-bit offsets: n < 2^31) */
    ss_msk[wp][lane] = 0u;
    __syncwarp();
    unsigned int d = 0;   /* distinct starts so far */
    for (unsigned int base = 0; base < c; base += 32) {
        const unsigned int w = base + lane;
        const bool valid = w < c;
        const ss_pos_t pos = valid ? ss_sw[wp][w] : (ss_pos_t)0;
        ss_pos_t nx = __shfl_down_sync(SC_FULL, pos, 1);
        if (lane == 31 && w + 1 < c)
            nx = ss_sw[wp][w + 1];
        const bool last = valid && (w + 1 >= c || nx != pos);
        const unsigned int bal = __ballot_sync(SC_FULL, last);
        if (last) {
            const ss_pos_t rel = pos - a0;   /* < len unless unsorted */
            if (pos >= a0 && rel < len)
                atomicOr(&ss_msk[wp][(unsigned int)rel / RT_R], 1u << ((unsigned int)rel % RT_R));
        }
        if (valid)
            ss_rk[wp][w] = last ? (unsigned short)(d + __popc(bal & ((1u << lane) - 1u))) : (unsigned short)SS_RK_EMPTY;
        d += __popc(bal);
    }
    __syncwarp();
    const unsigned int m = ss_msk[wp][lane];
    /* The distinct starts before this lane: an exclusive scan of the popcounts. */
    unsigned int ord = __popc(m);
#pragma unroll
    for (unsigned int o = 1; o < 32; o *= 2) {
        const unsigned int y = __shfl_up_sync(SC_FULL, ord, o);
        if (lane >= o)
            ord += y;
    }
    ord -= __popc(m);
    bool flag = false;
    rt_acc_t head = rt_identity(), acc = rt_identity();
    if (len == SS_T)
        ss_walk<true>(x, a, len, m, ord, wp, flag, head, acc);
    else
        ss_walk<false>(x, a, len, m, ord, wp, flag, head, acc);

    bool before, total_f;
    rt_acc_t total;
    const rt_acc_t excl = sc_block_scan<32>(flag, acc, st.run, before, total, total_f);
    if (flag) {
        const rt_acc_t hv = rt_combine(excl, head);
        if (before) {
            ss_so[wp][ord - 1] = hv;                /* ord > 0: a lane below has a start */
        } else if (st.open_first) {
            *first = hv;                            /* the warp's first run: stitched at the end */
        } else if (s_lo - 1 < nseg) {
            out[s_lo - 1] = rt_seg_out(hv);         /* begun in an earlier tile of the warp */
        }
    }
    __syncwarp();   /* ss_so[wp] is complete */
    const rt_acc_t id = rt_identity();
    for (unsigned int w = lane; w + 1 < c; w += 32)
        if (s_lo + w < nseg) {
            const unsigned int r = ss_rk[wp][w];
            out[s_lo + w] = rt_seg_out(r != SS_RK_EMPTY ? ss_so[wp][r] : id);
        }
    st.run = total;   /* the run open at b: rank d - 1, slot c - 1 */
    st.open_first = st.open_first && !total_f;
    st.s_lo = s_lo + c;
}

/* x = the elements [a, b) of the tile at a (lane l: a + l*R ..; a chunk's ends are multiples of
 * V, but n). */
static __device__ __forceinline__ void ss_load(const rt_value_t *__restrict__ in, unsigned long long a,
                                               unsigned long long b, rt_value_t (&x)[RT_R])
{
    sc_load_run<RT_R, RT_V>(in, a + (unsigned long long)(threadIdx.x % 32) * RT_R, b, x);
}

/* The end of a chunk cut in 'parts' at multiples of V: [0, len) part k ends at
 * floor((k+1)*len/parts) rounded down to V, the last at len. */
static __device__ __forceinline__ unsigned long long ss_cut(unsigned long long len, unsigned long long parts,
                                                            unsigned long long k)
{
    return k >= parts ? len : (len / parts * k + len % parts * k / parts) / RT_V * RT_V;
}

extern "C" __global__ void __launch_bounds__(RT_B, SS_MINB)
rt_seg(const rt_value_t *__restrict__ in, const void *seg, unsigned long long n, unsigned long long nseg,
       rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry, unsigned long long ntiles)
{
    const sc_off_t *offs = (const sc_off_t *)seg;
    /* The stitch records: per warp its first run (until its first start, or all of it), the
     * run open at its end, the keys of both, whether it had a start. */
    __shared__ rt_acc_t s_first[SS_NW], s_last[SS_NW];
    __shared__ unsigned long long s_k0[SS_NW], s_k1[SS_NW];
    __shared__ unsigned int s_hb[SS_NW], s_start0;
    const unsigned int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const unsigned long long G = gridDim.x, g = blockIdx.x;

    /* Carries: this block's (NONE unless the stitch says otherwise, after the barrier), and
     * the host's tiles past the grid. */
    if (tid == 0)
        for (unsigned long long t = g; t < ntiles; t += G)
            sc_carry_none(carry, t);

    /* The block's chunk [c0, c1), this warp's [w0, w1). */
    const unsigned long long c0 = ss_cut(n, G, g), c1 = ss_cut(n, G, g + 1);
    const unsigned long long w0 = c0 + ss_cut(c1 - c0, SS_NW, warp);
    const unsigned long long w1 = c0 + ss_cut(c1 - c0, SS_NW, warp + 1);

    /* The first tile's elements are in flight during the search for its s_lo. */
    rt_value_t x[RT_R];
    unsigned long long a = w0, b = a + SS_T < w1 ? a + SS_T : w1;
    if (a < b)
        ss_load(in, a, b, x);
    ss_state st;
    st.run = rt_identity();
    st.open_first = true;
    st.s_lo = sc_lower(offs, n, nseg, w0);
    const unsigned long long k0 = st.s_lo - 1;   /* the key of the run entering the chunk */
    if (warp == 0 && lane == 0)   /* does a segment start at c0? (the block's carry rule) */
        s_start0 = st.s_lo <= nseg && sc_off(offs, st.s_lo, n, nseg) <= c0;
    unsigned int want = (unsigned int)((nseg + 1) / (n / SS_T + 1)) + 33;
    while (a < w1) {
        const unsigned int loaded = ss_window(warp, offs, n, nseg, st.s_lo, b, want);
        unsigned long long c = ss_below(warp, loaded, b);   /* the starts in [a, b) */
        if (c > SS_W) {   /* more than the window holds: count them in global memory */
            const unsigned long long L = sc_lower(offs, n, nseg, b);
            c = L > st.s_lo ? L - st.s_lo : 0;
        }
        /* PF: the next tile's elements, in flight while this one is walked. */
        const unsigned long long an = b, bn = an + SS_T < w1 ? an + SS_T : w1;
        rt_value_t xn[RT_R];   /* unused with PF = 0 */
        if (RT_PF && an < bn)
            ss_load(in, an, bn, xn);
        if (c == 0) {
            /* No start in the tile: one run, reduced in order (lane, then an ordered tree). */
            rt_acc_t acc = rt_identity();
            const unsigned int pr = lane * RT_R, len = (unsigned int)(b - a);
#pragma unroll
            for (unsigned int k = 0; k < RT_R; k++)
                if (pr + k < len)
                    acc = rt_combine(acc, rt_lift(x[k], a + pr + k));
            st.run = rt_combine(st.run, rt_shfl(co_warp_tree<32>(acc), 0));
        } else if (c <= SS_W) {
            ss_tile_mask(warp, x, a, b, (unsigned int)c, out, &s_first[warp], nseg, st);
        } else {
            const ss_starts gv = {offs, n, nseg, st.s_lo};
            ss_tile_global(gv, x, a, b, c, out, &s_first[warp], nseg, st);
        }
        want = (unsigned int)((c < SS_W ? c : SS_W) + c / 8 + 33);
        a = an;
        b = bn;
        if (RT_PF) {
#pragma unroll
            for (unsigned int k = 0; k < RT_R; k++)
                x[k] = xn[k];
        } else if (a < b) {
            ss_load(in, a, b, x);
        }
        __syncwarp();   /* the window is free */
    }

    /* The stitch: the warps' records in order, by thread 0. */
    if (lane == 0) {
        if (st.open_first)
            s_first[warp] = st.run;   /* no start in the chunk: all of it is its first run */
        s_last[warp] = st.run;
        s_k0[warp] = k0;
        s_k1[warp] = st.s_lo - 1;
        s_hb[warp] = !st.open_first;
    }
    __syncthreads();
    if (tid == 0 && c0 < c1) {
        /* The block's first run continues a segment begun before c0: its carry. */
        const bool first_carry = c0 > 0 && !s_start0 && s_k0[0] < nseg;
        bool firstrun = true;
        rt_acc_t r = rt_identity();
        for (unsigned int w = 0; w <= SS_NW; w++) {
            const bool closes = w == SS_NW || s_hb[w];
            if (w < SS_NW)
                r = rt_combine(r, s_first[w]);
            if (!closes)
                continue;
            const unsigned long long key = w < SS_NW ? s_k0[w] : s_k1[SS_NW - 1];
            /* The first run is a carry or, with no segment begun before c0, nobody's. */
            if (!firstrun || first_carry)
                sc_emit(out, carry, g, nseg, key, r, firstrun, first_carry);
            firstrun = false;
            if (w < SS_NW)
                r = s_last[w];
        }
    }
    /* The segments that start at n (empty), by the block that owns n. */
    if (c1 == n)
        sc_fill(out, s_k1[SS_NW - 1] + 1, nseg);
}
