// @family      tree_interleaved
// @summary     one element per thread, shared-memory tree with interleaved addressing (Harris reduce1/reduce2), order kept
// @plan        multipass
// @commutative not-required
// @deterministic yes
// @param B 256 threads per block (power of two, 32..1024)
// @param DIVERGENT 0 1: active threads are those with tid % (2*s) == 0 (reduce1); 0: thread t works on index 2*s*t (reduce2)
//
// tree_interleaved.cu - Harris' first two steps, kept as the baseline of the ladder.
//
// Each block loads B consecutive elements into shared memory, one per thread (threads past n
// load the identity), and halves them log2(B) times. The tree is left-storing: step s combines
// sdata[i] (the lower indices) with sdata[i + s] (the s higher ones) into sdata[i], so every
// partial covers a contiguous run of the input in order and a non-commutative operator is
// reduced correctly. Block b writes its partial to out[b]; the host runs rt_next over the
// partials until one block remains.
//
// in and out of one launch must not overlap (the host ping-pongs two buffers): a block may
// write out[b] before another block has read in[b].

#ifndef RT_PRELUDE
#include "standalone.cuh"   /* sum on float, for nvcc -c on this file alone */
#endif

#ifndef RT_B
#define RT_B 256        /* threads per block; the generator's prelude sets it */
#endif
#ifndef RT_DIVERGENT
#define RT_DIVERGENT 0  /* 1: reduce1's tid % (2*s) test; 0: reduce2's strided index */
#endif

static_assert(RT_B >= 32 && RT_B <= 1024 && (RT_B & (RT_B - 1)) == 0,
              "tree_interleaved: B must be a power of two in 32..1024");
static_assert(RT_DIVERGENT == 0 || RT_DIVERGENT == 1, "tree_interleaved: DIVERGENT is 0 or 1");

/* Checks the glue's signatures. It also references every glue function (in an unevaluated
 * operand), so the ones this family does not call draw no "declared but never referenced". */
static_assert(sizeof(rt_combine(rt_lift(*(const rt_value_t *)0, 0ull),
                                rt_shfl_down(rt_identity(), 1u))) == sizeof(rt_acc_t),
              "tree_interleaved: the prelude's glue has the wrong signatures");

/* Threads per block, input elements per block, grid cap per SM (0: none). */
extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, RT_B, 0, 0 };

/* Loaders: rt_first lifts elements of the user's input (with their global index), rt_next
 * reads partials that are accumulators already. */
struct ti_load_input {
    static __device__ __forceinline__ rt_acc_t at(const rt_value_t *__restrict__ in,
                                                   unsigned long long i)
    {
        return rt_lift(in[i], i);
    }
};
struct ti_load_partial {
    static __device__ __forceinline__ rt_acc_t at(const rt_acc_t *__restrict__ in,
                                                   unsigned long long i)
    {
        return in[i];
    }
};

/* One block: B elements from blockIdx.x * B, left-storing interleaved tree, out[blockIdx.x]. */
template <typename In, typename Load>
static __device__ __forceinline__ void ti_block(const In *__restrict__ in,
                                                rt_acc_t *__restrict__ out,
                                                unsigned long long n)
{
    __shared__ rt_acc_t sdata[RT_B];
    const unsigned int tid = threadIdx.x;
    const unsigned long long i = (unsigned long long)blockIdx.x * RT_B + tid;

    /* The identity past the end keeps the tree's shape fixed; on the right it changes nothing,
     * commutative or not. */
    sdata[tid] = i < n ? Load::at(in, i) : rt_identity();
    __syncthreads();

    /* The loops stay rolled, as in the seeds: the point of this family is to measure those
     * kernels, and the unrolled tree belongs to tree_sequential. */
#if RT_DIVERGENT
    /* reduce1: the active threads are every (2s)-th one, so every warp stays divergent and
     * issues the whole step for a few lanes. */
#pragma unroll 1
    for (unsigned int s = 1; s < RT_B; s *= 2) {
        if (tid % (2 * s) == 0)
            sdata[tid] = rt_combine(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
#else
    /* reduce2: thread t works on index 2*s*t, so the active threads are the first B/(2s), in
     * whole warps; the strided shared-memory accesses now conflict on banks instead. */
#pragma unroll 1
    for (unsigned int s = 1; s < RT_B; s *= 2) {
        const unsigned int index = 2 * s * tid;
        if (index < RT_B)   /* index is a multiple of 2s, so index + s < B as well */
            sdata[index] = rt_combine(sdata[index], sdata[index + s]);
        __syncthreads();
    }
#endif

    if (tid == 0)
        if (gridDim.x == 1) *reinterpret_cast<rt_res_t *>(out) = rt_final(sdata[0]); else out[blockIdx.x] = sdata[0];   /* rt_final: the last pass */
}

extern "C" __global__ void __launch_bounds__(RT_B)
rt_first(const rt_value_t *__restrict__ in, rt_acc_t *__restrict__ out, unsigned long long n)
{
    ti_block<rt_value_t, ti_load_input>(in, out, n);
}

extern "C" __global__ void __launch_bounds__(RT_B)
rt_next(const rt_acc_t *__restrict__ in, rt_acc_t *__restrict__ out, unsigned long long n)
{
    ti_block<rt_acc_t, ti_load_partial>(in, out, n);
}
