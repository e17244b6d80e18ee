// @family      diffwarps
// @summary     paper's DiffWarps: persistent Matrix with P producer warps loading one of two shared buffers while C consumer warps reduce the other, named barriers
// @plan        onelaunch
// @commutative not-required
// @deterministic yes
// @param P 8 producer warps: they copy data-blocks from global into shared memory (1..31, P+C <= 32)
// @param C 1 consumer warps: 32*C rows per data-block, one per consumer thread (1..8)
// @param W 32 row width in elements: the data-block is 32*C*W elements (1..1024)
// @param PAD 1 1: rows are W+1 elements apart in shared memory, against bank conflicts; 0: W apart
//
// diffwarps.cu - Martin et al., "Algorithmic Strategies for Optimizing the Parallel Reduction
// Primitive in CUDA", section III.B.2 and Algorithm 4 (the producer-consumer scheme) on
// Persistent Matrix: DiffWarps, Table I and Fig. 2 (P=8, C=1, H=W=32, 288 threads).
//
// The grid and the work are Persistent Matrix's (persistent_matrix.cu): G = min(data-blocks,
// SMs x resident blocks per SM of this kernel), block b takes q or q+1 consecutive data-blocks,
// and the last block done combines the G partials in order. A data-block is an H x W matrix,
// H = 32*C rows of W elements each, row r the contiguous run r*W .. r*W + W-1, stored in
// shared memory with rows W+PAD elements apart.
//
// The block's warps split in two roles (threads per block = 32*(P+C)). Warps 0 .. C-1 are
// consumers: consumer thread r reduces row r sequentially, in order, the rows meet in
// left-storing warp trees (lane l with lane l+d, d = 1 .. 16), and with C > 1 the C warp
// results in order in consumer thread 0, which folds each data-block into its running value.
// Warps C .. C+P-1 are producers: they load data-block i of the block's run into buffer i%2,
// coalesced, all of a thread's loads in flight before its stores. Data-block i+1 is loaded
// while data-block i is reduced. The handoff is two pairs of named barriers, so that neither
// side waits on the other more than the data requires (the paper's Algorithm 4 uses one
// __syncthreads() per data-block, which also makes the producers wait for the reduction):
//
//   FULL[k]  (ids 1, 2)  producers bar.arrive after filling buffer k; consumers bar.sync on it
//                        before reading it
//   EMPTY[k] (ids 3, 4)  consumers bar.arrive once they have read buffer k (if a later
//                        data-block will reuse it); producers bar.sync on it before refilling k
//
// each with the block's thread count: the P*32 arrivals plus the C*32 waiters. A producer
// issues the loads of data-block i+2 before it waits on EMPTY (only the shared stores must
// wait), so a block keeps up to two data-blocks in flight. bar.arrive has release semantics
// and bar.sync acquire: the producers' stores are visible to the consumers after FULL, and the
// consumers' reads are done before a producer overwrites the buffer after EMPTY. A FULL[k]
// phase cannot mix two data-blocks: the producers arrive for data-block i+2 only after EMPTY[k]
// said the consumers are through data-block i, after their FULL[k] wait. The same argument
// holds for EMPTY. With C > 1 the consumers also meet on barrier 5 (C*32 threads) to pass
// their warp results in a shared array, double-buffered like the data.
//
// Every combine has the lower indices on the left: @commutative not-required.

#ifndef RT_PRELUDE
#include "standalone.cuh"   /* sum on float, for nvcc -c on this file alone */
#endif

#ifndef RT_P
#define RT_P 8     /* producer warps; the generator's prelude sets it */
#endif
#ifndef RT_C
#define RT_C 1     /* consumer warps */
#endif
#ifndef RT_W
#define RT_W 32    /* elements per row */
#endif
#ifndef RT_PAD
#define RT_PAD 1   /* 1: one padding element after each row */
#endif

#define DW_B ((RT_P + RT_C) * 32)              /* threads per block */
#define DW_WARPS (RT_P + RT_C)
#define DW_H (32 * RT_C)                       /* rows: one per consumer thread */
#define DW_D (DW_H * RT_W)                     /* elements per data-block */
#define DW_STRIDE (RT_W + RT_PAD)              /* shared elements from one row to the next */
#define DW_PT (32 * RT_P)                      /* producer threads */
#define DW_LOADS ((DW_D + DW_PT - 1) / DW_PT)  /* loads per producer thread per data-block */

/* Named barriers; 0 is __syncthreads(). */
#define DW_FULL 1    /* FULL[k] = 1 + k */
#define DW_EMPTY 3   /* EMPTY[k] = 3 + k */
#define DW_CONS 5    /* the consumers among themselves (C > 1) */

static_assert(RT_P >= 1 && RT_C >= 1 && RT_C <= 8 && RT_P + RT_C <= 32,
              "diffwarps: P must be at least 1, C in 1..8, P + C at most 32 warps");
static_assert(RT_W >= 1 && RT_W <= 1024, "diffwarps: W must be in 1..1024");
static_assert(RT_PAD == 0 || RT_PAD == 1, "diffwarps: PAD is 0 or 1");
static_assert(DW_LOADS <= 32,
              "diffwarps: at most 32 loads per producer thread per data-block (32*C*W <= 1024*P)");
static_assert(2 * DW_H * DW_STRIDE * sizeof(rt_value_t) + (2 * RT_C + DW_WARPS) * sizeof(rt_acc_t) + 16
              <= 48 * 1024,
              "diffwarps: two 32C x (W+PAD) buffers do not fit in 48 KB of static shared memory");

/* Checks the glue's signatures, and references every glue function. */
static_assert(sizeof(rt_combine(rt_lift(*(const rt_value_t *)0, 0ull),
                                rt_shfl_down(rt_identity(), 1u))) == sizeof(rt_acc_t),
              "diffwarps: the prelude's glue has the wrong signatures");

/* Threads per block, input elements per data-block, and the grid: SMs x the occupancy of the
 * compiled kernel (PLAN_GRID_OCCUPANCY in runtime/plan.h). */
extern "C" __device__ const unsigned int rt_meta[4] = { DW_B, DW_D, 0xffffffffu, 0 };

/* The ordered warp and block trees, the last-block-done finish (inlined by the generator). */
#include "collectives.cuh"

/* Named barriers (named_bar.cuh): FULL[k] and EMPTY[k] for a buffer index k known only at
 * run time. */
#include "named_bar.cuh"
static __device__ __forceinline__ void dw_wait_full(unsigned int k) { nb_wait2<DW_FULL, DW_B>(k); }
static __device__ __forceinline__ void dw_signal_full(unsigned int k) { nb_signal2<DW_FULL, DW_B>(k); }
static __device__ __forceinline__ void dw_wait_empty(unsigned int k) { nb_wait2<DW_EMPTY, DW_B>(k); }
static __device__ __forceinline__ void dw_signal_empty(unsigned int k) { nb_signal2<DW_EMPTY, DW_B>(k); }

/* Consumer thread r (0 .. H-1): row r of the matrix in buf, data-block from base; then the
 * consumers' warp tree. The bounds test is only for the last data-block of the input. */
static __device__ __forceinline__ rt_acc_t dw_row(const rt_value_t *buf, unsigned int r,
                                                  unsigned long long base, unsigned long long n)
{
    const rt_value_t *row = buf + r * DW_STRIDE;
    const unsigned long long first = base + (unsigned long long)r * RT_W;
    rt_acc_t v;
    if (base + DW_D <= n) {
        v = rt_lift(row[0], first);
#pragma unroll
        for (unsigned int k = 1; k < RT_W; k++)
            v = rt_combine(v, rt_lift(row[k], first + k));
    } else {
        v = rt_identity();
#pragma unroll 4
        for (unsigned int k = 0; k < RT_W; k++)
            if (first + k < n)
                v = rt_combine(v, rt_lift(row[k], first + k));
    }
    return v;
}

/* Producer thread pt (0 .. 32P-1): its elements pt, pt + 32P, ... of the data-block from base
 * into buf. wait_empty: the buffer held data-block i-2, which the consumers must be done with
 * before it is overwritten; the loads of a whole data-block are issued before that wait. */
static __device__ __forceinline__ void dw_produce(rt_value_t *buf, const rt_value_t *__restrict__ in,
                                                  unsigned int pt, unsigned long long base,
                                                  unsigned long long n, unsigned int k,
                                                  bool wait_empty)
{
    if (base + DW_D <= n) {
        rt_value_t x[DW_LOADS];
#pragma unroll
        for (unsigned int m = 0; m < DW_LOADS; m++) {
            const unsigned int j = pt + m * DW_PT;
            if (DW_D % DW_PT == 0 || j < DW_D)
                x[m] = in[base + j];
        }
        if (wait_empty)
            dw_wait_empty(k);
#pragma unroll
        for (unsigned int m = 0; m < DW_LOADS; m++) {
            const unsigned int j = pt + m * DW_PT;
            if (DW_D % DW_PT == 0 || j < DW_D)
                buf[(j / RT_W) * DW_STRIDE + j % RT_W] = x[m];
        }
    } else {
        /* The last data-block of the input: the slots past n stay unwritten, and unread. */
        if (wait_empty)
            dw_wait_empty(k);
#pragma unroll 4
        for (unsigned int m = 0; m < DW_LOADS; m++) {
            const unsigned int j = pt + m * DW_PT;
            if (j < DW_D && base + j < n)
                buf[(j / RT_W) * DW_STRIDE + j % RT_W] = in[base + j];
        }
    }
    dw_signal_full(k);
}

/* Thread 0 gets the values of threads 0 .. B-1 combined in thread order (collectives.cuh).
 * Every thread calls it; once per launch (warp 0 reads the shared array last). */
static __device__ __forceinline__ rt_acc_t dw_block_tree(rt_acc_t v)
{
    __shared__ rt_acc_t warp_part[DW_WARPS];
    return co_block_tree<DW_WARPS, true>(v, warp_part);
}

/* in: n elements, any element-aligned address. out[0]: the result. partials: at least
 * gridDim.x accumulators. counter: 0 before the first launch; each launch leaves it 0. */
extern "C" __global__ void __launch_bounds__(DW_B)
rt_one(const rt_value_t *__restrict__ in, rt_res_t *__restrict__ out, unsigned long long n,
       rt_acc_t *__restrict__ partials, unsigned int *__restrict__ counter)
{
    __shared__ rt_value_t buf[2][DW_H * DW_STRIDE];
    const unsigned int tid = threadIdx.x, warp = tid / 32;

    /* This block's run of data-blocks: q or q+1 from b*q + min(b, r). Correct for any grid,
     * also one larger than N_D (the blocks past it get none and contribute the identity). */
    const unsigned long long nblocks = (n + DW_D - 1) / DW_D;
    const unsigned long long q = nblocks / gridDim.x, r = nblocks % gridDim.x;
    const unsigned long long b = blockIdx.x;
    const unsigned long long first = b * q + (b < r ? b : r);
    const unsigned long long count = q + (b < r ? 1 : 0);

    rt_acc_t acc = rt_identity();   /* consumer thread 0's: the data-blocks so far, in order */
    if (warp < RT_C) {
#if RT_C > 1
        __shared__ rt_acc_t cons_part[2][RT_C];
#endif
        for (unsigned long long i = 0; i < count; i++) {
            const unsigned int k = (unsigned int)(i & 1);
            const unsigned long long base = (first + i) * DW_D;
            dw_wait_full(k);
            rt_acc_t v = dw_row(buf[k], tid, base, n);
            if (i + 2 < count)
                dw_signal_empty(k);   /* buffer k read: the producers may refill it */
            v = co_warp_tree<32>(v);
#if RT_C > 1
            if (tid % 32 == 0)
                cons_part[k][warp] = v;
            nb_sync<DW_CONS, 32 * RT_C>();
            if (tid == 0)
#pragma unroll
                for (unsigned int c = 0; c < RT_C; c++)
                    acc = rt_combine(acc, cons_part[k][c]);
#else
            if (tid == 0)
                acc = rt_combine(acc, v);
#endif
        }
    } else {
        const unsigned int pt = tid - 32 * RT_C;
        for (unsigned long long i = 0; i < count; i++) {
            const unsigned int k = (unsigned int)(i & 1);
            dw_produce(buf[k], in, pt, (first + i) * DW_D, n, k, i >= 2);
        }
    }

    /* Last block done (co_last_block; consumer thread 0 is thread 0): thread 0 stores the
     * block's partial and takes a ticket; the block that draws the last one combines partials
     * 0 .. G-1 in index order, thread t a contiguous chunk of them read from L2, then the
     * ordered block tree. */
    __shared__ bool is_last;
    if (!co_last_block(is_last, partials, acc, counter))
        return;
    acc = dw_block_tree(co_fold_partials<DW_B, true>(partials));
    if (tid == 0)
        out[0] = rt_final(acc);   /* the result: finalized (partials stay raw) */
}
