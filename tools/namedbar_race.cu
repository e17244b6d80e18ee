/*
 * namedbar_race.cu - does compute-sanitizer's racecheck model the named-barrier handoff of
 * the producer-consumer templates (diffwarps, diffwarps_async, seg_diffwarps)?
 *
 *   nvcc -O2 -arch=sm_90 -o build/namedbar_race tools/namedbar_race.cu
 *   compute-sanitizer --tool racecheck build/namedbar_race SCHEME
 *
 * One block, P producer warps and C consumer warps, a double buffer in shared memory, many
 * data-blocks; the consumers sum what the producers stored, and the program checks the sum
 * against the host's (exit 1 when wrong). SCHEME is one of:
 *
 *   arrive     the templates' scheme (templates/named_bar.cuh, the same helpers): FULL[k] and
 *              EMPTY[k] pairs of named barriers; the side that signals does bar.arrive, the
 *              side that waits does bar.sync. Correct by the PTX memory model (bar.arrive
 *              releases, bar.sync acquires at CTA scope).
 *   namedsync  the same two named barriers, but every thread does bar.sync on both (one
 *              buffer: the producers fill it, FULL, the consumers read it, EMPTY). Correct.
 *   syncthreads the paper's Algorithm 4: one __syncthreads() per data-block, the producers
 *              filling buffer (i+1)%2 while the consumers read buffer i%2. Correct, and only
 *              full barriers: the control.
 *   broken     `arrive` with the consumers signalling EMPTY before they read the buffer: a
 *              producer may overwrite what a consumer is still reading. A real race, with
 *              well-formed barriers.
 *
 * Reading them together settles a racecheck report on `arrive`: none on `namedsync` and
 * `syncthreads` but hazards on `arrive` mean racecheck orders accesses across named
 * barriers only where both sides bar.sync, i.e. it does not model bar.arrive's release
 * (the PTX ISA: when a barrier completes, the memory accesses a thread requested before its
 * bar.arrive are performed relative to all threads of the barrier): a false positive for
 * the templates. Hazards on `namedsync` would mean named barriers are not modelled at all.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "templates/named_bar.cuh"

#define P 4                       /* producer warps */
#define C 1                       /* consumer warps */
#define NT ((P + C) * 32)         /* threads of the block */
#define D 1024                    /* elements per data-block */
#define FULL 1                    /* FULL[k] = 1 + k */
#define EMPTY 3                   /* EMPTY[k] = 3 + k */

enum scheme { ARRIVE, NAMEDSYNC, SYNCTHREADS, BROKEN };

/* Consumers: warps 0 .. C-1; each consumer thread sums a strided share of the buffer. */
static __device__ unsigned long long consume(const unsigned int *buf, unsigned int tid)
{
    unsigned long long s = 0;
    for (unsigned int j = tid; j < D; j += 32 * C)
        s += buf[j];
    return s;
}

/* Producers: warps C .. C+P-1 store data-block i (its values depend on i). */
static __device__ void produce(unsigned int *buf, const unsigned int *in, unsigned int pt,
                               unsigned int i)
{
    for (unsigned int j = pt; j < D; j += 32 * P)
        buf[j] = in[(size_t)i * D + j];
}

__global__ void __launch_bounds__(NT) handoff(const unsigned int *in, unsigned int nblocks,
                                              int how, unsigned long long *out)
{
    __shared__ unsigned int buf[2][D];
    const unsigned int tid = threadIdx.x, warp = tid / 32;
    unsigned long long s = 0;
    if (how == SYNCTHREADS) {
        /* Before step i the producers have filled buffer i%2; during it they fill (i+1)%2. */
        if (warp >= C)
            produce(buf[0], in, tid - 32 * C, 0);
        __syncthreads();
        for (unsigned int i = 0; i < nblocks; i++) {
            if (warp < C)
                s += consume(buf[i & 1], tid);
            else if (i + 1 < nblocks)
                produce(buf[(i + 1) & 1], in, tid - 32 * C, i + 1);
            __syncthreads();
        }
    } else if (how == NAMEDSYNC) {
        for (unsigned int i = 0; i < nblocks; i++) {
            if (warp >= C) {
                if (i > 0)
                    nb_sync<EMPTY, NT>();
                produce(buf[0], in, tid - 32 * C, i);
                nb_sync<FULL, NT>();
            } else {
                nb_sync<FULL, NT>();
                s += consume(buf[0], tid);
                if (i + 1 < nblocks)
                    nb_sync<EMPTY, NT>();
            }
        }
    } else if (warp < C) {
        for (unsigned int i = 0; i < nblocks; i++) {
            const unsigned int k = i & 1;
            nb_wait2<FULL, NT>(k);
            if (how == BROKEN && i + 2 < nblocks)
                nb_signal2<EMPTY, NT>(k);   /* too early: the buffer is still to be read */
            s += consume(buf[k], tid);
            if (how == ARRIVE && i + 2 < nblocks)
                nb_signal2<EMPTY, NT>(k);   /* buffer k read: the producers may refill it */
        }
    } else {
        for (unsigned int i = 0; i < nblocks; i++) {
            const unsigned int k = i & 1;
            if (i >= 2)
                nb_wait2<EMPTY, NT>(k);
            produce(buf[k], in, tid - 32 * C, i);
            nb_signal2<FULL, NT>(k);
        }
    }
    /* The tail of the one-launch templates (diffwarps.cu's is_last): thread 0 writes a shared
     * word, __syncthreads(), every thread reads it. Correct in every scheme; a report here
     * shows how far a scheme's earlier barriers confuse racecheck. */
    __shared__ unsigned int tail;
    if (tid == 0)
        tail = nblocks;
    __syncthreads();
    if (tail != nblocks)
        atomicAdd(out, 1ull << 40);
    if (warp < C)
        atomicAdd(out, s);
}

int main(int argc, char **argv)
{
    const char *names[] = {"arrive", "namedsync", "syncthreads", "broken"};
    int how = -1;
    for (int h = 0; h < 4; h++)
        if (argc == 2 && !strcmp(argv[1], names[h]))
            how = h;
    if (how < 0) {
        fprintf(stderr, "usage: namedbar_race arrive|namedsync|syncthreads|broken\n");
        return 2;
    }
    const unsigned int nblocks = 64;
    std::vector<unsigned int> h((size_t)nblocks * D);
    unsigned long long want = 0;
    for (size_t j = 0; j < h.size(); j++) {
        h[j] = (unsigned int)(j * 2654435761u >> 7) & 0xffff;
        want += h[j];
    }
    unsigned int *in;
    unsigned long long *out, got = 0;
    if (cudaMalloc(&in, h.size() * 4) || cudaMalloc(&out, 8) ||
        cudaMemcpy(in, h.data(), h.size() * 4, cudaMemcpyHostToDevice) || cudaMemset(out, 0, 8)) {
        fprintf(stderr, "namedbar_race: CUDA setup failed\n");
        return 1;
    }
    handoff<<<1, NT>>>(in, nblocks, how, out);
    cudaError_t r = cudaMemcpy(&got, out, 8, cudaMemcpyDeviceToHost);
    if (r != cudaSuccess) {
        fprintf(stderr, "namedbar_race %s: %s\n", names[how], cudaGetErrorString(r));
        return 1;
    }
    printf("namedbar_race %s: sum %llu, expected %llu: %s\n", names[how], got, want,
           got == want ? "right" : "WRONG");
    return how == BROKEN || got == want ? 0 : 1;
}
