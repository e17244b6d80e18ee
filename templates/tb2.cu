// @family      tb2
// @summary     paper's TB2: left-storing shared-memory tree over a data-block of R*B elements, bank-conflict padding, order kept (non-commutative operators)
// @plan        multipass
// @commutative not-required
// @deterministic yes
// @param B 256 threads per block (power of two, 32..1024)
// @param R 2 elements per thread: the data-block is R*B elements (power of two, 1..32; the paper's TB2 is R=2)
// @param PAD 1 1: one padding slot every PAD_PERIOD slots of the shared array, against bank conflicts; 0: none
// @param PAD_PERIOD 32 slots between two padding slots (power of two, 2..1024); the paper uses the bank count, 32
//
// tb2.cu - Martin et al., "Algorithmic Strategies for Optimizing the Parallel Reduction
// Primitive in CUDA", Algorithm 1 (TB2, Table I).
//
// Block b owns the data-block of D = R*B elements from b * D. Its threads load it into shared
// memory coalesced (thread t stores elements t, t+B, ..., lifted, past n the identity), then
// reduce it as a full binary tree over the D leaves, bottom-up, storing each pair's result in
// its left slot: level s combines slot i with slot i+s for every i that is a multiple of 2s.
// Every partial covers a contiguous run of the input and the left operand holds the lower
// indices, so no two elements are ever swapped: @commutative not-required. The first log2(R)
// levels of the tree stay inside aligned runs of R slots: thread t reads its run, slots
// tR .. tR+R-1, into registers and does those levels there (the same pairs, the same
// bracketing, no barrier between them), then writes the run's result back into the run's
// first slot. For R=2 that is exactly the first iteration of the paper's loop (thread t
// combines slots 2t and 2t+1). The block's result is thus the balanced binary tree over the
// D elements, whatever R. (With the padding, the stride-R reads of the runs are also free of
// bank conflicts for 4-byte slots.)
// The remaining levels run in shared memory with a barrier before each, as in the paper; once
// 32 pairs or fewer are left, warp 0 does them alone with __syncwarp() between levels.
//
// Padding: slot i lives at i + i/PAD_PERIOD (the paper's "ai += ai >> 5"), which spreads the
// power-of-two strides of the tree over the banks. It counts slots of rt_acc_t: with a 4-byte
// accumulator a slot is one bank word; an 8-byte one spans two words, so PAD_PERIOD=16 puts
// the padding every 32 words.
//
// in and out of one launch must not overlap (the host ping-pongs two buffers).

#ifndef RT_PRELUDE
#include "standalone.cuh"   /* sum on float, for nvcc -c on this file alone */
#endif

#ifndef RT_B
#define RT_B 256          /* threads per block; the generator's prelude sets it */
#endif
#ifndef RT_R
#define RT_R 2            /* elements per thread */
#endif
#ifndef RT_PAD
#define RT_PAD 1          /* 1: padding slots in the shared array */
#endif
#ifndef RT_PAD_PERIOD
#define RT_PAD_PERIOD 32  /* slots between two padding slots */
#endif

static_assert(RT_B >= 32 && RT_B <= 1024 && (RT_B & (RT_B - 1)) == 0,
              "tb2: B must be a power of two in 32..1024");
static_assert(RT_R >= 1 && RT_R <= 32 && (RT_R & (RT_R - 1)) == 0,
              "tb2: R must be a power of two in 1..32 (the tree needs a power-of-two data-block)");
static_assert(RT_PAD == 0 || RT_PAD == 1, "tb2: PAD is 0 or 1");
static_assert(RT_PAD_PERIOD >= 2 && RT_PAD_PERIOD <= 1024 && (RT_PAD_PERIOD & (RT_PAD_PERIOD - 1)) == 0,
              "tb2: PAD_PERIOD must be a power of two in 2..1024");

/* Checks the glue's signatures, and references every glue function. */
static_assert(sizeof(rt_combine(rt_lift(*(const rt_value_t *)0, 0ull),
                                rt_shfl_down(rt_identity(), 1u))) == sizeof(rt_acc_t),
              "tb2: the prelude's glue has the wrong signatures");

#define TB_D (RT_B * RT_R)                                     /* elements per data-block */
#define TB_SLOTS (TB_D + (RT_PAD ? TB_D / RT_PAD_PERIOD : 0))  /* shared slots, padding included */
/* The first stride whose level has at most 32 pairs: from there on warp 0 works alone. */
#define TB_WARP_STRIDE (TB_D / 64 > RT_R ? TB_D / 64 : RT_R)

static_assert(TB_SLOTS * sizeof(rt_acc_t) <= 48 * 1024,
              "tb2: the data-block does not fit in 48 KB of static shared memory (lower B*R)");

/* Threads per block, input elements per block, grid cap per SM (0: none). */
extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, TB_D, 0, 0 };

/* The shared-array position of slot i. */
static __device__ __forceinline__ unsigned int tb_at(unsigned int i)
{
#if RT_PAD
    return i + i / RT_PAD_PERIOD;
#else
    return i;
#endif
}

/* Loaders: rt_first lifts elements of the user's input (with their global index), rt_next
 * reads partials that are accumulators already. */
struct tb_load_input {
    static __device__ __forceinline__ rt_acc_t at(const rt_value_t *__restrict__ in,
                                                   unsigned long long i)
    {
        return rt_lift(in[i], i);
    }
};
struct tb_load_partial {
    static __device__ __forceinline__ rt_acc_t at(const rt_acc_t *__restrict__ in,
                                                   unsigned long long i)
    {
        return in[i];
    }
};

/* One level of the tree in shared memory: pair p of stride st combines slots 2*st*p and
 * 2*st*p + st, the result in the left one. Thread tid does pair tid if there is one. */
static __device__ __forceinline__ void tb_level(rt_acc_t *s, unsigned int st, unsigned int tid)
{
    if (tid < TB_D / (2 * st)) {
        const unsigned int i = 2 * st * tid;
        s[tb_at(i)] = rt_combine(s[tb_at(i)], s[tb_at(i + st)]);
    }
}

/* One block: its data-block into shared memory, the tree, out[blockIdx.x]. */
template <typename In, typename Load>
static __device__ __forceinline__ void tb_block(const In *__restrict__ in,
                                                rt_acc_t *__restrict__ out,
                                                unsigned long long n)
{
    __shared__ rt_acc_t s[TB_SLOTS];
    const unsigned int tid = threadIdx.x;
    const unsigned long long base = (unsigned long long)blockIdx.x * TB_D;

    /* Load, coalesced: thread t takes elements t, t+B, ... of the data-block. In a whole
     * data-block the R loads are independent and issued before any store. */
    if (base + TB_D <= n) {
        rt_acc_t x[RT_R];
#pragma unroll
        for (unsigned int k = 0; k < RT_R; k++)
            x[k] = Load::at(in, base + tid + k * RT_B);
#pragma unroll
        for (unsigned int k = 0; k < RT_R; k++)
            s[tb_at(tid + k * RT_B)] = x[k];
    } else {
        /* The last data-block: past n, the identity (the paper's virtual padding). */
#pragma unroll
        for (unsigned int k = 0; k < RT_R; k++) {
            const unsigned int j = tid + k * RT_B;
            s[tb_at(j)] = base + j < n ? Load::at(in, base + j) : rt_identity();
        }
    }

#if RT_R > 1
    /* The levels of strides 1 .. R/2, inside thread tid's run of slots tR .. tR+R-1: in
     * registers, left-storing, the same pairs as in shared memory. The result goes to the
     * run's first slot, which no other thread reads before the next barrier. */
    __syncthreads();
    {
        rt_acc_t a[RT_R];
#pragma unroll
        for (unsigned int k = 0; k < RT_R; k++)
            a[k] = s[tb_at(tid * RT_R + k)];
#pragma unroll
        for (unsigned int st = 1; st < RT_R; st *= 2)
#pragma unroll
            for (unsigned int k = 0; k < RT_R; k += 2 * st)
                a[k] = rt_combine(a[k], a[k + st]);
        s[tb_at(tid * RT_R)] = a[0];
    }
#endif

    /* Strides R .. D/2. While a level has more than 32 pairs, the whole block works on it
     * with a barrier before each (its operands come from other warps). The loops run on
     * compile-time bounds and unroll completely. */
#pragma unroll
    for (unsigned int st = RT_R; st < TB_WARP_STRIDE; st *= 2) {
        __syncthreads();
        tb_level(s, st, tid);
    }
    __syncthreads();
    /* The levels of at most 32 pairs, warp 0 alone: __syncwarp() orders each level's shared
     * stores before the next level's loads among its lanes (the lanes of a warp do not run in
     * lockstep since Volta; all 32 lanes reach it). */
    if (tid < 32) {
#pragma unroll
        for (unsigned int st = TB_WARP_STRIDE; st < TB_D; st *= 2) {
            tb_level(s, st, tid);
            __syncwarp();
        }
        if (tid == 0)
            if (gridDim.x == 1) *reinterpret_cast<rt_res_t *>(out) = rt_final(s[0]); else out[blockIdx.x] = s[0];   /* rt_final: the last pass */
    }
}

extern "C" __global__ void __launch_bounds__(RT_B)
rt_first(const rt_value_t *__restrict__ in, rt_acc_t *__restrict__ out, unsigned long long n)
{
    tb_block<rt_value_t, tb_load_input>(in, out, n);
}

extern "C" __global__ void __launch_bounds__(RT_B)
rt_next(const rt_acc_t *__restrict__ in, rt_acc_t *__restrict__ out, unsigned long long n)
{
    tb_block<rt_acc_t, tb_load_partial>(in, out, n);
}
