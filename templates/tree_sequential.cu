// @family      tree_sequential
// @summary     shared-memory tree with sequential addressing (Harris reduce3..reduce6): combine while loading, R elements per thread, shuffled last warp, unrolled tree
// @plan        multipass
// @commutative required
// @deterministic yes
// @param B 256 threads per block (power of two, 32..1024)
// @param R 1 loads (pairs of loads with LOAD_ADD) each thread combines before the tree, 1..64
// @param LOAD_ADD 0 1: each thread combines two elements B apart as it loads (reduce4), doubling the tile
// @param WARP 0 1: the last 64 partials are reduced by one warp with shuffles (reduce5)
// @param UNROLL 0 1: the tree is unrolled completely at compile time on B (reduce6)
//
// tree_sequential.cu - the rest of Harris' ladder, on one template.
//
// Block b owns the tile of B*R*(LOAD_ADD ? 2 : 1) elements from b * tile. Thread t combines
// elements t, t+B, t+2B, ... of the tile into one register (consecutive threads read
// consecutive elements: every load of a warp is coalesced), stores it in sdata[t], and the
// block halves sdata with sequential addressing: step s combines sdata[t] with sdata[t + s]
// for t < s, s = B/2 .. 1, so the active threads are always the first s and the accesses
// are conflict-free. The pairs it combines are not adjacent in the input, hence
// @commutative required. Block b writes its partial to out[b]; the host runs rt_next over
// the partials until one block remains.
//
//   reduce3  LOAD_ADD=0 WARP=0 UNROLL=0 R=1
//   reduce4  LOAD_ADD=1
//   reduce5  LOAD_ADD=1 WARP=1
//   reduce6  LOAD_ADD=1 WARP=1 UNROLL=1
//   "many elements per thread": R > 1
//
// in and out of one launch must not overlap (the host ping-pongs two buffers): a block may
// write out[b] before another block has read in[b].

#ifndef RT_PRELUDE
#include "standalone.cuh"   /* sum on float, for nvcc -c on this file alone */
#endif

#ifndef RT_B
#define RT_B 256        /* threads per block; the generator's prelude sets it */
#endif
#ifndef RT_R
#define RT_R 1          /* loads (or pairs of loads) per thread before the tree */
#endif
#ifndef RT_LOAD_ADD
#define RT_LOAD_ADD 0   /* 1: combine two elements while loading (reduce4) */
#endif
#ifndef RT_WARP
#define RT_WARP 0       /* 1: the last warp reduces with shuffles (reduce5) */
#endif
#ifndef RT_UNROLL
#define RT_UNROLL 0     /* 1: the tree is unrolled on the compile-time B (reduce6) */
#endif

#if !RT_COMMUTATIVE
#error "tree_sequential combines elements out of order: it needs a commutative operator"
#endif

static_assert(RT_B >= 32 && RT_B <= 1024 && (RT_B & (RT_B - 1)) == 0,
              "tree_sequential: B must be a power of two in 32..1024");
static_assert(RT_R >= 1 && RT_R <= 64, "tree_sequential: R must be in 1..64");
static_assert(RT_LOAD_ADD == 0 || RT_LOAD_ADD == 1, "tree_sequential: LOAD_ADD is 0 or 1");
static_assert(RT_WARP == 0 || RT_WARP == 1, "tree_sequential: WARP is 0 or 1");
static_assert(RT_UNROLL == 0 || RT_UNROLL == 1, "tree_sequential: UNROLL is 0 or 1");

/* Checks the glue's signatures. It also references every glue function (in an unevaluated
 * operand), so the ones a configuration does not call draw no "declared but never referenced". */
static_assert(sizeof(rt_combine(rt_lift(*(const rt_value_t *)0, 0ull),
                                rt_shfl_down(rt_identity(), 1u))) == sizeof(rt_acc_t),
              "tree_sequential: the prelude's glue has the wrong signatures");

#define TS_PER_LOAD (RT_LOAD_ADD ? 2 : 1)           /* elements one thread takes per step */
#define TS_TILE (RT_B * RT_R * TS_PER_LOAD)         /* elements per block; <= 131072 */

/* The halving warp tree of the last warp (inlined by the generator). */
#include "collectives.cuh"

/* Threads per block, input elements per block, grid cap per SM (0: none). */
extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, TS_TILE, 0, 0 };

/* Loaders: rt_first lifts elements of the user's input (with their global index), rt_next
 * reads partials that are accumulators already. */
struct ts_load_input {
    static __device__ __forceinline__ rt_acc_t at(const rt_value_t *__restrict__ in,
                                                   unsigned long long i)
    {
        return rt_lift(in[i], i);
    }
};
struct ts_load_partial {
    static __device__ __forceinline__ rt_acc_t at(const rt_acc_t *__restrict__ in,
                                                   unsigned long long i)
    {
        return in[i];
    }
};

/* One step of the load phase when the whole tile is in range: element i, and with LOAD_ADD
 * also element i + B, combined as they arrive (reduce4's "first add during load"). */
template <typename In, typename Load>
static __device__ __forceinline__ rt_acc_t ts_load_step(const In *__restrict__ in,
                                                        unsigned long long i)
{
#if RT_LOAD_ADD
    return rt_combine(Load::at(in, i), Load::at(in, i + RT_B));
#else
    return Load::at(in, i);
#endif
}

/* One block: its tile into one register per thread, the tree, out[blockIdx.x]. */
template <typename In, typename Load>
static __device__ __forceinline__ void ts_block(const In *__restrict__ in,
                                                rt_acc_t *__restrict__ out,
                                                unsigned long long n)
{
    const unsigned int tid = threadIdx.x;
    const unsigned long long base = (unsigned long long)blockIdx.x * TS_TILE;
    rt_acc_t acc;

    if (base + TS_TILE <= n) {
        /* Every block but the last: no bounds tests, so the R (or 2R) loads are independent
         * and the compiler issues them back to back before the combines wait on them. */
        acc = ts_load_step<In, Load>(in, base + tid);
#pragma unroll
        for (unsigned int r = 1; r < RT_R; r++)
            acc = rt_combine(acc, ts_load_step<In, Load>(in, base + tid + (unsigned long long)r * (TS_PER_LOAD * RT_B)));
    } else {
        /* The ragged last tile: the same elements, each tested against n. A thread with none
         * in range keeps the identity. The loads go in groups of up to 8, each load's index
         * clamped to n - 1 so that it needs no branch: the group's loads are independent and
         * in flight together (a tested load per element serialised them: with R = 16 and
         * LOAD_ADD a ragged single-block input took twice as long as a full one). */
        acc = rt_identity();
        constexpr unsigned int K = RT_R * TS_PER_LOAD;
        constexpr unsigned int GRP = K < 8 ? K : 8;
#pragma unroll 1
        for (unsigned int k0 = 0; k0 < K; k0 += GRP) {
            if (base + tid + (unsigned long long)k0 * RT_B >= n)
                break;   /* this thread's remaining elements are all past n */
            rt_acc_t x[GRP];
#pragma unroll
            for (unsigned int g = 0; g < GRP; g++) {
                const unsigned long long i = base + tid + (unsigned long long)(k0 + g) * RT_B;
                x[g] = Load::at(in, i < n ? i : n - 1);
            }
#pragma unroll
            for (unsigned int g = 0; g < GRP; g++) {
                const unsigned long long i = base + tid + (unsigned long long)(k0 + g) * RT_B;
                if (k0 + g < K && i < n)
                    acc = rt_combine(acc, x[g]);
            }
        }
    }

#if RT_WARP && RT_B == 32
    /* One warp is the whole block: straight to the shuffles, no shared memory. */
    rt_acc_t v = acc;
#else
    __shared__ rt_acc_t sdata[RT_B];
    sdata[tid] = acc;
    __syncthreads();

    /* Sequential addressing. With WARP the barrier steps stop at 64 partials, which the
     * first warp finishes below. */
#if RT_UNROLL
#pragma unroll   /* B is a compile-time constant: no loop, no index arithmetic left */
#else
#pragma unroll 1
#endif
    for (unsigned int s = RT_B / 2; s > (RT_WARP ? 32u : 0u); s >>= 1) {
        if (tid < s)
            sdata[tid] = rt_combine(sdata[tid], sdata[tid + s]);
        __syncthreads();
    }
#if RT_WARP
    rt_acc_t v = rt_identity();
    if (tid < 32)
        v = rt_combine(sdata[tid], sdata[tid + 32]);
#endif
#endif

#if RT_WARP
    /* The last warp with shuffles, not the seeds' volatile shared-memory code: since Volta
     * the lanes of a warp are not guaranteed to run in lockstep, so reading a neighbour's
     * slot without a barrier is a race. shfl.sync exchanges registers and synchronises the
     * lanes it names (all 32: warp 0 is converged here). Lane l combines with lane l + d;
     * a lane whose l + d passes 31 gets its own value back, and only lane 0's result is used. */
    if (tid < 32) {
        v = co_warp_halving<32>(v);   /* collectives.cuh: d = 16, 8, .. 1 */
        if (tid == 0)
            if (gridDim.x == 1) *reinterpret_cast<rt_res_t *>(out) = rt_final(v); else out[blockIdx.x] = v;   /* rt_final: the last pass */
    }
#else
    if (tid == 0)
        if (gridDim.x == 1) *reinterpret_cast<rt_res_t *>(out) = rt_final(sdata[0]); else out[blockIdx.x] = sdata[0];
#endif
}

extern "C" __global__ void __launch_bounds__(RT_B)
rt_first(const rt_value_t *__restrict__ in, rt_acc_t *__restrict__ out, unsigned long long n)
{
    ts_block<rt_value_t, ts_load_input>(in, out, n);
}

extern "C" __global__ void __launch_bounds__(RT_B)
rt_next(const rt_acc_t *__restrict__ in, rt_acc_t *__restrict__ out, unsigned long long n)
{
    ts_block<rt_acc_t, ts_load_partial>(in, out, n);
}
