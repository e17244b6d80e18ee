// seg_mark_walk.cuh - seg_mark's walks of a thread's R elements through the tile's marks
// (templates/seg_mark.cu; docs/templates_segmented.md, "seg_mark"): the walk (IL = 1), the
// walk in two halves side by side (IL = 2), OST's walk into the tile's output buffer and its
// coalesced store (OST = 1). Inlined by the code generator where seg_mark.cu includes it,
// after seg_mark's macros (SM_NONE, SM_NO, SM_NZ) and helpers (sm_put); not a unit alone.

/* A thread's walk of its R elements: mk[k] the mark at element k. A closed run is stored at
 * once (the thread's first, its head, is kept for the scan); every element stores nothing but
 * through the predicate, so the walk has no branch. acc enters as the identity; with NZ it
 * holds an element from the thread's first on (the elements inside the tile are a prefix of
 * the thread's), so each later element that continues the run is folded by rt_fold_nz, and
 * one that starts a run takes its lift. */
template <bool FULL>
static __device__ __forceinline__ void sm_walk(const rt_value_t (&x)[RT_R], const unsigned int (&mk)[RT_R],
                                               unsigned long long a, unsigned int len, rt_acc_t *__restrict__ outb,
                                               unsigned int lim, bool &flag, rt_acc_t &head, rt_acc_t &acc,
                                               rt_acc_t *ob)
{
    const unsigned int p0 = threadIdx.x * RT_R;
    unsigned int cur = 0;   /* the window index of the run in progress (valid once flag) */
#pragma unroll
    for (unsigned int k = 0; k < RT_R; k++) {
        if (FULL || p0 + k < len) {
            const rt_acc_t v = rt_lift(x[k], a + p0 + k);
            const bool s = mk[k] != SM_NONE;
#if RT_OST
            /* A tile with more starts than the buffer holds: below SM_NO into it, the rest into
             * global memory. */
            if (s && flag && cur < SM_NO)
                ob[cur] = acc;
            sm_put(s && flag && cur >= SM_NO && cur < lim, outb + cur, rt_seg_out(acc));
#else
            sm_put(s && flag && cur < lim, outb + cur, rt_seg_out(acc));
#endif
            head = s && !flag ? acc : head;
            flag = flag || s;
            cur = s ? mk[k] : cur;
            if constexpr (SM_NZ)
                acc = s || k == 0 ? v : sc_fold_step<true>(acc, x[k], a + p0 + k);
            else
                acc = s ? v : rt_combine(acc, v);
        }
    }
}

#if RT_IL == 2
/* IL = 2: one element of a half's walk, as sm_walk takes it (OST = 0; first: the half's first
 * element, which NZ lifts). sm_walk keeps its own copy of this step: through a shared helper
 * its PTX comes out reordered (the same instructions) and the SASS of the shipped IL = 1
 * winners would change untimed. */
static __device__ __forceinline__ void sm_step(rt_value_t x, unsigned int m, unsigned long long j, bool first,
                                               rt_acc_t *__restrict__ outb, unsigned int lim, bool &flag,
                                               rt_acc_t &head, rt_acc_t &acc, unsigned int &cur)
{
    const rt_acc_t v = rt_lift(x, j);
    const bool s = m != SM_NONE;
    sm_put(s && flag && cur < lim, outb + cur, rt_seg_out(acc));
    head = s && !flag ? acc : head;
    flag = flag || s;
    cur = s ? m : cur;
    if constexpr (SM_NZ)
        acc = s || first ? v : sc_fold_step<true>(acc, x, j);
    else
        acc = s ? v : rt_combine(acc, v);
}

/* IL = 2: the walk of the thread's two halves, [0, R/2) and [R/2, R), side by side, each with
 * its own run in progress, first run (up to its first start) and window index, so that the
 * folds are two dependent chains of R/2 instead of one of R. Each half stores the runs that
 * close inside it after its first start; then the second half's first run closes the first
 * half's last run (stored under the first half's index, or, where the first half has no
 * start, the thread's head), or, where the second half has no start, continues it. */
template <bool FULL>
static __device__ __forceinline__ void sm_walk2(const rt_value_t (&x)[RT_R], const unsigned int (&mk)[RT_R],
                                                unsigned long long a, unsigned int len, rt_acc_t *__restrict__ outb,
                                                unsigned int lim, bool &flag, rt_acc_t &head, rt_acc_t &acc)
{
    constexpr unsigned int H = RT_R / 2;
    const unsigned int p0 = threadIdx.x * RT_R;
    unsigned int cur = 0, cur2 = 0;   /* the window index of each half's run in progress */
    bool flag2 = false;
    rt_acc_t head2 = rt_identity(), acc2 = rt_identity();
#pragma unroll
    for (unsigned int k = 0; k < H; k++) {
        if (FULL || p0 + k < len)
            sm_step(x[k], mk[k], a + p0 + k, k == 0, outb, lim, flag, head, acc, cur);
        if (FULL || p0 + H + k < len)   /* the first half is whole then */
            sm_step(x[H + k], mk[H + k], a + p0 + H + k, k == 0, outb, lim, flag2, head2, acc2, cur2);
    }
    if (FULL || p0 + H < len) {   /* the second half has elements: join the halves */
        const rt_acc_t joined = rt_combine(acc, flag2 ? head2 : acc2);
        sm_put(flag2 && flag && cur < lim, outb + cur, rt_seg_out(joined));
        head = flag2 && !flag ? joined : head;
        acc = flag2 ? acc2 : joined;
        flag = flag || flag2;
    }
}
#endif

#if RT_OST
/* OST's walk of a tile with at most SM_NO starts: every closed run goes into the buffer ob by
 * its window index, the thread's first (its head, the run its first start closes) into h0, the
 * slot of its head record (the spare slot SM_NO for the tile's first start), read back after
 * the scan; no flag, no head, no bound tests. Returns the window index of the run open at the
 * thread's end (h0 when the thread has no start). */
template <bool FULL>
static __device__ __forceinline__ unsigned int sm_walk_ost(const rt_value_t (&x)[RT_R],
                                                           const unsigned int (&mk)[RT_R], unsigned long long a,
                                                           unsigned int len, unsigned int h0, rt_acc_t *ob,
                                                           rt_acc_t &acc)
{
    const unsigned int p0 = threadIdx.x * RT_R;
    unsigned int cur = h0;
#pragma unroll
    for (unsigned int k = 0; k < RT_R; k++) {
        if (FULL || p0 + k < len) {
            const rt_acc_t v = rt_lift(x[k], a + p0 + k);
            const bool s = mk[k] != SM_NONE;
            if (s)
                ob[cur] = acc;
            cur = s ? mk[k] : cur;
            if constexpr (SM_NZ)
                acc = s || k == 0 ? v : sc_fold_step<true>(acc, x[k], a + p0 + k);
            else
                acc = s ? v : rt_combine(acc, v);
        }
    }
    return cur;
}
#endif

#if RT_OST
/* The pn outputs of a tile with starts (keys ps ..) from its buffer ob, stored coalesced by the
 * block after a barrier that follows the tile's heads. */
static __device__ __forceinline__ void sm_flush(rt_acc_t *__restrict__ out, unsigned long long ps, unsigned int pn,
                                                const rt_acc_t *ob)
{
    for (unsigned int i = threadIdx.x; i < pn; i += RT_B)
        out[ps + i] = rt_seg_out(ob[i]);
}
#endif
