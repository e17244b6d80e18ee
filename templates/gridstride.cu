// @family      gridstride
// @summary     grid-stride 16-byte vector loads, U loads in flight, warp shuffles, last-block-done finish in one launch
// @plan        onelaunch
// @commutative required
// @deterministic yes
// @bounds      yes
// @param B 256 threads per block (power of two, 32..1024)
// @param V 4 elements per vector load (1, 2, 4; V * element size <= 16 bytes)
// @param U 4 vector loads each thread has in flight before it combines them (1..8)
// @param G 4 blocks per SM: the grid is at most G * SMs blocks, looping over the tiles (1..16)
//
// gridstride.cu - the bandwidth family: one launch, every byte read once, at the speed of
// the yardstick in bandwidth.cu.
//
// The input is split into a scalar head (up to the first element aligned to V elements; the
// user's pointer need not be), a body of whole vectors, and a scalar tail (fewer than V
// elements). The body is cut into tiles of B*U vectors; block b takes tiles b, b + grid,
// b + 2*grid, ... In a tile, thread t loads vectors t, t+B, ..., t+(U-1)B (each load
// instruction of a warp reads 32 consecutive vectors) into registers, all U before it combines
// any, so U*B*V*size bytes per block are in flight. The per-thread values meet in warp
// shuffles, then once in shared memory; thread 0 writes the block's partial, and the last block
// to finish combines the partials in index order and writes out[0]. The grid size, fixed per
// device and n, fixes the order of every combine: results are reproducible.
//
// Elements are combined out of order (across vectors, threads and tiles), hence
// @commutative required.
//
// One segment (@bounds yes): the generator may define RT_BOUNDS (1: 32-bit, 2: 64-bit offsets; not a
// parameter the tuner sees) for an offsets call of one segment (docs/segmented.md, "One
// segment"): rt_one then takes the offsets as a sixth argument and reduces in[offsets[0] ..
// offsets[1]) of the n elements, both read here, clamped to 0 <= offsets[0] <= offsets[1] <= n
// so that nothing outside in[0..n) is read whatever they hold, the indices (argmin, argmax)
// those of the whole input. The host sizes the grid for n, so blocks past the segment's
// tiles contribute the identity.

#ifndef RT_PRELUDE
#include "standalone.cuh"   /* sum on float, for nvcc -c on this file alone */
#endif

#ifndef RT_B
#define RT_B 256   /* threads per block; the generator's prelude sets it */
#endif
#ifndef RT_V
#define RT_V 4     /* elements per vector load */
#endif
#ifndef RT_U
#define RT_U 4     /* vector loads in flight per thread */
#endif
#ifndef RT_G
#define RT_G 4     /* grid cap: blocks per SM */
#endif

#ifndef RT_BOUNDS
#define RT_BOUNDS 0   /* 0: in[0..n); 1, 2: in[offsets[0]..offsets[1]), 32- or 64-bit offsets */
#endif

#if !RT_COMMUTATIVE
#error "gridstride combines elements out of order: it needs a commutative operator"
#endif

static_assert(RT_B >= 32 && RT_B <= 1024 && (RT_B & (RT_B - 1)) == 0,
              "gridstride: B must be a power of two in 32..1024");
static_assert(RT_V >= 1 && RT_V <= 16 && (RT_V & (RT_V - 1)) == 0,
              "gridstride: V must be a power of two");
static_assert(RT_V * sizeof(rt_value_t) <= 16,
              "gridstride: a vector is at most 16 bytes (V * element size <= 16)");
static_assert(RT_U >= 1 && RT_U <= 8, "gridstride: U must be in 1..8");
static_assert(RT_G >= 1 && RT_G <= 16, "gridstride: G must be in 1..16");
static_assert(RT_BOUNDS >= 0 && RT_BOUNDS <= 2, "gridstride: RT_BOUNDS must be 0, 1 or 2");

/* Checks the glue's signatures, and references every glue function. */
static_assert(sizeof(rt_combine(rt_lift(*(const rt_value_t *)0, 0ull),
                                rt_shfl_down(rt_identity(), 1u))) == sizeof(rt_acc_t),
              "gridstride: the prelude's glue has the wrong signatures");

/* The warp and block trees, the last-block-done finish (inlined by the generator). */
#include "collectives.cuh"

/* Threads per block, input elements per tile, grid cap per SM. */
extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, RT_B * RT_V * RT_U, RT_G, 0 };

#define GS_WARPS (RT_B / 32)

/* V elements, aligned to their size: a load of one is a single LDG.64/LDG.128 (16 bytes is
 * the widest load a thread can issue). */
struct __align__(RT_V * sizeof(rt_value_t)) gs_vec {
    rt_value_t v[RT_V];
};

/* The U vectors of thread tid's share of a tile: vectors k0, k0 + B, ..., k0 + (U-1)B of the
 * body, all loads issued before any is used. */
template <bool STREAM>
static __device__ __forceinline__ void gs_load_tile(gs_vec (&x)[RT_U], const gs_vec *body,
                                                    unsigned long long k0)
{
#pragma unroll
    for (int u = 0; u < RT_U; u++)
        x[u] = co_load_vec<STREAM>(body + k0 + (unsigned long long)u * RT_B);
}

/* The tile's U*V elements in one accumulator (co_lift_run). The index of element j of vector
 * k is head + k*V + j, head the index of the body's first element (rt_lift wants it for
 * argmin-like operators; for the others it is dead code). */
static __device__ __forceinline__ rt_acc_t gs_run(const gs_vec (&x)[RT_U], unsigned long long head,
                                                  unsigned long long k0)
{
    rt_value_t e[RT_U * RT_V];
#pragma unroll
    for (int u = 0; u < RT_U; u++)
#pragma unroll
        for (int j = 0; j < RT_V; j++)
            e[u * RT_V + j] = x[u].v[j];
    return co_lift_run(e, [&](int m) {
        return head + (k0 + (unsigned long long)(m / RT_V) * RT_B) * RT_V + m % RT_V;
    });
}

/* The body, whole tiles of thread tid's share: U independent loads, then the combines; one copy
 * with the streaming hint, one without (co_load_vec). */
template <bool STREAM>
static __device__ __forceinline__ rt_acc_t gs_body(const gs_vec *__restrict__ body, unsigned long long head,
                                                   unsigned long long nfull)
{
    const unsigned long long per_tile = (unsigned long long)RT_B * RT_U;   /* vectors */
    rt_acc_t acc = rt_identity();
    for (unsigned long long t = blockIdx.x; t < nfull; t += gridDim.x) {
        const unsigned long long k0 = t * per_tile + threadIdx.x;
        gs_vec x[RT_U];
        gs_load_tile<STREAM>(x, body, k0);
        acc = rt_combine(acc, gs_run(x, head, k0));
    }
    return acc;
}

/* The whole block's value in thread 0, in any order (collectives.cuh). Every thread calls it;
 * it ends with the shared array read by warp 0 only, so a second call needs a __syncthreads()
 * between the two. */
static __device__ __forceinline__ rt_acc_t gs_block_reduce(rt_acc_t v)
{
#if RT_B > 32
    __shared__ rt_acc_t warp_part[GS_WARPS];
    return co_block_tree<GS_WARPS, false>(v, warp_part);
#else
    return co_warp_halving<32>(v);
#endif
}

/* in: n elements, any element-aligned address. out[0]: the result. partials: at least
 * gridDim.x accumulators. counter: 0 before the first launch; each launch leaves it 0. With
 * RT_BOUNDS, offsets: the one segment's two offsets (above). */
extern "C" __global__ void __launch_bounds__(RT_B)
rt_one(const rt_value_t *__restrict__ in, rt_res_t *__restrict__ out, unsigned long long n,
       rt_acc_t *__restrict__ partials, unsigned int *__restrict__ counter
#if RT_BOUNDS
       , const void *__restrict__ offsets
#endif
       )
{
    const unsigned int tid = threadIdx.x;

    /* base: the index of in[0] in the caller's input (the segment's start with RT_BOUNDS). */
#if RT_BOUNDS
    long long lo, hi;
    if (RT_BOUNDS == 2) {
        lo = __ldg(static_cast<const long long *>(offsets));
        hi = __ldg(static_cast<const long long *>(offsets) + 1);
    } else {
        lo = __ldg(static_cast<const int *>(offsets));
        hi = __ldg(static_cast<const int *>(offsets) + 1);
    }
    hi = hi < 0 ? 0 : (unsigned long long)hi > n ? (long long)n : hi;
    lo = lo < 0 ? 0 : lo > hi ? hi : lo;
    const unsigned long long base = (unsigned long long)lo;
    in += base;
    n = (unsigned long long)(hi - lo);
#else
    const unsigned long long base = 0;
#endif

    /* Head: elements before the first address aligned to a whole vector. The pointer is
     * element-aligned, so the gap is a whole number of elements, fewer than V. */
    const unsigned long long misalign = reinterpret_cast<unsigned long long>(in) % sizeof(gs_vec);
    unsigned long long head = misalign ? (sizeof(gs_vec) - misalign) / sizeof(rt_value_t) : 0;
    if (head > n)
        head = n;
    const gs_vec *__restrict__ body = reinterpret_cast<const gs_vec *>(in + head);
    const unsigned long long nvec = (n - head) / RT_V;          /* whole vectors in the body */
    const unsigned long long tail = head + nvec * RT_V;         /* first element of the tail */

    const unsigned long long per_tile = (unsigned long long)RT_B * RT_U;   /* vectors */
    const unsigned long long nfull = nvec / per_tile;           /* tiles with no test */
    const bool stream = n <= CO_STREAM_MAX_BYTES / sizeof(rt_value_t);   /* the load hint */
    rt_acc_t acc = stream ? gs_body<true>(body, base + head, nfull)
                          : gs_body<false>(body, base + head, nfull);

    /* The last, partial tile of the body, by the block whose turn it would be; each vector
     * tested against nvec. */
    if (nfull * per_tile < nvec && blockIdx.x == nfull % gridDim.x) {
        /* All U loads first, each index clamped to the last vector so that no load needs a
         * branch and they are in flight together; the vectors past nvec are then dropped. */
        gs_vec x[RT_U];
#pragma unroll
        for (int u = 0; u < RT_U; u++) {
            const unsigned long long k = nfull * per_tile + (unsigned long long)u * RT_B + tid;
            x[u] = co_load_vec<false>(body + (k < nvec ? k : nvec - 1));
        }
#pragma unroll
        for (int u = 0; u < RT_U; u++) {
            const unsigned long long k = nfull * per_tile + (unsigned long long)u * RT_B + tid;
            if (k < nvec) {
#pragma unroll
                for (int j = 0; j < RT_V; j++)
                    acc = rt_combine(acc, rt_lift(x[u].v[j], base + head + k * RT_V + j));
            }
        }
    }

    /* Head and tail, fewer than V elements each (V <= 16 <= B): block 0, one per thread. */
    if (blockIdx.x == 0) {
        if (tid < head)
            acc = rt_combine(acc, rt_lift(in[tid], base + tid));
        if (tail + tid < n)
            acc = rt_combine(acc, rt_lift(in[tail + tid], base + tail + tid));
    }

    acc = gs_block_reduce(acc);

    /* A grid of one block (small n) has nobody to wait for: no partial, no ticket. */
    if (gridDim.x == 1) {
        if (tid == 0)
            out[0] = rt_final(acc);   /* the result: finalized (partials stay raw) */
        return;
    }

    /* Last block done (co_last_block): thread 0 stores the block's partial and takes a ticket;
     * in the block that draws the last one, thread t combines partials t, t+B, ... read from
     * L2, then the block tree. */
    __shared__ bool is_last;
    if (!co_last_block(is_last, partials, acc, counter))   /* its barrier ends gs_block_reduce's */
        return;
    acc = gs_block_reduce(co_fold_partials<RT_B, false>(partials));
    if (tid == 0)
        out[0] = rt_final(acc);   /* the result: finalized (partials stay raw) */
}
