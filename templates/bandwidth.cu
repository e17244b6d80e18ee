// bandwidth.cu - the yardsticks, not a family (no @family line: the tuner never offers it as
// a reduction).
//
// rt_bw_read reads a buffer once as fast as the device allows; its bytes per second are the
// device's measured read bandwidth, the 100% that every family's bandwidth is reported
// against. It has the shape of gridstride's body without the operator: tiles of B*U 16-byte
// words, block b taking tiles b, b + grid, ...; in a tile thread t issues U independent
// 16-byte loads (t, t+B, ..., t+(U-1)B) before it uses any. The words are folded with xor and
// each block writes one word to out[blockIdx.x], so no load is dead code. Its rt_meta counts
// 16-byte words: tile = B*U words, grid = min(ceil(n16 / tile), G * SMs), or ceil(n16 / tile)
// (one tile per block, no grid loop) with G = 0; out holds one word per block.
//
// rt_spin keeps the stream busy for a number of clock cycles: enqueued just before the first
// timing event, it makes the event measure the GPU and not the host's launch latency. Launch
// it with one thread.
//
// @param B 512 threads per block (power of two, 32..1024)
// @param U 4 16-byte loads each thread has in flight (1..8)
// @param G 4 blocks per SM: the grid is at most G * SMs blocks, looping over the tiles (1..16); 0: one tile per block

#ifndef RT_B
#define RT_B 512   /* threads per block; the generator's prelude sets it */
#endif
#ifndef RT_U
#define RT_U 4     /* 16-byte loads in flight per thread */
#endif
#ifndef RT_G
#define RT_G 4     /* grid cap: blocks per SM */
#endif

static_assert(RT_B >= 32 && RT_B <= 1024 && (RT_B & (RT_B - 1)) == 0,
              "bandwidth: B must be a power of two in 32..1024");
static_assert(RT_U >= 1 && RT_U <= 8, "bandwidth: U must be in 1..8");
static_assert(RT_G >= 0 && RT_G <= 16, "bandwidth: G must be in 0..16");

#ifdef RT_PRELUDE
/* Put behind a family's prelude, nothing here uses the operator; referencing the glue in an
 * unevaluated operand keeps it from drawing "declared but never referenced". */
static_assert(sizeof(rt_combine(rt_lift(*(const rt_value_t *)0, 0ull),
                                rt_shfl_down(rt_identity(), 1u))) == sizeof(rt_acc_t),
              "bandwidth: the prelude's glue has the wrong signatures");
#endif

/* Threads per block, 16-byte words per tile, grid cap per SM. */
extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, RT_B * RT_U, RT_G, 0 };

static __device__ __forceinline__ unsigned int bw_fold(uint4 w)
{
    return w.x ^ w.y ^ w.z ^ w.w;
}

/* in: n16 16-byte words. out: gridDim.x words. */
extern "C" __global__ void __launch_bounds__(RT_B)
rt_bw_read(const uint4 *__restrict__ in, unsigned long long n16, unsigned int *__restrict__ out)
{
    const unsigned int tid = threadIdx.x;
    const unsigned long long per_tile = (unsigned long long)RT_B * RT_U;
    const unsigned long long nfull = n16 / per_tile;
    unsigned int acc = 0;

    /* Whole tiles: U loads through the read-only path, all issued before the first fold. */
    for (unsigned long long t = blockIdx.x; t < nfull; t += gridDim.x) {
        const unsigned long long k0 = t * per_tile + tid;
        uint4 x[RT_U];
#pragma unroll
        for (int u = 0; u < RT_U; u++)
            x[u] = __ldg(in + k0 + (unsigned long long)u * RT_B);
#pragma unroll
        for (int u = 0; u < RT_U; u++)
            acc ^= bw_fold(x[u]);
    }

    /* The partial last tile, by the block whose turn it would be. */
    if (nfull * per_tile < n16 && blockIdx.x == nfull % gridDim.x) {
#pragma unroll
        for (int u = 0; u < RT_U; u++) {
            const unsigned long long k = nfull * per_tile + (unsigned long long)u * RT_B + tid;
            if (k < n16)
                acc ^= bw_fold(__ldg(in + k));
        }
    }

    /* xor over the block: shuffles in each warp, then warp 0 over the warps' words. */
#pragma unroll
    for (unsigned int d = 16; d > 0; d >>= 1)
        acc ^= __shfl_down_sync(0xffffffffu, acc, d);
#if RT_B > 32
    __shared__ unsigned int warp_word[RT_B / 32];
    if (tid % 32 == 0)
        warp_word[tid / 32] = acc;
    __syncthreads();
    if (tid < 32) {
        acc = tid < RT_B / 32 ? warp_word[tid] : 0u;
#pragma unroll
        for (unsigned int d = RT_B / 64; d > 0; d >>= 1)
            acc ^= __shfl_down_sync(0xffffffffu, acc, d);
    }
#endif
    if (tid == 0)
        out[blockIdx.x] = acc;
}

/* Thread 0 of block 0 spins until clock64() has advanced by cycles (a clock of its SM). */
extern "C" __global__ void rt_spin(unsigned long long cycles)
{
    if (threadIdx.x != 0 || blockIdx.x != 0)
        return;
    const long long start = clock64();
    while ((unsigned long long)(clock64() - start) < cycles) {
    }
}
