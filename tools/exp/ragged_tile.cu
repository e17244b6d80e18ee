// ragged_tile.cu - times one emitted one-block kernel (rt_first) at sizes around its tile, cold
// (L2 flushed by a 256 MiB write before each launch), CUDA events around the one launch, the
// median of REPS, the result checked; to see what the ragged last tile costs against the full one. The kernel's
// source is `redtune emit ...` (issue 14's min/max f64 between 2^10 and 2^11), included with
// -include; a variant is the same source edited (tools/exp/ragged_tile.sh builds and runs them).
//   nvcc -O3 -arch=sm_90 -I templates -include K.cu tools/exp/ragged_tile.cu -o rt_K
//   ./rt_K 1024 1200 1390 2047 2048
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

int main(int argc, char **argv)
{
    const int reps = getenv("REPS") ? atoi(getenv("REPS")) : 300;
    const size_t flush_bytes = 256u << 20;
    char *flush;
    CK(cudaMalloc(&flush, flush_bytes));
    rt_value_t *in;
    rt_acc_t *out;
    const size_t maxn = 1 << 16;
    CK(cudaMalloc(&in, maxn * sizeof *in));
    CK(cudaMalloc(&out, 64 * sizeof *out));
    std::vector<rt_value_t> h(maxn);
    for (size_t i = 0; i < maxn; i++)
        h[i] = (rt_value_t)((i * 2654435761u) % 1000) - (rt_value_t)500;
    CK(cudaMemcpy(in, h.data(), maxn * sizeof *in, cudaMemcpyHostToDevice));
    unsigned int meta[4];
    CK(cudaMemcpyFromSymbol(meta, rt_meta, sizeof meta));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int k = 1; k < argc; k++) {
        unsigned long long n = strtoull(argv[k], 0, 10);
        unsigned int blocks = (unsigned int)((n + meta[1] - 1) / meta[1]);
        std::vector<float> t;
        for (int r = 0; r < reps + 10; r++) {
            CK(cudaMemsetAsync(flush, r & 0xff, flush_bytes));
            CK(cudaEventRecord(a));
            rt_first<<<blocks, meta[0]>>>(in, out, n);
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (r >= 10)
                t.push_back(ms * 1000);
        }
        rt_res_t got;   /* one block: out[0] is the result */
        CK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
        double want = (double)h[0];
        for (unsigned long long i = 1; i < n; i++) {
#if defined(RT_OP_MIN)
            want = std::min(want, (double)h[i]);
#elif defined(RT_OP_MAX)
            want = std::max(want, (double)h[i]);
#else
            want += (double)h[i];
#endif
        }
        if ((double)got != want) {
            printf("n %llu: WRONG: %g, expected %g\n", n, (double)got, want);
            return 1;
        }
        std::sort(t.begin(), t.end());
        printf("n %6llu blocks %u: median %.3f us, min %.3f, p90 %.3f\n", n, blocks,
               t[t.size() / 2], t[0], t[t.size() * 9 / 10]);
    }
    return 0;
}
