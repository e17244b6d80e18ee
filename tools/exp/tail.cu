// tail.cu - experiment (issue 15): where the last 2-4% of a 256-512 MiB reduction goes. A bf16
// sum into f32 (and an f32 sum) with 16-byte loads, U = 4 in flight, B = 256, G blocks per SM,
// block b taking tiles b, b + grid, ... as gridstride does, with seven finishes:
//   0 ticket            gridstride's: each block's partial, an acquire-release ticket, the
//                       last block folds the partials one load at a time
//   1 partial only      no ticket, no fold: 0 - 1 is what the finish costs
//   2 cluster 8         clusters of 8 blocks add their partials in distributed shared memory
//                       first, then 0 over the clusters (8 times fewer tickets and partials)
//   3 fold in flight    0 with the last block's loads all issued before its adds
//   4 relaxed (bound)   3 with a relaxed ticket: not a correct finish (the partial's store is
//                       not ordered before it), a bound on what a finish needing no release saves
//   6 first block polls the first block to finish waits for the others' tagged partials
//   7 2nd kernel (PDL)  1, then a one-block fold kernel launched early (programmatic dependent
//                       launch) that waits in griddepcontrol.wait
//   8 two-level tickets for a grid of one tile per block (G = 0, as the yardstick's fastest
//                       shapes): groups of B blocks fold under their own ticket, then the groups
// beside the read yardstick's shape (5: xor of the words, nothing written) at each size and at
// 4 GiB, whose bandwidth is the limit. Sizes 512, 256, 128, 64, 32, 16, 4 MiB and 64 bytes (launch +
// finish). Cold: 2 x L2 (at least 64 MiB) read before each repetition, CUDA events, median of 30.
// (Its first version split the input among the blocks two more ways, contiguous ranges and
// chunks taken from an atomic counter: both slower than the grid stride on an H200, 2026-11-27,
// 90-100% of the stride's speed at 512 MiB. Results of every version: docs/results.md,
// twelfth session; bench/results/session12-2026-11-27/tail_*.txt.)
// Build: nvcc -O3 -arch=sm_90 -std=c++17 -o build/exp/tail tools/exp/tail.cu
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <algorithm>
#include <cstdio>
#include <vector>

namespace cg = cooperative_groups;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return 1; } } while (0)

constexpr int B = 256, U = 4;

__global__ void flush_read(const uint4 *p, size_t n, unsigned *sink)
{
    unsigned s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = __ldcg(p + i);
        s ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (s == 0x12345u) *sink = s;
}

template <bool BF> __device__ __forceinline__ float fold(uint4 w)
{
    if (BF) {
        const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&w);
        float2 a = __bfloat1622float2(h[0]), b = __bfloat1622float2(h[1]);
        float2 c = __bfloat1622float2(h[2]), d = __bfloat1622float2(h[3]);
        return ((a.x + a.y) + (b.x + b.y)) + ((c.x + c.y) + (d.x + d.y));
    }
    return (__uint_as_float(w.x) + __uint_as_float(w.y)) + (__uint_as_float(w.z) + __uint_as_float(w.w));
}

/* The block's sum, in thread 0 of the block (any order). */
__device__ __forceinline__ float block_sum(float acc)
{
#pragma unroll
    for (int o = 16; o; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    __shared__ float w[B / 32];
    if ((threadIdx.x & 31) == 0) w[threadIdx.x / 32] = acc;
    __syncthreads();
    float s = 0;
    if (threadIdx.x == 0)
        for (int i = 0; i < B / 32; i++) s += w[i];
    __syncthreads();
    return s;
}

/* This thread's share of partials 0 .. slots-1 with every load in flight at once: 16-byte
 * words, up to 4 a thread (slots % 4 == 0, slots <= 4096). */
__device__ __forceinline__ float fold_in_flight(const float *part, unsigned slots)
{
    const float4 *p4 = reinterpret_cast<const float4 *>(part);
    float4 v[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const unsigned i = threadIdx.x + k * B;
        v[k] = i < slots / 4 ? __ldcg(p4 + i) : make_float4(0, 0, 0, 0);
    }
    float t = 0;
#pragma unroll
    for (int k = 0; k < 4; k++) t += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    return t;
}

template <bool RELAXED>
__device__ __forceinline__ unsigned ticket(unsigned *counter, unsigned limit)
{
    unsigned old;
    if (RELAXED)
        asm volatile("atom.relaxed.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(limit) : "memory");
    else
        asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(limit) : "memory");
    return old;
}

/* F: 0 gridstride's finish (partial, acquire-release ticket, the last block folds the partials
 * from L2), 1 the partial alone (no ticket, no fold: what the finish costs is 0 - 1), 2 clusters
 * of 8 blocks add their partials through distributed shared memory first, then 0 over the
 * clusters' partials. */
__device__ __forceinline__ unsigned long long ld_relaxed(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void st_relaxed(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}

template <int F>
__device__ void finish(float acc, float *part, unsigned *count, float *out)
{
    float s = block_sum(acc);
    if (F == 8) {
        /* Two levels of tickets, for a grid of one tile per block (G = 0): the last block of
         * each group of B blocks folds the group's partials (one load a thread) into a group
         * partial and takes a ticket of its own; the last group folds the group partials.
         * count[0] counts groups, count[1 + g] group g's blocks. */
        const unsigned g = blockIdx.x / B, groups = (gridDim.x + B - 1) / B;
        const unsigned members = min((unsigned)B, gridDim.x - g * B);
        float *gpart = part + ((gridDim.x + 3u) & ~3u);
        __shared__ bool last;
        if (threadIdx.x == 0) {
            part[blockIdx.x] = s;
            last = ticket<false>(count + 1 + g, members - 1) == members - 1;
        }
        __syncthreads();
        if (!last)
            return;
        float t = threadIdx.x < members ? __ldcg(part + g * B + threadIdx.x) : 0.f;
        t = block_sum(t);
        if (threadIdx.x == 0) {
            gpart[g] = t;
            last = ticket<false>(count, groups - 1) == groups - 1;
        }
        __syncthreads();
        if (!last)
            return;
        float u = 0;
        for (unsigned i = threadIdx.x; i < groups; i += B) u += __ldcg(gpart + i);
        u = block_sum(u);
        if (threadIdx.x == 0) *out = u;
        return;
    }
    if (F == 6) {
        /* The first block to finish folds: every other block stores its partial tagged (bit 32)
         * in one 64-bit word and leaves; the folder polls each slot until its tag is there,
         * takes the value and clears the slot for the next launch. The fold's order is fixed
         * (slot order), whichever block folds. Only the first ticket waits, on blocks that are
         * running or will run when a slot frees: no block waits for the folder. */
        unsigned long long *slot = reinterpret_cast<unsigned long long *>(part);
        __shared__ unsigned tk;
        __shared__ float own;
        if (threadIdx.x == 0) {
            tk = ticket<true>(count, gridDim.x - 1);
            own = s;
            if (tk != 0)
                st_relaxed(slot + blockIdx.x, 1ull << 32 | __float_as_uint(s));
        }
        __syncthreads();
        if (tk != 0)
            return;
        float t = 0;
        for (unsigned i = threadIdx.x; i < gridDim.x; i += B) {
            if (i == blockIdx.x) {
                t += own;
                continue;
            }
            unsigned long long w;
            while (!((w = ld_relaxed(slot + i)) >> 32)) {}
            st_relaxed(slot + i, 0);
            t += __uint_as_float((unsigned)w);
        }
        t = block_sum(t);
        if (threadIdx.x == 0) *out = t;
        return;
    }
    unsigned slot = blockIdx.x, slots = gridDim.x;
    if (F == 2) {
        __shared__ float mine;
        cg::cluster_group cl = cg::this_cluster();
        if (threadIdx.x == 0) mine = s;
        cl.sync();
        if (cl.block_rank() == 0 && threadIdx.x < 8) {
            float v = *cl.map_shared_rank(&mine, threadIdx.x);
#pragma unroll
            for (int o = 4; o; o >>= 1) v += __shfl_down_sync(0xffu, v, o, 8);
            s = v;
        }
        cl.sync();
        if (cl.block_rank() != 0) return;
        slot = blockIdx.x / 8;
        slots = gridDim.x / 8;
    }
    __shared__ bool last;
    if (threadIdx.x == 0) {
        part[slot] = s;
        if (F != 1) last = ticket<F == 4>(count, slots - 1) == slots - 1;
    }
    if (F == 1) return;
    __syncthreads();
    if (!last) return;
    float t = 0;
    if (F >= 3) {
        t = fold_in_flight(part, slots);
    } else {
        for (unsigned i = threadIdx.x; i < slots; i += B) t += __ldcg(part + i);
    }
    t = block_sum(t);
    if (threadIdx.x == 0) *out = t;
}

/* F as above; 3: 0 with the fold's loads all in flight (16-byte words); 4: 3 with a relaxed
 * ticket (not ordered after the partial's store: a bound on what an epoch-tagged partial that
 * needs no release could save, not a correct finish); 5: the yardstick's xor (no finish). Static split: tiles of B*U vectors, block b
 * takes tiles b, b + grid, ... */
template <int F, bool BF>
__global__ void __launch_bounds__(B) red(const uint4 *__restrict__ in, size_t n16, float *part,
                                         unsigned *count, float *out)
{
    const size_t tile = (size_t)B * U;
    float acc = 0;
    unsigned x = 0;
    const size_t nt = n16 / tile;
    if (F == 7)   /* let the fold kernel launch now: it waits in griddepcontrol.wait */
        asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    for (size_t t = blockIdx.x; t < nt; t += gridDim.x) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = __ldcs(in + t * tile + u * B + threadIdx.x);
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (F == 5) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
            else acc += fold<BF>(v[u]);
        }
    }
    if (blockIdx.x == 0)
        for (size_t k = nt * tile + threadIdx.x; k < n16; k += B) {
            uint4 v = __ldcs(in + k);
            if (F == 5) x ^= v.x ^ v.y ^ v.z ^ v.w;
            else acc += fold<BF>(v);
        }
    if (F == 5) {
        if (x == 0x12345u) *out = 1.f;
        return;
    }
    finish<F == 7 ? 1 : F>(acc, part, count, out);
}

/* F 7's second kernel: one block, launched while the first runs (programmatic dependent
 * launch), waits for the first grid to complete and its memory to be visible, then folds the
 * slots partials with every load in flight. */
__global__ void __launch_bounds__(B) fold_after(const float *part, unsigned slots, float *out)
{
    asm volatile("griddepcontrol.wait;" ::: "memory");
    float t = fold_in_flight(part, slots);
    t = block_sum(t);
    if (threadIdx.x == 0) *out = t;
}

template <int F, bool BF> cudaError_t launch(int grid, const uint4 *in, size_t n16, float *part,
                                             unsigned *count, float *out)
{
    cudaLaunchConfig_t c = {};
    cudaLaunchAttribute at[1];
    c.gridDim = grid;
    c.blockDim = B;
    if (F == 2) {
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = 8;
        at[0].val.clusterDim.y = 1;
        at[0].val.clusterDim.z = 1;
        c.attrs = at;
        c.numAttrs = 1;
    }
    cudaError_t e = cudaLaunchKernelEx(&c, red<F, BF>, in, n16, part, count, out);
    if (F != 7 || e != cudaSuccess)
        return e;
    cudaLaunchConfig_t c2 = {};
    cudaLaunchAttribute a2[1];
    c2.gridDim = 1;
    c2.blockDim = B;
    a2[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    a2[0].val.programmaticStreamSerializationAllowed = 1;
    c2.attrs = a2;
    c2.numAttrs = 1;
    return cudaLaunchKernelEx(&c2, fold_after, (const float *)part, (unsigned)grid, out);
}

/* Finish f (the list above) of the bf16 or the f32 kernel. */
template <bool BF> cudaError_t dispatch(int f, int grid, const uint4 *in, size_t n16, float *part,
                                        unsigned *count, float *out)
{
    switch (f) {
    case 0: return launch<0, BF>(grid, in, n16, part, count, out);
    case 1: return launch<1, BF>(grid, in, n16, part, count, out);
    case 2: return launch<2, BF>(grid, in, n16, part, count, out);
    case 3: return launch<3, BF>(grid, in, n16, part, count, out);
    case 4: return launch<4, BF>(grid, in, n16, part, count, out);
    case 6: return launch<6, BF>(grid, in, n16, part, count, out);
    case 7: return launch<7, BF>(grid, in, n16, part, count, out);
    case 8: return launch<8, BF>(grid, in, n16, part, count, out);
    default: return launch<5, BF>(grid, in, n16, part, count, out);
    }
}

int main()
{
    int sms = 0, l2 = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    const size_t fbytes = std::max<size_t>(2 * (size_t)l2, 64 << 20);
    const size_t big = (size_t)4 << 30;
    uint4 *in, *fl;
    float *part, *out;
    unsigned *count, *sink;
    CK(cudaMalloc(&in, big));
    CK(cudaMalloc(&fl, fbytes));
    CK(cudaMalloc(&part, 1 << 20));
    CK(cudaMemset(part, 0, 16 * 1024 * 8));
    CK(cudaMalloc(&out, 4));
    CK(cudaMalloc(&sink, 4));
    CK(cudaMalloc(&count, 4096 * 4));
    CK(cudaMemset(count, 0, 4096 * 4));
    CK(cudaMemset(in, 0x3c, big));   /* bf16 0x3c3c = 0.0115, f32 0x3c3c3c3c = 0.0115 */
    CK(cudaMemset(fl, 0x11, fbytes));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    const int reps = 30;

    auto time = [&](auto go) -> float {
        std::vector<float> t;
        for (int r = 0; r < reps + 3; r++) {
            flush_read<<<sms * 8, 256>>>(fl, fbytes / 16, sink);
            cudaEventRecord(a);
            go();
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float ms;
            cudaEventElapsedTime(&ms, a, b);
            if (r >= 3) t.push_back(ms * 1000.f);
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    };

    /* The yardstick's shape at 4 GiB: its bandwidth is the limit. */
    float y4 = time([&] { launch<5, false>(sms * 4, in, big / 16, part, count, out); });
    const double gbps = big / (y4 * 1e3);
    printf("device: %d SMs, L2 %d MiB; yardstick shape (B=256, U=4, G=4, xor) at 4 GiB: %.2f us = %.1f GB/s\n",
           sms, l2 >> 20, y4, gbps);
    printf("median us of %d cold reps; %% = limit (bytes / %.1f GB/s) / time\n", reps, gbps);

    const char *names[] = {"ticket (today)", "partial only", "cluster 8+ticket", "ticket, fold in flight",
                           "relaxed (bound)", "yardstick xor", "first block polls",
                           "2nd kernel (PDL)", "two-level tickets"};
    const size_t sizes[] = {(size_t)512 << 20, (size_t)256 << 20, (size_t)128 << 20, (size_t)64 << 20,
                            (size_t)32 << 20, (size_t)16 << 20, (size_t)4 << 20, 64};
    for (int bf = 1; bf >= 0; bf--) {
        printf("\n%s sum -> f32\n%-18s %3s", bf ? "bf16" : "f32", "finish", "G");
        for (size_t s : sizes) printf(" %9zuK %6s", s >> 10, "%");
        printf("\n");
        for (int f : {0, 1, 2, 3, 4, 6, 7, 8, 5})
            for (int g : {0, 2, 4, 8}) {
                /* G = 0: one tile per block (the grid of the yardstick's fastest shapes) */
                if ((g == 0) != (f == 8) && !(g == 0 && (f == 1 || f == 5)))
                    continue;
                if (f == 6)   /* the other finishes leave floats in the slots */
                    CK(cudaMemset(part, 0, 16 * 1024 * 8));
                printf("%-22s %3d", names[f], g);
                for (size_t s : sizes) {
                    const size_t n16 = s / 16;
                    const int grid = g ? sms * g : (int)std::max<size_t>(1, n16 / (B * U));
                    cudaError_t err = cudaSuccess;
                    float us = time([&] {
                        err = bf ? dispatch<true>(f, grid, in, n16, part, count, out)
                                 : dispatch<false>(f, grid, in, n16, part, count, out);
                    });
                    if (err != cudaSuccess) printf(" %17s", cudaGetErrorString(err));
                    else printf(" %10.2f %5.1f%%", us, 100.0 * (s / (gbps * 1e3)) / us);
                }
                printf("\n");
            }
    }
    /* Check: the last case (f32, 64 bytes: 16 elements of 0.0115) through the cluster finish. */
    launch<2, false>(sms * 8, in, 4, part, count, out);
    float h;
    CK(cudaMemcpy(&h, out, 4, cudaMemcpyDeviceToHost));
    launch<3, false>(sms * 8, in, (size_t)1 << 20, part, count, out);
    float h2;
    CK(cudaMemcpy(&h2, out, 4, cudaMemcpyDeviceToHost));
    float h3[3];
    CK(cudaMemset(part, 0, 16 * 1024 * 8));
    for (int k = 0; k < 3; k++) {
        launch<6, false>(sms * 8, in, (size_t)1 << 20, part, count, out);
        CK(cudaMemcpy(h3 + k, out, 4, cudaMemcpyDeviceToHost));
    }
    launch<7, false>(sms * 8, in, (size_t)1 << 20, part, count, out);
    float h4;
    CK(cudaMemcpy(&h4, out, 4, cudaMemcpyDeviceToHost));
    printf("2nd kernel (PDL), 2^22 elements: %.9g\n", h4);
    launch<8, false>(1024, in, (size_t)1 << 20, part, count, out);
    float h5;
    CK(cudaMemcpy(&h5, out, 4, cudaMemcpyDeviceToHost));
    printf("two-level tickets, grid 1024, 2^22 elements: %.9g\n", h5);
    printf("first block polls, 2^22 elements, three launches: %.9g %.9g %.9g\n", h3[0], h3[1], h3[2]);
    printf("\ncheck: cluster finish, 16 f32 elements %g (expected %g); fold in flight, 2^22 elements %g (expected %g)\n",
           h, 16 * 0.011489f, h2, 4194304 * 0.0114889f);
    CK(cudaGetLastError());
    return 0;
}
