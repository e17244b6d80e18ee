// oneblock.cu - experiment (issue 14, 2^12): a minimal one-block sum against CUB's single-tile
// DeviceReduce at small n, cold (L2 flushed by a read of 2 x L2 before each repetition),
// CUDA events, median of 200. Build: nvcc -O3 -arch=sm_90 -o oneblock tools/exp/oneblock.cu
#include <cub/device/device_reduce.cuh>
#include <algorithm>
#include <cstdio>
#include <vector>

__global__ void flush_read(const float4 *p, size_t n, float *sink)
{
    float s = 0;
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float4 v = __ldcg(p + i);
        s += v.x + v.y + v.z + v.w;
    }
    if (s == 12345.f) *sink = s;
}

template <int B, int U>
__global__ void __launch_bounds__(B) one_block(const float4 *__restrict__ in, float *out, unsigned nvec)
{
    float acc = 0;
    for (unsigned base = 0; base < nvec; base += B * U) {
        float4 x[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            unsigned k = base + u * B + threadIdx.x;
            x[u] = k < nvec ? __ldg(in + k) : make_float4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            acc += (x[u].x + x[u].y) + (x[u].z + x[u].w);
    }
#pragma unroll
    for (int o = 16; o; o >>= 1)
        acc += __shfl_down_sync(0xffffffffu, acc, o);
    __shared__ float w[B / 32];
    if ((threadIdx.x & 31) == 0) w[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        acc = threadIdx.x < B / 32 ? w[threadIdx.x] : 0.f;
#pragma unroll
        for (int o = 16; o; o >>= 1)
            acc += __shfl_down_sync(0xffffffffu, acc, o);
        if (threadIdx.x == 0) *out = acc;
    }
}

// Several blocks, second launch folds the partials (what tree_sequential does, lean).
template <int B, int U>
__global__ void __launch_bounds__(B) part(const float4 *__restrict__ in, float *out, unsigned nvec)
{
    float acc = 0;
    unsigned k0 = blockIdx.x * B * U + threadIdx.x;
    float4 x[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
        unsigned k = k0 + u * B;
        x[u] = k < nvec ? __ldg(in + k) : make_float4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < U; u++)
        acc += (x[u].x + x[u].y) + (x[u].z + x[u].w);
#pragma unroll
    for (int o = 16; o; o >>= 1)
        acc += __shfl_down_sync(0xffffffffu, acc, o);
    __shared__ float w[B / 32];
    if ((threadIdx.x & 31) == 0) w[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        acc = threadIdx.x < B / 32 ? w[threadIdx.x] : 0.f;
#pragma unroll
        for (int o = 16; o; o >>= 1)
            acc += __shfl_down_sync(0xffffffffu, acc, o);
        if (threadIdx.x == 0) out[blockIdx.x] = acc;
    }
}
__global__ void fold(const float *p, float *out, unsigned m)
{
    float acc = threadIdx.x < m ? p[threadIdx.x] : 0.f;
#pragma unroll
    for (int o = 16; o; o >>= 1)
        acc += __shfl_down_sync(0xffffffffu, acc, o);
    if (threadIdx.x == 0) *out = acc;
}

static float *g_flush_sink;
static float4 *g_flush;
static size_t g_flush_n;

template <class F> static float time_cold(F f)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<float> t;
    for (int r = 0; r < 210; r++) {
        flush_read<<<132 * 4, 512>>>(g_flush, g_flush_n, g_flush_sink);
        cudaEventRecord(a);
        f();
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        if (r >= 10) t.push_back(ms * 1000.f);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main()
{
    g_flush_n = (100u << 20) / 16;
    cudaMalloc(&g_flush, g_flush_n * 16);
    cudaMemset(g_flush, 0, g_flush_n * 16);
    cudaMalloc(&g_flush_sink, 4);
    float *in, *out, *parts;
    cudaMalloc(&in, 1 << 20);
    cudaMalloc(&out, 4);
    cudaMalloc(&parts, 4096);
    std::vector<float> h(1 << 18, 1.0f);
    cudaMemcpy(in, h.data(), h.size() * 4, cudaMemcpyHostToDevice);
    const float4 *in4 = (const float4 *)in;
    void *temp = nullptr;
    size_t tb = 0;
    cub::DeviceReduce::Sum(nullptr, tb, in, out, 1 << 16);
    cudaMalloc(&temp, tb);
    printf("%8s %10s %10s %10s %10s %10s %10s %10s %10s\n", "n", "cub", "1b256x4", "1b512x2", "1b1024x1",
           "1b128x8", "2b256x2", "4b256x1", "4b128x2");
    for (unsigned n : {1024u, 2048u, 4096u, 5907u & ~3u, 8192u, 16384u}) {
        unsigned nv = n / 4;
        float c = time_cold([&] { size_t t2 = tb; cub::DeviceReduce::Sum(temp, t2, in, out, (int)n); });
        float a1 = time_cold([&] { one_block<256, 4><<<1, 256>>>(in4, out, nv); });
        float a2 = time_cold([&] { one_block<512, 2><<<1, 512>>>(in4, out, nv); });
        float a3 = time_cold([&] { one_block<1024, 1><<<1, 1024>>>(in4, out, nv); });
        float a4 = time_cold([&] { one_block<128, 8><<<1, 128>>>(in4, out, nv); });
        float b2 = time_cold([&] { unsigned g = (nv + 511) / 512; part<256, 2><<<g, 256>>>(in4, parts, nv); fold<<<1, 32>>>(parts, out, g); });
        float b4 = time_cold([&] { unsigned g = (nv + 255) / 256; part<256, 1><<<g, 256>>>(in4, parts, nv); fold<<<1, 32>>>(parts, out, g); });
        float b5 = time_cold([&] { unsigned g = (nv + 255) / 256; part<128, 2><<<g, 128>>>(in4, parts, nv); fold<<<1, 32>>>(parts, out, g); });
        printf("%8u %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f\n", n, c, a1, a2, a3, a4, b2, b4, b5);
    }
    cudaError_t e = cudaDeviceSynchronize();
    printf("status: %s\n", cudaGetErrorString(e));
    return 0;
}
