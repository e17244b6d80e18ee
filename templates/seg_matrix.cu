// @family      seg_matrix
// @summary     segmented, keys: paper's Matrix and Persistent Matrix, H x W data-block with its owners in padded shared memory, a thread per row, block segmented scan
// @plan        segmented
// @layout      keys
// @balanced    yes
// @commutative not-required
// @deterministic yes
// @param LAYOUT 1 1: keys, 2: offsets (this family implements keys only)
// @param OFF64 0 offsets are 32-bit (0) or 64-bit (1); ignored for keys
// @param B 256 threads per block, all of which load (multiple of 32, 32..1024)
// @param H 32 rows of the matrix, one thread each (multiple of 32, at most B)
// @param W 32 row width in elements: the data-block is H*W elements (1..128)
// @param PAD 1 1: rows are W+1 elements apart in shared memory, against bank conflicts; 0: W apart
// @param PERSIST 0 1: Persistent Matrix, a resident grid (SMs x occupancy) loops over the data-blocks; 0: Matrix, one block per data-block
//
// seg_matrix.cu - Martin et al., "Algorithmic Strategies for Optimizing the Parallel Reduction
// Primitive in CUDA", section IV.A (segmented Matrix) and IV.B (with persistent blocks).
//
// The data-block of D = H*W elements and their owners (keys) is loaded coalesced by all B
// threads into two H x (W+PAD) matrices in shared memory; thread r < H then reduces row r
// sequentially, as the paper's fragment does: it stores every run that begins and ends in the
// row and keeps the row's first run (head) and last run (tail). Where the paper combines the
// rows' tails with a right-storing intra-warp tree and read-modify-writes of g_output, the rows
// here meet in the block-wide segmented scan of seg_common.cuh (each row's head completed by
// the run open at its start), so that every out[s] is written once, with a plain store, and the
// result is the same for any operator and any timing; the contract's carry takes the data-
// block's first run when its segment began in an earlier data-block (docs/segmented.md).
// PERSIST=1: rt_meta asks for the occupancy grid and blocks take data-blocks b, b + G, ...
// (grid stride: the carries make any assignment correct, so the paper's q/r split of
// consecutive data-blocks is not needed).

#ifndef RT_PRELUDE
#include "standalone.cuh"   /* sum on float, for nvcc -c on this file alone */
#endif

#ifndef RT_LAYOUT
#define RT_LAYOUT 1
#endif
#ifndef RT_OFF64
#define RT_OFF64 0
#endif
#ifndef RT_B
#define RT_B 256     /* threads per block; the generator's prelude sets it */
#endif
#ifndef RT_H
#define RT_H 32      /* rows, one thread each */
#endif
#ifndef RT_W
#define RT_W 32      /* elements per row */
#endif
#ifndef RT_PAD
#define RT_PAD 1     /* 1: one padding element after each row */
#endif
#ifndef RT_PERSIST
#define RT_PERSIST 0 /* 1: occupancy grid */
#endif

#include "seg_common.cuh"

static_assert(RT_LAYOUT == 1, "seg_matrix: only the keys layout (LAYOUT=1)");
static_assert(RT_B >= 32 && RT_B <= 1024 && RT_B % 32 == 0, "seg_matrix: B must be a multiple of 32 in 32..1024");
static_assert(RT_H >= 32 && RT_H <= RT_B && RT_H % 32 == 0, "seg_matrix: H must be a multiple of 32, at most B");
static_assert(RT_W >= 1 && RT_W <= 128, "seg_matrix: W must be in 1..128");
static_assert(RT_PAD == 0 || RT_PAD == 1, "seg_matrix: PAD is 0 or 1");
static_assert(RT_PERSIST == 0 || RT_PERSIST == 1, "seg_matrix: PERSIST is 0 or 1");

typedef sc_keys<RT_B, RT_H, RT_W, RT_W, RT_PAD, true> mx_keys;
static_assert(mx_keys::SLOTS * (sizeof(rt_value_t) + 4) <= 44 * 1024,
              "seg_matrix: the H x (W+PAD) data and owner matrices do not fit in 44 KB of shared memory");

extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, RT_H * RT_W, RT_PERSIST ? 0xffffffffu : 0u, 0u };

extern "C" __global__ void __launch_bounds__(RT_B)
rt_seg(const rt_value_t *__restrict__ in, const void *seg, unsigned long long n, unsigned long long nseg,
       rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry, unsigned long long ntiles)
{
    __shared__ rt_value_t s_data[mx_keys::SLOTS];
    __shared__ unsigned int s_owner[mx_keys::SLOTS];
    for (unsigned long long t = blockIdx.x; t < ntiles; t += gridDim.x) {
        if (t != blockIdx.x)
            __syncthreads();   /* the previous data-block's rows have been read */
        mx_keys::tile(in, (const unsigned int *)seg, n, nseg, out, carry, t, s_data, s_owner);
    }
}
