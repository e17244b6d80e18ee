// @family      oneblock
// @summary     one block reads all of n: 16-byte vector loads, U in flight, warp shuffles, one shared step; no partials, no ticket (small n)
// @plan        onelaunch
// @commutative required
// @deterministic yes
// @max_n       262144
// @param B 1024 threads per block (power of two, 64..1024)
// @param V 4 elements per vector load (1, 2, 4, 8, 16; V * element size <= 16 bytes)
// @param U 1 vector loads each thread has in flight before it combines them (1..8)
//
// oneblock.cu - the small-n family: the grid is a single block whatever n (rt_meta[3] = 1,
// runtime/plan.h PLAN_ONE_BLOCK), which walks the input in tiles of B*U vectors and writes
// out[0] itself. gridstride with a grid of one does the same work, but it carries the
// multi-block paths (partials, the last-block ticket, the partial tile by "the block whose
// turn it is") and 64-bit tile arithmetic; at n = 2^13 .. 2^14 on an H100, cold, a minimal
// one-block kernel measured 4.35 us where gridstride's one-block config took 5.3 us and CUB's
// two-kernel path 7.5 us (tools/exp/oneblock.cu, docs/results.md). One SM reads at most about
// 100 GB/s, so the family wins only while n is small; the tuner decides where it stops.
//
// Head and tail as in gridstride.cu: the elements before the first address aligned to a whole
// vector (the user's pointer need not be), the body of whole vectors, the fewer than V
// elements after it. In a tile thread t loads vectors t, t+B, ..., t+(U-1)B (indices past the
// body clamped to its last vector, then dropped) before it combines any. Elements are combined
// out of order: @commutative required. The order of every combine depends on B, V, U and n
// only: results are reproducible.

#ifndef RT_PRELUDE
#include "standalone.cuh"   /* sum on float, for nvcc -c on this file alone */
#endif

#ifndef RT_B
#define RT_B 1024  /* threads per block; the generator's prelude sets it */
#endif
#ifndef RT_V
#define RT_V 4     /* elements per vector load */
#endif
#ifndef RT_U
#define RT_U 1     /* vector loads in flight per thread */
#endif

#if !RT_COMMUTATIVE
#error "oneblock combines elements out of order: it needs a commutative operator"
#endif

static_assert(RT_B >= 64 && RT_B <= 1024 && (RT_B & (RT_B - 1)) == 0,
              "oneblock: B must be a power of two in 64..1024");
static_assert(RT_V >= 1 && RT_V <= 16 && (RT_V & (RT_V - 1)) == 0,
              "oneblock: V must be a power of two");
static_assert(RT_V * sizeof(rt_value_t) <= 16,
              "oneblock: a vector is at most 16 bytes (V * element size <= 16)");
static_assert(RT_U >= 1 && RT_U <= 8, "oneblock: U must be in 1..8");

/* Checks the glue's signatures, and references every glue function. */
static_assert(sizeof(rt_combine(rt_lift(*(const rt_value_t *)0, 0ull),
                                rt_shfl_down(rt_identity(), 1u))) == sizeof(rt_acc_t),
              "oneblock: the prelude's glue has the wrong signatures");

/* The warp and block trees (inlined by the generator). */
#include "collectives.cuh"

/* Threads per block, input elements per tile, grid cap per SM (unused), grid kind: one
 * block (PLAN_ONE_BLOCK). */
extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, RT_B * RT_V * RT_U, 1, 1 };

#define OB_WARPS (RT_B / 32)

/* V elements, aligned to their size: one load instruction of V * size bytes. */
struct __align__(RT_V * sizeof(rt_value_t)) ob_vec {
    rt_value_t v[RT_V];
};

/* in: n elements, any element-aligned address. out[0]: the result. partials and counter: the
 * one-launch plan's arguments, not used (a grid of one block has nobody to wait for). */
extern "C" __global__ void __launch_bounds__(RT_B)
rt_one(const rt_value_t *__restrict__ in, rt_res_t *__restrict__ out, unsigned long long n,
       rt_acc_t *__restrict__ partials, unsigned int *__restrict__ counter)
{
    (void)partials;
    (void)counter;
    const unsigned int tid = threadIdx.x;

    const unsigned long long misalign = reinterpret_cast<unsigned long long>(in) % sizeof(ob_vec);
    unsigned long long head = misalign ? (sizeof(ob_vec) - misalign) / sizeof(rt_value_t) : 0;
    if (head > n)
        head = n;
    const ob_vec *__restrict__ body = reinterpret_cast<const ob_vec *>(in + head);
    const unsigned long long nvec = (n - head) / RT_V;
    const unsigned long long tail = head + nvec * RT_V;
    rt_acc_t acc = rt_identity();

    /* The body: tiles of B*U vectors; only the last is tested (loads clamped, then dropped). */
    for (unsigned long long k0 = tid; k0 < nvec; k0 += (unsigned long long)RT_B * RT_U) {
        ob_vec x[RT_U];
#pragma unroll
        for (int u = 0; u < RT_U; u++) {
            const unsigned long long k = k0 + (unsigned long long)u * RT_B;
            x[u] = co_load_vec<CO_STREAM>(body + (k < nvec ? k : nvec - 1));
        }
        rt_acc_t a[RT_U * RT_V];
#pragma unroll
        for (int u = 0; u < RT_U; u++) {
            const unsigned long long k = k0 + (unsigned long long)u * RT_B;
            const bool in_body = u == 0 || k < nvec;   /* u == 0: k0 < nvec */
#pragma unroll
            for (int j = 0; j < RT_V; j++)
                a[u * RT_V + j] = in_body ? rt_lift(x[u].v[j], head + k * RT_V + j) : rt_identity();
        }
        acc = rt_combine(acc, co_tree(a));
    }

    /* Head and tail, fewer than V elements each (V <= 16 <= B). */
    if (tid < head)
        acc = rt_combine(acc, rt_lift(in[tid], tid));
    if (tail + tid < n)
        acc = rt_combine(acc, rt_lift(in[tail + tid], tail + tid));

    __shared__ rt_acc_t warp_part[OB_WARPS];
    acc = co_block_tree<OB_WARPS, false>(acc, warp_part);
    if (tid == 0)
        out[0] = rt_final(acc);   /* the result: finalized */
}
