/*
 * reduce.c - libredtune from an application: the minimum of a million floats, and where it
 * is, on GPU 0, with the kernel the tuned database holds for that GPU.
 *
 * Build after `ninja install` (under the prefix given to ./configure, /usr/local by default):
 *
 *     cc -std=c11 examples/reduce.c $(pkg-config --cflags --libs redtune) \
 *        -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda -o reduce
 *
 * or from the build tree with `ninja examples` (build/examples/reduce). Run it as
 * `./reduce [DATABASE]`; with no argument it opens $REDTUNE_DB, else ./redtune.db.
 *
 * The device memory comes from the CUDA driver API (-lcuda: the toolkit's stub library at link
 * time, the driver's libcuda.so.1 at run time). With the CUDA runtime it is the same:
 * cudaMalloc'd pointers and cudaStream_t go into rt_reduce as they are.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>
#include <redtune.h>

#define N 1000000

static int cu_ok(CUresult r, const char *what)
{
    const char *text = "unknown error";
    if (r == CUDA_SUCCESS)
        return 1;
    cuGetErrorString(r, &text);
    fprintf(stderr, "reduce: %s: %s\n", what, text);
    return 0;
}

int main(int argc, char **argv)
{
    const char *db = argc > 1 ? argv[1] : NULL;
    rt_ctx *ctx = NULL;
    CUdevice dev;
    CUcontext cuctx = NULL;
    CUstream stream = NULL;
    CUdeviceptr d_in = 0, d_out = 0;
    float *host = malloc(N * sizeof *host), min = 0;
    rt_arg_f32 arg = {0, 0, 0};
    char why[2048];
    int status = 1, rc;

    if (!host)
        return 1;
    for (unsigned i = 0; i < N; i++)
        host[i] = (float)((i * 7919u) % 100003u) - 50000.0f;
    host[N / 3] = -1e6f;

    /* The library loads the driver itself and retains GPU 0's primary context. */
    if ((rc = rt_open(db, 0, &ctx)) != RT_OK) {
        fprintf(stderr, "reduce: %s: %s\n", rt_strerror(rc), rt_errmsg(NULL));
        goto done;
    }
    /* Our own allocations, in the same (primary) context. */
    if (!cu_ok(cuInit(0), "cuInit") || !cu_ok(cuDeviceGet(&dev, 0), "cuDeviceGet")
        || !cu_ok(cuDevicePrimaryCtxRetain(&cuctx, dev), "cuDevicePrimaryCtxRetain")
        || !cu_ok(cuCtxSetCurrent(cuctx), "cuCtxSetCurrent")
        || !cu_ok(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate")
        || !cu_ok(cuMemAlloc(&d_in, N * sizeof *host), "cuMemAlloc")
        || !cu_ok(cuMemAlloc(&d_out, 32), "cuMemAlloc")
        || !cu_ok(cuMemcpyHtoD(d_in, host, N * sizeof *host), "cuMemcpyHtoD"))
        goto done;

    /* Both reductions are enqueued on the stream; the results are there once it is done. */
    if ((rc = rt_reduce(ctx, RT_MIN, RT_F32, (const void *)(uintptr_t)d_in, N,
                        (void *)(uintptr_t)d_out, stream)) != RT_OK
        || (rc = rt_reduce(ctx, RT_ARGMIN, RT_F32, (const void *)(uintptr_t)d_in, N,
                           (void *)(uintptr_t)(d_out + 16), stream)) != RT_OK) {
        fprintf(stderr, "reduce: %s: %s\n", rt_strerror(rc), rt_errmsg(ctx));
        goto done;
    }
    if (!cu_ok(cuStreamSynchronize(stream), "cuStreamSynchronize")
        || !cu_ok(cuMemcpyDtoH(&min, d_out, sizeof min), "cuMemcpyDtoH")
        || !cu_ok(cuMemcpyDtoH(&arg, d_out + 16, sizeof arg), "cuMemcpyDtoH"))
        goto done;
    printf("min    = %g\nargmin = %g at index %lld\n", min, arg.value, arg.index);

    if ((rc = rt_explain(ctx, RT_MIN, RT_F32, N, why, sizeof why)) != RT_OK) {
        fprintf(stderr, "reduce: %s: %s\n", rt_strerror(rc), rt_errmsg(ctx));
        goto done;
    }
    printf("%s", why);
    status = min == -1e6f && arg.index == N / 3 ? 0 : 1;
done:
    if (d_in)
        cuMemFree(d_in);
    if (d_out)
        cuMemFree(d_out);
    if (stream)
        cuStreamDestroy(stream);
    rt_close(ctx);
    if (cuctx)
        cuDevicePrimaryCtxRelease(dev);
    free(host);
    return status;
}
