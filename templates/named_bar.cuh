// named_bar.cuh - named barriers by whole warps, shared by the producer-consumer templates
// (diffwarps.cu, diffwarps_async.cu, seg_diffwarps.cu); included, and inlined into the unit by
// the generator like seg_common.cuh.
//
// bar.sync/bar.arrive are .aligned: every lane of a warp must execute the same one; the
// __syncwarp() makes sure the warp has reconverged after a divergent walk or bounds test.
// COUNT is in threads, a multiple of 32. The id is an immediate: with an id in a register
// ptxas reserves all 16 barriers of the block.
#ifndef RT_NAMED_BAR_CUH
#define RT_NAMED_BAR_CUH

template <unsigned int ID, unsigned int COUNT>
static __device__ __forceinline__ void nb_sync()
{
    __syncwarp();
    asm volatile("bar.sync %0, %1;" : : "n"(ID), "n"(COUNT) : "memory");
}
template <unsigned int ID, unsigned int COUNT>
static __device__ __forceinline__ void nb_arrive()
{
    __syncwarp();
    asm volatile("bar.arrive %0, %1;" : : "n"(ID), "n"(COUNT) : "memory");
}

/* Barrier BASE + k of a pair (double buffering) for a buffer index k in {0, 1} known only at
 * run time (warp-uniform): waiting (bar.sync) and signalling (bar.arrive). */
template <unsigned int BASE, unsigned int COUNT>
static __device__ __forceinline__ void nb_wait2(unsigned int k)
{
    if (k == 0)
        nb_sync<BASE, COUNT>();
    else
        nb_sync<BASE + 1, COUNT>();
}
template <unsigned int BASE, unsigned int COUNT>
static __device__ __forceinline__ void nb_signal2(unsigned int k)
{
    if (k == 0)
        nb_arrive<BASE, COUNT>();
    else
        nb_arrive<BASE + 1, COUNT>();
}

#endif
