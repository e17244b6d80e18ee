// @family      seg_mark
// @summary     segmented, offsets: a block per CH consecutive tiles of B*R elements; a tile's segment starts are marked by position in shared memory (from a window of the offsets loaded into registers during the previous tile, no search per tile), a tile without a start is reduced as a flat reduction would, otherwise each thread walks its R elements with one mark read each and no branch, storing the runs that close in it, and one segmented block scan completes the runs that cross threads (one carry per block)
// @plan        segmented
// @layout      offsets
// @balanced    yes
// @commutative not-required
// @deterministic yes
// @param LAYOUT 2 1: keys, 2: offsets (this family implements offsets only)
// @param OFF64 0 offsets are 32-bit (0) or 64-bit (1)
// @param B 256 threads per block (multiple of 32, 32..1024: 32 and 64 give a block of one or two warps, whose barriers and scan are cheap)
// @param R 16 consecutive elements per thread in a tile (1..32)
// @param V 4 elements per vector load (1, 2, 4; R a multiple of V): V > 1 needs `in` aligned to V elements; the runtime library must pick V = 1 for pointers it cannot vouch for
// @param CH 4 tiles a block (1..64): block g owns the elements [g*CH*B*R, (g+1)*CH*B*R) and walks them in order, so that only its first tile searches the offsets
// @param J 4 window rounds a thread (1..16): a tile's first J*31*B/32 starts come from the window (offsets loaded into registers while the tile before is walked; each warp's lanes 0..30 own 31 a round), more from global memory in rounds of B (correct, slower: runs of empty segments, tiles dense in segments)
// @param PF 1 1: the next tile's elements are loaded (into a second set of registers) before a tile is walked, so memory stays busy during the walk; 0: after it, into the same registers (R fewer)
// @param NZ 0 1: a thread's elements after its first folded with the glue's rt_fold_nz where the operator has one (float min and max: fmin alone an element, no NaN test of the lift and no marker tests of the combine; an element that starts a run is lifted as before); 0 (or another operator): every element lifted and combined
// @param MP 0 1: the marks padded by 4 words after every 32, so that a thread's R marks (R = 4, 8, 16, 32) are read and cleared as 16-byte words without bank conflicts; 0: unpadded (R = 16: 4-way conflicts)
// @param OST 0 1: a tile's outputs (the runs its walk closes, the empty segments' identities, the heads the scan completes) are kept in shared memory by window index (two buffers of B*R slots and a spare, fewer where the 44 KB do not hold them: R = 32, 16-byte accumulators; alternating with the tiles that have starts) and stored coalesced after the next such tile's first barrier, so that the walk stores each closed run with one predicated 32-bit shared store and keeps no head: a thread's first start stores its head run into the slot of its head record (the tile's first start: the spare slot), read back after the scan; a tile with more starts than a buffer holds (runs of empty segments) walks as OST = 0 does, its outputs past the buffer stored directly; 0: each run stored into global memory by its walk
// @param XD 0 an experiment, never in a space (HOPPER.md's method: a stage done twice, the results unchanged, so that the tuner times what the stage costs): 1 the block scan twice (the first on the other parity's buffers), 2 a tile's window entries (marks, head records, empty segments, the count) written twice, 3 both; 0: once
// @param IL 1 2: a thread walks the two halves of its R elements side by side (two runs in progress, two dependent chains of R/2 folds instead of one of R), joined after the walk; R even, OST = 0; 1: one walk of R
// @param MINW 0 warps per SM the kernel asks the register allocator to make room for (__launch_bounds__: 32 gives at most 64 registers, 24 at most 80, 16 at most 128; 0: no bound)
//
// seg_mark.cu - segmented reduction over offsets, the elements in tiles of B*R as a flat
// reduction reads them, each segment start marked at its position (docs/segmented.md,
// "seg_mark").
//
// Block g owns CH consecutive tiles, the elements [c0, c1) = [g*CH*T, (g+1)*CH*T) (T = B*R,
// the last block up to n), and walks them in order: thread t holds the elements a + t*R ..
// a + t*R + R - 1 of the tile at a (R/V aligned vector loads; PF = 1: two register sets used in
// turn, the next tile's loaded before this one is walked; PF = 0: one set, the next tile's
// loaded into it after the walk). s_lo, the number of offsets below
// the tile's first element, is found once per block (warp 0's 32-way search at c0, while the
// first tile's loads are in flight) and then advanced by each tile's count of starts, so no
// other tile searches. The window: J*31*B/32 entries of the offsets from s_lo (past nseg:
// +infinity), loaded into registers while the tile before is walked; each warp's lanes 0..30
// own 31 entries a round and lane 31 holds the next warp's first, so that an entry's next
// offset comes by a shuffle.
//
// A tile whose first start (offsets[s_lo], the same in every thread) is at or past its end has
// none (commutative operators): each thread folds its elements into its own part of the open
// run, and the parts join the run (a warp tree, the warps in order) at the next tile with a
// start or at the chunk's end: no barrier, no marks, no scan. Otherwise each thread takes its
// window entries inside the tile [a, b), and for each, without a branch (a spare slot takes
// what is not kept):
//   - an empty segment (its next offset is the same) stores its result, the identity;
//   - a segment with elements (or the pseudo segment nseg: the elements from offsets[nseg] on,
//     which no segment holds) writes its window index into mark[start - a], and, when the next
//     start is in another thread's elements, its key into that thread's head record (the run
//     that thread's first start closes);
//   - the entry whose next offset is at or past b writes c, the tile's count of starts.
// A warp stops at its first round whose entries all lie past the tile (the offsets are sorted:
// so do its later ones). One barrier. A window too short for the tile (c not found) goes on from global memory in
// rounds of B entries. Then each thread walks its R elements: a mark closes the run before it,
// which is stored at once (out[key], a predicated store: no branch), except the thread's first,
// its head, which goes with the run after the thread's last start (its tail) into the block's
// segmented scan (sm_scan: one barrier). The scan's prefix completes the head (key: the
// thread's head record; the run open at the tile's start when no thread below has a start),
// whose owner stores it; the scan's total is the run open at b, carried to the next tile. Each
// thread resets the marks it read, so the array is clear for the next tile without a pass over
// it. Positions and window indexes inside a tile are 32-bit.
//
// The block's first run (elements before its first start) is its carry when its segment began
// before c0 (carry[g]; rt_seg_fix folds the carries in order); the run open at c1 is stored as
// its segment's first part. The block that owns n also writes the segments that start at n.
// Unsorted offsets end every search and loop (all reads are clamped, counts bounded) and store
// only into out[0 .. nseg). 32-bit offsets: a tile may hold at most 2^32 - 2 starts (empty
// segments included).

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
#ifndef RT_CH
#define RT_CH 4      /* tiles a block */
#endif
#ifndef RT_J
#define RT_J 4       /* window entries a thread: the window is J*B starts */
#endif
#ifndef RT_PF
#define RT_PF 1      /* 1: the next tile's elements are loaded before a tile is walked */
#endif
#ifndef RT_MINW
#define RT_MINW 0    /* warps per SM asked of the register allocator; 0: none */
#endif
#ifndef RT_MP
#define RT_MP 0      /* 1: the marks padded by 4 words after every 32 */
#endif
#ifndef RT_NZ
#define RT_NZ 0      /* fold a thread's elements after its first with rt_fold_nz (float min, max) */
#endif
#ifndef RT_OST
#define RT_OST 0     /* 1: a tile's outputs through shared memory, stored coalesced */
#endif
#ifndef RT_IL
#define RT_IL 1      /* 2: the walk's two halves side by side */
#endif
#ifndef RT_XD
#define RT_XD 0      /* an experiment: stages done twice (1 the scan, 2 the window's entries) */
#endif

#include "seg_common.cuh"
#include "seg_search.cuh"
/* co_warp_halving, co_block_tree: the deferred parts of tiles without a start (inlined by the
 * generator). */
#include "collectives.cuh"

static_assert(RT_LAYOUT == 2, "seg_mark: offsets only (LAYOUT = 2)");
static_assert(RT_B >= 32 && RT_B <= 1024 && RT_B % 32 == 0, "seg_mark: B must be a multiple of 32 in 32..1024");
static_assert(RT_R >= 1 && RT_R <= 32, "seg_mark: R must be in 1..32");
static_assert((RT_V == 1 || RT_V == 2 || RT_V == 4) && RT_R % RT_V == 0, "seg_mark: V is 1, 2 or 4 and divides R");
static_assert(RT_CH >= 1 && RT_CH <= 64, "seg_mark: CH is 1..64");
static_assert(RT_J >= 1 && RT_J <= 16, "seg_mark: J is 1..16");
static_assert(RT_PF == 0 || RT_PF == 1, "seg_mark: PF is 0 or 1");
static_assert(RT_MINW >= 0 && RT_MINW <= 64, "seg_mark: MINW is 0..64");
static_assert(RT_NZ == 0 || RT_NZ == 1, "seg_mark: NZ is 0 or 1");
static_assert(RT_MP == 0 || RT_MP == 1, "seg_mark: MP is 0 or 1");
static_assert(RT_OST == 0 || RT_OST == 1, "seg_mark: OST is 0 or 1");
static_assert(RT_XD >= 0 && RT_XD <= 3, "seg_mark: XD is 0..3");
static_assert(RT_IL == 1 || (RT_IL == 2 && RT_R % 2 == 0 && !RT_OST), "seg_mark: IL is 1, or 2 with R even and OST = 0");

#define SM_T (RT_B * RT_R)     /* elements a tile */
/* The slot of the mark at position p of the tile (MP = 1: 4 words of padding after every 32,
 * so that the 16-byte words of 8 consecutive threads fall in 8 different groups of 4 banks
 * when R is 4, 8, 16 or 32; a 16-byte word never straddles the padding). */
#define SM_MI(p) (RT_MP ? (p) + 4u * ((p) >> 5) : (p))
#define SM_MN SM_MI(SM_T)      /* mark slots (the spare slot's index) */
#define SM_NW (RT_B / 32)      /* warps a block */
/* The block's barrier: a block of one warp (B = 32) needs only the warp's, which orders its
 * lanes' shared-memory accesses as __syncthreads does (the CUDA guide, __syncwarp). */
#if RT_B == 32
#define SM_SYNC() __syncwarp()
#else
#define SM_SYNC() __syncthreads()
#endif
#define SM_W (RT_J * 31 * SM_NW)   /* window entries: 31 a warp (lane 31 holds the next warp's first) */
#define SM_NONE 0xffffffffu    /* a mark: no start here; s_cnt: not found yet */
/* __launch_bounds__' blocks per SM: MINW warps (registers: 64 for 32, 80 for 24, 128 for 16) */
#define SM_MINB (RT_MINW * 32 / RT_B > 1 ? RT_MINW * 32 / RT_B : 1)

#if RT_OFF64
typedef unsigned long long sm_pos_t;
#else
typedef unsigned int sm_pos_t;   /* clamped offsets: at most n < 2^31 */
#endif
#define SM_INF ((sm_pos_t) ~(sm_pos_t)0)   /* a window entry past offsets[nseg] */

static_assert(SM_MN * 4 + RT_B * 4 <= 44 * 1024,
              "seg_mark: the marks (B*R*4 bytes, 1/8 more with MP = 1) and the head records must fit 44 KB");
/* OST = 1: two buffers of a tile's outputs, SM_NO slots each and a spare: B*R, or as many as
 * the 44 KB leave beside the marks, the head records and the other statics (a tile with more
 * starts walks as OST = 0 does). */
#define SM_OBYTES (44ll * 1024 - SM_MN * 4ll - (RT_B + 1) * 4ll - 128 \
                   - (3ll * SM_NW + 1) * (long long)sizeof(rt_acc_t) - 2ll * SM_NW * 4)
#define SM_OSLOTS (SM_OBYTES / (2 * (long long)sizeof(rt_acc_t)))
#define SM_NO ((unsigned int)(!RT_OST || SM_OSLOTS < 2 ? 0 : SM_OSLOTS - 1 < SM_T ? SM_OSLOTS - 1 : SM_T))

/* The tile's marks (the window index of the start at each position, SM_NONE where none
 * starts) and each thread's head record (1 + the window index of the start before the
 * thread's first start; 0: the run open at the tile's start). */
static __shared__ __align__(16) unsigned int sm_mark[SM_MN + 1];   /* + a spare slot */
static __shared__ unsigned int sm_head[RT_B + 1];                 /* + a spare slot */
#if RT_OST
/* OST = 1: the outputs of a tile with starts by window index (slot SM_NO: a spare), raw
 * accumulators; two buffers, the parity of the tile (sm_state::par) picks one. */
static __shared__ rt_acc_t sm_out[2][SM_NO + 1];
#endif

/* rt_meta: a "tile" of CH*B*R elements, a block each (no cap on the grid): the host's carry
 * array holds one carry per block. */
extern "C" __device__ const unsigned int rt_meta[4] = {RT_B, RT_B * RT_R * RT_CH, 0u, 0u};

/* offsets[w] clamped into [0, n], +infinity past nseg. */
static __device__ __forceinline__ sm_pos_t sm_off(const sc_off_t *offs, unsigned long long w, unsigned long long n,
                                                  unsigned long long nseg)
{
    return w <= nseg ? (sm_pos_t)sc_off(offs, w, n, nseg) : SM_INF;
}

/* A raw window entry (loaded early) clamped as sc_off clamps, n as sm_pos_t (32-bit offsets:
 * n < 2^31, the caller's rule). */
static __device__ __forceinline__ sm_pos_t sm_clamp(sc_off_t raw, sm_pos_t n)
{
    return raw < 0 ? (sm_pos_t)0 : (sm_pos_t)raw > n ? n : (sm_pos_t)raw;
}

/* *dst = v where p, without a branch (a predicated store for accumulators of 4 and 8 bytes:
 * a walk's stores at segment starts would otherwise each open a divergent branch). */
static __device__ __forceinline__ void sm_put(bool p, rt_acc_t *dst, rt_acc_t v)
{
    if constexpr (sizeof(rt_acc_t) == 4) {
        unsigned int u;
        memcpy(&u, &v, 4);
        asm volatile("{ .reg .pred q; setp.ne.u32 q, %0, 0; @q st.global.b32 [%1], %2; }"
                     :: "r"((unsigned int)p), "l"(dst), "r"(u) : "memory");
    } else if constexpr (sizeof(rt_acc_t) == 8) {
        unsigned long long u;
        memcpy(&u, &v, 8);
        asm volatile("{ .reg .pred q; setp.ne.u32 q, %0, 0; @q st.global.b64 [%1], %2; }"
                     :: "r"((unsigned int)p), "l"(dst), "l"(u) : "memory");
    } else if (p) {
        *dst = v;
    }
}

/* A position relative to the tile's first element a, in 32 bits: +infinity (never inside the
 * tile) for a start before a (unsorted input only) or past 2^32 - 1. */
static __device__ __forceinline__ unsigned int sm_rel(sm_pos_t o, sm_pos_t a)
{
    return o < a ? 0xffffffffu : (unsigned long long)(o - a) < 0xffffffffull ? (unsigned int)(o - a) : 0xffffffffu;
}

/* One entry of the tile of len elements: window index i (key s_lo + i), its start ro and the
 * next entry's rn (relative to the tile, sm_rel), lim = the keys below nseg (nseg - s_lo,
 * clamped). Writes the identity of an empty segment (out + s_lo: outb; OST: the tile's buffer
 * ob below SM_NO, global memory past it where WIDE), the mark and the head record of a segment
 * with elements, and the tile's count (cnt) when the next start is at or past the tile's end;
 * without a branch: what is not written goes to a spare slot. */
template <bool WIDE>
static __device__ __forceinline__ void sm_entry(unsigned int i, unsigned int ro, unsigned int rn, unsigned int len,
                                                unsigned int lim, rt_acc_t *__restrict__ outb, unsigned int *cnt,
                                                unsigned int *spare, rt_acc_t *ob)
{
    const bool in = ro < len;
    const bool empty = in && i < lim && rn <= ro;   /* the last of equal starts has the elements */
#if RT_OST
    /* OST: into the tile's buffer below SM_NO (the spare slot takes the rest), past it (only
     * where WIDE: i may pass SM_NO) into global memory. */
    ob[empty && i < SM_NO ? i : SM_NO] = rt_identity();
    if (WIDE)
        sm_put(empty && i >= SM_NO, outb + i, rt_seg_out(rt_identity()));
#else
    sm_put(empty, outb + i, rt_seg_out(rt_identity()));
#endif
    const bool mark = in && !empty;
    sm_mark[mark ? SM_MI(ro) : SM_MN] = i;
    const unsigned int q = rn / RT_R;
    const bool hd = mark && rn < len && q != ro / RT_R;   /* the start before thread q's first */
    sm_head[hd ? q : RT_B] = i + 1u;
    const bool tr = in ? rn >= len : i == 0;   /* the count: i + 1, or 0 (no start in the tile) */
    *(tr ? cnt : spare) = in ? i + 1u : 0u;
}

/* x = the elements [a, b) of the tile at a (thread t: a + t*R ..). */
static __device__ __forceinline__ void sm_load(const rt_value_t *__restrict__ in, unsigned long long a,
                                               unsigned long long b, rt_value_t (&x)[RT_R])
{
    sc_load_run<RT_R, RT_V>(in, a + (unsigned long long)threadIdx.x * RT_R, b, x);
}

/* A thread's window entry j: warp w's lanes 0..30 own the entries j*SM_W/J + 31*w + lane, and
 * lane 31 holds the next warp's first (the next j's first, in the last warp), only so that lane
 * 30 gets its next by a shuffle. */
static __device__ __forceinline__ unsigned int sm_wi(unsigned int j)
{
    return j * (31 * SM_NW) + 31 * (threadIdx.x / 32) + threadIdx.x % 32;
}

/* The window of the tile whose s_lo is given, into registers: entry sm_wi(j) in wv[j], raw
 * (clamped where it is used), those past offsets[nseg] not loaded. */
static __device__ __forceinline__ void sm_window_load(const sc_off_t *offs, unsigned long long nseg,
                                                      unsigned long long s_lo, sc_off_t (&wv)[RT_J])
{
#pragma unroll
    for (unsigned int j = 0; j < RT_J; j++) {
        const unsigned long long w = s_lo + sm_wi(j);
        wv[j] = w <= nseg ? offs[w] : (sc_off_t)0;
    }
}

/* NZ applies: the operator's glue has rt_fold_nz (sc_fold_step<SM_NZ>). */
#define SM_NZ (RT_NZ && RT_FOLD_NZ)

/* The walks (IL = 1 and 2, OST's) and OST's store of a tile's outputs. */
#include "seg_mark_walk.cuh"

/* What the block carries from tile to tile: the same in every thread, but tacc and wv. */
struct sm_state {
    unsigned long long a, b;   /* the tile */
    unsigned long long s_lo;   /* the offsets below a */
    rt_acc_t run;              /* the run open at a (key s_lo - 1), but for the deferred parts */
    rt_acc_t tacc;             /* this thread's part of the open run from tiles without a start */
    sm_pos_t fn;               /* offsets[s_lo]: the first start at or past a (+infinity: none) */
    unsigned int par;          /* the parity of the tile among those with starts: its count's slot */
    bool open_first;           /* no start yet in the block: the open run is its first */
    bool deferred;             /* tacc holds parts (tiles without a start, commutative only) */
    sc_off_t wv[RT_J];         /* the window, loaded while the tile before is walked */
#if RT_OST
    unsigned long long ps;     /* OST: the s_lo of the last tile with starts, whose buffer (par ^ 1) */
    unsigned int pn;           /* holds pn outputs not yet stored (its starts but the last) */
#endif
};

static __shared__ unsigned int sm_cnt[3];      /* the count of a tile with starts, by parity; a spare slot */
static __shared__ rt_acc_t sm_part[RT_B / 32];  /* the warps' deferred parts */

/* The segmented scan of sc_block_scan (seg_common.cuh: same arguments and results) with one
 * barrier instead of two: the warps' totals go to shared memory (two sets, alternating with
 * the tile's parity, so that the next tile's scan needs no barrier before it writes) and every
 * thread folds those of the warps before its own in order (NW - 1 combines at most). */
static __shared__ rt_acc_t sm_wv[2][SM_NW];
static __shared__ unsigned int sm_wf[2][SM_NW];
static __device__ __forceinline__ rt_acc_t sm_scan(bool f, rt_acc_t v, rt_acc_t init, unsigned int par, bool &before,
                                                   rt_acc_t &total, bool &total_f)
{
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    /* sc_block_scan's warp step, written again: moved into a helper that both call, it changed
     * the SASS of seg_lb's and seg_per's shipped units (tools/ptx_diff.sh --cubin). */
    unsigned int fi = f;
    rt_acc_t vi = v;
#pragma unroll
    for (unsigned int d = 1; d < 32; d *= 2) {
        const rt_acc_t ov = rt_shfl_up(vi, d);
        const unsigned int of = __shfl_up_sync(SC_FULL, fi, d);
        if (lane >= d) {
            if (!fi)
                vi = rt_combine(ov, vi);
            fi |= of;
        }
    }
    rt_acc_t ev = rt_shfl_up(vi, 1);
    unsigned int ef = __shfl_up_sync(SC_FULL, fi, 1);
    if (lane == 0) {
        ev = rt_identity();
        ef = 0;
    }
#if SM_NW == 1
    /* One warp: its total is lane 31's, and nothing comes before it. The barrier stays (the
     * warp's): the walk's reads of the marks and head records end before the next tile's
     * entries write them. */
    (void)par;
    (void)warp;
    __syncwarp();
    const rt_acc_t wv = rt_shfl(vi, 31);
    total_f = __shfl_sync(SC_FULL, fi, 31) != 0;
    total = total_f ? wv : rt_combine(init, wv);
    before = ef != 0;
    return ef ? ev : rt_combine(init, ev);
#else
    if (lane == 31) {
        sm_wv[par][warp] = vi;
        sm_wf[par][warp] = fi;
    }
    SM_SYNC();
    /* The running value from init over the warps in order; pv, pf: before this warp. */
    rt_acc_t tv = init, pv = init;
    unsigned int tf = 0, pf = 0;
#pragma unroll
    for (unsigned int w = 0; w < SM_NW; w++) {
        const unsigned int wf = sm_wf[par][w];
        const rt_acc_t wv = sm_wv[par][w];
        tv = wf ? wv : rt_combine(tv, wv);
        tf |= wf;
        if (w + 1 == warp) {
            pv = tv;
            pf = tf;
        }
    }
    total = tv;
    total_f = tf != 0;
    before = (ef | pf) != 0;
    return ef ? ev : rt_combine(pv, ev);
#endif
}

/* One tile [st.a, st.b) of the block's chunk [.., c1), its elements in x; the next tile's go
 * to xn. Every thread calls it; it returns with st advanced to the next tile. */
static __device__ __forceinline__ void sm_tile(const rt_value_t *__restrict__ in, const sc_off_t *offs,
                                               unsigned long long n, unsigned long long nseg,
                                               unsigned long long c1, rt_acc_t *__restrict__ out,
                                               rt_acc_t *first, const rt_value_t (&x)[RT_R],
                                               rt_value_t (&xn)[RT_R], sm_state &st)
{
    const unsigned int tid = threadIdx.x;
    const unsigned long long a = st.a, b = st.b;
    const unsigned long long an = b, bn = an + SM_T < c1 ? an + SM_T : c1;
    const unsigned int p0 = tid * RT_R, len = (unsigned int)(b - a);
#if RT_COMMUTATIVE
    if ((unsigned long long)st.fn >= b) {
        /* No start in the tile: the thread's elements join its part of the open run, folded
         * into the run at the next tile with a start (no barrier, no marks, no scan). */
        if (RT_PF && an < bn)
            sm_load(in, an, bn, xn);
#pragma unroll
        for (unsigned int k = 0; k < RT_R; k++)
            if (len == SM_T || p0 + k < len)
                st.tacc = rt_combine(st.tacc, rt_lift(x[k], a + p0 + k));
        if (!RT_PF && an < bn)
            sm_load(in, an, bn, xn);   /* xn is x itself (PF = 0) */
        st.deferred = true;
        st.a = an;
        st.b = bn;
        return;
    }
#endif
    const unsigned int par = st.par;
    const unsigned long long s_lo = st.s_lo;

    /* The marks, the empty segments, the head records, the count, from the window in
     * registers: an entry's next is the next lane's. */
    const unsigned long long left = nseg > s_lo ? nseg - s_lo : 0;
    const unsigned int lim = left < 0xffffffffull ? (unsigned int)left : 0xffffffffu;   /* keys below nseg */
    const sm_pos_t a0 = (sm_pos_t)a, n0 = (sm_pos_t)n;
#if RT_OST
    rt_acc_t *const ob = sm_out[par];
#else
    rt_acc_t *const ob = nullptr;
#endif
#if RT_XD & 2
    /* XD: the entries twice (the same stores; the compiler may not drop the first) */
#pragma unroll 1
    for (unsigned int xd = 0; xd < 2; xd++) {
        asm volatile("" ::: "memory");
#endif
#pragma unroll
    for (unsigned int j = 0; j < RT_J; j++) {
        const unsigned int i = sm_wi(j);
        const unsigned int ro = i <= lim ? sm_rel(sm_clamp(st.wv[j], n0), a0) : 0xffffffffu;   /* past nseg: none */
        /* None of the warp's entries of this round inside the tile: nor of its later ones
         * (sorted offsets; entry 0 then says the tile has no start). */
        if (!__any_sync(SC_FULL, ro < len)) {
            if (i == 0)
                sm_cnt[par] = 0u;
            break;
        }
        const unsigned int rn = __shfl_down_sync(SC_FULL, ro, 1);
        if (tid % 32 != 31)   /* lane 31's entry is the next warp's */
            sm_entry<(SM_W > SM_NO)>(i, ro, rn, len, lim, out + s_lo, &sm_cnt[par], &sm_cnt[2], ob);
    }
#if RT_XD & 2
    }
#endif
    if (tid == 0)
        sm_cnt[par ^ 1] = SM_NONE;   /* the next such tile's: read before the last scan */
#if RT_COMMUTATIVE
    if (st.deferred) {
        const rt_acc_t v = co_warp_halving<32>(st.tacc);
        if (tid % 32 == 0)
            sm_part[tid / 32] = v;
    }
#endif
    SM_SYNC();   /* marks, records, parts and (mostly) the count are in */
#if RT_OST
    /* The outputs of the last tile with starts (the other buffer; its heads were completed
     * before the barrier above). */
    sm_flush(out, st.ps, st.pn, sm_out[par ^ 1]);
#endif
    unsigned long long c = sm_cnt[par];
    if (c == SM_NONE) {
        /* More starts than the window held: the rest from global memory, B a round. */
        unsigned long long base = SM_W;
        for (;;) {
            SM_SYNC();   /* everyone has read the count */
            const unsigned long long i = base + tid;
            const unsigned int ro = sm_rel(sm_off(offs, s_lo + i, n, nseg), a0);
            if (ro < len)
                sm_entry<true>((unsigned int)i, ro, sm_rel(sm_off(offs, s_lo + i + 1, n, nseg), a0), len, lim,
                         out + s_lo, &sm_cnt[par], &sm_cnt[2], ob);
            SM_SYNC();
            c = sm_cnt[par];
            if (c != SM_NONE)
                break;
            base += RT_B;
            if (s_lo + base > nseg + 1) {   /* unsorted input: bounded all the same */
                c = nseg + 1 - s_lo;
                break;
            }
        }
    }
#if RT_COMMUTATIVE
    if (st.deferred) {   /* the parts of the tiles without a start, in warp order */
        rt_acc_t v = rt_identity();
#pragma unroll
        for (unsigned int w = 0; w < RT_B / 32; w++)
            v = rt_combine(v, sm_part[w]);
        st.run = rt_combine(st.run, v);
        st.tacc = rt_identity();
        st.deferred = false;
    }
#endif

    /* The next tile: its window, its first start and (PF) its elements, in flight during the
     * walk. */
    const unsigned long long s_next = s_lo + c;
    sm_pos_t fn = SM_INF;
    if (an < bn) {
        sm_window_load(offs, nseg, s_next, st.wv);
        fn = sm_off(offs, s_next, n, nseg);
    }
    if (RT_PF && an < bn)
        sm_load(in, an, bn, xn);

    /* The walk: this thread's marks (then cleared) and head record. */
    unsigned int mk[RT_R];
#if RT_R % 4 == 0
#pragma unroll
    for (unsigned int q = 0; q < RT_R / 4; q++) {
        uint4 *m4 = reinterpret_cast<uint4 *>(&sm_mark[SM_MI(p0 + 4 * q)]);
        const uint4 m = *m4;
        mk[4 * q] = m.x;
        mk[4 * q + 1] = m.y;
        mk[4 * q + 2] = m.z;
        mk[4 * q + 3] = m.w;
        *m4 = make_uint4(SM_NONE, SM_NONE, SM_NONE, SM_NONE);
    }
#else   /* R not a multiple of 4 (an #if: R < 4 would make the loop above a warning) */
#pragma unroll
    for (unsigned int k = 0; k < RT_R; k++) {
        mk[k] = sm_mark[SM_MI(p0 + k)];
        sm_mark[SM_MI(p0 + k)] = SM_NONE;
    }
#endif
    const unsigned int hk = sm_head[tid];
    sm_head[tid] = 0u;
    bool flag = false;
    rt_acc_t head = rt_identity(), acc = rt_identity();
#if RT_OST
    /* At most SM_NO starts (the same in every thread): the walk without a head; more: the
     * walk of OST = 0, its outputs below SM_NO into the buffer. */
    const bool fit = c <= SM_NO;
    const unsigned int h0 = hk > 0 ? hk - 1 : SM_NO;   /* the head's slot */
    if (fit) {
        const unsigned int cur = len == SM_T ? sm_walk_ost<true>(x, mk, a, len, h0, ob, acc)
                                             : sm_walk_ost<false>(x, mk, a, len, h0, ob, acc);
        flag = cur != h0;
    } else if (len == SM_T) {
        sm_walk<true>(x, mk, a, len, out + s_lo, lim, flag, head, acc, ob);
    } else {
        sm_walk<false>(x, mk, a, len, out + s_lo, lim, flag, head, acc, ob);
    }
#elif RT_IL == 2
    if (len == SM_T)
        sm_walk2<true>(x, mk, a, len, out + s_lo, lim, flag, head, acc);
    else
        sm_walk2<false>(x, mk, a, len, out + s_lo, lim, flag, head, acc);
#else
    if (len == SM_T)
        sm_walk<true>(x, mk, a, len, out + s_lo, lim, flag, head, acc, ob);
    else
        sm_walk<false>(x, mk, a, len, out + s_lo, lim, flag, head, acc, ob);
#endif

#if RT_XD & 1
    /* XD: the scan twice, the first on the other parity's buffers (free until the next tile's
     * first barrier); a select between the two keeps both. */
    bool before1, total_f1;
    rt_acc_t total1;
    const rt_acc_t excl1 = sm_scan(flag, acc, st.run, par ^ 1, before1, total1, total_f1);
    bool before, total_f;
    rt_acc_t total;
    rt_acc_t excl = sm_scan(flag, acc, st.run, par, before, total, total_f);
    if (before1 != before || total_f1 != total_f) {
        excl = excl1;
        total = total1;
    }
#else
    bool before, total_f;
    rt_acc_t total;
    const rt_acc_t excl = sm_scan(flag, acc, st.run, par, before, total, total_f);
#endif
    if (flag) {
#if RT_OST
        if (fit)
            head = ob[h0];   /* this thread's own store */
#endif
        const rt_acc_t hv = rt_combine(excl, head);
        if (before) {
#if RT_OST
            /* hk > 0: a start below; the slot is stored with the tile's outputs */
            const unsigned int hi = hk - 1;
            if (hi < SM_NO)
                ob[hi] = hv;
            else if (s_lo + hi < nseg)
                out[s_lo + hi] = rt_seg_out(hv);
#else
            const unsigned long long key = s_lo + hk - 1;   /* hk > 0: a start below */
            if (key < nseg)
                out[key] = rt_seg_out(hv);
#endif
        } else if (st.open_first) {
            *first = hv;                             /* the block's first run: its carry */
        } else if (s_lo - 1 < nseg) {
            out[s_lo - 1] = rt_seg_out(hv);          /* begun in an earlier tile of the block */
        }
    }
#if RT_OST
    /* The tile's outputs but the run open at b, below nseg, to be stored at the next tile with
     * starts or at the chunk's end. */
    unsigned long long pn = c == 0 ? 0 : c - 1;
    pn = pn < lim ? pn : lim;
    st.ps = s_lo;
    st.pn = (unsigned int)(pn < SM_NO ? pn : SM_NO);
#endif
    st.run = total;   /* the run open at b: key s_next - 1 */
    st.open_first = st.open_first && !total_f;
    st.s_lo = s_next;
    st.fn = fn;
    st.par = par ^ 1;
    st.a = an;
    st.b = bn;
    if (!RT_PF && an < bn)
        sm_load(in, an, bn, xn);
}

extern "C" __global__ void __launch_bounds__(RT_B, SM_MINB)
rt_seg(const rt_value_t *__restrict__ in, const void *seg, unsigned long long n, unsigned long long nseg,
       rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry, unsigned long long ntiles)
{
    const sc_off_t *offs = (const sc_off_t *)seg;
    __shared__ unsigned long long s_lo0;
    __shared__ unsigned int s_start0;
    __shared__ rt_acc_t s_first;
    const unsigned int tid = threadIdx.x;
    const unsigned long long G = gridDim.x, g = blockIdx.x;

    /* The host's tiles past the grid (none when the grid is a block per tile). */
    if (tid == 0)
        for (unsigned long long t = g + G; t < ntiles; t += G)
            sc_carry_none(carry, t);

    const unsigned long long span = (unsigned long long)RT_CH * SM_T;
    const unsigned long long c0 = g * span < n ? g * span : n;
    const unsigned long long c1 = c0 + span < n ? c0 + span : n;

    /* The first tile's elements are in flight during the search for s_lo. */
    sm_state st;
    st.a = c0;
    st.b = c0 + SM_T < c1 ? c0 + SM_T : c1;
    rt_value_t x[RT_R], xn[RT_R];
    if (st.a < st.b)
        sm_load(in, st.a, st.b, x);
#pragma unroll
    for (unsigned int k = 0; k < RT_R; k++)
        sm_mark[SM_MI(tid * RT_R + k)] = SM_NONE;
    sm_head[tid] = 0u;
    if (tid < 32) {
        const unsigned long long s = sc_lower(offs, n, nseg, c0);
        if (tid == 0) {
            s_lo0 = s;
            sm_cnt[0] = SM_NONE;
            s_start0 = s <= nseg && sc_off(offs, s, n, nseg) <= c0;   /* a segment starts at c0 */
        }
    }
    SM_SYNC();
    st.s_lo = s_lo0;
    const unsigned long long k0 = st.s_lo - 1;   /* the key of the run entering the block */
    st.fn = sm_off(offs, st.s_lo, n, nseg);
    if (st.a < st.b)
        sm_window_load(offs, nseg, st.s_lo, st.wv);
    st.run = rt_identity();
    st.tacc = rt_identity();
    st.par = 0;
    st.open_first = true;
    st.deferred = false;
#if RT_OST
    st.ps = 0;
    st.pn = 0;
#endif
    /* PF = 1: two tiles a round, so that the elements of the next never wait in a register
     * copy; PF = 0: one set of registers, the next tile's loaded into it after the walk. */
    while (st.a < st.b) {
        if (RT_PF) {
            sm_tile(in, offs, n, nseg, c1, out, &s_first, x, xn, st);
            if (st.a >= st.b)
                break;
            sm_tile(in, offs, n, nseg, c1, out, &s_first, xn, x, st);
        } else {
            sm_tile(in, offs, n, nseg, c1, out, &s_first, x, x, st);
        }
    }

#if RT_COMMUTATIVE
    if (st.deferred) {   /* uniform: the parts of the last tiles without a start */
        const rt_acc_t v = co_block_tree<RT_B / 32, false>(st.tacc, sm_part);
        if (tid == 0)
            st.run = rt_combine(st.run, v);
    }
#endif
    SM_SYNC();   /* s_first; the last tile's heads */
#if RT_OST
    sm_flush(out, st.ps, st.pn, sm_out[st.par ^ 1]);   /* the chunk's last tile with starts */
#endif
    if (tid == 0) {
        const rt_acc_t first = st.open_first ? st.run : s_first;
        /* The block's first run continues a segment begun before c0: its carry. */
        const bool first_carry = c0 < c1 && c0 > 0 && !s_start0 && k0 < nseg;
        if (first_carry) {
            rt_seg_carry cr;
            cr.key = k0;
            cr.val = first;
            carry[g] = cr;
        } else {
            sc_carry_none(carry, g);
        }
        /* The run open at c1 began in the block: its segment's first part. */
        if (!st.open_first && st.s_lo - 1 < nseg)
            out[st.s_lo - 1] = rt_seg_out(st.run);
    }
    /* The segments that start at n (empty), by the block that owns n. */
    if (c1 == n && (c0 < c1 || g == 0))
        sc_fill(out, st.s_lo < nseg ? st.s_lo : nseg, nseg);
}
