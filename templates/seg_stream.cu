// @family      seg_stream
// @summary     segmented, offsets: a resident grid, each block streaming one contiguous chunk of the elements in B*R-element tiles; a tile's segment starts come from a window of the offsets that follows the previous tile's (no search per tile), its outputs are staged in shared memory and stored coalesced, and a run open at a tile's end goes on in registers (one carry per block)
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
// @param WS 0 the window: a tile keeps up to (B*R >> WS) segment starts in shared memory (fewer where 44 KB does not hold them with their outputs); a tile with more reads its starts from global memory (correct, slow: runs of empty segments, segments of one element)
//
// seg_stream.cu - segmented reduction over offsets with the elements streamed as a flat
// reduction streams them (docs/segmented.md, "seg_stream").
//
// The grid is the resident one (SMs x occupancy). Block g owns the elements [a0, a1) =
// [g*n/G, (g+1)*n/G) (cut at multiples of V) and walks them in order in tiles of T = B*R:
// thread r loads the R consecutive elements a + r*R .. (R/V aligned vectors, all in flight)
// before it looks at anything. A tile's segment starts are offsets[s_lo ..] where s_lo, the
// number of offsets below the tile's first element, is found once per block (a warp search
// at a0) and then advanced by the starts each tile had: the block copies the next window of
// offsets (sized from the previous tile's count, grown while its last entry is still inside
// the tile) into shared memory with coalesced loads that are in flight with the elements'.
// c, the starts in [a, b), comes from a binary search there. Every thread finds the first
// start at or after its first element by a binary search and walks its R elements: at a
// start the run before it is complete (the first such run of the thread waits for the block
// scan, later ones are its own); runs of equal starts (empty segments) are skipped by a
// second binary search.
//
// Outputs: the tile owns the segments that start in it, s_lo .. s_lo + c - 1, and stages
// them in s_o (the identity first, so empty segments need no more work), then stores them
// coalesced. The last of them is open at the tile's end: its value (the scan's total) goes on
// in registers as the next tile's scan init, and is stored when a later start closes it (the
// next tile's first run), or at the end of the chunk. The chunk's first run, when its segment
// began before a0, is the block's carry (carry[g]); rt_seg_fix folds the G carries (the
// others, up to the host's tile count, are RT_SEG_NONE). The block that owns n also writes
// the segments that start at n (empty).
//
// A tile with more than W starts (W = B*R >> WS, capped by shared memory) reads them from
// global memory instead and stores every output directly: the same walk, slower, and
// correct for any number of empty segments. Unsorted offsets end every search and loop (all
// reads are clamped, all counts bounded) and store only into out[0 .. nseg).

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
#define RT_WS 0      /* window: B*R >> WS starts in shared memory */
#endif

#include "seg_common.cuh"
#include "seg_search.cuh"

static_assert(RT_LAYOUT == 2, "seg_stream: offsets only (LAYOUT = 2)");
static_assert(RT_B >= 128 && RT_B <= 1024 && RT_B % 32 == 0, "seg_stream: B must be a multiple of 32 in 128..1024");
static_assert(RT_R >= 1 && RT_R <= 32, "seg_stream: R must be in 1..32");
static_assert((RT_V == 1 || RT_V == 2 || RT_V == 4) && RT_R % RT_V == 0, "seg_stream: V is 1, 2 or 4 and divides R");
static_assert(RT_WS >= 0 && RT_WS <= 4, "seg_stream: WS is 0..4");

#define SS_T (RT_B * RT_R)   /* elements per tile */

#if RT_OFF64
typedef unsigned long long ss_pos_t;
#else
typedef unsigned int ss_pos_t;   /* clamped offsets: below 2^31 */
#endif

/* The window: W starts and their W outputs, plus one start (to see the first one past the
 * tile), in at most 44 KB. */
#define SS_FIT ((44 * 1024 - 16) / (sizeof(ss_pos_t) + sizeof(rt_acc_t)) - 1)
#define SS_W ((SS_T >> RT_WS) < SS_FIT ? (SS_T >> RT_WS) : SS_FIT)
static_assert(SS_W >= 32, "seg_stream: the accumulator is too large for a window of 32 starts");

extern "C" __device__ const unsigned int rt_meta[4] = {RT_B, SS_T, 0xffffffffu, 0u};

/* The tile's starts: st(w) = offsets[s_lo + w] (clamped), from shared memory or, GL, from
 * global memory; w < the number loaded (smem) or <= nseg - s_lo (GL). */
template <bool GL>
struct ss_starts {
    const ss_pos_t *s;
    const sc_off_t *offs;
    unsigned long long n, nseg, s_lo;
    __device__ __forceinline__ unsigned long long st(unsigned long long w) const
    {
        return GL ? sc_off(offs, s_lo + w, n, nseg) : (unsigned long long)s[w];
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

/* What the block carries from tile to tile; the same in every thread. */
struct ss_state {
    unsigned long long s_lo;   /* offsets below the tile's first element */
    rt_acc_t run;              /* the run open at the previous tile's end (key s_lo - 1) */
    bool open_first;           /* no start yet in the chunk: the open run is its first */
    bool first_carry;          /* the chunk's first run continues a segment begun before a0 */
};

/* The tile's first run (key s_lo - 1, ended by a start in the tile or by the chunk's end),
 * value v: the block's carry when it is the chunk's first run of a segment begun before the
 * chunk, nothing when it is the chunk's first run of no segment (before offsets[0]), else the
 * segment's result. */
static __device__ __forceinline__ void ss_first_run(const ss_state &st, rt_acc_t *out, rt_seg_carry *carry,
                                                    unsigned long long nseg, rt_acc_t v)
{
    const unsigned long long key = st.s_lo - 1;
    if (st.open_first) {
        if (st.first_carry) {
            rt_seg_carry c;
            c.key = key;
            c.val = v;
            carry[blockIdx.x] = c;
        }
    } else if (key < nseg) {
        out[key] = rt_seg_out(v);
    }
}

/* One tile [a, b) of the chunk, its elements in x (element a + tid*R + k in x[k]), c starts in
 * it (c <= SS_W unless GL). Walk, scan, outputs; updates st. */
template <bool GL>
static __device__ __forceinline__ void ss_tile(const ss_starts<GL> &sv, rt_acc_t *s_o, const rt_value_t (&x)[RT_R],
                                               unsigned long long a, unsigned long long b, unsigned long long c,
                                               rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry,
                                               unsigned long long nseg, ss_state &st)
{
    const unsigned int tid = threadIdx.x;
    const unsigned long long s_lo = st.s_lo;
    /* A closed run of a segment that starts in the tile (slot key - s_lo < c - 1). */
#define SS_PUT(K_, V_)                                                          \
    do {                                                                       \
        const unsigned long long k_ = (K_), w_ = k_ - s_lo;                    \
        if (w_ < c && k_ < nseg) {                                             \
            if (GL)                                                            \
                out[k_] = rt_seg_out(V_);                                      \
            else                                                               \
                s_o[w_] = (V_);                                                \
        }                                                                      \
    } while (0)

    if (!GL) {
        for (unsigned int w = tid; w < c; w += RT_B)
            s_o[w] = rt_identity();   /* empty segments keep it */
        __syncthreads();
    }

    const unsigned long long p = a + (unsigned long long)tid * RT_R;
    unsigned long long j = p < b ? sv.lower(0, c, p) : c;   /* starts before p */
    unsigned long long cur = s_lo - 1 + j;                 /* key of element p - 1 */
    unsigned long long nxt = j < c ? sv.st(j) : ~0ull;      /* the next start */
    bool flag = false;
    rt_acc_t head = rt_identity(), acc = rt_identity();
    unsigned long long hk = 0;
#pragma unroll
    for (unsigned int k = 0; k < RT_R; k++) {
        const unsigned long long i = p + k;
        if (i < b) {
            const rt_acc_t v = rt_lift(x[k], i);
            if (i == nxt) {   /* the run of key cur ends at i - 1 */
                if (!flag) {
                    flag = true;
                    head = acc;
                    hk = cur;
                } else {
                    SS_PUT(cur, acc);
                }
                acc = v;
                j++;
                if (j < c && sv.st(j) <= i)   /* empty segments start at i too */
                    j = sv.upper(j, c, i);
                cur = s_lo - 1 + j;
                nxt = j < c ? sv.st(j) : ~0ull;
            } else {
                acc = rt_combine(acc, v);
            }
        }
    }

    bool before, total_f;
    rt_acc_t total;
    const rt_acc_t excl = sc_block_scan<RT_B>(flag, acc, st.run, before, total, total_f);
    if (flag) {
        const rt_acc_t hv = rt_combine(excl, head);
        if (before)
            SS_PUT(hk, hv);
        else
            ss_first_run(st, out, carry, nseg, hv);   /* hk == s_lo - 1 */
    }
#undef SS_PUT
    if (GL) {
        /* The empty segments that start in the tile (slot c - 1 is the open run). */
        const rt_acc_t id = rt_seg_out(rt_identity());
        for (unsigned long long w = tid; w + 1 < c; w += RT_B)
            if (s_lo + w < nseg && sv.st(w) >= sv.st(w + 1))
                out[s_lo + w] = id;
    } else {
        __syncthreads();   /* s_o is complete */
        for (unsigned int w = tid; w + 1 < c; w += RT_B)
            if (s_lo + w < nseg)
                out[s_lo + w] = rt_seg_out(s_o[w]);
    }
    st.run = total;   /* the run open at b: key s_lo + c - 1 */
    st.open_first = st.open_first && !total_f;
    st.s_lo = s_lo + c;
}

extern "C" __global__ void __launch_bounds__(RT_B)
rt_seg(const rt_value_t *__restrict__ in, const void *seg, unsigned long long n, unsigned long long nseg,
       rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry, unsigned long long ntiles)
{
    const sc_off_t *offs = (const sc_off_t *)seg;
    __shared__ ss_pos_t s_st[SS_W + 1];
    __shared__ rt_acc_t s_o[SS_W];
    __shared__ unsigned long long s_sh;
    const unsigned int tid = threadIdx.x;
    const unsigned long long G = gridDim.x, g = blockIdx.x;

    /* Carries: this block's (NONE until its first run says otherwise; the barriers before
     * that order the two stores), and the host's tiles past the grid. */
    if (tid == 0)
        for (unsigned long long t = g; t < ntiles; t += G)
            sc_carry_none(carry, t);

    /* The chunk: [floor(g*n/G), floor((g+1)*n/G)), both ends rounded down to a multiple of V
     * (n itself stays n). */
    const unsigned long long c0 = (n / G * g + n % G * g / G) / RT_V * RT_V;
    const unsigned long long c1 = g + 1 == G ? n : (n / G * (g + 1) + n % G * (g + 1) / G) / RT_V * RT_V;

    ss_state st;
    st.run = rt_identity();
    st.open_first = true;
    st.first_carry = false;
    if (tid < 32) {
        const unsigned long long L = sc_lower(offs, n, nseg, c0);
        if (tid == 0)
            s_sh = L;
    }
    __syncthreads();
    st.s_lo = s_sh;

    /* The window's first size: the mean density of starts, a warp's worth of slack. */
    unsigned long long est = (nseg + 1) / (n / SS_T + 1) + 32;
    for (unsigned long long a = c0; a < c1; a += SS_T) {
        const unsigned long long b = a + SS_T < c1 ? a + SS_T : c1;
        const unsigned long long p = a + (unsigned long long)tid * RT_R;
        rt_value_t x[RT_R];
        /* Whole vectors as vectors (a chunk's ends are multiples of V, but n), the rest one by
         * one; every load in flight before anything is used. */
#pragma unroll
        for (unsigned int q = 0; q < RT_R / RT_V; q++) {
            const unsigned long long e = p + q * RT_V;
            if (e + RT_V <= b) {
                sc_ldv<rt_value_t, RT_V, SC_STREAM>(in + e, x + q * RT_V);
            } else {
#pragma unroll
                for (unsigned int k = 0; k < RT_V; k++) {
                    x[q * RT_V + k] = (rt_value_t)0;   /* unused past b */
                    if (e + k < b)
                        x[q * RT_V + k] = in[e + k];
                }
            }
        }

        /* The window: offsets[s_lo ..], grown while its last entry lies in the tile. */
        const unsigned long long s_lo = st.s_lo;
        const unsigned long long avail = s_lo <= nseg ? nseg + 1 - s_lo : 0;
        unsigned long long want = (est + RT_B - 1) / RT_B * RT_B, have = 0, loaded;
        if (want > SS_W + 1)
            want = SS_W + 1;
        for (;;) {
            const unsigned long long lim = want < avail ? want : avail;
            for (unsigned long long w = have + tid; w < lim; w += RT_B)
                s_st[w] = (ss_pos_t)sc_off(offs, s_lo + w, n, nseg);
            __syncthreads();
            if (lim < want || want == SS_W + 1 || lim == 0 || (unsigned long long)s_st[lim - 1] >= b) {
                loaded = lim;
                break;
            }
            have = lim;
            want = 2 * want < SS_W + 1 ? 2 * want : SS_W + 1;
        }
        const ss_starts<false> sv = {s_st, offs, n, nseg, s_lo};
        unsigned long long c = sv.lower(0, loaded, b);   /* the starts in [a, b) */
        if (a == c0)
            st.first_carry = c0 > 0 && s_lo >= 1 && s_lo - 1 < nseg && !(c > 0 && sv.st(0) <= c0);
        if (c <= SS_W) {
            ss_tile<false>(sv, s_o, x, a, b, c, out, carry, nseg, st);
        } else {
            /* More starts than the window holds: count them in global memory. */
            if (tid < 32) {
                const unsigned long long L = sc_lower(offs, n, nseg, b);
                if (tid == 0)
                    s_sh = L;
            }
            __syncthreads();
            c = s_sh > s_lo ? s_sh - s_lo : 0;
            const ss_starts<true> gv = {s_st, offs, n, nseg, s_lo};
            ss_tile<true>(gv, s_o, x, a, b, c, out, carry, nseg, st);
        }
        est = c + c / 8 + 33;
        __syncthreads();   /* the window and s_sh are free for the next tile */
    }

    /* The run open at the chunk's end. */
    if (tid == 0 && c0 < c1)
        ss_first_run(st, out, carry, nseg, st.run);
    /* The segments that start at n (empty), by the block that owns n. */
    if (c1 == n)
        sc_fill(out, st.s_lo, nseg);
}
