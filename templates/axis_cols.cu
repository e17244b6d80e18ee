// @family      axis_cols
// @summary     axis reduction in order, TX columns x B/TX row groups per block: CV-wide column vectors, U rows in flight, ordered shuffle and shared-memory trees, len split over blocks
// @plan        axis
// @commutative not-required
// @deterministic yes
// @param B 256 threads per block (multiple of 32, 64..1024)
// @param TX 32 column threads per block (power of two, 1..B); B/TX row groups, each a contiguous part of len
// @param CV 2 consecutive columns per thread (1, 2, 4, 8; CV * element size <= 16 bytes): one vector load where inner % CV == 0 and the input is aligned, else scalar loads
// @param U 4 rows each thread has in flight before it combines them (1, 2, 4, 8)
// @param CHUNK 0 fewest elements of len per split: 0 never splits; else the host splits long columns over blocks (e.g. 8192, 32768, 131072)
// @param IL 0 rows of a row group: 0 a contiguous run of the block's part (in order); 1 every TY-th row, so that each step of the block reads TY consecutive rows; 2 (splits) rows interleaved over the row groups and the splits too: row group ty of split s takes rows s*TY + ty, then S*TY further on each step, so that the splits of a tile read neighbouring rows at any time; with CHUNK = 0 (never split) IL = 2 is IL = 1, the same code (1 and 2: commutative operators only)
//
// axis_cols.cu - reduce an [outer, len, inner] tensor along len, in order, with the columns
// (inner) across the threads (docs/axis.md). Made for columns and the middle axis of 3-D
// tensors (inner > 1); with TX = 1 it is a block per row walking the row in B contiguous
// parts, the fallback for rows with a non-commutative operator.
//
// A tile is TX * CV consecutive inner indices of one outer index o (a tile never crosses
// outer). Thread (tx, ty) = (tid % TX, tid / TX) owns the CV columns i0 + tx*CV .. and row
// group ty the contiguous rows [lo + ty*p, lo + ty*p + p) of the block's part [lo, hi) of
// len (p = ceil((hi - lo) / TY)); with IL = 1 it owns rows lo + ty, lo + ty + TY, ... instead,
// so that the block's warps read TY consecutive rows at each step (one contiguous stream when
// the tile is a whole row, as a flat reduction reads: commutative operators only); with IL = 2
// the S splits give up their parts too: row group ty of split s owns rows s*TY + ty,
// s*TY + ty + S*TY, ..., so that the S blocks of a tile read S*TY neighbouring rows at each
// step, the grid-stride walk of tools/exp/tail.cu (commutative operators only); with CHUNK = 0
// there is one split and IL = 2 compiles to IL = 1's walk (its step TY a constant: the general
// walk's S * TY is known only at run time, up to 2.3x slower unsplit with U = 1 on the H100). It walks
// its rows in order, U rows in flight (each row's CV columns one vector load when
// inner % CV == 0 and `in` is aligned to CV * size, decided once at run time, else CV scalar
// loads), the U rows combined as an ordered tree and folded into its CV accumulators. A warp's load instruction reads min(TX, 32) * CV consecutive columns of
// a row. The row groups then meet in order: inside a warp (TX < 32) by a shuffle tree with
// stride TX (lane tx + TX*k holds row group k of the warp; lower rows on the left), then
// across warps (or across the row groups when TX >= 32) in shared memory, laid out
// [row group][column][tx] so that consecutive threads touch consecutive words, where thread
// tx < TX folds the R <= 32 values of each of its columns in order (columns in passes of CVS
// when all CV would not fit in 32 KB). Every combine keeps the lower indices on the left: a
// non-commutative operator gets the in-order result.
//
// Splits (few tiles, len > CHUNK): block (x, s) reduces its part of len (contiguous; IL = 2
// above) and stores raw partials; the last block of tile x folds them in split order and
// writes rt_final (more than 256 splits: the last block of each group of 32 folds its group
// first; ax_finish_splits in axis_common.cuh). Without splits each output is written once, through
// rt_final; len == 0 writes rt_final(rt_identity()).

#ifndef RT_PRELUDE
#include "standalone.cuh"   /* sum on float, for nvcc -c on this file alone */
#endif

#ifndef RT_B
#define RT_B 256     /* threads per block; the generator's prelude sets it */
#endif
#ifndef RT_TX
#define RT_TX 32     /* column threads */
#endif
#ifndef RT_CV
#define RT_CV 2      /* columns per thread */
#endif
#ifndef RT_U
#define RT_U 4       /* rows in flight per thread */
#endif
#ifndef RT_CHUNK
#define RT_CHUNK 0   /* fewest elements of len per split; 0: never split */
#endif
#ifndef RT_IL
#define RT_IL 0      /* 1: row group ty walks rows ty, ty + TY, ... of the block's part; 2: of len, over the splits too */
#endif

static_assert(RT_B >= 64 && RT_B <= 1024 && RT_B % 32 == 0, "axis_cols: B must be a multiple of 32 in 64..1024");
static_assert(RT_TX >= 1 && RT_TX <= RT_B && (RT_TX & (RT_TX - 1)) == 0 && RT_B % RT_TX == 0,
              "axis_cols: TX must be a power of two dividing B");
static_assert(RT_CV == 1 || RT_CV == 2 || RT_CV == 4 || RT_CV == 8, "axis_cols: CV must be 1, 2, 4 or 8");
static_assert(RT_CV * sizeof(rt_value_t) <= 16, "axis_cols: a vector is at most 16 bytes (CV * element size <= 16)");
static_assert(RT_U >= 1 && RT_U <= 8 && (RT_U & (RT_U - 1)) == 0, "axis_cols: U must be 1, 2, 4 or 8");
static_assert(RT_CHUNK >= 0 && RT_CHUNK <= 0x7fffffff, "axis_cols: CHUNK must be in 0..2^31-1");
static_assert(RT_IL >= 0 && RT_IL <= 2, "axis_cols: IL must be 0, 1 or 2");
static_assert(RT_IL == 0 || RT_COMMUTATIVE, "axis_cols: IL = 1 or 2 interleaves the rows and needs a commutative operator");

/* ax_ helpers: the ordered trees, the split's cut and last-block fold (inlined by the
 * generator, after the warp trees and the ticket they use). */
#include "collectives.cuh"
#include "axis_common.cuh"

#define AC_TY (RT_B / RT_TX)                      /* row groups */
#define AC_T (RT_TX * RT_CV)                      /* columns per tile */
#define AC_KW (RT_TX < 32 ? 32 / RT_TX : 1)       /* row groups in a warp */
#define AC_R (RT_TX < 32 ? RT_B / 32 : AC_TY)     /* values per column after the warp step */
/* Columns per pass of the shared step: all CV when AC_R * TX * CV accumulators fit in 32 KB. */
#define AC_CVS_FIT (32768u / (AC_R * RT_TX * (unsigned int)sizeof(rt_acc_t)))
#define AC_CVS (AC_CVS_FIT >= RT_CV ? RT_CV : ax_pow2_floor(AC_CVS_FIT >= 1 ? AC_CVS_FIT : 1))

/* Threads per block, columns per tile, the split chunk, tile unit PLAN_AXIS_TILE_INNER. */
extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, AC_T, (unsigned int)RT_CHUNK, 1u };

/* Rows [a, b) of the thread's walk over its CV columns: row l at p + l * stride, its index
 * along len first + l * step (p pointing at column c of the walk's row 0; stride = inner and
 * step = 1 for contiguous rows, TY times both for IL = 1, S*TY for IL = 2); w: the columns
 * that exist (CV, or fewer at the end of a row when inner % CV != 0). VEC: each row's CV columns are one aligned
 * vector. Folded in order into acc[]. Whole groups of U rows load without a test; the last
 * group clamps its rows to b - 1 (all loads in flight) and drops the extra ones. */
template <bool VEC>
static __device__ __forceinline__ void ac_walk(const rt_value_t *__restrict__ p, unsigned long long stride,
                                               unsigned long long a, unsigned long long b, unsigned int w,
                                               rt_acc_t (&acc)[RT_CV], unsigned long long first,
                                               unsigned long long step)
{
    if (b <= a)
        return;
    unsigned long long l = a;
    for (; l + RT_U <= b; l += RT_U) {
        rt_value_t x[RT_U][RT_CV];
#pragma unroll
        for (unsigned int u = 0; u < RT_U; u++) {
            const rt_value_t *r = p + (l + u) * stride;
            if constexpr (VEC) {
                ax_ldv<rt_value_t, RT_CV>(r, x[u]);
            } else {
#pragma unroll
                for (unsigned int k = 0; k < RT_CV; k++)
                    x[u][k] = ax_ld(r + (k < w ? k : w - 1));
            }
        }
        /* Column k's U rows in one accumulator: the glue's run where it has one (argmin/argmax:
         * a tree of the values and one lift; mean, var_mean: built-ins, which commute), else U
         * lifts and the ordered tree (co_tree keeps the order). Row u is first + (l + u) * step. */
#pragma unroll
        for (unsigned int k = 0; k < RT_CV; k++) {
            rt_value_t t[RT_U];
#pragma unroll
            for (unsigned int u = 0; u < RT_U; u++)
                t[u] = x[u][k];
            acc[k] = rt_combine(acc[k], co_lift_run(t, [&](int u) {
                return first + (l + (unsigned long long)u) * step;
            }));
        }
    }
    if (l < b) {
        rt_value_t x[RT_U][RT_CV];
#pragma unroll
        for (unsigned int u = 0; u < RT_U; u++) {
            const rt_value_t *r = p + (l + u < b ? l + u : b - 1) * stride;
            if constexpr (VEC) {
                ax_ldv<rt_value_t, RT_CV>(r, x[u]);
            } else {
#pragma unroll
                for (unsigned int k = 0; k < RT_CV; k++)
                    x[u][k] = ax_ld(r + (k < w ? k : w - 1));
            }
        }
#pragma unroll
        for (unsigned int u = 0; u < RT_U; u++)
            if (l + u < b) {
#pragma unroll
                for (unsigned int k = 0; k < RT_CV; k++)
                    acc[k] = rt_combine(acc[k], rt_lift(x[u][k], first + (l + u) * step));
            }
    }
}

/* The launch bound's blocks an SM (ax_min_blocks). argmin/argmax through the glue's run lift
 * no element: CV accumulators, the loads and their places; where a thread's loads are at
 * most 32 bytes the bound asks for 1024 threads an SM (64 registers, no spill in the space).
 * Left to the estimate, ptxas took 72 registers for argmax f32 at B = 512 (one block an SM,
 * 1.58x the time of the 64 it took before the run; H100, docs/results.md). */
#if defined(RT_LIFT_RUN) && (defined(RT_OP_ARGMAX) || defined(RT_OP_ARGMIN))
#define AC_LOAD_BYTES (RT_U * RT_CV * (unsigned int)sizeof(rt_value_t))
#define AC_EST_BLOCKS ax_min_blocks(RT_B, AC_LOAD_BYTES, RT_U * RT_CV, RT_CV)
#define AC_MIN_BLOCKS (AC_LOAD_BYTES <= 32 && AC_EST_BLOCKS < 1024 / RT_B ? 1024 / RT_B : AC_EST_BLOCKS)
#else
#define AC_MIN_BLOCKS ax_min_blocks(RT_B, RT_U * RT_CV * sizeof(rt_value_t), RT_U * RT_CV, RT_U * RT_CV + RT_CV)
#endif

extern "C" __global__ void __launch_bounds__(RT_B, AC_MIN_BLOCKS)
rt_axis(const rt_value_t *__restrict__ in, rt_res_t *__restrict__ out, rt_acc_t *__restrict__ part,
        unsigned int *__restrict__ counter, unsigned long long outer, unsigned long long len,
        unsigned long long inner)
{
    const unsigned int tid = threadIdx.x, tx = tid % RT_TX, ty = tid / RT_TX;
    const unsigned long long M = outer * inner, per_outer = (inner + AC_T - 1) / AC_T;
    const unsigned long long tiles = outer * per_outer;
    /* The block's part of len, and this row group's share of it: rows [ra, rb) of its walk,
     * row l being row first + l * step of len. */
#if RT_IL == 2 && RT_CHUNK > 0
    /* Rows s*TY + ty + k*S*TY of all len, k = 0, 1, ... */
    const unsigned long long step = (unsigned long long)gridDim.y * AC_TY, ra = 0;
    const unsigned long long first = (unsigned long long)blockIdx.y * AC_TY + ty;
    const unsigned long long rb = first < len ? (len - first + step - 1) / step : 0;
#elif RT_IL   /* IL = 1, or IL = 2 unsplit (one split: the same rows) */
    unsigned long long lo, hi;
    ax_part(len, blockIdx.y, gridDim.y, lo, hi);
    const unsigned long long first = lo + ty, step = AC_TY, ra = 0;
    const unsigned long long rb = first < hi ? (hi - first + AC_TY - 1) / AC_TY : 0;
#else
    unsigned long long lo, hi;
    ax_part(len, blockIdx.y, gridDim.y, lo, hi);
    const unsigned long long first = 0, step = 1;
    const unsigned long long rp = (hi - lo + AC_TY - 1) / AC_TY;
    const unsigned long long ra = lo + ty * rp < hi ? lo + ty * rp : hi;
    const unsigned long long rb = hi - ra < rp ? hi : ra + rp;
#endif
    const bool vec = RT_CV > 1 && inner % RT_CV == 0
                     && reinterpret_cast<unsigned long long>(in) % (RT_CV * sizeof(rt_value_t)) == 0;
#if AC_R > 1
    __shared__ rt_acc_t s_rows[AC_R * AC_CVS * RT_TX];
#endif
    __shared__ unsigned int s_flag;

    for (unsigned long long x = blockIdx.x; x < tiles; x += gridDim.x) {
        /* Tile x is (o, t) = (x / per_outer, x % per_outer). */
        const unsigned long long o = ax_div(x, per_outer), t = x - o * per_outer;
        const unsigned long long i0 = t * AC_T;
        const unsigned long long c = i0 + (unsigned long long)tx * RT_CV;   /* first column */
        const unsigned int w = c < inner ? (inner - c < RT_CV ? (unsigned int)(inner - c) : RT_CV) : 0;
        rt_acc_t acc[RT_CV];
#pragma unroll
        for (unsigned int k = 0; k < RT_CV; k++)
            acc[k] = rt_identity();
        if (w > 0) {
            const rt_value_t *p = in + (o * len + first) * inner + c;
            if (RT_CV > 1 && vec)
                ac_walk<true>(p, inner * step, ra, rb, w, acc, first, step);
            else
                ac_walk<false>(p, inner * step, ra, rb, w, acc, first, step);
        }

        /* The row groups of a warp (TX < 32): lane tx + TX*k holds row group k of the warp;
         * the ordered tree with stride TX leaves them, in order, in lane tx. */
#if AC_KW > 1
#pragma unroll
        for (unsigned int d = 1; d < AC_KW; d *= 2)
#pragma unroll
            for (unsigned int k = 0; k < RT_CV; k++)
                acc[k] = rt_combine(acc[k], rt_shfl_down(acc[k], RT_TX * d));
#endif
        /* The AC_R values of each column (warps when TX < 32, row groups otherwise) meet in
         * shared memory, in order, in thread tx (tid < TX). */
#if AC_R > 1
        {
            const unsigned int r = RT_TX < 32 ? tid / 32 : ty;
            const bool holder = RT_TX < 32 ? tid % 32 < RT_TX : true;
#pragma unroll
            for (unsigned int k0 = 0; k0 < RT_CV; k0 += AC_CVS) {
                if (holder) {
#pragma unroll
                    for (unsigned int k = 0; k < AC_CVS; k++)
                        s_rows[(r * AC_CVS + k) * RT_TX + tx] = acc[k0 + k];
                }
                __syncthreads();
                if (tid < RT_TX) {
#pragma unroll
                    for (unsigned int k = 0; k < AC_CVS; k++) {
                        rt_acc_t v = s_rows[k * RT_TX + tx];
#pragma unroll 8
                        for (unsigned int q = 1; q < AC_R; q++)
                            v = rt_combine(v, s_rows[(q * AC_CVS + k) * RT_TX + tx]);
                        acc[k0 + k] = v;
                    }
                }
                __syncthreads();   /* s_rows is rewritten by the next pass or tile */
            }
        }
#endif
        const unsigned long long m = o * inner + c;   /* the thread's first output */
        if (gridDim.y == 1) {
            if (tid < RT_TX) {
#pragma unroll
                for (unsigned int k = 0; k < RT_CV; k++)
                    if (k < w)
                        out[m + k] = rt_final(acc[k]);
            }
        } else {
            /* Split: raw partials, then the blocks that finish last fold them in split order
             * (grid.x is the number of tiles: this is the block's only tile). */
            if (tid < RT_TX) {
#pragma unroll
                for (unsigned int k = 0; k < RT_CV; k++)
                    if (k < w)
                        part[blockIdx.y * M + m + k] = acc[k];
            }
            ax_finish_splits<RT_B, AC_T>(part, out, counter, x, M, o * inner + i0,
                                         (unsigned int)(inner - i0 < AC_T ? inner - i0 : AC_T), s_flag);
        }
    }
}
