// seg_check.cu - the segmented input check, not a family (no @family line: the tuner never
// offers it as a reduction). docs/segmented.md says what valid input is.
//
// rt_seg_check(seg, n, nseg, bad) counts the violations of the layout's rules into bad[0]
// (atomicAdd) and lowers bad[1] to the lowest violating index (atomicMin; the host sets bad[0]
// to 0 and bad[1] to ~0 before the launch):
//
//   LAYOUT 1 (keys, u32, seg[0..n)): index i violates when keys[i] >= nseg, or i > 0 and
//     keys[i-1] > keys[i] (not sorted non-decreasing).
//   LAYOUT 2 (offsets, i32 or i64 by OFF64, seg[0..nseg]): index s violates when offsets[s]
//     < 0, offsets[s] > n, or s > 0 and offsets[s-1] > offsets[s].
//
// For offsets it also raises bad[2] to the longest segment, offsets[s] - offsets[s-1] over
// the pairs that are in order (atomicMax; the host sets bad[2] to 0): the spread the lookup
// cannot see from n and nseg (RT_SEG_SKEWED, docs/api.md).
//
// Each index counts once, whatever rules it breaks. Grid-stride loop: any grid is correct; its
// rt_meta says B threads, a tile of B indices, and at most G blocks per SM. The host passes
// LAYOUT and OFF64 as defines (they default to keys and 32-bit offsets).
//
// @param B 256 threads per block (multiple of 32, 32..1024)
// @param G 4 blocks per SM at most (the grid loops over the indices)

#ifndef RT_LAYOUT
#define RT_LAYOUT 1
#endif
#ifndef RT_OFF64
#define RT_OFF64 0
#endif
#ifndef RT_B
#define RT_B 256
#endif
#ifndef RT_G
#define RT_G 4
#endif

static_assert(RT_LAYOUT == 1 || RT_LAYOUT == 2, "seg_check: LAYOUT is 1 (keys) or 2 (offsets)");
static_assert(RT_OFF64 == 0 || RT_OFF64 == 1, "seg_check: OFF64 is 0 or 1");
static_assert(RT_B >= 32 && RT_B <= 1024 && RT_B % 32 == 0, "seg_check: B must be a multiple of 32 in 32..1024");

#ifdef RT_PRELUDE
/* Behind a family's prelude nothing here uses the operator; referencing the glue in an
 * unevaluated operand keeps it from drawing "declared but never referenced". */
static_assert(sizeof(rt_combine(rt_lift(*(const rt_value_t *)0, 0ull),
                                rt_shfl_down(rt_shfl_up(rt_shfl(rt_identity(), 0), 1u), 1u)))
              == sizeof(rt_acc_t),
              "seg_check: the prelude's glue has the wrong signatures");
#endif

extern "C" __device__ const unsigned int rt_meta[4] = { RT_B, RT_B, RT_G, 0 };

extern "C" __global__ void __launch_bounds__(RT_B)
rt_seg_check(const void *seg, unsigned long long n, unsigned long long nseg, unsigned long long *bad)
{
    unsigned long long count = 0, first = ~0ull, longest = 0;
#if RT_LAYOUT == 1
    const unsigned int *keys = (const unsigned int *)seg;
    const unsigned long long len = n;
#else
#if RT_OFF64
    const long long *offs = (const long long *)seg;
#else
    const int *offs = (const int *)seg;
#endif
    const unsigned long long len = nseg + 1;
#endif
    const unsigned long long stride = (unsigned long long)gridDim.x * RT_B;
    for (unsigned long long i = (unsigned long long)blockIdx.x * RT_B + threadIdx.x; i < len; i += stride) {
#if RT_LAYOUT == 1
        const unsigned int k = keys[i];
        const bool v = k >= nseg || (i > 0 && keys[i - 1] > k);
#else
        const long long o = offs[i], before = i > 0 ? (long long)offs[i - 1] : o;
        const bool v = o < 0 || (unsigned long long)o > n || before > o;
        if (o - before > (long long)longest)
            longest = (unsigned long long)(o - before);
#endif
        if (v) {
            count++;
            if (i < first)
                first = i;
        }
    }
    if (count) {
        atomicAdd(bad, count);
        atomicMin(bad + 1, first);
    }
#if RT_LAYOUT == 2
    if (longest)
        atomicMax(bad + 2, longest);
#endif
}
