// @family      seg_diffwarps
// @summary     segmented, keys: paper's DiffWarps and DiffWarps16, persistent Matrix whose P producer warps stage data-blocks and owners in two buffers while C consumer warps walk rows
// @plan        segmented
// @layout      keys
// @balanced    yes
// @commutative not-required
// @deterministic yes
// @param LAYOUT 1 1: keys, 2: offsets (this family implements keys only)
// @param OFF64 0 offsets are 32-bit (0) or 64-bit (1); ignored for keys
// @param P 8 producer warps: they copy data-blocks and their owners into shared memory (1..31, P+C <= 32); threads per block B = 32*(P+C)
// @param C 1 consumer warps: H = 32*C rows per data-block, one per consumer thread (1..8)
// @param W 32 row width in elements: the data-block is H*W elements (1..128); DiffWarps is W=32, DiffWarps16 W=16
// @param PAD 1 1: rows are W+1 elements apart in shared memory, against bank conflicts; 0: W apart
//
// seg_diffwarps.cu - Martin et al., "Algorithmic Strategies for Optimizing the Parallel
// Reduction Primitive in CUDA", section IV.B: the producer-consumer scheme (Algorithm 4) on the
// segmented Persistent Matrix, DiffWarps (P=8, C=1, H=W=32, 288 threads) and DiffWarps16
// (H=32, W=16), Table II.
//
// Grid and work. rt_meta asks for the occupancy grid, G = SMs x resident blocks per SM of
// this kernel (the paper's NUM_MULTIPROCESSORS * MBPM), and block b takes the q or q+1
// consecutive data-blocks from b*q + min(b, r), q = ntiles / G, r = ntiles % G (the paper's
// split; any split would do, since every data-block is a tile of docs/segmented.md with its
// own carry). A data-block (tile t) is D = H*W elements, H = 32*C rows of W, row r the
// elements t*D + r*W .., with their owners (keys), in two H x (W+PAD) matrices.
//
// Roles (threads per block B = 32*(P+C)). Warps C .. C+P-1 produce: for data-block i of the
// block's run they load its elements and owners coalesced (and producer thread 0 the owner
// of the element before it), all of a thread's loads in flight before it waits for the
// buffer (when 32P divides H*W; otherwise, and for the input's ragged last data-block, the
// wait comes first), and store them, owners clamped into [0, nseg), into buffer i%2. Warps
// 0 .. C-1 consume: consumer thread r walks row r of data-block i as seg_matrix's rows do
// (sc_keys of seg_common.cuh, the paper's segmented row loop: a run that begins and ends in
// the row is stored, the identity into owners skipped), then the C*32 rows meet in the
// segmented scan (a shuffle scan for C = 1; two named-barrier steps among the consumers for
// C > 1), which completes each row's first run; the data-block's first run becomes carry[t]
// when its segment began in an earlier data-block. So every out[s] is written once, by one
// thread, with a plain store; rt_seg_fix (seg_common.cuh) folds the carries. Data-block i+1
// is loaded while data-block i is walked. After its last data-block, the block holding the
// input's last one stores the identity into the segments after the last owner (all of out
// when n = 0).
//
// Handoff, as diffwarps.cu, on named barriers, counts in threads (whole warps):
//
//   FULL[k]  (ids 1, 2)  B threads: the 32P producers bar.arrive after storing buffer k; the
//                        32C consumers bar.sync on it before reading buffer k
//   EMPTY[k] (ids 3, 4)  B threads: the consumers bar.arrive once they have read buffer k,
//                        when a later data-block of the block will refill it (i + 2 < count);
//                        the producers bar.sync on it before storing data-block i + 2 (i >= 2)
//   CONS     (id 5)      32C threads: the consumers' scan, C > 1 only
//
// Why it is race-free. bar.arrive/bar.sync order memory like a release/acquire pair (PTX
// memory model: an arrive synchronizes with the sync that completes the barrier): the
// producers' stores to buffer k are visible to the consumers after FULL[k], and the consumers'
// reads of it happen before a producer's store after EMPTY[k]. The consumers read the buffer
// only in the walk (and, before it, the tile's edge owners): what goes into the scan and the
// stores after it is in registers (sc_keys::run_t), so EMPTY[k] is signalled before the scan.
// A phase of FULL[k] cannot mix two data-blocks: the producers arrive for data-block i + 2
// only after EMPTY[k] completed, which needs every consumer through its FULL[k] wait for
// data-block i; symmetrically a consumer arrives on EMPTY[k] for data-block i + 2 only after
// FULL[k] for it, which needs the producers through their EMPTY[k] wait for it. The waits and
// arrivals pair up exactly: EMPTY[k] is arrived for i = 0 .. count-3 and waited for
// i + 2 = 2 .. count-1; FULL[k] is arrived and waited for every i. No barrier is left half
// passed at the end, and no barrier waits on threads that have left the loop. The scan's
// shared arrays are the consumers' alone (CONS, or none for C = 1), and the out stores and
// carries of different data-blocks go to different addresses (docs/segmented.md).
//
// Every combine has the lower indices on the left (rows in order, the scan in thread order,
// the carries in tile order): @commutative not-required. No atomics: @deterministic yes.

#ifndef RT_PRELUDE
#include "standalone.cuh"   /* sum on float, for nvcc -c on this file alone */
#endif

#ifndef RT_LAYOUT
#define RT_LAYOUT 1
#endif
#ifndef RT_OFF64
#define RT_OFF64 0
#endif
#ifndef RT_P
#define RT_P 8       /* producer warps; the generator's prelude sets it */
#endif
#ifndef RT_C
#define RT_C 1       /* consumer warps */
#endif
#ifndef RT_W
#define RT_W 32      /* elements per row */
#endif
#ifndef RT_PAD
#define RT_PAD 1     /* 1: one padding element after each row */
#endif

#ifdef RT_B
#error "seg_diffwarps: the block is 32*(P+C) threads; B is not a parameter"
#endif
#define RT_B (32 * (RT_P + RT_C))   /* threads per block, also rt_seg_fix's */

#include "seg_common.cuh"

#define SD_H (32 * RT_C)            /* rows: one per consumer thread */
#define SD_D (SD_H * RT_W)          /* elements per data-block */
#define SD_PT (32 * RT_P)           /* producer threads */

/* Named barriers; 0 is __syncthreads(), which this kernel does not use. */
#define SD_FULL 1    /* FULL[k] = 1 + k */
#define SD_EMPTY 3   /* EMPTY[k] = 3 + k */
#define SD_CONS 5    /* the consumers' scan (C > 1) */

static_assert(RT_LAYOUT == 1, "seg_diffwarps: only the keys layout (LAYOUT=1)");
static_assert(RT_P >= 1 && RT_C >= 1 && RT_C <= 8 && RT_P + RT_C <= 32,
              "seg_diffwarps: P must be at least 1, C in 1..8, P + C at most 32 warps");
static_assert(RT_W >= 1 && RT_W <= 128, "seg_diffwarps: W must be in 1..128");
static_assert(RT_PAD == 0 || RT_PAD == 1, "seg_diffwarps: PAD is 0 or 1");
static_assert((SD_D + SD_PT - 1) / SD_PT <= 32,
              "seg_diffwarps: at most 32 loads per producer thread per data-block (32*C*W <= 1024*P)");

/* The keys tile of seg_common.cuh: H walkers, the scan over the H consumer threads. */
typedef sc_keys<SD_H, SD_H, RT_W, RT_W, RT_PAD, true> sd_keys;
static_assert(2 * sd_keys::SLOTS * (sizeof(rt_value_t) + 4) <= 44 * 1024,
              "seg_diffwarps: two H x (W+PAD) data and owner matrices do not fit in 44 KB of shared memory");

extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, SD_D, 0xffffffffu, 0u };

/* Named barriers (named_bar.cuh): FULL[k] and EMPTY[k] for a buffer index k known only at
 * run time (warp-uniform). */
#include "named_bar.cuh"
static __device__ __forceinline__ void sd_wait_full(unsigned int k) { nb_wait2<SD_FULL, RT_B>(k); }
static __device__ __forceinline__ void sd_signal_full(unsigned int k) { nb_signal2<SD_FULL, RT_B>(k); }
static __device__ __forceinline__ void sd_wait_empty(unsigned int k) { nb_wait2<SD_EMPTY, RT_B>(k); }
static __device__ __forceinline__ void sd_signal_empty(unsigned int k) { nb_signal2<SD_EMPTY, RT_B>(k); }

/* The consumers' barrier for their scan (sc_block_scan's BAR): the 32C consumer threads. */
struct sd_bar_cons {
    static __device__ __forceinline__ void sync() { nb_sync<SD_CONS, SD_H>(); }
};

/* seg: the keys (u32, n of them). out: nseg accumulators. carry: ntiles records. Any grid. */
extern "C" __global__ void __launch_bounds__(RT_B)
rt_seg(const rt_value_t *__restrict__ in, const void *seg, unsigned long long n, unsigned long long nseg,
       rt_acc_t *__restrict__ out, rt_seg_carry *__restrict__ carry, unsigned long long ntiles)
{
    const unsigned int *keys = (const unsigned int *)seg;
    __shared__ rt_value_t s_v[2][sd_keys::SLOTS];
    __shared__ unsigned int s_k[2][sd_keys::SLOTS];
    __shared__ unsigned int s_pk[2];   /* the (clamped) owner of the element before the data-block */
    const unsigned int tid = threadIdx.x, warp = tid / 32;

    /* This block's run of data-blocks: q or q+1 from b*q + min(b, r). Correct for any grid,
     * also one larger than ntiles (the blocks past it get none). */
    const unsigned long long q = ntiles / gridDim.x, r = ntiles % gridDim.x;
    const unsigned long long bk = blockIdx.x;
    const unsigned long long first = bk * q + (bk < r ? bk : r);
    const unsigned long long count = q + (bk < r ? 1 : 0);

    if (warp < RT_C) {
        /* Consumer thread tid walks row tid. */
        for (unsigned long long i = 0; i < count; i++) {
            const unsigned int k = (unsigned int)(i & 1);
            const unsigned long long t = first + i;
            const unsigned long long a = t * SD_D;
            const unsigned long long b = a + SD_D < n ? a + SD_D : n;
            sd_wait_full(k);
            /* The tile's edges, from the buffer: prevkey, the owner before the tile (-1 at 0);
             * the first run is a carry when element a has the same owner. lk: the owner of
             * the last element, for the tile's last run (consumer thread H-1 stores it). */
            const long long prevkey = a > 0 ? (long long)s_pk[k] : -1;
            const bool first_carry = a < b && a > 0 && (long long)s_k[k][0] == prevkey;
            const unsigned int lk =
                tid == SD_H - 1 && a < b ? s_k[k][sd_keys::slot((unsigned int)(b - 1 - a))] : 0u;
            if (tid == 0 && !first_carry)
                sc_carry_none(carry, t);
            const sd_keys::run_t w = sd_keys::walk(in, keys, n, nseg, out, carry, t, a, b, prevkey, first_carry,
                                                   s_v[k], s_k[k]);
            if (i + 2 < count)
                sd_signal_empty(k);   /* buffer k read: the producers may refill it */
            bool total_f;
            const rt_acc_t total = sd_keys::finish<sd_bar_cons>(w, out, carry, t, nseg, first_carry, total_f);
            if (tid == SD_H - 1 && a < b)
                sc_emit(out, carry, t, nseg, lk, total, !total_f, first_carry);
        }
    } else {
        const unsigned int pt = tid - SD_H;
        for (unsigned long long i = 0; i < count; i++) {
            const unsigned int k = (unsigned int)(i & 1);
            const unsigned long long a = (first + i) * SD_D;
            const unsigned long long b = a + SD_D < n ? a + SD_D : n;
            /* a <= n - 1 whenever a > 0 (a tile starts before n, except tile 0 at n = 0) */
            const unsigned int kp = pt == 0 && a > 0 ? keys[a - 1] : 0u;
            /* Buffer k held data-block i-2: wait until the consumers are through it; the
             * loads of a whole data-block are issued before that wait. */
            sd_keys::stage<SD_PT>(in, keys, n, nseg, a, b, pt, s_v[k], s_k[k], [k, i]() {
                if (i >= 2)
                    sd_wait_empty(k);
            });
            if (pt == 0)
                s_pk[k] = (unsigned long long)kp < nseg ? kp : (unsigned int)(nseg - 1);
            sd_signal_full(k);
        }
    }

    /* After the input's last element: the segments no element names (all of them when
     * n == 0), by every thread of the block that had the last data-block. */
    if (count > 0 && first + count == ntiles) {
        const unsigned long long lo = n > 0 ? (unsigned long long)sc_key(keys, n - 1, n, nseg) + 1 : 0;
        sc_fill(out, lo, nseg);
    }
}
