// @family      persistent_matrix
// @summary     paper's Persistent Matrix: Matrix data-blocks, a resident grid (SMs x occupancy), each block q or q+1 consecutive data-blocks, ordered last-block-done finish
// @plan        onelaunch
// @commutative not-required
// @deterministic yes
// @param B 256 threads per block, all of which load (multiple of 32, 32..1024)
// @param H 32 rows of the matrix, one thread each (multiple of 32, at most B)
// @param W 32 row width in elements: the data-block is H*W elements (1..1024)
// @param PAD 1 1: rows are W+1 elements apart in shared memory, against bank conflicts; 0: W apart
//
// persistent_matrix.cu - Martin et al., "Algorithmic Strategies for Optimizing the Parallel
// Reduction Primitive in CUDA", section III.B.1 (persistent blocks) on Algorithm 3 (Persistent
// Matrix, Table I).
//
// A data-block is reduced exactly as in matrix.cu: D = H*W elements loaded coalesced by all
// B threads into an H x (W+PAD) matrix in shared memory, threads 0 .. H-1 reduce a row each
// sequentially, the row results meet in left-storing warp trees. What changes is the grid:
// rt_meta[2] is PLAN_GRID_OCCUPANCY, so the host launches G = min(data-blocks, SMs x the
// resident blocks per SM of this kernel as compiled), the paper's NUM_MULTIPROCESSORS * MBPM.
// With N_D = ceil(n / D) data-blocks, q = N_D / G and r = N_D % G, block b reduces the q+1
// (b < r) or q consecutive data-blocks from b*q + min(b, r), in order, thread 0 folding each
// one's result into its running value (the paper's shared accumulator). Block b's partial
// thus covers a contiguous run, lower than block b+1's.
//
// The paper then runs a second launch over the G partials; here the plan is onelaunch: the
// last block to finish (acquire-release ticket, as gridstride) combines partials 0 .. G-1 in
// index order, thread t a contiguous chunk of them, then the left-storing warp trees. Every
// combine has the lower indices on the left: @commutative not-required. G depends on the
// device and on the compiled kernel only, so the bracketing, and the result, is reproducible.

#ifndef RT_PRELUDE
#include "standalone.cuh"   /* sum on float, for nvcc -c on this file alone */
#endif

#ifndef RT_B
#define RT_B 256   /* threads per block; the generator's prelude sets it */
#endif
#ifndef RT_H
#define RT_H 32    /* rows, one thread each */
#endif
#ifndef RT_W
#define RT_W 32    /* elements per row */
#endif
#ifndef RT_PAD
#define RT_PAD 1   /* 1: one padding element after each row */
#endif

#define PM_D (RT_H * RT_W)                      /* elements per data-block */
#define PM_STRIDE (RT_W + RT_PAD)               /* shared elements from one row to the next */
#define PM_LOADS ((PM_D + RT_B - 1) / RT_B)     /* loads per thread */
#define PM_WARPS (RT_B / 32)

static_assert(RT_B >= 32 && RT_B <= 1024 && RT_B % 32 == 0,
              "persistent_matrix: B must be a multiple of 32 in 32..1024");
static_assert(RT_H >= 32 && RT_H <= RT_B && RT_H % 32 == 0,
              "persistent_matrix: H must be a multiple of 32, at most B");
static_assert(RT_W >= 1 && RT_W <= 1024, "persistent_matrix: W must be in 1..1024");
static_assert(RT_PAD == 0 || RT_PAD == 1, "persistent_matrix: PAD is 0 or 1");
static_assert(PM_LOADS <= 64, "persistent_matrix: at most 64 loads per thread (H*W <= 64*B)");
static_assert(RT_H * PM_STRIDE * sizeof(rt_value_t) + (RT_H / 32 + PM_WARPS) * sizeof(rt_acc_t) + 16
              <= 48 * 1024,
              "persistent_matrix: the H x (W+PAD) matrix does not fit in 48 KB of static shared memory");

/* Checks the glue's signatures, and references every glue function. */
static_assert(sizeof(rt_combine(rt_lift(*(const rt_value_t *)0, 0ull),
                                rt_shfl_down(rt_identity(), 1u))) == sizeof(rt_acc_t),
              "persistent_matrix: the prelude's glue has the wrong signatures");

/* The ordered warp and block trees, the last-block-done finish (inlined by the generator). */
#include "collectives.cuh"

/* Threads per block, input elements per data-block, and the grid: SMs x the occupancy of the
 * compiled kernel (PLAN_GRID_OCCUPANCY in runtime/plan.h). */
extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, PM_D, 0xffffffffu, 0 };

/* Data-block elements base .. base + D-1 (those below n) into the padded matrix. */
static __device__ __forceinline__ void pm_load(rt_value_t *s, const rt_value_t *__restrict__ in,
                                               unsigned long long base, unsigned long long n)
{
    const unsigned int tid = threadIdx.x;
    if (base + PM_D <= n) {
        rt_value_t x[PM_LOADS];
#pragma unroll
        for (unsigned int m = 0; m < PM_LOADS; m++) {
            const unsigned int j = tid + m * RT_B;
            if (PM_D % RT_B == 0 || j < PM_D)
                x[m] = in[base + j];
        }
#pragma unroll
        for (unsigned int m = 0; m < PM_LOADS; m++) {
            const unsigned int j = tid + m * RT_B;
            if (PM_D % RT_B == 0 || j < PM_D)
                s[(j / RT_W) * PM_STRIDE + j % RT_W] = x[m];
        }
    } else {
        /* The last data-block: the slots past n stay unwritten, and unread (pm_rows). */
#pragma unroll
        for (unsigned int m = 0; m < PM_LOADS; m++) {
            const unsigned int j = tid + m * RT_B;
            if (j < PM_D && base + j < n)
                s[(j / RT_W) * PM_STRIDE + j % RT_W] = in[base + j];
        }
    }
}

/* The matrix in s (loaded, after a barrier) reduced; the result is in thread 0. Every thread
 * calls it: when H > 32 it holds a barrier, and then warp 0 reads s_part, which the next
 * data-block's rows overwrite only after two more barriers. */
static __device__ __forceinline__ rt_acc_t pm_rows(const rt_value_t *s, unsigned long long base,
                                                   unsigned long long n)
{
    const unsigned int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    rt_acc_t v = rt_identity();
    if (tid < RT_H) {
        /* Row tid, sequentially: consecutive threads are PM_STRIDE elements apart, so with
         * PAD=1 and 4-byte elements the 32 lanes of a warp read 32 different banks. */
        const rt_value_t *row = s + tid * PM_STRIDE;
        const unsigned long long first = base + (unsigned long long)tid * RT_W;
        if (base + PM_D <= n) {
            v = rt_lift(row[0], first);
#pragma unroll
            for (unsigned int k = 1; k < RT_W; k++)
                v = rt_combine(v, rt_lift(row[k], first + k));
        } else {
#pragma unroll 4
            for (unsigned int k = 0; k < RT_W; k++)
                if (first + k < n)
                    v = rt_combine(v, rt_lift(row[k], first + k));
        }
        v = co_warp_tree<32>(v);   /* whole warps: H is a multiple of 32 */
    }
#if RT_H > 32
    __shared__ rt_acc_t s_part[RT_H / 32];
    v = co_warps_tree<RT_H / 32, true, false>(v, s_part, lane, warp);   /* the row warps', in order */
#else
    (void)lane;
    (void)warp;
#endif
    return v;
}

/* Thread 0 gets the values of threads 0 .. B-1 combined in thread order (collectives.cuh).
 * Every thread calls it; once per launch (warp 0 reads the shared array last). */
static __device__ __forceinline__ rt_acc_t pm_block_tree(rt_acc_t v)
{
#if PM_WARPS > 1
    __shared__ rt_acc_t warp_part[PM_WARPS];
    return co_block_tree<PM_WARPS, true>(v, warp_part);
#else
    return co_warp_tree<32>(v);
#endif
}

/* in: n elements, any element-aligned address. out[0]: the result. partials: at least
 * gridDim.x accumulators. counter: 0 before the first launch; each launch leaves it 0. */
extern "C" __global__ void __launch_bounds__(RT_B)
rt_one(const rt_value_t *__restrict__ in, rt_res_t *__restrict__ out, unsigned long long n,
       rt_acc_t *__restrict__ partials, unsigned int *__restrict__ counter)
{
    __shared__ rt_value_t s[RT_H * PM_STRIDE];
    const unsigned int tid = threadIdx.x;

    /* This block's run of data-blocks: q or q+1 from b*q + min(b, r). Correct for any grid,
     * also one larger than N_D (the blocks past it get none and contribute the identity). */
    const unsigned long long nblocks = (n + PM_D - 1) / PM_D;
    const unsigned long long q = nblocks / gridDim.x, r = nblocks % gridDim.x;
    const unsigned long long b = blockIdx.x;
    const unsigned long long first = b * q + (b < r ? b : r);
    const unsigned long long last = first + q + (b < r ? 1 : 0);

    rt_acc_t acc = rt_identity();   /* thread 0's: the data-blocks so far, in order */
    for (unsigned long long t = first; t < last; t++) {
        if (t != first)
            __syncthreads();   /* the previous data-block's rows have been read */
        const unsigned long long base = t * PM_D;
        pm_load(s, in, base, n);
        __syncthreads();
        const rt_acc_t v = pm_rows(s, base, n);
        if (tid == 0)
            acc = rt_combine(acc, v);
    }

    /* Last block done (co_last_block): thread 0 stores the block's partial and takes a ticket;
     * the block that draws the last one combines partials 0 .. G-1 in index order, thread t a
     * contiguous chunk of them read from L2, then the ordered block tree. */
    __shared__ bool is_last;
    if (!co_last_block(is_last, partials, acc, counter))
        return;
    acc = pm_block_tree(co_fold_partials<RT_B, true>(partials));
    if (tid == 0)
        out[0] = rt_final(acc);   /* the result: finalized (partials stay raw) */
}
