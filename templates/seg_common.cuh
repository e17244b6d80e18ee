/*
 * seg_common.cuh - what every segmented family shares (docs/segmented.md): the carry record,
 * the bounds-safe readers of keys and offsets, the block-wide segmented scan, the keys-layout
 * tile walker of seg_lb, seg_matrix and seg_diffwarps, the cooperative identity fill, and
 * rt_seg_fix.
 *
 * A template includes it with `#include "seg_common.cuh"` after its own parameters (RT_B,
 * RT_LAYOUT, RT_OFF64) are defined; the code generator inlines it into the unit. Helpers are
 * prefixed sc_.
 */

#ifndef RT_LAYOUT
#define RT_LAYOUT 1   /* 1: keys, 2: offsets */
#endif
#ifndef RT_OFF64
#define RT_OFF64 0    /* offsets are 64-bit (1) or 32-bit (0) */
#endif

#ifndef RT_FOLD_NZ
#define RT_FOLD_NZ 0  /* the glue's rt_fold_nz (float min and max): none */
#endif

static_assert(RT_LAYOUT == 1 || RT_LAYOUT == 2, "segmented: LAYOUT is 1 (keys) or 2 (offsets)");
static_assert(RT_OFF64 == 0 || RT_OFF64 == 1, "segmented: OFF64 is 0 or 1");

/* Every glue function is referenced (and its signature checked) here, in an unevaluated
 * operand, so that no family draws "declared but never referenced". */
static_assert(sizeof(rt_combine(rt_lift(*(const rt_value_t *)0, 0ull),
                                rt_shfl_down(rt_shfl_up(rt_shfl(rt_identity(), 0), 1u), 1u)))
              == sizeof(rt_acc_t),
              "segmented: the prelude's glue has the wrong signatures");

#define RT_SEG_NONE 0xffffffffffffffffull   /* carry key: the tile continues no segment */
#define SC_FULL 0xffffffffu

/* Tile t's piece of the segment that began before it (docs/segmented.md, rule 1). */
struct __align__(8) rt_seg_carry {
    unsigned long long key;
    rt_acc_t val;
};

#if RT_OFF64
typedef long long sc_off_t;
#else
typedef int sc_off_t;
#endif

/* keys[i] with i clamped into [0, n) and the key into [0, nseg): whatever the input, no read
 * leaves keys[0..n) and no segment index reaches nseg. n and nseg must be at least 1. */
static __device__ __forceinline__ unsigned int sc_key(const unsigned int *keys, unsigned long long i,
                                                      unsigned long long n, unsigned long long nseg)
{
    const unsigned int k = keys[i < n ? i : n - 1];
    return (unsigned long long)k < nseg ? k : (unsigned int)(nseg - 1);
}

/* offsets[s] as stored, s clamped to [0, nseg]: a load whose value sc_off_in clamps later
 * (seg_per's GRID loads a tile's bounds an iteration ahead). */
static __device__ __forceinline__ sc_off_t sc_off_raw(const sc_off_t *offs, unsigned long long s,
                                                      unsigned long long nseg)
{
    return offs[s <= nseg ? s : nseg];
}

/* A stored offset clamped into [0, n]. */
static __device__ __forceinline__ unsigned long long sc_off_in(sc_off_t v, unsigned long long n)
{
    const long long o = (long long)v;
    return o < 0 ? 0ull : (unsigned long long)o > n ? n : (unsigned long long)o;
}

/* offsets[s] with s clamped to [0, nseg] and the value into [0, n]. */
static __device__ __forceinline__ unsigned long long sc_off(const sc_off_t *offs, unsigned long long s,
                                                            unsigned long long n, unsigned long long nseg)
{
    return sc_off_in(sc_off_raw(offs, s, nseg), n);
}

/* N consecutive values (or keys) from p, aligned to N * sizeof(T) bytes, as loads of 16, 8 or 4
 * bytes (the widest that divides N * sizeof(T); else N scalar loads) through the read-only
 * path; with STREAM, with the streaming hint instead (__ldcs, evict-first, as collectives.cuh's
 * co_load_vec): seg_lb's loads, whose lines are all requested at once. seg_per's threads come
 * back to a line in later rounds (a lane per short segment), which an evict-first line in L1
 * no longer serves: 1.3-1.5x slower with the hint (docs/templates.md, "Loads"). The caller
 * guarantees the alignment (docs/segmented.md: V = 1 for pointers that are not 16-byte
 * aligned). */
#ifdef RT_LOAD_KEEP
#define SC_STREAM false   /* REDTUNE_LOADS=keep: seg_lb without the hint too */
#else
#define SC_STREAM true
#endif
template <bool C, typename A, typename Z> struct sc_pick { typedef A type; };
template <typename A, typename Z> struct sc_pick<false, A, Z> { typedef Z type; };
template <typename T, unsigned int N, bool STREAM = false>
static __device__ __forceinline__ void sc_ldv(const T *__restrict__ p, T *x)
{
    constexpr unsigned int S = sizeof(T) * N;
    constexpr unsigned int W = S % 16 == 0 ? 16 : S % 8 == 0 ? 8 : S % 4 == 0 ? 4 : 0;
    if constexpr (W != 0 && (N > 1 || W == 16)) {
        typedef typename sc_pick<W == 16, uint4, typename sc_pick<W == 8, uint2, unsigned int>::type>::type raw_t;
        raw_t r[S / W];
#pragma unroll
        for (unsigned int k = 0; k < S / W; k++) {
            if constexpr (STREAM)
                r[k] = __ldcs(reinterpret_cast<const raw_t *>(p) + k);
            else
                r[k] = __ldg(reinterpret_cast<const raw_t *>(p) + k);
        }
        memcpy(x, r, S);
    } else {
#pragma unroll
        for (unsigned int k = 0; k < N; k++) {
            if constexpr (STREAM)
                x[k] = __ldcs(p + k);
            else
                x[k] = p[k];
        }
    }
}

/* NB bytes (4, 8 or 16; both addresses aligned to NB) from global to shared memory by one
 * cp.async, sm_80 and later (the callers keep their own path below): 16 bytes through L2 only
 * (.cg), 4 and 8 through L1 (.ca); with ZFILL only the first `have` bytes are read and the
 * rest of the NB are zero in shared memory (cp.async's source size), else all NB are read.
 * seg_per's windows (STAGE = 2) and seg_pipe's stages and offsets. */
#if __CUDA_ARCH__ >= 800
template <unsigned int NB, bool ZFILL>
static __device__ __forceinline__ void sc_cp_async(void *dst, const void *src, unsigned int have)
{
    static_assert(NB == 4 || NB == 8 || NB == 16, "sc_cp_async: 4, 8 or 16 bytes");
    const unsigned int d = (unsigned int)__cvta_generic_to_shared(dst);
    if constexpr (ZFILL && NB == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                     : : "r"(d), "l"(__cvta_generic_to_global(src)), "r"(have) : "memory");
    else if constexpr (ZFILL)
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;"
                     : : "r"(d), "l"(__cvta_generic_to_global(src)), "n"(NB), "r"(have) : "memory");
    else if constexpr (NB == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                     : : "r"(d), "l"(__cvta_generic_to_global(src)) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;"
                     : : "r"(d), "l"(__cvta_generic_to_global(src)), "n"(NB) : "memory");
}
#endif

/* acc folded with element x of index j: with NZ (a fold that holds an element already: seg_pipe's
 * and seg_per's NZ) the glue's rt_fold_nz where the operator has one (RT_FOLD_NZ: float min
 * and max), else x lifted and combined. */
template <bool NZ>
static __device__ __forceinline__ rt_acc_t sc_fold_step(rt_acc_t acc, rt_value_t x, unsigned long long j)
{
#if RT_FOLD_NZ
    if constexpr (NZ)
        return rt_fold_nz(acc, x, j);
    else
#endif
        return rt_combine(acc, rt_lift(x, j));
}

/* x[0 .. R) = in[p .. p + R), the elements below b (0 from b on): one thread's R consecutive
 * elements (seg_stream's lanes, seg_mark's threads), p a multiple of V, as R/V aligned vectors
 * with the streaming hint where a whole vector lies below b, else one by one. */
template <unsigned int R, unsigned int V>
static __device__ __forceinline__ void sc_load_run(const rt_value_t *__restrict__ in, unsigned long long p,
                                                   unsigned long long b, rt_value_t (&x)[R])
{
#pragma unroll
    for (unsigned int q = 0; q < R / V; q++) {
        const unsigned long long e = p + q * V;
        if (e + V <= b) {
            sc_ldv<rt_value_t, V, SC_STREAM>(in + e, x + q * V);
        } else {
#pragma unroll
            for (unsigned int k = 0; k < V; k++) {
                x[q * V + k] = (rt_value_t)0;   /* unused past b */
                if (e + k < b)
                    x[q * V + k] = in[e + k];
            }
        }
    }
}

/* What a segmented kernel stores as a segment's result. Where the glue finalizes in place
 * (rt_res_t is rt_acc_t, and a finalized value combines again: the six original operators),
 * rt_final; otherwise the accumulator itself, and the host's last launch, rt_seg_final,
 * finalizes out[0 .. nseg) into the caller's results once the carries are folded. */
#if RT_FINAL_IN_PLACE
#define rt_seg_out(x) rt_final(x)
#else
#define rt_seg_out(x) (x)
extern "C" __global__ void rt_seg_final(const rt_acc_t *__restrict__ acc, rt_res_t *__restrict__ out,
                                        unsigned long long nseg)
{
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long s = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; s < nseg;
         s += stride)
        out[s] = rt_final(acc[s]);
}
#endif

/* out[lo .. hi) = v, by all threads of the block (hi <= nseg by construction). */
static __device__ __forceinline__ void sc_fill_with(rt_acc_t *out, unsigned long long lo, unsigned long long hi,
                                                    rt_acc_t v)
{
    for (unsigned long long s = lo + threadIdx.x; s < hi; s += blockDim.x)
        out[s] = v;
}

/* out[lo .. hi) = the result of an empty segment: rt_seg_out(identity), which for float min/max
 * is +-inf, not the accumulator's empty marker. */
static __device__ __forceinline__ void sc_fill(rt_acc_t *out, unsigned long long lo, unsigned long long hi)
{
    sc_fill_with(out, lo, hi, rt_seg_out(rt_identity()));
}

/* seg_tb2 and seg_tb4warp fold pieces into out[s] by read-modify-write, so their fill stores
 * the raw identity (the accumulator's, which the folds combine with), not the finalized one.
 * Once the block's folds are done (after a barrier), sc_finalize applies rt_final to the
 * segments the block owns, out[lo .. hi), but 'skip' (the run thread 0 then stores with
 * sc_emit, which finalizes it). Only units whose rt_final is not the identity (float min/max:
 * it turns an empty segment's marker into +-inf) have this pass. */
static __device__ __forceinline__ void sc_finalize(rt_acc_t *out, unsigned long long lo, unsigned long long hi,
                                                   unsigned long long skip)
{
#if RT_FINAL_IS_IDENTITY || !RT_FINAL_IN_PLACE
    (void)out, (void)lo, (void)hi, (void)skip;
#else
    for (unsigned long long s = lo + threadIdx.x; s < hi; s += blockDim.x)
        if (s != skip)
            out[s] = rt_seg_out(out[s]);
#endif
}

/* The barrier of the threads that run sc_block_scan together: by default the whole block. A
 * family whose scan runs on some warps only (seg_diffwarps' consumers) passes its own type with
 * a static sync() over exactly those threads (a named barrier). */
struct sc_bar_block {
    static __device__ __forceinline__ void sync() { __syncthreads(); }
};

/* A segmented scan over the threads 0 .. NT-1 of the block, in thread order. Thread t passes
 * (f, v): f says its items hold a run boundary, v reduces its items after the last boundary
 * (all of them when f is false). The operator is (f1, v1) . (f2, v2) = (f1 | f2, f2 ? v2 :
 * v1 + v2), with init before thread 0. Returns thread t's exclusive prefix: the reduction, in
 * order, of the items from the last boundary before thread t (or from init) up to thread t;
 * 'before' says whether some thread below t has a boundary. 'total'/'total_f' are the inclusive
 * value and flag of thread NT-1, in every thread. NT is a multiple of 32: blockDim.x, or the
 * first NT threads when BAR synchronises exactly those. All NT threads call it; it holds two
 * BAR barriers (none when NT = 32: one warp's shuffles are the whole scan), and may be called
 * again right away (the two shared arrays alternate). */
template <unsigned int NT, class BAR = sc_bar_block>
static __device__ __forceinline__ rt_acc_t sc_block_scan(bool f, rt_acc_t v, rt_acc_t init, bool &before,
                                                         rt_acc_t &total, bool &total_f)
{
    constexpr unsigned int NW = NT / 32;
    static_assert(NT % 32 == 0 && NW >= 1 && NW <= 32, "sc_block_scan: NT a multiple of 32, at most 1024");
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

    /* Inclusive scan in the warp (Kogge-Stone with shuffles; lane l - d is to the left). */
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
    if constexpr (NW == 1) {
        /* One warp: lane 31's inclusive value is the total. */
        const rt_acc_t wv = rt_shfl(vi, 31);
        const unsigned int wf = __shfl_sync(SC_FULL, fi, 31);
        total = wf ? wv : rt_combine(init, wv);
        total_f = wf != 0;
        before = ef != 0;
        return ef ? ev : rt_combine(init, ev);
    } else {
        __shared__ rt_acc_t s_wv[NW], s_pv[NW + 1];
        __shared__ unsigned int s_wf[NW], s_pf[NW + 1];
        if (lane == 31) {
            s_wv[warp] = vi;
            s_wf[warp] = fi;
        }
        BAR::sync();

        /* Warp 0 scans the warp aggregates; s_p*[w] is the prefix before warp w, with init. */
        if (warp == 0) {
            unsigned int wf = lane < NW ? s_wf[lane] : 0u;
            rt_acc_t wv = lane < NW ? s_wv[lane] : rt_identity();
#pragma unroll
            for (unsigned int d = 1; d < 32; d *= 2) {
                const rt_acc_t ov = rt_shfl_up(wv, d);
                const unsigned int of = __shfl_up_sync(SC_FULL, wf, d);
                if (lane >= d) {
                    if (!wf)
                        wv = rt_combine(ov, wv);
                    wf |= of;
                }
            }
            /* lane l holds warps 0..l; the prefix before warp l+1 */
            if (lane < NW) {
                s_pv[lane + 1] = wf ? wv : rt_combine(init, wv);
                s_pf[lane + 1] = wf;
            }
            if (lane == 0) {
                s_pv[0] = init;
                s_pf[0] = 0;
            }
        }
        BAR::sync();
        const rt_acc_t pv = s_pv[warp];
        const unsigned int pf = s_pf[warp];
        total = s_pv[NW];
        total_f = s_pf[NW] != 0;
        before = (ef | pf) != 0;
        return ef ? ev : rt_combine(pv, ev);
    }
}

/* Runs the tile's pieces to their places (docs/segmented.md, rules 1 and 2). A run of the tile
 * is stored to out[key] (plain store), except the tile's first run when 'first_carry' says its
 * segment began before the tile: that one is carry[t] (raw: it is combined again). The store
 * goes through rt_final: it is the segment's result unless rt_seg_fix folds carries into it
 * later, and then the run has elements, so it is no empty marker and rt_final leaves it as it
 * is (rt_final changes only the empty marker). */
static __device__ __forceinline__ void sc_emit(rt_acc_t *out, rt_seg_carry *carry, unsigned long long t,
                                               unsigned long long nseg, unsigned long long key,
                                               rt_acc_t v, bool first_run, bool first_carry)
{
    if (first_run && first_carry) {
        rt_seg_carry c;
        c.key = key;
        c.val = v;
        carry[t] = c;
    } else if (key < nseg) {
        out[key] = rt_seg_out(v);
    }
}

/* carry[t] = {RT_SEG_NONE}: tile t's first run is not a carry (rule 1); one thread writes it. */
static __device__ __forceinline__ void sc_carry_none(rt_seg_carry *carry, unsigned long long t)
{
    rt_seg_carry c;
    c.key = RT_SEG_NONE;
    c.val = rt_identity();
    carry[t] = c;
}

/* Keys layout: one tile of elements [a, b) (b <= n, a < b unless n == 0) reduced by ROWS
 * walker threads of NT, thread r the W consecutive elements a + r*W .. (a "row"), then the
 * segmented scan over the NT threads; every out[s] the tile owns is written once: runs by plain
 * store, empty segments (keys skipped) with the identity by the thread that sees the jump, or
 * by the block after the last element. STAGED: elements and keys are first copied coalesced
 * into shared memory (element j at j + (j / PADP) * PAD); otherwise each walker reads global
 * memory. Used by seg_lb (ROWS = NT, W = R, PADP = 32) and seg_matrix (ROWS = H, PADP = W)
 * through tile(), which runs the steps below on the whole block; seg_diffwarps runs them
 * itself (stage() by its producer warps, walk() and finish() by its NT = ROWS consumer
 * threads, on a named barrier). The caller provides the shared arrays (at least SLOTS entries
 * when STAGED) and a barrier between two tiles. */
template <unsigned int NT, unsigned int ROWS, unsigned int W, unsigned int PADP, unsigned int PAD, bool STAGED>
struct sc_keys {
    static constexpr unsigned int D = ROWS * W;
    static constexpr unsigned int SLOTS = D + (D / PADP) * PAD + 1;
    static __device__ __forceinline__ unsigned int slot(unsigned int j) { return j + (j / PADP) * PAD; }

    /* What a walker takes from the walk to finish(), in registers: finish() reads no shared
     * memory, so the staged tile may be overwritten as soon as every walker is through walk().
     * flag: the row holds a boundary; head: its run before the first boundary (key hk); acc: its
     * run after the last one (all of it without a boundary). */
    struct run_t {
        bool flag;
        rt_acc_t head, acc;
        unsigned long long hk;
    };

    /* For stage() when the shared arrays are free already. */
    struct now {
        __device__ __forceinline__ void operator()() const {}
    };

    /* Elements [a, b) and their keys (clamped as sc_key does) into s_v/s_k, by NL loader
     * threads, lid the caller's index among them. A whole tile with D % NL == 0 issues all its
     * loads before it calls ready() and stores the first; otherwise ready() comes first.
     * ready() is where a caller that double-buffers waits until the arrays may be overwritten;
     * every loader calls it once, at the same point (it may hold a barrier). */
    template <unsigned int NL, class READY>
    static __device__ __forceinline__ void stage(const rt_value_t *__restrict__ in,
                                                 const unsigned int *__restrict__ keys,
                                                 unsigned long long n, unsigned long long nseg,
                                                 unsigned long long a, unsigned long long b, unsigned int lid,
                                                 rt_value_t *s_v, unsigned int *s_k, READY ready)
    {
        if (D % NL == 0 && b - a == D) {
            /* A whole tile: every load issued before the first store to shared memory. */
            constexpr unsigned int Q = D % NL == 0 ? D / NL : 1;
            rt_value_t xv[Q];
            unsigned int xk[Q];
#pragma unroll
            for (unsigned int q = 0; q < Q; q++) {
                xv[q] = in[a + q * NL + lid];
                xk[q] = keys[a + q * NL + lid];
            }
            ready();
#pragma unroll
            for (unsigned int q = 0; q < Q; q++) {
                s_v[slot(q * NL + lid)] = xv[q];
                s_k[slot(q * NL + lid)] = (unsigned long long)xk[q] < nseg ? xk[q] : (unsigned int)(nseg - 1);
            }
        } else {
            ready();
            for (unsigned int j = lid; j < D && a + j < b; j += NL) {
                s_v[slot(j)] = in[a + j];
                s_k[slot(j)] = sc_key(keys, a + j, n, nseg);
            }
        }
    }

    /* The walk of row r = threadIdx.x < ROWS: its elements in order. prevkey: the key before
     * the tile (-1 at 0); first_carry: the tile's first run continues a segment of an earlier
     * tile. Runs that begin and end in the row are stored at once, the identity into keys that
     * are skipped; the rest is returned for finish(). Threads r >= ROWS return an empty row. */
    static __device__ __forceinline__ run_t walk(const rt_value_t *__restrict__ in,
                                                 const unsigned int *__restrict__ keys,
                                                 unsigned long long n, unsigned long long nseg,
                                                 rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry,
                                                 unsigned long long t, unsigned long long a, unsigned long long b,
                                                 long long prevkey, bool first_carry,
                                                 const rt_value_t *s_v, const unsigned int *s_k)
    {
        const unsigned int tid = threadIdx.x;
        run_t w;
        w.flag = false;
        w.head = rt_identity();
        w.acc = rt_identity();
        w.hk = 0;
        if (tid < ROWS) {
            const unsigned int j0 = tid * W;
            const unsigned long long p = a + j0;
            long long pk = p == a ? prevkey
                         : p < b ? (long long)(STAGED ? s_k[slot(j0 - 1)] : sc_key(keys, p - 1, n, nseg)) : 0;
#pragma unroll (W <= 32 ? W : 8)
            for (unsigned int k = 0; k < W; k++) {
                const unsigned long long i = p + k;
                if (i >= b)
                    break;
                const unsigned int kk = STAGED ? s_k[slot(j0 + k)] : sc_key(keys, i, n, nseg);
                const rt_acc_t v = rt_lift(STAGED ? s_v[slot(j0 + k)] : in[i], i);
                if ((long long)kk != pk) {
                    /* Segments pk+1 .. kk-1 have no element: the identity (rule 2: written by
                     * the tile of the first element with a larger key). */
                    for (long long s = pk + 1; s < (long long)kk; s++)
                        out[s] = rt_seg_out(rt_identity());
                    if (i != a) {   /* the run of key pk ends at i-1 */
                        if (!w.flag) {
                            w.flag = true;
                            w.head = w.acc;
                            w.hk = (unsigned long long)pk;
                        } else {
                            sc_emit(out, carry, t, nseg, (unsigned long long)pk, w.acc, false, first_carry);
                        }
                        w.acc = v;
                    } else {
                        w.acc = rt_combine(w.acc, v);
                    }
                } else {
                    w.acc = rt_combine(w.acc, v);
                }
                pk = kk;
            }
        }
        return w;
    }

    /* The segmented scan over threads 0 .. NT-1 (BAR synchronises exactly them; all call it)
     * completes each row's head with the run open at its start, which is then stored (or is
     * the carry). Returns, in every thread, the scan's total: the tile's last run, which the
     * caller stores with its key (key[b-1]) as sc_emit(.., total, !total_f, first_carry). */
    template <class BAR>
    static __device__ __forceinline__ rt_acc_t finish(const run_t &w, rt_acc_t *__restrict__ out,
                                                      rt_seg_carry *__restrict__ carry, unsigned long long t,
                                                      unsigned long long nseg, bool first_carry, bool &total_f)
    {
        bool before;
        rt_acc_t total;
        const rt_acc_t excl = sc_block_scan<NT, BAR>(w.flag, w.acc, rt_identity(), before, total, total_f);
        if (w.flag)
            sc_emit(out, carry, t, nseg, w.hk, rt_combine(excl, w.head), !before, first_carry);
        return total;
    }

    /* The whole tile t on the whole block (NT = blockDim.x). */
    static __device__ __forceinline__ void tile(const rt_value_t *__restrict__ in,
                                                const unsigned int *__restrict__ keys,
                                                unsigned long long n, unsigned long long nseg,
                                                rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry,
                                                unsigned long long t, rt_value_t *s_v, unsigned int *s_k)
    {
        const unsigned long long a = t * D;
        const unsigned long long b = a + D < n ? a + D : n;
        /* Uniform facts about the tile's edges. prevkey: the key before the tile (-1 at 0). */
        const long long prevkey = a > 0 && a <= n ? (long long)sc_key(keys, a - 1, n, nseg) : -1;
        const bool first_carry = a < b && a > 0 && (long long)sc_key(keys, a, n, nseg) == prevkey;
        if (threadIdx.x == 0 && !first_carry)
            sc_carry_none(carry, t);
        if constexpr (STAGED) {
            stage<NT>(in, keys, n, nseg, a, b, threadIdx.x, s_v, s_k, now());
            __syncthreads();
        }
        const run_t w = walk(in, keys, n, nseg, out, carry, t, a, b, prevkey, first_carry, s_v, s_k);
        bool total_f;
        const rt_acc_t total = finish<sc_bar_block>(w, out, carry, t, nseg, first_carry, total_f);
        /* The tile's last run. */
        if (threadIdx.x == NT - 1 && a < b) {
            const unsigned int lk = STAGED ? s_k[slot((unsigned int)(b - 1 - a))] : sc_key(keys, b - 1, n, nseg);
            sc_emit(out, carry, t, nseg, lk, total, !total_f, first_carry);
        }
        /* After the last element: the segments no element names (all of them when n == 0). */
        if (b == n) {
            const unsigned long long lo = n > 0 ? (unsigned long long)sc_key(keys, n - 1, n, nseg) + 1 : 0;
            sc_fill(out, lo, nseg);
        }
    }
};

/* rt_seg_fix: after rt_seg when ntiles > 1 (docs/segmented.md, rule 3), on any grid of RT_B
 * threads a block (the runtime launches one block per RT_B carries, at most four an SM). The
 * carries are taken in chunks of RT_B, a carry a thread; block b takes the chunks b,
 * b + gridDim.x, ... Each run of equal keys is folded into out[key], out[key] =
 * combine(out[key], run), by the thread holding its last carry; out[key] holds the pieces of
 * the tiles before, from rule 2. A block's segmented scan over its chunk gives each thread the
 * reduction of its run so far; for the run open at the chunk's start, when it ends inside the
 * chunk, the scan's init is the run's part before the chunk, which the block reduces walking
 * back RT_B carries at a time while the key stays the same (for sorted keys a segment must
 * span more than RT_B tiles to need a second step). Runs of different keys go to different
 * out[key], so blocks do not race (unsorted keys give unspecified results, as elsewhere).
 * RT_SEG_NONE runs and keys past nseg are skipped; positions past ncarry read as RT_SEG_NONE.
 * It used to be one block walking every carry: at 30M elements in 6144-element tiles its
 * 5120 read-modify-writes of out[], random and mostly out of the L2, on one SM took 19.7 us
 * under Nsight Compute (keys heavy sum f32, H200), and the bench's call was 16 us longer
 * than rt_seg alone; this one is 12 us faster in that bench (docs/results.md, the
 * thirty-second session). */
static __device__ __forceinline__ bool sc_fold_key(unsigned long long key, unsigned long long nseg)
{
    return key != RT_SEG_NONE && key < nseg;
}

static __device__ __forceinline__ unsigned long long sc_carry_key(const rt_seg_carry *carry, unsigned long long i,
                                                                  unsigned long long ncarry)
{
    return i < ncarry ? carry[i].key : RT_SEG_NONE;
}

/* Carries a thread takes in a later step of sc_run_before (the first takes one a thread): a
 * later step covers SC_WALK * RT_B of them, so that a segment spanning many tiles (keys with
 * a few huge segments) costs its chunk's block few steps, each a block scan. */
#define SC_WALK 8

/* The in-order reduction of the carries with key k0 that end at position lo (exclusive):
 * the run of k0 open at the start of a chunk, before it. Every thread of the block calls it
 * with the same arguments; it returns the same value in each. The first step takes the RT_B
 * carries before lo, one a thread (most runs end there: taking 8 a thread at once made keys
 * heavy sum f32 2% slower on the H200, thirty-third session); each later step the SC_WALK *
 * RT_B before, SC_WALK consecutive ones a thread. Thread order is carry order: each thread
 * folds its carries after its last one of another key (the run's part in them) and says
 * whether it met such a carry; the block's segmented scan gives the part after the window's
 * last such carry, and the walk stops at the window that has one. */
static __device__ __forceinline__ rt_acc_t sc_run_before(const rt_seg_carry *carry, unsigned long long lo,
                                                         unsigned long long k0)
{
    rt_acc_t init = rt_identity();
    unsigned int per = 1;   /* carries a thread this step */
    for (unsigned long long end = lo; end > 0; per = SC_WALK) {
        const unsigned long long w = (unsigned long long)per * RT_B;
        const unsigned long long beg = end > w ? end - w : 0;
        const unsigned long long j0 = beg + (unsigned long long)threadIdx.x * per;
        bool other = false;
        rt_acc_t v = rt_identity();
#pragma unroll
        for (unsigned int q = 0; q < SC_WALK; q++) {
            const unsigned long long j = j0 + q;
            if (q < per && j < end) {   /* threads past the window hold nothing and no boundary */
                const bool o = carry[j].key != k0;
                other = other || o;
                v = o ? rt_identity() : rt_combine(v, carry[j].val);
            }
        }
        bool before, found;
        rt_acc_t part;
        (void)sc_block_scan<RT_B>(other, v, rt_identity(), before, part, found);
        init = rt_combine(part, init);   /* the window comes before what was gathered */
        if (found)
            break;
        end = beg;
    }
    return init;
}

/* (RT_B, 1): with RT_B alone ptxas aimed at more blocks an SM and spilled a word for 8-byte
 * sums over keys (tools/check_templates.sh, seg_diffwarps at 288 threads). */
extern "C" __global__ void __launch_bounds__(RT_B, 1)
rt_seg_fix(const rt_seg_carry *__restrict__ carry, unsigned long long ncarry, rt_acc_t *__restrict__ out,
           unsigned long long nseg)
{
    for (unsigned long long lo = (unsigned long long)blockIdx.x * RT_B; lo < ncarry;
         lo += (unsigned long long)gridDim.x * RT_B) {
        const unsigned long long hi = lo + RT_B < ncarry ? lo + RT_B : ncarry;
        const unsigned long long i = lo + threadIdx.x;
        const unsigned long long key = sc_carry_key(carry, i, ncarry);
        const rt_acc_t val = i < ncarry ? carry[i].val : rt_identity();
        const unsigned long long kprev = i > 0 ? sc_carry_key(carry, i - 1, ncarry) : RT_SEG_NONE;
        const unsigned long long knext = sc_carry_key(carry, i + 1, ncarry);
        /* Uniform: does the run open at lo begin before the chunk and end inside it (not when
         * the chunk's last carry and the one after still have its key)? */
        const unsigned long long k0 = carry[lo].key;
        rt_acc_t init = rt_identity();
        if (lo > 0 && carry[lo - 1].key == k0 && sc_fold_key(k0, nseg)
            && !(carry[hi - 1].key == k0 && sc_carry_key(carry, hi, ncarry) == k0))
            init = sc_run_before(carry, lo, k0);
        /* A boundary where a run begins (and past ncarry). */
        const bool head = i >= ncarry || key != kprev;
        bool before, total_f;
        rt_acc_t total;
        const rt_acc_t excl = sc_block_scan<RT_B>(head, val, init, before, total, total_f);
        /* The run's last carry (out[key] and the run have elements: rt_seg_out is a no-op
         * but for the rule that results pass it). */
        if (i < ncarry && knext != key && sc_fold_key(key, nseg))
            out[key] = rt_seg_out(rt_combine(out[key], head ? val : rt_combine(excl, val)));
    }
}
