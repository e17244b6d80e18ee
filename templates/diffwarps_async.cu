// @family      diffwarps_async
// @summary     DiffWarps whose producers copy with cp.async (or the sm_90 bulk copy engine) into STAGES shared buffers, completion on mbarriers, ordered
// @plan        onelaunch
// @commutative not-required
// @deterministic yes
// @param P 1 producer warps: they issue the copies (1..31, P+C <= 32)
// @param C 1 consumer warps: 32*C rows per data-block, one per consumer thread (1..8)
// @param W 32 row width in elements: data-block 32*C*W elements; W * element size a multiple of 32 bytes (W <= 512)
// @param STAGES 4 shared buffers: up to STAGES-1 data-blocks in flight while one is reduced (2..8)
// @param BULK 0 1: on sm_90 one cp.async.bulk per row on an mbarrier's transaction count (producer warp 0); 0, or below sm_90: cp.async 16 B
//
// diffwarps_async.cu - DiffWarps (diffwarps.cu; Martin et al., section III.B.2, Algorithm 4)
// with the copies done by the hardware instead of through the producers' registers.
//
// Grid and work are Persistent Matrix's: G = min(data-blocks, SMs x resident blocks per SM of
// this kernel), block b reduces q or q+1 consecutive data-blocks, the last block done combines
// the G partials in index order. Warps 0 .. C-1 consume (thread r reduces row r of the
// matrix sequentially, rows meet in left-storing warp trees, consumer thread 0 folds the
// data-blocks in order), warps C .. C+P-1 produce: every combine keeps the lower indices on
// the left, so @commutative not-required.
//
// Alignment. The asynchronous copies move 16-byte units between 16-byte aligned addresses,
// and the user's pointer is only element-aligned. So the data-blocks start at the first
// 16-byte aligned element: the head (fewer than 16/size elements before it) is folded first by
// consumer thread 0 of block 0 with ordinary loads, and data-block t covers elements
// head + t*D .. head + t*D + D-1 (D*size is a multiple of 32 bytes, so each one starts
// aligned). The last data-block, when ragged, is copied with ordinary loads and stores.
//
// Shared layout. Row r of a stage is W*size bytes at r * (W*size + 16): one 16-byte pad per
// row, which keeps every row 16-byte aligned (a bulk copy can fill it) and, since a row is an
// even number of 16-byte chunks, makes the stride an odd number of chunks: the consumers read
// their rows 16 bytes at a time (LDS.128, 8 lanes per wavefront, 8 consecutive rows), and
// those 8 reads land on 8 different 16-byte bank groups.
//
// Handoff, per stage s (data-block i uses stage i % STAGES):
//   FULL[s]  an mbarrier expecting 32*P arrivals per phase. BULK=0: each producer thread
//            issues its cp.async (16 B, .cg) then cp.async.mbarrier.arrive.noinc, so the
//            hardware arrives for it when its copies have landed: a producer never waits for
//            its own copies and can run STAGES-1 data-blocks ahead. BULK=1 on sm_90: lane 0
//            of producer warp 0 arrives with expect_tx(D*size bytes), then warp 0's lanes
//            issue one cp.async.bulk per row, completing bytes on the same mbarrier; the other
//            producer threads just arrive. Ragged data-block: ordinary stores, then a
//            release arrive by every producer thread. Consumers wait on phase i / STAGES
//            (try_wait.parity, acquire): the data is visible to them after it.
//   EMPTY[s] named barrier 1+s: consumers bar.arrive once they have read the stage (if
//            data-block i + STAGES exists), producers bar.sync on it before refilling.
// A phase of either cannot mix two data-blocks: producers arrive on FULL[s] for data-block
// i + STAGES only after EMPTY[s] said the consumers are through data-block i, so the waits
// on a stage's mbarrier alternate parities 0, 1, 0, ... and never fall two phases behind.

#ifndef RT_PRELUDE
#include "standalone.cuh"   /* sum on float, for nvcc -c on this file alone */
#endif

#ifndef RT_P
#define RT_P 1        /* producer warps; the generator's prelude sets it */
#endif
#ifndef RT_C
#define RT_C 1        /* consumer warps */
#endif
#ifndef RT_W
#define RT_W 32       /* elements per row */
#endif
#ifndef RT_STAGES
#define RT_STAGES 4   /* shared buffers */
#endif
#ifndef RT_BULK
#define RT_BULK 0     /* 1: the bulk copy engine on sm_90 */
#endif

#define DA_B ((RT_P + RT_C) * 32)                    /* threads per block */
#define DA_WARPS (RT_P + RT_C)
#define DA_H (32 * RT_C)                             /* rows: one per consumer thread */
#define DA_D (DA_H * RT_W)                           /* elements per data-block */
#define DA_PT (32 * RT_P)                            /* producer threads */
#define DA_E (16 / sizeof(rt_value_t))               /* elements per 16-byte chunk */
#define DA_ROW (RT_W * sizeof(rt_value_t))           /* bytes of a row */
#define DA_NCH (DA_ROW / 16)                         /* chunks per row */
#define DA_RSB (DA_ROW + 16)                         /* bytes from one row to the next */
#define DA_SB (DA_H * DA_RSB)                        /* bytes per stage */
#define DA_CHUNKS (DA_H * DA_NCH)                    /* chunks per data-block */
#define DA_CPT ((DA_CHUNKS + DA_PT - 1) / DA_PT)     /* cp.async per producer thread */
#define DA_LPT ((DA_D + DA_PT - 1) / DA_PT)          /* element copies per producer thread */

/* Named barriers; 0 is __syncthreads(). */
#define DA_EMPTY 1                /* EMPTY[s] = 1 + s, s < STAGES <= 8 */
#define DA_CONS (1 + RT_STAGES)   /* the consumers among themselves (C > 1) */

static_assert(RT_P >= 1 && RT_C >= 1 && RT_C <= 8 && RT_P + RT_C <= 32,
              "diffwarps_async: P must be at least 1, C in 1..8, P + C at most 32 warps");
static_assert(RT_W >= 1 && RT_W <= 512, "diffwarps_async: W must be in 1..512");
static_assert(16 % sizeof(rt_value_t) == 0, "diffwarps_async: elements of 1, 2, 4, 8 or 16 bytes");
static_assert(DA_ROW % 32 == 0,
              "diffwarps_async: a row (W * element size) must be a multiple of 32 bytes");
static_assert(RT_STAGES >= 2 && RT_STAGES <= 8, "diffwarps_async: STAGES must be in 2..8");
static_assert(RT_BULK == 0 || RT_BULK == 1, "diffwarps_async: BULK is 0 or 1");
static_assert(DA_CPT <= 64 && DA_LPT <= 256,
              "diffwarps_async: at most 64 copies per producer thread per data-block");
static_assert(RT_STAGES * DA_SB + (2 * RT_C + DA_WARPS) * sizeof(rt_acc_t) + 8 * RT_STAGES + 16
              <= 48 * 1024,
              "diffwarps_async: STAGES buffers of 32C x (W*size + 16) bytes do not fit in 48 KB of static shared memory");

/* Checks the glue's signatures, and references every glue function. */
static_assert(sizeof(rt_combine(rt_lift(*(const rt_value_t *)0, 0ull),
                                rt_shfl_down(rt_identity(), 1u))) == sizeof(rt_acc_t),
              "diffwarps_async: the prelude's glue has the wrong signatures");

/* Threads per block, input elements per data-block, and the grid: SMs x the occupancy of the
 * compiled kernel (PLAN_GRID_OCCUPANCY in runtime/plan.h). */
extern "C" __device__ const unsigned int rt_meta[4] = { DA_B, DA_D, 0xffffffffu, 0 };

static __device__ __forceinline__ unsigned int da_smem(const void *p)
{
    return (unsigned int)__cvta_generic_to_shared(p);
}

/* ---- mbarriers (sm_80: init, arrive, test_wait; sm_90 adds try_wait and expect_tx) ---- */

static __device__ __forceinline__ void da_mbar_init(unsigned long long *bar, unsigned int count)
{
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" : : "r"(da_smem(bar)), "r"(count) : "memory");
}

/* An arrival with release semantics (the default of mbarrier.arrive): this thread's earlier
 * shared stores are visible to a thread whose wait sees the phase complete. */
static __device__ __forceinline__ void da_mbar_arrive(unsigned long long *bar)
{
    asm volatile("{\n\t.reg .b64 state;\n\t"
                 "mbarrier.arrive.shared.b64 state, [%0];\n\t}"
                 : : "r"(da_smem(bar)) : "memory");
}

/* Until the phase of parity 'parity' has completed; acquire semantics. */
static __device__ __forceinline__ void da_mbar_wait(unsigned long long *bar, unsigned int parity)
{
    unsigned int done;
    do {
#if __CUDA_ARCH__ >= 900
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done) : "r"(da_smem(bar)), "r"(parity) : "memory");
#else
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done) : "r"(da_smem(bar)), "r"(parity) : "memory");
#endif
    } while (!done);
}

/* ---- cp.async (sm_80+; not needed where the bulk copy engine does the copies) ---- */

#if !(RT_BULK && __CUDA_ARCH__ >= 900)
/* 16 bytes global -> shared, through L2 only (.cg); both addresses 16-byte aligned. */
static __device__ __forceinline__ void da_cp16(void *dst, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                 : : "r"(da_smem(dst)), "l"(__cvta_generic_to_global(src)) : "memory");
}

/* The hardware arrives on bar once every cp.async this thread has issued so far has landed;
 * .noinc: that arrival is one of the count given at init, not an extra one. */
static __device__ __forceinline__ void da_cp_arrive(unsigned long long *bar)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" : : "r"(da_smem(bar)) : "memory");
}
#endif

/* ---- the bulk copy engine (sm_90) ---- */

#if RT_BULK && __CUDA_ARCH__ >= 900
/* Arrive, and add 'bytes' to the transaction count the phase waits for. */
static __device__ __forceinline__ void da_mbar_arrive_tx(unsigned long long *bar, unsigned int bytes)
{
    asm volatile("{\n\t.reg .b64 state;\n\t"
                 "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 state, [%0], %1;\n\t}"
                 : : "r"(da_smem(bar)), "r"(bytes) : "memory");
}

/* bytes (a multiple of 16) global -> shared by the copy engine, both 16-byte aligned; the
 * bytes complete on bar's transaction count. A CTA's own shared address is a valid
 * shared::cluster address. */
static __device__ __forceinline__ void da_bulk(void *dst, const void *src, unsigned int bytes,
                                               unsigned long long *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 : : "r"(da_smem(dst)), "l"(__cvta_generic_to_global(src)), "r"(bytes), "r"(da_smem(bar))
                 : "memory");
}
#endif

/* ---- named barriers ---- */

/* named_bar.cuh: by whole warps, the id an immediate. */
#include "named_bar.cuh"

/* EMPTY[s] for a stage known only at run time; the cases past STAGES are compiled out. */
template <bool SYNC, unsigned int S>
static __device__ __forceinline__ void da_empty_at()
{
    if (S < RT_STAGES) {
        if (SYNC)
            nb_sync<DA_EMPTY + S, DA_B>();
        else
            nb_arrive<DA_EMPTY + S, DA_B>();
    }
}
template <bool SYNC>
static __device__ __forceinline__ void da_empty(unsigned int s)
{
    switch (s) {
    case 0: da_empty_at<SYNC, 0>(); break;
    case 1: da_empty_at<SYNC, 1>(); break;
    case 2: da_empty_at<SYNC, 2>(); break;
    case 3: da_empty_at<SYNC, 3>(); break;
    case 4: da_empty_at<SYNC, 4>(); break;
    case 5: da_empty_at<SYNC, 5>(); break;
    case 6: da_empty_at<SYNC, 6>(); break;
    default: da_empty_at<SYNC, 7>(); break;
    }
}

/* ---- ordered reductions and the last-block-done finish ---- */

/* collectives.cuh: the ordered warp and block trees, the ticket, the partials read from L2. */
#include "collectives.cuh"

/* ---- the two roles ---- */

/* Producer thread pt (0 .. 32P-1): data-block elements gbase .. gbase + D-1 into stage st,
 * completion reported on full. */
static __device__ __forceinline__ void da_produce(unsigned char *st, const rt_value_t *__restrict__ in,
                                                  unsigned int pt, unsigned long long gbase,
                                                  unsigned long long n, unsigned long long *full)
{
    if (gbase + DA_D <= n) {
        const unsigned char *src = reinterpret_cast<const unsigned char *>(in + gbase);
#if RT_BULK && __CUDA_ARCH__ >= 900
        /* Producer warp 0: lane 0 announces the bytes, then the lanes issue a row each (rows
         * lane, lane + 32, ...). The announcement comes first (__syncwarp), so the
         * transaction count never runs ahead of it. */
        if (pt < 32) {
            if (pt == 0)
                da_mbar_arrive_tx(full, DA_D * (unsigned int)sizeof(rt_value_t));
            __syncwarp();
#pragma unroll 1
            for (unsigned int r = pt; r < DA_H; r += 32)
                da_bulk(st + r * DA_RSB, src + r * DA_ROW, DA_ROW, full);
            if (pt != 0)
                da_mbar_arrive(full);
        } else {
            da_mbar_arrive(full);
        }
#else
        /* Chunk q = pt + m*32P: consecutive threads copy consecutive 16-byte chunks. */
#pragma unroll
        for (unsigned int m = 0; m < DA_CPT; m++) {
            const unsigned int q = pt + m * DA_PT;
            if (DA_CHUNKS % DA_PT == 0 || q < DA_CHUNKS)
                da_cp16(st + (q / DA_NCH) * DA_RSB + (q % DA_NCH) * 16, src + q * 16);
        }
        da_cp_arrive(full);
#endif
    } else {
        /* The last data-block of the input, ragged: ordinary loads and stores, element by
         * element (the slots past n stay unwritten, and unread), then a release arrival. */
#pragma unroll 4
        for (unsigned int m = 0; m < DA_LPT; m++) {
            const unsigned int j = pt + m * DA_PT;
            if (j < DA_D && gbase + j < n)
                *reinterpret_cast<rt_value_t *>(st + (j / RT_W) * DA_RSB + (j % RT_W) * sizeof(rt_value_t)) =
                    in[gbase + j];
        }
        da_mbar_arrive(full);
    }
}

/* Consumer thread r (0 .. H-1): row r of stage st, elements gbase + r*W .. in order, read 16
 * bytes at a time. The bounds test only for the last data-block of the input. */
static __device__ __forceinline__ rt_acc_t da_row(const unsigned char *st, unsigned int r,
                                                  unsigned long long gbase, unsigned long long n)
{
    const uint4 *row = reinterpret_cast<const uint4 *>(st + r * DA_RSB);
    const unsigned long long first = gbase + (unsigned long long)r * RT_W;
    rt_acc_t v = rt_identity();
    if (gbase + DA_D <= n) {
#pragma unroll
        for (unsigned int c = 0; c < DA_NCH; c++) {
            const uint4 raw = row[c];
            rt_value_t e[DA_E];
            memcpy(e, &raw, sizeof raw);
#pragma unroll
            for (unsigned int x = 0; x < DA_E; x++) {
                const rt_acc_t a = rt_lift(e[x], first + c * DA_E + x);
                v = c == 0 && x == 0 ? a : rt_combine(v, a);
            }
        }
    } else {
#pragma unroll 2
        for (unsigned int c = 0; c < DA_NCH; c++) {
            const uint4 raw = row[c];
            rt_value_t e[DA_E];
            memcpy(e, &raw, sizeof raw);
#pragma unroll
            for (unsigned int x = 0; x < DA_E; x++)
                if (first + c * DA_E + x < n)
                    v = rt_combine(v, rt_lift(e[x], first + c * DA_E + x));
        }
    }
    return v;
}

/* Thread 0 gets the values of threads 0 .. B-1 combined in thread order (collectives.cuh).
 * Every thread calls it; once per launch (warp 0 reads the shared array last). */
static __device__ __forceinline__ rt_acc_t da_block_tree(rt_acc_t v)
{
    __shared__ rt_acc_t warp_part[DA_WARPS];
    return co_block_tree<DA_WARPS, true>(v, warp_part);
}

/* in: n elements, any element-aligned address. out[0]: the result. partials: at least
 * gridDim.x accumulators. counter: 0 before the first launch; each launch leaves it 0. */
extern "C" __global__ void __launch_bounds__(DA_B)
rt_one(const rt_value_t *__restrict__ in, rt_res_t *__restrict__ out, unsigned long long n,
       rt_acc_t *__restrict__ partials, unsigned int *__restrict__ counter)
{
    __shared__ __align__(128) unsigned char buf[RT_STAGES * DA_SB];
    __shared__ unsigned long long full[RT_STAGES];
    const unsigned int tid = threadIdx.x, warp = tid / 32;

    /* Head: the elements before the first 16-byte aligned address (the pointer is element-
     * aligned, so they are a whole number, fewer than 16/size). The data-blocks follow. */
    const unsigned long long misalign = reinterpret_cast<unsigned long long>(in) % 16;
    unsigned long long head = misalign ? (16 - misalign) / sizeof(rt_value_t) : 0;
    if (head > n)
        head = n;

    /* This block's run of data-blocks: q or q+1 from b*q + min(b, r). The host sized the grid
     * for ceil(n / D) data-blocks; after the head there may be one fewer, and the blocks past
     * them get none and contribute the identity. */
    const unsigned long long nblocks = (n - head + DA_D - 1) / DA_D;
    const unsigned long long q = nblocks / gridDim.x, r = nblocks % gridDim.x;
    const unsigned long long b = blockIdx.x;
    const unsigned long long first = b * q + (b < r ? b : r);
    const unsigned long long count = q + (b < r ? 1 : 0);

    if (tid == 0) {
        for (unsigned int s = 0; s < RT_STAGES; s++)
            da_mbar_init(&full[s], DA_PT);
#if __CUDA_ARCH__ >= 900
        /* The initialised mbarriers, visible to the copy engine (async proxy) too. */
        asm volatile("fence.mbarrier_init.release.cluster;" : : : "memory");
        asm volatile("fence.proxy.async.shared::cta;" : : : "memory");
#endif
    }
    __syncthreads();

    rt_acc_t acc = rt_identity();   /* consumer thread 0's: the head, then the data-blocks */
    if (warp < RT_C) {
#if RT_C > 1
        __shared__ rt_acc_t cons_part[2][RT_C];
#endif
        if (tid == 0 && b == 0)
            for (unsigned int h = 0; h < head; h++)
                acc = rt_combine(acc, rt_lift(in[h], h));
        unsigned int s = 0, parity = 0;   /* data-block i: stage i % STAGES, phase i / STAGES */
        for (unsigned long long i = 0; i < count; i++) {
            const unsigned long long gbase = head + (first + i) * DA_D;
            da_mbar_wait(&full[s], parity);
            rt_acc_t v = da_row(buf + s * DA_SB, tid, gbase, n);
            if (i + RT_STAGES < count)
                da_empty<false>(s);   /* stage s read: the producers may refill it */
            v = co_warp_tree<32>(v);
#if RT_C > 1
            /* The C warp results in order, double-buffered: a warp can write data-block i+2's
             * into this half only after passing data-block i+1's barrier, which thread 0
             * reaches after it has read data-block i's. */
            if (tid % 32 == 0)
                cons_part[i & 1][warp] = v;
            nb_sync<DA_CONS, 32 * RT_C>();
            if (tid == 0)
#pragma unroll
                for (unsigned int c = 0; c < RT_C; c++)
                    acc = rt_combine(acc, cons_part[i & 1][c]);
#else
            if (tid == 0)
                acc = rt_combine(acc, v);
#endif
            if (++s == RT_STAGES) {
                s = 0;
                parity ^= 1;
            }
        }
    } else {
        const unsigned int pt = tid - 32 * RT_C;
        unsigned int s = 0;
        for (unsigned long long i = 0; i < count; i++) {
            if (i >= RT_STAGES)
                da_empty<true>(s);   /* the consumers are through data-block i - STAGES */
            da_produce(buf + s * DA_SB, in, pt, head + (first + i) * DA_D, n, &full[s]);
            if (++s == RT_STAGES)
                s = 0;
        }
    }

    /* Last block done (co_last_block; consumer thread 0 is thread 0): thread 0 stores the
     * block's partial and takes a ticket; the block that draws the last one combines partials
     * 0 .. G-1 in index order, thread t a contiguous chunk of them read from L2, then the
     * ordered block tree. Every copy has landed: the consumers waited for each. */
    __shared__ bool is_last;
    if (!co_last_block(is_last, partials, acc, counter))
        return;
    acc = da_block_tree(co_fold_partials<DA_B, true>(partials));
    if (tid == 0)
        out[0] = rt_final(acc);   /* the result: finalized (partials stay raw) */
}
