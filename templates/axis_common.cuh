/*
 * axis_common.cuh - what the axis families share (docs/axis.md): the glue check, aligned
 * vector loads, the ordered tree over an array, each split's contiguous cut of len, and the
 * split protocol: a block stores its raw partials, takes a ticket on its tile's counter (or
 * its group's), and the last block of the tile (of the group, then of the groups) folds the
 * splits in order and writes rt_final of them.
 *
 * A template includes it after "collectives.cuh" (co_ticket, co_load_partial, co_warp_tree)
 * and its own parameters; the code generator inlines both into the unit (one level deep: this
 * header includes nothing). Helpers are prefixed ax_.
 */

/* Every glue function is referenced (and its signature checked) here, in an unevaluated
 * operand, so that no family draws "declared but never referenced". */
static_assert(sizeof(rt_combine(rt_lift(*(const rt_value_t *)0, 0ull),
                                rt_shfl_down(rt_identity(), 1u))) == sizeof(rt_acc_t),
              "axis: the prelude's glue has the wrong signatures");
static_assert(sizeof(rt_final(rt_identity())) == sizeof(rt_res_t), "axis: rt_final's type");

/* The second __launch_bounds__ argument of rt_axis: blocks of B threads that must fit on an
 * SM at once, from an estimate of the registers a thread needs (48, the loads in flight and
 * their 64-bit addresses, and the accumulators they are lifted into: nacc of them), within
 * 1 .. 2048 / B. Without it ptxas picks its own register target and spills a word or two to
 * reach it (in cold code); with 1 it takes 120 registers for a sum; with a flat 1024 threads
 * it spills wide accumulators (argmax of 16 bytes x 32). */
__host__ __device__ constexpr unsigned int ax_min_blocks_of(unsigned int b, unsigned int regs)
{
    return 65536u / (regs * b) < 1u ? 1u : 65536u / (regs * b) > 2048u / b ? 2048u / b : 65536u / (regs * b);
}
__host__ __device__ constexpr unsigned int ax_min_blocks(unsigned int b, unsigned int load_bytes,
                                                         unsigned int nloads, unsigned int nacc)
{
    return ax_min_blocks_of(b, 48u + load_bytes / 4u + 2u * nloads + nacc * (unsigned int)sizeof(rt_acc_t) / 4u);
}

/* A split's part of len starts at a multiple of AX_ALIGN elements: with len a multiple of the
 * vector width (at most 16 elements) every part of a row is whole vectors. */
#define AX_ALIGN 16ull

/* N consecutive values from p, aligned to N * sizeof(T) bytes, as loads of 16, 8, 4 or 2 bytes
 * (the widest that divides N * sizeof(T)) by ax_ld (the streaming hint, evict-first: the
 * input is read once; see co_load_vec); N scalar loads when N == 1. The caller guarantees the alignment (decided at run time from the pointer). */
/* One element with the streaming hint (CO_STREAM, collectives.cuh), else through the read-only
 * path. */
template <typename T>
__device__ __forceinline__ T ax_ld(const T *p)
{
    if constexpr (CO_STREAM)
        return __ldcs(p);
    else
        return __ldg(p);
}

template <bool C, typename A, typename Z> struct ax_pick { typedef A type; };
template <typename A, typename Z> struct ax_pick<false, A, Z> { typedef Z type; };
template <typename T, unsigned int N>
__device__ __forceinline__ void ax_ldv(const T *__restrict__ p, T *x)
{
    constexpr unsigned int S = sizeof(T) * N;
    constexpr unsigned int W = S % 16 == 0 ? 16 : S % 8 == 0 ? 8 : S % 4 == 0 ? 4 : S % 2 == 0 ? 2 : 0;
    if constexpr (N > 1 && W != 0) {
        typedef typename ax_pick<W == 16, uint4, typename ax_pick<W == 8, uint2,
                typename ax_pick<W == 4, unsigned int, unsigned short>::type>::type>::type raw_t;
        raw_t r[S / W];
#pragma unroll
        for (unsigned int k = 0; k < S / W; k++)
            r[k] = ax_ld(reinterpret_cast<const raw_t *>(p) + k);
        memcpy(x, r, S);
    } else {
#pragma unroll
        for (unsigned int k = 0; k < N; k++)
            x[k] = ax_ld(p + k);
    }
}

/* a / b: an inline 32-bit division where both fit (the common case), else the 64-bit one
 * (a subroutine call in SASS). */
__device__ __forceinline__ unsigned long long ax_div(unsigned long long a, unsigned long long b)
{
    return ((a | b) >> 32) == 0 ? (unsigned long long)((unsigned int)a / (unsigned int)b) : a / b;
}

/* Split s of S's part [lo, hi) of len: consecutive parts of equal size (a multiple of
 * AX_ALIGN), the last one shorter or empty. S == 1: all of len. */
__device__ __forceinline__ void ax_part(unsigned long long len, unsigned int s, unsigned int S,
                                        unsigned long long &lo, unsigned long long &hi)
{
    if (S <= 1) {
        lo = 0;
        hi = len;
        return;
    }
    const unsigned long long per = (((len + S - 1) / S) + AX_ALIGN - 1) / AX_ALIGN * AX_ALIGN;
    lo = per * s < len ? per * s : len;
    hi = len - lo < per ? len : lo + per;
}

/* The largest power of two at most n (n >= 1). */
__host__ __device__ constexpr unsigned int ax_pow2_floor(unsigned int n)
{
    return n >= 2 ? 2 * ax_pow2_floor(n / 2) : 1;
}

/* The smallest power of two at least n. */
__host__ __device__ constexpr unsigned int ax_pow2_ceil(unsigned int n)
{
    return n <= 1 ? 1 : 2 * ax_pow2_ceil((n + 1) / 2);
}

/* Groups of the split fold (plan.h PLAN_AXIS_GROUP, _GROUP_FROM and _MAX_TILES: the same
 * rule on both sides): with more than AX_GROUP_FROM splits, and room for the counters, the
 * splits of a tile are folded in two levels, groups of AX_GROUP consecutive splits and then
 * the groups. A fold of S partials is S loads from L2 over a few lanes; the second level
 * costs a fence, a ticket and a barrier more. On the H100 (2026-11-25) groups of 16 made the
 * 64-split configs of 1 x 65536 x 128 3-10% slower and those of 1000-2000 splits of
 * 1 x 2^20 x 16 3-15% faster; hence the threshold. */
#define AX_GROUP 32u
#define AX_GROUP_FROM 256u
#define AX_MAX_COUNTERS 4096u
__device__ __forceinline__ bool ax_grouped(unsigned int tiles, unsigned int splits)
{
    const unsigned int ng = (splits + AX_GROUP - 1) / AX_GROUP;
    return splits > AX_GROUP_FROM && (unsigned long long)tiles * (ng + 1) <= AX_MAX_COUNTERS;
}

/* Outputs m0 + q (q < cnt) of a tile: the ordered fold of ns partials of each, split s0,
 * s0 + step, ... (part[s][m] at part[s * M + m]); final: out[m0 + q] = rt_final of it, else
 * the raw fold replaces part[s0][m0 + q]. The tile has T outputs at most, its block NT
 * threads: a group of G lanes per output (a power of two, G * T <= NT where possible, at most
 * 32), lane j folding a contiguous run of the ns partials in order and the group meeting in
 * the ordered warp tree; groups loop over the outputs with a uniform trip count so that the
 * shuffles stay converged. The partials were written by other blocks of this launch: read
 * from L2 (co_load_partial) after the ticket's acquire, four loads in flight a lane. A raw
 * fold reads part[s0][m] before its group writes it back (the same lanes; no other block
 * reads it before the next ticket). One call site (ax_finish_splits' loop): each inlined copy
 * of it costs the whole kernel registers (three copies took a 64-register rows kernel to 95
 * and its occupancy down). */
template <unsigned int NT, unsigned int T>
__device__ __forceinline__ void ax_fold(rt_acc_t *part, rt_res_t *__restrict__ out,
                                        unsigned long long M, unsigned long long m0,
                                        unsigned int cnt, unsigned int s0, unsigned int ns,
                                        unsigned int step, bool final)
{
    constexpr unsigned int G = ax_pow2_floor(NT / T >= 32 ? 32 : NT / T >= 1 ? NT / T : 1);
    constexpr unsigned int NQ = NT / G;   /* outputs per pass */
    const unsigned int c = (ns + G - 1) / G, j = threadIdx.x % G;
    const unsigned int a = j * c < ns ? j * c : ns, b = ns - a < c ? ns : a + c;
    for (unsigned int q0 = 0; q0 < cnt; q0 += NQ) {
        const unsigned int q = q0 + threadIdx.x / G;
        rt_acc_t v = rt_identity();
        if (q < cnt) {
            const rt_acc_t *p = part + (unsigned long long)s0 * M + m0 + q;
#pragma unroll 4
            for (unsigned int k = a; k < b; k++)
                v = rt_combine(v, co_load_partial(p + (unsigned long long)k * step * M));
        }
        v = co_warp_tree<G>(v);
        if (j == 0 && q < cnt) {
            if (final)
                out[m0 + q] = rt_final(v);
            else
                part[(unsigned long long)s0 * M + m0 + q] = v;
        }
    }
}

/* After the block's raw partials of tile x are stored (part[s * M + m], s = blockIdx.y, for
 * outputs m0 .. m0 + cnt - 1): the fold of the tile's splits, by the blocks that finish last.
 * The barrier orders every thread's stores before thread 0's ticket, an acquire-release atomic
 * (co_ticket) whose release is cumulative: what the block stored is visible to the block that
 * acquires the last ticket, with no fence of each thread's own (the grid barrier of
 * cooperative groups orders a block's stores the same way; each thread's __threadfence() before
 * it cost a round trip at the end of every split block). The counter's limit is (blocks
 * counted) - 1: the last ticket wraps it back to 0, so every counter is zero again for the
 * next launch.
 * One level: counter[x] counts the gridDim.y splits; the last folds them all into out.
 * Grouped (ax_grouped): counter[tiles + x * ng + g] counts group g's splits (AX_GROUP
 * consecutive ones, the last group shorter); its last block folds them into part[g *
 * AX_GROUP], fences, and counts itself in counter[x] (ng groups); the last of those folds
 * the ng group results in order into out. s_flag is the caller's __shared__ word; the
 * barriers also end any earlier use of the block's shared memory. Every thread calls it. */
template <unsigned int NT, unsigned int T>
__device__ __forceinline__ void ax_finish_splits(rt_acc_t *part, rt_res_t *__restrict__ out,
                                                 unsigned int *counter, unsigned long long x,
                                                 unsigned long long M, unsigned long long m0,
                                                 unsigned int cnt, unsigned int &s_flag)
{
    const unsigned int S = gridDim.y, tiles = gridDim.x, s = blockIdx.y;
    const bool grouped = ax_grouped(tiles, S);
    const unsigned int ng = grouped ? (S + AX_GROUP - 1) / AX_GROUP : 1, g = s / AX_GROUP;
    const unsigned int s0 = g * AX_GROUP, n = S - s0 < AX_GROUP ? S - s0 : AX_GROUP;
    unsigned int *ticket = grouped ? counter + tiles + x * ng + g : counter + x;
    unsigned int limit = grouped ? n - 1 : S - 1, level = grouped ? 1u : 2u;
    for (;;) {   /* level 1: the group's fold (grouped only); level 2: the tile's */
        __syncthreads();   /* the block's stores before thread 0's release (cumulative) */
        if (threadIdx.x == 0)
            s_flag = co_ticket(ticket, limit) == limit;
        __syncthreads();
        if (!s_flag)
            return;
        const bool final = level == 2;
        ax_fold<NT, T>(part, out, M, m0, cnt, final ? 0 : s0, final ? (grouped ? ng : S) : n,
                       final && grouped ? AX_GROUP : 1, final);
        if (final)
            return;
        ticket = counter + x;
        limit = ng - 1;
        level = 2;
    }
}
