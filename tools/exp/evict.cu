// evict.cu - experiment (issue 16): does the L2 eviction priority of a reduction's loads matter
// when the L2 is full of dirty lines (the state torch_axis.py's flush, a write of 2 x L2, leaves,
// and the state an application's previous kernel leaves)? A grid-stride f32 sum with four loads
// of 16 bytes in flight, six load spellings, timed cold after a read flush (clean L2) and after
// a write flush (dirty L2), and hot at 16 MiB, CUDA events, median of 40; CUB DeviceReduce::Sum beside it.
// Build: nvcc -O3 -arch=sm_90 -std=c++17 -o evict tools/exp/evict.cu
#include <cub/device/device_reduce.cuh>
#include <algorithm>
#include <cstdio>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void flush_read(const float4 *p, size_t n, float *sink)
{
    float s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float4 v = __ldcg(p + i);
        s += v.x + v.y + v.z + v.w;
    }
    if (s == 12345.f) *sink = s;
}

__global__ void flush_write(float4 *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = make_float4(1, 1, 1, 1);
}

template <int M> __device__ __forceinline__ float4 load(const float4 *p)
{
    float4 v;
    unsigned long long pol;
    if (M == 0) {
        v = __ldg(p);
    } else if (M == 1) {
        v = __ldcs(p);
    } else if (M == 5) {
        asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0,%1,%2,%3}, [%4];"
                     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    } else {
        if (M == 2)
            asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
        else if (M == 3)
            asm volatile("createpolicy.fractional.L2::evict_first.L2::evict_unchanged.b64 %0, 0.5;" : "=l"(pol));
        else
            asm volatile("createpolicy.fractional.L2::evict_first.L2::evict_unchanged.b64 %0, 0.25;" : "=l"(pol));
        asm volatile("ld.global.nc.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
                     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p), "l"(pol));
    }
    return v;
}

template <int M>
__global__ void __launch_bounds__(256) sum(const float4 *__restrict__ in, size_t n4, float *out)
{
    float acc = 0;
    const size_t step = (size_t)gridDim.x * 256;
    size_t i = blockIdx.x * (size_t)256 + threadIdx.x;
    for (; i + 3 * step < n4; i += 4 * step) {
        float4 x[4];
#pragma unroll
        for (int u = 0; u < 4; u++) x[u] = load<M>(in + i + u * step);
#pragma unroll
        for (int u = 0; u < 4; u++) acc += (x[u].x + x[u].y) + (x[u].z + x[u].w);
    }
    for (; i < n4; i += step) {
        float4 x = load<M>(in + i);
        acc += (x.x + x.y) + (x.z + x.w);
    }
#pragma unroll
    for (int o = 16; o; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    __shared__ float w[8];
    if ((threadIdx.x & 31) == 0) w[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        acc = threadIdx.x < 8 ? w[threadIdx.x] : 0.f;
#pragma unroll
        for (int o = 4; o; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
        if (threadIdx.x == 0) atomicAdd(out, acc);
    }
}

int main()
{
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int l2 = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    const size_t fbytes = std::max<size_t>(2 * (size_t)l2, 64 << 20);
    const size_t nmax = (size_t)1 << 28;  // 1 GiB of f32
    float4 *in, *fl;
    float *out, *sink;
    CK(cudaMalloc(&in, nmax * 4));
    CK(cudaMalloc(&fl, fbytes));
    CK(cudaMalloc(&out, 4));
    CK(cudaMalloc(&sink, 4));
    {
        std::vector<float> h(nmax);
        for (size_t i = 0; i < nmax; i++) h[i] = (float)(i % 7);
        CK(cudaMemcpy(in, h.data(), nmax * 4, cudaMemcpyHostToDevice));
    }
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    void *ctemp = nullptr;
    size_t ctb = 0;
    CK(cub::DeviceReduce::Sum(nullptr, ctb, (const float *)in, out, (int)nmax));
    CK(cudaMalloc(&ctemp, ctb));
    const char *names[] = {"ldg (nc)", "ldcs (.cs)", "policy evict_first 1.0", "policy ev_first 0.5",
                           "policy ev_first 0.25", "nc L1::no_allocate", "CUB DeviceReduce::Sum"};
    const size_t sizes[] = {(size_t)1 << 22, (size_t)1 << 24, (size_t)1 << 26, (size_t)1 << 28};
    const int reps = 40;
    printf("device: %d SMs, L2 %d MiB, flush buffer %zu MiB; median us of %d cold reps\n", sms, l2 >> 20,
           fbytes >> 20, reps);
    printf("%-26s %10s %10s %10s %10s %10s %10s %10s %10s %10s\n", "load", "16MiB rd", "16MiB wr",
           "16MiB hot", "64MiB rd", "64MiB wr", "256MiB rd", "256MiB wr", "1GiB rd", "1GiB wr");
    for (int m = 0; m < 7; m++) {
        printf("%-26s", names[m]);
        for (size_t n : sizes) {
            for (int fw = 0; fw < 3; fw++) {
                if (fw == 2 && n > ((size_t)1 << 22)) continue;   /* hot: 16 MiB only */
                std::vector<float> t;
                for (int r = 0; r < reps + 3; r++) {
                    if (fw == 1)
                        flush_write<<<sms * 8, 256>>>(fl, fbytes / 16);
                    else if (fw == 0)
                        flush_read<<<sms * 8, 256>>>(fl, fbytes / 16, sink);
                    else   /* hot: the input stays in the L2; a short read of another buffer keeps the stream busy */
                        flush_read<<<sms, 256>>>(fl, (size_t)1 << 16, sink);
                    CK(cudaEventRecord(a));
                    const int g = sms * 8;
                    switch (m) {
                    case 0: sum<0><<<g, 256>>>(in, n / 4, out); break;
                    case 1: sum<1><<<g, 256>>>(in, n / 4, out); break;
                    case 2: sum<2><<<g, 256>>>(in, n / 4, out); break;
                    case 3: sum<3><<<g, 256>>>(in, n / 4, out); break;
                    case 4: sum<4><<<g, 256>>>(in, n / 4, out); break;
                    case 5: sum<5><<<g, 256>>>(in, n / 4, out); break;
                    default: CK(cub::DeviceReduce::Sum(ctemp, ctb, (const float *)in, out, (int)n)); break;
                    }
                    CK(cudaEventRecord(b));
                    CK(cudaEventSynchronize(b));
                    float ms;
                    CK(cudaEventElapsedTime(&ms, a, b));
                    if (r >= 3) t.push_back(ms * 1000.f);
                }
                std::sort(t.begin(), t.end());
                printf(" %10.2f", t[t.size() / 2]);
            }
        }
        printf("\n");
    }
    CK(cudaGetLastError());
    return 0;
}
