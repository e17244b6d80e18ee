/*
 * axis_common.cuh - what the axis families share (docs/axis.md): the glue check, aligned
 * vector loads, the ordered tree over an array, each split's contiguous cut of len, and the
 * split protocol: a block stores its raw partials, takes a ticket on its tile's counter, and
 * the last block of the tile folds the splits in order and writes rt_final of them.
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
 * (the widest that divides N * sizeof(T)) through the read-only path; N scalar loads when
 * N == 1. The caller guarantees the alignment (decided at run time from the pointer). */
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
            r[k] = __ldg(reinterpret_cast<const raw_t *>(p) + k);
        memcpy(x, r, S);
    } else {
#pragma unroll
        for (unsigned int k = 0; k < N; k++)
            x[k] = __ldg(p + k);
    }
}

/* The N values of a[] combined as a balanced tree in index order: log2(N) dependent combines
 * instead of N in a chain, and the order kept (a non-commutative operator gets the fold). */
template <unsigned int N>
__device__ __forceinline__ rt_acc_t ax_tree(rt_acc_t (&a)[N])
{
#pragma unroll
    for (unsigned int s = 1; s < N; s *= 2) {
#pragma unroll
        for (unsigned int k = 0; k + s < N; k += 2 * s)
            a[k] = rt_combine(a[k], a[k + s]);
    }
    return a[0];
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

/* After the block's raw partials of tile x are stored (part[s * M + m]): true in every
 * thread of the block that finished the tile last. Every thread fences its own stores, the
 * barrier gathers them, and thread 0 takes a ticket (acquire-release, co_ticket) on
 * counter[x] with limit gridDim.y - 1: the last ticket wraps the counter back to 0, so it is
 * zero again for the next launch. s_last is the caller's __shared__ flag; the second barrier
 * tells the block and ends any earlier use of its shared memory. Every thread calls it. */
__device__ __forceinline__ bool ax_last_split(unsigned int *counter, bool &s_last)
{
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        s_last = co_ticket(counter, gridDim.y - 1) == gridDim.y - 1;
    __syncthreads();
    return s_last;
}

/* The last block of a tile: out[m0 + q] = rt_final(part[0][m] . part[1][m] . ... in split
 * order) for q < cnt (m = m0 + q, part[s][m] at part[s * M + m]). The tile has T outputs at
 * most, its block NT threads: a group of G lanes per output (a power of two, G * T <= NT
 * where possible, at most 32), lane j folding the contiguous splits [j*c, j*c + c) in order
 * and the group meeting in the ordered warp tree; groups loop over the outputs with a
 * uniform trip count so that the shuffles stay converged. The partials were written by other
 * blocks of this launch: read from L2 (co_load_partial) after ax_last_split's acquire, eight
 * loads in flight a lane. */
template <unsigned int NT, unsigned int T>
__device__ __forceinline__ void ax_fold_splits(const rt_acc_t *part, rt_res_t *__restrict__ out,
                                               unsigned long long M, unsigned long long m0,
                                               unsigned int cnt)
{
    constexpr unsigned int G = ax_pow2_floor(NT / T >= 32 ? 32 : NT / T >= 1 ? NT / T : 1);
    constexpr unsigned int NQ = NT / G;   /* outputs per pass */
    const unsigned int S = gridDim.y, c = (S + G - 1) / G, j = threadIdx.x % G;
    const unsigned int a = j * c < S ? j * c : S, b = S - a < c ? S : a + c;
    for (unsigned int q0 = 0; q0 < cnt; q0 += NQ) {
        const unsigned int q = q0 + threadIdx.x / G;
        rt_acc_t v = rt_identity();
        if (q < cnt) {
            const rt_acc_t *p = part + m0 + q;
#pragma unroll 8
            for (unsigned int k = a; k < b; k++)
                v = rt_combine(v, co_load_partial(p + (unsigned long long)k * M));
        }
        v = co_warp_tree<G>(v);
        if (j == 0 && q < cnt)
            out[m0 + q] = rt_final(v);
    }
}
