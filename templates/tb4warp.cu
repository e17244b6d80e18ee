// @family      tb4warp
// @summary     paper's TB4-warp: left-storing intra-warp shuffle trees over data-warps of 32 elements, R per thread, warp results combined in order
// @plan        multipass
// @commutative not-required
// @deterministic yes
// @param B 256 threads per block (multiple of 32, 32..1024)
// @param R 4 data-warps (elements) per thread: the data-block is R*B elements (1..32; the paper's TB4-warp is R=4)
//
// tb4warp.cu - Martin et al., "Algorithmic Strategies for Optimizing the Parallel Reduction
// Primitive in CUDA", Algorithm 2 (TB4-warp, Table I), after Sengupta et al.
//
// Block b owns the data-block of D = R*B elements from b * D, cut into data-warps of 32
// consecutive elements. Warp w owns the contiguous run of data-warps wR .. wR+R-1: lane l
// loads element l of each (every load instruction of the warp reads 32 consecutive elements;
// the R loads are independent and in flight together). Each data-warp is reduced by the
// paper's left-storing intra-warp tree, with shuffles where the paper used shared memory:
// step d = 1, 2, 4, 8, 16 combines lane l with lane l+d, the lower lane on the left, so after
// step d lane l holds elements l .. l+2d-1 in order and lane 0 ends with the whole data-warp.
// (The usual d = 16 .. 1 order would pair lanes l and l+16 first: commutative only.) The R
// trees run interleaved. Lane 0 combines the warp's R results in index order and stores the
// warp's partial; warp 0 reduces the B/32 partials with the same tree. Nothing is ever
// swapped: @commutative not-required.
//
// Warp w's run is contiguous where the paper interleaves the warps (warp w: data-warps w,
// w + B/32, ...) and stores R*B/32 partials; here each warp folds its own R first, so the
// final tree has B/32 leaves. The loads are coalesced either way.
//
// in and out of one launch must not overlap (the host ping-pongs two buffers).

#ifndef RT_PRELUDE
#include "standalone.cuh"   /* sum on float, for nvcc -c on this file alone */
#endif

#ifndef RT_B
#define RT_B 256   /* threads per block; the generator's prelude sets it */
#endif
#ifndef RT_R
#define RT_R 4     /* data-warps per warp: elements per thread */
#endif

static_assert(RT_B >= 32 && RT_B <= 1024 && RT_B % 32 == 0,
              "tb4warp: B must be a multiple of 32 in 32..1024");
static_assert(RT_R >= 1 && RT_R <= 32, "tb4warp: R must be in 1..32");

/* Checks the glue's signatures, and references every glue function. */
static_assert(sizeof(rt_combine(rt_lift(*(const rt_value_t *)0, 0ull),
                                rt_shfl_down(rt_identity(), 1u))) == sizeof(rt_acc_t),
              "tb4warp: the prelude's glue has the wrong signatures");

#define T4_WARPS (RT_B / 32)
#define T4_D (RT_B * RT_R)   /* elements per data-block */

/* The ordered warp trees (inlined by the generator). */
#include "collectives.cuh"

/* Threads per block, input elements per block, grid cap per SM (0: none). */
extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, T4_D, 0, 0 };

/* Loaders: rt_first lifts elements of the user's input (with their global index), rt_next
 * reads partials that are accumulators already. */
struct t4_load_input {
    static __device__ __forceinline__ rt_acc_t at(const rt_value_t *__restrict__ in,
                                                   unsigned long long i)
    {
        return rt_lift(in[i], i);
    }
};
struct t4_load_partial {
    static __device__ __forceinline__ rt_acc_t at(const rt_acc_t *__restrict__ in,
                                                   unsigned long long i)
    {
        return in[i];
    }
};

/* One block: R data-warps per warp, the warps' partials, out[blockIdx.x]. */
template <typename In, typename Load>
static __device__ __forceinline__ void t4_block(const In *__restrict__ in,
                                                rt_acc_t *__restrict__ out,
                                                unsigned long long n)
{
    const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const unsigned long long base = (unsigned long long)blockIdx.x * T4_D;
    /* Element l of data-warp k of this warp's run. */
    const unsigned long long run = base + (unsigned long long)warp * (32 * RT_R) + lane;

    rt_acc_t v[RT_R];
    if (base + T4_D <= n) {
#pragma unroll
        for (unsigned int k = 0; k < RT_R; k++)
            v[k] = Load::at(in, run + 32 * k);
    } else {
        /* The last data-block: past n, the identity (the paper's virtual padding). Every lane
         * goes on to the shuffles, which need all 32. */
#pragma unroll
        for (unsigned int k = 0; k < RT_R; k++)
            v[k] = run + 32 * k < n ? Load::at(in, run + 32 * k) : rt_identity();
    }

    /* The R trees, one step of each at a time (independent shuffles in flight). */
#pragma unroll
    for (unsigned int d = 1; d < 32; d *= 2)
#pragma unroll
        for (unsigned int k = 0; k < RT_R; k++)
            v[k] = rt_combine(v[k], rt_shfl_down(v[k], d));

    /* Lane 0: the warp's data-warps in index order. */
    rt_acc_t acc = v[0];
#pragma unroll
    for (unsigned int k = 1; k < RT_R; k++)
        acc = rt_combine(acc, v[k]);

#if T4_WARPS == 1
    if (lane == 0)
        if (gridDim.x == 1) *reinterpret_cast<rt_res_t *>(out) = rt_final(acc); else out[blockIdx.x] = acc;   /* rt_final: the last pass */
#else
    /* The warps' results in order, by warp 0's tree. (Not co_warps_tree: the store inside warp
     * 0's branch gives the compiler the shorter code.) */
    __shared__ rt_acc_t s_result[T4_WARPS];
    if (lane == 0)
        s_result[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = co_warp_tree<T4_WARPS>(lane < T4_WARPS ? s_result[lane] : rt_identity());
        if (lane == 0)
            if (gridDim.x == 1) *reinterpret_cast<rt_res_t *>(out) = rt_final(acc); else out[blockIdx.x] = acc;
    }
#endif
}

extern "C" __global__ void __launch_bounds__(RT_B)
rt_first(const rt_value_t *__restrict__ in, rt_acc_t *__restrict__ out, unsigned long long n)
{
    t4_block<rt_value_t, t4_load_input>(in, out, n);
}

extern "C" __global__ void __launch_bounds__(RT_B)
rt_next(const rt_acc_t *__restrict__ in, rt_acc_t *__restrict__ out, unsigned long long n)
{
    t4_block<rt_acc_t, t4_load_partial>(in, out, n);
}
