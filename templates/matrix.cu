// @family      matrix
// @summary     paper's Matrix: the data-block as an H x W matrix in shared memory (padded rows), one thread per row sequentially, row results by an ordered warp tree
// @plan        multipass
// @commutative not-required
// @deterministic yes
// @param B 256 threads per block, all of which load (multiple of 32, 32..1024)
// @param H 32 rows of the matrix, one thread each (multiple of 32, at most B)
// @param W 32 row width in elements: the data-block is H*W elements (1..1024)
// @param PAD 1 1: rows are W+1 elements apart in shared memory, against bank conflicts; 0: W apart
//
// matrix.cu - Martin et al., "Algorithmic Strategies for Optimizing the Parallel Reduction
// Primitive in CUDA", Algorithm 3 (Matrix, Table I), after Dotsenko et al.'s MatrixScan.
//
// Block b owns the data-block of D = H*W elements from b * D, seen as an H x W matrix: row r
// is elements r*W .. r*W + W-1, a contiguous run. All B threads load it, coalesced (thread t
// takes elements t, t+B, ...; all its loads in flight before its stores), into shared memory
// with rows W+PAD elements apart: with the padding, the H threads that then walk their rows
// side by side hit H different banks at every step. Threads 0 .. H-1 each reduce one row,
// sequentially and in order (no barrier, which is the point of the family); the H row results
// meet in the left-storing intra-warp tree of TB4-warp (lane l with lane l+d, d = 1 .. 16,
// the lower lane on the left), then, when H > 32, the H/32 warp results in one more such tree.
// Every combine takes the lower indices on the left: @commutative not-required.
//
// B and H are separate, as in the paper (B = 256 threads load, H = 32 reduce): warps past
// H/32 only load. H is a multiple of 32 so that the row warps are whole (the paper's "H
// should be a multiple of the CUDA-warp size"). Shared memory holds the elements as they
// are in memory (rt_value_t for the first pass, accumulators for the next), lifted by the
// row threads, which also skip the elements past n in the last data-block.
//
// in and out of one launch must not overlap (the host ping-pongs two buffers).

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

#define MX_D (RT_H * RT_W)                      /* elements per data-block */
#define MX_STRIDE (RT_W + RT_PAD)               /* shared elements from one row to the next */
#define MX_LOADS ((MX_D + RT_B - 1) / RT_B)     /* loads per thread */

static_assert(RT_B >= 32 && RT_B <= 1024 && RT_B % 32 == 0,
              "matrix: B must be a multiple of 32 in 32..1024");
static_assert(RT_H >= 32 && RT_H <= RT_B && RT_H % 32 == 0,
              "matrix: H must be a multiple of 32, at most B");
static_assert(RT_W >= 1 && RT_W <= 1024, "matrix: W must be in 1..1024");
static_assert(RT_PAD == 0 || RT_PAD == 1, "matrix: PAD is 0 or 1");
static_assert(MX_LOADS <= 64, "matrix: at most 64 loads per thread (H*W <= 64*B)");
static_assert(RT_H * MX_STRIDE * (sizeof(rt_acc_t) > sizeof(rt_value_t) ? sizeof(rt_acc_t) : sizeof(rt_value_t))
              + RT_H / 32 * sizeof(rt_acc_t) <= 48 * 1024,
              "matrix: the H x (W+PAD) matrix does not fit in 48 KB of static shared memory");

/* Checks the glue's signatures, and references every glue function. */
static_assert(sizeof(rt_combine(rt_lift(*(const rt_value_t *)0, 0ull),
                                rt_shfl_down(rt_identity(), 1u))) == sizeof(rt_acc_t),
              "matrix: the prelude's glue has the wrong signatures");

/* The ordered warp trees (inlined by the generator). */
#include "collectives.cuh"

/* Threads per block, input elements per block, grid cap per SM (0: none). */
extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, MX_D, 0, 0 };

/* Element kinds: rt_first's are the user's (lifted with their global index), rt_next's are
 * partials, accumulators already. */
struct mx_input {
    typedef rt_value_t in_t;
    static __device__ __forceinline__ rt_acc_t lift(rt_value_t x, unsigned long long i)
    {
        return rt_lift(x, i);
    }
};
struct mx_partial {
    typedef rt_acc_t in_t;
    static __device__ __forceinline__ rt_acc_t lift(rt_acc_t x, unsigned long long i)
    {
        (void)i;
        return x;
    }
};

/* Elements base .. base + D-1 (those below n) into the padded matrix. All threads. */
template <typename L>
static __device__ __forceinline__ void mx_load(typename L::in_t *s,
                                               const typename L::in_t *__restrict__ in,
                                               unsigned long long base, unsigned long long n)
{
    const unsigned int tid = threadIdx.x;
    if (base + MX_D <= n) {
        typename L::in_t x[MX_LOADS];
#pragma unroll
        for (unsigned int m = 0; m < MX_LOADS; m++) {
            const unsigned int j = tid + m * RT_B;
            if (MX_D % RT_B == 0 || j < MX_D)
                x[m] = in[base + j];
        }
#pragma unroll
        for (unsigned int m = 0; m < MX_LOADS; m++) {
            const unsigned int j = tid + m * RT_B;
            if (MX_D % RT_B == 0 || j < MX_D)
                s[(j / RT_W) * MX_STRIDE + j % RT_W] = x[m];
        }
    } else {
        /* The last data-block: the slots past n stay unwritten, and unread (mx_rows). */
#pragma unroll
        for (unsigned int m = 0; m < MX_LOADS; m++) {
            const unsigned int j = tid + m * RT_B;
            if (j < MX_D && base + j < n)
                s[(j / RT_W) * MX_STRIDE + j % RT_W] = in[base + j];
        }
    }
}

/* The matrix in s (loaded, after a barrier) reduced; the result is in thread 0. Every thread
 * calls it: when H > 32 it holds a barrier, and then ends with warp 0 reading a shared array,
 * so a later call needs a barrier between the two (the caller's next load barrier does). */
template <typename L>
static __device__ __forceinline__ rt_acc_t mx_rows(const typename L::in_t *s,
                                                   unsigned long long base, unsigned long long n)
{
    const unsigned int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    rt_acc_t v = rt_identity();
    if (tid < RT_H) {
        /* Row tid, sequentially: consecutive threads are MX_STRIDE elements apart, so with
         * PAD=1 and 4-byte elements the 32 lanes of a warp read 32 different banks. */
        const typename L::in_t *row = s + tid * MX_STRIDE;
        const unsigned long long first = base + (unsigned long long)tid * RT_W;
        if (base + MX_D <= n) {
            v = L::lift(row[0], first);
#pragma unroll
            for (unsigned int k = 1; k < RT_W; k++)
                v = rt_combine(v, L::lift(row[k], first + k));
        } else {
#pragma unroll 4
            for (unsigned int k = 0; k < RT_W; k++)
                if (first + k < n)
                    v = rt_combine(v, L::lift(row[k], first + k));
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

template <typename L>
static __device__ __forceinline__ void mx_block(const typename L::in_t *__restrict__ in,
                                                rt_acc_t *__restrict__ out,
                                                unsigned long long n)
{
    __shared__ typename L::in_t s[RT_H * MX_STRIDE];
    const unsigned long long base = (unsigned long long)blockIdx.x * MX_D;
    mx_load<L>(s, in, base, n);
    __syncthreads();
    const rt_acc_t v = mx_rows<L>(s, base, n);
    if (threadIdx.x == 0)
        if (gridDim.x == 1) *reinterpret_cast<rt_res_t *>(out) = rt_final(v); else out[blockIdx.x] = v;   /* rt_final: the last pass */
}

extern "C" __global__ void __launch_bounds__(RT_B)
rt_first(const rt_value_t *__restrict__ in, rt_acc_t *__restrict__ out, unsigned long long n)
{
    mx_block<mx_input>(in, out, n);
}

extern "C" __global__ void __launch_bounds__(RT_B)
rt_next(const rt_acc_t *__restrict__ in, rt_acc_t *__restrict__ out, unsigned long long n)
{
    mx_block<mx_partial>(in, out, n);
}
