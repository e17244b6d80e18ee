/*
 * seg_search.cuh - searches in the offsets layout shared by the segmented families that cut
 * the elements into tiles (seg_lb with MP = 0, seg_stream). Include it after seg_common.cuh.
 */

/* The first s in 0..nseg with offsets[s] >= x (nseg + 1 when none): the number of segment
 * starts (and the end offsets[nseg]) before position x. By one warp, 32 probes a step, about
 * log32(nseg) steps of one memory latency each; all 32 lanes call it converged and get the
 * answer. Offsets are read through sc_off (clamped), so unsorted input ends the search too. */
static __device__ __forceinline__ unsigned long long sc_lower(const sc_off_t *offs, unsigned long long n,
                                                              unsigned long long nseg, unsigned long long x)
{
    const unsigned int lane = threadIdx.x % 32;
    unsigned long long lo = 0, hi = nseg + 1;
    while (lo < hi) {
        const unsigned long long step = (hi - lo + 31) / 32;
        const unsigned long long mid = lo + (lane + 1) * step - 1;
        const bool valid = mid < hi;
        const bool below = valid && sc_off(offs, mid, n, nseg) < x;
        const unsigned int c = __popc(__ballot_sync(SC_FULL, below));
        const unsigned int nv = __popc(__ballot_sync(SC_FULL, valid));
        const unsigned long long nlo = c > 0 ? lo + c * step : lo;
        const unsigned long long nhi = c < nv ? lo + (c + 1) * step - 1 : hi;
        lo = nlo;
        hi = nhi;
    }
    return lo;
}
