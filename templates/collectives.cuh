// collectives.cuh - the warp, block and grid collectives the unsegmented families share
// (gridstride, tree_sequential, tb4warp, matrix, persistent_matrix, diffwarps,
// diffwarps_async; seg_per's group tree): the ordered and the halving warp trees, the block
// tree built on them, and the one-launch plan's last-block-done finish (ticket, partials read
// from L2, final tree). Included after the glue and the parameters, and inlined into the unit
// by the generator like seg_common.cuh.
//
// Where the glue defines RT_WARP_REDUCE (on sm_80 and later: argmin and argmax of a 32-bit
// compared type, and sum, min and max in a 32-bit integer accumulator; runtime/glue.c), the
// 32-lane trees and the second level of a block tree are its rt_warp_reduce instead: the
// argmin/argmax order is total and integer sums, min and max are exact, so every tree,
// ordered or not, gives the result it gives, and lane 0 (every lane) gets it.
//
// Ordered means that every combine has the lower indices on the left: the result is the left
// fold of the values in thread order, bracketed as a balanced tree, right for a
// non-commutative operator. The halving trees pair lane l with lane l + N/2 first: commutative
// operators only (the families that use them declare @commutative required).
//
// Helpers are prefixed co_. They are not static: a unit that uses none of them draws no
// "declared but never referenced", and the compiler inlines them all (__forceinline__), so
// none appears in the PTX. The shared memory they use is the caller's (an array or a flag
// passed in): a __shared__ variable declared in a helper would be named after it and placed
// after the caller's own, which changes the block's shared layout and the code ptxas makes.
// The families' PTX was not changed by moving their copies here: tools/ptx_diff.sh checks it.
#ifndef RT_COLLECTIVES_CUH
#define RT_COLLECTIVES_CUH

/* ---- warp trees (all 32 lanes call them, converged) ---- */

/* The left-storing intra-warp tree over the first N lanes (N <= 32): lane 0 gets lanes
 * 0 .. N-1 combined in order (when N is not a power of two, the lanes from N up to the next
 * one must hold the identity), and with N < 32 a power of two, lane 0 of each aligned group of
 * N lanes gets its group's. Lane 0 reads lane d at step d, which holds lanes d .. 2d-1 by
 * then; a lane whose l + d passes 31 gets its own value back from the shuffle and is never
 * read. (The usual d = 16 .. 1 order pairs lanes l and l+16 first: commutative only.) */
template <unsigned int N>
__device__ __forceinline__ rt_acc_t co_warp_tree(rt_acc_t v)
{
#ifdef RT_WARP_REDUCE
    if constexpr (N == 32)
        return rt_warp_reduce(v);   /* the glue's: a result every tree gives */
    else
#endif
    {
#pragma unroll
        for (unsigned int d = 1; d < N; d *= 2)
            v = rt_combine(v, rt_shfl_down(v, d));
        return v;
    }
}

/* Lane 0 gets the combination of lanes 0 .. N-1 (N a power of two), halving: lane l with lane
 * l + N/2, then + N/4, ... 1. Out of order: a commutative operator only. */
template <unsigned int N>
__device__ __forceinline__ rt_acc_t co_warp_halving(rt_acc_t v)
{
#ifdef RT_WARP_REDUCE
    if constexpr (N == 32)
        return rt_warp_reduce(v);
    else
#endif
    {
#pragma unroll
        for (unsigned int d = N / 2; d > 0; d >>= 1)
            v = rt_combine(v, rt_shfl_down(v, d));
        return v;
    }
}

/* ---- block trees ---- */

/* The second level of a block tree: lane 0 of warps 0 .. WARPS-1 holds its warp's result;
 * thread 0 gets them combined in warp order by warp 0's tree (ORDERED: co_warp_tree, else
 * co_warp_halving), through part, the caller's __shared__ array of WARPS accumulators. lane
 * and warp are threadIdx.x % 32 and / 32, the caller's (so that the compiler shares them with
 * the caller's own index arithmetic). ALL: every warp of the block holds a result (lane 0
 * stores without a test); otherwise only threads 0 .. 32*WARPS-1 do, the others take part in
 * the barrier only. Every thread of the block calls it. With WARPS == 1 it is nothing (no
 * barrier, part unused); otherwise it holds a __syncthreads() and ends with warp 0 reading
 * part, so a second use of part needs a barrier before it. */
template <unsigned int WARPS, bool ORDERED, bool ALL = true>
__device__ __forceinline__ rt_acc_t co_warps_tree(rt_acc_t v, rt_acc_t *part, unsigned int lane,
                                                  unsigned int warp)
{
    if constexpr (WARPS > 1) {
        if ((ALL || threadIdx.x < 32 * WARPS) && lane == 0)
            part[warp] = v;
        __syncthreads();
        if (warp == 0) {
#ifdef RT_WARP_REDUCE
            /* The lanes past WARPS hold the identity: the whole warp's reduction is the tree's. */
            v = rt_warp_reduce(lane < WARPS ? part[lane] : rt_identity());
#else
            if constexpr (ORDERED)
                v = co_warp_tree<WARPS>(lane < WARPS ? part[lane] : rt_identity());
            else
                v = co_warp_halving<WARPS>(lane < WARPS ? part[lane] : rt_identity());
#endif
        }
    } else {
        (void)part;
        (void)lane;
        (void)warp;
    }
    return v;
}

/* Thread 0 gets the values of the block's threads (WARPS whole warps) combined: in thread order
 * with ORDERED, else in any order. part: the caller's __shared__ array of WARPS accumulators.
 * Every thread calls it; see co_warps_tree for the barrier. */
template <unsigned int WARPS, bool ORDERED>
__device__ __forceinline__ rt_acc_t co_block_tree(rt_acc_t v, rt_acc_t *part)
{
    if constexpr (ORDERED)
        v = co_warp_tree<32>(v);
    else
        v = co_warp_halving<32>(v);
    return co_warps_tree<WARPS, ORDERED>(v, part, threadIdx.x % 32, threadIdx.x / 32);
}

/* ---- the one-launch finish: last block done ---- */

template <bool C, typename T, typename F> struct co_pick { typedef T type; };
template <typename T, typename F> struct co_pick<false, T, F> { typedef F type; };

/* A partial written by another block in this launch, read from L2 (ld.global.cg): this SM's
 * L1 is not coherent and may hold a line of partials from an earlier launch. Word by word, 8
 * bytes where T is made of them, else 4, else 2 or 1 (a half or byte accumulator: seg_per
 * SPLIT's min of f16; T may be a struct, and a volatile struct cannot be copied); the words go
 * back together through memcpy, which turns into register moves. */
template <typename T>
__device__ __forceinline__ T co_load_partial(const T *p)
{
    typedef typename co_pick<sizeof(T) % 8 == 0 && alignof(T) >= 8, unsigned long long,
            typename co_pick<sizeof(T) % 4 == 0 && alignof(T) >= 4, unsigned int,
            typename co_pick<sizeof(T) % 2 == 0 && alignof(T) >= 2, unsigned short,
                             unsigned char>::type>::type>::type word;
    word w[sizeof(T) / sizeof(word)];
#pragma unroll
    for (unsigned int k = 0; k < sizeof(T) / sizeof(word); k++)
        w[k] = __ldcg(reinterpret_cast<const word *>(p) + k);
    T r;
    memcpy(&r, w, sizeof r);
    return r;
}

/* atomicInc(counter, limit) with acquire-release semantics at device scope. */
__device__ __forceinline__ unsigned int co_ticket(unsigned int *counter, unsigned int limit)
{
#if __CUDA_ARCH__ >= 700
    unsigned int old;
    asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;"
                 : "=r"(old) : "l"(counter), "r"(limit) : "memory");
    return old;
#else
    __threadfence();
    const unsigned int old = atomicInc(counter, limit);
    __threadfence();
    return old;
#endif
}

/* Whether this block is the last of the launch to finish: thread 0 stores part, its value
 * (raw: rt_final is for out[0] only), into partials[blockIdx.x], then takes a ticket with one
 * acquire-release atomic: release, so that the store is visible before the ticket is;
 * acquire, so that the block drawing the last ticket (gridDim.x - 1) sees every partial, the
 * tickets forming one release sequence. (It does the work of the classic __threadfence();
 * atomicInc(); __threadfence() in one round trip: 0.4 us less at n = 2^20 on an H100.) inc
 * with limit gridDim.x - 1 wraps to 0 on the last ticket, so the counter is 0 again for the
 * next launch with no memset and no extra store. is_last, the caller's __shared__ flag, and
 * the barrier tell the whole block; the barrier also ends any earlier use of the block's
 * shared memory. Every thread calls it. */
__device__ __forceinline__ bool co_last_block(bool &is_last, rt_acc_t *partials, rt_acc_t part,
                                              unsigned int *counter)
{
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = part;
        is_last = co_ticket(counter, gridDim.x - 1) == gridDim.x - 1;
    }
    __syncthreads();
    return is_last;
}

/* The last block's first step over partials 0 .. gridDim.x-1 (NT threads): ORDERED, thread t
 * folds the contiguous chunk [t*c, t*c + c), c = ceil(gridDim.x / NT), in index order, so that
 * an ordered block tree on top keeps the order; otherwise thread t folds t, t+NT, ... (each
 * warp's loads coalesced). Thread 0's acquire and co_last_block's barrier order these reads
 * after every other block's store; co_load_partial reads them from L2. The caller then
 * reduces the block (co_block_tree) and writes out[0] = rt_final(...). */
template <unsigned int NT, bool ORDERED>
__device__ __forceinline__ rt_acc_t co_fold_partials(const rt_acc_t *partials)
{
    rt_acc_t acc = rt_identity();
    if constexpr (ORDERED) {
        const unsigned int per = (gridDim.x + NT - 1) / NT;
        const unsigned int lo = threadIdx.x * per, hi = lo + per < gridDim.x ? lo + per : gridDim.x;
        for (unsigned int i = lo; i < hi; i++)
            acc = rt_combine(acc, co_load_partial(partials + i));
    } else {
        for (unsigned int i = threadIdx.x; i < gridDim.x; i += NT)
            acc = rt_combine(acc, co_load_partial(partials + i));
    }
    return acc;
}

/* ---- vector loads ---- */

/* Inputs of up to this many bytes are read with the streaming hint, larger ones through the
 * read-only path (co_load_vec; docs/templates.md, "Loads"); none with RT_LOAD_KEEP (the
 * generator's, for REDTUNE_LOADS=keep). CO_STREAM: whether a family that streams whatever the
 * size (oneblock, the axis families) does. */
#ifdef RT_LOAD_KEEP
#define CO_STREAM_MAX_BYTES 0ull
#define CO_STREAM false
#else
#define CO_STREAM_MAX_BYTES (256ull << 20)
#define CO_STREAM true
#endif

/* One vector of the input, a struct of V elements aligned to its size (the family's), as one
 * load of its size (LDG.32/64/128). With STREAM (the family's choice, e.g. for an input of at
 * most CO_STREAM_MAX_BYTES: a loop for each, so that each is the code of one kind of load)
 * the load carries the streaming hint (ld.global.cs, __ldcs: evict-first in L1 and L2): the
 * input is read once, and marked evict-first its lines are the first to go, so the dirty
 * lines that an earlier kernel left in the L2 stay instead of being written back while this
 * kernel reads. Without, the read-only path (ld.global.nc): over a long stream the dirty
 * lines would keep most of the L2 from it. memcpy only renames the registers. */
template <bool STREAM, typename Vec>
__device__ __forceinline__ Vec co_load_vec(const Vec *p)
{
    typedef typename co_pick<sizeof(Vec) == 16, uint4,
            typename co_pick<sizeof(Vec) == 8, uint2,
            typename co_pick<sizeof(Vec) == 4, unsigned int,
                             unsigned short>::type>::type>::type raw_t;
    static_assert(sizeof(raw_t) == sizeof(Vec), "collectives: no load of that vector size");
    const raw_t *q = reinterpret_cast<const raw_t *>(p);
    raw_t raw;
    if constexpr (STREAM)
        raw = __ldcs(q);
    else
        raw = __ldg(q);
    Vec x;
    memcpy(&x, &raw, sizeof x);
    return x;
}

/* ---- a run of elements in registers ---- */

/* The N values of a[] combined as a balanced tree: log2(N) dependent combines rather than N
 * in a chain, so that a long-latency combine (f64, a struct) does not stall the loop. In any
 * order: commutative families only. */
template <int N>
__device__ __forceinline__ rt_acc_t co_tree(rt_acc_t (&a)[N])
{
#pragma unroll
    for (int s = 1; s < N; s *= 2) {
#pragma unroll
        for (int k = 0; k + s < N; k += 2 * s)
            a[k] = rt_combine(a[k], a[k + s]);
    }
    return a[0];
}

/* The N elements x[0 .. N-1] of a thread's tile, whose indices at(0) < at(1) < ... < at(N-1)
 * increase with m, lifted and combined into one accumulator, in any order (commutative
 * families only). Without the glue's RT_LIFT_RUN each is lifted and they meet in co_tree.
 * With it the glue's rt_lift_run gives the same
 * result at less cost per element (runtime/glue.c: a scan of the values and one lift for
 * min, max, amax, argmin and argmax, one sum and count for mean, the in-register two-pass
 * for var_mean). */
template <int N, class At>
__device__ __forceinline__ rt_acc_t co_lift_run(const rt_value_t (&x)[N], At at)
{
#ifdef RT_LIFT_RUN
    return rt_lift_run<N>(x, at);
#else
    rt_acc_t a[N];
#pragma unroll
    for (int m = 0; m < N; m++)
        a[m] = rt_lift(x[m], at(m));
    return co_tree(a);
#endif
}

#endif
