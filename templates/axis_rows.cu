// @family      axis_rows
// @summary     axis reduction, a group of L lanes per output (row): 16-byte vector loads, U in flight, shuffle (and shared) trees, len split over blocks with a last-block fold
// @plan        axis
// @commutative required
// @deterministic yes
// @param B 256 threads per block (multiple of 32, 64..1024)
// @param L 32 lanes per output: 1, 2, 4, 8, 16, 32 (a warp), or a multiple of 32 dividing B (several warps per output, meeting in shared memory)
// @param V 4 elements per vector load (1, 2, 4, 8, 16; V * element size <= 16 bytes); used where inner == 1, len % V == 0 and the input is aligned, else scalar loads
// @param U 2 loads in flight per lane before it combines them (1, 2, 4, 8)
// @param CHUNK 0 fewest elements of len per split: 0 never splits; else the host splits long rows over blocks (e.g. 8192, 32768, 131072)
// @param IL 0 the splits' parts of a row: 0 contiguous, equal parts; 1 interleaved rounds (split s takes rounds s, s + S, ... of U*L*V elements), so that a row's blocks read neighbouring memory at any time, as gridstride's grid does
//
// axis_rows.cu - reduce an [outer, len, inner] tensor along len, one group of lanes per
// output (docs/axis.md). Made for rows (inner == 1: an output's elements are contiguous);
// correct, with strided scalar loads, for inner > 1.
//
// A tile is B / L consecutive outputs of the flattened [outer * inner]; group g of the block
// (threads g*L .. g*L + L-1) reduces output m = tile * (B/L) + g. In a round each lane issues
// U loads of V consecutive elements, lane j of the group taking vectors j, j + L, ..., so
// each load instruction of the group reads L*V consecutive elements (a warp of groups reads
// 32*V*size contiguous bytes when L*V covers whole rows, and L*V*size bytes per row else),
// all U loads in flight before any is combined. Vector loads need the row to start on a
// vector: inner == 1, len % V == 0 and `in` aligned to V * size, decided once at run time
// (the same for every block); otherwise the same walk with V = 1. A lane's values meet in
// the group's halving shuffle tree; with L > 32 the L/32 warps of a group meet once more in
// shared memory (the first warp of the group combines them). Lanes combine out of index
// order: a commutative operator only.
//
// Long rows (few outputs, len > CHUNK) are split: the host launches grid.y = S splits, block
// (x, s) reduces its part of len (IL = 0, ax_part: contiguous, equal, multiples of 16
// elements; IL = 1: rounds s, s + S, s + 2S, ... of the row, a round being the U*L*V elements
// the group loads at once, the partial last round to the split whose turn it is; the
// grid-stride walk of tools/exp/tail.cu, which read 3-5% faster than contiguous parts at
// 256-512 MiB) and stores its raw partials, the last block of tile x to finish (a ticket on counter[x]) folds
// the S partials of each output in split order and writes rt_final of them (more than 256
// splits: the last block of each group of 32 folds its group first; ax_finish_splits in
// axis_common.cuh). Without splits each output is written once, through rt_final; len == 0
// writes rt_final(rt_identity()).

#ifndef RT_PRELUDE
#include "standalone.cuh"   /* sum on float, for nvcc -c on this file alone */
#endif

#ifndef RT_B
#define RT_B 256     /* threads per block; the generator's prelude sets it */
#endif
#ifndef RT_L
#define RT_L 32      /* lanes per output */
#endif
#ifndef RT_V
#define RT_V 4       /* elements per vector load */
#endif
#ifndef RT_U
#define RT_U 2       /* loads in flight per lane */
#endif
#ifndef RT_CHUNK
#define RT_CHUNK 0   /* fewest elements of len per split; 0: never split */
#endif
#ifndef RT_IL
#define RT_IL 0      /* 1: the splits take a row's rounds in turn */
#endif

#if !RT_COMMUTATIVE
#error "axis_rows combines elements out of order: it needs a commutative operator"
#endif

static_assert(RT_B >= 64 && RT_B <= 1024 && RT_B % 32 == 0, "axis_rows: B must be a multiple of 32 in 64..1024");
static_assert((RT_L >= 1 && RT_L <= 32 && (RT_L & (RT_L - 1)) == 0) || (RT_L % 32 == 0 && RT_L <= RT_B && RT_B % RT_L == 0),
              "axis_rows: L must be 1, 2, 4, 8, 16, 32 or a multiple of 32 dividing B");
static_assert(RT_V >= 1 && RT_V <= 16 && (RT_V & (RT_V - 1)) == 0, "axis_rows: V must be 1, 2, 4, 8 or 16");
static_assert(RT_V * sizeof(rt_value_t) <= 16, "axis_rows: a vector is at most 16 bytes (V * element size <= 16)");
static_assert(RT_U >= 1 && RT_U <= 8 && (RT_U & (RT_U - 1)) == 0, "axis_rows: U must be 1, 2, 4 or 8");
static_assert(RT_CHUNK >= 0 && RT_CHUNK <= 0x7fffffff, "axis_rows: CHUNK must be in 0..2^31-1");
static_assert(RT_IL == 0 || RT_IL == 1, "axis_rows: IL must be 0 or 1");

/* ax_ helpers: the ordered trees, the split's cut and last-block fold (inlined by the
 * generator, after the warp trees and the ticket they use). */
#include "collectives.cuh"
#include "axis_common.cuh"

#define AR_T (RT_B / RT_L)                 /* outputs per tile */
#define AR_G (RT_L < 32 ? RT_L : 32)       /* lanes of a group in one warp */
#define AR_WPO (RT_L > 32 ? RT_L / 32 : 1) /* warps per output */

/* Threads per block, outputs per tile, the split chunk, tile unit PLAN_AXIS_TILE_FLAT. */
extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, AR_T, (unsigned int)RT_CHUNK, 0u };

/* Elements l in [lo, hi) of one output, at in[base + l * stride], reduced by lane j of the
 * RT_L lanes of its group (the lane's share only; the group tree combines the lanes), in
 * rounds of ROUND = U*L*VV elements. IL: only rounds s, s + S, s + 2S, ... of the range (split
 * s of S, IL = 1), and the partial round after the whole ones if it is split s's turn; else
 * every round. VV > 1: stride == 1, base + lo and hi - lo multiples of VV, in + base aligned
 * to VV * size. Whole rounds load without a test; the partial one clamps each load to the last
 * vector of the range (all U in flight) and drops what lies past it. (IL = false is the code
 * of the contiguous parts as it was before IL, to the PTX.) */
template <unsigned int VV, bool IL>
static __device__ __forceinline__ rt_acc_t ar_reduce(const rt_value_t *__restrict__ in, unsigned long long base,
                                                     unsigned long long stride, unsigned long long lo,
                                                     unsigned long long hi, unsigned int j, unsigned int s,
                                                     unsigned int S)
{
    constexpr unsigned int STEP = RT_L * VV;   /* elements between a lane's loads */
    constexpr unsigned int ROUND = STEP * RT_U;
    rt_acc_t acc = rt_identity();
    if (hi <= lo)
        return acc;
    const unsigned long long rounds = (hi - lo) / ROUND;
    const unsigned long long nfull = IL ? (rounds > s ? (rounds - s + S - 1) / S : 0) : rounds;
    const unsigned long long rstep = IL ? (unsigned long long)S * ROUND : ROUND;
    unsigned long long l = lo + (IL ? (unsigned long long)s * ROUND : 0) + (unsigned long long)j * VV;
    /* p: the lane's next load; the index l is only for rt_lift (dead code for most ops). */
    const rt_value_t *p = in + base + l * stride;
    const unsigned long long pstep = STEP * stride;
    for (unsigned long long r = 0; r < nfull; r++, l += rstep, p += rstep * stride) {
        rt_value_t x[RT_U][VV];
#pragma unroll
        for (unsigned int u = 0; u < RT_U; u++) {
            if constexpr (VV > 1)
                ax_ldv<rt_value_t, VV>(p + u * STEP, x[u]);
            else
                x[u][0] = ax_ld(p + u * pstep);
        }
        /* The round's U*VV elements in one accumulator: the glue's run where it has one
         * (argmin/argmax: a tree of the values and one lift; mean, var_mean), else U*VV lifts
         * and the tree. Element k is at l + (k / VV) * STEP + k % VV of the row. */
        rt_value_t e[RT_U * VV];
#pragma unroll
        for (unsigned int u = 0; u < RT_U; u++)
#pragma unroll
            for (unsigned int q = 0; q < VV; q++)
                e[u * VV + q] = x[u][q];
        acc = rt_combine(acc, co_lift_run(e, [&](int k) {
            return l + (unsigned long long)(k / VV) * STEP + k % VV;
        }));
    }
    if (IL ? rounds % S == s && lo + rounds * ROUND < hi : lo + nfull * ROUND < hi) {
        if (IL)
            l = lo + rounds * ROUND + (unsigned long long)j * VV;
        const unsigned long long last = hi - VV;   /* the last vector of the range */
        rt_value_t x[RT_U][VV];
#pragma unroll
        for (unsigned int u = 0; u < RT_U; u++) {
            const unsigned long long lu = l + u * STEP < last ? l + u * STEP : last;
            if constexpr (VV > 1)
                ax_ldv<rt_value_t, VV>(in + base + lu, x[u]);
            else
                x[u][0] = ax_ld(in + base + lu * stride);
        }
#pragma unroll
        for (unsigned int u = 0; u < RT_U; u++)
            if (l + u * STEP < hi) {
#pragma unroll
                for (unsigned int e = 0; e < VV; e++)
                    acc = rt_combine(acc, rt_lift(x[u][e], l + u * STEP + e));
            }
    }
    return acc;
}

/* Output m's part of len for this block: split s of S takes its contiguous part (ax_part) or,
 * IL = 1 and S > 1, its rounds of the whole row. */
template <unsigned int VV>
static __device__ __forceinline__ rt_acc_t ar_output(const rt_value_t *__restrict__ in, unsigned long long base,
                                                     unsigned long long stride, unsigned long long lo,
                                                     unsigned long long hi, unsigned long long len,
                                                     unsigned int j)
{
#if RT_IL
    if (gridDim.y > 1)
        return ar_reduce<VV, true>(in, base, stride, 0, len, j, blockIdx.y, gridDim.y);
#endif
    return ar_reduce<VV, false>(in, base, stride, lo, hi, j, 0, 1);
}

extern "C" __global__ void __launch_bounds__(RT_B, ax_min_blocks(RT_B, RT_U * RT_V * sizeof(rt_value_t), RT_U, RT_U * RT_V))
rt_axis(const rt_value_t *__restrict__ in, rt_res_t *__restrict__ out, rt_acc_t *__restrict__ part,
        unsigned int *__restrict__ counter, unsigned long long outer, unsigned long long len,
        unsigned long long inner)
{
    const unsigned int tid = threadIdx.x, g = tid / RT_L, j = tid % RT_L;
    const unsigned long long M = outer * inner, tiles = (M + AR_T - 1) / AR_T;
    unsigned long long lo, hi;
    ax_part(len, blockIdx.y, gridDim.y, lo, hi);
    /* Vector loads: every row starts on a vector (uniform over the launch). */
    const bool vec = RT_V > 1 && inner == 1 && len % RT_V == 0
                     && reinterpret_cast<unsigned long long>(in) % (RT_V * sizeof(rt_value_t)) == 0;
#if RT_L > 32
    __shared__ rt_acc_t s_warp[RT_B / 32];
    const unsigned int lane = tid % 32, warp = tid / 32;
#endif
    __shared__ unsigned int s_flag;

    for (unsigned long long x = blockIdx.x; x < tiles; x += gridDim.x) {
        const unsigned long long m = x * AR_T + g;
        rt_acc_t v = rt_identity();
        if (m < M) {
            unsigned long long base = m * len, stride = 1;
            if (inner != 1) {
                /* (o, i) = (m / inner, m % inner) */
                const unsigned long long o = m / inner, i = m - o * inner;
                base = o * len * inner + i;
                stride = inner;
            }
            if (RT_V > 1 && vec)
                v = ar_output<RT_V>(in, base, 1, lo, hi, len, j);
            else
                v = ar_output<1>(in, base, stride, lo, hi, len, j);
        }
        v = co_warp_halving<AR_G>(v);
#if RT_L > 32
        /* The group's warps meet in shared memory; the group's first warp combines them. */
        if (lane == 0)
            s_warp[warp] = v;
        __syncthreads();
        if (warp % AR_WPO == 0) {
            v = lane < AR_WPO ? s_warp[warp + lane] : rt_identity();
            v = co_warp_halving<ax_pow2_ceil(AR_WPO)>(v);
        }
        __syncthreads();   /* s_warp is rewritten by the next tile */
#endif
        if (gridDim.y == 1) {
            if (j == 0 && m < M)
                out[m] = rt_final(v);
        } else {
            /* Split: raw partials, then the blocks that finish last fold them in order
             * (grid.x is the number of tiles: this is the block's only tile). */
            if (j == 0 && m < M)
                part[blockIdx.y * M + m] = v;
            ax_finish_splits<RT_B, AR_T>(part, out, counter, x, M, x * AR_T,
                                         (unsigned int)(M - x * AR_T < AR_T ? M - x * AR_T : AR_T), s_flag);
        }
    }
}
