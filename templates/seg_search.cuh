/*
 * seg_search.cuh - searches in the offsets layout shared by the segmented families that cut
 * the elements into tiles (seg_lb, seg_stream): one warp's 32-way search, and the lower bound
 * of a position among the offsets. Include it after seg_common.cuh.
 */

/* The first i in [lo, hi) with below(i) false (hi when none), for a predicate true on a
 * prefix of the range: by one warp, 32 probes a step, about log32(hi - lo) steps of one memory
 * latency each; all 32 lanes call it converged and get the answer. */
template <typename Below>
static __device__ __forceinline__ unsigned long long sc_warp_search(unsigned long long lo, unsigned long long hi,
                                                                    Below below)
{
    const unsigned int lane = threadIdx.x % 32;
    while (lo < hi) {
        const unsigned long long step = (hi - lo + 31) / 32;
        const unsigned long long mid = lo + (lane + 1) * step - 1;
        const bool valid = mid < hi;
        const unsigned int c = __popc(__ballot_sync(SC_FULL, valid && below(mid)));   /* a prefix */
        const unsigned int nv = __popc(__ballot_sync(SC_FULL, valid));
        const unsigned long long nlo = c > 0 ? lo + c * step : lo;
        const unsigned long long nhi = c < nv ? lo + (c + 1) * step - 1 : hi;
        lo = nlo;
        hi = nhi;
    }
    return lo;
}

/* The first s in 0..nseg with offsets[s] >= x (nseg + 1 when none): the number of segment
 * starts (and the end offsets[nseg]) before position x. Offsets are read through sc_off
 * (clamped), so unsorted input ends the search too. */
static __device__ __forceinline__ unsigned long long sc_lower(const sc_off_t *offs, unsigned long long n,
                                                              unsigned long long nseg, unsigned long long x)
{
    return sc_warp_search(0, nseg + 1, [&](unsigned long long mid) {
        return sc_off(offs, mid, n, nseg) < x;
    });
}
